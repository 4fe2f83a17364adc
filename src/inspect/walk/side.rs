//! Work a message causes off its one-way latency path: a Send's receive WQE (prefetched), the
//! RC ACK and the sender's send CQE.

use super::context::PathCtx;
use super::*;

/// The steps off the latency path, in the order the walk prints them.
pub(super) fn side_steps(c: &PathCtx, gather: Option<&Desc>, scatter: Option<&Desc>) -> Vec<Step> {
    let h = &c.h;
    let component = |d: Option<&Desc>| d.map(|d| d.component.clone()).unwrap_or_default();
    let mut out = Vec::new();
    let recv_wqe = h.of(None, Movement::WqeFetch);
    if let (Some((r0, r1)), Some(d)) = (h.extent(&recv_wqe), scatter)
        && c.op == Op::Send
    {
        out.push(step(
            r0,
            r1,
            &d.component,
            StepKind::RecvWqeFetch {
                bytes: c.nic_spec(1).recv_wqe_bytes,
                route: h.nodes(&first_of(&recv_wqe, Unit::Completion)),
            },
        ));
    }
    // The first train only: a pipelined chunk's credit back to the sender rides as one too.
    let mut ack = h.of(None, Movement::Packet(PacketKind::Ack));
    if let Some(first) = ack.first().map(|a| a.train) {
        ack.retain(|a| a.train == first);
    }
    if let Some((a0, a1)) = h.extent(&ack) {
        let wire: Vec<&Hop> = ack
            .iter()
            .copied()
            .filter(|x| h.host_of(x.channel).is_none())
            .collect();
        out.push(step(
            a0,
            a1,
            &component(scatter),
            StepKind::Ack {
                route: h.nodes(&wire),
            },
        ));
    }
    let send_cqe = h.of(None, Movement::Cqe(CqeKind::Send));
    if let Some((c0, c1)) = h.extent(&send_cqe) {
        out.push(step(
            c0,
            c1,
            &component(gather),
            StepKind::SendCqe {
                route: h.nodes(&send_cqe),
            },
        ));
    }
    out
}

//! The receive flush of a walk: the 1-byte RDMA Read through a loopback QP that makes the
//! earlier posted writes visible to the GPU, and its parts, from the hops it left.

use super::context::PathCtx;
use super::*;

/// The flush step and its parts, where the run flushed.
pub(super) fn flush(c: &PathCtx) -> Option<Step> {
    let h = &c.h;
    let spans: Vec<&Span> = c
        .run
        .spans
        .iter()
        .filter(|s| s.msg == 0 && s.stage == Stage::Flush)
        .collect();
    let (first, last) = (spans.first()?, spans.last()?);
    let (start, end) = (
        first.start,
        spans.iter().map(|s| s.end).max().unwrap_or(last.end),
    );
    let of = |what| h.of(Some(Stage::Flush), what);
    let ext = |hops: &[&Hop], from: Ps| h.extent(hops).unwrap_or((from, from));
    let mmio = of(Movement::Mmio);
    let fetch = of(Movement::WqeFetch);
    let engine = of(Movement::SendEngine);
    let request = of(Movement::Packet(PacketKind::ReadRequest));
    let read = of(Movement::PayloadRead);
    let response: Vec<&Hop> = of(Movement::Tx)
        .into_iter()
        .chain(of(Movement::Rx))
        .collect();
    let write = of(Movement::PayloadWrite);
    let cqe = of(Movement::Cqe(CqeKind::Flush));
    let cpu = c.name(first.component);
    let nic = c.name(
        spans
            .iter()
            .find(|s| s.component != first.component)
            .map_or(first.component, |s| s.component),
    );
    let (m0, m1) = ext(&mmio, start);
    let (f0, f1) = ext(&fetch, m1);
    let (e0, e1) = ext(&engine, f1);
    let (q0, q1) = ext(&request, e1);
    let (r0, r1) = ext(&read, q1);
    let (p0, p1) = ext(&response, r1);
    let (w0, w1) = ext(&write, p1);
    let (c0, c1) = ext(&cqe, w1);
    let req: Vec<&Hop> = read.iter().copied().filter(|h| h.payload == 0).collect();
    let cpl: Vec<&Hop> = read.iter().copied().filter(|h| h.payload > 0).collect();
    let mut f = step(
        start,
        end,
        &nic,
        StepKind::Flush {
            addr: c.plan.receiver.nic_buffer.dma_addr(),
        },
    );
    f.parts = vec![
        step(start, m0, &cpu, StepKind::FlushPost),
        step(
            m0,
            m1,
            &cpu,
            StepKind::FlushMmio {
                route: h.nodes(&mmio),
            },
        ),
        step(
            f0,
            f1,
            &nic,
            StepKind::WqeFetch {
                fetched: !fetch.is_empty(),
                route: h.nodes(&fetch),
            },
        ),
        step(e0, e1, &nic, StepKind::FlushEngine),
        step(q0, q1, &nic, StepKind::FlushLoopback { response: false }),
        step(
            r0,
            r1,
            &nic,
            StepKind::FlushRead {
                request: h.nodes(&req),
                completion: h.nodes(&cpl),
            },
        ),
        step(p0, p1, &nic, StepKind::FlushLoopback { response: true }),
        step(
            w0,
            w1,
            &nic,
            StepKind::FlushWrite {
                route: h.nodes(&write),
            },
        ),
        step(
            c0,
            c1,
            &nic,
            StepKind::FlushCqe {
                route: h.nodes(&cqe),
            },
        ),
        step(c1, end, &cpu, StepKind::FlushPoll),
    ];
    Some(f)
}

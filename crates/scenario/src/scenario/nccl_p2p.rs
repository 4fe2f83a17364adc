//! NCCL's P2P transport between two GPUs of one host, as a collective's ring edge inside a
//! node uses it: the sending GPU's kernel stores each slice over NVLink (or PCIe peer to peer)
//! into the receiving GPU's FIFO buffer, then the FIFO's tail flag; the receiving kernel,
//! spinning on that flag in its own memory, sees it one memory access later. No copy engine,
//! no CPU thread, no NIC (NVIDIA/nccl `src/transport/p2p.cc`; NCCL_P2P_USE_CUDA_MEMCPY off).
//! The sender's slot comes back when the receiver has taken the slice (its head flag).
//!
//! In LL and LL128 the flag rides in every line of the data (NCCL's `prims_ll.h`,
//! `prims_ll128.h`): the receiver sees the slice when its lines land, with no fence and no
//! flag store after them; the lines' flag bytes are in the slice's size.

use super::build::{add, carries, done};
use super::paths::Built;
use crate::config::FlowSpec;
use crate::config::collective::Protocol;
use crate::effective::SideMode;
use crate::plan::{Actor, Copy, GpuRef, Plan, StepKind};
use crate::record::Stage;
use crate::topology::{Flow, NodeKind, Place, RouteError, Topology};

/// Bytes of the tail flag the sending kernel stores after a slice (one 8-byte word).
pub const TAIL_BYTES: u64 = 8;

/// The plan of one slice of `size` bytes (lines in LL and LL128) from the sender's GPU to the
/// receiver's, on one host, in `protocol`.
pub fn plan(
    topo: &Topology,
    flow: &FlowSpec,
    size: u64,
    protocol: Protocol,
) -> Result<Built, RouteError> {
    let host = flow.sender.host;
    let h = &topo.hosts[host];
    let (src, dst) = super::peer::gpu_pair(flow);
    let at = |g: usize| Place::Device(h.node_index(NodeKind::Gpu(g)));
    let mut p = Plan::new(size);
    let sm = |p: &mut Plan, gpu: usize| p.actor(Actor::Sm { host, gpu });
    let (tx, rx) = (sm(&mut p, src), sm(&mut p, dst));
    let route = h.route(at(src), at(dst), Flow::Write)?;
    let mut c = vec![h.gpu_memory[src]];
    c.extend(route.channels.iter().copied());
    c.push(h.gpu_memory[dst]);
    let copy = Copy::D2h {
        route: p.route(c),
        mps: route.mps,
    };
    let gpu = GpuRef { host, gpu: src };
    let ready = add(&mut p, StepKind::Wait { ps: 0 }, None, tx, vec![], None);
    // The sending kernel's stores of `bytes` into the peer after step `after`.
    let store = |p: &mut Plan, after, bytes, payload| {
        let s = add(
            p,
            StepKind::KernelCopy { gpu, copy },
            Some(Stage::P2p),
            tx,
            vec![done(after)],
            None,
        );
        carries(p, s, bytes, payload);
        s
    };
    let data = store(&mut p, ready, size, true);
    let flag = match protocol {
        // The tail flag, stored after the data (the kernel fences between them).
        Protocol::Simple | Protocol::Auto => store(&mut p, data, TAIL_BYTES, false),
        // The flags came with the lines.
        Protocol::Ll | Protocol::Ll128 => data,
    };
    // The receiving kernel's next load of the flag finds it.
    let seen = h.spec.gpus[dst].memory.latency;
    let look = add(
        &mut p,
        StepKind::Wait { ps: seen },
        Some(Stage::P2p),
        rx,
        vec![done(flag)],
        None,
    );
    super::peer::deliver_and_finish(&mut p, look, rx);
    // Each side driven from its own GPU's socket (its kernel, no CPU thread).
    let socket = |g: usize| h.nodes[h.node_index(NodeKind::Gpu(g))].socket;
    let (s, d) = (&h.spec.gpus[src].name, &h.spec.gpus[dst].name);
    let reason = format!("{s}'s kernel stores into {d}'s memory (NCCL P2P)");
    Ok(super::peer::between_gpus(
        h,
        flow,
        (p, size),
        socket,
        (SideMode::Direct, reason),
    ))
}

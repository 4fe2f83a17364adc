//! NCCL's PXN ("PCI x NVLink"): a GPU far from the NIC it sends through hands each chunk over
//! NVLink to the GPU next to that NIC, whose proxy thread posts the RDMA from there by
//! GPUDirect. Which GPU relays, and the steps of one chunk's hand-over.
//!
//! The rule is NCCL's (`ncclTopoComputePaths` in `src/graph/paths.cc`, NCCL 2.12 and later):
//! the NIC's local GPU relays for GPU `g` when it is another GPU, reachable from `g` over
//! NVLink, its own path to the NIC is within the GPUDirect level (PXB, or P2C over NVLink-C2C)
//! and allows GPUDirect reads, and it is nearer to the NIC than `g` is through the CPU (`g`'s
//! path is PHB, NODE or SYS) or has more bandwidth to it. PXN relays sends only: NCCL receives
//! locally.

use super::build::{add, carries, done};
use crate::config::Config;
use crate::plan::{Actor, Copy, GpuRef, Plan, StepId, StepKind};
use crate::record::Stage;
use crate::topology::{Affinity, Flow, NodeKind, Place, RouteError, Topology, Unit};

/// Bytes of the flag a sending kernel stores into the proxy's host memory after a chunk (the
/// FIFO entry's size and the tail pointer, two 8-byte words of NCCL's `ncclSendMem`).
pub const FLAG_BYTES: u64 = 16;

/// The GPU that relays the sends of GPU `g` of host `host` through NIC `nic`, or why none
/// does (the sentence a result's `reason` gives).
pub fn relay_gpu(
    cfg: &Config,
    topo: &Topology,
    host: usize,
    (g, nic): (usize, usize),
) -> Result<usize, String> {
    let h = &topo.hosts[host];
    let m = &h.spec;
    let gpu_at = |x: usize| Place::Device(h.node_index(NodeKind::Gpu(x)));
    let nic_at = Place::Device(h.node_index(NodeKind::Nic(nic)));
    let (gname, nname) = (&m.gpus[g].name, &m.nics[nic].name);
    // The NIC's local GPU: the one NCCL pairs with it (nearest class, balanced), else the
    // first of its nearest GPUs.
    let pairs = h.nearest_nics();
    let best = (0..m.gpus.len())
        .map(|x| h.class(gpu_at(x), nic_at))
        .min()
        .ok_or_else(|| format!("no GPU on the host of {nname}"))?;
    let local = (0..m.gpus.len())
        .find(|&x| pairs[x] == nic && h.class(gpu_at(x), nic_at) == best)
        .or_else(|| (0..m.gpus.len()).find(|&x| h.class(gpu_at(x), nic_at) == best))
        .expect("some GPU has the best class");
    let vname = &m.gpus[local].name;
    let own = h.class(gpu_at(g), nic_at);
    if local == g {
        return Err(format!("{gname} is {nname}'s nearest GPU ({own})"));
    }
    let bond = h.class(gpu_at(g), gpu_at(local));
    if !matches!(bond, Affinity::Nv(_)) {
        return Err(format!(
            "no NVLink from {gname} to {vname}, {nname}'s nearest GPU ({bond})"
        ));
    }
    // NCCL's condition: the relay's path to the NIC at most PXB (or P2C), and GPUDirect
    // reads enabled for it (`ncclTopoCheckGdr`: within NET_GDR_LEVEL, or P2C with
    // NET_GDR_C2C), and the route lets the NIC read it.
    let via_class = h.class(gpu_at(local), nic_at);
    let p2c = super::paths::p2c_within_level(cfg, h, gpu_at(local), nic_at);
    let reads = h.route(nic_at, gpu_at(local), Flow::ReadRequest).is_ok()
        && h.route(gpu_at(local), nic_at, Flow::ReadCompletion).is_ok();
    let within = (via_class <= Affinity::Pxb && via_class <= cfg.sim.net_gdr_level) || p2c;
    // The relay has an NVLink peer (this GPU), so only NET_GDR_READ=0 keeps it from reading.
    if !within || !reads {
        return Err(format!(
            "{vname}, {nname}'s nearest GPU, has no GPUDirect reads to it ({via_class}, \
             NET_GDR_LEVEL {})",
            cfg.sim.net_gdr_level
        ));
    }
    if !cfg
        .sim
        .net_gdr_read
        .reads(m.gpus[local].compute_capability, true)
    {
        return Err(format!(
            "{vname}, {nname}'s nearest GPU, may not be read by GPUDirect (NET_GDR_READ {})",
            cfg.sim.net_gdr_read.name()
        ));
    }
    // Through the CPU (beyond NCCL's PXN rank), or a slower way to the NIC.
    let ceiling = |x: usize| {
        h.route(gpu_at(x), nic_at, Flow::ReadCompletion)
            .ok()
            .and_then(|r| topo.route_ceiling(&r, Unit::Completion).map(|c| c.0))
    };
    if own <= Affinity::Pxb && ceiling(local) <= ceiling(g) {
        return Err(format!(
            "{gname} is {own} to {nname}, as near as {vname} ({via_class})"
        ));
    }
    Ok(local)
}

/// The hand-over of one chunk of `bytes` before the relay's proxy posts it: the sending GPU's
/// kernel stores the chunk over NVLink into the relay GPU's memory, then the flag into the
/// proxy's host memory (on `socket`), which the proxy thread (`thread`, on `actor`) finds by
/// polling. It waits for the steps `after` (a free slot of the relay ring); the chunks of one
/// message go in order, as one kernel stores them, because their stores queue in order (in
/// the channels' FIFOs, or in the GPU's queue of bulk transfers). Returns the poll.
pub fn hand_over(
    p: &mut Plan,
    topo: &Topology,
    host: usize,
    (from, via, socket): (usize, usize, usize),
    (thread, actor): (u16, u32),
    after: Vec<StepId>,
    bytes: u64,
) -> Result<StepId, RouteError> {
    let h = &topo.hosts[host];
    let gpu_at = |x: usize| Place::Device(h.node_index(NodeKind::Gpu(x)));
    let sm = p.actor(Actor::Sm { host, gpu: from });
    let gpu = GpuRef { host, gpu: from };
    // The chunk: loads from the user's buffer, stores over NVLink into the relay's buffer.
    let nv = h.route(gpu_at(from), gpu_at(via), Flow::Write)?;
    let mut c = vec![h.gpu_memory[from]];
    c.extend(nv.channels);
    c.push(h.gpu_memory[via]);
    let copy = Copy::D2h {
        route: p.route(c),
        mps: nv.mps,
    };
    let deps = after.into_iter().map(done).collect();
    let data = add(
        p,
        StepKind::KernelCopy { gpu, copy },
        Some(Stage::Relay),
        sm,
        deps,
        None,
    );
    carries(p, data, bytes, true);
    // The flag, stored after the data (the kernel fences between them).
    signal(
        p,
        topo,
        (host, from, socket),
        (thread, actor),
        vec![done(data)],
        Stage::Relay,
    )
}

/// The kernel of GPU `from` hands a chunk to its proxy thread: it stores the chunk's flag (the
/// FIFO entry and the tail, [`FLAG_BYTES`]) into the proxy's host memory on `socket`, once the
/// milestones `deps` are met, and the proxy thread (`thread`, on `actor`), polling its FIFO,
/// finds it. NCCL's net transport (`src/transport/net.cc`, `sendProxyProgress`: the proxy posts
/// a step once `connFifo[slot].size` and `recvMem->tail` say the kernel has filled it; both
/// live in host memory whatever NCCL_GDRCOPY_ENABLE says, which maps only the receive tail and
/// the send head into GPU memory). Reported as `stage`. Returns the poll.
pub fn signal(
    p: &mut Plan,
    topo: &Topology,
    (host, from, socket): (usize, usize, usize),
    (thread, actor): (u16, u32),
    deps: Vec<crate::plan::Dep>,
    stage: Stage,
) -> Result<StepId, RouteError> {
    let h = &topo.hosts[host];
    let gpu_at = |x: usize| Place::Device(h.node_index(NodeKind::Gpu(x)));
    let sm = p.actor(Actor::Sm { host, gpu: from });
    let gpu = GpuRef { host, gpu: from };
    let up = h.route(gpu_at(from), Place::Memory(socket), Flow::Write)?;
    let mut c = up.channels;
    c.push(h.dram[socket]);
    let copy = Copy::D2h {
        route: p.route(c),
        mps: up.mps,
    };
    let flag = add(
        p,
        StepKind::KernelCopy { gpu, copy },
        Some(stage),
        sm,
        deps,
        None,
    );
    carries(p, flag, FLAG_BYTES, false);
    // The proxy thread, polling its FIFO, finds it.
    let kind = StepKind::Poll { thread, extra: 0 };
    let poll = add(p, kind, Some(stage), actor, vec![done(flag)], None);
    Ok(poll)
}

//! Plans of copies between two GPUs of one host, as `cudaMemcpyPeerAsync` makes them: over a
//! peer path (NVLink where bonds join the GPUs, else PCIe peer-to-peer) by the source GPU's
//! copy engine writing into the peer (P2P writes) or the destination's reading from it (P2P
//! reads); staged through pinned host memory when peer access is off; or within one GPU.

use super::build::{add, carries, done};
use crate::plan::{Actor, Copy, GpuRef, Plan, ReadSpec, StepId, StepKind};
use crate::record::Stage;
use crate::topology::{ChannelKind, Flow, HostTopo, NodeKind, Place, RouteError, Topology};

/// How a peer copy moves its data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerCopy {
    /// Peer access on: the source GPU's copy engine posts writes into the peer's memory.
    Write,
    /// Peer access on: the destination GPU's copy engine reads the peer's memory under its
    /// read window.
    Read,
    /// Peer access off: the driver copies device to host into a pinned buffer on the source
    /// GPU's socket, then host to device, chunk by chunk so the two copies overlap.
    Staged,
}

/// The driver's staging chunk for copies without peer access. Estimate: the CUDA driver's
/// staging buffers are not documented; a few MiB keep both copy engines busy at once.
pub const STAGE_CHUNK: u64 = 2 << 20;
/// At most this many staged chunks per copy, so a copy's steps do not grow with its size
/// (larger copies take larger chunks).
pub const MAX_STAGE_CHUNKS: u64 = 16;

/// Whether GPU `a` can access GPU `b`'s memory as a peer (`cudaDeviceCanAccessPeer`): NVLink
/// joins them, or PCIe forwards peer-to-peer writes and reads between them (no root complex
/// or socket link on the way refuses them, row B7's client CPUs refuse reads).
pub fn peer_access(h: &HostTopo, a: usize, b: usize) -> bool {
    if a == b {
        return true;
    }
    let at = |g: usize| Place::Device(h.node_index(NodeKind::Gpu(g)));
    [Flow::Write, Flow::ReadRequest, Flow::ReadCompletion]
        .iter()
        .all(|&f| h.route(at(a), at(b), f).is_ok() && h.route(at(b), at(a), f).is_ok())
}

/// The plan of one copy of `size` bytes from GPU `src` to GPU `dst` of host `host` (the same
/// GPU: a device-to-device copy inside its memory, read and written by its copy engine).
pub fn copy(
    topo: &Topology,
    host: usize,
    (src, dst): (usize, usize),
    how: PeerCopy,
    size: u64,
) -> Result<Plan, RouteError> {
    let h = &topo.hosts[host];
    let socket = |g: usize| h.nodes[h.node_index(NodeKind::Gpu(g))].socket;
    let mut p = Plan::new(size);
    let thread = p.thread(host, socket(src));
    let cpu = p.actor(Actor::Cpu {
        host,
        socket: socket(src),
    });
    let ce = |p: &mut Plan, gpu: usize| p.actor(Actor::CopyEngine { host, gpu });
    let gpu = |g: usize| GpuRef { host, gpu: g };
    let at = |g: usize| Place::Device(h.node_index(NodeKind::Gpu(g)));
    let memcpy = |p: &mut Plan, on: usize, copy: Copy, after: Vec<StepId>, bytes: u64| {
        let kind = StepKind::Memcpy {
            thread,
            gpu: gpu(on),
            copy,
            driver: None,
            blocking: false,
        };
        let actor = ce(p, on);
        let id = add(
            p,
            kind,
            Some(Stage::MemcpyPeer),
            actor,
            after.into_iter().map(done).collect(),
            None,
        );
        carries(p, id, bytes, true)
    };
    // Posted writes from `from`'s memory into `to` (a GPU, or host memory of a socket).
    let push = |p: &mut Plan, from: usize, to: Option<usize>| -> Result<Copy, RouteError> {
        let (place, mem) = match to {
            Some(g) => (at(g), h.gpu_memory[g]),
            None => (Place::Memory(socket(src)), h.dram[socket(src)]),
        };
        let route = if to == Some(from) {
            crate::topology::Route {
                channels: Vec::new(),
                mps: 4096,
                p2p: false,
                class: crate::topology::Affinity::Pix,
            }
        } else {
            h.route(at(from), place, Flow::Write)?
        };
        let mut c = vec![h.gpu_memory[from]];
        c.extend(route.channels);
        c.push(mem);
        Ok(Copy::D2h {
            route: p.route(c),
            mps: route.mps,
        })
    };
    // Reads by `by`'s copy engine of `from`'s memory (a GPU, or host memory of a socket).
    let pull = |p: &mut Plan, by: usize, from: Option<usize>| -> Result<Copy, RouteError> {
        let (place, mem) = match from {
            Some(g) => (at(g), h.gpu_memory[g]),
            None => (Place::Memory(socket(src)), h.dram[socket(src)]),
        };
        let req = p.route(h.route(at(by), place, Flow::ReadRequest)?.channels);
        let back = h.route(place, at(by), Flow::ReadCompletion)?;
        // Reads of a peer over NVLink keep their own (deeper) window in flight.
        let nvlink = back
            .channels
            .iter()
            .any(|&c| matches!(topo.channels[c.index()].kind, ChannelKind::NvLink { .. }));
        let engine = if nvlink {
            topo.gpu_nvlink_engine(host, by)
        } else {
            topo.gpu_engine(host, by)
        };
        let mut c = vec![mem];
        c.extend(back.channels);
        let cpl = p.route(c);
        let commit = p.route(vec![h.gpu_memory[by]]);
        Ok(Copy::H2d {
            read: ReadSpec {
                engine,
                req,
                cpl,
                mrrs: h.spec.gpus[by].copy_engine.mrrs,
                mps: back.mps,
            },
            commit,
        })
    };
    let ready = add(&mut p, StepKind::Wait { ps: 0 }, None, cpu, vec![], None);
    let last = if src == dst {
        let c = push(&mut p, src, Some(src))?;
        memcpy(&mut p, src, c, vec![ready], size)
    } else {
        match how {
            PeerCopy::Write => {
                let c = push(&mut p, src, Some(dst))?;
                memcpy(&mut p, src, c, vec![ready], size)
            }
            PeerCopy::Read => {
                let c = pull(&mut p, dst, Some(src))?;
                memcpy(&mut p, dst, c, vec![ready], size)
            }
            PeerCopy::Staged => {
                let chunks = size.div_ceil(STAGE_CHUNK).clamp(1, MAX_STAGE_CHUNKS);
                let chunk = size.div_ceil(chunks);
                let (down, up) = (push(&mut p, src, None)?, pull(&mut p, dst, None)?);
                let (mut prev_down, mut prev_up) = (ready, ready);
                let mut off = 0;
                while off < size {
                    let b = chunk.min(size - off);
                    prev_down = memcpy(&mut p, src, down, vec![prev_down], b);
                    prev_up = memcpy(&mut p, dst, up, vec![prev_down, prev_up], b);
                    off += b;
                }
                prev_up
            }
        }
    };
    deliver_and_finish(&mut p, last, cpu);
    Ok(p)
}

/// Ends the plan of a copy between two GPUs: the delivery once `last` is done, then the
/// finish that frees the sender's slot, both on `actor`; links the plan.
pub(super) fn deliver_and_finish(p: &mut Plan, last: StepId, actor: u32) {
    let deliver = add(p, StepKind::Deliver, None, actor, vec![done(last)], None);
    p.deliver = deliver;
    p.handles.finish = Some(add(
        p,
        StepKind::Finish,
        None,
        actor,
        vec![done(deliver)],
        None,
    ));
    p.link();
}

/// The GPUs (sender, receiver) of a flow between two GPUs of one host.
pub(super) fn gpu_pair(flow: &crate::config::FlowSpec) -> (usize, usize) {
    (
        flow.sender.gpu.expect("validated: GPUs on both sides"),
        flow.receiver.gpu.expect("validated: GPUs on both sides"),
    )
}

/// What a plan between two GPUs of one host (`flow`'s, `size` bytes a message) comes to: each
/// side its GPU's buffer driven from the socket `socket` names for that GPU, both in `mode`,
/// nothing set up, registered, staged or relayed.
pub(super) fn between_gpus(
    h: &HostTopo,
    flow: &crate::config::FlowSpec,
    (plan, size): (Plan, u64),
    socket: impl Fn(usize) -> usize,
    (mode, reason): (crate::effective::SideMode, String),
) -> super::paths::Built {
    let host = flow.sender.host;
    let (src, dst) = gpu_pair(flow);
    let side = |e: &crate::config::Endpoint, g: usize| gpu_side(h, host, e, g, socket(g));
    super::paths::Built {
        plan,
        sides: super::paths::Sides {
            size,
            sender: side(&flow.sender, src),
            receiver: side(&flow.receiver, dst),
            flush: false,
            qp: flow.qp,
        },
        sender: mode,
        receiver: mode,
        setup: 0,
        reason,
        inline: false,
        bounce_buffers: 0,
    }
}

/// One side of a copy between two GPUs of host `host`: GPU `g`'s buffer (its NIC unused),
/// driven from `socket`; no registration, staging or relay.
pub(super) fn gpu_side(
    h: &HostTopo,
    host: usize,
    e: &crate::config::Endpoint,
    g: usize,
    socket: usize,
) -> super::paths::SidePlan {
    let va = h.spec.gpus[g].heap_base;
    super::paths::SidePlan {
        host,
        nic: e.nic,
        cpu_socket: socket,
        nic_buffer: crate::plan::Buffer::Gpu {
            gpu: g,
            va,
            bus: va + h.spec.gpus[g].bar_offset,
        },
        staging: None,
        relay: None,
        handover: false,
        register: 0,
        deregister: 0,
    }
}

/// A flow inside one host (`gpudirect`, `auto` or `staged` between two of its GPUs) as the
/// cudaMemcpyPeer it is: with peer access (`gpudirect`; `auto`, as CUDA copies), the source
/// GPU's copy engine writes into the peer, or for `read` the destination's reads it; without
/// peer access, or for `staged`, the driver stages it through pinned host memory. No NIC,
/// registration or flush takes part.
pub fn flow_plan(
    topo: &Topology,
    flow: &crate::config::FlowSpec,
    path: crate::config::PathKind,
    op: crate::config::Op,
    size: u64,
) -> Result<super::paths::Built, RouteError> {
    use crate::config::{Op, PathKind};
    use crate::effective::SideMode;
    let host = flow.sender.host;
    let h = &topo.hosts[host];
    let (src, dst) = gpu_pair(flow);
    let (s, d) = (&h.spec.gpus[src].name, &h.spec.gpus[dst].name);
    let peer = peer_access(h, src, dst);
    // `staged` turns peer access off; every other path copies peer to peer where it can.
    let peer_path = match path {
        PathKind::Staged => false,
        PathKind::Host
        | PathKind::GpuDirect
        | PathKind::Auto
        | PathKind::Gdrcopy
        | PathKind::StagedPipelined
        | PathKind::Pxn
        | PathKind::NcclHost => true,
    };
    let (how, mode, reason) = match (peer_path, peer, op) {
        (false, _, _) => (PeerCopy::Staged, SideMode::Staged, String::new()),
        (true, false, _) => (
            PeerCopy::Staged,
            SideMode::Staged,
            format!("no peer access between {s} and {d} -> staged through host memory"),
        ),
        (true, true, Op::Read) => (
            PeerCopy::Read,
            SideMode::Direct,
            format!("{d}'s copy engine reads {s}'s memory"),
        ),
        (true, true, Op::Write | Op::WriteImm | Op::Send) => (
            PeerCopy::Write,
            SideMode::Direct,
            format!("{s}'s copy engine writes into {d}'s memory"),
        ),
    };
    let plan = copy(topo, host, (src, dst), how, size)?;
    // Both sides driven from the sender's socket (the thread that issues the copy).
    let socket = h.nodes[h.node_index(NodeKind::Gpu(src))].socket;
    Ok(between_gpus(
        h,
        flow,
        (plan, size),
        |_| socket,
        (mode, reason),
    ))
}

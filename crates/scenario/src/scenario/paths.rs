//! The data paths, side by side: which buffer each NIC touches, which copies are staged, what
//! registration costs, and where GPUDirect falls back to staging. [`super::build`] turns the two
//! sides into a plan of steps.

use super::build::Receive;
use crate::config::{Config, Endpoint, FlowSpec, GdrRead, Op, PathKind, Registration};
use crate::effective::{EffectivePath, SideMode};
use crate::plan::Buffer;
use crate::topology::{Affinity, Flow, NodeKind, Place, RouteError, Topology};
use crate::units::Ps;

/// A cudaMemcpy between the user's GPU buffer and a pinned host bounce buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Staging {
    /// The GPU holding the user's buffer (index into the machine's GPUs).
    pub gpu: usize,
    /// The user buffer's GPU virtual address.
    pub gpu_va: u64,
    /// The socket whose DRAM holds the pinned bounce buffer.
    pub bounce_socket: usize,
    /// The bounce buffer's host address.
    pub bounce_addr: u64,
    /// The CPU copies through the GPU's BAR1 mapping (GDRCopy) instead of a cudaMemcpy.
    pub by_cpu: bool,
    /// The bounce buffer is pageable to CUDA (malloc + ibv_reg_mr): each cudaMemcpy goes
    /// through the driver's own pinned buffer (row D9).
    pub pageable: bool,
    /// NCCL's host path: a GPU kernel already running stores into (or loads from) the pinned,
    /// mapped host buffer chunk by chunk, instead of a cudaMemcpy (rows M5, B3).
    pub kernel: bool,
}

/// NCCL's PXN on a sending side: the user's GPU stores the payload over NVLink into a buffer of
/// the GPU next to the NIC, from which the NIC reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Relay {
    /// The GPU holding the user's buffer (index into the machine's GPUs).
    pub from: usize,
    /// The user buffer's GPU virtual address.
    pub from_va: u64,
    /// The GPU next to the NIC, whose buffer the NIC reads.
    pub via: usize,
}

/// One side (sender or receiver) of a transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SidePlan {
    /// The host (index into the topology's hosts).
    pub host: usize,
    /// The NIC used (index into the machine's NICs).
    pub nic: usize,
    /// Socket of the CPU thread driving the verbs (and of the queues and CQs in host memory).
    pub cpu_socket: usize,
    /// Where the NIC reads (sender) or writes (receiver) the payload.
    pub nic_buffer: Buffer,
    /// Host staging copy on this side, if any.
    pub staging: Option<Staging>,
    /// PXN: the copy over NVLink into the relay GPU's buffer (`nic_buffer`), if any.
    pub relay: Option<Relay>,
    /// NCCL's GPUDirect side (`auto`). A sender's kernel hands each chunk to the proxy
    /// thread (its flag into the proxy's host memory, found by polling) before the proxy
    /// posts it, as PXN's relay does. A receiver's proxy hands each received chunk back to
    /// the kernel (Simple only): it stores the tail into its host memory, which the kernel,
    /// spinning on it, sees by a load over PCIe. A perftest-like side (`gpudirect`) posts at
    /// once and has the data when its poll is done.
    pub handover: bool,
    /// Registration cost paid per transfer on this side (0 with a registration cache).
    pub register: Ps,
    /// Deregistration paid after each transfer (`per_transfer`: ibv_dereg_mr once the work
    /// request completed; an LRU miss pays its eviction's in `register` instead).
    pub deregister: Ps,
}

/// What a path asks of both sides of one scenario at one size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sides {
    /// Message size, in bytes.
    pub size: u64,
    /// The sending side.
    pub sender: SidePlan,
    /// The receiving side.
    pub receiver: SidePlan,
    /// GPUDirect receive flush (a loopback RDMA Read of the receive buffer) before the data
    /// counts as visible.
    pub flush: bool,
    /// The flow's QP number, on which a leaf-spine fabric's ECMP hashes its network route.
    pub qp: u32,
}

/// A path's plan with what the report says about it.
#[derive(Clone, Debug)]
pub struct Built {
    /// The steps of one message.
    pub plan: crate::plan::Plan,
    /// What the path asked of each side.
    pub sides: Sides,
    /// How the sender moves the data.
    pub sender: SideMode,
    /// How the receiver moves the data.
    pub receiver: SideMode,
    /// One-time costs kept out of the per-message latency (registration, bounce buffers).
    pub setup: Ps,
    /// Why each side moves the data as it does, where the path chose (auto) or fell back
    /// (gpudirect); empty otherwise.
    pub reason: String,
    /// Whether the sender's payload rides inside the WQE.
    pub inline: bool,
    /// Pinned bounce buffers per staged side: one per message in flight in the streaming run,
    /// allocated and registered once (in `setup`).
    pub bounce_buffers: u32,
}

impl Built {
    /// The path that runs: how each side ended up moving the data.
    pub fn effective(&self) -> EffectivePath {
        EffectivePath {
            sender: self.sender,
            receiver: self.receiver,
        }
    }
}

/// Whether the NIC of `e` may reach its GPU by peer-to-peer: reads for a sender (the NIC reads
/// GPU memory), writes for a receiver (and reads too when the flush is an RDMA Read).
pub fn p2p_allowed(topo: &Topology, host: usize, e: &Endpoint, sender: bool, flush: bool) -> bool {
    let h = &topo.hosts[host];
    let Some(g) = e.gpu else { return false };
    let nic = Place::Device(h.node_index(NodeKind::Nic(e.nic)));
    let gpu = Place::Device(h.node_index(NodeKind::Gpu(g)));
    let reads = h.route(nic, gpu, Flow::ReadRequest).is_ok()
        && h.route(gpu, nic, Flow::ReadCompletion).is_ok();
    let writes = h.route(nic, gpu, Flow::Write).is_ok();
    if sender {
        reads
    } else {
        writes && (!flush || reads)
    }
}

/// Whether a GPUDirect receive into `e`'s GPU is flushed (by the config's flush mode and the
/// GPU's compute capability).
pub fn flushes(cfg: &Config, e: &Endpoint) -> bool {
    e.gpu.is_some_and(|g| {
        let cc = cfg.hosts[e.host].machine.gpus[g].compute_capability;
        cfg.sim.flush.flushes(cc)
    })
}

/// Where the sender's payload starts for `path`: its GPU (staged, gpudirect), or host memory
/// (the host path, or a scenario without a GPU).
pub fn sender_source(topo: &Topology, flow: &FlowSpec, path: PathKind) -> Place {
    let h = &topo.hosts[flow.sender.host];
    match (path, flow.sender.gpu) {
        (PathKind::Host, _) | (_, None) => Place::Memory(flow.sender.memory_socket),
        (_, Some(g)) => Place::Device(h.node_index(NodeKind::Gpu(g))),
    }
}

/// The route of the sender's payload on its own host under GPUDirect: to its NIC (completions
/// of the NIC's reads), or for a flow inside one host into the receiving GPU (the copy
/// engine's writes into its peer).
pub fn payload_route(
    topo: &Topology,
    flow: &FlowSpec,
) -> Result<crate::topology::Route, RouteError> {
    let h = &topo.hosts[flow.sender.host];
    let src = sender_source(topo, flow, PathKind::GpuDirect);
    match (flow.is_intra(), flow.receiver.gpu) {
        (true, Some(r)) => h.route(
            src,
            Place::Device(h.node_index(NodeKind::Gpu(r))),
            Flow::Write,
        ),
        _ => {
            let nic = Place::Device(h.node_index(NodeKind::Nic(flow.sender.nic)));
            h.route(src, nic, Flow::ReadCompletion)
        }
    }
}

/// The affinity class results.csv reports: the sender's payload source against its NIC, or
/// for a flow inside one host the two GPUs' class (NV# over NVLink).
pub fn sender_class(topo: &Topology, flow: &FlowSpec, path: PathKind) -> Affinity {
    let h = &topo.hosts[flow.sender.host];
    if let (true, Some(s), Some(r)) = (flow.is_intra(), flow.sender.gpu, flow.receiver.gpu) {
        let at = |g: usize| Place::Device(h.node_index(NodeKind::Gpu(g)));
        return h.class(at(s), at(r));
    }
    let nic = Place::Device(h.node_index(NodeKind::Nic(flow.sender.nic)));
    h.class(sender_source(topo, flow, path), nic)
}

/// The socket a host's NIC hangs under (where its driving thread and queues live).
fn nic_socket(topo: &Topology, host: usize, nic: usize) -> usize {
    let h = &topo.hosts[host];
    h.nodes[h.node_index(NodeKind::Nic(nic))].socket
}

/// Builds the plan of `path` for one scenario and size, with each side's mode and the one-time
/// setup cost. Fails where a route the plan needs is refused (the P2P checks make GPUDirect fall
/// back before that happens).
pub fn plan(
    cfg: &Config,
    flow: &FlowSpec,
    topo: &Topology,
    path: PathKind,
    op: Op,
    size: u64,
) -> Result<Built, RouteError> {
    plan_flushing(cfg, flow, topo, (path, op, size), true)
}

/// As [`plan`], for an NCCL protocol: `simple` (NCCL's Simple) or not (LL, LL128). Only a
/// Simple receiver waits for the GPUDirect receive flush and for its proxy's tail
/// (`src/transport/net.cc`, `recvProxyProgress`: it flushes where `p == NCCL_PROTO_SIMPLE &&
/// needFlush` and stores the tail for every protocol, on which only Simple's kernel spins);
/// LL and LL128 carry a flag in every line, which their receiving kernel polls instead.
pub fn plan_flushing(
    cfg: &Config,
    flow: &FlowSpec,
    topo: &Topology,
    (path, op, size): (PathKind, Op, u64),
    simple: bool,
) -> Result<Built, RouteError> {
    if flow.is_intra() {
        return super::peer::flow_plan(topo, flow, path, op, size);
    }
    let (mut sides, mut sender, mut receiver, mut setup, reason) =
        sides_of(cfg, flow, topo, path, op, size);
    if path == PathKind::StagedPipelined && (sender == SideMode::Host || receiver == SideMode::Host)
    {
        // Chunks need a bounce buffer on both sides: with host memory on one, stage the other
        // whole.
        (sides, sender, receiver, setup, _) = sides_of(cfg, flow, topo, PathKind::Staged, op, size);
    }
    sides.flush &= simple;
    sides.receiver.handover &= simple;
    sides.qp = qp_number(&cfg.network, flow.qp, 0);
    let mut plan = plan_of_sides(cfg, topo, &sides, (sender, receiver), op)?;
    // The connection's other QPs: the same plan built again on each QP's number, of which
    // only the network routes differ (ECMP hashes the QP); message m takes QP m mod Q's
    // routes (`Plan::qp_routes`).
    for k in 1..cfg.network.qps() {
        let q_sides = Sides {
            qp: qp_number(&cfg.network, flow.qp, k),
            ..sides
        };
        let other = plan_of_sides(cfg, topo, &q_sides, (sender, receiver), op)?.0;
        debug_assert_eq!(other.routes.len(), plan.0.routes.len());
        debug_assert_eq!(other.steps.len(), plan.0.steps.len());
        plan.0.qp_routes.push(other.routes);
    }
    let (plan, inline) = plan;
    Ok(Built {
        plan,
        sides,
        sender,
        receiver,
        setup,
        reason,
        inline,
        bounce_buffers: bounce_buffers(cfg, size),
    })
}

/// The QP number ECMP hashes for QP `k` of the connection of flow `flow_qp` (its index in its
/// scenario): `flow_qp x Q + k` with Q queue pairs per connection, so one QP keeps the
/// flow's index (saturating: the config's flow count and Q's bound keep it far below).
pub fn qp_number(net: &crate::topology::spec::NetworkSpec, flow_qp: u32, k: u32) -> u32 {
    flow_qp.saturating_mul(net.qps()).saturating_add(k)
}

/// The plan of one message of `sides` and whether its payload is inline.
fn plan_of_sides(
    cfg: &Config,
    topo: &Topology,
    sides: &Sides,
    (sender, receiver): (SideMode, SideMode),
    op: Op,
) -> Result<(crate::plan::Plan, bool), RouteError> {
    // How the receiver learns of the data (a Read's requester polls its own CQE: the plan
    // builder does not ask).
    let how = match op {
        Op::Write => Receive::LastByte,
        Op::Send => Receive::Send,
        Op::WriteImm | Op::Read => Receive::Imm,
    };
    // A Read's source takes no part with its CPU: nothing stages or relays it (the config
    // check refuses those paths with a Read), so its plan is the one Read.
    // NCCL's host path on either side moves the message in chunks (the other side posts or
    // takes each chunk as it would alone).
    // So does NCCL's GPUDirect side (`auto`): its kernel and proxy hand each chunk over.
    let chunked = matches!(
        sender,
        SideMode::Pipelined | SideMode::Relay | SideMode::Mapped
    ) || receiver == SideMode::Mapped
        || sides.sender.handover
        || sides.receiver.handover;
    let (mut plan, inline) = match op {
        Op::Read => (super::build::read(topo, sides)?, false),
        Op::Write | Op::WriteImm | Op::Send if chunked => {
            let shape = (cfg.sim.chunk_bytes, cfg.sim.pipeline_depth);
            (super::build::pipelined(topo, sides, how, shape)?, false)
        }
        Op::Write | Op::WriteImm | Op::Send => super::build::write(topo, sides, how)?,
    };
    if matches!(op, Op::Send | Op::WriteImm) {
        let timer = crate::config::rnr_timer_ps(cfg.sim.min_rnr_timer);
        plan.recv_queue = crate::plan::RecvQueue::of(&plan.handles, cfg.sim.recv_depth, timer);
    }
    Ok((plan, inline))
}

/// Bounce buffers a staged side allocates: one per message in flight in the streaming run.
fn bounce_buffers(cfg: &Config, size: u64) -> u32 {
    super::simulate::stream_shape(cfg, size).0
}

/// What `path` does on each side.
fn sides_of(
    cfg: &Config,
    flow: &FlowSpec,
    topo: &Topology,
    path: PathKind,
    op: Op,
    size: u64,
) -> (Sides, SideMode, SideMode, Ps, String) {
    let window = bounce_buffers(cfg, size) as u64;
    // An LRU registration cache smaller than the buffers cycled through misses every time
    // (cyclic access): each transfer deregisters the evicted buffer and registers its own.
    let lru = cfg.sim.registration == Registration::Lru;
    let lru_miss = lru && cfg.sim.buffers > cfg.sim.registration_cache_entries;
    let per_transfer = cfg.sim.registration == Registration::PerTransfer || lru_miss;
    let dereg_after = cfg.sim.registration == Registration::PerTransfer;
    // Registered once: one buffer, or every buffer the workload cycles over.
    let once = if lru { cfg.sim.buffers as u64 } else { 1 };
    // `chunked`: the other side relays in chunks (PXN), so a staging side stages chunk by
    // chunk through a ring, as pipelined staging does.
    let side = |host: usize,
                e: &Endpoint,
                sender: bool,
                chunked: bool|
     -> (SidePlan, SideMode, Ps, String) {
        let m = &cfg.hosts[e.host].machine;
        let reg = &m.registration;
        let host_buf = Buffer::Host {
            socket: e.memory_socket,
            addr: m.host_buffer_base,
        };
        let p2p = || p2p_allowed(topo, host, e, sender, flushes(cfg, e));
        let who = if sender { "sender" } else { "receiver" };
        let refused = || {
            let flush_only = !sender && flushes(cfg, e) && p2p_allowed(topo, host, e, false, false);
            let what = match (sender, flush_only) {
                (true, _) => "reads",
                (false, true) => "reads (for the flush)",
                (false, false) => "writes",
            };
            format!("{who}: P2P {what} refused on its GPU-NIC route -> staged")
        };
        // GPUDirect where the route allows it (and for an RDMA Read's source, whose CPU takes
        // no part: the check refuses it where the route does), else staged.
        let direct = |why: String| {
            if p2p() || (sender && op == Op::Read) {
                (SideMode::Direct, why)
            } else {
                let refused = refused();
                let why = if why.is_empty() {
                    refused
                } else {
                    format!("{why}; {refused}")
                };
                (SideMode::Staged, why)
            }
        };
        // The GPU a writing sender would relay through (`pxn`, and `auto` where NCCL's PXN is
        // on), or why it has none.
        let wants_relay = path == PathKind::Pxn || (path == PathKind::Auto && cfg.sim.pxn);
        let relay = match e.gpu {
            Some(g) if sender && op != Op::Read && wants_relay => {
                Some((g, super::relay::relay_gpu(cfg, topo, host, (g, e.nic))))
            }
            _ => None,
        };
        let via = match relay {
            Some((_, Ok(v))) => Some(v),
            _ => None,
        };
        let (mode, reason) = match path {
            // A side whose data is in host memory (no GPU): host memory on every path.
            _ if e.gpu.is_none() => (SideMode::Host, String::new()),
            // Relayed (PXN); without a relay `auto` decides as below.
            PathKind::Pxn | PathKind::Auto if let Some((g, Ok(v))) = relay => {
                (SideMode::Relay, relay_reason(topo, host, (g, v, e.nic)))
            }
            PathKind::Pxn if let Some((_, Err(why))) = &relay => {
                direct(format!("sender: no PXN relay ({why}) -> GPUDirect"))
            }
            PathKind::Pxn if sender => direct("sender: PXN relays writes -> GPUDirect".into()),
            PathKind::Pxn => direct(String::new()),
            PathKind::Host => (SideMode::Host, String::new()),
            PathKind::Staged => (SideMode::Staged, String::new()),
            PathKind::NcclHost => (SideMode::Mapped, String::new()),
            PathKind::GpuDirect if p2p() => (SideMode::Direct, String::new()),
            // An RDMA Read's source cannot be staged (its CPU takes no part): the plan asks
            // for the P2P read and the check refuses it where the route does.
            PathKind::GpuDirect if sender && op == Op::Read => (SideMode::Direct, String::new()),
            PathKind::GpuDirect => (SideMode::Staged, refused()),
            PathKind::Auto => auto_side(cfg, topo, e, sender, p2p),
            PathKind::Gdrcopy => (SideMode::Gdrcopy, String::new()),
            PathKind::StagedPipelined => (SideMode::Pipelined, String::new()),
        };
        let base = SidePlan {
            host: e.host,
            nic: e.nic,
            cpu_socket: nic_socket(topo, host, e.nic),
            nic_buffer: host_buf,
            staging: None,
            relay: None,
            handover: false,
            register: 0,
            deregister: 0,
        };
        // The NIC's buffer registered per transfer (in the plan, deregistered after where
        // the config says so) or once (setup); an LRU miss also pays the evicted region's
        // deregistration.
        let registered = |nic_buffer: Buffer, cost: Ps, dereg: Ps| {
            let cost = cost + if lru_miss { dereg } else { 0 };
            let plan = SidePlan {
                nic_buffer,
                register: if per_transfer { cost } else { 0 },
                deregister: if dereg_after { dereg } else { 0 },
                ..base
            };
            (plan, if per_transfer { 0 } else { once * cost })
        };
        let mode = match mode {
            SideMode::Staged if chunked => SideMode::Pipelined,
            m => m,
        };
        let (plan, mode, setup) = match mode {
            SideMode::Host => {
                let (plan, setup) =
                    registered(host_buf, reg.host_cost(size), reg.host_dereg_cost(size));
                (plan, mode, setup)
            }
            SideMode::Staged | SideMode::Gdrcopy | SideMode::Pipelined | SideMode::Mapped => {
                let g = e.gpu.expect("validated: staged paths have GPUs");
                let by_cpu = mode == SideMode::Gdrcopy;
                let kernel = mode == SideMode::Mapped;
                // The pipelined ring and GDRCopy's buffer are the library's own, pinned.
                let pageable = e.pageable_bounce && mode == SideMode::Staged;
                let staging = Staging {
                    gpu: g,
                    gpu_va: m.gpus[g].heap_base,
                    bounce_socket: e.memory_socket,
                    bounce_addr: m.host_buffer_base,
                    by_cpu,
                    pageable,
                    kernel,
                };
                // One pinned bounce buffer per message in flight in the streaming run,
                // allocated and registered once; GDRCopy also pins and maps the GPU buffer
                // once (gdr_pin_buffer, gdr_map: a GPU registration's cost).
                let setup = if matches!(mode, SideMode::Pipelined | SideMode::Mapped) {
                    // `pipeline_depth` bounce buffers of one chunk (NCCL's host-memory ring:
                    // cudaHostAlloc'd, mapped, registered once at connection setup).
                    let chunk = cfg.sim.chunk_bytes.min(size);
                    cfg.sim.pipeline_depth as u64 * (reg.bounce_alloc + reg.host_cost(chunk))
                } else {
                    // A pageable bounce buffer is malloc'd (no cudaMallocHost), then registered.
                    let alloc = if pageable { 0 } else { reg.bounce_alloc };
                    window * (alloc + reg.host_cost(size))
                        + if by_cpu { reg.gpu_cost(size) } else { 0 }
                };
                (
                    SidePlan {
                        staging: Some(staging),
                        ..base
                    },
                    mode,
                    setup,
                )
            }
            SideMode::Relay => {
                let (from, via) = (
                    e.gpu.expect("relaying sides have GPUs"),
                    via.expect("chosen"),
                );
                let va = m.gpus[via].heap_base;
                let buf = Buffer::Gpu {
                    gpu: via,
                    va,
                    bus: va + m.gpus[via].bar_offset,
                };
                let relay = Relay {
                    from,
                    from_va: m.gpus[from].heap_base,
                    via,
                };
                // NCCL registers the relay's ring (`pipeline_depth` chunks) once, at connection
                // setup.
                let ring = cfg.sim.chunk_bytes.min(size) * cfg.sim.pipeline_depth as u64;
                let plan = SidePlan {
                    nic_buffer: buf,
                    relay: Some(relay),
                    ..base
                };
                (plan, mode, reg.gpu_cost(ring))
            }
            SideMode::Direct => {
                let g = e.gpu.expect("direct sides have GPUs");
                let va = m.gpus[g].heap_base;
                let buf = Buffer::Gpu {
                    gpu: g,
                    va,
                    bus: va + m.gpus[g].bar_offset,
                };
                let (plan, setup) = registered(buf, reg.gpu_cost(size), reg.gpu_dereg_cost(size));
                // NCCL's kernel hands a sender's chunks to its proxy, and a receiver's
                // proxy hands them back to its kernel (`auto` is NCCL's choice; an RDMA
                // Read's source takes no part with its CPU, and its plan is the one Read).
                let handover = path == PathKind::Auto && op != Op::Read;
                (SidePlan { handover, ..plan }, mode, setup)
            }
        };
        (plan, mode, setup, reason)
    };
    let (sender, s_mode, s_setup, s_why) = side(flow.sender.host, &flow.sender, true, false);
    let relays = s_mode == SideMode::Relay;
    let (receiver, r_mode, r_setup, r_why) =
        side(flow.receiver.host, &flow.receiver, false, relays);
    let reason = [s_why, r_why]
        .into_iter()
        .filter(|r| !r.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    // A GPU that needs the flush needs it whatever told its consumer the data is there: the
    // CQE of a Write with Immediate, or a plain Write's last byte (the NIC's writes are not
    // ordered for the GPU's own loads below compute capability 9.0: NCCL's
    // `ncclTopoNeedFlush`, CUDA's GPUDirect RDMA writes ordering).
    let flush = r_mode == SideMode::Direct && flushes(cfg, &flow.receiver);
    (
        Sides {
            size,
            sender,
            receiver,
            flush,
            qp: flow.qp,
        },
        s_mode,
        r_mode,
        s_setup.max(r_setup),
        reason,
    )
}

/// Whether the GPU-NIC path is NCCL's P2C (NVLink-C2C, then PCIe on the GPU's socket) and NCCL
/// takes GPUDirect over it (`net_gdr_c2c`, NCCL ranking P2C just above PXB, so a level below
/// PXB excludes it).
pub(super) fn p2c_within_level(
    cfg: &Config,
    h: &crate::topology::HostTopo,
    gpu: Place,
    nic: Place,
) -> bool {
    cfg.sim.net_gdr_c2c && cfg.sim.net_gdr_level >= Affinity::Pxb && h.over_c2c(gpu, nic)
}

/// Why a sender relays: "sender: gpu0 -> NV18 -> gpu4, PIX to nic4 -> PXN".
fn relay_reason(topo: &Topology, host: usize, (g, via, nic): (usize, usize, usize)) -> String {
    let h = &topo.hosts[host];
    let m = &h.spec;
    let at = |x: usize| Place::Device(h.node_index(NodeKind::Gpu(x)));
    let nic_at = Place::Device(h.node_index(NodeKind::Nic(nic)));
    format!(
        "sender: {} -> {} -> {}, {} to {} -> PXN",
        m.gpus[g].name,
        h.class(at(g), at(via)),
        m.gpus[via].name,
        h.class(at(via), nic_at),
        m.nics[nic].name
    )
}

/// Whether GPU `g` of host `host` has an NVLink peer (a bond to another GPU or to an NVSwitch)
/// or is its machine's only GPU: NCCL's exception to its pre-Ampere rule for GPUDirect reads.
fn nvlink_peer(cfg: &Config, host: usize, g: usize) -> bool {
    let m = &cfg.hosts[host].machine;
    let name = m.gpus[g].name.as_str();
    m.gpus.len() == 1 || m.nvlinks.iter().any(|l| l.a == name || l.b == name)
}

/// What NCCL would do on one side (`ncclTopoCheckGdr`): GPUDirect when the GPU-NIC class is at
/// most `net_gdr_level` (row B3, default PXB) or, with `net_gdr_c2c`, the path is NCCL's P2C
/// (NVLink-C2C, then PCIe on the GPU's own socket: row G3, which ranks P2C just above PXB); on
/// the sending side only where `net_gdr_read` lets it read the GPU (NCCL_NET_GDR_READ: by
/// default not below compute capability 8.0 without an NVLink peer, row B4); and only where
/// the route allows P2P; otherwise NCCL's host path (`net.cc`'s host-memory buffers: the kernel
/// stores into, or loads from, pinned mapped host memory; no cudaMemcpy). Returns the mode
/// and why.
fn auto_side(
    cfg: &Config,
    topo: &Topology,
    e: &Endpoint,
    sender: bool,
    p2p: impl Fn() -> bool,
) -> (SideMode, String) {
    let who = if sender { "sender" } else { "receiver" };
    let Some(g) = e.gpu else {
        return (SideMode::Host, format!("{who}: no GPU -> host memory"));
    };
    let h = &topo.hosts[e.host];
    let (gpu, nic) = (
        Place::Device(h.node_index(NodeKind::Gpu(g))),
        Place::Device(h.node_index(NodeKind::Nic(e.nic))),
    );
    let class = h.class(gpu, nic);
    let level = cfg.sim.net_gdr_level.name();
    let p2c = p2c_within_level(cfg, h, gpu, nic);

    let cc = cfg.hosts[e.host].machine.gpus[g].compute_capability;
    if sender && !cfg.sim.net_gdr_read.reads(cc, nvlink_peer(cfg, e.host, g)) {
        let why = match cfg.sim.net_gdr_read {
            GdrRead::Off => "NET_GDR_READ 0 (no GPUDirect reads)".to_string(),
            _ => format!(
                "compute capability {}.{} below 8.0 without NVLink (no GPUDirect reads)",
                cc.0, cc.1
            ),
        };
        (SideMode::Mapped, format!("{who}: {why} -> nccl_host"))
    } else if p2c && p2p() {
        (
            SideMode::Direct,
            format!("{who}: {class} over NVLink-C2C (P2C) within NET_GDR_C2C -> GPUDirect"),
        )
    } else if class > cfg.sim.net_gdr_level {
        (
            SideMode::Mapped,
            format!("{who}: {class} beyond NET_GDR_LEVEL {level} -> nccl_host"),
        )
    } else if !p2p() {
        (
            SideMode::Mapped,
            format!("{who}: {class} but P2P refused -> nccl_host"),
        )
    } else {
        (
            SideMode::Direct,
            format!("{who}: {class} within NET_GDR_LEVEL {level} -> GPUDirect"),
        )
    }
}

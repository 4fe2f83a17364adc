//! A transfer as data: the steps one message goes through, what each step waits for, which
//! device executes it and which routes its traffic takes.
//!
//! The scenario layer builds a [`Plan`] per flow (one per path, op and size); the components
//! execute it without knowing which path it is: when a step reaches a milestone (queued on its
//! thread, last byte in, done), the plan says which steps were waiting for it, and data that
//! streams from one step into the next (DMA read into the NIC's transmit pipeline, the wire into
//! the receiving NIC) follows the plan's `input` links. Records are kept per step instance and
//! the critical path is walked over these dependencies (see gdrsim's `stats`).
//!
//! Routes are resolved once, when the plan is built, into lists of channel ids: the fabric, the
//! chart ceilings, `walk` and `trace` all read the same plain data.

mod actor;
mod movement;
mod step;

pub use actor::Actor;
pub use movement::Movement;
pub use step::{Copy, CqeKind, DriverCopy, Gather, PacketKind, ReadSpec, Step, StepKind};

use crate::record::Stage;
use crate::topology::ChannelId;

pub use crate::ids::{PlanRoute, StepId};

/// Where a NIC or copy engine reads or writes a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buffer {
    /// Pinned host memory on `socket` at address `addr` (virtual = physical here: pinned pages
    /// are identity-mapped by the model's address map).
    Host {
        /// The socket whose DRAM holds it (index into the machine's sockets).
        socket: usize,
        /// Its address.
        addr: u64,
    },
    /// GPU memory: virtual address `va`, bus address `bus` (va + BAR offset).
    Gpu {
        /// The GPU (index into the machine's GPUs).
        gpu: usize,
        /// The virtual address the application uses.
        va: u64,
        /// The bus address a peer's DMA uses.
        bus: u64,
    },
}

impl Buffer {
    /// Whether it is in GPU memory.
    pub fn is_gpu(&self) -> bool {
        matches!(self, Buffer::Gpu { .. })
    }
    /// Address the NIC puts in its DMA descriptor (after MTT translation).
    pub fn dma_addr(&self) -> u64 {
        match *self {
            Buffer::Host { addr, .. } => addr,
            Buffer::Gpu { bus, .. } => bus,
        }
    }
    /// Address the application posted (before translation).
    pub fn virt_addr(&self) -> u64 {
        match *self {
            Buffer::Host { addr, .. } => addr,
            Buffer::Gpu { va, .. } => va,
        }
    }
}

/// A NIC of a host (indices into the topology's hosts and that machine's NICs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NicRef {
    /// Index into the topology's hosts.
    pub host: usize,
    /// Index into that host's machine's NICs.
    pub nic: usize,
}

/// A GPU of a host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuRef {
    /// Index into the topology's hosts.
    pub host: usize,
    /// Index into that host's machine's GPUs.
    pub gpu: usize,
}

/// A CPU thread the plan runs on: the host, the socket it runs on, and its name for records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Thread {
    /// Index into the topology's hosts.
    pub host: usize,
    /// The socket it runs on (index into the machine's sockets).
    pub socket: usize,
}

/// What a step waits for in another step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Milestone {
    /// The step was queued on its CPU thread (program order: a later step of the same thread
    /// queues behind it, so it cannot start before the earlier one is done).
    Queued,
    /// The step has taken in its last byte (for a DMA write: the NIC issued its last write).
    LastIn,
    /// The step is complete.
    Done,
}

/// A dependency of a step on a milestone of an earlier step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dep {
    /// The earlier step.
    pub step: StepId,
    /// The milestone of it that must be reached.
    pub on: Milestone,
}

/// The plan of one message of a flow.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Message size in bytes.
    pub size: u64,
    /// Channel lists, referred to by steps through [`PlanRoute`].
    pub routes: Vec<Vec<ChannelId>>,
    /// The steps, in an order where every dependency names an earlier step.
    pub steps: Vec<Step>,
    /// The actors steps are recorded against (CPUs, NICs, copy engines, SMs, the network).
    pub actors: Vec<Actor>,
    /// CPU threads, referred to by steps by index. A message plan's are its sender's thread,
    /// then its receiver's; a copy's is the one thread that drives it.
    pub threads: Vec<Thread>,
    /// The step whose start means the data is visible to its consumer (the one-way latency ends).
    pub deliver: StepId,
    /// The steps other code refers to by their role, named by the builder that made them.
    pub handles: Handles,
    /// For each step, the steps waiting on one of its milestones (derived by [`Plan::link`]).
    pub waiters: Vec<Vec<(StepId, Milestone)>>,
    /// For each step, the first step its data streams into (derived by [`Plan::link`]).
    pub outputs: Vec<Option<StepId>>,
    /// For each step, whether it is an open end: no step waits for its end and its data
    /// streams into none (a delivery, a finish, a deregistration after the message). Every
    /// other step ends before one of them starts, so a message whose open ends have all ended
    /// has nothing left to run (derived by [`Plan::link`]).
    pub open_ends: Vec<bool>,
    /// A Send's receive queue, where it can run dry (see [`RecvQueue`]).
    pub recv_queue: Option<RecvQueue>,
    /// The route sets of the flow's other queue pairs (`qps_per_connection` - 1 of them; empty
    /// with one QP): set `k` replaces `routes` for the messages `m` with `m mod Q = k + 1`,
    /// index for index. Only the network channels differ (ECMP hashes each QP onto its own
    /// spines), so a flow's messages spread round robin over its QPs' paths as NCCL posts
    /// them.
    pub qp_routes: Vec<Vec<Vec<ChannelId>>>,
}

/// The steps of a message's RDMA that other code refers to by role: the receive queue, the
/// chart ceiling's steady state and the chunked plan that repeats a chunk's RDMA. The builder
/// that adds a step names it here, so nothing finds a step again by its kind or by its place
/// in another step's dependencies. A role the plan does not have is None (an inline payload is
/// not read, a Read is not acknowledged, a copy between GPUs has no NIC). A chunked plan's are
/// its first chunk's but for its own finish, and name a receive only where the message's one
/// chunk takes it from a queue that can run dry (see [`RecvQueue`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Handles {
    /// The thread's post of the work request (the writer's or sender's; a Read's requester's).
    pub post: Option<StepId>,
    /// The NIC's fetch of that work request.
    pub fetch: Option<StepId>,
    /// The NIC's DMA read of the payload (None when the payload rides inline in the WQE).
    pub read: Option<StepId>,
    /// The payload's crossing of the network.
    pub wire: Option<StepId>,
    /// The receiving NIC's DMA write of the payload.
    pub write: Option<StepId>,
    /// The receiving NIC's fetch of a Send's receive WQE.
    pub recv_fetch: Option<StepId>,
    /// The completion the receiving thread polls (none for a plain Write).
    pub cqe: Option<StepId>,
    /// The consumer's poll: of the receive CQE, or of the last byte for a plain Write.
    pub poll: Option<StepId>,
    /// The receiver's RC acknowledgement (a Read's response is its acknowledgement).
    pub ack: Option<StepId>,
    /// The sending thread's poll of its own completion.
    pub send_poll: Option<StepId>,
    /// The step that waits for all of the message's work.
    pub finish: Option<StepId>,
}

impl Handles {
    /// The same roles in a plan that holds these steps from `off` on.
    pub fn offset(self, off: StepId) -> Handles {
        let at = |s: Option<StepId>| s.map(|s| s.shifted(off));
        Handles {
            post: at(self.post),
            fetch: at(self.fetch),
            read: at(self.read),
            wire: at(self.wire),
            write: at(self.write),
            recv_fetch: at(self.recv_fetch),
            cqe: at(self.cqe),
            poll: at(self.poll),
            ack: at(self.ack),
            send_poll: at(self.send_poll),
            finish: at(self.finish),
        }
    }
}

/// The receive queue of a Send or a Write with Immediate (both consume a receive WQE), which
/// the receiving thread keeps `depth` WQEs deep: message
/// `m`'s receive WQE is posted when the poll of message `m - depth` reposts one (the first
/// `depth` are posted before the run). A Send whose first packet reaches the receiving NIC
/// before its receive WQE is posted is refused with an RNR NAK; the sender retries after the
/// QP's `min_rnr_timer` (`retry` adds the NAK's and the resend's trip), until one is posted. The
/// queue pair keeps its order, so the Sends behind a refused one wait with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecvQueue {
    /// Receive WQEs the receiving thread keeps posted.
    pub depth: u32,
    /// The RNR timer (the responder's `min_rnr_timer`) in picoseconds.
    pub timer: crate::units::Ps,
    /// The receive WQE fetch (a Send's; a Write with Immediate needs no scatter address), the
    /// poll that reposts, the payload write the data waits to enter, and the step whose route
    /// the NAK takes back (the RC ACK).
    pub fetch: Option<StepId>,
    /// The receiving thread's poll, which reposts a receive WQE.
    pub poll: StepId,
    /// The payload's DMA write, which the refused data waits to enter.
    pub write: StepId,
    /// The ACK packet step, whose route the RNR NAK takes back.
    pub nak: StepId,
}

impl RecvQueue {
    /// The queue of a plan whose builder named its one receive (its poll, payload write and
    /// ACK), or None.
    pub fn of(h: &Handles, depth: u32, timer: crate::units::Ps) -> Option<RecvQueue> {
        Some(RecvQueue {
            depth,
            timer,
            fetch: h.recv_fetch,
            poll: h.poll?,
            write: h.write?,
            nak: h.ack?,
        })
    }
}

impl Plan {
    /// An empty plan of a message of `size` bytes.
    pub fn new(size: u64) -> Plan {
        Plan {
            size,
            routes: Vec::new(),
            steps: Vec::new(),
            actors: Vec::new(),
            threads: Vec::new(),
            deliver: StepId(0),
            handles: Handles::default(),
            waiters: Vec::new(),
            outputs: Vec::new(),
            open_ends: Vec::new(),
            qp_routes: Vec::new(),
            recv_queue: None,
        }
    }

    /// Adds a route (a channel list) and returns its id.
    pub fn route(&mut self, channels: Vec<ChannelId>) -> PlanRoute {
        self.routes.push(channels);
        PlanRoute::from_index(self.routes.len() - 1)
    }

    /// The index of actor `a` in this plan, added when new.
    pub fn actor(&mut self, a: Actor) -> u32 {
        if let Some(i) = self.actors.iter().position(|&b| b == a) {
            return i as u32;
        }
        self.actors.push(a);
        (self.actors.len() - 1) as u32
    }

    /// Adds a CPU thread on `socket` of host `host` and returns its index.
    pub fn thread(&mut self, host: usize, socket: usize) -> u16 {
        self.threads.push(Thread { host, socket });
        (self.threads.len() - 1) as u16
    }

    /// Adds a step; `deps` must name earlier steps.
    pub fn step(&mut self, step: Step) -> StepId {
        debug_assert!(step.deps.iter().all(|d| d.step.index() < self.steps.len()));
        self.steps.push(step);
        StepId::from_index(self.steps.len() - 1)
    }

    /// Derives the waiter lists; call once after the last step is added.
    pub fn link(&mut self) {
        let mut waiters = vec![Vec::new(); self.steps.len()];
        for (i, s) in self.steps.iter().enumerate() {
            for d in &s.deps {
                waiters[d.step.index()].push((StepId::from_index(i), d.on));
            }
        }
        self.waiters = waiters;
        let mut outputs = vec![None; self.steps.len()];
        for (i, s) in self.steps.iter().enumerate().rev() {
            if let Some(from) = s.input {
                outputs[from.index()] = Some(StepId::from_index(i));
            }
        }
        self.outputs = outputs;
        self.open_ends = (0..self.steps.len())
            .map(|i| {
                let awaited = self.waiters[i].iter().any(|w| w.1 == Milestone::Done);
                !awaited && self.outputs[i].is_none()
            })
            .collect();
    }

    /// How many open ends the plan has (see [`Plan::open_ends`]).
    pub fn open_end_count(&self) -> u32 {
        self.open_ends.iter().filter(|&&e| e).count() as u32
    }

    /// The stage a step reports as, if any.
    pub fn stage(&self, step: StepId) -> Option<Stage> {
        self.steps[step.index()].stage
    }

    /// The step that feeds `step`'s data, if it streams from one.
    pub fn input(&self, step: StepId) -> Option<StepId> {
        self.steps[step.index()].input
    }

    /// The first step that streams its data out of `step`.
    pub fn output(&self, step: StepId) -> Option<StepId> {
        if self.outputs.len() == self.steps.len() {
            return self.outputs[step.index()];
        }
        self.steps
            .iter()
            .position(|s| s.input == Some(step))
            .map(StepId::from_index)
    }
}

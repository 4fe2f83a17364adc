//! The simulated hardware of one point as one event handler: channel states, trains in flight,
//! the read engines (outstanding-read windows) of NICs and copy engines, CPU threads, and the
//! flows whose messages move through them.
//!
//! What each step does lives in sibling files as `impl Fabric` blocks: [`super::steps`] (plans:
//! starting steps, milestones, where an arriving train goes next), [`super::nic`] (send and
//! receive engines), [`super::cpu`] (threads: posting, polling, cudaMemcpy), [`super::copy`]
//! (copy engines), [`super::units`] (units crossing the channels' servers), [`super::reads`]
//! (DMA reads under the NICs' and copy engines' windows), [`super::bulk`] (large messages as
//! fluid transfers), [`super::run`] (the application driving the messages and their records).

use std::collections::VecDeque;

use super::Event;
use super::bulk::Bulks;
use super::channel::{self, Servers};
use super::copy::CopyEngine;
use super::cpu::Cpu;
use super::nic::Nic;
use super::options::SimOptions;
pub(crate) use super::reads::{ReadReq, read_completions};
use super::steps::Instance;
use crate::engine::{Handler, Queue};
use crate::plan::{Plan, StepId, StepKind};
use crate::record::{Names, Recorder, Span};
use crate::topology::{ChannelId, ChannelSpec, Topology, Unit};
use crate::units::Ps;

pub use crate::ids::{RouteId, TrainId};

/// The flow number in the source id of a device's own queue (a copy engine's), shared by every
/// flow (no flow has this number: a point's flows are far fewer than 2^32 - 1).
pub(crate) const ENGINE_FLOW: u32 = u32::MAX;

/// The message of a gating flow that message `msg` of a gated flow waits for, under a gate of
/// `lag` on a flow of `total` messages: message msg - lag, or the last where the gating flow
/// has fewer; None where msg < lag (no wait). What a gate means, for the fabric that applies it
/// and for the analyses that trace it back.
pub fn gating_message(msg: u32, lag: u32, total: u32) -> Option<u32> {
    msg.checked_sub(lag).map(|j| j.min(total.saturating_sub(1)))
}

/// One unit in flight: a TLP or a packet (see [`super::channel`]).
#[derive(Clone, Copy, Debug)]
pub struct Train {
    pub route: RouteId,
    pub hop: u16,
    /// When the unit has fully arrived at its next channel (or its destination).
    pub head: Ps,
    pub unit: Unit,
    /// Data bytes it carries (0 for a read request).
    pub payload: u64,
    /// The outstanding read it belongs to (a request, or one of its completions).
    pub read: Option<u32>,
    /// The step instance it belongs to, and which of that step's movements it is.
    pub flow: u32,
    pub msg: u32,
    pub step: StepId,
    pub phase: u8,
    /// When it entered its current step (for the step's record).
    pub stage_in: Ps,
    /// Whether its payload counts as message data for host-memory accounting.
    pub counts_payload: bool,
    /// Its source (requester or completer, and flow): the round-robin and ordering domain.
    pub src: channel::Source,
    /// An access delay still to add at the next server (a memory's jitter for a read).
    pub extra: Ps,
    /// Serial number for records (flow arrows in traces).
    pub serial: u64,
}

/// First-byte and last-byte times of one step (see [`crate::record::Span`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StageTimes {
    pub start: Ps,
    pub first_out: Ps,
    pub last_in: Ps,
    pub end: Ps,
}

/// Progress of one step of one message.
#[derive(Clone, Copy, Debug, Default)]
pub struct StepState {
    /// Dependencies not yet met, and the latest time among those met.
    pub waiting: u32,
    pub ready_at: Ps,
    /// When its executor started it.
    pub started: Ps,
    /// Payload bytes in and out so far, and parts (bursts) still to land.
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub parts: u32,
    pub times: Option<StageTimes>,
    /// When it reached `Done`.
    pub done_at: Option<Ps>,
    pub last_in_at: Option<Ps>,
}

/// Per-message progress. Its step states go back to the flow's pool once it is delivered and
/// finished (see [`Fabric::retire`]), so a stream's memory does not grow with its messages;
/// what the run reports of it stays here.
#[derive(Clone, Debug, Default)]
pub struct Msg {
    /// Whether it has started (its step states exist or have been retired).
    pub started: bool,
    /// Open ends of its plan not yet ended ([`crate::plan::Plan::open_ends`]).
    pub open_ends: u32,
    /// Whether its receive poll is done, reposting a receive WQE ([`super::recv_queue`]).
    pub polled: bool,
    /// Payload bytes that reached the receiving NIC and were committed in the receiver's
    /// memory, summed over its payload steps when it retired.
    pub received: u64,
    pub written: u64,
    pub start: Ps,
    pub delivered: Option<Ps>,
    /// When its window slot was freed (its plan's `Finish`: the sender's completion).
    pub finished: Option<Ps>,
    pub cpu_busy: Ps,
    pub host_mem_bytes: u64,
    pub steps: Vec<StepState>,
    /// A Send: RNR NAKs it drew, its data held at the receiving NIC, and whether its receive
    /// WQE fetch waits for the WQE to be posted ([`super::recv_queue`]).
    pub rnr_naks: u32,
    pub hold: Option<super::recv_queue::Hold>,
    pub fetch_deferred: bool,
}

/// One flow of the point: its plan, where its routes start in the route table, its threads,
/// and its message stream.
pub struct FlowRun<'t> {
    pub plan: &'t Plan,
    pub route_base: RouteId,
    /// Recorder component id of each plan actor.
    pub actors: Vec<u32>,
    /// Fabric CPU index of each plan thread.
    pub threads: Vec<usize>,
    pub msgs: Vec<Msg>,
    /// A recording run's spans of each message, taken when it retired (its step states went
    /// back to the pool), so that a recording run's step states too are bounded by its
    /// messages in flight (empty when not recording: a message's state does not grow).
    pub spans: Vec<Box<[Span]>>,
    /// Step-state vectors of retired messages, for the next ones to start with.
    pub pool: Vec<Vec<StepState>>,
    /// The step states a message starts with (each step waiting for all its dependencies),
    /// the steps that start with it (no dependency, no input), ascending, and its open ends:
    /// the same for every message of the flow, so worked out once.
    pub fresh: Vec<StepState>,
    pub roots: Vec<StepId>,
    pub open_ends: u32,
    /// Messages in flight at most, messages in all, and the next to start.
    pub window: u32,
    pub total: u32,
    pub next: u32,
    /// A Send's RNR retry period (timer plus the NAK's and the resend's trip), and the
    /// refused messages in queue-pair order.
    pub rnr_retry: Ps,
    pub held: VecDeque<u32>,
    /// Messages whose window slot has been freed.
    pub finished: u32,
    /// A workload's gates: message k starts only once message k - lag of each (flow, lag) has
    /// been delivered (see [`Fabric::gate`]).
    pub gates: Vec<(u32, u32)>,
    /// The flows gated by this one, woken when one of its messages is delivered.
    pub dependents: Vec<u32>,
    /// Time between a gating delivery and the start it allows (a reduction on the GPU), by
    /// message.
    pub reduce: super::ReduceRule,
    /// Messages it carries whatever [`Fabric::run`] is asked (a workload flow's `messages`).
    pub fixed_total: Option<u32>,
    /// Its poster asks for a completion on every `signal_every`-th work request and on the last
    /// (perftest's CQ moderation, see [`Fabric::set_signal_every`]); 1: on every one.
    pub signal_every: u32,
    /// The time each limit bound its bulk transfers, summed over them (its own share of the
    /// fabric's limits).
    pub limits: Vec<(super::bulk::Limit, u128)>,
}

/// The simulated hardware of one point (every host and the network) running one flow per
/// plan: the [`crate::engine::Handler`] of [`Event`]s that [`Fabric::run`] drives.
pub struct Fabric<'t> {
    pub(crate) topo: &'t Topology,
    pub(crate) opts: SimOptions,
    pub(crate) channels: &'t [ChannelSpec],
    pub(crate) servers: Servers<'t>,
    pub(crate) routes: Vec<Vec<ChannelId>>,
    pub(crate) trains: Vec<Train>,
    pub(crate) free_trains: Vec<TrainId>,
    pub(crate) reads: Vec<ReadReq>,
    pub(crate) free_reads: Vec<u32>,
    /// Each NIC's own state (its read windows), NICs over every host in topology order.
    pub(crate) nics: Vec<Nic>,
    /// Each GPU's copy engine's own state, GPUs over every host in topology order.
    pub(crate) copy_engines: Vec<CopyEngine>,
    pub(crate) cpus: Vec<Cpu>,
    /// Each CPU thread's name: its host and socket, and the flow it runs.
    pub(crate) cpu_names: Vec<String>,
    pub(crate) flows: Vec<FlowRun<'t>>,
    pub(crate) bulk: Bulks,
    /// What the run recorded (spans, descriptors, hops) when [`SimOptions::record`] was set; take
    /// it after [`Fabric::run`].
    pub recorder: Recorder,
    pub(crate) serial: u64,
    /// Messages whose open ends have all ended, retired before the next event.
    pub(crate) retiring: Vec<(u32, u32)>,
}

impl<'t> Fabric<'t> {
    /// Prepares the hardware of `topo` to run one flow per plan.
    pub fn new(topo: &'t Topology, plans: &[&'t Plan], opts: SimOptions) -> Self {
        Self::with_processes(topo, plans, opts, &[])
    }

    /// As [`Fabric::new`], with the plans' threads run by shared processes: thread `i` of plan
    /// `f` is process `processes[f][i]`'s one CPU thread, so the flows' CPU work (posts,
    /// polls) queues on it as it does in a single-threaded benchmark driving several QPs
    /// (perftest `-q`). Empty: every plan thread is its own.
    pub fn with_processes(
        topo: &'t Topology,
        plans: &[&'t Plan],
        opts: SimOptions,
        processes: &[Vec<usize>],
    ) -> Self {
        // Each flow is one queue pair, numbered in flow order: its WQEs cross the send-engine
        // unit of its number modulo the NIC's units.
        let flow_routes: Vec<Vec<Vec<ChannelId>>> = plans
            .iter()
            .enumerate()
            .map(|(qp, plan)| {
                // The first QP's routes, then each other QP's set (the same length, in order).
                std::iter::once(&plan.routes)
                    .chain(&plan.qp_routes)
                    .flatten()
                    .map(|r| r.iter().map(|&c| topo.engine_unit(c, qp)).collect())
                    .collect()
            })
            .collect();
        let mut servers = Servers::new(&topo.channels, opts.jitter, opts.seed);
        for &c in flow_routes.iter().flatten().flatten() {
            servers.make(c.index());
        }
        let mut names = Names::new(topo.channel_names.clone());
        let mut routes = Vec::new();
        let mut cpus = Vec::new();
        let mut cpu_names = Vec::new();
        let mut flows = Vec::new();
        // Fabric CPU index of each shared process, once it has one.
        let mut process_cpu: Vec<Option<usize>> = Vec::new();
        for (plan, plan_routes) in plans.iter().zip(flow_routes) {
            let route_base = RouteId::from_index(routes.len());
            routes.extend(plan_routes);
            let actors = (plan.actors.iter())
                .map(|a| names.push(a.name(topo)))
                .collect();
            let flow = flows.len() as u64;
            let threads = plan
                .threads
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let host = &topo.hosts[t.host];
                    let name = format!("{}/{}.cpu", host.name, host.spec.sockets[t.socket].name);
                    if let Some(&p) = processes.get(flow as usize).and_then(|ts| ts.get(i)) {
                        if process_cpu.len() <= p {
                            process_cpu.resize(p + 1, None);
                        }
                        if let Some(c) = process_cpu[p] {
                            return c;
                        }
                        // The identity of the thread that starts the process: one flow with
                        // its own processes draws what it draws without them.
                        let identity =
                            crate::seed::mix(crate::seed::stable_hash(&name), &[flow, i as u64]);
                        cpus.push(Cpu::new(opts.seed, identity));
                        cpu_names.push(format!("{name} thread of process {p}"));
                        process_cpu[p] = Some(cpus.len() - 1);
                        return cpus.len() - 1;
                    }
                    let identity =
                        crate::seed::mix(crate::seed::stable_hash(&name), &[flow, i as u64]);
                    cpus.push(Cpu::new(opts.seed, identity));
                    cpu_names.push(format!("{name} thread of flow {flow}"));
                    cpus.len() - 1
                })
                .collect();
            flows.push(FlowRun {
                plan,
                route_base,
                actors,
                threads,
                msgs: Vec::new(),
                spans: Vec::new(),
                pool: Vec::new(),
                fresh: plan
                    .steps
                    .iter()
                    .map(|s| StepState {
                        waiting: s.deps.len() as u32,
                        ..StepState::default()
                    })
                    .collect(),
                roots: (plan.steps.iter().enumerate())
                    .filter(|(_, s)| s.deps.is_empty() && s.input.is_none())
                    .map(|(i, _)| StepId::from_index(i))
                    .collect(),
                open_ends: plan.open_end_count(),
                window: 1,
                total: 1,
                next: 0,
                rnr_retry: rnr_retry_period(topo, plan),
                held: VecDeque::new(),
                finished: 0,
                gates: Vec::new(),
                dependents: Vec::new(),
                reduce: super::ReduceRule::NONE,
                fixed_total: None,
                signal_every: 1,
                limits: Vec::new(),
            });
        }
        let windows = topo.read_windows();
        let nics = (0..topo.nic_count())
            .map(|n| Nic::new(windows, topo, n))
            .collect();
        let copy_engines = (0..topo.gpu_count())
            .map(|g| CopyEngine::new(windows, topo, g))
            .collect();
        let bulk = Bulks::new(topo, windows);
        Fabric {
            topo,
            opts,
            channels: &topo.channels,
            servers,
            routes,
            trains: Vec::with_capacity(256),
            free_trains: Vec::new(),
            reads: Vec::new(),
            free_reads: Vec::new(),
            nics,
            copy_engines,
            cpus,
            cpu_names,
            flows,
            bulk,
            recorder: Recorder::new(opts.record, opts.traffic, names),
            serial: 0,
            retiring: Vec::new(),
        }
    }

    /// Makes message k of `flow` wait for the delivery of message k - `lag` of flow `on` (no
    /// wait where k < lag; where `on` carries fewer messages, for its last). Call before
    /// [`Fabric::run`]; several gates mean all of them.
    pub fn gate(&mut self, flow: usize, on: usize, lag: u32) {
        self.flows[flow].gates.push((on as u32, lag));
        if !self.flows[on].dependents.contains(&(flow as u32)) {
            self.flows[on].dependents.push(flow as u32);
        }
    }

    /// Each start of `flow` allowed by a gate comes the rule's delay for that message after
    /// the gating delivery (the GPU's reduction of the received data into its own).
    pub fn set_reduce(&mut self, flow: usize, rule: super::ReduceRule) {
        self.flows[flow].reduce = rule;
    }

    /// `flow` carries `messages` messages, whatever [`Fabric::run`] is asked.
    pub fn set_messages(&mut self, flow: usize, messages: u32) {
        self.flows[flow].fixed_total = Some(messages.max(1));
    }

    /// The plan of `flow`.
    pub fn plan_of(&self, flow: u32) -> &'t Plan {
        self.flows[flow as usize].plan
    }

    /// The fabric route of plan route `r` of message `msg` of `flow`: with Q queue pairs
    /// (`Plan::qp_routes`), message `m` rides QP `m mod Q` and takes that QP's route set,
    /// laid out after the first one's (`route_base + (m mod Q) x routes + r`).
    pub fn route_of(&self, flow: u32, msg: u32, r: crate::plan::PlanRoute) -> RouteId {
        let f = &self.flows[flow as usize];
        let set = self.qp_set(flow, msg) as usize;
        RouteId(f.route_base.0 + (set * f.plan.routes.len()) as u32 + u32::from(r.0))
    }

    /// The route set message `msg` of `flow` takes: its QP's index among the flow's QPs (0,
    /// without a division, where it has one QP).
    pub fn qp_set(&self, flow: u32, msg: u32) -> u32 {
        match self.flows[flow as usize].plan.qp_routes.len() {
            0 => 0,
            others => msg % (others as u32 + 1),
        }
    }

    /// The source id of units entering `route` for `flow`: the route's first channel (the
    /// requester's or completer's own link or memory) and the flow.
    pub(super) fn source(&self, route: RouteId, flow: u32) -> channel::Source {
        let first = self.routes[route.index()]
            .first()
            .copied()
            .unwrap_or(ChannelId(u32::MAX));
        channel::Source {
            flow,
            channel: first,
        }
    }

    /// The source id of a copy engine's writes entering `route`: the engine's, whatever flow
    /// asked for the copy, because an engine moves its queue of copies one after the other
    /// (copies of two flows do not interleave on its link, as in the bulk transfers' queue).
    pub fn engine_source(&self, route: RouteId) -> channel::Source {
        self.source(route, ENGINE_FLOW)
    }

    /// Host DRAM payload bytes over all channels (every host), units and bulk transfers.
    pub fn host_mem_payload_bytes(&self) -> u64 {
        self.servers.iter().map(|s| s.payload_bytes).sum::<u64>() + self.bulk.host_mem_bytes
    }
}

impl Handler for Fabric<'_> {
    type Event = Event;
    fn handle(&mut self, now: Ps, event: Event, q: &mut Queue<Event>) {
        // Retired between events: the one that ended them may still have touched their steps.
        while let Some((flow, msg)) = self.retiring.pop() {
            self.retire(flow, msg);
        }
        match event {
            Event::Hop(id) => self.advance(id, now, q),
            Event::ServerFree(c) => self.server_free(c, now, q),
            Event::CpuDone { cpu } => self.cpu_done(cpu as usize, now, q),
            Event::Start { flow, msg } => self.start_message(flow, msg, now, q),
            Event::Ready { flow, msg, step } => {
                self.step_ready(Instance::new(flow, msg, step), now, q)
            }
            Event::BulkReady(job) => self.bulk_ready(job as usize, now, q),
            Event::Fluid(version) => self.fluid_event(version, now, q),
            Event::Share => self.bulk_share(now, q),
            Event::UnitGone(c) => self.unit_gone(c, now, q),
            Event::RnrRetry { flow, msg } => self.rnr_retry(flow, msg, now, q),
        }
    }
}

/// A Send plan's RNR retry period: the timer, plus the NAK's trip back and the resend's first
/// packet's trip forth (each as an idle RC ACK's); 0 without a receive queue.
fn rnr_retry_period(topo: &Topology, plan: &Plan) -> Ps {
    let Some(rq) = plan.recv_queue else {
        return 0;
    };
    let StepKind::Packet { route, bytes, .. } = plan.steps[rq.nak.index()].kind else {
        return rq.timer;
    };
    let specs: Vec<&ChannelSpec> = plan.routes[route.index()]
        .iter()
        .map(|&c| &topo.channels[c.index()])
        .collect();
    let (trip, _) = channel::idle_transit(&specs, Unit::Control, bytes, 1);
    (rq.timer + 2 * trip).max(1)
}

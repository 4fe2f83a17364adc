//! The simulated hardware of one point as one event handler: channel states, trains in flight,
//! the read engines (outstanding-read windows) of NICs and copy engines, CPU threads, and the
//! flows whose messages move through them.
//!
//! What each step does lives in sibling files as `impl Fabric` blocks: [`super::steps`] (plans:
//! starting steps, milestones, where an arriving train goes next), [`super::nic`] (send and
//! receive engines), [`super::cpu`] (threads: posting, polling, cudaMemcpy), [`super::copy`]
//! (copy engines), [`super::run`] (the application driving the messages and their records).

use std::collections::VecDeque;

use super::Event;
use super::channel::{self, ChannelState};
use super::cpu::Cpu;
use super::options::SimOptions;
use crate::engine::{Handler, Queue};
use crate::plan::{Plan, StepId};
use crate::record::Recorder;
use crate::topology::{ChannelId, ChannelKind, ChannelSpec, Topology, Unit};
use crate::units::Ps;

pub type TrainId = u32;
/// Index into the fabric's route table (all flows' routes).
pub type RouteId = u32;

/// A burst of identical units in flight (see [`super::channel`]).
#[derive(Clone, Copy, Debug)]
pub struct Train {
    pub route: RouteId,
    pub hop: u16,
    pub head: Ps,
    pub tail: Ps,
    pub unit: Unit,
    pub units: u64,
    /// Data bytes on the links (0 for read requests).
    pub payload: u64,
    /// For a read request: bytes requested, the completion route, completion units.
    pub requested: u64,
    pub cpl_route: RouteId,
    pub cpl_units: u64,
    /// Read engine that issued it and the tags (requests) it holds.
    pub engine: u32,
    pub tags: u32,
    /// The step instance it belongs to, and which of that step's movements it is.
    pub flow: u16,
    pub msg: u32,
    pub step: StepId,
    pub phase: u8,
    /// (head, tail) when the train entered its current stage.
    pub stage_in: (Ps, Ps),
    /// Whether its payload counts as message data for host-memory accounting.
    pub counts_payload: bool,
    /// Where it entered the current route (the route's first channel): trains of one source
    /// keep their order on shared channels.
    pub src: u32,
    /// Serial number for records (flow arrows in traces).
    pub serial: u64,
}

/// A DMA requester's outstanding-read window, in read requests (tags).
#[derive(Debug)]
pub struct ReadEngine {
    pub tags_free: u32,
    pub waiting: VecDeque<TrainId>,
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
    pub waiting: u8,
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

/// Per-message progress.
#[derive(Clone, Debug, Default)]
pub struct Msg {
    pub start: Ps,
    pub delivered: Option<Ps>,
    pub cpu_busy: Ps,
    pub host_mem_bytes: u64,
    pub steps: Vec<StepState>,
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
    /// Messages in flight at most, messages in all, and the next to start.
    pub window: u32,
    pub total: u32,
    pub next: u32,
}

pub struct Fabric<'t> {
    pub topo: &'t Topology,
    pub opts: SimOptions,
    pub channels: &'t [ChannelSpec],
    pub state: Vec<ChannelState>,
    pub routes: Vec<Vec<ChannelId>>,
    pub trains: Vec<Train>,
    free_trains: Vec<TrainId>,
    pub engines: Vec<ReadEngine>,
    pub cpus: Vec<Cpu>,
    pub flows: Vec<FlowRun<'t>>,
    pub recorder: Recorder,
    serial: u64,
}

impl<'t> Fabric<'t> {
    /// Prepares the hardware of `topo` to run one flow per plan.
    pub fn new(topo: &'t Topology, plans: &[&'t Plan], opts: SimOptions) -> Self {
        let state = topo
            .channels
            .iter()
            .map(|c| {
                let median = if opts.jitter { c.jitter_median } else { 0 };
                ChannelState::new(median, opts.seed, crate::seed::stable_hash(&c.name))
            })
            .collect();
        let mut names: Vec<String> = topo.channels.iter().map(|c| c.name.clone()).collect();
        let mut routes = Vec::new();
        let mut cpus = Vec::new();
        let mut flows = Vec::new();
        for plan in plans {
            let route_base = routes.len() as RouteId;
            routes.extend(plan.routes.iter().cloned());
            let actors = plan
                .actors
                .iter()
                .map(|a| {
                    names.push(a.clone());
                    (names.len() - 1) as u32
                })
                .collect();
            let flow = flows.len() as u64;
            let threads = plan
                .threads
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let host = &topo.hosts[t.host];
                    let name = format!("{}/{}.cpu", host.name, host.spec.sockets[t.socket].name);
                    let identity =
                        crate::seed::mix(crate::seed::stable_hash(&name), &[flow, i as u64]);
                    cpus.push(Cpu::new(opts.seed, identity));
                    cpus.len() - 1
                })
                .collect();
            flows.push(FlowRun {
                plan,
                route_base,
                actors,
                threads,
                msgs: Vec::new(),
                window: 1,
                total: 1,
                next: 0,
            });
        }
        let engines = topo
            .read_windows()
            .into_iter()
            .map(|tags| ReadEngine {
                tags_free: tags,
                waiting: VecDeque::new(),
            })
            .collect();
        Fabric {
            topo,
            opts,
            channels: &topo.channels,
            state,
            routes,
            trains: Vec::with_capacity(256),
            free_trains: Vec::new(),
            engines,
            cpus,
            flows,
            recorder: Recorder::new(opts.record, names),
            serial: 0,
        }
    }

    /// The plan of `flow`.
    pub fn plan_of(&self, flow: u16) -> &'t Plan {
        self.flows[flow as usize].plan
    }

    /// The fabric route of plan route `r` of `flow`.
    pub fn route_of(&self, flow: u16, r: crate::plan::RouteId) -> RouteId {
        self.flows[flow as usize].route_base + r as RouteId
    }

    // ---- trains ------------------------------------------------------------------------------

    /// Allocates a train (reusing finished slots).
    pub fn new_train(&mut self, mut t: Train) -> TrainId {
        self.serial += 1;
        t.serial = self.serial;
        if let Some(id) = self.free_trains.pop() {
            self.trains[id as usize] = t;
            id
        } else {
            self.trains.push(t);
            (self.trains.len() - 1) as TrainId
        }
    }

    /// A fresh train description (no read request) of step instance (flow, msg, step, phase),
    /// entering fabric route `route` at (head, tail).
    #[allow(clippy::too_many_arguments)]
    pub fn train(
        &self,
        route: RouteId,
        (flow, msg, step, phase): (u16, u32, StepId, u8),
        unit: Unit,
        units: u64,
        payload: u64,
        head: Ps,
        tail: Ps,
    ) -> Train {
        Train {
            route,
            hop: 0,
            head,
            tail,
            unit,
            units: units.max(1),
            payload,
            requested: 0,
            cpl_route: 0,
            cpl_units: 0,
            engine: 0,
            tags: 0,
            flow,
            msg,
            step,
            phase,
            stage_in: (head, tail),
            counts_payload: false,
            serial: 0,
            src: self.routes[route as usize]
                .first()
                .copied()
                .unwrap_or(u32::MAX),
        }
    }

    /// Injects a train and moves it as far as it can go now.
    pub fn launch(&mut self, t: Train, now: Ps, q: &mut Queue<Event>) {
        let id = self.new_train(t);
        self.advance(id, now, q);
    }

    /// Re-injects a train on the next segment of its journey (the next step's route), keeping
    /// its times.
    pub fn relaunch(
        &mut self,
        mut t: Train,
        route: RouteId,
        (step, phase): (StepId, u8),
        now: Ps,
        q: &mut Queue<Event>,
    ) {
        t.route = route;
        t.hop = 0;
        t.step = step;
        t.phase = phase;
        t.src = self.routes[route as usize]
            .first()
            .copied()
            .unwrap_or(u32::MAX);
        t.stage_in = (t.head, t.tail);
        self.launch(t, now, q);
    }

    /// Moves train `id` through its route until it must wait for a future time or arrives.
    pub fn advance(&mut self, id: TrainId, now: Ps, q: &mut Queue<Event>) {
        loop {
            let t = &mut self.trains[id as usize];
            let route = &self.routes[t.route as usize];
            if t.hop as usize == route.len() {
                // Arrivals are handled when the first unit is in, except a single read
                // request's completions: the request (and its tag) completes with its last one.
                let due = if t.tags == 1 && t.requested == 0 {
                    t.tail
                } else {
                    t.head
                };
                if due > now {
                    q.schedule(due, Event::Hop(id));
                    return;
                }
                if t.requested > 0 {
                    // A read request reached the completer: the data comes back as completions.
                    t.unit = Unit::Completion;
                    t.payload = t.requested;
                    t.units = t.cpl_units;
                    t.requested = 0;
                    t.route = t.cpl_route;
                    t.hop = 0;
                    t.src = self.routes[t.route as usize]
                        .first()
                        .copied()
                        .unwrap_or(u32::MAX);
                    continue;
                }
                let train = *t;
                self.free_trains.push(id);
                self.arrive(train, now, q);
                return;
            }
            let c = route[t.hop as usize];
            let spec = &self.channels[c as usize];
            // A cut-through switch forwards a packet once its header is in: each unit is ready
            // for the output port its serialisation on the previous link (less the header)
            // before it has fully arrived.
            let early = match (spec.kind == ChannelKind::NetworkSwitch, t.hop) {
                (true, hop) if hop > 0 => {
                    let prev = &self.channels[route[hop as usize - 1] as usize];
                    let unit = t.payload.div_ceil(t.units.max(1));
                    let u = prev.rate.tx_time(prev.wire_bytes(t.unit, unit, 1));
                    u.saturating_sub(prev.rate.tx_time(channel::CUT_THROUGH_BYTES))
                }
                _ => 0,
            };
            let (head, tail) = (t.head.saturating_sub(early), t.tail.saturating_sub(early));
            if spec.is_server() && head > now {
                q.schedule(head, Event::Hop(id));
                return;
            }
            let st = &mut self.state[c as usize];
            let (start, mut h, mut tl) =
                channel::pass(spec, st, t.unit, t.units, t.payload, head, tail, t.src);
            if early > 0 {
                // ... but never leaves before it has arrived and its header has gone out.
                let hdr = spec.rate.tx_time(channel::CUT_THROUGH_BYTES) + spec.latency;
                h = h.max(t.head + hdr);
                tl = tl.max(t.tail + hdr);
            }
            if self.recorder.enabled {
                let what = self.flows[t.flow as usize].plan.movement(t.step, t.phase);
                self.recorder.hops.push(crate::record::Hop {
                    flow: t.flow,
                    msg: t.msg,
                    step: t.step,
                    train: t.serial,
                    channel: c,
                    start,
                    end: tl,
                    payload: t.payload,
                    units: t.units,
                    unit: t.unit,
                    what,
                });
            }
            if t.counts_payload && channel::is_host_memory(spec) {
                st.payload_bytes += t.payload;
                self.flows[t.flow as usize].msgs[t.msg as usize].host_mem_bytes += t.payload;
            }
            t.head = h;
            t.tail = tl;
            t.hop += 1;
        }
    }

    // ---- DMA reads under a window ------------------------------------------------------------

    /// Queues a read of `bytes` (split into requests of at most `mrrs`, completions of at most
    /// `mps`) on a read engine for step instance `who`; it issues when the engine has the
    /// requests' tags free.
    #[allow(clippy::too_many_arguments)]
    pub fn read(
        &mut self,
        engine: usize,
        (req, cpl): (RouteId, RouteId),
        (mrrs, mps): (u64, u64),
        bytes: u64,
        who: (u16, u32, StepId, u8),
        counts_payload: bool,
        now: Ps,
        q: &mut Queue<Event>,
    ) {
        let requests = bytes.div_ceil(mrrs).max(1);
        let full = bytes / mrrs;
        let rem = bytes % mrrs;
        let cpl_units = full * mrrs.div_ceil(mps) + if rem > 0 { rem.div_ceil(mps) } else { 0 };
        let mut t = self.train(req, who, Unit::ReadRequest, requests, 0, now, now);
        t.requested = bytes.max(1);
        t.cpl_route = cpl;
        t.cpl_units = cpl_units.max(1);
        t.engine = engine as u32;
        t.tags = requests as u32;
        t.counts_payload = counts_payload;
        let id = self.new_train(t);
        self.engines[engine].waiting.push_back(id);
        self.issue_reads(engine, now, now, q);
    }

    /// Issues waiting reads while tags are free. `tail_floor`: the last request of a newly
    /// issued burst cannot leave before the last completion that freed its tags arrived.
    fn issue_reads(&mut self, engine: usize, now: Ps, tail_floor: Ps, q: &mut Queue<Event>) {
        loop {
            let e = &mut self.engines[engine];
            let Some(&id) = e.waiting.front() else { return };
            let need = self.trains[id as usize].tags;
            if need > e.tags_free {
                return;
            }
            e.tags_free -= need;
            e.waiting.pop_front();
            let t = &mut self.trains[id as usize];
            t.head = now;
            t.tail = now.max(tail_floor);
            self.advance(id, now, q);
        }
    }

    /// A read's completions arrived at its requester: free its tags, issue what waits.
    pub fn read_done(&mut self, t: &Train, now: Ps, q: &mut Queue<Event>) {
        self.engines[t.engine as usize].tags_free += t.tags;
        self.issue_reads(t.engine as usize, now, t.tail, q);
    }

    /// Bytes per train for a message of `size` moving in units of `unit_bytes`: one unit at a
    /// time (TLP by TLP, packet by packet) for small messages or when forced, else bursts.
    pub fn chunk(&self, size: u64, unit_bytes: u64) -> u64 {
        if self.opts.tlp_granularity || size <= self.opts.coalesce_above {
            unit_bytes
        } else {
            (self.opts.burst_bytes / unit_bytes).max(1) * unit_bytes
        }
    }

    /// Burst size for reads: a whole number of requests that divides the engine's window, so
    /// that coalesced bursts keep the window's throughput (N x MRRS per round trip).
    pub fn read_chunk(&self, size: u64, mrrs: u64, window: u32) -> u64 {
        let mut g = (self.chunk(size, mrrs) / mrrs).clamp(1, window.max(1) as u64);
        while !(window as u64).is_multiple_of(g) {
            g -= 1;
        }
        g * mrrs
    }

    /// Host DRAM payload bytes over all channels (every host).
    pub fn host_mem_payload_bytes(&self) -> u64 {
        self.state.iter().map(|s| s.payload_bytes).sum()
    }
}

impl Handler for Fabric<'_> {
    type Event = Event;
    fn handle(&mut self, now: Ps, event: Event, q: &mut Queue<Event>) {
        match event {
            Event::Hop(id) => self.advance(id, now, q),
            Event::CpuDone { cpu } => self.cpu_done(cpu as usize, now, q),
            Event::Start { flow, msg } => self.start_message(flow, msg, now, q),
        }
    }
}

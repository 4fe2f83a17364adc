//! The simulated hardware of one scenario as one event handler: channel states, in-flight
//! trains, DMA read engines, CPUs, and the messages moving through them.
//!
//! The protocol steps live in sibling files as `impl Fabric` blocks: [`super::nic`] (send and
//! receive engines), [`super::cpu`] (host threads: posting, polling, cudaMemcpy),
//! [`super::app`] (the application driving messages and recording their stages).

use std::collections::VecDeque;

use super::Event;
use super::channel::{self, ChannelState};
use super::cpu::Cpu;
use super::plan::{Buffer, Plan, SimOptions};
use crate::engine::{Handler, Queue};
use crate::record::{Recorder, Stage};
use crate::topology::{ChannelId, ChannelSpec, Flow, Place, RouteError, Topology, Unit};
use crate::units::Ps;

pub type TrainId = u32;
pub type RouteId = u16;

/// What a train is for; decides what happens when it reaches the end of its route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    /// MMIO write (BlueFlame WQE or doorbell) reaching the NIC of `side`; `flush` for the
    /// receiver's loopback read.
    Mmio {
        side: u8,
        flush: bool,
    },
    /// The doorbell-fetched WQE arriving at the sender NIC.
    WqeFetched,
    /// A WQE leaving the NIC's send engine.
    SqEngine {
        side: u8,
        flush: bool,
    },
    /// Payload read completions arriving at the sender NIC.
    PayloadRead,
    TxDone,
    WireDone,
    RxDone,
    /// Payload committed in the receiver's memory.
    PayloadWritten,
    /// An ACK reaching the sender NIC.
    Ack,
    /// A completion entry committed in host memory.
    Cqe(CqeKind),
    /// cudaMemcpy data committed (D2H in host memory, H2D in GPU memory).
    D2h,
    /// H2D completions reaching the GPU (frees read tags), then committed in GPU memory.
    H2d,
    H2dCommitted,
    /// The flush read's completion reaching the receiver NIC.
    FlushRead,
}

impl Tag {
    /// A short name for records and traces.
    pub fn name(self) -> &'static str {
        match self {
            Tag::Mmio { flush: false, .. } => "MMIO post",
            Tag::Mmio { flush: true, .. } => "MMIO flush post",
            Tag::WqeFetched => "WQE fetch",
            Tag::SqEngine { .. } => "send engine",
            Tag::PayloadRead => "payload read",
            Tag::TxDone => "tx pipeline",
            Tag::WireDone => "wire",
            Tag::RxDone => "rx pipeline",
            Tag::PayloadWritten => "payload write",
            Tag::Ack => "ACK",
            Tag::Cqe(CqeKind::Recv) => "receive CQE",
            Tag::Cqe(CqeKind::Send) => "send CQE",
            Tag::Cqe(CqeKind::Flush) => "flush CQE",
            Tag::D2h => "memcpy D2H",
            Tag::H2d => "memcpy H2D read",
            Tag::H2dCommitted => "memcpy H2D write",
            Tag::FlushRead => "flush read",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CqeKind {
    Recv,
    Send,
    Flush,
}

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
    pub engine: u8,
    pub tags: u32,
    pub msg: u32,
    pub tag: Tag,
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

/// The routes one scenario uses, by role. Index 0 is the sender host, 1 the receiver.
#[derive(Clone, Debug, Default)]
pub struct Routes {
    pub mmio: [RouteId; 2],
    pub wqe_req: RouteId,
    pub wqe_cpl: RouteId,
    pub payload_req: RouteId,
    pub payload_cpl: RouteId,
    pub payload_write: RouteId,
    pub cqe: [RouteId; 2],
    pub engine: [RouteId; 2],
    pub tx: RouteId,
    pub wire: RouteId,
    pub rx: RouteId,
    pub ack: RouteId,
    pub d2h: Option<RouteId>,
    pub h2d_req: Option<RouteId>,
    pub h2d_cpl: Option<RouteId>,
    pub h2d_commit: Option<RouteId>,
    pub flush_req: Option<RouteId>,
    pub flush_cpl: Option<RouteId>,
    /// Effective MPS of the payload read, payload write, D2H and H2D routes.
    pub mps_read: u64,
    pub mps_write: u64,
    pub mps_d2h: u64,
    pub mps_h2d: u64,
}

/// Read engine indices.
pub const ENGINE_SEND_NIC: u8 = 0;
pub const ENGINE_RECV_NIC: u8 = 1;
pub const ENGINE_RECV_GPU: u8 = 2;

/// Per-message progress and the record of its stages.
#[derive(Clone, Debug, Default)]
pub struct Msg {
    pub start: Ps,
    pub post_start: Ps,
    pub wqe_start: Ps,
    pub cqe_commit: Ps,
    pub flush_start: Ps,
    pub delivered: Option<Ps>,
    pub send_reaped: bool,
    pub read_start: Ps,
    pub tx_ready: u64,
    pub tx_sent: u64,
    pub rx_bytes: u64,
    /// Payload bytes committed in the receiver's memory.
    pub written_bytes: u64,
    pub writes_left: u32,
    pub memcpy_left: u32,
    pub cpu_busy: Ps,
    pub host_mem_bytes: u64,
    pub stages: [Option<StageTimes>; Stage::ALL.len()],
    pub stage_component: [u32; Stage::ALL.len()],
}

/// First-byte and last-byte times of one stage (see [`crate::record::Span`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StageTimes {
    pub start: Ps,
    pub first_out: Ps,
    pub last_in: Ps,
    pub end: Ps,
}

pub struct Fabric<'t> {
    pub topo: &'t Topology,
    pub plan: Plan,
    pub opts: SimOptions,
    pub channels: &'t [ChannelSpec],
    pub state: Vec<ChannelState>,
    pub routes: Vec<Vec<ChannelId>>,
    pub r: Routes,
    pub trains: Vec<Train>,
    free_trains: Vec<TrainId>,
    pub engines: Vec<ReadEngine>,
    pub cpus: [Cpu; 2],
    pub msgs: Vec<Msg>,
    /// Streaming: messages in flight at most, and messages in all.
    pub window: u32,
    pub total: u32,
    pub next_msg: u32,
    pub recorder: Recorder,
    serial: u64,
    /// Component ids for spans (indices into recorder.component_names).
    pub comp: Components,
}

/// Recorder component ids of the named actors.
#[derive(Clone, Copy, Debug, Default)]
pub struct Components {
    pub cpu: [u32; 2],
    pub nic: [u32; 2],
    pub gpu: [u32; 2],
    pub wire: u32,
}

impl<'t> Fabric<'t> {
    /// Prepares the hardware of `topo` to run `plan`. Fails if a route the plan needs is refused
    /// (peer-to-peer not allowed); the scenario layer checks this first and falls back.
    pub fn new(topo: &'t Topology, plan: Plan, opts: SimOptions) -> Result<Self, RouteError> {
        let state = topo
            .channels
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let median = if opts.jitter { c.jitter_median } else { 0 };
                ChannelState::new(median, opts.seed, i as u32)
            })
            .collect();
        let mut names: Vec<String> = topo.channels.iter().map(|c| c.name.clone()).collect();
        let mut comp = Components::default();
        for (h, side) in [plan.sender, plan.receiver].iter().enumerate() {
            let host = &topo.hosts[side.host];
            comp.cpu[h] = push_name(
                &mut names,
                format!(
                    "{}/{}.cpu",
                    host.name, host.spec.sockets[side.cpu_socket].name
                ),
            );
            comp.nic[h] = push_name(
                &mut names,
                format!("{}/{}", host.name, host.spec.nics[side.nic].name),
            );
            let gpu = side.staging.map(|s| s.gpu).or(match side.nic_buffer {
                Buffer::Gpu { gpu, .. } => Some(gpu),
                Buffer::Host { .. } => None,
            });
            comp.gpu[h] = match gpu {
                Some(g) => push_name(
                    &mut names,
                    format!("{}/{}.ce", host.name, host.spec.gpus[g].name),
                ),
                None => comp.cpu[h],
            };
        }
        comp.wire = push_name(&mut names, "network".into());
        let mut f = Fabric {
            topo,
            plan,
            opts,
            channels: &topo.channels,
            state,
            routes: Vec::new(),
            r: Routes::default(),
            trains: Vec::with_capacity(256),
            free_trains: Vec::new(),
            engines: Vec::new(),
            cpus: [Cpu::new(opts.seed, 0), Cpu::new(opts.seed, 1)],
            msgs: Vec::new(),
            window: 1,
            total: 1,
            next_msg: 0,
            recorder: Recorder::new(opts.record, names),
            serial: 0,
            comp,
        };
        f.build_routes()?;
        let s_nic = &topo.hosts[plan.sender.host].spec.nics[plan.sender.nic];
        let r_nic = &topo.hosts[plan.receiver.host].spec.nics[plan.receiver.nic];
        let r_gpu_window = plan
            .receiver
            .staging
            .map(|s| {
                topo.hosts[plan.receiver.host].spec.gpus[s.gpu]
                    .copy_engine
                    .read_window
            })
            .unwrap_or(1);
        for tags in [s_nic.read_window, r_nic.read_window, r_gpu_window] {
            f.engines.push(ReadEngine {
                tags_free: tags,
                waiting: VecDeque::new(),
            });
        }
        Ok(f)
    }

    fn add_route(&mut self, channels: Vec<ChannelId>) -> RouteId {
        self.routes.push(channels);
        (self.routes.len() - 1) as RouteId
    }

    fn build_routes(&mut self) -> Result<(), RouteError> {
        let topo = self.topo;
        let plan = self.plan;
        let sides = [plan.sender, plan.receiver];
        let nic_node = |h: usize| {
            topo.hosts[sides[h].host].node_index(crate::topology::NodeKind::Nic(sides[h].nic))
        };
        let gpu_node = |h: usize, g: usize| {
            topo.hosts[sides[h].host].node_index(crate::topology::NodeKind::Gpu(g))
        };
        let place_of = |h: usize, b: Buffer| match b {
            Buffer::Host { socket, .. } => Place::Memory(socket),
            Buffer::Gpu { gpu, .. } => Place::Device(gpu_node(h, gpu)),
        };
        let mem_of = |h: usize, b: Buffer| match b {
            Buffer::Host { socket, .. } => topo.hosts[sides[h].host].dram[socket],
            Buffer::Gpu { gpu, .. } => topo.hosts[sides[h].host].gpu_memory[gpu],
        };
        for (h, side) in sides.iter().enumerate() {
            let host = &topo.hosts[side.host];
            let nic = Place::Device(nic_node(h));
            let cpu = Place::Cpu(side.cpu_socket);
            let mem = Place::Memory(side.cpu_socket);
            let mmio = host.route(cpu, nic, Flow::Write)?.channels;
            self.r.mmio[h] = self.add_route(mmio);
            let mut cqe = host.route(nic, mem, Flow::Write)?.channels;
            cqe.push(host.dram[side.cpu_socket]);
            self.r.cqe[h] = self.add_route(cqe);
            self.r.engine[h] = self.add_route(vec![host.nics[side.nic].engine]);
        }
        // Sender: WQE fetch and payload read.
        let (s, rcv) = (
            &topo.hosts[plan.sender.host],
            &topo.hosts[plan.receiver.host],
        );
        let s_nic = Place::Device(nic_node(0));
        let r_nic = Place::Device(nic_node(1));
        let sq = Place::Memory(plan.sender.cpu_socket);
        self.r.wqe_req = self.add_route(s.route(s_nic, sq, Flow::ReadRequest)?.channels);
        let mut c = vec![s.dram[plan.sender.cpu_socket]];
        c.extend(s.route(sq, s_nic, Flow::ReadCompletion)?.channels);
        self.r.wqe_cpl = self.add_route(c);
        let src = place_of(0, plan.sender.nic_buffer);
        self.r.payload_req = self.add_route(s.route(s_nic, src, Flow::ReadRequest)?.channels);
        let back = s.route(src, s_nic, Flow::ReadCompletion)?;
        self.r.mps_read = back.mps;
        let mut c = vec![mem_of(0, plan.sender.nic_buffer)];
        c.extend(back.channels);
        self.r.payload_cpl = self.add_route(c);
        // Receiver: payload write.
        let dst = place_of(1, plan.receiver.nic_buffer);
        let w = rcv.route(r_nic, dst, Flow::Write)?;
        self.r.mps_write = w.mps;
        let mut c = w.channels;
        c.push(mem_of(1, plan.receiver.nic_buffer));
        self.r.payload_write = self.add_route(c);
        // Network.
        let s_ch = s.nics[plan.sender.nic];
        let r_ch = rcv.nics[plan.receiver.nic];
        self.r.tx = self.add_route(vec![s_ch.tx]);
        let ends = (
            (plan.sender.host, plan.sender.nic),
            (plan.receiver.host, plan.receiver.nic),
        );
        let no_cable = || RouteError::NoCable {
            from: topo.network.ports[topo.network.port_index(ends.0.0, ends.0.1)]
                .name
                .clone(),
            to: topo.network.ports[topo.network.port_index(ends.1.0, ends.1.1)]
                .name
                .clone(),
        };
        let forward = topo.wire_route(ends.0, ends.1).ok_or_else(no_cable)?;
        let backward = topo.wire_route(ends.1, ends.0).ok_or_else(no_cable)?;
        self.r.wire = self.add_route(forward);
        self.r.rx = self.add_route(vec![r_ch.rx]);
        let mut ack = vec![r_ch.tx];
        ack.extend(backward);
        ack.push(s_ch.rx);
        self.r.ack = self.add_route(ack);
        // Staging copies.
        if let Some(st) = plan.sender.staging {
            let g = Place::Device(gpu_node(0, st.gpu));
            let route = s.route(g, Place::Memory(st.bounce_socket), Flow::Write)?;
            self.r.mps_d2h = route.mps;
            let mut c = vec![s.gpu_memory[st.gpu]];
            c.extend(route.channels);
            c.push(s.dram[st.bounce_socket]);
            self.r.d2h = Some(self.add_route(c));
        }
        if let Some(st) = plan.receiver.staging {
            let g = Place::Device(gpu_node(1, st.gpu));
            let bounce = Place::Memory(st.bounce_socket);
            self.r.h2d_req =
                Some(self.add_route(rcv.route(g, bounce, Flow::ReadRequest)?.channels));
            let back = rcv.route(bounce, g, Flow::ReadCompletion)?;
            self.r.mps_h2d = back.mps;
            let mut c = vec![rcv.dram[st.bounce_socket]];
            c.extend(back.channels);
            self.r.h2d_cpl = Some(self.add_route(c));
            self.r.h2d_commit = Some(self.add_route(vec![rcv.gpu_memory[st.gpu]]));
        }
        if plan.flush
            && let Buffer::Gpu { gpu, .. } = plan.receiver.nic_buffer
        {
            let g = Place::Device(gpu_node(1, gpu));
            self.r.flush_req =
                Some(self.add_route(rcv.route(r_nic, g, Flow::ReadRequest)?.channels));
            let mut c = vec![rcv.gpu_memory[gpu]];
            c.extend(rcv.route(g, r_nic, Flow::ReadCompletion)?.channels);
            self.r.flush_cpl = Some(self.add_route(c));
        }
        Ok(())
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

    /// A fresh train description (no read request), entering `route` at (head, tail).
    #[allow(clippy::too_many_arguments)]
    pub fn train(
        &self,
        route: RouteId,
        msg: u32,
        tag: Tag,
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
            msg,
            tag,
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
            if spec.is_server() && t.head > now {
                q.schedule(t.head, Event::Hop(id));
                return;
            }
            let st = &mut self.state[c as usize];
            let (start, h, tl) =
                channel::pass(spec, st, t.unit, t.units, t.payload, t.head, t.tail, t.src);
            if self.recorder.enabled {
                self.recorder.hops.push(crate::record::Hop {
                    msg: t.msg,
                    train: t.serial,
                    channel: c,
                    start,
                    end: tl,
                    payload: t.payload,
                    units: t.units,
                    what: t.tag.name(),
                });
            }
            if t.counts_payload && channel::is_host_memory(spec) {
                st.payload_bytes += t.payload;
                self.msgs[t.msg as usize].host_mem_bytes += t.payload;
            }
            t.head = h;
            t.tail = tl;
            t.hop += 1;
        }
    }

    // ---- DMA reads under a window ------------------------------------------------------------

    /// Queues a read of `bytes` (split into `requests` requests of at most `mrrs`) on a read
    /// engine; it issues when the engine has `requests` tags free.
    #[allow(clippy::too_many_arguments)]
    pub fn read(
        &mut self,
        engine: u8,
        req: RouteId,
        cpl: RouteId,
        mrrs: u64,
        mps: u64,
        bytes: u64,
        msg: u32,
        tag: Tag,
        counts_payload: bool,
        now: Ps,
        q: &mut Queue<Event>,
    ) {
        let requests = bytes.div_ceil(mrrs).max(1);
        let full = bytes / mrrs;
        let rem = bytes % mrrs;
        let cpl_units = full * mrrs.div_ceil(mps) + if rem > 0 { rem.div_ceil(mps) } else { 0 };
        let mut t = self.train(req, msg, tag, Unit::ReadRequest, requests, 0, now, now);
        t.requested = bytes.max(1);
        t.cpl_route = cpl;
        t.cpl_units = cpl_units.max(1);
        t.engine = engine;
        t.tags = requests as u32;
        t.counts_payload = counts_payload;
        let id = self.new_train(t);
        self.engines[engine as usize].waiting.push_back(id);
        self.issue_reads(engine, now, now, q);
    }

    /// Issues waiting reads while tags are free. `tail_floor`: the last request of a newly
    /// issued burst cannot leave before the last completion that freed its tags arrived.
    fn issue_reads(&mut self, engine: u8, now: Ps, tail_floor: Ps, q: &mut Queue<Event>) {
        loop {
            let e = &mut self.engines[engine as usize];
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
        self.issue_reads(t.engine, now, t.tail, q);
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

    // ---- stage records -----------------------------------------------------------------------

    /// Notes that a train of message `msg` passed stage `stage` (entered at `inp`, left at `out`).
    pub fn stage(&mut self, msg: u32, stage: Stage, component: u32, inp: (Ps, Ps), out: (Ps, Ps)) {
        let m = &mut self.msgs[msg as usize];
        let slot = &mut m.stages[stage as usize];
        *slot = Some(match *slot {
            None => StageTimes {
                start: inp.0,
                last_in: inp.1,
                first_out: out.0,
                end: out.1,
            },
            Some(s) => StageTimes {
                start: s.start.min(inp.0),
                last_in: s.last_in.max(inp.1),
                first_out: s.first_out.min(out.0),
                end: s.end.max(out.1),
            },
        });
        m.stage_component[stage as usize] = component;
    }

    pub fn control_stage(&mut self, msg: u32, stage: Stage, component: u32, start: Ps, end: Ps) {
        self.stage(msg, stage, component, (start, start), (end, end));
    }

    /// Host DRAM payload bytes over all channels (both hosts).
    pub fn host_mem_payload_bytes(&self) -> u64 {
        self.state.iter().map(|s| s.payload_bytes).sum()
    }
}

fn push_name(names: &mut Vec<String>, name: String) -> u32 {
    names.push(name);
    (names.len() - 1) as u32
}

impl Handler for Fabric<'_> {
    type Event = Event;
    fn handle(&mut self, now: Ps, event: Event, q: &mut Queue<Event>) {
        match event {
            Event::Hop(id) => self.advance(id, now, q),
            Event::CpuDone { host } => self.cpu_done(host as usize, now, q),
            Event::Start { msg } => self.start_message(msg, now, q),
        }
    }
}

//! From a plan's streaming steps to a bulk transfer: the channels it uses and their weights
//! (TLP and packet headers charged), its read window's round trip, its latency (its first
//! packet's trip on idle channels) and the queue it waits in.

use super::*;
use std::rc::Rc;

/// A flow's transfer of one chain of steps, as every message of the flow makes it
/// ([`Fabric::shape`]): all of a [`Job`] that does not depend on the message.
#[derive(Debug)]
pub(super) struct Shape {
    /// Its stages on idle links, before the completer's access jitter.
    stages: Vec<Stage>,
    /// The stage whose first byte out is the reference point (where the transfer joins the
    /// sharing).
    reference: usize,
    demand: Rc<Demand>,
    uses: Rc<[Use]>,
    /// Its channels, each once, with their uses ([`Job`]'s `channels`).
    channels: Rc<[(ChannelId, Box<[u32]>)]>,
    bytes: u64,
    dram_crossings: u64,
    payload: bool,
    /// Its first packet's bytes (or TLP's): its latency is the reference's first byte out less
    /// their time at its idle rate.
    first_bytes: u64,
    /// A NIC transfer's head ([`Job::head`]) on idle links, and the slowest link of its read
    /// completions, where the transfers it shares are those its first packet's completions
    /// interleave with ([`Fabric::share_head`]). The time is its first packet's, whole, on
    /// that link or on the slowest of the packet links after it (the wire, the switches'
    /// ports), the shorter of the two: TLP by TLP the round robin of N flows' completions makes
    /// every first packet whole only about N times that first, and the packets then queue
    /// whole on the packet links; the longer of the two is the sharing's (the first packet's
    /// bytes move there at the transfer's rate). A copy has none.
    pub(super) head: Option<(Ps, ChannelId)>,
    /// Under a read window: the bytes of its first round after the first packet, which come
    /// back at the links' rate ([`Fabric::first_round`]).
    round: Option<u64>,
    read: Option<ReadWeight>,
    /// The read whose completer's access jitter delays its first data (none for a write).
    jitter: Option<ReadSpec>,
    /// Its read window's resource and the bytes in flight it gives it (its reads' MRRS).
    window: Option<(Res, u128)>,
    key: QueueKey,
}

impl Fabric<'_> {
    fn specs(&self, route: crate::components::fabric::RouteId) -> Vec<&ChannelSpec> {
        self.routes[route.index()]
            .iter()
            .map(|&c| &self.channels[c.index()])
            .collect()
    }

    /// Adds `route`'s server channels to `uses`: step `step` puts `unit`s of `per` bytes
    /// there, one for every `payload` bytes of the transfer's `bytes` (a data unit carries its
    /// payload, `per == payload`; a read request carries none and asks for `payload`). A
    /// transfer shorter than one data unit moves in one unit of its own size, which pays its
    /// whole header on those bytes.
    #[allow(clippy::too_many_arguments)]
    fn charge(
        &self,
        uses: &mut Vec<Use>,
        (flow, step): (u32, StepId),
        route: crate::components::fabric::RouteId,
        unit: Unit,
        (per, payload): (u64, u64),
        bytes: u64,
    ) {
        let (per, payload) = match per > bytes {
            true => (bytes.max(1), bytes.max(1)),
            false => (per, payload),
        };
        let src = self.source(route, flow);
        for &c in &self.routes[route.index()] {
            let spec = &self.channels[c.index()];
            if spec.is_server() {
                let one = spec.wire_bytes(unit, per, 1);
                uses.push(Use {
                    channel: c,
                    weight: fluid::weight(one, payload),
                    step,
                    phase: 0,
                    unit,
                    unit_wire: one,
                    src,
                });
            }
        }
    }

    /// Adds a DMA read's channels to `uses`: its requests out and its completions back. Returns
    /// the two routes and the completion size.
    fn charge_read(
        &self,
        uses: &mut Vec<Use>,
        who: (u32, StepId),
        set: u32,
        read: ReadSpec,
        bytes: u64,
    ) -> (
        crate::components::fabric::RouteId,
        crate::components::fabric::RouteId,
        u64,
    ) {
        let (req, cpl) = (
            self.route_of(who.0, set, read.req),
            self.route_of(who.0, set, read.cpl),
        );
        self.charge(uses, who, req, Unit::ReadRequest, (0, read.mrrs), bytes);
        let c = read.completion();
        self.charge(uses, who, cpl, Unit::Completion, (c, c), bytes);
        (req, cpl, c)
    }

    /// The completer memory of a read.
    fn completer_of(&self, flow: u32, set: u32, read: ReadSpec) -> ChannelId {
        self.routes[(self.route_of(flow, set, read.cpl)).index()][0]
    }

    /// One draw of the completer memory's access jitter, for a bulk read's first data (each
    /// access of a unit read draws its own).
    fn read_jitter(&mut self, flow: u32, set: u32, read: ReadSpec) -> Ps {
        let mem = self.completer_of(flow, set, read);
        self.servers[mem.index()].draw_jitter()
    }

    /// The round trip of one full read request on idle channels, with the completer's mean
    /// access jitter (its window weight).
    fn read_rtt(&self, flow: u32, set: u32, read: ReadSpec) -> Ps {
        let req = self.specs(self.route_of(flow, set, read.req));
        let cpl = self.specs(self.route_of(flow, set, read.cpl));
        let mem = self.completer_of(flow, set, read);
        self.servers[mem.index()].mean_jitter()
            + idle_transit(&req, Unit::ReadRequest, 0, 1).0
            + idle_transit(
                &cpl,
                Unit::Completion,
                read.completion(),
                read.mrrs.div_ceil(read.completion()),
            )
            .1
    }

    /// How much sooner than at its window's rate the `round` bytes of a read's first round
    /// after its first packet arrive. A read window caps a read's sustained rate (its bytes in
    /// flight per round trip), not its first round: the window's first requests go out at once
    /// and their data comes back at the rate of the links. Where the window (`demand.uses[at]`)
    /// binds, those bytes take their time at the links' rate, not the window's.
    fn first_round(&self, demand: &Demand, at: usize, round: u64) -> Ps {
        let capacity = &self.bulk.fluid.capacity;
        let rate = |&(r, weight): &(Res, u128)| (capacity[r as usize] / weight.max(1)).max(1);
        let at_window = rate(&demand.uses[at]);
        let at_links = (demand.uses.iter().enumerate())
            .filter(|&(i, u)| i != at && u.1 > 0)
            .map(|(_, u)| rate(u))
            .min()
            .unwrap_or(u128::MAX);
        let round = round as u128 * SCALE;
        (round / at_window).saturating_sub(round / at_links) as Ps
    }

    /// The transfer of the chain that begins with `inst`, and the key of its queue: its
    /// flow's shape for that chain ([`Shape`], worked out at the flow's first message and kept)
    /// with this message's draw of the completer's access jitter and its start.
    pub(super) fn build_job(&mut self, inst: Instance, t0: Ps) -> (Job, QueueKey) {
        let Instance { flow, step, msg } = inst;
        // One shape per QP of the flow: its messages take their QP's routes.
        let set = self.qp_set(flow, msg);
        let shape = match self.bulk.shapes.get(&(flow, step, set)) {
            Some(shape) => Rc::clone(shape),
            None => {
                let shape = Rc::new(self.shape(flow, set, step));
                self.bulk
                    .shapes
                    .insert((flow, step, set), Rc::clone(&shape));
                shape
            }
        };
        // The jitter delays the first data, and with it every stage after the read's first
        // (as if drawn while the shape was worked out: the same values, the same draws).
        let jitter = shape
            .jitter
            .map_or(0, |read| self.read_jitter(flow, set, read));
        // A window's bytes in flight are those of the reads of the transfer that last started
        // under it, as when every transfer was worked out afresh.
        if let Some((r, in_flight)) = shape.window {
            self.bulk.fluid.set(r, in_flight, true);
        }
        let mut stages = shape.stages.clone();
        if let Some((head, rest)) = stages.split_first_mut() {
            head.first_out += jitter;
            head.last_in -= jitter as i64;
            for s in rest {
                s.first_in += jitter;
                s.first_out += jitter;
            }
        }
        // Every byte, the first packet's too, moves in the sharing, so that the transfers on a
        // link never carry more than its rate: the transfer joins it when its first packet
        // would start to arrive at its idle rate, and on idle links ends when it did.
        // (Its idle rate is read from the capacities now, less what units beside other
        // transfers hold of them at this instant.)
        let rate = idle_rate(&self.bulk.fluid, &shape.demand);
        let arrival = (shape.first_bytes as u128 * SCALE / rate) as Ps;
        let latency = stages[shape.reference].first_out.saturating_sub(arrival);
        // Under load its first packet's wait to be whole takes its share ([`Shape::head`]):
        // that part of its latency moves in the sharing, at the transfer's rate, as the bytes its
        // idle rate moves in that time.
        let head = match (rate, shape.head) {
            (u128::MAX, _) | (_, None) => 0,
            (_, Some((t, _))) => t.min(latency),
        };
        let latency = latency - head;
        let early = match (&shape.read, shape.round) {
            (Some(rw), Some(round)) => self.first_round(&shape.demand, rw.at, round).min(latency),
            _ => 0,
        };
        let job = Job {
            inst,
            stages,
            demand: Rc::clone(&shape.demand),
            uses: Rc::clone(&shape.uses),
            channels: Rc::clone(&shape.channels),
            bytes: shape.bytes,
            dram_crossings: shape.dram_crossings,
            payload: shape.payload,
            t0,
            latency,
            early,
            head,
            queue: 0,
            state: State::Queued,
            remaining: shape.bytes as u128 * SCALE,
            rate: 0,
            at: t0,
            resume_at: 0,
            bound: Limit::None,
            bound_by: Vec::new(),
            serial: 0,
            read: shape.read,
            inherits: false,
            unwired: 0,
            joined: t0,
            rtt: 0,
        };
        (job, shape.key)
    }

    /// The server channel of `route` where `packet` bytes in units of at most `size` take
    /// longest to serialise, one unit after another, and that time (0 and none without one).
    fn slowest_link(
        &self,
        route: crate::components::fabric::RouteId,
        unit: Unit,
        (packet, size): (u64, u64),
    ) -> (Ps, Option<ChannelId>) {
        let size = size.max(1);
        let (full, rest) = (packet / size, packet % size);
        (self.routes[route.index()].iter())
            .filter(|&&c| self.channels[c.index()].is_server())
            .map(|&c| {
                let spec = &self.channels[c.index()];
                let mut t = full * channel::service(spec, unit, size).0;
                if rest > 0 {
                    t += channel::service(spec, unit, rest).0;
                }
                (t, Some(c))
            })
            .max_by_key(|&(t, _)| t)
            .unwrap_or((0, None))
    }

    /// What a transfer of `flow`'s chain that begins with step `first` is, whatever the
    /// message: its channels and weights, its stages on idle links before the completer's
    /// access jitter, its queue. Everything here follows from the plan and the topology, so a
    /// stream works it out once, not once per message.
    fn shape(&mut self, flow: u32, set: u32, first: StepId) -> Shape {
        let plan = self.plan_of(flow);
        let step = &plan.steps[first.index()];
        let (bytes, payload) = (step.bytes, step.payload);
        let mut uses: Vec<Use> = Vec::new();
        let mut stages = Vec::new();
        let mut window = None;
        let mut dram = 0u64;
        let mut count_dram = |fab: &Fabric, route: crate::components::fabric::RouteId| {
            dram += fab.routes[route.index()]
                .iter()
                .filter(|&&c| channel::is_host_memory(&fab.channels[c.index()]))
                .count() as u64;
        };
        let reference;
        let key;
        let mut jitter = None;
        // The first packet (or TLP): what its latency carries to the reference point, and (a
        // NIC's) its head ([`Shape::head`]).
        let first_bytes;
        let head;
        match step.kind {
            StepKind::DmaRead { nic, read, .. } => {
                let (req, cpl, c) = self.charge_read(&mut uses, (flow, first), set, read, bytes);
                count_dram(self, cpl);
                window = Some((read.engine, read, self.read_rtt(flow, set, read)));
                let mtu = self.nic_spec(nic).mtu;
                let packet = mtu.min(bytes);
                first_bytes = packet;
                // The first packet's bytes at the NIC: its requests out, its completions back.
                let first_data = idle_transit(&self.specs(req), Unit::ReadRequest, 0, 1).0
                    + idle_transit_of(&self.specs(cpl), Unit::Completion, packet, c).1;
                let (completions, head_link) =
                    self.slowest_link(cpl, Unit::Completion, (packet, c));
                let mut packets = 0;
                let mut at = first_data;
                jitter = Some(read);
                stages.push(Stage {
                    step: first,
                    first_in: 0,
                    first_out: at,
                    last_in: 0,
                    last_out: 0,
                });
                // Then the packets: through the chain of streaming steps after the read.
                let mut cur = first;
                let mut write = None;
                while let Some(next) = plan.output(cur) {
                    let s = &plan.steps[next.index()];
                    let r = self.step_route(flow, set, next);
                    let from = at;
                    match s.kind {
                        StepKind::NicTx { .. } | StepKind::NicRx { .. } => {}
                        StepKind::Wire { .. } => {
                            self.charge(&mut uses, (flow, next), r, Unit::Packet, (mtu, mtu), bytes)
                        }
                        StepKind::DmaWrite { mps, .. } => {
                            write = Some((next, r, mps));
                            break;
                        }
                        ref k => unreachable!("{k:?} does not stream"),
                    }
                    // A packet step: the first packet crosses it, and its slowest link may
                    // hold the head.
                    at += idle_transit(&self.specs(r), Unit::Packet, packet, 1).0;
                    packets = packets.max(self.slowest_link(r, Unit::Packet, (packet, packet)).0);
                    stages.push(Stage {
                        step: next,
                        first_in: from,
                        first_out: at,
                        last_in: 0,
                        last_out: 0,
                    });
                    cur = next;
                }
                head = head_link.map(|link| (completions.min(packets), link));
                reference = stages.len() - 1;
                // Offsets of the steps up to the reference from its end.
                let ref_out = stages[reference].first_out as i64;
                for s in stages.iter_mut() {
                    s.last_out = s.first_out as i64 - ref_out;
                    s.last_in = s.first_in as i64 - ref_out;
                }
                if let Some((w, r, mps)) = write {
                    let wnic = match plan.steps[w.index()].kind {
                        StepKind::DmaWrite { nic, .. } => nic,
                        _ => unreachable!(),
                    };
                    let wmtt = self.nic_spec(wnic).mtt_lookup;
                    self.charge(&mut uses, (flow, w), r, Unit::Write, (mps, mps), bytes);
                    count_dram(self, r);
                    let specs = self.specs(r);
                    let (one, last) = idle_transit_of(&specs, Unit::Write, packet, mps);
                    // The last packet's TLPs leave one after another on the first link: what
                    // follows them from the NIC (the CQE) goes behind the last.
                    let tlp = |b: u64| channel::service(specs[0], Unit::Write, b).0;
                    let out =
                        (packet / mps) * tlp(mps) + (packet % mps > 0) as u64 * tlp(packet % mps);
                    let base = stages[reference].first_out;
                    stages.push(Stage {
                        step: w,
                        first_in: base + wmtt,
                        first_out: base + wmtt + one,
                        last_in: (wmtt + out) as i64,
                        last_out: (wmtt + last) as i64,
                    });
                }
                // Each QP is its own send queue: the NIC interleaves its QPs' messages.
                key = match set {
                    0 => QueueKey::Flow(flow),
                    qp => QueueKey::FlowQp(flow, qp),
                };
            }
            StepKind::Memcpy { copy, gpu, .. } | StepKind::KernelCopy { copy, gpu } => {
                let (lat, tlp) = match copy {
                    Copy::D2h { route, mps } => {
                        let r = self.route_of(flow, set, route);
                        self.charge(&mut uses, (flow, first), r, Unit::Write, (mps, mps), bytes);
                        count_dram(self, r);
                        let tlp = mps.min(bytes);
                        (idle_transit(&self.specs(r), Unit::Write, tlp, 1).0, mps)
                    }
                    Copy::H2d { read, commit } => {
                        let (req, cpl, c) =
                            self.charge_read(&mut uses, (flow, first), set, read, bytes);
                        let commit = self.route_of(flow, set, commit);
                        let from = uses.len();
                        self.charge(
                            &mut uses,
                            (flow, first),
                            commit,
                            Unit::Completion,
                            (c, c),
                            bytes,
                        );
                        for u in &mut uses[from..] {
                            u.phase = 1;
                        }
                        count_dram(self, cpl);
                        window = Some((read.engine, read, self.read_rtt(flow, set, read)));
                        let lat = idle_transit(&self.specs(req), Unit::ReadRequest, 0, 1).0
                            + idle_transit(&self.specs(cpl), Unit::Completion, c.min(bytes), 1).0
                            + idle_transit(&self.specs(commit), Unit::Completion, c.min(bytes), 1)
                                .0;
                        jitter = Some(read);
                        (lat, c)
                    }
                };
                first_bytes = tlp.min(bytes);
                // No head: a copy's first unit moves in its latency at its idle rate. A copy
                // engine serves its copies in order, one queue (TLP by TLP too: its units are
                // of one source), and a kernel's NVLink stores cross as flits, so the
                // whole-unit store and forward `idle_transit` charges at an NVSwitch (a 4 KiB
                // unit: NVLink sets no MPS) is no packet a NIC holds; multiplied by the sharing
                // it made an 8-GPU ring all-reduce of LL128 steps 20% slower at 1 MiB, away
                // from the TLP-by-TLP run.
                head = None;
                stages.push(Stage {
                    step: first,
                    first_in: 0,
                    first_out: lat,
                    last_in: -(lat as i64),
                    last_out: 0,
                });
                reference = 0;
                // A copy engine's copies queue in its direction; a kernel's stores (NCCL's
                // P2P, PXN, its host path) in a queue of the GPU's SMs per flow, beside its
                // copy engines ([`QueueKey::Gpu`]).
                key = QueueKey::Gpu {
                    engine: self.topo.gpu_engine(gpu.host, gpu.gpu),
                    h2d: matches!(copy, Copy::H2d { .. }),
                    sms: matches!(step.kind, StepKind::KernelCopy { .. }).then_some(flow),
                };
            }
            ref k => unreachable!("{k:?} is not a bulk transfer"),
        }
        let mut demand = Demand::default();
        for u in &uses {
            // A server channel is a fluid resource (its rate), made when first used.
            let spec = &self.channels[u.channel.index()];
            if !spec.is_server() {
                continue;
            }
            let r = u.channel.0 as Res;
            if self.bulk.fluid.capacity[r as usize] == 0 {
                let rate = spec.rate.bps() as u128 * WEIGHT_ONE / 8;
                self.bulk.fluid.set(r, rate, false);
            }
            match demand.uses.iter_mut().find(|d| d.0 == r) {
                Some(d) => d.1 += u.weight,
                None => demand.uses.push((r, u.weight)),
            }
        }
        let mut read_weight = None;
        let mut window_set = None;
        if let Some((engine, read, rtt)) = window {
            // Bytes in flight: the window's requests of MRRS; a transfer's weight is its round
            // trip (Little's law).
            let r = self.bulk.window_res(engine);
            let in_flight = self.bulk.windows[engine.index()] as u128 * read.mrrs as u128 * SCALE;
            self.bulk.fluid.set(r, in_flight, true);
            window_set = Some((r, in_flight));
            read_weight = Some(ReadWeight {
                engine,
                at: demand.uses.len(),
                idle_rtt: rtt.max(1),
                completions: read.mrrs.div_ceil(read.mps).max(1) as u32,
            });
            demand.uses.push((r, rtt.max(1) as u128));
        }
        let round = match (&read_weight, window) {
            (Some(rw), Some((_, read, _))) => {
                let in_flight = self.bulk.windows[rw.engine.index()] as u64 * read.mrrs;
                Some(bytes.min(in_flight).saturating_sub(first_bytes))
            }
            _ => None,
        };
        let mut channels: Vec<(ChannelId, Vec<u32>)> = Vec::new();
        for (x, u) in (0u32..).zip(uses.iter()) {
            match channels.iter_mut().find(|c| c.0 == u.channel) {
                Some(c) => c.1.push(x),
                None => channels.push((u.channel, vec![x])),
            }
        }
        Shape {
            stages,
            reference,
            demand: Rc::new(demand),
            uses: uses.into(),
            channels: channels.into_iter().map(|(c, on)| (c, on.into())).collect(),
            bytes,
            dram_crossings: dram,
            payload,
            first_bytes,
            head,
            round,
            read: read_weight,
            jitter,
            window: window_set,
            key,
        }
    }
}

//! Large messages as fluid transfers: a bounded number of events per message, whatever its size.
//!
//! A message above `coalesce_above` bytes moves its payload as one *bulk transfer* per chain of
//! streaming steps: the NIC's read, transmit pipeline, wire, receive pipeline and write form one
//! transfer (the data streams through them at one rate); a cudaMemcpy is another. A transfer
//! first takes its *latency*: the time its first packet (or TLP) needs to reach its reference
//! point on idle channels (the receiving NIC for a NIC transfer, the destination for a copy),
//! less the time that packet takes at the transfer's idle rate. Then all its bytes, the first
//! packet's too, move at the max-min fair rate the solver ([`super::fluid`]) gives it among
//! every transfer active at the time, on every link, memory and read window it uses: link
//! weights charge TLP and packet headers, a read window is shared by the bytes its reads keep
//! in flight. Rates change only when a transfer starts or ends; one queued event marks the
//! next end. Transfers of one queue (a flow's send queue, a copy engine) go one after another,
//! the next one's latency overlapping the one before. A unit (a doorbell, a CQE) that crosses
//! a link they use goes beside them or makes them wait ([`Fabric::unit_beside_bulk`]).
//!
//! Each transfer's steps get records as if the data streamed through them: the step that bound
//! the transfer (the one holding the link, memory or window that saturated) appears busy for the
//! whole transfer, so the critical path names the real bottleneck.

use std::collections::VecDeque;

use super::Event;
use super::channel::{self, idle_transit, idle_transit_of};
use super::fabric::{Fabric, StageTimes};
use super::fluid::{self, Demand, Fluid, Res, Share, WEIGHT_ONE};
use super::queueing::{self, Load};
use super::recv_queue::Held;
use super::steps::Instance;
use crate::engine::Queue;
use crate::plan::{Copy, Milestone, ReadSpec, StepId, StepKind};
use crate::record::Hop;
use crate::topology::{ChannelId, ChannelSpec, ReadEngineId, Topology, Unit};
use crate::units::{PS_PER_S, Ps};

/// The queue a transfer waits in behind the transfers before it: its flow's send queue, or a
/// GPU's copy engine in one direction (or its SMs, for a kernel's stores).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum QueueKey {
    /// A flow's send queue (its NIC transfers go one after another).
    Flow(u32),
    /// A GPU's copies: its copy engine (by read-engine index) in one direction, or its SMs.
    Gpu {
        engine: ReadEngineId,
        h2d: bool,
        sms: bool,
    },
}

/// What limited a transfer: a channel, a read window, or nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Limit {
    /// A server channel (index into the topology's channels) whose rate bound the transfer.
    Channel(ChannelId),
    /// A read engine's outstanding-read window bound the transfer (a NIC's or a copy
    /// engine's; see [`crate::topology::Topology::engine_name`]).
    Window(ReadEngineId),
    /// Nothing bound it: it moved at the unbounded rate.
    None,
}

/// The most a unit's room may stretch its service on a link that no transfer is bound by
/// (the link at most 1 - 1/1024 busy): beyond it the link is as good as saturated, and the
/// transfers wait while the unit is serialised.
const ROOM_SERVICES: Ps = 1024;

/// One step of a transfer's chain and when its data passes it, relative to the transfer's
/// start (first byte in, first byte out) and to its end at the reference point (last byte in,
/// last byte out).
#[derive(Clone, Copy, Debug)]
struct Stage {
    step: StepId,
    first_in: Ps,
    first_out: Ps,
    last_in: i64,
    last_out: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Behind another transfer of its queue.
    Queued,
    /// Its first data is on the way (latency phase).
    Latency,
    Active,
    Done,
}

/// A channel a transfer uses: its weight, and the step and unit that put the load there.
#[derive(Clone, Copy, Debug)]
struct Use {
    channel: ChannelId,
    weight: u128,
    step: StepId,
    /// Which of the step's movements it is (a copy's reads, then its writes into the GPU).
    phase: u8,
    unit: Unit,
    /// Wire bytes of one of its units there (what a unit of another source waits behind).
    unit_wire: u64,
    /// Where its units come from, as the channel's round robin tells sources apart: a unit of
    /// the same source (the NIC's CQE behind its own payload writes) is in their order, not
    /// behind one of them.
    src: channel::Source,
}

/// The active transfers on one channel, and what a unit crossing it reads of them, kept up
/// to date as transfers join, leave and get new rates: a unit's cost there is then the same
/// for two transfers or two thousand ([`Fabric::unit_beside_bulk`]).
#[derive(Clone, Debug, Default)]
struct ChannelUsers {
    jobs: Vec<usize>,
    /// The sum of their rates times the weights of their uses here.
    load: u128,
    /// How many of them this channel binds.
    bound: u32,
    /// Their uses here by (wire bytes of one unit, source), counted and in ascending order: a
    /// unit waits behind the largest unit of a source not its own. A sorted list, not a map:
    /// a channel's users come from few sizes and a start or end moves a few entries.
    units: Vec<((u64, channel::Source), u32)>,
}

impl ChannelUsers {
    /// Adds (`sign` true) or takes away the uses of `job` on channel `c`.
    fn count(&mut self, job: &Job, c: ChannelId, sign: bool) {
        for u in job.uses.iter().filter(|u| u.channel == c) {
            let load = job.rate as u128 * u.weight;
            let key = (u.unit_wire, u.src);
            let at = self.units.binary_search_by(|e| e.0.cmp(&key));
            match (sign, at) {
                (true, Ok(i)) => self.units[i].1 += 1,
                (true, Err(i)) => self.units.insert(i, (key, 1)),
                (false, Ok(i)) if self.units[i].1 > 1 => self.units[i].1 -= 1,
                (false, Ok(i)) => {
                    self.units.remove(i);
                }
                (false, Err(_)) => debug_assert!(false, "a use taken away was counted"),
            }
            match sign {
                true => self.load += load,
                false => self.load -= load,
            }
        }
        if job.bound == Limit::Channel(c) {
            match sign {
                true => self.bound += 1,
                false => self.bound -= 1,
            }
        }
    }

    /// The largest unit (wire bytes) of a source other than `src` among them: what a unit of
    /// `src` waits behind in the link's queue (none: no other source's).
    fn largest_other(&self, src: channel::Source) -> Option<u64> {
        self.units
            .iter()
            .rev()
            .find(|((_, s), _)| *s != src)
            .map(|&((wire, _), _)| wire)
    }
}

/// One bulk transfer.
#[derive(Clone, Debug)]
pub struct Job {
    inst: Instance,
    stages: Vec<Stage>,
    demand: Demand,
    /// The channels it uses (the window is only in `demand`).
    uses: Vec<Use>,
    /// Payload bytes, and host DRAM crossings.
    bytes: u64,
    dram_crossings: u64,
    payload: bool,
    t0: Ps,
    /// From `t0` to joining the sharing on idle links (its first packet's arrival less that
    /// packet's time at its idle rate).
    latency: Ps,
    /// How much sooner it joins where it starts on an idle read window: its first round's
    /// bytes come back at the links' rate, not the window's ([`Fabric::first_round`]).
    early: Ps,
    queue: usize,
    state: State,
    /// Payload still to pass the reference point, in 1e-12 bytes, as of `at`.
    remaining: u128,
    rate: u64,
    at: Ps,
    /// Paused (a unit holds one of its links) until then.
    resume_at: Ps,
    bound: Limit,
    /// Per limit that bound it: the bytes it moved and the time it spent moving (picoseconds)
    /// under that limit.
    bound_by: Vec<(Limit, u128, u128)>,
    serial: u64,
    /// For a read under a window: where its window weight sits in `demand.uses`, its idle round
    /// trip, and the completions of one full request (its units on the completion route).
    read: Option<ReadWeight>,
}

/// A read's window weight: its round trip, idle plus the expected queueing behind the other
/// transfers on its request and completion routes ([`super::queueing`]).
#[derive(Clone, Copy, Debug)]
struct ReadWeight {
    /// Its window (read engine).
    engine: ReadEngineId,
    at: usize,
    idle_rtt: Ps,
    completions: u32,
}

/// The fluid state of one fabric: resources, transfers, queues.
pub struct Bulks {
    fluid: Fluid,
    windows: Vec<u32>,
    /// Channels of the topology: resource `c` is server channel `c`, resource `channels + e`
    /// read window `e` (see [`Bulks::limit_of`]).
    channels: usize,
    pub jobs: Vec<Job>,
    active: Vec<usize>,
    queues: Vec<(QueueKey, VecDeque<usize>)>,
    queue_index: std::collections::HashMap<QueueKey, usize>,
    /// Active transfers on each channel (a unit serialised there goes beside them or makes
    /// them wait): per channel,
    /// 1 + its list's index in `user_lists`, 0 while no transfer has used it.
    user_slot: Vec<u32>,
    user_lists: Vec<ChannelUsers>,
    /// Active transfers reading under each read window (by engine): with `users`, who shares
    /// a resource with whom, so that a start or an end re-solves only the transfers it can
    /// change (a server channel's resource has the channel's users).
    window_users: Vec<Vec<usize>>,
    /// Transfers started and not done under each read window, active or not yet.
    window_jobs: Vec<u32>,
    /// Per transfer: the solve that last reached it (a visited mark without clearing).
    reached: Vec<u64>,
    /// Transfers whose groups a solve due now will share out ([`Event::Share`]).
    pending: Vec<usize>,
    share_due: bool,
    /// Per channel and per read window: the solve that last read its users.
    channel_reached: Vec<u64>,
    window_reached: Vec<u64>,
    solves: u64,
    /// Until when a unit holds each channel (a transfer that starts meanwhile waits too).
    unit_until: Vec<Ps>,
    /// Units carried beside transfers in their room: (channel, the capacity their bytes take
    /// there, until when). Few at a time: each lasts while its link catches up.
    reserves: Vec<(ChannelId, u128, Ps)>,
    /// Per channel: the capacity those units take there now (the sum of its `reserves`).
    reserved: Vec<u128>,
    /// Per channel: when its next [`Event::UnitGone`] is due (0: none).
    gone_at: Vec<Ps>,
    version: u64,
    /// Payload bytes the transfers moved through host DRAM.
    pub host_mem_bytes: u64,
    /// Wire bytes the transfers put on each channel, in 1e-12 bytes.
    pub wire_bytes: Vec<u128>,
    /// Time each limit bound a transfer while it moved, summed over the transfers, in
    /// picoseconds: a limit that binds many transfers for long (a shared link) weighs more
    /// than one a fast transfer meets briefly, however many bytes that one moves.
    pub limits: Vec<(Limit, u128)>,
}

impl Bulks {
    /// A resource per server channel (its rate) and per read window (its bytes in flight),
    /// numbered up front and given its capacity when a transfer first uses it.
    pub fn new(topo: &Topology, windows: &[u32]) -> Bulks {
        let channels = topo.channels.len();
        Bulks {
            fluid: Fluid::with_resources(channels + windows.len()),
            windows: windows.to_vec(),
            channels,
            jobs: Vec::new(),
            active: Vec::new(),
            queues: Vec::new(),
            queue_index: std::collections::HashMap::new(),
            user_slot: vec![0; channels],
            user_lists: Vec::new(),
            window_users: vec![Vec::new(); windows.len()],
            window_jobs: vec![0; windows.len()],
            reached: Vec::new(),
            pending: Vec::new(),
            share_due: false,
            channel_reached: vec![0; channels],
            window_reached: vec![0; windows.len()],
            solves: 0,
            unit_until: vec![0; channels],
            reserves: Vec::new(),
            reserved: vec![0; channels],
            gone_at: vec![0; channels],
            version: 0,
            host_mem_bytes: 0,
            wire_bytes: vec![0; channels],
            limits: Vec::new(),
        }
    }

    /// The limit fluid resource `r` stands for.
    fn limit_of(&self, r: Res) -> Limit {
        match (r as usize).checked_sub(self.channels) {
            None => Limit::Channel(r as ChannelId),
            Some(engine) => Limit::Window(ReadEngineId(engine as u32)),
        }
    }

    /// The fluid resource of read window (engine) `engine`.
    fn window_res(&self, engine: ReadEngineId) -> Res {
        (self.channels + engine.index()) as Res
    }

    /// The active transfers on channel `c`.
    fn users(&self, c: ChannelId) -> &[usize] {
        users_in(&self.user_slot, &self.user_lists, c)
    }

    /// The list of the active transfers on channel `c`, made when first needed.
    fn users_mut(&mut self, c: ChannelId) -> &mut ChannelUsers {
        if self.user_slot[c as usize] == 0 {
            self.user_lists.push(ChannelUsers::default());
            self.user_slot[c as usize] = self.user_lists.len() as u32;
        }
        &mut self.user_lists[self.user_slot[c as usize] as usize - 1]
    }

    /// Channel `c`'s active transfers with their aggregates (`None` before any used it).
    fn channel_users(&self, c: ChannelId) -> Option<&ChannelUsers> {
        match self.user_slot[c as usize] {
            0 => None,
            s => Some(&self.user_lists[s as usize - 1]),
        }
    }

    /// Transfer `id` (active: on its channels' user lists) gets `rate` and `bound`; its
    /// channels' aggregates follow.
    fn set_rate(&mut self, id: usize, rate: u64, bound: Limit) {
        let job = &self.jobs[id];
        if job.rate == rate && job.bound == bound {
            return;
        }
        for u in &job.uses {
            let s = self.user_slot[u.channel as usize];
            debug_assert!(s > 0, "an active transfer is on its channels' lists");
            let users = &mut self.user_lists[s as usize - 1];
            users.load = users.load - job.rate as u128 * u.weight + rate as u128 * u.weight;
        }
        for (limit, sign) in [(job.bound, false), (bound, true)] {
            if let Limit::Channel(c) = limit
                && job.uses.iter().any(|u| u.channel == c)
            {
                let users = &mut self.user_lists[self.user_slot[c as usize] as usize - 1];
                match sign {
                    true => users.bound += 1,
                    false => users.bound -= 1,
                }
            }
        }
        let job = &mut self.jobs[id];
        job.rate = rate;
        job.bound = bound;
    }

    /// The index of `key`'s queue (numbered in order of first use; the map only finds them).
    fn queue(&mut self, key: QueueKey) -> usize {
        let next = self.queues.len();
        let i = *self.queue_index.entry(key).or_insert(next);
        if i == next {
            self.queues.push((key, VecDeque::new()));
        }
        i
    }
}

/// Whether `job` reads under window `engine`: its units then take part in the same closed loop
/// of tags as the reads they delay, and Little's law over the whole window already holds them
/// (two flows under one window on one path move what one flow with that window moves).
fn same_window(job: &Job, engine: ReadEngineId) -> bool {
    job.read.is_some_and(|r| r.engine == engine)
}

/// The active transfers on channel `c` (`Bulks::user_slot` into `Bulks::user_lists`): a
/// function of the two fields, so that a caller may hold them while it changes the transfers.
fn users_in<'a>(slot: &[u32], lists: &'a [ChannelUsers], c: ChannelId) -> &'a [usize] {
    match slot[c as usize] {
        0 => &[],
        s => &lists[s as usize - 1].jobs,
    }
}

/// Whether some read's requests or completions share a channel with a transfer that is not
/// under the same read window (else no read waits for another job's units: every round trip
/// stays idle and the loaded rounds would change nothing). `one_window` holds, per channel the
/// jobs use (ascending), the one window all its users read under, if any.
fn reads_meet_other_windows(
    jobs: &[&Job],
    one_window: &[(ChannelId, Option<ReadEngineId>)],
) -> bool {
    let mixed = |c: ChannelId| {
        one_window
            .binary_search_by_key(&c, |o| o.0)
            .is_ok_and(|i| one_window[i].1.is_none())
    };
    jobs.iter().any(|j| {
        j.read.is_some()
            && j.uses
                .iter()
                .filter(|u| u.step == j.inst.2 && u.phase == 0)
                .filter(|u| matches!(u.unit, Unit::ReadRequest | Unit::Completion))
                .any(|u| mixed(u.channel))
    })
}

/// Rounds of the loaded round-trip fixed point ([`Fabric::loaded_shares`]).
const LOADED_ROUNDS: usize = 3;

/// Picoseconds-per-second scale of the remaining bytes.
const SCALE: u128 = PS_PER_S as u128;

impl Fabric<'_> {
    /// Whether a step of `bytes` moves as a bulk transfer.
    pub(super) fn is_bulk(&self, bytes: u64) -> bool {
        !self.opts.tlp_granularity && bytes > self.opts.coalesce_above
    }

    fn specs(&self, route: super::fabric::RouteId) -> Vec<&ChannelSpec> {
        self.routes[route as usize]
            .iter()
            .map(|&c| &self.channels[c as usize])
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
        route: super::fabric::RouteId,
        unit: Unit,
        (per, payload): (u64, u64),
        bytes: u64,
    ) {
        let (per, payload) = match per > bytes {
            true => (bytes.max(1), bytes.max(1)),
            false => (per, payload),
        };
        let src = self.source(route, flow);
        for &c in &self.routes[route as usize] {
            let spec = &self.channels[c as usize];
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
        read: ReadSpec,
        bytes: u64,
    ) -> (super::fabric::RouteId, super::fabric::RouteId, u64) {
        let (req, cpl) = (
            self.route_of(who.0, read.req),
            self.route_of(who.0, read.cpl),
        );
        self.charge(uses, who, req, Unit::ReadRequest, (0, read.mrrs), bytes);
        let c = read.completion();
        self.charge(uses, who, cpl, Unit::Completion, (c, c), bytes);
        (req, cpl, c)
    }

    /// The completer memory of a read.
    fn completer_of(&self, flow: u32, read: ReadSpec) -> ChannelId {
        self.routes[self.route_of(flow, read.cpl) as usize][0]
    }

    /// One draw of the completer memory's access jitter, for a bulk read's first data (each
    /// access of a unit read draws its own).
    fn read_jitter(&mut self, flow: u32, read: ReadSpec) -> Ps {
        let mem = self.completer_of(flow, read);
        self.servers[mem as usize].draw_jitter()
    }

    /// The round trip of one full read request on idle channels, with the completer's mean
    /// access jitter (its window weight).
    fn read_rtt(&self, flow: u32, read: ReadSpec) -> Ps {
        let req = self.specs(self.route_of(flow, read.req));
        let cpl = self.specs(self.route_of(flow, read.cpl));
        let mem = self.completer_of(flow, read);
        self.servers[mem as usize].mean_jitter()
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

    /// Starts a bulk transfer for the chain that begins with step instance `inst` (a DMA read
    /// or a copy) at `t0`: behind the transfers of its queue, else after its latency.
    pub(super) fn bulk_start(&mut self, inst: Instance, t0: Ps, q: &mut Queue<Event>) {
        let (mut job, key) = self.build_job(inst, t0);
        job.queue = self.bulk.queue(key);
        job.serial = self.next_serial();
        // Its first round goes at the links' rate only on a window no other transfer holds
        // or waits for (a stream keeps its window full: it moves at the window's rate).
        if let Some(rw) = &job.read {
            let others = &mut self.bulk.window_jobs[rw.engine.index()];
            if *others == 0 {
                job.latency -= job.early;
            }
            *others += 1;
        }
        let (queue, latency) = (job.queue, job.latency);
        let id = self.bulk.jobs.len();
        self.bulk.jobs.push(job);
        let qd = &mut self.bulk.queues[queue].1;
        qd.push_back(id);
        if qd.len() == 1 {
            self.bulk.jobs[id].state = State::Latency;
            q.schedule(t0 + latency, Event::BulkReady(id as u32));
        }
    }

    /// The steady state of every flow's payload transfer at once (its plan's payload DMA read,
    /// its first chunk's in a chunked plan, moving without end): each flow's payload rate and what
    /// bound it. This is the ceiling the charts draw.
    pub fn steady_state(&mut self) -> Vec<(u64, Limit)> {
        let mut jobs = Vec::new();
        for flow in 0..self.flows.len() as u32 {
            if let Some(step) = self.plan_of(flow).handles.read {
                jobs.push(self.build_job((flow, 0, step), 0).0);
            }
        }
        let refs: Vec<&Job> = jobs.iter().collect();
        self.loaded_shares(&refs)
            .into_iter()
            .map(|s| {
                let limit = s.bound.map_or(Limit::None, |r| self.bulk.limit_of(r));
                (s.rate, limit)
            })
            .collect()
    }

    /// The transfer of the chain that begins with `inst`, and the key of its queue.
    fn build_job(&mut self, inst: Instance, t0: Ps) -> (Job, QueueKey) {
        let (flow, msg, first) = inst;
        let plan = self.plan_of(flow);
        let step = &plan.steps[first as usize];
        let (bytes, payload) = (step.bytes, step.payload);
        let mut uses: Vec<Use> = Vec::new();
        let mut stages = Vec::new();
        let mut window = None;
        let mut dram = 0u64;
        let mut count_dram = |fab: &Fabric, route: super::fabric::RouteId| {
            dram += fab.routes[route as usize]
                .iter()
                .filter(|&&c| channel::is_host_memory(&fab.channels[c as usize]))
                .count() as u64;
        };
        let reference;
        let key;
        // The first packet (or TLP): what its latency carries to the reference point.
        let first_bytes;
        match step.kind {
            StepKind::DmaRead { nic, read, .. } => {
                let (req, cpl, c) = self.charge_read(&mut uses, (flow, first), read, bytes);
                count_dram(self, cpl);
                window = Some((read.engine, read, self.read_rtt(flow, read)));
                let mtu = self.nic_spec(nic).mtu;
                let packet = mtu.min(bytes);
                first_bytes = packet;
                // The first packet's bytes at the NIC: its requests out, its completions back.
                let first_data = idle_transit(&self.specs(req), Unit::ReadRequest, 0, 1).0
                    + idle_transit_of(&self.specs(cpl), Unit::Completion, packet, c).1;
                let mut at = first_data + self.read_jitter(flow, read);
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
                    let s = &plan.steps[next as usize];
                    let r = self.step_route(flow, next);
                    let from = at;
                    match s.kind {
                        StepKind::NicTx { .. } | StepKind::NicRx { .. } => {
                            at += idle_transit(&self.specs(r), Unit::Packet, packet, 1).0;
                        }
                        StepKind::Wire { .. } => {
                            self.charge(
                                &mut uses,
                                (flow, next),
                                r,
                                Unit::Packet,
                                (mtu, mtu),
                                bytes,
                            );
                            at += idle_transit(&self.specs(r), Unit::Packet, packet, 1).0;
                        }
                        StepKind::DmaWrite { mps, .. } => {
                            write = Some((next, r, mps));
                            break;
                        }
                        ref k => unreachable!("{k:?} does not stream"),
                    }
                    stages.push(Stage {
                        step: next,
                        first_in: from,
                        first_out: at,
                        last_in: 0,
                        last_out: 0,
                    });
                    cur = next;
                }
                reference = stages.len() - 1;
                // Offsets of the steps up to the reference from its end.
                let ref_out = stages[reference].first_out as i64;
                for s in stages.iter_mut() {
                    s.last_out = s.first_out as i64 - ref_out;
                    s.last_in = s.first_in as i64 - ref_out;
                }
                if let Some((w, r, mps)) = write {
                    let wnic = match plan.steps[w as usize].kind {
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
                key = QueueKey::Flow(flow);
            }
            StepKind::Memcpy { copy, gpu, .. } | StepKind::KernelCopy { copy, gpu } => {
                let (lat, tlp) = match copy {
                    Copy::D2h { route, mps } => {
                        let r = self.route_of(flow, route);
                        self.charge(&mut uses, (flow, first), r, Unit::Write, (mps, mps), bytes);
                        count_dram(self, r);
                        let tlp = mps.min(bytes);
                        (idle_transit(&self.specs(r), Unit::Write, tlp, 1).0, mps)
                    }
                    Copy::H2d { read, commit } => {
                        let (req, cpl, c) = self.charge_read(&mut uses, (flow, first), read, bytes);
                        let commit = self.route_of(flow, commit);
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
                        window = Some((read.engine, read, self.read_rtt(flow, read)));
                        let lat = idle_transit(&self.specs(req), Unit::ReadRequest, 0, 1).0
                            + idle_transit(&self.specs(cpl), Unit::Completion, c.min(bytes), 1).0
                            + idle_transit(&self.specs(commit), Unit::Completion, c.min(bytes), 1)
                                .0
                            + self.read_jitter(flow, read);
                        (lat, c)
                    }
                };
                first_bytes = tlp.min(bytes);
                stages.push(Stage {
                    step: first,
                    first_in: 0,
                    first_out: lat,
                    last_in: -(lat as i64),
                    last_out: 0,
                });
                reference = 0;
                // A copy engine's copies queue in its direction; a kernel's stores (PXN) in a
                // queue of the GPU's SMs, beside its copy engines.
                key = QueueKey::Gpu {
                    engine: self.topo.gpu_engine(gpu.host, gpu.gpu),
                    h2d: matches!(copy, Copy::H2d { .. }),
                    sms: matches!(step.kind, StepKind::KernelCopy { .. }),
                };
            }
            ref k => unreachable!("{k:?} is not a bulk transfer"),
        }
        let mut demand = Demand::default();
        for u in &uses {
            // A server channel is a fluid resource (its rate), made when first used.
            let spec = &self.channels[u.channel as usize];
            if !spec.is_server() {
                continue;
            }
            let r = u.channel as Res;
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
        if let Some((engine, read, rtt)) = window {
            // Bytes in flight: the window's requests of MRRS; a transfer's weight is its round
            // trip (Little's law).
            let r = self.bulk.window_res(engine);
            let in_flight = self.bulk.windows[engine.index()] as u128 * read.mrrs as u128 * SCALE;
            self.bulk.fluid.set(r, in_flight, true);
            read_weight = Some(ReadWeight {
                engine,
                at: demand.uses.len(),
                idle_rtt: rtt.max(1),
                completions: read.mrrs.div_ceil(read.mps).max(1) as u32,
            });
            demand.uses.push((r, rtt.max(1) as u128));
        }
        // Every byte, the first packet's too, moves in the sharing, so that the transfers on a
        // link never carry more than its rate: the transfer joins it when its first packet
        // would start to arrive at its idle rate, and on idle links ends when it did.
        let arrival = (first_bytes as u128 * SCALE / idle_rate(&self.bulk.fluid, &demand)) as Ps;
        let latency = stages[reference].first_out.saturating_sub(arrival);
        let early = match (&read_weight, window) {
            (Some(rw), Some((_, read, _))) => {
                let in_flight = self.bulk.windows[rw.engine.index()] as u64 * read.mrrs;
                let round = bytes.min(in_flight).saturating_sub(first_bytes);
                self.first_round(&demand, rw.at, round).min(latency)
            }
            _ => 0,
        };
        let job = Job {
            inst: (flow, msg, first),
            stages,
            demand,
            uses,
            bytes,
            dram_crossings: dram,
            payload,
            t0,
            latency,
            early,
            queue: 0,
            state: State::Queued,
            remaining: bytes as u128 * SCALE,
            rate: 0,
            at: t0,
            resume_at: 0,
            bound: Limit::None,
            bound_by: Vec::new(),
            serial: 0,
            read: read_weight,
        };
        (job, key)
    }

    /// A transfer's first data reached its reference point: it joins the sharing.
    pub(super) fn bulk_ready(&mut self, id: usize, now: Ps, q: &mut Queue<Event>) {
        // A Send's first packet at the receiving NIC: without a posted receive it is refused
        // (RNR) and the transfer waits in its latency phase for the retry.
        let (flow, msg, _) = self.bulk.jobs[id].inst;
        if let Some(rq) = self.plan_of(flow).recv_queue
            && self.bulk.jobs[id].stages.iter().any(|s| s.step == rq.write)
            && self.rnr_gate(flow, msg, Held::Bulk(id), now).is_none()
        {
            return;
        }
        let job = &mut self.bulk.jobs[id];
        job.state = State::Active;
        job.at = now;
        self.bulk_progress(now);
        self.bulk.active.push(id);
        // A unit in service on one of its channels holds it back as it does the others.
        let held = self.bulk.jobs[id]
            .uses
            .iter()
            .map(|u| self.bulk.unit_until[u.channel as usize])
            .max()
            .unwrap_or(0);
        let job = &mut self.bulk.jobs[id];
        job.resume_at = job.resume_at.max(held);
        for k in 0..self.bulk.jobs[id].uses.len() {
            let c = self.bulk.jobs[id].uses[k].channel;
            // Once per channel however many of its uses are there (a job joins once).
            if !self.bulk.jobs[id].uses[..k].iter().any(|u| u.channel == c) {
                debug_assert!(!self.bulk.users(c).contains(&id));
                let b = &mut self.bulk;
                b.users_mut(c);
                let users = &mut b.user_lists[b.user_slot[c as usize] as usize - 1];
                users.jobs.push(id);
                users.count(&b.jobs[id], c, true);
            }
        }
        if let Some(rw) = self.bulk.jobs[id].read {
            self.bulk.window_users[rw.engine.index()].push(id);
        }
        self.bulk_solve_soon(&[id], now, q);
    }

    /// Re-solves the sharing groups of `seeds` once every event already due now has run: the
    /// transfers that start or end at one instant are shared out once, not once each. Nothing
    /// moves between two events of one instant, so the rates are those of a solve after each.
    fn bulk_solve_soon(&mut self, seeds: &[usize], now: Ps, q: &mut Queue<Event>) {
        if seeds.is_empty() {
            return;
        }
        if !self.bulk.share_due {
            self.bulk.share_due = true;
            q.schedule(now, Event::Share);
        }
        self.bulk.pending.extend_from_slice(seeds);
    }

    /// The pending solve is due.
    pub(super) fn bulk_share(&mut self, now: Ps, q: &mut Queue<Event>) {
        self.bulk.share_due = false;
        let seeds = std::mem::take(&mut self.bulk.pending);
        self.bulk_solve(&seeds, now, q);
    }

    /// Moves every active transfer's bytes up to `now` at its current rate.
    fn bulk_progress(&mut self, now: Ps) {
        let record = self.recorder.traffic;
        for &id in &self.bulk.active {
            let job = &mut self.bulk.jobs[id];
            let from = job.at.max(job.resume_at);
            job.at = now;
            if now <= from || job.rate == 0 {
                continue;
            }
            let moved = (job.rate as u128 * (now - from) as u128).min(job.remaining);
            job.remaining -= moved;
            // For the records: the whole payload bytes through after this stretch less those
            // through before it, so a transfer's records sum to its bytes however many
            // stretches it moves in.
            let payload = match record {
                true => {
                    let through = |left: u128| (job.bytes as u128 * SCALE - left) / SCALE;
                    (through(job.remaining) - through(job.remaining + moved)) as u64
                }
                false => 0,
            };
            let spent = u128::from(now - from);
            match job.bound_by.iter_mut().find(|b| b.0 == job.bound) {
                Some(b) => (b.1, b.2) = (b.1 + moved, b.2 + spent),
                None => job.bound_by.push((job.bound, moved, spent)),
            }
            for u in &job.uses {
                let wire = moved * u.weight / WEIGHT_ONE;
                self.bulk.wire_bytes[u.channel as usize] += wire;
                if record {
                    let plan = self.flows[job.inst.0 as usize].plan;
                    self.recorder.hops.push(Hop {
                        flow: job.inst.0,
                        msg: job.inst.1,
                        step: u.step,
                        train: job.serial,
                        channel: u.channel,
                        start: from,
                        end: now,
                        payload: if u.unit == Unit::ReadRequest {
                            0
                        } else {
                            payload
                        },
                        units: 0,
                        unit: u.unit,
                        what: plan.movement(u.step, u.phase),
                        wire: (wire / SCALE) as u64,
                    });
                }
            }
        }
    }

    /// New max-min rates for the active transfers that share a resource, directly or through
    /// others, with `seeds` (a transfer that started, or those that shared with one that
    /// ended), and the next end. Max-min sharing (progressive filling, the byte-fair
    /// refinement, the loaded round trips) decomposes over groups of transfers that share no
    /// resource: each group's rates are what a solve of every active transfer gives it, so
    /// the others keep theirs and a start or end costs what its group holds, not the fabric.
    fn bulk_solve(&mut self, seeds: &[usize], now: Ps, q: &mut Queue<Event>) {
        let group = self.sharing_group(seeds);
        let jobs: Vec<&Job> = group.iter().map(|&id| &self.bulk.jobs[id]).collect();
        let shares = self.loaded_shares(&jobs);
        for (k, s) in shares.into_iter().enumerate() {
            let id = group[k];
            let limit = s.bound.map_or(Limit::None, |r| self.bulk.limit_of(r));
            self.bulk.set_rate(id, s.rate.max(1), limit);
        }
        self.bulk_schedule(now, q);
    }

    /// The active transfers reachable from `seeds` through shared resources (links, memories,
    /// read windows), in the order of the active list (the order a solve of all of them sees).
    fn sharing_group(&mut self, seeds: &[usize]) -> Vec<usize> {
        let b = &mut self.bulk;
        b.solves += 1;
        let mark = b.solves;
        if b.reached.len() < b.jobs.len() {
            b.reached.resize(b.jobs.len(), 0);
        }
        let mut stack: Vec<usize> = Vec::new();
        for &id in seeds {
            if b.jobs[id].state == State::Active && b.reached[id] != mark {
                b.reached[id] = mark;
                stack.push(id);
            }
        }
        let mut found = stack.len();
        // Each channel's and window's users are read once per solve.
        let mut reach = |users: &[usize], reached: &mut [u64], stack: &mut Vec<usize>| {
            for &o in users {
                if reached[o] != mark {
                    reached[o] = mark;
                    stack.push(o);
                    found += 1;
                }
            }
        };
        while let Some(id) = stack.pop() {
            let job = &b.jobs[id];
            for u in &job.uses {
                let c = u.channel as usize;
                if b.channel_reached[c] != mark {
                    b.channel_reached[c] = mark;
                    let users = users_in(&b.user_slot, &b.user_lists, u.channel);
                    reach(users, &mut b.reached, &mut stack);
                }
            }
            if let Some(rw) = job.read
                && b.window_reached[rw.engine.index()] != mark
            {
                b.window_reached[rw.engine.index()] = mark;
                reach(
                    &b.window_users[rw.engine.index()],
                    &mut b.reached,
                    &mut stack,
                );
            }
        }
        if found == b.active.len() {
            return b.active.clone();
        }
        b.active
            .iter()
            .copied()
            .filter(|&id| b.reached[id] == mark)
            .collect()
    }

    /// Max-min fair rates of `jobs`, with each read's window weight its round trip under the
    /// load the others put on its routes: solved with idle round trips, then
    /// [`LOADED_ROUNDS`] times with the queueing each solution implies (a fixed point that
    /// settles in two or three rounds; the last solution is used as it is, so every capacity
    /// still holds).
    fn loaded_shares(&self, jobs: &[&Job]) -> Vec<Share> {
        let idle: Vec<&Demand> = jobs.iter().map(|j| &j.demand).collect();
        let mut shares = self.bulk.fluid.solve(&idle);
        if jobs.len() < 2 {
            return shares;
        }
        // Every transfer's use of every channel: (channel, transfer, use), by channel, then
        // transfer, then use; the same in every round (only the loads change).
        let mut on: Vec<(ChannelId, usize, usize)> = jobs
            .iter()
            .enumerate()
            .flat_map(|(k, j)| {
                j.uses
                    .iter()
                    .enumerate()
                    .map(move |(x, u)| (u.channel, k, x))
            })
            .collect();
        on.sort_unstable();
        // Per channel: the one read window every transfer on it reads under, if they all do
        // (then none of them waits for another: the window already holds them).
        let mut one_window: Vec<(ChannelId, Option<ReadEngineId>)> = Vec::new();
        for run in on.chunk_by(|a, b| a.0 == b.0) {
            let engine = jobs[run[0].1].read.map(|r| r.engine);
            let same = engine.is_some_and(|e| run.iter().all(|l| same_window(jobs[l.1], e)));
            one_window.push((run[0].0, engine.filter(|_| same)));
        }
        if !reads_meet_other_windows(jobs, &one_window) {
            return shares;
        }
        let mut demands: Vec<Demand> = jobs.iter().map(|j| j.demand.clone()).collect();
        let solve = |d: &[Demand]| self.bulk.fluid.solve(&d.iter().collect::<Vec<_>>());
        let mut loads: Vec<(ChannelId, usize, Load)> = Vec::with_capacity(on.len());
        let mut met: Vec<(usize, Load)> = Vec::new();
        let mut others: Vec<Load> = Vec::new();
        let mut before: (Unit, Vec<usize>) = (Unit::Control, Vec::new());
        for _ in 0..LOADED_ROUNDS {
            // Every transfer's load on every channel it uses: (channel, transfer, load).
            loads.clear();
            loads.extend(on.iter().map(|&(c, k, x)| {
                let u = &jobs[k].uses[x];
                let cap = self.channels[c as usize].rate.bps() as f64 / 8.0;
                let bytes = shares[k].rate as f64 * u.weight as f64 / WEIGHT_ONE as f64;
                let load = Load {
                    rho: bytes / cap,
                    unit_ps: u.unit_wire as f64 / cap * PS_PER_S as f64,
                    tandem: false,
                };
                (c, k, load)
            }));
            let mut changed = false;
            for (k, j) in jobs.iter().enumerate() {
                let Some(rw) = j.read else { continue };
                let mut extra = 0.0;
                // The transfers met on the previous channel of the same route (tandem waits).
                before.0 = Unit::Control;
                before.1.clear();
                for u in j.uses.iter().filter(|u| u.step == j.inst.2 && u.phase == 0) {
                    let units = match u.unit {
                        Unit::ReadRequest => 1,
                        Unit::Completion => rw.completions,
                        _ => continue,
                    };
                    let w = one_window.partition_point(|o| o.0 < u.channel);
                    if one_window.get(w).is_some_and(|o| o.1 == Some(rw.engine)) {
                        before.0 = u.unit;
                        before.1.clear();
                        continue;
                    }
                    let from = loads.partition_point(|l| l.0 < u.channel);
                    met.clear();
                    met.extend(
                        loads[from..]
                            .iter()
                            .take_while(|l| l.0 == u.channel)
                            .filter(|l| l.1 != k && !same_window(jobs[l.1], rw.engine))
                            .map(|l| (l.1, l.2)),
                    );
                    others.clear();
                    others.extend(met.iter().map(|&(o, l)| Load {
                        tandem: before.0 == u.unit && before.1.contains(&o),
                        ..l
                    }));
                    before.0 = u.unit;
                    before.1.clear();
                    before.1.extend(met.iter().map(|m| m.0));
                    let cap = self.channels[u.channel as usize].rate.bps() as f64 / 8.0;
                    extra += queueing::wait_ps(
                        &others,
                        units,
                        u.unit_wire as f64 / cap * PS_PER_S as f64,
                    );
                }
                let weight = rw.idle_rtt as u128 + extra.round() as u128;
                if demands[k].uses[rw.at].1 != weight {
                    demands[k].uses[rw.at].1 = weight;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
            shares = solve(&demands);
        }
        shares
    }

    /// Schedules the earliest end among the active transfers (one event for all of them).
    fn bulk_schedule(&mut self, now: Ps, q: &mut Queue<Event>) {
        self.bulk.version += 1;
        let next = self
            .bulk
            .active
            .iter()
            .map(|&id| end_of(&self.bulk.jobs[id]))
            .min();
        if let Some(at) = next {
            q.schedule(at.max(now), Event::Fluid(self.bulk.version));
        }
    }

    /// The next end is due: finish the transfers that are done, share again.
    pub(super) fn fluid_event(&mut self, version: u64, now: Ps, q: &mut Queue<Event>) {
        if version != self.bulk.version {
            return;
        }
        self.bulk_progress(now);
        let done: Vec<usize> = self
            .bulk
            .active
            .iter()
            .copied()
            .filter(|&id| self.bulk.jobs[id].remaining == 0)
            .collect();
        if done.is_empty() {
            self.bulk_schedule(now, q);
            return;
        }
        self.bulk.active.retain(|id| !done.contains(id));
        // Those that shared a resource with an ended transfer get new rates. A resource's users
        // are taken once: at a later ended transfer they are the same less those ended before
        // (n transfers ending together on shared links listed n x n of them).
        let mut neighbours: Vec<usize> = Vec::new();
        let mut taken = std::collections::BTreeSet::new();
        for &id in &done {
            for k in 0..self.bulk.jobs[id].uses.len() {
                let c = self.bulk.jobs[id].uses[k].channel;
                let b = &mut self.bulk;
                let users = &mut b.user_lists[b.user_slot[c as usize] as usize - 1];
                if let Some(at) = users.jobs.iter().position(|&j| j == id) {
                    users.jobs.remove(at);
                    users.count(&b.jobs[id], c, false);
                }
                if taken.insert((c, false)) {
                    neighbours.extend(self.bulk.users(c));
                }
            }
            if let Some(rw) = self.bulk.jobs[id].read {
                self.bulk.window_users[rw.engine.index()].retain(|&j| j != id);
                if taken.insert((rw.engine.0, true)) {
                    neighbours.extend(&self.bulk.window_users[rw.engine.index()]);
                }
            }
        }
        for &id in &done {
            self.bulk_done(id, now, q);
        }
        self.bulk_solve_soon(&neighbours, now, q);
        if !self.bulk.share_due {
            // No one shared with them: the others' rates stand; only the next end moves.
            self.bulk_schedule(now, q);
        }
    }

    /// A unit of `service` reaches channel `c` at `now`, where bulk transfers may be moving:
    /// how long it holds the channel's serialiser, and how long its bytes take there among
    /// the transfers' (its record). TLP by TLP it would wait in the link's queue behind at
    /// most one of their units, and they would wait its service and catch up in the room they
    /// leave. Where that room carries the unit within the wait a queue would give it (their
    /// largest unit there, on top of its own service), it goes at the rate they leave and they
    /// keep theirs: a doorbell or CQE on a PCIe link under a stream bound by the wire, or in
    /// the read requests' direction. Where no transfer is bound by the link but the room is
    /// smaller, the unit still leaves after its service and that wait, and the transfers still
    /// keep their rates: their units it delayed catch up in the room, which the unit's bytes
    /// take until they are carried ([`Event::UnitGone`]), so that a transfer that speeds up
    /// meanwhile cannot take it. Only on a link that binds them (saturated) do they wait
    /// while it is serialised, at the rate such rooms leave. Either way the link never
    /// carries more than its rate, and a transfer that starts meanwhile waits for the unit.
    pub(super) fn unit_beside_bulk(
        &mut self,
        c: ChannelId,
        (src, now): (channel::Source, Ps),
        service: Ps,
        q: &mut Queue<Event>,
    ) -> (Ps, Ps) {
        let spec = &self.channels[c as usize];
        let cap = self.bulk.fluid.capacity[c as usize];
        let none = self.bulk.channel_users(c).is_none_or(|u| u.jobs.is_empty());
        let (load, queued, bound) = match self.bulk.channel_users(c) {
            Some(users) if !none => {
                let queued = users
                    .largest_other(src)
                    .map_or(0, |wire| spec.rate.tx_time(wire));
                (users.load, queued, users.bound > 0)
            }
            _ => (0, 0, false),
        };
        // The link's own rate: its capacity with the rooms of units still being carried.
        let full = cap + self.bulk.reserved[c as usize];
        // Serialised in what the rooms of units before it leave (all of the link without them).
        let serialised = match full == cap {
            true => service,
            false => (service as u128 * full).div_ceil(cap.max(1)) as Ps,
        };
        if none {
            let hold = serialised;
            let held = &mut self.bulk.unit_until[c as usize];
            *held = (*held).max(now + hold);
            return (hold, hold);
        }
        let free = cap.saturating_sub(load);
        let room = (free > 0).then(|| (service as u128 * full).div_ceil(free) as Ps);
        // Beside them within a queue's wait, or in the room of a link that binds none of them
        // (one they keep all but saturated binds them: a transfer bound elsewhere can fill it
        // to the last rounding of its rate).
        let beside = |room: &Ps| *room <= service + queued;
        let roomy = |room: &Ps| beside(room) || (!bound && *room <= ROOM_SERVICES * service);
        if let Some(room) = room.filter(roomy) {
            // Within a queue's wait it leaves when its room has carried it. Otherwise it finds
            // one of their units in service as often as the link is busy with them, and waits
            // on average half of it (a random arrival's residual).
            let hold = match beside(&room) {
                true => room,
                false => service + (queued as u128 * load / full.max(1) / 2) as Ps,
            };
            if room > service {
                // Its share of the link's rate while its room carries it (no more than
                // `free`), so that a transfer that speeds up meanwhile cannot take it.
                let reserve = (service as u128 * full).div_ceil(room as u128).min(free);
                self.bulk.fluid.capacity[c as usize] -= reserve;
                self.bulk.reserved[c as usize] += reserve;
                self.bulk.reserves.push((c, reserve, now + room));
                // One wake-up per channel, at the earliest of its rooms' ends.
                let at = &mut self.bulk.gone_at[c as usize];
                if *at == 0 || now + room < *at {
                    *at = now + room;
                    q.schedule(now + room, Event::UnitGone(c));
                }
            }
            let held = &mut self.bulk.unit_until[c as usize];
            *held = (*held).max(now + hold);
            return (hold, room);
        }
        // They wait while it is serialised.
        let hold = serialised;
        let held = &mut self.bulk.unit_until[c as usize];
        *held = (*held).max(now + hold);
        self.bulk_progress(now);
        for &id in users_in(&self.bulk.user_slot, &self.bulk.user_lists, c) {
            let job = &mut self.bulk.jobs[id];
            job.resume_at = job.resume_at.max(now + hold);
        }
        self.bulk_schedule(now, q);
        (hold, hold)
    }

    /// The rooms of units carried on channel `c` until now go back to its transfers, which a
    /// solve shares out where the link binds one of them.
    pub(super) fn unit_gone(&mut self, c: ChannelId, now: Ps, q: &mut Queue<Event>) {
        self.bulk.gone_at[c as usize] = 0;
        let (mut back, mut next) = (0, Ps::MAX);
        self.bulk.reserves.retain(|&(ch, reserve, until)| {
            let gone = ch == c && until <= now;
            back += if gone { reserve } else { 0 };
            if ch == c && !gone {
                next = next.min(until);
            }
            !gone
        });
        if next != Ps::MAX {
            self.bulk.gone_at[c as usize] = next;
            q.schedule(next, Event::UnitGone(c));
        }
        if back == 0 {
            return;
        }
        self.bulk.fluid.capacity[c as usize] += back;
        self.bulk.reserved[c as usize] -= back;
        let users = self.bulk.users(c);
        if users
            .iter()
            .any(|&id| self.bulk.jobs[id].bound == Limit::Channel(c))
        {
            let seeds = users.to_vec();
            self.bulk_progress(now);
            self.bulk_solve_soon(&seeds, now, q);
        }
    }

    /// A transfer's last byte passed its reference point at `now`: its steps get their records
    /// and milestones, and the next transfer of its queue may go.
    fn bulk_done(&mut self, id: usize, now: Ps, q: &mut Queue<Event>) {
        // The transfer is over: its lists move out here (nothing reads a done transfer's stages,
        // uses or demand again), so the memory of a long stream is its transfers in flight.
        if let Some(rw) = &self.bulk.jobs[id].read {
            self.bulk.window_jobs[rw.engine.index()] -= 1;
        }
        let job = {
            let j = &mut self.bulk.jobs[id];
            j.state = State::Done;
            Job {
                stages: std::mem::take(&mut j.stages),
                demand: std::mem::take(&mut j.demand),
                uses: std::mem::take(&mut j.uses),
                bound_by: std::mem::take(&mut j.bound_by),
                ..*j
            }
        };
        let (flow, msg, _) = job.inst;
        if job.payload {
            self.bulk.host_mem_bytes += job.bytes * job.dram_crossings;
            self.flows[flow as usize].msgs[msg as usize].host_mem_bytes +=
                job.bytes * job.dram_crossings;
        }
        for &(limit, _, time) in &job.bound_by {
            match self.bulk.limits.iter_mut().find(|l| l.0 == limit) {
                Some(l) => l.1 += time,
                None => self.bulk.limits.push((limit, time)),
            }
            let mine = &mut self.flows[flow as usize].limits;
            match mine.iter_mut().find(|l| l.0 == limit) {
                Some(l) => l.1 += time,
                None => mine.push((limit, time)),
            }
        }
        // The step holding the limit that bound the most bytes is where this transfer's
        // stages show it waiting (its breakdown); the results' bottleneck column sums the
        // time each limit bound across transfers (`limits`), so a limit met briefly by a fast
        // transfer does not outweigh the one a stream waits on.
        let bottleneck = job
            .bound_by
            .iter()
            .max_by_key(|b| b.1)
            .map_or(job.stages[0].step, |b| self.limit_step(&job, b.0));
        let plan = self.plan_of(flow);
        let at = |off: i64| (now as i64 + off).max(0) as Ps;
        for s in &job.stages {
            let inst = (flow, msg, s.step);
            let start = job.t0 + s.first_in;
            let first_out = job.t0 + s.first_out;
            let end = at(s.last_out).max(first_out);
            let last_in = if s.step == bottleneck {
                start
            } else {
                at(s.last_in).clamp(start, end)
            };
            let kind = &plan.steps[s.step as usize].kind;
            match kind {
                StepKind::Memcpy { .. } | StepKind::KernelCopy { .. } => {}
                _ => {
                    self.step_state(inst).times = Some(StageTimes {
                        start,
                        first_out,
                        last_in,
                        end,
                    });
                }
            }
            let st = self.step_state(inst);
            st.bytes_in = job.bytes;
            st.bytes_out = job.bytes;
        }
        // The receiving NIC's scatter descriptor, when the first data arrived.
        if let Some(w) = job
            .stages
            .iter()
            .find(|s| matches!(plan.steps[s.step as usize].kind, StepKind::DmaWrite { .. }))
        {
            self.scatter_descriptor((flow, msg, w.step), job.t0 + w.first_in);
        }
        // Milestones, in chain order, never before now.
        for s in &job.stages {
            let inst = (flow, msg, s.step);
            match plan.steps[s.step as usize].kind {
                StepKind::Memcpy { .. } | StepKind::KernelCopy { .. } => {
                    self.copy_done(inst, now, q)
                }
                _ => {
                    self.fire(inst, Milestone::LastIn, at(s.last_in).max(now), now, q);
                    self.fire(inst, Milestone::Done, at(s.last_out).max(now), now, q);
                }
            }
        }
        // The next transfer of the queue, whose latency overlapped this one.
        let qd = &mut self.bulk.queues[job.queue].1;
        qd.pop_front();
        if let Some(&next) = qd.front() {
            let n = &mut self.bulk.jobs[next];
            n.state = State::Latency;
            let ready = (n.t0 + n.latency).max(now);
            q.schedule(ready, Event::BulkReady(next as u32));
        }
    }

    /// The step of a transfer's chain that holds `limit`.
    fn limit_step(&self, job: &Job, limit: Limit) -> StepId {
        match limit {
            Limit::Channel(c) => job
                .uses
                .iter()
                .find(|u| u.channel == c)
                .map_or(job.stages[0].step, |u| u.step),
            Limit::Window(_) | Limit::None => job.stages[0].step,
        }
    }

    /// Wire bytes put on channel `c` by units and transfers.
    pub fn channel_wire_bytes(&self, c: ChannelId) -> u128 {
        self.servers[c as usize].wire_bytes + self.bulk.wire_bytes[c as usize] / SCALE
    }
}

/// A transfer's rate alone on idle links: its tightest resource, a link's rate over the wire
/// bytes it puts there per payload byte or a read window's bytes over its round trip (bytes
/// per second, at least 1; unbounded where it uses none).
fn idle_rate(fluid: &Fluid, demand: &Demand) -> u128 {
    (demand.uses.iter())
        .filter(|u| u.1 > 0)
        .map(|&(r, weight)| fluid.capacity[r as usize] / weight)
        .min()
        .unwrap_or(u128::MAX)
        .max(1)
}

/// When an active transfer's last byte passes its reference point at its current rate.
fn end_of(job: &Job) -> Ps {
    let from = job.at.max(job.resume_at);
    from + job.remaining.div_ceil(job.rate.max(1) as u128) as Ps
}

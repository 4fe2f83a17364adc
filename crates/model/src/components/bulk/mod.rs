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
//!
//! This module keeps the transfers and their lifecycle (start, join the sharing, progress,
//! end, records); [`build`] makes a transfer of a plan's steps, [`solve`] gives a sharing group
//! its max-min rates, [`beside`] lets a unit cross a link they use.

mod beside;
mod build;
mod solve;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::Event;
use super::channel::{self, idle_transit, idle_transit_of};
use super::fabric::{Fabric, StageTimes};
use super::fluid::{self, Demand, Fluid, Res, Share, WEIGHT_ONE};
use super::paged::Paged;
use super::queueing::{self, Load};
use super::recv_queue::Held;
use super::steps::Instance;
use crate::engine::Queue;
use crate::plan::{Copy, Milestone, ReadSpec, StepId, StepKind};
use crate::record::Hop;
use crate::topology::{ChannelId, ChannelSpec, ReadEngineId, Topology, Unit};
use crate::units::{PS_PER_S, Ps};
use beside::ChannelUsers;

/// The queue a transfer waits in behind the transfers before it: its flow's send queue, or a
/// GPU's copy engine in one direction (or, for a kernel's stores, the SMs storing one flow's
/// data).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum QueueKey {
    /// A flow's send queue (its NIC transfers go one after another): its first QP's.
    Flow(u32),
    /// The send queue of another QP `k` (1..Q) of a flow with `qps_per_connection` Q: the
    /// NIC serves its QPs side by side, each in order. (The first QP keeps `Flow`, so one QP
    /// queues exactly as before the key existed.)
    FlowQp(u32, u32),
    /// A GPU's copies: its copy engine (by read-engine index) in one direction, or (`sms`:
    /// the flow) its SMs' stores of one flow. A copy engine copies one request after another;
    /// NCCL's kernel runs each channel, and each peer of a grouped send, in thread blocks of
    /// their own, so the stores of different flows (a ring's channels, an all-to-all's
    /// peers, PXN's relays) go side by side, sharing the links, each flow's in order.
    Gpu {
        engine: ReadEngineId,
        h2d: bool,
        sms: Option<u32>,
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

/// One bulk transfer.
#[derive(Clone, Debug)]
pub struct Job {
    inst: Instance,
    stages: Vec<Stage>,
    /// Shared with its flow's other transfers of the same chain ([`build::Shape`]).
    demand: std::rc::Rc<Demand>,
    /// The channels it uses (the window is only in `demand`), shared as `demand` is.
    uses: std::rc::Rc<[Use]>,
    /// Its channels, each once, in the order of their first use, with the indices of their
    /// uses in `uses` (a transfer joins and leaves a channel's users once).
    channels: std::rc::Rc<[(ChannelId, Box<[u32]>)]>,
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
    /// A NIC transfer's head: the wait of its first packet to be whole at the NIC
    /// ([`build::Shape`]'s `head`), taken out of `latency` and moved in the sharing
    /// ahead of its bytes, as bytes that count on no link's traffic. Alone on its links it ends
    /// when it did; beside others it takes as many times longer as the transfers its first
    /// packet's completions interleave with ([`Fabric::share_head`]), as TLP by TLP (issue
    /// #27: N flows of one packet each ended up to 18% sooner in bulk than TLP by TLP, and
    /// sooner than one byte less). Between joining and the solve that shares it: what of it is
    /// still to go.
    head: Ps,
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
    /// Its `rate` and `bound`, set before it joins, are those of the transfer before it in its
    /// queue, which ended as this one joined ([`Fabric::hands_over`]).
    inherits: bool,
    /// When it joined the sharing (its span's start, [`Fabric::share_wait`]).
    joined: Ps,
    /// Payload moved (1e-12 bytes) not yet counted on its channels' wire bytes (lazily moved
    /// transfers count them once, at their end: [`Bulks::flush_wire`]).
    unwired: u128,
    /// Its window weight (round trip under load) at its last solve, 0 if none: where solves
    /// start warm ([`solve::Rounds::Warm`]) the next one starts from it.
    rtt: u64,
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
    /// Per flow and first step: the shape of its transfers of that chain, worked out at its
    /// first message (the rest of a stream's transfers copy it).
    shapes: std::collections::HashMap<(u32, StepId, u32), std::rc::Rc<build::Shape>>,
    /// Slots of `jobs` whose transfers are done, for the next transfers to take: a stream's
    /// transfers take the memory of those in flight, not one slot per message.
    free_jobs: Vec<usize>,
    active: Vec<usize>,
    queues: Vec<(QueueKey, VecDeque<usize>)>,
    queue_index: std::collections::HashMap<QueueKey, usize>,
    /// Active transfers on each channel (a unit serialised there goes beside them or makes
    /// them wait): per channel,
    /// 1 + its list's index in `user_lists`, 0 while no transfer has used it.
    user_slot: Paged<u32>,
    user_lists: Vec<ChannelUsers>,
    /// Active transfers reading under each read window (by engine): with `users`, who shares
    /// a resource with whom, so that a start or an end re-solves only the transfers it can
    /// change (a server channel's resource has the channel's users).
    window_users: Vec<Vec<usize>>,
    /// Transfers started and not done under each read window, active or not yet.
    window_jobs: Vec<u32>,
    /// Per transfer: the solve that last reached it (a visited mark without clearing).
    reached: Vec<u64>,
    /// Transfers whose groups the pending solve will share out ([`Event::Share`]), and when
    /// it is due (now, or later where [`crate::components::Sharing`] batches re-solves).
    pending: Vec<usize>,
    share_at: Option<Ps>,
    /// The pending solve comes after the instant that asked for it (transfers must first
    /// move up to it at their old rates).
    share_late: bool,
    /// Whether re-solves are batched ([`Fabric::lazy`]): from the first time
    /// [`crate::components::Sharing::exact_below`] transfers are in flight to the end of the
    /// run. Not while that many are in flight at each instant: a run whose transfers hover
    /// about the threshold (a two-node ring all-reduce's 256 flows) switched between the two at
    /// every few events, and paid an exact solve of its whole group at each start and end of
    /// the stretches below it (4 GiB: 61 s instead of 18).
    batching: bool,
    /// Per channel and per read window: the solve that last read its users (or the end of
    /// transfers that last took them, [`Fabric::fluid_event`]).
    channel_reached: Paged<u64>,
    window_reached: Vec<u64>,
    solves: u64,
    /// The active transfers' ends (when each one's last byte passes at its rate), earliest
    /// first: an entry whose transfer has since changed rate or ended is passed over
    /// ([`Bulks::next_end`]), so the next end costs a heap operation, not a scan of every
    /// transfer in flight.
    ends: BinaryHeap<Reverse<(Ps, usize)>>,
    /// The loaded rounds' table of uses by channel ([`solve::ByChannel`]).
    by_channel: std::cell::RefCell<solve::ByChannel>,
    /// Until when a unit holds each channel (a transfer that starts meanwhile waits too).
    unit_until: Paged<Ps>,
    /// Per channel, the units carried beside transfers in their room: (the capacity their
    /// bytes take there, until when). Few at a time on a channel: each lasts while its link
    /// catches up; kept per channel, as a unit's end looks at its own channel's only (a list
    /// of every channel's made each end cost every unit in flight: 16,256 flows on NCCL's
    /// host path held thousands).
    reserves: Paged<Vec<(u128, Ps)>>,
    /// Per channel: the capacity those units take there now (the sum of its `reserves`).
    reserved: Paged<u128>,
    /// Per channel: when its next [`Event::UnitGone`] is due (0: none).
    gone_at: Paged<Ps>,
    version: u64,
    /// Payload bytes the transfers moved through host DRAM.
    pub host_mem_bytes: u64,
    /// Wire bytes the transfers put on each channel, in 1e-12 bytes.
    pub wire_bytes: Paged<u128>,
    /// Time each limit bound a transfer while it moved, summed over the transfers, in
    /// picoseconds: a limit that binds many transfers for long (a shared link) weighs more
    /// than one a fast transfer meets briefly, however many bytes that one moves.
    pub limits: Vec<(Limit, u128)>,
    /// Per limit (its [`Bulks::limit_index`]): its place in `limits`, plus one (0: not yet
    /// there), so a done transfer adds its time in constant time however many limits bound.
    limit_slot: Paged<u32>,
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
            shapes: std::collections::HashMap::new(),
            free_jobs: Vec::new(),
            active: Vec::new(),
            queues: Vec::new(),
            queue_index: std::collections::HashMap::new(),
            user_slot: Paged::new(channels),
            user_lists: Vec::new(),
            window_users: vec![Vec::new(); windows.len()],
            window_jobs: vec![0; windows.len()],
            reached: Vec::new(),
            pending: Vec::new(),
            share_at: None,
            share_late: false,
            channel_reached: Paged::new(channels),
            window_reached: vec![0; windows.len()],
            solves: 0,
            batching: false,
            ends: BinaryHeap::new(),
            by_channel: std::cell::RefCell::new(solve::ByChannel::new(channels)),
            unit_until: Paged::new(channels),
            reserves: Paged::new(channels),
            reserved: Paged::new(channels),
            gone_at: Paged::new(channels),
            version: 0,
            host_mem_bytes: 0,
            wire_bytes: Paged::new(channels),
            limits: Vec::new(),
            limit_slot: Paged::new(channels + windows.len() + 1),
        }
    }

    /// Where limit `l` is numbered in [`Bulks::limit_slot`]: as its fluid resource
    /// ([`Bulks::limit_of`]'s inverse), `None` after every resource.
    fn limit_index(&self, l: Limit) -> usize {
        match l {
            Limit::Channel(c) => c.index(),
            Limit::Window(e) => self.window_res(e) as usize,
            Limit::None => self.channels + self.windows.len(),
        }
    }

    /// Adds `time` to the time limit `l` bound a transfer (in first-bound order).
    fn add_limit_time(&mut self, l: Limit, time: u128) {
        let i = self.limit_index(l);
        match self.limit_slot[i] {
            0 => {
                self.limits.push((l, time));
                self.limit_slot[i] = self.limits.len() as u32;
            }
            slot => self.limits[slot as usize - 1].1 += time,
        }
    }

    /// The limit fluid resource `r` stands for.
    fn limit_of(&self, r: Res) -> Limit {
        match (r as usize).checked_sub(self.channels) {
            None => Limit::Channel(ChannelId(r)),
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
        if self.user_slot[c.index()] == 0 {
            self.user_lists.push(ChannelUsers::default());
            self.user_slot[c.index()] = self.user_lists.len() as u32;
        }
        &mut self.user_lists[self.user_slot[c.index()] as usize - 1]
    }

    /// Channel `c`'s active transfers with their aggregates (`None` before any used it).
    fn channel_users(&self, c: ChannelId) -> Option<&ChannelUsers> {
        match self.user_slot[c.index()] {
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
        for u in job.uses.iter() {
            let s = self.user_slot[u.channel.index()];
            debug_assert!(s > 0, "an active transfer is on its channels' lists");
            let users = &mut self.user_lists[s as usize - 1];
            users.load = users.load - job.rate as u128 * u.weight + rate as u128 * u.weight;
        }
        for (limit, sign) in [(job.bound, false), (bound, true)] {
            if let Limit::Channel(c) = limit
                && job.uses.iter().any(|u| u.channel == c)
            {
                let users = &mut self.user_lists[self.user_slot[c.index()] as usize - 1];
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

    /// Counts the payload transfer `id` moved and did not count yet on its channels' wire
    /// bytes.
    fn flush_wire(&mut self, id: usize) {
        let job = &mut self.jobs[id];
        let moved = std::mem::take(&mut job.unwired);
        if moved > 0 {
            for u in job.uses.iter() {
                self.wire_bytes[u.channel.index()] += moved * u.weight / WEIGHT_ONE;
            }
        }
    }

    /// Every transfer's uncounted wire bytes (the end of a run).
    pub(super) fn flush_all_wire(&mut self) {
        for id in 0..self.jobs.len() {
            self.flush_wire(id);
        }
    }

    /// Notes transfer `id`'s end at its rate now in the heap of ends (its old entries go
    /// stale). The heap is rebuilt from the active transfers when stale entries outnumber
    /// them, so it holds O(active) entries.
    fn note_end(&mut self, id: usize) {
        let end = end_of(&self.jobs[id]);
        if end != Ps::MAX {
            self.ends.push(Reverse((end, id)));
        }
        if self.ends.len() > 2 * self.active.len() + 1024 {
            let jobs = &self.jobs;
            let live = (self.active.iter())
                .map(|&id| Reverse((end_of(&jobs[id]), id)))
                .filter(|e| e.0.0 != Ps::MAX);
            self.ends = live.collect();
        }
    }

    /// The earliest end among the active transfers (None: none has a rate), passing over
    /// stale entries of the heap of ends. Every active transfer has an entry at or before its
    /// end: a new rate notes its end ([`Bulks::note_end`]); a pause only moves it later, and
    /// its entry, met here, is put back at the later end.
    fn next_end(&mut self) -> Option<Ps> {
        while let Some(&Reverse((at, id))) = self.ends.peek() {
            let job = &self.jobs[id];
            let end = end_of(job);
            if job.state == State::Active && end == at {
                return Some(at);
            }
            self.ends.pop();
            // A pause moves an end later without an entry of its own: it is put back here.
            if job.state == State::Active && end > at && end != Ps::MAX {
                self.ends.push(Reverse((end, id)));
            }
        }
        None
    }

    /// Channel resource `r`'s capacity with the rooms of units it carries given back: its
    /// rate, fixed once a transfer first used it.
    fn full_capacity(&self, r: Res) -> u128 {
        self.fluid.capacity[r as usize] + self.reserved[r as usize]
    }

    /// A transfer of `demand`'s tightest channel with its weight there: the one whose rate
    /// (a unit's room given back) over that weight is least. No solve gives the transfers
    /// whose tightest channel it is more than its rate there, and the answer is the same at
    /// the transfer's start and end (channel rates are fixed; a read window's bytes in
    /// flight follow the reads under it, so a window is not taken). None where it uses no
    /// channel.
    fn tightest(&self, demand: &Demand) -> Option<Tight> {
        (demand.uses.iter())
            .filter(|u| u.1 > 0 && (u.0 as usize) < self.channels)
            .map(|&(channel, weight)| Tight {
                channel,
                weight,
                rate: self.full_capacity(channel),
            })
            .min_by_key(|t| t.rate / t.weight)
    }

    /// Whether channel `c` (of spec `spec`) is a memory its transfers cannot saturate
    /// ([`Fabric::slack_memory`]): grouped by their tightest channel, those of one group
    /// put on it at most that channel's rate times their largest ratio of weights here and
    /// there, and the sum ([`ChannelUsers::most`]) is below its capacity.
    fn slack(&self, c: ChannelId, spec: &ChannelSpec) -> bool {
        channel::is_memory(spec)
            && (self.channel_users(c)).is_some_and(|u| u.most < self.fluid.capacity[c.index()])
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
fn users_in<'a>(slot: &Paged<u32>, lists: &'a [ChannelUsers], c: ChannelId) -> &'a [usize] {
    match slot[c.index()] {
        0 => &[],
        s => &lists[s as usize - 1].jobs,
    }
}

/// A transfer's tightest channel ([`Bulks::tightest`]): the resource, the transfer's weight
/// there and its rate (capacity, a unit's room given back).
#[derive(Clone, Copy, Debug)]
pub(super) struct Tight {
    channel: Res,
    weight: u128,
    rate: u128,
}

/// Picoseconds-per-second scale of the remaining bytes.
const SCALE: u128 = PS_PER_S as u128;

impl Fabric<'_> {
    /// Whether a step of `bytes` moves as a bulk transfer.
    pub(super) fn is_bulk(&self, bytes: u64) -> bool {
        !self.opts.tlp_granularity && bytes > self.opts.coalesce_above
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
        let id = match self.bulk.free_jobs.pop() {
            Some(id) => {
                self.bulk.jobs[id] = job;
                id
            }
            None => {
                self.bulk.jobs.push(job);
                self.bulk.jobs.len() - 1
            }
        };
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
                jobs.push(self.build_job(Instance::new(flow, 0, step), 0).0);
            }
        }
        let refs: Vec<&Job> = jobs.iter().collect();
        (self.loaded_shares(&refs, solve::Rounds::Cold, None).0)
            .into_iter()
            .map(|s| {
                let limit = s.bound.map_or(Limit::None, |r| self.bulk.limit_of(r));
                (s.rate, limit)
            })
            .collect()
    }

    /// A transfer's first data reached its reference point: it joins the sharing.
    pub(super) fn bulk_ready(&mut self, id: usize, now: Ps, q: &mut Queue<Event>) {
        // A Send's first packet at the receiving NIC: without a posted receive it is refused
        // (RNR) and the transfer waits in its latency phase for the retry.
        let Instance { flow, msg, .. } = self.bulk.jobs[id].inst;
        if let Some(rq) = self.plan_of(flow).recv_queue
            && self.bulk.jobs[id].stages.iter().any(|s| s.step == rq.write)
            && self.rnr_gate(flow, msg, Held::Bulk(id), now).is_none()
        {
            let job = &mut self.bulk.jobs[id];
            if std::mem::take(&mut job.inherits) {
                // The capacity its predecessor frees is not taken after all: those that
                // shared with the predecessor share it out.
                (job.rate, job.bound) = (0, Limit::None);
                let seeds = self.neighbours_of(id);
                self.bulk_solve_soon(&seeds, now, q);
            }
            return;
        }
        let job = &mut self.bulk.jobs[id];
        job.state = State::Active;
        job.at = now;
        job.joined = now;
        // Its head, less what of it went by while it waited behind its queue (a stream's next
        // message reads its first packet while the one before moves). The solve it asks for
        // shares it out, once every transfer that joins now is there; one that takes its
        // predecessor's rate moves it as it is.
        job.head = job
            .head
            .min((job.t0 + job.latency + job.head).saturating_sub(now));
        if job.inherits {
            let rate = idle_rate(&self.bulk.fluid, &job.demand);
            if rate != u128::MAX {
                job.remaining += std::mem::take(&mut job.head) as u128 * rate;
            }
        }
        self.bulk_progress(now);
        self.bulk.active.push(id);
        self.bulk.batching |= self.bulk.active.len() >= self.opts.sharing.exact_below as usize;
        // A unit in service on one of its channels holds it back as it does the others.
        let held = self.bulk.jobs[id]
            .uses
            .iter()
            .map(|u| self.bulk.unit_until[u.channel.index()])
            .max()
            .unwrap_or(0);
        let tight = self.bulk.tightest(&self.bulk.jobs[id].demand);
        let job = &mut self.bulk.jobs[id];
        job.resume_at = job.resume_at.max(held);
        // Once per channel however many of its uses are there (a job joins once).
        let channels = std::rc::Rc::clone(&self.bulk.jobs[id].channels);
        for (c, on) in channels.iter() {
            let c = *c;
            debug_assert!(!self.bulk.users(c).contains(&id));
            let tight = self.on_memory(c, tight);
            let b = &mut self.bulk;
            b.users_mut(c);
            let users = &mut b.user_lists[b.user_slot[c.index()] as usize - 1];
            users.jobs.push(id);
            users.count(&b.jobs[id], on, c, tight, true);
        }
        if let Some(rw) = self.bulk.jobs[id].read {
            self.bulk.window_users[rw.engine.index()].push(id);
        }
        // Joining counted its inherited rate on its channels' loads ([`ChannelUsers::count`]).
        match std::mem::take(&mut self.bulk.jobs[id].inherits) {
            true => {
                self.bulk.note_end(id);
                self.bulk_schedule(now, q);
            }
            false => self.bulk_solve_soon(&[id], now, q),
        }
    }

    /// The active transfers on transfer `id`'s channels and under its read window.
    fn neighbours_of(&self, id: usize) -> Vec<usize> {
        let job = &self.bulk.jobs[id];
        let mut seeds: Vec<usize> = (job.channels.iter())
            .flat_map(|(c, _)| self.bulk.users(*c).iter().copied())
            .collect();
        if let Some(rw) = job.read {
            seeds.extend(&self.bulk.window_users[rw.engine.index()]);
        }
        seeds
    }

    /// The next transfer of ended transfer `id`'s queue, if `id` hands its rate over to it
    /// (a flow's next message) instead of its sharing group being solved again: where re-solves
    /// are batched, when that transfer joins at this instant (its latency overlapped) with the
    /// same demand (the same chain of the same flow). The solve
    /// would see the same demands as before, so the rates it gave stand: the next message
    /// takes the capacity its predecessor frees, as a stream does, instead of idling at rate 0
    /// while its neighbours wait for a batched solve to share that capacity out. (Where the
    /// next one is refused for want of a receive, [`Fabric::bulk_ready`] has them solved.)
    fn hands_over(&self, id: usize, now: Ps) -> Option<usize> {
        let job = &self.bulk.jobs[id];
        if !self.lazy() || job.rate == 0 {
            return None;
        }
        let &next = self.bulk.queues[job.queue].1.get(1)?;
        let n = &self.bulk.jobs[next];
        let takes = n.state == State::Queued
            && n.t0 + n.latency <= now
            && std::rc::Rc::ptr_eq(&n.demand, &job.demand);
        takes.then_some(next)
    }

    /// Re-solves the sharing groups of `seeds` once every event already due now has run: the
    /// transfers that start or end at one instant are shared out once, not once each. Nothing
    /// moves between two events of one instant, so the rates are those of a solve after each.
    /// With very many transfers active the solve waits a little longer ([`Fabric::share_wait`]).
    fn bulk_solve_soon(&mut self, seeds: &[usize], now: Ps, q: &mut Queue<Event>) {
        if seeds.is_empty() {
            return;
        }
        if self.bulk.share_at.is_none() {
            let at = now + self.share_wait(now);
            self.bulk.share_at = Some(at);
            self.bulk.share_late = at > now;
            q.schedule(at, Event::Share);
        }
        self.bulk.pending.extend_from_slice(seeds);
    }

    /// How long a re-solve asked for at `now` waits: nothing until
    /// [`crate::components::Sharing::exact_below`] transfers were active at once, then
    /// `defer_ppm` millionths of
    /// the mean span of those that have a rate, from joining the sharing to their end at their
    /// rate now (see [`crate::components::Sharing`]). The span, not the time left: what a
    /// wait costs a transfer is a share of its whole time, and transfers near their end (the
    /// last messages of an all-to-all's flows) would otherwise make every wait tiny and the
    /// solves as many as the ends.
    fn share_wait(&self, now: Ps) -> Ps {
        if !self.lazy() {
            return 0;
        }
        let active = &self.bulk.active;
        let (mut span, mut moving) = (0u128, 0u128);
        for &id in active {
            let job = &self.bulk.jobs[id];
            if job.rate > 0 {
                span += u128::from(end_of(job).max(now) - job.joined);
                moving += 1;
            }
        }
        // A mean span below 2^64 ps (half a year) times a ppm below 2^32 fits a u128.
        match span.checked_div(moving) {
            Some(mean) => {
                (mean.min(u128::from(u64::MAX)) * u128::from(self.opts.sharing.defer_ppm)
                    / 1_000_000) as Ps
            }
            None => 0,
        }
    }

    /// The pending solve is due: where it waited, every transfer first moves up to now at the
    /// rates it had (a solve due at once finds them there already), then the groups are
    /// shared out.
    pub(super) fn bulk_share(&mut self, now: Ps, q: &mut Queue<Event>) {
        self.bulk.share_at = None;
        if std::mem::take(&mut self.bulk.share_late) {
            self.bulk_progress(now);
        }
        let seeds = std::mem::take(&mut self.bulk.pending);
        self.bulk_solve(&seeds, now, q);
    }

    /// Transfer `id`'s head ([`Job::head`]), if it joined since the last solve, goes ahead of
    /// its bytes at the rate `rate` the solve gives it: it takes as many times its idle time as
    /// transfers share the slowest link of its read completions (TLP by TLP their first packets
    /// interleave there). Alone it ends when it did.
    pub(super) fn share_head(&mut self, id: usize, rate: u64) {
        let job = &self.bulk.jobs[id];
        if job.head == 0 || job.state != State::Active {
            return;
        }
        let Instance { flow, step, msg } = job.inst;
        let set = self.qp_set(flow, msg);
        let link = (self.bulk.shapes.get(&(flow, step, set))).and_then(|s| s.head);
        let beside = link.map_or(1, |(_, c)| self.bulk.users(c).len().max(1) as u128);
        let job = &mut self.bulk.jobs[id];
        job.remaining += std::mem::take(&mut job.head) as u128 * beside * u128::from(rate);
    }

    /// Moves every active transfer's bytes up to `now` at its current rate, unless they move
    /// lazily ([`Fabric::lazy`]: each then moves when its own rate, pause or end asks).
    fn bulk_progress(&mut self, now: Ps) {
        if self.lazy() {
            return;
        }
        for k in 0..self.bulk.active.len() {
            let id = self.bulk.active[k];
            self.progress_one(id, now);
        }
    }

    /// Whether transfers move lazily: with many active (where re-solves are batched,
    /// [`crate::components::Sharing`]) a transfer's bytes are counted up to now only when its
    /// rate or pause changes or it ends, not at every other transfer's event, so that an event
    /// costs what it touches rather than every transfer in flight. Counting is exact either
    /// way (a transfer moves at one rate between two counts); eagerly, every event counts every
    /// transfer, which only splits the traffic records into more stretches.
    fn lazy(&self) -> bool {
        let s = self.opts.sharing;
        s.defer_ppm > 0 && self.bulk.batching
    }

    /// Whether channel `c` is a memory that no solve can saturate while its transfers are
    /// those on it now ([`Bulks::slack`]). Such a memory does not join its transfers into one
    /// sharing group: it binds none of them whatever their rates, so the max-min rates are
    /// those of the groups without it. (An H100's 3.35 TB/s HBM is shared by its NVLink
    /// stores and its NIC's reads: through it, every transfer of a node's collective was one
    /// group, and every start or end re-solved them all.) What the memory still does is
    /// delay reads' completions by the others' load: [`Fabric::loaded_shares`] counts the
    /// transfers outside the group at their rates as they stand, which a start or end of
    /// theirs changes without re-solving the group (a completion's wait at a memory far from
    /// saturation is picoseconds against a round trip of a microsecond).
    fn slack_memory(&self, c: ChannelId) -> bool {
        self.bulk.slack(c, &self.channels[c.index()])
    }

    /// A transfer's tightest channel `tight` where channel `c` is a memory (whose load bound
    /// [`Bulks::slack`] reads), None on any other channel.
    fn on_memory(&self, c: ChannelId, tight: Option<Tight>) -> Option<Tight> {
        tight.filter(|_| channel::is_memory(&self.channels[c.index()]))
    }

    /// Moves transfer `id`'s bytes up to `now` at its current rate.
    fn progress_one(&mut self, id: usize, now: Ps) {
        let record = self.recorder.traffic;
        let lazy = self.lazy();
        let job = &mut self.bulk.jobs[id];
        let from = job.at.max(job.resume_at);
        job.at = now;
        if now <= from || job.rate == 0 {
            return;
        }
        let moved = (job.rate as u128 * (now - from) as u128).min(job.remaining);
        // Its head goes first and puts nothing on the wires ([`Job::head`]).
        let all = job.bytes as u128 * SCALE;
        let before = job.remaining.min(all);
        job.remaining -= moved;
        let spent = u128::from(now - from);
        match job.bound_by.iter_mut().find(|b| b.0 == job.bound) {
            Some(b) => (b.1, b.2) = (b.1 + moved, b.2 + spent),
            None => job.bound_by.push((job.bound, moved, spent)),
        }
        let moved = before - job.remaining.min(all);
        if moved == 0 {
            return;
        }
        // For the records: the whole payload bytes through after this stretch less those
        // through before it, so a transfer's records sum to its bytes however many
        // stretches it moves in.
        let payload = match record {
            true => {
                let through = |left: u128| (all - left) / SCALE;
                (through(job.remaining) - through(job.remaining + moved)) as u64
            }
            false => 0,
        };
        if !record && lazy {
            // Its channels' wire bytes when it ends ([`Bulks::flush_wire`]): a unit that
            // pauses every transfer of a busy link then costs each of them a few additions.
            job.unwired += moved;
            return;
        }
        for u in job.uses.iter() {
            let wire = moved * u.weight / WEIGHT_ONE;
            self.bulk.wire_bytes[u.channel.index()] += wire;
            if record {
                let plan = self.flows[job.inst.flow as usize].plan;
                self.recorder.hops.push(Hop {
                    flow: job.inst.flow,
                    msg: job.inst.msg,
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

    /// Transfer `id` (active) gets `rate` and `bound` from `now`: it first moves up to now at
    /// the rate it had, and its end goes into the heap of ends.
    pub(super) fn rerate(&mut self, id: usize, rate: u64, bound: Limit, now: Ps) {
        let job = &self.bulk.jobs[id];
        if job.rate == rate && job.bound == bound {
            return;
        }
        self.progress_one(id, now);
        self.bulk.set_rate(id, rate, bound);
        self.bulk.note_end(id);
    }

    /// Schedules the earliest end among the active transfers (one event for all of them).
    fn bulk_schedule(&mut self, now: Ps, q: &mut Queue<Event>) {
        self.bulk.version += 1;
        if let Some(at) = self.bulk.next_end() {
            q.schedule(at.max(now), Event::Fluid(self.bulk.version));
        }
    }

    /// The next end is due: finish the transfers that are done, share again.
    pub(super) fn fluid_event(&mut self, version: u64, now: Ps, q: &mut Queue<Event>) {
        if version != self.bulk.version {
            return;
        }
        let done: Vec<usize> = match self.lazy() {
            // The transfers due by now, from the heap of ends, each moved up to now.
            true => {
                let mut done = Vec::new();
                while self.bulk.next_end().is_some_and(|at| at <= now) {
                    let Some(std::cmp::Reverse((_, id))) = self.bulk.ends.pop() else {
                        break;
                    };
                    if !done.contains(&id) {
                        self.progress_one(id, now);
                        debug_assert_eq!(self.bulk.jobs[id].remaining, 0);
                        done.push(id);
                    }
                }
                done.sort_unstable();
                done
            }
            false => {
                self.bulk_progress(now);
                (self.bulk.active.iter().copied())
                    .filter(|&id| self.bulk.jobs[id].remaining == 0)
                    .collect()
            }
        };
        if done.is_empty() {
            self.bulk_schedule(now, q);
            return;
        }
        self.bulk.active.retain(|id| !done.contains(id));
        // Those that shared a resource with an ended transfer get new rates. A resource's users
        // are taken once: at a later ended transfer they are the same less those ended before
        // (n transfers ending together on shared links listed n x n of them).
        let mut neighbours: Vec<usize> = Vec::new();
        // Taken: marked with a visit mark of its own, as a solve marks what it reached.
        self.bulk.solves += 1;
        let mark = self.bulk.solves;
        for &id in &done {
            // Its successor takes its rate over: nothing changes for those beside it.
            let next = self.hands_over(id, now);
            let handed = next.is_some();
            if let Some(next) = next {
                let job = &self.bulk.jobs[id];
                let (rate, bound, rtt) = (job.rate, job.bound, job.rtt);
                let n = &mut self.bulk.jobs[next];
                (n.rate, n.bound, n.rtt, n.inherits) = (rate, bound, rtt, true);
            }
            let channels = std::rc::Rc::clone(&self.bulk.jobs[id].channels);
            let tight = self.bulk.tightest(&self.bulk.jobs[id].demand);
            for (c, on) in channels.iter() {
                let c = *c;
                // Not a memory that could not saturate with it: that bound no one, and its end
                // frees nothing there that another transfer could take.
                let take = !handed
                    && self.bulk.channel_reached[c.index()] != mark
                    && !self.slack_memory(c);
                let tight = self.on_memory(c, tight);
                let b = &mut self.bulk;
                let users = &mut b.user_lists[b.user_slot[c.index()] as usize - 1];
                if let Some(at) = users.jobs.iter().position(|&j| j == id) {
                    users.jobs.remove(at);
                    users.count(&b.jobs[id], on, c, tight, false);
                }
                if take {
                    b.channel_reached[c.index()] = mark;
                    neighbours.extend(self.bulk.users(c));
                }
            }
            if let Some(rw) = self.bulk.jobs[id].read {
                let e = rw.engine.index();
                self.bulk.window_users[e].retain(|&j| j != id);
                if !handed && self.bulk.window_reached[e] != mark {
                    self.bulk.window_reached[e] = mark;
                    neighbours.extend(&self.bulk.window_users[e]);
                }
            }
        }
        for &id in &done {
            self.bulk_done(id, now, q);
        }
        self.bulk_solve_soon(&neighbours, now, q);
        if self.bulk.share_at != Some(now) {
            // No one shared with them, or the solve comes later: the others' rates stand
            // until then; only the next end moves.
            self.bulk_schedule(now, q);
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
        self.bulk.flush_wire(id);
        let job = {
            let j = &mut self.bulk.jobs[id];
            j.state = State::Done;
            Job {
                stages: std::mem::take(&mut j.stages),
                demand: std::mem::take(&mut j.demand),
                uses: std::mem::take(&mut j.uses),
                channels: std::mem::take(&mut j.channels),
                bound_by: std::mem::take(&mut j.bound_by),
                ..*j
            }
        };
        let Instance { flow, msg, .. } = job.inst;
        if job.payload {
            self.bulk.host_mem_bytes += job.bytes * job.dram_crossings;
            self.flows[flow as usize].msgs[msg as usize].host_mem_bytes +=
                job.bytes * job.dram_crossings;
        }
        for &(limit, _, time) in &job.bound_by {
            self.bulk.add_limit_time(limit, time);
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
            let inst = Instance::new(flow, msg, s.step);
            let start = job.t0 + s.first_in;
            let first_out = job.t0 + s.first_out;
            let end = at(s.last_out).max(first_out);
            let last_in = if s.step == bottleneck {
                start
            } else {
                at(s.last_in).clamp(start, end)
            };
            let kind = &plan.steps[s.step.index()].kind;
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
            .find(|s| matches!(plan.steps[s.step.index()].kind, StepKind::DmaWrite { .. }))
        {
            self.scatter_descriptor(Instance::new(flow, msg, w.step), job.t0 + w.first_in);
        }
        // Milestones, in chain order, never before now.
        for s in &job.stages {
            let inst = Instance::new(flow, msg, s.step);
            match plan.steps[s.step.index()].kind {
                StepKind::Memcpy { .. } | StepKind::KernelCopy { .. } => {
                    self.copy_done(inst, now, q)
                }
                _ => {
                    self.fire(inst, Milestone::LastIn, at(s.last_in).max(now), now, q);
                    self.fire(inst, Milestone::Done, at(s.last_out).max(now), now, q);
                }
            }
        }
        // Nothing refers to a done transfer again but a solve's seeds, which pass over any
        // transfer not active (a later one in its slot is a seed of its own once active): its
        // slot is the next transfer's.
        self.bulk.free_jobs.push(id);
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
        self.servers[c.index()].wire_bytes + self.bulk.wire_bytes[c.index()] / SCALE
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
    if job.rate == 0 {
        // Started, not yet shared out (a solve that waits, [`crate::components::Sharing`]).
        return Ps::MAX;
    }
    let from = job.at.max(job.resume_at);
    from.saturating_add(Ps::try_from(job.remaining.div_ceil(job.rate as u128)).unwrap_or(Ps::MAX))
}

//! What a unit (one TLP or one packet) meets on its route.
//!
//! A *server* channel (a link direction, a memory, a switch output port, a P2P forwarding cap)
//! serialises one unit at a time at its rate, then the unit takes the channel's latency to reach
//! the next one. Waiting units queue per *source* (a requester and its flow: the PCIe ordering
//! domain) and sources are served round robin, one unit each, as a switch's port arbitration
//! does: a unit waits behind its own source's earlier units and at most one unit of every other
//! backlogged source's share. Shares are fair in bytes (deficit round robin: each turn a source
//! may send as many bytes as the largest unit waiting at the head of any source), which is
//! TLP-level round robin where the TLPs are of one size and keeps a source of 24-byte read
//! requests from getting one request's worth of a link per 4 KiB write of another source. A
//! source's units never pass each other, and a small unit (a read request, a doorbell, a CQE)
//! slips in between another source's data. A latency-only channel (a
//! switch or root-complex traversal, a NIC pipeline) delays without queueing.
//!
//! A server never carries more than its rate: units are served one after another, each for its
//! own wire bytes. Large messages move as fluid transfers instead ([`super::fluid`],
//! [`super::bulk`]); a unit that a server serves while such transfers cross it holds the link for
//! its own service time, during which the transfers on it wait.

use std::collections::VecDeque;

use rand::RngExt;
use rand::SeedableRng;
use rand_distr::{Distribution, LogNormal};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::ids::TrainId;
use crate::topology::{ChannelId, ChannelKind, ChannelSpec, Unit};
use crate::units::Ps;

/// Spread of the memory access-latency jitter (lognormal shape). Rows C10/C11 give medians and
/// minima only (median - min is about 27 ns); the shape is an assumption that keeps p99 around
/// 5.7x the median, well short of the desktop tail of row C12, which is a different platform.
pub const JITTER_SIGMA: f64 = 0.75;

/// Bytes of a packet a cut-through (InfiniBand) switch needs before it forwards it: the local
/// route header, whose DLID it routes on (IBTA spec vol. 1, 7.7: LRH, 8 bytes).
pub const CUT_THROUGH_BYTES: u64 = 8;

/// Who a unit comes from, for a server's round robin and ordering: the flow (or a device's own
/// queue) and the channel where its route starts (the requester's or completer's own link or
/// memory). Units of one source keep their order; sources take turns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Source {
    /// The flow's index in the point, or a device queue's reserved number.
    pub flow: u32,
    /// The first channel of the unit's route.
    pub channel: ChannelId,
}

/// A source's waiting units (with their wire bytes) and its round-robin credit.
struct Waiting {
    src: Source,
    units: VecDeque<(TrainId, u64)>,
    deficit: u64,
    /// Whether its next turn starts a new round (credits it a quantum).
    fresh: bool,
}

/// The queueing state of one server channel, its own random stream, and what it carried.
pub struct Server {
    /// When the unit in service leaves the channel's serialiser.
    pub busy_until: Ps,
    /// Waiting units per source: the round-robin rotation, the source to serve next first. A
    /// source that starts waiting joins at the back, behind every source already waiting.
    queues: VecDeque<Waiting>,
    /// Whether a wake-up at `busy_until` is scheduled.
    pub wake_pending: bool,
    /// Wire bytes it carried and time it spent serialising (units only; bulk transfers add
    /// their bytes through the fluid accounting).
    pub wire_bytes: u128,
    pub busy: Ps,
    /// Payload bytes of message data that crossed it (host-memory accounting).
    pub payload_bytes: u64,
    jitter: Option<(LogNormal<f64>, Xoshiro256PlusPlus)>,
    jitter_median: Ps,
}

impl Server {
    /// `jitter_median` > 0 turns on an extra access delay drawn per read from a lognormal with
    /// that median; each channel draws from its own stream seeded by (seed, `identity`), a
    /// stable hash of its name, so adding a channel elsewhere changes no other stream.
    pub fn new(jitter_median: Ps, seed: u64, identity: u64) -> Self {
        let jitter = (jitter_median > 0).then(|| {
            let d =
                LogNormal::new((jitter_median as f64).ln(), JITTER_SIGMA).expect("valid lognormal");
            let rng = Xoshiro256PlusPlus::seed_from_u64(crate::seed::mix(seed, &[identity]));
            (d, rng)
        });
        Server {
            jitter,
            jitter_median,
            ..Server::IDLE
        }
    }

    /// A server with nothing done and no jitter.
    const IDLE: Server = Server {
        busy_until: 0,
        queues: VecDeque::new(),
        wake_pending: false,
        wire_bytes: 0,
        busy: 0,
        payload_bytes: 0,
        jitter: None,
        jitter_median: 0,
    };

    /// Whether a unit arriving now can be served at once.
    pub fn idle(&self, now: Ps) -> bool {
        self.busy_until <= now && self.queues.is_empty()
    }

    /// Whether units are waiting.
    pub fn has_waiting(&self) -> bool {
        !self.queues.is_empty()
    }

    /// Queues a unit of `src` of `wire` bytes behind that source's earlier units.
    pub fn enqueue(&mut self, src: Source, unit: TrainId, wire: u64) {
        match self.queues.iter_mut().find(|w| w.src == src) {
            Some(w) => w.units.push_back((unit, wire)),
            None => self.queues.push_back(Waiting {
                src,
                units: VecDeque::from([(unit, wire)]),
                deficit: 0,
                fresh: true,
            }),
        }
    }

    /// The next unit, deficit round robin over the waiting sources: at the start of its turn
    /// the front source is credited the largest head unit waiting; it sends while its credit
    /// covers its next unit, then goes to the back (keeping what is left of its credit while it
    /// has units; an emptied source leaves the rotation).
    pub fn dequeue(&mut self) -> Option<TrainId> {
        let quantum = self.queues.iter().map(|w| w.units[0].1).max()?;
        loop {
            let w = self.queues.front_mut()?;
            if w.fresh {
                w.deficit += quantum;
                w.fresh = false;
            }
            let (unit, wire) = w.units[0];
            if wire <= w.deficit {
                w.deficit -= wire;
                w.units.pop_front();
                if w.units.is_empty() {
                    self.queues.pop_front();
                }
                return Some(unit);
            }
            let mut w = self.queues.pop_front().expect("front exists");
            w.fresh = true;
            self.queues.push_back(w);
        }
    }

    /// Serves a unit of `wire` bytes from `now` for `hold`, of which it takes `service` of the
    /// channel's time (less than `hold` when it goes at the rate bulk transfers leave it):
    /// returns when it leaves the serialiser.
    pub fn serve(&mut self, now: Ps, hold: Ps, service: Ps, wire: u64) -> Ps {
        debug_assert!(self.busy_until <= now, "a server serves one unit at a time");
        debug_assert!(
            service <= hold,
            "a unit takes no more of the channel than it holds"
        );
        self.busy_until = now + hold;
        self.wire_bytes += wire as u128;
        self.busy += service;
        self.busy_until
    }

    /// The mean extra access delay (0 without jitter): median x exp(sigma^2 / 2).
    pub fn mean_jitter(&self) -> Ps {
        match &self.jitter {
            Some(_) => {
                (self.jitter_median as f64 * (JITTER_SIGMA * JITTER_SIGMA / 2.0).exp()) as Ps
            }
            None => 0,
        }
    }

    /// An extra access delay for one read (0 without jitter).
    pub fn draw_jitter(&mut self) -> Ps {
        match &mut self.jitter {
            Some((d, rng)) => d.sample(rng).min(1e12) as Ps,
            None => 0,
        }
    }
}

/// A server with nothing done and no jitter: what a channel that no unit has reached reads as,
/// and what every server starts from.
static UNUSED: Server = Server::IDLE;

/// The server of every channel of a fabric, indexed by channel id, each made when first
/// written (a point sets up the channels its units use, not every channel of every host). A
/// channel never written reads as an unused server without jitter: a fabric makes the servers
/// of its routes' channels up front ([`Servers::make`]), so that their jitter reads right.
pub struct Servers<'t> {
    channels: &'t [ChannelSpec],
    /// Whether memories jitter, and the seed of their streams.
    jitter: bool,
    seed: u64,
    /// Per channel: 1 + its index in `made`, 0 while it has no server.
    slot: Vec<u32>,
    made: Vec<Server>,
    /// The channel of each server in `made`.
    made_for: Vec<ChannelId>,
}

impl<'t> Servers<'t> {
    /// No server yet for any of `channels`; memories jitter when `jitter` is on, each from its
    /// own stream of `seed` (see [`Server::new`]).
    pub fn new(channels: &'t [ChannelSpec], jitter: bool, seed: u64) -> Self {
        Servers {
            channels,
            jitter,
            seed,
            slot: vec![0; channels.len()],
            made: Vec::new(),
            made_for: Vec::new(),
        }
    }

    /// Makes channel `c`'s server (if it has none yet).
    pub fn make(&mut self, c: usize) {
        if self.slot[c] == 0 {
            let spec = &self.channels[c];
            let median = if self.jitter { spec.jitter_median } else { 0 };
            // The identity seeds the jitter stream only; without jitter the name is not hashed.
            let identity = if median > 0 {
                crate::seed::stable_hash(&spec.name)
            } else {
                0
            };
            self.made.push(Server::new(median, self.seed, identity));
            self.made_for.push(ChannelId::from_index(c));
            self.slot[c] = self.made.len() as u32;
        }
    }

    /// The channels that have a server, ascending: every channel a point's units or
    /// transfers can have used (the routes' channels are made up front), found without a
    /// walk over every channel of the topology.
    pub fn made_channels(&self) -> Vec<ChannelId> {
        let mut ids = self.made_for.clone();
        ids.sort_unstable();
        ids
    }

    /// Every server made so far.
    pub fn iter(&self) -> impl Iterator<Item = &Server> {
        self.made.iter()
    }
}

impl std::ops::Index<usize> for Servers<'_> {
    type Output = Server;
    #[inline]
    fn index(&self, c: usize) -> &Server {
        match self.slot[c] {
            0 => &UNUSED,
            s => &self.made[s as usize - 1],
        }
    }
}

impl std::ops::IndexMut<usize> for Servers<'_> {
    #[inline]
    fn index_mut(&mut self, c: usize) -> &mut Server {
        self.make(c);
        let s = self.slot[c] as usize;
        &mut self.made[s - 1]
    }
}

/// Service time of one unit of `unit` kind carrying `payload` bytes on channel `spec`.
#[inline]
pub fn service(spec: &ChannelSpec, unit: Unit, payload: u64) -> (Ps, u64) {
    let wire = spec.wire_bytes(unit, payload, 1);
    (spec.rate.tx_time(wire), wire)
}

/// Whether a channel forwards a packet once its header is in.
pub fn cut_through(spec: &ChannelSpec) -> bool {
    spec.kind == ChannelKind::NetworkSwitch
}

/// Whether a channel is one of the host DRAMs (for host_mem_bytes).
pub fn is_host_memory(spec: &ChannelSpec) -> bool {
    spec.kind == ChannelKind::HostMemory
}

/// Whether a channel is a memory (reads are answered there, with its access jitter).
pub fn is_memory(spec: &ChannelSpec) -> bool {
    matches!(spec.kind, ChannelKind::HostMemory | ChannelKind::GpuMemory)
}

/// When `n` equal units of `payload` bytes that enter `route` together at time 0 leave it on
/// idle channels: (first unit out, last unit out). Store-and-forward per unit on servers,
/// cut-through on network switches, latency-only channels add their latency; the units follow
/// one another at the slowest server's spacing. This is the latency part of a bulk transfer.
pub fn idle_transit(route: &[&ChannelSpec], unit: Unit, payload: u64, n: u64) -> (Ps, Ps) {
    let mut head: Ps = 0;
    let mut prev: Option<(Ps, Ps)> = None; // (unit time, header time) on the previous server
    let mut spacing: Ps = 0;
    for spec in route {
        if !spec.is_server() {
            head += spec.latency;
            continue;
        }
        let (u, _) = service(spec, unit, payload);
        let start = match (cut_through(spec), prev) {
            (true, Some((pu, ph))) => head.saturating_sub(pu.saturating_sub(ph)),
            _ => head,
        };
        let hdr = spec.rate.tx_time(CUT_THROUGH_BYTES);
        let done = if cut_through(spec) {
            (start + u).max(head + hdr)
        } else {
            start + u
        };
        head = done + spec.latency;
        prev = Some((u, hdr));
        spacing = spacing.max(u);
    }
    (head, head + n.saturating_sub(1) * spacing)
}

/// When `bytes` cut into units of at most `size` (the last one shorter where `size` does not
/// divide them), entering `route` together at time 0, leave it on idle channels: (first unit
/// out, last unit out). Equal units are [`idle_transit`]'s; otherwise each unit follows the
/// one before through every server, as TLP by TLP (a packet's TLPs are few: an MTU over the
/// MPS at most).
pub fn idle_transit_of(route: &[&ChannelSpec], unit: Unit, bytes: u64, size: u64) -> (Ps, Ps) {
    let size = size.max(1);
    let (full, rest) = (bytes / size, bytes % size);
    if rest == 0 {
        return idle_transit(route, unit, size, full.max(1));
    }
    if full == 0 {
        return idle_transit(route, unit, rest, 1);
    }
    // Per unit: when its head leaves the previous channel, and that server's (unit, header)
    // times for it (a cut-through switch starts a unit before it has all arrived).
    let n = (full + 1) as usize;
    let payload = |k: usize| if k + 1 < n { size } else { rest };
    let mut head: Vec<Ps> = vec![0; n];
    let mut prev: Vec<Option<(Ps, Ps)>> = vec![None; n];
    for spec in route {
        if !spec.is_server() {
            head.iter_mut().for_each(|h| *h += spec.latency);
            continue;
        }
        let hdr = spec.rate.tx_time(CUT_THROUGH_BYTES);
        let mut free: Ps = 0;
        for k in 0..n {
            let (u, _) = service(spec, unit, payload(k));
            let at = match (cut_through(spec), prev[k]) {
                (true, Some((pu, ph))) => head[k].saturating_sub(pu.saturating_sub(ph)),
                _ => head[k],
            };
            let start = at.max(free);
            let done = if cut_through(spec) {
                (start + u).max(head[k] + hdr)
            } else {
                start + u
            };
            free = done;
            head[k] = done + spec.latency;
            prev[k] = Some((u, hdr));
        }
    }
    (head[0], head[n - 1])
}

/// A uniformly drawn phase in `[0, period)` for CQ polling, from a thread's own stream.
pub fn poll_phase(rng: &mut Xoshiro256PlusPlus, period: Ps) -> Ps {
    if period == 0 {
        0
    } else {
        rng.random_range(0..period)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Rate;

    fn link(rate_gbps: u64, latency: Ps, kind: ChannelKind) -> ChannelSpec {
        ChannelSpec {
            name: "l".into(),
            kind,
            rate: Rate::from_bps(rate_gbps * 1_000_000_000),
            latency,
            overhead: [24, 24, 20, 26, 0],
            host: None,
            jitter_median: 0,
            segment: 0,
        }
    }

    /// Source number `flow` on channel 0.
    fn src(flow: u32) -> Source {
        Source {
            flow,
            channel: ChannelId(0),
        }
    }

    /// Round robin: two sources' waiting units alternate, each source's own units stay in
    /// order.
    #[test]
    fn waiting_sources_are_served_round_robin_in_their_own_order() {
        let mut s = Server::new(0, 0, 0);
        for (flow, unit) in [(1, 10), (1, 11), (1, 12), (2, 20), (2, 21)] {
            s.enqueue(src(flow), TrainId(unit), 100);
        }
        let order: Vec<TrainId> = std::iter::from_fn(|| s.dequeue()).collect();
        assert_eq!(order, [10, 20, 11, 21, 12].map(TrainId).to_vec());
    }

    /// A source that keeps emptying its queue and coming back (one unit in flight at a time, as
    /// a stream arriving at the link's own rate does) joins behind the sources already waiting:
    /// it cannot starve a backlogged one.
    #[test]
    fn a_source_that_comes_back_waits_its_turn() {
        let mut s = Server::new(0, 0, 0);
        for unit in [10, 11, 12] {
            s.enqueue(src(1), TrainId(unit), 100);
        }
        let mut served = Vec::new();
        for k in 0..3 {
            s.enqueue(src(2), TrainId(20 + k), 100);
            served.push(s.dequeue().unwrap());
            served.push(s.dequeue().unwrap());
        }
        assert_eq!(served, [10, 20, 11, 21, 12, 22].map(TrainId));
    }

    /// Fair in bytes: against 280-byte writes, 24-byte read requests go 11 at a time.
    #[test]
    fn small_units_share_a_link_by_bytes() {
        let mut s = Server::new(0, 0, 0);
        for k in 0..4 {
            s.enqueue(src(1), TrainId(k), 280);
        }
        for k in 0..30 {
            s.enqueue(src(2), TrainId(100 + k), 24);
        }
        let order: Vec<TrainId> = std::iter::from_fn(|| s.dequeue()).take(14).collect();
        let requests = |v: &[TrainId]| v.iter().filter(|&&u| u >= TrainId(100)).count();
        assert_eq!(order[0], TrainId(0));
        assert_eq!(requests(&order[1..12]), 11, "{order:?}");
        assert_eq!(order[12], TrainId(1));
    }

    #[test]
    fn a_server_is_busy_for_each_units_service() {
        let mut s = Server::new(0, 0, 0);
        assert!(s.idle(0));
        assert_eq!(s.serve(100, 256_000, 256_000, 256), 256_100);
        assert!(!s.idle(200));
        assert!(s.idle(256_100));
        assert_eq!((s.wire_bytes, s.busy), (256, 256_000));
    }

    /// 232 + 24 = 256 bytes at 8 Gb/s take 256 ns per link; store and forward over two links
    /// with 5 ns each, and 4 units leave 256 ns apart.
    #[test]
    fn a_short_last_unit_follows_the_full_ones_at_its_own_size() {
        // 8 Gb/s (a byte per ns), 5 ns each; a write TLP carries 24 bytes of overhead.
        let a = link(8, 5_000, ChannelKind::Wire);
        let b = link(8, 5_000, ChannelKind::Wire);
        // 513 bytes in units of 256: two of 280 ns on the link and one of 25 ns. On a: done at
        // 280, 560, 585 ns; on b (each 5 ns later): 565, 845, 870 ns; out 5 ns later.
        let (first, last) = idle_transit_of(&[&a, &b], Unit::Write, 513, 256);
        assert_eq!((first, last), (570_000, 875_000));
        // Equal units, or one short one, are idle_transit's.
        for (bytes, size, n) in [(512, 256, 2), (100, 256, 1)] {
            assert_eq!(
                idle_transit_of(&[&a, &b], Unit::Write, bytes, size),
                idle_transit(&[&a, &b], Unit::Write, bytes.min(size), n)
            );
        }
    }

    #[test]
    fn idle_transit_is_store_and_forward_per_unit() {
        let a = link(8, 5_000, ChannelKind::Wire);
        let b = link(8, 5_000, ChannelKind::Wire);
        let (first, last) = idle_transit(&[&a, &b], Unit::Write, 232, 4);
        assert_eq!(first, 2 * (256_000 + 5_000));
        assert_eq!(last, first + 3 * 256_000);
    }

    /// A cut-through switch port starts sending once the 8-byte header is in: a second hop of
    /// equal rate adds its latency and the header's time, not the packet's.
    #[test]
    fn a_cut_through_switch_adds_the_header_time_not_the_packet() {
        let wire = link(8, 1_000, ChannelKind::Wire);
        let sw = link(8, 2_000, ChannelKind::NetworkSwitch);
        let (first, _) = idle_transit(&[&wire, &sw], Unit::Packet, 230, 1);
        // 256 B at 8 Gb/s = 256 ns on the cable; the switch adds 8 ns of header and 2 ns.
        assert_eq!(first, 256_000 + 1_000 + 8_000 + 2_000);
    }
}

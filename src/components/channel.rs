//! The FIFO server every transfer crosses, and the train arithmetic behind it.
//!
//! A *train* is n equal units (TLPs or packets) moving back to back. At any point of its route it
//! is described by two times: when its first unit has fully passed (`head`) and when its last
//! unit has (`tail`). Through a channel of rate R and latency L, with per-unit service u and
//! total service S (both from the bytes on the link, overheads included):
//!
//! ```text
//! start    = max(head_in, channel free)
//! head_out = start + u + L
//! tail_out = max(tail_in + u, start + S) + L      (the channel is then free at tail_out - L)
//! ```
//!
//! For n = 1 this is store-and-forward of one TLP or packet; for a coalesced burst it is exactly
//! the aggregate of its units flowing through a FIFO without other traffic, which is why bursts
//! and TLP-by-TLP runs agree on uncontended routes.
//!
//! The channel's clock (`free_at`) advances by each train's *service* time, not by its arrival
//! spread: a burst trickling in from a slower upstream link leaves the channel idle between its
//! units, and other sources' trains use those gaps (a memory controller serving a NIC's reads
//! while a copy engine's writes dribble in). Capacity is never exceeded: every train's last
//! unit leaves no earlier than `start + S`, and `start` waits for the clock. Trains of one
//! source keep their order: a train's tail never precedes the previous tail of its source.
//!
//! Contention is FIFO per train, with one more refinement that keeps coalescing honest: real links
//! arbitrate between sources TLP by TLP, so a *small* train (at most [`INTERLEAVE_MAX_BYTES`] on
//! the link: read requests, doorbells, CQEs) that finds the channel busy with a train from
//! another source is interleaved into it round-robin instead of waiting for the whole burst;
//! the occupant is delayed by the bytes let in. Trains from the same source never pass each
//! other (PCIe ordering: a read may not pass earlier posted writes; a CQE follows its data).

use rand::RngExt;
use rand::SeedableRng;
use rand_distr::{Distribution, LogNormal};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::topology::{ChannelKind, ChannelSpec, Unit};
use crate::units::Ps;

/// Spread of the memory access-latency jitter (lognormal shape). Rows C10/C11 give medians and
/// minima only (median - min is about 27 ns); the shape is an assumption that keeps p99 around
/// 5.7x the median, well short of the desktop tail of row C12, which is a different platform.
pub const JITTER_SIGMA: f64 = 0.75;

/// Queueing state of one channel plus its own random stream.
pub struct ChannelState {
    pub free_at: Ps,
    /// Source (route origin) of the train that holds the channel until `free_at`, and the
    /// service time of one of its units.
    occupant: u32,
    occupant_unit: Ps,
    /// Last tail time per source that used this channel (a handful at most).
    last_tail: Vec<(u32, Ps)>,
    /// Payload bytes that crossed this channel (host-memory accounting).
    pub payload_bytes: u64,
    jitter: Option<(LogNormal<f64>, Xoshiro256PlusPlus)>,
}

impl ChannelState {
    /// `jitter_median` > 0 turns on an extra access delay drawn per train from a lognormal with
    /// that median; each channel draws from its own stream seeded by (seed, `identity`), a
    /// stable hash of its name, so adding a channel elsewhere changes no other stream.
    pub fn new(jitter_median: Ps, seed: u64, identity: u64) -> Self {
        let jitter = (jitter_median > 0).then(|| {
            let d =
                LogNormal::new((jitter_median as f64).ln(), JITTER_SIGMA).expect("valid lognormal");
            let rng = Xoshiro256PlusPlus::seed_from_u64(crate::seed::mix(seed, &[identity]));
            (d, rng)
        });
        ChannelState {
            free_at: 0,
            occupant: u32::MAX,
            occupant_unit: 0,
            last_tail: Vec::new(),
            payload_bytes: 0,
            jitter,
        }
    }

    /// A source's trains leave in order: this tail is at least one unit after its last one.
    fn keep_order(&mut self, src: u32, tail: Ps, u: Ps) -> Ps {
        match self.last_tail.iter_mut().find(|(s, _)| *s == src) {
            Some((_, last)) => {
                let t = tail.max(*last + u);
                *last = t;
                t
            }
            None => {
                self.last_tail.push((src, tail));
                tail
            }
        }
    }

    fn draw_jitter(&mut self) -> Ps {
        match &mut self.jitter {
            Some((d, rng)) => d.sample(rng).min(1e12) as Ps,
            None => 0,
        }
    }
}

/// Bytes of a packet a cut-through (InfiniBand) switch needs before it forwards it: the local
/// route header, whose DLID it routes on (IBTA spec vol. 1, 7.7: LRH, 8 bytes).
pub const CUT_THROUGH_BYTES: u64 = 8;

/// Trains up to this many bytes on a link interleave with another source's burst.
pub const INTERLEAVE_MAX_BYTES: u64 = 4096;

/// Moves a train from source `src` through one channel; returns (start of service, head after,
/// tail after).
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn pass(
    spec: &ChannelSpec,
    state: &mut ChannelState,
    unit: Unit,
    units: u64,
    payload: u64,
    head: Ps,
    tail: Ps,
    src: u32,
) -> (Ps, Ps, Ps) {
    let extra = state.draw_jitter();
    if !spec.is_server() {
        return (
            head,
            head + spec.latency + extra,
            tail + spec.latency + extra,
        );
    }
    let units = units.max(1);
    let per_unit_payload = payload.div_ceil(units);
    let u = spec
        .rate
        .tx_time(spec.wire_bytes(unit, per_unit_payload, 1));
    let total = spec.rate.tx_time(spec.wire_bytes(unit, payload, units));
    let lat = spec.latency + extra;
    let wire = spec.wire_bytes(unit, payload, units);
    if state.free_at > head && state.occupant != src && wire <= INTERLEAVE_MAX_BYTES {
        // Round-robin with the occupant's units while the occupant lasts; whatever does not
        // fit before its end follows it back to back. Either way the occupant is delayed by
        // exactly this train's service time.
        let start = head + state.occupant_unit.min(state.free_at - head);
        let interleaved = start + total + (units - 1) * state.occupant_unit;
        let done_tail = (tail + u).max(interleaved.min(state.free_at + total));
        state.free_at += total;
        let done_tail = state.keep_order(src, done_tail, u);
        return (
            start,
            first_out(units, start + u, done_tail) + lat,
            done_tail + lat,
        );
    }
    let start = head.max(state.free_at);
    let done_tail = state.keep_order(src, (tail + u).max(start + total), u);
    state.free_at = start + total;
    state.occupant = src;
    state.occupant_unit = u;
    (
        start,
        first_out(units, start + u, done_tail) + lat,
        done_tail + lat,
    )
}

/// When the first unit leaves: for a single unit that is its only unit, which source ordering
/// may have held back; a burst's first unit leaves after its own service.
#[inline]
fn first_out(units: u64, head_done: Ps, tail_done: Ps) -> Ps {
    if units == 1 { tail_done } else { head_done }
}

/// Whether a channel is one of the host DRAMs (for host_mem_bytes).
pub fn is_host_memory(spec: &ChannelSpec) -> bool {
    spec.kind == ChannelKind::HostMemory
}

/// A uniformly drawn phase in `[0, period)` for CQ polling, from a host's own stream.
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

    fn link(rate_gbps: u64, latency: Ps) -> ChannelSpec {
        ChannelSpec {
            name: "l".into(),
            kind: ChannelKind::Wire,
            rate: Rate::from_bps(rate_gbps * 1_000_000_000),
            latency,
            overhead: [24, 24, 20, 0, 0],
            host: None,
            jitter_median: 0,
        }
    }

    #[test]
    fn one_unit_is_store_and_forward() {
        let spec = link(8, 5);
        let mut st = ChannelState::new(0, 0, 0);
        // 232 + 24 = 256 bytes at 8 Gb/s = 256 ns
        let (_, h, t) = pass(&spec, &mut st, Unit::Write, 1, 232, 1000, 1000, 0);
        assert_eq!((h, t), (1000 + 256_000 + 5, 1000 + 256_000 + 5));
        // a second train queues behind the first
        let (_, h2, _) = pass(&spec, &mut st, Unit::Write, 1, 232, 1000, 1000, 0);
        assert_eq!(h2, 1000 + 2 * 256_000 + 5);
    }

    #[test]
    fn a_burst_equals_its_units_back_to_back() {
        let spec = link(8, 0);
        let mut burst = ChannelState::new(0, 0, 0);
        let (_, _, t_burst) = pass(&spec, &mut burst, Unit::Write, 16, 16 * 232, 0, 0, 0);
        let mut single = ChannelState::new(0, 0, 0);
        let mut t = 0;
        for _ in 0..16 {
            t = pass(&spec, &mut single, Unit::Write, 1, 232, 0, 0, 0).2;
        }
        assert_eq!(t_burst, t);
    }

    #[test]
    fn a_small_train_of_another_source_interleaves_but_not_one_of_the_same_source() {
        let spec = link(8, 0);
        let mut st = ChannelState::new(0, 0, 0);
        // A 64-unit burst from source 1 holds the channel for 64 x 256 ns.
        let (_, _, burst_tail) = pass(&spec, &mut st, Unit::Write, 64, 64 * 232, 0, 0, 1);
        assert_eq!(burst_tail, 64 * 256_000);
        // A read request (24 B = 24 ns) of source 2 slips in after one unit of the burst.
        let (_, h, _) = pass(&spec, &mut st, Unit::ReadRequest, 1, 0, 1000, 1000, 2);
        assert_eq!(h, 1000 + 256_000 + 24_000);
        assert_eq!(st.free_at, 64 * 256_000 + 24_000);
        // The same source's request stays behind everything (ordering).
        let (_, h, _) = pass(&spec, &mut st, Unit::ReadRequest, 1, 0, 2000, 2000, 1);
        assert_eq!(h, 64 * 256_000 + 24_000 + 24_000);
    }

    #[test]
    fn a_slow_upstream_tail_holds_the_tail() {
        let spec = link(8, 0);
        let mut st = ChannelState::new(0, 0, 0);
        let (_, h, t) = pass(&spec, &mut st, Unit::Write, 4, 4 * 232, 0, 10_000_000, 0);
        assert_eq!(h, 256_000);
        assert_eq!(t, 10_000_000 + 256_000);
    }
}

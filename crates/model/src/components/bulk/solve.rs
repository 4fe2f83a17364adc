//! Max-min rates for the transfers a start or an end can change: the sharing group reached
//! through shared links, memories and read windows, solved by [`crate::components::fluid`] with
//! each read's window weight its round trip under the others' load.

use std::collections::HashMap;

use super::*;
use crate::components::fast_hash::{FastHash, u128_to_f64};

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
                .filter(|u| u.step == j.inst.step && u.phase == 0)
                .filter(|u| matches!(u.unit, Unit::ReadRequest | Unit::Completion))
                .any(|u| mixed(u.channel))
    })
}

/// What one read use's wait depends on besides the round's loads ([`Fabric::loaded_shares`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct WaitKey {
    engine: ReadEngineId,
    channel: ChannelId,
    unit: u8,
    units: u32,
    unit_wire: u64,
    /// The channel before on the route, where its unit is the same and other windows'
    /// transfers are met there: those met on both queue in tandem.
    tandem_on: Option<ChannelId>,
}

/// The tables of [`Fabric::uses_by_channel`], kept between solves: per channel, the table that
/// last met it (a mark without clearing) and its place among the distinct channels; per place,
/// where its run of uses begins; and the loaded rounds' waits ([`Fabric::loaded_shares`]).
#[derive(Debug)]
pub(super) struct ByChannel {
    stamp: u64,
    seen: Paged<u64>,
    slot: Paged<u32>,
    channels: Vec<ChannelId>,
    next: Vec<usize>,
    /// Place `i`'s uses are `starts[i]..starts[i + 1]` of the table.
    starts: Vec<usize>,
    waits: HashMap<WaitKey, f64, FastHash>,
}

impl ByChannel {
    /// Tables for `channels` channels.
    pub(super) fn new(channels: usize) -> ByChannel {
        ByChannel {
            stamp: 0,
            seen: Paged::new(channels),
            slot: Paged::new(channels),
            channels: Vec::new(),
            next: Vec::new(),
            starts: Vec::new(),
            waits: HashMap::default(),
        }
    }
}

/// Rounds of the loaded round-trip fixed point ([`Fabric::loaded_shares`]).
const LOADED_ROUNDS: usize = 3;

/// Where the loaded round trips of a solve start ([`Fabric::loaded_shares`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rounds {
    /// From the idle round trips, up to [`LOADED_ROUNDS`] rounds while any weight changes:
    /// the exact solve, a function of the demands alone.
    Cold,
    /// Where re-solves are batched ([`crate::components::Sharing`]): from the round trip each
    /// read had at its last solve (a group solved again and again changes little between two
    /// solves), stopping once no round trip moves by more than `tol_ppm` millionths (the
    /// batching's own tolerance). A solve then costs one or two fluid solves, not four.
    Warm { tol_ppm: u32 },
}

impl Fabric<'_> {
    /// New max-min rates for the active transfers that share a resource, directly or through
    /// others, with `seeds` (a transfer that started, or those that shared with one that
    /// ended), and the next end. Max-min sharing (progressive filling, the byte-fair
    /// refinement, the loaded round trips) decomposes over groups of transfers that share no
    /// resource: each group's rates are what a solve of every active transfer gives it, so
    /// the others keep theirs and a start or end costs what its group holds, not the fabric.
    pub(super) fn bulk_solve(&mut self, seeds: &[usize], now: Ps, q: &mut Queue<Event>) {
        let group = self.sharing_group(seeds);
        // The solve that marked the group ([`Fabric::sharing_group`]): a transfer on one of
        // its memories without that mark is outside it.
        let mark = self.bulk.solves;
        let jobs: Vec<&Job> = group.iter().map(|&id| &self.bulk.jobs[id]).collect();
        let (shares, rtts) = match self.reads_meet_others(&jobs) {
            true => {
                let rounds = match self.lazy() {
                    true => Rounds::Warm {
                        tol_ppm: self.opts.sharing.defer_ppm,
                    },
                    false => Rounds::Cold,
                };
                self.loaded_shares(&jobs, rounds, Some(mark))
            }
            false => {
                let idle: Vec<&Demand> = jobs.iter().map(|j| &*j.demand).collect();
                ((self.bulk.fluid).solve(&idle), Vec::new())
            }
        };
        for (k, s) in shares.into_iter().enumerate() {
            let id = group[k];
            let limit = s.bound.map_or(Limit::None, |r| self.bulk.limit_of(r));
            self.share_head(id, s.rate.max(1));
            self.rerate(id, s.rate.max(1), limit, now);
            let rtt = rtts.get(k).copied().unwrap_or(0);
            self.bulk.jobs[id].rtt = u64::try_from(rtt).unwrap_or(u64::MAX);
        }
        self.bulk_schedule(now, q);
    }

    /// Whether some active read's requests or completions cross a channel with a transfer not
    /// under its read window, read from the channels' user lists: when none does, the loaded
    /// rounds of [`Fabric::loaded_shares`] would change nothing ([`reads_meet_other_windows`]
    /// would say so after sorting every use of the group), and the idle solve is the answer.
    fn reads_meet_others(&self, jobs: &[&Job]) -> bool {
        jobs.iter().any(|j| {
            j.read.is_some_and(|rw| {
                (j.uses.iter())
                    .filter(|u| u.step == j.inst.step && u.phase == 0)
                    .filter(|u| matches!(u.unit, Unit::ReadRequest | Unit::Completion))
                    .any(|u| {
                        (self.bulk.users(u.channel).iter())
                            .any(|&o| !same_window(&self.bulk.jobs[o], rw.engine))
                    })
            })
        })
    }

    /// The active transfers reachable from `seeds` through shared resources (links, memories
    /// that could saturate, read windows), in the order of the active list (the order a solve
    /// of all of them sees). Each is marked with this solve's number (`reached`).
    fn sharing_group(&mut self, seeds: &[usize]) -> Vec<usize> {
        let specs = &self.channels;
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
            for u in job.uses.iter() {
                let c = u.channel.index();
                if b.channel_reached[c] != mark && !b.slack(u.channel, &specs[c]) {
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

    /// Every use of `jobs` as (channel, transfer, use), by channel, then transfer, then use:
    /// a counting sort over the distinct channels (a few thousand in the largest groups)
    /// instead of a sort of every use (hundreds of thousands), in the same order.
    fn uses_by_channel(&self, jobs: &[&Job]) -> Vec<(ChannelId, usize, usize)> {
        let mut scratch = self.bulk.by_channel.borrow_mut();
        let ByChannel {
            stamp,
            seen,
            slot,
            channels,
            next,
            starts,
            ..
        } = &mut *scratch;
        *stamp += 1;
        channels.clear();
        for u in jobs.iter().flat_map(|j| j.uses.iter()) {
            if seen[u.channel.index()] != *stamp {
                seen[u.channel.index()] = *stamp;
                channels.push(u.channel);
            }
        }
        channels.sort_unstable();
        // Where each channel's uses begin: the counts' running sum.
        next.clear();
        next.resize(channels.len(), 0);
        for (i, c) in channels.iter().enumerate() {
            slot[c.index()] = i as u32;
        }
        for u in jobs.iter().flat_map(|j| j.uses.iter()) {
            next[slot[u.channel.index()] as usize] += 1;
        }
        let mut total = 0;
        for n in next.iter_mut() {
            (*n, total) = (total, total + *n);
        }
        starts.clear();
        starts.extend_from_slice(next);
        starts.push(total);
        // Transfers in order, each one's uses in order: each channel's run comes out sorted.
        let mut on = vec![(ChannelId(0), 0, 0); total];
        for (k, j) in jobs.iter().enumerate() {
            for (x, u) in j.uses.iter().enumerate() {
                let at = &mut next[slot[u.channel.index()] as usize];
                on[*at] = (u.channel, k, x);
                *at += 1;
            }
        }
        on
    }

    /// Max-min fair rates of `jobs`, with each read's window weight its round trip under the
    /// load the others put on its routes: solved with idle round trips, then
    /// [`LOADED_ROUNDS`] times with the queueing each solution implies (a fixed point that
    /// settles in two or three rounds; the last solution is used as it is, so every capacity
    /// still holds).
    ///
    /// Also gives the window weight (round trip) each read was solved with (0: not a read, or
    /// idle round trips throughout), for a warm start of the next solve.
    ///
    /// `members`: the mark of the sharing group `jobs` are ([`Fabric::sharing_group`]), if
    /// they are one. A memory that cannot saturate does not join its transfers into the group
    /// ([`Fabric::slack_memory`]), but a read's completions still queue there behind them: the
    /// transfers on the group's memories without the mark are counted at their standing
    /// rates.
    pub(super) fn loaded_shares(
        &self,
        jobs: &[&Job],
        rounds: Rounds,
        members: Option<u64>,
    ) -> (Vec<Share>, Vec<u128>) {
        let idle: Vec<&Demand> = jobs.iter().map(|j| &*j.demand).collect();
        let solve_idle = || (self.bulk.fluid.solve(&idle), Vec::new());
        // Those outside the group on channel `c`: only a slack memory has any (the group's
        // walk crossed every other channel of its transfers).
        let outside = move |c: ChannelId| {
            let mark = members.filter(|_| self.bulk.slack(c, &self.channels[c.index()]));
            let users = match mark {
                Some(_) => self.bulk.users(c),
                None => &[],
            };
            (users.iter().copied()).filter(move |&o| Some(self.bulk.reached[o]) != mark)
        };
        if jobs.len() < 2 && members.is_none() {
            return solve_idle();
        }
        // Every transfer's use of every channel: (channel, transfer, use), by channel, then
        // transfer, then use; the same in every round (only the loads change).
        let on = self.uses_by_channel(jobs);
        // Per channel: the one read window every transfer on it reads under, if they all do
        // (then none of them waits for another: the window already holds them).
        let mut one_window: Vec<(ChannelId, Option<ReadEngineId>)> = Vec::new();
        for run in on.chunk_by(|a, b| a.0 == b.0) {
            let engine = jobs[run[0].1].read.map(|r| r.engine);
            let same = engine.is_some_and(|e| {
                run.iter().all(|l| same_window(jobs[l.1], e))
                    && outside(run[0].0).all(|o| same_window(&self.bulk.jobs[o], e))
            });
            one_window.push((run[0].0, engine.filter(|_| same)));
        }
        if !reads_meet_other_windows(jobs, &one_window) {
            return solve_idle();
        }
        // A channel's place among the distinct channels, which is its run in `on` and its entry
        // in `one_window` (both in channel order).
        let mut scratch = self.bulk.by_channel.borrow_mut();
        let ByChannel {
            slot,
            starts,
            waits,
            ..
        } = &mut *scratch;
        let run = |c: ChannelId| {
            let i = slot[c.index()] as usize;
            starts[i]..starts[i + 1]
        };
        let mut demands: Vec<Demand> = jobs.iter().map(|j| (*j.demand).clone()).collect();
        if let Rounds::Warm { .. } = rounds {
            for (d, j) in demands.iter_mut().zip(jobs) {
                if let Some(rw) = j.read.filter(|_| j.rtt > 0) {
                    d.uses[rw.at].1 = u128::from(j.rtt);
                }
            }
        }
        let solve = |d: &[Demand]| self.bulk.fluid.solve(&d.iter().collect::<Vec<_>>());
        let mut shares = solve(&demands);
        let mut others: Vec<Load> = Vec::new();
        let mut tandem_with: Vec<usize> = Vec::new();
        for _ in 0..LOADED_ROUNDS {
            // Transfer `k`'s load on channel `c` by its use `x` at this round's rates: worked
            // out only on the channels a read waits on (not every use of the group).
            let rates = &shares;
            // Use `u` at `rate` on channel `c`.
            let load_at = move |c: ChannelId, rate: u64, u: &Use| {
                let cap = self.channels[c.index()].rate.bps() as f64 / 8.0;
                let bytes = rate as f64 * u128_to_f64(u.weight) / WEIGHT_ONE as f64;
                Load {
                    rho: bytes / cap,
                    unit_ps: u.unit_wire as f64 / cap * PS_PER_S as f64,
                    tandem: false,
                }
            };
            let load =
                move |c: ChannelId, k: usize, x: usize| load_at(c, rates[k].rate, &jobs[k].uses[x]);
            // The transfers under another window than `engine` on channel `c`, with their
            // loads: the group's ascending (`on` is sorted by channel, then transfer), then
            // those outside it (numbered after the group: `jobs.len()` + their slot).
            let met = |c: ChannelId, engine: ReadEngineId| {
                let inside = on[run(c)]
                    .iter()
                    .filter(move |l| !same_window(jobs[l.1], engine))
                    .map(move |&(c, k, x)| (c, k, load(c, k, x)));
                let beyond = outside(c)
                    .filter(move |&o| !same_window(&self.bulk.jobs[o], engine))
                    .flat_map(move |o| {
                        let j = &self.bulk.jobs[o];
                        let on_c = (j.channels.iter()).find(|e| e.0 == c);
                        (on_c.map_or(&[][..], |e| &e.1[..]).iter()).map(move |&x| {
                            (c, jobs.len() + o, load_at(c, j.rate, &j.uses[x as usize]))
                        })
                    });
                inside.chain(beyond)
            };
            // A wait is a function of the window, the channel and unit, the channel before it
            // on the route (whose transfers queue in tandem) and the loads: the transfers of
            // one window on one route (a NIC's reads for many flows) ask the same question.
            waits.clear();
            let mut changed = false;
            for (k, j) in jobs.iter().enumerate() {
                let Some(rw) = j.read else { continue };
                let mut extra = 0.0;
                // The read use before on the route: its channel and unit, and whether other
                // windows' transfers are met there (tandem waits).
                let mut before: Option<(ChannelId, Unit, bool)> = None;
                for u in j
                    .uses
                    .iter()
                    .filter(|u| u.step == j.inst.step && u.phase == 0)
                {
                    let units = match u.unit {
                        Unit::ReadRequest => 1,
                        Unit::Completion => rw.completions,
                        _ => continue,
                    };
                    let w = slot[u.channel.index()] as usize;
                    let alone = one_window[w].1 == Some(rw.engine);
                    let tandem_on = before
                        .filter(|&(_, unit, met_others)| unit == u.unit && met_others)
                        .map(|b| b.0);
                    before = Some((u.channel, u.unit, !alone));
                    if alone {
                        continue;
                    }
                    let key = WaitKey {
                        engine: rw.engine,
                        channel: u.channel,
                        unit: u.unit as u8,
                        units,
                        unit_wire: u.unit_wire,
                        tandem_on,
                    };
                    let wait = *waits.entry(key).or_insert_with(|| {
                        tandem_with.clear();
                        if let Some(c) = tandem_on {
                            tandem_with.extend(met(c, rw.engine).map(|l| l.1));
                            // Those outside the group come after, in no order.
                            tandem_with.sort_unstable();
                        }
                        others.clear();
                        others.extend(met(u.channel, rw.engine).map(|l| Load {
                            tandem: tandem_with.binary_search(&l.1).is_ok(),
                            ..l.2
                        }));
                        let cap = self.channels[u.channel.index()].rate.bps() as f64 / 8.0;
                        queueing::wait_ps(
                            &others,
                            units,
                            u.unit_wire as f64 / cap * PS_PER_S as f64,
                        )
                    });
                    extra += wait;
                }
                let weight = rw.idle_rtt as u128 + extra.round() as u128;
                let old = &mut demands[k].uses[rw.at].1;
                let moved = match rounds {
                    Rounds::Cold => *old != weight,
                    Rounds::Warm { tol_ppm } => {
                        old.abs_diff(weight) * 1_000_000 > *old * u128::from(tol_ppm)
                    }
                };
                if moved {
                    *old = weight;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
            shares = solve(&demands);
        }
        let rtts = (demands.iter().zip(jobs))
            .map(|(d, j)| j.read.map_or(0, |rw| d.uses[rw.at].1))
            .collect();
        (shares, rtts)
    }
}

//! A unit (a doorbell, a CQE, an ACK) crossing a channel that bulk transfers use: it goes in
//! the room they leave or makes them wait while it is serialised, and the room's share of the
//! link goes back to them when it has carried the unit.

use super::*;

/// The most a unit's room may stretch its service on a link that no transfer is bound by
/// (the link at most 1 - 1/1024 busy): beyond it the link is as good as saturated, and the
/// transfers wait while the unit is serialised.
const ROOM_SERVICES: Ps = 1024;

/// The active transfers on one channel, and what a unit crossing it reads of them, kept up
/// to date as transfers join, leave and get new rates: a unit's cost there is then the same
/// for two transfers or two thousand ([`Fabric::unit_beside_bulk`]).
#[derive(Clone, Debug, Default)]
pub(super) struct ChannelUsers {
    pub(super) jobs: Vec<usize>,
    /// The sum of their rates times the weights of their uses here.
    pub(super) load: u128,
    /// How many of them this channel binds.
    pub(super) bound: u32,
    /// On a memory: its transfers grouped by their tightest channel ([`Bulks::tightest`]),
    /// each group with the most it can put here.
    peaks: Vec<Peak>,
    /// The sum of `peaks`: a bound on the load here in any solve ([`Bulks::slack`]).
    pub(super) most: u128,
    /// Their uses here by (wire bytes of one unit, source), counted and in ascending order: a
    /// unit waits behind the largest unit of a source not its own. A sorted list, not a map:
    /// a channel's users come from few sizes and a start or end moves a few entries.
    units: Vec<((u64, channel::Source), u32)>,
}

/// The transfers on a memory whose tightest channel is `channel`: how many, and the most
/// they can put on the memory (that channel's rate times the largest ratio of such a
/// transfer's weight on the memory to its weight there), kept while any of them is on it.
#[derive(Clone, Debug)]
struct Peak {
    channel: Res,
    users: u32,
    most: u128,
}

impl ChannelUsers {
    /// Adds (`sign` true) or takes away the uses of `job` on channel `c` (`on`: their indices
    /// in its uses). `tight`: on a memory, the job's tightest channel ([`Bulks::tightest`]),
    /// for the bound on the memory's load; None elsewhere (nothing reads a link's bound).
    pub(super) fn count(
        &mut self,
        job: &Job,
        on: &[u32],
        c: ChannelId,
        tight: Option<Tight>,
        sign: bool,
    ) {
        for u in on.iter().map(|&x| &job.uses[x as usize]) {
            debug_assert_eq!(u.channel, c);
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
        if let Some(t) = tight {
            self.count_peak(job, on, t, sign);
        }
        if job.bound == Limit::Channel(c) {
            match sign {
                true => self.bound += 1,
                false => self.bound -= 1,
            }
        }
    }

    /// Adds or takes away `job`'s uses `on` this memory in its tightest channel `t`'s group
    /// ([`Peak`]). Its rate is at most `t.rate / t.weight` with the others of the group: what
    /// they put here is at most t.rate x (weight here / weight there).
    fn count_peak(&mut self, job: &Job, on: &[u32], t: Tight, sign: bool) {
        let weight: u128 = on.iter().map(|&x| job.uses[x as usize].weight).sum();
        if weight == 0 {
            return;
        }
        let most = (t.rate.saturating_mul(weight)).div_ceil(t.weight);
        let at = self.peaks.iter().position(|p| p.channel == t.channel);
        match (sign, at) {
            (true, Some(i)) => {
                let p = &mut self.peaks[i];
                p.users += 1;
                if most > p.most {
                    self.most = self.most.saturating_add(most - p.most);
                    p.most = most;
                }
            }
            (true, None) => {
                self.peaks.push(Peak {
                    channel: t.channel,
                    users: 1,
                    most,
                });
                self.most = self.most.saturating_add(most);
            }
            (false, Some(i)) if self.peaks[i].users > 1 => self.peaks[i].users -= 1,
            (false, Some(i)) => {
                self.most = self.most.saturating_sub(self.peaks.swap_remove(i).most);
            }
            (false, None) => debug_assert!(false, "a transfer taken away was counted"),
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

impl Fabric<'_> {
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
    pub(in crate::components) fn unit_beside_bulk(
        &mut self,
        c: ChannelId,
        (src, now): (channel::Source, Ps),
        service: Ps,
        q: &mut Queue<Event>,
    ) -> (Ps, Ps) {
        let spec = &self.channels[c.index()];
        let cap = self.bulk.fluid.capacity[c.index()];
        let users = self.bulk.channel_users(c).filter(|u| !u.jobs.is_empty());
        let none = users.is_none();
        let (load, queued, bound) = users.map_or((0, 0, false), |u| {
            let queued = u.largest_other(src).map_or(0, |w| spec.rate.tx_time(w));
            (u.load, queued, u.bound > 0)
        });
        // The link's own rate: its capacity with the rooms of units still being carried.
        let full = cap + self.bulk.reserved[c.index()];
        // Serialised in what the rooms of units before it leave (all of the link without them).
        let serialised = match full == cap {
            true => service,
            false => (service as u128 * full).div_ceil(cap.max(1)) as Ps,
        };
        if none {
            let hold = serialised;
            let held = &mut self.bulk.unit_until[c.index()];
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
                self.bulk.fluid.capacity[c.index()] -= reserve;
                self.bulk.reserved[c.index()] += reserve;
                self.bulk.reserves[c.index()].push((reserve, now + room));
                // One wake-up per channel, at the earliest of its rooms' ends.
                let at = &mut self.bulk.gone_at[c.index()];
                if *at == 0 || now + room < *at {
                    *at = now + room;
                    q.schedule(now + room, Event::UnitGone(c));
                }
            }
            let held = &mut self.bulk.unit_until[c.index()];
            *held = (*held).max(now + hold);
            return (hold, room);
        }
        // They wait while it is serialised.
        let hold = serialised;
        let held = &mut self.bulk.unit_until[c.index()];
        *held = (*held).max(now + hold);
        self.bulk_progress(now);
        let users = users_in(&self.bulk.user_slot, &self.bulk.user_lists, c).to_vec();
        for id in users {
            // Up to now at its rate, then paused: its end moves later (its entry in the heap
            // of ends is put back there when met, [`Bulks::next_end`]).
            self.progress_one(id, now);
            let job = &mut self.bulk.jobs[id];
            job.resume_at = job.resume_at.max(now + hold);
        }
        self.bulk_schedule(now, q);
        (hold, hold)
    }

    /// The rooms of units carried on channel `c` until now go back to its transfers, which a
    /// solve shares out where the link binds one of them.
    pub(in crate::components) fn unit_gone(&mut self, c: ChannelId, now: Ps, q: &mut Queue<Event>) {
        self.bulk.gone_at[c.index()] = 0;
        let (mut back, mut next) = (0, Ps::MAX);
        self.bulk.reserves[c.index()].retain(|&(reserve, until)| {
            let gone = until <= now;
            back += if gone { reserve } else { 0 };
            if !gone {
                next = next.min(until);
            }
            !gone
        });
        if next != Ps::MAX {
            self.bulk.gone_at[c.index()] = next;
            q.schedule(next, Event::UnitGone(c));
        }
        if back == 0 {
            return;
        }
        self.bulk.fluid.capacity[c.index()] += back;
        self.bulk.reserved[c.index()] -= back;
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
}

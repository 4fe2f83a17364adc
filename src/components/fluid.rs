//! Max-min fair sharing of resources among bulk transfers (the fluid model of large messages).
//!
//! A bulk transfer moves its payload across several resources at once, at one payload rate. On
//! each resource it consumes `rate x weight`: a link direction's weight is the bytes it carries
//! per payload byte (TLP or packet headers included), a read window's weight is the round trip
//! (bytes in flight = rate x round trip, Little's law). Rates are set by progressive filling:
//! every unfrozen transfer's rate rises together until a resource saturates, whose transfers
//! freeze at that rate, and so on until every transfer is frozen.
//!
//! Progressive filling is fair in rate; a link's deficit round robin is fair in bytes. The two
//! differ where a transfer puts little on a saturated link (a copy's read requests on an uplink
//! full of another flow's writes): round robin gives it all it asks up to an equal byte share,
//! progressive filling would freeze it at the heavy transfers' rate. So the rate-fair solution is
//! refined to the byte-fair equilibrium ([`Fluid::solve`]): on every saturated link each
//! transfer may use up to the water level `L` in bytes (`sum_j min(demand_j, L) = capacity`),
//! on every read window up to the level in rate (tags go round robin, one request at a time),
//! each transfer takes the least its resources allow, until nothing changes. The result is
//! then scaled into every capacity (integer arithmetic rounds every rate down), so no resource
//! is ever above its capacity.

use std::collections::HashMap;

/// Weights are fixed point with this many units per 1.0.
pub const WEIGHT_ONE: u128 = 1 << 16;
/// A transfer that nothing limits moves at this payload rate (bytes/s): 100 TB/s.
pub const UNBOUNDED: u64 = 100_000_000_000_000;

/// Index of a resource in [`Fluid::capacity`].
pub type Res = u32;

/// One transfer's demand: the resources it uses with their weights.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Demand {
    pub uses: Vec<(Res, u128)>,
}

impl Demand {
    /// A quick digest of the uses (FNV-1a over resources and weights), to find equal demands.
    fn key(&self) -> u64 {
        self.uses.iter().fold(0xcbf2_9ce4_8422_2325, |h, &(r, w)| {
            let h = (h ^ r as u64).wrapping_mul(0x100_0000_01b3);
            let h = (h ^ w as u64).wrapping_mul(0x100_0000_01b3);
            (h ^ (w >> 64) as u64).wrapping_mul(0x100_0000_01b3)
        })
    }
}

/// The outcome of one solve for one transfer: its rate (payload bytes/s) and the resource that
/// bound it (None: unbounded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Share {
    pub rate: u64,
    pub bound: Option<Res>,
}

/// Resource capacities (in weight units per second: a link of C bytes/s has capacity
/// C x [`WEIGHT_ONE`]).
#[derive(Clone, Debug, Default)]
pub struct Fluid {
    pub capacity: Vec<u128>,
    /// Per resource: shared fairly in rate (a read window) rather than in bytes (a link).
    rate_fair: Vec<bool>,
}

/// Identical demands and how many transfers have them.
type Class<'a> = (&'a Demand, u128);

/// A resource and its users: (class, weight, count).
type Users = (Res, Vec<(usize, u128, u128)>);

/// Rounds of the byte-fair refinement (it settles in two or three where it changes anything).
const FAIR_ROUNDS: usize = 16;

impl Fluid {
    /// A link or memory: shared in bytes.
    pub fn add(&mut self, capacity: u128) -> Res {
        self.capacity.push(capacity);
        self.rate_fair.push(false);
        (self.capacity.len() - 1) as Res
    }

    /// A read window: shared in rate.
    pub fn add_window(&mut self, capacity: u128) -> Res {
        let r = self.add(capacity);
        self.rate_fair[r as usize] = true;
        r
    }

    /// Max-min fair rates of `demands` as the links' round robin shares them: progressive
    /// filling, then the byte-fair refinement (see the module documentation).
    ///
    /// Identical demands (transfers of many flows on the same route) get identical shares, so
    /// they are solved once as a class with its count: the cost follows the distinct routes,
    /// not the transfers in flight.
    pub fn solve(&self, demands: &[&Demand]) -> Vec<Share> {
        // Classes in order of first appearance (the map only finds them: deterministic).
        let mut classes: Vec<Class> = Vec::new();
        let mut index: HashMap<u64, Vec<usize>> = HashMap::new();
        let class_of: Vec<usize> = demands
            .iter()
            .map(|&d| {
                let same = index.entry(d.key()).or_default();
                match same.iter().find(|&&c| classes[c].0 == d) {
                    Some(&c) => c,
                    None => {
                        classes.push((d, 0));
                        same.push(classes.len() - 1);
                        classes.len() - 1
                    }
                }
            })
            .collect();
        for &c in &class_of {
            classes[c].1 += 1;
        }
        let filled = self.fill(&classes);
        let shares = self.byte_fair(&classes, filled);
        class_of.iter().map(|&c| shares[c]).collect()
    }

    /// From the rate-fair solution to the byte-fair equilibrium, scaled into every capacity.
    fn byte_fair(&self, demands: &[Class], mut share: Vec<Share>) -> Vec<Share> {
        if demands.iter().map(|c| c.1).sum::<u128>() < 2 {
            return share;
        }
        // Per resource with users, in resource order: (class, weight, count). Only those:
        // a solve costs what its transfers use, not every resource of the fabric.
        let mut touched: Vec<Res> = demands
            .iter()
            .flat_map(|d| d.0.uses.iter().filter(|u| u.1 > 0).map(|u| u.0))
            .collect();
        touched.sort_unstable();
        touched.dedup();
        let mut users: Vec<Users> = touched.iter().map(|&r| (r, Vec::new())).collect();
        for (j, (d, m)) in demands.iter().enumerate() {
            for &(r, w) in &d.uses {
                if w > 0 {
                    let i = touched.binary_search(&r).expect("a touched resource");
                    users[i].1.push((j, w, *m));
                }
            }
        }
        if users
            .iter()
            .all(|u| u.1.iter().map(|x| x.2).sum::<u128>() < 2)
        {
            return share;
        }
        let mut changed_any = false;
        for _ in 0..FAIR_ROUNDS {
            let mut allow: Vec<(f64, Option<Res>)> = vec![(UNBOUNDED as f64, None); demands.len()];

            for (r, us) in &users {
                let r = *r as usize;
                let cap = self.capacity[r] as f64;
                let rate_fair = self.rate_fair[r];
                // Each user's demand in fair units (bytes or rate) and its weight there.
                // (A class of m transfers consumes m times as much per unit.)
                let mut units: Vec<(f64, f64)> = us
                    .iter()
                    .map(|&(j, w, m)| {
                        let (w, m) = (w as f64, m as f64);
                        let x = share[j].rate as f64;
                        if rate_fair { (x, w * m) } else { (x * w, m) }
                    })
                    .collect();
                let used: f64 = units.iter().map(|u| u.0 * u.1).sum();
                let k_sum: f64 = units.iter().map(|u| u.1).sum();
                // Saturated (it cannot take two more bytes/s from each user, the integer slack
                // progressive filling leaves): the water level. Not: each may grow by an equal
                // part of the spare (so that growing together they just fill it).
                let weights: f64 = us.iter().map(|&(_, w, m)| (w * m) as f64).sum();
                let saturated = cap - used < 2.0 * weights + cap * 1e-9;
                let level = if saturated {
                    units.sort_by(|a, b| a.0.total_cmp(&b.0));
                    water_level(&units, cap)
                } else {
                    (cap - used) / k_sum
                };
                for (&(j, w, _), u) in us.iter().zip(&units) {
                    let fair = if saturated { level } else { u.0 + level };
                    let a = if rate_fair { fair } else { fair / w as f64 };
                    if a < allow[j].0 {
                        allow[j] = (a, Some(r as Res));
                    }
                }
            }
            let mut changed = false;
            for (j, s) in share.iter_mut().enumerate() {
                let rate = allow[j].0.min(UNBOUNDED as f64).max(1.0) as u64;
                if rate.abs_diff(s.rate) > s.rate / 1_000_000 {
                    changed = true;
                    *s = Share {
                        rate,
                        bound: allow[j].1,
                    };
                }
            }
            changed_any |= changed;
            if !changed {
                break;
            }
        }
        if changed_any {
            self.fit(&mut share, &users);
        }
        share
    }

    /// Scales the transfers on each resource above its capacity down into it (only ever
    /// lowering rates, so one pass leaves every resource within its capacity).
    fn fit(&self, share: &mut [Share], users: &[Users]) {
        for (r, us) in users {
            let r = *r as usize;
            let load: u128 = us
                .iter()
                .map(|&(j, w, m)| share[j].rate as u128 * w * m)
                .sum();
            let cap = self.capacity[r];
            if load > cap {
                for &(j, _, _) in us {
                    let scaled = (share[j].rate as u128 * cap / load) as u64;
                    share[j].rate = scaled.max(1);
                    share[j].bound = Some(r as Res);
                }
            }
        }
    }

    /// Max-min fair rates of `demands` (progressive filling). Deterministic: the result does
    /// not depend on anything but the demands and capacities. Each round costs the demands'
    /// uses plus the resources touched, and freezes at least one transfer.
    fn fill(&self, demands: &[Class]) -> Vec<Share> {
        let n = demands.len();
        let mut share = vec![
            Share {
                rate: UNBOUNDED,
                bound: None,
            };
            n
        ];
        let mut frozen = vec![false; n];
        let mut touched: Vec<Res> = demands
            .iter()
            .flat_map(|d| d.0.uses.iter().map(|u| u.0))
            .collect();
        touched.sort_unstable();
        touched.dedup();
        // Load and weight per touched resource (by its place in `touched`, so a solve costs
        // what its transfers use, not every resource of the fabric), and each transfer's uses
        // by that place.
        let at = |r: Res| touched.binary_search(&r).expect("a touched resource");
        let places: Vec<Vec<usize>> = demands
            .iter()
            .map(|d| d.0.uses.iter().map(|u| at(u.0)).collect())
            .collect();
        let mut load: Vec<u128> = vec![0; touched.len()];
        let mut wsum: Vec<u128> = vec![0; touched.len()];
        let mut level: u64 = 0;
        let mut left = n;
        while left > 0 {
            wsum.fill(0);
            for (((d, m), _), places) in demands
                .iter()
                .zip(&frozen)
                .zip(&places)
                .filter(|((_, f), _)| !**f)
            {
                for (&(_, w), &i) in d.uses.iter().zip(places) {
                    wsum[i] += w * m;
                }
            }
            // The largest common increase no resource can take more of.
            let mut step = (UNBOUNDED - level) as u128;
            for (i, &r) in touched.iter().enumerate() {
                let room = self.capacity[r as usize].saturating_sub(load[i]);
                if let Some(s) = room.checked_div(wsum[i]) {
                    step = step.min(s);
                }
            }
            let step = step as u64;
            level += step;
            for (l, w) in load.iter_mut().zip(&wsum) {
                *l += step as u128 * w;
            }
            // Freeze the transfers on every resource that cannot take one more byte/s, bound
            // by the first such resource they use.
            let saturated = |i: usize| {
                let w = wsum[i];
                w > 0 && self.capacity[touched[i] as usize].saturating_sub(load[i]) < w
            };
            let before = left;
            for (j, (d, _)) in demands.iter().enumerate() {
                if frozen[j] {
                    continue;
                }
                if let Some((&(r, _), _)) = d
                    .uses
                    .iter()
                    .zip(&places[j])
                    .find(|(u, i)| u.1 > 0 && saturated(**i))
                {
                    frozen[j] = true;
                    share[j] = Share {
                        rate: level,
                        bound: Some(r),
                    };
                    left -= 1;
                }
            }
            if left == before {
                // Nothing saturates: the rest run unbounded.
                for j in 0..n {
                    if !frozen[j] {
                        frozen[j] = true;
                        share[j] = Share {
                            rate: level,
                            bound: None,
                        };
                    }
                }
                left = 0;
            }
        }
        share
    }
}

/// The level `L` at which `sum_i min(u_i, L) * k_i = cap`, for demands `u_i` (ascending) with
/// consumption factors `k_i`: those below it keep their demand, the rest share what is left.
fn water_level(units: &[(f64, f64)], cap: f64) -> f64 {
    let mut left = cap;
    let mut k_rest: f64 = units.iter().map(|u| u.1).sum();
    for &(u, k) in units {
        if u * k_rest >= left {
            return left / k_rest;
        }
        left -= u * k;
        k_rest -= k;
    }
    units.last().map_or(cap, |u| u.0)
}

/// The weight of carrying `wire` bytes on a resource per `payload` bytes moved, rounded up (a
/// transfer never takes less of a link than it really uses).
pub fn weight(wire: u64, payload: u64) -> u128 {
    (wire as u128 * WEIGHT_ONE).div_ceil(payload.max(1) as u128)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(f: &mut Fluid, bytes_per_s: u64) -> Res {
        f.add(bytes_per_s as u128 * WEIGHT_ONE)
    }

    fn on(rs: &[Res]) -> Demand {
        Demand {
            uses: rs.iter().map(|&r| (r, WEIGHT_ONE)).collect(),
        }
    }

    #[test]
    fn two_transfers_on_one_link_get_half_each() {
        let mut f = Fluid::default();
        let l = link(&mut f, 10_000);
        let (a, b) = (on(&[l]), on(&[l]));
        let s = f.solve(&[&a, &b]);
        assert_eq!(s[0].rate, 5_000);
        assert_eq!(s[1].rate, 5_000);
        assert_eq!(s[0].bound, Some(l));
    }

    /// The classic parking lot: one transfer crosses both links, one each; max-min gives every
    /// transfer on the tighter link its half, the other link's own transfer the rest.
    #[test]
    fn max_min_leaves_the_remainder_to_whoever_can_use_it() {
        let mut f = Fluid::default();
        let (l1, l2) = (link(&mut f, 10_000), link(&mut f, 16_000));
        let (long, short1, short2) = (on(&[l1, l2]), on(&[l1]), on(&[l2]));
        let s = f.solve(&[&long, &short1, &short2]);
        assert_eq!(s[0].rate, 5_000);
        assert_eq!(s[1].rate, 5_000);
        assert_eq!(s[2].rate, 11_000);
        assert_eq!(s[2].bound, Some(l2));
    }

    /// Little's law: two reads under one window of 64 KiB with round trips of 1 and 3 us share
    /// it equally in rate: r x (1 + 3) us = 64 KiB.
    #[test]
    fn a_read_window_is_shared_by_bytes_in_flight() {
        let mut f = Fluid::default();
        let window = f.add_window(65_536 * 1_000_000_000_000);
        let near = Demand {
            uses: vec![(window, 1_000_000)],
        };
        let far = Demand {
            uses: vec![(window, 3_000_000)],
        };
        let s = f.solve(&[&near, &far]);
        assert_eq!(s[0].rate, s[1].rate);
        let want = 65_536 * 1_000_000_000_000 / 4_000_000;
        assert!(s[0].rate <= want && s[0].rate + 1 >= want);
    }

    /// Weights carry header overheads: 256-byte TLPs with 24 bytes of header use 280/256 of
    /// the link per payload byte, and no link ever carries more than its capacity.
    #[test]
    fn weights_charge_headers_and_never_exceed_capacity() {
        let mut f = Fluid::default();
        let l = link(&mut f, 63_000_000_000);
        let d = Demand {
            uses: vec![(l, weight(280, 256))],
        };
        let s = f.solve(&[&d, &d, &d]);
        let used: u128 = s.iter().map(|x| x.rate as u128 * weight(280, 256)).sum();
        assert!(used <= f.capacity[l as usize]);
        let ideal = 63_000_000_000u64 * 256 / 280 / 3;
        assert!(
            s[0].rate <= ideal && s[0].rate + 2 >= ideal,
            "{}",
            s[0].rate
        );
    }

    #[test]
    fn nothing_to_share_runs_unbounded() {
        let f = Fluid::default();
        let d = Demand::default();
        assert_eq!(
            f.solve(&[&d]),
            vec![Share {
                rate: UNBOUNDED,
                bound: None
            }]
        );
    }

    /// Round robin is fair in bytes: a transfer that puts 5% of its rate on a saturated link
    /// (read requests on an uplink full of writes) is not held to the writers' rate there; it
    /// runs at its own link's 8,000 and the writers share the rest: (10,000 - 400) / 2 each.
    /// Progressive filling alone would freeze all three at 10,000 / 2.05 = 4,878.
    #[test]
    fn a_light_user_of_a_saturated_link_gets_what_it_asks() {
        let mut f = Fluid::default();
        let (l, m) = (link(&mut f, 10_000), link(&mut f, 8_000));
        let heavy = on(&[l]);
        let light = Demand {
            uses: vec![(l, WEIGHT_ONE / 20), (m, WEIGHT_ONE)],
        };
        let s = f.solve(&[&heavy, &heavy, &light]);
        assert!(s[2].rate.abs_diff(8_000) <= 1, "{s:?}");
        assert_eq!(s[2].bound, Some(m));
        for x in &s[..2] {
            assert!(x.rate.abs_diff(4_800) <= 2, "{s:?}");
            assert_eq!(x.bound, Some(l));
        }
        let used: u128 = s.iter().map(|x| x.rate as u128).take(2).sum::<u128>() * WEIGHT_ONE
            + s[2].rate as u128 * (WEIGHT_ONE / 20);
        assert!(used <= f.capacity[l as usize]);
    }

    #[test]
    fn the_water_level_keeps_small_demands_and_splits_the_rest() {
        // Demands 1, 2, 10 (bytes) into 9: 1 and 2 kept, the last gets 6.
        assert_eq!(
            water_level(&[(1.0, 1.0), (2.0, 1.0), (10.0, 1.0)], 9.0),
            6.0
        );
        // Everyone above the level: an equal split.
        assert_eq!(water_level(&[(5.0, 1.0), (5.0, 1.0)], 6.0), 3.0);
    }
}

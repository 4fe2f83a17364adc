//! Max-min fair sharing of resources among bulk transfers (the fluid model of large messages).
//!
//! A bulk transfer moves its payload across several resources at once, at one payload rate. On
//! each resource it consumes `rate x weight`: a link direction's weight is the bytes it carries
//! per payload byte (TLP or packet headers included), a read window's weight is the round trip
//! (bytes in flight = rate x round trip, Little's law). Rates are set by progressive filling:
//! every unfrozen transfer's rate rises together until a resource saturates, whose transfers
//! freeze at that rate, and so on until every transfer is frozen. This is the fluid limit of
//! TLP-level round-robin between backlogged sources: equal shares where they compete, the
//! leftover to whoever can use it, and no resource above its capacity (integer arithmetic
//! rounds every rate down).

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
}

impl Fluid {
    pub fn add(&mut self, capacity: u128) -> Res {
        self.capacity.push(capacity);
        (self.capacity.len() - 1) as Res
    }

    /// Max-min fair rates of `demands` (progressive filling). Deterministic: the result does
    /// not depend on anything but the demands and capacities. Each round costs the demands'
    /// uses plus the resources touched, and freezes at least one transfer.
    pub fn solve(&self, demands: &[&Demand]) -> Vec<Share> {
        let n = demands.len();
        let mut share = vec![
            Share {
                rate: UNBOUNDED,
                bound: None,
            };
            n
        ];
        let mut frozen = vec![false; n];
        let mut load: Vec<u128> = vec![0; self.capacity.len()];
        let mut wsum: Vec<u128> = vec![0; self.capacity.len()];
        let mut touched: Vec<Res> = demands
            .iter()
            .flat_map(|d| d.uses.iter().map(|u| u.0))
            .collect();
        touched.sort_unstable();
        touched.dedup();
        let mut level: u64 = 0;
        let mut left = n;
        while left > 0 {
            for &r in &touched {
                wsum[r as usize] = 0;
            }
            for (d, _) in demands.iter().zip(&frozen).filter(|(_, f)| !**f) {
                for &(r, w) in &d.uses {
                    wsum[r as usize] += w;
                }
            }
            // The largest common increase no resource can take more of.
            let mut step = (UNBOUNDED - level) as u128;
            for &r in &touched {
                let room = self.capacity[r as usize].saturating_sub(load[r as usize]);
                if let Some(s) = room.checked_div(wsum[r as usize]) {
                    step = step.min(s);
                }
            }
            let step = step as u64;
            level += step;
            for &r in &touched {
                load[r as usize] += step as u128 * wsum[r as usize];
            }
            // Freeze the transfers on every resource that cannot take one more byte/s, bound
            // by the first such resource they use.
            let saturated = |r: Res| {
                let w = wsum[r as usize];
                w > 0 && self.capacity[r as usize].saturating_sub(load[r as usize]) < w
            };
            let before = left;
            for (j, d) in demands.iter().enumerate() {
                if frozen[j] {
                    continue;
                }
                if let Some(&(r, _)) = d.uses.iter().find(|u| u.1 > 0 && saturated(u.0)) {
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
        let window = f.add(65_536 * 1_000_000_000_000);
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
}

//! Which messages of a workload flow pay a reduction before they start, and how long it takes.
//!
//! A flow that forwards what it receives may combine it with its own data first (a GPU
//! reduction). A plain gated flow reduces before every message; NCCL's ring collectives only
//! at some steps of each loop (an all-reduce reduces in its reduce-scatter half, not in its
//! all-gather half), so the rule is periodic over the flow's message index.

use crate::units::Ps;

/// Message `k` pays `delay` between its gating deliveries and its start when `k >= first` and
/// `from <= k % period < to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReduceRule {
    /// The reduction's time (launch plus the message's bytes at the GPU's reduction rate).
    pub delay: Ps,
    /// Messages in one period of the pattern (at least 1).
    pub period: u32,
    /// The first reducing message's position within a period.
    pub from: u32,
    /// The position after the last reducing one (`from..to`).
    pub to: u32,
    /// Messages before this one never reduce (a ring's first sends are the rank's own data).
    pub first: u32,
}

impl ReduceRule {
    /// No reduction.
    pub const NONE: ReduceRule = ReduceRule {
        delay: 0,
        period: 1,
        from: 0,
        to: 0,
        first: 0,
    };

    /// A reduction of `delay` before every message.
    pub fn every(delay: Ps) -> ReduceRule {
        ReduceRule {
            delay,
            period: 1,
            from: 0,
            to: 1,
            first: 0,
        }
    }

    /// The delay message `k` pays after its gating deliveries.
    pub fn delay_of(&self, k: u32) -> Ps {
        let at = k % self.period.max(1);
        if k >= self.first && self.from <= at && at < self.to {
            self.delay
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_and_none() {
        assert!((0..10).all(|k| ReduceRule::every(7).delay_of(k) == 7));
        assert!((0..10).all(|k| ReduceRule::NONE.delay_of(k) == 0));
    }

    #[test]
    fn a_ring_all_reduce_reduces_in_its_first_half_only() {
        // 4 ranks, 2 slices per chunk: 6 sends per loop of 2 slices = 12 messages a loop;
        // sends 1..3 (messages 2..8) reduce, send 0 and sends 4, 5 do not.
        let r = ReduceRule {
            delay: 5,
            period: 12,
            from: 2,
            to: 8,
            first: 0,
        };
        let paying: Vec<u32> = (0..24).filter(|&k| r.delay_of(k) > 0).collect();
        assert_eq!(paying, [2, 3, 4, 5, 6, 7, 14, 15, 16, 17, 18, 19]);
    }

    #[test]
    fn first_holds_back_the_own_data() {
        let r = ReduceRule {
            delay: 1,
            period: 1,
            from: 0,
            to: 1,
            first: 3,
        };
        assert_eq!(
            (0..5).map(|k| r.delay_of(k)).collect::<Vec<_>>(),
            [0, 0, 0, 1, 1]
        );
    }
}

//! The pending-event set: a binary min-heap keyed on (time, insertion sequence).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::units::Ps;

struct Entry<E> {
    /// Time in the high 64 bits, insertion sequence in the low 64: one integer compare orders
    /// by time and breaks ties first-in first-out.
    key: u128,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse for earliest-first.
        other.key.cmp(&self.key)
    }
}

/// The latest time an event may be scheduled at: 2^62 ps (about 53 days). Every time of a run
/// stays below it, so the sum of two never wraps a u64; configs whose runs could pass it are
/// refused before any work (`scenario::horizon`), and an event beyond it is dropped and flagged
/// ([`Queue::past_horizon`]) rather than wrapped into a wrong result.
pub const HORIZON: Ps = 1 << 62;

/// Events waiting to happen, and the current simulated time.
pub struct Queue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    now: Ps,
    past_horizon: bool,
}

impl<E> Default for Queue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> Queue<E> {
    /// An empty queue at time 0.
    pub fn new() -> Self {
        Queue {
            heap: BinaryHeap::with_capacity(1024),
            seq: 0,
            now: 0,
            past_horizon: false,
        }
    }

    /// Whether an event was asked for beyond [`HORIZON`] (and dropped): the run is invalid.
    pub fn past_horizon(&self) -> bool {
        self.past_horizon
    }

    /// The time of the event being handled (or of the last one handled).
    pub fn now(&self) -> Ps {
        self.now
    }

    /// Schedules `event` at absolute time `at`. Scheduling into the past is a model bug.
    #[inline]
    pub fn schedule(&mut self, at: Ps, event: E) {
        debug_assert!(
            at >= self.now,
            "causality: event at {at} ps scheduled at {} ps",
            self.now
        );
        if at > HORIZON {
            self.past_horizon = true;
            return;
        }
        let key = ((at as u128) << 64) | self.seq as u128;
        self.seq += 1;
        self.heap.push(Entry { key, event });
    }

    /// Removes the earliest event and advances the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Ps, E)> {
        let Entry { key, event } = self.heap.pop()?;
        let at = (key >> 64) as Ps;
        self.now = at;
        Some((at, event))
    }

    /// Events still waiting.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no event is waiting (the run is over).
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_past_the_horizon_is_dropped_and_flagged() {
        let mut q: Queue<u8> = Queue::new();
        q.schedule(HORIZON, 1);
        assert!(!q.past_horizon());
        q.schedule(HORIZON + 1, 2);
        assert!(q.past_horizon());
        assert_eq!(q.pop(), Some((HORIZON, 1)));
        assert_eq!(q.pop(), None);
    }
}

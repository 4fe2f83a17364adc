//! The pending-event set: a four-ary min-heap keyed on (time, insertion sequence), with the
//! events due at the current instant in a first-in first-out line beside it.
//!
//! About one event in ten is scheduled for the instant being handled (a step that starts at
//! once, a follow-up due now). Such an event comes after every event already waiting for this
//! instant (those were scheduled earlier, so their sequence numbers are lower) and before any
//! later instant, so it needs no place in the heap: it joins the line, which the queue drains
//! once the heap holds nothing more for now. The order is exactly the heap's order on
//! (time, sequence).

use std::collections::VecDeque;

use crate::units::Ps;

struct Entry<E> {
    /// Time in the high 64 bits, insertion sequence in the low 64: one integer compare orders
    /// by time and breaks ties first-in first-out.
    key: u128,
    event: E,
}

/// Children per heap node: a shallower heap than a binary one, whose four children of a node
/// share one or two cache lines.
const ARITY: usize = 4;

/// The latest time an event may be scheduled at: 2^62 ps (about 53 days). Every time of a run
/// stays below it, so the sum of two never wraps a u64; configs whose runs could pass it are
/// refused before any work (`scenario::horizon`), and an event beyond it is dropped and flagged
/// ([`Queue::past_horizon`]) rather than wrapped into a wrong result.
pub const HORIZON: Ps = 1 << 62;

/// Events waiting to happen, and the current simulated time.
pub struct Queue<E> {
    /// A four-ary min-heap on `key`: the children of node `i` are `4i + 1 ..= 4i + 4`.
    heap: Vec<Entry<E>>,
    /// Events scheduled at `now` while `now` was the current time, in the order scheduled;
    /// each comes after every heap entry at `now` and before every later one.
    due_now: VecDeque<E>,
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
            heap: Vec::with_capacity(1024),
            due_now: VecDeque::with_capacity(64),
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
        if at == self.now {
            // Its sequence number would be the highest yet: behind everything due now.
            self.seq += 1;
            self.due_now.push_back(event);
            return;
        }
        if at > HORIZON {
            self.past_horizon = true;
            return;
        }
        let key = ((at as u128) << 64) | self.seq as u128;
        self.seq += 1;
        self.push(Entry { key, event });
    }

    /// Removes the earliest event and advances the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Ps, E)> {
        // A heap entry due now was scheduled before the line's first (at an earlier time).
        let heap_now = self
            .heap
            .first()
            .is_some_and(|e| (e.key >> 64) as Ps == self.now);
        if !heap_now && let Some(event) = self.due_now.pop_front() {
            return Some((self.now, event));
        }
        let Entry { key, event } = self.pop_heap()?;
        let at = (key >> 64) as Ps;
        self.now = at;
        Some((at, event))
    }

    /// Events still waiting.
    pub fn len(&self) -> usize {
        self.heap.len() + self.due_now.len()
    }

    /// Whether no event is waiting (the run is over).
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty() && self.due_now.is_empty()
    }

    /// Adds `entry` to the heap: up from a new leaf past every parent with a later key.
    #[inline]
    fn push(&mut self, entry: Entry<E>) {
        let key = entry.key;
        let mut i = self.heap.len();
        self.heap.push(entry);
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.heap[parent].key <= key {
                break;
            }
            self.heap.swap(i, parent);
            i = parent;
        }
    }

    /// Removes the heap's earliest entry: the last leaf goes to the root and down past every
    /// child with an earlier key.
    #[inline]
    fn pop_heap(&mut self) -> Option<Entry<E>> {
        let last = self.heap.pop()?;
        if self.heap.is_empty() {
            return Some(last);
        }
        let top = std::mem::replace(&mut self.heap[0], last);
        let n = self.heap.len();
        let key = self.heap[0].key;
        let mut i = 0;
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            let end = (first + ARITY).min(n);
            let mut best = first;
            let mut best_key = self.heap[first].key;
            for c in first + 1..end {
                let k = self.heap[c].key;
                if k < best_key {
                    best = c;
                    best_key = k;
                }
            }
            if key <= best_key {
                break;
            }
            self.heap.swap(i, best);
            i = best;
        }
        Some(top)
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

    /// Events numbered in the order scheduled pop in (time, number) order, whether they wait
    /// in the heap or in the line of those due now.
    #[test]
    fn pops_in_time_then_schedule_order() {
        let mut q: Queue<u32> = Queue::new();
        let mut popped = Vec::new();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut rand = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let mut id = 0u32;
        // The time each event was scheduled for, by number.
        let mut due = Vec::new();
        for _ in 0..50 {
            due.push(rand(20));
            q.schedule(due[id as usize], id);
            id += 1;
        }
        // Each popped event schedules 0 to 3 more, some now, some a little later.
        let mut left = 20_000;
        while let Some((now, e)) = q.pop() {
            popped.push((now, e));
            if left == 0 {
                continue;
            }
            for _ in 0..rand(4) {
                left -= 1;
                let at = now + [0, 0, 1, 7, 30][rand(5) as usize];
                due.push(at);
                q.schedule(at, id);
                id += 1;
                if left == 0 {
                    break;
                }
            }
        }
        // Every event popped once, at its time: by time, then in the order scheduled.
        assert_eq!(popped.len(), id as usize);
        assert!(popped.iter().all(|&(at, e)| due[e as usize] == at));
        assert!(popped.windows(2).all(|w| w[0] < w[1]), "time, then number");
        assert!(q.is_empty());
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn an_event_due_now_follows_those_waiting_for_now() {
        let mut q: Queue<&str> = Queue::new();
        q.schedule(5, "a");
        q.schedule(10, "b");
        q.schedule(10, "c");
        assert_eq!(q.pop(), Some((5, "a")));
        q.schedule(5, "a2");
        q.schedule(10, "d");
        assert_eq!(q.pop(), Some((5, "a2")));
        assert_eq!(q.pop(), Some((10, "b")));
        // Due now, after "c" and "d" (scheduled before the clock reached 10).
        q.schedule(10, "e");
        assert_eq!(q.len(), 3);
        assert_eq!(q.pop(), Some((10, "c")));
        assert_eq!(q.pop(), Some((10, "d")));
        assert_eq!(q.pop(), Some((10, "e")));
        assert_eq!(q.pop(), None);
    }
}

//! The discrete-event core: a time-ordered queue of events and the loop that drains it.
//!
//! The engine is generic over the event type and knows nothing of PCIe, NICs or GPUs: a model
//! implements [`Handler`] and receives its own events back in time order. Events at the same
//! picosecond are delivered in the order they were scheduled (FIFO ties), which makes every run
//! deterministic without the model having to break ties itself.

mod queue;

pub use queue::{HORIZON, Queue};

use crate::units::Ps;

/// A model driven by the engine: it handles one event at a time and may schedule more.
pub trait Handler {
    /// The model's own event type (the fabric's is [`crate::components::Event`]).
    type Event;
    /// Handles `event`, due at `now` (picoseconds), scheduling any follow-up events on `queue` at
    /// `now` or later.
    fn handle(&mut self, now: Ps, event: Self::Event, queue: &mut Queue<Self::Event>);
}

/// What a run did, for benches and sanity checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Events handled.
    pub events: u64,
    /// Time of the last event handled, in picoseconds.
    pub end_time: Ps,
    /// An event fell beyond [`HORIZON`]: the run's times are not valid.
    pub past_horizon: bool,
}

/// Drains the queue into the handler until no event is left.
pub fn run<H: Handler>(handler: &mut H, queue: &mut Queue<H::Event>) -> RunStats {
    let mut events = 0u64;
    while let Some((now, event)) = queue.pop() {
        handler.handle(now, event, queue);
        events += 1;
    }
    RunStats {
        events,
        end_time: queue.now(),
        past_horizon: queue.past_horizon(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain of timers: each event schedules the next one `step` later until `left` hits 0.
    struct Chain {
        seen: Vec<(Ps, u32)>,
    }
    impl Handler for Chain {
        type Event = (u32, Ps);
        fn handle(&mut self, now: Ps, (left, step): (u32, Ps), q: &mut Queue<(u32, Ps)>) {
            self.seen.push((now, left));
            if left > 0 {
                q.schedule(now + step, (left - 1, step));
            }
        }
    }

    #[test]
    fn events_arrive_in_time_order_and_time_never_goes_back() {
        let mut q = Queue::new();
        q.schedule(50, (2, 7));
        q.schedule(10, (3, 100));
        let mut h = Chain { seen: vec![] };
        let stats = run(&mut h, &mut q);
        assert_eq!(stats.events, 7);
        assert!(h.seen.windows(2).all(|w| w[0].0 <= w[1].0));
        assert_eq!(stats.end_time, 310);
    }

    #[test]
    fn ties_are_fifo() {
        struct Log(Vec<u32>);
        impl Handler for Log {
            type Event = u32;
            fn handle(&mut self, _: Ps, e: u32, _: &mut Queue<u32>) {
                self.0.push(e);
            }
        }
        let mut q = Queue::new();
        for e in [5, 1, 9, 3] {
            q.schedule(42, e);
        }
        let mut h = Log(vec![]);
        run(&mut h, &mut q);
        assert_eq!(h.0, vec![5, 1, 9, 3]);
    }
}

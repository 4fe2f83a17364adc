//! The receive queue of a Send or a Write with Immediate, and the RNR NAK: the receiving thread
//! keeps `depth` receive WQEs posted, reposting one with each poll. When a message's first
//! packet reaches the receiving NIC
//! and no receive WQE is posted for it, the NIC answers with an RNR NAK; the sender waits the
//! QP's RNR timer and sends again, until a retry finds one (rnr_retry = 7, infinite, as perftest
//! sets it). An RC queue pair keeps its order, so the Sends behind a refused one are dropped
//! and resent with it.
//!
//! The model holds the refused message's data at the receiving NIC (trains, or a bulk transfer
//! in its latency phase) and lets it in at the first retry that finds a posted WQE: `since + k ×
//! retry`, where `retry` is the timer plus the NAK's and the resend's trip. The wire time of the
//! refused packets is not charged twice (at a 10 µs timer and up, a retry costs far more in
//! waiting than in bytes). Each refusal is counted.

use super::Event;
use super::fabric::{Fabric, Train};
use super::steps::Instance;
use crate::engine::Queue;
use crate::plan::{RecvQueue, StepId};
use crate::units::Ps;

/// Data of a refused message, waiting at the receiving NIC.
#[derive(Clone, Debug)]
pub enum Held {
    Train(Train),
    Bulk(usize),
}

/// A refused message: since when, when its data goes in (once its receive is posted), and
/// what waits.
#[derive(Clone, Debug, Default)]
pub struct Hold {
    since: Ps,
    release: Option<Ps>,
    items: Vec<Held>,
}

impl Fabric<'_> {
    fn recv_queue(&self, flow: u32) -> Option<RecvQueue> {
        self.flows[flow as usize].plan.recv_queue
    }

    /// Whether message `msg`'s receive WQE is posted: one of the first `depth`, or the poll of
    /// message `msg - depth` reposted it.
    pub(super) fn recv_posted(&self, flow: u32, msg: u32) -> bool {
        let Some(rq) = self.recv_queue(flow) else {
            return true;
        };
        let f = &self.flows[flow as usize];
        msg < rq.depth || f.msgs[(msg - rq.depth) as usize].polled
    }

    /// Message `msg` starts: whether its receive WQE fetch may start with it (the WQE is posted).
    pub(super) fn fetch_may_start(&mut self, flow: u32, msg: u32, step: StepId) -> bool {
        let Some(rq) = self.recv_queue(flow) else {
            return true;
        };
        if Some(step) != rq.fetch {
            return true;
        }
        let posted = self.recv_posted(flow, msg);
        self.flows[flow as usize].msgs[msg as usize].fetch_deferred = !posted;
        posted
    }

    /// Step `step` of message `msg` is done at `when`: if it is the poll that reposts, message
    /// `msg + depth`'s receive WQE is posted now (its fetch starts if the message has, and a
    /// refused message learns when its retry gets in).
    pub(super) fn on_step_done(
        &mut self,
        Instance { flow, msg, step }: Instance,
        when: Ps,
        now: Ps,
        q: &mut Queue<Event>,
    ) {
        let Some(rq) = self.recv_queue(flow) else {
            return;
        };
        if step != rq.poll {
            return;
        }
        let next = msg + rq.depth;
        let f = &mut self.flows[flow as usize];
        f.msgs[msg as usize].polled = true;
        // A message not yet scheduled to start (at or past the flow's next) has not started:
        // its state, far ahead in the stream, need not be read.
        if next >= f.total || next >= f.next || !f.msgs[next as usize].started {
            // Not started yet: it finds its WQE posted when it starts.
            return;
        }
        let m = &mut f.msgs[next as usize];
        let retry = f.rnr_retry;
        if let Some(h) = m.hold.as_mut()
            && h.release.is_none()
            && f.held.front() == Some(&next)
        {
            let release = first_retry_after(h.since, when, retry);
            m.rnr_naks += ((release - h.since) / retry - 1) as u32;
            h.release = Some(release);
            q.schedule(release, Event::RnrRetry { flow, msg: next });
        }
        if let Some(fetch) = rq.fetch {
            self.start_fetch((flow, next, fetch), when, now, q);
        }
    }

    /// Starts message `msg`'s receive WQE fetch if it was held back for want of a posted WQE.
    fn start_fetch(
        &mut self,
        (flow, msg, fetch): (u32, u32, StepId),
        when: Ps,
        now: Ps,
        q: &mut Queue<Event>,
    ) {
        let m = &mut self.flows[flow as usize].msgs[msg as usize];
        if m.fetch_deferred {
            m.fetch_deferred = false;
            self.start_step(Instance::new(flow, msg, fetch), when, now, q);
        }
    }

    /// Data of message `msg` reaches the receiving NIC: `Some` gives it back to go in; `None`
    /// means it waits (an RNR NAK, or a refused Send ahead of it on the queue pair).
    pub(super) fn rnr_gate(&mut self, flow: u32, msg: u32, item: Held, now: Ps) -> Option<Held> {
        if self.recv_queue(flow).is_none() {
            return Some(item);
        }
        let posted = self.recv_posted(flow, msg);
        let f = &mut self.flows[flow as usize];
        let m = &mut f.msgs[msg as usize];
        if let Some(h) = m.hold.as_mut() {
            h.items.push(item);
            return None;
        }
        // Behind a refused Send of the queue pair (held in order, so the first is the oldest).
        let behind = f.held.front().is_some_and(|&h| h < msg);
        if !behind && posted {
            return Some(item);
        }
        if !behind {
            m.rnr_naks += 1;
        }
        m.hold = Some(Hold {
            since: now,
            release: None,
            items: vec![item],
        });
        f.held.push_back(msg);
        None
    }

    /// The retry of refused message `msg` gets in: its data enters, then the Sends that waited
    /// behind it follow (now if their receives are posted, else each is refused in turn).
    pub(super) fn rnr_retry(&mut self, flow: u32, msg: u32, now: Ps, q: &mut Queue<Event>) {
        let mut msg = msg;
        loop {
            let f = &mut self.flows[flow as usize];
            debug_assert_eq!(f.held.front(), Some(&msg));
            f.held.pop_front();
            let items = f.msgs[msg as usize]
                .hold
                .take()
                .map(|h| h.items)
                .unwrap_or_default();
            for item in items {
                match item {
                    Held::Train(t) => self.receive(t, now, q),
                    Held::Bulk(id) => self.bulk_ready(id, now, q),
                }
            }
            let f = &mut self.flows[flow as usize];
            let Some(&next) = f.held.front() else {
                return;
            };
            if !self.recv_posted(flow, next) {
                // Resent behind the retry, and refused: its own RNR NAK.
                let f = &mut self.flows[flow as usize];
                let m = &mut f.msgs[next as usize];
                m.rnr_naks += 1;
                if let Some(h) = m.hold.as_mut() {
                    h.since = now;
                }
                return;
            }
            msg = next;
        }
    }
}

/// The first retry, `since + k × retry` with k ≥ 1, at or after `posted`.
fn first_retry_after(since: Ps, posted: Ps, retry: Ps) -> Ps {
    let k = posted.saturating_sub(since).div_ceil(retry).max(1);
    since + k * retry
}

#[cfg(test)]
mod tests {
    use super::first_retry_after;

    #[test]
    fn a_retry_waits_whole_timer_periods() {
        // Posted before the first retry: one period.
        assert_eq!(first_retry_after(100, 150, 640), 740);
        // Posted at once: still the NAK and one period.
        assert_eq!(first_retry_after(100, 100, 640), 740);
        // Posted after two periods and a bit: three.
        assert_eq!(first_retry_after(100, 100 + 1281, 640), 100 + 3 * 640);
        assert_eq!(first_retry_after(0, 1280, 640), 1280);
    }
}

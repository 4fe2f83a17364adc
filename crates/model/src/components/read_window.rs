//! A DMA requester's outstanding-read window: the tags it may have in flight and the requests
//! waiting for one. A NIC owns two (payload reads, WQE fetches) and a GPU's copy engine two
//! (reads over PCIe, reads of peers over NVLink); the fabric's read path
//! ([`super::fabric::Fabric::read`]) issues requests under them.

use std::collections::VecDeque;

use super::fabric::{ENGINE_FLOW, TrainId};
use crate::topology::ChannelId;
use crate::units::Ps;

/// A DMA requester's outstanding-read window, in read requests (tags), and its requests
/// waiting for a tag: one queue per flow, served round robin one request at a time, as a NIC's
/// scheduler arbitrates between its queue pairs (the fluid model's fair share of the window);
/// a copy engine has one queue for all flows, because it moves its copies one after the other.
#[derive(Debug)]
pub struct ReadWindow {
    pub tags_free: u32,
    /// Non-empty queues by flow (or [`ENGINE_FLOW`]), the next to be served first.
    waiting: VecDeque<(u32, VecDeque<TrainId>)>,
    one_queue: bool,
    /// The memory that answered this engine's last read completion and when that left it: a
    /// memory answers one requester's reads in the order they came (the access jitter delays
    /// them, never reorders them, so a delay cannot let a later read overtake an earlier one
    /// and make a transfer faster than noise-free).
    pub last_data: Option<(ChannelId, Ps)>,
}

impl ReadWindow {
    /// A window of `tags` reads; `one_queue`: every flow's requests in one queue (a copy
    /// engine's), else a queue per flow served round robin (a NIC's).
    pub fn new(tags: u32, one_queue: bool) -> ReadWindow {
        ReadWindow {
            tags_free: tags,
            waiting: VecDeque::new(),
            one_queue,
            last_data: None,
        }
    }

    /// Request `id` of flow `flow` waits for a tag.
    pub fn push(&mut self, flow: u32, id: TrainId) {
        let key = if self.one_queue { ENGINE_FLOW } else { flow };
        match self.waiting.iter_mut().find(|w| w.0 == key) {
            Some(w) => w.1.push_back(id),
            None => self.waiting.push_back((key, VecDeque::from([id]))),
        }
    }

    /// The next request to issue: the head of the next queue in turn.
    pub fn pop(&mut self) -> Option<TrainId> {
        let (key, mut queue) = self.waiting.pop_front()?;
        let id = queue.pop_front();
        if !queue.is_empty() {
            self.waiting.push_back((key, queue));
        }
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flows_take_turns_one_request_at_a_time() {
        let mut w = ReadWindow::new(4, false);
        for id in [1, 2, 3] {
            w.push(0, TrainId(id));
        }
        w.push(7, TrainId(10));
        let order: Vec<TrainId> = std::iter::from_fn(|| w.pop()).collect();
        assert_eq!(order, [1, 10, 2, 3].map(TrainId));
    }

    #[test]
    fn one_queue_keeps_the_order_of_arrival_across_flows() {
        let mut w = ReadWindow::new(4, true);
        w.push(0, TrainId(1));
        w.push(0, TrainId(2));
        w.push(7, TrainId(10));
        let order: Vec<TrainId> = std::iter::from_fn(|| w.pop()).collect();
        assert_eq!(order, [1, 2, 10].map(TrainId));
    }
}

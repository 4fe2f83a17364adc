//! The application on both hosts: starts messages (up to a window in flight), learns of their
//! delivery, and turns each message's stage times into spans for the recorder.

use super::Event;
use super::cpu::Task;
use super::fabric::{Fabric, Msg};
use crate::engine::{self, Queue, RunStats};
use crate::record::{Span, Stage};
use crate::units::Ps;

/// What one run of the fabric produced.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Start and delivery time of every message.
    pub messages: Vec<(Ps, Ps)>,
    pub stats: RunStats,
    /// CPU time of message 0 on both hosts.
    pub cpu_busy: Ps,
    /// Host DRAM payload bytes, from the memory channels' own records (all messages).
    pub host_mem_bytes: u64,
    /// Per message: payload bytes that reached the receiving NIC, and that were committed in the
    /// receiver's memory (byte conservation: both equal the message size).
    pub received: Vec<u64>,
    pub written: Vec<u64>,
}

impl Fabric<'_> {
    /// Sends `total` messages with at most `window` in flight, starting at time 0.
    pub fn run(&mut self, window: u32, total: u32) -> Outcome {
        self.window = window.max(1);
        self.total = total.max(1);
        self.msgs = vec![Msg::default(); self.total as usize];
        let mut q = Queue::new();
        let first = self.window.min(self.total);
        for k in 0..first {
            q.schedule(0, Event::Start { msg: k });
        }
        self.next_msg = first;
        let stats = engine::run(self, &mut q);
        let messages = self
            .msgs
            .iter()
            .map(|m| (m.start, m.delivered.unwrap_or(stats.end_time)))
            .collect();
        if self.recorder.enabled {
            for msg in 0..self.total {
                for span in self.message_spans(msg) {
                    self.recorder.span(span);
                }
            }
        }
        Outcome {
            messages,
            stats,
            cpu_busy: self.msgs[0].cpu_busy,
            host_mem_bytes: self.host_mem_payload_bytes(),
            received: self.msgs.iter().map(|m| m.rx_bytes).collect(),
            written: self.msgs.iter().map(|m| m.written_bytes).collect(),
        }
    }

    pub fn start_message(&mut self, msg: u32, now: Ps, q: &mut Queue<Event>) {
        self.msgs[msg as usize].start = now;
        let (s, r) = (self.plan.sender, self.plan.receiver);
        if s.staging.is_some() {
            self.cpu_push(0, Task::MemcpyD2h { msg }, now, q);
        }
        if s.register > 0 {
            self.cpu_push(
                0,
                Task::Register {
                    msg,
                    cost: s.register,
                },
                now,
                q,
            );
        }
        self.cpu_push(0, Task::Post { msg }, now, q);
        if r.register > 0 {
            // The receiver registers its buffer meanwhile (it must exist before the data lands;
            // with equal costs it always does, since the sender registers first too).
            self.cpu_push(
                1,
                Task::Register {
                    msg,
                    cost: r.register,
                },
                now,
                q,
            );
        }
    }

    /// The data is visible to its consumer on the receiver: the one-way latency ends here.
    pub fn deliver(&mut self, msg: u32, now: Ps, q: &mut Queue<Event>) {
        self.msgs[msg as usize].delivered = Some(now);
        self.maybe_free_slot(msg, now, q);
    }

    /// The sender reaped the send completion (the RC ACK came back).
    pub fn send_reaped(&mut self, msg: u32, now: Ps, q: &mut Queue<Event>) {
        self.msgs[msg as usize].send_reaped = true;
        self.maybe_free_slot(msg, now, q);
    }

    /// A window slot (and its bounce buffers) is free once the sender has its completion and
    /// the receiver has consumed the data; the next message may then start.
    fn maybe_free_slot(&mut self, msg: u32, now: Ps, q: &mut Queue<Event>) {
        let m = &self.msgs[msg as usize];
        if m.send_reaped && m.delivered.is_some() && self.next_msg < self.total {
            let next = self.next_msg;
            self.next_msg += 1;
            q.schedule(now, Event::Start { msg: next });
        }
    }

    /// Message `msg`'s stages as spans, in pipeline order.
    pub fn message_spans(&self, msg: u32) -> Vec<Span> {
        let m = &self.msgs[msg as usize];
        let mut stages = m.stages;
        // The receive CQE is only meaningful once the data it announces has landed. Where the
        // data shares the CQE's route (host memory) it lands first and the CQE's own cost starts
        // after it; where it does not (GPU memory) the CQE may land first, and keeps its span.
        if let (Some(w), Some(c)) = (
            stages[Stage::DmaWrite as usize],
            stages[Stage::Cqe as usize].as_mut(),
        ) && w.end <= c.end
        {
            let s = w.end.max(c.start);
            c.start = s;
            c.last_in = s;
            c.first_out = c.first_out.max(s);
        }
        let data = |stage: Stage| match stage {
            Stage::MemcpyD2h
            | Stage::DmaRead
            | Stage::NicTx
            | Stage::Wire
            | Stage::NicRx
            | Stage::DmaWrite
            | Stage::MemcpyH2d => self.plan.size,
            _ => 0,
        };
        Stage::ALL
            .into_iter()
            .filter_map(|stage| {
                stages[stage as usize].map(|t| Span {
                    msg,
                    stage,
                    component: m.stage_component[stage as usize],
                    start: t.start,
                    first_out: t.first_out,
                    last_in: t.last_in,
                    end: t.end,
                    bytes: data(stage),
                })
            })
            .collect()
    }
}

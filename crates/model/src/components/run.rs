//! The application on every host: each flow starts messages (up to a window in flight) at time
//! 0 and whenever one finishes; afterwards each message's step times become spans.

use super::bulk::Limit;
use super::fabric::{Fabric, Msg};
use crate::engine::{self, Queue, RunStats};
use crate::plan::{Milestone, StepId, StepKind};
use crate::record::Span;
use crate::topology::ChannelId;
use crate::units::Ps;

/// What one flow of a run did.
#[derive(Clone, Debug, Default)]
pub struct FlowOutcome {
    /// Start and delivery time of every message.
    pub messages: Vec<(Ps, Ps)>,
    /// When each message's window slot was freed (the sender's completion).
    pub finished: Vec<Ps>,
    /// CPU time of message 0 on both hosts.
    pub cpu_busy: Ps,
    /// Per message: payload bytes that reached the receiving NIC (byte conservation: equal to
    /// the message size).
    pub received: Vec<u64>,
    /// Per message: payload bytes committed in the receiver's memory (byte conservation: equal
    /// to the message size).
    pub written: Vec<u64>,
    /// RNR NAKs the flow's Sends drew (all messages).
    pub rnr_naks: u64,
    /// The time each limit bound the flow's bulk transfers, summed over them, picoseconds.
    pub limits: Vec<(Limit, u128)>,
}

/// What one run of the fabric produced. `messages`, `cpu_busy`, `received` and `written` are
/// flow 0's (the flow of a one-flow point); `flows` has every flow's.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Flow 0's start and delivery time of every message, in picoseconds.
    pub messages: Vec<(Ps, Ps)>,
    /// The event loop's counters (events handled, end time, whether it ran past the horizon).
    pub stats: RunStats,
    /// Flow 0's CPU time of message 0 on both hosts, in picoseconds.
    pub cpu_busy: Ps,
    /// Host DRAM payload bytes, from the memory channels' own records (all messages).
    pub host_mem_bytes: u64,
    /// Flow 0's payload bytes per message that reached the receiving NIC.
    pub received: Vec<u64>,
    /// Flow 0's payload bytes per message committed in the receiver's memory.
    pub written: Vec<u64>,
    /// What each flow did, in flow order.
    pub flows: Vec<FlowOutcome>,
    /// Per channel that carried anything: its wire bytes and the time it spent serialising
    /// units (bulk transfers count in the bytes only).
    pub links: Vec<(ChannelId, u128, Ps)>,
    /// The time each limit bound the bulk transfers while they moved, summed over them, in
    /// picoseconds.
    pub limits: Vec<(Limit, u128)>,
    /// Each CPU thread's name and the time it was busy.
    pub cpu_time: Vec<(String, Ps)>,
    /// RNR NAKs over every flow.
    pub rnr_naks: u64,
}

impl Fabric<'_> {
    /// The step-state vectors flow `flow` holds: (kept with a message, pooled for reuse). A
    /// stream's memory is bounded by its messages in flight, not by the messages it sent (a
    /// recording run keeps a retired message's spans instead).
    pub fn step_state_vectors(&self, flow: usize) -> (usize, usize) {
        let f = &self.flows[flow];
        let kept = f.msgs.iter().filter(|m| !m.steps.is_empty()).count();
        (kept, f.pool.len())
    }

    /// The bulk transfer slots the run has made: a done transfer's slot is the next one's, so
    /// a stream makes as many as it has transfers in flight at once, not one per message.
    pub fn bulk_slots(&self) -> usize {
        self.bulk.jobs.len()
    }

    /// Every flow sends `total` messages with at most `window` in flight, starting at time 0.
    pub fn run(&mut self, window: u32, total: u32) -> Outcome {
        let mut q = Queue::new();
        for f in self.flows.iter_mut() {
            f.window = window.max(1);
            f.total = f.fixed_total.unwrap_or(total).max(1);
            f.msgs = vec![Msg::default(); f.total as usize];
            f.spans = match self.recorder.enabled {
                true => vec![Box::default(); f.total as usize],
                false => Vec::new(),
            };
            f.next = 0;
            f.finished = 0;
            f.limits.clear();
        }
        for flow in 0..self.flows.len() {
            self.start_ready(flow as u32, 0, &mut q);
        }
        let stats = engine::run(self, &mut q);
        if self.recorder.enabled {
            // In message order: those retired kept theirs, the others still hold their steps.
            for flow in 0..self.flows.len() {
                for msg in 0..self.flows[flow].total {
                    let f = &mut self.flows[flow];
                    let spans = match f.msgs[msg as usize].steps.is_empty() {
                        true => std::mem::take(&mut f.spans[msg as usize]).into_vec(),
                        false => self.message_spans(flow as u32, msg),
                    };
                    for span in spans {
                        self.recorder.span(span);
                    }
                }
            }
        }
        let flows: Vec<FlowOutcome> = self
            .flows
            .iter()
            .map(|f| {
                // A retired message keeps its own; one still holding its steps is summed now.
                let bytes = |m: &Msg| match m.steps.is_empty() {
                    true => (m.received, m.written),
                    false => super::steps::message_bytes(f.plan, &m.steps),
                };
                FlowOutcome {
                    messages: f
                        .msgs
                        .iter()
                        .map(|m| (m.start, m.delivered.unwrap_or(stats.end_time)))
                        .collect(),
                    finished: f
                        .msgs
                        .iter()
                        .map(|m| m.finished.unwrap_or(stats.end_time))
                        .collect(),
                    cpu_busy: f.msgs[0].cpu_busy,
                    received: f.msgs.iter().map(|m| bytes(m).0).collect(),
                    written: f.msgs.iter().map(|m| bytes(m).1).collect(),
                    rnr_naks: f.msgs.iter().map(|m| m.rnr_naks as u64).sum(),
                    limits: f.limits.clone(),
                }
            })
            .collect();
        // Only channels with a server can have carried anything.
        self.bulk.flush_all_wire();
        let links = (self.servers.made_channels().into_iter())
            .filter(|&c| self.channels[c.index()].is_server())
            .map(|c| (c, self.channel_wire_bytes(c), self.servers[c.index()].busy))
            .filter(|l| l.1 > 0)
            .collect();
        let first = flows[0].clone();
        let rnr_naks = flows.iter().map(|f| f.rnr_naks).sum();
        Outcome {
            rnr_naks,
            messages: first.messages,
            stats,
            cpu_busy: first.cpu_busy,
            host_mem_bytes: self.host_mem_payload_bytes(),
            received: first.received,
            written: first.written,
            flows,
            links,
            limits: self.bulk.limits.clone(),
            cpu_time: self
                .cpus
                .iter()
                .zip(&self.cpu_names)
                .map(|(c, n)| (n.clone(), c.busy))
                .collect(),
        }
    }

    /// Message `msg` of `flow`: one span per reported step, in stage order.
    pub fn message_spans(&self, flow: u32, msg: u32) -> Vec<Span> {
        let f = &self.flows[flow as usize];
        let plan = f.plan;
        let m = &f.msgs[msg as usize];
        let mut times: Vec<_> = m.steps.iter().map(|s| s.times).collect();
        // A CQE is only meaningful once the data it announces has landed. Where the data shares
        // the CQE's route (host memory) it lands first and the CQE's own cost starts after it;
        // where it does not (GPU memory) the CQE may land first, and keeps its span.
        for (i, s) in plan.steps.iter().enumerate() {
            let StepKind::Cqe { .. } = s.kind else {
                continue;
            };
            for d in s.deps.iter().filter(|d| d.on == Milestone::LastIn) {
                if let (Some(w), Some(c)) = (times[d.step.index()], times[i].as_mut())
                    && w.end <= c.end
                {
                    let s = w.end.max(c.start);
                    c.start = s;
                    c.last_in = s;
                    c.first_out = c.first_out.max(s);
                }
            }
        }
        let mut spans: Vec<Span> = plan
            .steps
            .iter()
            .enumerate()
            .filter_map(|(i, s)| {
                let stage = s.stage?;
                let t = times[i]?;
                Some(Span {
                    flow,
                    msg,
                    step: StepId::from_index(i),
                    stage,
                    component: f.actors[s.actor as usize],
                    start: t.start,
                    first_out: t.first_out,
                    last_in: t.last_in,
                    end: t.end,
                    bytes: if s.payload { s.bytes } else { 0 },
                })
            })
            .collect();
        spans.sort_by_key(|s| s.stage);
        spans
    }
}

//! Executing plans: a message starts the steps that wait for nothing, each milestone a step
//! reaches wakes the steps waiting for it, and a train that reaches the end of its route is
//! handed to the step it belongs to, whose data then streams into the plan's next step.

use super::Event;
use super::cpu::Task;
use super::fabric::{Fabric, StageTimes, StepState, Train, read_completions};
use super::recv_queue::Held;
use crate::engine::Queue;
use crate::plan::{Milestone, StepId, StepKind};
use crate::units::Ps;

/// A step instance: one step of one message of one flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instance {
    /// The flow's index in the point (its plan).
    pub flow: u32,
    /// The message's index in the flow's stream.
    pub msg: u32,
    /// The step's index in the flow's plan.
    pub step: StepId,
}

impl Instance {
    /// Step `step` of message `msg` of flow `flow`.
    pub fn new(flow: u32, msg: u32, step: StepId) -> Instance {
        Instance { flow, msg, step }
    }

    /// Its movement number `phase` (a copy's reads, then its writes), as a unit names what it
    /// belongs to: (flow, message, step, phase).
    pub fn with_phase(self, phase: u8) -> (u32, u32, StepId, u8) {
        (self.flow, self.msg, self.step, phase)
    }
}

impl Fabric<'_> {
    pub(super) fn step_state(&mut self, Instance { flow, msg, step }: Instance) -> &mut StepState {
        &mut self.flows[flow as usize].msgs[msg as usize].steps[step.index()]
    }

    /// Message `msg` of `flow` starts: every step that waits for nothing starts now.
    pub fn start_message(&mut self, flow: u32, msg: u32, now: Ps, q: &mut Queue<Event>) {
        let f = &mut self.flows[flow as usize];
        let mut steps = f.pool.pop().unwrap_or_default();
        steps.clear();
        steps.extend_from_slice(&f.fresh);
        let m = &mut f.msgs[msg as usize];
        m.start = now;
        m.started = true;
        m.open_ends = f.open_ends;
        m.steps = steps;
        for r in 0..self.flows[flow as usize].roots.len() {
            let step = self.flows[flow as usize].roots[r];
            if self.fetch_may_start(flow, msg, step) {
                self.start_step(Instance::new(flow, msg, step), now, now, q);
            }
        }
    }

    /// Step instance `at` reached `milestone` at time `when`: the steps waiting for it whose
    /// last dependency this was start, at the latest of their dependencies' times.
    pub fn fire(
        &mut self,
        inst: Instance,
        milestone: Milestone,
        when: Ps,
        now: Ps,
        q: &mut Queue<Event>,
    ) {
        let Instance { flow, msg, step } = inst;
        let plan = self.flows[flow as usize].plan;
        match milestone {
            Milestone::Done => {
                let first = self.step_state(inst).done_at.replace(when).is_none();
                if first && plan.open_ends.get(step.index()) == Some(&true) {
                    let m = &mut self.flows[flow as usize].msgs[msg as usize];
                    m.open_ends -= 1;
                    if m.open_ends == 0 {
                        self.retiring.push((flow, msg));
                    }
                }
                self.on_step_done(inst, when, now, q);
            }
            Milestone::LastIn => self.step_state(inst).last_in_at = Some(when),
            Milestone::Queued => {}
        }
        for &(w, on) in &plan.waiters[step.index()] {
            if on != milestone {
                continue;
            }
            let st = self.step_state(Instance::new(flow, msg, w));
            st.ready_at = st.ready_at.max(when);
            st.waiting -= 1;
            if st.waiting == 0 {
                let at = st.ready_at;
                self.start_step(Instance::new(flow, msg, w), at, now, q);
            }
        }
    }

    /// Hands a ready step to the device that executes it; `at` is when it may start (not
    /// before `now`'s event, but a NIC may schedule work for a later time).
    pub(super) fn start_step(&mut self, inst: Instance, at: Ps, now: Ps, q: &mut Queue<Event>) {
        let Instance { flow, msg, step } = inst;
        if self.unsignaled(inst) {
            // A work request without a completion: its NIC writes none and its thread polls
            // none; what waits for them waits for nothing.
            self.fire(inst, Milestone::Queued, at, now, q);
            self.fire(inst, Milestone::Done, at, now, q);
            return;
        }
        let plan = self.flows[flow as usize].plan;
        let kind = &plan.steps[step.index()].kind;
        let launches = matches!(
            kind,
            StepKind::DmaRead { .. } | StepKind::Cqe { .. } | StepKind::Packet { .. }
        );
        if at > now && !launches {
            // Met ahead of time (a bulk transfer's milestones): start when it is due.
            q.schedule(at, Event::Ready { flow, msg, step });
            return;
        }
        match kind {
            StepKind::Register { thread, .. }
            | StepKind::CpuCopy { thread, .. }
            | StepKind::Memcpy { thread, .. }
            | StepKind::Post { thread, .. }
            | StepKind::Poll { thread, .. } => {
                let cpu = self.flows[flow as usize].threads[*thread as usize];
                self.cpu_push(cpu, Task::new(inst, 0), now, q);
                self.fire(inst, Milestone::Queued, now, now, q);
            }
            StepKind::KernelCopy { .. } => {
                self.step_state(inst).started = at;
                self.start_copy(inst, at, q);
            }
            StepKind::WqeFetch { .. } => self.wqe_fetch(inst, at, now, q),
            StepKind::RecvWqeFetch { read, bytes, .. } => {
                self.step_state(inst).started = at;
                self.step_state(inst).parts = read_completions(*bytes, read.mrrs, read.mps) as u32;
                let (read, bytes) = (*read, *bytes);
                self.read_for(inst, read, bytes, false, now, q);
            }
            StepKind::DmaRead { .. } => self.payload_read(inst, at, now, q),
            StepKind::NicTx { .. } => {
                // Nothing streams in: the payload rode inside the WQE.
                let bytes = plan.steps[step.index()].bytes;
                self.packetise(inst, bytes, at, now, q);
            }
            StepKind::Cqe { .. } => self.write_cqe(inst, at, now, q),
            StepKind::Packet { .. } => self.send_packet(inst, at, now, q),
            StepKind::Wait { ps } => {
                let end = at + ps;
                if plan.stage(step).is_some() {
                    self.record_control(inst, at, end);
                }
                self.fire(inst, Milestone::Done, end, now, q);
            }
            StepKind::Ordered { data, gap } => {
                // TLP by TLP the servers kept the order: nothing to add.
                let bulk = self.is_bulk(plan.steps[(*data).index()].bytes);
                let end = if bulk { at + gap } else { at };
                self.fire(inst, Milestone::Done, end, now, q);
            }
            StepKind::Deliver => {
                self.flows[flow as usize].msgs[msg as usize].delivered = Some(at);
                self.fire(inst, Milestone::Done, at, now, q);
                for i in 0..self.flows[flow as usize].dependents.len() {
                    let d = self.flows[flow as usize].dependents[i];
                    self.start_ready(d, now, q);
                }
            }
            StepKind::Finish => {
                let f = &mut self.flows[flow as usize];
                f.msgs[msg as usize].finished = Some(now);
                f.credit(msg);
                self.start_ready(flow, now, q);
                // Nothing waits for it: its end counts only towards the message's retirement.
                self.fire(inst, Milestone::Done, now, now, q);
            }
            StepKind::Wire { .. } | StepKind::NicRx { .. } | StepKind::DmaWrite { .. } => {
                unreachable!("streaming steps start with their data")
            }
        }
    }

    /// A step deferred to `now` starts (a DMA read after its MTT lookup issues its requests).
    pub fn step_ready(&mut self, inst: Instance, now: Ps, q: &mut Queue<Event>) {
        match self.plan_of(inst.flow).steps[inst.step.index()].kind {
            StepKind::DmaRead { .. } => self.issue_payload_read(inst, now, q),
            _ => self.start_step(inst, now, now, q),
        }
    }

    /// A train reached the end of its route: the step it belongs to takes it.
    pub fn arrive(&mut self, t: Train, now: Ps, q: &mut Queue<Event>) {
        let inst = Instance::new(t.flow, t.msg, t.step);
        let plan = self.flows[t.flow as usize].plan;
        match (&plan.steps[t.step.index()].kind, t.phase) {
            (StepKind::Post { .. }, _) => {
                let from = self.step_state(inst).started;
                self.record_control(inst, from, now);
                self.fire(inst, Milestone::Done, now, now, q);
            }
            (StepKind::CpuCopy { .. }, _) => {
                // A GDRCopy into the GPU: its last stores are in GPU memory.
                if plan.stage(t.step).is_some() {
                    let from = self.step_state(inst).started;
                    self.record_control(inst, from, now);
                }
                self.fire(inst, Milestone::Done, now, now, q);
            }
            (StepKind::WqeFetch { .. }, 0) => {
                if self.last_completion(inst, &t, now, q) {
                    self.send_engine(inst, 1, now, q);
                }
            }
            (StepKind::WqeFetch { .. }, _) => self.wqe_ready(inst, now, q),
            (StepKind::RecvWqeFetch { .. }, _) => {
                if self.last_completion(inst, &t, now, q) {
                    let from = self.step_state(inst).started;
                    self.record_control(inst, from, t.head);
                    self.fire(inst, Milestone::Done, t.head, now, q);
                }
            }
            (StepKind::DmaRead { .. }, _) => {
                self.read_done(&t, now, q);
                let start = self.step_state(inst).started;
                self.record(inst, (start, start), (t.head, t.head));
                let next = plan
                    .output(t.step)
                    .expect("a DMA read streams into the NIC");
                self.packetise(
                    Instance::new(t.flow, t.msg, next),
                    t.payload,
                    t.head,
                    now,
                    q,
                );
            }
            (StepKind::NicTx { .. } | StepKind::Wire { .. }, _) => {
                self.record(inst, (t.stage_in, t.stage_in), (t.head, t.head));
                let next = plan.output(t.step).expect("packets stream on");
                let route = self.step_route(t.flow, t.msg, next);
                self.relaunch(t, route, (next, 0), now, q);
            }
            (StepKind::NicRx { .. }, _) => {
                self.record(inst, (t.stage_in, t.stage_in), (t.head, t.head));
                if let Some(Held::Train(t)) = self.rnr_gate(t.flow, t.msg, Held::Train(t), now) {
                    self.receive(t, now, q);
                }
            }
            (StepKind::DmaWrite { .. }, _) => {
                self.record(inst, (t.stage_in, t.stage_in), (t.head, t.head));
                let size = plan.steps[t.step.index()].bytes;
                let st = self.step_state(inst);
                st.bytes_out += t.payload;
                if st.bytes_out >= size {
                    self.fire(inst, Milestone::Done, t.head, now, q);
                }
            }
            (StepKind::Cqe { .. } | StepKind::Packet { .. }, _) => {
                if plan.stage(t.step).is_some() {
                    self.record(inst, (t.stage_in, t.stage_in), (t.head, t.head));
                }
                self.fire(inst, Milestone::Done, t.head, now, q);
            }
            (StepKind::Memcpy { .. } | StepKind::KernelCopy { .. }, phase) => {
                self.copy_arrive(inst, phase, t, now, q)
            }
            (kind, phase) => unreachable!("no train of {kind:?} phase {phase}"),
        }
    }

    /// A completion of a control read (a WQE, which may come back in several when it is larger
    /// than MRRS or MPS) arrived: frees the read's tag; whether it was the step's last.
    fn last_completion(
        &mut self,
        inst: Instance,
        t: &Train,
        now: Ps,
        q: &mut Queue<Event>,
    ) -> bool {
        self.read_done(t, now, q);
        let st = self.step_state(inst);
        st.parts -= 1;
        st.parts == 0
    }

    /// The fabric route of the step's own route (NIC pipelines, wire, DMA write).
    pub(super) fn step_route(&self, flow: u32, msg: u32, step: StepId) -> super::fabric::RouteId {
        let r = match self.plan_of(flow).steps[step.index()].kind {
            StepKind::NicTx { route, .. }
            | StepKind::Wire { route }
            | StepKind::NicRx { route }
            | StepKind::DmaWrite { route, .. }
            | StepKind::Cqe { route, .. }
            | StepKind::Packet { route, .. } => route,
            ref k => unreachable!("{k:?} has no route of its own"),
        };
        self.route_of(flow, msg, r)
    }

    /// Starts the next messages of `flow` that may start: while it has messages left, a free
    /// slot in its window, and every gating message delivered. A gated start comes at the
    /// latest gating delivery plus the flow's reduction, if that is later than `now`.
    pub(super) fn start_ready(&mut self, flow: u32, now: Ps, q: &mut Queue<Event>) {
        loop {
            let f = &self.flows[flow as usize];
            if f.next >= f.total || f.next - f.finished >= f.window {
                return;
            }
            let k = f.next;
            let mut at = now;
            let reduce = f.reduce.delay_of(k);
            for &(g, lag) in &f.gates {
                let on = &self.flows[g as usize];
                let Some(j) = super::fabric::gating_message(k, lag, on.total) else {
                    continue;
                };
                match on.msgs[j as usize].delivered {
                    Some(d) => at = at.max(d + reduce),
                    None => return,
                }
            }
            self.flows[flow as usize].next += 1;
            q.schedule(at, Event::Start { flow, msg: k });
        }
    }

    /// Message `msg` of `flow` has ended every open end of its plan: nothing of it is left to
    /// run, so what the run reports of it is kept in the message (and, recording, its spans
    /// in the flow's `spans`) and its step states go back to the flow's pool (see
    /// [`Fabric::retiring`]).
    pub(super) fn retire(&mut self, flow: u32, msg: u32) {
        if self.recorder.enabled {
            let spans = self.message_spans(flow, msg).into_boxed_slice();
            self.flows[flow as usize].spans[msg as usize] = spans;
        }
        let f = &mut self.flows[flow as usize];
        let m = &mut f.msgs[msg as usize];
        (m.received, m.written) = message_bytes(f.plan, &m.steps);
        f.pool.push(std::mem::take(&mut m.steps));
    }

    // ---- records -----------------------------------------------------------------------------

    /// Notes that a train of step instance `inst` passed it (entered at `inp`, left at `out`).
    pub fn record(&mut self, inst: Instance, inp: (Ps, Ps), out: (Ps, Ps)) {
        let st = self.step_state(inst);
        st.times = Some(match st.times {
            None => StageTimes {
                start: inp.0,
                last_in: inp.1,
                first_out: out.0,
                end: out.1,
            },
            Some(s) => StageTimes {
                start: s.start.min(inp.0),
                last_in: s.last_in.max(inp.1),
                first_out: s.first_out.min(out.0),
                end: s.end.max(out.1),
            },
        });
    }

    /// A piece of control work of `inst` from `start` to `end`.
    pub fn record_control(&mut self, inst: Instance, start: Ps, end: Ps) {
        self.record(inst, (start, start), (end, end));
    }
}

/// Payload bytes of one message (its step states under `plan`) that reached the receiving NIC
/// and that were committed in the receiver's memory, over every payload step of the kind (a
/// pipelined message has one per chunk).
pub(super) fn message_bytes(plan: &crate::plan::Plan, steps: &[StepState]) -> (u64, u64) {
    let (mut received, mut written) = (0, 0);
    for (s, st) in plan.steps.iter().zip(steps).filter(|(s, _)| s.payload) {
        match s.kind {
            StepKind::NicRx { .. } => received += st.bytes_in,
            StepKind::DmaWrite { .. } => written += st.bytes_out,
            _ => {}
        }
    }
    (received, written)
}

//! Host CPU threads, each running its steps (verbs and CUDA calls) one after another.
//!
//! A thread is a FIFO of tasks. Posting and polling keep it busy for their cost; a synchronous
//! cudaMemcpy keeps it busy from the call until the copy's completion is seen (the thread
//! spin-waits), which is why staging costs CPU time as well as latency.

use std::collections::VecDeque;

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::Event;
use super::channel::poll_phase;
use super::fabric::Fabric;
use super::steps::Instance;
use crate::engine::Queue;
use crate::plan::{Milestone, StepId, StepKind};
use crate::topology::{ChannelId, Unit};
use crate::units::Ps;

/// A piece of a step that runs on a thread: `phase` 0 is the step's own work; a flush also
/// polls its completion (phase 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Task {
    pub flow: u32,
    pub msg: u32,
    pub step: StepId,
    pub phase: u8,
}

impl Task {
    pub fn new(Instance { flow, msg, step }: Instance, phase: u8) -> Task {
        Task {
            flow,
            msg,
            step,
            phase,
        }
    }
    fn inst(self) -> Instance {
        Instance::new(self.flow, self.msg, self.step)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Busy until a scheduled CpuDone.
    Busy,
    /// cudaMemcpy: launched, copy engine moving data (no event pending for the CPU).
    Copying,
    /// cudaMemcpy: data landed, completion being signalled.
    Sync,
}

pub struct Cpu {
    queue: VecDeque<Task>,
    current: Option<(Task, Phase, Ps)>,
    rng: Xoshiro256PlusPlus,
    /// Time it has been busy (tasks from start to end, spin-waits included).
    pub busy: Ps,
}

impl Cpu {
    /// A thread drawing its poll phases from the stream of (seed, `identity`), a stable hash of
    /// its name and place in its flow.
    pub fn new(seed: u64, identity: u64) -> Self {
        Cpu {
            queue: VecDeque::new(),
            current: None,
            rng: Xoshiro256PlusPlus::seed_from_u64(crate::seed::mix(seed, &[identity])),
            busy: 0,
        }
    }
}

impl Fabric<'_> {
    pub(crate) fn cpu_push(&mut self, cpu: usize, task: Task, now: Ps, q: &mut Queue<Event>) {
        self.cpus[cpu].queue.push_back(task);
        if self.cpus[cpu].current.is_none() {
            self.cpu_next(cpu, now, q);
        }
    }

    /// The host whose CPU runs `task`.
    fn task_host(&self, task: Task) -> usize {
        let plan = self.plan_of(task.flow);
        let thread = plan.steps[task.step.index()]
            .kind
            .thread()
            .expect("a thread step");
        plan.threads[thread as usize].host
    }

    fn cpu_next(&mut self, cpu: usize, now: Ps, q: &mut Queue<Event>) {
        let Some(task) = self.cpus[cpu].queue.pop_front() else {
            return;
        };
        let spec = &self.topo.hosts[self.task_host(task)].spec;
        let c = spec.cpu;
        let poll = |fabric: &mut Self, extra: Ps| {
            // A busy-polling thread notices the CQE at a random phase of its poll loop.
            let phase = if fabric.opts.jitter {
                poll_phase(&mut fabric.cpus[cpu].rng, c.poll)
            } else {
                0
            };
            c.poll + phase + extra
        };
        let busy = match self.plan_of(task.flow).steps[task.step.index()].kind {
            StepKind::Register { cost, .. } | StepKind::CpuCopy { cost, .. } => cost,
            StepKind::Post { .. } => c.post,
            StepKind::Poll { extra, .. } => poll(self, extra),
            StepKind::Memcpy {
                gpu, copy, driver, ..
            } => {
                let launch = self.topo.hosts[gpu.host].spec.gpus[gpu.gpu]
                    .copy_engine
                    .launch;
                // From pageable memory, the driver first copies into its pinned buffer.
                match (copy, driver) {
                    (crate::plan::Copy::H2d { .. }, Some(d)) => {
                        let size = self.plan_of(task.flow).steps[task.step.index()].bytes;
                        self.host_dram_touch((task.flow, task.msg), d.dram, 2 * size);
                        launch + d.cost
                    }
                    _ => launch,
                }
            }
            ref k => unreachable!("{k:?} does not run on a thread"),
        };
        self.cpus[cpu].current = Some((task, Phase::Busy, now));
        q.schedule(now + busy, Event::CpuDone { cpu: cpu as u32 });
    }

    /// The current task's scheduled work ended.
    pub fn cpu_done(&mut self, cpu: usize, now: Ps, q: &mut Queue<Event>) {
        let Some((task, phase, started)) = self.cpus[cpu].current else {
            return;
        };
        let inst = task.inst();
        let kind = &self.plan_of(task.flow).steps[task.step.index()].kind;
        let reported = self.plan_of(task.flow).stage(task.step).is_some();
        match (kind, phase) {
            (StepKind::Memcpy { blocking: true, .. }, Phase::Busy) => {
                // Launch overhead over: the copy engine starts; the thread keeps waiting.
                self.cpus[cpu].current = Some((task, Phase::Copying, started));
                self.start_copy(inst, now, q);
                return;
            }
            (
                StepKind::Memcpy {
                    blocking: false, ..
                },
                Phase::Busy,
            ) => {
                // cudaMemcpyAsync: launched, the thread goes on.
                self.busy(task, now - started);
                self.step_state(inst).started = started;
                self.start_copy(inst, now, q);
            }
            (StepKind::Memcpy { .. }, Phase::Sync) => {
                self.busy(task, now - started);
                self.record_control(inst, started, now);
                self.fire(inst, Milestone::Done, now, now, q);
            }
            (
                &StepKind::CpuCopy {
                    dram,
                    bytes,
                    store: Some((route, last)),
                    ..
                },
                _,
            ) => {
                // Into the GPU: issued; done when the last stores land (steps::arrive).
                self.host_dram_touch((task.flow, task.msg), dram, bytes);
                self.busy(task, now - started);
                self.step_state(inst).started = started;
                let route = self.route_of(task.flow, task.msg, route);
                let t = self.train(route, inst.with_phase(0), Unit::Write, last, now);
                self.launch(t, now, q);
            }
            (StepKind::Register { .. } | StepKind::CpuCopy { .. }, _) => {
                if let StepKind::CpuCopy { dram, bytes, .. } = *kind {
                    self.host_dram_touch((task.flow, task.msg), dram, bytes);
                }
                self.busy(task, now - started);
                if reported {
                    self.record_control(inst, started, now);
                }
                self.fire(inst, Milestone::Done, now, now, q);
            }
            (StepKind::Post { .. }, _) => {
                self.busy(task, now - started);
                self.step_state(inst).started = started;
                self.mmio(task, now, q);
            }
            (StepKind::Poll { .. }, _) => {
                self.busy(task, now - started);
                if reported {
                    let from = self.step_state(inst).ready_at;
                    self.record_control(inst, from, now);
                }
                self.fire(inst, Milestone::Done, now, now, q);
            }
            (_, Phase::Copying) => unreachable!("a copying thread has no pending CpuDone"),
            (k, _) => unreachable!("{k:?} does not run on a thread"),
        }
        self.cpus[cpu].current = None;
        self.cpu_next(cpu, now, q);
    }

    /// The CPU moved `bytes` of payload through host DRAM channel `dram` (a load or store
    /// stream, not a DMA: counted, not queued).
    pub(super) fn host_dram_touch(&mut self, (flow, msg): (u32, u32), dram: ChannelId, bytes: u64) {
        self.servers[dram.index()].payload_bytes += bytes;
        self.flows[flow as usize].msgs[msg as usize].host_mem_bytes += bytes;
    }

    fn busy(&mut self, task: Task, d: Ps) {
        self.flows[task.flow as usize].msgs[task.msg as usize].cpu_busy += d;
        let cpu = self.flows[task.flow as usize].threads[self.task_thread(task)];
        self.cpus[cpu].busy += d;
    }

    /// The plan thread of `task`.
    fn task_thread(&self, task: Task) -> usize {
        let plan = self.plan_of(task.flow);
        plan.steps[task.step.index()]
            .kind
            .thread()
            .expect("a thread step") as usize
    }

    /// A cudaMemcpy's data all landed: after the completion signalling, the waiting thread
    /// returns.
    pub fn copy_landed(&mut self, cpu: usize, sync: Ps, now: Ps, q: &mut Queue<Event>) {
        let Some((task, Phase::Copying, started)) = self.cpus[cpu].current else {
            unreachable!("memcpy data landed without a waiting thread")
        };
        self.cpus[cpu].current = Some((task, Phase::Sync, started));
        q.schedule(now + sync, Event::CpuDone { cpu: cpu as u32 });
    }

    /// The MMIO write of a post: the WQE itself (BlueFlame, with inline data) or an 8 B doorbell.
    fn mmio(&mut self, task: Task, now: Ps, q: &mut Queue<Event>) {
        let StepKind::Post {
            mmio: route,
            bytes,
            inline,
            ..
        } = self.plan_of(task.flow).steps[task.step.index()].kind
        else {
            unreachable!("only a post writes MMIO")
        };
        if let Some(dram) = inline {
            // The CPU copies the payload out of host memory into the WQE: a DRAM read.
            let size = self.plan_of(task.flow).size;
            self.host_dram_touch((task.flow, task.msg), dram, size);
        }
        let route = self.route_of(task.flow, task.msg, route);
        let t = self.train(
            route,
            (task.flow, task.msg, task.step, 0),
            Unit::Write,
            bytes,
            now,
        );
        self.launch(t, now, q);
    }
}

//! Host CPU threads: one per host, running verbs and CUDA calls one after another.
//!
//! A thread is a FIFO of tasks. Posting and polling keep it busy for their cost; a synchronous
//! cudaMemcpy keeps it busy from the call until the copy's completion is seen (the thread
//! spin-waits), which is why staging costs CPU time as well as latency.

use std::collections::VecDeque;

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::Event;
use super::channel::poll_phase;
use super::fabric::{CqeKind, Fabric, Tag};
use crate::engine::Queue;
use crate::record::Stage;
use crate::topology::Unit;
use crate::topology::spec::WqeDelivery;
use crate::units::Ps;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Task {
    Register { msg: u32, cost: Ps },
    MemcpyD2h { msg: u32 },
    Post { msg: u32 },
    Poll { msg: u32, kind: CqeKind },
    FlushPost { msg: u32 },
    MemcpyH2d { msg: u32 },
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
}

impl Cpu {
    pub fn new(seed: u64, host: usize) -> Self {
        Cpu {
            queue: VecDeque::new(),
            current: None,
            rng: cpu_rng(seed, host),
        }
    }
}

impl Fabric<'_> {
    pub fn cpu_push(&mut self, host: usize, task: Task, now: Ps, q: &mut Queue<Event>) {
        self.cpus[host].queue.push_back(task);
        if self.cpus[host].current.is_none() {
            self.cpu_next(host, now, q);
        }
    }

    fn cpu_next(&mut self, host: usize, now: Ps, q: &mut Queue<Event>) {
        let Some(task) = self.cpus[host].queue.pop_front() else {
            return;
        };
        let spec = &self.topo.hosts[self.side(host).host].spec;
        let cpu = spec.cpu;
        let busy = match task {
            Task::Register { cost, .. } => cost,
            Task::Post { .. } | Task::FlushPost { .. } => cpu.post,
            Task::Poll { kind, .. } => {
                // A busy-polling thread notices the CQE at a random phase of its poll loop.
                let phase = if self.opts.jitter {
                    poll_phase(&mut self.cpus[host].rng, cpu.poll)
                } else {
                    0
                };
                cpu.poll
                    + phase
                    + if kind == CqeKind::Recv {
                        cpu.post_recv
                    } else {
                        0
                    }
            }
            Task::MemcpyD2h { .. } | Task::MemcpyH2d { .. } => {
                let side = if host == 0 {
                    self.plan.sender
                } else {
                    self.plan.receiver
                };
                let g = side.staging.expect("memcpy only on staged sides").gpu;
                spec.gpus[g].copy_engine.launch
            }
        };
        self.cpus[host].current = Some((task, Phase::Busy, now));
        q.schedule(now + busy, Event::CpuDone { host: host as u8 });
    }

    /// The current task's scheduled work ended.
    pub fn cpu_done(&mut self, host: usize, now: Ps, q: &mut Queue<Event>) {
        let Some((task, phase, started)) = self.cpus[host].current else {
            return;
        };
        let cpu_id = self.comp.cpu[host];
        match (task, phase) {
            (Task::MemcpyD2h { msg } | Task::MemcpyH2d { msg }, Phase::Busy) => {
                // Launch overhead over: the copy engine starts; the thread keeps waiting.
                self.cpus[host].current = Some((task, Phase::Copying, started));
                if host == 0 {
                    self.start_d2h(msg, now, q);
                } else {
                    self.start_h2d(msg, now, q);
                }
                return;
            }
            (Task::MemcpyD2h { msg }, Phase::Sync) => {
                self.msgs[msg as usize].cpu_busy += now - started;
                self.control_stage(msg, Stage::MemcpyD2h, self.comp.gpu[0], started, now);
            }
            (Task::MemcpyH2d { msg }, Phase::Sync) => {
                self.msgs[msg as usize].cpu_busy += now - started;
                self.control_stage(msg, Stage::MemcpyH2d, self.comp.gpu[1], started, now);
                self.deliver(msg, now, q);
            }
            (Task::Register { msg, .. }, _) => {
                self.msgs[msg as usize].cpu_busy += now - started;
                if host == 0 {
                    self.control_stage(msg, Stage::Register, cpu_id, started, now);
                }
            }
            (Task::Post { msg }, _) => {
                self.msgs[msg as usize].cpu_busy += now - started;
                self.msgs[msg as usize].post_start = started;
                self.mmio(0, msg, false, now, q);
            }
            (Task::FlushPost { msg }, _) => {
                self.msgs[msg as usize].cpu_busy += now - started;
                self.msgs[msg as usize].flush_start = started;
                self.mmio(1, msg, true, now, q);
            }
            (Task::Poll { msg, kind }, _) => {
                self.msgs[msg as usize].cpu_busy += now - started;
                match kind {
                    CqeKind::Recv => {
                        let cqe_at = self.msgs[msg as usize].cqe_commit;
                        self.control_stage(msg, Stage::Poll, cpu_id, cqe_at, now);
                        if self.plan.receiver.staging.is_some() {
                            self.cpu_push(1, Task::MemcpyH2d { msg }, now, q);
                        } else if self.r.flush_req.is_some() {
                            self.cpu_push(1, Task::FlushPost { msg }, now, q);
                        } else {
                            self.deliver(msg, now, q);
                        }
                    }
                    CqeKind::Send => self.send_reaped(msg, now, q),
                    CqeKind::Flush => {
                        let from = self.msgs[msg as usize].flush_start;
                        self.control_stage(msg, Stage::Flush, self.comp.nic[1], from, now);
                        self.deliver(msg, now, q);
                    }
                }
            }
            (_, Phase::Copying) => unreachable!("a copying thread has no pending CpuDone"),
        }
        self.cpus[host].current = None;
        self.cpu_next(host, now, q);
    }

    /// One burst of a cudaMemcpy committed; after the last, signal completion to the waiting
    /// thread.
    pub fn copy_committed(&mut self, host: usize, msg: u32, now: Ps, q: &mut Queue<Event>) {
        let m = &mut self.msgs[msg as usize];
        m.memcpy_left -= 1;
        if m.memcpy_left > 0 {
            return;
        }
        let Some((task, Phase::Copying, started)) = self.cpus[host].current else {
            unreachable!("memcpy data landed without a waiting thread")
        };
        let side = if host == 0 {
            self.plan.sender
        } else {
            self.plan.receiver
        };
        let g = side.staging.expect("staged").gpu;
        let sync = self.topo.hosts[side.host].spec.gpus[g].copy_engine.sync;
        self.cpus[host].current = Some((task, Phase::Sync, started));
        q.schedule(now + sync, Event::CpuDone { host: host as u8 });
    }

    /// The MMIO write of a post: the WQE itself (BlueFlame, with inline data) or an 8 B doorbell.
    fn mmio(&mut self, side: usize, msg: u32, flush: bool, now: Ps, q: &mut Queue<Event>) {
        let nic = &self.topo.hosts[self.side(side).host].spec.nics[self.side(side).nic];
        let inline = !flush && self.inline();
        let bytes = match nic.wqe_delivery {
            WqeDelivery::BlueFlame => {
                nic.wqe_bytes
                    + if inline {
                        self.plan.size.next_multiple_of(16)
                    } else {
                        0
                    }
            }
            WqeDelivery::Doorbell => 8,
        };
        if inline && let super::plan::Buffer::Host { socket, .. } = self.plan.sender.nic_buffer {
            // The CPU copies the payload out of host memory into the WQE: a DRAM read.
            let dram = self.topo.hosts[self.plan.sender.host].dram[socket];
            self.state[dram as usize].payload_bytes += self.plan.size;
            self.msgs[msg as usize].host_mem_bytes += self.plan.size;
        }
        let route = self.r.mmio[side];
        let t = self.train(
            route,
            msg,
            Tag::Mmio {
                side: side as u8,
                flush,
            },
            Unit::Write,
            1,
            bytes,
            now,
            now,
        );
        self.launch(t, now, q);
    }
}

/// The host's own random stream (poll phases), seeded by (seed, host).
fn cpu_rng(seed: u64, host: usize) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(seed ^ 0xC0FF_EE00_D15E_A5E5 ^ ((host as u64 + 1) << 32))
}

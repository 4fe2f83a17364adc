//! The GPU copy engine behind a cudaMemcpy: D2H as posted writes into host memory, H2D as reads
//! of host memory under the engine's own outstanding-read window, then writes into GPU memory.

use super::Event;
use super::fabric::{Fabric, Train, read_completions};
use super::read_window::ReadWindow;
use super::steps::Instance;
use crate::engine::Queue;
use crate::plan::{Copy, Milestone, StepKind};
use crate::topology::{Topology, Unit};
use crate::units::Ps;

/// One GPU's copy engine's own state: its outstanding-read windows, each a single queue for
/// every flow's copies (it moves its copies one after the other).
#[derive(Debug)]
pub struct CopyEngine {
    /// Reads over PCIe (host memory, peers through the PCIe fabric).
    pub pcie: ReadWindow,
    /// Reads of peers over NVLink.
    pub nvlink: ReadWindow,
}

impl CopyEngine {
    /// The copy engine of GPU `g` (numbered over every host) of `topo`, its windows as
    /// `windows` sizes them.
    pub fn new(windows: &[u32], topo: &Topology, g: usize) -> CopyEngine {
        let (pcie, nvlink) = topo.copy_engines(g);
        CopyEngine {
            pcie: ReadWindow::new(windows[pcie.index()], true),
            nvlink: ReadWindow::new(windows[nvlink.index()], true),
        }
    }
}

impl Fabric<'_> {
    fn copy_of(&self, Instance { flow, step, .. }: Instance) -> Copy {
        match self.plan_of(flow).steps[step.index()].kind.copy() {
            Some((copy, _)) => copy,
            None => unreachable!("step {step} is not a copy"),
        }
    }

    /// The launch is over: the copy engine starts moving the data, as a bulk transfer for a
    /// large copy, else TLP by TLP (D2H: posted writes; H2D: reads under its window).
    pub(super) fn start_copy(&mut self, inst: Instance, now: Ps, q: &mut Queue<Event>) {
        let copy = self.copy_of(inst);
        let step = &self.plan_of(inst.flow).steps[inst.step.index()];
        let (size, payload) = (step.bytes, step.payload);
        if self.is_bulk(size) {
            self.bulk_start(inst, now, q);
            return;
        }
        match copy {
            Copy::D2h { route, mps } => {
                let route = self.route_of(inst.flow, inst.msg, route);
                let n = size.div_ceil(mps).max(1);
                self.step_state(inst).parts = n as u32;
                let mut off = 0;
                for _ in 0..n {
                    let b = mps.min(size - off);
                    let mut w = self.train(route, inst.with_phase(0), Unit::Write, b, now);
                    w.counts_payload = payload;
                    w.src = self.engine_source(route);
                    self.launch(w, now, q);
                    off += b;
                }
            }
            Copy::H2d { read, .. } => {
                self.step_state(inst).parts = read_completions(size, read.mrrs, read.mps) as u32;
                self.read_for(inst, read, size, payload, now, q);
            }
        }
    }

    /// A copy's train arrived: D2H data committed in host memory; H2D completions reached the
    /// GPU (which frees their read tags, then writes GPU memory: phase 1), or committed there.
    pub(super) fn copy_arrive(
        &mut self,
        inst: Instance,
        phase: u8,
        t: Train,
        now: Ps,
        q: &mut Queue<Event>,
    ) {
        match (self.copy_of(inst), phase) {
            (Copy::H2d { commit, .. }, 0) => {
                self.read_done(&t, now, q);
                let route = self.route_of(inst.flow, inst.msg, commit);
                self.relaunch(t, route, (inst.step, 1), now, q);
            }
            _ => self.copy_committed(inst, now, q),
        }
    }

    /// One TLP of a copy committed; after the last, the waiting thread is signalled.
    fn copy_committed(&mut self, inst: Instance, now: Ps, q: &mut Queue<Event>) {
        let st = self.step_state(inst);
        st.parts -= 1;
        if st.parts > 0 {
            return;
        }
        self.copy_done(inst, now, q);
    }

    /// A copy's data all landed: a synchronous copy's thread returns after the completion
    /// signalling; an asynchronous one is done then, its thread long free.
    pub(super) fn copy_done(&mut self, inst: Instance, now: Ps, q: &mut Queue<Event>) {
        if let StepKind::KernelCopy { .. } = self.plan_of(inst.flow).steps[inst.step.index()].kind {
            // A kernel's stores: done when they have landed.
            let from = self.step_state(inst).started;
            self.record_control(inst, from, now);
            self.fire(inst, Milestone::Done, now, now, q);
            return;
        }
        let StepKind::Memcpy {
            gpu,
            thread,
            blocking,
            copy,
            driver,
        } = self.plan_of(inst.flow).steps[inst.step.index()].kind
        else {
            unreachable!("not a copy")
        };
        let mut sync = self.topo.hosts[gpu.host].spec.gpus[gpu.gpu]
            .copy_engine
            .sync;
        if let (Copy::D2h { .. }, Some(d)) = (copy, driver) {
            // Into pageable memory: the driver copies out of its pinned buffer afterwards.
            sync += d.cost;
            let bytes = 2 * self.plan_of(inst.flow).steps[inst.step.index()].bytes;
            self.host_dram_touch((inst.flow, inst.msg), d.dram, bytes);
        }
        if blocking {
            let cpu = self.flows[inst.flow as usize].threads[thread as usize];
            self.copy_landed(cpu, sync, now, q);
        } else {
            let from = self.step_state(inst).started;
            self.record_control(inst, from, now + sync);
            self.fire(inst, Milestone::Done, now + sync, now, q);
        }
    }
}

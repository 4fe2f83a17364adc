//! Completion moderation: a poster that asks for a completion on only every k-th work request
//! (perftest's `--cq-mod`, 100 by default in its bandwidth tests: linux-rdma/perftest
//! src/perftest_resources.c, run_iter_bw). An unsignaled request's NIC writes no completion
//! entry and its thread polls none; its window slot is freed when the next signaled request's
//! completion is polled, which frees every slot up to it (perftest adds `cq_mod` to its
//! completion count per entry polled).

use super::fabric::{Fabric, FlowRun};
use super::steps::Instance;
use crate::plan::{CqeKind, StepKind};

impl Fabric<'_> {
    /// `flow`'s poster asks for a completion on message k only where k % `every` is
    /// `every` - 1, and on its last message (perftest's rule: the work request posted when its
    /// send count modulo cq_mod is cq_mod - 1, or the last iteration). 1 (the default): on
    /// every message. At most one a window ([`Fabric::run`]'s) counts. Call before
    /// [`Fabric::run`].
    pub fn set_signal_every(&mut self, flow: usize, every: u32) {
        self.flows[flow].signal_every = every.max(1);
    }

    /// Whether `inst` is a completion its message does not produce: the poster's completion
    /// entry (a Write's or Send's send completion, a Read's requester completion) and the
    /// poll that finds it, on an unsignaled message.
    pub(super) fn unsignaled(&self, inst: Instance) -> bool {
        let f = &self.flows[inst.flow as usize];
        if f.signaled(inst.msg) {
            return false;
        }
        let h = &f.plan.handles;
        match f.plan.steps[inst.step.index()].kind {
            StepKind::Cqe {
                kind: CqeKind::Send | CqeKind::Read,
                ..
            } => true,
            StepKind::Poll { .. } => {
                h.send_poll == Some(inst.step)
                    || (h.poll == Some(inst.step) && h.cqe.is_some_and(|c| is_read_cqe(f, c)))
            }
            _ => false,
        }
    }
}

/// Whether step `c` of the flow's plan is a Read's requester completion.
fn is_read_cqe(f: &FlowRun<'_>, c: crate::plan::StepId) -> bool {
    matches!(
        f.plan.steps[c.index()].kind,
        StepKind::Cqe {
            kind: CqeKind::Read,
            ..
        }
    )
}

/// Whether message `msg` of `total` asks for a completion where its poster asks on every
/// `every`-th with `window` in flight: perftest's rule (k % every = every - 1, or the last),
/// never fewer than one a window (a poster that asked for none while its window is full would
/// wait for ever). The fabric runs by it and perftest's report groups completions by it.
pub fn signaled(msg: u32, every: u32, window: u32, total: u32) -> bool {
    let k = every.min(window);
    k <= 1 || msg % k == k - 1 || msg + 1 == total
}

impl FlowRun<'_> {
    /// Whether message `msg` asks for a completion ([`signaled`]).
    pub(super) fn signaled(&self, msg: u32) -> bool {
        signaled(msg, self.signal_every, self.window, self.total)
    }

    /// Message `msg` is over: the slots its completion frees. Every message frees its own
    /// where every one is signaled; otherwise a signaled message frees every slot up to its own
    /// and an unsignaled one none.
    pub(super) fn credit(&mut self, msg: u32) {
        if self.signal_every.min(self.window) <= 1 {
            self.finished += 1;
        } else if self.signaled(msg) {
            self.finished = self.finished.max(msg + 1);
        }
    }
}

//! What every part of a path's walk reads: the recorded run, its hops, both hosts and the
//! plan, with the lookups the parts share (a stage's span, a component's name, a descriptor).

use super::*;
use crate::plan::StepId;
use crate::scenario::paths::{SidePlan, Sides};
use crate::topology::HostTopo;
use crate::topology::spec::NicSpec;

/// One path's recorded run, as the walk reads it.
pub(super) struct PathCtx<'a> {
    pub(super) run: &'a Recorded,
    /// The hops of message 0 (of its first chunk, for a pipelined message).
    pub(super) h: Hops<'a>,
    /// Sender's host, receiver's host.
    pub(super) hosts: [&'a HostTopo; 2],
    pub(super) plan: Sides,
    pub(super) op: Op,
    /// The message size, bytes.
    pub(super) size: u64,
    /// The bytes one WQE, copy and descriptor carry: the message, or a pipelined chunk.
    pub(super) msg_bytes: u64,
    /// Chunks of the message (1 unless pipelined).
    pub(super) chunks: u64,
}

impl<'a> PathCtx<'a> {
    /// The context of `run`, a recorded noise-free run of one message.
    pub(super) fn new(run: &'a Recorded, topo: &'a Topology, op: Op, size: u64) -> Self {
        let plan = run.plan;
        // A pipelined message is walked by its first chunk (its steps run from the first
        // chunk's copy out of the GPU, or its store into the PXN relay or mapped host memory,
        // to the second's; from the first kernel's flag to the second where NCCL's GPUDirect
        // sender copies nothing; from the first post to the second where the sender neither
        // copies nor hands over, as a perftest-like GPUDirect sender facing NCCL's host path);
        // the others repeat them, overlapped.
        let of = |keep: &dyn Fn(StepId) -> bool| -> Vec<StepId> {
            (0..run.steps.steps.len())
                .map(StepId::from_index)
                .filter(|&i| keep(i))
                .collect()
        };
        let mut d2h = of(&|i| chunk_copy(&run.steps, i));
        let mut chunk_payload = None;
        if d2h.len() <= 1 {
            let flags = of(&|i| {
                let step = &run.steps.steps[i.index()];
                run.steps.stage(i) == Some(Stage::KernelStore)
                    && !step.payload
                    && step.kind.copy().is_some()
            });
            let posts = of(&|i| run.steps.stage(i) == Some(Stage::Post));
            if d2h.is_empty() && flags.len() > 1 {
                // The chunk's size is its first payload step's (the flag carries none).
                let first = (flags[0].index()..flags[1].index())
                    .find(|&i| run.steps.steps[i].payload)
                    .unwrap_or(flags[0].index());
                d2h = flags;
                chunk_payload = Some(run.steps.steps[first].bytes);
            } else if posts.len() > 1 {
                d2h = posts;
            }
        }
        let chunk_steps = (d2h.len() > 1).then(|| d2h[0]..d2h[1]);
        let chunks = d2h.len().max(1) as u64;
        let mut c = PathCtx {
            run,
            h: Hops {
                rec: &run.recorder,
                topo,
                plan: &run.steps,
                msg: 0,
                steps: chunk_steps,
            },
            hosts: [
                &topo.hosts[plan.sender.host],
                &topo.hosts[plan.receiver.host],
            ],
            plan,
            op,
            size,
            msg_bytes: size,
            chunks,
        };
        c.msg_bytes = chunk_payload.unwrap_or_else(|| {
            d2h.first()
                .filter(|_| chunks > 1)
                .map_or(size, |&s| run.steps.steps[s.index()].bytes)
        });
        c
    }

    /// Message 0's spans of `stage` in the steps walked (a pipelined message's first chunk),
    /// in plan order.
    pub(super) fn spans(&self, stage: Stage) -> Vec<&'a Span> {
        let walked = self.h.steps.clone();
        self.run
            .spans
            .iter()
            .filter(|s| s.msg == 0 && s.stage == stage)
            .filter(|s| walked.as_ref().is_none_or(|r| r.contains(&s.step)))
            .collect()
    }

    /// Message 0's span of `stage`.
    pub(super) fn span(&self, stage: Stage) -> Option<&'a Span> {
        self.run
            .spans
            .iter()
            .find(|s| s.msg == 0 && s.stage == stage)
    }

    /// A recorded component's name.
    pub(super) fn name(&self, c: u32) -> String {
        self.run.recorder.component_name(c).to_string()
    }

    /// The NIC of side 0 (sender) or 1 (receiver).
    pub(super) fn nic_spec(&self, side: usize) -> &'a NicSpec {
        let sides = [self.plan.sender, self.plan.receiver];
        &self.hosts[side].spec.nics[sides[side].nic]
    }

    /// A step timed by `span`, on its component.
    pub(super) fn timed(&self, span: &Span, kind: StepKind) -> Step {
        step(span.start, span.end, &self.name(span.component), kind)
    }

    /// Message 0's payload descriptor of direction `dir` (not the flush's).
    pub(super) fn descriptor(&self, dir: DescriptorDir) -> Option<Desc> {
        self.run
            .recorder
            .descriptors
            .iter()
            .find(|d| {
                d.msg == 0
                    && d.direction == dir
                    && self.run.steps.stage(d.step) != Some(Stage::Flush)
            })
            .map(|d| Desc {
                component: self.name(d.component),
                at: d.at,
                addr: d.addr,
                virt_addr: d.virt_addr,
                len: d.len,
                flags: d.flags,
                gather: dir == DescriptorDir::Gather,
                relay: self.relay_gpu().filter(|_| dir == DescriptorDir::Gather),
            })
    }

    /// PXN: the name of the sender's relay GPU, whose memory its NIC reads.
    pub(super) fn relay_gpu(&self) -> Option<String> {
        let via = self.plan.sender.relay?.via;
        Some(self.hosts[0].spec.gpus[via].name.clone())
    }

    /// Whether the operation is an RDMA Read (posted by the data's destination).
    pub(super) fn read(&self) -> bool {
        self.op == Op::Read
    }

    /// The side that posts the work request, and its peer: an RDMA Read is posted by the
    /// data's destination, the others by its source.
    pub(super) fn poster_and_peer(&self) -> (SidePlan, SidePlan) {
        if self.read() {
            (self.plan.receiver, self.plan.sender)
        } else {
            (self.plan.sender, self.plan.receiver)
        }
    }

    /// The key a NIC looks the memory region up by: the one-sided operations' target NIC uses
    /// the rkey in the packet; every other lookup is by the lkey of a local WQE.
    pub(super) fn key(&self, gather: bool) -> Key {
        let one_sided = matches!(self.op, Op::Write | Op::WriteImm);
        if (gather && self.read()) || (!gather && one_sided) {
            Key::Rkey
        } else {
            Key::Lkey
        }
    }

    /// The end of the last step so far.
    pub(super) fn last_end(steps: &[Step]) -> Ps {
        steps.last().map_or(0, |s| s.start + s.dur)
    }
}

/// Whether step `i` is the sender's copy of one chunk out of its GPU: a cudaMemcpy DtoH, or a
/// kernel's stores of the payload into its PXN relay or into mapped host memory.
fn chunk_copy(plan: &crate::plan::Plan, i: StepId) -> bool {
    let step = &plan.steps[i.index()];
    match plan.stage(i) {
        Some(Stage::MemcpyD2h) => true,
        Some(Stage::Relay | Stage::KernelStore) => step.payload && step.kind.copy().is_some(),
        _ => false,
    }
}

//! The receiving half of a walk: the receive pipeline, the scatter descriptor and its DMA
//! write, the CQE and the poll that sees the data, the copy into the GPU where the path stages,
//! and when the data is visible.

use super::context::PathCtx;
use super::*;

/// The receiver NIC's pipeline, the scatter descriptor and its DMA write, the CQE and the poll.
pub(super) fn receive(c: &PathCtx, scatter: Option<&Desc>, steps: &mut Vec<Step>) {
    let h = &c.h;
    if let Some(s) = c.span(Stage::NicRx) {
        steps.push(c.timed(s, StepKind::NicRx));
    }
    if let (Some(d), Some(w)) = (scatter, c.span(Stage::DmaWrite)) {
        steps.push(step(
            d.at,
            w.start,
            &d.component,
            StepKind::MttLookup {
                va: d.virt_addr,
                bus: d.addr,
                gpu: d.flags & 1 == 1,
                key: c.key(false),
            },
        ));
        steps.push(step(
            w.start,
            w.start,
            &d.component,
            StepKind::Descriptor(d.clone()),
        ));
        let hops = h.of(Some(Stage::DmaWrite), Movement::PayloadWrite);
        let first = first_of(&hops, Unit::Write);
        let mps = c.run.mps_write;
        steps.push(c.timed(
            w,
            StepKind::DmaWrite {
                writes: count(&hops, Unit::Write).unwrap_or(c.msg_bytes.div_ceil(mps)),
                write_bytes: mps,
                gpu: c.plan.receiver.nic_buffer.is_gpu(),
                route: h.nodes(&first),
            },
        ));
    }
    if let Some(s) = c.span(Stage::Cqe) {
        let kind = if c.read() {
            CqeKind::Read
        } else {
            CqeKind::Recv
        };
        let hops = h.of(Some(Stage::Cqe), Movement::Cqe(kind));
        steps.push(c.timed(
            s,
            StepKind::Cqe {
                op: c.op,
                bytes: hops.first().map_or(0, |h| h.payload),
                route: h.nodes(&hops),
            },
        ));
    }
    if let Some(s) = c.span(Stage::Poll) {
        let what = match c.op {
            Op::Read => PollKind::ReadCqe,
            Op::Write if c.plan.receiver.nic_buffer.is_gpu() => PollKind::LastByteGpu,
            Op::Write => PollKind::LastByteCpu,
            Op::WriteImm | Op::Send => PollKind::RecvCqe,
        };
        steps.push(c.timed(s, StepKind::Poll { what }));
    }
}

/// cudaMemcpy H2D out of the bounce buffer; each chunk's copy is counted in `copies`.
pub(super) fn copy_in(c: &PathCtx, steps: &mut Vec<Step>, copies: &mut Vec<(String, bool)>) {
    let (Some(s), Some(st)) = (c.span(Stage::MemcpyH2d), c.plan.receiver.staging) else {
        return;
    };
    let h = &c.h;
    let reads = h.of(Some(Stage::MemcpyH2d), Movement::H2dRead);
    let commits = h.of(Some(Stage::MemcpyH2d), Movement::H2dWrite);
    let all: Vec<&Hop> = reads.iter().chain(&commits).copied().collect();
    let (d0, d1) = h.extent(&all).unwrap_or((s.start, s.end));
    let mut route_hops = first_of(&reads, Unit::Completion);
    route_hops.extend(commits.first().copied());
    let ce = &c.hosts[1].spec.gpus[st.gpu].copy_engine;
    steps.push(memcpy_step(
        (s, &c.run.steps),
        &c.name(s.component),
        StepKind::MemcpyH2d {
            src_host: st.bounce_addr,
            dst_gpu: st.gpu_va,
            bytes: c.msg_bytes,
        },
        (d0, d1),
        StepKind::CopyDma {
            d2h: false,
            tlps: count(&reads, Unit::ReadRequest).unwrap_or(c.msg_bytes.div_ceil(ce.mrrs)),
            tlp_bytes: ce.mrrs,
            route: h.nodes(&route_hops),
        },
    ));
    copies.extend((0..c.chunks).map(|_| (c.hosts[1].name.clone(), false)));
}

/// NCCL's host path, the first chunk into the GPU: the receiving kernel's load of the proxy's
/// flag, then its loads of the chunk from mapped host memory. NCCL's GPUDirect receiver
/// (`auto`): the kernel's load of the proxy's flag alone (the chunk is in its GPU already).
pub(super) fn kernel_load(c: &PathCtx, steps: &mut Vec<Step>) {
    let staging = c.plan.receiver.staging.filter(|st| st.kernel);
    let reads = c.h.of(Some(Stage::KernelLoad), Movement::H2dRead);
    for s in c.spans(Stage::KernelLoad) {
        let step = &c.run.steps.steps[s.step.index()];
        let hops: Vec<&Hop> = reads.iter().copied().filter(|h| h.step == s.step).collect();
        let route = c.h.nodes(&first_of(&hops, Unit::Completion));
        let kind = if let Some(st) = staging.filter(|_| step.payload) {
            let to = c.hosts[1].spec.gpus[st.gpu].name.clone();
            let mrrs = c.hosts[1].spec.gpus[st.gpu].copy_engine.mrrs;
            StepKind::HostLoad {
                from: st.bounce_addr,
                to: (to, st.gpu_va),
                bytes: step.bytes,
                reads: count(&hops, Unit::ReadRequest).unwrap_or(step.bytes.div_ceil(mrrs)),
                route,
            }
        } else {
            StepKind::FlagLoad {
                bytes: step.bytes,
                route,
            }
        };
        steps.push(c.timed(s, kind));
    }
}

/// The end of the message: a pipelined message's other chunks, which follow the first
/// overlapped through the ring of bounce buffers or of the PXN relay's chunk buffers (the last
/// one's copy into the GPU, or its receive, delivers it), and the data landing where the receiver polled before the last payload write landed
/// (GPU memory, no flush): delivery is causal, the data is visible only when it lands.
pub(super) fn delivery(c: &PathCtx, steps: &mut Vec<Step>) {
    let delivered = c.run.outcome.messages[0].1;
    if c.chunks > 1 {
        let last_end = PathCtx::last_end(steps);
        // Who delivers the last chunk: the copy engine of its copy into the GPU, else the
        // receiving CPU that polls its completion.
        let by = c
            .span(Stage::KernelLoad)
            .or_else(|| c.span(Stage::MemcpyH2d))
            .or_else(|| c.span(Stage::Poll))
            .map_or(String::new(), |s| c.name(s.component));
        steps.push(step(
            last_end,
            delivered.max(last_end),
            &by,
            StepKind::Chunks {
                more: c.chunks - 1,
                bytes: c.msg_bytes,
                total: c.size,
                relay: c.plan.sender.relay.is_some(),
                copy_in: c.plan.receiver.staging.is_some(),
                kernel: c.plan.sender.staging.is_some_and(|st| st.kernel)
                    || c.plan.receiver.staging.is_some_and(|st| st.kernel),
                handover: c.plan.sender.handover,
            },
        ));
    }
    let last_end = PathCtx::last_end(steps);
    if delivered > last_end
        && let Some(w) = c.span(Stage::DmaWrite)
    {
        let first: Vec<&Hop> =
            c.h.of(Some(Stage::DmaWrite), Movement::PayloadWrite)
                .into_iter()
                .take(1)
                .collect();
        steps.push(step(
            last_end,
            delivered,
            &c.name(w.component),
            StepKind::DataLands {
                gpu: c.plan.receiver.nic_buffer.is_gpu(),
                route: c.h.nodes(&first),
            },
        ));
    }
}

//! The sending half of a walk: per-transfer registration, the copy out of the GPU (staging or
//! GDRCopy) or PXN's hand-over to the relay GPU, the post, the WQE's way to the NIC, the gather
//! descriptor and its DMA read, and the wire.

use super::context::PathCtx;
use super::*;

/// Registration in the latency (per transfer).
pub(super) fn registration(c: &PathCtx, steps: &mut Vec<Step>) {
    let Some(s) = c.span(Stage::Register) else {
        return;
    };
    let (poster, _) = c.poster_and_peer();
    steps.push(c.timed(
        s,
        StepKind::Register {
            gpu: poster.nic_buffer.is_gpu(),
            addr: poster.nic_buffer.virt_addr(),
            bytes: c.size,
        },
    ));
}

/// cudaMemcpy D2H into the bounce buffer; each chunk's copy is counted in `copies`.
pub(super) fn copy_out(c: &PathCtx, steps: &mut Vec<Step>, copies: &mut Vec<(String, bool)>) {
    let (Some(s), Some(st)) = (c.span(Stage::MemcpyD2h), c.plan.sender.staging) else {
        return;
    };
    let h = &c.h;
    let mps = c.run.mps_d2h;
    let hops = h.of(Some(Stage::MemcpyD2h), Movement::D2h);
    let (d0, d1) = h.extent(&hops).unwrap_or((s.start, s.end));
    let first = first_of(&hops, Unit::Write);
    steps.push(memcpy_step(
        (s, &c.run.steps),
        &c.name(s.component),
        StepKind::MemcpyD2h {
            src_gpu: st.gpu_va,
            dst_host: st.bounce_addr,
            bytes: c.msg_bytes,
        },
        (d0, d1),
        StepKind::CopyDma {
            d2h: true,
            tlps: count(&hops, Unit::Write).unwrap_or(c.msg_bytes.div_ceil(mps)),
            tlp_bytes: mps,
            route: h.nodes(&first),
        },
    ));
    copies.extend((0..c.chunks).map(|_| (c.hosts[0].name.clone(), true)));
}

/// The payload stores of a kernel's hand-over, as the walk shows them: bytes, posted writes
/// (counted where units crossed, else one per MPS), their size and route.
struct Stores {
    bytes: u64,
    writes: u64,
    write_bytes: u64,
    route: Vec<String>,
}

/// A kernel's hand-over of the first chunk, per span of `stage`: its payload stores
/// (`stores`), its flag after them, and the proxy thread's poll that finds it (`found`).
fn hand_over(
    c: &PathCtx,
    stage: Stage,
    steps: &mut Vec<Step>,
    stores: impl Fn(Stores) -> StepKind,
    found: impl Fn() -> StepKind,
) {
    let units = c.h.of(Some(stage), Movement::D2h);
    for s in c.spans(stage) {
        let st = &c.run.steps.steps[s.step.index()];
        let hops: Vec<&Hop> = units.iter().copied().filter(|h| h.step == s.step).collect();
        let route = c.h.nodes(&first_of(&hops, Unit::Write));
        let kind = match st.kind.copy() {
            Some((Copy::D2h { mps, .. }, _)) if st.payload => stores(Stores {
                bytes: st.bytes,
                writes: count(&hops, Unit::Write).unwrap_or(st.bytes.div_ceil(mps)),
                write_bytes: mps,
                route,
            }),
            Some(_) => StepKind::RelayFlag {
                bytes: st.bytes,
                route,
            },
            None => found(),
        };
        steps.push(c.timed(s, kind));
    }
}

/// PXN's hand-over of the first chunk: the sending kernel's stores over NVLink into the relay
/// GPU's buffer, its flag into the proxy's host memory, the proxy thread's poll that finds it.
pub(super) fn relay(c: &PathCtx, steps: &mut Vec<Step>) {
    let Some(relay) = c.plan.sender.relay else {
        return;
    };
    let gpus = &c.hosts[0].spec.gpus;
    let (from, via) = (&gpus[relay.from].name, &gpus[relay.via].name);
    let to = c.plan.sender.nic_buffer.virt_addr();
    let stores = |s: Stores| StepKind::KernelStore {
        from: (from.clone(), relay.from_va),
        to: (via.clone(), to),
        bytes: s.bytes,
        writes: s.writes,
        write_bytes: s.write_bytes,
        route: s.route,
    };
    let found = || StepKind::ProxyPoll { via: via.clone() };
    hand_over(c, Stage::Relay, steps, stores, found);
}

/// NCCL's host path, the first chunk's hand-over: the sending kernel's stores into mapped host
/// memory, its flag after them, the proxy thread's poll that finds it. NCCL's GPUDirect sender
/// (`auto`): the kernel's flag, the proxy's poll.
pub(super) fn kernel_store(c: &PathCtx, steps: &mut Vec<Step>) {
    if let (true, plan::Buffer::Gpu { gpu, .. }) =
        (c.plan.sender.handover, c.plan.sender.nic_buffer)
    {
        let via = c.hosts[0].spec.gpus[gpu].name.clone();
        let stores = |_: Stores| unreachable!("a GPUDirect sender's kernel stores only its flag");
        let found = || StepKind::ProxyPoll { via: via.clone() };
        hand_over(c, Stage::KernelStore, steps, stores, found);
        return;
    }
    let Some(st) = c.plan.sender.staging.filter(|st| st.kernel) else {
        return;
    };
    let from = c.hosts[0].spec.gpus[st.gpu].name.clone();
    let stores = |s: Stores| StepKind::HostStore {
        from: (from.clone(), st.gpu_va),
        to: st.bounce_addr,
        bytes: s.bytes,
        writes: s.writes,
        write_bytes: s.write_bytes,
        route: s.route,
    };
    hand_over(c, Stage::KernelStore, steps, stores, || {
        StepKind::ProxyFinds
    });
}

/// GDRCopy: a thread copies between the GPU buffer and the host buffer through BAR1, out of
/// the GPU on the sender (`GdrcopyRead`), into it on the receiver (`GdrcopyWrite`).
pub(super) fn gdrcopy(c: &PathCtx, stage: Stage, staging: Option<paths::Staging>) -> Option<Step> {
    let (s, st) = (c.span(stage)?, staging?);
    Some(c.timed(
        s,
        StepKind::Gdrcopy {
            to_host: stage == Stage::GdrcopyRead,
            gpu: st.gpu_va,
            host: st.bounce_addr,
            bytes: c.size,
        },
    ))
}

/// The post: the CPU builds the WQE, the MMIO write carries it (or a doorbell) to the NIC,
/// the NIC takes it (fetching it where it was not written whole), and an RDMA Read's request
/// crosses to the data's owner.
pub(super) fn post(c: &PathCtx, steps: &mut Vec<Step>) {
    let h = &c.h;
    let (poster, peer) = c.poster_and_peer();
    if let Some(s) = c.span(Stage::Post) {
        let mmio = h.of_host(Some(Stage::Post), Movement::Mmio, Some(poster.host));
        let m0 = h.extent(&mmio).map_or(s.start, |e| e.0);
        let cpu = c.name(s.component);
        steps.push(step(
            s.start,
            m0,
            &cpu,
            StepKind::BuildWqe {
                op: c.op,
                addr: poster.nic_buffer.virt_addr(),
                len: c.msg_bytes,
                gpu: poster.nic_buffer.is_gpu(),
                inline: c.run.inline,
                remote: (c.op != Op::Send).then(|| peer.nic_buffer.virt_addr()),
            },
        ));
        steps.push(step(
            m0,
            s.end,
            &cpu,
            StepKind::Mmio {
                bytes: mmio.first().map_or(0, |h| h.payload),
                blueflame: mmio.first().is_some_and(|h| h.payload > 8),
                route: h.nodes(&mmio),
            },
        ));
    }
    if let Some(s) = c.span(Stage::WqeFetch) {
        let fetch = h.of(Some(Stage::WqeFetch), Movement::WqeFetch);
        steps.push(c.timed(
            s,
            StepKind::WqeFetch {
                fetched: !fetch.is_empty(),
                route: h.nodes(&fetch),
            },
        ));
    }
    if let Some(s) = c.span(Stage::ReadRequest) {
        let packet: Vec<&Hop> = h
            .of(
                Some(Stage::ReadRequest),
                Movement::Packet(PacketKind::ReadRequest),
            )
            .into_iter()
            .filter(|x| h.host_of(x.channel).is_none())
            .collect();
        steps.push(c.timed(
            s,
            StepKind::ReadRequest {
                route: h.nodes(&packet),
            },
        ));
    }
}

/// The gather descriptor: the NIC translates the posted address through its MTT, then reads
/// the payload (or finds it inline in the WQE).
pub(super) fn gather(c: &PathCtx, g: &Desc, steps: &mut Vec<Step>) {
    let at = |t: Ps, kind| step(t, t, &g.component, kind);
    let Some(read) = c.span(Stage::DmaRead) else {
        steps.push(at(g.at, StepKind::Descriptor(g.clone())));
        steps.push(at(g.at, StepKind::Inline { bytes: c.size }));
        return;
    };
    steps.push(step(
        g.at,
        read.start,
        &g.component,
        StepKind::MttLookup {
            va: g.virt_addr,
            bus: g.addr,
            gpu: g.flags & 1 == 1,
            key: c.key(true),
        },
    ));
    steps.push(at(read.start, StepKind::Descriptor(g.clone())));
    let hops = c.h.of(Some(Stage::DmaRead), Movement::PayloadRead);
    let cpl = first_of(&hops, Unit::Completion);
    let (mrrs, mps) = (c.nic_spec(0).mrrs, c.run.mps_read);
    steps.push(c.timed(
        read,
        StepKind::DmaRead {
            requests: count(&hops, Unit::ReadRequest).unwrap_or(c.msg_bytes.div_ceil(mrrs)),
            request_bytes: mrrs,
            completions: count(&hops, Unit::Completion).unwrap_or(c.msg_bytes.div_ceil(mps)),
            gpu: c.plan.sender.nic_buffer.is_gpu(),
            route: c.h.nodes(&cpl),
            first_data: read.first_out,
        },
    ));
}

/// The sender NIC's transmit pipeline and the wire.
pub(super) fn transmit(c: &PathCtx, steps: &mut Vec<Step>) {
    if let Some(s) = c.span(Stage::NicTx) {
        steps.push(c.timed(s, StepKind::NicTx));
    }
    if let Some(s) = c.span(Stage::Wire) {
        let hops = c.h.of(Some(Stage::Wire), Movement::Wire);
        let first = first_of(&hops, Unit::Packet);
        let mtu = c.nic_spec(0).mtu;
        steps.push(c.timed(
            s,
            StepKind::Wire {
                packets: count(&hops, Unit::Packet).unwrap_or(c.msg_bytes.div_ceil(mtu)),
                mtu,
                route: c.h.nodes(&first),
            },
        ));
    }
}

//! The walk model: the steps of a staged or host-staging path and of GPUDirect, with their
//! descriptors, as [`crate::report::walkthrough`] renders them.

use super::*;

pub(super) fn step(start: Ps, end: Ps, component: &str, kind: StepKind) -> Step {
    Step {
        start,
        dur: end.saturating_sub(start),
        component: component.to_string(),
        kind,
        parts: Vec::new(),
    }
}

/// A cudaMemcpy step and its three parts: the launch, the copy engine's DMA over `dma`, the
/// sync back to the calling thread.
pub(super) fn memcpy_step(
    (span, plan): (&Span, &plan::Plan),
    component: &str,
    kind: StepKind,
    dma: (Ps, Ps),
    dma_kind: StepKind,
) -> Step {
    let d2h = matches!(kind, StepKind::MemcpyD2h { .. });
    // With a pageable bounce buffer the driver copies through its own pinned buffer: after
    // the DMA into it (D2H), or before the DMA out of it (H2D).
    let (driver, blocking) = match plan.steps[span.step as usize].kind {
        plan::StepKind::Memcpy {
            driver, blocking, ..
        } => (driver.map_or(0, |d| d.cost), blocking),
        _ => (0, true),
    };
    let kind = match kind {
        StepKind::MemcpyD2h {
            src_gpu,
            dst_host,
            bytes,
        } if !blocking => StepKind::MemcpyAsync {
            d2h: true,
            gpu: src_gpu,
            host: dst_host,
            bytes,
        },
        StepKind::MemcpyH2d {
            src_host,
            dst_gpu,
            bytes,
        } if !blocking => StepKind::MemcpyAsync {
            d2h: false,
            gpu: dst_gpu,
            host: src_host,
            bytes,
        },
        k => k,
    };
    let sync = if blocking {
        StepKind::CopySync
    } else {
        StepKind::CopyEvent
    };
    let mut st = step(span.start, span.end, component, kind);
    let copy = StepKind::DriverCopy { d2h };
    st.parts = match (driver, d2h) {
        (0, _) => vec![
            step(span.start, dma.0, component, StepKind::CopyLaunch),
            step(dma.0, dma.1, component, dma_kind),
            step(dma.1, span.end, component, sync),
        ],
        (c, true) => vec![
            step(span.start, dma.0, component, StepKind::CopyLaunch),
            step(dma.0, dma.1, component, dma_kind),
            step(dma.1, dma.1 + c, component, copy),
            step(dma.1 + c, span.end, component, StepKind::CopySync),
        ],
        (c, false) => vec![
            step(span.start, dma.0 - c, component, StepKind::CopyLaunch),
            step(dma.0 - c, dma.0, component, copy),
            step(dma.0, dma.1, component, dma_kind),
            step(dma.1, span.end, component, StepKind::CopySync),
        ],
    };
    st
}

/// Walks one path of scenario `si` at `size`.
pub(super) fn walk_path(
    cfg: &Config,
    topo: &Topology,
    si: usize,
    (path, op): (PathKind, Op),
    size: u64,
) -> Result<PathWalk> {
    let run = record(cfg, topo, si, (path, op), size, 1, 1)?;
    let rec = &run.recorder;
    let plan = run.plan;
    let hosts = [
        &topo.hosts[plan.sender.host],
        &topo.hosts[plan.receiver.host],
    ];
    // A pipelined message is walked by its first chunk (its steps run from the first chunk's
    // copy out of the GPU to the second's); the others repeat them, overlapped.
    let d2h: Vec<u16> = (0..run.steps.steps.len() as u16)
        .filter(|&i| run.steps.stage(i) == Some(Stage::MemcpyD2h))
        .collect();
    let chunk_steps = (d2h.len() > 1).then(|| d2h[0]..d2h[1]);
    let chunks = d2h.len().max(1) as u64;
    let h = Hops {
        rec,
        topo,
        plan: &run.steps,
        msg: 0,
        steps: chunk_steps.clone(),
    };
    let span = |st: Stage| run.spans.iter().find(|s| s.msg == 0 && s.stage == st);
    // The bytes one WQE, copy and descriptor carry: the message, or a pipelined chunk.
    let msg_bytes = span(Stage::MemcpyD2h)
        .filter(|_| chunks > 1)
        .map_or(size, |s| run.steps.steps[s.step as usize].bytes);
    let name = |c: u32| rec.component_name(c).to_string();
    let nic_spec = |side: usize| &hosts[side].spec.nics[[plan.sender, plan.receiver][side].nic];
    let desc = |dir: DescriptorDir| {
        rec.descriptors
            .iter()
            .find(|d| {
                d.msg == 0 && d.direction == dir && run.steps.stage(d.step) != Some(Stage::Flush)
            })
            .map(|d| Desc {
                component: name(d.component),
                at: d.at,
                addr: d.addr,
                virt_addr: d.virt_addr,
                len: d.len,
                flags: d.flags,
                gather: dir == DescriptorDir::Gather,
            })
    };
    let gather = desc(DescriptorDir::Gather);
    let scatter = desc(DescriptorDir::Scatter);
    // An RDMA Read is posted by the data's destination; the others by its source.
    let read = op == Op::Read;
    let (poster, peer) = if read {
        (plan.receiver, plan.sender)
    } else {
        (plan.sender, plan.receiver)
    };
    // The one-sided operations' target NIC finds the memory region by the rkey in the packet;
    // every other lookup is by the lkey of a local WQE.
    let rkey_at = |gather: bool| {
        let one_sided = matches!(op, Op::Write | Op::WriteImm);
        if (gather && read) || (!gather && one_sided) {
            Key::Rkey
        } else {
            Key::Lkey
        }
    };
    let mut steps: Vec<Step> = Vec::new();
    let mut copies: Vec<(String, bool)> = Vec::new();

    // Registration in the latency (per transfer).
    if let Some(s) = span(Stage::Register) {
        steps.push(step(
            s.start,
            s.end,
            &name(s.component),
            StepKind::Register {
                gpu: poster.nic_buffer.is_gpu(),
                addr: poster.nic_buffer.virt_addr(),
                bytes: size,
            },
        ));
    }
    // cudaMemcpy D2H into the bounce buffer.
    if let (Some(s), Some(st)) = (span(Stage::MemcpyD2h), plan.sender.staging) {
        let hops = h.of(Some(Stage::MemcpyD2h), Movement::D2h);
        let (d0, d1) = h.extent(&hops).unwrap_or((s.start, s.end));
        let first = first_of(&hops, Unit::Write);
        steps.push(memcpy_step(
            (s, &run.steps),
            &name(s.component),
            StepKind::MemcpyD2h {
                src_gpu: st.gpu_va,
                dst_host: st.bounce_addr,
                bytes: msg_bytes,
            },
            (d0, d1),
            StepKind::CopyDma {
                d2h: true,
                tlps: count(&hops, Unit::Write).unwrap_or(msg_bytes.div_ceil(run.mps_d2h)),
                tlp_bytes: run.mps_d2h,
                route: h.nodes(&first),
            },
        ));
        copies.extend((0..chunks).map(|_| (hosts[0].name.clone(), true)));
    }
    // GDRCopy: a thread copies between the GPU buffer and the host buffer through BAR1, out
    // of the GPU on the sender, into it on the receiver.
    let gdrcopy = |stage: Stage, staging: Option<paths::Staging>| {
        let (s, st) = (span(stage)?, staging?);
        Some(step(
            s.start,
            s.end,
            &name(s.component),
            StepKind::Gdrcopy {
                to_host: stage == Stage::GdrcopyRead,
                gpu: st.gpu_va,
                host: st.bounce_addr,
                bytes: size,
            },
        ))
    };
    steps.extend(gdrcopy(Stage::GdrcopyRead, plan.sender.staging));
    // Post: the CPU builds the WQE, then the MMIO write carries it (or a doorbell) to the NIC.
    if let Some(s) = span(Stage::Post) {
        let mmio = h.of_host(Some(Stage::Post), Movement::Mmio, Some(poster.host));
        let m0 = h.extent(&mmio).map_or(s.start, |e| e.0);
        let cpu = name(s.component);
        steps.push(step(
            s.start,
            m0,
            &cpu,
            StepKind::BuildWqe {
                op,
                addr: poster.nic_buffer.virt_addr(),
                len: msg_bytes,
                gpu: poster.nic_buffer.is_gpu(),
                inline: run.inline,
                remote: (op != Op::Send).then(|| peer.nic_buffer.virt_addr()),
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
    if let Some(s) = span(Stage::WqeFetch) {
        let fetch = h.of(Some(Stage::WqeFetch), Movement::WqeFetch);
        steps.push(step(
            s.start,
            s.end,
            &name(s.component),
            StepKind::WqeFetch {
                fetched: !fetch.is_empty(),
                route: h.nodes(&fetch),
            },
        ));
    }
    if let Some(s) = span(Stage::ReadRequest) {
        let packet: Vec<&Hop> = h
            .of(
                Some(Stage::ReadRequest),
                Movement::Packet(PacketKind::ReadRequest),
            )
            .into_iter()
            .filter(|x| h.host_of(x.channel).is_none())
            .collect();
        steps.push(step(
            s.start,
            s.end,
            &name(s.component),
            StepKind::ReadRequest {
                route: h.nodes(&packet),
            },
        ));
    }
    // The gather descriptor: the NIC translates the posted address through its MTT, then
    // reads the payload (or finds it inline in the WQE).
    if let Some(g) = &gather {
        match span(Stage::DmaRead) {
            Some(read) => {
                steps.push(step(
                    g.at,
                    read.start,
                    &g.component,
                    StepKind::MttLookup {
                        va: g.virt_addr,
                        bus: g.addr,
                        gpu: g.flags & 1 == 1,
                        key: rkey_at(true),
                    },
                ));
                steps.push(step(
                    read.start,
                    read.start,
                    &g.component,
                    StepKind::Descriptor(g.clone()),
                ));
                let hops = h.of(Some(Stage::DmaRead), Movement::PayloadRead);
                let cpl = first_of(&hops, Unit::Completion);
                let (mrrs, mps) = (nic_spec(0).mrrs, run.mps_read);
                steps.push(step(
                    read.start,
                    read.end,
                    &name(read.component),
                    StepKind::DmaRead {
                        requests: count(&hops, Unit::ReadRequest).unwrap_or(size.div_ceil(mrrs)),
                        request_bytes: mrrs,
                        completions: count(&hops, Unit::Completion).unwrap_or(size.div_ceil(mps)),
                        gpu: plan.sender.nic_buffer.is_gpu(),
                        route: h.nodes(&cpl),
                        first_data: read.first_out,
                    },
                ));
            }
            None => {
                steps.push(step(
                    g.at,
                    g.at,
                    &g.component,
                    StepKind::Descriptor(g.clone()),
                ));
                steps.push(step(
                    g.at,
                    g.at,
                    &g.component,
                    StepKind::Inline { bytes: size },
                ));
            }
        }
    }
    if let Some(s) = span(Stage::NicTx) {
        steps.push(step(s.start, s.end, &name(s.component), StepKind::NicTx));
    }
    if let Some(s) = span(Stage::Wire) {
        let hops = h.of(Some(Stage::Wire), Movement::Wire);
        let first = first_of(&hops, Unit::Packet);
        let mtu = nic_spec(0).mtu;
        steps.push(step(
            s.start,
            s.end,
            &name(s.component),
            StepKind::Wire {
                packets: count(&hops, Unit::Packet).unwrap_or(size.div_ceil(mtu)),
                mtu,
                route: h.nodes(&first),
            },
        ));
    }
    if let Some(s) = span(Stage::NicRx) {
        steps.push(step(s.start, s.end, &name(s.component), StepKind::NicRx));
    }
    if let (Some(d), Some(w)) = (&scatter, span(Stage::DmaWrite)) {
        steps.push(step(
            d.at,
            w.start,
            &d.component,
            StepKind::MttLookup {
                va: d.virt_addr,
                bus: d.addr,
                gpu: d.flags & 1 == 1,
                key: rkey_at(false),
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
        steps.push(step(
            w.start,
            w.end,
            &name(w.component),
            StepKind::DmaWrite {
                writes: count(&hops, Unit::Write).unwrap_or(size.div_ceil(run.mps_write)),
                write_bytes: run.mps_write,
                gpu: plan.receiver.nic_buffer.is_gpu(),
                route: h.nodes(&first),
            },
        ));
    }
    if let Some(s) = span(Stage::Cqe) {
        let kind = if read { CqeKind::Read } else { CqeKind::Recv };
        let hops = h.of(Some(Stage::Cqe), Movement::Cqe(kind));
        steps.push(step(
            s.start,
            s.end,
            &name(s.component),
            StepKind::Cqe {
                op,
                bytes: hops.first().map_or(0, |h| h.payload),
                route: h.nodes(&hops),
            },
        ));
    }
    if let Some(s) = span(Stage::Poll) {
        let what = match op {
            Op::Read => PollKind::ReadCqe,
            Op::Write if plan.receiver.nic_buffer.is_gpu() => PollKind::LastByteGpu,
            Op::Write => PollKind::LastByteCpu,
            Op::WriteImm | Op::Send => PollKind::RecvCqe,
        };
        steps.push(step(
            s.start,
            s.end,
            &name(s.component),
            StepKind::Poll { what },
        ));
    }
    let flush: Vec<&Span> = run
        .spans
        .iter()
        .filter(|s| s.msg == 0 && s.stage == Stage::Flush)
        .collect();
    if let (Some(first), Some(last)) = (flush.first(), flush.last()) {
        let (start, end) = (
            first.start,
            flush.iter().map(|s| s.end).max().unwrap_or(last.end),
        );
        let of = |what| h.of(Some(Stage::Flush), what);
        let ext = |hops: &[&Hop], from: Ps| h.extent(hops).unwrap_or((from, from));
        let mmio = of(Movement::Mmio);
        let fetch = of(Movement::WqeFetch);
        let engine = of(Movement::SendEngine);
        let request = of(Movement::Packet(PacketKind::ReadRequest));
        let read = of(Movement::PayloadRead);
        let response: Vec<&Hop> = of(Movement::Tx)
            .into_iter()
            .chain(of(Movement::Rx))
            .collect();
        let write = of(Movement::PayloadWrite);
        let cqe = of(Movement::Cqe(CqeKind::Flush));
        let cpu = name(first.component);
        let nic = name(
            flush
                .iter()
                .find(|s| s.component != first.component)
                .map_or(first.component, |s| s.component),
        );
        let (m0, m1) = ext(&mmio, start);
        let (f0, f1) = ext(&fetch, m1);
        let (e0, e1) = ext(&engine, f1);
        let (q0, q1) = ext(&request, e1);
        let (r0, r1) = ext(&read, q1);
        let (p0, p1) = ext(&response, r1);
        let (w0, w1) = ext(&write, p1);
        let (c0, c1) = ext(&cqe, w1);
        let req: Vec<&Hop> = read.iter().copied().filter(|h| h.payload == 0).collect();
        let cpl: Vec<&Hop> = read.iter().copied().filter(|h| h.payload > 0).collect();
        let mut f = step(
            start,
            end,
            &nic,
            StepKind::Flush {
                addr: plan.receiver.nic_buffer.dma_addr(),
            },
        );
        f.parts = vec![
            step(start, m0, &cpu, StepKind::FlushPost),
            step(
                m0,
                m1,
                &cpu,
                StepKind::FlushMmio {
                    route: h.nodes(&mmio),
                },
            ),
            step(
                f0,
                f1,
                &nic,
                StepKind::WqeFetch {
                    fetched: !fetch.is_empty(),
                    route: h.nodes(&fetch),
                },
            ),
            step(e0, e1, &nic, StepKind::FlushEngine),
            step(q0, q1, &nic, StepKind::FlushLoopback { response: false }),
            step(
                r0,
                r1,
                &nic,
                StepKind::FlushRead {
                    request: h.nodes(&req),
                    completion: h.nodes(&cpl),
                },
            ),
            step(p0, p1, &nic, StepKind::FlushLoopback { response: true }),
            step(
                w0,
                w1,
                &nic,
                StepKind::FlushWrite {
                    route: h.nodes(&write),
                },
            ),
            step(
                c0,
                c1,
                &nic,
                StepKind::FlushCqe {
                    route: h.nodes(&cqe),
                },
            ),
            step(c1, end, &cpu, StepKind::FlushPoll),
        ];
        steps.push(f);
    }
    if let (Some(s), Some(st)) = (span(Stage::MemcpyH2d), plan.receiver.staging) {
        let reads = h.of(Some(Stage::MemcpyH2d), Movement::H2dRead);
        let commits = h.of(Some(Stage::MemcpyH2d), Movement::H2dWrite);
        let all: Vec<&Hop> = reads.iter().chain(&commits).copied().collect();
        let (d0, d1) = h.extent(&all).unwrap_or((s.start, s.end));
        let mut route_hops = first_of(&reads, Unit::Completion);
        route_hops.extend(commits.first().copied());
        let ce = &hosts[1].spec.gpus[st.gpu].copy_engine;
        steps.push(memcpy_step(
            (s, &run.steps),
            &name(s.component),
            StepKind::MemcpyH2d {
                src_host: st.bounce_addr,
                dst_gpu: st.gpu_va,
                bytes: msg_bytes,
            },
            (d0, d1),
            StepKind::CopyDma {
                d2h: false,
                tlps: count(&reads, Unit::ReadRequest).unwrap_or(msg_bytes.div_ceil(ce.mrrs)),
                tlp_bytes: ce.mrrs,
                route: h.nodes(&route_hops),
            },
        ));
        copies.extend((0..chunks).map(|_| (hosts[1].name.clone(), false)));
    }
    steps.extend(gdrcopy(Stage::GdrcopyWrite, plan.receiver.staging));

    // The other chunks of a pipelined message follow the first, overlapped, through the ring
    // of bounce buffers; the last one's copy into the GPU delivers it.
    let delivered = run.outcome.messages[0].1;
    if chunks > 1 {
        let last_end = steps.last().map_or(0, |s| s.start + s.dur);
        let ce = span(Stage::MemcpyH2d).map_or(String::new(), |s| name(s.component));
        steps.push(step(
            last_end,
            delivered.max(last_end),
            &ce,
            StepKind::Chunks {
                more: chunks - 1,
                bytes: msg_bytes,
                total: size,
            },
        ));
    }

    // Delivery is causal: where the receiver polled before the last payload write landed
    // (GPU memory, no flush), the data is visible only when it lands.
    let last_end = steps.last().map_or(0, |s| s.start + s.dur);
    if delivered > last_end
        && let Some(w) = span(Stage::DmaWrite)
    {
        steps.push(step(
            last_end,
            delivered,
            &name(w.component),
            StepKind::DataLands {
                gpu: plan.receiver.nic_buffer.is_gpu(),
                route: h.nodes(
                    &h.of(Some(Stage::DmaWrite), Movement::PayloadWrite)
                        .into_iter()
                        .take(1)
                        .collect::<Vec<_>>(),
                ),
            },
        ));
    }

    // Off the latency path: a Send's receive WQE (prefetched), the RC ACK and the sender's
    // send CQE.
    let mut side_steps = Vec::new();
    let recv_wqe = h.of(None, Movement::WqeFetch);
    if let (Some((r0, r1)), Some(d)) = (h.extent(&recv_wqe), &scatter)
        && op == Op::Send
    {
        side_steps.push(step(
            r0,
            r1,
            &d.component,
            StepKind::RecvWqeFetch {
                bytes: hosts[1].spec.nics[plan.receiver.nic].recv_wqe_bytes,
                route: h.nodes(&first_of(&recv_wqe, Unit::Completion)),
            },
        ));
    }
    // The first train only: a pipelined chunk's credit back to the sender rides as one too.
    let mut ack = h.of(None, Movement::Packet(PacketKind::Ack));
    if let Some(first) = ack.first().map(|a| a.train) {
        ack.retain(|a| a.train == first);
    }
    if let Some((a0, a1)) = h.extent(&ack) {
        let wire: Vec<&Hop> = ack
            .iter()
            .copied()
            .filter(|x| h.host_of(x.channel).is_none())
            .collect();
        let comp = scatter
            .as_ref()
            .map(|d| d.component.clone())
            .unwrap_or_default();
        side_steps.push(step(
            a0,
            a1,
            &comp,
            StepKind::Ack {
                route: h.nodes(&wire),
            },
        ));
    }
    let send_cqe = h.of(None, Movement::Cqe(CqeKind::Send));
    if let Some((c0, c1)) = h.extent(&send_cqe) {
        side_steps.push(step(
            c0,
            c1,
            &gather
                .as_ref()
                .map(|d| d.component.clone())
                .unwrap_or_default(),
            StepKind::SendCqe {
                route: h.nodes(&send_cqe),
            },
        ));
    }

    // One-time setup, per side.
    let per_transfer = cfg.sim.registration == Registration::PerTransfer;
    let mut setup = Vec::new();
    for (side, sp) in [plan.sender, plan.receiver].iter().enumerate() {
        let host = &hosts[side];
        let reg = &host.spec.registration;
        if let Some(st) = sp.staging {
            // Pipelined staging keeps a ring of `pipeline_depth` chunk-sized buffers.
            let (count, bytes) = if run.effective_path.as_path() == Some(PathKind::StagedPipelined)
            {
                (cfg.sim.pipeline_depth, cfg.sim.chunk_bytes.min(size))
            } else {
                (run.bounce_buffers, size)
            };
            setup.push(Setup::Bounce {
                host: host.name.clone(),
                pageable: st.pageable,
                count,
                addr: st.bounce_addr,
                alloc_ps: if st.pageable { 0 } else { reg.bounce_alloc },
                register_ps: reg.host_cost(bytes),
                pages: bytes.div_ceil(HOST_PAGE).max(1),
                page_bytes: HOST_PAGE,
            });
            if st.by_cpu {
                setup.push(Setup::GdrMap {
                    host: host.name.clone(),
                    va: st.gpu_va,
                    cost_ps: reg.gpu_cost(size),
                });
            }
        }
        if let crate::plan::Buffer::Gpu { va, bus, .. } = sp.nic_buffer {
            let pages = size.div_ceil(GPU_PAGE).max(1);
            setup.push(Setup::GpuMr {
                host: host.name.clone(),
                va,
                bytes: size,
                pages,
                page_bytes: GPU_PAGE,
                cost_ps: reg.gpu_cost(size),
                mtt: (0..pages.min(4))
                    .map(|i| (va + i * GPU_PAGE, bus + i * GPU_PAGE))
                    .collect(),
                // The posting side pays it as a step before its post; the other side pays it
                // on its CPU while the poster works.
                when: match (per_transfer, (side == 1) == read) {
                    (false, _) => MrWhen::Cached,
                    (true, true) => MrWhen::PerTransferStep,
                    (true, false) => MrWhen::PerTransferReceiver,
                },
            });
        }
    }

    let over = |kind: fn(&ChannelKind) -> bool| payload_bytes_over(topo, &run, 0, kind);
    let (start, end) = run.outcome.messages[0];
    Ok(PathWalk {
        path,
        effective_path: run.effective_path,
        setup,
        setup_ps: run.setup_ps,
        steps,
        side_steps,
        latency_ps: end - start,
        gather,
        scatter,
        copies,
        pcie_link_bytes: over(|k| matches!(k, ChannelKind::PcieLink { .. })),
        root_complex_bytes: over(|k| matches!(k, ChannelKind::RootComplex)),
        host_mem_bytes: run.outcome.host_mem_bytes,
        cpu_busy_ps: run.outcome.cpu_busy,
        dst_gpu: plan.receiver.staging.is_some() || plan.receiver.nic_buffer.is_gpu(),
    })
}

/// The walk of `op` on scenario `si` at `size`: a host-staging path (`staged`, `gdrcopy`,
/// `staged_pipelined` or `auto`), then the GPUDirect path (the GPUDirect path alone for an RDMA
/// Read, whose source cannot be staged).
pub fn walk(cfg: &Config, si: usize, (path, op): (PathKind, Op), size: u64) -> Result<Walk> {
    if !matches!(
        path,
        PathKind::Staged | PathKind::Gdrcopy | PathKind::StagedPipelined | PathKind::Auto
    ) {
        return Err(ConfigError::new(
            CLI,
            "--path",
            "the path to contrast with GPUDirect: staged, gdrcopy, staged_pipelined or auto",
            path.name(),
        )
        .into());
    }
    let topo = &scenario::topology(cfg);
    let sc = &cfg.scenarios[si];
    let end = |e: &crate::config::Endpoint| -> Result<Endpoint, ConfigError> {
        let host = &cfg.hosts[e.host];
        let m = &host.machine;
        let g = e.gpu.ok_or_else(|| {
            ConfigError::new(
                CLI,
                "--scenario",
                "a scenario with a GPU on both ends (the walk moves GPU memory)",
                format!(
                    "scenario `{}` with a host-memory end on {}",
                    sc.name, host.name
                ),
            )
        })?;
        let gpu = &m.gpus[g];
        let nic = &m.nics[e.nic];
        Ok(Endpoint {
            host: host.name.clone(),
            gpu: gpu.name.clone(),
            gpu_model: gpu.model.clone(),
            nic: nic.name.clone(),
            nic_model: nic.model.clone(),
            gpu_va: gpu.heap_base,
            bar_offset: gpu.bar_offset,
            host_buffer: m.host_buffer_base,
        })
    };
    let ends = [end(&sc.first().sender)?, end(&sc.first().receiver)?];
    let mut kinds = vec![path, PathKind::GpuDirect];
    if op == Op::Read {
        kinds.remove(0);
    }
    for &path in &kinds {
        check_point(cfg, topo, si, path, op)?;
    }
    let paths = kinds
        .into_iter()
        .map(|path| walk_path(cfg, topo, si, (path, op), size))
        .collect::<Result<Vec<_>>>()?;
    Ok(Walk {
        config_name: cfg.name.clone(),
        scenario: sc.name.clone(),
        class: paths::sender_class(topo, cfg.scenarios[si].first(), PathKind::GpuDirect),
        size,
        op,
        ends,
        paths,
    })
}

/// `gdrsim walk`: loads the config, walks, returns the text.
pub fn run_walk(
    config: Option<&Path>,
    scenario: Option<&str>,
    (path, op, size): (&str, &str, &str),
    lang: &str,
) -> Result<String> {
    let lang = parse_lang(lang)?;
    let size = parse_size(size)?;
    let op = parse_op(op)?;
    let path = parse_path(path)?;
    let cfg = crate::app::load_config(config)?;
    let si = scenario_index(&cfg, scenario)?;
    let w = walk(&cfg, si, (path, op), size)?;
    Ok(walkthrough::render(&w, lang))
}

// ---- the trace -------------------------------------------------------------------------------

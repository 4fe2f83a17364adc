//! The walk model: the steps of a staged or host-staging path and of GPUDirect, with their
//! descriptors, as [`crate::report::walkthrough`] renders them. One path's walk is read from its
//! recorded run part by part: [`send`], [`receive`], [`flush`], [`side`] (off the latency path)
//! and [`setup`] (one-time), over a shared [`context::PathCtx`].

mod context;
mod flush;
mod receive;
mod send;
mod setup;
mod side;

use self::context::PathCtx;
use super::*;
use crate::report::walkthrough::RelayWalk;
use crate::topology::{NodeKind, Place};

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
    let (driver, blocking) = match plan.steps[span.step.index()].kind {
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

/// Walks one path of scenario `si` at `size`: its noise-free run recorded, read part by part
/// in the order the message moves.
pub(super) fn walk_path(
    cfg: &Config,
    topo: &Topology,
    si: usize,
    (path, op): (PathKind, Op),
    size: u64,
) -> Result<PathWalk> {
    let run = record(cfg, topo, si, (path, op), size, 1, 1)?;
    let c = PathCtx::new(&run, topo, op, size);
    let gather = c.descriptor(DescriptorDir::Gather);
    let scatter = c.descriptor(DescriptorDir::Scatter);
    let mut steps: Vec<Step> = Vec::new();
    let mut copies: Vec<(String, bool)> = Vec::new();
    send::registration(&c, &mut steps);
    send::copy_out(&c, &mut steps, &mut copies);
    steps.extend(send::gdrcopy(&c, Stage::GdrcopyRead, c.plan.sender.staging));
    let before = steps.len();
    send::relay(&c, &mut steps);
    let relay = relay_walk(&c, &steps[before..]);
    send::kernel_store(&c, &mut steps);
    send::post(&c, &mut steps);
    if let Some(g) = &gather {
        send::gather(&c, g, &mut steps);
    }
    send::transmit(&c, &mut steps);
    receive::receive(&c, scatter.as_ref(), &mut steps);
    steps.extend(flush::flush(&c));
    receive::copy_in(&c, &mut steps, &mut copies);
    receive::kernel_load(&c, &mut steps);
    steps.extend(send::gdrcopy(
        &c,
        Stage::GdrcopyWrite,
        c.plan.receiver.staging,
    ));
    receive::delivery(&c, &mut steps);
    let side_steps = side::side_steps(&c, gather.as_ref(), scatter.as_ref());
    let over = |kind: fn(&ChannelKind) -> bool| payload_bytes_over(topo, &run, 0, kind);
    let (start, end) = run.outcome.messages[0];
    let receiver = c.plan.receiver;
    Ok(PathWalk {
        path,
        effective_path: run.effective_path,
        reason: run.reason.clone(),
        relay,
        setup: setup::setup(cfg, &c),
        setup_ps: run.setup_ps,
        steps,
        side_steps,
        latency_ps: end - start,
        gather,
        scatter,
        copies,
        pcie_link_bytes: over(|k| matches!(k, ChannelKind::PcieLink { .. })),
        root_complex_bytes: root_complex_bytes(topo, &run, 0),
        host_mem_bytes: run.outcome.host_mem_bytes,
        cpu_busy_ps: run.outcome.cpu_busy,
        dst_gpu: receiver.staging.is_some() || receiver.nic_buffer.is_gpu(),
    })
}

/// PXN's summary for the contrast, from the walked hand-over `steps` of the first chunk (None
/// where the sender does not relay).
fn relay_walk(c: &PathCtx, steps: &[Step]) -> Option<RelayWalk> {
    let relay = c.plan.sender.relay?;
    let (first, last) = (steps.first()?, steps.last()?);
    let h = c.hosts[0];
    let gpu = |g: usize| Place::Device(h.node_index(NodeKind::Gpu(g)));
    let nic = Place::Device(h.node_index(NodeKind::Nic(c.plan.sender.nic)));
    Some(RelayWalk {
        from: h.spec.gpus[relay.from].name.clone(),
        via: h.spec.gpus[relay.via].name.clone(),
        nic: c.nic_spec(0).name.clone(),
        link: h.class(gpu(relay.from), gpu(relay.via)),
        via_class: h.class(gpu(relay.via), nic),
        hand_over_ps: last.start + last.dur - first.start,
    })
}

/// The walk of `op` on scenario `si` at `size`: a host-staging path (`staged`, `gdrcopy`,
/// `staged_pipelined` or `auto`) or PXN (`pxn`), then the GPUDirect path (the GPUDirect path
/// alone for an RDMA Read, whose source cannot be staged).
pub fn walk(cfg: &Config, si: usize, (path, op): (PathKind, Op), size: u64) -> Result<Walk> {
    if !matches!(
        path,
        PathKind::Staged
            | PathKind::Gdrcopy
            | PathKind::StagedPipelined
            | PathKind::Pxn
            | PathKind::Auto
    ) {
        return Err(ConfigError::new(
            CLI,
            "--path",
            "the path to contrast with GPUDirect: staged, gdrcopy, staged_pipelined, pxn or auto",
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
    limits: &crate::study::Limits,
) -> Result<String> {
    let lang = parse_lang(lang)?;
    let size = parse_size(size)?;
    let op = parse_op(op)?;
    let path = parse_path(path)?;
    let cfg = crate::study::load_config(config)?;
    let si = network_scenario(&cfg, scenario, "walk")?;
    // The gate, before any work: the paths run one after the other, each recording every unit
    // it moves; the larger recorder is the peak.
    let topo = &scenario::topology(&cfg);
    let walked: &[PathKind] = if op == Op::Read {
        &[PathKind::GpuDirect]
    } else {
        &[path, PathKind::GpuDirect]
    };
    let each: Vec<_> = walked
        .iter()
        .map(|&p| super::cost::recorded(&cfg, topo, si, (p, op), size, 1))
        .collect();
    let events = each.iter().fold(0u64, |a, r| a.saturating_add(r.events));
    let memory = each
        .iter()
        .map(|r| r.memory(super::cost::WALK_BYTES))
        .max()
        .unwrap_or(0);
    let names: Vec<&str> = walked.iter().map(|p| p.name()).collect();
    let over = format!(
        "1 message of {} on path{} {}",
        crate::units::fmt_bytes(size),
        if names.len() == 1 { "" } else { "s" },
        names.join(" and ")
    );
    let work = super::cost::work("a walk", events, memory, over, "a smaller --size");
    super::cost::admit(config, &work, limits)?;
    let w = walk(&cfg, si, (path, op), size)?;
    Ok(walkthrough::render(&w, lang))
}

// ---- the trace -------------------------------------------------------------------------------

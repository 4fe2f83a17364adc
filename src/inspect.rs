//! Orchestration for `gdrsim walk` and `gdrsim trace`: runs one point with recording on and
//! jitter off (the noise-free run that gives `lat_model_us`), then turns the recorder, the plan
//! and the config into the plain data that [`crate::report::walkthrough`] and
//! [`crate::report::trace`] render. The report modules never see the engine or the components.
//!
//! What is counted here, precisely:
//! - *PCIe link traversals*: payload bytes of the message's payload-carrying trains (payload DMA
//!   read completions, payload DMA writes, cudaMemcpy data; for an inline send, the payload inside
//!   the MMIO write) summed over the PCIe link-direction channels they crossed, divided by the
//!   message size. Read requests, WQEs, doorbells, CQEs, ACKs and the 1-byte flush read are
//!   control traffic and are not counted. *Root-complex passes* count the same way over
//!   root-complex channels.
//! - *copies*: cudaMemcpy stages present in the message.
//! - *bytes through host memory*: the fabric's own host-DRAM byte records (results.csv
//!   `host_mem_bytes`).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};

use crate::components::{Fabric, Outcome};
use crate::config::choice::Choice;
use crate::config::{Config, ConfigError, Op, PathKind, Registration};
use crate::plan::{self, Copy, CqeKind, Movement, PacketKind};
use crate::record::{DescriptorDir, Hop, Recorder, Span, Stage};
use crate::report::trace::{Arg, LinkBusy, Slice, TraceData, TraceStats, Track};
use crate::report::walkthrough::{
    self, Desc, Endpoint, Key, Lang, MrWhen, PathWalk, PollKind, Setup, Step, StepKind, Walk,
};
use crate::scenario::{self, paths};
use crate::topology::spec::{GPU_PAGE, HOST_PAGE};
use crate::topology::{ChannelKind, Topology, Unit};
use crate::units::{Ps, ps_to_us_exact};

/// Where errors in command-line values are reported.
const CLI: &str = "command line";

/// The largest trace file written: a browser-based viewer opens a few hundred megabytes.
const MAX_TRACE_BYTES: u64 = 128 << 20;

/// The index of scenario `name`, or of the config's first scenario.
pub fn scenario_index(cfg: &Config, name: Option<&str>) -> Result<usize, ConfigError> {
    let names: Vec<&str> = cfg.scenarios.iter().map(|s| s.name.as_str()).collect();
    match name {
        None if !names.is_empty() => Ok(0),
        None => Err(ConfigError::new(
            CLI,
            "--scenario",
            "a config with at least one scenario",
            "none",
        )),
        Some(n) => names.iter().position(|s| *s == n).ok_or_else(|| {
            ConfigError::new(
                CLI,
                "--scenario",
                format!("one of the config's scenarios ({})", names.join(", ")),
                format!("`{n}`"),
            )
        }),
    }
}

/// A message size from the command line ("4096", "4KiB", "1MiB").
pub fn parse_size(s: &str) -> Result<u64, ConfigError> {
    match crate::units::parse_bytes(s) {
        Ok(v) if v > 16 << 30 => Err(ConfigError::new(
            CLI,
            "--size",
            "a size up to 16 GiB (as in sweeps)",
            format!("`{s}`"),
        )),
        Ok(v) if v > 0 => Ok(v),
        Ok(_) => Err(ConfigError::new(CLI, "--size", "at least 1 byte", "0")),
        Err(e) => Err(ConfigError::new(
            CLI,
            "--size",
            e.expected,
            format!("`{s}`"),
        )),
    }
}

/// A word of a [`Choice`] from the command line (`flag` names the option in the error).
fn parse_choice<C: Choice>(s: &str, flag: &str) -> Result<C, ConfigError> {
    C::from_word(s).ok_or_else(|| {
        let words: Vec<&str> = C::ALL.iter().map(|c| c.word()).collect();
        ConfigError::new(CLI, flag, words.join(", "), format!("`{s}`"))
    })
}

/// A path name from the command line.
pub fn parse_path(s: &str) -> Result<PathKind, ConfigError> {
    parse_choice(s, "--path")
}

/// An operation name from the command line.
pub fn parse_op(s: &str) -> Result<Op, ConfigError> {
    parse_choice(s, "--op")
}

/// Refuses, as bad input, a path and op the scenario cannot run (an RDMA Read from a staged
/// source, a GPUDirect read the platform refuses), before any work.
fn check_point(
    cfg: &Config,
    topo: &Topology,
    si: usize,
    path: PathKind,
    op: Op,
) -> Result<(), ConfigError> {
    let sc = &cfg.scenarios[si];
    if !op.carried_by(path) {
        return Err(ConfigError::new(
            CLI,
            "--op",
            format!(
                "an operation that path {} can carry (an RDMA Read's source takes no part \
                 with its CPU, so nothing stages it)",
                path.name()
            ),
            op.name(),
        ));
    }
    let size = cfg.sizes.first().copied().unwrap_or(8);
    paths::plan(cfg, sc.first(), topo, path, op, size).map_or_else(
        |e| {
            Err(ConfigError::new(
                CLI,
                "--op",
                format!("an operation that path {} can carry", path.name()),
                format!("{} on scenario `{}`: {e}", op.name(), sc.name),
            ))
        },
        |_| Ok(()),
    )
}

/// A language from the command line.
pub fn parse_lang(s: &str) -> Result<Lang, ConfigError> {
    Lang::parse(s).ok_or_else(|| ConfigError::new(CLI, "--lang", "en or zh", format!("`{s}`")))
}

/// One recorded run of a point.
pub struct Recorded {
    /// What the path asked of each side.
    pub plan: paths::Sides,
    /// The plan of steps that ran.
    pub steps: crate::plan::Plan,
    pub effective_path: String,
    pub setup_ps: Ps,
    pub recorder: Recorder,
    pub outcome: Outcome,
    /// Stage spans of every message, in pipeline order per message. The recorder keeps message
    /// 0's only; the others are rebuilt from the fabric's per-message stage times.
    pub spans: Vec<Span>,
    /// Whether the sender's payload rides inside the WQE.
    pub inline: bool,
    /// Pinned bounce buffers per staged side (as `setup_us` counts them).
    pub bounce_buffers: u32,
    /// Effective MPS of the payload write, D2H and H2D routes.
    pub mps_read: u64,
    pub mps_write: u64,
    pub mps_d2h: u64,
}

/// The noise-free run of (scenario `si`, `path`, `size`) with `messages` messages, at most
/// `window` in flight, recording on.
pub fn record(
    cfg: &Config,
    topo: &Topology,
    si: usize,
    (path, op): (PathKind, Op),
    size: u64,
    window: u32,
    messages: u32,
) -> Result<Recorded> {
    let sc = &cfg.scenarios[si];
    let built = paths::plan(cfg, sc.first(), topo, path, op, size)
        .with_context(|| format!("scenario {}: building the {} path", sc.name, path.name()))?;
    // The seed of the point in a sweep (it does not matter with jitter off).
    let seed = scenario::point_seed(cfg.seed, si, path, op, size);
    let opts = scenario::sim_options(cfg, seed).noise_free().recording();
    let mut f = Fabric::new(topo, &[&built.plan], opts);
    let outcome = f.run(window, messages);
    let spans: Vec<Span> = f.recorder.spans.clone();
    let recorder = std::mem::take(&mut f.recorder);
    let steps = &built.plan.steps;
    let mps_read = steps
        .iter()
        .find_map(|s| match s.kind {
            plan::StepKind::DmaRead { read, .. } if s.payload => Some(read.mps),
            _ => None,
        })
        .unwrap_or(0);
    let mps_write = steps
        .iter()
        .find_map(|s| match s.kind {
            plan::StepKind::DmaWrite { mps, .. } => Some(mps),
            _ => None,
        })
        .unwrap_or(0);
    let mps_d2h = steps
        .iter()
        .find_map(|s| match s.kind {
            plan::StepKind::Memcpy {
                copy: Copy::D2h { mps, .. },
                ..
            } => Some(mps),
            _ => None,
        })
        .unwrap_or(0);
    Ok(Recorded {
        plan: built.sides,
        effective_path: paths::effective_name(built.sender, built.receiver).to_string(),
        setup_ps: built.setup,
        inline: built.inline,
        bounce_buffers: built.bounce_buffers,
        mps_read,
        mps_write,
        mps_d2h,
        recorder,
        outcome,
        spans,
        steps: built.plan,
    })
}

// ---- reading the recorder --------------------------------------------------------------------

/// The hops of one message, by the stage of the step they belong to and what they are.
struct Hops<'a> {
    rec: &'a Recorder,
    topo: &'a Topology,
    plan: &'a crate::plan::Plan,
    msg: u32,
    /// The steps walked (a pipelined message's first chunk), all when None.
    steps: Option<std::ops::Range<u16>>,
}

impl<'a> Hops<'a> {
    /// Hops of movement `what` of steps reporting as `stage` (None: steps off the one-way
    /// path, such as the ACK).
    fn of(&self, stage: Option<Stage>, what: Movement) -> Vec<&'a Hop> {
        self.rec
            .hops
            .iter()
            .filter(|h| h.msg == self.msg && h.what == what && self.plan.stage(h.step) == stage)
            .filter(|h| self.steps.as_ref().is_none_or(|r| r.contains(&h.step)))
            .collect()
    }

    /// Hops of `what` on channels of host `host` (None: the network).
    fn of_host(&self, stage: Option<Stage>, what: Movement, host: Option<usize>) -> Vec<&'a Hop> {
        self.of(stage, what)
            .into_iter()
            .filter(|h| self.host_of(h.channel) == host)
            .collect()
    }

    fn host_of(&self, ch: u32) -> Option<usize> {
        self.topo.channels.get(ch as usize).and_then(|c| c.host)
    }

    /// The channel's name without its host prefix ("node-a/pcie:sw0>nic0" -> "pcie:sw0>nic0").
    fn short(&self, ch: u32) -> String {
        short_name(self.topo, self.rec, ch)
    }

    /// A route as the nodes it passes: links "pcie:a>b" give a and b; switches, root
    /// complexes and memories give themselves; repeats collapse.
    fn nodes(&self, hops: &[&Hop]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut push = |n: &str| {
            if out.last().map(String::as_str) != Some(n) {
                out.push(n.to_string());
            }
        };
        for h in hops {
            let name = self.short(h.channel);
            let base = name
                .strip_prefix("pcie:")
                .or_else(|| name.strip_prefix("upi:"))
                .or_else(|| name.strip_prefix("wire:"))
                .unwrap_or(&name);
            let base = match base.find(".p2p-") {
                Some(i) => &base[..i],
                None => base,
            };
            match base.split_once('>') {
                Some((a, b)) => {
                    push(a);
                    push(b);
                }
                None => push(base),
            }
        }
        out
    }
}

impl<'a> Hops<'a> {
    /// Extent of a set of hops: (first start, when the last one reached the channel after: a
    /// server's hop ends with the unit's service, its latency comes on top).
    fn extent(&self, hops: &[&Hop]) -> Option<(Ps, Ps)> {
        let s = hops.iter().map(|h| h.start).min()?;
        let e = hops
            .iter()
            .map(|h| {
                let c = &self.topo.channels[h.channel as usize];
                h.end + c.latency * u64::from(h.units > 0 && c.is_server())
            })
            .max()?;
        Some((s, e))
    }
}

/// Units of kind `unit` among `hops` (distinct trains), or None where a bulk transfer moved
/// the data (its TLPs and packets are not counted one by one).
fn count(hops: &[&Hop], unit: Unit) -> Option<u64> {
    if hops.iter().any(|h| h.units == 0) {
        return None;
    }
    let mut seen = std::collections::HashSet::new();
    Some(
        hops.iter()
            .filter(|h| h.unit == unit && seen.insert(h.train))
            .count() as u64,
    )
}

/// The hops of the first unit of kind `unit` among `hops` (for routes).
fn first_of<'a>(hops: &[&'a Hop], unit: Unit) -> Vec<&'a Hop> {
    let Some(first) = hops.iter().find(|h| h.unit == unit) else {
        return Vec::new();
    };
    let mut seen = std::collections::HashSet::new();
    hops.iter()
        .copied()
        .filter(|h| h.train == first.train && seen.insert(h.channel))
        .collect()
}

fn short_name(topo: &Topology, rec: &Recorder, ch: u32) -> String {
    let name = rec.component_name(ch);
    let host = if (ch as usize) < topo.channels.len() {
        topo.channels[ch as usize].host
    } else {
        topo.hosts
            .iter()
            .position(|h| name.starts_with(&format!("{}/", h.name)))
    };
    match host {
        Some(h) => name
            .strip_prefix(&format!("{}/", topo.hosts[h].name))
            .unwrap_or(name)
            .to_string(),
        None => name.to_string(),
    }
}

/// Payload bytes of message `msg` over channels of `kind` (see the module doc).
fn payload_bytes_over(
    topo: &Topology,
    run: &Recorded,
    msg: u32,
    kind: fn(&ChannelKind) -> bool,
) -> u64 {
    run.recorder
        .hops
        .iter()
        .filter(|h| h.msg == msg && kind(&topo.channels[h.channel as usize].kind))
        .map(|h| {
            if h.what.carries_data() && run.steps.steps[h.step as usize].payload {
                h.payload
            } else if run.inline
                && h.what == Movement::Mmio
                && topo.channels[h.channel as usize].host == Some(run.plan.sender.host)
            {
                run.plan.size
            } else {
                0
            }
        })
        .sum()
}

// ---- the walk --------------------------------------------------------------------------------

fn step(start: Ps, end: Ps, component: &str, kind: StepKind) -> Step {
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
fn memcpy_step(
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
fn walk_path(
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
            let (count, bytes) = if run.effective_path == PathKind::StagedPipelined.name() {
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
        path: path.name().to_string(),
        effective_path: run.effective_path.clone(),
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
        class: paths::sender_class(topo, cfg.scenarios[si].first(), PathKind::GpuDirect)
            .to_string(),
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

fn us_exact(ps: Ps) -> Arg {
    Arg::Str(ps_to_us_exact(ps))
}

fn hex(a: u64) -> Arg {
    Arg::Str(walkthrough::hex(a))
}

/// The trace of `messages` messages of (scenario `si`, `path`, `size`), at most the config's
/// streaming window in flight.
pub fn trace(
    cfg: &Config,
    si: usize,
    (path, op): (PathKind, Op),
    size: u64,
    messages: u32,
) -> Result<TraceData> {
    let topo = &scenario::topology(cfg);
    let sc = &cfg.scenarios[si];
    let messages = messages.max(1);
    let window = cfg.sim.stream_window.min(messages).max(1);
    check_point(cfg, topo, si, path, op)?;
    let run = record(cfg, topo, si, (path, op), size, window, messages)?;
    let rec = &run.recorder;
    let plan = run.plan;
    let n_channels = topo.channels.len();
    let mut data = TraceData {
        processes: vec![
            format!("{} (sender)", topo.hosts[plan.sender.host].name),
            format!("{} (receiver)", topo.hosts[plan.receiver.host].name),
            "network".to_string(),
        ],
        ..TraceData::default()
    };
    let network = 2;
    // Trace processes: the sender's host, the receiver's, the network.
    let process_of = |host: Option<usize>| match host {
        Some(h) if h == plan.sender.host => 0,
        Some(h) if h == plan.receiver.host => 1,
        _ => network,
    };
    // Tracks, created on first use: stage tracks of components, then channels in topology order.
    let mut track_of: Vec<Option<usize>> = vec![None; rec.component_names.len()];
    let mut track = |data: &mut TraceData, id: u32| -> usize {
        if let Some(t) = track_of[id as usize] {
            return t;
        }
        let (process, name, sort) = if (id as usize) < n_channels {
            let c = &topo.channels[id as usize];
            (
                process_of(c.host),
                short_name(topo, rec, id),
                100 + id as u64,
            )
        } else {
            let full = rec.component_name(id);
            let p = process_of(
                topo.hosts
                    .iter()
                    .position(|h| full.starts_with(&format!("{}/", h.name))),
            );
            (
                p,
                format!("{} (stages)", short_name(topo, rec, id)),
                1 + id as u64 - n_channels as u64,
            )
        };
        data.tracks.push(Track {
            process,
            name,
            sort,
        });
        track_of[id as usize] = Some(data.tracks.len() - 1);
        data.tracks.len() - 1
    };
    // Messages: one-way latency of each, on a track of their own.
    data.tracks.push(Track {
        process: 0,
        name: "messages (one-way latency)".into(),
        sort: 0,
    });
    let msg_track = data.tracks.len() - 1;
    for (k, &(s, e)) in run.outcome.messages.iter().enumerate() {
        data.slices.push(Slice {
            track: msg_track,
            name: format!("msg {k}"),
            cat: "message".into(),
            start: s,
            end: e,
            instant: false,
            args: vec![
                ("msg".into(), Arg::Int(k as u64)),
                ("start_us".into(), us_exact(s)),
                ("end_us".into(), us_exact(e)),
                ("latency_us".into(), us_exact(e - s)),
                ("size_bytes".into(), Arg::Int(size)),
            ],
        });
    }
    // Stages, with message 0's critical-path shares.
    let msg0: Vec<&Span> = run.spans.iter().filter(|s| s.msg == 0).collect();
    let (s0, e0) = run.outcome.messages[0];
    let critical = crate::stats::critical_path(&run.steps, &msg0, e0 - s0, |c| {
        rec.component_name(c).to_string()
    });
    let mut stage_chains: Vec<Vec<usize>> = vec![Vec::new(); messages as usize];
    for s in &run.spans {
        let t = track(&mut data, s.component);
        let mut args = vec![
            ("msg".into(), Arg::Int(s.msg as u64)),
            ("stage".into(), Arg::from(s.stage.name())),
            (
                "component".into(),
                Arg::from(rec.component_name(s.component)),
            ),
            ("start_us".into(), us_exact(s.start)),
            ("first_out_us".into(), us_exact(s.first_out)),
            ("last_in_us".into(), us_exact(s.last_in)),
            ("end_us".into(), us_exact(s.end)),
        ];
        if s.msg == 0
            && let Some(row) = critical.iter().find(|r| r.stage == s.stage)
        {
            args.push(("critical_us".into(), us_exact(row.critical_ps)));
        }
        args.push(("size_bytes".into(), Arg::Int(size)));
        let (src, dst) = (plan.sender.nic_buffer, plan.receiver.nic_buffer);
        match (s.stage, plan.sender.staging, plan.receiver.staging) {
            (Stage::DmaRead, ..) => args.push(("src".into(), hex(src.dma_addr()))),
            (Stage::DmaWrite, ..) => args.push(("dst".into(), hex(dst.dma_addr()))),
            (Stage::Flush, ..) => args.push(("src".into(), hex(dst.dma_addr()))),
            (Stage::MemcpyD2h, Some(st), _) => {
                args.push(("src".into(), hex(st.gpu_va)));
                args.push(("dst".into(), hex(st.bounce_addr)));
            }
            (Stage::MemcpyH2d, _, Some(st)) => {
                args.push(("src".into(), hex(st.bounce_addr)));
                args.push(("dst".into(), hex(st.gpu_va)));
            }
            _ => {}
        }
        data.slices.push(Slice {
            track: t,
            name: s.stage.name().into(),
            cat: "stage".into(),
            start: s.start,
            end: s.end,
            instant: false,
            args,
        });
        stage_chains[s.msg as usize].push(data.slices.len() - 1);
    }
    for mut chain in stage_chains {
        chain.sort_by_key(|&i| data.slices[i].start);
        data.flows.push(chain);
    }
    // Descriptors, as instants on the NIC's stage track.
    for d in &rec.descriptors {
        let t = track(&mut data, d.component);
        let gather = d.direction == DescriptorDir::Gather;
        data.slices.push(Slice {
            track: t,
            name: if gather {
                "DMA descriptor (gather)".into()
            } else {
                "DMA descriptor (scatter)".into()
            },
            cat: "descriptor".into(),
            start: d.at,
            end: d.at,
            instant: true,
            args: vec![
                ("msg".into(), Arg::Int(d.msg as u64)),
                (if gather { "src" } else { "dst" }.into(), hex(d.addr)),
                ("virt_addr".into(), hex(d.virt_addr)),
                ("len".into(), Arg::Int(d.len)),
                ("flags".into(), Arg::Int(d.flags as u64)),
            ],
        });
    }
    // Hops: a slice per train per channel, addresses of payload trains, a flow per train.
    // Offsets within the buffer: the payload trains of one (message, kind) in issue order.
    let mut train_bytes: BTreeMap<u64, u64> = BTreeMap::new();
    let mut first_seen: Vec<&Hop> = Vec::new();
    for hop in &rec.hops {
        let b = train_bytes.entry(hop.train).or_insert_with(|| {
            first_seen.push(hop);
            0
        });
        *b = (*b).max(hop.payload);
    }
    let mut next: BTreeMap<(u32, Movement), u64> = BTreeMap::new();
    let mut train_offset: BTreeMap<u64, u64> = BTreeMap::new();
    for hop in first_seen {
        let slot = next.entry((hop.msg, hop.what)).or_insert(0);
        train_offset.insert(hop.train, *slot);
        *slot += train_bytes[&hop.train];
    }
    let offset_of = |train: u64| train_offset.get(&train).copied().unwrap_or(0);
    let mut train_chains: Vec<Vec<usize>> = Vec::new();
    let mut chain_of: BTreeMap<u64, usize> = BTreeMap::new();
    let staging_s = plan.sender.staging;
    let staging_r = plan.receiver.staging;
    for hop in &rec.hops {
        let t = track(&mut data, hop.channel);
        let request = hop.what.is_read() && hop.payload == 0;
        let mut args = vec![
            ("msg".into(), Arg::Int(hop.msg as u64)),
            ("train".into(), Arg::Int(hop.train)),
            ("channel".into(), Arg::from(rec.component_name(hop.channel))),
            ("payload_bytes".into(), Arg::Int(hop.payload)),
            ("units".into(), Arg::Int(hop.units)),
            ("start_us".into(), us_exact(hop.start)),
            ("end_us".into(), us_exact(hop.end)),
        ];
        let off = offset_of(hop.train);
        let what = hop.what;
        let flush = run.steps.stage(hop.step) == Some(Stage::Flush);
        if flush {
            if what == Movement::PayloadRead {
                args.push(("src".into(), hex(plan.receiver.nic_buffer.dma_addr())));
            }
        } else if what == Movement::PayloadRead {
            args.push(("src".into(), hex(plan.sender.nic_buffer.dma_addr() + off)));
        } else if what == Movement::PayloadWrite {
            args.push(("dst".into(), hex(plan.receiver.nic_buffer.dma_addr() + off)));
        } else if what == Movement::D2h
            && let Some(st) = staging_s
        {
            args.push(("src".into(), hex(st.gpu_va + off)));
            args.push(("dst".into(), hex(st.bounce_addr + off)));
        } else if (what == Movement::H2dRead || what == Movement::H2dWrite)
            && let Some(st) = staging_r
        {
            args.push(("src".into(), hex(st.bounce_addr + off)));
            args.push(("dst".into(), hex(st.gpu_va + off)));
        }
        data.slices.push(Slice {
            track: t,
            name: match (flush, request) {
                (true, true) => format!("flush {} (request)", what.name()),
                (true, false) => format!("flush {}", what.name()),
                (false, true) => format!("{} (request)", what.name()),
                (false, false) => what.name().to_string(),
            },
            cat: "hop".into(),
            start: hop.start,
            end: hop.end,
            instant: false,
            args,
        });
        let i = data.slices.len() - 1;
        let c = *chain_of.entry(hop.train).or_insert_with(|| {
            train_chains.push(Vec::new());
            train_chains.len() - 1
        });
        train_chains[c].push(i);
    }
    data.flows.extend(train_chains);
    // Link utilisation.
    for (c, spec) in topo.channels.iter().enumerate() {
        let counted = matches!(
            spec.kind,
            ChannelKind::PcieLink { .. }
                | ChannelKind::Wire
                | ChannelKind::NetworkSwitch
                | ChannelKind::SocketLink
        );
        if !counted || !spec.is_server() {
            continue;
        }
        let windows: Vec<(Ps, Ps, Ps)> = rec
            .hops
            .iter()
            .filter(|h| h.channel as usize == c)
            .map(|h| {
                let bytes = spec.wire_bytes(h.unit, h.payload, h.units);
                (
                    h.start,
                    h.end.saturating_sub(spec.latency).max(h.start),
                    spec.rate.tx_time(bytes),
                )
            })
            .collect();
        if windows.is_empty() {
            continue;
        }
        data.links.push(LinkBusy {
            process: process_of(spec.host),
            name: short_name(topo, rec, c as u32),
            windows,
        });
    }
    data.metadata = vec![
        ("generator".into(), Arg::from("gdrsim trace")),
        ("config".into(), Arg::from(cfg.name.as_str())),
        ("scenario".into(), Arg::from(sc.name.as_str())),
        (
            "class".into(),
            Arg::from(paths::sender_class(topo, cfg.scenarios[si].first(), path).to_string()),
        ),
        ("path".into(), Arg::from(path.name())),
        (
            "effective_path".into(),
            Arg::from(run.effective_path.as_str()),
        ),
        ("size_bytes".into(), Arg::Int(size)),
        ("messages".into(), Arg::Int(messages as u64)),
        ("window".into(), Arg::Int(window as u64)),
        ("msg0_latency_us".into(), us_exact(e0 - s0)),
        (
            "host_mem_bytes".into(),
            Arg::Int(run.outcome.host_mem_bytes),
        ),
        (
            "times".into(),
            Arg::from(
                "ts/dur in microseconds rounded to the nanosecond; exact picosecond times in args (*_us)",
            ),
        ),
        (
            "note".into(),
            Arg::from(
                "noise-free run (jitter off); the recorder keeps stage spans of message 0 only, the stages of later messages are rebuilt from the fabric's per-message stage times",
            ),
        ),
    ];
    Ok(data)
}

/// What `gdrsim trace` reports after writing.
pub struct TraceRun {
    pub stats: TraceStats,
    pub summary: String,
}

/// `gdrsim trace`: loads the config, traces, writes `out`.
pub fn run_trace(
    config: Option<&Path>,
    scenario: Option<&str>,
    (path, op): (&str, &str),
    size: &str,
    messages: u32,
    out: &Path,
) -> Result<TraceRun> {
    let path = parse_path(path)?;
    let op = parse_op(op)?;
    let size = parse_size(size)?;
    if messages == 0 {
        return Err(ConfigError::new(CLI, "--messages", "at least 1", "0").into());
    }
    // A trace holds every train of every message: keep it to what a viewer can open.
    if messages > 10_000 || (messages as u64).saturating_mul(size) > 4 << 30 {
        return Err(ConfigError::new(
            CLI,
            "--messages",
            "at most 10000 messages and 4 GiB in all (a trace records every burst)",
            format!("{messages} x {size} bytes"),
        )
        .into());
    }
    crate::report::output_dir::usable_file(out, "--out")?;
    let cfg = crate::app::load_config(config)?;
    let si = scenario_index(&cfg, scenario)?;
    // Every unit of every message is a slice: estimate the file from one message, and refuse
    // what no viewer opens (and what would hold gigabytes here while it is built).
    if messages > 1 {
        let one = crate::report::trace::render(&trace(&cfg, si, (path, op), size, 1)?).1;
        let estimate = one.bytes as u64 * messages as u64;
        if estimate > MAX_TRACE_BYTES {
            return Err(ConfigError::new(
                CLI,
                "--messages",
                format!(
                    "a trace of at most {} (fewer messages or a smaller --size)",
                    crate::units::fmt_bytes(MAX_TRACE_BYTES)
                ),
                format!(
                    "{messages} messages of {} slices each: about {}",
                    one.slices,
                    crate::units::fmt_bytes(estimate)
                ),
            )
            .into());
        }
    }
    let data = trace(&cfg, si, (path, op), size, messages)?;
    let stats = crate::report::trace::write(out, &data)?;
    let lat = data
        .metadata
        .iter()
        .find(|(k, _)| k == "msg0_latency_us")
        .map(|(_, v)| match v {
            Arg::Str(s) => s.clone(),
            Arg::Int(i) => i.to_string(),
        })
        .unwrap_or_default();
    let summary = format!(
        "wrote {} ({} slices, {} instants, {} tracks on {} threads, {} flows, {} counter points, {} bytes); \
                  {} {} {} {} bytes x {}: message 0 one-way latency {} us{}. Open it in ui.perfetto.dev or chrome://tracing.",
        out.display(),
        stats.slices,
        stats.instants,
        stats.tracks,
        stats.threads,
        stats.flows,
        stats.counter_points,
        stats.bytes,
        cfg.scenarios[si].name,
        path.name(),
        op.name(),
        size,
        messages,
        lat,
        if messages == 1 { " (lat_model_us)" } else { "" }
    );
    Ok(TraceRun { stats, summary })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_values_are_checked() {
        let cfg = crate::app::load_config(None).unwrap();
        assert_eq!(scenario_index(&cfg, None).unwrap(), 0);
        assert_eq!(scenario_index(&cfg, Some("SYS")).unwrap(), 2);
        assert!(scenario_index(&cfg, Some("nope")).is_err());
        assert_eq!(parse_size("4KiB").unwrap(), 4096);
        assert!(parse_size("0").is_err());
        assert!(parse_size("4 apples").is_err());
        assert!(parse_lang("fr").is_err());
        assert!(parse_path("gpudirect").is_ok());
    }
}

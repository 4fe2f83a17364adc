//! A workload: flows that wait on flows. Message k of a gated flow starts once message
//! k - lag of each flow it names has been delivered (plus its GPU's reduction where it reduces),
//! and once its own window has a free slot. Its result is the completion time of the whole
//! workload (first start to the last delivery of every flow), with a critical chain that
//! crosses flows: which messages, reductions and waits, one after the other, set that time.
//!
//! Runs: the noise-free workload (completion time, stages, chain, links and bottleneck, each
//! flow's own figures) and jittered repeats of the whole workload (completion-time statistics,
//! bandwidth). Independent flows never come here: [`super::simulate_point`] keeps their
//! definitions.

use rayon::prelude::*;

use super::Point;
use super::collective::{self, Schedule};
use super::paths;
use super::simulate::{
    PointResult, bottleneck, flow_row, iterations, link_rows, longest_limit, with_fabric,
};
use super::tuner::Net;
use crate::components::{Fabric, FlowOutcome, ReduceRule, gating_message};
use crate::config::PathKind;
use crate::config::collective::Protocol;
use crate::config::{Config, ScenarioSpec, Workload};
use crate::effective::SideMode;
use crate::plan::Plan;
use crate::record::{Recorder, Span, Stage};
use crate::stats::{self, ChainRow, FlowRow, StageRow, Summary};
use crate::topology::Topology;
use crate::units::Ps;

/// The plan of one message of `bytes` of flow `i` of scenario `sc`: a collective's edge inside
/// a node is NCCL's P2P transport in `protocol` (Simple stores a flag after the data, LL and
/// LL128 carry it in their lines); every other flow's is its path's, from the sender NCCL's
/// PXN picks where it is on ([`pxn_flow`]).
pub fn plan(
    cfg: &Config,
    topo: &Topology,
    sc: &ScenarioSpec,
    i: usize,
    (path, op): (crate::config::PathKind, crate::config::Op),
    (bytes, protocol): (u64, Protocol),
) -> Result<paths::Built, crate::topology::RouteError> {
    let pxn = pxn_flow(cfg, topo, sc, i, path);
    let f = pxn.as_ref().unwrap_or(&sc.flows[i]);
    plan_sent(cfg, topo, sc, f, (path, op), (bytes, protocol))
}

/// [`plan`] of flow `f` as it is sent (its sender PXN's where [`pxn_flow`] says so).
fn plan_sent(
    cfg: &Config,
    topo: &Topology,
    sc: &ScenarioSpec,
    f: &crate::config::FlowSpec,
    (path, op): (crate::config::PathKind, crate::config::Op),
    (bytes, protocol): (u64, Protocol),
) -> Result<paths::Built, crate::topology::RouteError> {
    let collective = sc.workload.as_ref().is_some_and(|w| w.collective.is_some());
    if collective && f.is_intra() {
        super::nccl_p2p::plan(topo, f, bytes, protocol)
    } else {
        // Only a Simple receiver waits for the flush and for its proxy's tail.
        let simple = !matches!(protocol, Protocol::Ll | Protocol::Ll128);
        paths::plan_flushing(cfg, f, topo, (path, op, bytes), simple)
    }
}

/// Flow `i` of `sc` as NCCL sends it with PXN on `path`, where that changes its sender: its
/// workload names a PXN sender (an all-to-all's send to another rail), PXN is on (`pxn`, or
/// `auto` with `sim.pxn`), and that NIC's GPU relays for the sending GPU (NCCL's condition:
/// NVLink between the two, GPUDirect from the relay to its NIC, [`super::relay::relay_gpu`]).
/// Otherwise NCCL sends through the GPU's own NIC: None.
fn pxn_flow(
    cfg: &Config,
    topo: &Topology,
    sc: &ScenarioSpec,
    i: usize,
    path: PathKind,
) -> Option<crate::config::FlowSpec> {
    let on = path == PathKind::Pxn || (path == PathKind::Auto && cfg.sim.pxn);
    let s = sc.workload.as_ref()?.flows.get(i)?.pxn_sender.clone()?;
    let f = &sc.flows[i];
    let g = f.sender.gpu?;
    (on && super::relay::relay_gpu(cfg, topo, s.host, (g, s.nic)).is_ok()).then(|| {
        crate::config::FlowSpec {
            sender: s,
            ..f.clone()
        }
    })
}

/// First start to last delivery over every flow of a run.
fn completion_of(flows: &[FlowOutcome]) -> Ps {
    let all = flows.iter().flat_map(|f| &f.messages);
    let first = all.clone().map(|m| m.0).min().unwrap_or(0);
    let last = all.map(|m| m.1).max().unwrap_or(0);
    last.saturating_sub(first)
}

/// What each flow of a workload point does, worked out once for all its runs.
struct Shape {
    /// Per flow: messages it carries, which of them its reduction delays and by how much, and
    /// the flows (with lags) that gate it.
    messages: Vec<u32>,
    reduce: Vec<ReduceRule>,
    gates: Vec<Vec<(usize, u32)>>,
    /// Bytes of every message (the point's size; a collective's slice).
    message_bytes: u64,
    /// A collective's protocol at this size (Simple for any other workload).
    protocol: Protocol,
    /// Messages in flight per flow at most.
    window: u32,
}

impl Shape {
    fn of(cfg: &Config, sc: &ScenarioSpec, w: &Workload, (size, path): (u64, PathKind)) -> Self {
        let sched = schedule(cfg, w, (size, path));
        let bytes = sched.map_or(size, |s| s.message_bytes);
        Shape {
            messages: match sched {
                Some(s) => (0..w.flows.len())
                    .map(|i| if active(w, s, i) { s.messages } else { 0 })
                    .collect(),
                None => (0..w.flows.len())
                    .map(|i| messages(cfg, w, i, (size, path)))
                    .collect(),
            },
            reduce: w
                .flows
                .iter()
                .zip(&sc.flows)
                .map(|(d, f)| {
                    // A host-memory sender has no GPU to reduce on (the config refuses it).
                    // A collective's reduction runs inside NCCL's kernel, already running:
                    // no launch, the data at the reduction rate. A flow's `reduce` is a kernel
                    // of its own.
                    let delay = f.sender.gpu.map_or(0, |g| {
                        let r = &cfg.hosts[f.sender.host].machine.gpus[g].reduce;
                        match sched {
                            Some(s) => r.rate.tx_time(s.data_bytes),
                            None => r.time(bytes),
                        }
                    });
                    match sched {
                        // A tree's rank with children reduces every chunk it sends up (and
                        // the root every chunk it sends down): the flows marked `reduce`.
                        Some(_) if d.reduce => ReduceRule::every(delay),
                        Some(s) => ReduceRule { delay, ..s.reduce },
                        None if d.reduce => ReduceRule::every(delay),
                        None => ReduceRule::NONE,
                    }
                })
                .collect(),
            gates: w
                .flows
                .iter()
                .map(|d| {
                    let lag = |l: u32| sched.map_or(l, |s| s.lag);
                    d.after.iter().map(|&(on, l)| (on, lag(l))).collect()
                })
                .collect(),
            message_bytes: bytes,
            protocol: sched.map_or(Protocol::Simple, |s| s.protocol),
            window: sched.map_or(cfg.sim.stream_window.max(1), |s| s.window),
        }
    }
}

/// The fabric of one run of the workload: its flows' gates, reductions and message counts set.
fn fabric<'t>(
    topo: &'t Topology,
    plans: &[&'t Plan],
    shape: &Shape,
    opts: crate::components::SimOptions,
) -> Fabric<'t> {
    let mut f = Fabric::new(topo, plans, opts);
    for (i, gates) in shape.gates.iter().enumerate() {
        for &(on, lag) in gates {
            f.gate(i, on, lag);
        }
        f.set_reduce(i, shape.reduce[i]);
        f.set_messages(i, shape.messages[i]);
    }
    f
}

/// A collective's schedule at the point's size on its path (None for any other workload).
fn schedule(cfg: &Config, w: &Workload, (size, path): (u64, PathKind)) -> Option<Schedule> {
    w.collective
        .as_ref()
        .map(|c| collective::schedule(c, size, Net::of(cfg, path)))
}

/// Whether flow `i` of a collective's workload runs at a size whose schedule is `s`: it is
/// an edge of the algorithm the size runs (an `auto` all-reduce holds the rings' flows and
/// the trees').
fn active(w: &Workload, s: Schedule, i: usize) -> bool {
    w.collective
        .as_ref()
        .is_none_or(|c| collective::running(c, &s, w.flows.len()).contains(&i))
}

/// Messages flow `i` carries: its `messages`, or the sweep's iterations for the size.
/// A collective's: its schedule's (none for the flows of the algorithm the size does not run).
pub fn messages(cfg: &Config, w: &Workload, i: usize, at: (u64, PathKind)) -> u32 {
    match schedule(cfg, w, at) {
        Some(s) if active(w, s, i) => s.messages,
        Some(_) => 0,
        None => w.flows[i].messages.unwrap_or_else(|| iterations(cfg, at.0)),
    }
}

/// The protocol of a collective's messages at `size` (its own, or the tuner's choice); Simple
/// for any other workload (the protocol only shapes a collective's plans).
pub fn protocol(cfg: &Config, w: &Workload, at: (u64, PathKind)) -> Protocol {
    schedule(cfg, w, at).map_or(Protocol::Simple, |s| s.protocol)
}

/// Bytes of each message of the workload at `size`: the size, or a collective's slice.
pub fn message_bytes(cfg: &Config, w: &Workload, at: (u64, PathKind)) -> u64 {
    schedule(cfg, w, at).map_or(at.0, |s| s.message_bytes)
}

/// Messages one run of the workload carries, every flow's together (a collective's schedule
/// worked out once: every flow carries its count).
pub fn run_messages(cfg: &Config, w: &Workload, at: (u64, PathKind)) -> u64 {
    match schedule(cfg, w, at) {
        Some(s) => {
            let running = match &w.collective {
                Some(c) => collective::running(c, &s, w.flows.len()).len(),
                None => w.flows.len(),
            };
            u64::from(s.messages).saturating_mul(running as u64)
        }
        None => (0..w.flows.len())
            .map(|i| u64::from(messages(cfg, w, i, at)))
            .sum(),
    }
}

/// Jittered repeats of the whole workload: the sweep's iteration rules for its bytes.
pub fn repeats(cfg: &Config, w: &Workload, at: (u64, PathKind)) -> u32 {
    let bytes = message_bytes(cfg, w, at);
    iterations(cfg, bytes.saturating_mul(run_messages(cfg, w, at).max(1)))
}

/// Simulates point `p`, whose scenario is the workload `w`. A collective whose scenario holds
/// flows of two algorithms (an `auto` all-reduce: the rings' and the trees') runs those of the
/// algorithm its schedule picks for the size, as a scenario of its own.
pub fn simulate(cfg: &Config, topo: &Topology, p: &Point, w: &Workload) -> PointResult {
    as_run(cfg, p, w, |sc, w| simulate_in(cfg, topo, p, sc, w))
}

/// What the jittered repeats of a workload point give on their own: the statistics of their
/// completion times, the events they took and whether any passed the simulator's horizon.
#[derive(Clone, Debug)]
pub struct Repeats {
    /// Statistics of the repeats' completion times.
    pub lat: stats::LatencyStats,
    /// Events the repeats took, all together.
    pub events: u64,
    /// Whether a repeat passed the simulator's horizon (its times are not results).
    pub past_horizon: bool,
}

/// Simulates only the jittered repeats of point `p` (workload `w`), the same runs as
/// [`simulate`]'s (same seeds, same figures), without its noise-free run and what is read
/// from it (stages, critical chain, links, bottleneck): what `gdrsim nccl-tests` prints, the
/// mean completion over the repeats, needs nothing else (a third of a large point's work).
pub fn simulate_repeats(cfg: &Config, topo: &Topology, p: &Point, w: &Workload) -> Repeats {
    as_run(cfg, p, w, |sc, w| {
        let setup = Setup::of(cfg, topo, p, sc, w);
        run_repeats(cfg, topo, p, w, (&setup.plans(), &setup.shape)).0
    })
}

/// Simulates only the noise-free run of point `p` (workload `w`), recording its spans, the
/// same run as [`simulate`]'s: its completion time and its recorder (what `gdrsim trace`
/// draws).
pub fn simulate_noise_free(
    cfg: &Config,
    topo: &Topology,
    p: &Point,
    w: &Workload,
) -> (Ps, Recorder) {
    as_run(cfg, p, w, |sc, w| {
        let setup = Setup::of(cfg, topo, p, sc, w);
        let (model, recorder) = noise_free_run(cfg, topo, p, (&setup.plans(), &setup.shape));
        (completion_of(&model.flows), recorder)
    })
}

/// The names of the effective paths the flows of point `p` (workload `w`) that cross the
/// network take, each once, in flow order (results.csv's `effective_path` of those rows).
pub fn crossing_paths(cfg: &Config, topo: &Topology, p: &Point, w: &Workload) -> Vec<String> {
    as_run(cfg, p, w, |sc, w| {
        let setup = Setup::of(cfg, topo, p, sc, w);
        let mut names: Vec<String> = Vec::new();
        for (i, b) in setup.built.iter().enumerate() {
            let flow = setup.sent[i].as_ref().unwrap_or(&sc.flows[i]);
            let name = b.effective().name().to_string();
            let crosses = !flow.is_intra() || flow.sender.gpu.is_none();
            if crosses && !names.contains(&name) {
                names.push(name);
            }
        }
        names
    })
}

/// One flow of a workload point as its records show it: its name (a collective's edge:
/// channel, sender rank, receiver rank), its sender's host, its messages and the spans each
/// of them records (its plan's reported steps).
#[derive(Clone, Debug)]
pub struct FlowRecords {
    /// The flow's name (`FlowDeps::name`).
    pub name: String,
    /// Index of its sender's host in the config.
    pub host: usize,
    /// Messages it carries at the point's size.
    pub messages: u32,
    /// Spans a message of it records.
    pub spans_each: u32,
}

/// The flows point `p` (workload `w`) runs, numbered as its results and records number them
/// (an `auto` all-reduce runs one algorithm's flows only).
pub fn flow_records(cfg: &Config, topo: &Topology, p: &Point, w: &Workload) -> Vec<FlowRecords> {
    as_run(cfg, p, w, |sc, w| {
        let setup = Setup::of(cfg, topo, p, sc, w);
        (w.flows.iter().zip(&sc.flows).zip(&setup.built))
            .zip(&setup.shape.messages)
            .map(|(((d, f), b), &messages)| FlowRecords {
                name: d.name.clone(),
                host: f.sender.host,
                messages,
                spans_each: b.plan.steps.iter().filter(|s| s.stage.is_some()).count() as u32,
            })
            .collect()
    })
}

/// Calls `f` with the scenario and workload point `p` runs: `w`'s, or where a collective's
/// scenario holds flows of two algorithms (an `auto` all-reduce: the rings' and the trees'),
/// those of the algorithm its schedule picks for the size, as a scenario of its own.
fn as_run<R>(
    cfg: &Config,
    p: &Point,
    w: &Workload,
    f: impl FnOnce(&ScenarioSpec, &Workload) -> R,
) -> R {
    let sc = &cfg.scenarios[p.scenario];
    if let (Some(c), Some(s)) = (&w.collective, schedule(cfg, w, (p.size, p.path))) {
        let run = collective::running(c, &s, w.flows.len());
        if run.len() < w.flows.len() {
            let (sc, w) = narrowed(sc, w, c, run);
            return f(&sc, &w);
        }
    }
    f(sc, w)
}

/// A workload point's flows as they run: its shape, each flow as it is sent (PXN's sender
/// where it relays, asked once: its plan and its row both name it) and their plans.
struct Setup {
    shape: Shape,
    sent: Vec<Option<crate::config::FlowSpec>>,
    built: Vec<paths::Built>,
}

impl Setup {
    fn of(cfg: &Config, topo: &Topology, p: &Point, sc: &ScenarioSpec, w: &Workload) -> Self {
        let shape = Shape::of(cfg, sc, w, (p.size, p.path));
        let sent: Vec<Option<crate::config::FlowSpec>> = (0..sc.flows.len())
            .map(|i| pxn_flow(cfg, topo, sc, i, p.path))
            .collect();
        let built: Vec<paths::Built> = (sc.flows.iter().zip(&sent))
            .map(|(f, pxn)| {
                let f = pxn.as_ref().unwrap_or(f);
                let at = (shape.message_bytes, shape.protocol);
                plan_sent(cfg, topo, sc, f, (p.path, p.op), at).expect("plans were checked")
            })
            .collect();
        Setup { shape, sent, built }
    }

    fn plans(&self) -> Vec<&Plan> {
        self.built.iter().map(|b| &b.plan).collect()
    }
}

/// The noise-free run of point `p`, its flows' `plans` run to `shape`, recording spans: its
/// outcome and its recorder.
fn noise_free_run(
    cfg: &Config,
    topo: &Topology,
    p: &Point,
    (plans, shape): (&[&Plan], &Shape),
) -> (crate::components::Outcome, Recorder) {
    let opts = super::sim_options(cfg, p.seed)
        .noise_free()
        .recording_spans();
    let mut f = fabric(topo, plans, shape, opts);
    let model = f.run(shape.window, 1);
    let recorder = std::mem::take(&mut f.recorder);
    (model, recorder)
}

/// The jittered repeats of point `p` (workload `w`), its flows' `plans` run to `shape`, side
/// by side on the study's worker threads and taken in order: what they give together, and
/// each flow's message latencies over them.
fn run_repeats(
    cfg: &Config,
    topo: &Topology,
    p: &Point,
    w: &Workload,
    (plans, shape): (&[&Plan], &Shape),
) -> (Repeats, Vec<Vec<Ps>>) {
    let n = repeats(cfg, w, (p.size, p.path));
    let runs: Vec<_> = (0..n)
        .into_par_iter()
        .map(|i| {
            let opts = super::sim_options(cfg, super::mix(p.seed, &[1, i as u64]));
            let mut f = fabric(topo, plans, shape, opts);
            let out = f.run(shape.window, 1);
            (out.stats, completion_of(&out.flows), out.flows)
        })
        .collect();
    let mut own: Vec<Vec<Ps>> = vec![Vec::new(); plans.len()];
    let mut samples = Vec::with_capacity(runs.len());
    let (mut events, mut past_horizon) = (0, false);
    for (st, sample, flows) in runs {
        events += st.events;
        past_horizon |= st.past_horizon;
        samples.push(sample);
        for (o, fl) in own.iter_mut().zip(&flows) {
            o.extend(fl.messages.iter().map(|(s, e)| e - s));
        }
    }
    let lat = stats::latency_stats(&samples);
    (
        Repeats {
            lat,
            events,
            past_horizon,
        },
        own,
    )
}

/// Scenario `sc` (workload `w`, collective `c`) with only the flows `run`: their gates
/// renumbered, the collective's split moved to match (every flow one algorithm's).
fn narrowed(
    sc: &ScenarioSpec,
    w: &Workload,
    c: &crate::config::collective::Collective,
    run: std::ops::Range<usize>,
) -> (ScenarioSpec, Workload) {
    let start = run.start;
    let flows = w.flows[run.clone()]
        .iter()
        .map(|d| crate::config::FlowDeps {
            after: d
                .after
                .iter()
                .filter(|&&(on, _)| run.contains(&on))
                .map(|&(on, lag)| (on - start, lag))
                .collect(),
            ..d.clone()
        })
        .collect();
    let tree_start = if start == 0 { run.len() } else { 0 };
    let w = Workload {
        flows,
        collective: Some(crate::config::collective::Collective {
            tree_start,
            ..c.clone()
        }),
    };
    let sc = ScenarioSpec {
        flows: sc.flows[run].to_vec(),
        workload: Some(w.clone()),
        ..sc.clone()
    };
    (sc, w)
}

/// Simulates point `p` of scenario `sc`, the workload `w`.
fn simulate_in(
    cfg: &Config,
    topo: &Topology,
    p: &Point,
    sc: &ScenarioSpec,
    w: &Workload,
) -> PointResult {
    let setup = Setup::of(cfg, topo, p, sc, w);
    let Setup { shape, sent, built } = &setup;
    let plans = setup.plans();
    let window = shape.window;

    // The noise-free workload (completion time, stages, chain, links, each flow's figures) and
    // the jittered repeats of the whole workload are independent runs: they run side by side
    // on the study's worker threads, and come back in order (the results do not depend on
    // how many threads there are).
    let total_msgs = run_messages(cfg, w, (p.size, p.path));
    let ((model, recorder), (reps, own)) = rayon::join(
        || noise_free_run(cfg, topo, p, (&plans, shape)),
        || run_repeats(cfg, topo, p, w, (&plans, shape)),
    );
    let events = model.stats.events + reps.events;
    let past_horizon = model.stats.past_horizon || reps.past_horizon;
    let n = repeats(cfg, w, (p.size, p.path));
    let completion = completion_of(&model.flows);
    let chain = critical_chain(cfg, sc, w, shape, &plans, &recorder, &model.flows);
    let stages = stage_rows(&chain);
    let lat = reps.lat;
    let mean_s = lat.mean_us / 1e6;
    // A collective's bandwidth is nccl-tests' algbw: its buffer over its time.
    let bytes = match &w.collective {
        Some(_) => p.size as f64,
        None => shape.message_bytes as f64 * total_msgs as f64,
    };
    let (bw_gbps, msg_rate_mps) = if mean_s > 0.0 {
        (bytes / mean_s / 1e9, total_msgs as f64 / mean_s / 1e6)
    } else {
        (0.0, 0.0)
    };

    let per_message = Point {
        size: shape.message_bytes,
        ..p.clone()
    };
    let flow_rows: Vec<FlowRow> = sc
        .flows
        .iter()
        .zip(built)
        .enumerate()
        .map(|(i, (flow, b))| {
            // A flow PXN sends from another NIC is named as it ran (its sender via that NIC).
            let flow = sent[i].as_ref().unwrap_or(flow);
            let mine = &model.flows[i].messages;
            let (s, e) = mine[0];
            let mut row = flow_row(
                cfg,
                topo,
                &per_message,
                (i, flow, b),
                (e - s, &own[i], mine),
            );
            row.bottleneck = longest_limit(topo, &model.flows[i].limits);
            row
        })
        .collect();
    let (flow_rows, fabric) = with_fabric(topo, &plans, flow_rows);
    let flows = sc.flows.len() as u64;
    // The flow the row's class, path and reason describe: the first; a collective's first
    // that crosses the network (its edges inside a node are all NCCL's P2P transport).
    let shown = match &w.collective {
        Some(_) => {
            let crossing = |i: &usize| !sc.flows[*i].is_intra();
            let relayed = |i: &usize| flow_rows[*i].effective_path.sender == SideMode::Relay;
            (0..sc.flows.len())
                .filter(crossing)
                .find(relayed)
                .or_else(|| (0..sc.flows.len()).find(crossing))
                .unwrap_or(0)
        }
        None => 0,
    };
    let summary = Summary {
        variant: String::new(),
        scenario: sc.name.clone(),
        class: flow_rows[shown].class,
        path: p.path,
        effective_path: flow_rows[shown].effective_path,
        op: p.op,
        size_bytes: p.size,
        iterations: n,
        lat_model_ps: completion,
        lat,
        bw_gbps,
        msg_rate_mps,
        cpu_busy_ps: model.flows.iter().map(|f| f.cpu_busy).sum::<Ps>() / flows,
        host_mem_bytes: model.host_mem_bytes / total_msgs.max(1),
        setup_ps: built.iter().map(|b| b.setup).max().unwrap_or(0),
        stages,
        flows: flows as u32,
        bottleneck: bottleneck(topo, &model, completion, window),
        reason: built[shown].reason.clone(),
        rnr_naks: model.rnr_naks,
        // A workload's figures are its completion, not a stream's steady rate.
        steady: true,
        flow_rows,
        links: link_rows(topo, &model, completion),
        workload_ps: Some(completion),
        busbw_gbps: w.collective.as_ref().map(|c| {
            let (num, den) = collective::busbw_factor(c.kind, c.ranks());
            bw_gbps * num as f64 / den as f64
        }),
        chain,
        fabric,
    };
    PointResult {
        summary,
        recorder,
        past_horizon,
        events,
    }
}

/// One piece of the critical chain before its stages are split out.
enum Piece {
    /// A message of a flow, from its start to its delivery (or to `until`, where the next
    /// piece began before the delivery).
    Message { flow: usize, msg: u32, until: Ps },
    /// A wait of a flow's message from `from` to `to`: its reduction, or a window slot.
    Wait {
        flow: usize,
        msg: u32,
        stage: Stage,
        from: Ps,
        to: Ps,
    },
}

/// The chain of messages, reductions and window waits that set the completion time, walking
/// back from the last delivery: at each message, what let it start (the gating delivery that
/// came last, plus the reduction; else the send completion that freed its window slot), until
/// a message that started at the workload's start. Returned in time order, split into stages,
/// each with its exclusive share: the shares sum exactly to the completion time.
fn critical_chain(
    cfg: &Config,
    sc: &ScenarioSpec,
    w: &Workload,
    shape: &Shape,
    plans: &[&Plan],
    recorder: &Recorder,
    line: &[FlowOutcome],
) -> Vec<ChainRow> {
    let start_of = |f: usize, k: usize| line[f].messages[k].0;
    let delivered = |f: usize, k: usize| line[f].messages[k].1;
    let origin = line
        .iter()
        .flat_map(|f| &f.messages)
        .map(|m| m.0)
        .min()
        .unwrap_or(0);
    // The last delivery; ties go to the lowest flow and message.
    let Some((mut flow, mut msg)) = (0..line.len())
        .flat_map(|f| (0..line[f].messages.len()).map(move |k| (f, k)))
        .max_by_key(|&(f, k)| (delivered(f, k), std::cmp::Reverse(f), std::cmp::Reverse(k)))
    else {
        return Vec::new();
    };
    let mut pieces = Vec::new();
    let mut until = delivered(flow, msg);
    // Every step goes back to an earlier start or stops: at most one piece per message, plus
    // its wait.
    let bound: usize = line.iter().map(|f| f.messages.len()).sum();
    for _ in 0..=bound {
        pieces.push(Piece::Message {
            flow,
            msg: msg as u32,
            until,
        });
        let start = start_of(flow, msg);
        if start <= origin {
            break;
        }
        let reduce = shape.reduce[flow].delay_of(msg as u32);
        let gate = shape.gates[flow]
            .iter()
            .filter_map(|&(on, lag)| {
                let total = line[on].messages.len() as u32;
                let j = gating_message(msg as u32, lag, total)? as usize;
                let at = delivered(on, j);
                (at + reduce == start).then_some((on, j, at))
            })
            .next();
        if let Some((on, j, delivered)) = gate {
            if reduce > 0 {
                pieces.push(Piece::Wait {
                    flow,
                    msg: msg as u32,
                    stage: Stage::Reduce,
                    from: delivered,
                    to: start,
                });
            }
            (flow, msg, until) = (on, j, delivered);
            continue;
        }
        // Its window: the earlier message of its own flow whose send completion freed the slot.
        let slot = (0..msg)
            .filter(|&j| line[flow].finished[j] == start)
            .max_by_key(|&j| delivered(flow, j));
        let Some(j) = slot else {
            pieces.push(Piece::Wait {
                flow,
                msg: msg as u32,
                stage: Stage::Window,
                from: origin,
                to: start,
            });
            break;
        };
        let at = delivered(flow, j);
        if at < start {
            pieces.push(Piece::Wait {
                flow,
                msg: msg as u32,
                stage: Stage::Window,
                from: at,
                to: start,
            });
        }
        (msg, until) = (j, at.min(start));
    }
    pieces.reverse();

    let mut spans = spans_by_message(recorder, line);
    let mut rows = Vec::new();
    for piece in pieces {
        match piece {
            Piece::Message { flow, msg, until } => {
                let start = start_of(flow, msg as usize);
                let mine = std::mem::take(&mut spans[flow][msg as usize]);
                // The message's own spans, from its start (as its critical path reads them).
                let shifted: Vec<Span> = mine
                    .iter()
                    .map(|s| Span {
                        start: s.start.saturating_sub(start),
                        first_out: s.first_out.saturating_sub(start),
                        last_in: s.last_in.saturating_sub(start),
                        end: s.end.saturating_sub(start),
                        ..(*s).clone()
                    })
                    .collect();
                let refs: Vec<&Span> = shifted.iter().collect();
                let stages = stats::critical_path(plans[flow], &refs, until - start, |c| {
                    recorder.component_name(c).to_string()
                });
                for s in stages.into_iter().filter(|s| s.critical_ps > 0) {
                    rows.push(ChainRow {
                        flow: w.flows[flow].name.clone(),
                        msg,
                        stage: s.stage,
                        component: s.component,
                        start_ps: s.start_ps + start - origin,
                        end_ps: s.end_ps + start - origin,
                        critical_ps: s.critical_ps,
                    });
                }
            }
            Piece::Wait {
                flow,
                msg,
                stage,
                from,
                to,
            } => rows.push(ChainRow {
                flow: w.flows[flow].name.clone(),
                msg,
                stage,
                component: match stage {
                    Stage::Reduce => gpu_name(cfg, &sc.flows[flow].sender),
                    _ => format!("{} window", w.flows[flow].name),
                },
                start_ps: from - origin,
                end_ps: to - origin,
                critical_ps: to - from,
            }),
        }
    }
    rows
}

/// "n0/gpu0": the GPU of an end (its host where it has none).
fn gpu_name(cfg: &Config, e: &crate::config::Endpoint) -> String {
    let h = &cfg.hosts[e.host];
    match e.gpu {
        Some(g) => format!("{}/{}", h.name, h.machine.gpus[g].name),
        None => h.name.clone(),
    }
}

/// The recorded spans grouped by flow and message.
fn spans_by_message<'r>(recorder: &'r Recorder, line: &[FlowOutcome]) -> Vec<Vec<Vec<&'r Span>>> {
    let mut out: Vec<Vec<Vec<&Span>>> = line
        .iter()
        .map(|f| vec![Vec::new(); f.messages.len()])
        .collect();
    for s in &recorder.spans {
        if let Some(slot) = out
            .get_mut(s.flow as usize)
            .and_then(|f| f.get_mut(s.msg as usize))
        {
            slot.push(s);
        }
    }
    out
}

/// stages.csv's rows of a workload: per stage kind, its summed share of the critical chain
/// (the shares sum to the completion time), the component of its largest share, and when it
/// first and last worked on the chain.
fn stage_rows(chain: &[ChainRow]) -> Vec<StageRow> {
    Stage::ALL
        .into_iter()
        .filter_map(|stage| {
            let of: Vec<&ChainRow> = chain.iter().filter(|c| c.stage == stage).collect();
            let main = of
                .iter()
                .max_by_key(|c| (c.critical_ps, std::cmp::Reverse(c.start_ps)))?;
            Some(StageRow {
                stage,
                component: main.component.clone(),
                start_ps: of.iter().map(|c| c.start_ps).min().unwrap_or(0),
                end_ps: of.iter().map(|c| c.end_ps).max().unwrap_or(0),
                critical_ps: of.iter().map(|c| c.critical_ps).sum(),
            })
        })
        .collect()
}

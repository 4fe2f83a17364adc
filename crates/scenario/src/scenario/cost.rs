//! A point's cost before it is simulated, in estimated events: what balances shards (a 16 GiB
//! point costs far more than an 8 B one) and what `check` reports. The estimate follows the
//! simulation's shape: every iteration and every streamed message of every flow moves its
//! message TLP by TLP up to `coalesce_above_bytes` (or always, with `granularity = "tlp"`) and
//! as a few bulk segments above it; `staged_pipelined` moves one chunk at a time.

use super::Point;
use super::build::chunking;
use super::simulate::{iterations, stream_shape};
use crate::config::Config;
use crate::config::collective::Protocol;
use crate::effective::SideMode;
use crate::topology::Topology;

/// Events a message costs besides its data: post, completion, polls (and a WQE fetch where the
/// post rings a doorbell; libmlx5 writes a single WQE by BlueFlame, so most have none).
const PER_MESSAGE: u64 = 32;
/// Events of one bulk transfer (its segments and the rate re-solves around it).
const PER_BULK: u64 = 20;
/// The payload of one TLP of a TLP-granular message (an MPS-sized write or read).
const BYTES_PER_TLP: u64 = 256;
/// Events one TLP costs: a hop and a server's release on each of the few links it crosses, a
/// read's request and its completion (measured: a 4 KiB GPUDirect message of one flow costs
/// about 210 events, 16 TLPs besides its 40 fixed ones; with 64 flows contending, about 400).
const EVENTS_PER_TLP: u64 = 12;

/// Estimated events of one point (at least 1), from what each of its flows runs: the side
/// modes its path resolves to on `topo` (`auto` may stage, relay or go direct), a chunked side
/// chunk by chunk (at most [`super::build::MAX_CHUNKS`] chunks).
pub fn estimate(cfg: &Config, topo: &Topology, p: &Point) -> u64 {
    let sc = &cfg.scenarios[p.scenario];
    // A workload's messages are the size (a collective's: its slices).
    let size = match &sc.workload {
        Some(w) => super::workload::message_bytes(cfg, w, (p.size, p.path)),
        None => p.size,
    }
    .max(1);
    let units = |bytes: u64| data_events(cfg, bytes);
    let (_, streamed) = stream_shape(cfg, size);
    // Independent flows: the iterations and the streamed messages. A workload: each flow's
    // messages, in the noise-free run and in each jittered repeat of the whole workload.
    let messages = |i: usize| -> u64 {
        let Some(w) = &sc.workload else {
            return u64::from(iterations(cfg, size)) + u64::from(streamed);
        };
        let at = (p.size, p.path);
        let repeats = u64::from(super::workload::repeats(cfg, w, at));
        u64::from(super::workload::messages(cfg, w, i, at)).saturating_mul(1 + repeats)
    };
    let per_flow = sc.flows.iter().enumerate().map(|(i, _)| {
        // The modes do not depend on the size: a small plan tells them.
        let Ok(built) =
            super::workload::plan(cfg, topo, sc, i, (p.path, p.op), (8, Protocol::Simple))
        else {
            return 0;
        };
        let moves = |m: SideMode| u64::from(m != SideMode::Direct && m != SideMode::Host);
        let per_message = match built.sender {
            SideMode::Pipelined | SideMode::Relay => {
                let (chunk, n) = chunking(size, cfg.sim.chunk_bytes);
                // Each chunk: its copy in (or relay and flag), the RDMA, any copy out.
                let copies = 1 + moves(built.receiver);
                n.saturating_mul((1 + copies) * units(chunk) + PER_MESSAGE)
            }
            s => (1 + moves(s) + moves(built.receiver)) * units(size) + PER_MESSAGE,
        };
        messages(i).saturating_mul(per_message)
    });
    let events = per_flow.fold(0u64, u64::saturating_add);
    events
        .saturating_add(sharing_events(cfg, sc, p, size))
        .max(1)
}

/// CPU of the batched re-solves of a workload whose flows run at once as bulk transfers, in
/// events' worth, per run, per flow to the power [`SHARING_POWER`]: the flows of an NCCL
/// all-to-all share one group, and each solve costs the group (see [`SHARING_EVENTS`]). Zero
/// below `exact_sharing_below` flows, where the events already tell the cost.
fn sharing_events(cfg: &Config, sc: &crate::config::ScenarioSpec, p: &Point, size: u64) -> u64 {
    let flows = sc.flows.len();
    let Some(w) = &sc.workload else { return 0 };
    let bulk = !cfg.sim.granularity.tlp() && size > cfg.sim.coalesce_above;
    if flows < cfg.sim.exact_sharing_below as usize || !bulk {
        return 0;
    }
    let runs = 1 + u64::from(super::workload::repeats(cfg, w, (p.size, p.path)));
    let per_run = SHARING_EVENTS * (flows as f64).powf(SHARING_POWER);
    (per_run.min(u64::MAX as f64) as u64).saturating_mul(runs)
}

/// Events' worth of CPU one run's re-solves of a sharing group of F flows cost, per
/// F^[`SHARING_POWER`]. Measured on NCCL all-to-alls of 4, 8 and 16 DGX H100 nodes on the
/// rail-optimized fabric (992, 4,032 and 16,256 flows of 8 x 128 KiB; 9d32653): CPU beyond
/// their estimated events 1.3, 8.7 and 60-80 s for two runs, about 9e-5 s x F^1.4 a pair of
/// runs, 67 events at 1.5e6 events a second per run.
const SHARING_EVENTS: f64 = 67.0;
/// How the re-solves' cost grows with the flows of the group: each solve costs the group, and
/// a larger group ends more transfers apart, so it solves more often.
const SHARING_POWER: f64 = 1.4;

/// Events of one movement of `bytes` of data: TLP by TLP up to `coalesce_above_bytes` (or
/// always, with `granularity = "tlp"`), one bulk transfer above.
fn data_events(cfg: &Config, bytes: u64) -> u64 {
    if cfg.sim.granularity.tlp() || bytes <= cfg.sim.coalesce_above {
        bytes.div_ceil(BYTES_PER_TLP) * EVENTS_PER_TLP
    } else {
        PER_BULK
    }
}

/// Estimated events of one message of `plan`, whichever builder made it (a tool's copy, a
/// perftest message): its fixed events, and its data once per chain of streaming payload steps
/// (a staged message moves it three times, a chunked one three times per chunk). For a path's
/// plan this is what [`estimate`] counts per message, less a chunked message's fixed events
/// per chunk.
pub fn message_events(cfg: &Config, plan: &crate::plan::Plan) -> u64 {
    let data = plan.steps.iter().filter(|s| s.payload && s.input.is_none());
    data.fold(PER_MESSAGE, |a, s| {
        a.saturating_add(data_events(cfg, s.bytes))
    })
}

/// Estimated events and memory of one fabric run a tool makes: each flow's plan with the
/// messages it carries, at most `window` of a flow's in flight.
pub fn fabric_run(cfg: &Config, flows: &[(&crate::plan::Plan, u64)], window: u64) -> (u64, u64) {
    let events = flows.iter().fold(0u64, |e, (p, n)| {
        e.saturating_add(n.saturating_mul(message_events(cfg, p)))
    });
    (events, super::memory::run(cfg, flows, window))
}

/// Estimated events one core works through per second (measured on the project's 2-core
/// machine: the default study's 2.6e6 in about 1.3 s of CPU, 120 scenarios of it, 1.1e8, in
/// about 75 s).
pub const EVENTS_PER_CORE_SECOND: u64 = 1_500_000;
/// What every run holds whatever its size: the binary, the config and topology, the chart
/// being drawn (measured: 16 to 20 MiB for the shipped configs' smallest studies).
pub const BASE_BYTES: u64 = 16 << 20;

/// A study's estimated cost.
#[derive(Clone, Debug, PartialEq)]
pub struct StudyCost {
    /// Points in the study.
    pub points: usize,
    /// Simulation events over every point, estimated.
    pub events: u64,
    /// Peak memory of a run, bytes: [`BASE_BYTES`], every point's result row, and the points
    /// that run at once at their largest (see [`super::memory`]).
    pub memory: u64,
    /// The costliest points: (index in the plan, events), most expensive first.
    pub top: Vec<(usize, u64)>,
    /// The points that hold the most memory while they run: (index in the plan, bytes), the
    /// largest first.
    pub largest: Vec<(usize, u64)>,
}

impl StudyCost {
    /// Wall-clock seconds on `cores` cores.
    pub fn seconds(&self, cores: usize) -> f64 {
        self.events as f64 / (EVENTS_PER_CORE_SECOND as f64 * cores.max(1) as f64)
    }
}

/// The cost of every point of `cfg` together, run on `threads` worker threads.
pub fn study(cfg: &Config, threads: usize) -> StudyCost {
    let n = super::plan(cfg).len();
    study_of(cfg, &(0..n).collect::<Vec<_>>(), threads)
}

/// The cost of the points `ids` (indices into the plan) of `cfg`, run on `threads` worker
/// threads (at most that many points are in flight at once).
pub fn study_of(cfg: &Config, ids: &[usize], threads: usize) -> StudyCost {
    let plan = super::plan(cfg);
    let topos = super::topologies(cfg);
    let points: Vec<&Point> = ids.iter().map(|&i| &plan[i]).collect();
    let costs: Vec<u64> = points
        .iter()
        .map(|p| estimate(cfg.variant(p.variant), &topos[p.variant], p))
        .collect();
    let memory: Vec<super::memory::PointMemory> = points
        .iter()
        .map(|p| super::memory::point(cfg.variant(p.variant), &topos[p.variant], p, threads))
        .collect();
    let working: Vec<u64> = memory.iter().map(|m| m.working).collect();
    let of_plan = |v: Vec<(usize, u64)>| v.into_iter().map(|(j, c)| (ids[j], c)).collect();
    StudyCost {
        points: points.len(),
        events: costs.iter().fold(0u64, |a, &c| a.saturating_add(c)),
        memory: peak_memory(&memory, threads),
        top: of_plan(first_three(&costs)),
        largest: of_plan(first_three(&working)),
    }
}

/// The three largest of `values`: (index, value), the largest first, ties by index.
pub fn first_three(values: &[u64]) -> Vec<(usize, u64)> {
    let mut v: Vec<(usize, u64)> = values.iter().copied().enumerate().collect();
    v.sort_by_key(|&(i, c)| (std::cmp::Reverse(c), i));
    v.truncate(3);
    v
}

/// The peak of a run of points on `threads` threads: [`BASE_BYTES`], every point's kept row,
/// and the largest working sets, as many as run at once.
pub fn peak_memory(points: &[super::memory::PointMemory], threads: usize) -> u64 {
    let kept = points.iter().fold(0u64, |a, m| a.saturating_add(m.kept));
    let mut working: Vec<u64> = points.iter().map(|m| m.working).collect();
    working.sort_unstable_by(|a, b| b.cmp(a));
    let at_once = working
        .iter()
        .take(threads.max(1))
        .fold(0u64, |a, &w| a.saturating_add(w));
    BASE_BYTES.saturating_add(kept).saturating_add(at_once)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{DEFAULT_TOML, parse};

    /// Estimates grow with the size up to the bulk threshold and stay bounded past it, and
    /// are within a small factor of the events the simulation really processes.
    #[test]
    fn estimates_track_the_simulated_events() {
        let cfg = parse(DEFAULT_TOML, "default").unwrap();
        let topo = crate::scenario::topology(&cfg);
        let points = crate::scenario::plan(&cfg);
        let mut ratios = Vec::new();
        for p in points
            .iter()
            .filter(|p| p.size.is_power_of_two() && p.size % 4 == 0)
            .step_by(7)
        {
            let est = estimate(&cfg, &topo, p) as f64;
            let real = crate::scenario::simulate_point(&cfg, &topo, p)
                .events
                .max(1) as f64;
            ratios.push(est / real);
        }
        ratios.sort_by(f64::total_cmp);
        let median = ratios[ratios.len() / 2];
        assert!(
            (0.2..5.0).contains(&median),
            "median estimate / events {median}"
        );
        let (lo, hi) = (ratios[0], ratios[ratios.len() - 1]);
        eprintln!("estimate / events: median {median:.2}, from {lo:.2} to {hi:.2}");
        // Every point within a factor of 3 (what `check` promises).
        assert!(
            lo > 1.0 / 3.0 && hi < 3.0,
            "estimate / events from {lo} to {hi}"
        );
    }

    /// Chunked paths are estimated chunk by chunk, at most MAX_CHUNKS of them (a 16 GiB
    /// message has as many as a 256 MiB one), and `auto` by what it resolves to.
    #[test]
    fn chunked_paths_are_estimated_by_their_chunks() {
        let text = format!(
            "{DEFAULT_TOML}\n[[scenarios]]\nname = \"far\"\nsender = {{ host = \"node-a\", nic = \"nic0\", gpu = \"gpu3\" }}\nreceiver = {{ host = \"node-b\", nic = \"nic0\", gpu = \"gpu0\" }}\n"
        );
        let cfg = parse(&text, "t").unwrap();
        let topo = crate::scenario::topology(&cfg);
        let point = |path, size| Point {
            scenario: 0,
            path,
            op: crate::config::Op::WriteImm,
            size,
            seed: 0,
            variant: 0,
        };
        use crate::config::PathKind::{Auto, GpuDirect, StagedPipelined};
        let est = |path, size| estimate(&cfg, &topo, &point(path, size));
        let per = |path, size| {
            est(path, size) as f64 / (iterations(&cfg, size) + stream_shape(&cfg, size).1) as f64
        };
        // Past MAX_CHUNKS chunks the chunk grows: the cost per message stops growing.
        assert_eq!(
            per(StagedPipelined, 16 << 30),
            per(StagedPipelined, 256 << 20)
        );
        assert!(est(StagedPipelined, 1 << 30) > 100 * est(GpuDirect, 1 << 30));
        // auto on the default PIX placement is GPUDirect: estimated as GPUDirect.
        assert_eq!(est(Auto, 1 << 30), est(GpuDirect, 1 << 30));
    }
}

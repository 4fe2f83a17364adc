//! A point's memory before it is simulated, for `check` and the cost gate: what
//! [`super::simulate_point`] holds at its peak (its runs' fabrics, each keeping every message it
//! carried: [`crate::components::footprint`]) and the result row the study keeps until it
//! writes its outputs.

use std::collections::BTreeSet;
use std::mem::size_of;

use super::Point;
use super::simulate::{iterations, stream_shape};
use crate::components::footprint;
use crate::config::Config;
use crate::plan::Plan;
use crate::stats::{FlowRow, LinkRow, StageRow, Summary};
use crate::topology::Topology;

/// A string of a result row (a component, a channel, a flow's end): its text and the
/// allocator's header.
const NAME: u64 = 48;

/// The memory of one fabric run a tool makes (perftest, nvbandwidth, p2p-matrix, a trace):
/// its flows' plans with the messages each carries, at most `window` of a flow's in flight
/// (their step records pooled, as a run that does not record keeps them), and the plans.
pub fn run(cfg: &Config, flows: &[(&Plan, u64)], window: u64) -> u64 {
    let opts = super::sim_options(cfg, 0);
    let plans = flows.iter().map(|f| f.0);
    let fixed = plans.clone().map(footprint::plan_bytes).sum::<u64>();
    footprint::run_bytes(flows.iter().copied(), &opts, window)
        .saturating_add(footprint::in_motion_bytes(plans, &opts))
        .saturating_add(fixed)
}

/// A point's memory, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PointMemory {
    /// Held while it runs and given back when it is done.
    pub working: u64,
    /// Its result row, held until the study's outputs are written.
    pub kept: u64,
}

/// The memory of point `p` of `cfg` on `topo` run on `threads` threads (a workload's noise-free
/// run and its jittered repeats run side by side).
pub fn point(cfg: &Config, topo: &Topology, p: &Point, threads: usize) -> PointMemory {
    let sc = &cfg.scenarios[p.scenario];
    let Ok(built) = (0..sc.flows.len())
        .map(|i| {
            let msg = sc.workload.as_ref().map_or(
                (p.size, crate::config::collective::Protocol::Simple),
                |w| {
                    (
                        super::workload::message_bytes(cfg, w, (p.size, p.path)),
                        super::workload::protocol(cfg, w, (p.size, p.path)),
                    )
                },
            );
            super::workload::plan(cfg, topo, sc, i, (p.path, p.op), msg)
        })
        .collect::<Result<Vec<_>, _>>()
    else {
        return PointMemory::default();
    };
    let opts = super::sim_options(cfg, p.seed);
    // The streaming run's window bounds every run's messages in flight (the iterations go
    // one at a time).
    let window = u64::from(stream_shape(cfg, p.size).0);
    let run = |messages: &dyn Fn(usize) -> u64, record: bool| {
        let o = if record { opts.recording_spans() } else { opts };
        let flows = built
            .iter()
            .enumerate()
            .map(|(i, b)| (&b.plan, messages(i)));
        footprint::run_bytes(flows, &o, window)
    };
    let plans = built.iter().map(|b| &b.plan);
    let fixed = plans
        .clone()
        .fold(0u64, |a, p| a.saturating_add(footprint::plan_bytes(p)))
        .saturating_add(footprint::in_motion_bytes(plans, &opts));
    let working = fixed.saturating_add(match &sc.workload {
        // The noise-free message, the iterations and the streaming run, all held to the end.
        None => {
            let (_, streamed) = stream_shape(cfg, p.size);
            let n = u64::from(iterations(cfg, p.size)) + u64::from(streamed);
            run(&|_| 1, true).saturating_add(run(&|_| n, false))
        }
        // The recorded noise-free workload on one of the threads, its repeats on the others,
        // each repeat keeping its messages' latencies.
        Some(w) => {
            let at = (p.size, p.path);
            let messages = |i: usize| u64::from(super::workload::messages(cfg, w, i, at));
            let repeats = u64::from(super::workload::repeats(cfg, w, at));
            let at_once = repeats.min(threads.max(2) as u64 - 1);
            let latencies = repeats
                .saturating_mul(super::workload::run_messages(cfg, w, at))
                .saturating_mul(8);
            run(&messages, true)
                .saturating_add(at_once.saturating_mul(run(&messages, false)))
                .saturating_add(latencies)
        }
    });
    // The row: its stages (flow 0's reported steps), a row per flow and per channel its flows
    // cross.
    let stages = built[0].plan.steps.iter().filter(|s| s.stage.is_some());
    let channels: BTreeSet<_> = built
        .iter()
        .flat_map(|b| b.plan.routes.iter().flatten())
        .collect();
    let row = |n: usize, bytes: usize, names: u64| n as u64 * (bytes as u64 + names * NAME);
    let kept = size_of::<Summary>() as u64
        + 2 * NAME
        + row(stages.count(), size_of::<StageRow>(), 1)
        + row(built.len(), size_of::<FlowRow>(), 2)
        + row(channels.len(), size_of::<LinkRow>(), 1);
    PointMemory { working, kept }
}

//! One point end to end: the noise-free message (model latency and its stages), the jittered
//! iterations (latency statistics), and the streaming run (bandwidth, message rate).

use super::Point;
use super::paths::{self, effective_name};
use crate::components::{Fabric, SimOptions};
use crate::config::Config;
use crate::record::Recorder;
use crate::stats::{self, Summary};
use crate::topology::Topology;
use crate::units::{PS_PER_S, Ps};

/// A point's result row and what the noise-free run recorded.
pub struct PointResult {
    pub summary: Summary,
    pub recorder: Recorder,
    /// Events processed over all runs of this point.
    pub events: u64,
}

/// Iterations for a point: as many as configured, but at most `budget / size`, at least the
/// configured minimum. Large messages thus get fewer (still reported in `iterations`).
pub fn iterations(cfg: &Config, size: u64) -> u32 {
    let by_budget = (cfg.sim.iteration_budget_bytes / size.max(1)).min(u32::MAX as u64) as u32;
    by_budget.clamp(
        cfg.sim.min_iterations.min(cfg.sim.iterations),
        cfg.sim.iterations,
    )
}

/// Messages and window of the streaming run.
pub fn stream_shape(cfg: &Config, size: u64) -> (u32, u32) {
    let by_budget = (cfg.sim.stream_budget_bytes / size.max(1)).min(u32::MAX as u64) as u32;
    let messages = by_budget.clamp(3, cfg.sim.stream_messages.max(3));
    (cfg.sim.stream_window.min(messages), messages)
}

/// Bandwidth of a streaming run as perftest's `BW average` defines it: all bytes over the time
/// from the first post to the last completion (here: the last delivery to the consumer), so the
/// pipeline fill is included and the figure can never exceed the bottleneck.
/// Returns (GB/s, million messages/s).
pub fn perftest_bw_average(messages: &[(Ps, Ps)], size: u64) -> (f64, f64) {
    let first = messages.iter().map(|m| m.0).min().unwrap_or(0);
    let last = messages.iter().map(|m| m.1).max().unwrap_or(0);
    let n = messages.len() as f64;
    let span_s = (last - first) as f64 / PS_PER_S as f64;
    if span_s > 0.0 {
        (n * size as f64 / span_s / 1e9, n / span_s / 1e6)
    } else {
        (0.0, 0.0)
    }
}

pub fn simulate_point(cfg: &Config, topo: &Topology, p: &Point) -> PointResult {
    let sc = &cfg.scenarios[p.scenario];
    let built = paths::plan(cfg, sc, topo, p.path, p.size).expect("plan routes were checked");
    let plan = &built.plan;
    let opts = |jitter: bool, record: bool, seed: u64| SimOptions {
        tlp_granularity: cfg.sim.tlp_granularity,
        coalesce_above: cfg.sim.coalesce_above,
        jitter: jitter && cfg.sim.jitter,
        seed,
        record,
    };
    let mut events = 0;

    // The noise-free message: model latency, stages, CPU time, host-memory bytes.
    let mut f = Fabric::new(topo, &[plan], opts(false, true, p.seed));
    let model = f.run(1, 1);
    events += model.stats.events;
    let (start, end) = model.messages[0];
    let lat_model_ps = end - start;
    let recorder = std::mem::take(&mut f.recorder);
    let spans: Vec<_> = recorder.spans.iter().filter(|s| s.msg == 0).collect();
    let stages = stats::critical_path(plan, &spans, lat_model_ps, |c| {
        recorder.component_name(c).to_string()
    });

    // Jittered iterations, one message at a time.
    let n = iterations(cfg, p.size);
    let mut f = Fabric::new(topo, &[plan], opts(true, false, super::mix(p.seed, &[1])));
    let it = f.run(1, n);
    events += it.stats.events;
    let samples: Vec<Ps> = it.messages.iter().map(|(s, e)| e - s).collect();
    let lat = stats::latency_stats(&samples);

    // Streaming: a window of messages in flight.
    let (window, messages) = stream_shape(cfg, p.size);
    let mut f = Fabric::new(topo, &[plan], opts(true, false, super::mix(p.seed, &[2])));
    let st = f.run(window, messages);
    events += st.stats.events;
    let (bw_gbps, msg_rate_mps) = perftest_bw_average(&st.messages, p.size);

    let class = paths::sender_class(topo, sc, p.path);
    let summary = Summary {
        scenario: sc.name.clone(),
        class: class.to_string(),
        path: p.path.name().to_string(),
        effective_path: effective_name(built.sender, built.receiver).to_string(),
        op: p.op.clone(),
        size_bytes: p.size,
        iterations: n,
        lat_model_ps,
        lat,
        bw_gbps,
        msg_rate_mps,
        cpu_busy_ps: model.cpu_busy,
        host_mem_bytes: model.host_mem_bytes,
        setup_ps: built.setup,
        stages,
    };
    PointResult {
        summary,
        recorder,
        events,
    }
}

//! One point end to end: the noise-free message (model latency and its stages), the jittered
//! iterations (latency statistics), and the streaming run (bandwidth, message rate).

use super::Point;
use super::paths;
use crate::bottleneck::Bottleneck;
use crate::components::{Fabric, Limit};
use crate::config::{Config, Op};
use crate::plan::Plan;
use crate::record::Recorder;
use crate::stats::{self, FlowRow, LinkRow, Summary};
use crate::topology::Topology;
use crate::units::{PS_PER_S, Ps};

/// A point's result row and what the noise-free run recorded.
pub struct PointResult {
    /// The point's results.csv row, with its stage, flow and link rows.
    pub summary: Summary,
    /// What the noise-free message recorded: its spans (no hops or descriptors: a walk or a
    /// trace records those, `inspect::rerun`).
    pub recorder: Recorder,
    /// An event of one of its runs fell beyond the engine's horizon: its figures are invalid.
    pub past_horizon: bool,
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

/// How far below the delivery rate of its middle half a stream's average bandwidth may be and
/// still count as steady: the bandwidth margin the report calls a tie
/// (`report::decision::BW_NOISE`). Setting.
pub const STEADY_TOLERANCE: f64 = 0.05;

/// The delivery rate of the middle half of a stream, GB/s: the messages delivered after its
/// first quarter's last delivery up to its third quarter's last, over that time. The middle
/// keeps out both the pipeline fill (the first messages pass every stage alone) and the drain
/// (the last ones no longer queue behind new posts). None where it cannot tell (fewer than 3
/// messages, or the middle delivered at one instant).
pub fn middle_bw(messages: &[(Ps, Ps)], size: u64) -> Option<f64> {
    let mut ends: Vec<Ps> = messages.iter().map(|m| m.1).collect();
    ends.sort_unstable();
    let n = ends.len();
    if n < 3 {
        return None;
    }
    let (a, b) = (n / 4, n - n / 4);
    let (from, to) = (ends[a.max(1) - 1], ends[b - 1]);
    let span = to - from;
    let count = b - a.max(1);
    (span > 0).then(|| count as f64 * size as f64 / (span as f64 / PS_PER_S as f64) / 1e9)
}

/// Whether a stream's perftest average ([`perftest_bw_average`]) is at steady state: within
/// [`STEADY_TOLERANCE`] of the delivery rate of its middle half ([`middle_bw`]), so that the
/// pipeline fill (every stage of the first message, which later ones overlap) no longer weighs
/// on it. A stream too short for that (a few messages of a deep pipeline, or a window of
/// messages in flight that takes a large share of the stream to fill) reports a bandwidth that
/// more messages would raise.
pub fn is_steady(messages: &[(Ps, Ps)], size: u64) -> bool {
    let avg = perftest_bw_average(messages, size).0;
    match middle_bw(messages, size) {
        Some(middle) => avg >= middle * (1.0 - STEADY_TOLERANCE),
        None => true,
    }
}

/// Simulates point `p` of `cfg` on `topo`: the noise-free message (its latency and stages),
/// the jittered iterations (latency statistics) and the streaming run (bandwidth, message rate,
/// bottleneck).
pub fn simulate_point(cfg: &Config, topo: &Topology, p: &Point) -> PointResult {
    let sc = &cfg.scenarios[p.scenario];
    if let Some(w) = &sc.workload {
        return super::workload::simulate(cfg, topo, p, w);
    }
    let built: Vec<paths::Built> = sc
        .flows
        .iter()
        .map(|f| paths::plan(cfg, f, topo, p.path, p.op, p.size).expect("plans were checked"))
        .collect();
    let plans: Vec<&Plan> = built.iter().map(|b| &b.plan).collect();
    let opts = |jitter: bool, record: bool, seed: u64| {
        let o = super::sim_options(cfg, seed);
        let o = if jitter { o } else { o.noise_free() };
        if record { o.recording_spans() } else { o }
    };
    let mut events = 0;

    // The noise-free message of every flow at once: model latency (flow 0's), its stages,
    // CPU time and host-memory bytes per message.
    let mut f = Fabric::new(topo, &plans, opts(false, true, p.seed));
    let model = f.run(1, 1);
    events += model.stats.events;
    let (start, end) = model.messages[0];
    let lat_model_ps = end - start;
    let recorder = std::mem::take(&mut f.recorder);
    let spans: Vec<_> = recorder
        .spans
        .iter()
        .filter(|s| s.flow == 0 && s.msg == 0)
        .collect();
    let stages = stats::critical_path(plans[0], &spans, lat_model_ps, |c| {
        recorder.component_name(c).to_string()
    });
    let flows = sc.flows.len() as u64;
    let cpu_busy_ps = model.flows.iter().map(|f| f.cpu_busy).sum::<Ps>() / flows;

    // Jittered iterations, one message at a time per flow.
    let n = iterations(cfg, p.size);
    let mut f = Fabric::new(topo, &plans, opts(true, false, super::mix(p.seed, &[1])));
    let it = f.run(1, n);
    events += it.stats.events;
    let samples: Vec<Ps> = it
        .flows
        .iter()
        .flat_map(|f| f.messages.iter().map(|(s, e)| e - s))
        .collect();
    let lat = stats::latency_stats(&samples);

    // Streaming: a window of messages in flight per flow.
    let (mut window, messages) = stream_shape(cfg, p.size);
    if p.op == Op::Read {
        // A requester has at most `max_rd_atomic` RDMA Reads outstanding per queue pair.
        let limit = sc
            .flows
            .iter()
            .map(|f| cfg.hosts[f.receiver.host].machine.nics[f.receiver.nic].max_rd_atomic);
        window = limit.fold(window, u32::min);
    }
    let mut f = Fabric::new(topo, &plans, opts(true, false, super::mix(p.seed, &[2])));
    let st = f.run(window, messages);
    events += st.stats.events;
    let all: Vec<(Ps, Ps)> = st
        .flows
        .iter()
        .flat_map(|f| f.messages.iter().copied())
        .collect();
    let (bw_gbps, msg_rate_mps) = perftest_bw_average(&all, p.size);
    let steady = is_steady(&all, p.size);
    let span = stream_span(&all);
    let links = link_rows(topo, &st, span);
    let bottleneck = bottleneck(topo, &st, span, window);

    let flow_rows = sc
        .flows
        .iter()
        .zip(&built)
        .enumerate()
        .map(|(i, (flow, b))| {
            let (s, e) = model.flows[i].messages[0];
            let mine: Vec<Ps> = it.flows[i].messages.iter().map(|(s, e)| e - s).collect();
            let figures = (e - s, &mine[..], &st.flows[i].messages[..]);
            flow_row(cfg, topo, p, (i, flow, b), figures)
        })
        .collect::<Vec<_>>();
    let (flow_rows, fabric) = with_fabric(topo, &plans, flow_rows);
    let summary = Summary {
        variant: String::new(),
        scenario: sc.name.clone(),
        class: flow_rows[0].class,
        path: p.path,
        effective_path: flow_rows[0].effective_path,
        op: p.op,
        size_bytes: p.size,
        iterations: n,
        lat_model_ps,
        lat,
        bw_gbps,
        msg_rate_mps,
        cpu_busy_ps,
        host_mem_bytes: model.host_mem_bytes / flows,
        setup_ps: built.iter().map(|b| b.setup).max().unwrap_or(0),
        stages,
        flows: flows as u32,
        bottleneck,
        reason: built[0].reason.clone(),
        rnr_naks: st.rnr_naks,
        steady,
        flow_rows,
        links,
        workload_ps: None,
        busbw_gbps: None,
        chain: Vec::new(),
        fabric,
    };
    PointResult {
        summary,
        recorder,
        events,
        past_horizon: model.stats.past_horizon || it.stats.past_horizon || st.stats.past_horizon,
    }
}

/// Flow `i`'s flows.csv row at point `p`: its ends, class and path, and its figures: the
/// noise-free latency, its jittered latencies (their mean) and the (start, delivery) times its
/// bandwidth is taken over.
pub(super) fn flow_row(
    cfg: &Config,
    topo: &Topology,
    p: &Point,
    (i, flow, b): (usize, &crate::config::FlowSpec, &paths::Built),
    (lat_model_ps, jittered, messages): (Ps, &[Ps], &[(Ps, Ps)]),
) -> FlowRow {
    FlowRow {
        flow: i as u32,
        sender: endpoint_name(cfg, &flow.sender, flow.is_intra()),
        receiver: endpoint_name(cfg, &flow.receiver, flow.is_intra()),
        class: paths::sender_class(topo, flow, p.path),
        effective_path: b.effective(),
        lat_model_ps,
        lat_mean_us: stats::latency_stats(jittered).mean_us,
        bw_gbps: perftest_bw_average(messages, p.size).0,
        bottleneck: None,
        switch_path: String::new(),
    }
}

/// `rows` with each flow's switch path, and the cables the flows' routes (`plans`, in flow
/// order) loaded, where `topo`'s network is a switch fabric; `rows` as they are elsewhere.
pub(super) fn with_fabric(
    topo: &Topology,
    plans: &[&Plan],
    mut rows: Vec<FlowRow>,
) -> (Vec<FlowRow>, Option<crate::fabric_load::FabricLoad>) {
    let Some((load, paths)) = crate::fabric_load::fabric_load(topo, plans) else {
        return (rows, None);
    };
    for (row, path) in rows.iter_mut().zip(paths) {
        row.switch_path = path;
    }
    (rows, Some(load))
}

/// From the first message's start to the last one's delivery.
pub(super) fn stream_span(messages: &[(Ps, Ps)]) -> Ps {
    let first = messages.iter().map(|m| m.0).min().unwrap_or(0);
    let last = messages.iter().map(|m| m.1).max().unwrap_or(0);
    last.saturating_sub(first)
}

/// "node-a/gpu0 via nic0", or "node-a/cpu0 memory via nic0" for a host-memory end; "node-a/gpu0"
/// for an end of a copy inside one host (`intra`: no NIC takes part).
fn endpoint_name(cfg: &Config, e: &crate::config::Endpoint, intra: bool) -> String {
    let h = &cfg.hosts[e.host];
    let nic = &h.machine.nics[e.nic].name;
    match e.gpu {
        Some(g) if intra => format!("{}/{}", h.name, h.machine.gpus[g].name),
        Some(g) => format!("{}/{} via {nic}", h.name, h.machine.gpus[g].name),
        None => format!(
            "{}/{} memory via {nic}",
            h.name, h.machine.sockets[e.memory_socket].name
        ),
    }
}

/// Every channel direction the streaming run crossed: its bytes, how busy it was, its rate.
pub(super) fn link_rows(
    topo: &Topology,
    st: &crate::components::Outcome,
    span: Ps,
) -> Vec<LinkRow> {
    let secs = span as f64 / PS_PER_S as f64;
    st.links
        .iter()
        .map(|&(c, bytes, _)| {
            let spec = &topo.channels[c.index()];
            let capacity = spec.rate.gbytes_per_s();
            let rate = if secs > 0.0 {
                bytes as f64 / secs / 1e9
            } else {
                0.0
            };
            LinkRow {
                channel: spec.name.clone(),
                bytes: bytes.min(u64::MAX as u128) as u64,
                busy: if capacity > 0.0 { rate / capacity } else { 0.0 },
                rate_gbps: rate,
                capacity_gbps: capacity,
            }
        })
        .collect()
}

/// The name of the limit that bound bulk transfers the longest among `limits` (time each
/// bound them), if any did.
pub(super) fn longest_limit(topo: &Topology, limits: &[(Limit, u128)]) -> Option<Bottleneck> {
    let (limit, _) = limits.iter().max_by_key(|l| l.1)?;
    Some(Bottleneck::of_limit(topo, *limit))
}

/// What bound the streaming run: the limit (a link, a memory, a read window) that held the bulk
/// transfers for the most bytes; for small messages, the busiest channel or thread when one was
/// busy at least half the run, else the latency of a window of messages in flight.
pub(super) fn bottleneck(
    topo: &Topology,
    st: &crate::components::Outcome,
    span: Ps,
    window: u32,
) -> Bottleneck {
    if let Some(limit) = longest_limit(topo, &st.limits) {
        return limit;
    }
    let span = span.max(1) as f64;
    let channels = st.links.iter().map(|&(c, bytes, _)| {
        let spec = &topo.channels[c.index()];
        let busy = spec.rate.tx_time(bytes.min(u64::MAX as u128) as u64) as f64 / span;
        (busy, Bottleneck::Channel(spec.name.clone()))
    });
    let threads = st
        .cpu_time
        .iter()
        .map(|(name, t)| (*t as f64 / span, Bottleneck::Thread(name.clone())));
    match (channels.chain(threads)).max_by(|a, b| {
        a.0.total_cmp(&b.0)
            .then_with(|| b.1.name().cmp(&a.1.name()))
    }) {
        Some((busy, limit)) if busy >= 0.5 => limit,
        _ => Bottleneck::Latency { window },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` messages of one stage after a fill: each posted at 0, the first delivered at
    /// `fill`, the next each `period` later.
    fn stream(n: u64, fill: Ps, period: Ps) -> Vec<(Ps, Ps)> {
        (0..n).map(|i| (0, fill + i * period)).collect()
    }

    /// A pipeline of three equal stages (copy out, wire, copy in) that streams 8 messages:
    /// the perftest average is 8 / 10 of the wire's rate (the fill of two stages), not steady;
    /// with 64 messages it is 64 / 66, steady.
    #[test]
    fn a_short_stream_of_a_deep_pipeline_is_not_steady() {
        let t = 20_000_000_000; // 20 ms per stage
        let short = stream(8, 3 * t, t);
        let (avg, _) = perftest_bw_average(&short, 1 << 30);
        let mid = middle_bw(&short, 1 << 30).unwrap();
        assert!((avg / mid - 0.8).abs() < 1e-9, "{avg} {mid}");
        assert!(!is_steady(&short, 1 << 30));
        assert!(is_steady(&stream(64, 3 * t, t), 1 << 30));
    }

    /// A latency-bound stream delivers in bursts of its window: the middle half counts whole
    /// bursts (from the last delivery before it), so a burst does not read as a rate.
    #[test]
    fn bursts_of_a_window_read_as_their_average_rate() {
        let (w, l) = (16u64, 2_000_000); // 16 in flight, 2 µs round trip
        let bursts: Vec<(Ps, Ps)> = (0..64).map(|i| (0, (i / w + 1) * l)).collect();
        let mid = middle_bw(&bursts, 8).unwrap();
        let rate = w as f64 * 8.0 / (l as f64 / PS_PER_S as f64) / 1e9;
        assert!((mid - rate).abs() < 1e-9 * rate, "{mid} {rate}");
        assert!(is_steady(&bursts, 8));
        // Too few messages to tell, or all at one instant: steady (nothing says otherwise).
        assert!(is_steady(&stream(2, 10, 1), 8));
        assert!(is_steady(&stream(5, 10, 0), 8));
    }
}

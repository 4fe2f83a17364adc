//! Pure folds from simulation records to the numbers users read: latency statistics over the
//! jittered iterations, and the critical-path breakdown of the noise-free message.

use statrs::distribution::{ContinuousCDF, StudentsT};
use statrs::statistics::{Data, Distribution, Max, Min, OrderStatistics};

use crate::bottleneck::Bottleneck;
use crate::config::{Op, PathKind};
use crate::effective::EffectivePath;
use crate::plan::{Dep, Milestone, Plan, StepId};
use crate::record::{Span, Stage};
use crate::topology::Affinity;
use crate::units::{Ps, ps_to_us};

/// A class as a shard file writes it, NV# included (a config's class keys take PCIe classes
/// only, so the config's own reader refuses NV#).
/// Serde's default of [`Summary::steady`] for rows that predate it.
fn yes() -> bool {
    true
}

fn class_of<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Affinity, D::Error> {
    use serde::Deserialize;
    let name = String::deserialize(d)?;
    Affinity::from_name(&name)
        .ok_or_else(|| serde::de::Error::custom(format!("{name:?} is not a topology class")))
}

/// One row of results.csv, with its stage breakdown (stages.csv).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    /// The scenario's name (the config's `[[scenario]]` name).
    pub scenario: String,
    /// GPU-NIC (or source-NIC) affinity: PIX, PXB, PHB, NODE, SYS; NV# between two GPUs of
    /// one host.
    #[serde(deserialize_with = "class_of")]
    pub class: Affinity,
    /// The path the sweep asked for.
    pub path: PathKind,
    /// The path that ran (auto's choice, or GPUDirect's fallback).
    pub effective_path: EffectivePath,
    /// The RDMA operation.
    pub op: Op,
    /// Message size, bytes.
    pub size_bytes: u64,
    /// Jittered iterations the latency statistics are over (fewer than configured for large
    /// messages).
    pub iterations: u32,
    /// Noise-free one-way latency, exact picoseconds.
    pub lat_model_ps: Ps,
    /// Statistics of the jittered iterations' one-way latencies.
    pub lat: LatencyStats,
    /// Streaming bandwidth, GB/s (1e9 B/s).
    pub bw_gbps: f64,
    /// Messages per second in the streaming run, millions.
    pub msg_rate_mps: f64,
    /// CPU time of the noise-free message on both hosts, picoseconds (mean over the flows).
    pub cpu_busy_ps: Ps,
    /// Payload bytes the noise-free message moved through host DRAM (per flow).
    pub host_mem_bytes: u64,
    /// One-time costs kept out of the latency (memory registration, bounce buffers),
    /// picoseconds: the largest over the flows.
    pub setup_ps: Ps,
    /// The noise-free message's stages with their shares of the critical path (stages.csv).
    pub stages: Vec<StageRow>,
    /// Flows run together; what bound the streaming run.
    pub flows: u32,
    /// What bound the streaming run: a channel, a read window, a busy thread, nothing, or the
    /// latency of the messages in flight.
    pub bottleneck: Bottleneck,
    /// Why the path runs as `effective_path` where it chose or fell back (empty otherwise).
    pub reason: String,
    /// RNR NAKs in the streaming run: Sends that found no receive WQE posted.
    pub rnr_naks: u64,
    /// Whether the streaming run reached steady state: its bandwidth is within
    /// `scenario::simulate::STEADY_TOLERANCE` of the delivery rate of its second half (a
    /// stream of too few messages for its pipeline fill reports a bandwidth more messages
    /// would raise). True for rows that predate the column.
    #[serde(default = "yes")]
    pub steady: bool,
    /// One row per flow (flows.csv), one per channel direction the streaming run crossed
    /// (links.csv).
    pub flow_rows: Vec<FlowRow>,
    /// See `flow_rows`: the channel directions that carried bytes, in the topology's channel
    /// order.
    pub links: Vec<LinkRow>,
    /// A workload with dependencies: its noise-free completion time (first start to the last
    /// delivery of every flow), picoseconds, equal to `lat_model_ps`; None for independent flows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload_ps: Option<Ps>,
    /// A collective: nccl-tests' bus bandwidth, GB/s (its algbw, `bw_gbps`, times the
    /// collective's factor: all-reduce 2(n-1)/n, all-gather and reduce-scatter (n-1)/n); None
    /// for any other scenario.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busbw_gbps: Option<f64>,
    /// A workload's critical chain: the messages, reductions and waits, flow by flow, that set
    /// its completion time, in time order (chain.csv); their shares sum to `workload_ps`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chain: Vec<ChainRow>,
    /// In a switch fabric (`fabric = "leaf-spine"`, `"rail-optimized"`): the cables the
    /// flows' routes loaded, with the flows on each (report.md names a binding one and why);
    /// None elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fabric: Option<crate::fabric_load::FabricLoad>,
    /// The sweep variant the row ran on (`[sweep] vary`, as its label: results.csv's
    /// `variant` column); empty without a sweep.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub variant: String,
}

/// One link of a workload's critical chain: one stage of one message of one flow (or the
/// reduction or wait before a message) with its exclusive share of the completion time.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ChainRow {
    /// The flow's name in the workload ("r0").
    pub flow: String,
    /// The message's index in the flow's stream.
    pub msg: u32,
    /// The kind of work.
    pub stage: Stage,
    /// The component that did it (for `reduce`, the GPU; for `window`, the flow).
    pub component: String,
    /// When it began and ended, picoseconds from the workload's start (a message's stage: its
    /// spans; a wait: the wait).
    pub start_ps: Ps,
    /// See `start_ps`.
    pub end_ps: Ps,
    /// Its exclusive share of the completion time, picoseconds.
    pub critical_ps: Ps,
}

/// One flow of a point.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FlowRow {
    /// Its index in the scenario's flows.
    pub flow: u32,
    /// Its sending end, e.g. "node-a/gpu0 via nic0" or "node-a/cpu0 memory via nic0".
    pub sender: String,
    /// Its receiving end, named as `sender`.
    pub receiver: String,
    /// Its sender's GPU-NIC (or source-NIC) affinity (NV# between two GPUs of one host).
    #[serde(deserialize_with = "class_of")]
    pub class: Affinity,
    /// The path it ran.
    pub effective_path: EffectivePath,
    /// Its noise-free message's latency (every flow's first message at once).
    pub lat_model_ps: Ps,
    /// Mean over its jittered iterations.
    pub lat_mean_us: f64,
    /// Its own streaming bandwidth (its bytes over its first post to its last delivery).
    pub bw_gbps: f64,
    /// What bound its own bulk transfers the longest, where that is its own (a workload's
    /// flow); None: flows.csv shows the point's bottleneck.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck: Option<Bottleneck>,
    /// The switches its payload crossed in a switch fabric (`leaf0>spine2>leaf1`; its QPs'
    /// paths joined by `;` where they differ), as [`crate::fabric_load`] reads them from its
    /// routes; empty outside a switch fabric (flows.csv then has no `switch_path` column).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub switch_path: String,
}

/// One channel direction in a point's streaming run.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LinkRow {
    /// The channel direction's name, e.g. "wire:node-a/nic0>switch1".
    pub channel: String,
    /// Wire bytes (headers included).
    pub bytes: u64,
    /// Fraction of its capacity over the run.
    pub busy: f64,
    /// Achieved and full rate, GB/s of wire bytes.
    pub rate_gbps: f64,
    /// See `rate_gbps`: the channel's full rate, GB/s.
    pub capacity_gbps: f64,
}

/// Latency statistics in microseconds over the jittered iterations.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LatencyStats {
    /// The smallest sample, µs.
    pub min_us: f64,
    /// The median, µs.
    pub p50_us: f64,
    /// The arithmetic mean, µs.
    pub mean_us: f64,
    /// The 99th percentile, µs.
    pub p99_us: f64,
    /// The largest sample, µs.
    pub max_us: f64,
    /// The sample standard deviation, µs (0 for fewer than two samples).
    pub stdev_us: f64,
    /// Half-width of the 95% confidence interval of the mean (Student's t).
    pub ci95_us: f64,
}

/// One stage of the noise-free message: its extent and its exclusive share of the critical path.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StageRow {
    /// The kind of work.
    pub stage: Stage,
    /// The component that did its longest span, e.g. "node-a/nic0".
    pub component: String,
    /// When its first span of the message began, picoseconds (t = 0 when the data is ready to
    /// send).
    pub start_ps: Ps,
    /// When its last span of the message ended, picoseconds (t = 0 as in `start_ps`).
    pub end_ps: Ps,
    /// Its exclusive share of the critical path, picoseconds; the shares of a message sum to
    /// its noise-free latency.
    pub critical_ps: Ps,
}

/// Statistics of a sample of latencies (picoseconds). Empty input gives zeros.
pub fn latency_stats(samples_ps: &[Ps]) -> LatencyStats {
    if samples_ps.is_empty() {
        return LatencyStats::default();
    }
    let us: Vec<f64> = samples_ps.iter().map(|&p| ps_to_us(p)).collect();
    let n = us.len();
    let mut data = Data::new(us);
    let mean = data.mean().unwrap_or(0.0);
    let stdev = if n > 1 {
        data.std_dev().unwrap_or(0.0)
    } else {
        0.0
    };
    let ci95 = if n > 1 {
        let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
            .map(|d| d.inverse_cdf(0.975))
            .unwrap_or(1.96);
        t * stdev / (n as f64).sqrt()
    } else {
        0.0
    };
    LatencyStats {
        min_us: data.min(),
        p50_us: data.median(),
        mean_us: mean,
        p99_us: data.percentile(99),
        max_us: data.max(),
        stdev_us: stdev,
        ci95_us: ci95,
    }
}

/// The steps of one message that set its latency, in the order they happen: from the plan's
/// delivery step back through, at each step, the input it streams from or else the dependency
/// that was met last (program order on a thread counts as waiting for the earlier step's end).
/// Steps without a span (not reported) are passed through.
pub fn critical_chain<'a>(plan: &Plan, spans: &[&'a Span]) -> Vec<&'a Span> {
    // The first span of each step.
    let mut first: Vec<Option<&'a Span>> = vec![None; plan.steps.len()];
    for &s in spans.iter().rev() {
        if let Some(slot) = first.get_mut(s.step.index()) {
            *slot = Some(s);
        }
    }
    let span_of = |step: StepId| first.get(step.index()).copied().flatten();
    let met = |d: &Dep| {
        span_of(d.step).map(|s| match d.on {
            Milestone::LastIn => s.last_in,
            Milestone::Queued | Milestone::Done => s.end,
        })
    };
    let mut chain = Vec::new();
    let mut cur = plan.deliver;
    for _ in 0..plan.steps.len() {
        if let Some(s) = span_of(cur) {
            chain.push(s);
        }
        let step = &plan.steps[cur.index()];
        let pred = step.input.or_else(|| {
            step.deps
                .iter()
                .filter_map(|d| met(d).map(|t| (t, d.step)))
                .max_by_key(|&(t, s)| (t, std::cmp::Reverse(s)))
                .map(|(_, s)| s)
                .or_else(|| step.deps.first().map(|d| d.step))
        });
        match pred {
            Some(p) => cur = p,
            None => break,
        }
    }
    chain.reverse();
    chain
}

/// Splits `[0, end)` among the stages of one message along its critical path (see
/// [`critical_chain`]), walking back from the end. While following the last byte, a stage owns
/// the time the last byte spent in it; a stage that held the last byte longer than the first
/// byte was busy (the bottleneck), so the path runs back through its whole busy period to the
/// first byte's arrival, and from there follows the first byte through the earlier stages. The
/// shares tile `[0, end)` and so sum exactly to `end`; time before the first stage goes to the
/// first stage.
///
/// Returns one row per stage kind with a span, in pipeline order, stages off the critical path
/// with a share of 0; `name_of` names components.
pub fn critical_path(
    plan: &Plan,
    spans: &[&Span],
    end: Ps,
    name_of: impl Fn(u32) -> String,
) -> Vec<StageRow> {
    let chain = critical_chain(plan, spans);
    let mut share = tile(&chain, end);
    if chain.is_empty() {
        return Vec::new();
    }
    let mut rows = Vec::new();
    for stage in Stage::ALL {
        let of_stage: Vec<&&Span> = spans.iter().filter(|s| s.stage == stage).collect();
        let Some(main) = of_stage
            .iter()
            .max_by_key(|s| (s.end - s.start, std::cmp::Reverse(s.start)))
        else {
            continue;
        };
        rows.push(StageRow {
            stage,
            component: name_of(main.component),
            start_ps: of_stage.iter().map(|s| s.start).min().unwrap_or(0),
            end_ps: of_stage.iter().map(|s| s.end).max().unwrap_or(0),
            critical_ps: std::mem::take(&mut share[stage as usize]),
        });
    }
    rows
}

/// The tiling of `[0, end)` over a chain of spans in time order (see [`critical_path`]): the
/// share of each stage.
fn tile(spans: &[&Span], end: Ps) -> [Ps; Stage::ALL.len()] {
    let mut share = [0 as Ps; Stage::ALL.len()];
    let mut tau = end;
    let mut following_tail = true;
    for (i, s) in spans.iter().enumerate().rev() {
        let begin = if following_tail {
            let tail_transit = s.end.saturating_sub(s.last_in);
            let head_transit = s.first_out.saturating_sub(s.start);
            // The first streaming stage gets the whole message at once: it owns its full span.
            let busy = tail_transit > head_transit + head_transit / 8 + 1_000 || i == 0;
            if busy {
                following_tail = false;
                s.start
            } else {
                s.last_in
            }
        } else {
            s.start
        };
        let begin = begin.min(tau);
        share[s.stage as usize] += tau - begin;
        tau = begin;
    }
    if let Some(first) = spans.first() {
        share[first.stage as usize] += tau;
    }
    share
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Step, StepId, StepKind};

    fn stream(step: u16, stage: Stage, start: Ps, first_out: Ps, last_in: Ps, end: Ps) -> Span {
        Span {
            flow: 0,
            msg: 0,
            step: StepId(step),
            stage,
            component: 0,
            start,
            first_out,
            last_in,
            end,
            bytes: 0,
        }
    }

    /// A plan of `deps.len()` steps (step i waits for the `Done` of each step in `deps[i]`)
    /// and a delivery step after the last.
    fn plan_of(deps: &[&[u16]]) -> Plan {
        let mut p = Plan::new(0);
        let last = [deps.len() as u16 - 1];
        for d in deps.iter().chain([&last[..]].iter()) {
            p.step(Step {
                kind: StepKind::Finish,
                stage: None,
                actor: 0,
                deps: d
                    .iter()
                    .map(|&step| Dep {
                        step: StepId(step),
                        on: Milestone::Done,
                    })
                    .collect(),
                input: None,
                bytes: 0,
                payload: false,
            });
        }
        p.deliver = StepId::from_index(deps.len());
        p.link();
        p
    }

    /// A wire-bound transfer: the read streams out by 20_000 ps, the wire holds the last byte
    /// for 1_300_000 ps more than the first, so the wire owns its whole busy period.
    #[test]
    fn the_bottleneck_stage_owns_its_busy_period() {
        let ns = 1_000;
        let spans = [
            Span::control(0, StepId(0), Stage::Post, 0, 0, 500 * ns),
            stream(
                1,
                Stage::DmaRead,
                500 * ns,
                1_300 * ns,
                500 * ns,
                20_400_000 * ns,
            ),
            stream(
                2,
                Stage::Wire,
                1_300 * ns,
                1_400 * ns,
                20_400_000 * ns,
                21_700_000 * ns,
            ),
            Span::control(
                0,
                StepId(3),
                Stage::Poll,
                0,
                21_700_500 * ns,
                21_700_600 * ns,
            ),
        ];
        let refs: Vec<&Span> = spans.iter().collect();
        let end = 21_700_600 * ns;
        let plan = plan_of(&[&[], &[0], &[1], &[2]]);
        let rows = critical_path(&plan, &refs, end, |_| "c".into());
        assert_eq!(rows.iter().map(|r| r.critical_ps).sum::<Ps>(), end);
        let get = |st| rows.iter().find(|r| r.stage == st).unwrap().critical_ps;
        assert_eq!(get(Stage::Post), 500 * ns);
        assert_eq!(get(Stage::DmaRead), 800 * ns);
        assert_eq!(get(Stage::Wire), (21_700_500 - 1_300) * ns);
        assert_eq!(get(Stage::Poll), 100 * ns);
    }

    /// A read-bound transfer: the wire passes the last byte as fast as the first, so the path
    /// follows the last byte back into the read, which owns its whole span.
    #[test]
    fn an_upstream_bottleneck_is_found_through_the_last_byte() {
        let spans = [
            stream(0, Stage::DmaRead, 0, 800, 0, 10_000),
            stream(1, Stage::Wire, 800, 900, 9_900, 10_000),
        ];
        let refs: Vec<&Span> = spans.iter().collect();
        let plan = plan_of(&[&[], &[0]]);
        let rows = critical_path(&plan, &refs, 10_000, |_| "c".into());
        assert_eq!(rows[0].critical_ps + rows[1].critical_ps, 10_000);
        assert_eq!(rows[1].critical_ps, 100);
    }

    /// Two branches join: the one whose last step ended later is the critical path; the other
    /// branch's stages keep their rows but own none of the latency.
    #[test]
    fn the_path_follows_the_dependency_met_last() {
        let spans = [
            Span::control(0, StepId(0), Stage::Register, 0, 0, 400),
            Span::control(0, StepId(1), Stage::MemcpyD2h, 0, 0, 900),
            Span::control(0, StepId(2), Stage::Post, 0, 900, 1_000),
        ];
        let refs: Vec<&Span> = spans.iter().collect();
        let plan = plan_of(&[&[], &[], &[0, 1]]);
        let chain: Vec<u16> = critical_chain(&plan, &refs)
            .iter()
            .map(|s| s.step.0)
            .collect();
        assert_eq!(chain, vec![1, 2]);
        let rows = critical_path(&plan, &refs, 1_000, |_| "c".into());
        let get = |st| rows.iter().find(|r| r.stage == st).unwrap().critical_ps;
        assert_eq!(get(Stage::Register), 0);
        assert_eq!(get(Stage::MemcpyD2h), 900);
        assert_eq!(get(Stage::Post), 100);
    }

    #[test]
    fn statistics_of_a_known_sample() {
        let s = latency_stats(&[1_000_000, 2_000_000, 3_000_000, 4_000_000]);
        assert!((s.mean_us - 2.5).abs() < 1e-12);
        assert_eq!(s.min_us, 1.0);
        assert_eq!(s.max_us, 4.0);
        assert!(s.stdev_us > 1.29 && s.stdev_us < 1.30);
        // t(0.975, 3) = 3.182: 3.182 * 1.291 / 2
        assert!((s.ci95_us - 2.054).abs() < 0.01, "{}", s.ci95_us);
    }
}

//! Pure folds from simulation records to the numbers users read: latency statistics over the
//! jittered iterations, and the critical-path breakdown of the noise-free message.

use statrs::distribution::{ContinuousCDF, StudentsT};
use statrs::statistics::{Data, Distribution, Max, Min, OrderStatistics};

use crate::record::{Span, Stage};
use crate::units::{Ps, ps_to_us};

/// One row of results.csv, with its stage breakdown (stages.csv).
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub scenario: String,
    /// GPU-NIC (or source-NIC) affinity: PIX, PXB, PHB, NODE, SYS.
    pub class: String,
    pub path: String,
    pub effective_path: String,
    pub op: String,
    pub size_bytes: u64,
    pub iterations: u32,
    /// Noise-free one-way latency, exact picoseconds.
    pub lat_model_ps: Ps,
    pub lat: LatencyStats,
    /// Streaming bandwidth, GB/s (1e9 B/s).
    pub bw_gbps: f64,
    /// Messages per second in the streaming run, millions.
    pub msg_rate_mps: f64,
    pub cpu_busy_ps: Ps,
    pub host_mem_bytes: u64,
    pub setup_ps: Ps,
    pub stages: Vec<StageRow>,
}

/// Latency statistics in microseconds over the jittered iterations.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LatencyStats {
    pub min_us: f64,
    pub p50_us: f64,
    pub mean_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    pub stdev_us: f64,
    /// Half-width of the 95% confidence interval of the mean (Student's t).
    pub ci95_us: f64,
}

/// One stage of the noise-free message: its extent and its exclusive share of the critical path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageRow {
    pub stage: Stage,
    pub component: String,
    pub start_ps: Ps,
    pub end_ps: Ps,
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
    let stdev = if n > 1 { data.std_dev().unwrap_or(0.0) } else { 0.0 };
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

/// Splits `[0, end)` among the spans of one message: at each instant the active span furthest
/// down the pipeline owns the time; an instant covered by no span belongs to the next span to
/// start (the work being waited for). The shares therefore sum exactly to `end`.
///
/// Returns one row per stage that occurs, in pipeline order; `name_of` names components.
pub fn critical_path(spans: &[&Span], end: Ps, name_of: impl Fn(u32) -> String) -> Vec<StageRow> {
    let mut cuts: Vec<Ps> = vec![0, end];
    for s in spans {
        for t in [s.start, s.end] {
            if t < end {
                cuts.push(t);
            }
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut share = [0 as Ps; Stage::ALL.len()];
    for w in cuts.windows(2) {
        let (a, b) = (w[0], w[1]);
        let owner = spans
            .iter()
            .filter(|s| s.start <= a && s.end >= b && s.end > s.start)
            .map(|s| s.stage)
            .max()
            .or_else(|| {
                spans.iter().filter(|s| s.start >= b).min_by_key(|s| (s.start, s.stage)).map(|s| s.stage)
            })
            .or_else(|| spans.iter().map(|s| s.stage).max());
        if let Some(stage) = owner {
            share[stage as usize] += b - a;
        }
    }
    let mut rows = Vec::new();
    for stage in Stage::ALL {
        let of_stage: Vec<&&Span> = spans.iter().filter(|s| s.stage == stage).collect();
        if of_stage.is_empty() {
            continue;
        }
        let start = of_stage.iter().map(|s| s.start).min().unwrap_or(0);
        let stop = of_stage.iter().map(|s| s.end).max().unwrap_or(0);
        // The component that carried the longest piece of the stage names it.
        let main = of_stage.iter().max_by_key(|s| (s.end - s.start, std::cmp::Reverse(s.start))).unwrap();
        rows.push(StageRow {
            stage,
            component: name_of(main.component),
            start_ps: start,
            end_ps: stop,
            critical_ps: share[stage as usize],
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(stage: Stage, start: Ps, end: Ps) -> Span {
        Span { msg: 0, stage, component: 0, start, end, bytes: 0 }
    }

    #[test]
    fn shares_sum_to_the_end_time_with_overlap_and_gaps() {
        let spans = [
            span(Stage::Post, 0, 100),
            span(Stage::DmaRead, 150, 1000),
            span(Stage::Wire, 400, 1200),
            span(Stage::Poll, 1300, 1400),
        ];
        let refs: Vec<&Span> = spans.iter().collect();
        let rows = critical_path(&refs, 1400, |_| "c".into());
        let total: Ps = rows.iter().map(|r| r.critical_ps).sum();
        assert_eq!(total, 1400);
        let get = |st| rows.iter().find(|r| r.stage == st).unwrap().critical_ps;
        assert_eq!(get(Stage::Post), 100);
        // gap 100..150 waits for the DMA read, which then owns until the wire starts
        assert_eq!(get(Stage::DmaRead), 300);
        assert_eq!(get(Stage::Wire), 800);
        // gap 1200..1300 waits for the poll
        assert_eq!(get(Stage::Poll), 200);
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

//! The result rows, grouped the way every chart and the Markdown report read them.
//!
//! Charts and report must agree on the order of scenarios and paths, on which colour and line
//! style a series gets, on which swept size stands in for a requested one and on where GPUDirect
//! and staged cross over. All of that is decided here, once, from the rows and the [`RunInfo`];
//! the drawing code only reads it. Everything is ordered by vectors (first appearance or a fixed
//! vocabulary), never by hash iteration, so the outputs are byte-for-byte reproducible.

use crate::config::{Op, PathKind};
use crate::report::{RunInfo, ScenarioInfo};
use crate::stats::Summary;
use crate::topology::Affinity;

/// Paths in the order a reader expects them: the CPU-only baseline, the bounce through host
/// memory, then GPUDirect. Paths outside this list follow in order of first appearance.
const KNOWN_PATHS: [PathKind; 3] = [PathKind::Host, PathKind::Staged, PathKind::GpuDirect];

/// A scenario as the charts see it: its row name, its class and (when the run described it) its
/// [`ScenarioInfo`].
#[derive(Clone, Debug)]
pub struct Scenario<'a> {
    /// Its name, as the result rows' `scenario` spells it.
    pub name: String,
    /// Its GPU-NIC affinity, from the run's description or else its rows.
    pub class: Option<Affinity>,
    /// The run's description of it (route, ceiling); None for a scenario only the rows name.
    pub info: Option<&'a ScenarioInfo>,
}

/// One line on a chart: every row of one (scenario, path, op), sorted by size.
#[derive(Clone, Debug)]
pub struct Series<'a> {
    /// Index into [`Model::scenarios`]; also the colour index.
    pub scenario: usize,
    /// Index into [`Model::paths`]; also the line-style index.
    pub path: usize,
    /// Index into [`Model::ops`].
    pub op: usize,
    /// Its rows, one per size, ascending by size.
    pub rows: Vec<&'a Summary>,
    /// What actually ran when it differs from the path asked for (e.g. "staged" for a
    /// gpudirect run without P2P), as the distinct effective paths joined by "/".
    pub fallback: Option<String>,
}

impl Series<'_> {
    /// The row at exactly `size`, if the series has one.
    pub fn at(&self, size: u64) -> Option<&Summary> {
        self.rows.iter().copied().find(|r| r.size_bytes == size)
    }
}

/// The rows of a run grouped into scenarios, paths, ops, sizes and series.
#[derive(Clone, Debug)]
pub struct Model<'a> {
    /// The scenarios that have rows: those the run described, in its order, then those only
    /// the rows name, in order of first appearance.
    pub scenarios: Vec<Scenario<'a>>,
    /// The paths that have rows: host, staged, gpudirect first, then any other in order of
    /// first appearance.
    pub paths: Vec<PathKind>,
    /// The ops that have rows, in order of first appearance.
    pub ops: Vec<Op>,
    /// Every swept size, ascending, without duplicates.
    pub sizes: Vec<u64>,
    /// In scenario, then path, then op order.
    pub series: Vec<Series<'a>>,
}

impl<'a> Model<'a> {
    /// Groups `rows`. Scenarios come in the order of `info.scenarios`, then any scenario that
    /// only the rows name; duplicate (scenario, path, op, size) rows keep the first.
    pub fn new(info: &'a RunInfo, rows: &'a [Summary]) -> Self {
        let mut scenarios: Vec<Scenario<'a>> = Vec::new();
        for s in &info.scenarios {
            if !scenarios.iter().any(|x| x.name == s.name) {
                scenarios.push(Scenario {
                    name: s.name.clone(),
                    class: s.class,
                    info: Some(s),
                });
            }
        }
        let mut paths: Vec<PathKind> = Vec::new();
        let mut ops: Vec<Op> = Vec::new();
        let mut sizes: Vec<u64> = Vec::new();
        for r in rows {
            match scenarios.iter_mut().find(|x| x.name == r.scenario) {
                Some(s) if s.class.is_none() => s.class = Some(r.class),
                Some(_) => {}
                None => scenarios.push(Scenario {
                    name: r.scenario.clone(),
                    class: Some(r.class),
                    info: None,
                }),
            }
            if !paths.contains(&r.path) {
                paths.push(r.path);
            }
            if !ops.contains(&r.op) {
                ops.push(r.op);
            }
            sizes.push(r.size_bytes);
        }
        // Scenarios the run described but that produced no rows would only add empty legend
        // entries and empty groups.
        scenarios.retain(|s| rows.iter().any(|r| r.scenario == s.name));
        paths.sort_by_key(|p| {
            KNOWN_PATHS
                .iter()
                .position(|k| k == p)
                .unwrap_or(KNOWN_PATHS.len())
        });
        sizes.sort_unstable();
        sizes.dedup();

        let mut series = Vec::new();
        for (si, s) in scenarios.iter().enumerate() {
            for (pi, p) in paths.iter().enumerate() {
                for (oi, o) in ops.iter().enumerate() {
                    let mut picked: Vec<&Summary> = Vec::new();
                    for r in rows {
                        let same = r.scenario == s.name && r.path == *p && r.op == *o;
                        if same && !picked.iter().any(|x| x.size_bytes == r.size_bytes) {
                            picked.push(r);
                        }
                    }
                    if picked.is_empty() {
                        continue;
                    }
                    picked.sort_by_key(|r| r.size_bytes);
                    let mut effective: Vec<&str> = Vec::new();
                    for r in &picked {
                        let name = r.effective_path.name();
                        if r.effective_path.as_path() != Some(r.path) && !effective.contains(&name)
                        {
                            effective.push(name);
                        }
                    }
                    let fallback = (!effective.is_empty()).then(|| effective.join("/"));
                    series.push(Series {
                        scenario: si,
                        path: pi,
                        op: oi,
                        rows: picked,
                        fallback,
                    });
                }
            }
        }
        Model {
            scenarios,
            paths,
            ops,
            sizes,
            series,
        }
    }

    /// Whether the op must be named to tell series apart.
    pub fn multi_op(&self) -> bool {
        self.ops.len() > 1
    }

    /// "SYS gpudirect" (plus the op when a run has several, plus what ran on a fallback).
    pub fn label(&self, s: &Series) -> String {
        let mut out = format!("{} {}", self.scenarios[s.scenario].name, self.paths[s.path]);
        if self.multi_op() {
            out.push_str(&format!(" {}", self.ops[s.op]));
        }
        if let Some(f) = &s.fallback {
            out.push_str(&format!(" (ran {f})"));
        }
        out
    }

    /// The swept size nearest to `want`, measured on a log scale (so 3 KiB snaps to 4 KiB rather
    /// than 2 KiB only when it is geometrically closer); ties go to the smaller size.
    pub fn nearest_size(&self, want: u64) -> Option<u64> {
        nearest_size(&self.sizes, want)
    }

    /// "SYS", plus the op when the run has several, plus "vs staged_pipelined" when the
    /// comparison is not with the classic baseline: how charts and report name a [`Speedup`].
    pub fn speedup_name(&self, s: &Speedup) -> String {
        let mut name = self.scenarios[s.scenario].name.clone();
        if self.multi_op() {
            name = format!("{name} {}", self.ops[s.op]);
        }
        if s.baseline != BASELINES[0] {
            name = format!("{name} vs {}", s.baseline);
        }
        name
    }

    /// The series of a path in a scenario and op, if any.
    pub fn find(&self, scenario: usize, path: PathKind, op: usize) -> Option<&Series<'a>> {
        self.series
            .iter()
            .find(|s| s.scenario == scenario && s.op == op && self.paths[s.path] == path)
    }

    /// The comparison of GPUDirect with each staging baseline ([`BASELINES`]) of every
    /// (scenario, op) that has both paths, in scenario, op, then baseline order. Empty when the
    /// run has no such pair.
    pub fn speedups(&self) -> Vec<Speedup> {
        let mut out = Vec::new();
        for si in 0..self.scenarios.len() {
            for oi in 0..self.ops.len() {
                for baseline in BASELINES {
                    self.speedup(si, oi, baseline, &mut out);
                }
            }
        }
        out
    }

    /// GPUDirect against `baseline` on one scenario and op, pushed to `out` when both ran.
    fn speedup(&self, si: usize, oi: usize, baseline: PathKind, out: &mut Vec<Speedup>) {
        let (Some(st), Some(gd)) = (
            self.find(si, baseline, oi),
            self.find(si, PathKind::GpuDirect, oi),
        ) else {
            return;
        };
        let mut points = Vec::new();
        for g in &gd.rows {
            let Some(s) = st.at(g.size_bytes) else {
                continue;
            };
            points.push(SpeedupPoint {
                size: g.size_bytes,
                latency: ratio(s.lat.p50_us, g.lat.p50_us),
                // A bandwidth not at steady state decides nothing (`Summary::steady`).
                bandwidth: (g.steady && s.steady)
                    .then(|| ratio(g.bw_gbps, s.bw_gbps))
                    .flatten(),
            });
        }
        if !points.is_empty() {
            out.push(Speedup {
                scenario: si,
                op: oi,
                baseline,
                points,
                gpudirect_fallback: gd.fallback.clone(),
            });
        }
    }
}

/// The host-staging paths GPUDirect is compared with: one synchronous cudaMemcpy per message
/// (the classic baseline) and the chunked pipeline real libraries run, which is the fair one
/// for large messages.
pub const BASELINES: [PathKind; 2] = [PathKind::Staged, PathKind::StagedPipelined];

/// Above this many lines, the size charts draw one panel per path (a facet) so that the lines
/// of 8 or more scenarios stay apart.
pub const FACET_ABOVE_SERIES: usize = 12;

impl Model<'_> {
    /// The panels of a chart against message size: one per path (its index) when the lines are
    /// too many for one panel and there are several paths, else one panel of all (None).
    pub fn facets(&self) -> Vec<Option<usize>> {
        if self.series.len() > FACET_ABOVE_SERIES && self.paths.len() > 1 {
            (0..self.paths.len()).map(Some).collect()
        } else {
            vec![None]
        }
    }

    /// Groups of series (same path and sizes; ops may differ) whose `value` agrees within 0.5 % at every
    /// size. Such lines are drawn exactly over each other, so the charts name them rather than
    /// let a reader hunt for a missing line. Indices into [`Model::series`], groups of two or more.
    pub fn coincident(&self, value: impl Fn(&Summary) -> f64) -> Vec<Vec<usize>> {
        let same = |a: &Series, b: &Series| {
            a.path == b.path
                && a.rows.len() == b.rows.len()
                && a.rows.iter().zip(&b.rows).all(|(x, y)| {
                    let (u, v) = (value(x), value(y));
                    x.size_bytes == y.size_bytes
                        && (u - v).abs() <= 0.005 * u.abs().max(v.abs()) + 1e-12
                })
        };
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (i, s) in self.series.iter().enumerate() {
            match groups.iter_mut().find(|g| same(&self.series[g[0]], s)) {
                Some(g) => g.push(i),
                None => groups.push(vec![i]),
            }
        }
        groups.retain(|g| g.len() > 1);
        groups
    }

    /// "Drawn over each other (...): host on PIX, PHB, SYS." for the groups of [`Model::coincident`].
    pub fn coincident_note(&self, value: impl Fn(&Summary) -> f64) -> Option<String> {
        let groups = self.coincident(value);
        if groups.is_empty() {
            return None;
        }
        let parts: Vec<String> = groups
            .iter()
            .map(|g| {
                let what = &self.paths[self.series[g[0]].path];
                let names: Vec<String> = g
                    .iter()
                    .map(|&i| {
                        let s = &self.series[i];
                        let name = &self.scenarios[s.scenario].name;
                        if self.multi_op() {
                            format!("{name} {}", self.ops[s.op])
                        } else {
                            name.clone()
                        }
                    })
                    .collect();
                format!("{what} on {}", names.join(", "))
            })
            .collect();
        Some(format!(
            "Drawn over each other (equal within 0.5 %): {}.",
            parts.join("; ")
        ))
    }
}

/// See [`Model::nearest_size`].
pub fn nearest_size(sizes: &[u64], want: u64) -> Option<u64> {
    let dist = |s: u64| ((s.max(1) as f64).ln() - (want.max(1) as f64).ln()).abs();
    sizes
        .iter()
        .copied()
        .min_by(|&a, &b| dist(a).total_cmp(&dist(b)).then(a.cmp(&b)))
}

/// `num / den` when both are positive and finite; `None` otherwise, so a zero bandwidth or a
/// missing latency never becomes an infinite ratio on a log axis.
fn ratio(num: f64, den: f64) -> Option<f64> {
    let r = num / den;
    (num > 0.0 && den > 0.0 && r.is_finite()).then_some(r)
}

/// GPUDirect over staged at one size: above 1 means GPUDirect is better.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpeedupPoint {
    /// The message size, bytes.
    pub size: u64,
    /// staged p50 / gpudirect p50.
    pub latency: Option<f64>,
    /// gpudirect bandwidth / staged bandwidth.
    pub bandwidth: Option<f64>,
}

/// Which figure of merit a ratio or crossover is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// One-way p50 latency: lower wins.
    Latency,
    /// Streaming bandwidth: higher wins.
    Bandwidth,
}

impl Metric {
    /// Its word in prose and chart labels: "latency" or "bandwidth".
    pub fn name(self) -> &'static str {
        match self {
            Metric::Latency => "latency",
            Metric::Bandwidth => "bandwidth",
        }
    }
    /// The point's ratio for this metric (above 1: GPUDirect better); None where a figure is
    /// missing or zero.
    pub fn of(self, p: &SpeedupPoint) -> Option<f64> {
        match self {
            Metric::Latency => p.latency,
            Metric::Bandwidth => p.bandwidth,
        }
    }
}

/// The staged/GPUDirect ratios of one scenario and op.
#[derive(Clone, Debug)]
pub struct Speedup {
    /// Index into [`Model::scenarios`].
    pub scenario: usize,
    /// Index into [`Model::ops`].
    pub op: usize,
    /// The staging path GPUDirect is compared with: one of [`BASELINES`].
    pub baseline: PathKind,
    /// The ratios at every size both paths ran, in GPUDirect's size order (ascending).
    pub points: Vec<SpeedupPoint>,
    /// Set when the "gpudirect" rows actually ran another path (a fallback), in which case a
    /// ratio near 1 is expected and says nothing about GPUDirect itself.
    pub gpudirect_fallback: Option<String>,
}

/// Ratios within this factor of 1 count as a tie: they neither win nor start a crossover, so
/// rounding noise near the 1x line does not produce a flurry of crossovers.
pub const TIE: f64 = 0.005;

/// Where the winner of one metric changes between two adjacent swept sizes.
#[derive(Clone, Debug, PartialEq)]
pub struct Crossover {
    /// The figure of merit whose winner changes.
    pub metric: Metric,
    /// The last size at which the previous winner still won.
    pub below: u64,
    /// The first size at which `winner` wins.
    pub above: u64,
    /// The size where the ratio crosses 1, interpolated on log-log axes between `below` and
    /// `above` (for placing a marker; the report quotes the swept sizes).
    pub at: f64,
    /// "gpudirect" or the speedup's baseline: who wins from `above` on.
    pub winner: PathKind,
}

impl Crossover {
    /// "staged wins at ≥ 512 KiB on SYS": short enough to annotate a chart.
    pub fn headline(&self, scenario: &str) -> String {
        format!("{} on {scenario}", self.short())
    }

    /// "staged wins at ≥ 512 KiB": the headline without its scenario.
    pub fn short(&self) -> String {
        format!(
            "{} wins at ≥ {}",
            self.winner,
            crate::units::fmt_bytes(self.above)
        )
    }
}

impl Speedup {
    /// Every change of winner of `metric`, in size order. Ties (within [`TIE`]) are skipped: the
    /// comparison is between the last decided size and the next decided one.
    pub fn crossovers(&self, metric: Metric) -> Vec<Crossover> {
        let mut out = Vec::new();
        let mut last: Option<(u64, f64)> = None;
        for p in &self.points {
            let Some(r) = metric.of(p) else { continue };
            if (r - 1.0).abs() <= TIE {
                continue;
            }
            if let Some((ls, lr)) = last
                && (lr > 1.0) != (r > 1.0)
            {
                // ln r is linear in ln size between the two points; solve for ln r = 0.
                let (x0, x1) = ((ls.max(1) as f64).ln(), (p.size.max(1) as f64).ln());
                let (y0, y1) = (lr.ln(), r.ln());
                let t = if y1 != y0 {
                    (-y0 / (y1 - y0)).clamp(0.0, 1.0)
                } else {
                    0.5
                };
                out.push(Crossover {
                    metric,
                    below: ls,
                    above: p.size,
                    at: (x0 + t * (x1 - x0)).exp(),
                    winner: if r > 1.0 {
                        PathKind::GpuDirect
                    } else {
                        self.baseline
                    },
                });
            }
            last = Some((p.size, r));
        }
        out
    }

    /// The smallest and largest ratio of `metric`, if any size has one.
    pub fn range(&self, metric: Metric) -> Option<(f64, f64)> {
        let vals = self.points.iter().filter_map(|p| metric.of(p));
        vals.fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
    }
}

/// Microseconds in the unit a reader wants: "850 ns", "3.42 µs", "1.25 ms", "2.1 s", to three
/// significant digits.
pub fn fmt_us(us: f64) -> String {
    if !us.is_finite() {
        return "n/a".into();
    }
    let a = us.abs();
    let (v, unit) = if a == 0.0 {
        (0.0, "µs")
    } else if a < 1.0 {
        (us * 1e3, "ns")
    } else if a < 1e3 {
        (us, "µs")
    } else if a < 1e6 {
        (us / 1e3, "ms")
    } else {
        (us / 1e6, "s")
    };
    format!("{} {unit}", sig3(v))
}

/// A number to three significant digits without trailing zeros: 3.42, 12.5, 850, 0.5.
pub fn sig3(v: f64) -> String {
    let a = v.abs();
    let decimals = if a == 0.0 || a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        3
    };
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A ratio as a speedup factor: "1.85×".
pub fn fmt_ratio(r: f64) -> String {
    format!("{}×", sig3(r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_size_is_log_nearest_and_prefers_the_smaller_on_ties() {
        let sizes = [8, 4096, 8192, 1 << 20];
        assert_eq!(nearest_size(&sizes, 5000), Some(4096));
        assert_eq!(nearest_size(&sizes, 6000), Some(8192)); // log-nearer: sqrt(4096 * 8192) = 5793
        assert_eq!(nearest_size(&sizes, 0), Some(8));
        assert_eq!(nearest_size(&sizes, u64::MAX), Some(1 << 20));
        assert_eq!(nearest_size(&[], 5), None);
        assert_eq!(nearest_size(&[4, 16], 8), Some(4));
    }

    #[test]
    fn number_formatting() {
        assert_eq!(fmt_us(0.85), "850 ns");
        assert_eq!(fmt_us(3.4219), "3.42 µs");
        assert_eq!(fmt_us(1250.0), "1.25 ms");
        assert_eq!(fmt_us(0.0), "0 µs");
        assert_eq!(fmt_ratio(2.0), "2×");
        assert_eq!(sig3(12.54), "12.5");
    }

    #[test]
    fn crossovers_skip_ties_and_interpolate() {
        let pt = |size, r| SpeedupPoint {
            size,
            latency: Some(r),
            bandwidth: None,
        };
        let mut s = Speedup {
            scenario: 0,
            op: 0,
            baseline: PathKind::Staged,
            points: vec![
                pt(1, 2.0),
                pt(2, 1.001),
                pt(4, 0.5),
                pt(8, 0.5),
                pt(16, 1.5),
            ],
            gpudirect_fallback: None,
        };
        let c = s.crossovers(Metric::Latency);
        assert_eq!(c.len(), 2);
        assert_eq!(
            (c[0].below, c[0].above, c[0].winner),
            (1, 4, PathKind::Staged)
        );
        assert!((c[0].at - 2.0).abs() < 1e-9, "{}", c[0].at);
        assert_eq!(
            (c[1].below, c[1].above, c[1].winner),
            (8, 16, PathKind::GpuDirect)
        );
        assert!(s.crossovers(Metric::Bandwidth).is_empty());
        assert_eq!(c[0].headline("SYS"), "staged wins at ≥ 4 B on SYS");
        // Against the pipeline, the pipeline is who wins back.
        s.baseline = PathKind::StagedPipelined;
        let c = s.crossovers(Metric::Latency);
        assert_eq!(
            (c[0].winner, c[1].winner),
            (PathKind::StagedPipelined, PathKind::GpuDirect)
        );
    }
}

//! `gdrsim sensitivity CONFIG [--delta 25%]`: which conclusions of a study hang on a parameter
//! nobody measured. Every parameter whose value is its default and whose source is `estimate`
//! is scaled up and down by the delta, one at a time; each variant is simulated (only the paths
//! the conclusions compare: GPUDirect and its staging baselines) and its headline results are
//! compared with the base run's: the GPUDirect-over-staging ratios per size, which path wins
//! at each size (and so the crossovers), and the bottleneck GPUDirect streams into. A
//! parameter that flips a winner or a bottleneck makes that conclusion fragile.

use std::path::Path;

use anyhow::Result;
use toml::{Table, Value};

use crate::config::params::{self, ParamValue};
use rayon::prelude::*;

use crate::config::{self, Config, Domain, Endpoint, PathKind};
use crate::progress::Progress;
use crate::report::charts::data::{BASELINES, Metric, Model, TIE};
use crate::report::charts::tornado::{Bar, End, Panel, Tornado};
use crate::scenario;
use crate::stats::Summary;
use crate::study::{self, Limits, Work};
use crate::units::fmt_bytes;

/// The headline results of one run: per comparison (scenario, op, baseline) and size, the
/// ratios and the winner of each metric, and the sizes where the winner changes (crossovers);
/// per scenario, op and path, the bandwidth at the largest size; per scenario, GPUDirect's
/// bottleneck at the largest size.
#[derive(Clone, Debug, PartialEq)]
pub struct Headlines {
    /// (comparison label, size, metric, ratio).
    pub ratios: Vec<(String, u64, Metric, f64)>,
    /// ("comparison label metric", its crossovers as the report words them: "staged wins at
    /// ≥ 512 KiB"; none where one path wins at every size).
    pub crossovers: Vec<(String, Vec<String>)>,
    /// ("scenario op path", GB/s at the largest size).
    pub bandwidths: Vec<(String, f64)>,
    /// ("scenario op", bottleneck).
    pub bottlenecks: Vec<(String, String)>,
}

/// Who wins at a ratio: GPUDirect above 1, the baseline below, nobody within [`TIE`].
fn winner(r: f64) -> i8 {
    if (r - 1.0).abs() <= TIE {
        0
    } else if r > 1.0 {
        1
    } else {
        -1
    }
}

/// The headline results of `rows`, simulated for `cfg`.
pub fn headlines(cfg: &Config, rows: &[Summary]) -> Headlines {
    let info = study::run_info(cfg, "");
    let model = Model::new(&info, rows);
    let mut ratios = Vec::new();
    let mut crossovers = Vec::new();
    for s in model.speedups() {
        let label = format!(
            "{} {} vs {}",
            model.scenarios[s.scenario].name, model.ops[s.op], s.baseline
        );
        for p in &s.points {
            for m in [Metric::Latency, Metric::Bandwidth] {
                if let Some(r) = m.of(p) {
                    ratios.push((label.clone(), p.size, m, r));
                }
            }
        }
        for m in [Metric::Latency, Metric::Bandwidth] {
            let at: Vec<String> = s.crossovers(m).iter().map(|c| c.short()).collect();
            crossovers.push((format!("{label} {}", m.name()), at));
        }
    }
    let largest = cfg.sizes.iter().copied().max().unwrap_or(0);
    let bandwidths = rows
        .iter()
        .filter(|r| r.size_bytes == largest)
        .map(|r| (format!("{} {} {}", r.scenario, r.op, r.path), r.bw_gbps))
        .collect();
    let bottlenecks = rows
        .iter()
        .filter(|r| r.path == PathKind::GpuDirect && r.size_bytes == largest)
        .map(|r| (format!("{} {}", r.scenario, r.op), r.bottleneck.clone()))
        .collect();
    Headlines {
        ratios,
        crossovers,
        bandwidths,
        bottlenecks,
    }
}

/// How one variant moved the headlines.
#[derive(Clone, Debug, PartialEq)]
pub struct Effect {
    /// The key path of the estimate varied, as [`crate::config::params::list`] names it
    /// (`machines[0].nics[0].read_window`).
    pub key: String,
    /// "x1.25" or "/1.25" (or "x2" for a power of two).
    pub direction: String,
    /// The value the variant gave it, as the config writes it.
    pub value: String,
    /// The same value for a reader: "187.5 ns", "256 B".
    pub shown: String,
    /// Whether the variant scaled the estimate up (else down).
    pub up: bool,
    /// The largest relative change of a ratio, signed, with where it happened.
    pub max_change: f64,
    /// Where that largest change happened: which ratio, at which size.
    pub max_at: String,
    /// The largest relative change of a bandwidth at the largest size, signed.
    pub bw_change: f64,
    /// Where it happened: "PHB write_imm gpudirect".
    pub bw_at: String,
    /// Crossovers that moved, appeared or vanished: "PHB write_imm vs staged bandwidth:
    /// staged wins at ≥ 1 MiB -> staged wins at ≥ 512 KiB".
    pub moved: Vec<String>,
    /// Conclusions that flipped.
    pub flips: Vec<Flip>,
    /// The variant's headlines (the ratios the chart draws).
    pub headlines: Headlines,
}

/// One conclusion a variant flipped: who wins a comparison at a size, or a bottleneck.
#[derive(Clone, Debug, PartialEq)]
pub struct Flip {
    /// "SYS write_imm vs staged bandwidth", or "SYS write_imm gpudirect bottleneck".
    pub what: String,
    /// The size, for a winner.
    pub size: Option<u64>,
    /// The winner (or bottleneck) in the base run.
    pub from: String,
    /// The winner (or bottleneck) in the variant.
    pub to: String,
}

impl Flip {
    /// "SYS write_imm vs staged bandwidth at 1 MiB: gpudirect -> staged".
    pub fn text(&self) -> String {
        match self.size {
            Some(s) => format!(
                "{} at {}: {} -> {}",
                self.what,
                fmt_bytes(s),
                self.from,
                self.to
            ),
            None => format!("{}: {} -> {}", self.what, self.from, self.to),
        }
    }
}

/// The flips of one variant with runs of adjacent sizes of one comparison joined: "SYS
/// write_imm vs staged bandwidth from 512 KiB to 1 GiB (12 sizes): gpudirect -> staged".
fn joined(flips: &[Flip]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < flips.len() {
        let f = &flips[i];
        let mut j = i + 1;
        while j < flips.len()
            && f.size.is_some()
            && flips[j].size.is_some()
            && (
                flips[j].what.as_str(),
                flips[j].from.as_str(),
                flips[j].to.as_str(),
            ) == (f.what.as_str(), f.from.as_str(), f.to.as_str())
        {
            j += 1;
        }
        if j - i > 1 {
            let (a, b) = (f.size.unwrap_or(0), flips[j - 1].size.unwrap_or(0));
            out.push(format!(
                "{} from {} to {} ({} sizes): {} -> {}",
                f.what,
                fmt_bytes(a),
                fmt_bytes(b),
                j - i,
                f.from,
                f.to
            ));
        } else {
            out.push(f.text());
        }
        i = j;
    }
    out
}

/// The largest relative change of a headline bandwidth, and where; then the crossovers that
/// differ between the base run and a variant.
fn compare_more(base: &Headlines, v: &Headlines) -> (f64, String, Vec<String>) {
    let mut max = (0.0f64, String::new());
    for (label, b0) in &base.bandwidths {
        if let Some((_, b1)) = v.bandwidths.iter().find(|(l, _)| l == label)
            && *b0 > 0.0
        {
            let change = b1 / b0 - 1.0;
            if change.abs() > max.0.abs() {
                max = (change, label.clone());
            }
        }
    }
    let words = |c: &[String]| match c.is_empty() {
        true => "no crossover".to_string(),
        false => c.join(", "),
    };
    let moved = base
        .crossovers
        .iter()
        .filter_map(|(label, c0)| {
            let (_, c1) = v.crossovers.iter().find(|(l, _)| l == label)?;
            (c1 != c0).then(|| format!("{label}: {} -> {}", words(c0), words(c1)))
        })
        .collect();
    (max.0, max.1, moved)
}

fn compare(base: &Headlines, v: &Headlines) -> (f64, String, Vec<Flip>) {
    let mut max = (0.0f64, String::new());
    let mut flips = Vec::new();
    let name = |w: i8, label: &str| match w {
        1 => "gpudirect".to_string(),
        -1 => label
            .rsplit(" vs ")
            .next()
            .unwrap_or("baseline")
            .to_string(),
        _ => "a tie".to_string(),
    };
    for (label, size, m, r0) in &base.ratios {
        let Some((_, _, _, r1)) = v
            .ratios
            .iter()
            .find(|(l, s, mm, _)| l == label && s == size && mm == m)
        else {
            continue;
        };
        let change = r1 / r0 - 1.0;
        if change.abs() > max.0.abs() {
            max = (
                change,
                format!("{label} {} at {}", m.name(), fmt_bytes(*size)),
            );
        }
        let (w0, w1) = (winner(*r0), winner(*r1));
        if w0 != w1 && w0 != 0 && w1 != 0 {
            flips.push(Flip {
                what: format!("{label} {}", m.name()),
                size: Some(*size),
                from: name(w0, label),
                to: name(w1, label),
            });
        }
    }
    for (sc, b0) in &base.bottlenecks {
        if let Some((_, b1)) = v.bottlenecks.iter().find(|(s, _)| s == sc)
            && b1 != b0
        {
            flips.push(Flip {
                what: format!("{sc} gpudirect bottleneck"),
                size: None,
                from: b0.clone(),
                to: b1.clone(),
            });
        }
    }
    (max.0, max.1, flips)
}

/// The value of `p` scaled by `factor` (up when above 1), as the config writes it; None where
/// scaling cannot change it (a zero, a bound reached) or the kind is not a number. `calibrate`
/// sets its fitted values through it too.
pub fn scaled(p: &ParamValue, factor: f64) -> Option<Value> {
    let v = leading_number(&p.value)?;
    if v == 0.0 {
        return None;
    }
    let up = factor > 1.0;
    let out = match p.domain {
        // The resolved config writes whole ns bare, otherwise "NNNps".
        Domain::Duration { max } => {
            let ps = if p.value.ends_with("ps") { v } else { v * 1e3 };
            let n = ((ps * factor).round() as u64).min(max);
            Value::String(format!("{n}ps"))
        }
        Domain::Rate { min } => {
            let bps = if p.value.ends_with("b/s") { v } else { v * 1e9 };
            Value::String(format!("{}b/s", ((bps * factor).round() as u64).max(min)))
        }
        Domain::Bytes { lo, hi } => {
            Value::Integer(((v * factor).round() as u64).clamp(lo, hi) as i64)
        }
        Domain::Count { lo, hi } => {
            let mut n = (v * factor).round() as u64;
            if n == v as u64 {
                n = if up { n + 1 } else { n.saturating_sub(1) };
            }
            Value::Integer(n.clamp(lo, hi) as i64)
        }
        Domain::Pow2 { lo, hi } => {
            let n = v as u64;
            Value::Integer((if up { n * 2 } else { n / 2 }).clamp(lo, hi) as i64)
        }
        _ => return None,
    };
    (out.to_string() != p.value && out.as_str() != Some(p.value.as_str())).then_some(out)
}

/// The whole number a resolved config's value starts with: 187500 of "187500ps", 400 of
/// "400b/s" (the resolved config writes durations and rates as whole numbers and a unit).
fn leading_number(s: &str) -> Option<f64> {
    let digits: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

/// The points of `cfg` the headlines compare: GPUDirect and its staging baselines.
fn compared_points(cfg: &Config) -> Vec<scenario::Point> {
    let keep = |p: PathKind| p == PathKind::GpuDirect || BASELINES.contains(&p);
    scenario::plan(cfg)
        .into_iter()
        .filter(|p| keep(p.path))
        .collect()
}

/// Simulates the points of `cfg` the headlines compare.
#[cfg(test)]
fn simulate(cfg: &Config) -> Result<Vec<Summary>> {
    study::simulate(cfg, &compared_points(cfg), 0, &Progress::new(0, true, ""))
}

/// Whether the points of scenario `s` read the same of `variant` as of `base`, so that the
/// base run's results stand for the variant's. They do when the two configs differ only in
/// what those points never read: hosts that no flow of the scenario runs on, and, on its
/// hosts, GPUs and NICs that are no flow's endpoint. (A point's simulation reads the config
/// through its flows' plans, which name only endpoint devices and the routes between them, the
/// topology, whose other devices carry no traffic and record no busy time, and `[sim]`.)
/// Everything else (the sweep, `[sim]`, the network, the scenarios, and every part of an
/// endpoint machine that is not another GPU or NIC: its CPU, sockets, switches, links) must be
/// equal, so an estimate there is never reused. Where a sender may relay by PXN (the sweep has
/// `pxn`, or `auto` with `[sim] pxn`, on a machine with NVLink), the relaying GPU is no
/// endpoint but carries the data, so no GPU of such a machine is taken as unread.
pub fn reads_same(base: &Config, variant: &Config, s: usize) -> bool {
    let Some(sc) = base.scenarios.get(s) else {
        return false;
    };
    if base.hosts.len() != variant.hosts.len() || base.scenarios != variant.scenarios {
        return false;
    }
    let ends: Vec<&Endpoint> = sc
        .flows
        .iter()
        .flat_map(|f| [&f.sender, &f.receiver])
        .collect();
    let mut patched = variant.clone();
    for (h, host) in patched.hosts.iter_mut().enumerate() {
        let (b, m) = (&base.hosts[h].machine, &mut host.machine);
        let mine: Vec<&&Endpoint> = ends.iter().filter(|e| e.host == h).collect();
        if mine.is_empty() {
            host.clone_from(&base.hosts[h]);
            continue;
        }
        if b.gpus.len() != m.gpus.len() || b.nics.len() != m.nics.len() {
            return false;
        }
        let relays = !b.nvlinks.is_empty()
            && base
                .paths
                .iter()
                .any(|&p| p == PathKind::Pxn || (p == PathKind::Auto && base.sim.pxn));
        // A GPU's reduction is read only by a workload flow that reduces.
        let reduces = sc
            .workload
            .as_ref()
            .is_some_and(|w| w.flows.iter().any(|f| f.reduce));
        for (g, gpu) in m.gpus.iter_mut().enumerate() {
            if !reduces {
                gpu.reduce = b.gpus[g].reduce;
            }
            if !relays && !mine.iter().any(|e| e.gpu == Some(g)) {
                gpu.clone_from(&b.gpus[g]);
            }
        }
        for (n, nic) in m.nics.iter_mut().enumerate() {
            if !mine.iter().any(|e| e.nic == n) {
                nic.clone_from(&b.nics[n]);
            }
        }
    }
    patched == *base
}

/// One variant of the study: an estimate scaled up or down, and the config it gives.
struct Variant {
    key: String,
    direction: String,
    value: String,
    shown: String,
    up: bool,
    cfg: Config,
    points: Vec<scenario::Point>,
    /// Per point: reused from the base run (`Some(i)`, its index there) or simulated.
    reuse: Vec<Option<usize>>,
}

/// The result of a sensitivity study.
pub struct Report {
    /// Estimates varied (parameters marked as estimates, not measurements).
    pub estimates: usize,
    /// Simulations run: the base run and every variant that parsed.
    pub runs: usize,
    /// Points simulated in all (the base run's and the variants').
    pub simulated: usize,
    /// Variant points taken from the base run instead, because the estimate varied provably
    /// does not reach them ([`reads_same`]).
    pub reused: usize,
    /// The relative step of the variants (0.25: every estimate x1.25 and /1.25).
    pub delta: f64,
    /// The base run's headlines.
    pub base: Headlines,
    /// Every variant's effect, flips first, then by the largest change of a ratio.
    pub effects: Vec<Effect>,
    /// The described hardware, for the chart's title.
    pub hardware: String,
}

/// Runs the study of the config at `config` within `limits`: see [`study`](fn@study).
pub fn run(config: Option<&Path>, delta: f64, quiet: bool, limits: &Limits) -> Result<Report> {
    let file = study::source_name(config);
    study(&study::load_config(config)?, delta, quiet, &file, limits)
}

/// "187.5 ns", "256 B", "128", "75 Gb/s": a variant's value as a reader writes it.
fn shown(domain: Domain, v: &Value) -> String {
    let n = |s: &str| leading_number(s).unwrap_or(0.0);
    match (domain, v) {
        (Domain::Duration { .. }, Value::String(s)) => {
            format!("{} ns", crate::report::charts::data::sig3(n(s) / 1e3))
        }
        (Domain::Rate { .. }, Value::String(s)) => {
            format!("{} Gb/s", crate::report::charts::data::sig3(n(s) / 1e9))
        }
        (Domain::Bytes { .. } | Domain::Pow2 { .. }, Value::Integer(i)) => fmt_bytes(*i as u64),
        (_, Value::String(s)) => s.clone(),
        (_, other) => other.to_string(),
    }
}

/// The base run and, for every estimate, a variant up and one down, refused by the cost gate
/// (as bad input of `file`) where simulating them is above `limits`. All the points to
/// simulate, the base run's and the variants', run together on every core; a variant's point
/// whose scenario reads nothing the variant changed ([`reads_same`]) is taken from the base
/// run instead of simulated again.
pub fn study(cfg: &Config, delta: f64, quiet: bool, file: &str, limits: &Limits) -> Result<Report> {
    let v = variants(cfg, delta)?;
    study::admit(file, &v.work(study::threads(0)), limits)?;
    v.simulate(quiet)
}

/// A sensitivity study ready to simulate: the base run's points and every variant's.
pub struct Variants {
    cfg: Config,
    delta: f64,
    estimates: usize,
    base_points: Vec<scenario::Point>,
    variants: Vec<Variant>,
}

/// The base run and, for every estimate of `cfg`, a variant scaled up by `delta` and one
/// down (those that parse), each point marked for reuse where the variant cannot reach it.
pub fn variants(cfg: &Config, delta: f64) -> Result<Variants> {
    let cfg = cfg.clone();
    let base_points = compared_points(&cfg);
    let doc: Table = config::to_toml(&cfg).parse()?;
    let estimates: Vec<ParamValue> = params::list(&cfg)
        .into_iter()
        .filter(|p| p.is_estimate())
        .collect();
    let mut variants = Vec::new();
    for p in &estimates {
        for factor in [1.0 + delta, 1.0 / (1.0 + delta)] {
            let Some(v) = scaled(p, factor) else {
                continue;
            };
            let mut d = doc.clone();
            if params::set(&mut d, &p.key, v.clone()).is_none() {
                continue;
            }
            let Ok(variant) = config::parse(&toml::to_string(&d)?, "variant") else {
                continue;
            };
            let direction = match p.domain {
                Domain::Pow2 { .. } => if factor > 1.0 { "x2" } else { "/2" }.to_string(),
                _ if factor > 1.0 => format!("x{:.2}", 1.0 + delta),
                _ => format!("/{:.2}", 1.0 + delta),
            };
            let points = compared_points(&variant);
            let same_plan = points == base_points;
            let same: Vec<bool> = (0..cfg.scenarios.len())
                .map(|s| same_plan && reads_same(&cfg, &variant, s))
                .collect();
            let reuse = points
                .iter()
                .enumerate()
                .map(|(i, pt)| same[pt.scenario].then_some(i))
                .collect();
            variants.push(Variant {
                key: p.key.clone(),
                direction,
                value: v.as_str().map_or_else(|| v.to_string(), String::from),
                shown: shown(p.domain, &v),
                up: factor > 1.0,
                cfg: variant,
                points,
                reuse,
            });
        }
    }
    Ok(Variants {
        estimates: estimates.len(),
        cfg,
        delta,
        base_points,
        variants,
    })
}

impl Variants {
    /// Run 0 is the base, run k the k-th variant: their configs, and every point that is not
    /// reused with its run, simulated in one pool.
    fn jobs(&self) -> (Vec<&Config>, Vec<(usize, &scenario::Point)>) {
        let configs = std::iter::once(&self.cfg)
            .chain(self.variants.iter().map(|v| &v.cfg))
            .collect();
        let base = self.base_points.iter().map(|p| (0, p));
        let others = self.variants.iter().enumerate().flat_map(|(k, v)| {
            let todo = v.points.iter().zip(&v.reuse).filter(|(_, r)| r.is_none());
            todo.map(move |(p, _)| (k + 1, p))
        });
        (configs, base.chain(others).collect())
    }

    /// What simulating them on `threads` threads is, for the cost gate: every point's events
    /// and memory, with the rows of all of them kept to the end.
    pub fn work(&self, threads: usize) -> Work {
        let (configs, jobs) = self.jobs();
        let topos: Vec<crate::topology::Topology> =
            configs.iter().map(|c| scenario::topology(c)).collect();
        let events: Vec<u64> = jobs
            .iter()
            .map(|&(k, p)| scenario::cost::estimate(configs[k], &topos[k], p))
            .collect();
        let memory: Vec<scenario::memory::PointMemory> = jobs
            .iter()
            .map(|&(k, p)| scenario::memory::point(configs[k], &topos[k], p, threads))
            .collect();
        let working: Vec<u64> = memory.iter().map(|m| m.working).collect();
        let named = |v: Vec<(usize, u64)>, figure: &dyn Fn(u64) -> String| -> Vec<String> {
            v.into_iter()
                .map(|(j, x)| {
                    let (k, p) = jobs[j];
                    let run = match k {
                        0 => "base".to_string(),
                        k => {
                            let v = &self.variants[k - 1];
                            format!("{} {}", v.key, v.direction)
                        }
                    };
                    format!(
                        "{run}: {} ({})",
                        study::point_name(configs[k], p),
                        figure(x)
                    )
                })
                .collect()
        };
        let per_event = |e: u64| format!("{:.1e}", e as f64);
        Work {
            what: "a sensitivity study".into(),
            events: events.iter().fold(0u64, |a, &e| a.saturating_add(e)),
            over: format!("{} points of {} runs", jobs.len(), configs.len()),
            memory: scenario::cost::peak_memory(&memory, threads),
            threads: threads.min(jobs.len()).max(1),
            costliest: named(scenario::cost::first_three(&events), &per_event),
            largest: named(scenario::cost::first_three(&working), &fmt_bytes),
            cut_events: "vary a smaller study (fewer scenarios or sizes)".into(),
            cut_memory: "vary a smaller study (fewer scenarios, sizes, messages or flows)".into(),
        }
    }

    /// Simulates the base run and the variants and compares each variant's headlines with
    /// the base run's.
    pub fn simulate(&self, quiet: bool) -> Result<Report> {
        let (configs, jobs) = self.jobs();
        let Variants {
            cfg,
            delta,
            estimates,
            base_points,
            variants,
        } = self;
        let delta = *delta;
        let progress = Progress::counting(jobs.len() as u64, quiet, "sensitivity", "points");
        let topos: Vec<crate::topology::Topology> =
            configs.par_iter().map(|c| scenario::topology(c)).collect();
        let results: Vec<(Summary, bool)> = jobs
            .par_iter()
            .map(|&(k, p)| {
                let r = scenario::simulate_point(configs[k], &topos[k], p);
                progress.inc();
                (r.summary, r.past_horizon)
            })
            .collect();
        progress.finish();
        if let Some(((s, _), (k, _))) = results.iter().zip(&jobs).find(|((_, past), _)| *past) {
            let file = if *k == 0 {
                "config"
            } else {
                "a sensitivity variant"
            };
            return Err(study::past_horizon(file, s).into());
        }
        let simulated = results.len();
        let mut results = results.into_iter().map(|r| r.0);
        let base_rows: Vec<Summary> = results.by_ref().take(base_points.len()).collect();
        let base = headlines(cfg, &base_rows);
        let mut effects = Vec::new();
        let mut reused = 0;
        for v in variants {
            let rows: Vec<Summary> = v
                .reuse
                .iter()
                .map(|r| match r {
                    Some(i) => {
                        reused += 1;
                        base_rows[*i].clone()
                    }
                    None => results.next().expect("one result per job"),
                })
                .collect();
            let h = headlines(&v.cfg, &rows);
            let (max_change, max_at, flips) = compare(&base, &h);
            let (bw_change, bw_at, moved) = compare_more(&base, &h);
            effects.push(Effect {
                key: v.key.clone(),
                direction: v.direction.clone(),
                value: v.value.clone(),
                shown: v.shown.clone(),
                up: v.up,
                max_change,
                max_at,
                bw_change,
                bw_at,
                moved,
                flips,
                headlines: h,
            });
        }
        effects.sort_by(|a, b| {
            (b.flips.len(), b.max_change.abs())
                .partial_cmp(&(a.flips.len(), a.max_change.abs()))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        Ok(Report {
            estimates: *estimates,
            runs: 1 + variants.len(),
            simulated,
            reused,
            delta,
            base,
            effects,
            hardware: study::run_info(cfg, "").hardware,
        })
    }
}

/// The report as text: the variants by effect (flips first, then the largest change of a
/// ratio), and the fragile conclusions.
pub fn render(r: &Report, threshold: f64) -> String {
    let mut s = format!(
        "{} estimates, each scaled by {:.0}% up and down ({} runs; {} points simulated, {} taken \
         from the base run where the estimate cannot reach them). A ratio is GPUDirect over its \
         staging baseline, a bandwidth a path's at the largest size; moves under {:.0}% are left \
         out.\n\n",
        r.estimates,
        r.delta * 100.0,
        r.runs,
        r.simulated,
        r.reused,
        threshold * 100.0
    );
    let shown: Vec<&Effect> = r
        .effects
        .iter()
        .filter(|e| {
            !e.flips.is_empty()
                || !e.moved.is_empty()
                || e.max_change.abs() >= threshold
                || e.bw_change.abs() >= threshold
        })
        .collect();
    let wk = shown.iter().map(|e| e.key.len()).max().unwrap_or(9).max(9);
    s.push_str(&format!(
        "{:<wk$}  {:<6}  {:>8}  {:>9}  where (ratio; bandwidth)\n",
        "parameter", "change", "ratio", "bandwidth"
    ));
    for e in &shown {
        let bw_at = match e.bw_change.abs() >= threshold {
            true => format!("; {}", e.bw_at),
            false => String::new(),
        };
        s.push_str(&format!(
            "{:<wk$}  {:<6}  {:>+7.1}%  {:>+8.1}%  {}{bw_at}\n",
            e.key,
            e.direction,
            e.max_change * 100.0,
            e.bw_change * 100.0,
            e.max_at
        ));
    }
    if shown.is_empty() {
        s.push_str("(no estimate moves a headline ratio or bandwidth that much)\n");
    }
    let fragile = fragile(r);
    s.push('\n');
    if fragile.is_empty() {
        s.push_str("No conclusion flips: every winner and bottleneck holds under each change.\n");
    } else {
        s.push_str(&format!("Fragile conclusions ({}):\n", fragile.len()));
        for f in fragile {
            s.push_str(&format!("  {f}\n"));
        }
    }
    let moved: Vec<String> = r
        .effects
        .iter()
        .flat_map(|e| {
            e.moved
                .iter()
                .map(move |m| format!("  {m}  ({} {})", e.key, e.direction))
        })
        .collect();
    if !moved.is_empty() {
        s.push_str(&format!("\nCrossovers moved ({}):\n", moved.len()));
        for m in moved {
            s.push_str(&m);
            s.push('\n');
        }
    }
    s
}

/// One line per flipped conclusion (adjacent sizes joined), with the estimate and direction
/// that flip it.
pub fn fragile(r: &Report) -> Vec<String> {
    r.effects
        .iter()
        .flat_map(|e| {
            joined(&e.flips)
                .into_iter()
                .map(move |f| format!("{f}  ({} {})", e.key, e.direction))
        })
        .collect()
}

/// Every variant as CSV: parameter, change, value, the largest ratio change and where, flips,
/// the largest bandwidth change and where, the crossovers moved.
pub fn csv(r: &Report) -> Result<Vec<u8>> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record([
        "parameter",
        "change",
        "value",
        "max_ratio_change",
        "where",
        "flips",
        "max_bandwidth_change",
        "bandwidth_where",
        "crossovers_moved",
    ])?;
    for e in &r.effects {
        let flips: Vec<String> = e.flips.iter().map(Flip::text).collect();
        w.write_record([
            e.key.as_str(),
            &e.direction,
            &e.value,
            &format!("{:.6}", e.max_change),
            &e.max_at,
            &flips.join("; "),
            &format!("{:.6}", e.bw_change),
            &e.bw_at,
            &e.moved.join("; "),
        ])?;
    }
    Ok(w.into_inner()?)
}

/// The tornado chart of `r` ([`crate::report::charts::tornado`]): per comparison, its latency
/// and its bandwidth ratio at the largest size it has, one bar per estimate from the ratio of
/// its variant down to that of its variant up. The largest size, because there the transfer
/// streams and its ratio rests on what most estimates set (read windows, read request sizes,
/// forwarding); at small sizes fixed costs that are measured (cudaMemcpy launch) dominate.
/// Every conclusion the default study has that flips is a large-size bandwidth one.
pub fn tornado(r: &Report, threshold: f64) -> Tornado {
    let mut labels: Vec<&str> = Vec::new();
    for (l, ..) in &r.base.ratios {
        if !labels.contains(&l.as_str()) {
            labels.push(l);
        }
    }
    let mut keys: Vec<&str> = Vec::new();
    for e in &r.effects {
        if !keys.contains(&e.key.as_str()) {
            keys.push(&e.key);
        }
    }
    let mut panels = Vec::new();
    for label in labels {
        for metric in [Metric::Latency, Metric::Bandwidth] {
            let Some(&(_, size, _, base)) = r
                .base
                .ratios
                .iter()
                .filter(|(l, _, m, _)| l == label && *m == metric)
                .max_by_key(|(_, s, _, _)| *s)
            else {
                continue;
            };
            let end = |key: &str, up: bool| {
                let e = r.effects.iter().find(|e| e.key == key && e.up == up)?;
                let ratio = e
                    .headlines
                    .ratios
                    .iter()
                    .find(|(l, s, m, _)| l == label && *s == size && *m == metric)?
                    .3;
                Some(End {
                    value: e.shown.clone(),
                    ratio,
                })
            };
            let bars = keys
                .iter()
                .map(|&k| Bar {
                    key: k.to_string(),
                    down: end(k, false),
                    up: end(k, true),
                })
                .filter(|b| b.down.is_some() || b.up.is_some())
                .collect();
            panels.push(Panel {
                comparison: label.to_string(),
                metric,
                size,
                base,
                bars,
            });
        }
    }
    Tornado {
        hardware: r.hardware.clone(),
        delta: r.delta,
        threshold,
        panels,
    }
}

/// `25%`, `0.25` or `25` -> 0.25.
pub fn parse_delta(s: &str) -> Result<f64, config::ConfigError> {
    let t = s.trim();
    let v: Option<f64> = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().ok().map(|p| p / 100.0),
        None => t
            .parse::<f64>()
            .ok()
            .map(|v| if v >= 1.0 { v / 100.0 } else { v }),
    };
    v.filter(|v| (0.01..=10.0).contains(v)).ok_or_else(|| {
        config::ConfigError::new(
            "command line",
            "--delta",
            "a change from 1% to 1000% (such as 25%)",
            format!("{s:?}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pv(value: &str, domain: Domain) -> ParamValue {
        ParamValue {
            key: "k".into(),
            value: value.into(),
            unit: "",
            domain,
            source: "estimate",
            default: None,
        }
    }

    #[test]
    fn values_scale_within_their_domain() {
        let d = Domain::Duration { max: u64::MAX };
        assert_eq!(
            scaled(&pv("150", d), 1.25),
            Some(Value::String("187500ps".into()))
        );
        assert_eq!(scaled(&pv("0", d), 1.25), None);
        let w = Domain::Count { lo: 1, hi: 65536 };
        assert_eq!(scaled(&pv("128", w), 1.25), Some(Value::Integer(160)));
        assert_eq!(scaled(&pv("1", w), 0.8), None, "at its bound");
        let p = Domain::Pow2 { lo: 128, hi: 4096 };
        assert_eq!(scaled(&pv("512", p), 0.8), Some(Value::Integer(256)));
        assert_eq!(parse_delta("25%").unwrap(), 0.25);
        assert!(parse_delta("0%").is_err());
    }

    /// A variant's largest bandwidth change and where, and a crossover that appeared.
    #[test]
    fn bandwidths_and_crossovers_are_compared() {
        let h = |bw: f64, c: &[&str]| Headlines {
            ratios: Vec::new(),
            crossovers: vec![(
                "SYS write_imm vs staged bandwidth".into(),
                c.iter().map(|s| s.to_string()).collect(),
            )],
            bandwidths: vec![
                ("SYS write_imm gpudirect".into(), bw),
                ("SYS write_imm staged".into(), 40.0),
            ],
            bottlenecks: Vec::new(),
        };
        let base = h(50.0, &[]);
        let (change, at, moved) = super::compare_more(&base, &h(40.0, &["staged wins at ≥ 1 MiB"]));
        assert!((change + 0.2).abs() < 1e-12, "{change}");
        assert_eq!(at, "SYS write_imm gpudirect");
        assert_eq!(
            moved,
            ["SYS write_imm vs staged bandwidth: no crossover -> staged wins at ≥ 1 MiB"]
        );
        let (change, _, moved) = super::compare_more(&base, &base);
        assert_eq!((change, moved.len()), (0.0, 0));
    }

    /// Every op of a scenario has its own bottleneck headline (they were keyed by scenario
    /// alone, so a change was reported once per op against the first op's).
    #[test]
    fn bottlenecks_are_per_scenario_and_op() {
        let text = config::DEFAULT_TOML
            .replace("ops = [\"write_imm\"]", "ops = [\"write_imm\", \"send\"]")
            .replace(
                "sizes = { from = \"1B\", to = \"1GiB\", factor = 2 }",
                "sizes = [\"4KiB\", \"1MiB\"]",
            );
        let cfg = config::parse(&text, "two ops").unwrap();
        let h = headlines(&cfg, &simulate(&cfg).unwrap());
        let mut keys: Vec<&str> = h.bottlenecks.iter().map(|(k, _)| k.as_str()).collect();
        let n = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!((n, keys.len()), (6, 6), "{:?}", h.bottlenecks);
    }

    /// A read window cut in half flips the default study's SYS bandwidth conclusion or moves
    /// its ratios; any estimate that changes nothing shows no flip.
    #[test]
    fn an_estimate_that_binds_moves_the_headlines() {
        let cfg = config::parse(config::DEFAULT_TOML, "default").unwrap();
        let base = headlines(&cfg, &simulate(&cfg).unwrap());
        assert!(!base.ratios.is_empty());
        let same = compare(&base, &base);
        assert_eq!((same.0, same.2.len()), (0.0, 0));
        let mut doc: Table = config::to_toml(&cfg).parse().unwrap();
        params::set(
            &mut doc,
            "machines[0].nics[0].read_window",
            Value::Integer(8),
        )
        .unwrap();
        let v = config::parse(&toml::to_string(&doc).unwrap(), "v").unwrap();
        let (change, at, _) = compare(&base, &headlines(&v, &simulate(&v).unwrap()));
        assert!(
            change.abs() > 0.05,
            "a read window of 8 moved the ratios by {change} ({at})"
        );
    }

    /// Reuse is sound: for every variant of every estimate, each scenario whose points
    /// `reads_same` says the variant cannot reach simulates, recomputed, exactly to the base
    /// run's rows. And it is not vacuous: some points are reused (the GPUs no scenario or only
    /// another scenario uses), while the scenario whose GPU an estimate belongs to is not, and
    /// there the estimate does change the rows.
    #[test]
    fn reused_points_equal_recomputed_ones() {
        let text = config::DEFAULT_TOML.replace(
            "sizes = { from = \"1B\", to = \"1GiB\", factor = 2 }",
            "sizes = [\"4KiB\", \"1MiB\"]",
        );
        let cfg = config::parse(&text, "small").unwrap();
        let topo = scenario::topology(&cfg);
        let points = compared_points(&cfg);
        let run = |c: &Config, t: &crate::topology::Topology, s: usize| -> Vec<Summary> {
            points
                .iter()
                .filter(|p| p.scenario == s)
                .map(|p| scenario::simulate_point(c, t, p).summary)
                .collect()
        };
        let base: Vec<Vec<Summary>> = (0..cfg.scenarios.len())
            .map(|s| run(&cfg, &topo, s))
            .collect();
        let doc: Table = config::to_toml(&cfg).parse().unwrap();
        let (mut reused, mut kept_changed) = (0, 0);
        for p in params::list(&cfg).into_iter().filter(|p| p.is_estimate()) {
            for factor in [1.25, 0.8] {
                let Some(v) = scaled(&p, factor) else {
                    continue;
                };
                let mut d = doc.clone();
                params::set(&mut d, &p.key, v).unwrap();
                let var = config::parse(&toml::to_string(&d).unwrap(), "v").unwrap();
                assert_eq!(compared_points(&var), points);
                let vt = scenario::topology(&var);
                for (s, rows) in base.iter().enumerate() {
                    if reads_same(&cfg, &var, s) {
                        reused += 1;
                        assert!(
                            run(&var, &vt, s) == *rows,
                            "{} x{factor} reused for {} but changes it",
                            p.key,
                            cfg.scenarios[s].name
                        );
                    } else if p.key.contains(".gpus[") && run(&var, &vt, s) != *rows {
                        kept_changed += 1;
                    }
                }
            }
        }
        // ce_mrrs_bytes, memcpy_sync_ns and ce_nvlink_read_window of gpus[0..4], up and down:
        // 3 x 2 x (2 + 2 + 3 + 2) scenario runs reused; the 6 of ce_mrrs_bytes's own scenarios
        // and the 6 of memcpy_sync_ns's recomputed, and changed (a staged copy pays both; no
        // flow crosses NVLink: the NVLink window changes nothing). reduce_gbps and
        // reduce_launch_ns of gpus[0..4], up and down, reused by all 3 scenarios (none
        // reduces): 2 x 2 x 4 x 3.
        assert_eq!((reused, kept_changed), (54 + 48, 6 + 6));
    }
}

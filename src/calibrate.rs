//! `gdrsim calibrate CONFIG --measured FILE --fit KEY[,KEY...]`: bounded least squares over
//! chosen config parameters against measured perftest and nvbandwidth figures (the CSV of
//! `gdrsim measured`).
//!
//! - The model's value of a measured row is the perftest emulation (`perftest::figures`) of the
//!   same test, memory (host, or GPU = GPUDirect), size and iteration count (capped by
//!   `--iters`, default 200, to keep an evaluation cheap), on the config's scenario.
//! - The model's value of a measured nvbandwidth cell (a copy-engine testcase such as
//!   `host_to_device_memcpy_ce`, row = the CPU, column = the GPU, GB/s, statistic `median`) is
//!   that cell of the nvbandwidth emulation (`nvbandwidth::figures`) of the same testcase on the
//!   config's first host. nvbandwidth's logs do not print the buffer size, the sample count or
//!   the copies per sample, so the emulation uses nvbandwidth's defaults (v0.8: `-b 512` MiB,
//!   `-i 3`, `--loopCount 16`) unless `--nvb-buffer-size`, `--nvb-samples`, `--nvb-loops` say
//!   what the measured run used. Older nvbandwidth releases defaulted to 64 MiB; a log from one
//!   needs `--nvb-buffer-size 64`. The device-to-device testcases are skipped (their peer
//!   copies are emulated, not fitted yet), and so are SUM rows (the sum of cells fitted themselves).
//! - Distinct runs of one evaluation (a perftest test, memory, size and iteration count; an
//!   nvbandwidth testcase) run in parallel (rayon).
//! - Residuals are relative, (model - measured) / measured; the fit minimises their sum of
//!   squares. Rows used: latency `typical` (the median) and bandwidth `average` by default
//!   and nvbandwidth's `median` cells by default (`--stats`). Rows the model cannot emulate are
//!   skipped with a note: perftest variants other than `-q` and `-b` (write with immediate,
//!   post list, duration, atomics), `ib_write_lat` on GPU memory (perftest refuses it), nvbandwidth's
//!   device-to-device and SM-copy testcases.
//! - Each fitted parameter is varied as a factor of its value in the config, through
//!   `sensitivity::scaled` (one setter for both tools): the factor is kept within
//!   `[1/range, range]` (default 4) by the reparametrisation `factor = range^tanh(u)`, and the
//!   parameter's own domain clamps it further. Only continuous parameters are fitted
//!   (durations, rates, byte sizes); counts and powers of two are refused.
//! - The optimiser is argmin's Nelder-Mead (crates.io `argmin`, maintained): derivative-free,
//!   which suits a discrete-event model whose outputs move in steps (integer picoseconds,
//!   whole TLPs and packets), where finite-difference gradients at a small step are zero or
//!   noise. It is restarted once from its best point (a collapsed simplex is the known failure
//!   of the method).
//! - Uncertainty: the Jacobian of the residuals with respect to ln(value) by central
//!   differences at the optimum (step 1%), covariance = s^2 (J^T J)^-1 with s^2 = SSR / (m - n);
//!   a parameter's standard error is its value times the square root of its diagonal term.

use std::path::Path;

use anyhow::Result;
use argmin::core::{CostFunction, Executor, State};
use argmin::solver::neldermead::NelderMead;
use rayon::prelude::*;
use toml::{Table, Value};

use crate::config::params::{self, ParamValue};
use crate::config::{self, Config, ConfigError, Domain};
use crate::measured::{Measurement, csv};
use crate::nvbandwidth::{self, Testcase};
use crate::perftest::{self, Row, Test};
use crate::sensitivity;
use crate::study;

/// What the command line asks.
#[derive(Clone, Debug)]
pub struct Options {
    /// The parameters fitted, as `gdrsim params` names them.
    pub keys: Vec<String>,
    /// The scenario of the perftest emulation (default: the config's first).
    pub scenario: Option<String>,
    /// The most iterations an emulated test runs.
    pub iters: u32,
    /// The fitted value stays within [value / range, value * range].
    pub range: f64,
    /// The statistics fitted (`typical`, `average`, ...).
    pub stats: Vec<String>,
    /// Nelder-Mead iterations per run.
    pub max_iters: u64,
    /// nvbandwidth rows: the buffer of each copy in MiB (nvbandwidth's `-b`; its logs do not
    /// print it, so the default is nvbandwidth's, 512).
    pub nvb_buffer_mib: u64,
    /// nvbandwidth rows: samples per cell (`-i`, default 3), of which the median is taken.
    pub nvb_samples: u32,
    /// nvbandwidth rows: copies per sample (`--loopCount`, default 16).
    pub nvb_loops: u32,
    /// What the fit may cost (`--max-events`, `--max-memory`).
    pub limits: study::Limits,
}

impl Options {
    /// The nvbandwidth run of `testcase` that the model's value of its cells comes from.
    pub fn nvbandwidth_args(&self, testcase: Testcase) -> nvbandwidth::Args {
        nvbandwidth::Args {
            buffer_mib: self.nvb_buffer_mib,
            samples: self.nvb_samples,
            loops: self.nvb_loops,
            ..nvbandwidth::Args::new(testcase)
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            keys: Vec::new(),
            scenario: None,
            iters: 200,
            range: 4.0,
            stats: vec!["typical".into(), "average".into(), "median".into()],
            max_iters: 150,
            nvb_buffer_mib: nvbandwidth::layout::DEFAULT_BUFFER_MIB,
            nvb_samples: nvbandwidth::Args::new(Testcase::HostToDevice).samples,
            nvb_loops: nvbandwidth::Args::new(Testcase::HostToDevice).loops,
            limits: study::Limits::default(),
        }
    }
}

/// One emulated run: a perftest test's figures at one size, or an nvbandwidth testcase's row.
#[derive(Clone, Debug, PartialEq, Eq)]
enum RunKey {
    Perftest {
        test: &'static str,
        gpu: bool,
        size: u64,
        /// Per QP.
        iters: u32,
        /// `-q` and `-b`, as the log's banner showed them.
        qps: u32,
        duplex: bool,
    },
    Nvbandwidth(Testcase),
}

/// What a run emulates: a perftest test (its program name and arguments), or an nvbandwidth
/// testcase.
enum Emulation {
    Perftest(&'static str, perftest::Args),
    Nvbandwidth(nvbandwidth::Args),
}

impl RunKey {
    /// "ib_write_bw (GPU, 4 QPs, both ways)", "host_to_device_memcpy_ce": the run, for the cost
    /// gate's refusal.
    fn name(&self) -> String {
        match self {
            RunKey::Perftest {
                test,
                gpu,
                qps,
                duplex,
                ..
            } => {
                let on = if *gpu { "GPU" } else { "host" };
                let both = if *duplex { ", both ways" } else { "" };
                format!(
                    "{test} ({on}, {qps} QP{}{both})",
                    if *qps == 1 { "" } else { "s" }
                )
            }
            RunKey::Nvbandwidth(tc) => tc.key().to_string(),
        }
    }
}

/// The perftest options of a measured row's banner details (`bidirectional`, `qps=N`, as
/// [`crate::measured`] writes them): QPs and both directions, or None for a variant the
/// emulation does not run (write with immediate, post list, duration, atomics, ...).
fn variant(detail: &str) -> Option<(u32, bool)> {
    let (mut qps, mut duplex) = (1, false);
    for d in detail.split(';').filter(|d| !d.is_empty()) {
        match d.strip_prefix("qps=") {
            Some(n) => qps = n.parse().ok().filter(|n| (1..=16_384).contains(n))?,
            None if d == "bidirectional" => duplex = true,
            None => return None,
        }
    }
    Some((qps, duplex))
}

/// What one run gives.
#[derive(Clone, Debug)]
enum Figures {
    Perftest(Row),
    /// GB/s per GPU of the host.
    Nvbandwidth(Vec<f64>),
}

/// A measured row the model can emulate: its run, where its figure is, and its value in the
/// model's units (µs, bytes/s, Mpps).
#[derive(Clone, Debug)]
struct Target {
    run: usize,
    figure: Figure,
    measured: f64,
}

#[derive(Clone, Copy, Debug)]
enum Figure {
    /// Index into perftest's seven latency figures.
    Lat(usize),
    BwPeak,
    BwAvg,
    MsgRate,
    /// An nvbandwidth cell: the GPU column.
    Nvb(usize),
}

/// The measured rows, sorted into those the model emulates and notes on those skipped.
struct Selection {
    runs: Vec<RunKey>,
    targets: Vec<Target>,
    notes: Vec<String>,
}

fn select(rows: &[Measurement], o: &Options, file: &str) -> Result<Selection, ConfigError> {
    let mut runs: Vec<RunKey> = Vec::new();
    let mut targets = Vec::new();
    let mut skipped: Vec<(String, usize)> = Vec::new();
    let mut skip = |why: String| match skipped.iter_mut().find(|(w, _)| *w == why) {
        Some((_, n)) => *n += 1,
        None => skipped.push((why, 1)),
    };
    let mut add = |key: RunKey, figure: Figure, measured: f64| {
        let run = match runs.iter().position(|k| *k == key) {
            Some(i) => i,
            None => {
                runs.push(key);
                runs.len() - 1
            }
        };
        targets.push(Target {
            run,
            figure,
            measured,
        });
    };
    for r in rows {
        if r.tool == "nvbandwidth" {
            match nvbandwidth_cell(r, o) {
                Ok((tc, gpu, measured)) => add(RunKey::Nvbandwidth(tc), Figure::Nvb(gpu), measured),
                Err(why) => skip(why),
            }
            continue;
        }
        if r.tool != "perftest" {
            skip(format!(
                "{} rows: the model cannot emulate {} yet",
                r.tool, r.tool
            ));
            continue;
        }
        if !o.stats.contains(&r.statistic) {
            skip(format!(
                "{} {} rows: not a fitted statistic (--stats)",
                r.metric, r.statistic
            ));
            continue;
        }
        let Some((qps, duplex)) = variant(&r.detail) else {
            skip(format!(
                "{} ({}) rows: the emulation runs the plain test, -q and -b only",
                r.test, r.detail
            ));
            continue;
        };
        let Some(&(name, test)) = Test::ALL.iter().find(|(n, _)| *n == r.test) else {
            skip(format!("{} rows: no emulation of that test", r.test));
            continue;
        };
        let gpu = match r.memory.as_str() {
            "gpu" => true,
            "host" => false,
            m => {
                skip(format!(
                    "perftest rows on memory {m:?}: host or gpu expected"
                ));
                continue;
            }
        };
        if gpu && test == Test::WriteLat {
            skip("ib_write_lat rows on GPU memory: perftest refuses that test".into());
            continue;
        }
        let (Some(size), Some(iters)) = (r.size_bytes, r.iterations) else {
            skip(format!("{} rows without a size or iteration count", r.test));
            continue;
        };
        let figure = match (r.metric.as_str(), r.statistic.as_str()) {
            ("latency", s) => {
                let at = ["min", "max", "typical", "avg", "stdev", "p99", "p99.9"]
                    .iter()
                    .position(|x| *x == s);
                match at {
                    Some(i) => Figure::Lat(i),
                    None => {
                        skip(format!("latency {s} rows: no such perftest figure"));
                        continue;
                    }
                }
            }
            ("bandwidth", "peak") => Figure::BwPeak,
            ("bandwidth", "average") => Figure::BwAvg,
            ("msg_rate", "average") => Figure::MsgRate,
            (m, s) => {
                skip(format!("{m} {s} rows: not a figure the emulation gives"));
                continue;
            }
        };
        let scale = match r.unit.as_str() {
            "us" => 1.0,
            "MiB/s" => 1_048_576.0,
            "Gb/s" => 125_000_000.0,
            "GB/s" => 1e9,
            "Mpps" => 1.0,
            u => {
                skip(format!("rows in {u}: not a perftest unit"));
                continue;
            }
        };
        let measured = r.value * scale;
        if measured <= 0.0 || !measured.is_finite() {
            skip(format!("{} rows with a zero or negative figure", r.test));
            continue;
        }
        // perftest prints -n times the QPs; each QP ran -n.
        let iters = (iters / u64::from(qps)).min(u64::from(o.iters)).max(2);
        if iters * u64::from(qps) * if duplex { 2 } else { 1 } > perftest::MAX_MESSAGES {
            skip(format!(
                "{} rows over {qps} QPs: more than {} messages to simulate",
                r.test,
                perftest::MAX_MESSAGES
            ));
            continue;
        }
        let key = RunKey::Perftest {
            test: name,
            gpu,
            size,
            iters: iters as u32,
            qps,
            duplex,
        };
        add(key, figure, measured);
    }
    let notes = skipped
        .into_iter()
        .map(|(w, n)| format!("skipped {n} {w}"))
        .collect();
    if targets.is_empty() {
        return Err(ConfigError::new(
            file,
            "",
            "measured rows the model can emulate (perftest ib_{write,read,send}_{lat,bw}, \
             plain or with -q and -b, host or gpu memory; nvbandwidth host-device copy-engine cells; with a \
             fitted statistic)",
            "none",
        ));
    }
    Ok(Selection {
        runs,
        targets,
        notes,
    })
}

/// An nvbandwidth row as (testcase, GPU column, bytes/s), or why it is skipped.
fn nvbandwidth_cell(r: &Measurement, o: &Options) -> Result<(Testcase, usize, f64), String> {
    let Some(&tc) = Testcase::ALL.iter().find(|t| t.key() == r.test) else {
        return Err(format!(
            "nvbandwidth {} rows: no emulation of that testcase (copy-engine host-device \
             testcases only)",
            r.test
        ));
    };
    if tc.is_peer() {
        return Err(format!(
            "nvbandwidth {} rows: peer copies are not fitted yet (host-device testcases only)",
            r.test
        ));
    }
    if r.statistic == "sum" {
        return Err("nvbandwidth SUM rows: the sum of a matrix's cells, fitted themselves".into());
    }
    if !o.stats.contains(&r.statistic) {
        return Err(format!(
            "nvbandwidth {} rows: not a fitted statistic (--stats)",
            r.statistic
        ));
    }
    if r.metric != "bandwidth" || r.unit != "GB/s" {
        return Err(format!(
            "nvbandwidth {} {} rows in {}: bandwidth in GB/s expected",
            r.test, r.metric, r.unit
        ));
    }
    if r.row != "0" {
        return Err(format!(
            "nvbandwidth rows of CPU {:?}: the emulation measures one host, its row 0",
            r.row
        ));
    }
    let Ok(gpu) = r.column.parse::<usize>() else {
        return Err(format!(
            "nvbandwidth rows of column {:?}: a GPU index expected",
            r.column
        ));
    };
    let measured = r.value * 1e9;
    if measured <= 0.0 || !measured.is_finite() {
        return Err(format!(
            "nvbandwidth {} rows with a zero or negative figure",
            r.test
        ));
    }
    Ok((tc, gpu, measured))
}

/// A parameter being fitted.
#[derive(Clone, Debug)]
pub struct Fitted {
    /// The parameter, as `gdrsim params` lists it in the input config.
    pub param: ParamValue,
    /// The value in the config, in `param.unit`.
    pub start: f64,
    /// The fitted factor on it.
    pub factor: f64,
    /// The standard error of ln(factor) (a relative error); None where it cannot be estimated.
    pub rel_sd: Option<f64>,
    /// Whether the fit ended against a bound.
    pub at_bound: bool,
    /// The value as the calibrated config writes it.
    pub value: Value,
}

/// The result of a calibration.
pub struct Report {
    /// The fitted parameters, in `--fit` order.
    pub fitted: Vec<Fitted>,
    /// The measured rows fitted.
    pub rows: usize,
    /// Notes on the rows skipped.
    pub notes: Vec<String>,
    /// RMS relative error at the config's values.
    pub rms_before: f64,
    /// RMS relative error at the fitted values.
    pub rms_after: f64,
    /// Model evaluations (every emulated run once each).
    pub evaluations: usize,
    /// The calibrated config (the resolved input with the fitted keys set).
    pub toml: String,
    /// Pairs of fitted parameters (indices into `fitted`) whose estimates are correlated beyond
    /// [`CORRELATED`], with the correlation: the rows fix a combination of the two, not each.
    pub correlated: Vec<(usize, usize, f64)>,
}

/// The correlation of two fitted parameters above which the report warns that the rows cannot
/// tell them apart.
pub const CORRELATED: f64 = 0.9;

/// A number in the parameter's unit from a value as the resolved config writes it (`150`,
/// `187500ps`, `708800000000b/s`).
fn in_unit(s: &str) -> Option<f64> {
    if let Some(ps) = s.strip_suffix("ps") {
        return ps.parse::<f64>().ok().map(|v| v / 1e3);
    }
    if let Some(bps) = s.strip_suffix("b/s") {
        return bps.parse::<f64>().ok().map(|v| v / 1e9);
    }
    s.parse().ok()
}

fn show(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), String::from)
}

/// The fitting problem: the base config as TOML, the parameters, the measured runs.
struct Problem<'a> {
    doc: Table,
    params: Vec<ParamValue>,
    sel: &'a Selection,
    si: Option<String>,
    opts: &'a Options,
    ln_range: f64,
    evaluations: std::sync::atomic::AtomicUsize,
}

impl Problem<'_> {
    /// The emulation of run `k`: a perftest test's arguments, or an nvbandwidth testcase's.
    fn emulation(&self, k: &RunKey) -> Result<Emulation> {
        Ok(match *k {
            RunKey::Perftest {
                test,
                gpu,
                size,
                iters,
                qps,
                duplex,
            } => Emulation::Perftest(
                test,
                perftest::Args {
                    test: Test::parse(test)?,
                    scenario: self.si.clone(),
                    sizes: vec![size],
                    iters: Some(iters),
                    tx_depth: None,
                    qps,
                    duplex,
                    use_cuda: gpu,
                    report_gbits: false,
                },
            ),
            RunKey::Nvbandwidth(tc) => Emulation::Nvbandwidth(self.opts.nvbandwidth_args(tc)),
        })
    }

    /// What the fit is about to simulate, for the cost gate: every evaluation runs every
    /// emulation (side by side on the worker threads); Nelder-Mead, restarted once, evaluates
    /// its n + 1 starting points and at most two points an iteration, `max_iters` iterations
    /// each time, then the residuals at the optimum and the Jacobian's 2n.
    fn work(&self, cfg: &Config, n: usize) -> Result<study::Work> {
        let n = n as u64;
        let evaluations = 2 + 2 * (n + 1 + 2 * self.opts.max_iters) + 2 * n;
        let mut runs = Vec::new();
        for k in &self.sel.runs {
            let each = match self.emulation(k)? {
                Emulation::Perftest(_, a) => perftest::runs(cfg, &a)?,
                Emulation::Nvbandwidth(a) => nvbandwidth::runs(cfg, &a)?,
            };
            for (at, events, memory) in each {
                let label = format!("{} {at}", k.name());
                runs.push((label, events.saturating_mul(evaluations), memory));
            }
        }
        let count = self.sel.runs.len();
        let over = format!(
            "{count} emulated run{} of up to {evaluations} evaluations",
            if count == 1 { "" } else { "s" }
        );
        let cut = "fewer measured rows (--stats), --fit keys or iterations (--iters)";
        Ok(study::runs_work(
            "a calibration",
            over,
            &runs,
            cut,
            study::threads(0),
        ))
    }

    /// The config with parameter k at factor f_k; the values set.
    fn config(&self, ln_f: &[f64]) -> Result<(Config, Vec<Value>)> {
        let mut d = self.doc.clone();
        let mut values = Vec::new();
        for (p, lf) in self.params.iter().zip(ln_f) {
            // scaled gives None where the value does not change (factor 1, a bound).
            let v = match sensitivity::scaled(p, lf.exp()) {
                Some(v) => {
                    params::set(&mut d, &p.key, v.clone())
                        .ok_or_else(|| anyhow::anyhow!("setting {}", p.key))?;
                    v
                }
                None => p
                    .key
                    .rsplit_once('.')
                    .and_then(|(at, last)| params::table_at_mut(&mut d, at)?.get(last).cloned())
                    .ok_or_else(|| anyhow::anyhow!("reading {}", p.key))?,
            };
            values.push(v);
        }
        Ok((config::parse(&toml::to_string(&d)?, "calibrated")?, values))
    }

    /// The relative residuals at ln(factors) `ln_f`.
    fn residuals(&self, ln_f: &[f64]) -> Result<Vec<f64>> {
        self.evaluations
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (cfg, _) = self.config(ln_f)?;
        let figures: Vec<Figures> = self
            .sel
            .runs
            .par_iter()
            .map(|k| match self.emulation(k)? {
                Emulation::Perftest(test, a) => perftest::figures(&cfg, &a)?
                    .into_iter()
                    .next()
                    .map(Figures::Perftest)
                    .ok_or_else(|| anyhow::anyhow!("no figures for {test}")),
                Emulation::Nvbandwidth(a) => {
                    nvbandwidth::figures(&cfg, &a).map(Figures::Nvbandwidth)
                }
            })
            .collect::<Result<_>>()?;
        self.sel
            .targets
            .iter()
            .map(|t| {
                let model = match (&figures[t.run], t.figure) {
                    (Figures::Perftest(Row::Lat { f, .. }), Figure::Lat(i)) => f[i],
                    (Figures::Perftest(Row::Bw { peak, .. }), Figure::BwPeak) => *peak,
                    (Figures::Perftest(Row::Bw { avg, .. }), Figure::BwAvg) => *avg,
                    (Figures::Perftest(Row::Bw { rate, .. }), Figure::MsgRate) => *rate,
                    (Figures::Nvbandwidth(row), Figure::Nvb(gpu)) => {
                        let gbs = row.get(gpu).ok_or_else(|| {
                            ConfigError::new(
                                "measured data",
                                "column",
                                format!(
                                    "nvbandwidth GPU columns of the config's first host \
                                     (0 to {})",
                                    row.len().saturating_sub(1)
                                ),
                                gpu.to_string(),
                            )
                        })?;
                        gbs * 1e9
                    }
                    _ => f64::NAN,
                };
                Ok(model / t.measured - 1.0)
            })
            .collect()
    }

    fn ln_f(&self, u: &[f64]) -> Vec<f64> {
        u.iter().map(|x| self.ln_range * x.tanh()).collect()
    }
}

fn ssr(r: &[f64]) -> f64 {
    r.iter().map(|x| x * x).sum()
}

fn rms(r: &[f64]) -> f64 {
    (ssr(r) / r.len().max(1) as f64).sqrt()
}

/// argmin's view of the problem: the sum of squared residuals over the unbounded u.
struct Cost<'a, 'b>(&'a Problem<'b>);

impl CostFunction for Cost<'_, '_> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, u: &Vec<f64>) -> Result<f64, argmin::core::Error> {
        let c = self
            .0
            .residuals(&self.0.ln_f(u))
            .map(|r| ssr(&r))
            .unwrap_or(f64::MAX);
        Ok(if c.is_finite() { c } else { f64::MAX })
    }
}

/// The inverse of a small symmetric positive matrix (Gauss-Jordan with partial pivoting);
/// None when singular.
pub fn invert(m: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = m.len();
    let mut a: Vec<Vec<f64>> = m
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let mut r = row.clone();
            r.extend((0..n).map(|j| if i == j { 1.0 } else { 0.0 }));
            r
        })
        .collect();
    let scale = m
        .iter()
        .flatten()
        .fold(0.0f64, |s, x| s.max(x.abs()))
        .max(1e-300);
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))?;
        if a[p][c].abs() <= scale * 1e-12 {
            return None;
        }
        a.swap(c, p);
        let d = a[c][c];
        for x in &mut a[c] {
            *x /= d;
        }
        for r in 0..n {
            if r != c {
                let f = a[r][c];
                if f != 0.0 {
                    let pivot = a[c].clone();
                    for (x, p) in a[r].iter_mut().zip(&pivot) {
                        *x -= f * p;
                    }
                }
            }
        }
    }
    Some(a.into_iter().map(|r| r[n..].to_vec()).collect())
}

/// The covariance of the parameters from the Jacobian `j` (m rows of n) and the residuals
/// `r`: s^2 (J^T J)^-1, s^2 = SSR / (m - n); None with no more rows than parameters or a
/// singular J^T J.
pub fn covariance(j: &[Vec<f64>], r: &[f64]) -> Option<Vec<Vec<f64>>> {
    let n = j.first()?.len();
    let m = r.len();
    if m <= n {
        return None;
    }
    let jtj: Vec<Vec<f64>> = (0..n)
        .map(|a| {
            (0..n)
                .map(|b| j.iter().map(|row| row[a] * row[b]).sum())
                .collect()
        })
        .collect();
    let inv = invert(&jtj)?;
    let s2 = ssr(r) / (m - n) as f64;
    Some(
        inv.into_iter()
            .map(|row| row.into_iter().map(|c| s2 * c).collect())
            .collect(),
    )
}

/// Standard errors of the parameters: sqrt of the diagonal of [`covariance`].
pub fn standard_errors(j: &[Vec<f64>], r: &[f64]) -> Option<Vec<f64>> {
    Some(deviations(&covariance(j, r)?))
}

/// The square roots of a covariance matrix's diagonal (each parameter's standard error).
fn deviations(c: &[Vec<f64>]) -> Vec<f64> {
    (0..c.len()).map(|k| c[k][k].max(0.0).sqrt()).collect()
}

/// The pairs of Jacobian columns (one per parameter) that are parallel within 1% (|cosine| >
/// 0.99): such a pair moves every row alike, so the rows cannot set the two apart. Reported
/// with the correlation their estimates would have (minus the cosine: parameters that push
/// the rows the same way trade off against each other).
pub fn collinear_pairs(cols: &[Vec<f64>]) -> Vec<(usize, usize, f64)> {
    let norm = |c: &[f64]| c.iter().map(|x| x * x).sum::<f64>().sqrt();
    let mut out = Vec::new();
    for a in 0..cols.len() {
        for b in a + 1..cols.len() {
            let d = norm(&cols[a]) * norm(&cols[b]);
            let dot: f64 = cols[a].iter().zip(&cols[b]).map(|(x, y)| x * y).sum();
            if d > 0.0 && (dot / d).abs() > 0.99 {
                out.push((a, b, -dot / d));
            }
        }
    }
    out
}

/// The pairs of parameters whose correlation (from the covariance `c`) is beyond
/// [`CORRELATED`] in magnitude. The correlation does not depend on the residuals' size, so it
/// flags pairs the rows cannot separate even when the fit is exact (synthetic data).
pub fn correlated_pairs(c: &[Vec<f64>]) -> Vec<(usize, usize, f64)> {
    let mut out = Vec::new();
    for a in 0..c.len() {
        for b in a + 1..c.len() {
            let d = (c[a][a] * c[b][b]).sqrt();
            if d > 0.0 && (c[a][b] / d).abs() > CORRELATED {
                out.push((a, b, c[a][b] / d));
            }
        }
    }
    out
}

/// Fits the parameters of `cfg` to the measured rows.
pub fn fit(cfg: &Config, rows: &[Measurement], file: &str, o: &Options) -> Result<Report> {
    if !(o.range > 1.0 && o.range.is_finite()) {
        return Err(ConfigError::new(
            "command line",
            "--range",
            "a factor above 1",
            o.range.to_string(),
        )
        .into());
    }
    // Refused, not raised to 2 in silence: the user asked for a run perftest cannot do.
    if !(2..=perftest::MAX_ITERS).contains(&o.iters) {
        return Err(ConfigError::new(
            "command line",
            "--iters",
            format!(
                "from 2 to {} iterations (the range of perftest's -n)",
                perftest::MAX_ITERS
            ),
            o.iters.to_string(),
        )
        .into());
    }
    o.nvbandwidth_args(Testcase::HostToDevice)
        .check()
        .map_err(|e| {
            let flag = match e.key.as_str() {
                "-b" => "--nvb-buffer-size",
                "-i" => "--nvb-samples",
                _ => "--nvb-loops",
            };
            ConfigError::new("command line", flag, e.expected, e.found)
        })?;
    let sel = select(rows, o, file)?;
    let all = params::list(cfg);
    let mut chosen = Vec::new();
    for k in &o.keys {
        let Some(p) = all.iter().find(|p| p.key == *k) else {
            return Err(ConfigError::new(
                "command line",
                "--fit",
                "parameter keys as `gdrsim params` lists them (such as \
                 machines[0].nics[0].tx_pipeline_ns)",
                format!("{k:?}"),
            )
            .into());
        };
        let numeric = matches!(
            p.domain,
            Domain::Duration { .. } | Domain::Rate { .. } | Domain::Bytes { .. }
        );
        if !numeric || in_unit(&p.value).is_none_or(|v| v <= 0.0) {
            return Err(ConfigError::new(
                "command line",
                "--fit",
                format!(
                    "a duration, rate or byte size with a nonzero value ({k} is {} {})",
                    p.value, p.unit
                ),
                format!("{k:?}"),
            )
            .into());
        }
        if chosen.iter().any(|c: &ParamValue| c.key == p.key) {
            continue;
        }
        chosen.push(p.clone());
    }
    if chosen.is_empty() {
        return Err(ConfigError::new("command line", "--fit", "at least one key", "none").into());
    }
    let n = chosen.len();
    let problem = Problem {
        doc: config::to_toml(cfg).parse()?,
        params: chosen,
        sel: &sel,
        si: o.scenario.clone(),
        opts: o,
        ln_range: o.range.ln(),
        evaluations: Default::default(),
    };
    study::admit(file, &problem.work(cfg, n)?, &o.limits)?;
    let r0 = problem.residuals(&vec![0.0; n])?;
    let mut u = vec![0.0; n];
    for _ in 0..2 {
        let step = 0.15 / problem.ln_range;
        let mut simplex = vec![u.clone()];
        for k in 0..n {
            let mut v = u.clone();
            v[k] += step;
            simplex.push(v);
        }
        let solver = NelderMead::new(simplex).with_sd_tolerance(1e-10)?;
        let res = Executor::new(Cost(&problem), solver)
            .configure(|s| s.max_iters(o.max_iters))
            .run()?;
        if let Some(best) = res.state().get_best_param() {
            u = best.clone();
        }
    }
    let ln_f = problem.ln_f(&u);
    let r1 = problem.residuals(&ln_f)?;
    // The Jacobian in ln(value), central differences of 1% (kept inside the bounds).
    let h = 0.01;
    let cols: Vec<Option<Vec<f64>>> = (0..n)
        .into_par_iter()
        .map(|k| {
            let mut up = ln_f.clone();
            let mut dn = ln_f.clone();
            up[k] = (up[k] + h).min(problem.ln_range);
            dn[k] = (dn[k] - h).max(-problem.ln_range);
            let (a, b) = (problem.residuals(&up).ok()?, problem.residuals(&dn).ok()?);
            let d = up[k] - dn[k];
            Some(a.iter().zip(&b).map(|(x, y)| (x - y) / d).collect())
        })
        .collect();
    let jac: Option<Vec<Vec<f64>>> = cols.into_iter().collect();
    let cov = jac.as_ref().and_then(|c| {
        let j: Vec<Vec<f64>> = (0..r1.len())
            .map(|i| c.iter().map(|col| col[i]).collect())
            .collect();
        covariance(&j, &r1)
    });
    // Where J^T J cannot be inverted the rows do not determine the parameters at all: name
    // the pairs whose columns are (nearly) parallel instead.
    let correlated = match (&cov, &jac) {
        (Some(c), _) => correlated_pairs(c),
        (None, Some(cols)) if r1.len() > n => collinear_pairs(cols),
        _ => Vec::new(),
    };
    let sd = cov.as_deref().map(deviations);
    let (_, values) = problem.config(&ln_f)?;
    let mut doc: Table = config::to_toml(cfg).parse()?;
    for (p, v) in problem.params.iter().zip(&values) {
        params::set(&mut doc, &p.key, v.clone());
    }
    let fitted = problem
        .params
        .iter()
        .zip(&values)
        .enumerate()
        .map(|(k, (p, v))| Fitted {
            param: p.clone(),
            start: in_unit(&p.value).unwrap_or(f64::NAN),
            factor: ln_f[k].exp(),
            rel_sd: sd.as_ref().map(|s| s[k]),
            at_bound: u[k].tanh().abs() > 0.999,
            value: v.clone(),
        })
        .collect();
    Ok(Report {
        fitted,
        rows: sel.targets.len(),
        notes: sel.notes.clone(),
        rms_before: rms(&r0),
        rms_after: rms(&r1),
        evaluations: problem
            .evaluations
            .load(std::sync::atomic::Ordering::Relaxed),
        toml: toml::to_string(&doc)?,
        correlated,
    })
}

/// The report as text: each fitted value with its standard error, the fit error before and
/// after, and the notes on skipped rows.
pub fn render(r: &Report, out: &Path) -> String {
    let mut s = String::new();
    let wk = r
        .fitted
        .iter()
        .map(|f| f.param.key.len())
        .max()
        .unwrap_or(9)
        .max(9);
    s.push_str(&format!(
        "{:<wk$}  {:>12}  {:>12}  {:>12}  {:>8}  unit\n",
        "parameter", "start", "fitted", "std error", "factor"
    ));
    for f in &r.fitted {
        let value = in_unit(&show(&f.value)).unwrap_or(f.start * f.factor);
        let sd = f
            .rel_sd
            .map_or("n/a".to_string(), |sd| format!("{:.4}", sd * value));
        s.push_str(&format!(
            "{:<wk$}  {:>12.4}  {:>12.4}  {:>12}  {:>8.4}  {}{}\n",
            f.param.key,
            f.start,
            value,
            sd,
            f.factor,
            f.param.unit,
            if f.at_bound {
                "  (at the --range bound)"
            } else {
                ""
            }
        ));
    }
    s.push_str(&format!(
        "fit error (RMS relative, {} rows): {:.3}% before, {:.3}% after ({} evaluations)\n",
        r.rows,
        r.rms_before * 100.0,
        r.rms_after * 100.0,
        r.evaluations
    ));
    if r.fitted.iter().all(|f| f.rel_sd.is_none()) {
        s.push_str(
            "note: no standard errors: there are no more rows than fitted parameters, or the \
             rows do not determine every one of them (see any warning below)\n",
        );
    }
    for &(a, b, rho) in &r.correlated {
        s.push_str(&format!(
            "warning: {} and {} are correlated at {rho:+.3}: the rows fix a combination of the \
             two ({}), not each; fit one with the other held, or add rows that set them apart\n",
            r.fitted[a].param.key,
            r.fitted[b].param.key,
            if rho < 0.0 {
                "one up and the other down leaves the fit as it is, as for two delays that add"
            } else {
                "both up or both down together leaves the fit as it is"
            }
        ));
    }
    for n in &r.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s.push_str(&format!("calibrated config written to {}\n", out.display()));
    s
}

/// `gdrsim calibrate`: loads the config and the measurements, fits, writes the calibrated
/// config atomically and returns the report.
pub fn command(config: &Path, measured: &Path, o: &Options, out: &Path) -> Result<String> {
    let cfg = study::load_config(Some(config))?;
    let rows = csv::read(measured)?;
    let r = fit(&cfg, &rows, &measured.display().to_string(), o)?;
    crate::report::atomic::write(out, r.toml.as_bytes())?;
    Ok(render(&r, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_the_rows_cannot_set_apart_are_flagged() {
        // Two delays that add (columns alike, one row slightly apart): estimates strongly
        // anti-correlated, flagged; a third parameter with a column of its own is not.
        let j = vec![
            vec![1.0, 1.0, 0.0],
            vec![1.0, 1.01, 0.0],
            vec![2.0, 2.0, 1.0],
            vec![3.0, 3.02, 0.0],
            vec![1.0, 1.0, 2.0],
        ];
        let r = [0.01, -0.02, 0.01, 0.0, 0.01];
        let c = super::covariance(&j, &r).expect("invertible");
        let pairs = super::correlated_pairs(&c);
        assert_eq!(pairs.len(), 1, "{pairs:?}");
        let (a, b, rho) = pairs[0];
        assert_eq!((a, b), (0, 1));
        assert!(rho < -0.99, "{rho}");
        // Exactly additive delays (parallel columns): J^T J is singular, no covariance; the
        // columns name the pair.
        let cols = vec![
            vec![1.0, 2.0, 3.0],
            vec![2.0, 4.0, 6.0],
            vec![1.0, 0.0, -1.0],
        ];
        assert_eq!(super::collinear_pairs(&cols), vec![(0, 1, -1.0)]);
        // Independent columns: none.
        let k = vec![
            vec![1.0, 0.0],
            vec![0.0, 1.0],
            vec![1.0, 1.0],
            vec![2.0, -1.0],
        ];
        let c = super::covariance(&k, &[0.1, -0.1, 0.05, 0.0]).expect("invertible");
        assert!(super::correlated_pairs(&c).is_empty());
    }

    #[test]
    fn standard_errors_follow_the_linear_model() {
        // y = a x: J = x, residuals r; se(a) = sqrt(SSR/(m-1) / sum x^2).
        let x = [1.0, 2.0, 3.0, 4.0];
        let r = [0.1, -0.1, 0.1, -0.1];
        let j: Vec<Vec<f64>> = x.iter().map(|v| vec![*v]).collect();
        let se = standard_errors(&j, &r).unwrap();
        let want = (0.04 / 3.0 / 30.0f64).sqrt();
        assert!((se[0] - want).abs() < 1e-12, "{se:?} {want}");
        // Two identical columns: not identifiable.
        let j2: Vec<Vec<f64>> = x.iter().map(|v| vec![*v, *v]).collect();
        assert!(standard_errors(&j2, &r).is_none());
        assert!(standard_errors(&j, &r[..1]).is_none(), "m <= n");
        let inv = invert(&[vec![4.0, 1.0], vec![1.0, 3.0]]).unwrap();
        assert!((inv[0][0] - 3.0 / 11.0).abs() < 1e-12 && (inv[0][1] + 1.0 / 11.0).abs() < 1e-12);
    }

    #[test]
    fn values_read_in_their_unit() {
        assert_eq!(in_unit("150"), Some(150.0));
        assert_eq!(in_unit("187500ps"), Some(187.5));
        assert_eq!(in_unit("708800000000b/s"), Some(708.8));
        assert_eq!(in_unit("auto"), None);
    }

    fn row(test: &str, memory: &str, metric: &str, stat: &str, unit: &str) -> Measurement {
        Measurement {
            source_file: "m.log".into(),
            line: 1,
            tool: "perftest".into(),
            test: test.into(),
            detail: String::new(),
            device: String::new(),
            memory: memory.into(),
            size_bytes: Some(64),
            iterations: Some(5000),
            metric: metric.into(),
            statistic: stat.into(),
            value: 10.0,
            unit: unit.into(),
            row: String::new(),
            column: String::new(),
        }
    }

    #[test]
    fn rows_the_model_cannot_emulate_are_skipped_with_a_note() {
        let mut nvb = row("h2d", "host+gpu", "bandwidth", "median", "GB/s");
        nvb.tool = "nvbandwidth".into();
        let mut bidir = row("ib_write_bw", "gpu", "bandwidth", "average", "MiB/s");
        bidir.detail = "bidirectional;post_list".into();
        let mut multi = row("ib_read_bw", "host", "bandwidth", "average", "Gb/s");
        multi.detail = "bidirectional;qps=4".into();
        multi.iterations = Some(4000);
        let rows = vec![
            row("ib_write_bw", "gpu", "bandwidth", "average", "Gb/s"),
            row("ib_write_bw", "gpu", "bandwidth", "peak", "Gb/s"),
            row("ib_send_lat", "host", "latency", "typical", "us"),
            row("ib_write_lat", "gpu", "latency", "typical", "us"),
            nvb,
            bidir,
            multi,
        ];
        let s = select(&rows, &Options::default(), "m.csv").unwrap();
        assert_eq!(s.targets.len(), 3);
        assert!(
            s.runs.iter().any(|k| matches!(
                k,
                RunKey::Perftest {
                    iters: 200,
                    qps: 4,
                    duplex: true,
                    ..
                }
            )),
            "-q 4 -b: 4000 printed iterations are 1000 per QP, capped by --iters"
        );
        assert!(
            matches!(s.runs[0], RunKey::Perftest { iters: 200, .. }),
            "capped by --iters"
        );
        assert!((s.targets[0].measured - 10.0 * 125e6).abs() < 1e-6);
        let notes = s.notes.join("\n");
        for n in ["nvbandwidth", "post_list", "refuses", "peak"] {
            assert!(notes.contains(n), "{n}: {notes}");
        }
        assert!(select(&rows[4..6], &Options::default(), "m.csv").is_err());
    }

    fn cell(test: &str, stat: &str, row: &str, column: &str, value: f64) -> Measurement {
        Measurement {
            tool: "nvbandwidth".into(),
            detail: "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)".into(),
            size_bytes: None,
            iterations: None,
            row: row.into(),
            column: column.into(),
            value,
            ..row_of(test, stat)
        }
    }

    fn row_of(test: &str, stat: &str) -> Measurement {
        row(test, "host+gpu", "bandwidth", stat, "GB/s")
    }

    /// nvbandwidth's host-device cells are fitted, one run per testcase whatever the column;
    /// SUM rows, device-to-device testcases and other rows of CPU are skipped with a note.
    #[test]
    fn nvbandwidth_cells_are_targets() {
        let rows = vec![
            cell("host_to_device_memcpy_ce", "median", "0", "0", 26.0),
            cell("host_to_device_memcpy_ce", "median", "0", "1", 25.0),
            cell(
                "device_to_host_bidirectional_memcpy_ce",
                "median",
                "0",
                "1",
                20.0,
            ),
            cell("host_to_device_memcpy_ce", "sum", "", "", 51.0),
            cell("device_to_device_memcpy_read_ce", "median", "0", "1", 200.0),
            cell("host_to_device_memcpy_sm", "median", "0", "0", 26.0),
            cell("host_to_device_memcpy_ce", "median", "1", "0", 26.0),
        ];
        let s = select(&rows, &Options::default(), "m.csv").unwrap();
        assert_eq!(s.targets.len(), 3);
        assert_eq!(
            s.runs,
            vec![
                RunKey::Nvbandwidth(Testcase::HostToDevice),
                RunKey::Nvbandwidth(Testcase::DeviceToHostBidir)
            ]
        );
        assert!(matches!(s.targets[1].figure, Figure::Nvb(1)));
        assert_eq!(s.targets[1].run, 0);
        assert!((s.targets[0].measured - 26e9).abs() < 1e-3);
        let notes = s.notes.join("\n");
        for n in [
            "SUM",
            "peer copies",
            "host_to_device_memcpy_sm",
            "CPU \"1\"",
        ] {
            assert!(notes.contains(n), "{n}: {notes}");
        }
        let only_mean = Options {
            stats: vec!["average".into()],
            ..Options::default()
        };
        assert!(
            select(&rows, &only_mean, "m.csv").is_err(),
            "median not fitted"
        );
    }

    /// The model's value of a cell is the emulation's figure for that GPU: at the config's own
    /// values, cells synthesised from `nvbandwidth::figures` have zero residual, and a cell 10%
    /// above it a residual of 1/1.1 - 1.
    #[test]
    fn nvbandwidth_residuals_come_from_the_emulation() {
        let cfg = crate::config::parse(crate::config::DEFAULT_TOML, "default").unwrap();
        let o = Options {
            nvb_buffer_mib: 4,
            nvb_samples: 1,
            nvb_loops: 4,
            ..Options::default()
        };
        let want = nvbandwidth::figures(&cfg, &o.nvbandwidth_args(Testcase::DeviceToHost)).unwrap();
        let rows = vec![
            cell("device_to_host_memcpy_ce", "median", "0", "0", want[0]),
            cell(
                "device_to_host_memcpy_ce",
                "median",
                "0",
                "2",
                want[2] * 1.1,
            ),
        ];
        let sel = select(&rows, &o, "m.csv").unwrap();
        let problem = Problem {
            doc: config::to_toml(&cfg).parse().unwrap(),
            params: Vec::new(),
            sel: &sel,
            si: None,
            opts: &o,
            ln_range: 4f64.ln(),
            evaluations: Default::default(),
        };
        let r = problem.residuals(&[]).unwrap();
        assert!(r[0].abs() < 1e-12, "{r:?}");
        assert!((r[1] - (1.0 / 1.1 - 1.0)).abs() < 1e-9, "{r:?}");
        // A column past the host's GPUs is an error, not a NaN fitted.
        let far = vec![cell("device_to_host_memcpy_ce", "median", "0", "9", 20.0)];
        let sel = select(&far, &o, "m.csv").unwrap();
        let problem = Problem {
            sel: &sel,
            ..problem
        };
        assert!(problem.residuals(&[]).is_err());
    }
}

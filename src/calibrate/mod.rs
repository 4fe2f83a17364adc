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
//! - A fitted parameter of one device (`machines[0].nics[0].tx_pipeline_ns`) is applied to
//!   every identical device of its machine (every device of the same kind whose parameters, as
//!   `gdrsim params` lists them, all equal the fitted device's: eight alike NICs move together)
//!   unless `this_device_only`, or the other device's key is fitted itself. The fit sees them
//!   move together too, whichever device the rows exercise.
//! - What it writes is checked before it is written: a fitted value that ended at a bound (the
//!   `--range` factor, or the parameter's own domain) is no fit but the sign that the rows want
//!   it further, and is refused unless `allow_bound`; the calibrated config must pass
//!   `gdrsim check --strict` (every value plausible: a 1.6 Tb/s NIC port is not), refused
//!   otherwise unless `allow_implausible`. Both refusals are input errors (exit 2) that name the
//!   key.
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

mod linalg;
mod problem;
mod render;
mod select;

pub use linalg::*;
use problem::*;
pub use render::render;
use select::*;

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
    /// Fit only the named device's parameter, not every identical device of its machine.
    pub this_device_only: bool,
    /// Write the config although a fitted value ended at a bound (flagged in the report).
    pub allow_bound: bool,
    /// Write the config although it fails `check --strict` (warnings in the report).
    pub allow_implausible: bool,
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
            this_device_only: false,
            allow_bound: false,
            allow_implausible: false,
        }
    }
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
    /// The same parameter of the identical devices of its machine, set to the same value.
    pub siblings: Vec<String>,
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
    /// What `check --strict` says of the calibrated config (empty: plausible); written only
    /// with `allow_implausible`.
    pub implausible: Vec<String>,
}

/// The correlation of two fitted parameters above which the report warns that the rows cannot
/// tell them apart.
pub const CORRELATED: f64 = 0.9;

fn show(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), String::from)
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
    let siblings: Vec<Vec<String>> = chosen
        .iter()
        .map(|p| {
            if o.this_device_only {
                return Vec::new();
            }
            identical_devices(&all, &p.key)
                .into_iter()
                .filter(|k| !chosen.iter().any(|c| c.key == *k))
                .collect()
        })
        .collect();
    let problem = Problem {
        doc: config::to_toml(cfg).parse()?,
        params: chosen,
        siblings,
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
    for ((p, v), sib) in problem.params.iter().zip(&values).zip(&problem.siblings) {
        params::set(&mut doc, &p.key, v.clone());
        for k in sib {
            params::set(&mut doc, k, v.clone());
        }
    }
    let fitted: Vec<Fitted> = problem
        .params
        .iter()
        .zip(&values)
        .enumerate()
        .map(|(k, (p, v))| {
            let start = in_unit(&p.value).unwrap_or(f64::NAN);
            // At the --range bound, or short of the factor asked for: the domain clamped it.
            let got = in_unit(&show(v)).map_or(1.0, |x| x / start);
            let clamped = (got / ln_f[k].exp() - 1.0).abs() > 1e-3;
            Fitted {
                param: p.clone(),
                start,
                factor: ln_f[k].exp(),
                rel_sd: sd.as_ref().map(|s| s[k]),
                at_bound: u[k].tanh().abs() > 0.999 || clamped,
                value: v.clone(),
                siblings: problem.siblings[k].clone(),
            }
        })
        .collect();
    if !o.allow_bound
        && let Some(f) = fitted.iter().find(|f| f.at_bound)
    {
        return Err(ConfigError::new(
            "calibration",
            f.param.key.clone(),
            format!(
                "a fitted value inside its range (the rows want it beyond its bound: a factor \
                 of {}, --range {}, or the parameter's own limit; widen --range, fit other \
                 parameters, or write it anyway with --allow-bound)",
                sig(f.factor),
                o.range
            ),
            format!(
                "{} {} (from {} {})",
                show(&f.value),
                f.param.unit,
                f.start,
                f.param.unit
            ),
        )
        .into());
    }
    let text = toml::to_string(&doc)?;
    // `check --strict` on what is about to be written: it parses and validates, and every value
    // is plausible.
    let written = config::parse(&text, "calibrated config").map_err(|e| {
        anyhow::Error::from(e).context("the calibrated config is not valid; nothing written")
    })?;
    let warnings = config::plausible::warnings(&written);
    if !o.allow_implausible
        && let Some(w) = warnings.first()
    {
        let mut e = w.clone().into_error("calibrated config");
        e.expected = format!(
            "{} (nothing written; --allow-implausible writes it)",
            e.expected
        );
        return Err(e.into());
    }
    Ok(Report {
        fitted,
        rows: sel.targets.len(),
        notes: sel.notes.clone(),
        rms_before: rms(&r0),
        rms_after: rms(&r1),
        evaluations: problem
            .evaluations
            .load(std::sync::atomic::Ordering::Relaxed),
        toml: text,
        correlated,
        implausible: warnings.iter().map(|w| w.to_string()).collect(),
    })
}

/// A factor in three significant figures.
fn sig(f: f64) -> String {
    format!("{f:.3}")
}

/// The same parameter as `key` of every other device of its kind on its machine whose
/// parameters (every key `gdrsim params` lists under it) all equal those of `key`'s device:
/// `machines[0].nics[3].tx_pipeline_ns` for `machines[0].nics[0].tx_pipeline_ns` when nic3 is
/// nic0's twin. None for a key of no indexed device (`machines[0].cpu.post_ns`).
pub fn identical_devices(all: &[ParamValue], key: &str) -> Vec<String> {
    let Some(close) = key.rfind("].") else {
        return Vec::new();
    };
    let (device, param) = (&key[..=close], &key[close + 2..]);
    let Some(open) = device.rfind('[') else {
        return Vec::new();
    };
    let kind = &device[..open];
    // A device of a machine, not a machine: `machines[M].<kind>[I]`.
    if !kind.starts_with("machines[") || !kind.contains("].") {
        return Vec::new();
    }
    let params_of = |dev: &str| -> Vec<(&str, &str)> {
        let mut v: Vec<(&str, &str)> = all
            .iter()
            .filter_map(|p| {
                let rest = p.key.strip_prefix(dev)?.strip_prefix('.')?;
                Some((rest, p.value.as_str()))
            })
            .collect();
        v.sort_unstable();
        v
    };
    let mine = params_of(device);
    let mut devices: Vec<&str> = Vec::new();
    for p in all {
        let Some(rest) = p.key.strip_prefix(kind).filter(|r| r.starts_with('[')) else {
            continue;
        };
        let Some(end) = rest.find(']') else { continue };
        let dev = &p.key[..kind.len() + end + 1];
        if dev != device && !devices.contains(&dev) {
            devices.push(dev);
        }
    }
    devices
        .into_iter()
        .filter(|d| params_of(d) == mine)
        .map(|d| format!("{d}.{param}"))
        .filter(|k| all.iter().any(|p| p.key == *k))
        .collect()
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

    /// A fitted NIC parameter reaches every identical NIC of the machine (dgx-h100: eight
    /// alike), not a NIC that differs in any parameter, and no key of a device-less table; the
    /// fit's configs move them together.
    #[test]
    fn a_fit_applies_to_every_identical_device() {
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/dgx-h100.toml"),
        )
        .unwrap();
        let cfg = crate::config::parse(&text, "dgx-h100").unwrap();
        let all = params::list(&cfg);
        let key = "machines[0].nics[0].tx_pipeline_ns";
        let twins = identical_devices(&all, key);
        let want: Vec<String> = (1..8)
            .map(|i| format!("machines[0].nics[{i}].tx_pipeline_ns"))
            .collect();
        assert_eq!(twins, want);
        assert!(identical_devices(&all, "machines[0].cpu.post_ns").is_empty());
        // nic3 with another receive pipeline is no twin of nic0.
        let mut doc: Table = config::to_toml(&cfg).parse().unwrap();
        params::set(
            &mut doc,
            "machines[0].nics[3].rx_pipeline_ns",
            Value::Integer(151),
        )
        .unwrap();
        let odd = crate::config::parse(&toml::to_string(&doc).unwrap(), "odd").unwrap();
        let twins = identical_devices(&params::list(&odd), key);
        assert_eq!(twins.len(), 6);
        assert!(!twins.iter().any(|k| k.contains("nics[3]")), "{twins:?}");
        // The problem's config sets the twins to the fitted value.
        let o = Options::default();
        let sel = Selection {
            runs: Vec::new(),
            targets: Vec::new(),
            notes: Vec::new(),
        };
        let problem = Problem {
            doc: config::to_toml(&cfg).parse().unwrap(),
            params: vec![all.iter().find(|p| p.key == key).unwrap().clone()],
            siblings: vec![want.clone()],
            sel: &sel,
            si: None,
            opts: &o,
            ln_range: 4f64.ln(),
            evaluations: Default::default(),
        };
        let (c, values) = problem.config(&[2f64.ln()]).unwrap();
        assert_eq!(values.len(), 1);
        let m = &c.hosts[0].machine;
        assert!(
            m.nics
                .iter()
                .all(|n| n.tx_pipeline == m.nics[0].tx_pipeline)
        );
        assert_eq!(m.nics[0].tx_pipeline, 300 * crate::units::PS_PER_NS);
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
            siblings: Vec::new(),
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

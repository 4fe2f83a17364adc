//! `gdrsim validate [--set FILE]`: the project's validation set (data/validation.toml, embedded)
//! run through the model: per row the published figure, the model's, the error and whether it
//! is within the row's tolerance (with, for a row that misses, why), then the median absolute
//! error. The command fails when a row marked `passes` does not, so CI catches a change that
//! breaks agreement with a measurement; a row marked `passes = false` is an expected miss, a
//! known gap of the model that its `explanation` names.
//!
//! A row reproduces its figure with one of three tools, on the embedded default machine or on
//! one of the embedded study configs ([`CONFIGS`]), with parameter overrides where the measured
//! hardware differs (a PCIe generation): `perftest` (the perftest emulation), `nvbandwidth`
//! (the copy-engine testcases' method: streamed copies, launch costs outside the timed
//! interval, the median of 3 samples of 16 copies; GPU 0 of the first host) and `cudaMemcpy`
//! (blocking host-device copies one after another, each paying the copy engine's launch and
//! completion costs, as a timed loop of `cudaMemcpy` calls does; GPU 0 of the first host).

use std::path::Path;

use anyhow::Result;
use serde::Deserialize;

use crate::config::limits::MAX_MESSAGE;
use crate::config::{self, ConfigError, params};
use crate::nccl_tests;
use crate::nvbandwidth::{self, Testcase, measure};
use crate::perftest::{self, Row};
use crate::scenario;
use crate::study;

/// The configs a row may name (`config`), embedded so that `validate` runs anywhere.
pub const CONFIGS: &[(&str, &str)] = &[
    ("configs/default.toml", config::DEFAULT_TOML),
    (
        "configs/dgx-a100.toml",
        include_str!("../configs/dgx-a100.toml"),
    ),
    ("configs/gh200.toml", include_str!("../configs/gh200.toml")),
    (
        "configs/dgx-h100.toml",
        include_str!("../configs/dgx-h100.toml"),
    ),
    (
        "configs/hgx-a100-4gpu.toml",
        include_str!("../configs/hgx-a100-4gpu.toml"),
    ),
    (
        "configs/collectives.toml",
        include_str!("../configs/collectives.toml"),
    ),
    (
        "configs/collectives-a100.toml",
        include_str!("../configs/collectives-a100.toml"),
    ),
    (
        "configs/client-cpu.toml",
        include_str!("../configs/client-cpu.toml"),
    ),
];

/// The embedded validation set.
pub const SET: &str = include_str!("../data/validation.toml");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Set {
    row: Vec<Entry>,
}

/// One published figure and how to reproduce it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The row's id in docs/references.md ("A21").
    pub id: String,
    /// What was measured, for the table ("GPUDirect ib_write_bw, 8 MB").
    pub what: String,
    /// How the measured hardware differs from the modelled machine.
    pub note: String,
    /// How the figure is reproduced: `perftest` (the default), `nvbandwidth`, `cudaMemcpy` or
    /// `p2pBandwidthLatencyTest` (CUDA's sample, the P2P=Enabled cell from GPU 0 to GPU 1).
    #[serde(default = "perftest_tool")]
    pub tool: String,
    /// The config modelled, one of [`CONFIGS`] (default: the embedded default machine).
    #[serde(default)]
    pub config: Option<String>,
    /// perftest: the config's scenario to run on, by name (default: its first).
    #[serde(default)]
    pub scenario: Option<String>,
    /// Parameters set on that config before it is loaded (`gdrsim params` keys, or any key of
    /// the config file such as `machines[0].links[2].generation`).
    #[serde(default)]
    pub overrides: toml::Table,
    /// perftest: the program emulated ("ib_write_bw", "ib_read_lat", ...; see
    /// [`crate::perftest::Test`]); nvbandwidth: the testcase's key; cudaMemcpy: `h2d` or `d2h`;
    /// p2pBandwidthLatencyTest: `unidirectional` or `bidirectional`.
    pub test: String,
    /// nccl-tests: GPUs per host (its `-g`; default every GPU of the smallest host).
    #[serde(default)]
    pub gpus: Option<u32>,
    /// nccl-tests: the config's hosts taking part, by name (default: every host).
    #[serde(default)]
    pub hosts: Option<Vec<String>>,
    /// Whether the buffers are in GPU memory (perftest's `--use_cuda`).
    #[serde(default)]
    pub use_cuda: bool,
    /// Message or copy size, in bytes (for nvbandwidth a whole number of MiB, its `-b`).
    pub size: u64,
    /// Iterations (perftest's `-n`, its default when absent; cudaMemcpy: copies timed,
    /// default 10).
    pub iters: Option<u32>,
    /// `bw_average_gbits`, `bw_peak_gbits`, `t_typical_us` or `t_avg_us` (perftest);
    /// `gbytes_per_s` (nvbandwidth, cudaMemcpy, p2pBandwidthLatencyTest: GB/s, 1e9 bytes per
    /// second).
    pub figure: String,
    /// The published figure, in the unit of `figure` (Gb/s, GB/s or microseconds).
    pub published: f64,
    /// Relative error accepted.
    pub tolerance: f64,
    /// Whether the row passed when it was added: it must keep passing. False marks an expected
    /// miss (a known gap of the model), which needs an `explanation`.
    pub passes: bool,
    /// Why the model misses the row (printed beside a row that misses).
    #[serde(default)]
    pub explanation: Option<String>,
}

fn perftest_tool() -> String {
    "perftest".into()
}

/// One row's outcome.
#[derive(Debug)]
pub struct Outcome {
    /// The row run.
    pub entry: Entry,
    /// The model's figure, in the unit of the row's `figure`.
    pub model: f64,
    /// Relative error of the model against the published figure (model / published - 1).
    pub error: f64,
}

impl Outcome {
    /// Whether the error is within the row's tolerance.
    pub fn pass(&self) -> bool {
        self.error.abs() <= self.entry.tolerance
    }
}

/// The config of one entry: the named one (default: the embedded default) with its overrides.
fn config_of(e: &Entry, file: &str) -> Result<config::Config> {
    let (text, name) = text_of(e, file)?;
    Ok(config::parse(&text, &name)?)
}

/// The text of one entry's config, with its overrides, and the name its errors give it.
fn text_of(e: &Entry, file: &str) -> Result<(String, String)> {
    let name = e.config.as_deref().unwrap_or("configs/default.toml");
    let Some((_, text)) = CONFIGS.iter().find(|(n, _)| *n == name) else {
        let names: Vec<&str> = CONFIGS.iter().map(|(n, _)| *n).collect();
        return Err(ConfigError::new(
            file,
            format!("row {} config", e.id),
            format!("one of the embedded configs ({})", names.join(", ")),
            format!("{name:?}"),
        )
        .into());
    };
    if e.overrides.is_empty() {
        return Ok((text.to_string(), name.to_string()));
    }
    let mut doc: toml::Table = text.parse()?;
    for (k, v) in &e.overrides {
        params::set(&mut doc, k, v.clone()).ok_or_else(|| {
            ConfigError::new(
                file,
                format!("row {} overrides", e.id),
                format!("keys of {name}"),
                format!("{k:?}"),
            )
        })?;
    }
    Ok((
        toml::to_string(&doc)?,
        format!("{name} with row {}'s overrides", e.id),
    ))
}

/// An nccl-tests row's run, prepared: its program at its size over the row's hosts (the
/// config's others left out) with `gpus` GPUs each, NCCL's defaults (no environment read).
fn nccl_prepared(e: &Entry, file: &str) -> Result<nccl_tests::Prepared> {
    let (text, name) = text_of(e, file)?;
    let mut doc: toml::Table = text.parse()?;
    if let Some(keep) = &e.hosts {
        let Some(toml::Value::Array(hosts)) = doc.get_mut("hosts") else {
            anyhow::bail!("{name} has no [[hosts]]");
        };
        for h in keep {
            let named = |v: &toml::Value| v.get("name").and_then(|n| n.as_str()) == Some(h);
            if !hosts.iter().any(named) {
                return Err(ConfigError::new(
                    file,
                    format!("row {} hosts", e.id),
                    format!("hosts of {name}"),
                    format!("{h:?}"),
                )
                .into());
            }
        }
        hosts.retain(|v| {
            v.get("name")
                .and_then(|n| n.as_str())
                .is_some_and(|n| keep.iter().any(|k| k == n))
        });
    }
    let args = nccl_tests::Args {
        test: e.test.clone(),
        min_bytes: Some(e.size.to_string()),
        max_bytes: Some(e.size.to_string()),
        gpus: e.gpus.map(|g| g.to_string()),
        ..Default::default()
    };
    nccl_tests::prepare_text((&toml::to_string(&doc)?, &name), &args)
}

/// The GB/s of GPU 0 of the config's first host for a copy row (nvbandwidth, cudaMemcpy; for
/// device-to-device testcases and p2pBandwidthLatencyTest, from GPU 0 to GPU 1).
fn copy_model(cfg: &config::Config, e: &Entry, file: &str) -> Result<f64> {
    let bad = |key: &str, expected: &str, found: String| {
        ConfigError::new(file, format!("row {} {key}", e.id), expected, found)
    };
    if e.figure != "gbytes_per_s" {
        return Err(bad("figure", "gbytes_per_s", format!("{:?}", e.figure)).into());
    }
    if e.tool == "nvbandwidth" {
        let tc = Testcase::parse(&e.test).map_err(|x| bad("test", &x.expected, x.found))?;
        let a = nvbandwidth_args(e, file)?;
        if tc.is_peer() {
            let cells = nvbandwidth::peer_figures(cfg, &a)?;
            return cells
                .first()
                .and_then(|r| r.get(1).copied().flatten())
                .ok_or_else(|| {
                    bad(
                        "config",
                        "a host whose GPU 0 has peer access to its GPU 1",
                        "none".into(),
                    )
                    .into()
                });
        }
        let row = nvbandwidth::figures(cfg, &a)?;
        return row
            .first()
            .copied()
            .ok_or_else(|| bad("config", "a host with a GPU", "none".into()).into());
    }
    if e.tool == "p2pBandwidthLatencyTest" {
        let both = match e.test.as_str() {
            "unidirectional" => false,
            "bidirectional" => true,
            t => {
                let expected = "unidirectional or bidirectional";
                return Err(bad("test", expected, format!("{t:?}")).into());
            }
        };
        return crate::p2p_matrix::first_pair(cfg, both, e.size);
    }
    let (stream, copies) = memcpy_stream(e, file)?;
    let topo = scenario::topology(cfg);
    let t = measure::sample(cfg, &topo, 0, &[stream], copies, cfg.seed)?;
    Ok(e.size as f64 * f64::from(copies) / (t as f64 * 1e-12) * 1e-9)
}

/// The nvbandwidth run of an nvbandwidth row: its testcase with a buffer of the row's size.
fn nvbandwidth_args(e: &Entry, file: &str) -> Result<nvbandwidth::Args> {
    let bad = |key: &str, expected: &str, found: String| {
        ConfigError::new(file, format!("row {} {key}", e.id), expected, found)
    };
    let tc = Testcase::parse(&e.test).map_err(|x| bad("test", &x.expected, x.found))?;
    if e.size == 0 || !e.size.is_multiple_of(1 << 20) {
        return Err(bad("size", "a whole number of MiB", e.size.to_string()).into());
    }
    Ok(nvbandwidth::Args {
        buffer_mib: e.size >> 20,
        ..nvbandwidth::Args::new(tc)
    })
}

/// The copy of a cudaMemcpy row (GPU 0, its direction, its size) and how many follow one
/// another (`iters`, default 10).
fn memcpy_stream(e: &Entry, file: &str) -> Result<(measure::Stream, u32)> {
    let h2d = match e.test.as_str() {
        "h2d" => true,
        "d2h" => false,
        t => {
            let found = format!("{t:?}");
            let err = ConfigError::new(file, format!("row {} test", e.id), "h2d or d2h", found);
            return Err(err.into());
        }
    };
    let stream = measure::Stream {
        gpu: 0,
        h2d,
        size: e.size,
    };
    Ok((stream, e.iters.unwrap_or(10).max(1)))
}

/// The perftest run of a perftest row: its test at its size, one QP one way.
fn perftest_args(e: &Entry, file: &str) -> Result<perftest::Args> {
    let test = perftest::Test::parse(&e.test)
        .map_err(|x| ConfigError::new(file, format!("row {} test", e.id), x.expected, x.found))?;
    Ok(perftest::Args {
        test,
        scenario: e.scenario.clone(),
        sizes: vec![e.size],
        iters: e.iters,
        tx_depth: None,
        qps: 1,
        duplex: false,
        use_cuda: e.use_cuda,
        report_gbits: true,
        cq_mod: None,
        run_all: false,
    })
}

/// The fabric runs row `e` makes on `cfg`, each named with its estimated events and memory,
/// for the cost gate. A row whose tool is not known makes none here (running it says why).
fn row_runs(cfg: &config::Config, e: &Entry, file: &str) -> Result<Vec<(String, u64, u64)>> {
    let name = |what: &str| format!("row {} {what}", e.id);
    Ok(match e.tool.as_str() {
        "perftest" => perftest::runs(cfg, &perftest_args(e, file)?)?
            .into_iter()
            .map(|(at, events, memory)| (name(&format!("{} {at}", e.test)), events, memory))
            .collect(),
        "nvbandwidth" => nvbandwidth::runs(cfg, &nvbandwidth_args(e, file)?)?
            .into_iter()
            .map(|(at, events, memory)| (name(&at), events, memory))
            .collect(),
        "p2pBandwidthLatencyTest" => {
            let both = e.test == "bidirectional";
            let (events, memory) = crate::p2p_matrix::first_pair_run(cfg, both, e.size)?;
            vec![(name(&e.test), events, memory)]
        }
        "nccl-tests" => {
            let w = nccl_tests::work(&nccl_prepared(e, file)?);
            vec![(name(&e.test), w.events, w.memory)]
        }
        "cudaMemcpy" => {
            let (stream, copies) = memcpy_stream(e, file)?;
            let topo = scenario::topology(cfg);
            let plans = measure::plans(&topo, 0, &[stream])?;
            let total = u64::from(measure::WARMUP_COUNT) + u64::from(copies);
            let flows: Vec<(&crate::plan::Plan, u64)> = plans.iter().map(|p| (p, total)).collect();
            let (events, memory) = scenario::cost::fabric_run(cfg, &flows, 1);
            vec![(name(&e.test), events, memory)]
        }
        _ => Vec::new(),
    })
}

/// The model's figure for one entry.
fn model(cfg: &config::Config, e: &Entry, file: &str) -> Result<f64> {
    match e.tool.as_str() {
        "perftest" => {}
        "nvbandwidth" | "cudaMemcpy" | "p2pBandwidthLatencyTest" => {
            return copy_model(cfg, e, file);
        }
        "nccl-tests" => return nccl_model(e, file),
        t => {
            return Err(ConfigError::new(
                file,
                format!("row {} tool", e.id),
                "perftest, nvbandwidth, cudaMemcpy, p2pBandwidthLatencyTest or nccl-tests",
                format!("{t:?}"),
            )
            .into());
        }
    }
    let rows = perftest::figures(cfg, &perftest_args(e, file)?)?;
    let bad = || {
        ConfigError::new(
            file,
            format!("row {} figure", e.id),
            "a figure of its test (bw_average_gbits, bw_peak_gbits, t_typical_us, t_avg_us)",
            format!("{:?}", e.figure),
        )
    };
    Ok(match (rows.first(), e.figure.as_str()) {
        (Some(Row::Bw { avg, .. }), "bw_average_gbits") => avg * 8.0 / 1e9,
        (Some(Row::Bw { peak, .. }), "bw_peak_gbits") => peak * 8.0 / 1e9,
        (Some(Row::Lat { f, .. }), "t_typical_us") => f[2],
        (Some(Row::Lat { f, .. }), "t_avg_us") => f[3],
        _ => return Err(bad().into()),
    })
}

/// An nccl-tests row's figure: `busbw_gbps`, `algbw_gbps` (GB/s) or `time_us` of its size.
fn nccl_model(e: &Entry, file: &str) -> Result<f64> {
    let p = nccl_prepared(e, file)?;
    let (_, rows) = nccl_tests::simulate(&p, true)?;
    let Some(f) = rows.first().map(|r| r.figures) else {
        anyhow::bail!("row {}: no size simulated", e.id);
    };
    Ok(match e.figure.as_str() {
        "busbw_gbps" => f.busbw,
        "algbw_gbps" => f.algbw,
        "time_us" => f.time_us,
        other => {
            return Err(ConfigError::new(
                file,
                format!("row {} figure", e.id),
                "busbw_gbps, algbw_gbps or time_us (nccl-tests)",
                format!("{other:?}"),
            )
            .into());
        }
    })
}

/// Checks what a row says of itself, before any row runs: an expected miss has its
/// explanation, the tolerance and published figure are numbers a comparison can use, and the
/// size is one the model simulates (a size near 2^64 would overflow the emulation's
/// arithmetic).
fn check_entry(e: &Entry, file: &str) -> Result<(), ConfigError> {
    let bad = |key: &str, expected: &str, found: String| {
        ConfigError::new(file, format!("row {} {key}", e.id), expected, found)
    };
    if !e.passes && e.explanation.is_none() {
        return Err(bad(
            "explanation",
            "why the model misses a row marked passes = false",
            "none".into(),
        ));
    }
    // A NaN tolerance fails every row and an infinite one passes every row: neither judges.
    if !(e.tolerance.is_finite() && e.tolerance >= 0.0) {
        return Err(bad(
            "tolerance",
            "a relative error of at least 0, a finite number (0.05 for 5%)",
            e.tolerance.to_string(),
        ));
    }
    // The error divides by it.
    if !(e.published.is_finite() && e.published != 0.0) {
        return Err(bad(
            "published",
            "the published figure, a finite nonzero number",
            e.published.to_string(),
        ));
    }
    if e.size > MAX_MESSAGE {
        return Err(bad(
            "size",
            "a size up to 16 GiB (the model's largest message), in bytes",
            e.size.to_string(),
        ));
    }
    Ok(())
}

/// Runs the set (the embedded one, or `set`), once every row is estimated and the whole is
/// within `limits` (the rows run one after another).
pub fn run(set: Option<&Path>, limits: &study::Limits) -> Result<Vec<Outcome>> {
    let (text, file) = match set {
        Some(p) => (
            std::fs::read_to_string(p).map_err(|e| {
                ConfigError::new(
                    &p.display().to_string(),
                    "",
                    "a readable validation set",
                    format!("an I/O error: {e}"),
                )
            })?,
            p.display().to_string(),
        ),
        None => (
            SET.to_string(),
            "data/validation.toml (embedded)".to_string(),
        ),
    };
    let set: Set = toml::from_str(&text).map_err(|e| {
        ConfigError::new(
            &file,
            "",
            "a validation set ([[row]] tables)",
            e.message().to_string(),
        )
    })?;
    // Every row is checked before any runs: a bad row late in the set is refused at once.
    for entry in &set.row {
        check_entry(entry, &file)?;
    }
    let mut runs = Vec::new();
    for entry in &set.row {
        runs.extend(row_runs(&config_of(entry, &file)?, entry, &file)?);
    }
    let rows = set.row.len();
    let over = format!("{rows} row{}", if rows == 1 { "" } else { "s" });
    let cut = "fewer rows, or rows of fewer iterations or smaller sizes";
    let work = study::runs_work("a validation set", over, &runs, cut, 1);
    study::admit(&file, &work, limits)?;
    set.row
        .into_iter()
        .map(|entry| {
            let cfg = config_of(&entry, &file)?;
            let model = model(&cfg, &entry, &file)?;
            let error = model / entry.published - 1.0;
            Ok(Outcome {
                entry,
                model,
                error,
            })
        })
        .collect()
}

/// The table, the median absolute error, and the rows that stopped passing.
pub fn render(rows: &[Outcome]) -> (String, Vec<String>) {
    let mut s = format!(
        "{:<5} {:<42} {:>11} {:>11} {:>8} {:>6}  pass\n",
        "row", "what", "published", "model", "error", "tol."
    );
    let mut broken = Vec::new();
    for r in rows {
        let e = &r.entry;
        s.push_str(&format!(
            "{:<5} {:<42} {:>11.3} {:>11.3} {:>+7.1}% {:>5.0}%  {}\n",
            e.id,
            e.what,
            e.published,
            r.model,
            r.error * 100.0,
            e.tolerance * 100.0,
            if r.pass() { "yes" } else { "NO" }
        ));
        s.push_str(&format!("      ({}: {})\n", e.figure, e.note));
        if let (false, Some(why)) = (r.pass(), &e.explanation) {
            s.push_str(&format!("      miss: {why}\n"));
        }
        if e.passes && !r.pass() {
            broken.push(e.id.clone());
        }
    }
    let mut errs: Vec<f64> = rows.iter().map(|r| r.error.abs()).collect();
    errs.sort_by(f64::total_cmp);
    let median = match errs.len() {
        0 => 0.0,
        n if n % 2 == 1 => errs[n / 2],
        n => (errs[n / 2 - 1] + errs[n / 2]) / 2.0,
    };
    s.push_str(&format!(
        "\n{} rows, {} within tolerance ({} expected misses); median absolute error {:.1}%\n",
        rows.len(),
        rows.iter().filter(|r| r.pass()).count(),
        rows.iter().filter(|r| !r.entry.passes).count(),
        median * 100.0
    ));
    (s, broken)
}

#[cfg(test)]
mod tests {
    /// The embedded set parses and names rows of the project's references.
    #[test]
    fn the_set_cites_reference_rows() {
        let set: super::Set = toml::from_str(super::SET).unwrap();
        let refs = include_str!("../docs/references.md");
        assert!(set.row.len() >= 3);
        for r in &set.row {
            assert!(
                refs.contains(&format!("| {} |", r.id)),
                "{} is not in docs/references.md",
                r.id
            );
            assert!(r.tolerance > 0.0 && r.tolerance < 1.0);
            assert!(
                r.passes || r.explanation.is_some(),
                "{}: an expected miss needs its explanation",
                r.id
            );
        }
    }

    fn entry(extra: &str) -> super::Entry {
        let text = format!(
            "id = \"D8\"\nwhat = \"w\"\nnote = \"n\"\ntool = \"nvbandwidth\"\n\
             config = \"configs/dgx-a100.toml\"\ntest = \"host_to_device_memcpy_ce\"\n\
             size = 4194304\nfigure = \"gbytes_per_s\"\npublished = 1.0\ntolerance = 0.1\n\
             passes = true\n{extra}"
        );
        toml::from_str(&text).unwrap()
    }

    fn figure(e: &super::Entry) -> anyhow::Result<f64> {
        let cfg = super::config_of(e, "set")?;
        super::model(&cfg, e, "set")
    }

    /// An nccl-tests row runs its program at its size over the hosts it names: one node's
    /// all-reduce is NVLink's (no network), two nodes' is bound by the NICs, and its busbw is
    /// below one node's; a host the config lacks is named.
    #[test]
    fn nccl_tests_rows_run_on_the_hosts_they_name() {
        let row = |hosts: &str| -> super::Entry {
            toml::from_str(&format!(
                "id = \"N10\"\nwhat = \"w\"\nnote = \"n\"\ntool = \"nccl-tests\"\n\
                 config = \"configs/collectives.toml\"\n{hosts}test = \"all_reduce_perf\"\n\
                 gpus = 2\nsize = 16777216\nfigure = \"busbw_gbps\"\npublished = 1.0\n\
                 tolerance = 0.1\npasses = true\n"
            ))
            .unwrap()
        };
        let one = figure(&row("hosts = [\"n0\"]\n")).unwrap();
        let two = figure(&row("")).unwrap();
        assert!(one > two && two > 0.0, "one node {one}, two {two}");
        let e = figure(&row("hosts = [\"n9\"]\n")).unwrap_err().to_string();
        assert!(e.contains("row N10 hosts") && e.contains("\"n9\""), "{e}");
    }

    /// A copy row runs on the config it names, with its overrides: the dgx-a100 GPU0 at Gen4
    /// x16 copies near the Gen4 read ceiling (C5: 26.37 GB/s), at Gen3 near half of it; a
    /// cudaMemcpy row pays the per-call costs (launch and sync), where nvbandwidth's streamed
    /// copies pay the copy engine's own cost per copy, so it is slower: by the sync, 0.4 us in
    /// about 160 us for 4 MiB on an A100 (its launch is the copy engine's cost, row L6).
    #[test]
    fn copy_rows_follow_their_config_and_overrides() {
        let gen4 = figure(&entry("")).unwrap();
        assert!(gen4 > 24.0 && gen4 < 26.37, "{gen4}");
        let links: Vec<String> = (0..6)
            .map(|i| format!("\"machines[0].links[{i}].generation\" = 3"))
            .collect();
        let gen3 = figure(&entry(&format!("overrides = {{ {} }}", links.join(", ")))).unwrap();
        assert!(gen3 > 12.0 && gen3 < 13.18, "{gen3}");
        let mut calls = entry("");
        calls.tool = "cudaMemcpy".into();
        calls.test = "h2d".into();
        let blocking = figure(&calls).unwrap();
        assert!(
            blocking < gen4 * 0.999 && blocking > gen4 * 0.99,
            "cudaMemcpy {blocking}, streamed {gen4}"
        );
    }

    /// Issue #27 item 15: a tolerance that is NaN (no row passes) or infinite (every row
    /// passes), or negative, is refused before any row runs, as is a published figure the
    /// error cannot divide by; through a set file, `tolerance = nan` as TOML writes it.
    #[test]
    fn tolerances_and_figures_that_cannot_judge_are_refused() {
        for t in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.1] {
            let mut e = entry("");
            e.tolerance = t;
            let m = super::check_entry(&e, "set").unwrap_err().to_string();
            assert!(
                m.contains("key `row D8 tolerance`: expected a relative error"),
                "{m}"
            );
        }
        for p in [f64::NAN, f64::INFINITY, 0.0] {
            let mut e = entry("");
            e.published = p;
            let m = super::check_entry(&e, "set").unwrap_err().to_string();
            assert!(m.contains("key `row D8 published`"), "{m}");
        }
        assert!(super::check_entry(&entry(""), "set").is_ok());
        let dir = std::env::temp_dir().join(format!("gdrsim-tolerance-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let set = dir.join("set.toml");
        let row = super::SET.split("[[row]]").nth(1).unwrap();
        let nan: Vec<&str> = row
            .lines()
            .map(|l| {
                if l.starts_with("tolerance = ") {
                    "tolerance = nan"
                } else {
                    l
                }
            })
            .collect();
        assert!(nan.contains(&"tolerance = nan"), "{row}");
        std::fs::write(&set, format!("[[row]]{}\n", nan.join("\n"))).unwrap();
        let m = super::run(Some(&set), &Default::default())
            .unwrap_err()
            .to_string();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(m.contains("tolerance") && m.contains("found NaN"), "{m}");
    }

    /// Bad rows are named: an unknown config, a key the config lacks, a tool, a size that is
    /// not whole MiB for nvbandwidth, and an expected miss without its explanation.
    #[test]
    fn bad_rows_are_refused_by_name() {
        let mut e = entry("");
        e.config = Some("configs/nope.toml".into());
        let m = figure(&e).unwrap_err().to_string();
        assert!(m.contains("row D8 config") && m.contains("dgx-a100"), "{m}");
        let e = entry("overrides = { \"machines[5].pcie.mps_bytes\" = 128 }");
        assert!(figure(&e).unwrap_err().to_string().contains("overrides"));
        let mut e = entry("");
        e.tool = "iperf".into();
        assert!(figure(&e).unwrap_err().to_string().contains("tool"));
        let mut e = entry("");
        e.size = 1000;
        assert!(figure(&e).unwrap_err().to_string().contains("MiB"));
        let dir = std::env::temp_dir().join(format!("gdrsim-validate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let set = dir.join("set.toml");
        let row = super::SET
            .split("[[row]]")
            .skip(1)
            .find(|r| r.contains("passes = false"))
            .unwrap();
        let no_why: String = row
            .lines()
            .filter(|l| !l.starts_with("explanation"))
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(&set, format!("[[row]]{no_why}")).unwrap();
        let m = super::run(Some(&set), &Default::default())
            .unwrap_err()
            .to_string();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(m.contains("explanation"), "{m}");
    }
}

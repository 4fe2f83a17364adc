//! `gdrsim validate [--set FILE]`: the project's validation set (data/validation.toml, embedded)
//! run through the perftest emulation on the default machine: per row the published figure,
//! the model's, the error and whether it is within the row's tolerance, then the median
//! absolute error. The command fails when a row marked `passes` does not, so CI catches a
//! change that breaks agreement with a measurement.

use std::path::Path;

use anyhow::Result;
use serde::Deserialize;

use crate::config::{self, ConfigError};
use crate::perftest::{self, Row};

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
    /// How the measured hardware differs from the modelled default machine.
    pub note: String,
    /// The perftest program emulated ("ib_write_bw", "ib_read_lat", ...; see
    /// [`crate::perftest::Test`]).
    pub test: String,
    /// Whether the buffers are in GPU memory (perftest's `--use_cuda`).
    pub use_cuda: bool,
    /// Message size, in bytes.
    pub size: u64,
    /// Iterations (perftest's `-n`); its default when absent.
    pub iters: Option<u32>,
    /// `bw_average_gbits`, `bw_peak_gbits`, `t_typical_us` or `t_avg_us`.
    pub figure: String,
    /// The published figure, in the unit of `figure` (Gb/s or microseconds).
    pub published: f64,
    /// Relative error accepted.
    pub tolerance: f64,
    /// Whether the row passed when it was added: it must keep passing.
    pub passes: bool,
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

/// The model's figure for one entry.
fn model(cfg: &config::Config, e: &Entry, file: &str) -> Result<f64> {
    let test = perftest::Test::parse(&e.test)
        .map_err(|x| ConfigError::new(file, format!("row {} test", e.id), x.expected, x.found))?;
    let args = perftest::Args {
        test,
        scenario: None,
        sizes: vec![e.size],
        iters: e.iters,
        tx_depth: None,
        use_cuda: e.use_cuda,
        report_gbits: true,
    };
    let rows = perftest::figures(cfg, &args)?;
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

/// Runs the set (the embedded one, or `set`).
pub fn run(set: Option<&Path>) -> Result<Vec<Outcome>> {
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
    let cfg = config::parse(config::DEFAULT_TOML, config::DEFAULT_NAME)?;
    set.row
        .into_iter()
        .map(|entry| {
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
        "\n{} rows, {} within tolerance; median absolute error {:.1}%\n",
        rows.len(),
        rows.iter().filter(|r| r.pass()).count(),
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
        }
    }
}

//! `gdrsim run CONFIG --measured FILE`: the rows of a measured-data CSV matched to the run's
//! results points, checked before any simulation ([`prepare`]) and given the model's figures
//! after it ([`attach`]).
//!
//! A measured row belongs to the point of the chosen scenario (`--measured-scenario`, default
//! the config's first; the CSV has no scenario column) with
//! - path: memory `gpu` -> `gpudirect` (perftest `--use_cuda`: both buffers in GPU memory, the
//!   NIC reading and writing them), `host` -> `host`;
//! - op: from the perftest program, as `gdrsim perftest` emulates it: `ib_write_*` -> `write`
//!   (perftest's RDMA Write; its `--write_with_imm`, detail `write_imm`, -> `write_imm`),
//!   `ib_read_*` -> `read`, `ib_send_*` -> `send`;
//! - size: `size_bytes`, exactly;
//! - figure: latency `typical` (t_typical, the median sample) against the point's p50
//!   one-way latency (`lat_p50_us`); bandwidth `average` (BW average) against `bw_GBps`,
//!   both in GB/s = 1e9 B/s (MiB/s x 2^20 / 1e9, Gb/s / 8).
//!
//! Rows that cannot be compared are skipped with a note: nvbandwidth rows (no message size, no
//! network path: not a run point), perftest variants (bidirectional, post list, duration,
//! Send with Immediate, atomics, ...), other statistics and metrics, and rows whose point the
//! config does not run. A row that is not a well-formed measurement (an unknown tool, memory,
//! metric, statistic or unit, a perftest row without a size, a figure that is not positive) is
//! bad input: exit 2 naming the CSV's file, line and column.

use std::path::Path;

use super::Measurement;
use super::csv::{cell, read_located};
use crate::config::{Config, ConfigError, Op, PathKind};
use crate::report::overlay::{Figure, Matched, Overlay};
use crate::stats::Summary;

/// The op of a perftest program and its banner details, or why the row is not compared.
pub fn op_of(test: &str, detail: &str) -> Result<Op, String> {
    let base = match test {
        t if t.starts_with("ib_write_") => Op::Write,
        t if t.starts_with("ib_read_") => Op::Read,
        t if t.starts_with("ib_send_") => Op::Send,
        t if t.starts_with("ib_atomic_") => {
            return Err(format!("{t} rows: the model has no atomics"));
        }
        t => return Err(format!("{t} rows: not a perftest test the model runs")),
    };
    match (base, detail) {
        (op, "") => Ok(op),
        (Op::Write, "write_imm") => Ok(Op::WriteImm),
        (_, d) => Err(format!(
            "{test} ({d}) rows: only the plain test (and ib_write_* --write_with_imm) is a \
             results point"
        )),
    }
}

/// The measurement in µs (latency) or GB/s (bandwidth), from its value and unit; None for a
/// unit that is not one of the metric's.
pub fn in_figure_unit(figure: Figure, value: f64, unit: &str) -> Option<f64> {
    let scale = match (figure, unit) {
        (Figure::Latency, "us") => 1.0,
        (Figure::Latency, "ns") => 1e-3,
        (Figure::Bandwidth, "MiB/s") => 1_048_576.0 / 1e9,
        (Figure::Bandwidth, "Gb/s") => 1.0 / 8.0,
        (Figure::Bandwidth, "GB/s") => 1.0,
        _ => return None,
    };
    Some(value * scale)
}

const LAT_STATS: [&str; 7] = ["min", "max", "typical", "avg", "stdev", "p99", "p99.9"];
/// perftest's bandwidth statistics (`average_port1`, `average_port2`: dual-port runs).
const BW_STATS: [&str; 4] = ["peak", "average", "average_port1", "average_port2"];
const METRICS: [&str; 5] = [
    "latency",
    "bandwidth",
    "msg_rate",
    "cpu_util",
    "transaction_rate",
];

/// Counts skipped rows by reason, in order of first appearance.
#[derive(Default)]
struct Skips(Vec<(String, usize)>);

impl Skips {
    fn add(&mut self, why: String) {
        match self.0.iter_mut().find(|(w, _)| *w == why) {
            Some((_, n)) => *n += 1,
            None => self.0.push((why, 1)),
        }
    }
    fn notes(self) -> Vec<String> {
        self.0
            .into_iter()
            .map(|(w, n)| format!("skipped {n} {w}"))
            .collect()
    }
}

/// Reads `file` and matches its rows to the points of `cfg` (before any simulation): the
/// overlay with every model figure still 0, or the first bad row. `scenario` is
/// `--measured-scenario` (default the config's first).
pub fn prepare(file: &Path, cfg: &Config, scenario: Option<&str>) -> Result<Overlay, ConfigError> {
    let si = crate::inspect::scenario_index(cfg, scenario).map_err(|mut e| {
        e.key = "--measured-scenario".into();
        e
    })?;
    let name = file.display().to_string();
    let rows = read_located(file)?;
    let plan = crate::scenario::plan(cfg);
    let runs = |path: PathKind, op: Op, size: u64| {
        plan.iter()
            .any(|p| p.scenario == si && p.path == path && p.op == op && p.size == size)
    };
    let sc = cfg.scenarios[si].name.clone();
    let mut skips = Skips::default();
    let mut matched = Vec::new();
    for (line, r) in rows {
        if let Some(m) = check(&name, line, &r, &mut skips)? {
            let (path, op, size, figure, measured) = m;
            if !runs(path, op, size) {
                let why = if !cfg.paths.contains(&path) {
                    format!("the config runs no {} path", path.name())
                } else if !cfg.ops.contains(&op) {
                    format!("the config runs no {} op", op.name())
                } else {
                    "the sweep has no such size".to_string()
                };
                skips.add(format!(
                    "{} {} rows with no results point on {sc} ({why})",
                    r.test, r.memory
                ));
                continue;
            }
            matched.push(Matched {
                csv_line: line,
                source_file: r.source_file.clone(),
                source_line: r.line,
                test: r.test.clone(),
                memory: r.memory.clone(),
                statistic: r.statistic.clone(),
                value: r.value,
                unit: r.unit.clone(),
                scenario: sc.clone(),
                path,
                op,
                size_bytes: size,
                figure,
                measured,
                model: 0.0,
            });
        }
    }
    Ok(Overlay {
        file: name,
        scenario: sc,
        matched,
        notes: skips.notes(),
    })
}

type Key = (PathKind, Op, u64, Figure, f64);

/// One row: its point and figure, None (with a note) where it is not compared, or the error
/// naming its bad cell.
fn check(
    name: &str,
    line: usize,
    r: &Measurement,
    skips: &mut Skips,
) -> Result<Option<Key>, ConfigError> {
    let bad = |column: &str, expected: String, found: &str| {
        Err(cell(name, line, column, expected, format!("{found:?}")))
    };
    if !METRICS.contains(&r.metric.as_str()) {
        return bad(
            "metric",
            format!("one of {}", METRICS.join(", ")),
            &r.metric,
        );
    }
    match r.tool.as_str() {
        "nvbandwidth" => {
            skips.add(
                "nvbandwidth rows: a copy-engine matrix has no message size and no network \
                 path, so it is no run point"
                    .into(),
            );
            return Ok(None);
        }
        "nccl-tests" => {
            skips.add(
                "nccl-tests rows: a collective's figures are not compared with a run's points \
                 yet (gdrsim nccl-tests prints the same table from the model)"
                    .into(),
            );
            return Ok(None);
        }
        "perftest" => {}
        t => return bad("tool", "perftest, nvbandwidth or nccl-tests".into(), t),
    }
    let path = match r.memory.as_str() {
        "gpu" => PathKind::GpuDirect,
        "host" => PathKind::Host,
        m => return bad("memory", "host or gpu (a perftest row)".into(), m),
    };
    let Some(size) = r.size_bytes else {
        return bad("size_bytes", "a message size (a perftest row)".into(), "");
    };
    let figure = match r.metric.as_str() {
        "latency" if !LAT_STATS.contains(&r.statistic.as_str()) => {
            return bad(
                "statistic",
                format!("a latency statistic ({})", LAT_STATS.join(", ")),
                &r.statistic,
            );
        }
        "bandwidth" if !BW_STATS.contains(&r.statistic.as_str()) => {
            return bad(
                "statistic",
                format!("a bandwidth statistic ({})", BW_STATS.join(", ")),
                &r.statistic,
            );
        }
        "latency" => Figure::Latency,
        "bandwidth" => Figure::Bandwidth,
        m => {
            skips.add(format!("{m} rows: results have no such figure to compare"));
            return Ok(None);
        }
    };
    let units = match figure {
        Figure::Latency => "us or ns",
        Figure::Bandwidth => "MiB/s, Gb/s or GB/s",
    };
    let Some(measured) = in_figure_unit(figure, r.value, &r.unit) else {
        return bad("unit", format!("a {} unit ({units})", r.metric), &r.unit);
    };
    let compared = match figure {
        Figure::Latency => "typical",
        Figure::Bandwidth => "average",
    };
    if r.statistic != compared {
        skips.add(format!(
            "{} {} rows: only {compared} is compared (with {})",
            r.metric,
            r.statistic,
            figure.model_column()
        ));
        return Ok(None);
    }
    if measured <= 0.0 {
        return Err(cell(
            name,
            line,
            "value",
            format!("a positive {}", r.metric),
            r.value.to_string(),
        ));
    }
    let op = match op_of(&r.test, &r.detail) {
        Ok(op) => op,
        Err(why) => {
            skips.add(why);
            return Ok(None);
        }
    };
    Ok(Some((path, op, size, figure, measured)))
}

/// The overlay with the model's figure of each matched row's point from `rows`; a row whose
/// point did not run (a shard) keeps 0, which [`prepare`] prevents for a whole study.
pub fn attach(mut o: Overlay, rows: &[Summary]) -> Overlay {
    for m in &mut o.matched {
        if let Some(r) = rows.iter().find(|r| m.is_at(r)) {
            m.model = m.figure.of(r);
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(test: &str, memory: &str, metric: &str, stat: &str, unit: &str) -> Measurement {
        Measurement {
            source_file: "a.log".into(),
            line: 9,
            tool: "perftest".into(),
            test: test.into(),
            detail: String::new(),
            device: "mlx5_0".into(),
            memory: memory.into(),
            size_bytes: Some(4096),
            iterations: Some(1000),
            metric: metric.into(),
            statistic: stat.into(),
            value: 2.5,
            unit: unit.into(),
            row: String::new(),
            column: String::new(),
        }
    }

    #[test]
    fn perftest_programs_map_to_ops() {
        assert_eq!(op_of("ib_write_bw", ""), Ok(Op::Write));
        assert_eq!(op_of("ib_write_lat", "write_imm"), Ok(Op::WriteImm));
        assert_eq!(op_of("ib_read_lat", ""), Ok(Op::Read));
        assert_eq!(op_of("ib_send_bw", ""), Ok(Op::Send));
        assert!(op_of("ib_send_bw", "send_imm").is_err());
        assert!(op_of("ib_write_bw", "bidirectional").is_err());
        assert!(op_of("ib_atomic_bw", "").is_err());
        assert!(op_of("iperf", "").is_err());
    }

    #[test]
    fn units_convert_to_microseconds_and_decimal_gigabytes() {
        let bw = |v, u| in_figure_unit(Figure::Bandwidth, v, u).unwrap();
        assert!((bw(1e9 / 1_048_576.0, "MiB/s") - 1.0).abs() < 1e-12);
        assert_eq!(bw(200.0, "Gb/s"), 25.0);
        assert_eq!(bw(3.5, "GB/s"), 3.5);
        assert_eq!(in_figure_unit(Figure::Latency, 1500.0, "ns"), Some(1.5));
        assert_eq!(in_figure_unit(Figure::Latency, 1.5, "MiB/s"), None);
        assert_eq!(in_figure_unit(Figure::Bandwidth, 1.5, "us"), None);
    }

    #[test]
    fn rows_are_compared_skipped_or_refused_by_column() {
        let mut sk = Skips::default();
        let k = check(
            "m.csv",
            3,
            &row("ib_send_lat", "gpu", "latency", "typical", "us"),
            &mut sk,
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            k,
            (PathKind::GpuDirect, Op::Send, 4096, Figure::Latency, 2.5)
        );
        let r = row("ib_write_bw", "host", "bandwidth", "average", "Gb/s");
        let k = check("m.csv", 3, &r, &mut sk).unwrap().unwrap();
        assert_eq!((k.0, k.1, k.4), (PathKind::Host, Op::Write, 2.5 / 8.0));
        // Skipped, with a note each.
        let mut nvb = row(
            "host_to_device_memcpy_ce",
            "host+gpu",
            "bandwidth",
            "median",
            "GB/s",
        );
        nvb.tool = "nvbandwidth".into();
        nvb.size_bytes = None;
        let peak = row("ib_write_bw", "gpu", "bandwidth", "average_port2", "MiB/s");
        let rate = row("ib_write_bw", "gpu", "msg_rate", "average", "Mpps");
        for r in [&nvb, &peak, &rate] {
            assert_eq!(check("m.csv", 4, r, &mut sk).unwrap(), None, "{r:?}");
        }
        assert_eq!(sk.0.len(), 3, "{:?}", sk.0);
        // Refused, naming line and column.
        let refused = |r: Measurement, column: &str| {
            let e = check("m.csv", 7, &r, &mut Skips::default()).unwrap_err();
            assert_eq!(
                (e.file.as_str(), e.key.as_str()),
                ("m.csv:7", column),
                "{e}"
            );
        };
        refused(
            row("ib_write_bw", "gpu", "bandwidth", "average", "furlongs"),
            "unit",
        );
        refused(
            row("ib_write_bw", "GPU", "bandwidth", "average", "MiB/s"),
            "memory",
        );
        refused(
            row("ib_write_bw", "gpu", "bandwith", "average", "MiB/s"),
            "metric",
        );
        refused(
            row("ib_write_bw", "gpu", "bandwidth", "mean", "MiB/s"),
            "statistic",
        );
        let mut nosize = row("ib_write_bw", "gpu", "bandwidth", "average", "MiB/s");
        nosize.size_bytes = None;
        refused(nosize, "size_bytes");
        let mut tool = row("ib_write_bw", "gpu", "bandwidth", "average", "MiB/s");
        tool.tool = "iperf".into();
        refused(tool, "tool");
        let mut zero = row("ib_write_bw", "gpu", "bandwidth", "average", "MiB/s");
        zero.value = 0.0;
        refused(zero, "value");
    }

    #[test]
    fn prepare_matches_the_sweep_and_notes_the_rest() {
        let cfg = crate::config::parse(crate::config::DEFAULT_TOML, "default.toml").unwrap();
        let dir = std::env::temp_dir().join(format!("gdrsim-overlay-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("m.csv");
        // The default runs write_imm only; sizes are powers of two.
        let mut a = row("ib_write_bw", "gpu", "bandwidth", "average", "MiB/s");
        a.detail = "write_imm".into();
        let mut odd = a.clone();
        odd.size_bytes = Some(3000);
        let plain = row("ib_write_bw", "gpu", "bandwidth", "average", "MiB/s");
        std::fs::write(&f, super::super::csv::to_bytes(&[a, odd, plain]).unwrap()).unwrap();
        let o = prepare(&f, &cfg, None).unwrap();
        assert_eq!(o.scenario, cfg.scenarios[0].name);
        assert_eq!(o.matched.len(), 1);
        assert_eq!(o.matched[0].csv_line, 2);
        assert_eq!(o.matched[0].op, Op::WriteImm);
        assert_eq!(o.notes.len(), 2, "{:?}", o.notes);
        assert!(o.notes[0].contains("no such size"), "{:?}", o.notes);
        assert!(o.notes[1].contains("no write op"), "{:?}", o.notes);
        let e = prepare(&f, &cfg, Some("nowhere")).unwrap_err();
        assert_eq!(e.key, "--measured-scenario", "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}

//! Which measured rows a calibration uses and how the model reproduces each: the run (a
//! perftest test or an nvbandwidth testcase) and the figure read from it.

use super::*;

/// One emulated run: a perftest test's figures at one size, or an nvbandwidth testcase's row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum RunKey {
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
pub(super) enum Emulation {
    Perftest(&'static str, perftest::Args),
    Nvbandwidth(nvbandwidth::Args),
}

impl RunKey {
    /// "ib_write_bw (GPU, 4 QPs, both ways)", "host_to_device_memcpy_ce": the run, for the cost
    /// gate's refusal.
    pub(super) fn name(&self) -> String {
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
pub(super) fn variant(detail: &str) -> Option<(u32, bool)> {
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
pub(super) enum Figures {
    Perftest(Row),
    /// GB/s per GPU of the host.
    Nvbandwidth(Vec<f64>),
}

/// A measured row the model can emulate: its run, where its figure is, and its value in the
/// model's units (µs, bytes/s, Mpps).
#[derive(Clone, Debug)]
pub(super) struct Target {
    pub(super) run: usize,
    pub(super) figure: Figure,
    pub(super) measured: f64,
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Figure {
    /// Index into perftest's seven latency figures.
    Lat(usize),
    BwPeak,
    BwAvg,
    MsgRate,
    /// An nvbandwidth cell: the GPU column.
    Nvb(usize),
}

/// The measured rows, sorted into those the model emulates and notes on those skipped.
pub(super) struct Selection {
    pub(super) runs: Vec<RunKey>,
    pub(super) targets: Vec<Target>,
    pub(super) notes: Vec<String>,
}

pub(super) fn select(
    rows: &[Measurement],
    o: &Options,
    file: &str,
) -> Result<Selection, ConfigError> {
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
pub(super) fn nvbandwidth_cell(
    r: &Measurement,
    o: &Options,
) -> Result<(Testcase, usize, f64), String> {
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

/// A number in the parameter's unit from a value as the resolved config writes it (`150`,
/// `187500ps`, `708800000000b/s`).
pub(super) fn in_unit(s: &str) -> Option<f64> {
    if let Some(ps) = s.strip_suffix("ps") {
        return ps.parse::<f64>().ok().map(|v| v / 1e3);
    }
    if let Some(bps) = s.strip_suffix("b/s") {
        return bps.parse::<f64>().ok().map(|v| v / 1e9);
    }
    s.parse().ok()
}

//! nccl-tests' text output (NVIDIA/nccl-tests `src/util.cu`, 2.19.6 and older releases): `#`
//! header lines (`# Collective test starting: NAME`, `# nThread ... iters: N ...`, the
//! `#  Rank` device lines), the column header (`out-of-place ... in-place`), one row per size
//! (`size count type redop root`, then per placement `time algbw busbw #wrong`, with four more
//! per-iteration columns `i_min i_max i_p99 i_cv%` under `-I 1`, and a timestamp under `-S`),
//! then `# Out of bounds values` and `# Avg bus bandwidth : X`. Lines that are not rows (NCCL's
//! INFO and WARN lines, a launcher's warnings) are skipped; a line that starts as a row (two
//! integers) but is not one is an error.
//!
//! Each row gives, per placement (detail `out-of-place` or `in-place`, then the type and the
//! reduction, and `root N` where the row has a root), the time (latency, statistic `avg`: nccl-tests' mean over its iterations, µs),
//! algbw and busbw (bandwidth, statistics `algbw` and `busbw`, GB/s); the footer the average
//! bus bandwidth (statistic `avg_busbw`, no size).

use super::{Measurement, bad, non_negative, quoted};
use crate::config::ConfigError;

/// A row's detail with its root where it has one (broadcast, reduce: `;root N`; the
/// others print -1, which adds nothing), so that `-r -1`'s sweeps, one per root, stay apart.
fn root_detail(detail: String, root: &str) -> String {
    if root == "-1" {
        detail
    } else {
        format!("{detail};root {root}")
    }
}

/// Whether line `t` (trimmed) is one only nccl-tests prints.
pub fn is_nccl_tests_line(t: &str) -> bool {
    t.starts_with("# nccl-tests version")
        || t.starts_with("# Collective test starting:")
        || (t.starts_with('#') && t.contains("out-of-place") && t.contains("in-place"))
}

/// The measurements of an nccl-tests log.
pub fn parse(name: &str, text: &str) -> Result<Vec<Measurement>, ConfigError> {
    let mut out = Vec::new();
    let mut test = "nccl-tests".to_string();
    let mut iterations: Option<u64> = None;
    let mut device = String::new();
    let mut header = false;
    let mut per_iteration = false;
    let mut rows = 0usize;
    let figure = |line: usize, v: &str, what: &str| {
        non_negative(v)
            .ok_or_else(|| bad(name, line, format!("{what} (a number)"), quoted(Some(v))))
    };
    for (i, l) in text.lines().enumerate() {
        let line = i + 1;
        let t = l.trim();
        if let Some(p) = t.strip_prefix("# Collective test starting:") {
            test = p.trim().to_string();
            continue;
        }
        if t.starts_with("# nThread") {
            // "... warmup iters: 1 iters: 20 agg iters: 1 ...": the `iters:` of its own.
            let w: Vec<&str> = t.split_whitespace().collect();
            iterations = (1..w.len().saturating_sub(1))
                .find(|&k| w[k] == "iters:" && !matches!(w[k - 1], "warmup" | "agg"))
                .and_then(|k| w[k + 1].parse().ok());
            continue;
        }
        if t.starts_with("#  Rank") || t.starts_with("# Rank") {
            // "... device  0 [0000:18:00] NVIDIA H100 80GB HBM3": the first rank's device.
            if device.is_empty()
                && let Some((_, d)) = t.split_once("] ")
            {
                device = d.trim().to_string();
            }
            continue;
        }
        if t.starts_with('#') && t.contains("out-of-place") {
            header = true;
            per_iteration = t.contains("per-iteration");
            continue;
        }
        if let Some(v) = t.strip_prefix("# Avg bus bandwidth") {
            let v = v.trim_start().trim_start_matches(':').trim();
            let v = v.split_whitespace().next().unwrap_or("");
            out.push(Measurement {
                source_file: name.to_string(),
                line,
                tool: "nccl-tests".into(),
                test: test.clone(),
                detail: String::new(),
                device: device.clone(),
                memory: "gpu".into(),
                size_bytes: None,
                iterations,
                metric: "bandwidth".into(),
                statistic: "avg_busbw".into(),
                value: figure(line, v, "the average bus bandwidth")?,
                unit: "GB/s".into(),
                row: String::new(),
                column: String::new(),
            });
            continue;
        }
        let f: Vec<&str> = t.split_whitespace().collect();
        let starts_as_row = f.len() >= 2 && f[..2].iter().all(|x| x.parse::<u64>().is_ok());
        if t.starts_with('#') || !starts_as_row {
            continue;
        }
        if !header {
            return Err(bad(
                name,
                line,
                "the column header (\"# ... out-of-place ... in-place\") before the rows",
                quoted(Some(l)),
            ));
        }
        // Per placement: time algbw busbw #wrong (+ i_min i_max i_p99 i_cv% under -I 1).
        let width = if per_iteration { 8 } else { 4 };
        if f.len() < 5 + 2 * width {
            return Err(bad(
                name,
                line,
                format!(
                    "a row: size count type redop root, then time algbw busbw #wrong{} for \
                     out-of-place and in-place ({} fields)",
                    if per_iteration {
                        " i_min i_max i_p99 i_cv%"
                    } else {
                        ""
                    },
                    5 + 2 * width
                ),
                quoted(Some(l)),
            ));
        }
        let size: u64 = f[0].parse().unwrap_or(0);
        for (k, placement) in ["out-of-place", "in-place"].into_iter().enumerate() {
            let at = 5 + k * width;
            let figures = [
                ("latency", "avg", "us", figure(line, f[at], "a time in µs")?),
                (
                    "bandwidth",
                    "algbw",
                    "GB/s",
                    figure(line, f[at + 1], "an algbw in GB/s")?,
                ),
                (
                    "bandwidth",
                    "busbw",
                    "GB/s",
                    figure(line, f[at + 2], "a busbw in GB/s")?,
                ),
            ];
            for (metric, statistic, unit, value) in figures {
                out.push(Measurement {
                    source_file: name.to_string(),
                    line,
                    tool: "nccl-tests".into(),
                    test: test.clone(),
                    detail: root_detail(format!("{placement};{};{}", f[2], f[3]), f[4]),
                    device: device.clone(),
                    memory: "gpu".into(),
                    size_bytes: Some(size),
                    iterations,
                    metric: metric.into(),
                    statistic: statistic.into(),
                    value,
                    unit: unit.into(),
                    row: String::new(),
                    column: String::new(),
                });
            }
        }
        rows += 1;
    }
    if rows == 0 {
        return Err(bad(
            name,
            text.lines().count().max(1),
            "at least one row of figures after the column header",
            "none",
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real log's structure (NVIDIA/nccl#1189-style, with NCCL INFO lines between): every
    /// row gives three figures per placement; the footer the average busbw.
    #[test]
    fn reads_both_tables_and_the_average() {
        let log = "\
# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid  12345 on    node-01 device  0 [0x18] NVIDIA H100 80GB HBM3
node-01:12345:12345 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>
#
#                                                              out-of-place                       in-place          
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       
           8             2     float     sum      -1    25.43    0.00    0.00      0    24.98    0.00    0.00      0
   134217728      33554432     float     sum      -1   1234.5  108.72  190.26      0   1230.1  109.11  190.95      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 95.3025 
#
";
        let m = parse("ar.log", log).unwrap();
        assert_eq!(m.len(), 2 * 2 * 3 + 1);
        assert!(
            m.iter()
                .all(|r| r.tool == "nccl-tests" && r.memory == "gpu")
        );
        assert_eq!(m[0].device, "NVIDIA H100 80GB HBM3");
        assert_eq!(m[0].iterations, Some(20));
        let busbw: Vec<f64> = m
            .iter()
            .filter(|r| r.statistic == "busbw" && r.size_bytes == Some(134217728))
            .map(|r| r.value)
            .collect();
        assert_eq!(busbw, vec![190.26, 190.95]);
        assert_eq!(m[6].detail, "out-of-place;float;sum");
        assert_eq!(m[9].detail, "in-place;float;sum");
        let avg = m.last().unwrap();
        assert_eq!((avg.statistic.as_str(), avg.value), ("avg_busbw", 95.3025));
        assert!(super::super::sniff(log).is_some());
    }

    /// broadcast_perf's rows carry their root (two sweeps under `-r -1` stay apart); a
    /// sendrecv's in-place `N/A` is read as the figures before it.
    #[test]
    fn a_rows_root_is_in_its_detail() {
        let log = "# Collective test starting: broadcast_perf\n\
#                                                              out-of-place                       in-place          \n\
        1024           256     float    none       0    12.10    0.08    0.08      0    12.00    0.09    0.09      0\n\
        1024           256     float    none       1    12.30    0.08    0.08      0    12.20    0.08    0.08    N/A\n";
        let m = parse("b.log", log).unwrap();
        assert_eq!(m[0].detail, "out-of-place;float;none;root 0");
        assert_eq!(m[6].detail, "out-of-place;float;none;root 1");
        assert_eq!(m[9].detail, "in-place;float;none;root 1");
        assert_eq!(m[9].value, 12.20);
    }

    #[test]
    fn a_broken_row_names_its_line() {
        let log = "# Collective test starting: all_gather_perf\n\
#                                                              out-of-place                       in-place          \n\
        1024            16     float    none      -1    12.1    0.08\n";
        let e = parse("ag.log", log).unwrap_err().to_string();
        assert!(e.contains("ag.log:3"), "{e}");
        let e = parse("x.log", "# Collective test starting: x\n").unwrap_err();
        assert!(e.to_string().contains("at least one row"), "{e}");
    }
}

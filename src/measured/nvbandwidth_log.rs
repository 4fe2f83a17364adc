//! nvbandwidth's text output (NVIDIA/nvbandwidth, output.cpp and inline_common.h): per
//! testcase `Running NAME.`, then for each matrix its title (`memcpy CE CPU(row) -> GPU(column)
//! bandwidth (GB/s)`, `memory latency SM CPU(row) <-> GPU(column) (ns)`), a header of column
//! labels, one row per row label with a value or `N/A` per column (`std::setw(10)`, two
//! decimals), a blank line, and, in releases since the SUM line was added, `SUM NAME VALUE`.
//! A waived or failed testcase prints `Waived: ...` / `Error: ...` instead of a matrix.
//!
//! Each cell is nvbandwidth's median over its samples (its default; a run with `-m` reports
//! the mean, which the text does not say). nvbandwidth does not print its buffer size, so the
//! rows carry none.

use super::{Measurement, bad, non_negative, quoted};
use crate::config::ConfigError;

/// The metric and unit of a matrix title line, if `t` is one.
pub fn unit_of_title(t: &str) -> Option<(&'static str, &'static str)> {
    if !(t.contains("(row)") && t.contains("(column)")) {
        return None;
    }
    if t.ends_with("bandwidth (GB/s)") {
        Some(("bandwidth", "GB/s"))
    } else if t.ends_with("(ns)") {
        Some(("latency", "ns"))
    } else {
        None
    }
}

fn memory_of(title: &str) -> &'static str {
    match (
        title.contains("CPU"),
        title.contains("GPU") || title.contains("Gpus"),
    ) {
        (true, true) => "host+gpu",
        (true, false) => "host",
        _ => "gpu",
    }
}

/// A matrix being read.
struct Matrix {
    test: String,
    title: String,
    metric: &'static str,
    unit: &'static str,
    columns: Option<Vec<String>>,
    rows: usize,
}

/// The measurements of an nvbandwidth log.
pub fn parse(name: &str, text: &str) -> Result<Vec<Measurement>, ConfigError> {
    let mut out = Vec::new();
    let mut test: Option<String> = None;
    let mut matrix: Option<Matrix> = None;
    // The last matrix closed, for its SUM line.
    let mut closed: Option<Matrix> = None;
    let mut matrices = 0usize;
    let lines: Vec<&str> = text.lines().collect();
    let cell =
        |test: &str, m: &Matrix, n: usize, stat: &str, v: f64, r: &str, c: &str| Measurement {
            source_file: name.to_string(),
            line: n,
            tool: "nvbandwidth".into(),
            test: test.to_string(),
            detail: m.title.clone(),
            device: String::new(),
            memory: memory_of(&m.title).into(),
            size_bytes: None,
            iterations: None,
            metric: m.metric.into(),
            statistic: stat.into(),
            value: v,
            unit: m.unit.into(),
            row: r.to_string(),
            column: c.to_string(),
        };
    for (i, l) in lines.iter().enumerate() {
        let n = i + 1;
        let t = l.trim();
        if let Some(m) = matrix.as_mut() {
            match &m.columns {
                None => {
                    let labels: Vec<String> = t.split_whitespace().map(String::from).collect();
                    if labels.is_empty() {
                        return Err(bad(
                            name,
                            n,
                            "the matrix's column labels under its title",
                            quoted(Some(t)),
                        ));
                    }
                    m.columns = Some(labels);
                }
                Some(cols) => {
                    if t.is_empty() {
                        if m.rows == 0 {
                            return Err(bad(name, n, "a matrix row", "an empty line"));
                        }
                        closed = matrix.take();
                        continue;
                    }
                    let cells: Vec<&str> = t.split_whitespace().collect();
                    if cells.len() != cols.len() + 1 {
                        return Err(bad(
                            name,
                            n,
                            format!(
                                "a matrix row: its label and {} values (or N/A), or the empty \
                                 line that ends the matrix",
                                cols.len()
                            ),
                            format!("{} fields: {}", cells.len(), quoted(Some(t))),
                        ));
                    }
                    let test = m.test.clone();
                    for (c, v) in cols.iter().zip(&cells[1..]) {
                        if *v == "N/A" {
                            continue;
                        }
                        let x = non_negative(v).ok_or_else(|| {
                            bad(
                                name,
                                n,
                                "a number of 0 or more (a bandwidth or a latency) or N/A \
                                         in the matrix",
                                format!("{v:?}"),
                            )
                        })?;
                        out.push(cell(&test, m, n, "median", x, cells[0], c));
                    }
                    m.rows += 1;
                }
            }
            continue;
        }
        if let Some(rest) = t.strip_prefix("Running ") {
            test = Some(rest.trim_end_matches('.').trim().to_string());
            closed = None;
            continue;
        }
        if let Some((metric, unit)) = unit_of_title(t) {
            let Some(tc) = test.clone() else {
                return Err(bad(
                    name,
                    n,
                    "\"Running <testcase>.\" before a matrix",
                    quoted(Some(t)),
                ));
            };
            matrix = Some(Matrix {
                test: tc,
                title: t.to_string(),
                metric,
                unit,
                columns: None,
                rows: 0,
            });
            matrices += 1;
            continue;
        }
        let sum = t
            .strip_prefix("SUM ")
            .or_else(|| t.strip_prefix("&&&& PERF "));
        if let Some(rest) = sum {
            let Some(m) = closed.take() else {
                return Err(bad(
                    name,
                    n,
                    "a matrix before its SUM line",
                    quoted(Some(t)),
                ));
            };
            let v = rest.split_whitespace().nth(1).unwrap_or("");
            let num: String = v
                .chars()
                .take_while(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e'))
                .collect();
            let x = non_negative(&num).ok_or_else(|| {
                bad(
                    name,
                    n,
                    "SUM <testcase> <number of 0 or more>",
                    quoted(Some(t)),
                )
            })?;
            out.push(cell(&m.test, &m, n, "sum", x, "", ""));
        }
    }
    if let Some(m) = &matrix {
        let what = if m.columns.is_none() {
            "the matrix's column labels"
        } else {
            "the rest of the matrix and the empty line that ends it (the log is cut short)"
        };
        return Err(bad(name, lines.len() + 1, what, quoted(None)));
    }
    if matrices == 0 {
        return Err(bad(
            name,
            lines.len() + 1,
            "an nvbandwidth matrix (a title such as \"memcpy CE CPU(row) -> GPU(column) \
             bandwidth (GB/s)\", its column labels and rows)",
            quoted(None),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What nvbandwidth prints, from output.cpp and inline_common.h (README's example values).
    const LOG: &str = "nvbandwidth Version: v0.8
Built from Git version: v0.8

NOTE: The reported results may not reflect the full capabilities of the platform.
Performance can vary with software drivers, hardware clocks, and system topology.

CUDA Runtime Version: 12080
CUDA Driver Version: 12080
Driver Version: 570.124.06

node1
Device 0: NVIDIA H100 80GB HBM3 (00000000:19:00)
Device 1: NVIDIA H100 80GB HBM3 (00000000:3b:00)

Running host_to_device_memcpy_ce.
memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)
           0         1
 0     26.03     25.94

SUM host_to_device_memcpy_ce 51.97

Running device_to_device_memcpy_read_ce.
memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)
           0         1
 0       N/A    276.07
 1    276.19       N/A

SUM device_to_device_memcpy_read_ce 552.26

Running device_to_host_memcpy_sm.
Waived: 
";

    #[test]
    fn matrices_and_sums_are_read() {
        let rows = parse("nvb.log", LOG).unwrap();
        assert_eq!(rows.len(), 2 + 1 + 2 + 1, "{rows:#?}");
        let r = &rows[1];
        assert_eq!(
            (r.test.as_str(), r.row.as_str(), r.column.as_str(), r.value),
            ("host_to_device_memcpy_ce", "0", "1", 25.94)
        );
        assert_eq!((r.unit.as_str(), r.memory.as_str()), ("GB/s", "host+gpu"));
        assert_eq!(r.line, 18);
        assert_eq!((rows[2].statistic.as_str(), rows[2].value), ("sum", 51.97));
        let d2d: Vec<_> = rows
            .iter()
            .filter(|r| r.test == "device_to_device_memcpy_read_ce")
            .collect();
        assert_eq!(d2d.len(), 3, "N/A cells are no measurement");
        assert_eq!(d2d[0].memory, "gpu");
        // Older releases print no SUM line.
        let old = LOG.replace("SUM host_to_device_memcpy_ce 51.97\n", "");
        assert_eq!(parse("old.log", &old).unwrap().len(), 5);
    }

    #[test]
    fn a_cut_or_broken_matrix_names_the_line() {
        let cut = &LOG[..LOG.find(" 1    276.19").unwrap()];
        let e = parse("cut.log", cut).unwrap_err();
        assert_eq!(
            e.file,
            format!("cut.log:{}", cut.lines().count() + 1),
            "{e}"
        );
        assert!(e.expected.contains("cut short"), "{e}");
        let short = LOG.replace(" 1    276.19       N/A", " 1    276.19");
        let e = parse("short.log", &short).unwrap_err();
        assert_eq!(e.file, "short.log:26", "{e}");
        let word = LOG.replace("25.94", "fast");
        let e = parse("word.log", &word).unwrap_err();
        assert_eq!(e.file, "word.log:18", "{e}");
        let e = parse("none.log", "Running x.\nWaived: \n").unwrap_err();
        assert!(e.expected.contains("matrix"), "{e}");
    }
}

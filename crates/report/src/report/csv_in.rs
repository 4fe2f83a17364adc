//! results.csv read back into result rows, for tools that take a finished study's folder
//! (`gdrsim compare`). The columns are found by name in the header, so a file with the
//! measured or workload columns, or a sweep's `variant`, reads the same; what results.csv
//! does not hold (stages, flows, links) comes back empty.

use std::path::Path;

use crate::bottleneck::Bottleneck;
use crate::config::{ConfigError, Op, PathKind};
use crate::effective::EffectivePath;
use crate::stats::{LatencyStats, Summary};
use crate::topology::Affinity;
use crate::units::Ps;

/// The columns a results.csv must have to be read: the frozen contract's twenty.
const REQUIRED: usize = 20;

/// Reads `path` (a study's results.csv). A missing or unreadable file, a header without the
/// contract's columns or a cell that is not what its column holds is bad input naming the
/// file, the line and the column.
pub fn read_results(path: &Path) -> Result<Vec<Summary>, ConfigError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| {
        ConfigError::new(
            &name,
            "",
            "the results.csv a `gdrsim run` writes",
            format!("an I/O error: {e}"),
        )
    })?;
    results_from_bytes(&name, &bytes)
}

/// Parses results.csv bytes (`name` for errors).
pub fn results_from_bytes(name: &str, bytes: &[u8]) -> Result<Vec<Summary>, ConfigError> {
    let mut r = csv::Reader::from_reader(bytes);
    let header: Vec<String> = r
        .headers()
        .map_err(|e| bad(name, 1, "", "a results.csv header", e.to_string()))?
        .iter()
        .map(String::from)
        .collect();
    let contract = &super::csv_out::RESULTS_HEADER[..REQUIRED];
    if let Some(missing) = contract.iter().find(|c| !header.iter().any(|h| h == *c)) {
        return Err(bad(
            name,
            1,
            missing,
            "a results.csv header with the columns of the output contract",
            format!("no column `{missing}`"),
        ));
    }
    let mut rows = Vec::new();
    for (i, rec) in r.records().enumerate() {
        // Records start on line 2; a quoted cell never spans lines in results.csv.
        let line = rec
            .as_ref()
            .ok()
            .and_then(|x| x.position())
            .map_or(i + 2, |p| p.line() as usize);
        let rec = rec.map_err(|e| bad(name, line, "", "a results.csv row", e.to_string()))?;
        let cells = Cells {
            name,
            line,
            header: &header,
            rec: &rec,
        };
        rows.push(cells.summary()?);
    }
    Ok(rows)
}

fn bad(
    name: &str,
    line: usize,
    key: &str,
    expected: impl Into<String>,
    found: impl Into<String>,
) -> ConfigError {
    ConfigError::new(&format!("{name}:{line}"), key, expected, found)
}

/// One record with its header, for reading cells by column name.
struct Cells<'a> {
    name: &'a str,
    line: usize,
    header: &'a [String],
    rec: &'a csv::StringRecord,
}

impl Cells<'_> {
    /// The cell of `column`, or "" where the file has no such column.
    fn get(&self, column: &str) -> &str {
        self.header
            .iter()
            .position(|h| h == column)
            .and_then(|i| self.rec.get(i))
            .unwrap_or("")
    }

    fn parse<T>(
        &self,
        column: &str,
        what: &str,
        f: impl Fn(&str) -> Option<T>,
    ) -> Result<T, ConfigError> {
        let cell = self.get(column);
        f(cell).ok_or_else(|| bad(self.name, self.line, column, what, format!("{cell:?}")))
    }

    fn float(&self, column: &str) -> Result<f64, ConfigError> {
        self.parse(column, "a number", |c| c.parse::<f64>().ok())
    }

    fn int<T: std::str::FromStr>(&self, column: &str) -> Result<T, ConfigError> {
        self.parse(column, "a whole number", |c| c.parse::<T>().ok())
    }

    /// A µs cell as picoseconds (results.csv writes them exactly, to the picosecond).
    fn ps(&self, column: &str) -> Result<Ps, ConfigError> {
        self.parse(column, "a time in µs", |c| {
            c.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .map(|v| (v * 1e6).round() as Ps)
        })
    }

    /// An optional whole-number column: its default where the file has none.
    fn int_or<T: std::str::FromStr>(&self, column: &str, default: T) -> Result<T, ConfigError> {
        if self.get(column).is_empty() {
            Ok(default)
        } else {
            self.int(column)
        }
    }

    /// An optional yes/no column (`true` or `false`): its default where the file has none.
    fn flag_or(&self, column: &str, default: bool) -> Result<bool, ConfigError> {
        if self.get(column).is_empty() {
            Ok(default)
        } else {
            self.parse(column, "true or false", |c| c.parse::<bool>().ok())
        }
    }

    fn summary(&self) -> Result<Summary, ConfigError> {
        let words = |all: &[&str]| format!("one of {}", all.join(", "));
        let path_words: Vec<&str> = PathKind::ALL.iter().map(|p| p.name()).collect();
        let op_words: Vec<&str> = Op::ALL.iter().map(|o| o.name()).collect();
        let path = self.parse("path", &words(&path_words), |c| {
            PathKind::ALL.into_iter().find(|p| p.name() == c)
        })?;
        Ok(Summary {
            scenario: self.get("scenario").to_string(),
            class: self.parse(
                "class",
                "a topology class (PIX, PXB, ..., NV#)",
                Affinity::from_name,
            )?,
            path,
            effective_path: self.parse(
                "effective_path",
                "a path that ran",
                EffectivePath::from_name,
            )?,
            op: self.parse("op", &words(&op_words), |c| {
                Op::ALL.into_iter().find(|o| o.name() == c)
            })?,
            size_bytes: self.int("size_bytes")?,
            iterations: self.int("iterations")?,
            lat_model_ps: self.ps("lat_model_us")?,
            lat: LatencyStats {
                min_us: self.float("lat_min_us")?,
                p50_us: self.float("lat_p50_us")?,
                mean_us: self.float("lat_mean_us")?,
                p99_us: self.float("lat_p99_us")?,
                max_us: self.float("lat_max_us")?,
                stdev_us: self.float("lat_stdev_us")?,
                ci95_us: self.float("lat_ci95_us")?,
            },
            bw_gbps: self.float("bw_GBps")?,
            msg_rate_mps: self.float("msg_rate_mps")?,
            cpu_busy_ps: self.ps("cpu_busy_us")?,
            host_mem_bytes: self.int("host_mem_bytes")?,
            setup_ps: self.ps("setup_us")?,
            stages: Vec::new(),
            flows: self.int_or("flows", 1)?,
            bottleneck: Bottleneck::parse(self.get("bottleneck")),
            reason: self.get("reason").to_string(),
            rnr_naks: self.int_or("rnr_naks", 0)?,
            steady: self.flag_or("steady", true)?,
            flow_rows: Vec::new(),
            links: Vec::new(),
            workload_ps: None,
            busbw_gbps: match self.get(super::csv_out::BUSBW_COLUMN) {
                "" => None,
                _ => Some(self.float(super::csv_out::BUSBW_COLUMN)?),
            },
            chain: Vec::new(),
            fabric: None,
            variant: self.get(super::csv_out::VARIANT_COLUMN).to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::charts::testdata;

    /// What results.csv writes reads back as the same figures (to its six decimals).
    #[test]
    fn results_csv_reads_back() {
        let (_, rows) = testdata::realistic();
        let bytes = crate::report::csv_out::results_csv(&rows).unwrap();
        let back = results_from_bytes("r.csv", &bytes).unwrap();
        assert_eq!(back.len(), rows.len());
        for (a, b) in rows.iter().zip(&back) {
            assert_eq!(
                (&a.scenario, a.class, a.path, a.op, a.size_bytes),
                (&b.scenario, b.class, b.path, b.op, b.size_bytes)
            );
            assert_eq!(a.effective_path, b.effective_path);
            assert_eq!(a.lat_model_ps, b.lat_model_ps);
            assert!((a.lat.p50_us - b.lat.p50_us).abs() < 1e-6);
            assert!((a.bw_gbps - b.bw_gbps).abs() <= 1e-6 * a.bw_gbps.max(1.0));
        }
        // Written again, the rows give the same file.
        assert_eq!(crate::report::csv_out::results_csv(&back).unwrap(), bytes);
    }

    /// The `steady` column reads back; a file written before it had one reads as steady, and
    /// a cell other than true or false is refused by name.
    #[test]
    fn the_steady_column_reads_back_and_defaults_to_steady() {
        let (_, mut rows) = testdata::realistic();
        rows[0].steady = false;
        let bytes = crate::report::csv_out::results_csv(&rows).unwrap();
        let back = results_from_bytes("r.csv", &bytes).unwrap();
        assert!(!back[0].steady && back[1..].iter().all(|r| r.steady));
        let text = String::from_utf8(bytes).unwrap();
        let old: String = text
            .lines()
            .map(|l| l.rsplit_once(',').unwrap().0.to_string() + "\n")
            .collect();
        assert!(old.starts_with("scenario,") && !old.lines().next().unwrap().contains("steady"));
        assert!(results_from_bytes("r.csv", old.as_bytes()).unwrap()[0].steady);
        let bad = text.replacen(",false\n", ",maybe\n", 1);
        let e = results_from_bytes("r.csv", bad.as_bytes()).unwrap_err();
        assert!(e.to_string().contains("steady"), "{e}");
    }

    #[test]
    fn a_bad_file_names_its_line_and_column() {
        let e = results_from_bytes("r.csv", b"scenario,path\nPIX,gpudirect\n").unwrap_err();
        assert_eq!(e.file, "r.csv:1");
        assert!(e.found.contains("no column `class`"), "{e}");
        let (_, rows) = testdata::realistic();
        let good = String::from_utf8(crate::report::csv_out::results_csv(&rows).unwrap()).unwrap();
        let mut lines: Vec<String> = good.lines().map(String::from).collect();
        lines[2] = lines[2].replacen(",write_imm,", ",warp,", 1);
        let e = results_from_bytes("r.csv", lines.join("\n").as_bytes()).unwrap_err();
        assert_eq!((e.file.as_str(), e.key.as_str()), ("r.csv:3", "op"));
        assert!(e.to_string().contains("\"warp\""), "{e}");
    }
}

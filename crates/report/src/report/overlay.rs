//! Measured figures beside the model's (`gdrsim run --measured FILE`): which measured rows
//! belong to which results point, the model's figure there and the error, as plain data for
//! results.csv's extra columns, model_vs_measured.csv, report.md and the latency and bandwidth charts.
//! The matching itself (measured-data CSV rows to points) is gdrsim's `measured::overlay`'s.

use crate::config::{Op, PathKind};
use crate::stats::Summary;

/// Which figure of a results point a measurement is compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// One-way p50 latency (`lat_p50_us`), against perftest's t_typical.
    Latency,
    /// Streaming bandwidth (`bw_GBps`), against perftest's BW average.
    Bandwidth,
}

impl Figure {
    /// The results.csv column the measurement is compared with.
    pub fn model_column(self) -> &'static str {
        match self {
            Figure::Latency => "lat_p50_us",
            Figure::Bandwidth => "bw_GBps",
        }
    }

    /// The unit both figures are compared in, as the CSVs write it.
    pub fn unit(self) -> &'static str {
        match self {
            Figure::Latency => "us",
            Figure::Bandwidth => "GBps",
        }
    }

    /// The model's figure of a point.
    pub fn of(self, r: &Summary) -> f64 {
        match self {
            Figure::Latency => r.lat.p50_us,
            Figure::Bandwidth => r.bw_gbps,
        }
    }
}

/// One measured row matched to a results point.
#[derive(Clone, Debug, PartialEq)]
pub struct Matched {
    /// Its line in the measured-data CSV.
    pub csv_line: usize,
    /// The log it came from and the log's line, as the CSV records them.
    pub source_file: String,
    /// See `source_file`.
    pub source_line: usize,
    /// The perftest program (`ib_write_bw`).
    pub test: String,
    /// `host` or `gpu`.
    pub memory: String,
    /// The perftest statistic (`typical`, `average`).
    pub statistic: String,
    /// The figure as the CSV has it, in `unit`.
    pub value: f64,
    /// Its unit in the CSV (`us`, `MiB/s`, ...).
    pub unit: String,
    /// The results point: scenario name, path, op and size.
    pub scenario: String,
    /// See `scenario`.
    pub path: PathKind,
    /// See `scenario`.
    pub op: Op,
    /// See `scenario`.
    pub size_bytes: u64,
    /// Which of the point's figures it is compared with.
    pub figure: Figure,
    /// The measurement in the figure's unit (µs, or GB/s = 1e9 B/s).
    pub measured: f64,
    /// The model's figure at the point (0 until attached to the results).
    pub model: f64,
}

impl Matched {
    /// Whether the row is about results point `r`.
    pub fn is_at(&self, r: &Summary) -> bool {
        self.scenario == r.scenario
            && self.path == r.path
            && self.op == r.op
            && self.size_bytes == r.size_bytes
    }

    /// (model - measured) / measured in percent: above 0 where the model is the higher.
    pub fn error_pct(&self) -> f64 {
        error_pct(self.model, self.measured)
    }
}

/// (model - measured) / measured, in percent.
pub fn error_pct(model: f64, measured: f64) -> f64 {
    (model - measured) / measured * 100.0
}

/// The measured rows of one run against its results.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overlay {
    /// The measured-data CSV, as given on the command line.
    pub file: String,
    /// The scenario its rows were matched to.
    pub scenario: String,
    /// The rows matched to a results point, in the CSV's order.
    pub matched: Vec<Matched>,
    /// One line per kind of row that was not compared, and why ("skipped 12 nvbandwidth
    /// rows: ...").
    pub notes: Vec<String>,
}

impl Overlay {
    /// The file's name without its folders, for a chart legend.
    pub fn file_name(&self) -> String {
        std::path::Path::new(&self.file)
            .file_name()
            .map_or(self.file.clone(), |n| n.to_string_lossy().into_owned())
    }

    /// The measurement at point `r` for `figure`: the median of the rows matched there (the
    /// mean of the middle two for an even count), None where there is none.
    pub fn measured_at(&self, r: &Summary, figure: Figure) -> Option<f64> {
        let mut v: Vec<f64> = self
            .matched
            .iter()
            .filter(|m| m.figure == figure && m.is_at(r))
            .map(|m| m.measured)
            .collect();
        median(&mut v)
    }

    /// The median of the matched rows' absolute errors, percent; None when none matched.
    pub fn median_abs_error_pct(&self) -> Option<f64> {
        let mut v: Vec<f64> = self.matched.iter().map(|m| m.error_pct().abs()).collect();
        median(&mut v)
    }
}

fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The model_vs_measured.csv header: where the row came from, what it measured, the point it was
/// matched to, and the comparison.
pub const MEASURED_HEADER: [&str; 18] = [
    "csv_line",
    "source_file",
    "source_line",
    "test",
    "memory",
    "statistic",
    "value",
    "unit",
    "scenario",
    "path",
    "op",
    "size_bytes",
    "model_column",
    "compared_unit",
    "measured",
    "model",
    "error_pct",
    "abs_error_pct",
];

/// Renders model_vs_measured.csv: one row per matched measurement, in the CSV's order.
pub fn measured_csv(o: &Overlay) -> anyhow::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(MEASURED_HEADER)?;
    for m in &o.matched {
        let e = m.error_pct();
        w.write_record([
            m.csv_line.to_string(),
            m.source_file.clone(),
            m.source_line.to_string(),
            m.test.clone(),
            m.memory.clone(),
            m.statistic.clone(),
            m.value.to_string(),
            m.unit.clone(),
            m.scenario.clone(),
            m.path.name().to_string(),
            m.op.name().to_string(),
            m.size_bytes.to_string(),
            m.figure.model_column().to_string(),
            m.figure.unit().to_string(),
            format!("{:.6}", m.measured),
            format!("{:.6}", m.model),
            format!("{e:.6}"),
            format!("{:.6}", e.abs()),
        ])?;
    }
    Ok(w.into_inner()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matched(size: u64, figure: Figure, measured: f64, model: f64) -> Matched {
        Matched {
            csv_line: 2,
            source_file: "bw.log".into(),
            source_line: 9,
            test: "ib_write_bw".into(),
            memory: "gpu".into(),
            statistic: "average".into(),
            value: measured,
            unit: "GB/s".into(),
            scenario: "PIX".into(),
            path: PathKind::GpuDirect,
            op: Op::Write,
            size_bytes: size,
            figure,
            measured,
            model,
        }
    }

    #[test]
    fn error_is_model_over_measured_and_the_median_takes_the_middle() {
        let m = matched(64, Figure::Bandwidth, 20.0, 22.0);
        assert!((m.error_pct() - 10.0).abs() < 1e-12);
        assert!((error_pct(9.0, 10.0) + 10.0).abs() < 1e-12);
        let o = Overlay {
            file: "/tmp/x/m.csv".into(),
            scenario: "PIX".into(),
            matched: vec![
                m.clone(),
                matched(128, Figure::Bandwidth, 10.0, 9.0),
                matched(256, Figure::Latency, 2.0, 2.1),
            ],
            notes: vec![],
        };
        assert!(
            (o.median_abs_error_pct().unwrap() - 10.0).abs() < 1e-9,
            "|+10|, |-10|, |+5|"
        );
        assert_eq!(o.file_name(), "m.csv");
        assert_eq!(Overlay::default().median_abs_error_pct(), None);
        let mut v = [3.0, 1.0, 2.0, 10.0];
        assert_eq!(median(&mut v), Some(2.5));
    }

    #[test]
    fn measured_csv_has_one_row_per_match() {
        let o = Overlay {
            matched: vec![matched(64, Figure::Bandwidth, 20.0, 22.0)],
            ..Overlay::default()
        };
        let text = String::from_utf8(measured_csv(&o).unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0], MEASURED_HEADER.join(","));
        assert!(lines[1].ends_with(",bw_GBps,GBps,20.000000,22.000000,10.000000,10.000000"));
        assert!(lines[1].contains(",gpudirect,write,64,"), "{}", lines[1]);
    }
}

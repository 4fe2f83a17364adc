//! The measured-data CSV: written with the csv crate from [`Measurement`] rows (the header is
//! the struct's fields, in order) and read back for `gdrsim calibrate` and `gdrsim run
//! --measured` (with each row's line, and a bad cell's column, for errors).

use std::path::Path;

use anyhow::Result;

use super::Measurement;
use crate::config::ConfigError;
use crate::config::limits::MAX_MESSAGE;

/// The CSV's columns, in order.
pub const COLUMNS: [&str; 15] = [
    "source_file",
    "line",
    "tool",
    "test",
    "detail",
    "device",
    "memory",
    "size_bytes",
    "iterations",
    "metric",
    "statistic",
    "value",
    "unit",
    "row",
    "column",
];

/// The rows as CSV (header first).
pub fn to_bytes(rows: &[Measurement]) -> Result<Vec<u8>> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    if rows.is_empty() {
        w.write_record(COLUMNS)?;
    }
    for r in rows {
        w.serialize(r)?;
    }
    Ok(w.into_inner()?)
}

/// Reads a measured-data CSV; a malformed one is bad input naming its line.
pub fn read(path: &Path) -> Result<Vec<Measurement>, ConfigError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path)
        .map_err(|e| ConfigError::new(&name, "", "a readable measured-data CSV", e.to_string()))?;
    from_bytes(&name, &bytes)
}

/// Parses measured-data CSV bytes (`name` for errors).
pub fn from_bytes(name: &str, bytes: &[u8]) -> Result<Vec<Measurement>, ConfigError> {
    Ok(located_from_bytes(name, bytes)?
        .into_iter()
        .map(|(_, m)| m)
        .collect())
}

/// Reads a measured-data CSV with the line each row starts on (1-based; the header is line
/// 1), so that a later check of a row can name its line.
pub fn read_located(path: &Path) -> Result<Vec<(usize, Measurement)>, ConfigError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path)
        .map_err(|e| ConfigError::new(&name, "", "a readable measured-data CSV", e.to_string()))?;
    located_from_bytes(&name, &bytes)
}

/// [`from_bytes`] with each row's line. A bad row is named by its line and, where one cell is
/// at fault, its column (the error's key): `m.csv:3: key `size_bytes`: expected ...`.
pub fn located_from_bytes(
    name: &str,
    bytes: &[u8],
) -> Result<Vec<(usize, Measurement)>, ConfigError> {
    let mut r = ::csv::Reader::from_reader(bytes);
    let header = r
        .headers()
        .map_err(|e| super::bad(name, 1, "the measured-data CSV header", e.to_string()))?
        .clone();
    if header.iter().ne(COLUMNS) {
        return Err(super::bad(
            name,
            1,
            format!("the header {}", COLUMNS.join(",")),
            format!("{:?}", header.iter().collect::<Vec<_>>().join(",")),
        ));
    }
    let mut rows = Vec::new();
    let mut record = ::csv::StringRecord::new();
    loop {
        match r.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => return Err(row_error(name, &e)),
        }
        let line = record
            .position()
            .map_or(rows.len() + 2, |p| p.line() as usize);
        let m: Measurement = record
            .deserialize(Some(&header))
            .map_err(|e| row_error(name, &e).at_line(name, line))?;
        if let Some(size) = m.size_bytes.filter(|&s| s > MAX_MESSAGE) {
            // Beyond the model's largest message: a size near 2^64 would overflow the
            // emulation's arithmetic in `calibrate`.
            return Err(cell(
                name,
                line,
                "size_bytes",
                "a message size up to 16 GiB (the model's largest), or empty",
                size.to_string(),
            ));
        }
        if !m.value.is_finite() || m.value < 0.0 {
            // A bandwidth, rate, latency or utilisation: never below 0.
            return Err(cell(
                name,
                line,
                "value",
                "a finite number, 0 or more (a measured figure)",
                m.value.to_string(),
            ));
        }
        rows.push((line, m));
    }
    Ok(rows)
}

/// A bad cell: `file:line`, its column as the key.
pub fn cell(
    name: &str,
    line: usize,
    column: &str,
    expected: impl Into<String>,
    found: impl Into<String>,
) -> ConfigError {
    ConfigError::new(&format!("{name}:{line}"), column, expected, found)
}

/// The csv crate's error on a row as bad input: its line, and its column where it names a
/// field.
fn row_error(name: &str, e: &::csv::Error) -> ConfigError {
    let line = e.position().map_or(0, |p| p.line() as usize);
    match e.kind() {
        ::csv::ErrorKind::Deserialize { err, .. } => {
            let column = err
                .field()
                .and_then(|f| COLUMNS.get(f as usize))
                .copied()
                .unwrap_or("");
            let what = match column {
                "line" | "size_bytes" | "iterations" => {
                    "a whole number (empty for none where \
                                                        the column allows it)"
                }
                "value" => "a number",
                _ => "a measured-data cell",
            };
            cell(name, line, column, what, err.kind().to_string())
        }
        ::csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => super::bad(
            name,
            line,
            format!("a row of {expected_len} fields"),
            format!("{len} fields"),
        ),
        _ => super::bad(name, line, "a measured-data row", e.to_string()),
    }
}

trait AtLine {
    fn at_line(self, name: &str, line: usize) -> ConfigError;
}

impl AtLine for ConfigError {
    /// Deserializing a record the reader already holds gives no position: the line it started
    /// on stands in.
    fn at_line(mut self, name: &str, line: usize) -> ConfigError {
        if self.file == format!("{name}:0") {
            self.file = format!("{name}:{line}");
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> Measurement {
        Measurement {
            source_file: "a.log".into(),
            line: 12,
            tool: "perftest".into(),
            test: "ib_write_bw".into(),
            detail: String::new(),
            device: "mlx5_0".into(),
            memory: "gpu".into(),
            size_bytes: Some(65536),
            iterations: Some(5000),
            metric: "bandwidth".into(),
            statistic: "average".into(),
            value: 23456.78,
            unit: "MiB/s".into(),
            row: String::new(),
            column: String::new(),
        }
    }

    #[test]
    fn rows_round_trip_through_the_csv() {
        let mut nvb = row();
        nvb.size_bytes = None;
        nvb.iterations = None;
        nvb.detail = "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)".into();
        let rows = vec![row(), nvb];
        let bytes = to_bytes(&rows).unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert_eq!(text.lines().next().unwrap(), COLUMNS.join(","));
        assert_eq!(from_bytes("x.csv", &bytes).unwrap(), rows);
        assert_eq!(
            String::from_utf8(to_bytes(&[]).unwrap()).unwrap().trim(),
            COLUMNS.join(",")
        );
    }

    #[test]
    fn a_malformed_csv_names_its_line() {
        let mut text = String::from_utf8(to_bytes(&[row(), row()]).unwrap()).unwrap();
        text = text.replacen("65536", "lots", 1);
        let e = from_bytes("m.csv", text.as_bytes()).unwrap_err();
        assert_eq!(e.file, "m.csv:2", "{e}");
        let e = from_bytes("m.csv", b"a,b\n1,2\n").unwrap_err();
        assert_eq!(e.file, "m.csv:1", "{e}");
    }
}

//! compare.csv: one row per matched (scenario, path, op, size), with each study's figures
//! (columns named `FIGURE:LABEL`), each other study's ratios over the baseline
//! (`lat_ratio:LABEL/BASE`) and which study wins each figure.

use anyhow::Result;

use super::matching::Matching;
use super::study::Study;
use super::verdict::{self, ratio};

/// The leading columns, before the studies' own.
pub const KEY_COLUMNS: [&str; 5] = ["scenario", "path", "op", "size_bytes", "matched_on"];

/// Each study's columns, suffixed `:LABEL`.
pub const STUDY_COLUMNS: [&str; 3] = ["effective_path", "lat_p50_us", "bw_GBps"];

/// The header for `studies`.
pub fn header(studies: &[Study]) -> Vec<String> {
    let mut h: Vec<String> = KEY_COLUMNS.iter().map(|c| c.to_string()).collect();
    for s in studies {
        h.extend(STUDY_COLUMNS.iter().map(|c| format!("{c}:{}", s.label)));
    }
    let base = &studies[0].label;
    for s in &studies[1..] {
        for c in ["lat_ratio", "bw_ratio"] {
            h.push(format!("{c}:{}/{base}", s.label));
        }
    }
    h.extend(["lat_best".to_string(), "bw_best".to_string()]);
    h
}

/// A figure as results.csv writes it (so a study's cells are its results.csv's); empty where
/// there is no number.
fn num(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite())
        .map(crate::report::csv_out::figure)
        .unwrap_or_default()
}

/// Renders compare.csv.
pub fn compare_csv(studies: &[Study], m: &Matching) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(header(studies))?;
    for p in &m.points {
        let mut cells = vec![
            p.scenario.clone(),
            p.path.name().to_string(),
            p.op.name().to_string(),
            p.size.to_string(),
            m.on.name().to_string(),
        ];
        for r in &p.rows {
            cells.push(r.effective_path.name().to_string());
            cells.push(num(Some(r.lat.p50_us)));
            cells.push(num(Some(r.bw_gbps)));
        }
        let base = p.rows[0];
        for r in &p.rows[1..] {
            cells.push(num(ratio(r.lat.p50_us, base.lat.p50_us)));
            cells.push(num(ratio(r.bw_gbps, base.bw_gbps)));
        }
        cells.push(verdict::latency(p).text(studies));
        cells.push(verdict::bandwidth(p).text(studies));
        w.write_record(&cells)?;
    }
    Ok(w.into_inner()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::matching::match_rows;
    use crate::report::charts::testdata;
    use std::path::PathBuf;

    #[test]
    fn one_row_per_point_with_ratios_over_the_baseline() {
        let rows = testdata::rows(
            &testdata::SCENARIOS[..1],
            &["staged", "gpudirect"],
            &[8, 4096],
        );
        let mut slow = rows.clone();
        for r in &mut slow {
            r.lat.p50_us *= 2.0;
            r.bw_gbps *= 0.5;
        }
        let study = |label: &str, rows: Vec<_>| Study {
            dir: PathBuf::from(label),
            name: label.into(),
            label: label.into(),
            rows,
            info: None,
        };
        let studies = [study("A", rows), study("B", slow)];
        let m = match_rows(&studies).unwrap();
        let text = String::from_utf8(compare_csv(&studies, &m).unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "scenario,path,op,size_bytes,matched_on,effective_path:A,lat_p50_us:A,bw_GBps:A,\
             effective_path:B,lat_p50_us:B,bw_GBps:B,lat_ratio:B/A,bw_ratio:B/A,lat_best,bw_best"
        );
        assert_eq!(lines.len(), 5);
        // A third study: its own columns and ratios over the same baseline.
        let studies = [
            studies[0].clone(),
            studies[1].clone(),
            study("C", studies[0].rows.clone()),
        ];
        let h = header(&studies).join(",");
        assert!(
            h.contains(",bw_GBps:C,lat_ratio:B/A,bw_ratio:B/A,lat_ratio:C/A,bw_ratio:C/A,"),
            "{h}"
        );
        let m = match_rows(&studies).unwrap();
        let text = String::from_utf8(compare_csv(&studies, &m).unwrap()).unwrap();
        assert!(
            text.lines()
                .skip(1)
                .all(|l| l.contains(",2.000000,0.500000,1.000000,1.000000,")),
            "{text}"
        );
        for l in &lines[1..] {
            let c: Vec<&str> = l.split(',').collect();
            assert_eq!(c[4], "scenario");
            assert_eq!((c[11], c[12]), ("2.000000", "0.500000"), "{l}");
            assert_eq!((c[13], c[14]), ("A", "A"), "{l}");
        }
    }
}

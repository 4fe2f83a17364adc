//! Which study wins a matched point, by the rules of report.md's decision table (the same
//! functions: `report::decision`'s margins and steady state): latencies within the sum of both
//! 95 % half-widths (or `TIE`) and bandwidths within [`BW_NOISE`](crate::report::decision::BW_NOISE) are ties, and a bandwidth
//! point not at steady state decides nothing.

use crate::report::decision::{bandwidth_margin, latency_margin};
use crate::stats::Summary;

use super::matching::Point;
use super::study::Study;

/// The outcome of one figure at one point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Best {
    /// The study (its index) with the lowest p50 or the highest bandwidth, beyond the noise.
    Study(usize),
    /// Within the noise.
    Tie,
    /// A bandwidth point of some study more than [`BW_NOISE`](crate::report::decision::BW_NOISE) below a smaller size's of its
    /// series: its streaming run was too short for steady state.
    NotSteady,
}

impl Best {
    /// The study's label, "tie" or "tie (not steady)".
    pub fn text(self, studies: &[Study]) -> String {
        match self {
            Best::Study(i) => studies[i].label.clone(),
            Best::Tie => "tie".into(),
            Best::NotSteady => "tie (not steady)".into(),
        }
    }
}

/// `other / base`, where both are positive and finite.
pub fn ratio(other: f64, base: f64) -> Option<f64> {
    let r = other / base;
    (base > 0.0 && other >= 0.0 && r.is_finite()).then_some(r)
}

/// The study with the lowest p50 latency at `p`.
pub fn latency(p: &Point) -> Best {
    let mut by: Vec<(usize, &Summary)> = p.rows.iter().copied().enumerate().collect();
    by.sort_by(|a, b| a.1.lat.p50_us.total_cmp(&b.1.lat.p50_us));
    let ((wi, w), (_, o)) = (by[0], by[1]);
    match latency_margin(w, o) {
        Some(_) => Best::Study(wi),
        None => Best::Tie,
    }
}

/// The study with the highest streaming bandwidth at `p`.
/// A point where some study's streaming run did not reach steady state (`Summary::steady`)
/// decides nothing.
pub fn bandwidth(p: &Point) -> Best {
    let unsteady = p.rows.iter().any(|r| !r.steady);
    if unsteady {
        return Best::NotSteady;
    }
    let mut by: Vec<(usize, &Summary)> = p.rows.iter().copied().enumerate().collect();
    by.sort_by(|a, b| b.1.bw_gbps.total_cmp(&a.1.bw_gbps));
    let ((wi, w), (_, o)) = (by[0], by[1]);
    match bandwidth_margin(w.bw_gbps, o.bw_gbps) {
        Some(_) => Best::Study(wi),
        None => Best::Tie,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::matching::match_rows;
    use crate::report::charts::testdata;
    use std::path::PathBuf;

    fn study(label: &str, scale_lat: f64, scale_bw: f64) -> Study {
        let mut rows = testdata::rows(
            &testdata::SCENARIOS[..1],
            &["gpudirect"],
            &[8, 4096, 1 << 20],
        );
        for r in &mut rows {
            r.lat.p50_us *= scale_lat;
            r.lat.ci95_us = 0.0;
            r.bw_gbps *= scale_bw;
        }
        Study {
            dir: PathBuf::from(label),
            name: label.into(),
            label: label.into(),
            rows,
            info: None,
        }
    }

    #[test]
    fn the_faster_study_wins_beyond_the_noise_only() {
        let studies = [study("a", 1.0, 1.0), study("b", 1.2, 1.02)];
        let m = match_rows(&studies).unwrap();
        for p in &m.points {
            assert_eq!(latency(p), Best::Study(0));
            assert_eq!(bandwidth(p), Best::Tie, "2% is within the noise");
        }
        let studies = [study("a", 1.001, 1.0), study("b", 1.0, 1.5)];
        let m = match_rows(&studies).unwrap();
        assert_eq!(latency(&m.points[0]), Best::Tie);
        assert_eq!(bandwidth(&m.points[0]), Best::Study(1));
        assert_eq!(Best::Study(1).text(&studies), "b");
    }

    #[test]
    fn a_bandwidth_not_at_steady_state_decides_nothing() {
        let mut b = study("b", 1.0, 1.0);
        b.rows[2].bw_gbps *= 2.0;
        b.rows[2].steady = false;
        let studies = [study("a", 1.0, 1.0), b];
        let m = match_rows(&studies).unwrap();
        assert_eq!(bandwidth(&m.points[2]), Best::NotSteady);
        assert_eq!(ratio(1.0, 0.0), None);
        assert_eq!(ratio(3.0, 2.0), Some(1.5));
    }
}

//! compare's charts: latency and bandwidth against size, drawn by the run's own chart code
//! ([`crate::report::charts`]) from the matched rows, at the run's chart size: one series per
//! study, scenario and path (colour: study and scenario; stroke and marker: path), each
//! GPUDirect route ceiling in its study's colour where the study's config.toml loads.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::config::{ChartKind, ImageFormat, OutputOptions};
use crate::report::{RunInfo, ScenarioInfo};
use crate::stats::Summary;

use super::matching::Matching;
use super::study::Study;

/// The name a study's scenario has on the charts: "LABEL: SCENARIO".
pub fn series_name(study: &Study, scenario: &str) -> String {
    format!("{}: {scenario}", study.label)
}

/// The chart input: the matched rows renamed per study, and a [`RunInfo`] that lists the
/// scenarios scenario by scenario, the studies in order within each.
pub fn chart_input(studies: &[Study], m: &Matching) -> (RunInfo, Vec<Summary>) {
    let mut scenarios: Vec<ScenarioInfo> = Vec::new();
    let mut rows = Vec::new();
    for p in &m.points {
        for (s, r) in studies.iter().zip(&p.rows) {
            let name = series_name(s, &r.scenario);
            if !scenarios.iter().any(|x| x.name == name) {
                let described = (s.info.as_ref())
                    .and_then(|i| i.scenarios.iter().find(|x| x.name == r.scenario));
                let mut sc = described.cloned().unwrap_or_else(|| ScenarioInfo {
                    class: Some(r.class),
                    flows: r.flows as usize,
                    ..ScenarioInfo::default()
                });
                sc.name = name.clone();
                scenarios.push(sc);
            }
            let mut r = (*r).clone();
            r.scenario = name;
            rows.push(r);
        }
    }
    // Scenario by scenario (the baseline's order), each study's next to the others'.
    let order = |sc: &ScenarioInfo| {
        m.points.iter().position(|p| {
            studies
                .iter()
                .zip(&p.rows)
                .any(|(s, r)| series_name(s, &r.scenario) == sc.name)
        })
    };
    scenarios.sort_by_key(order);
    let labels: Vec<&str> = studies.iter().map(|s| s.label.as_str()).collect();
    let info = RunInfo {
        config_name: "compare".into(),
        hardware: labels.join(" vs "),
        scenarios,
        output: OutputOptions {
            charts: vec![ChartKind::Latency, ChartKind::Bandwidth],
            formats: vec![ImageFormat::Svg, ImageFormat::Png],
            ..OutputOptions::default()
        },
        ..RunInfo::default()
    };
    (info, rows)
}

/// Writes latency.{svg,png} and bandwidth.{svg,png} into `dir`, and busbw.{svg,png} where the
/// studies' matched rows are NCCL collectives' (the run's rule, `charts::kinds`); returns the
/// files.
pub fn write(dir: &Path, studies: &[Study], m: &Matching) -> Result<Vec<PathBuf>> {
    let (info, rows) = chart_input(studies, m);
    crate::report::charts::write_charts(dir, &info, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::matching::match_rows;
    use crate::report::charts::testdata;

    #[test]
    fn each_study_scenario_is_a_series_next_to_the_other_studies() {
        let study = |label: &str| Study {
            dir: PathBuf::from(label),
            name: label.into(),
            label: label.into(),
            rows: testdata::rows(
                &testdata::SCENARIOS[..2],
                &["staged", "gpudirect"],
                &[8, 4096],
            ),
            info: Some(testdata::info(&testdata::SCENARIOS)),
        };
        let studies = [study("A"), study("B")];
        let m = match_rows(&studies).unwrap();
        let (info, rows) = chart_input(&studies, &m);
        let names: Vec<&str> = info.scenarios.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["A: PIX", "B: PIX", "A: PHB", "B: PHB"]);
        assert!(
            info.scenarios[0].ceiling_gbps > 0.0,
            "the study's own ceiling"
        );
        assert_eq!(rows.len(), 2 * m.points.len());
        let model = crate::report::charts::data::Model::new(&info, &rows);
        assert_eq!(model.series.len(), 8);
    }
}

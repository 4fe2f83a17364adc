//! A study's folder: every file a run or a merge writes beside the manifest, in one order
//! (CSVs and the resolved config, then charts, then report.md), each written atomically.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::RunInfo;
use crate::config::{self, Config};
use crate::stats::Summary;

/// Writes every output of a run into `dir`: CSVs and resolved config first, then charts and
/// the report. Each file is written atomically.
pub fn write_outputs(
    dir: &Path,
    cfg: &Config,
    info: &RunInfo,
    rows: &[Summary],
) -> Result<Vec<PathBuf>> {
    write_outputs_with(dir, cfg, info, rows, &[])
}

/// [`write_outputs`], with the sensitivity study's `tornado` chart files (already written) for
/// report.md to link from its "Fragile conclusions".
pub fn write_outputs_with(
    dir: &Path,
    cfg: &Config,
    info: &RunInfo,
    rows: &[Summary],
    tornado: &[PathBuf],
) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    // One file's bytes at a time: the CSVs of a 100,000-point study are hundreds of MB.
    type Render<'a> = Box<dyn Fn() -> Result<Vec<u8>> + 'a>;
    let files: [(&str, Render); 5] = [
        (
            "results.csv",
            Box::new(|| super::csv_out::results_csv_with(rows, info.measured.as_ref())),
        ),
        ("stages.csv", Box::new(|| super::csv_out::stages_csv(rows))),
        ("flows.csv", Box::new(|| super::csv_out::flows_csv(rows))),
        ("links.csv", Box::new(|| super::csv_out::links_csv(rows))),
        (
            "config.toml",
            Box::new(|| Ok(config::to_toml(cfg).into_bytes())),
        ),
    ];
    for (name, render) in files {
        let p = dir.join(name);
        super::atomic::write(&p, &render()?)?;
        written.push(p);
    }
    if rows.iter().any(|r| !r.chain.is_empty()) {
        let p = dir.join("chain.csv");
        super::atomic::write(&p, &super::csv_out::chain_csv(rows)?)?;
        written.push(p);
    }
    if let Some(o) = &info.measured {
        let p = dir.join("model_vs_measured.csv");
        super::atomic::write(&p, &super::overlay::measured_csv(o)?)?;
        written.push(p);
    }
    // Charts and report.md show each sweep variant's scenarios as their own series.
    let shown = super::display_rows(rows);
    let charts = super::charts::write_charts(dir, info, &shown)?;
    written.extend(charts.iter().cloned());
    let mut linked = charts;
    linked.extend(tornado.iter().cloned());
    written.push(super::markdown::write_markdown(dir, info, &shown, &linked)?);
    Ok(written)
}

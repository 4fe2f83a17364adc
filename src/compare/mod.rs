//! `gdrsim compare OUT DIR_A DIR_B [DIR...]`: two or more finished studies (the folders `gdrsim
//! run` or `merge` wrote) in one set of charts and one table, for machine A against machine B
//! or cached against per-transfer registration.
//!
//! Every figure comes from the studies' results.csv ([`study`]); rows are matched point by point
//! and mismatched sweeps refused ([`matching`]); the first study is the baseline, and each
//! point's winner is decided as report.md's decision table decides ([`verdict`]). The folder
//! holds compare.csv ([`table`]), compare.md ([`markdown`]) and the latency and bandwidth
//! charts ([`charts`]), written as one unit as a run's folder is (hidden sibling, manifest,
//! swap), and only after every input has been read and checked: a refusal writes nothing.

pub mod charts;
pub mod markdown;
pub mod matching;
pub mod study;
pub mod table;
pub mod verdict;

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::config::ConfigError;
use crate::report::{self, atomic, output_dir};
use crate::scale::slurm::quote;

/// Compares the studies in `dirs` (the first is the baseline) into the folder `out`; `labels`
/// name the first studies in order (`--label`). Bad input (a folder that is not a study, a
/// mismatched sweep, an output folder that may not be replaced) is refused before anything is
/// written. Prints what was matched unless `quiet`; returns the folder.
pub fn command(out: &Path, dirs: &[PathBuf], labels: &[String], quiet: bool) -> Result<PathBuf> {
    if dirs.len() < 2 {
        return Err(ConfigError::new(
            "command line",
            "",
            "two or more study folders to compare",
            format!("{}", dirs.len()),
        )
        .into());
    }
    let mut studies = dirs
        .iter()
        .map(|d| study::read(d))
        .collect::<Result<Vec<_>, _>>()?;
    study::label(&mut studies, labels)?;
    let m = matching::match_rows(&studies)?;
    not_an_input(out, &studies)?;
    let command = reproducing_command(out, dirs, labels);
    let dir = output_dir::OutputDir::claim(out)?;
    let mut written = Vec::new();
    let csv = dir.path().join("compare.csv");
    atomic::write(&csv, &table::compare_csv(&studies, &m)?)?;
    written.push(csv);
    let charts = charts::write(dir.path(), &studies, &m)?;
    let names: Vec<String> = charts
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    written.extend(charts);
    let md = dir.path().join("compare.md");
    atomic::write(
        &md,
        markdown::render(&studies, &m, &names, &command).as_bytes(),
    )?;
    written.push(md);
    let labels: Vec<&str> = studies.iter().map(|s| s.label.as_str()).collect();
    let name = labels.join(" vs ");
    let record = output_dir::RunRecord {
        config_name: &name,
        seed: None,
        command: &command,
    };
    let done = dir.commit(&record, &written)?;
    if !quiet {
        let on = match m.on {
            matching::On::Scenario => "(scenario, path, op, size)",
            matching::On::Path => "(path, op, size): no scenario name is in every study",
        };
        report::emit(&format!(
            "compared {name}: {} points matched on {on}\nwrote {}\n",
            m.points.len(),
            done.display()
        ))?;
    }
    Ok(done)
}

/// Refuses an output folder that is one of the studies or holds one: replacing it would
/// delete the input.
fn not_an_input(out: &Path, studies: &[study::Study]) -> Result<(), ConfigError> {
    let Ok(o) = out.canonicalize() else {
        return Ok(());
    };
    for s in studies {
        if s.dir.canonicalize().is_ok_and(|d| d.starts_with(&o)) {
            return Err(ConfigError::new(
                "OUT",
                "",
                "an output folder that is none of the studies and holds none of them",
                format!("{}: holds the study {}", out.display(), s.dir.display()),
            ));
        }
    }
    Ok(())
}

/// `gdrsim compare OUT DIR... [--label L ...]`, as compare.md and the manifest record it.
fn reproducing_command(out: &Path, dirs: &[PathBuf], labels: &[String]) -> String {
    let mut c = format!("gdrsim compare {}", quote(&out.display().to_string()));
    for d in dirs {
        c.push(' ');
        c.push_str(&quote(&d.display().to_string()));
    }
    for l in labels {
        c.push_str(" --label ");
        c.push_str(&quote(l));
    }
    c
}

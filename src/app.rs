//! The commands that run whole studies, orchestration only: `run` (load -> cost check -> claim
//! the folder -> simulate -> write), `merge`, `sensitivity` and `slurm`. Loading, simulating and
//! describing a study live in [`crate::study`], which the tools call too.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::config::{self, Config, ConfigError};
use crate::progress::Progress;
use crate::report::{self, atomic};
use crate::scale::{self, shard::Shard};
use crate::scenario;
use crate::stats::Summary;
use crate::study;

/// The command that reproduces a run's results, as its report and manifest record it: the
/// config and seed, not where the folder went or how many threads ran (so two runs of one
/// study, or a study merged from shards, write identical folders).
pub fn reproducing_command(config: Option<&Path>, seed: Option<u64>) -> String {
    reproducing_command_with(config, seed, None)
}

/// [`reproducing_command`] with the measured-data CSV and its scenario (`--measured FILE
/// [--measured-scenario NAME]`), which change what the folder holds.
pub fn reproducing_command_with(
    config: Option<&Path>,
    seed: Option<u64>,
    measured: Option<(&Path, Option<&str>)>,
) -> String {
    let mut c = "gdrsim run".to_string();
    if let Some(p) = config {
        c.push(' ');
        c.push_str(&scale::slurm::quote(&p.display().to_string()));
    }
    if let Some(s) = seed {
        c.push_str(&format!(" --seed {s}"));
    }
    if let Some((f, sc)) = measured {
        c.push_str(" --measured ");
        c.push_str(&scale::slurm::quote(&f.display().to_string()));
        if let Some(sc) = sc {
            c.push_str(" --measured-scenario ");
            c.push_str(&scale::slurm::quote(sc));
        }
    }
    c
}

/// `gdrsim run`: the whole job with the default limits. Returns the output folder.
pub fn run(
    config: Option<&Path>,
    out: Option<&Path>,
    seed: Option<u64>,
    jobs: usize,
    quiet: bool,
    command: &str,
) -> Result<PathBuf> {
    let opts = RunOptions {
        out,
        seed,
        jobs,
        quiet,
        ..RunOptions::default()
    };
    run_with(config, &opts, command)
}

/// How `gdrsim run` runs a config.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions<'a> {
    /// The output folder (default: `output/<name>`, or `output/<name>-shard-K-of-N`).
    pub out: Option<&'a Path>,
    /// Replaces the config's seed.
    pub seed: Option<u64>,
    /// Worker threads, 0 = all cores.
    pub jobs: usize,
    /// Show no progress bar or progress lines.
    pub quiet: bool,
    /// Only this shard's points, into a shard folder.
    pub shard: Option<Shard>,
    /// Refuse, before any work, points estimated above these events or this peak memory.
    pub limits: study::Limits,
    /// Also vary every estimate by this fraction and mark the conclusions it flips as fragile
    /// in report.md (with sensitivity.csv beside it).
    pub sensitivity: Option<f64>,
    /// A measured-data CSV (`gdrsim measured`) to compare the results with: extra columns in
    /// results.csv, model_vs_measured.csv, a report.md section and markers on the latency and
    /// bandwidth charts.
    pub measured: Option<&'a Path>,
    /// The scenario the measured rows belong to (default: the config's first).
    pub measured_scenario: Option<&'a str>,
}

/// `gdrsim run` (a whole study, or one shard of it with `opts.shard`). Returns the folder.
pub fn run_with(config: Option<&Path>, opts: &RunOptions, command: &str) -> Result<PathBuf> {
    let RunOptions {
        out,
        seed,
        jobs,
        quiet,
        shard,
        limits,
        sensitivity,
        measured,
        measured_scenario,
    } = *opts;
    if shard.is_some() && sensitivity.is_some() {
        return Err(ConfigError::new(
            "command line",
            "--sensitivity",
            "a whole study (the variants need every point; run it on the merged study's config)",
            "--sensitivity with --shard",
        )
        .into());
    }
    if shard.is_some() && measured.is_some() {
        return Err(ConfigError::new(
            "command line",
            "--measured",
            "a whole study (a shard has only some of the points; compare after `gdrsim merge` \
             by running the merged study's config with --measured)",
            "--measured with --shard",
        )
        .into());
    }
    let mut cfg = study::load_config(config)?;
    if let Some(s) = seed {
        cfg.seed = s;
        // Every variant runs with the study's seed.
        if let Some(sw) = &mut cfg.sweep {
            for v in &mut sw.variants {
                v.cfg.seed = s;
            }
        }
    }
    if cfg.sweep.is_some() {
        let flag = if sensitivity.is_some() {
            Some("--sensitivity")
        } else if measured.is_some() {
            Some("--measured")
        } else {
            None
        };
        if let Some(flag) = flag {
            return Err(sweep_refuses(config, flag).into());
        }
    }
    // Read and matched before any work: a bad measured-data CSV writes nothing.
    let overlay = measured
        .map(|f| crate::measured::overlay::prepare(f, &cfg, measured_scenario))
        .transpose()?;
    if let Some(o) = &overlay
        && !quiet
    {
        eprintln!(
            "note: {}: {} measured figure{} matched to results points of scenario {}",
            o.file,
            o.matched.len(),
            if o.matched.len() == 1 { "" } else { "s" },
            o.scenario
        );
        for n in &o.notes {
            eprintln!("note: {}: {n}", o.file);
        }
    }
    let dir = out.map(Path::to_path_buf).unwrap_or_else(|| {
        let name = match shard {
            Some(s) => format!("{}-shard-{}-of-{}", cfg.name, s.index, s.count),
            None => cfg.name.clone(),
        };
        Path::new("output").join(name)
    });
    let all = scenario::plan(&cfg);
    let ids: Vec<usize> = match shard {
        Some(s) => scale::shard::point_ids(&cfg, s),
        None => (0..all.len()).collect(),
    };
    let file = study::source_name(config);
    // The sensitivity variants are made and costed with the study, before any work.
    let variants = sensitivity
        .map(|d| crate::sensitivity::variants(&cfg, d).map(|v| (d, v)))
        .transpose()?;
    let mut work = study::study_work(&cfg, &ids, study::threads(jobs));
    if let Some((_, v)) = &variants {
        work = work.then(v.work(study::threads(0)), scenario::cost::BASE_BYTES);
        let apart = "leave out --sensitivity (`gdrsim sensitivity` runs it alone)";
        work.cut_events = format!("{apart}, or vary a smaller study");
        work.cut_memory.clone_from(&work.cut_events);
    }
    study::admit(&file, &work, &limits)?;
    // Claimed before any work: a concurrent run into the same folder is refused now, not
    // after both have simulated.
    let out = report::output_dir::OutputDir::claim(&dir)?;

    let points: Vec<scenario::Point> = ids.iter().map(|&i| all[i].clone()).collect();
    let what = shard
        .map(|s| format!("shard {}", s.label()))
        .unwrap_or_default();
    let progress = Progress::new(points.len() as u64, quiet, &what);
    let rows = study::simulate(&cfg, &points, jobs, &progress)?;
    progress.finish();
    let Some(shard) = shard else {
        let assessed = variants
            .map(|(d, v)| v.simulate(quiet).map(|r| (d, r)))
            .transpose()?;
        let overlay = overlay.map(|o| crate::measured::overlay::attach(o, &rows));
        let extras = Extras {
            sensitivity: assessed.as_ref(),
            measured: overlay,
        };
        return finish_study(out, &dir, &cfg, &rows, command, quiet, extras);
    };
    let written = scale::shard::write(out.path(), &cfg, shard, &ids, &rows, command)?;
    out.commit(&record(&cfg, command), &written)?;
    if !quiet {
        report::emit(&format!(
            "wrote shard {} ({} of {} points) to {}\n",
            shard.label(),
            ids.len(),
            all.len(),
            dir.display()
        ))?;
    }
    Ok(dir)
}

/// The error of an option that does not take a study with `[sweep] vary`.
fn sweep_refuses(config: Option<&Path>, flag: &str) -> ConfigError {
    ConfigError::new(
        &study::source_name(config),
        "sweep.vary",
        format!(
            "a study without a sweep for {flag} (run it on one variant: set the values in the \
             config and leave out `vary`)"
        ),
        "a sweep of parameters",
    )
}

fn record<'a>(cfg: &'a Config, command: &'a str) -> report::output_dir::RunRecord<'a> {
    report::output_dir::RunRecord {
        config_name: &cfg.name,
        seed: Some(cfg.seed),
        command,
    }
}

/// What a run adds to a study's folder beyond its rows.
#[derive(Default)]
struct Extras<'a> {
    /// `--sensitivity`: the change and its report.
    sensitivity: Option<&'a (f64, crate::sensitivity::Report)>,
    /// `--measured`: the measured rows with the model's figures attached.
    measured: Option<report::overlay::Overlay>,
}

/// Writes a whole study's folder from its rows (a run, or a merge of shards) and puts it in
/// place.
fn finish_study(
    out: report::output_dir::OutputDir,
    dir: &Path,
    cfg: &Config,
    rows: &[Summary],
    command: &str,
    quiet: bool,
    extras: Extras,
) -> Result<PathBuf> {
    let mut info = study::run_info(cfg, command);
    info.measured = extras.measured;
    let mut written = Vec::new();
    let mut tornado = Vec::new();
    if let Some((delta, r)) = extras.sensitivity {
        info.fragile = Some((delta * 100.0, crate::sensitivity::fragile(r)));
        let p = out.path().join("sensitivity.csv");
        atomic::write(&p, &crate::sensitivity::csv(r)?)?;
        written.push(p);
        // The tornado chart in every configured image format, linked from "Fragile conclusions".
        let t = crate::sensitivity::tornado(r, TORNADO_THRESHOLD);
        let size = report::charts::image_size(&info);
        for f in config::ImageFormat::ALL {
            if info.output.formats.contains(&f) {
                let p = out.path().join(format!("tornado.{}", f.name()));
                report::charts::tornado::write(&p, &t, size)?;
                tornado.push(p);
            }
        }
        written.extend(tornado.iter().cloned());
    }
    written.extend(report::folder::write_outputs_with(
        out.path(),
        cfg,
        &info,
        rows,
        &tornado,
    )?);
    out.commit(&record(cfg, command), &written)?;
    if !quiet {
        report::emit(&format!(
            "{}wrote {}\n",
            report::table::summary_table(&report::display_rows(rows)),
            dir.display()
        ))?;
    }
    Ok(dir.to_path_buf())
}

/// `gdrsim merge OUT SHARD_DIR...`: the whole study from its shards, byte-identical to a run
/// of it on one machine.
pub fn merge(out: &Path, shards: &[PathBuf], quiet: bool) -> Result<PathBuf> {
    scale::merge::check_folders(out, shards)?;
    let (cfg, rows, command) = scale::merge::assemble(shards)?;
    let dir = report::output_dir::OutputDir::claim(out)?;
    finish_study(dir, out, &cfg, &rows, &command, quiet, Extras::default())
}

/// `gdrsim sensitivity`: the report as text, every variant into `csv` and the tornado chart
/// into `chart` (SVG or PNG by its extension) if given. Bad output paths, and variants that
/// cost more than `limits`, are refused before any work.
pub fn sensitivity(
    config: Option<&Path>,
    (delta, threshold): (&str, &str),
    (csv, chart): (Option<&Path>, Option<&Path>),
    quiet: bool,
    limits: &study::Limits,
) -> Result<String> {
    let delta = crate::sensitivity::parse_delta(delta)?;
    let threshold = crate::sensitivity::parse_delta(threshold)?;
    if let Some(p) = csv {
        report::output_dir::usable_file(p, "--csv")?;
    }
    if let Some(p) = chart {
        report::output_dir::usable_file(p, "--chart")?;
        let ext = p.extension().map(|e| e.to_string_lossy().to_lowercase());
        if !matches!(ext.as_deref(), Some("svg" | "png")) {
            return Err(ConfigError::new(
                "command line",
                "--chart",
                "a file ending in .svg or .png",
                p.display().to_string(),
            )
            .into());
        }
    }
    let cfg = study::load_config(config)?;
    if cfg.sweep.is_some() {
        return Err(sweep_refuses(config, "`gdrsim sensitivity`").into());
    }
    let file = study::source_name(config);
    let r = crate::sensitivity::study(&cfg, delta, quiet, &file, limits)?;
    if let Some(p) = csv {
        atomic::write(p, &crate::sensitivity::csv(&r)?)?;
    }
    if let Some(p) = chart {
        let size = report::charts::image_size(&study::run_info(&cfg, ""));
        report::charts::tornado::write(p, &crate::sensitivity::tornado(&r, threshold), size)?;
    }
    Ok(crate::sensitivity::render(&r, threshold))
}

/// The threshold `run --sensitivity` leaves smaller moves out of its tornado chart by, as
/// `gdrsim sensitivity` does by default.
pub const TORNADO_THRESHOLD: f64 = 0.05;

/// `gdrsim slurm CONFIG --tasks N ...`: writes the array and merge scripts, and with `submit`
/// submits them. Returns what to print.
pub fn slurm(config: Option<&Path>, seed: Option<u64>, opts: SlurmOptions) -> Result<String> {
    let cfg = study::load_config(config)?;
    let abs = |p: &Path| -> Result<PathBuf> {
        std::path::absolute(p).with_context(|| format!("resolving {}", p.display()))
    };
    let config_abs = config.map(abs).transpose()?;
    let dir = abs(&opts
        .out
        .clone()
        .unwrap_or_else(|| Path::new("output").join(format!("{}-slurm", cfg.name))))?;
    let bin = std::env::current_exe().context("finding the gdrsim binary")?;
    let mut request = scale::slurm::Request {
        config: config_abs.as_deref(),
        name: &cfg.name,
        tasks: opts.tasks,
        partition: opts.partition.as_deref(),
        time: opts.time.as_deref(),
        cpus_per_task: opts.cpus_per_task,
        dir: &dir,
        bin: &bin,
        seed,
        sbatch_options: &opts.sbatch_options,
        estimate: None,
    };
    scale::slurm::check(&request)?;
    let estimate = scale::slurm::estimate(&cfg, opts.tasks, opts.cpus_per_task);
    request.estimate = Some(&estimate);
    let (array, merge) = scale::slurm::write(&request)?;
    let mut text = format!(
        "wrote {}\nwrote {}\nestimated time per shard (gdrsim check's cost estimate): {}\n",
        array.display(),
        merge.display(),
        estimate.line()
    );
    if opts.submit {
        let (a, m) = scale::slurm::submit(&array, &merge)?;
        text.push_str(&format!(
            "submitted array job {a} ({} tasks) and merge job {m} (afterok:{a}); the study \
             will be in {}\n",
            opts.tasks,
            dir.join("result").display()
        ));
    } else {
        text.push_str(&format!(
            "submit with:\n  a=$(sbatch --parsable {})\n  sbatch --dependency=afterok:$a {}\n",
            array.display(),
            merge.display()
        ));
    }
    Ok(text)
}

/// `gdrsim slurm`'s options.
pub struct SlurmOptions {
    /// Array tasks (shards) to split the study into.
    pub tasks: u32,
    /// The Slurm partition (sbatch `--partition`); sbatch's default when absent.
    pub partition: Option<String>,
    /// Time limit per task, as sbatch takes it ("01:00:00"); sbatch's default when absent.
    pub time: Option<String>,
    /// CPUs per task: the shard's worker threads.
    pub cpus_per_task: u32,
    /// Folder for the scripts, logs, shards and the merged study (default:
    /// `output/<config name>-slurm`).
    pub out: Option<PathBuf>,
    /// Submit the array and the merge with sbatch (else print how to).
    pub submit: bool,
    /// Further sbatch options for both scripts, one word each ("--account=proj").
    pub sbatch_options: Vec<String>,
}

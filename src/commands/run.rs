//! `gdrsim run`: simulate a study and write results.csv, stages.csv, config.toml, charts and
//! report.md.

use std::path::PathBuf;

use gdrsim::app;
use gdrsim::study;

use super::args::LimitArgs;

// No doc comment: the command's help is its variant's in `Command` (commands/mod.rs).
#[derive(clap::Args)]
pub struct Args {
    /// Config file (default: the embedded configs/default.toml).
    pub config: Option<PathBuf>,
    /// Output folder (default: output/<config name>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Override the config's seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Worker threads, 0 = all cores (at most 1024).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..=1024))]
    pub jobs: u16,
    /// Print nothing but errors.
    #[arg(long)]
    pub quiet: bool,
    /// Refuse implausible values (warnings otherwise) as errors.
    #[arg(long)]
    pub strict: bool,
    /// Run only shard K of N (K from 0, as SLURM_ARRAY_TASK_ID) into a shard folder for
    /// `gdrsim merge`; the points are dealt to shards by estimated cost.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Also vary every estimate by DELTA (default 25%) up and down and mark in report.md
    /// the conclusions one change flips (sensitivity.csv and the tornado chart beside it);
    /// about 30 runs more.
    #[arg(long, value_name = "DELTA", num_args = 0..=1, default_missing_value = "25%")]
    pub sensitivity: Option<String>,
    /// Compare with a measured-data CSV (`gdrsim measured`): perftest t_typical against
    /// p50 latency, BW average against bandwidth, as extra results.csv columns,
    /// model_vs_measured.csv, a report.md section and markers on the latency and bandwidth charts.
    #[arg(long, value_name = "FILE")]
    pub measured: Option<PathBuf>,
    /// The scenario the measured rows belong to (default: the config's first).
    #[arg(long, value_name = "NAME", requires = "measured")]
    pub measured_scenario: Option<String>,
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<()> {
    let Args {
        config,
        out,
        seed,
        jobs,
        quiet,
        strict,
        shard,
        limits,
        sensitivity,
        measured,
        measured_scenario,
    } = a;
    let mut command = app::reproducing_command_with(
        config.as_deref(),
        seed,
        measured
            .as_deref()
            .map(|f| (f, measured_scenario.as_deref())),
    );
    if let Some(d) = &sensitivity {
        command.push_str(&format!(" --sensitivity {d}"));
    }
    let sensitivity = sensitivity
        .as_deref()
        .map(gdrsim::sensitivity::parse_delta)
        .transpose();
    shard
        .as_deref()
        .map(gdrsim::scale::shard::Shard::parse)
        .transpose()
        .and_then(|shard| Ok((shard, sensitivity?, limits.limits()?)))
        .map_err(Into::into)
        .and_then(|(shard, sensitivity, limits)| {
            study::plausibility(config.as_deref(), strict, quiet)?;
            let opts = app::RunOptions {
                out: out.as_deref(),
                seed,
                jobs: jobs as usize,
                quiet,
                shard,
                limits,
                sensitivity,
                measured: measured.as_deref(),
                measured_scenario: measured_scenario.as_deref(),
            };
            app::run_with(config.as_deref(), &opts, &command)
        })
        .map(|_| ())
}

/// Bare `gdrsim`: the embedded default study into output/default.
pub fn default() -> anyhow::Result<()> {
    app::run(None, None, None, 0, false, "cargo run --release").map(|_| ())
}

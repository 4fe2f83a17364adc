//! `gdrsim sensitivity`: vary every estimated parameter up and down and list which conclusions
//! (which path wins, the crossovers, the bottleneck) it moves or flips.

use std::path::PathBuf;

use gdrsim::app;
use gdrsim::report;

use super::args::LimitArgs;

// No doc comment: the command's help is its variant's in `Command` (commands/mod.rs).
#[derive(clap::Args)]
pub struct Args {
    /// Config file (default: the embedded configs/default.toml).
    pub config: Option<PathBuf>,
    /// The change of each estimate, up and down.
    #[arg(long, default_value = "25%")]
    pub delta: String,
    /// Leave out variants that move no ratio by this much and flip nothing.
    #[arg(long, default_value = "5%")]
    pub threshold: String,
    /// Also write every variant to this CSV file.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Also draw the tornado chart (each estimate's effect on the ratios at the largest
    /// size) into this file: .svg or .png.
    #[arg(long, value_name = "FILE.svg")]
    pub chart: Option<PathBuf>,
    /// Print nothing but the report (no progress).
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<()> {
    let Args {
        config,
        delta,
        threshold,
        csv,
        chart,
        quiet,
        limits,
    } = a;
    limits
        .limits()
        .map_err(Into::into)
        .and_then(|limits| {
            app::sensitivity(
                config.as_deref(),
                (&delta, &threshold),
                (csv.as_deref(), chart.as_deref()),
                quiet,
                &limits,
            )
        })
        .and_then(|text| report::emit(&text))
}

//! `gdrsim walk`: walk the staged and GPUDirect paths step by step with simulated times and the DMA
//! descriptors the NICs build (the seed walk-through).

use std::path::PathBuf;

use gdrsim::report;

use super::args::LimitArgs;

// No doc comment: the command's help is its variant's in `Command` (commands/mod.rs).
#[derive(clap::Args)]
pub struct Args {
    /// Config file (default: the embedded configs/default.toml).
    pub config: Option<PathBuf>,
    /// Scenario name (default: the config's first scenario).
    #[arg(long)]
    pub scenario: Option<String>,
    /// Message size, e.g. 4096 or 4KiB.
    #[arg(long, default_value = "4096")]
    pub size: String,
    /// Operation: write_imm, write, read or send.
    #[arg(long, default_value = "write_imm")]
    pub op: String,
    /// The path to contrast with GPUDirect: staged, gdrcopy, staged_pipelined, pxn or
    /// auto.
    #[arg(long, default_value = "staged")]
    pub path: String,
    /// Language: en or zh.
    #[arg(long, default_value = "en")]
    pub lang: String,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<()> {
    let Args {
        config,
        scenario,
        size,
        op,
        path,
        lang,
        limits,
    } = a;
    let limits = limits.limits()?;
    gdrsim::inspect::run_walk(
        config.as_deref(),
        scenario.as_deref(),
        (&path, &op, &size),
        &lang,
        &limits,
    )
    .and_then(|text| report::emit(&text))
}

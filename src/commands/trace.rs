//! `gdrsim trace`: write a Chrome trace-event JSON timeline (ui.perfetto.dev, chrome://tracing) of
//! one point.

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
    /// Path: host, staged, gpudirect, auto, gdrcopy, staged_pipelined or pxn.
    #[arg(long)]
    pub path: String,
    /// Operation: write_imm, write, read or send.
    #[arg(long, default_value = "write_imm")]
    pub op: String,
    /// Message size, e.g. 4096 or 1MiB.
    #[arg(long)]
    pub size: String,
    /// Messages to stream (at most the config's stream_window in flight).
    #[arg(long, default_value_t = 1)]
    pub messages: u32,
    /// Output file (.json).
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<()> {
    let Args {
        config,
        scenario,
        path,
        op,
        size,
        messages,
        out,
        limits,
    } = a;
    let limits = limits.limits()?;
    gdrsim::inspect::run_trace(
        config.as_deref(),
        scenario.as_deref(),
        (&path, &op),
        &size,
        messages,
        &out,
        &limits,
    )
    .and_then(|r| report::emit(&format!("{}\n", r.summary)))
}

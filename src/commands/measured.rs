//! `gdrsim measured`: read perftest, nvbandwidth and nccl-tests text logs into one
//! measured-data CSV (one row per measured figure; the columns are in README.md).

use std::path::PathBuf;

use gdrsim::report;

// No doc comment: the command's help is its variant's in `Command` (commands/mod.rs).
#[derive(clap::Args)]
pub struct Args {
    /// The logs (perftest's ib_*_lat / ib_*_bw output, nvbandwidth's output).
    #[arg(required = true)]
    pub logs: Vec<PathBuf>,
    /// Output CSV (default: stdout).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Where perftest's buffers were: auto (GPU where the log shows perftest's CUDA set-up
    /// lines), host or gpu (for logs without them, such as `gdrsim perftest`'s).
    #[arg(long, default_value = "auto")]
    pub memory: String,
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<()> {
    let Args { logs, out, memory } = a;
    gdrsim::measured::Memory::parse(&memory)
        .map_err(Into::into)
        .and_then(|m| gdrsim::measured::command(&logs, m, out.as_deref()))
        .and_then(|text| text.map_or(Ok(()), |t| report::emit(&t)))
}

//! `gdrsim merge`: merge the shard folders of one study into the whole study (byte-identical to a
//! run of it on one machine).

use std::path::PathBuf;

use gdrsim::app;

// No doc comment: the command's help is its variant's in `Command` (commands/mod.rs).
#[derive(clap::Args)]
pub struct Args {
    /// Output folder of the merged study.
    pub out: PathBuf,
    /// The shard folders (`gdrsim run --shard K/N`), every shard once.
    #[arg(required = true)]
    pub shards: Vec<PathBuf>,
    /// Print nothing but errors.
    #[arg(long)]
    pub quiet: bool,
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<()> {
    let Args { out, shards, quiet } = a;
    app::merge(&out, &shards, quiet).map(|_| ())
}

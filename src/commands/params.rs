//! `gdrsim params`: list every parameter of a config with its value, unit and the source of its
//! default (a reference row, a datasheet, a specification, or an estimate).

use std::path::PathBuf;

use gdrsim::report;
use gdrsim::study;

// No doc comment: the command's help is its variant's in `Command` (commands/mod.rs).
#[derive(clap::Args)]
pub struct Args {
    /// Config file (default: the embedded configs/default.toml).
    pub config: Option<PathBuf>,
    /// Only the parameters whose default is an estimate.
    #[arg(long)]
    pub estimates: bool,
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<()> {
    let Args { config, estimates } = a;
    study::load_config(config.as_deref())
        .map_err(Into::into)
        .map(|cfg| {
            let mut l = gdrsim::config::params::list(&cfg);
            // A study with collectives: NCCL's built-in channel defaults after its keys.
            l.extend(gdrsim::config::params::collective_rows(&cfg));
            if estimates {
                l.retain(|p| p.is_estimate());
            }
            gdrsim::config::params::render(&l)
        })
        .and_then(|text| report::emit(&text))
}

//! `gdrsim validate`: run the validation set (published measurements against the model) and print
//! the table; fails when a row that passed stops passing.

use std::path::PathBuf;

use gdrsim::report;

use super::args::LimitArgs;

// No doc comment: the command's help is its variant's in `Command` (commands/mod.rs).
#[derive(clap::Args)]
pub struct Args {
    /// Another validation set (default: the embedded data/validation.toml).
    #[arg(long)]
    pub set: Option<PathBuf>,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<()> {
    let Args { set, limits } = a;
    limits
        .limits()
        .map_err(Into::into)
        .and_then(|limits| gdrsim::validate::run(set.as_deref(), &limits))
        .and_then(|rows| {
            let (text, broken) = gdrsim::validate::render(&rows);
            report::emit(&text)?;
            if broken.is_empty() {
                Ok(())
            } else {
                Err(anyhow::anyhow!(
                    "rows that passed no longer pass: {}",
                    broken.join(", ")
                ))
            }
        })
}

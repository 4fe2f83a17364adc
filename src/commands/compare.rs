//! `gdrsim compare`: two or more studies' folders in one set of charts and one table.

use std::path::PathBuf;

// No doc comment: the command's help is its variant's in `Command` (commands/mod.rs).
#[derive(clap::Args)]
pub struct Args {
    /// Output folder.
    pub out: PathBuf,
    /// The study folders, the baseline first (the same sizes and ops in each).
    #[arg(required = true, num_args = 2.., value_name = "DIR")]
    pub studies: Vec<PathBuf>,
    /// A study's label in tables and charts (default: its config name), for the folders in
    /// order; repeat it.
    #[arg(long)]
    pub label: Vec<String>,
    /// Print nothing but errors.
    #[arg(long)]
    pub quiet: bool,
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<()> {
    let Args {
        out,
        studies,
        label,
        quiet,
    } = a;
    gdrsim::compare::command(&out, &studies, &label, quiet).map(|_| ())
}

//! `gdrsim slurm`: write sbatch scripts that run a study as a Slurm job array (one shard per task)
//! and a merge job that depends on it; --submit submits both.

use std::path::PathBuf;

use gdrsim::app;
use gdrsim::report;

// No doc comment: the command's help is its variant's in `Command` (commands/mod.rs).
#[derive(clap::Args)]
pub struct Args {
    /// Config file (default: the embedded configs/default.toml).
    pub config: Option<PathBuf>,
    /// Array tasks (shards).
    #[arg(long)]
    pub tasks: u32,
    /// Slurm partition.
    #[arg(long)]
    pub partition: Option<String>,
    /// Time limit per task, as sbatch takes it (e.g. 01:00:00).
    #[arg(long)]
    pub time: Option<String>,
    /// CPUs per task (the shard's worker threads).
    #[arg(long, default_value_t = 1)]
    pub cpus_per_task: u32,
    /// Folder for the scripts, logs, shards and the merged study (default:
    /// output/<config name>-slurm).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Override the config's seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Submit the array and the merge with sbatch and print their job ids.
    #[arg(long)]
    pub submit: bool,
    /// A further sbatch option for both scripts, one word with its value after '='
    /// (e.g. --sbatch-option=--account=proj --sbatch-option=--qos=high
    /// --sbatch-option=--constraint=h100); repeat it for several.
    #[arg(
        long = "sbatch-option",
        value_name = "OPTION",
        allow_hyphen_values = true
    )]
    pub sbatch_option: Vec<String>,
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<()> {
    let Args {
        config,
        tasks,
        partition,
        time,
        cpus_per_task,
        out,
        seed,
        submit,
        sbatch_option,
    } = a;
    app::slurm(
        config.as_deref(),
        seed,
        app::SlurmOptions {
            tasks,
            partition,
            time,
            cpus_per_task,
            out,
            submit,
            sbatch_options: sbatch_option,
        },
    )
    .and_then(|text| report::emit(&text))
}

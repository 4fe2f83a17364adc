//! `gdrsim nccl-tests`: run one of nccl-tests' collectives (all_reduce_perf, all_gather_perf,
//! reduce_scatter_perf, alltoall_perf, broadcast_perf, sendrecv_perf) on the simulated machine
//! and print nccl-tests' report.

use std::path::PathBuf;

use gdrsim::config::ConfigError;
use gdrsim::report;

use super::args::LimitArgs;

// No doc comment: the command's help is its variant's in `Command` (commands/mod.rs).
#[derive(clap::Args)]
pub struct Args {
    /// The test, as nccl-tests' binary is named (all_reduce_perf, all_gather_perf,
    /// reduce_scatter_perf, alltoall_perf, broadcast_perf, sendrecv_perf).
    pub test: String,
    /// Config file: its hosts, machines, network and [sim] (default: a built-in two-node DGX
    /// H100 machine); every host takes part.
    pub config: Option<PathBuf>,
    /// Smallest size (nccl-tests' parsesize: 8, 64K, 1M, 8G).
    #[arg(short = 'b', long = "minbytes", allow_hyphen_values = true)]
    pub min_bytes: Option<String>,
    /// Largest size (at most 16G).
    #[arg(short = 'e', long = "maxbytes", allow_hyphen_values = true)]
    pub max_bytes: Option<String>,
    /// Step in bytes between sizes (when -f is not above 1).
    #[arg(short = 'i', long = "stepbytes", allow_hyphen_values = true)]
    pub step_bytes: Option<String>,
    /// Step factor between sizes.
    #[arg(short = 'f', long = "stepfactor", allow_hyphen_values = true)]
    pub step_factor: Option<String>,
    /// GPUs per host (GPUs 0..g-1 of every host).
    #[arg(short = 'g', long = "ngpus", allow_hyphen_values = true)]
    pub gpus: Option<String>,
    /// Iterations (printed; each size is one simulated point).
    #[arg(short = 'n', long = "iters", allow_hyphen_values = true)]
    pub iters: Option<String>,
    /// Warm-up iterations (printed).
    #[arg(short = 'w', long = "warmup_iters", allow_hyphen_values = true)]
    pub warmup: Option<String>,
    /// Data type (float, half, bfloat16, double, int8, ...).
    #[arg(short = 'd', long = "datatype")]
    pub dtype: Option<String>,
    /// Reduction (sum, prod, max, min, avg, mulsum).
    #[arg(short = 'o', long = "op")]
    pub op: Option<String>,
    /// Validation: #wrong is printed (0) when above 0, N/A when 0.
    #[arg(short = 'c', long = "check", allow_hyphen_values = true)]
    pub check: Option<String>,
    /// Root rank of broadcast_perf (default 0; -1: every rank in turn, a sweep each).
    #[arg(short = 'r', long = "root", allow_hyphen_values = true)]
    pub root: Option<String>,
    /// An NCCL variable, NAME=VALUE, over the environment's (NCCL_ALGO, NCCL_PROTO,
    /// NCCL_NET_GDR_LEVEL, NCCL_NET_GDR_READ, NCCL_PXN_DISABLE, NCCL_MIN_NCHANNELS,
    /// NCCL_MAX_NCHANNELS, NCCL_IB_QPS_PER_CONNECTION, NCCL_BUFFSIZE); repeatable.
    #[arg(long = "env", value_name = "NAME=VALUE")]
    pub env: Vec<String>,
    /// No progress on stderr.
    #[arg(short = 'q', long)]
    pub quiet: bool,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// The environment's NCCL_* variables, then `--env`'s (which win).
fn nccl_vars(flags: &[String]) -> Result<Vec<(String, String)>, ConfigError> {
    let mut vars: Vec<(String, String)> = std::env::vars()
        .filter(|(n, _)| n.starts_with("NCCL_"))
        .collect();
    vars.sort();
    for f in flags {
        match f.split_once('=') {
            Some((n, v)) if gdrsim::nccl_tests::NCCL_VARS.contains(&n.trim()) => {
                vars.push((n.trim().to_string(), v.to_string()));
            }
            _ => {
                return Err(ConfigError::new(
                    "command line",
                    "--env",
                    format!(
                        "NAME=VALUE with NAME one of {}",
                        gdrsim::nccl_tests::NCCL_VARS.join(", ")
                    ),
                    format!("{f:?}"),
                ));
            }
        }
    }
    Ok(vars)
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<()> {
    let Args {
        test,
        config,
        min_bytes,
        max_bytes,
        step_bytes,
        step_factor,
        gpus,
        iters,
        warmup,
        dtype,
        op,
        check,
        root,
        env,
        quiet,
        limits,
    } = a;
    let env = nccl_vars(&env)?;
    let args = gdrsim::nccl_tests::Args {
        test,
        min_bytes,
        max_bytes,
        step_bytes,
        step_factor,
        gpus,
        iters,
        warmup,
        dtype,
        op,
        check,
        root,
        env,
    };
    let limits = limits.limits()?;
    let text = gdrsim::nccl_tests::command(config.as_deref(), &args, &limits, quiet)?;
    report::emit(&text)
}

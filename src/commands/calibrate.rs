//! `gdrsim calibrate`: fit chosen config parameters to measured perftest figures (bounded least
//! squares, Nelder-Mead) and write the calibrated config.

use std::path::PathBuf;

use gdrsim::report;

use super::args::LimitArgs;

// No doc comment: the command's help is its variant's in `Command` (commands/mod.rs).
#[derive(clap::Args)]
pub struct Args {
    /// The config whose parameters are fitted.
    pub config: PathBuf,
    /// The measured-data CSV (`gdrsim measured`).
    #[arg(long)]
    pub measured: PathBuf,
    /// The parameters to fit, as `gdrsim params` names them, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    pub fit: Vec<String>,
    /// The calibrated config.
    #[arg(long, default_value = "calibrated.toml")]
    pub out: PathBuf,
    /// Scenario name (default: the config's first scenario).
    #[arg(long)]
    pub scenario: Option<String>,
    /// The most iterations an emulated test runs (fewer when the measurement had fewer).
    #[arg(long, default_value_t = 200)]
    pub iters: u32,
    /// Each fitted value stays within [value / R, value * R] of the config's.
    #[arg(long, default_value_t = 4.0)]
    pub range: f64,
    /// The measured statistics fitted, comma-separated (perftest latency: min, max,
    /// typical, avg, stdev, p99, p99.9; perftest bandwidth: peak, average; nvbandwidth:
    /// median).
    #[arg(long, value_delimiter = ',', default_value = "typical,average,median")]
    pub stats: Vec<String>,
    /// nvbandwidth rows: the measured run's buffer size in MiB (its `-b`; the logs do not
    /// print it: nvbandwidth's default).
    #[arg(long, value_name = "MiB", default_value_t = gdrsim::nvbandwidth::layout::DEFAULT_BUFFER_MIB)]
    pub nvb_buffer_size: u64,
    /// nvbandwidth rows: the measured run's samples (its `-i`).
    #[arg(long, default_value_t = 3)]
    pub nvb_samples: u32,
    /// nvbandwidth rows: the measured run's copies per sample (its `--loopCount`).
    #[arg(long, default_value_t = 16)]
    pub nvb_loops: u32,
    /// Fit the named device's parameter alone (by default a fitted parameter of one device is
    /// applied to every identical device of its machine: all 8 alike NICs, not nic0 only).
    #[arg(long)]
    pub this_device_only: bool,
    /// Write the calibrated config although a fitted value ended at its bound (refused by
    /// default: the rows want it beyond the range).
    #[arg(long)]
    pub allow_bound: bool,
    /// Write the calibrated config although `check --strict` refuses it (an implausible value,
    /// such as a 1.6 Tb/s NIC port).
    #[arg(long)]
    pub allow_implausible: bool,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<()> {
    let Args {
        config,
        measured,
        fit,
        out,
        scenario,
        iters,
        range,
        stats,
        nvb_buffer_size,
        nvb_samples,
        nvb_loops,
        this_device_only,
        allow_bound,
        allow_implausible,
        limits,
    } = a;
    limits.limits().map_err(Into::into).and_then(|limits| {
        let o = gdrsim::calibrate::Options {
            keys: fit,
            scenario,
            iters,
            range,
            stats,
            nvb_buffer_mib: nvb_buffer_size,
            nvb_samples,
            nvb_loops,
            limits,
            this_device_only,
            allow_bound,
            allow_implausible,
            ..Default::default()
        };
        gdrsim::calibrate::command(&config, &measured, &o, &out)
            .and_then(|text| report::emit(&text))
    })
}

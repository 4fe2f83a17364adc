//! The commands of the gdrsim binary, one module each: its options (`Args`) and its work
//! (`run`). `Command` names them for clap; `args` holds the options several commands share.

use clap::Subcommand;

pub mod args;
pub mod calibrate;
pub mod check;
pub mod compare;
pub mod import;
pub mod measured;
pub mod merge;
pub mod nccl_tests;
pub mod nvbandwidth;
pub mod p2p_matrix;
pub mod params;
pub mod perftest;
pub mod presets;
pub mod run;
pub mod sensitivity;
pub mod slurm;
pub mod topo;
pub mod trace;
pub mod validate;
pub mod walk;

/// The commands, in the order `gdrsim --help` lists them.
#[derive(Subcommand)]
pub enum Command {
    /// Simulate a study and write results.csv, stages.csv, config.toml, charts and report.md.
    Run(run::Args),
    /// Merge the shard folders of one study into the whole study (byte-identical to a run of
    /// it on one machine).
    Merge(merge::Args),
    /// Compare two or more studies' folders (`gdrsim run` outputs) in one set of charts and one
    /// table: compare.csv, compare.md, latency and bandwidth charts; the first is the baseline.
    Compare(compare::Args),
    /// Write sbatch scripts that run a study as a Slurm job array (one shard per task) and a
    /// merge job that depends on it; --submit submits both.
    Slurm(slurm::Args),
    /// Vary every estimated parameter up and down and list which conclusions (which path
    /// wins, the crossovers, the bottleneck) it moves or flips.
    Sensitivity(sensitivity::Args),
    /// Run one of perftest's tests on the simulated machine and print perftest's report
    /// (ib_write_lat, ib_write_bw, ib_read_lat, ib_read_bw, ib_send_lat, ib_send_bw).
    Perftest(perftest::Args),
    /// Measure every GPU pair of a host as CUDA's p2pBandwidthLatencyTest does (unidirectional
    /// and bidirectional bandwidth, latency, P2P on and off) and print its report.
    P2pMatrix(p2p_matrix::Args),
    /// Run one of nvbandwidth's eight copy-engine testcases on the simulated machine and print
    /// nvbandwidth's report: host to device, device to host, and device to device (read and
    /// write), each one way and bidirectional (`--list` lists them by index and name).
    Nvbandwidth(nvbandwidth::Args),
    /// Run one of nccl-tests' collectives (all_reduce_perf, all_gather_perf,
    /// reduce_scatter_perf, alltoall_perf) over every host of the simulated machine and print nccl-tests'
    /// report: one row per size, out-of-place and in-place, and the average bus bandwidth.
    NcclTests(nccl_tests::Args),
    /// Run the validation set (published measurements against the model) and print the table;
    /// fails when a row that passed stops passing.
    Validate(validate::Args),
    /// Read perftest, nvbandwidth and nccl-tests text logs into one measured-data CSV (one row
    /// per measured figure; the columns are in README.md).
    Measured(measured::Args),
    /// Fit chosen config parameters to measured perftest figures (bounded least squares,
    /// Nelder-Mead) and write the calibrated config.
    Calibrate(calibrate::Args),
    /// Validate a config and run nothing.
    Check(check::Args),
    /// Print each host's GPUs and NICs as an `nvidia-smi topo -m` matrix, or with --network
    /// the fabric between the hosts (switches, cables, bisection, a path).
    Topo(topo::Args),
    /// List the built-in machine presets (`[[machines]] preset = "NAME"` in a config) and GPU
    /// and NIC models (`preset = "ID"` on a GPU or NIC entry), or print one.
    Presets(presets::Args),
    /// Write a config from what a real machine prints (`gdrsim import topo-m FILE --gpu MODEL
    /// --nic MODEL`, `gdrsim import nccl-topo FILE.xml`).
    Import(import::Args),
    /// List every parameter of a config with its value, unit and the source of its default
    /// (a reference row, a datasheet, a specification, or an estimate).
    Params(params::Args),
    /// Walk the staged and GPUDirect paths step by step with simulated times and the DMA
    /// descriptors the NICs build (the seed walk-through).
    Walk(walk::Args),
    /// Write a Chrome trace-event JSON timeline (ui.perfetto.dev, chrome://tracing) of one point.
    Trace(trace::Args),
}

impl Command {
    /// Runs the command.
    pub fn execute(self) -> anyhow::Result<()> {
        match self {
            Command::Run(a) => run::run(a),
            Command::Merge(a) => merge::run(a),
            Command::Compare(a) => compare::run(a),
            Command::Slurm(a) => slurm::run(a),
            Command::Sensitivity(a) => sensitivity::run(a),
            Command::Perftest(a) => perftest::run(a),
            Command::P2pMatrix(a) => p2p_matrix::run(a),
            Command::Nvbandwidth(a) => nvbandwidth::run(a),
            Command::NcclTests(a) => nccl_tests::run(a),
            Command::Validate(a) => validate::run(a),
            Command::Measured(a) => measured::run(a),
            Command::Calibrate(a) => calibrate::run(a),
            Command::Check(a) => check::run(a),
            Command::Topo(a) => topo::run(a),
            Command::Presets(a) => presets::run(a),
            Command::Import(a) => import::run(a),
            Command::Params(a) => params::run(a),
            Command::Walk(a) => walk::run(a),
            Command::Trace(a) => trace::run(a),
        }
    }
}

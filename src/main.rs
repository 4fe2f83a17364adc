//! The gdrsim command line. Exit codes: 0 success, 2 bad input (config), 1 internal failure.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use gdrsim::app;
use gdrsim::config::ConfigError;
use gdrsim::report;
use gdrsim::study;

#[derive(Parser)]
#[command(
    name = "gdrsim",
    version,
    about = "Discrete-event model of GPUDirect RDMA vs host-staged transfers",
    after_help = "With no command, gdrsim is gdrsim run: `gdrsim --quiet --out DIR` runs the \
                  embedded default study."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a study and write results.csv, stages.csv, config.toml, charts and report.md.
    Run {
        /// Config file (default: the embedded configs/default.toml).
        config: Option<PathBuf>,
        /// Output folder (default: output/<config name>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Override the config's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Worker threads, 0 = all cores (at most 1024).
        #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..=1024))]
        jobs: u16,
        /// Print nothing but errors.
        #[arg(long)]
        quiet: bool,
        /// Refuse implausible values (warnings otherwise) as errors.
        #[arg(long)]
        strict: bool,
        /// Run only shard K of N (K from 0, as SLURM_ARRAY_TASK_ID) into a shard folder for
        /// `gdrsim merge`; the points are dealt to shards by estimated cost.
        #[arg(long, value_name = "K/N")]
        shard: Option<String>,
        #[command(flatten)]
        limits: LimitArgs,
        /// Also vary every estimate by DELTA (default 25%) up and down and mark in report.md
        /// the conclusions one change flips (sensitivity.csv and the tornado chart beside it);
        /// about 30 runs more.
        #[arg(long, value_name = "DELTA", num_args = 0..=1, default_missing_value = "25%")]
        sensitivity: Option<String>,
        /// Compare with a measured-data CSV (`gdrsim measured`): perftest t_typical against
        /// p50 latency, BW average against bandwidth, as extra results.csv columns,
        /// model_vs_measured.csv, a report.md section and markers on the latency and bandwidth charts.
        #[arg(long, value_name = "FILE")]
        measured: Option<PathBuf>,
        /// The scenario the measured rows belong to (default: the config's first).
        #[arg(long, value_name = "NAME", requires = "measured")]
        measured_scenario: Option<String>,
    },
    /// Merge the shard folders of one study into the whole study (byte-identical to a run of
    /// it on one machine).
    Merge {
        /// Output folder of the merged study.
        out: PathBuf,
        /// The shard folders (`gdrsim run --shard K/N`), every shard once.
        #[arg(required = true)]
        shards: Vec<PathBuf>,
        /// Print nothing but errors.
        #[arg(long)]
        quiet: bool,
    },
    /// Compare two or more studies' folders (`gdrsim run` outputs) in one set of charts and one
    /// table: compare.csv, compare.md, latency and bandwidth charts; the first is the baseline.
    Compare {
        /// Output folder.
        out: PathBuf,
        /// The study folders, the baseline first (the same sizes and ops in each).
        #[arg(required = true, num_args = 2.., value_name = "DIR")]
        studies: Vec<PathBuf>,
        /// A study's label in tables and charts (default: its config name), for the folders in
        /// order; repeat it.
        #[arg(long)]
        label: Vec<String>,
        /// Print nothing but errors.
        #[arg(long)]
        quiet: bool,
    },
    /// Write sbatch scripts that run a study as a Slurm job array (one shard per task) and a
    /// merge job that depends on it; --submit submits both.
    Slurm {
        /// Config file (default: the embedded configs/default.toml).
        config: Option<PathBuf>,
        /// Array tasks (shards).
        #[arg(long)]
        tasks: u32,
        /// Slurm partition.
        #[arg(long)]
        partition: Option<String>,
        /// Time limit per task, as sbatch takes it (e.g. 01:00:00).
        #[arg(long)]
        time: Option<String>,
        /// CPUs per task (the shard's worker threads).
        #[arg(long, default_value_t = 1)]
        cpus_per_task: u32,
        /// Folder for the scripts, logs, shards and the merged study (default:
        /// output/<config name>-slurm).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Override the config's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Submit the array and the merge with sbatch and print their job ids.
        #[arg(long)]
        submit: bool,
        /// A further sbatch option for both scripts, one word with its value after '='
        /// (e.g. --sbatch-option=--account=proj --sbatch-option=--qos=high
        /// --sbatch-option=--constraint=h100); repeat it for several.
        #[arg(
            long = "sbatch-option",
            value_name = "OPTION",
            allow_hyphen_values = true
        )]
        sbatch_option: Vec<String>,
    },
    /// Vary every estimated parameter up and down and list which conclusions (which path
    /// wins, the crossovers, the bottleneck) it moves or flips.
    Sensitivity {
        /// Config file (default: the embedded configs/default.toml).
        config: Option<PathBuf>,
        /// The change of each estimate, up and down.
        #[arg(long, default_value = "25%")]
        delta: String,
        /// Leave out variants that move no ratio by this much and flip nothing.
        #[arg(long, default_value = "5%")]
        threshold: String,
        /// Also write every variant to this CSV file.
        #[arg(long)]
        csv: Option<PathBuf>,
        /// Also draw the tornado chart (each estimate's effect on the ratios at the largest
        /// size) into this file: .svg or .png.
        #[arg(long, value_name = "FILE.svg")]
        chart: Option<PathBuf>,
        /// Print nothing but the report (no progress).
        #[arg(long)]
        quiet: bool,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Run one of perftest's tests on the simulated machine and print perftest's report
    /// (ib_write_lat, ib_write_bw, ib_read_lat, ib_read_bw, ib_send_lat, ib_send_bw).
    Perftest {
        /// The test, as perftest's binary is named.
        test: String,
        /// Config file (default: the embedded configs/default.toml).
        config: Option<PathBuf>,
        /// Scenario name (default: the config's first scenario).
        #[arg(long)]
        scenario: Option<String>,
        /// Message size (perftest's default: 65536 for bandwidth, 2 for latency).
        #[arg(short = 's', long = "size")]
        size: Option<String>,
        /// Every power of two from 2 B to 8 MiB.
        #[arg(short = 'a', long = "all", conflicts_with = "size")]
        all: bool,
        /// Iterations (default 5000 for bandwidth, 1000 for latency).
        #[arg(short = 'n', long = "iters")]
        iters: Option<u32>,
        /// Messages in flight per QP (default 128 for bandwidth, 1 for latency).
        #[arg(short = 't', long = "tx-depth")]
        tx_depth: Option<u32>,
        /// Queue pairs, each streaming -n messages at once (bandwidth tests only).
        #[arg(short = 'q', long = "qp", default_value_t = 1)]
        qps: u32,
        /// Both directions at once; the figures are the two sides' sum (bandwidth tests only).
        #[arg(short = 'b', long = "bidirectional")]
        bidirectional: bool,
        /// GPU buffers on both sides (the GPUDirect path); a GPU index is accepted and ignored
        /// (the scenario names the GPU).
        #[arg(long = "use_cuda", num_args = 0..=1, default_missing_value = "0")]
        use_cuda: Option<String>,
        /// Report Gb/sec instead of MiB/sec.
        #[arg(long = "report_gbits")]
        report_gbits: bool,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Measure every GPU pair of a host as CUDA's p2pBandwidthLatencyTest does (unidirectional
    /// and bidirectional bandwidth, latency, P2P on and off) and print its report.
    P2pMatrix {
        /// Config file (default: the embedded configs/default.toml).
        config: Option<PathBuf>,
        /// The host whose GPUs are measured (default: the config's first).
        #[arg(long)]
        host: Option<String>,
        /// Ints per bandwidth copy (the sample's default: 40000000, 160 MB).
        #[arg(long = "numElems", default_value_t = gdrsim::p2p_matrix::DEFAULT_ELEMS)]
        elems: u64,
        /// Also measure P2P reads (the destination GPU's copy engine reads the peer).
        #[arg(long = "p2p_read")]
        p2p_read: bool,
        /// Write every cell to this CSV file.
        #[arg(long, value_name = "FILE.csv")]
        csv: Option<PathBuf>,
        /// Write the heatmap of the P2P=Enabled matrices to this SVG file.
        #[arg(long, value_name = "FILE.svg")]
        chart: Option<PathBuf>,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Run one of nvbandwidth's eight copy-engine testcases on the simulated machine and print
    /// nvbandwidth's report: host to device, device to host, and device to device (read and
    /// write), each one way and bidirectional (`--list` lists them by index and name).
    Nvbandwidth {
        /// The testcase, by nvbandwidth's name or index (required unless --list).
        #[arg(required_unless_present = "list")]
        testcase: Option<String>,
        /// Config file (default: the embedded configs/default.toml).
        config: Option<PathBuf>,
        /// List the testcases.
        #[arg(short = 'l', long = "list")]
        list: bool,
        /// Memcpy buffer size in MiB.
        #[arg(
            short = 'b',
            long = "bufferSize",
            value_name = "MiB",
            default_value_t = 512,
            allow_negative_numbers = true
        )]
        buffer_size: u64,
        /// Samples of the benchmark (the median is reported).
        #[arg(
            short = 'i',
            long = "testSamples",
            default_value_t = 3,
            allow_negative_numbers = true
        )]
        test_samples: u32,
        /// Copies per sample.
        #[arg(
            long = "loopCount",
            default_value_t = 16,
            allow_negative_numbers = true
        )]
        loop_count: u32,
        /// Use the mean of the samples instead of the median.
        #[arg(short = 'm', long = "useMean")]
        use_mean: bool,
        /// The host whose GPUs are measured (default: the config's first).
        #[arg(long)]
        host: Option<String>,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Run the validation set (published measurements against the model) and print the table;
    /// fails when a row that passed stops passing.
    Validate {
        /// Another validation set (default: the embedded data/validation.toml).
        #[arg(long)]
        set: Option<PathBuf>,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Read perftest and nvbandwidth text logs into one measured-data CSV (one row per
    /// measured figure; the columns are in README.md).
    Measured {
        /// The logs (perftest's ib_*_lat / ib_*_bw output, nvbandwidth's output).
        #[arg(required = true)]
        logs: Vec<PathBuf>,
        /// Output CSV (default: stdout).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Where perftest's buffers were: auto (GPU where the log shows perftest's CUDA set-up
        /// lines), host or gpu (for logs without them, such as `gdrsim perftest`'s).
        #[arg(long, default_value = "auto")]
        memory: String,
    },
    /// Fit chosen config parameters to measured perftest figures (bounded least squares,
    /// Nelder-Mead) and write the calibrated config.
    Calibrate {
        /// The config whose parameters are fitted.
        config: PathBuf,
        /// The measured-data CSV (`gdrsim measured`).
        #[arg(long)]
        measured: PathBuf,
        /// The parameters to fit, as `gdrsim params` names them, comma-separated.
        #[arg(long, value_delimiter = ',', required = true)]
        fit: Vec<String>,
        /// The calibrated config.
        #[arg(long, default_value = "calibrated.toml")]
        out: PathBuf,
        /// Scenario name (default: the config's first scenario).
        #[arg(long)]
        scenario: Option<String>,
        /// The most iterations an emulated test runs (fewer when the measurement had fewer).
        #[arg(long, default_value_t = 200)]
        iters: u32,
        /// Each fitted value stays within [value / R, value * R] of the config's.
        #[arg(long, default_value_t = 4.0)]
        range: f64,
        /// The measured statistics fitted, comma-separated (perftest latency: min, max,
        /// typical, avg, stdev, p99, p99.9; perftest bandwidth: peak, average; nvbandwidth:
        /// median).
        #[arg(long, value_delimiter = ',', default_value = "typical,average,median")]
        stats: Vec<String>,
        /// nvbandwidth rows: the measured run's buffer size in MiB (its `-b`; the logs do not
        /// print it: nvbandwidth's default).
        #[arg(long, value_name = "MiB", default_value_t = gdrsim::nvbandwidth::layout::DEFAULT_BUFFER_MIB)]
        nvb_buffer_size: u64,
        /// nvbandwidth rows: the measured run's samples (its `-i`).
        #[arg(long, default_value_t = 3)]
        nvb_samples: u32,
        /// nvbandwidth rows: the measured run's copies per sample (its `--loopCount`).
        #[arg(long, default_value_t = 16)]
        nvb_loops: u32,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Validate a config and run nothing.
    Check {
        config: PathBuf,
        /// Refuse implausible values (warnings otherwise) as errors.
        #[arg(long)]
        strict: bool,
    },
    /// Print each host's GPUs and NICs as an `nvidia-smi topo -m` matrix.
    Topo { config: Option<PathBuf> },
    /// List the built-in machine presets (`[[machines]] preset = "NAME"` in a config), or print
    /// one's TOML.
    Presets {
        /// The preset to print (default: list them all, one line each).
        name: Option<String>,
    },
    /// Write a config from what a real machine prints (`gdrsim import topo-m FILE`, `gdrsim
    /// import nccl-topo FILE.xml`).
    Import {
        #[command(subcommand)]
        what: Import,
    },
    /// List every parameter of a config with its value, unit and the source of its default
    /// (a reference row, a datasheet, a specification, or an estimate).
    Params {
        /// Config file (default: the embedded configs/default.toml).
        config: Option<PathBuf>,
        /// Only the parameters whose default is an estimate.
        #[arg(long)]
        estimates: bool,
    },
    /// Walk the staged and GPUDirect paths step by step with simulated times and the DMA
    /// descriptors the NICs build (the seed walk-through).
    Walk {
        /// Config file (default: the embedded configs/default.toml).
        config: Option<PathBuf>,
        /// Scenario name (default: the config's first scenario).
        #[arg(long)]
        scenario: Option<String>,
        /// Message size, e.g. 4096 or 4KiB.
        #[arg(long, default_value = "4096")]
        size: String,
        /// Operation: write_imm, write, read or send.
        #[arg(long, default_value = "write_imm")]
        op: String,
        /// The path to contrast with GPUDirect: staged, gdrcopy, staged_pipelined, pxn or
        /// auto.
        #[arg(long, default_value = "staged")]
        path: String,
        /// Language: en or zh.
        #[arg(long, default_value = "en")]
        lang: String,
    },
    /// Write a Chrome trace-event JSON timeline (ui.perfetto.dev, chrome://tracing) of one point.
    Trace {
        /// Config file (default: the embedded configs/default.toml).
        config: Option<PathBuf>,
        /// Scenario name (default: the config's first scenario).
        #[arg(long)]
        scenario: Option<String>,
        /// Path: host, staged, gpudirect, auto, gdrcopy, staged_pipelined or pxn.
        #[arg(long)]
        path: String,
        /// Operation: write_imm, write, read or send.
        #[arg(long, default_value = "write_imm")]
        op: String,
        /// Message size, e.g. 4096 or 1MiB.
        #[arg(long)]
        size: String,
        /// Messages to stream (at most the config's stream_window in flight).
        #[arg(long, default_value_t = 1)]
        messages: u32,
        /// Output file (.json).
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(Subcommand)]
enum Import {
    /// Read an `nvidia-smi topo -m` matrix and write a config of that machine (two hosts of it,
    /// a scenario per GPU with its nearest NIC); notes on stderr say what is not reproduced.
    TopoM {
        /// The matrix, as `nvidia-smi topo -m` prints it (tabs or spaces).
        file: PathBuf,
        #[command(flatten)]
        options: ImportOptions,
    },
    /// Read the topology XML NCCL dumps with NCCL_TOPO_DUMP_FILE and write a config of that
    /// machine (its PCIe link generations and widths, GPUs' compute capabilities, NICs' speeds,
    /// NVLink); notes on stderr say what is estimated or left out.
    NcclTopo {
        /// The XML file NCCL wrote (or an NCCL_TOPO_FILE in the same format).
        file: PathBuf,
        #[command(flatten)]
        options: ImportOptions,
    },
}

/// The cost gate's limits, on every command that simulates (`check` prints a study's
/// estimate).
#[derive(Args)]
struct LimitArgs {
    /// Refuse, before any work, what is estimated above this many events [default: 2.5e11,
    /// about two days of one core].
    #[arg(long, value_name = "E")]
    max_events: Option<u64>,
    /// Refuse, before any work, what is estimated to hold more memory than this at its peak
    /// (8GiB, 512MB) [default: this machine's memory, or its cgroup's limit where lower].
    #[arg(long, value_name = "SIZE")]
    max_memory: Option<String>,
}

impl LimitArgs {
    fn limits(&self) -> Result<study::Limits, ConfigError> {
        let memory = self
            .max_memory
            .as_deref()
            .map(study::Limits::parse_memory)
            .transpose()?;
        Ok(study::Limits::new(self.max_events, memory))
    }
}

/// The options every `gdrsim import` takes.
#[derive(Args)]
struct ImportOptions {
    /// Output config (default: stdout); written atomically.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Take the device and link parameters of this config's first machine (e.g.
    /// configs/dgx-h100.toml) instead of the built-in defaults (nccl-topo: its links only
    /// where the dump gives none).
    #[arg(long, conflicts_with = "preset")]
    like: Option<PathBuf>,
    /// Take them from this built-in preset's machine (`gdrsim presets` lists them).
    #[arg(long)]
    preset: Option<String>,
    /// Every socket's CPU family (skylake-sp, icelake-sp, sapphire-rapids, epyc-rome, ...:
    /// its P2P caps, socket link and DRAM rates), over what the source or --like says.
    #[arg(long)]
    cpu: Option<String>,
}

/// The command line with `run` put in where it starts with an option that is not gdrsim's own
/// (`--help`, `--version`): bare `gdrsim` is `gdrsim run`, so `gdrsim --quiet --out DIR` is
/// `gdrsim run --quiet --out DIR`. A first word that is not an option stays a command, so a
/// mistyped one is still reported as such.
fn run_by_default(args: impl IntoIterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = args.into_iter().collect();
    let own = ["-h", "--help", "-V", "--version"];
    if let Some(first) = args.get(1).and_then(|a| a.to_str())
        && first.starts_with('-')
        && !own.contains(&first)
    {
        args.insert(1, "run".into());
    }
    args
}

fn main() -> ExitCode {
    let cli = Cli::parse_from(run_by_default(std::env::args_os()));
    let result = match cli.command {
        None => app::run(None, None, None, 0, false, "cargo run --release").map(|_| ()),
        Some(Command::Run {
            config,
            out,
            seed,
            jobs,
            quiet,
            strict,
            shard,
            limits,
            sensitivity,
            measured,
            measured_scenario,
        }) => {
            let mut command = app::reproducing_command_with(
                config.as_deref(),
                seed,
                measured
                    .as_deref()
                    .map(|f| (f, measured_scenario.as_deref())),
            );
            if let Some(d) = &sensitivity {
                command.push_str(&format!(" --sensitivity {d}"));
            }
            let sensitivity = sensitivity
                .as_deref()
                .map(gdrsim::sensitivity::parse_delta)
                .transpose();
            shard
                .as_deref()
                .map(gdrsim::scale::shard::Shard::parse)
                .transpose()
                .and_then(|shard| Ok((shard, sensitivity?, limits.limits()?)))
                .map_err(Into::into)
                .and_then(|(shard, sensitivity, limits)| {
                    study::plausibility(config.as_deref(), strict, quiet)?;
                    let opts = app::RunOptions {
                        out: out.as_deref(),
                        seed,
                        jobs: jobs as usize,
                        quiet,
                        shard,
                        limits,
                        sensitivity,
                        measured: measured.as_deref(),
                        measured_scenario: measured_scenario.as_deref(),
                    };
                    app::run_with(config.as_deref(), &opts, &command)
                })
                .map(|_| ())
        }
        Some(Command::Merge { out, shards, quiet }) => app::merge(&out, &shards, quiet).map(|_| ()),
        Some(Command::Compare {
            out,
            studies,
            label,
            quiet,
        }) => gdrsim::compare::command(&out, &studies, &label, quiet).map(|_| ()),
        Some(Command::Slurm {
            config,
            tasks,
            partition,
            time,
            cpus_per_task,
            out,
            seed,
            submit,
            sbatch_option,
        }) => app::slurm(
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
        .and_then(|text| report::emit(&text)),
        Some(Command::Check { config, strict }) => {
            study::plausibility(Some(&config), strict, false)
                .and_then(|()| study::load_config(Some(&config)))
                .map_err(Into::into)
                .map(|cfg| {
                    let points = gdrsim::scenario::plan(&cfg).len();
                    let n = |k: usize, what: &str| {
                        format!("{k} {what}{}", if k == 1 { "" } else { "s" })
                    };
                    // A sweep multiplies the points by its variants.
                    let variants = match cfg.variant_count() {
                        1 if cfg.sweep.is_none() => String::new(),
                        k => format!(", {}", n(k, "variant")),
                    };
                    format!(
                        "{}: ok ({}, {}, {}{variants}: {})\n{}\n",
                        config.display(),
                        n(cfg.scenarios.len(), "scenario"),
                        n(cfg.paths.len(), "path"),
                        n(cfg.sizes.len(), "size"),
                        n(points, "point"),
                        study::cost_line(&cfg)
                    )
                })
                .and_then(|text| report::emit(&text))
        }
        Some(Command::Sensitivity {
            config,
            delta,
            threshold,
            csv,
            chart,
            quiet,
            limits,
        }) => limits
            .limits()
            .map_err(Into::into)
            .and_then(|limits| {
                app::sensitivity(
                    config.as_deref(),
                    (&delta, &threshold),
                    (csv.as_deref(), chart.as_deref()),
                    quiet,
                    &limits,
                )
            })
            .and_then(|text| report::emit(&text)),
        Some(Command::Perftest {
            test,
            config,
            scenario,
            size,
            all,
            iters,
            tx_depth,
            qps,
            bidirectional,
            use_cuda,
            report_gbits,
            limits,
        }) => gdrsim::perftest::Test::parse(&test)
            .and_then(|t| {
                let sizes = match (all, size) {
                    (true, _) => gdrsim::perftest::all_sizes(),
                    (false, Some(s)) => vec![gdrsim::inspect::parse_size(&s)?],
                    (false, None) => vec![t.default_size()],
                };
                Ok(gdrsim::perftest::Args {
                    test: t,
                    scenario,
                    sizes,
                    iters,
                    tx_depth,
                    qps,
                    duplex: bidirectional,
                    use_cuda: use_cuda.is_some(),
                    report_gbits,
                })
            })
            .and_then(|a| Ok((a, limits.limits()?)))
            .map_err(Into::into)
            .and_then(|(a, l)| gdrsim::perftest::command(config.as_deref(), &a, &l))
            .and_then(|text| report::emit(&text)),
        Some(Command::Nvbandwidth {
            testcase,
            config,
            list,
            buffer_size,
            test_samples,
            loop_count,
            use_mean,
            host,
            limits,
        }) => match (list, testcase) {
            (true, _) | (false, None) => report::emit(&gdrsim::nvbandwidth::list()),
            (false, Some(t)) => gdrsim::nvbandwidth::Testcase::parse(&t)
                .map(|t| gdrsim::nvbandwidth::Args {
                    testcase: t,
                    buffer_mib: buffer_size,
                    samples: test_samples,
                    loops: loop_count,
                    use_mean,
                    host,
                })
                .and_then(|a| Ok((a, limits.limits()?)))
                .map_err(Into::into)
                .and_then(|(a, l)| gdrsim::nvbandwidth::command(config.as_deref(), &a, &l))
                .and_then(|text| report::emit(&text)),
        },
        Some(Command::P2pMatrix {
            config,
            host,
            elems,
            p2p_read,
            csv,
            chart,
            limits,
        }) => {
            let a = gdrsim::p2p_matrix::Args {
                host,
                elems,
                p2p_read,
                csv,
                chart,
            };
            limits
                .limits()
                .map_err(Into::into)
                .and_then(|l| gdrsim::p2p_matrix::command(config.as_deref(), &a, &l))
                .and_then(|text| report::emit(&text))
        }
        Some(Command::Validate { set, limits }) => limits
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
            }),
        Some(Command::Measured { logs, out, memory }) => gdrsim::measured::Memory::parse(&memory)
            .map_err(Into::into)
            .and_then(|m| gdrsim::measured::command(&logs, m, out.as_deref()))
            .and_then(|text| text.map_or(Ok(()), |t| report::emit(&t))),
        Some(Command::Calibrate {
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
            limits,
        }) => limits.limits().map_err(Into::into).and_then(|limits| {
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
                ..Default::default()
            };
            gdrsim::calibrate::command(&config, &measured, &o, &out)
                .and_then(|text| report::emit(&text))
        }),
        Some(Command::Params { config, estimates }) => study::load_config(config.as_deref())
            .map_err(Into::into)
            .map(|cfg| {
                let mut l = gdrsim::config::params::list(&cfg);
                if estimates {
                    l.retain(|p| p.is_estimate());
                }
                gdrsim::config::params::render(&l)
            })
            .and_then(|text| report::emit(&text)),
        Some(Command::Topo { config }) => study::load_config(config.as_deref())
            .map_err(Into::into)
            .map(|cfg| {
                let topo = gdrsim::scenario::topology(&cfg);
                topo.hosts
                    .iter()
                    .map(|host| {
                        format!(
                            "{} ({})\n{}\n",
                            host.name,
                            host.spec.name,
                            gdrsim::topology::topo_matrix::render(host)
                        )
                    })
                    .collect::<String>()
            })
            .and_then(|text| report::emit(&text)),
        Some(Command::Presets { name }) => match name {
            None => report::emit(&gdrsim::config::preset::list()),
            Some(n) => gdrsim::config::preset::show(&n)
                .map_err(Into::into)
                .and_then(report::emit),
        },
        Some(Command::Import { what }) => {
            let (kind, file, o) = match what {
                Import::TopoM { file, options } => (gdrsim::import::Kind::TopoM, file, options),
                Import::NcclTopo { file, options } => {
                    (gdrsim::import::Kind::NcclTopo, file, options)
                }
            };
            gdrsim::import::command(
                kind,
                &file,
                o.out.as_deref(),
                o.like.as_deref(),
                o.preset.as_deref(),
                o.cpu.as_deref(),
            )
        }
        Some(Command::Walk {
            config,
            scenario,
            size,
            op,
            path,
            lang,
        }) => gdrsim::inspect::run_walk(
            config.as_deref(),
            scenario.as_deref(),
            (&path, &op, &size),
            &lang,
        )
        .and_then(|text| report::emit(&text)),
        Some(Command::Trace {
            config,
            scenario,
            path,
            op,
            size,
            messages,
            out,
        }) => gdrsim::inspect::run_trace(
            config.as_deref(),
            scenario.as_deref(),
            (&path, &op),
            &size,
            messages,
            &out,
        )
        .and_then(|r| report::emit(&format!("{}\n", r.summary))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            if e.chain().any(|c| c.downcast_ref::<ConfigError>().is_some()) {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}

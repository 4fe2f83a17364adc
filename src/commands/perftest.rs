//! `gdrsim perftest`: run one of perftest's tests on the simulated machine and print perftest's
//! report (ib_write_lat, ib_write_bw, ib_read_lat, ib_read_bw, ib_send_lat, ib_send_bw).

use std::path::PathBuf;

use gdrsim::report;

use super::args::LimitArgs;

// No doc comment: the command's help is its variant's in `Command` (commands/mod.rs).
#[derive(clap::Args)]
pub struct Args {
    /// The test, as perftest's binary is named.
    pub test: String,
    /// Config file (default: the embedded configs/default.toml).
    pub config: Option<PathBuf>,
    /// Scenario name (default: the config's first scenario).
    #[arg(long)]
    pub scenario: Option<String>,
    /// Message size (perftest's default: 65536 for bandwidth, 2 for latency).
    #[arg(short = 's', long = "size")]
    pub size: Option<String>,
    /// Every power of two from 2 B to 8 MiB.
    #[arg(short = 'a', long = "all", conflicts_with = "size")]
    pub all: bool,
    /// Iterations (default 5000 for bandwidth, 1000 for latency).
    #[arg(short = 'n', long = "iters")]
    pub iters: Option<u32>,
    /// Messages in flight per QP (default 128 for bandwidth, 1 for latency).
    #[arg(short = 't', long = "tx-depth")]
    pub tx_depth: Option<u32>,
    /// Queue pairs, each streaming -n messages at once (bandwidth tests only).
    #[arg(short = 'q', long = "qp", default_value_t = 1)]
    pub qps: u32,
    /// Both directions at once; the figures are the two sides' sum (bandwidth tests only).
    #[arg(short = 'b', long = "bidirectional")]
    pub bidirectional: bool,
    /// GPU buffers on both sides (the GPUDirect path); a GPU index is accepted and ignored
    /// (the scenario names the GPU).
    #[arg(long = "use_cuda", num_args = 0..=1, default_missing_value = "0")]
    pub use_cuda: Option<String>,
    /// Report Gb/sec instead of MiB/sec.
    #[arg(long = "report_gbits")]
    pub report_gbits: bool,
    /// CQ moderation of a bandwidth test: a completion every N work requests, 1 to 1024
    /// (perftest's default: 100, or 1 above 8192 B without -a; never above the TX depth).
    #[arg(short = 'Q', long = "cq-mod", value_name = "N")]
    pub cq_mod: Option<u32>,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<()> {
    let Args {
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
        cq_mod,
        limits,
    } = a;
    gdrsim::perftest::Test::parse(&test)
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
                cq_mod,
                run_all: all,
            })
        })
        .and_then(|a| Ok((a, limits.limits()?)))
        .map_err(Into::into)
        .and_then(|(a, l)| gdrsim::perftest::command(config.as_deref(), &a, &l))
        .and_then(|text| report::emit(&text))
}

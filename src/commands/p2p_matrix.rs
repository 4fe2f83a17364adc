//! `gdrsim p2p-matrix`: measure every GPU pair of a host as CUDA's p2pBandwidthLatencyTest does
//! (unidirectional and bidirectional bandwidth, latency, P2P on and off) and print its report.

use std::path::PathBuf;

use gdrsim::report;

use super::args::LimitArgs;

// No doc comment: the command's help is its variant's in `Command` (commands/mod.rs).
#[derive(clap::Args)]
pub struct Args {
    /// Config file (default: the embedded configs/default.toml).
    pub config: Option<PathBuf>,
    /// The host whose GPUs are measured (default: the config's first).
    #[arg(long)]
    pub host: Option<String>,
    /// Ints per bandwidth copy (the sample's default: 40000000, 160 MB).
    #[arg(long = "numElems", default_value_t = gdrsim::p2p_matrix::DEFAULT_ELEMS)]
    pub elems: u64,
    /// Also measure P2P reads (the destination GPU's copy engine reads the peer).
    #[arg(long = "p2p_read")]
    pub p2p_read: bool,
    /// Write every cell to this CSV file.
    #[arg(long, value_name = "FILE.csv")]
    pub csv: Option<PathBuf>,
    /// Write the heatmap of the P2P=Enabled matrices to this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub chart: Option<PathBuf>,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<()> {
    let Args {
        config,
        host,
        elems,
        p2p_read,
        csv,
        chart,
        limits,
    } = a;
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

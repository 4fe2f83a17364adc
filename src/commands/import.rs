//! `gdrsim import`: write a config from what a real machine prints (`gdrsim import topo-m FILE`,
//! `gdrsim import nccl-topo FILE.xml`).

use std::path::PathBuf;

use clap::Subcommand;

// No doc comment: the command's help is its variant's in `Command` (commands/mod.rs).
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub what: Import,
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<()> {
    let Args { what } = a;
    let (kind, file, o) = match what {
        Import::TopoM {
            file,
            options,
            gpu,
            nic,
        } => (gdrsim::import::Kind::TopoM { gpu, nic }, file, options),
        Import::NcclTopo { file, options } => (gdrsim::import::Kind::NcclTopo, file, options),
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

/// What `gdrsim import` reads.
#[derive(Subcommand)]
pub enum Import {
    /// Read an `nvidia-smi topo -m` matrix and write a config of that machine (two hosts of it,
    /// a scenario per GPU with its nearest NIC); notes on stderr say what is not reproduced.
    TopoM {
        /// The matrix, as `nvidia-smi topo -m` prints it (tabs or spaces).
        file: PathBuf,
        #[command(flatten)]
        options: ImportOptions,
        /// The GPUs' model (h100-pcie, h200-sxm, l40s, ...: `gdrsim presets` lists them): a
        /// matrix names none, so one of --gpu/--nic, --like or --preset is required.
        #[arg(long, value_name = "MODEL")]
        gpu: Option<String>,
        /// The NICs' model (connectx-6, connectx-7, bluefield-3, ...).
        #[arg(long, value_name = "MODEL")]
        nic: Option<String>,
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

/// The options every `gdrsim import` takes.
#[derive(clap::Args)]
pub struct ImportOptions {
    /// Output config (default: stdout); written atomically.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Take the device and link parameters of this config's first machine (e.g.
    /// configs/dgx-h100.toml) instead of the built-in defaults (nccl-topo: its links only
    /// where the dump gives none).
    #[arg(long, conflicts_with = "preset")]
    pub like: Option<PathBuf>,
    /// Take them from this built-in preset's machine (`gdrsim presets` lists them).
    #[arg(long)]
    pub preset: Option<String>,
    /// Every socket's CPU family (skylake-sp, icelake-sp, sapphire-rapids, epyc-rome, ...:
    /// its P2P caps, socket link and DRAM rates), over what the source or --like says.
    #[arg(long)]
    pub cpu: Option<String>,
}

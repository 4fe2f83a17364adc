//! `gdrsim topo`: print each host's GPUs and NICs as an `nvidia-smi topo -m` matrix.

use std::path::PathBuf;

use gdrsim::report;
use gdrsim::study;

// No doc comment: the command's help is its variant's in `Command` (commands/mod.rs).
#[derive(clap::Args)]
pub struct Args {
    pub config: Option<PathBuf>,
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<()> {
    let Args { config } = a;
    study::load_config(config.as_deref())
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
        .and_then(|text| report::emit(&text))
}

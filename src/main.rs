//! The gdrsim command line: parses and dispatches; each command's options and work are in
//! `commands/`. Exit codes: 0 success, 2 bad input (config), 1 internal failure.

mod commands;

use std::process::ExitCode;

use clap::Parser;
use gdrsim::config::ConfigError;

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
    command: Option<commands::Command>,
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
    match cli
        .command
        .map_or_else(commands::run::default, commands::Command::execute)
    {
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

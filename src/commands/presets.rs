//! `gdrsim presets`: list the built-in machine presets (`[[machines]] preset = "NAME"` in a
//! config), or print one's TOML.

use gdrsim::report;

// No doc comment: the command's help is its variant's in `Command` (commands/mod.rs).
#[derive(clap::Args)]
pub struct Args {
    /// The preset to print (its TOML), or the model (its figures and their sources);
    /// default: list them all, one line each.
    pub name: Option<String>,
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<()> {
    let Args { name } = a;
    match name {
        None => report::emit(&gdrsim::config::preset::list()),
        Some(n) => gdrsim::config::preset::show(&n)
            .map_err(Into::into)
            .and_then(|t| report::emit(&t)),
    }
}

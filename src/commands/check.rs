//! `gdrsim check`: validate a config and run nothing.

use std::path::PathBuf;

use gdrsim::report;
use gdrsim::study;

// No doc comment: the command's help is its variant's in `Command` (commands/mod.rs).
#[derive(clap::Args)]
pub struct Args {
    pub config: PathBuf,
    /// Refuse implausible values (warnings otherwise) as errors.
    #[arg(long)]
    pub strict: bool,
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<()> {
    let Args { config, strict } = a;
    study::plausibility(Some(&config), strict, false)
        .and_then(|()| study::load_config(Some(&config)))
        .map_err(Into::into)
        .map(|cfg| {
            let points = gdrsim::scenario::plan(&cfg).len();
            let n = |k: usize, what: &str| format!("{k} {what}{}", if k == 1 { "" } else { "s" });
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

//! Loading a config as every command does: parsed (or the embedded default), then refused
//! before any work where a route or the simulator's horizon cannot hold it.

use std::path::Path;

use crate::config::{self, Config, ConfigError};
use crate::scenario;

/// Where a config came from, as errors and warnings name it: its path, or the embedded
/// default's name.
pub fn source_name(path: Option<&Path>) -> String {
    path.map_or(config::DEFAULT_NAME.to_string(), |p| {
        p.display().to_string()
    })
}

/// Loads `path`, or the embedded default config when there is none.
pub fn load_config(path: Option<&Path>) -> Result<Config, ConfigError> {
    let cfg = match path {
        Some(p) => config::load(p)?,
        None => config::parse(config::DEFAULT_TOML, config::DEFAULT_NAME)?,
    };
    let file = source_name(path);
    // Every variant of a sweep is checked, and an error names the variant.
    for v in 0..cfg.variant_count() {
        let c = cfg.variant(v);
        let topo = scenario::topology(c);
        scenario::check_plans(c, &topo)
            .and_then(|()| scenario::horizon::check(c, &topo))
            .map_err(|(key, expected, found)| {
                let found = match cfg.variant_label(v) {
                    "" => found,
                    label => format!("{found} (sweep variant {label})"),
                };
                ConfigError::new(&file, key, expected, found)
            })?;
    }
    Ok(cfg)
}

/// Warns (on stderr, unless `quiet`) of every implausible value of the config at `path` (see
/// [`config::plausible`]); with `strict`, the first one is the error instead.
pub fn plausibility(path: Option<&Path>, strict: bool, quiet: bool) -> Result<(), ConfigError> {
    let cfg = load_config(path)?;
    let file = source_name(path);
    let mut warnings = config::plausible::warnings(&cfg);
    // A sweep's values are checked too: each variant's warnings the study without the sweep
    // does not have, naming the variant.
    let base = warnings.clone();
    for v in 0..cfg.variant_count() {
        if cfg.sweep.is_none() {
            break;
        }
        for mut w in config::plausible::warnings(cfg.variant(v)) {
            if !base.contains(&w) {
                w.found = format!("{} (sweep variant {})", w.found, cfg.variant_label(v));
                if !warnings.contains(&w) {
                    warnings.push(w);
                }
            }
        }
    }
    if strict && let Some(w) = warnings.first() {
        return Err(w.clone().into_error(&file));
    }
    if !quiet {
        for w in &warnings {
            eprintln!("warning: {file}: {w}");
        }
    }
    Ok(())
}

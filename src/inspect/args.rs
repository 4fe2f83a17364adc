//! Command-line values of `walk` and `trace`: scenario, size, path, op, language, and the
//! check that the scenario can run the point.

use super::*;

/// Where errors in command-line values are reported.
pub(super) const CLI: &str = "command line";

/// The largest trace file written: a browser-based viewer opens a few hundred megabytes.
pub(super) const MAX_TRACE_BYTES: u64 = 128 << 20;

/// The index of scenario `name`, or of the config's first scenario.
pub fn scenario_index(cfg: &Config, name: Option<&str>) -> Result<usize, ConfigError> {
    let names: Vec<&str> = cfg.scenarios.iter().map(|s| s.name.as_str()).collect();
    match name {
        None if !names.is_empty() => Ok(0),
        None => Err(ConfigError::new(
            CLI,
            "--scenario",
            "a config with at least one scenario",
            "none",
        )),
        Some(n) => names.iter().position(|s| *s == n).ok_or_else(|| {
            ConfigError::new(
                CLI,
                "--scenario",
                format!("one of the config's scenarios ({})", names.join(", ")),
                format!("`{n}`"),
            )
        }),
    }
}

/// [`scenario_index`] of a scenario whose flows cross the network: `command` (walk, perftest)
/// follows a transfer between two hosts, not a copy between two GPUs of one host.
pub fn network_scenario(
    cfg: &Config,
    name: Option<&str>,
    command: &str,
) -> Result<usize, ConfigError> {
    let si = scenario_index(cfg, name)?;
    let sc = &cfg.scenarios[si];
    if let Some(c) = sc.workload.as_ref().and_then(|w| w.collective.as_ref()) {
        return Err(ConfigError::new(
            CLI,
            "--scenario",
            format!(
                "a scenario of one transfer between two hosts ({command} follows one transfer; a \
                 collective's figures are in `gdrsim run`'s results.csv, chain.csv and \
                 flows.csv, its timeline in `gdrsim trace`)"
            ),
            format!(
                "`{}`, a collective ({}, {} ranks, {} flows)",
                sc.name,
                c.kind.name(),
                c.ranks(),
                sc.flows.len()
            ),
        ));
    }
    if sc.flows.iter().any(|f| f.is_intra()) {
        return Err(ConfigError::new(
            CLI,
            "--scenario",
            format!(
                "a scenario between two hosts ({command} follows a transfer over the network; \
                 for a copy between two GPUs of one host use `gdrsim trace`, `gdrsim p2p-matrix` \
                 or `gdrsim nvbandwidth device_to_device_memcpy_write_ce`)"
            ),
            format!(
                "`{}`, a copy inside host {}",
                sc.name, cfg.hosts[sc.flows[0].sender.host].name
            ),
        ));
    }
    Ok(si)
}

/// A message size from the command line ("4096", "4KiB", "1MiB").
pub fn parse_size(s: &str) -> Result<u64, ConfigError> {
    match crate::units::parse_bytes(s) {
        Ok(v) if v > 16 << 30 => Err(ConfigError::new(
            CLI,
            "--size",
            "a size up to 16 GiB (as in sweeps)",
            format!("`{s}`"),
        )),
        Ok(v) if v > 0 => Ok(v),
        Ok(_) => Err(ConfigError::new(CLI, "--size", "at least 1 byte", "0")),
        Err(e) => Err(ConfigError::new(
            CLI,
            "--size",
            e.expected,
            format!("`{s}`"),
        )),
    }
}

/// A word of a [`Choice`] from the command line (`flag` names the option in the error).
pub(super) fn parse_choice<C: Choice>(s: &str, flag: &str) -> Result<C, ConfigError> {
    C::from_word(s).ok_or_else(|| {
        let words: Vec<&str> = C::ALL.iter().map(|c| c.word()).collect();
        ConfigError::new(CLI, flag, words.join(", "), format!("`{s}`"))
    })
}

/// A path name from the command line.
pub fn parse_path(s: &str) -> Result<PathKind, ConfigError> {
    parse_choice(s, "--path")
}

/// An operation name from the command line.
pub fn parse_op(s: &str) -> Result<Op, ConfigError> {
    parse_choice(s, "--op")
}

/// Refuses, as bad input, a path and op the scenario cannot run (an RDMA Read from a staged
/// source, a GPUDirect read the platform refuses), before any work.
pub(super) fn check_point(
    cfg: &Config,
    topo: &Topology,
    si: usize,
    path: PathKind,
    op: Op,
) -> Result<(), ConfigError> {
    let sc = &cfg.scenarios[si];
    if sc.flows.iter().any(|f| f.is_intra()) {
        // A copy between two GPUs of one host: the paths and ops a sweep may ask of it.
        if !crate::config::INTRA_PATHS.contains(&path) {
            return Err(ConfigError::new(
                CLI,
                "--path",
                format!(
                    "a path a copy between two GPUs of one host has ({})",
                    crate::config::intra_path_words()
                ),
                path.name(),
            ));
        }
        if !crate::config::INTRA_OPS.contains(&op) {
            return Err(ConfigError::new(
                CLI,
                "--op",
                "an operation a copy between two GPUs has (write_imm, write or read)",
                op.name(),
            ));
        }
        return Ok(());
    }
    if !op.carried_by(path) {
        return Err(ConfigError::new(
            CLI,
            "--op",
            format!(
                "an operation that path {} can carry (an RDMA Read's source takes no part \
                 with its CPU, so nothing stages it)",
                path.name()
            ),
            op.name(),
        ));
    }
    let size = cfg.sizes.first().copied().unwrap_or(8);
    paths::plan(cfg, sc.first(), topo, path, op, size).map_or_else(
        |e| {
            Err(ConfigError::new(
                CLI,
                "--op",
                format!("an operation that path {} can carry", path.name()),
                format!("{} on scenario `{}`: {e}", op.name(), sc.name),
            ))
        },
        |_| Ok(()),
    )
}

/// A language from the command line.
pub fn parse_lang(s: &str) -> Result<Lang, ConfigError> {
    Lang::parse(s).ok_or_else(|| ConfigError::new(CLI, "--lang", "en or zh", format!("`{s}`")))
}

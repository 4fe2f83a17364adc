//! Raw TOML -> typed, validated [`Config`]: parses quantities, fills defaults, resolves names,
//! and checks the topology is a tree that every scenario can use. One file per section.

mod machine;
mod network;
mod nic;
mod output;
mod quantity;
mod sim;
mod sweep;

pub(super) use quantity::{Cx, DUR_FORMS, R, RATE_FORMS, SIZE_FORMS, fmt_ps};

use super::limits::MAX_NAME_BYTES;
use super::raw::*;
use super::{Config, PathKind};
use crate::topology::spec::*;

pub fn convert(raw: RawConfig, file: &str) -> R<Config> {
    let cx = Cx { file };
    if raw.name.is_empty() || raw.name.contains(['/', '\\']) || raw.name.starts_with('.') {
        return Err(cx.err(
            "name",
            "a non-empty name usable as a folder name",
            format!("{:?}", raw.name),
        ));
    }
    let sim = sim::convert(&cx, &raw.sim)?;
    let (sizes, paths, ops) = sweep::convert(&cx, &raw.sweep, sim.granularity.tlp())?;
    let output = output::convert(&cx, &raw.output)?;
    let network = network::convert(&cx, &raw.network)?;
    cx.unique(
        raw.machines
            .iter()
            .enumerate()
            .map(|(i, m)| (format!("machines[{i}].name"), m.name.as_str())),
    )?;
    let machines = raw
        .machines
        .iter()
        .enumerate()
        .map(|(i, m)| machine::convert(&cx, i, m))
        .collect::<R<Vec<_>>>()?;
    cx.unique(
        raw.hosts
            .iter()
            .enumerate()
            .map(|(i, h)| (format!("hosts[{i}].name"), h.name.as_str())),
    )?;
    let mut hosts = Vec::new();
    for (i, h) in raw.hosts.iter().enumerate() {
        let machine = machines
            .iter()
            .find(|m| m.name == h.machine)
            .ok_or_else(|| {
                cx.err(
                    &format!("hosts[{i}].machine"),
                    "the name of a [[machines]] entry",
                    format!("{:?}", h.machine),
                )
            })?;
        hosts.push(HostSpec {
            name: h.name.clone(),
            machine: machine.clone(),
        });
    }
    if raw.scenarios.is_empty() {
        return Err(cx.err("scenarios", "at least one [[scenarios]] entry", "none"));
    }
    cx.unique(
        raw.scenarios
            .iter()
            .enumerate()
            .map(|(i, s)| (format!("scenarios[{i}].name"), s.name.as_str())),
    )?;
    let needs_gpu = paths.iter().any(|p| *p != PathKind::Host);
    let scenarios = raw
        .scenarios
        .iter()
        .enumerate()
        .map(|(i, sc)| super::scenarios::convert(&cx, i, sc, &hosts, needs_gpu))
        .collect::<R<Vec<_>>>()?;
    super::scenarios::check_cables(&cx, &scenarios, &hosts, &network)?;
    super::scenarios::check_fabric(&cx, &hosts, &network)?;
    super::scenarios::check_intra(&cx, &scenarios, &paths, &ops)?;
    // The name is the default output folder (output/<name>/): one path component, bounded in
    // bytes, as file systems bound names, not in characters.
    let n = &raw.name;
    if n.is_empty()
        || n.len() > MAX_NAME_BYTES
        || n.chars().any(|c| c.is_control() || c == '/' || c == '\\')
        || n == "."
        || n == ".."
    {
        let shown: String = n.chars().take(40).collect();
        let more = if shown.len() < n.len() { "..." } else { "" };
        return Err(cx.err(
            "name",
            format!(
                "a folder name of 1 to {MAX_NAME_BYTES} bytes in UTF-8 (a CJK character takes 3) \
                 without control characters, / or \\ (it names output/<name>/)"
            ),
            format!("{shown:?}{more} ({} bytes)", n.len()),
        ));
    }
    Ok(Config {
        name: raw.name,
        description: raw.description.unwrap_or_default(),
        seed: raw.seed.unwrap_or(super::defaults::SEED),
        sim,
        sizes,
        paths,
        ops,
        output,
        network,
        hosts,
        scenarios,
        sweep: None,
    })
}

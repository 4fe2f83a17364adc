//! `gdrsim import nccl-topo`: a config from the topology NCCL dumps with
//! `NCCL_TOPO_DUMP_FILE` (or a topology file for `NCCL_TOPO_FILE` in the same format).
//!
//! The dump is read ([`xml`], its attribute values in [`values`]), the lower levels of
//! two-level Broadcom switches folded as NCCL folds them, and the machine built ([`machine`]):
//! a socket per `<cpu>`, a switch per bridge, each link at the PCIe generation and width of its
//! `link_speed` and `link_width`, GPUs with the compute capability of their `sm` (and a model
//! from their PCI device ID or, as an estimate, from `sm`: [`models`]), NICs at the wire rate
//! of their `speed` ([`devices`]), a GPU with a `<c2c>` on NVLink-C2C to its socket instead
//! of PCIe, at the rate NCCL reads from it ([`machine`]), and the NVLink fabric of the GPUs'
//! `<nvlink>` elements ([`fabric`]). Before the config is written it is loaded, and every
//! GPU/NIC pair's class in the model compared with the class the dump's tree implies (as NCCL
//! reads it): they must agree.

pub mod devices;
pub mod fabric;
pub mod machine;
pub mod models;
pub mod values;
pub mod xml;

use std::path::Path;

use super::emit::{self, Scenario};
use super::{Imported, config_name, load, params_of};
use crate::config::ConfigError;
use crate::topology::{self, Affinity, NodeKind, Place};
use machine::{Placed, pcie_class};
use xml::Device;

/// Imports the dump `text` (`file` names it in errors and gives the config its name), with the
/// parameters of `like` (the text of another config, and its name) or the defaults. Bad input
/// is a [`ConfigError`] naming the file, line and column; a written config whose classes
/// differ from the dump's is an internal error.
pub fn import(
    text: &str,
    file: &Path,
    like: Option<(&str, &str)>,
    cpu: Option<crate::topology::CpuFamily>,
) -> anyhow::Result<Imported> {
    let shown = file.display().to_string();
    let mut dump = xml::read(text, &shown)?;
    for cpu in &mut dump.cpus {
        for d in &mut cpu.children {
            if let Device::Bridge(b) = d {
                machine::fold(b);
            }
        }
    }
    let params = params_of(like, cpu)?;
    let mut built = machine::build(&dump, &params);
    for (what, none) in [
        ("GPU (a <pci> with a <gpu>)", built.gpus.is_empty()),
        ("NIC (a <nic> with a <net>)", built.nics.is_empty()),
    ] {
        if none {
            return Err(ConfigError::new(
                &shown,
                "",
                format!("an NCCL topology dump with at least one {what}"),
                "none",
            )
            .into());
        }
    }
    let gpus: Vec<&xml::Gpu> = built.gpus.iter().map(|g| g.1).collect();
    let (fab, fabric_notes) = fabric::fabric(&gpus, &shown)?;
    built.machine.nvlinks = fab.tables(|i| built.gpus[i].0.name.as_str());

    let name = config_name(file);
    let description = format!(
        "Imported from an NCCL topology dump: {} GPUs, {} NICs; each GPU with its nearest NIC, staged vs GPUDirect",
        built.gpus.len(),
        built.nics.len()
    );
    let mut header = vec![
        format!("Imported by `gdrsim import nccl-topo {shown}` from an NCCL topology dump (NCCL_TOPO_DUMP_FILE)."),
        "Sockets are its <cpu> elements (NUMA nodes, SYS between them), each with one root complex;".to_string(),
        "a switch is a bridge <pci> (NCCL's tree holds upstream ports only); links as the dump gives them.".to_string(),
    ];
    if !built.machine.c2c_links.is_empty() {
        header.push("A GPU with a <c2c> hangs from its socket by NVLink-C2C (bw x count / 1000 GB/s each way), not by PCIe.".to_string());
    }
    header.push(format!(
        "Parameters: {}.",
        params.describe_links_from("the dump")
    ));
    let doc = emit::Doc {
        name: &name,
        description: &description,
        header: &header,
        params: &params,
    };
    let scenario = |g: &Placed, n: &Placed| Scenario {
        name: format!("{}-{}", g.label, n.label),
        gpu: g.name.clone(),
        nic: n.name.clone(),
    };
    // A first pass with a placeholder scenario, to build the machine and find the nearest NICs.
    let draft = emit::write(
        doc,
        &built.machine,
        &[scenario(&built.gpus[0].0, &built.nics[0].0)],
    );
    let cfg = load(&draft, &shown, "a dump")?;
    let host = topology::host_graph(&cfg.hosts[0]);
    let scenarios: Vec<Scenario> = host
        .nearest_nics()
        .into_iter()
        .enumerate()
        .map(|(g, n)| scenario(&built.gpus[g].0, &built.nics[n].0))
        .collect();
    let toml = emit::write(doc, &built.machine, &scenarios);
    let cfg = load(&toml, &shown, "a dump")?;

    // Every pair's class in the model, against the dump's.
    let host = topology::host_graph(&cfg.hosts[0]);
    let nv = |a: usize, b: usize| -> Option<u32> {
        let direct = fab
            .direct
            .iter()
            .find(|d| (d.0, d.1) == (a.min(b), a.max(b)))
            .map(|d| d.2);
        let on_switch = |g: usize| fab.switched.iter().find(|s| s.0 == g).map(|s| s.1);
        direct.or_else(|| Some(on_switch(a)?.min(on_switch(b)?)))
    };
    let mut devices: Vec<(NodeKind, &Placed)> = Vec::new();
    devices.extend(
        built
            .gpus
            .iter()
            .enumerate()
            .map(|(i, g)| (NodeKind::Gpu(i), &g.0)),
    );
    devices.extend(
        built
            .nics
            .iter()
            .enumerate()
            .map(|(i, n)| (NodeKind::Nic(i), &n.0)),
    );
    for (x, &(ka, a)) in devices.iter().enumerate() {
        for &(kb, b) in &devices[x + 1..] {
            let want = match (ka, kb) {
                (NodeKind::Gpu(i), NodeKind::Gpu(j)) => nv(i, j).map(Affinity::Nv),
                _ => None,
            }
            .unwrap_or_else(|| pcie_class(a, b));
            let got = host.class(
                Place::Device(host.node_index(ka)),
                Place::Device(host.node_index(kb)),
            );
            if got != want {
                anyhow::bail!(
                    "import of {shown}: the written machine gives {}-{} {} where the dump's tree implies {} (an importer bug)",
                    a.label,
                    b.label,
                    got.name(),
                    want.name()
                );
            }
        }
    }

    let mut notes = vec![format!(
        "parameters: {}",
        params.describe_links_from("the dump")
    )];
    notes.push(format!(
        "machine {name}: {} socket(s) (one per <cpu>), {} switch(es), {} GPU(s), {} NIC(s); hosts node-a and node-b; scenarios {}",
        built.machine.sockets.len(),
        built.machine.switches.len(),
        built.gpus.len(),
        built.nics.len(),
        scenarios
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    notes.extend(built.notes);
    notes.extend(fabric_notes);
    notes.extend(dump.notes);
    Ok(Imported {
        toml,
        notes,
        differences: Vec::new(),
    })
}

//! `nvidia-smi topo -m` style matrix of one host's GPUs and NICs (layout: reference/formats.md).

use super::{HostTopo, NodeKind, Place};

/// Renders the tab-separated matrix with the legend, as the driver prints it.
pub fn render(host: &HostTopo) -> String {
    let devices: Vec<(String, usize)> = host
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| match n.kind {
            NodeKind::Gpu(g) => Some((format!("GPU{g}"), i)),
            _ => None,
        })
        .chain(
            host.nodes
                .iter()
                .enumerate()
                .filter_map(|(i, n)| match n.kind {
                    NodeKind::Nic(k) => Some((format!("NIC{k}"), i)),
                    _ => None,
                }),
        )
        .collect();
    let mut out = String::from("\t");
    for (name, _) in &devices {
        out.push_str(name);
        out.push('\t');
    }
    out.push_str("CPU Affinity\tNUMA Affinity\n");
    for (name, a) in &devices {
        out.push_str(name);
        out.push('\t');
        for (_, b) in &devices {
            let cell = if a == b {
                " X "
            } else {
                host.class(Place::Device(*a), Place::Device(*b)).name()
            };
            out.push_str(cell);
            out.push('\t');
        }
        let node = &host.nodes[*a];
        if matches!(node.kind, NodeKind::Gpu(_)) {
            let socket = &host.spec.sockets[node.socket];
            let cpus = socket.cpu_affinity.as_deref().unwrap_or(&socket.name);
            let numa = socket.numa_node.map_or(node.socket as u64, u64::from);
            out.push_str(&format!("{cpus}\t{numa}\n"));
        } else {
            out.push_str("\t\n");
        }
    }
    out.push_str(
        "\nLegend:\n\n  X    = Self\n  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n  PIX  = Connection traversing at most a single PCIe bridge\n  NV#  = Connection traversing a bonded set of # NVLinks\n\nNIC Legend:\n\n",
    );
    for (i, n) in host.spec.nics.iter().enumerate() {
        out.push_str(&format!("  NIC{i}: {}\n", n.name));
    }
    out
}

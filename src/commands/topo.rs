//! `gdrsim topo`: print each host's GPUs and NICs as an `nvidia-smi topo -m` matrix, or with
//! `--network` the fabric between them: switches per tier, cables, each leaf's downlinks and
//! uplinks, the bisection bandwidth and, with `--path`, the switches between two ports.

use std::path::PathBuf;

use gdrsim::config::{Config, ConfigError};
use gdrsim::report;
use gdrsim::study;
use gdrsim::topology::Topology;
use gdrsim::topology::fabric_view::gbps;

// No doc comment: the command's help is its variant's in `Command` (commands/mod.rs).
#[derive(clap::Args)]
pub struct Args {
    pub config: Option<PathBuf>,
    /// Print the network between the hosts instead of each host's matrix: switches per tier,
    /// cables, each leaf's downlinks (host ports) and uplinks, the bisection bandwidth.
    #[arg(long)]
    pub network: bool,
    /// With --network: the switches a packet crosses between two NIC ports, as
    /// HOST:NIC,HOST:NIC (`--path n0:nic0,n5:nic3`).
    #[arg(long, value_name = "FROM,TO", requires = "network")]
    pub path: Option<String>,
    /// With --path: the queue pair number the ECMP hash takes (a flow's index in its
    /// scenario).
    #[arg(long, default_value_t = 0, requires = "path")]
    pub qp: u32,
}

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<()> {
    let Args {
        config,
        network,
        path,
        qp,
    } = a;
    let cfg = study::load_config(config.as_deref())?;
    let topo = gdrsim::scenario::topology(&cfg);
    let text = if network {
        let ends = path.as_deref().map(|p| ports(&cfg, p)).transpose()?;
        fabric(&cfg, &topo, ends, qp)
    } else {
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
    };
    report::emit(&text)
}

type Ends = ((usize, usize), (usize, usize));

/// `--path`'s two ports, `HOST:NIC,HOST:NIC`, as (host, nic) indices.
fn ports(cfg: &Config, arg: &str) -> Result<Ends, ConfigError> {
    let bad = |why: String| ConfigError::new("command line", "--path", why, format!("{arg:?}"));
    let one = |s: &str| -> Result<(usize, usize), ConfigError> {
        let (h, n) = s
            .trim()
            .split_once(':')
            .ok_or_else(|| bad("HOST:NIC,HOST:NIC (`n0:nic0,n5:nic3`)".into()))?;
        let hi = (cfg.hosts.iter().position(|x| x.name == h)).ok_or_else(|| {
            let names: Vec<&str> = cfg.hosts.iter().map(|x| x.name.as_str()).take(8).collect();
            bad(format!(
                "a host of the config ({}{})",
                names.join(", "),
                if cfg.hosts.len() > 8 { ", ..." } else { "" }
            ))
        })?;
        let nics = &cfg.hosts[hi].machine.nics;
        let ni = nics.iter().position(|x| x.name == n).ok_or_else(|| {
            let names: Vec<&str> = nics.iter().map(|x| x.name.as_str()).collect();
            bad(format!("a NIC of host {h} ({})", names.join(", ")))
        })?;
        Ok((hi, ni))
    };
    let (a, z) = arg
        .split_once(',')
        .ok_or_else(|| bad("HOST:NIC,HOST:NIC (`n0:nic0,n5:nic3`)".into()))?;
    Ok((one(a)?, one(z)?))
}

/// The fabric as text.
fn fabric(cfg: &Config, topo: &Topology, ends: Option<Ends>, qp: u32) -> String {
    let v = topo.fabric_view();
    let spec = &cfg.network;
    let mut t = format!("fabric: {}", v.fabric.name());
    if v.fabric.tiered() {
        t += &format!(" (routing: {})", spec.routing.name());
    }
    t += "\n";
    let switches: usize = v.tiers.iter().map(|x| x.1).sum();
    let tiers: Vec<String> = v.tiers.iter().map(|(n, c)| format!("{c} {n}")).collect();
    if v.tiers.is_empty() {
        t += "switches: none (NIC ports cabled back to back)\n";
    } else if v.fabric.tiered() {
        t += &format!("switches: {switches} ({})\n", tiers.join(", "));
    } else {
        t += &format!(
            "switches: {} on every path, non-blocking (each port has its own channels through \
             them)\n",
            v.tiers[0].1
        );
    }
    if v.core_cables > 0 {
        t += &format!(
            "cables: {} ({} NIC port to switch, {} leaf to spine, {} spine to core)\n",
            v.host_cables + v.spine_cables + v.core_cables,
            v.host_cables,
            v.spine_cables,
            v.core_cables
        );
        let tier = |n: &str| v.tiers.iter().find(|x| x.0 == n).map_or(0, |x| x.1);
        t += &format!(
            "pods: {} ({} leaves and {} spines a pod)\n",
            v.pods,
            tier("leaf") / v.pods.max(1),
            tier("spine") / v.pods.max(1)
        );
    } else if v.fabric.tiered() {
        t += &format!(
            "cables: {} ({} NIC port to switch, {} leaf to spine)\n",
            v.host_cables + v.spine_cables,
            v.host_cables,
            v.spine_cables
        );
    } else {
        t += &format!(
            "cables: {} (NIC port to switch, or back to back)\n",
            v.host_cables
        );
    }
    if !v.leaves.is_empty() {
        let down: usize = v.leaves.iter().map(|l| l.downlinks).sum();
        let up: usize = v.leaves.iter().map(|l| l.uplinks).sum();
        t += &format!(
            "downlinks: {down} (leaf ports to NICs), uplinks: {up} (leaf ports to spines)\n"
        );
        t += "leaf          downlinks  uplinks  down Gb/s  up Gb/s\n";
        for l in &v.leaves {
            t += &format!(
                "{:<12}  {:>9}  {:>7}  {:>9}  {:>7}\n",
                l.name,
                l.downlinks,
                l.uplinks,
                gbps(l.down_bps),
                gbps(l.up_bps)
            );
        }
    }
    t += &format!(
        "bisection bandwidth: {} Gb/s ({})\n",
        gbps(v.bisection_bps),
        if v.pods > 1 {
            "one direction, pods cut into two halves in order: the lesser half's min(host ports, leaf uplinks, spine uplinks to the cores)"
        } else if v.leaves.len() > 1 {
            "one direction, leaves cut into two halves in order: the lesser half's min(host ports, uplinks)"
        } else {
            "one direction, half the NIC ports"
        }
    );
    if let Some((a, z)) = ends {
        match topo.switch_path(a, z, qp) {
            Some((nodes, channels)) => {
                let (sw, cables) = (nodes.len().saturating_sub(2), channels.len());
                t += &format!(
                    "path (QP {qp}): {} ({sw} switch{}, {cables} cable{})\n  channels: {}\n",
                    nodes.join(" -> "),
                    if sw == 1 { "" } else { "es" },
                    if cables == 1 { "" } else { "s" },
                    channels.join(", ")
                );
            }
            None => {
                let net = &topo.network;
                let name = |(h, n): (usize, usize)| net.ports[net.port_index(h, n)].name.clone();
                t += &format!(
                    "path: none from {} to {} (cabled back to back, and not to each other)\n",
                    name(a),
                    name(z)
                );
            }
        }
    }
    t
}

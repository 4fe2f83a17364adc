//! Where a point's flows were routed in a switch fabric (`fabric = "leaf-spine"` or
//! `"rail-optimized"`): for every cable direction of the fabric that carried a payload, which
//! flows the routes put on it and among how many equal-cost cables, and each flow's path
//! through the switches. Counted from the flows' plans (the routes the simulation ran, ECMP's
//! hash or adaptive routing's placement included), never re-derived, so that report.md can say
//! why a spine cable bound a run ("3 flows hashed onto it") and flows.csv where each flow went.
//!
//! The single-switch and back-to-back networks give none: their paths are private to each
//! port pair, so no cable is shared by routing.

use std::collections::BTreeSet;

use crate::plan::{Plan, StepKind};
use crate::topology::Topology;
use crate::topology::spec::Routing;

/// The role of a cable direction in a two-tier fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cable {
    /// A NIC port's cable into its leaf (`wire:a0/nic0>leaf0`).
    PortUp,
    /// A leaf's uplink to a spine (`leaf0>spine1`, `leaf0>spine1#0` among parallel cables).
    Uplink,
    /// A spine's downlink to a leaf (`spine1>leaf3`).
    Downlink,
    /// A fat tree's pod spine's uplink to a core (`pod0.spine1>core2`).
    CoreUplink,
    /// A core's downlink to a pod spine (`core2>pod1.spine1`).
    CoreDownlink,
    /// A leaf's port into a NIC (`leaf3>b0/nic0`).
    PortDown,
}

impl Cable {
    /// The words a cluster engineer reads: "uplink", "downlink", "NIC port cable", "leaf port".
    pub fn word(self) -> &'static str {
        match self {
            Cable::PortUp => "NIC port cable",
            Cable::Uplink => "uplink",
            Cable::Downlink => "downlink",
            Cable::CoreUplink => "core uplink",
            Cable::CoreDownlink => "core downlink",
            Cable::PortDown => "leaf port",
        }
    }

    /// Whether it joins two switches (where routing chooses among equal-cost cables).
    pub fn is_spine(self) -> bool {
        !matches!(self, Cable::PortUp | Cable::PortDown)
    }

    /// Whether it goes up the tree (a leaf's or a pod spine's uplink).
    pub fn is_up(self) -> bool {
        matches!(self, Cable::Uplink | Cable::CoreUplink)
    }
}

/// How the fabric chose among equal-cost paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathChoice {
    /// Static ECMP: a hash of (source port, destination port, QP number).
    Ecmp,
    /// Adaptive routing, placed when routes are built (the least-loaded equal-cost cables).
    Adaptive,
}

/// One cable direction that carried a payload, and the flows routed over it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CableLoad {
    /// The channel's name, as links.csv and `bottleneck` name it (`spine2>leaf1`).
    pub channel: String,
    /// Its role.
    pub cable: Cable,
    /// The node it leaves and the node it reaches: a switch (`leaf0`, `spine2`, `su0.rail3`)
    /// or a NIC port (`a0/nic0`).
    pub from: String,
    /// See `from`.
    pub to: String,
    /// The flows whose payload was routed over it (indices in the scenario), ascending.
    pub flows: Vec<u32>,
    /// Their queue pairs routed over it (one per flow unless `qps_per_connection` > 1, when a
    /// flow's QPs may take different cables).
    pub qps: u32,
    /// The equal-cost cables it is one of: its leaf's uplinks (an uplink), the cables from the
    /// spines into its leaf (a downlink); 1 for a NIC port's cable and a leaf's port.
    pub group: u32,
    /// Distinct flows routed over any cable of that group.
    pub group_flows: u32,
    /// The host ports of the leaf the group belongs to (the leaf an uplink leaves, or the
    /// leaf a downlink reaches): with `group` its oversubscription.
    pub leaf_ports: u32,
    /// The NIC line rate of its flows, GB/s: the fastest of their sending ports' cables.
    pub line_gbps: f64,
}

/// A point's flows in a switch fabric: how paths were chosen and every cable direction that
/// carried a payload, in the fabric's channel order.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FabricLoad {
    /// ECMP or adaptive.
    pub routing: PathChoice,
    /// The cable directions with at least one flow.
    pub cables: Vec<CableLoad>,
}

impl FabricLoad {
    /// The cable direction named `channel`, if a flow was routed over it.
    pub fn cable(&self, channel: &str) -> Option<&CableLoad> {
        self.cables.iter().find(|c| c.channel == channel)
    }
}

/// A channel's place in the fabric: its role, its equal-cost group (index into the groups)
/// and its two ends.
#[derive(Clone)]
struct Role {
    cable: Cable,
    group: usize,
    from: String,
    to: String,
}

/// The two ends of a channel named `[kind:]from>to[#tag]`: the tag stays with `to` (it tells
/// parallel cables apart), the kind prefix (`wire:`) goes.
fn ends(name: &str) -> (String, String) {
    let name = name.split_once(':').map_or(name, |(_, n)| n);
    match name.split_once('>') {
        Some((a, z)) => (a.to_string(), z.to_string()),
        None => (name.to_string(), String::new()),
    }
}

/// Per equal-cost group of cables: its cables and the host ports of its leaf.
type Groups = Vec<(u32, u32)>;

/// Every fabric channel's role, indexed by channel; the groups' sizes and leaf ports.
fn roles(topo: &Topology) -> Option<(Vec<Option<Role>>, Groups)> {
    let ls = topo.network.leaf_spine.as_ref()?;
    let mut roles: Vec<Option<Role>> = vec![None; topo.channels.len()];
    let mut groups: Groups = Vec::new();
    let mut set = |c: crate::topology::ChannelId, cable, group| {
        let (from, to) = ends(&topo.channels[c.index()].name);
        roles[c.index()] = Some(Role {
            cable,
            group,
            from,
            to,
        });
    };
    for (leaf, cables) in ls.uplinks.iter().enumerate() {
        let ports = ls.leaf_of.iter().filter(|&&l| l == leaf).count() as u32;
        let (up, down) = (groups.len(), groups.len() + 1);
        groups.push((cables.len() as u32, ports));
        groups.push((cables.len() as u32, ports));
        for c in cables {
            set(c.up, Cable::Uplink, up);
            set(c.down, Cable::Downlink, down);
        }
    }
    // A fat tree's pod spines: their uplinks to the cores, and the cables from the cores into
    // each (a group per spine and direction; its "ports" are the cables from its leaves).
    for (spine, cables) in ls.core_uplinks.iter().enumerate() {
        let from_leaves = ls
            .uplinks
            .iter()
            .flatten()
            .filter(|c| c.to == spine)
            .count() as u32;
        let (up, down) = (groups.len(), groups.len() + 1);
        groups.push((cables.len() as u32, from_leaves));
        groups.push((cables.len() as u32, from_leaves));
        for c in cables {
            set(c.up, Cable::CoreUplink, up);
            set(c.down, Cable::CoreDownlink, down);
        }
    }
    for p in &topo.network.ports {
        for (ch, cable) in [(p.uplink, Cable::PortUp), (p.downlink, Cable::PortDown)] {
            if let Some(ch) = ch {
                set(ch, cable, groups.len());
                groups.push((1, 1));
            }
        }
    }
    Some((roles, groups))
}

/// Per QP of `plan` (QP 0's routes, then each set of `qp_routes`), the routes of its payload's
/// network crossings (its `Wire` steps), each once, in step order.
fn wire_routes(plan: &Plan) -> Vec<Vec<&[crate::topology::ChannelId]>> {
    let mut idx: Vec<usize> = Vec::new();
    for s in &plan.steps {
        if let StepKind::Wire { route } = s.kind
            && !idx.contains(&route.index())
        {
            idx.push(route.index());
        }
    }
    std::iter::once(&plan.routes)
        .chain(&plan.qp_routes)
        .map(|set| {
            idx.iter()
                .filter_map(|&i| set.get(i))
                .map(|r| &r[..])
                .collect()
        })
        .collect()
}

/// The flows' load on a switch fabric, and each flow's switch path ([`switch_path`]); None
/// where `topo`'s network is not a switch fabric.
pub fn fabric_load(topo: &Topology, plans: &[&Plan]) -> Option<(FabricLoad, Vec<String>)> {
    let ls = topo.network.leaf_spine.as_ref()?;
    let (roles, groups) = roles(topo)?;
    // (channel, flow, qp) of every payload crossing.
    let mut on: BTreeSet<(usize, u32, u32)> = BTreeSet::new();
    let mut line: Vec<f64> = Vec::with_capacity(plans.len());
    let mut paths: Vec<String> = Vec::with_capacity(plans.len());
    for (f, plan) in plans.iter().enumerate() {
        let qps = wire_routes(plan);
        let mut rate: f64 = 0.0;
        let mut mine: Vec<String> = Vec::new();
        for (q, routes) in qps.iter().enumerate() {
            for route in routes {
                for &c in *route {
                    if let Some(r) = &roles[c.index()] {
                        on.insert((c.index(), f as u32, q as u32));
                        if r.cable == Cable::PortUp {
                            rate = rate.max(topo.channels[c.index()].rate.gbytes_per_s());
                        }
                    }
                }
                let path = switch_path(route.iter().filter_map(|c| roles[c.index()].as_ref()));
                if !path.is_empty() && !mine.contains(&path) {
                    mine.push(path);
                }
            }
        }
        line.push(rate);
        paths.push(mine.join(";"));
    }
    let mut group_flows: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); groups.len()];
    for &(c, f, _) in &on {
        if let Some(r) = &roles[c] {
            group_flows[r.group].insert(f);
        }
    }
    let mut cables: Vec<CableLoad> = Vec::new();
    let mut at = on.iter().peekable();
    while let Some(&&(c, _, _)) = at.peek() {
        let mut flows: Vec<u32> = Vec::new();
        let mut qps = 0;
        while let Some(&&(c2, f, _)) = at.peek() {
            if c2 != c {
                break;
            }
            qps += 1;
            if flows.last() != Some(&f) {
                flows.push(f);
            }
            at.next();
        }
        let Some(r) = &roles[c] else { continue };
        let (group, leaf_ports) = groups[r.group];
        cables.push(CableLoad {
            channel: topo.channels[c].name.clone(),
            cable: r.cable,
            from: r.from.clone(),
            to: r.to.clone(),
            line_gbps: flows.iter().map(|&f| line[f as usize]).fold(0.0, f64::max),
            flows,
            qps,
            group,
            group_flows: group_flows[r.group].len() as u32,
            leaf_ports,
        });
    }
    let routing = match ls.routing {
        Routing::Ecmp => PathChoice::Ecmp,
        Routing::Adaptive => PathChoice::Adaptive,
    };
    Some((FabricLoad { routing, cables }, paths))
}

/// The switches a route crosses, from the roles of its fabric channels in route order:
/// `leaf0>spine2>leaf1`, each switch after the first as the cable into it names it, so that
/// parallel cables keep their tag (`leaf0>spine2#1>leaf1#0`) and every two neighbours
/// (less the first's tag) are the name of the channel between them. Empty where the route
/// crosses no switch of the fabric.
fn switch_path<'a>(route: impl Iterator<Item = &'a Role>) -> String {
    let mut nodes: Vec<&str> = Vec::new();
    for r in route {
        match r.cable {
            Cable::PortUp => nodes.push(&r.to),
            Cable::Uplink | Cable::Downlink | Cable::CoreUplink | Cable::CoreDownlink => {
                if nodes.is_empty() {
                    nodes.push(&r.from);
                }
                nodes.push(&r.to);
            }
            Cable::PortDown => {
                if nodes.is_empty() {
                    nodes.push(&r.from);
                }
            }
        }
    }
    nodes.join(">")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Op, PathKind};
    use crate::scenario::paths;

    /// 16 workstation hosts (one NIC each), 8 a leaf, 2:1 over 4 spines, ECMP, two QPs a
    /// connection; host i of leaf 0 writes to host i of leaf 1, and host 0 to host 1 (one leaf).
    fn cross_leaf() -> crate::config::Config {
        let hosts: String = (0..16)
            .map(|i| format!("[[hosts]]\nname = \"n{i}\"\nmachine = \"ws\"\n"))
            .collect();
        let flow = |a: usize, b: usize| {
            format!(
                r#"{{ sender = {{ host = "n{a}", nic = "nic0", buffer = "host" }}, receiver = {{ host = "n{b}", nic = "nic0", buffer = "host" }} }}"#
            )
        };
        let mut flows: Vec<String> = (0..8).map(|i| flow(i, 8 + i)).collect();
        flows.push(flow(0, 1));
        let text = format!(
            "name = \"t\"\n[sweep]\nsizes = [\"1MiB\"]\npaths = [\"host\"]\nops = [\"write_imm\"]\n[network]\nfabric = \"leaf-spine\"\nhosts_per_leaf = 8\nspines = 4\n\
             oversubscription = 2\nqps_per_connection = 2\n[[machines]]\nname = \"ws\"\n\
             preset = \"workstation\"\n{hosts}[[scenarios]]\nname = \"x\"\nflows = [{}]\n",
            flows.join(", ")
        );
        crate::config::parse(&text, "t.toml").unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    /// The flows and QPs on every cable are those whose routes, asked of the topology QP by QP
    /// (an independent reading of the same ECMP hash), cross it; the groups are the leaf's 4
    /// uplinks and the 4 cables into a leaf; the same-leaf flow turns in its leaf.
    #[test]
    fn each_cable_carries_the_flows_whose_routes_cross_it() {
        let cfg = cross_leaf();
        let topo = crate::scenario::topology(&cfg);
        let sc = &cfg.scenarios[0];
        let built: Vec<paths::Built> = (sc.flows.iter())
            .map(|f| paths::plan(&cfg, f, &topo, PathKind::Host, Op::WriteImm, 1 << 20).unwrap())
            .collect();
        let plans: Vec<&Plan> = built.iter().map(|b| &b.plan).collect();
        let (load, switch_paths) = fabric_load(&topo, &plans).expect("a switch fabric");
        assert_eq!(load.routing, PathChoice::Ecmp);
        let mut expect: std::collections::BTreeMap<String, (BTreeSet<u32>, u32)> =
            Default::default();
        for (i, f) in sc.flows.iter().enumerate() {
            for k in 0..2 {
                let qp = paths::qp_number(&cfg.network, f.qp, k);
                let route = topo
                    .wire_route(
                        (f.sender.host, f.sender.nic),
                        (f.receiver.host, f.receiver.nic),
                        qp,
                    )
                    .unwrap();
                for c in route {
                    let e = expect
                        .entry(topo.channels[c.index()].name.clone())
                        .or_default();
                    e.0.insert(i as u32);
                    e.1 += 1;
                }
            }
        }
        let got: std::collections::BTreeMap<String, (BTreeSet<u32>, u32)> = (load.cables.iter())
            .map(|c| {
                (
                    c.channel.clone(),
                    (c.flows.iter().copied().collect(), c.qps),
                )
            })
            .collect();
        assert_eq!(got, expect);
        for c in &load.cables {
            match c.cable {
                Cable::Uplink => {
                    assert_eq!((c.group, c.group_flows, c.leaf_ports), (4, 8, 8), "{c:?}");
                    assert!(c.from == "leaf0" && c.to.starts_with("spine"), "{c:?}");
                }
                Cable::Downlink => assert_eq!((c.group, c.group_flows), (4, 8), "{c:?}"),
                Cable::PortUp | Cable::PortDown => assert_eq!(c.group, 1, "{c:?}"),
                Cable::CoreUplink | Cable::CoreDownlink => panic!("two tiers have no core: {c:?}"),
            }
            assert!((c.line_gbps - 12.5).abs() < 1e-9, "EDR 100 Gb/s: {c:?}");
        }
        assert_eq!(switch_paths[8], "leaf0", "n0 -> n1 turns in its leaf");
        for p in &switch_paths[..8] {
            for qp in p.split(';') {
                let nodes: Vec<&str> = qp.split('>').collect();
                assert!(
                    nodes.len() == 3 && nodes[0] == "leaf0" && nodes[2] == "leaf1",
                    "{p}"
                );
            }
        }
    }

    fn role(cable: Cable, from: &str, to: &str) -> Role {
        Role {
            cable,
            group: 0,
            from: from.into(),
            to: to.into(),
        }
    }

    #[test]
    fn a_channel_name_splits_into_its_ends_with_the_tag_kept() {
        assert_eq!(
            ends("wire:a0/nic0>leaf0"),
            ("a0/nic0".into(), "leaf0".into())
        );
        assert_eq!(ends("leaf0>spine1#1"), ("leaf0".into(), "spine1#1".into()));
        assert_eq!(
            ends("spine3>su0.rail5"),
            ("spine3".into(), "su0.rail5".into())
        );
        assert_eq!(ends("leaf1>b0/nic0"), ("leaf1".into(), "b0/nic0".into()));
    }

    /// Across the spines: the three switches; parallel cables keep their tag so that two
    /// neighbours name the channel between them; within a leaf: the leaf alone.
    #[test]
    fn a_switch_path_names_each_switch_once() {
        let across = [
            role(Cable::PortUp, "a0/nic0", "leaf0"),
            role(Cable::Uplink, "leaf0", "spine2#1"),
            role(Cable::Downlink, "spine2", "leaf1#0"),
            role(Cable::PortDown, "leaf1", "b0/nic0"),
        ];
        assert_eq!(switch_path(across.iter()), "leaf0>spine2#1>leaf1#0");
        let rail = [
            role(Cable::PortUp, "n0/nic0", "su0.rail0"),
            role(Cable::Uplink, "su0.rail0", "spine3"),
            role(Cable::Downlink, "spine3", "su0.rail5"),
            role(Cable::PortDown, "su0.rail5", "n2/nic5"),
        ];
        assert_eq!(switch_path(rail.iter()), "su0.rail0>spine3>su0.rail5");
        let same = [
            role(Cable::PortUp, "a0/nic0", "leaf0"),
            role(Cable::PortDown, "leaf0", "a1/nic0"),
        ];
        assert_eq!(switch_path(same.iter()), "leaf0");
        assert_eq!(switch_path(std::iter::empty()), "");
    }
}

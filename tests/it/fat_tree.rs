//! The fat-tree fabric: three tiers (leaf, spine, core) with pods. Its routes (same leaf, same
//! pod, other pods), the closed-form oracles of a non-blocking and a core-oversubscribed tree,
//! and the checks that name the key when the numbers do not add up.
//!
//! The hosts, flows and the rate `r` of a flow alone are the leaf-spine cases' (`fabric.rs`):
//! workstation hosts, one 100 Gb/s NIC each, host memory to host memory, 16 MiB messages.

use crate::fabric::{config, each_flow_at, nic_gbytes, run};
use crate::support::rel_diff;
use gdrsim::config;
use gdrsim::scenario;

/// 8 hosts, 2 a leaf, 2 pods of 2 leaves, 2 spines a pod, 4 cores, 1:1 at both tiers: every
/// leaf has 2 host ports and 2 uplinks (one to each of its pod's spines), every spine 2 cables
/// from its leaves and 2 to the cores (spine j to cores j and j + 2).
const NON_BLOCKING: &str = "fabric = \"fat-tree\"\nhosts_per_leaf = 2\npods = 2\n\
                            spines_per_pod = 2\ncores = 4";

/// Every host of pod 0 (n0..n3) sends to a distinct host of pod 1 (n4..n7).
fn across_pods() -> Vec<(usize, usize)> {
    (0..4).map(|i| (i, 4 + i)).collect()
}

/// The tree's channels per tier and the switches a packet crosses: within a leaf one switch;
/// within a pod leaf, pod spine, leaf; between pods leaf, spine, core, spine, leaf (five
/// switches, six cables), whatever the QP.
#[test]
fn paths_cross_one_three_or_five_switches() {
    let topo = scenario::topology(&config(NON_BLOCKING, 8, &across_pods()));
    let ls = topo.network.leaf_spine.as_ref().expect("a fat tree");
    assert_eq!((ls.leaves(), ls.spines, ls.cores, ls.pods), (4, 4, 4, 2));
    let v = topo.fabric_view();
    assert_eq!(v.tiers, [("leaf", 4), ("spine", 4), ("core", 4)]);
    assert_eq!((v.host_cables, v.spine_cables, v.core_cables), (8, 8, 8));
    // Both halves: 4 host ports, 4 leaf uplinks, 4 spine uplinks of 100 Gb/s.
    assert_eq!(v.bisection_bps, 400_000_000_000);
    let tier = |n: &str| {
        let n = n.split('.').next_back().unwrap_or(n);
        n.trim_end_matches(|c: char| c.is_ascii_digit()).to_string()
    };
    for qp in 0..8 {
        let (nodes, channels) = topo.switch_path((0, 0), (7, 0), qp).expect("a path");
        let tiers: Vec<String> = nodes[1..nodes.len() - 1].iter().map(|n| tier(n)).collect();
        assert_eq!(
            tiers,
            ["leaf", "spine", "core", "spine", "leaf"],
            "{nodes:?}"
        );
        assert!(nodes[1].starts_with("pod0.") && nodes[5].starts_with("pod1."));
        assert_eq!(channels.len(), 6);
        let (nodes, _) = topo.switch_path((0, 0), (3, 0), qp).expect("a path");
        assert_eq!(nodes.len(), 5, "{nodes:?}");
        assert!(nodes[2].starts_with("pod0.spine"), "{nodes:?}");
    }
    let (nodes, _) = topo.switch_path((0, 0), (1, 0), 0).expect("a path");
    assert_eq!(nodes, ["n0/nic0", "pod0.leaf0", "n1/nic0"]);
}

/// Non-blocking tree, adaptive routing, every host of pod 0 to a distinct host of pod 1: the
/// 4 flows have 4 leaf uplinks, 4 spine uplinks, 4 core downlinks and 4 spine downlinks of
/// the NIC's rate on each side, and adaptive placement gives each flow cables of its own, so
/// each runs at its NIC's payload rate r (as alone): aggregate 4r, within 1%.
///
/// With core_oversubscription = 2 (and 2 cores, the cores the spines' single uplinks reach),
/// each spine has 2 cables from its leaves and 1 to the cores: pod 0 has 2 cables of rate r
/// to the cores for 4 flows, so the aggregate is 2r and each flow, sharing its spine's uplink
/// with one other, gets r / 2.
#[test]
fn core_oversubscription_halves_an_exchange_between_pods() {
    let full = config(
        &format!("{NON_BLOCKING}\nrouting = \"adaptive\""),
        8,
        &across_pods(),
    );
    let r = nic_gbytes(&full);
    let s = run(&full);
    assert_eq!(s.flow_rows.len(), 4);
    each_flow_at(&s, r, "its NIC's rate");
    let half = config(
        "fabric = \"fat-tree\"\nhosts_per_leaf = 2\npods = 2\nspines_per_pod = 2\ncores = 2\n\
         core_oversubscription = 2\nrouting = \"adaptive\"",
        8,
        &across_pods(),
    );
    let s = run(&half);
    assert!(
        rel_diff(s.bw_gbps, 2.0 * r) < 0.01,
        "aggregate {:.3} vs pod 0's two core cables {:.3} GB/s",
        s.bw_gbps,
        2.0 * r
    );
    each_flow_at(&s, r / 2.0, "half its NIC");
    let bound = s.bottleneck.channel().unwrap_or_default();
    assert!(bound.contains("core"), "bound by {bound}");
}

/// The check names the key when the numbers do not add up.
#[test]
fn fat_tree_numbers_that_do_not_add_up_name_their_key() {
    let text = |net: &str| {
        let hosts: String = (0..8)
            .map(|i| format!("[[hosts]]\nname = \"n{i}\"\nmachine = \"ws\"\n"))
            .collect();
        format!(
            "name = \"q\"\n[sweep]\nsizes = [\"1MiB\"]\npaths = [\"host\"]\nops = [\"write_imm\"]\n\
             [network]\n{net}\n[[machines]]\nname = \"ws\"\npreset = \"workstation\"\n{hosts}\
             [[scenarios]]\nname = \"s\"\nflows = [{{ sender = {{ host = \"n0\", nic = \"nic0\", buffer = \"host\" }}, receiver = {{ host = \"n7\", nic = \"nic0\", buffer = \"host\" }} }}]\n"
        )
    };
    // The non-blocking tree with `kv` (`key = value`) replacing or adding its key.
    let err = |kv: &str| {
        let key = format!("{} =", kv.split(" =").next().unwrap_or(kv));
        let mut net: Vec<&str> = NON_BLOCKING
            .lines()
            .filter(|l| !l.starts_with(&key))
            .collect();
        net.push(kv);
        config::parse(&text(&net.join("\n")), "ft.toml").expect_err(kv)
    };
    // 4 leaves are not 3 pods.
    let e = err("pods = 3");
    assert_eq!((e.key.as_str(), e.found.as_str()), ("network.pods", "3"));
    assert!(e.expected.contains("4 leaves"), "{e}");
    // A spine: 2 cables from its leaves + 2 to the cores.
    let e = err("spine_radix = 3");
    assert_eq!(
        (e.key.as_str(), e.found.as_str()),
        ("network.spine_radix", "3")
    );
    assert!(e.expected.contains("pod0.spine0's 2 cables"), "{e}");
    // 2 cables from the leaves are not 4:1.
    let e = err("core_oversubscription = 4");
    assert_eq!(e.key, "network.core_oversubscription", "{e}");
    // Core 0 takes one cable from spine 0 of each pod: 2 ports; 8 cores leave some unreached.
    config::parse(&text(&format!("{NON_BLOCKING}\ncore_radix = 2")), "ft.toml")
        .unwrap_or_else(|e| panic!("{e}"));
    let e = err("cores = 8").to_string();
    assert!(
        e.contains("network.cores") && e.contains("at most 4 cores"),
        "{e}"
    );
    // 3 spines a pod: a leaf's 2 uplinks reach 2 of them.
    let e = err("spines_per_pod = 3");
    assert_eq!(e.key, "network.spines_per_pod", "{e}");
    // The leaf-spine's spine count, and switch_hops, are not a fat tree's.
    assert_eq!(err("spines = 2").key, "network.spines");
    assert_eq!(err("switch_hops = 3").key, "network.switch_hops");
    // A fat-tree key with another fabric.
    let e = config::parse(&text("fabric = \"leaf-spine\"\ncores = 2"), "ft.toml").expect_err("");
    assert_eq!(e.key, "network.cores");
    assert!(e.expected.contains("fat-tree"), "{e}");
}

/// The outputs name a fat tree's core tier: every flow between pods has a switch path of five
/// switches through a core (flows.csv's `switch_path`), and the cables the routes put flows
/// on include pod spines' uplinks to the cores, counted from those paths (report.md's network
/// section reads them): with 2 cores at 2:1 each core uplink of pod 0 carries its share of
/// the 4 flows, so the flows over pod 0's core uplinks add up to 4.
#[test]
fn outputs_name_the_core_tier() {
    let cfg = config(
        "fabric = \"fat-tree\"\nhosts_per_leaf = 2\npods = 2\nspines_per_pod = 2\ncores = 2\n\
         core_oversubscription = 2\nrouting = \"adaptive\"",
        8,
        &across_pods(),
    );
    let s = run(&cfg);
    for f in &s.flow_rows {
        let hops: Vec<&str> = f.switch_path.split('>').collect();
        assert_eq!(hops.len(), 5, "{}", f.switch_path);
        assert!(hops[2].starts_with("core"), "{}", f.switch_path);
    }
    let load = s.fabric.as_ref().expect("a switch fabric's load");
    let up: Vec<_> = (load.cables.iter())
        .filter(|c| {
            c.cable == gdrsim::fabric_load::Cable::CoreUplink && c.from.starts_with("pod0.")
        })
        .collect();
    assert!(!up.is_empty(), "no core uplink in {:?}", load.cables);
    assert_eq!(up.iter().map(|c| c.flows.len()).sum::<usize>(), 4);
    assert!(
        up.iter()
            .all(|c| c.cable.word() == "core uplink" && c.cable.is_up())
    );
}

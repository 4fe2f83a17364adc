//! Cluster fabrics: the leaf-spine generator's channels per tier, its routes (same leaf, across
//! the spines, ECMP), and the closed-form oracles of an oversubscribed and a non-blocking
//! fabric.
//!
//! The machine of every case is the `workstation` preset: one 100 Gb/s NIC per host, so a
//! host is one leaf port. Flows move host memory to host memory (the `host` path), 16 MiB
//! messages, 32 per flow, 16 in flight: the wire binds (the NIC's Gen4 x8 link does not), so a
//! flow alone runs at the NIC's payload rate `r = 100 Gb/s x mtu / (mtu + packet overhead)`.

use crate::support::rel_diff;
use gdrsim::config::{self, Config, PathKind};
use gdrsim::scenario;
use gdrsim::stats::Summary;
use gdrsim::topology::{ChannelId, Topology, leaf_spine};

const MIB: u64 = 1 << 20;

/// `hosts` workstation hosts n0.., the `[network]` lines `net`, and one scenario of the flows
/// `(sender host, receiver host)`.
pub(crate) fn config(net: &str, hosts: usize, flows: &[(usize, usize)]) -> Config {
    let hosts: String = (0..hosts)
        .map(|i| format!("[[hosts]]\nname = \"n{i}\"\nmachine = \"ws\"\n"))
        .collect();
    let flows: Vec<String> = flows
        .iter()
        .map(|(a, b)| {
            format!(
                r#"{{ sender = {{ host = "n{a}", nic = "nic0", buffer = "host" }}, receiver = {{ host = "n{b}", nic = "nic0", buffer = "host" }} }}"#
            )
        })
        .collect();
    let text = format!(
        r#"name = "fabric"
seed = 1
[sim]
iterations = 3
min_iterations = 3
stream_window = 16
stream_messages = 32
stream_budget_bytes = "512MiB"
jitter = false
[sweep]
sizes = ["16MiB"]
paths = ["host"]
ops = ["write_imm"]
[output]
charts = []
[network]
{net}
[[machines]]
name = "ws"
preset = "workstation"
{hosts}
[[scenarios]]
name = "cross-leaf"
flows = [{flows}]
"#,
        flows = flows.join(", "),
    );
    config::parse(&text, "fabric.toml").unwrap_or_else(|e| panic!("{e}\n{text}"))
}

pub(crate) fn run(cfg: &Config) -> Summary {
    crate::support::first_summary(cfg, PathKind::Host, 16 * MIB)
}

/// Network channels whose name matches `pred`.
fn count(topo: &Topology, pred: impl Fn(&str) -> bool) -> usize {
    topo.channels
        .iter()
        .filter(|c| c.host.is_none() && pred(&c.name))
        .count()
}

/// Host i of leaf 0 sends to host i of leaf 1, eight of each.
fn cross_leaf() -> Vec<(usize, usize)> {
    (0..8).map(|i| (i, 8 + i)).collect()
}

/// Every flow of `s` within 1% of `rate` GB/s (`what` says what the rate is).
pub(crate) fn each_flow_at(s: &Summary, rate: f64, what: &str) {
    for f in &s.flow_rows {
        assert!(
            rel_diff(f.bw_gbps, rate) < 0.01,
            "flow {} got {:.3}, {what} is {rate:.3} GB/s",
            f.flow,
            f.bw_gbps
        );
    }
}

/// The NIC's payload rate in GB/s: 100 Gb/s less its per-packet headers at the MTU.
pub(crate) fn nic_gbytes(cfg: &Config) -> f64 {
    let nic = &cfg.hosts[0].machine.nics[0];
    nic.wire_rate
        .scale(nic.mtu, nic.mtu + nic.packet_overhead)
        .gbytes_per_s()
}

const LEAF_SPINE_2_TO_1: &str =
    "fabric = \"leaf-spine\"\nhosts_per_leaf = 8\nspines = 4\noversubscription = 2";

/// 16 hosts, 8 a leaf, 2:1 over 4 spines: per leaf 8 host cables up and 8 leaf ports down,
/// 8 / 2 = 4 uplinks (one to each spine), each a channel per direction.
#[test]
fn leaf_spine_builds_one_channel_per_cable_direction_and_tier() {
    let cfg = config(LEAF_SPINE_2_TO_1, 16, &cross_leaf());
    let topo = scenario::topology(&cfg);
    assert_eq!(
        count(&topo, |n| n.starts_with("wire:") && n.contains(">leaf")),
        16
    );
    assert_eq!(
        count(&topo, |n| n.starts_with("leaf") && n.contains(">n")),
        16
    );
    assert_eq!(
        count(&topo, |n| n.starts_with("leaf") && n.contains(">spine")),
        8
    );
    assert_eq!(
        count(&topo, |n| n.starts_with("spine") && n.contains(">leaf")),
        8
    );
    let ls = topo
        .network
        .leaf_spine
        .as_ref()
        .expect("a leaf-spine fabric");
    assert_eq!((ls.leaves(), ls.spines), (2, 4));
    for leaf in &ls.uplinks {
        let spines: Vec<usize> = leaf.iter().map(|c| c.to).collect();
        assert_eq!(spines, [0, 1, 2, 3]);
    }
}

/// More uplinks than spines: 8 uplinks a leaf over 2 spines are 4 parallel cables to each,
/// each its own channel.
#[test]
fn uplinks_beyond_the_spines_are_parallel_cables() {
    let net = "fabric = \"leaf-spine\"\nhosts_per_leaf = 8\nspines = 2";
    let topo = scenario::topology(&config(net, 16, &cross_leaf()));
    assert_eq!(count(&topo, |n| n.starts_with("leaf0>spine0#")), 4);
    assert_eq!(count(&topo, |n| n.starts_with("spine1>leaf1#")), 4);
    assert_eq!(count(&topo, |n| n.contains(">spine")), 16);
    let ls = topo.network.leaf_spine.as_ref().unwrap();
    let mut ups: Vec<ChannelId> = ls.uplinks.iter().flatten().map(|c| c.up).collect();
    ups.sort_unstable();
    ups.dedup();
    assert_eq!(ups.len(), 16, "every cable its own channel");
}

/// Same leaf: the host's cable and the leaf's port (one switch). Across: cable, leaf to spine,
/// spine to leaf, leaf port (three switches), with the uplink ECMP's hash picks.
#[test]
fn routes_turn_in_the_leaf_or_cross_one_spine_as_ecmp_hashes() {
    let topo = scenario::topology(&config(LEAF_SPINE_2_TO_1, 16, &cross_leaf()));
    let name = |c: ChannelId| topo.channels[c.index()].name.clone();
    let same = topo.wire_route((0, 0), (1, 0), 0).unwrap();
    assert_eq!(
        same.iter().map(|&c| name(c)).collect::<Vec<_>>(),
        ["wire:n0/nic0>leaf0", "leaf0>n1/nic0"]
    );
    let ls = topo.network.leaf_spine.as_ref().unwrap();
    let mut used = [false; 4];
    for qp in 0..64 {
        let r = topo.wire_route((0, 0), (8, 0), qp).unwrap();
        let names: Vec<String> = r.iter().map(|&c| name(c)).collect();
        // One uplink per spine here: the hash modulo 4 picks the spine.
        let s = (leaf_spine::ecmp_hash(0, 8, qp, 0) % 4) as usize;
        assert_eq!(
            names,
            [
                "wire:n0/nic0>leaf0".to_string(),
                format!("leaf0>spine{s}"),
                format!("spine{s}>leaf1"),
                "leaf1>n8/nic0".to_string(),
            ]
        );
        assert_eq!(r[1], ls.uplinks[0][s].up);
        used[s] = true;
        // Fixed: the same flow always takes the same route.
        assert_eq!(topo.wire_route((0, 0), (8, 0), qp).unwrap(), r);
    }
    assert_eq!(used, [true; 4], "64 QPs spread over every spine");
}

/// FNV-1a of the 32 little-endian bytes (from, to, qp, hop as u64), then MurmurHash3's
/// fmix64: the documented hash, computed here independently.
#[test]
fn the_ecmp_hash_is_fnv_1a_with_murmur3s_finalizer() {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in [3u64, 11, 7, 1].iter().flat_map(|v| v.to_le_bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    h = (h ^ (h >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    h = (h ^ (h >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    assert_eq!(leaf_spine::ecmp_hash(3, 11, 7, 1), h ^ (h >> 33));
}

/// The issue's oracle. 2:1 leaf-spine, 8 hosts a leaf, 4 spines, adaptive routing; every host
/// of leaf 0 sends to a distinct host of leaf 1 at once. Derivation: leaf 0 has 8 host ports
/// (its downlink capacity 8 r) and 8 / 2 = 4 uplinks of the NIC's rate (spine_port_gbps's
/// default), so 4 r leaves it. Adaptive routing puts the 8 flows 2 to an uplink (and 2 to
/// each spine's cable down to leaf 1), so each cable is shared by exactly 2 flows: max-min
/// gives each flow r / 2 and the aggregate 8 x r / 2 = 4 r, half the leaf's downlink
/// capacity. The host cables (r each, one flow) and leaf 1's ports do not bind.
#[test]
fn two_to_one_leaf_spine_halves_a_cross_leaf_exchange() {
    let net = format!("{LEAF_SPINE_2_TO_1}\nrouting = \"adaptive\"");
    let cfg = config(&net, 16, &cross_leaf());
    let s = run(&cfg);
    let r = nic_gbytes(&cfg);
    assert!(
        rel_diff(s.bw_gbps, 8.0 * r / 2.0) < 0.01,
        "aggregate {:.3} vs half the leaf's downlinks {:.3} GB/s",
        s.bw_gbps,
        8.0 * r / 2.0
    );
    assert_eq!(s.flow_rows.len(), 8);
    each_flow_at(&s, r / 2.0, "half its NIC");
    let bound = s.bottleneck.channel().unwrap_or_default();
    assert!(
        bound.starts_with("leaf0>spine") || bound.starts_with("spine"),
        "bound by {bound}"
    );
}

/// A non-blocking leaf-spine (1:1, 8 spines, adaptive: each flow its own spine) carries the
/// same exchange as today's non-blocking single switch: every flow at its NIC's rate r, so
/// the bandwidth agrees within 1%; with `switch_hops = 3` (the same three switches and four
/// cables) the noise-free latency is the same to the picosecond.
#[test]
fn non_blocking_leaf_spine_matches_the_single_switch() {
    let net = "fabric = \"leaf-spine\"\nhosts_per_leaf = 8\nspines = 8\nrouting = \"adaptive\"";
    let ls = run(&config(net, 16, &cross_leaf()));
    let one = run(&config("switch_hops = 1", 16, &cross_leaf()));
    let three = run(&config("switch_hops = 3", 16, &cross_leaf()));
    assert!(
        rel_diff(ls.bw_gbps, one.bw_gbps) < 0.01,
        "leaf-spine {:.3} vs single switch {:.3} GB/s",
        ls.bw_gbps,
        one.bw_gbps
    );
    assert!(rel_diff(ls.bw_gbps, three.bw_gbps) < 1e-9);
    assert_eq!(ls.lat_model_ps, three.lat_model_ps);
}

/// Max-min fair rates (progressive filling) of flows over links of equal capacity 1, each flow
/// given as the links it crosses: every unfrozen flow's rate rises together until a link
/// saturates; its flows freeze at that rate.
fn max_min(flows: &[Vec<ChannelId>]) -> Vec<f64> {
    let mut rate = vec![None; flows.len()];
    loop {
        let mut links: std::collections::BTreeMap<ChannelId, (f64, usize)> = Default::default();
        for (f, route) in flows.iter().enumerate() {
            for &l in route {
                let e = links.entry(l).or_insert((1.0, 0));
                match rate[f] {
                    Some(r) => e.0 -= r,
                    None => e.1 += 1,
                }
            }
        }
        let Some((&l, &(left, n))) = links
            .iter()
            .filter(|(_, v)| v.1 > 0)
            .min_by(|a, b| (a.1.0 / a.1.1 as f64).total_cmp(&(b.1.0 / b.1.1 as f64)))
        else {
            return rate.into_iter().map(|r| r.unwrap_or(0.0)).collect();
        };
        let share = left / n as f64;
        for (f, route) in flows.iter().enumerate() {
            if rate[f].is_none() && route.contains(&l) {
                rate[f] = Some(share);
            }
        }
    }
}

/// The issue's ECMP oracle: a non-blocking 1:1 fabric (8 uplinks a leaf, two cables to each
/// of 4 spines) under static ECMP. Each flow's rate is what max-min fairness gives on the
/// loads the hash actually produced (each flow's route read back from the topology, the
/// rates computed here by progressive filling, independently of the simulator), times the
/// NIC's payload rate r (every cable runs at the NIC's rate). The hash does collide here (a
/// cable carries more than one flow), so the case is not the trivial non-blocking one.
#[test]
fn ecmp_flows_get_the_max_min_rates_of_the_hashs_assignment() {
    let net = "fabric = \"leaf-spine\"\nhosts_per_leaf = 8\nspines = 4";
    let cfg = config(net, 16, &cross_leaf());
    let topo = scenario::topology(&cfg);
    let routes: Vec<Vec<ChannelId>> = cross_leaf()
        .iter()
        .enumerate()
        .map(|(qp, &(a, b))| topo.wire_route((a, 0), (b, 0), qp as u32).unwrap())
        .collect();
    let mut load: std::collections::BTreeMap<ChannelId, usize> = Default::default();
    for c in routes.iter().flatten() {
        *load.entry(*c).or_default() += 1;
    }
    assert!(load.values().any(|&n| n > 1), "no collision: {load:?}");
    let expect = max_min(&routes);
    let s = run(&cfg);
    let r = nic_gbytes(&cfg);
    for f in &s.flow_rows {
        let want = expect[f.flow as usize] * r;
        assert!(
            rel_diff(f.bw_gbps, want) < 0.01,
            "flow {} got {:.3}, max-min on the hash's loads gives {want:.3} GB/s",
            f.flow,
            f.bw_gbps
        );
    }
}

/// `qps_per_connection` (NCCL_IB_QPS_PER_CONNECTION): a flow's messages ride its Q QPs round
/// robin and ECMP hashes each QP on its own, so one flow's messages can cross different
/// spines. Fabric: 2 hosts a leaf, 1:1, 2 spines, so a leaf has 2 uplinks, one to each spine,
/// and each spine one cable down to each leaf (the spine's hash has one choice); the source
/// leaf's hash picks the spine: `ecmp_hash(src port, dst port, qp, 0) mod 2` (one NIC a host:
/// port = host). Flow f's QPs are numbered `f x Q + k`. The two flows (leaf 0's hosts to the
/// two hosts of another leaf) are picked, by the hash computed here, so that with one QP
/// (QPs 0 and 1) both hash onto the same spine, and with two QPs (flow 0: QPs 0, 1; flow 1:
/// QPs 2, 3) each flow's two QPs hash onto different spines.
///
/// Derivation. One QP: both flows share one uplink of rate r (the NIC's, spine_port_gbps's
/// default) and the other is idle: max-min gives each r / 2, the aggregate r. Two QPs: a
/// QP is a send queue whose messages go one after another, and the NIC serves a flow's two
/// QPs side by side; so each flow has one message on each spine at a time, sharing its host
/// cable (rate r): r / 2 each. Each uplink then carries one message of each flow, r / 2 + r /
/// 2 = r, exactly its rate: nothing in the network binds and each flow runs at its NIC's
/// rate r, the aggregate 2 r (within 1%).
#[test]
fn qps_per_connection_spreads_a_flows_messages_over_the_spines() {
    let base = "fabric = \"leaf-spine\"\nhosts_per_leaf = 2\nspines = 2";
    let spine = |from: usize, to: usize, qp: u32| leaf_spine::ecmp_hash(from, to, qp, 0) % 2;
    // Candidate flows: hosts 0 and 1 (leaf 0) to the two hosts of leaf 1..7, in either order.
    let flows = (1..8)
        .flat_map(|leaf| {
            [
                [(0, 2 * leaf), (1, 2 * leaf + 1)],
                [(0, 2 * leaf + 1), (1, 2 * leaf)],
            ]
        })
        .find(|f| {
            let collide = spine(f[0].0, f[0].1, 0) == spine(f[1].0, f[1].1, 1);
            let split = |i: usize| {
                let (a, b) = f[i];
                let q = 2 * i as u32;
                spine(a, b, q) != spine(a, b, q + 1)
            };
            collide && split(0) && split(1)
        })
        .expect("some pair of flows collides with one QP and splits with two");
    let one = config(base, 16, &flows);
    let two = config(&format!("{base}\nqps_per_connection = 2"), 16, &flows);
    let r = nic_gbytes(&one);
    // The routes as the topology gives them: one QP on one spine; two QPs on both.
    let topo = scenario::topology(&one);
    let up = |topo: &Topology, (a, b): (usize, usize), qp: u32| {
        topo.wire_route((a, 0), (b, 0), qp).unwrap()[1]
    };
    assert_eq!(up(&topo, flows[0], 0), up(&topo, flows[1], 1));
    let topo2 = scenario::topology(&two);
    for (i, &f) in flows.iter().enumerate() {
        let q = 2 * i as u32;
        assert_ne!(up(&topo2, f, q), up(&topo2, f, q + 1));
    }
    let s1 = run(&one);
    assert!(
        rel_diff(s1.bw_gbps, r) < 0.01,
        "one QP: {:.3} vs r {r:.3}",
        s1.bw_gbps
    );
    each_flow_at(&s1, r / 2.0, "one QP: half r");
    let s2 = run(&two);
    assert!(
        rel_diff(s2.bw_gbps, 2.0 * r) < 0.01,
        "two QPs: {:.3} vs 2r {:.3}",
        s2.bw_gbps,
        2.0 * r
    );
    each_flow_at(&s2, r, "two QPs: r");
}

/// `qps_per_connection` names its key: the single-switch fabric has no spines to spread over,
/// and 0 or more than NCCL's 128 QPs are refused.
#[test]
fn qps_per_connection_is_checked() {
    let text = |net: &str| {
        format!(
            "name = \"q\"\n[sweep]\nsizes = [\"1MiB\"]\npaths = [\"host\"]\nops = [\"write_imm\"]\n[network]\n{net}\n[[machines]]\nname = \"ws\"\npreset = \"workstation\"\n\
             [[hosts]]\nname = \"a\"\nmachine = \"ws\"\n[[hosts]]\nname = \"b\"\nmachine = \"ws\"\n\
             [[scenarios]]\nname = \"s\"\nflows = [{{ sender = {{ host = \"a\", nic = \"nic0\", buffer = \"host\" }}, receiver = {{ host = \"b\", nic = \"nic0\", buffer = \"host\" }} }}]\n"
        )
    };
    for net in [
        "qps_per_connection = 2",
        "fabric = \"leaf-spine\"\nhosts_per_leaf = 1\nspines = 2\nqps_per_connection = 0",
        "fabric = \"leaf-spine\"\nhosts_per_leaf = 1\nspines = 2\nqps_per_connection = 129",
    ] {
        let e = config::parse(&text(net), "q.toml")
            .expect_err(net)
            .to_string();
        assert!(e.contains("network.qps_per_connection"), "{net}: {e}");
    }
    let ok = "fabric = \"leaf-spine\"\nhosts_per_leaf = 1\nspines = 2\nqps_per_connection = 128";
    config::parse(&text(ok), "q.toml").unwrap_or_else(|e| panic!("{e}"));
}

/// `spine_radix` (default: `leaf_radix`) bounds the cables a spine takes: 8 leaves of 4 hosts,
/// 1:1, each leaf's 4 uplinks over 2 spines, so each spine takes 2 cables from each of the 8
/// leaves, 16 ports. 15 is refused naming the key, 16 fits, and a leaf radix of 8 (4 host
/// ports + 4 uplinks) with the default spine radix refuses the spines, naming spine_radix.
#[test]
fn spine_radix_bounds_the_cables_a_spine_takes() {
    let hosts = "[[hosts]]\nname = \"a\"\nmachine = \"ws\"\ncount = 32\n";
    let text = |net: &str| {
        format!(
            "name = \"q\"\n[sweep]\nsizes = [\"1MiB\"]\npaths = [\"host\"]\nops = [\"write_imm\"]\n[network]\n{net}\n[[machines]]\nname = \"ws\"\npreset = \"workstation\"\n{hosts}\
             [[scenarios]]\nname = \"s\"\nflows = [{{ sender = {{ host = \"a0\", nic = \"nic0\", buffer = \"host\" }}, receiver = {{ host = \"a31\", nic = \"nic0\", buffer = \"host\" }} }}]\n"
        )
    };
    let base = "fabric = \"leaf-spine\"\nhosts_per_leaf = 4\nspines = 2";
    let e = config::parse(&text(&format!("{base}\nspine_radix = 15")), "q.toml").expect_err("15");
    assert_eq!(
        (e.key.as_str(), e.found.as_str()),
        ("network.spine_radix", "15"),
        "{e}"
    );
    assert!(e.expected.contains("spine0's 16 ports"), "{e}");
    let ok = config::parse(&text(&format!("{base}\nspine_radix = 16")), "q.toml")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ok.network.leaf_spine.spine_radix(), 16);
    let e = config::parse(&text(&format!("{base}\nleaf_radix = 8")), "q.toml").expect_err("8");
    assert_eq!(
        (e.key.as_str(), e.found.as_str()),
        ("network.spine_radix", "8"),
        "{e}"
    );
    // Set, it is written into the resolved config; unset, it is not (configs from before
    // the key resolve as they did).
    assert!(config::to_toml(&ok).contains("spine_radix = 16"));
    let plain = config::parse(&text(&format!("{base}\nleaf_radix = 16")), "q.toml")
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!config::to_toml(&plain).contains("spine_radix"));
    // A two-tier key: the single switch refuses it.
    let e = config::parse(&text("spine_radix = 16"), "q.toml").expect_err("single");
    assert_eq!(e.key, "network.spine_radix", "{e}");
}

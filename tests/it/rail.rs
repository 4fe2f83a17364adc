//! The rail-optimized fabric: NIC `i` of every host of a scalable unit on the unit's rail leaf
//! `i`, every rail leaf cabled to spines shared by the units. Its channels per tier, its
//! routes (on the rail: one leaf; off it: a spine), the closed-form oracles of the issue, and
//! the checks that name the key when the numbers do not add up.
//!
//! The machine of every case has four 100 Gb/s NICs (ConnectX-5-class, the workstation
//! preset's), each on its own Gen5 x16 root port of one socket with DRAM far faster than the
//! NICs, so that only the network can bind. Flows move host memory to host memory (the `host`
//! path), 16 MiB messages, 32 per flow, 16 in flight: a flow alone runs at the NIC's payload
//! rate `r = 100 Gb/s x mtu / (mtu + packet overhead)`.

use crate::support::rel_diff;
use gdrsim::config::{self, Config, PathKind};
use gdrsim::scenario;
use gdrsim::topology::Topology;

const MIB: u64 = 1 << 20;
const NICS: usize = 4;

/// A flow's two ports, (host, nic) each.
type Flow = ((usize, usize), (usize, usize));

/// One machine `rail4` with four NICs, each on its own root port.
fn machine() -> String {
    let mut m = String::from(
        "[[machines]]\nname = \"rail4\"\n\
         [[machines.sockets]]\nname = \"cpu0\"\ndram_rate_gbps = \"2000GB/s\"\n\
         [[machines.root_complexes]]\nname = \"rc0\"\nsocket = \"cpu0\"\n",
    );
    for i in 0..NICS {
        m += &format!("[[machines.nics]]\nname = \"nic{i}\"\nwire_rate_gbps = 100\n");
    }
    for i in 0..NICS {
        m += &format!(
            "[[machines.links]]\nup = \"rc0\"\ndown = \"nic{i}\"\ngeneration = 5\nwidth = 16\n"
        );
    }
    m
}

/// `hosts` rail4 hosts n0.., the `[network]` lines `net`, and one scenario of the flows
/// `((sender host, nic), (receiver host, nic))`.
fn text(net: &str, hosts: usize, flows: &[Flow]) -> String {
    let hosts: String = (0..hosts)
        .map(|i| format!("[[hosts]]\nname = \"n{i}\"\nmachine = \"rail4\"\n"))
        .collect();
    let flows: Vec<String> = flows
        .iter()
        .map(|((a, an), (b, bn))| {
            format!(
                r#"{{ sender = {{ host = "n{a}", nic = "nic{an}", buffer = "host" }}, receiver = {{ host = "n{b}", nic = "nic{bn}", buffer = "host" }} }}"#
            )
        })
        .collect();
    format!(
        r#"name = "rail"
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
{machine}
{hosts}
[[scenarios]]
name = "rails"
flows = [{flows}]
"#,
        machine = machine(),
        flows = flows.join(", "),
    )
}

fn config(net: &str, hosts: usize, flows: &[Flow]) -> Config {
    let t = text(net, hosts, flows);
    config::parse(&t, "rail.toml").unwrap_or_else(|e| panic!("{e}\n{t}"))
}

/// Two units of four hosts, two spines a unit (four in all), non-blocking.
const TWO_UNITS: &str =
    "fabric = \"rail-optimized\"\nhosts_per_unit = 4\nunits = 2\nspines_per_unit = 2";

/// Network channels whose name matches `pred`.
fn count(topo: &Topology, pred: impl Fn(&str) -> bool) -> usize {
    topo.channels
        .iter()
        .filter(|c| c.host.is_none() && pred(&c.name))
        .count()
}

/// One flow, n0/nic0 -> n1/nic0, for a config that builds a topology only.
const ONE: [Flow; 1] = [((0, 0), (1, 0))];

/// 2 units x 4 hosts x 4 NICs: 8 rail leaves (su0.rail0..su1.rail3), each with 4 host
/// ports (one NIC of each host of its unit) and, at 1:1, 4 uplinks, one to each of the
/// 2 x 2 = 4 spines: 32 host cables, 32 leaf ports, 32 leaf-spine cables (a channel per
/// direction). NIC i of host h is on leaf (h / 4) x 4 + i.
#[test]
fn rail_leaves_carry_nic_i_of_every_host_of_their_unit() {
    let topo = scenario::topology(&config(TWO_UNITS, 8, &ONE));
    assert_eq!(count(&topo, |n| n.starts_with("wire:")), 32);
    assert_eq!(
        count(&topo, |n| n.starts_with("su") && n.contains(">n")),
        32
    );
    assert_eq!(count(&topo, |n| n.contains(">spine")), 32);
    assert_eq!(count(&topo, |n| n.starts_with("spine")), 32);
    assert_eq!(count(&topo, |n| n == "wire:n5/nic3>su1.rail3"), 1);
    assert_eq!(count(&topo, |n| n == "spine3>su0.rail2"), 1);
    let ls = topo.network.leaf_spine.as_ref().expect("a two-tier fabric");
    assert_eq!((ls.leaves(), ls.spines), (8, 4));
    for (p, port) in topo.network.ports.iter().enumerate() {
        assert_eq!(
            ls.leaf_of[p],
            (port.host / 4) * NICS + port.nic,
            "{}",
            port.name
        );
    }
    for leaf in &ls.uplinks {
        let spines: Vec<usize> = leaf.iter().map(|c| c.to).collect();
        assert_eq!(spines, [0, 1, 2, 3]);
    }
}

/// The issue's oracle. NIC i to NIC i of another host of the unit: both ports on rail leaf i,
/// so the route is the sender's cable into the leaf and the leaf's port out (2 cables, 1
/// switch); NIC i to NIC j != i, or NIC i to NIC i of another unit, is on two leaves and
/// crosses a spine (cable, leaf to spine, spine to leaf, leaf port: 4 cables, 3 switches).
#[test]
fn on_the_rail_one_leaf_off_the_rail_a_spine() {
    let topo = scenario::topology(&config(TWO_UNITS, 8, &ONE));
    let names = |a, z| -> Vec<String> {
        let r = topo.wire_route(a, z, 0).unwrap();
        r.iter()
            .map(|&c| topo.channels[c.index()].name.clone())
            .collect()
    };
    for i in 0..NICS {
        assert_eq!(
            names((0, i), (3, i)),
            [
                format!("wire:n0/nic{i}>su0.rail{i}"),
                format!("su0.rail{i}>n3/nic{i}")
            ]
        );
    }
    let off = names((0, 1), (2, 2));
    assert_eq!(off.len(), 4, "{off:?}");
    assert_eq!(off[0], "wire:n0/nic1>su0.rail1");
    assert!(off[1].starts_with("su0.rail1>spine"), "{off:?}");
    assert!(
        off[2].starts_with("spine") && off[2].ends_with(">su0.rail2"),
        "{off:?}"
    );
    assert_eq!(off[3], "su0.rail2>n2/nic2");
    let units = names((1, 0), (5, 0));
    assert_eq!(units.len(), 4, "{units:?}");
    assert!(units[1].starts_with("su0.rail0>spine") && units[2].ends_with(">su1.rail0"));
}

/// The same routes timed: on the rail, the noise-free latency of one flow equals a single
/// switch's (`switch_hops = 1`: the same cable, switch and cable) to the picosecond; off the
/// rail, three switches' (`switch_hops = 3`), as the leaf-spine fabric's cross-leaf route.
#[test]
fn rail_latencies_are_one_switch_on_the_rail_and_three_off_it() {
    let lat = |net: &str, flow| {
        let cfg = config(net, 8, &[flow]);
        crate::support::first_summary(&cfg, PathKind::Host, 16 * MIB).lat_model_ps
    };
    let on = ((0, 2), (1, 2));
    let off = ((0, 2), (1, 3));
    assert_eq!(lat(TWO_UNITS, on), lat("switch_hops = 1", on));
    assert_eq!(lat(TWO_UNITS, off), lat("switch_hops = 3", off));
}

/// The issue's oracle. One unit of 4 hosts, 2:1 oversubscribed (a rail leaf has 4 host ports
/// and 2 uplinks): rail-parallel all-pairs traffic, on every rail every host to every other
/// (4 x 3 flows a rail, 48 in all), never leaves its rail leaf, so the oversubscribed uplinks
/// carry nothing and every NIC port runs at line rate. Derivation: each port sends 3 flows
/// through its cable (rate r) and receives 3 through its leaf port (rate r); every flow
/// crosses exactly one of each, both shared by 3, so max-min gives every flow r / 3 and each
/// port sends and receives r: the aggregate is 16 ports x r, within 1%.
#[test]
fn rail_parallel_all_pairs_run_at_line_rate() {
    let net = "fabric = \"rail-optimized\"\nhosts_per_unit = 4\nunits = 1\noversubscription = 2";
    let flows: Vec<_> = (0..NICS)
        .flat_map(|i| {
            (0..4).flat_map(move |a| {
                (0..4)
                    .filter(move |&b| b != a)
                    .map(move |b| ((a, i), (b, i)))
            })
        })
        .collect();
    assert_eq!(flows.len(), 48);
    let cfg = config(net, 4, &flows);
    let topo = scenario::topology(&cfg);
    assert_eq!(
        count(&topo, |n| n.contains(">spine")),
        8,
        "2 uplinks x 4 leaves"
    );
    let s = crate::support::first_summary(&cfg, PathKind::Host, 16 * MIB);
    let nic = &cfg.hosts[0].machine.nics[0];
    let r = nic
        .wire_rate
        .scale(nic.mtu, nic.mtu + nic.packet_overhead)
        .gbytes_per_s();
    assert!(
        rel_diff(s.bw_gbps, 16.0 * r) < 0.01,
        "aggregate {:.3} vs 16 ports at line rate {:.3} GB/s",
        s.bw_gbps,
        16.0 * r
    );
    for f in &s.flow_rows {
        assert!(
            rel_diff(f.bw_gbps, r / 3.0) < 0.01,
            "flow {} got {:.3}, a third of its NIC is {:.3} GB/s",
            f.flow,
            f.bw_gbps,
            r / 3.0
        );
    }
}

/// The check names the key when the numbers do not add up.
#[test]
fn rail_numbers_that_do_not_add_up_name_their_key() {
    let err =
        |net: &str, hosts| config::parse(&text(net, hosts, &ONE), "rail.toml").expect_err(net);
    let rail = "fabric = \"rail-optimized\"";
    // 6 hosts do not fill units of 4.
    let e = err(&format!("{rail}\nhosts_per_unit = 4"), 6);
    assert_eq!(e.key, "network.hosts_per_unit", "{e}");
    assert!(e.expected.contains("6 hosts"), "{e}");
    // 8 hosts are 2 units of 4, not 3.
    let e = err(&format!("{rail}\nhosts_per_unit = 4\nunits = 3"), 8);
    assert_eq!(
        (e.key.as_str(), e.found.as_str()),
        ("network.units", "3"),
        "{e}"
    );
    assert!(e.expected.starts_with('2'), "{e}");
    // 40 host ports + 40 uplinks on a 64-port leaf.
    let e = err(&format!("{rail}\nhosts_per_unit = 40"), 40);
    assert_eq!(
        (e.key.as_str(), e.found.as_str()),
        ("network.leaf_radix", "64"),
        "{e}"
    );
    assert!(e.expected.contains("80 ports"), "{e}");
    // 4 units x 4 rails = 16 leaves, each with 2 cables to each of the 4 spines: 32 ports
    // a spine, beyond a 16-port radix (the leaves themselves, 8 + 8, fit). The spines have
    // the leaves' radix unless spine_radix says otherwise, and the check names spine_radix.
    let small =
        format!("{rail}\nhosts_per_unit = 8\nunits = 4\nspines_per_unit = 1\nleaf_radix = 16");
    let e = err(&small, 32);
    assert_eq!(
        (e.key.as_str(), e.found.as_str()),
        ("network.spine_radix", "16"),
        "{e}"
    );
    assert!(e.expected.contains("spine0's 32 ports"), "{e}");
    assert!(e.expected.contains("defaults to leaf_radix"), "{e}");
    // 31 spine ports are one short; 32 take them.
    let e = err(&format!("{small}\nspine_radix = 31"), 32);
    assert_eq!(
        (e.key.as_str(), e.found.as_str()),
        ("network.spine_radix", "31"),
        "{e}"
    );
    config::parse(
        &text(&format!("{small}\nspine_radix = 32"), 32, &ONE),
        "rail.toml",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // 3 host ports a leaf cannot be 2:1.
    let e = err(
        &format!("{rail}\nhosts_per_unit = 3\noversubscription = 2"),
        3,
    );
    assert_eq!(e.key, "network.oversubscription", "{e}");
    // A leaf-spine key with the rail fabric, a rail key with the others.
    let e = err(
        &format!("{rail}\nhosts_per_unit = 2\nhosts_per_leaf = 2"),
        2,
    );
    assert_eq!(e.key, "network.hosts_per_leaf", "{e}");
    let e = err("fabric = \"leaf-spine\"\nunits = 2", 2);
    assert_eq!(e.key, "network.units", "{e}");
    let e = err("switch_hops = 1\nspines_per_unit = 2", 2);
    assert_eq!(e.key, "network.spines_per_unit", "{e}");
    assert!(e.expected.contains("rail-optimized"), "{e}");
    let e = err(&format!("{rail}\nhosts_per_unit = 2\nswitch_hops = 1"), 2);
    assert_eq!(e.key, "network.switch_hops", "{e}");
}

/// Hosts with differing NIC counts have no common rails: the check names the odd host.
#[test]
fn hosts_with_differing_nic_counts_are_refused() {
    let mut t = text(
        "fabric = \"rail-optimized\"\nhosts_per_unit = 2",
        1,
        &[((0, 0), (1, 0))],
    );
    t = t.replace(
        "[[scenarios]]",
        "[[machines]]\nname = \"one\"\npreset = \"workstation\"\n\
         [[hosts]]\nname = \"n1\"\nmachine = \"one\"\n[[scenarios]]",
    );
    let e = config::parse(&t, "rail.toml").expect_err("one NIC beside four");
    assert_eq!(e.key, "hosts[1].machine", "{e}");
    assert!(
        e.expected.contains("4 NICs") && e.found.contains("1 NICs"),
        "{e}"
    );
}

/// `gdrsim topo CONFIG --network` on the shipped rail-optimized study (16 nodes x 8 NICs, one
/// unit, 4 spines, 1:1): 8 rail leaves + 4 spines; 128 NIC cables + 8 x 16 uplinks; each leaf
/// 16 host ports and 16 uplinks of 400 Gb/s; the bisection cuts the leaves into rails 0-3 and
/// 4-7, each half 64 x 400 Gb/s of host ports and as much of uplinks: 25600 Gb/s. `--path` on
/// the rail turns in its leaf; off it, crosses a spine.
#[test]
fn topo_network_prints_the_rail_fabric_and_a_path() {
    let cfg = "configs/cluster-rail-optimized.toml";
    let out = crate::support::ok(
        &crate::support::gdrsim(&["topo", cfg, "--network"]),
        "topo --network",
    );
    for want in [
        "fabric: rail-optimized (routing: ecmp)",
        "switches: 12 (8 leaf, 4 spine)",
        "cables: 256 (128 NIC port to switch, 128 leaf to spine)",
        "downlinks: 128 (leaf ports to NICs), uplinks: 128 (leaf ports to spines)",
        "su0.rail7            16       16       6400     6400",
        "bisection bandwidth: 25600 Gb/s",
    ] {
        assert!(out.contains(want), "{want:?} missing from:\n{out}");
    }
    let path = |p: &str| {
        let args = ["topo", cfg, "--network", "--path", p];
        crate::support::ok(&crate::support::gdrsim(&args), p)
    };
    let on = path("n0:nic3,n2:nic3");
    assert!(
        on.contains("path (QP 0): n0/nic3 -> su0.rail3 -> n2/nic3 (1 switch, 2 cables)"),
        "{on}"
    );
    let off = path("n0:nic0,n2:nic5");
    let line = off
        .lines()
        .find(|l| l.starts_with("path"))
        .unwrap_or_default();
    assert!(
        line.starts_with("path (QP 0): n0/nic0 -> su0.rail0 -> spine")
            && line.ends_with("-> su0.rail5 -> n2/nic5 (3 switches, 4 cables)"),
        "{off}"
    );
    // A port the config does not have: exit 2, naming the option.
    let bad = crate::support::gdrsim(&["topo", cfg, "--network", "--path", "n0:nic9,n1:nic0"]);
    assert_eq!(bad.status.code(), Some(2));
    let err = crate::support::text(&bad.stderr);
    assert!(
        err.contains("--path") && err.contains("a NIC of host n0"),
        "{err}"
    );
}

/// The same on the leaf-spine study (16 one-NIC hosts, 8 a leaf, 2:1, 4 spines): 2 leaves +
/// 4 spines, 16 + 8 cables, and a bisection of leaf 0's 4 uplinks of 100 Gb/s (its 8 host
/// ports could send 800): 400 Gb/s.
#[test]
fn topo_network_prints_the_leaf_spine_bisection() {
    let out = crate::support::ok(
        &crate::support::gdrsim(&["topo", "configs/leaf-spine.toml", "--network"]),
        "topo --network",
    );
    for want in [
        "fabric: leaf-spine (routing: ecmp)",
        "switches: 6 (2 leaf, 4 spine)",
        "cables: 24 (16 NIC port to switch, 8 leaf to spine)",
        "bisection bandwidth: 400 Gb/s",
    ] {
        assert!(out.contains(want), "{want:?} missing from:\n{out}");
    }
}

/// NCCL's all-to-all with PXN (`NCCL_P2P_PXN_LEVEL` 2, `ncclTopoGetNetDev`): GPU i's send to
/// GPU j of another node leaves through nic j, relayed over NVLink by GPU j, so on a
/// rail-optimized fabric every inter-node byte stays on its rail leaf and no spine carries
/// any. By GPUDirect (PXN off) 7/8 of them change rail and cross a spine; `auto` with
/// `sim.pxn = false` does the same.
#[test]
fn pxn_keeps_an_all_to_all_off_the_spines() {
    let t = |pxn: bool| {
        format!(
            "name = \"a2a-rail\"\n[sim]\njitter = false\niterations = 1\nmin_iterations = 1\n\
             pxn = {pxn}\n[sweep]\nsizes = [\"4MiB\"]\npaths = [\"gpudirect\", \"auto\"]\n\
             ops = [\"write_imm\"]\n[output]\ncharts = []\n\
             [network]\nfabric = \"rail-optimized\"\nhosts_per_unit = 2\n\
             [[hosts]]\nname = \"n\"\ncount = 2\npreset = \"dgx-h100\"\n\
             [[scenarios]]\nname = \"a2a\"\ncollective = {{ kind = \"all_to_all\" }}\n"
        )
    };
    let spine_bytes = |cfg: &Config, path: PathKind| -> u64 {
        let s = crate::support::first_summary(cfg, path, 4 << 20);
        let bytes = |p: &str| -> u64 {
            (s.links.iter())
                .filter(|l| l.channel.contains(p))
                .map(|l| l.bytes)
                .sum()
        };
        assert!(bytes("rail") > 0, "no rail bytes: {:?}", s.links);
        bytes("spine")
    };
    let on = config::parse(&t(true), "a2a-rail.toml").unwrap_or_else(|e| panic!("{e}"));
    let off = config::parse(&t(false), "a2a-rail.toml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(spine_bytes(&on, PathKind::Auto), 0);
    // flows.csv names each relayed flow as it ran: from the receiver's rail ("n0/gpu2 via
    // nic5" to "n1/gpu5 via nic5").
    let rows = crate::support::first_summary(&on, PathKind::Auto, 4 << 20).flow_rows;
    let nic = |e: &str| e.rsplit(" via ").next().unwrap_or_default().to_string();
    let host = |e: &str| e.split('/').next().unwrap_or_default().to_string();
    let across: Vec<_> = (rows.iter())
        .filter(|r| host(&r.sender) != host(&r.receiver))
        .collect();
    assert_eq!(across.len(), 2 * 8 * 8);
    for r in across {
        assert_eq!(
            nic(&r.sender),
            nic(&r.receiver),
            "{} -> {}",
            r.sender,
            r.receiver
        );
    }
    // 2 nodes x 8 GPUs x 8 remote GPUs x 256 KiB, 7/8 of them across a spine (twice: up
    // and down), payload plus headers.
    let crossing = 2 * 8 * 7 * (256 << 10) * 2;
    for (cfg, path) in [(&on, PathKind::GpuDirect), (&off, PathKind::Auto)] {
        let b = spine_bytes(cfg, path);
        assert!(
            b >= crossing && b < crossing * 11 / 10,
            "{path:?}: {b} against {crossing}"
        );
    }
}

/// The issue's PXN oracle. Two DGX H100 nodes, one unit: GPU 2 of node a sends to GPU 5 of
/// node b. Its own NIC is nic2 (rail 2), the receiver's nic5 (rail 5): by GPUDirect from nic2
/// the route crosses a spine (4 cables, 3 switches). NCCL's PXN relays the send over NVLink
/// through GPU 5, the GPU of nic5, whose NIC is on the destination's rail: the flow leaves
/// from nic5 and turns in rail leaf 5 (2 cables, 1 switch), and runs as `pxn`.
#[test]
fn pxn_keeps_a_cross_rail_send_on_the_destination_rail() {
    let t = "name = \"pxn-rail\"\n[sim]\njitter = false\niterations = 2\nmin_iterations = 2\n\
             [sweep]\nsizes = [\"1MiB\"]\npaths = [\"pxn\"]\nops = [\"write_imm\"]\n\
             [output]\ncharts = []\n\
             [network]\nfabric = \"rail-optimized\"\nhosts_per_unit = 2\n\
             [[hosts]]\nname = \"a\"\npreset = \"dgx-h100\"\n\
             [[hosts]]\nname = \"b\"\npreset = \"dgx-h100\"\n\
             [[scenarios]]\nname = \"far\"\n\
             sender = { host = \"a\", nic = \"nic5\", gpu = \"gpu2\" }\n\
             receiver = { host = \"b\", nic = \"nic5\", gpu = \"gpu5\" }\n";
    let cfg = config::parse(t, "pxn-rail.toml").unwrap_or_else(|e| panic!("{e}"));
    let topo = scenario::topology(&cfg);
    let hops = |a, z| topo.switch_path(a, z, 0).unwrap().0;
    assert_eq!(hops((0, 5), (1, 5)), ["a/nic5", "su0.rail5", "b/nic5"]);
    let own = hops((0, 2), (1, 5));
    assert_eq!(own.len(), 5, "{own:?}");
    assert!(own[2].starts_with("spine"), "{own:?}");
    let s = crate::support::first_summary(&cfg, PathKind::Pxn, MIB);
    assert!(
        s.effective_path.is(PathKind::Pxn),
        "{:?}: {}",
        s.effective_path,
        s.reason
    );
}

//! NCCL's tuner for the ring: which protocol (LL, LL128, Simple) NCCL runs a collective of a
//! given size with, by NCCL's own cost model (NVIDIA/nccl 2.30 `src/graph/tuning.cc`,
//! `ncclTopoTuneModel` and `ncclTopoGetAlgoTime`): per protocol a latency (a base plus a
//! per-step hardware latency, the steps across nodes at the network's) and a bus bandwidth
//! (the search's rings x their speed, capped per protocol), time = latency + bytes / bandwidth,
//! the least time wins (LL before LL128 before Simple on a tie, NCCL's loop order).
//!
//! This is NCCL's estimate, used only to choose, as NCCL does; the time gdrsim reports is the
//! simulation of the chosen protocol's messages. Only the ring is modelled, so where NCCL
//! would pick its tree (small all-reduces across nodes) this is NCCL with NCCL_ALGO=Ring.
//! The search's rings and speeds are estimated from the machine
//! ([`crate::config::collective::NcclGraph`]); the constants below are NCCL's, cited per table.

use crate::config::PathKind;
use crate::config::collective::{
    Algorithm, Collective, CollectiveKind, GpuArch, NcclGraph, Protocol,
};
use crate::topology::Affinity;

/// How a collective's edges between nodes reach their NICs at a point: the swept path and
/// whether PXN is on (`[sim] pxn`). With the graph's exit class it gives NCCL's `typeInter`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Net {
    /// The swept path.
    pub path: PathKind,
    /// PXN on (`[sim] pxn`, NCCL_PXN_DISABLE unset or 0).
    pub pxn: bool,
}

impl Net {
    /// The point's path under `cfg`'s PXN setting.
    pub fn of(cfg: &crate::config::Config, path: PathKind) -> Net {
        Net {
            path,
            pxn: cfg.sim.pxn,
        }
    }
}

/// Whether NCCL leaves LL128 on by default (`ncclTopoTuneModel`): NVLink between a node's
/// GPUs (typeIntra up to NVB), and across nodes a ring's GPU-NIC path (typeInter) up to PXN on
/// Hopper and later, up to PXB before. typeInter is PXN where NCCL relays the last GPU's sends
/// through the NIC's own GPU (path `pxn`, or `auto` and `nccl_host` with PXN on, beyond PXB),
/// else the GPU's own class to the NIC (path `gpudirect` from a GPU behind the CPU: PHB or
/// beyond, LL128 off).
fn ll128_on(g: &NcclGraph, net: Net) -> bool {
    // (Without NVLink, `time_us` leaves LL128 off.)
    if g.nodes <= 1 {
        return true;
    }
    let beyond = g.exit_class > Affinity::Pxb;
    let relayed = beyond
        && match net.path {
            PathKind::Pxn => true,
            PathKind::Auto | PathKind::NcclHost => net.pxn,
            _ => false,
        };
    match g.arch {
        GpuArch::Hopper | GpuArch::Blackwell => !beyond || relayed,
        GpuArch::Volta | GpuArch::Ampere => !beyond,
    }
}

/// Protocols in NCCL's order (LL, LL128, Simple).
const ORDER: [Protocol; 3] = [Protocol::Ll, Protocol::Ll128, Protocol::Simple];

/// Ring base latencies, µs, LL / LL128 / Simple (`baseLatencies`, Ring row).
const BASE_US: [f64; 3] = [6.6, 14.0, 8.4];
/// Ring per-step hardware latencies, µs: NVLink, PCIe, network (`hwLatencies`, Ring).
const NVLINK_US: [f64; 3] = [0.6, 1.9, 3.4];
const PCI_US: [f64; 3] = [1.0, 2.5, 5.7];
const NET_US: [f64; 3] = [2.7, 4.0, 14.0];
/// The tree's network latencies, which NCCL uses for the ring with one GPU per node.
const NET_TREE_US: [f64; 3] = [5.0, 8.5, 14.0];
/// LL's bus bandwidth ceilings, GB/s, by [row][nodes 1 / 2 / more] (`llMaxBws`): rows Volta
/// (one node) or Intel (across nodes), Ampere or AMD, Hopper, Blackwell.
const LL_MAX: [[f64; 3]; 4] = [
    [39.0, 39.0, 20.4],
    [87.7, 22.5, 19.0],
    [141.0, 45.0, 35.0],
    [282.0, 90.0, 70.0],
];
/// LL128's per-ring ceilings, GB/s, by generation (`perChMaxRingLL128Bws`).
const LL128_PER_RING: [f64; 4] = [20.0, 20.0, 36.7, 40.0];

fn arch_index(a: GpuArch) -> usize {
    match a {
        GpuArch::Volta => 0,
        GpuArch::Ampere => 1,
        GpuArch::Hopper => 2,
        GpuArch::Blackwell => 3,
    }
}

fn proto_index(p: Protocol) -> usize {
    match p {
        Protocol::Ll => 0,
        Protocol::Ll128 => 1,
        Protocol::Simple | Protocol::Auto => 2,
    }
}

/// The protocol collective `c` runs at `size` bytes: its own, or NCCL's choice where `auto`.
/// An all-to-all is NCCL's p2p (Simple chunks).
pub fn choose(c: &Collective, size: u64, net: Net) -> Protocol {
    pick(c, size, net).1
}

/// The algorithm and protocol collective `c` runs at `size` bytes: its own, or NCCL's choice
/// where `auto` (NCCL's loops: Tree before Ring, LL before LL128 before Simple; the least
/// estimated time wins, the first on a tie). Only what the model simulates competes: the
/// tree for all-reduce (the other kinds run the ring, as NCCL's tuner skips its tree for
/// them), in LL, LL128 (where NCCL leaves it on) and Simple.
pub fn pick(c: &Collective, size: u64, net: Net) -> (Algorithm, Protocol) {
    if matches!(c.kind, CollectiveKind::AllToAll | CollectiveKind::SendRecv) {
        // NCCL's p2p: no tuner (its protocol is the schedule's, `collective::schedule`).
        return (Algorithm::Ring, Protocol::Simple);
    }
    let algorithms: &[Algorithm] = match (c.algorithm, c.kind) {
        (Algorithm::Tree, _) => &[Algorithm::Tree],
        (Algorithm::Auto, CollectiveKind::AllReduce) => &[Algorithm::Tree, Algorithm::Ring],
        _ => &[Algorithm::Ring],
    };
    if let ([a], p) = (algorithms, c.protocol)
        && p != Protocol::Auto
    {
        return (*a, p);
    }
    let protocols: &[Protocol] = match c.protocol {
        Protocol::Auto => &ORDER,
        ref p => std::slice::from_ref(p),
    };
    let mut best = (f64::INFINITY, algorithms[0], Protocol::Simple);
    for &a in algorithms {
        for &p in protocols {
            if p == Protocol::Ll128 && !ll128_on(&c.graph, net) && c.protocol == Protocol::Auto {
                continue;
            }
            let t = match a {
                Algorithm::Tree => tree_time_us(c, p, size),
                Algorithm::Ring | Algorithm::Auto => time_us(c, p, size),
            };
            if let Some(t) = t
                && t < best.0
            {
                best = (t, a, p);
            }
        }
    }
    if best.0.is_infinite() {
        // Nothing NCCL's model allows in the asked protocol (LL128 without NVLink): that
        // protocol as the config asks, on the ring where the algorithm is NCCL's choice.
        return (algorithms[algorithms.len() - 1], protocols[0]);
    }
    (best.1, best.2)
}

/// Tree base latencies, µs, LL / LL128 / Simple (`baseLatencies`, Tree row).
const TREE_BASE_US: [f64; 3] = [6.8, 14.0, 8.4];
/// Tree per-hop hardware latencies, µs: NVLink, PCIe (`hwLatencies`, Tree); the network's is
/// [`NET_TREE_US`].
const TREE_NVLINK_US: [f64; 3] = [0.6, 1.25, 4.0];
const TREE_PCI_US: [f64; 3] = [1.0, 1.9, 4.0];
/// The tree's bus bandwidth ceilings per channel, GB/s, by generation and nodes 1 / 2 / more
/// (`perChMaxTreeBws`, all-reduce).
const TREE_PER_CH: [[f64; 3]; 4] = [
    [26.5, 18.5, 10.0],
    [24.0, 23.6, 17.8],
    [38.7, 41.4, 36.0],
    [70.0, 42.8, 24.0],
];
/// The tree's LL128 ceilings per channel, GB/s (`perChMaxTreeLL128Bws`).
const TREE_LL128_PER_CH: [[f64; 3]; 4] = [
    [20.0, 20.0, 20.0],
    [20.0, 20.0, 20.0],
    [36.7, 36.7, 29.0],
    [55.6, 31.67, 20.0],
];
/// NCCL's `treeCorrectionFactor` (`src/graph/tuning.cc`): the tree all-reduce's bandwidth
/// times this by protocol and log2(bytes / 64), for 64 B up to 256 MiB.
const TREE_CORRECTION: [[f64; 24]; 3] = [
    [
        1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8,
        0.9, 1.0, 1.0, 1.0, 1.0, 1.0,
    ],
    [
        1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.8, 0.9,
        0.9, 0.9, 0.9, 1.0, 1.0, 1.0,
    ],
    [
        0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8,
        0.7, 0.7, 0.8, 0.9, 0.9, 0.9,
    ],
];

/// NCCL's `log2i`: the floor of log2, -1 for 0.
fn log2i(x: u64) -> i32 {
    63 - x.leading_zeros() as i32
}

/// NCCL's estimate of collective `c` at `size` bytes as its tree all-reduce in protocol `p`,
/// µs (`ncclTopoTuneModel`, `ncclTopoGetAlgoTime`): the tree's latency base + 2 ((ppn - 1)
/// intra + log2(nodes) inter), its bus bandwidth the search's channels x their speed, at most
/// 92% and the per-channel tree ceiling, LL a 3.8th of it (at most NCCL's LL ceiling), LL128
/// 120/128 of it across nodes (7/9 in one node, at most the tree's LL128 ceiling), half of it
/// as algorithm bandwidth, times NCCL's correction for the size. None for a kind other than
/// all-reduce, and for LL128 where `time_us` leaves it off. The tree's search is taken to find
/// the ring's channels at the ring's speed (an estimate: NCCL searches its BALANCED_TREE graph
/// separately, with the same channel count).
pub fn tree_time_us(c: &Collective, p: Protocol, size: u64) -> Option<f64> {
    let g: &NcclGraph = &c.graph;
    if c.kind != CollectiveKind::AllReduce || (p == Protocol::Ll128 && !g.nvlink) {
        return None;
    }
    let nodes = g.nodes.max(1);
    let ppn = f64::from(c.gpus_per_host);
    let (ai, pi) = (arch_index(g.arch), proto_index(p));
    let n_index = (nodes.min(3) - 1) as usize;
    let row = if nodes == 1 { ai } else { usize::from(g.amd) };
    let rings = f64::from(g.rings);
    let mut bus = rings * f64::from(g.ring_mbps) / 1000.0;
    bus = (bus * 0.92).min(rings * TREE_PER_CH[ai][n_index]);
    match p {
        Protocol::Ll => bus = (bus / 3.8).min(LL_MAX[row][n_index]),
        Protocol::Ll128 => {
            let eff = if nodes == 1 { 7.0 / 9.0 } else { 120.0 / 128.0 };
            bus = (bus * eff).min(rings * TREE_LL128_PER_CH[ai][n_index]);
        }
        Protocol::Simple | Protocol::Auto => {}
    }
    let mut algbw = bus * 0.5;
    let intra = if g.nvlink {
        TREE_NVLINK_US[pi]
    } else {
        TREE_PCI_US[pi]
    };
    let lat = TREE_BASE_US[pi]
        + 2.0 * ((ppn - 1.0) * intra + f64::from(log2i(u64::from(nodes))) * NET_TREE_US[pi]);
    let log_size = log2i(size >> 6);
    if (0..23).contains(&log_size) {
        algbw *= TREE_CORRECTION[pi][log_size as usize];
    }
    Some(lat + size as f64 / (1000.0 * algbw))
}

/// NCCL's estimate of collective `c` at `size` bytes in protocol `p`, µs; None where NCCL
/// leaves the protocol off (LL128 without NVLink between a node's GPUs or before Volta, as
/// `ncclTopoTuneModel` enables it by default).
pub fn time_us(c: &Collective, p: Protocol, size: u64) -> Option<f64> {
    let g: &NcclGraph = &c.graph;
    let ranks = f64::from(c.ranks());
    let nodes = g.nodes.max(1);
    let broadcast = c.kind == CollectiveKind::Broadcast;
    let steps = match c.kind {
        CollectiveKind::AllReduce => 2.0 * (ranks - 1.0),
        CollectiveKind::Broadcast => ranks,
        _ => ranks - 1.0,
    };
    if p == Protocol::Ll128 && !g.nvlink {
        return None;
    }
    let (ai, pi) = (arch_index(g.arch), proto_index(p));
    let n_index = (nodes.min(3) - 1) as usize;
    let row = if nodes == 1 { ai } else { usize::from(g.amd) };
    let ll_max = LL_MAX[row][n_index];
    let mut bus = f64::from(g.rings) * f64::from(g.ring_mbps) / 1000.0;
    match p {
        Protocol::Ll => bus = ll_max.min(bus * 0.5),
        Protocol::Ll128 => bus = (bus * 0.92).min(f64::from(g.rings) * LL128_PER_RING[ai]),
        Protocol::Simple | Protocol::Auto => {}
    }
    let algbw = bus * ranks / steps;
    let intra = if g.nvlink { NVLINK_US[pi] } else { PCI_US[pi] };
    let ppn_one = c.gpus_per_host == 1;
    let inter = if ppn_one { NET_TREE_US[pi] } else { NET_US[pi] };
    let mut lat = BASE_US[pi];
    if broadcast {
        // NCCL's broadcast ring: a latency per step at the ring's hardware (the network's
        // across nodes), Simple at the tree's, "waiting for proper chunk modeling"; its
        // channels differ by NIC or entry GPU (not `sameChannels`), so every step pays it.
        let hw = match (nodes > 1, g.nvlink, p == Protocol::Simple) {
            (true, _, false) => NET_US[pi],
            (true, _, true) => NET_TREE_US[pi],
            (false, true, false) => NVLINK_US[pi],
            (false, true, true) => TREE_NVLINK_US[pi],
            (false, false, false) => PCI_US[pi],
            (false, false, true) => TREE_PCI_US[pi],
        };
        lat += steps * hw;
    } else if nodes == 1 {
        lat += steps * intra;
    } else {
        // Every step launches a network operation: 1 µs each (2 on AMD), 3 x for Simple.
        let overhead =
            if g.amd { 2.0 } else { 1.0 } * if p == Protocol::Simple { 3.0 } else { 1.0 };
        let inter_steps = f64::from(nodes - 1)
            * if c.kind == CollectiveKind::AllReduce {
                2.0
            } else {
                1.0
            };
        lat += (steps - inter_steps) * intra.max(overhead) + inter_steps * inter;
        // The ring's plateau (`ncclTopoGetAlgoTime`).
        let per = size / (u64::from(c.channels) * u64::from(c.ranks())).max(1);
        if p == Protocol::Simple && c.kind == CollectiveKind::AllReduce && per >= 64 {
            lat *= if g.arch == GpuArch::Volta { 1.9 } else { 1.4 };
        }
    }
    Some(lat + size as f64 / (1000.0 * algbw))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::collective::Algorithm;

    fn dgx_h100(nodes: u32, kind: CollectiveKind) -> Collective {
        Collective {
            kind,
            algorithm: Algorithm::Ring,
            protocol: Protocol::Auto,
            hosts: (0..nodes as usize).collect(),
            gpus_per_host: 8,
            channels: if nodes > 1 { 16 } else { 24 },
            graph: NcclGraph {
                nodes,
                rings: if nodes > 1 { 8 } else { 6 },
                ring_mbps: if nodes > 1 { 48_000 } else { 60_000 },
                arch: GpuArch::Hopper,
                amd: false,
                nvlink: true,
                // A DGX H100 ring leaves a node from a GPU whose path to the NIC crosses the
                // CPU (PXN relays it).
                exit_class: Affinity::Sys,
            },
            tree_start: usize::MAX,
            root: 0,
            p2p: Default::default(),
            buff_bytes: crate::config::collective::DEFAULT_BUFFSIZE,
        }
    }

    const AUTO: Net = Net {
        path: PathKind::Auto,
        pxn: true,
    };

    /// Two DGX H100 (16 ranks, 8 rings at 48 GB/s, Intel): the ring latencies are LL 6.6 +
    /// 28 x 1.0 + 2 x 2.7 = 40.0 µs, LL128 14 + 28 x 1.9 + 2 x 4.0 = 75.2, Simple (8.4 + 28 x
    /// 3.4 + 2 x 14) x 1.4 = 184.24; bus bandwidths LL min(39, 192) = 39, LL128 min(353.28,
    /// 293.6), Simple 384, times 16/30 for algbw. So LL up to about 0.84 MB, LL128 up to about
    /// 72 MB, Simple above.
    #[test]
    fn two_dgx_h100_switch_from_ll_to_ll128_to_simple_where_the_model_says() {
        let c = dgx_h100(2, CollectiveKind::AllReduce);
        let t = |p, s| time_us(&c, p, s).unwrap();
        assert!((t(Protocol::Ll, 8) - 40.0).abs() < 1e-3);
        assert!((t(Protocol::Ll128, 8) - 75.2).abs() < 1e-3);
        assert!(
            (t(Protocol::Simple, 1 << 20) - (184.24 + (1u64 << 20) as f64 / 204_800.0)).abs()
                < 1e-3
        );
        assert_eq!(choose(&c, 8, AUTO), Protocol::Ll);
        assert_eq!(choose(&c, 512 << 10, AUTO), Protocol::Ll);
        assert_eq!(choose(&c, 1 << 20, AUTO), Protocol::Ll128);
        assert_eq!(choose(&c, 64 << 20, AUTO), Protocol::Ll128);
        assert_eq!(choose(&c, 128 << 20, AUTO), Protocol::Simple);
    }

    /// NCCL's broadcast ring on two DGX H100: n = 16 steps, each at the network's ring latency
    /// (LL 2.7, LL128 4.0 µs) and Simple at the tree's (14 µs, "waiting for proper chunk
    /// modeling"): LL 6.6 + 16 x 2.7 = 49.8 µs, LL128 14 + 16 x 4 = 78, Simple 8.4 + 16 x 14
    /// = 232.4; bus bandwidth as the ring's (LL 39, LL128 293.6, Simple 384 GB/s), algbw the
    /// same (16 ranks over 16 steps). So LL up to about 1.27 MB, LL128 up to about 192 MB.
    #[test]
    fn a_broadcast_pays_a_latency_per_rank_and_its_bus_bandwidth_whole() {
        let c = dgx_h100(2, CollectiveKind::Broadcast);
        let t = |p, s| time_us(&c, p, s).unwrap();
        assert!((t(Protocol::Ll, 0) - 49.8).abs() < 1e-9);
        assert!((t(Protocol::Ll128, 0) - 78.0).abs() < 1e-9);
        assert!((t(Protocol::Simple, 0) - 232.4).abs() < 1e-9);
        assert!((t(Protocol::Simple, 384_000) - 233.4).abs() < 1e-9);
        assert_eq!(choose(&c, 1 << 20, AUTO), Protocol::Ll);
        assert_eq!(choose(&c, 2 << 20, AUTO), Protocol::Ll128);
        assert_eq!(choose(&c, 128 << 20, AUTO), Protocol::Ll128);
        assert_eq!(choose(&c, 256 << 20, AUTO), Protocol::Simple);
        // One node: NVLink's ring latencies (LL 0.6) and the tree's for Simple (4.0).
        let one = dgx_h100(1, CollectiveKind::Broadcast);
        assert!((time_us(&one, Protocol::Ll, 0).unwrap() - (6.6 + 8.0 * 0.6)).abs() < 1e-9);
        let simple = time_us(&one, Protocol::Simple, 0).unwrap();
        assert!((simple - (8.4 + 8.0 * 4.0)).abs() < 1e-9);
    }

    #[test]
    fn a_fixed_protocol_or_an_all_to_all_is_not_tuned() {
        let mut c = dgx_h100(2, CollectiveKind::AllReduce);
        c.protocol = Protocol::Simple;
        assert_eq!(choose(&c, 8, AUTO), Protocol::Simple);
        let a = dgx_h100(2, CollectiveKind::AllToAll);
        assert_eq!(choose(&a, 8, AUTO), Protocol::Simple);
    }

    /// NCCL's LL128 default: on Hopper across nodes up to PXN, so on where PXN relays the far
    /// GPU's sends and off where the NIC reads that GPU through the CPU (path gpudirect, or PXN
    /// off); before Hopper only up to PXB.
    #[test]
    fn ll128_follows_nccls_path_type_rule() {
        let mut c = dgx_h100(2, CollectiveKind::AllReduce);
        let net = |path, pxn| Net { path, pxn };
        let size = 8 << 20;
        assert_eq!(choose(&c, size, AUTO), Protocol::Ll128);
        assert_eq!(choose(&c, size, net(PathKind::Pxn, false)), Protocol::Ll128);
        assert_eq!(
            choose(&c, size, net(PathKind::NcclHost, true)),
            Protocol::Ll128
        );
        assert_eq!(
            choose(&c, size, net(PathKind::GpuDirect, true)),
            Protocol::Simple
        );
        assert_eq!(
            choose(&c, size, net(PathKind::Auto, false)),
            Protocol::Simple
        );
        c.graph.exit_class = Affinity::Pxb;
        assert_eq!(
            choose(&c, size, net(PathKind::GpuDirect, true)),
            Protocol::Ll128
        );
        c.graph.arch = GpuArch::Ampere;
        assert_eq!(
            choose(&c, size, net(PathKind::GpuDirect, true)),
            Protocol::Ll128
        );
        c.graph.exit_class = Affinity::Sys;
        assert_ne!(choose(&c, size, AUTO), Protocol::Ll128);
    }

    #[test]
    fn ll128_is_off_without_nvlink() {
        let mut c = dgx_h100(1, CollectiveKind::AllGather);
        c.graph.nvlink = false;
        assert_eq!(time_us(&c, Protocol::Ll128, 1 << 20), None);
        assert_ne!(choose(&c, 1 << 20, AUTO), Protocol::Ll128);
    }

    fn auto(nodes: u32) -> Collective {
        Collective {
            algorithm: Algorithm::Auto,
            ..dgx_h100(nodes, CollectiveKind::AllReduce)
        }
    }

    /// The tree's estimates on two DGX H100 (ppn 8, one network hop up and one down, 8
    /// channels at 48 GB/s): latency LL 6.8 + 2 (7 x 0.6 + 5.0) = 25.2 µs, LL128 14 + 2 (7 x
    /// 1.25 + 8.5) = 48.5, Simple 8.4 + 2 (7 x 4.0 + 14) = 92.4; bus bandwidth min(0.92 x 384,
    /// 8 x 41.4) = 331.2, LL min(331.2 / 3.8, 39) = 39, LL128 min(331.2 x 120/128, 8 x 36.7) =
    /// 293.6, halved as algorithm bandwidth, times NCCL's correction for the size.
    #[test]
    fn the_trees_estimate_is_nccls_formula() {
        let c = auto(2);
        let t = |p, s| tree_time_us(&c, p, s).unwrap();
        // 64 B: log2(1) = 0, corrections LL 1.0, LL128 1.0, Simple 0.9.
        assert!((t(Protocol::Ll, 64) - (25.2 + 64.0 / (1000.0 * 19.5))).abs() < 1e-6);
        assert!((t(Protocol::Ll128, 64) - (48.5 + 64.0 / (1000.0 * 146.8))).abs() < 1e-6);
        let simple = 92.4 + 64.0 / (1000.0 * 165.6 * 0.9);
        assert!((t(Protocol::Simple, 64) - simple).abs() < 1e-6);
        // 1 MiB: log2(16384) = 14, LL128's correction 0.6.
        let ll128 = 48.5 + (1u64 << 20) as f64 / (1000.0 * 146.8 * 0.6);
        assert!((t(Protocol::Ll128, 1 << 20) - ll128).abs() < 1e-6);
        // Past 256 MiB no correction.
        let big = 1u64 << 30;
        assert!((t(Protocol::Simple, big) - (92.4 + big as f64 / 165_600.0)).abs() < 1e-3);
        let mut ag = auto(2);
        ag.kind = CollectiveKind::AllGather;
        assert_eq!(tree_time_us(&ag, Protocol::Simple, 64), None);
    }

    /// NCCL's choices on 2 x DGX H100 (docs/nccl-facts §2, NCCL 2.30's tuning.cc with the
    /// search's 8 channels x 48 GB/s): Tree/LL below 256 KiB, Tree/LL128 from 256 KiB to 16
    /// MiB, Ring/LL128 at 32 and 64 MiB, Ring/Simple from 128 MiB.
    #[test]
    fn auto_on_two_dgx_h100_picks_as_nccls_table() {
        let c = auto(2);
        for k in 3..=30 {
            let size = 1u64 << k;
            let want = match size {
                s if s < 256 << 10 => (Algorithm::Tree, Protocol::Ll),
                s if s < 32 << 20 => (Algorithm::Tree, Protocol::Ll128),
                s if s < 128 << 20 => (Algorithm::Ring, Protocol::Ll128),
                _ => (Algorithm::Ring, Protocol::Simple),
            };
            assert_eq!(pick(&c, size, AUTO), want, "{size} bytes");
        }
        // A fixed protocol still chooses the algorithm; a fixed algorithm the protocol.
        let mut s = auto(2);
        s.protocol = Protocol::Simple;
        assert_eq!(pick(&s, 8, AUTO), (Algorithm::Tree, Protocol::Simple));
        assert_eq!(pick(&s, 1 << 30, AUTO), (Algorithm::Ring, Protocol::Simple));
        let mut t = auto(2);
        t.algorithm = Algorithm::Tree;
        assert_eq!(pick(&t, 1 << 30, AUTO), (Algorithm::Tree, Protocol::Simple));
        assert_eq!(pick(&t, 1 << 20, AUTO), (Algorithm::Tree, Protocol::Ll128));
        // The ring alone is what it was.
        let r = dgx_h100(2, CollectiveKind::AllReduce);
        assert_eq!(pick(&r, 8, AUTO), (Algorithm::Ring, Protocol::Ll));
        // Without LL128 (path gpudirect from the far GPU): LL, then the tree's Simple.
        let net = Net {
            path: PathKind::GpuDirect,
            pxn: true,
        };
        assert_eq!(pick(&c, 1 << 20, net).1, Protocol::Ll);
        // All-gather has no tree.
        let mut ag = auto(2);
        ag.kind = CollectiveKind::AllGather;
        assert_eq!(pick(&ag, 8, AUTO).0, Algorithm::Ring);
    }

    /// 16 x DGX H100 (nodes > 2: the tree's ceilings 36.0 and 29.0 a channel, LL's 20.4; 4
    /// network hops each way): the tree keeps every size up to 1 GiB (NCCL's table: Tree/LL,
    /// Tree/LL128 to about 128 MiB, Tree/Simple to about 1 GiB, Ring/Simple above).
    #[test]
    fn auto_on_sixteen_dgx_h100_keeps_the_tree_longer() {
        let c = auto(16);
        assert_eq!(pick(&c, 8, AUTO), (Algorithm::Tree, Protocol::Ll));
        assert_eq!(pick(&c, 64 << 10, AUTO), (Algorithm::Tree, Protocol::Ll));
        assert_eq!(pick(&c, 1 << 20, AUTO), (Algorithm::Tree, Protocol::Ll128));
        assert_eq!(pick(&c, 64 << 20, AUTO), (Algorithm::Tree, Protocol::Ll128));
        assert_eq!(
            pick(&c, 512 << 20, AUTO),
            (Algorithm::Tree, Protocol::Simple)
        );
        assert_eq!(pick(&c, 8 << 30, AUTO), (Algorithm::Ring, Protocol::Simple));
    }
}

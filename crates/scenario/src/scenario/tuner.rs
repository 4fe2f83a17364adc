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
use crate::config::collective::{Collective, CollectiveKind, GpuArch, NcclGraph, Protocol};
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
    if c.kind == CollectiveKind::AllToAll {
        return Protocol::Simple;
    }
    if c.protocol != Protocol::Auto {
        return c.protocol;
    }
    let mut best = (f64::INFINITY, Protocol::Simple);
    for p in ORDER {
        if p == Protocol::Ll128 && !ll128_on(&c.graph, net) {
            continue;
        }
        if let Some(t) = time_us(c, p, size)
            && t < best.0
        {
            best = (t, p);
        }
    }
    best.1
}

/// NCCL's estimate of collective `c` at `size` bytes in protocol `p`, µs; None where NCCL
/// leaves the protocol off (LL128 without NVLink between a node's GPUs or before Volta, as
/// `ncclTopoTuneModel` enables it by default).
pub fn time_us(c: &Collective, p: Protocol, size: u64) -> Option<f64> {
    let g: &NcclGraph = &c.graph;
    let ranks = f64::from(c.ranks());
    let nodes = g.nodes.max(1);
    let steps = match c.kind {
        CollectiveKind::AllReduce => 2.0 * (ranks - 1.0),
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
    if nodes == 1 {
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
}

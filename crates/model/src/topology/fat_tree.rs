//! The fat-tree generator: a three-tier Clos (leaf, spine, core) as data centres and the larger
//! DGX SuperPOD builds lay it out. Hosts fill leaves, leaves are grouped into pods, each pod
//! has its own spines, and every pod's spines are cabled to the core switches.
//!
//! Hosts fill leaves in config order, `hosts_per_leaf` to a leaf, every NIC port of a host on
//! its leaf (as the leaf-spine fabric's); the leaves fill `pods` pods in order, `leaves /
//! pods` to a pod (the config check refuses leaves that do not divide). Leaf `l` is named
//! `pod{p}.leaf{i}` (`i` its rank in pod `p`), pod `p`'s spine `j` (of `spines_per_pod`) is
//! spine `p x spines_per_pod + j`, named `pod{p}.spine{j}`, and the cores `core{c}`.
//!
//! Cabling: a leaf with `D` host ports has `uplinks_for(D, oversubscription)` uplinks to its
//! pod's spines in turn (uplink `k` to pod spine `k mod spines_per_pod`, as the leaf-spine
//! fabric's), and a spine with `D` cables from its leaves has `uplinks_for(D,
//! core_oversubscription)` uplinks to the cores: pod spine `j`'s uplink `k` to core `(j x
//! ceil(cores / spines_per_pod) + k) mod cores`. So the pod spines of one rank `j` take one
//! block of cores from every pod (the pods are joined whatever their sizes: spine `j`'s first
//! uplink always reaches core `j x ceil(cores / spines_per_pod)`), and with `cores =
//! spines_per_pod x U` (U a spine's uplinks) each core takes one cable from one spine of every
//! pod: the classic three-tier Clos. A spine with more uplinks than cores wraps around them,
//! with parallel cables (`#0`, `#1`). Each direction of each cable is one channel shared by
//! every flow routed over it; cables to the cores run at `spine_port_gbps` as the leaves' do.
//!
//! Routing ([`LeafSpine::spine_hops`]): same leaf, the leaf turns it (one switch, two cables);
//! same pod, one pod spine (three switches, four cables); other pods, a core (leaf, spine,
//! core, spine, leaf: five switches, six cables). ECMP hashes at every switch with its hop
//! number among its equal-cost next hops; adaptive routing takes the least-loaded whole path.

use super::leaf_spine::{self, LeafSpine};
use super::machine::Builder;
use super::network::Port;
use super::spec::{HostSpec, NetworkSpec};

/// The core that pod spine `j`'s uplink `k` reaches (of `cores`), with `per_pod` spines a pod:
/// spine `j`'s block of `ceil(cores / per_pod)` cores from its first, then on around them.
pub fn core_of(j: usize, k: usize, per_pod: usize, cores: usize) -> usize {
    let cores = cores.max(1);
    (j * cores.div_ceil(per_pod.max(1)) + k) % cores
}

/// Cables from leaf `leaf`'s `uplinks` uplinks to its pod's spine `j` (uplink `k` to spine
/// `k mod per_pod`).
pub fn cables_to_spine(uplinks: usize, j: usize, per_pod: usize) -> usize {
    let per_pod = per_pod.max(1);
    uplinks / per_pod + usize::from(j < uplinks % per_pod)
}

/// Instantiates the fat tree of `hosts` (see the module's documentation), appending the ports
/// to `ports`.
pub(super) fn build(
    b: &mut Builder,
    hosts: &[HostSpec],
    spec: &NetworkSpec,
    ports: &mut Vec<Port>,
    first_port: &mut Vec<usize>,
) -> LeafSpine {
    let ft = &spec.fat_tree;
    let per_leaf = spec.leaf_spine.hosts_per_leaf.max(1) as usize;
    let leaves = hosts.len().div_ceil(per_leaf);
    let pods = (ft.pods.max(1) as usize).min(leaves.max(1));
    let per_pod_leaves = leaves.div_ceil(pods).max(1);
    let per_pod = ft.spines_per_pod.max(1) as usize;
    let layout = leaf_spine::Layout {
        leaves,
        spines: pods * per_pod,
        group_spines: per_pod,
        group_of: &|leaf| leaf / per_pod_leaves,
        spine_name: &|s| format!("pod{}.spine{}", s / per_pod, s % per_pod),
        leaf_of: &|h, _| h / per_leaf,
        leaf_name: &|l| format!("pod{}.leaf{}", l / per_pod_leaves, l % per_pod_leaves),
    };
    let mut net = leaf_spine::two_tier(b, hosts, spec, &layout, ports, first_port);
    net.pods = pods;
    net.cores = ft.cores.max(1) as usize;
    let core_names: Vec<String> = (0..net.cores).map(|c| format!("core{c}")).collect();
    let mut down = vec![0usize; net.spines];
    for c in net.uplinks.iter().flatten() {
        down[c.to] += 1;
    }
    let cable = spec.cable_m * spec.propagation_per_m;
    let hop = spec.switch_latency + cable;
    let nics = || hosts.iter().flat_map(|h| &h.machine.nics);
    let rate = (spec.leaf_spine.spine_port)
        .unwrap_or_else(|| nics().map(|n| n.wire_rate).max().unwrap_or_default());
    let overhead = nics().map(|n| n.packet_overhead).max().unwrap_or(0);
    let cores = net.cores;
    for (s, &d) in down.iter().enumerate() {
        let u = leaf_spine::uplinks_for(d, ft.core_oversubscription);
        let cables = leaf_spine::cable_up(
            b,
            &net.spine_names[s],
            &core_names,
            u,
            &|k| core_of(s % per_pod, k, per_pod, cores),
            (rate, hop, [0, 0, 0, overhead, 0]),
        );
        net.core_uplinks.push(cables);
    }
    net
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Classic sizing: 4 spines a pod with 2 uplinks each over 8 cores: spine j reaches cores
    /// 2j and 2j + 1, so every core takes one cable from one spine of a pod, and the spines of
    /// one rank in every pod reach the same cores.
    #[test]
    fn pod_spines_spread_over_the_cores() {
        let mut per_core = [0; 8];
        for j in 0..4 {
            let cores: Vec<usize> = (0..2).map(|k| core_of(j, k, 4, 8)).collect();
            assert_eq!(cores, [2 * j, 2 * j + 1]);
            for c in cores {
                per_core[c] += 1;
            }
        }
        assert_eq!(per_core, [1; 8]);
        // More uplinks than cores: around them again, parallel cables, evenly.
        let cores: Vec<usize> = (0..4).map(|k| core_of(1, k, 2, 2)).collect();
        assert_eq!(cores, [1, 0, 1, 0]);
        // 16 cores under 8 spines of 32 uplinks: each spine reaches every core twice.
        let mut per_core = [0; 16];
        for k in 0..32 {
            per_core[core_of(5, k, 8, 16)] += 1;
        }
        assert_eq!(per_core, [2; 16]);
        assert_eq!(core_of(5, 0, 8, 16), 10);
    }

    /// A leaf's 5 uplinks over 2 spines: 3 to spine 0, 2 to spine 1.
    #[test]
    fn a_leafs_uplinks_go_to_its_pods_spines_in_turn() {
        assert_eq!(cables_to_spine(5, 0, 2), 3);
        assert_eq!(cables_to_spine(5, 1, 2), 2);
        assert_eq!(cables_to_spine(4, 3, 4), 1);
    }
}

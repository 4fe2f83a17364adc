//! The rail-optimized generator: hosts grouped into scalable units, NIC `i` of every host of a
//! unit on the unit's rail leaf `i`, and every rail leaf cabled to spines shared by all units
//! (NVIDIA's DGX SuperPOD compute fabric: 32 DGX H100 a unit, 8 rails, a spine group above).
//!
//! Hosts fill units in config order, `hosts_per_unit` to a unit; unit `u`'s rail leaf `r` is
//! leaf `u x rails + r` (named `su{u}.rail{r}`), where `rails` is the NIC count of the hosts
//! (the config check refuses hosts with differing counts). The spines, `units x
//! spines_per_unit`, and everything above the leaves is the leaf-spine fabric's: a leaf's
//! uplinks (`oversubscription`), cabled to the spines in turn, each direction of each cable
//! one shared channel, and the same ECMP or adaptive choice among equal-cost paths
//! ([`super::leaf_spine::two_tier`], [`LeafSpine`]).
//!
//! So a flow between NICs of one rail in one unit turns in its rail leaf (two cables, one
//! switch, the latency of `switch_hops = 1`); any other flow (another rail, or another unit)
//! crosses a spine (four cables, three switches). NCCL keeps traffic on its rail (its rings
//! pair NIC `i` with NIC `i`, and PXN relays a send through the GPU whose NIC is on the
//! destination's rail) precisely so that it turns in the leaf.

use super::leaf_spine::{self, Layout, LeafSpine};
use super::machine::Builder;
use super::network::Port;
use super::spec::{HostSpec, NetworkSpec};

/// Rails of a fabric over `hosts`: the most NICs of any host (every host has as many once the
/// config is checked; the most keeps every leaf index in range whatever the hosts).
pub fn rails(hosts: &[HostSpec]) -> usize {
    hosts
        .iter()
        .map(|h| h.machine.nics.len())
        .max()
        .unwrap_or(0)
        .max(1)
}

/// The rail leaf of NIC `nic` of host `host`: unit `host / per_unit`'s leaf for rail `nic`.
pub fn leaf_of(per_unit: usize, rails: usize, host: usize, nic: usize) -> usize {
    (host / per_unit.max(1)) * rails + nic
}

/// The name of leaf `leaf` (unit and rail) in channel names.
pub fn leaf_name(rails: usize, leaf: usize) -> String {
    let rails = rails.max(1);
    format!("su{}.rail{}", leaf / rails, leaf % rails)
}

/// Instantiates the rail-optimized fabric of `hosts` (see the module's documentation),
/// appending the ports to `ports`.
pub(super) fn build(
    b: &mut Builder,
    hosts: &[HostSpec],
    spec: &NetworkSpec,
    ports: &mut Vec<Port>,
    first_port: &mut Vec<usize>,
) -> LeafSpine {
    let per_unit = spec.rail.hosts_per_unit.max(1) as usize;
    let rails = rails(hosts);
    let units = hosts.len().div_ceil(per_unit).max(1);
    let spines = units.saturating_mul(spec.rail.spines_per_unit.max(1) as usize);
    let layout = Layout {
        leaves: units * rails,
        spines,
        group_spines: spines,
        group_of: &|_| 0,
        spine_name: &leaf_spine::spine_name,
        leaf_of: &|h, n| leaf_of(per_unit, rails, h, n),
        leaf_name: &|leaf| leaf_name(rails, leaf),
    };
    leaf_spine::two_tier(b, hosts, spec, &layout, ports, first_port)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Units of 4 hosts with 8 rails: host 5's NIC 3 is on unit 1's rail 3, leaf 11; every
    /// NIC of a unit's hosts with one index shares a leaf, and no two units share one.
    #[test]
    fn nic_i_of_every_host_of_a_unit_shares_rail_leaf_i() {
        assert_eq!(leaf_of(4, 8, 5, 3), 11);
        assert_eq!(leaf_name(8, 11), "su1.rail3");
        for nic in 0..8 {
            let leaves: Vec<usize> = (0..4).map(|h| leaf_of(4, 8, h, nic)).collect();
            assert_eq!(leaves, [nic; 4]);
            assert_eq!(leaf_of(4, 8, 4, nic), 8 + nic);
        }
        let all: std::collections::BTreeSet<usize> = (0..8)
            .flat_map(|h| (0..8).map(move |n| leaf_of(4, 8, h, n)))
            .collect();
        assert_eq!(all, (0..16).collect());
    }
}

//! The network as `gdrsim topo --network` prints it: switches per tier, cables, each leaf's
//! downlinks (host ports) and uplinks (cables to the spines), the bisection bandwidth, and the
//! switches a flow crosses.

use super::spec::Fabric;
use super::{ChannelId, Topology};

/// One leaf of a two-tier fabric: its name, host ports and cables to the spines, and their
/// capacities in bits per second.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeafView {
    /// Its name in channel names (`leaf0`, `su1.rail3`).
    pub name: String,
    /// Host ports (NIC ports cabled to it).
    pub downlinks: usize,
    /// Cables to the spines.
    pub uplinks: usize,
    /// Sum of its host ports' rates, bits/s.
    pub down_bps: u128,
    /// Sum of its cables' rates (one direction), bits/s.
    pub up_bps: u128,
}

/// The network in numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FabricView {
    /// The layout.
    pub fabric: Fabric,
    /// Switches per tier, lowest first: ("leaf", n), ("spine", m), a fat tree's ("core", c);
    /// the single-switch fabric's
    /// `switch_hops` switches as one tier ("switch", hops) per path, none back to back.
    pub tiers: Vec<(&'static str, usize)>,
    /// NIC ports, each with its cable into the first switch (or its peer, back to back).
    pub ports: usize,
    /// Cables between NIC ports and switches.
    pub host_cables: usize,
    /// Cables between leaves and spines.
    pub spine_cables: usize,
    /// Cables between spines and cores (a fat tree's; 0 otherwise).
    pub core_cables: usize,
    /// Pods (a fat tree's; 1 otherwise).
    pub pods: usize,
    /// Per leaf (two-tier fabrics only).
    pub leaves: Vec<LeafView>,
    /// Bandwidth across the network's bisection, one direction, bits/s (see
    /// [`Topology::fabric_view`]).
    pub bisection_bps: u128,
}

impl Topology {
    /// The network in numbers. The bisection: for a two-tier fabric the leaves are cut into
    /// two halves in order (the first `leaves / 2`, so that with several units or several
    /// leaves of hosts the cut falls between whole units or racks), and the bandwidth from
    /// one half to the other is the lesser of the two halves' `min(host ports, uplinks)`
    /// capacity (traffic from a half leaves through its leaves' uplinks and cannot exceed
    /// what its hosts send); with one leaf, nothing crosses a spine and the bisection is half
    /// its host ports. A fat tree of several pods is cut between whole pods (the first
    /// `pods / 2`), and each half is also bounded by its spines' cables to the cores. For the
    /// single switch, non-blocking: half the ports' rates.
    pub fn fabric_view(&self) -> FabricView {
        let net = &self.network;
        let rate = |c: ChannelId| u128::from(self.channels[c.index()].rate.bps());
        // Every port's cable out: into its switch, or (back to back) to its peer.
        let all_ports: u128 = (net.ports.iter().filter_map(|p| p.uplink.map(rate)))
            .chain(net.cables.iter().map(|c| rate(c.2)))
            .sum();
        let Some(ls) = &net.leaf_spine else {
            let hops = self.network_spec.switch_hops as usize;
            return FabricView {
                fabric: self.network_spec.fabric,
                tiers: if hops > 0 {
                    vec![("switch", hops)]
                } else {
                    Vec::new()
                },
                ports: net.ports.len(),
                host_cables: if hops > 0 {
                    net.ports.len()
                } else {
                    net.cables.len() / 2
                },
                spine_cables: 0,
                core_cables: 0,
                pods: 1,
                leaves: Vec::new(),
                bisection_bps: all_ports / 2,
            };
        };
        let mut leaves: Vec<LeafView> = (ls.leaf_names.iter().zip(&ls.uplinks))
            .map(|(name, ups)| LeafView {
                name: name.clone(),
                downlinks: 0,
                uplinks: ups.len(),
                down_bps: 0,
                up_bps: ups.iter().map(|c| rate(c.up)).sum(),
            })
            .collect();
        for (p, port) in net.ports.iter().enumerate() {
            let l = &mut leaves[ls.leaf_of[p]];
            l.downlinks += 1;
            l.down_bps += port.uplink.map(rate).unwrap_or(0);
        }
        let half = leaves.len() / 2;
        let side = |ls: &[LeafView]| -> u128 {
            let down: u128 = ls.iter().map(|l| l.down_bps).sum();
            let up: u128 = ls.iter().map(|l| l.up_bps).sum();
            down.min(up)
        };
        let core_bps = |spines: std::ops::Range<usize>| -> u128 {
            (ls.core_uplinks[spines].iter().flatten())
                .map(|c| rate(c.up))
                .sum()
        };
        let bisection_bps = if ls.pods > 1 {
            // Whole pods: the first pods / 2 against the rest, each side also bounded by its
            // spines' cables to the cores.
            let (per_pod, spines) = (leaves.len() / ls.pods, ls.spines / ls.pods);
            let cut = ls.pods / 2;
            let (a, b) = leaves.split_at(cut * per_pod);
            let core_a = core_bps(0..cut * spines);
            let core_b = core_bps(cut * spines..ls.spines);
            side(a).min(core_a).min(side(b).min(core_b))
        } else if half == 0 {
            leaves.first().map_or(0, |l| l.down_bps / 2)
        } else {
            side(&leaves[..half]).min(side(&leaves[half..]))
        };
        let mut tiers = vec![("leaf", leaves.len()), ("spine", ls.spines)];
        if ls.cores > 0 {
            tiers.push(("core", ls.cores));
        }
        FabricView {
            fabric: self.network_spec.fabric,
            tiers,
            ports: net.ports.len(),
            host_cables: net.ports.len(),
            spine_cables: leaves.iter().map(|l| l.uplinks).sum(),
            core_cables: ls.core_uplinks.iter().map(Vec::len).sum(),
            pods: ls.pods,
            leaves,
            bisection_bps,
        }
    }

    /// The nodes a packet of queue pair `qp` crosses from NIC `a` of host `ha` to NIC `z` of
    /// host `hz`: the two ports' names and the switches between them, in order (read from
    /// the route's channel names, `from>to`), and the route's channels' names; None where no
    /// cable or switch joins them.
    pub fn switch_path(
        &self,
        a: (usize, usize),
        z: (usize, usize),
        qp: u32,
    ) -> Option<(Vec<String>, Vec<String>)> {
        let route = self.wire_route(a, z, qp)?;
        let names: Vec<String> = (route.iter())
            .map(|&c| self.channels[c.index()].name.clone())
            .collect();
        let net = &self.network;
        let port = |(h, n): (usize, usize)| net.ports[net.port_index(h, n)].name.clone();
        let mut nodes = vec![port(a)];
        for n in &names[..names.len().saturating_sub(1)] {
            // `x>switch` (a cable), `x>switch2 (from port)` (a core hop), `x>spine1#0` (one
            // of parallel cables): the switch is after '>', before any tag.
            let to = n.rsplit_once('>').map_or(n.as_str(), |(_, t)| t);
            let to = to.split([' ', '#']).next().unwrap_or(to);
            nodes.push(to.to_string());
        }
        nodes.push(port(z));
        Some((nodes, names))
    }
}

/// Bits per second as Gb/s with up to three decimals, exactly.
pub fn gbps(bps: u128) -> String {
    let (whole, frac) = (bps / 1_000_000_000, bps % 1_000_000_000);
    if frac == 0 {
        format!("{whole}")
    } else {
        let f = format!("{:09}", frac);
        format!("{whole}.{}", f[..3].trim_end_matches('0'))
            .trim_end_matches('.')
            .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gbps_prints_exact_decimals() {
        assert_eq!(gbps(400_000_000_000), "400");
        assert_eq!(gbps(1_600_000_000_000), "1600");
        assert_eq!(gbps(12_500_000_000), "12.5");
        assert_eq!(gbps(100_000_000), "0.1");
        assert_eq!(gbps(1), "0");
    }
}

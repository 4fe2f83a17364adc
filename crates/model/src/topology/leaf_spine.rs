//! The leaf-spine generator: hosts on leaf switches, leaves cabled to spines, and the choice of
//! a path among the equal-cost ones through the spines.
//!
//! Hosts fill leaves in config order, `hosts_per_leaf` to a leaf, every NIC port of a host on
//! its leaf. A leaf with `D` host ports has `U = D x den / num` uplinks for an
//! oversubscription of `num:den`, cabled to the spines in turn (uplink `k` to spine
//! `k mod spines`), so that with more uplinks than spines a leaf has several parallel cables
//! to one spine. Each direction of each leaf-spine cable is one channel shared by every flow
//! routed over it: this is where flows from different ports meet in the network, and where an
//! oversubscribed leaf runs out of bandwidth. Same-leaf traffic turns inside its leaf.
//!
//! Latency: a host's cable into its leaf (the wire), then per switch crossed its cut-through
//! latency plus the next cable: same leaf, one switch (as `switch_hops = 1`); across the
//! spines, three (as `switch_hops = 3`).

use std::collections::BTreeMap;

use super::machine::Builder;
use super::network::Port;
use super::spec::{HostSpec, NetworkSpec, Routing};
use super::*;

/// One leaf-spine cable: its spine and the channel of each direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cable {
    /// The spine it reaches.
    pub spine: usize,
    /// Leaf to spine.
    pub up: ChannelId,
    /// Spine to leaf.
    pub down: ChannelId,
}

/// A built leaf-spine fabric: which leaf each port is on, every leaf's uplink cables, and the
/// path adaptive routing gave each flow.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LeafSpine {
    /// Per port (the network's port order), its leaf.
    pub leaf_of: Vec<usize>,
    /// Per leaf, its cables to the spines, uplink by uplink.
    pub uplinks: Vec<Vec<Cable>>,
    /// Spine switches.
    pub spines: usize,
    /// Per leaf, its name in channel names.
    pub leaf_names: Vec<String>,
    /// How flows pick among equal-cost paths.
    pub routing: Routing,
    /// Adaptive routing's choice per (source port, destination port, QP): (uplink index on
    /// the source leaf, cable index on the destination leaf).
    pub assigned: BTreeMap<(usize, usize, u32), (usize, usize)>,
}

/// The ECMP hash: FNV-1a (64-bit) over the little-endian bytes of the source port,
/// destination port, QP number and `hop` (which switch hashes: 0 the source leaf, 1 the
/// spine), each as a u64, then MurmurHash3's 64-bit finalizer (fmix64). The finalizer is
/// needed because an index is the hash modulo a small count and FNV's low bits depend only
/// on its input's low bits: without it, flows (i -> 8 + i, QP i) all hashed onto one spine.
/// Any fixed hash would do; this one is documented, seedless and the same on every platform,
/// so a flow's path is reproducible, and each switch hashing with its own `hop` keeps their
/// choices independent (as switches seed their hashes differently).
pub fn ecmp_hash(from: usize, to: usize, qp: u32, hop: u32) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for v in [from as u64, to as u64, u64::from(qp), u64::from(hop)] {
        for b in v.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// Uplinks of a leaf with `downlinks` host ports under oversubscription `num:den` (at least
/// one: the config refuses a ratio that leaves none, and the generator never builds a leaf
/// that cannot reach the spines).
pub fn uplinks_for(downlinks: usize, (num, den): (u32, u32)) -> usize {
    (downlinks.saturating_mul(den as usize) / (num.max(1) as usize)).max(1)
}

/// Where a two-tier generator puts the ports and how it names its leaves: what the
/// leaf-spine and rail-optimized fabrics differ in. The cabling, the channels and the routing
/// are the same for both ([`two_tier`], [`LeafSpine`]).
pub(super) struct Layout<'a> {
    /// Leaf switches.
    pub leaves: usize,
    /// Spine switches.
    pub spines: usize,
    /// The leaf of NIC `nic` of host `host`: (host, nic) -> leaf, below `leaves`.
    pub leaf_of: &'a dyn Fn(usize, usize) -> usize,
    /// A leaf's name in channel names (`leaf3`, `su1.rail3`).
    pub leaf_name: &'a dyn Fn(usize) -> String,
}

/// Instantiates every port's cable into its leaf and its leaf's port back, and every leaf's
/// uplink cables, appending the ports to `ports` (adaptive routing's placement comes after,
/// from [`LeafSpine::place_adaptively`]).
pub(super) fn build(
    b: &mut Builder,
    hosts: &[HostSpec],
    spec: &NetworkSpec,
    ports: &mut Vec<Port>,
    first_port: &mut Vec<usize>,
) -> LeafSpine {
    let per_leaf = spec.leaf_spine.hosts_per_leaf.max(1) as usize;
    let layout = Layout {
        leaves: hosts.len().div_ceil(per_leaf),
        spines: spec.leaf_spine.spines.max(1) as usize,
        leaf_of: &|h, _| h / per_leaf,
        leaf_name: &|leaf| format!("leaf{leaf}"),
    };
    two_tier(b, hosts, spec, &layout, ports, first_port)
}

/// The two-tier fabric of `layout`: every port's cable into its leaf and the leaf's port back
/// (host by host, NIC by NIC), then leaf by leaf its `uplinks_for` cables to the spines in
/// turn.
pub(super) fn two_tier(
    b: &mut Builder,
    hosts: &[HostSpec],
    spec: &NetworkSpec,
    layout: &Layout,
    ports: &mut Vec<Port>,
    first_port: &mut Vec<usize>,
) -> LeafSpine {
    let ls = &spec.leaf_spine;
    let cable = spec.cable_m * spec.propagation_per_m;
    let hop = spec.switch_latency + cable;
    let mut net = LeafSpine {
        spines: layout.spines.max(1),
        routing: spec.routing,
        leaf_names: (0..layout.leaves).map(layout.leaf_name).collect(),
        ..LeafSpine::default()
    };
    let nics = || hosts.iter().flat_map(|h| &h.machine.nics);
    let fastest = nics().map(|n| n.wire_rate).max().unwrap_or_default();
    let overhead = nics().map(|n| n.packet_overhead).max().unwrap_or(0);
    let ovh = [0, 0, 0, overhead, 0];
    let mut downlinks = vec![0usize; layout.leaves];
    for (h, host) in hosts.iter().enumerate() {
        first_port.push(ports.len());
        for (n, nic) in host.machine.nics.iter().enumerate() {
            let leaf = (layout.leaf_of)(h, n);
            let leaf_name = &net.leaf_names[leaf];
            let name = format!("{}/{}", host.name, nic.name);
            let pkt = [0, 0, 0, nic.packet_overhead, 0];
            let up = b.add(
                format!("wire:{name}>{leaf_name}"),
                ChannelKind::Wire,
                nic.wire_rate,
                cable,
                pkt,
                None,
            );
            let down = b.add(
                format!("{leaf_name}>{name}"),
                ChannelKind::NetworkSwitch,
                nic.wire_rate,
                hop,
                pkt,
                None,
            );
            ports.push(Port {
                host: h,
                nic: n,
                name,
                uplink: Some(up),
                core: Vec::new(),
                downlink: Some(down),
            });
            net.leaf_of.push(leaf);
            downlinks[leaf] += 1;
        }
    }
    let rate = ls.spine_port.unwrap_or(fastest);
    for (leaf, &d) in downlinks.iter().enumerate() {
        let leaf_name = &net.leaf_names[leaf];
        let u = uplinks_for(d, ls.oversubscription);
        let parallel = u.div_ceil(net.spines);
        let cables = (0..u)
            .map(|k| {
                let spine = k % net.spines;
                let tag = if parallel > 1 {
                    format!("#{}", k / net.spines)
                } else {
                    String::new()
                };
                Cable {
                    spine,
                    up: b.add(
                        format!("{leaf_name}>spine{spine}{tag}"),
                        ChannelKind::NetworkSwitch,
                        rate,
                        hop,
                        ovh,
                        None,
                    ),
                    down: b.add(
                        format!("spine{spine}>{leaf_name}{tag}"),
                        ChannelKind::NetworkSwitch,
                        rate,
                        hop,
                        ovh,
                        None,
                    ),
                }
            })
            .collect();
        net.uplinks.push(cables);
    }
    net
}

impl LeafSpine {
    /// The equal-cost choices from leaf `a` to leaf `z`: per uplink of `a` whose spine reaches
    /// `z`, the cables of `z` to that spine (as indices into each leaf's uplinks).
    fn choices(&self, a: usize, z: usize) -> Vec<(usize, Vec<usize>)> {
        self.uplinks[a]
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let downs: Vec<usize> = (self.uplinks[z].iter().enumerate())
                    .filter(|(_, d)| d.spine == c.spine)
                    .map(|(j, _)| j)
                    .collect();
                (!downs.is_empty()).then_some((i, downs))
            })
            .collect()
    }

    /// Adaptive routing at route-build time: every distinct (source, destination, QP) of the
    /// study's flows, in order, takes the equal-cost (uplink, downlink) pair whose busier cable
    /// carries the fewest flows placed so far (then the fewer in sum, then the first). Flows
    /// of every scenario are counted together: an approximation of a switch that steers each
    /// packet to its least-loaded port. `flows` are (source port, destination port, QP).
    pub(super) fn place_adaptively(&mut self, flows: &[(usize, usize, u32)]) {
        let mut load: BTreeMap<ChannelId, u32> = BTreeMap::new();
        for &key in flows {
            let (a, z) = (self.leaf_of[key.0], self.leaf_of[key.1]);
            if a == z || self.assigned.contains_key(&key) {
                continue;
            }
            let mut best: Option<((u32, u32), (usize, usize))> = None;
            for (i, downs) in self.choices(a, z) {
                for j in downs {
                    let (u, d) = (self.uplinks[a][i].up, self.uplinks[z][j].down);
                    let (lu, ld) = (load.get(&u).copied(), load.get(&d).copied());
                    let (lu, ld) = (lu.unwrap_or(0), ld.unwrap_or(0));
                    let cost = (lu.max(ld), lu + ld);
                    if best.is_none_or(|b| cost < b.0) {
                        best = Some((cost, (i, j)));
                    }
                }
            }
            if let Some((_, (i, j))) = best {
                *load.entry(self.uplinks[a][i].up).or_default() += 1;
                *load.entry(self.uplinks[z][j].down).or_default() += 1;
                self.assigned.insert(key, (i, j));
            }
        }
    }

    /// The leaf-spine channels from port `from` to port `to` on a different leaf for queue
    /// pair `qp`: the chosen uplink and downlink cables (None where no spine joins the
    /// leaves). ECMP: the source leaf takes uplink `ecmp_hash(.., 0) mod (its uplinks that
    /// reach the destination leaf)`, the spine the cable down `ecmp_hash(.., 1) mod (its
    /// cables to the destination leaf)`.
    pub fn spine_hops(&self, from: usize, to: usize, qp: u32) -> Option<[ChannelId; 2]> {
        let (a, z) = (self.leaf_of[from], self.leaf_of[to]);
        let (i, j) = match self.assigned.get(&(from, to, qp)) {
            Some(&ij) => ij,
            None => {
                let choices = self.choices(a, z);
                let pick = |hop: u32, n: usize| {
                    (ecmp_hash(from, to, qp, hop) % (n.max(1) as u64)) as usize
                };
                let (i, downs) = choices.get(pick(0, choices.len()))?;
                (*i, downs[pick(1, downs.len())])
            }
        };
        Some([self.uplinks[a][i].up, self.uplinks[z][j].down])
    }

    /// Leaves of the fabric.
    pub fn leaves(&self) -> usize {
        self.uplinks.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2:1 halves the host ports, 3:2 takes two thirds, 1:1 matches them; a leaf always keeps
    /// one uplink (the config refuses ratios that would leave none).
    #[test]
    fn uplinks_follow_the_oversubscription() {
        assert_eq!(uplinks_for(8, (2, 1)), 4);
        assert_eq!(uplinks_for(6, (3, 2)), 4);
        assert_eq!(uplinks_for(8, (1, 1)), 8);
        assert_eq!(uplinks_for(1, (2, 1)), 1);
        assert_eq!(uplinks_for(8, (0, 1)), 8);
    }

    /// FNV-1a's offset basis and prime, fixed: the hash of a flow never changes.
    #[test]
    fn the_ecmp_hash_is_fixed_and_depends_on_every_field() {
        let h = ecmp_hash(0, 1, 0, 0);
        assert_eq!(h, ecmp_hash(0, 1, 0, 0));
        assert_ne!(h, ecmp_hash(1, 0, 0, 0));
        assert_ne!(h, ecmp_hash(0, 1, 1, 0));
        assert_ne!(h, ecmp_hash(0, 2, 0, 0));
        assert_ne!(h, ecmp_hash(0, 1, 0, 1));
    }

    /// Adaptive placement: four flows between two leaves with two uplinks each go two to
    /// each spine; the same key placed again keeps its first choice.
    #[test]
    fn adaptive_placement_balances_the_cables() {
        let cable = |spine, base: u32| Cable {
            spine,
            up: ChannelId(base),
            down: ChannelId(base + 1),
        };
        let mut ls = LeafSpine {
            leaf_of: vec![0, 0, 1, 1],
            uplinks: vec![
                vec![cable(0, 0), cable(1, 2)],
                vec![cable(0, 4), cable(1, 6)],
            ],
            spines: 2,
            leaf_names: vec!["leaf0".into(), "leaf1".into()],
            routing: Routing::Adaptive,
            assigned: BTreeMap::new(),
        };
        ls.place_adaptively(&[(0, 2, 0), (1, 3, 1), (0, 3, 2), (1, 2, 3), (0, 2, 0)]);
        let mut per_spine = [0; 2];
        for &(i, j) in ls.assigned.values() {
            assert_eq!(ls.uplinks[0][i].spine, ls.uplinks[1][j].spine);
            per_spine[ls.uplinks[0][i].spine] += 1;
        }
        assert_eq!(ls.assigned.len(), 4);
        assert_eq!(per_spine, [2, 2]);
        assert_eq!(ls.spine_hops(0, 2, 0), Some([ChannelId(0), ChannelId(5)]));
    }
}

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

use std::collections::{BTreeMap, BTreeSet};

use super::machine::Builder;
use super::network::Port;
use super::spec::{HostSpec, NetworkSpec, Routing};
use super::*;

/// One cable up a tier (leaf to spine, or spine to core): the switch it reaches and the
/// channel of each direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cable {
    /// The switch it reaches in the tier above (a spine from a leaf, a core from a spine).
    pub to: usize,
    /// Up the tree (leaf to spine, spine to core).
    pub up: ChannelId,
    /// Down the tree.
    pub down: ChannelId,
}

/// A built tree of switches (leaf-spine, rail-optimized, or the fat-tree's three tiers):
/// which leaf each port is on, every leaf's cables up to the spines, every spine's up to the
/// cores (none with two tiers), and the path adaptive routing gave each flow.
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
    /// Per spine, its name in channel names (`spine3`, `pod1.spine0`).
    pub spine_names: Vec<String>,
    /// Per spine, its cables to the cores, uplink by uplink (empty: two tiers).
    pub core_uplinks: Vec<Vec<Cable>>,
    /// Core switches (0: two tiers).
    pub cores: usize,
    /// Pods: groups of leaves with their own spines, in leaf order (1: two tiers).
    pub pods: usize,
    /// How flows pick among equal-cost paths.
    pub routing: Routing,
    /// Adaptive routing's choice per (source port, destination port, QP): the channels
    /// between the two leaves, up then down.
    pub assigned: BTreeMap<(usize, usize, u32), Vec<ChannelId>>,
}

/// The state of an adaptive search ([`LeafSpine::least_loaded`]): the tier where the path
/// turns, the switches above its destination leaf, the loads, the path so far, and the best
/// whole path found with its cost.
struct Search<'a> {
    top: usize,
    above_z: &'a [BTreeSet<usize>],
    load: &'a BTreeMap<ChannelId, u32>,
    path: Vec<ChannelId>,
    best: Option<((u32, u32), Vec<ChannelId>)>,
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

/// Where a generator puts the ports and how it names its leaves and spines: what the
/// leaf-spine, rail-optimized and fat-tree fabrics differ in below the cores. The cabling, the
/// channels and the routing are the same for all ([`two_tier`], [`LeafSpine`]).
pub(super) struct Layout<'a> {
    /// Leaf switches.
    pub leaves: usize,
    /// Spine switches.
    pub spines: usize,
    /// Spines of one group (a fat-tree pod's; every spine with two tiers): leaf `l`'s uplink
    /// `k` goes to spine `group_of(l) x group_spines + k mod group_spines`.
    pub group_spines: usize,
    /// The spine group of leaf `leaf` (its pod; 0 with two tiers).
    pub group_of: &'a dyn Fn(usize) -> usize,
    /// A spine's name in channel names (`spine3`, `pod1.spine0`).
    pub spine_name: &'a dyn Fn(usize) -> String,
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
    let spines = spec.leaf_spine.spines.max(1) as usize;
    let layout = Layout {
        leaves: hosts.len().div_ceil(per_leaf),
        spines,
        group_spines: spines,
        group_of: &|_| 0,
        spine_name: &spine_name,
        leaf_of: &|h, _| h / per_leaf,
        leaf_name: &|leaf| format!("leaf{leaf}"),
    };
    two_tier(b, hosts, spec, &layout, ports, first_port)
}

/// A spine's name with two tiers: `spine3`.
pub fn spine_name(spine: usize) -> String {
    format!("spine{spine}")
}

/// The two tiers of `layout`: every port's cable into its leaf and the leaf's port back
/// (host by host, NIC by NIC), then leaf by leaf its `uplinks_for` cables to its group's
/// spines in turn.
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
    let spines = layout.spines.max(1);
    let mut net = LeafSpine {
        spines,
        routing: spec.routing,
        leaf_names: (0..layout.leaves).map(layout.leaf_name).collect(),
        spine_names: (0..spines).map(layout.spine_name).collect(),
        pods: 1,
        ..LeafSpine::default()
    };
    let group = layout.group_spines.clamp(1, spines);
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
        let first = (layout.group_of)(leaf) * group;
        let to = |k: usize| first + k % group;
        let cables = cable_up(
            b,
            &net.leaf_names[leaf],
            &net.spine_names,
            uplinks_for(d, ls.oversubscription),
            &to,
            (rate, hop, ovh),
        );
        net.uplinks.push(cables);
    }
    net
}

/// The `u` cables up from switch `from` (its name), cable `k` to switch `to(k)` of the tier
/// above (named in `above`), each direction one channel of `rate` with latency `hop` and
/// packet overhead `ovh`. Where some switch above takes several of them, every cable's
/// channels carry its rank among the cables to that switch (`leaf0>spine1#0`, `#1`).
pub(super) fn cable_up(
    b: &mut Builder,
    from: &str,
    above: &[String],
    u: usize,
    to: &dyn Fn(usize) -> usize,
    (rate, hop, ovh): (Rate, Ps, [u64; 5]),
) -> Vec<Cable> {
    let mut rank: BTreeMap<usize, usize> = BTreeMap::new();
    let ranks: Vec<(usize, usize)> = (0..u)
        .map(|k| {
            let r = rank.entry(to(k)).or_default();
            *r += 1;
            (to(k), *r - 1)
        })
        .collect();
    let parallel = rank.values().any(|&n| n > 1);
    ranks
        .into_iter()
        .map(|(t, r)| {
            let tag = if parallel {
                format!("#{r}")
            } else {
                String::new()
            };
            let name = &above[t];
            Cable {
                to: t,
                up: b.add(
                    format!("{from}>{name}{tag}"),
                    ChannelKind::NetworkSwitch,
                    rate,
                    hop,
                    ovh,
                    None,
                ),
                down: b.add(
                    format!("{name}>{from}{tag}"),
                    ChannelKind::NetworkSwitch,
                    rate,
                    hop,
                    ovh,
                    None,
                ),
            }
        })
        .collect()
}

impl LeafSpine {
    /// The cables up from tier `t` (0: leaves to spines, 1: spines to cores), per switch.
    fn tier(&self, t: usize) -> &[Vec<Cable>] {
        if t == 0 {
            &self.uplinks
        } else {
            &self.core_uplinks
        }
    }

    /// Tiers above the leaves: 1 (spines), or 2 (spines and cores).
    pub fn tiers_above(&self) -> usize {
        if self.core_uplinks.is_empty() { 1 } else { 2 }
    }

    /// Per tier, the switches above leaf `leaf`: `[{leaf}, its spines, their cores]`.
    fn above(&self, leaf: usize) -> Vec<BTreeSet<usize>> {
        let mut sets = vec![BTreeSet::from([leaf])];
        for t in 0..self.tiers_above() {
            let next = (sets[t].iter())
                .flat_map(|&x| self.tier(t)[x].iter().map(|c| c.to))
                .collect();
            sets.push(next);
        }
        sets
    }

    /// The equal-cost ways from leaf `a` to leaf `z` (different leaves): the lowest tier `top`
    /// where a switch is above both, and the switches of that tier above `z`. Every shortest
    /// path climbs from `a` to one of them and comes down to `z`: `top` cables up, `top` down.
    fn meeting(&self, a: usize, z: usize) -> Option<(usize, Vec<BTreeSet<usize>>)> {
        let (above_a, above_z) = (self.above(a), self.above(z));
        let top = (1..above_z.len()).find(|&t| !above_a[t].is_disjoint(&above_z[t]))?;
        Some((top, above_z))
    }

    /// Whether switch `x` of tier `t` climbs to a tier-`top` switch above `z` (`above_z`).
    fn climbs(&self, t: usize, x: usize, top: usize, above_z: &[BTreeSet<usize>]) -> bool {
        if t == top {
            return above_z[t].contains(&x);
        }
        self.tier(t)[x]
            .iter()
            .any(|c| self.climbs(t + 1, c.to, top, above_z))
    }

    /// The equal-cost next hops of a path from leaf `a` to leaf `z` at its `h`th switch `x`
    /// (`h` from 0, the source leaf), as channels and the switch each leads to: climbing
    /// (`h < top`), the cables of `x` up to a switch that climbs on to the top above `z`, in
    /// `x`'s uplink order; coming down, the cables from `x` to the switches of the tier below
    /// above `z`, switch by switch, each switch's uplinks in order.
    fn next_hops(
        &self,
        h: usize,
        x: usize,
        top: usize,
        above_z: &[BTreeSet<usize>],
    ) -> Vec<(ChannelId, usize)> {
        if h < top {
            return (self.tier(h)[x].iter())
                .filter(|c| self.climbs(h + 1, c.to, top, above_z))
                .map(|c| (c.up, c.to))
                .collect();
        }
        let below = 2 * top - h - 1;
        (above_z[below].iter())
            .flat_map(|&y| {
                (self.tier(below)[y].iter())
                    .filter(|c| c.to == x)
                    .map(move |c| (c.down, y))
            })
            .collect()
    }

    /// The least-loaded equal-cost path from leaf `a` to leaf `z` under `load` (flows placed
    /// per channel): the least (busiest cable's load, sum of its cables' loads), the first in
    /// the order of its choices (the first hop's first, then the next hop's) among equals.
    /// Depth first over the choices, abandoning a partial path as soon as its cost is no less
    /// than the best found: a path's cost only grows as it extends, so this finds what
    /// trying every path would, without trying a fat tree's tens of thousands per flow.
    fn least_loaded(
        &self,
        a: usize,
        z: usize,
        load: &BTreeMap<ChannelId, u32>,
    ) -> Option<Vec<ChannelId>> {
        let (top, above_z) = self.meeting(a, z)?;
        let mut search = Search {
            top,
            above_z: &above_z,
            load,
            path: Vec::with_capacity(2 * top),
            best: None,
        };
        self.search(&mut search, a, (0, 0));
        search.best.map(|b| b.1)
    }

    /// One step of [`Self::least_loaded`]'s search from switch `x`, the partial path's cost so
    /// far `cost`.
    fn search(&self, s: &mut Search, x: usize, cost: (u32, u32)) {
        if s.best.as_ref().is_some_and(|b| cost >= b.0) {
            return;
        }
        if s.path.len() == 2 * s.top {
            s.best = Some((cost, s.path.clone()));
            return;
        }
        for (c, next) in self.next_hops(s.path.len(), x, s.top, s.above_z) {
            let l = s.load.get(&c).copied().unwrap_or(0);
            s.path.push(c);
            self.search(s, next, (cost.0.max(l), cost.1 + l));
            s.path.pop();
        }
    }

    /// Adaptive routing at route-build time: every distinct (source, destination, QP) of the
    /// study's flows, in order, takes the equal-cost path whose busiest cable carries the
    /// fewest flows placed so far (then the fewer in sum over its cables, then the first).
    /// Flows of every scenario are counted together: an approximation of a switch that steers
    /// each packet to its least-loaded port. `flows` are (source port, destination port, QP).
    pub(super) fn place_adaptively(&mut self, flows: &[(usize, usize, u32)]) {
        let mut load: BTreeMap<ChannelId, u32> = BTreeMap::new();
        for &key in flows {
            let (a, z) = (self.leaf_of[key.0], self.leaf_of[key.1]);
            if a == z || self.assigned.contains_key(&key) {
                continue;
            }
            let best = self.least_loaded(a, z, &load);
            if let Some(path) = best {
                for &c in &path {
                    *load.entry(c).or_default() += 1;
                }
                self.assigned.insert(key, path);
            }
        }
    }

    /// The channels between the leaves from port `from` to port `to` on a different leaf for
    /// queue pair `qp`: up to the lowest tier above both leaves and down (None where no switch
    /// joins them). ECMP: the path's `h`th switch (0 the source leaf, then the spine, ...)
    /// takes next hop `ecmp_hash(.., h) mod (its equal-cost next hops)`: with two tiers, the
    /// source leaf an uplink whose spine reaches the destination leaf, the spine one of its
    /// cables down to it.
    pub fn spine_hops(&self, from: usize, to: usize, qp: u32) -> Option<Vec<ChannelId>> {
        if let Some(path) = self.assigned.get(&(from, to, qp)) {
            return Some(path.clone());
        }
        let (a, z) = (self.leaf_of[from], self.leaf_of[to]);
        let (top, above_z) = self.meeting(a, z)?;
        let mut x = a;
        let mut path = Vec::with_capacity(2 * top);
        for h in 0..2 * top {
            let hops = self.next_hops(h, x, top, &above_z);
            let n = hops.len().max(1) as u64;
            let (c, next) = *hops.get((ecmp_hash(from, to, qp, h as u32) % n) as usize)?;
            path.push(c);
            x = next;
        }
        Some(path)
    }

    /// Leaves of the fabric.
    pub fn leaves(&self) -> usize {
        self.uplinks.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cable up to switch `to` whose channels are `base` (up) and `base + 1` (down).
    fn cable(to: usize, base: u32) -> Cable {
        Cable {
            to,
            up: ChannelId(base),
            down: ChannelId(base + 1),
        }
    }

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
        let mut ls = LeafSpine {
            leaf_of: vec![0, 0, 1, 1],
            uplinks: vec![
                vec![cable(0, 0), cable(1, 2)],
                vec![cable(0, 4), cable(1, 6)],
            ],
            spines: 2,
            leaf_names: vec!["leaf0".into(), "leaf1".into()],
            spine_names: vec!["spine0".into(), "spine1".into()],
            pods: 1,
            routing: Routing::Adaptive,
            ..LeafSpine::default()
        };
        ls.place_adaptively(&[(0, 2, 0), (1, 3, 1), (0, 3, 2), (1, 2, 3), (0, 2, 0)]);
        // Spine 0's cables are channels 0..=1 and 4..=5; spine 1's 2..=3 and 6..=7.
        let spine = |c: ChannelId| usize::from(c.0 % 4 >= 2);
        let mut per_spine = [0; 2];
        for path in ls.assigned.values() {
            assert_eq!(path.len(), 2);
            assert_eq!(spine(path[0]), spine(path[1]));
            per_spine[spine(path[0])] += 1;
        }
        assert_eq!(ls.assigned.len(), 4);
        assert_eq!(per_spine, [2, 2]);
        assert_eq!(
            ls.spine_hops(0, 2, 0),
            Some(vec![ChannelId(0), ChannelId(5)])
        );
    }

    /// Three tiers: two pods of one leaf and one spine each, both spines cabled to two cores.
    /// Between the pods a path climbs leaf, spine, core and comes down spine, leaf (four
    /// channels between the leaves); ECMP picks the core by the spine's hash (hop 1), and
    /// adaptive routing spreads two flows over the two cores.
    #[test]
    fn paths_between_pods_cross_a_core() {
        let mut ls = LeafSpine {
            leaf_of: vec![0, 0, 1, 1],
            uplinks: vec![vec![cable(0, 0)], vec![cable(1, 2)]],
            spines: 2,
            leaf_names: vec!["pod0.leaf0".into(), "pod1.leaf0".into()],
            spine_names: vec!["pod0.spine0".into(), "pod1.spine0".into()],
            core_uplinks: vec![
                vec![cable(0, 10), cable(1, 12)],
                vec![cable(0, 14), cable(1, 16)],
            ],
            cores: 2,
            pods: 2,
            routing: Routing::Ecmp,
            ..LeafSpine::default()
        };
        assert_eq!(ls.tiers_above(), 2);
        let core = (ecmp_hash(0, 2, 0, 1) % 2) as u32;
        let r = ls.spine_hops(0, 2, 0).unwrap();
        assert_eq!(
            r,
            [
                ChannelId(0),
                ChannelId(10 + 2 * core),
                ChannelId(15 + 2 * core),
                ChannelId(3)
            ]
        );
        ls.routing = Routing::Adaptive;
        ls.place_adaptively(&[(0, 2, 0), (1, 3, 1)]);
        let cores: Vec<ChannelId> = ls.assigned.values().map(|p| p[1]).collect();
        assert_eq!(cores, [ChannelId(10), ChannelId(12)]);
    }
}

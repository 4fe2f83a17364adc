//! The network between hosts as a graph of NIC ports, cables and switch ports.
//!
//! Every NIC port is cabled to its own port of the first switch; `switch_hops` switches lie
//! between any two ports, and the fabric between the first and the last is non-blocking (a fat
//! tree with full bisection), so traffic contends only where it really meets: on the cable out
//! of a port (its *uplink*, serialised at the port's rate) and on the last switch's port into a
//! NIC (its *downlink*). Two flows into one NIC port share that port's downlink; two flows out
//! of one port share its uplink. With `switch_hops = 0` ports are cabled back to back in pairs.
//!
//! With `fabric = "leaf-spine"` the ports hang off leaf switches instead and the leaves'
//! cables to the spines are shared ([`super::leaf_spine`]); a route then depends on the flow's
//! QP number as well as its two ports (ECMP). `fabric = "rail-optimized"` builds the same two
//! tiers with NIC `i` of every host of a scalable unit on the unit's rail leaf `i`
//! ([`super::rail_optimized`]). `fat-tree` adds a third tier: pods of leaves with their own
//! spines, cabled to core switches ([`super::fat_tree`]).

use super::fat_tree;
use super::leaf_spine::{self, LeafSpine};
use super::machine::Builder;
use super::rail_optimized;
use super::spec::{Fabric, HostSpec, NetworkSpec, Routing};
use super::*;

/// One NIC port of one host and the network channels that serve it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Port {
    /// Index into the topology's hosts.
    pub host: usize,
    /// Index into that host's machine's NICs.
    pub nic: usize,
    /// `host/nic`, as channel names show it.
    pub name: String,
    /// The cable out of the port into the first switch (None when cabled back to back).
    pub uplink: Option<ChannelId>,
    /// Per extra switch hop: the traversal of that switch (non-blocking core, one per port).
    pub core: Vec<ChannelId>,
    /// The last switch's output port into this NIC (None when cabled back to back).
    pub downlink: Option<ChannelId>,
}

/// The ports and the back-to-back cables of the network.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Network {
    /// Every NIC port of every host, host by host.
    pub ports: Vec<Port>,
    /// Per host, the index of its first port (its NICs' ports follow in NIC order).
    pub first_port: Vec<usize>,
    /// Back-to-back cables (`switch_hops = 0`): (from port, to port, channel).
    pub cables: Vec<(usize, usize, ChannelId)>,
    /// The leaves, spines and cores, for `fabric = "leaf-spine"`, `"rail-optimized"` and
    /// `"fat-tree"`.
    pub leaf_spine: Option<LeafSpine>,
}

/// A pair of ports that talk to each other (needed to lay cables when there is no switch).
pub type PortPair = ((usize, usize), (usize, usize));

/// A flow's two NIC ports, (host, nic) each, and its QP number (its index in its scenario),
/// on which ECMP hashes and by which adaptive routing places it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowPorts {
    /// Sender and receiver ports.
    pub pair: PortPair,
    /// The flow's QP number.
    pub qp: u32,
}

/// Instantiates the ports of every NIC of `hosts`, the switch ports they connect to, and for a
/// switchless network the cables of the `flows`' port pairs (host, nic) -> (host, nic).
pub(super) fn build(
    b: &mut Builder,
    hosts: &[HostSpec],
    spec: &NetworkSpec,
    flows: &[FlowPorts],
) -> Network {
    if spec.fabric.tiered() {
        let mut net = Network::default();
        let (ports, first) = (&mut net.ports, &mut net.first_port);
        let mut ls = match spec.fabric {
            Fabric::RailOptimized => rail_optimized::build(b, hosts, spec, ports, first),
            Fabric::FatTree => fat_tree::build(b, hosts, spec, ports, first),
            _ => leaf_spine::build(b, hosts, spec, ports, first),
        };
        if spec.routing == Routing::Adaptive {
            let keys: Vec<(usize, usize, u32)> = flows
                .iter()
                .map(|f| {
                    let ((ah, an), (zh, zn)) = f.pair;
                    (net.port_index(ah, an), net.port_index(zh, zn), f.qp)
                })
                .collect();
            ls.place_adaptively(&keys);
        }
        net.leaf_spine = Some(ls);
        return net;
    }
    let pairs: Vec<PortPair> = flows.iter().map(|f| f.pair).collect();
    let cable = spec.cable_m * spec.propagation_per_m;
    let mut net = Network::default();
    let name_of =
        |h: usize, n: usize| format!("{}/{}", hosts[h].name, hosts[h].machine.nics[n].name);
    for (h, host) in hosts.iter().enumerate() {
        net.first_port.push(net.ports.len());
        for (n, nic) in host.machine.nics.iter().enumerate() {
            let name = name_of(h, n);
            let ovh = [0, 0, 0, nic.packet_overhead, 0];
            let mut port = Port {
                host: h,
                nic: n,
                name: name.clone(),
                uplink: None,
                core: Vec::new(),
                downlink: None,
            };
            if spec.switch_hops > 0 {
                port.uplink = Some(b.add(
                    format!("wire:{name}>switch1"),
                    ChannelKind::Wire,
                    nic.wire_rate,
                    cable,
                    ovh,
                    None,
                ));
                for i in 1..spec.switch_hops {
                    port.core.push(b.add(
                        format!("switch{i}>switch{} (from {name})", i + 1),
                        ChannelKind::NetworkSwitch,
                        nic.wire_rate,
                        spec.switch_latency + cable,
                        ovh,
                        None,
                    ));
                }
                port.downlink = Some(b.add(
                    format!("switch{}>{name}", spec.switch_hops),
                    ChannelKind::NetworkSwitch,
                    nic.wire_rate,
                    spec.switch_latency + cable,
                    ovh,
                    None,
                ));
            }
            net.ports.push(port);
        }
    }
    if spec.switch_hops == 0 {
        for &((ah, an), (zh, zn)) in &pairs {
            for (from, to) in [((ah, an), (zh, zn)), ((zh, zn), (ah, an))] {
                let (f, t) = (net.port_index(from.0, from.1), net.port_index(to.0, to.1));
                if net.cables.iter().any(|c| (c.0, c.1) == (f, t)) {
                    continue;
                }
                let nic = &hosts[from.0].machine.nics[from.1];
                let rate = nic.wire_rate.min(hosts[to.0].machine.nics[to.1].wire_rate);
                let ch = b.add(
                    format!("wire:{}>{}", net.ports[f].name, net.ports[t].name),
                    ChannelKind::Wire,
                    rate,
                    cable,
                    [0, 0, 0, nic.packet_overhead, 0],
                    None,
                );
                net.cables.push((f, t, ch));
            }
        }
    }
    net
}

impl Network {
    /// Index of the port of NIC `nic` on host `host`.
    pub fn port_index(&self, host: usize, nic: usize) -> usize {
        let i = self.first_port[host] + nic;
        debug_assert!(self.ports[i].host == host && self.ports[i].nic == nic);
        i
    }

    /// The channels a packet of queue pair `qp` crosses from port `from` to port `to` (indices
    /// into `ports`), in order; None where no cable or switch connects them. Only a leaf-spine
    /// route between leaves depends on `qp`.
    pub fn route(&self, from: usize, to: usize, qp: u32) -> Option<Vec<ChannelId>> {
        let (a, z) = (&self.ports[from], &self.ports[to]);
        match (a.uplink, z.downlink) {
            (Some(up), Some(down)) => {
                let mut r = vec![up];
                match &self.leaf_spine {
                    Some(ls) if ls.leaf_of[from] != ls.leaf_of[to] => {
                        r.extend(ls.spine_hops(from, to, qp)?);
                    }
                    Some(_) => {}
                    None => r.extend(a.core.iter().copied()),
                }
                r.push(down);
                Some(r)
            }
            _ => self
                .cables
                .iter()
                .find(|c| (c.0, c.1) == (from, to))
                .map(|c| vec![c.2]),
        }
    }
}

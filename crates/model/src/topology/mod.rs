//! The simulated machines as a graph: hosts with sockets, root complexes, PCIe switches and
//! devices (GPUs, NICs), the links between them, the network between hosts, and the routes that
//! traffic takes. Plain data: the components read it, nothing here simulates.
//!
//! Every place where traffic queues or waits is a *channel*: one direction of a PCIe link, a
//! switch or root-complex traversal, a P2P forwarding limit, an inter-socket link direction, a
//! memory, a NIC pipeline stage, a wire. A route is the list of channels a transfer crosses.

mod affinity;
pub mod cpu_family;
pub mod fabric_view;
pub mod fat_tree;
pub mod leaf_spine;
mod machine;
pub mod network;
mod path_memo;
pub mod pcie;
pub mod rail_optimized;
mod read_engines;
mod route;
pub mod spec;
pub mod topo_matrix;

pub use affinity::{Affinity, MAX_NVLINKS};
pub use cpu_family::CpuFamily;
pub use network::{FlowPorts, Network, Port, PortPair};
pub use read_engines::{ReadEngineId, ReadEngineOwner};
pub use route::{Flow, Place, Route, RouteError};

use std::sync::Arc;

use crate::units::{Ps, Rate};
use spec::{HostSpec, MachineSpec, NetworkSpec};

pub use crate::ids::ChannelId;

/// WQE fetches a NIC keeps in flight, apart from its data reads. Estimate: a NIC fetches
/// descriptors through a queue of its own (ConnectX prefetches WQEs per send queue), so a new
/// WQE does not wait behind megabytes of earlier payload reads.
pub const WQE_FETCH_READS: u32 = 16;

/// The kinds of unit a channel carries; per-unit overhead bytes depend on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A posted memory write TLP (header + payload).
    Write = 0,
    /// A memory read request TLP (header only on the link).
    ReadRequest = 1,
    /// A completion with data.
    Completion = 2,
    /// A network packet (payload + per-packet headers).
    Packet = 3,
    /// A control unit whose size is all header (an ACK): the payload field carries its size and
    /// no channel adds overhead.
    Control = 4,
}

/// What a channel is, for names, traces and the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChannelKind {
    /// One direction of a PCIe link.
    PcieLink {
        /// PCIe generation (1 to 6).
        generation: u32,
        /// Lanes.
        width: u32,
        /// The direction towards the root (device to switch or root complex).
        upstream: bool,
    },
    /// The traversal of a PCIe switch.
    Switch,
    /// The traversal of a root complex.
    RootComplex,
    /// A root complex's or socket link's cap on peer-to-peer forwarding (reads or writes).
    P2pCap,
    /// One direction of an inter-socket link.
    SocketLink,
    /// A socket's DRAM.
    HostMemory,
    /// A GPU's device memory.
    GpuMemory,
    /// A NIC's send engine, spacing WQEs by its message rate.
    NicEngine,
    /// A NIC's transmit or receive pipeline.
    NicPipeline,
    /// A cable out of a NIC port (into the first switch, or back to back to the peer port).
    Wire,
    /// A network switch hop: a core traversal or the last switch's port into a NIC.
    NetworkSwitch,
    /// One direction of a bonded set of NVLinks.
    NvLink {
        /// Links in the bond.
        links: u32,
    },
    /// The traversal of an NVSwitch.
    NvSwitch,
    /// One direction of an NVLink-C2C link between a socket and its GPU.
    C2c,
}

/// A FIFO server: `rate` (0 = no serialisation, latency only) and a fixed `latency`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChannelSpec {
    /// Unique name, as traces and reports show it ("node-a/pcie:nic0>sw0").
    pub name: String,
    /// What it is.
    pub kind: ChannelKind,
    /// Serialisation rate (0: latency only, no queueing).
    pub rate: Rate,
    /// Fixed delay every unit pays crossing it, in picoseconds.
    pub latency: Ps,
    /// Overhead bytes per unit, indexed by [`Unit`].
    pub overhead: [u64; 5],
    /// Where a link re-packetises what crosses it (an NVLink bond, NVLink-C2C): its packets'
    /// largest payload, each packet paying the overhead; 0 where a unit crosses as one (PCIe
    /// TLPs, network packets).
    pub segment: u64,
    /// Which host it belongs to (None: the network).
    pub host: Option<usize>,
    /// Median extra access delay when jitter is on (memories only; 0 = none).
    pub jitter_median: Ps,
}

impl ChannelSpec {
    /// Whether the channel has queueing state (a rate); latency-only channels need no event.
    pub fn is_server(&self) -> bool {
        self.rate.bps() > 0
    }
    /// Bytes this channel serialises for `units` units of `unit` carrying `payload` data bytes.
    #[inline]
    pub fn wire_bytes(&self, unit: Unit, payload: u64, units: u64) -> u64 {
        let packets = match self.segment {
            0 => units,
            s => units.max(payload.div_ceil(s)),
        };
        payload + packets * self.overhead[unit as usize]
    }
}

/// What a node of a host's PCIe tree is, with its index among the machine's items of that kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// A CPU socket (index into the machine's sockets).
    Socket(usize),
    /// A root complex (index into the machine's root complexes).
    RootComplex(usize),
    /// A PCIe switch (index into the machine's switches).
    Switch(usize),
    /// A GPU (index into the machine's GPUs).
    Gpu(usize),
    /// A NIC (index into the machine's NICs).
    Nic(usize),
    /// An NVSwitch (index into the machine's NVSwitches).
    NvSwitch(usize),
}

/// A node of a host's PCIe tree (sockets at the top).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The item's name in the machine spec ("gpu0", "sw0").
    pub name: String,
    /// What it is.
    pub kind: NodeKind,
    /// Upstream neighbour and the link to it: (node, up-direction channel, down-direction channel).
    pub parent: Option<(usize, ChannelId, ChannelId)>,
    /// MPS of the link to the parent.
    pub link_mps: u64,
    /// Generation and width of the link to the parent (0 for sockets and root complexes).
    pub link: (u32, u32),
    /// The socket this node hangs under.
    pub socket: usize,
    /// The channel a transfer crosses when it passes through this node (switch, root complex).
    pub traverse: Option<ChannelId>,
}

/// The channels of one NIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NicChannels {
    /// The send engine's first processing unit: spaces a QP's WQEs by one unit's message
    /// rate. Units `engine .. engine + units` follow it in channel order.
    pub engine: ChannelId,
    /// The send engine's processing units (at least one).
    pub units: u32,
    /// The transmit pipeline.
    pub tx: ChannelId,
    /// The receive pipeline.
    pub rx: ChannelId,
}

/// One instantiated host.
#[derive(Clone, Debug)]
pub struct HostTopo {
    /// The host's name in the config ("node-a").
    pub name: String,
    /// The machine it instantiates.
    pub spec: MachineSpec,
    /// The nodes of its PCIe tree, sockets first.
    pub nodes: Vec<Node>,
    /// DRAM channel per socket.
    pub dram: Vec<ChannelId>,
    /// Device-memory channel per GPU.
    pub gpu_memory: Vec<ChannelId>,
    /// The channels of each NIC.
    pub nics: Vec<NicChannels>,
    /// Root-complex P2P caps: (read, write) channel per root complex, when capped.
    pub rc_caps: Vec<(Option<ChannelId>, Option<ChannelId>)>,
    /// Socket-link channels: (a, b, a->b, b->a, read cap a->b, read cap b->a, write cap a->b, write cap b->a).
    pub socket_links: Vec<SocketLinkChannels>,
    /// The host as a graph: typed edges between nodes, and each node's edges.
    pub edges: Vec<Edge>,
    /// Per node, the indices into `edges` of the edges that touch it.
    pub adjacent: Vec<Vec<usize>>,
    /// The paths searched in this graph so far (a path depends on the graph alone).
    pub paths: path_memo::PathMemo,
}

/// An edge of a host's graph between nodes `a` and `b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    /// One end (index into the host's nodes): the upstream one for a PCIe link.
    pub a: usize,
    /// The other end.
    pub b: usize,
    /// What the edge is.
    pub kind: EdgeKind,
}

/// What connects two nodes, and the channels a transfer crosses on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeKind {
    /// A PCIe link: `a` is the upstream port (root complex or switch), `b` the downstream
    /// device; one channel per direction, and the link's MPS.
    Pcie {
        /// The direction towards `a` (upstream).
        up: ChannelId,
        /// The direction towards `b` (downstream).
        down: ChannelId,
        /// The link's MPS, in bytes.
        mps: u64,
    },
    /// A root complex (`b`) attached to its socket's memory fabric (`a`): no channel of its
    /// own (the root complex's traversal is its cost).
    Attach,
    /// An inter-socket link (index into [`HostTopo::socket_links`]), `a` to `b` forward.
    Socket {
        /// Index into [`HostTopo::socket_links`].
        link: usize,
    },
    /// An NVLink-C2C link from a socket's memory fabric (`a`) down to its GPU (`b`): one
    /// channel per direction, each packetising what crosses it into its own packets.
    C2c {
        /// The direction towards the socket.
        up: ChannelId,
        /// The direction towards the GPU.
        down: ChannelId,
    },
    /// A bond of NVLinks from a GPU (`a`) to another GPU or an NVSwitch (`b`).
    NvLink {
        /// The direction a to b.
        forward: ChannelId,
        /// The direction b to a.
        backward: ChannelId,
        /// Links in the bond.
        links: u32,
    },
}

/// The channels of one inter-socket link between sockets `a` and `b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SocketLinkChannels {
    /// One socket (index into the machine's sockets).
    pub a: usize,
    /// The other socket.
    pub b: usize,
    /// The direction a to b.
    pub forward: ChannelId,
    /// The direction b to a.
    pub backward: ChannelId,
    /// P2P read caps, a to b and b to a (None: not capped).
    pub read_cap: [Option<ChannelId>; 2],
    /// P2P write caps, a to b and b to a (None: not capped).
    pub write_cap: [Option<ChannelId>; 2],
}

/// Every host of a study and the network between their NIC ports, built once per config.
#[derive(Clone, Debug)]
pub struct Topology {
    /// Every host, in config order.
    pub hosts: Vec<HostTopo>,
    /// Every channel of every host and of the network; [`ChannelId`]s index it.
    pub channels: Vec<ChannelSpec>,
    /// Every channel's name, in channel order, shared by the recorders that name them.
    pub channel_names: Arc<[String]>,
    /// The network's parameters (switch hops and latency, propagation).
    pub network_spec: NetworkSpec,
    /// The NIC ports and cables between hosts.
    pub network: Network,
    /// Per host, how many NICs the hosts before it have (one more entry: every NIC): the
    /// read-engine numbering's offsets, so that an engine's index costs the same on 2 hosts as
    /// on 128.
    pub(crate) nics_before: Vec<usize>,
    /// Per host, how many GPUs the hosts before it have (one more entry: every GPU).
    pub(crate) gpus_before: Vec<usize>,
    /// [`Topology::read_windows`], computed once.
    pub(crate) windows: Vec<u32>,
    /// Every NIC's first send-engine unit and its unit count, in channel order: found by
    /// [`Topology::engine_unit`] in log time, not by a scan of every NIC of every host.
    engine_units: Vec<(ChannelId, u32)>,
}

/// One host on its own (its channels numbered from 0): for questions about its structure, such as
/// which NIC is nearest to a GPU.
pub fn host_graph(host: &HostSpec) -> HostTopo {
    let mut b = machine::Builder {
        channels: Vec::new(),
    };
    machine::build_host(&mut b, 0, host)
}

impl HostTopo {
    /// Each GPU's nearest NIC by the `nvidia-smi topo -m` class of their path (PIX before PXB,
    /// PHB, NODE, SYS); among equally near NICs, one that no earlier GPU took, then the first.
    /// This is the pairing NCCL makes of GPUs and NICs on a balanced board.
    pub fn nearest_nics(&self) -> Vec<usize> {
        let mut taken = vec![false; self.spec.nics.len()];
        (0..self.spec.gpus.len())
            .map(|g| {
                let gpu = Place::Device(self.node_index(NodeKind::Gpu(g)));
                let ranked: Vec<(Affinity, usize)> = (0..self.spec.nics.len())
                    .map(|n| {
                        let nic = Place::Device(self.node_index(NodeKind::Nic(n)));
                        (self.class(gpu, nic), n)
                    })
                    .collect();
                let best = ranked.iter().map(|r| r.0).min().unwrap_or(Affinity::Sys);
                let nearest: Vec<usize> =
                    ranked.iter().filter(|r| r.0 == best).map(|r| r.1).collect();
                let n = nearest
                    .iter()
                    .copied()
                    .find(|&n| !taken[n])
                    .unwrap_or(nearest[0]);
                taken[n] = true;
                n
            })
            .collect()
    }
}

/// Instantiates every host (in order) and the network. `flows` are the NIC ports that talk to
/// each other, which a switchless network needs to lay its cables and adaptive routing to
/// place flows on the spines.
pub fn build(hosts: &[HostSpec], network: &NetworkSpec, flows: &[FlowPorts]) -> Topology {
    let mut b = machine::Builder {
        channels: Vec::new(),
    };
    let host_topos = hosts
        .iter()
        .enumerate()
        .map(|(h, spec)| machine::build_host(&mut b, h, spec))
        .collect();
    let net = network::build(&mut b, hosts, network, flows);
    let before = |count: fn(&HostSpec) -> usize| {
        let mut v = vec![0];
        for h in hosts {
            v.push(v[v.len() - 1] + count(h));
        }
        v
    };
    let mut topo = Topology {
        hosts: host_topos,
        channel_names: b.channels.iter().map(|c| c.name.clone()).collect(),
        channels: b.channels,
        network_spec: *network,
        network: net,
        nics_before: before(|h| h.machine.nics.len()),
        gpus_before: before(|h| h.machine.gpus.len()),
        windows: Vec::new(),
        engine_units: Vec::new(),
    };
    topo.windows = topo.windows_of_hosts();
    topo.engine_units = (topo.hosts.iter())
        .flat_map(|h| &h.nics)
        .map(|n| (n.engine, n.units.max(1)))
        .collect();
    topo.engine_units.sort_unstable();
    topo
}

impl HostTopo {
    /// The index of the node `kind` in `nodes` (every machine item has one).
    pub fn node_index(&self, kind: NodeKind) -> usize {
        self.nodes
            .iter()
            .position(|n| n.kind == kind)
            .expect("node exists by construction")
    }
    /// The index of the socket named `name`, if the machine has one.
    pub fn socket_index(&self, name: &str) -> Option<usize> {
        self.spec.sockets.iter().position(|g| g.name == name)
    }
}

impl Topology {
    /// The send-engine unit that queue pair `qp` of a NIC uses where a route crosses channel
    /// `c`: unit `qp mod units` of the NIC whose engine `c` is, else `c` itself.
    pub fn engine_unit(&self, c: ChannelId, qp: usize) -> ChannelId {
        match self.engine_units.binary_search_by_key(&c, |e| e.0) {
            Ok(i) => ChannelId(c.0 + (qp % self.engine_units[i].1 as usize) as u32),
            Err(_) => c,
        }
    }

    /// The slowest channel a stream of full-size units crosses on `route`, as an effective
    /// payload rate (after per-TLP overheads at the route's MPS) and the channel's name. `unit`
    /// is what the payload travels as (posted writes, or read completions).
    pub fn route_ceiling(&self, route: &Route, unit: Unit) -> Option<(Rate, &str)> {
        route
            .channels
            .iter()
            .map(|&c| &self.channels[c.index()])
            .filter(|c| c.is_server() && !matches!(c.kind, ChannelKind::NicEngine))
            .map(|c| {
                (
                    c.rate.scale(route.mps, c.wire_bytes(unit, route.mps, 1)),
                    c.name.as_str(),
                )
            })
            .min_by_key(|(r, _)| *r)
    }

    /// The network route from NIC `a` of host `ha` to NIC `z` of host `hz` for queue pair `qp`
    /// (the flow's index in its scenario: ECMP hashes on it).
    pub fn wire_route(
        &self,
        (ha, a): (usize, usize),
        (hz, z): (usize, usize),
        qp: u32,
    ) -> Option<Vec<ChannelId>> {
        let net = &self.network;
        net.route(net.port_index(ha, a), net.port_index(hz, z), qp)
    }

    /// The payload rate of full packets of `mtu` bytes on the slowest channel of `route`.
    pub fn wire_ceiling(&self, route: &[ChannelId], mtu: u64) -> Option<(Rate, &str)> {
        route
            .iter()
            .map(|&c| &self.channels[c.index()])
            .filter(|c| c.is_server())
            .map(|c| {
                (
                    c.rate.scale(mtu, c.wire_bytes(Unit::Packet, mtu, 1)),
                    c.name.as_str(),
                )
            })
            .min_by_key(|(r, _)| *r)
    }
}

//! Routing inside a host: up the PCIe tree to the lowest common ancestor (or across the sockets),
//! then down; the channels crossed, the effective MPS, and the `nvidia-smi topo -m` class.

use std::fmt;

use super::spec::P2p;
use super::*;

/// Where traffic starts or ends inside a host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// A core of this socket (MMIO writes start here).
    Cpu(usize),
    /// Host DRAM of this socket.
    Memory(usize),
    /// A PCIe device (node index): a NIC, or a GPU's BAR.
    Device(usize),
}

/// The kind of traffic, which decides which P2P policy and cap applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Posted writes (and MMIO writes).
    Write,
    /// Read requests, requester to completer.
    ReadRequest,
    /// Read completions with their data, completer back to requester.
    ReadCompletion,
}

/// The way from one place of a host to another: the channels crossed, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// The channels crossed, in order.
    pub channels: Vec<ChannelId>,
    /// Effective MPS: the minimum over the PCIe links crossed.
    pub mps: u64,
    /// Whether both ends are devices (peer-to-peer).
    pub p2p: bool,
    /// nvidia-smi style class of the two ends.
    pub class: Affinity,
}

/// Why traffic cannot go where it was asked to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RouteError {
    /// Peer-to-peer traffic of this kind is refused by a root complex or socket link.
    P2pRefused {
        /// The name of the root complex or socket link that refuses.
        at: String,
        /// Whether reads are refused (else writes).
        reads: bool,
    },
    /// No cable or switch connects two NIC ports.
    NoCable {
        /// The sending port (`host/nic`).
        from: String,
        /// The receiving port (`host/nic`).
        to: String,
    },
}

impl fmt::Display for RouteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RouteError::P2pRefused { at, reads } => {
                write!(
                    f,
                    "peer-to-peer {} refused at {at}",
                    if *reads { "reads" } else { "writes" }
                )
            }
            RouteError::NoCable { from, to } => write!(f, "no network path from {from} to {to}"),
        }
    }
}

impl std::error::Error for RouteError {}

use super::path_memo::Hop;

impl HostTopo {
    /// The node a place sits at: its socket for cores and memory, else the device itself.
    fn node_of(&self, place: Place) -> usize {
        match place {
            Place::Cpu(s) | Place::Memory(s) => self.node_index(NodeKind::Socket(s)),
            Place::Device(n) => n,
        }
    }

    /// The path from `from` to `to` under the routing policy: between two GPUs, over NVLink
    /// where their NVLinks (and NVSwitches) join them, as the CUDA driver routes peer copies;
    /// everything else over PCIe and the socket links.
    /// Searched once per question and kept ([`super::path_memo`]).
    fn node_path(&self, from: Place, to: Place, acs: bool) -> std::sync::Arc<Vec<Hop>> {
        let gpu = |p: Place| matches!(p, Place::Device(n) if matches!(self.nodes[n].kind, NodeKind::Gpu(_)));
        let gpus = gpu(from) && gpu(to);
        let key = (self.node_of(from), self.node_of(to), acs);
        self.paths.get_or(key, || {
            if gpus && let Some(path) = self.search(from, to, acs, true) {
                return path;
            }
            self.search(from, to, acs, false)
                .expect("every place of a validated host is reachable over PCIe")
        })
    }

    /// A breadth-first search over the host's graph (fewest hops, ties to the edge listed
    /// first), over NVLink edges only (`nvlink`) or over every other edge: devices are
    /// endpoints, never transit; and where `acs` holds (peer-to-peer traffic), a switch with
    /// ACS redirect may not turn traffic from one downstream port to another, so it goes up to
    /// the root complex and back down. A search state is (node, whether it was entered from
    /// below).
    fn search(&self, from: Place, to: Place, acs: bool, nvlink: bool) -> Option<Vec<Hop>> {
        let (src, dst) = (self.node_of(from), self.node_of(to));
        let n = self.nodes.len();
        let state = |node: usize, from_below: bool| node * 2 + usize::from(from_below);
        let mut prev: Vec<Option<(usize, usize)>> = vec![None; 2 * n];
        let mut seen = vec![false; 2 * n];
        let mut queue = std::collections::VecDeque::new();
        seen[state(src, false)] = true;
        queue.push_back((src, false));
        let mut found = None;
        while let Some((node, from_below)) = queue.pop_front() {
            if node == dst {
                found = Some(state(node, from_below));
                break;
            }
            let transit = node == src
                || !matches!(self.nodes[node].kind, NodeKind::Gpu(_) | NodeKind::Nic(_));
            if !transit {
                continue;
            }
            for &e in &self.adjacent[node] {
                let edge = &self.edges[e];
                if matches!(edge.kind, EdgeKind::NvLink { .. }) != nvlink {
                    continue;
                }
                let (next, going_down) = if edge.a == node {
                    (edge.b, matches!(edge.kind, EdgeKind::Pcie { .. }))
                } else {
                    (edge.a, false)
                };
                if acs
                    && going_down
                    && from_below
                    && let NodeKind::Switch(sw) = self.nodes[node].kind
                    && self.spec.switches[sw].acs_redirect
                {
                    continue;
                }
                let below = matches!(edge.kind, EdgeKind::Pcie { .. }) && edge.b == node;
                let st = state(next, below);
                if !seen[st] {
                    seen[st] = true;
                    prev[st] = Some((state(node, from_below), e));
                    queue.push_back((next, below));
                }
            }
        }
        let mut path = Vec::new();
        let mut cur = found?;
        loop {
            let node = cur / 2;
            match prev[cur] {
                Some((p, e)) => {
                    path.push((node, Some(e)));
                    cur = p;
                }
                None => {
                    path.push((node, None));
                    break;
                }
            }
        }
        path.reverse();
        Some(path)
    }

    /// The channels crossed from `from` to `to` for traffic of kind `flow`. Memory channels are
    /// not included (the caller adds the one it reads or commits to).
    pub fn route(&self, from: Place, to: Place, flow: Flow) -> Result<Route, RouteError> {
        let p2p = matches!((from, to), (Place::Device(_), Place::Device(_)));
        let path = self.node_path(from, to, p2p);
        let reads = flow != Flow::Write;
        let mut channels = Vec::new();
        let mut mps = u64::MAX;
        for (k, &(n, edge)) in path.iter().enumerate() {
            let node = &self.nodes[n];
            if let Some(e) = edge {
                let prev = path[k - 1].0;
                match self.edges[e].kind {
                    EdgeKind::Pcie { up, down, mps: m } => {
                        channels.push(if self.edges[e].b == prev { up } else { down });
                        mps = mps.min(m);
                    }
                    EdgeKind::C2c { up, down } => {
                        channels.push(if self.edges[e].b == prev { up } else { down });
                    }
                    EdgeKind::Attach => {}
                    EdgeKind::NvLink {
                        forward, backward, ..
                    } => {
                        channels.push(if self.edges[e].a == prev {
                            forward
                        } else {
                            backward
                        });
                    }
                    EdgeKind::Socket { link: l } => {
                        let link = &self.socket_links[l];
                        let a = match self.nodes[prev].kind {
                            NodeKind::Socket(a) => a,
                            _ => unreachable!("socket links join sockets"),
                        };
                        let dir = usize::from(link.a != a);
                        channels.push(if dir == 0 {
                            link.forward
                        } else {
                            link.backward
                        });
                        if p2p {
                            let spec = &self.spec.socket_links[l];
                            let policy = if reads { spec.p2p_read } else { spec.p2p_write };
                            if policy == P2p::Refused {
                                return Err(RouteError::P2pRefused {
                                    at: format!("{}-{}", spec.a, spec.b),
                                    reads,
                                });
                            }
                            // As at a root complex: requests share the posted-write queue.
                            let cap = match flow {
                                Flow::Write | Flow::ReadRequest => link.write_cap[dir],
                                Flow::ReadCompletion => link.read_cap[dir],
                            };
                            channels.extend(cap);
                        }
                    }
                }
            }
            let intermediate = k > 0 && k + 1 < path.len();
            if intermediate && let Some(t) = node.traverse {
                channels.push(t);
                if p2p && let NodeKind::RootComplex(r) = node.kind {
                    let spec = &self.spec.root_complexes[r];
                    let policy = if reads { spec.p2p_read } else { spec.p2p_write };
                    if policy == P2p::Refused {
                        return Err(RouteError::P2pRefused {
                            at: spec.name.clone(),
                            reads,
                        });
                    }
                    // Read caps limit the read data (completions); write caps the request
                    // queue, which read requests share with posted writes (so a read cannot
                    // overtake earlier writes, as PCIe ordering requires).
                    let cap = match flow {
                        Flow::Write | Flow::ReadRequest => self.rc_caps[r].1,
                        Flow::ReadCompletion => self.rc_caps[r].0,
                    };
                    channels.extend(cap);
                }
            }
        }
        Ok(Route {
            channels,
            mps: if mps == u64::MAX { 4096 } else { mps },
            p2p,
            class: self.class(from, to),
        })
    }

    /// Whether the path from `a` to `b` is NCCL's P2C: across an NVLink-C2C link and then PCIe
    /// within that socket (a Grace Hopper GPU and a NIC on a root port of its Grace).
    pub fn over_c2c(&self, a: Place, b: Place) -> bool {
        let hops = self.node_path(a, b, false);
        let c2c = hops
            .iter()
            .any(|&(_, e)| e.is_some_and(|e| matches!(self.edges[e].kind, EdgeKind::C2c { .. })));
        let sockets = hops
            .iter()
            .filter(|&&(n, _)| matches!(self.nodes[n].kind, NodeKind::Socket(_)))
            .count();
        c2c && sockets == 1
    }

    /// The `nvidia-smi topo -m` class of two places, from the structure of the path between them
    /// (ACS is a routing policy, not topology, so it does not change the class).
    pub fn class(&self, a: Place, b: Place) -> Affinity {
        let hops = self.node_path(a, b, false);
        // Over NVLink: NV# with # the narrowest bond crossed, as nvidia-smi counts the links.
        let bonds = hops.iter().filter_map(|&(_, e)| match self.edges[e?].kind {
            EdgeKind::NvLink { links, .. } => Some(links),
            _ => None,
        });
        if let Some(links) = bonds.min() {
            return Affinity::Nv(links);
        }
        let path: Vec<usize> = hops.iter().map(|h| h.0).collect();
        let sockets = path
            .iter()
            .filter(|&&n| matches!(self.nodes[n].kind, NodeKind::Socket(_)))
            .count();
        let first_socket = path
            .iter()
            .position(|&n| matches!(self.nodes[n].kind, NodeKind::Socket(_)));
        let last_socket = path
            .iter()
            .rposition(|&n| matches!(self.nodes[n].kind, NodeKind::Socket(_)));
        let inner = &path[1..path.len().saturating_sub(1).max(1)];
        let rcs = inner
            .iter()
            .filter(|&&n| matches!(self.nodes[n].kind, NodeKind::RootComplex(_)))
            .count();
        let switches = inner
            .iter()
            .filter(|&&n| matches!(self.nodes[n].kind, NodeKind::Switch(_)))
            .count();
        // An NVLink-C2C link is its GPU's host bridge: a NIC on a root port of the same socket
        // is NODE to it, as Grace Hopper systems print it.
        let rcs = rcs
            + hops
                .iter()
                .filter(|&&(_, e)| {
                    e.is_some_and(|e| matches!(self.edges[e].kind, EdgeKind::C2c { .. }))
                })
                .count();
        if sockets >= 2 && first_socket != last_socket {
            Affinity::Sys
        } else if rcs >= 2 {
            Affinity::Node
        } else if rcs == 1 || sockets == 1 {
            Affinity::Phb
        } else if switches <= 1 {
            Affinity::Pix
        } else {
            Affinity::Pxb
        }
    }
}

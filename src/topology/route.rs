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
    Write,
    ReadRequest,
    ReadCompletion,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub channels: Vec<ChannelId>,
    /// Effective MPS: the minimum over the PCIe links crossed.
    pub mps: u64,
    /// Whether both ends are devices (peer-to-peer).
    pub p2p: bool,
    /// nvidia-smi style class of the two ends.
    pub class: &'static str,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RouteError {
    /// Peer-to-peer traffic of this kind is refused by a root complex or socket link.
    P2pRefused { at: String, reads: bool },
    /// No cable or switch connects two NIC ports.
    NoCable { from: String, to: String },
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

impl HostTopo {
    /// Nodes from `place` up to (and including) its socket node.
    fn chain(&self, place: Place) -> Vec<usize> {
        match place {
            Place::Cpu(s) | Place::Memory(s) => vec![self.node_index(NodeKind::Socket(s))],
            Place::Device(mut n) => {
                let mut v = vec![n];
                while let Some((p, _, _)) = self.nodes[n].parent {
                    v.push(p);
                    n = p;
                }
                v.push(self.node_index(NodeKind::Socket(self.nodes[n].socket)));
                v
            }
        }
    }

    /// The node sequence from `from` to `to`, and whether it crosses between sockets.
    fn node_path(&self, from: Place, to: Place, acs: bool) -> Vec<usize> {
        let up = self.chain(from);
        let down = self.chain(to);
        let common = up.iter().position(|n| down.contains(n));
        match common {
            Some(i) => {
                let mut lca = up[i];
                // ACS redirect: P2P under a redirecting switch turns at the root complex instead.
                if acs {
                    while let NodeKind::Switch(s) = self.nodes[lca].kind {
                        if !self.spec.switches[s].acs_redirect {
                            break;
                        }
                        lca = self.nodes[lca].parent.map(|p| p.0).unwrap_or(lca);
                    }
                }
                let i = up.iter().position(|&n| n == lca).unwrap_or(i);
                let j = down
                    .iter()
                    .position(|&n| n == lca)
                    .expect("lca on both chains");
                let mut path: Vec<usize> = up[..=i].to_vec();
                path.extend(down[..j].iter().rev());
                path
            }
            None => {
                let mut path = up.clone();
                path.extend(down.iter().rev());
                path
            }
        }
    }

    /// The channels crossed from `from` to `to` for traffic of kind `flow`. Memory channels are
    /// not included (the caller adds the one it reads or commits to).
    pub fn route(&self, from: Place, to: Place, flow: Flow) -> Result<Route, RouteError> {
        let p2p = matches!((from, to), (Place::Device(_), Place::Device(_)));
        let path = self.node_path(from, to, p2p);
        let reads = flow != Flow::Write;
        let mut channels = Vec::new();
        let mut mps = u64::MAX;
        for (k, &n) in path.iter().enumerate() {
            let node = &self.nodes[n];
            if k > 0 {
                let prev = path[k - 1];
                if let Some((p, up_ch, _)) = self.nodes[prev].parent
                    && p == n
                {
                    channels.push(up_ch);
                    mps = mps.min(self.nodes[prev].link_mps);
                } else if let Some((p, _, down_ch)) = node.parent
                    && p == prev
                {
                    channels.push(down_ch);
                    mps = mps.min(node.link_mps);
                } else if let (NodeKind::Socket(a), NodeKind::Socket(b)) =
                    (self.nodes[prev].kind, node.kind)
                {
                    let link = self
                        .socket_links
                        .iter()
                        .find(|l| (l.a, l.b) == (a, b) || (l.a, l.b) == (b, a))
                        .expect("validated: sockets are linked");
                    let dir = usize::from(link.a != a);
                    channels.push(if dir == 0 {
                        link.forward
                    } else {
                        link.backward
                    });
                    if p2p {
                        let spec = self
                            .spec
                            .socket_links
                            .iter()
                            .find(|l| {
                                let (x, y) = (self.socket_index(&l.a), self.socket_index(&l.b));
                                (x, y) == (Some(link.a), Some(link.b))
                            })
                            .expect("socket link spec");
                        let policy = if reads { spec.p2p_read } else { spec.p2p_write };
                        if policy == P2p::Refused {
                            return Err(RouteError::P2pRefused {
                                at: format!("{}-{}", spec.a, spec.b),
                                reads,
                            });
                        }
                        let cap = if reads {
                            link.read_cap[dir]
                        } else {
                            link.write_cap[dir]
                        };
                        channels.extend(cap);
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

    /// The `nvidia-smi topo -m` class of two places, from the structure of the path between them
    /// (ACS is a routing policy, not topology, so it does not change the class).
    pub fn class(&self, a: Place, b: Place) -> &'static str {
        let path = self.node_path(a, b, false);
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
        if sockets >= 2 && first_socket != last_socket {
            "SYS"
        } else if rcs >= 2 {
            "NODE"
        } else if rcs == 1 || sockets == 1 {
            "PHB"
        } else if switches <= 1 {
            "PIX"
        } else {
            "PXB"
        }
    }
}

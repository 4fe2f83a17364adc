//! Who does a step's work: a device of a host, as a typed value.
//!
//! A plan names the device each step runs on so that records (spans, descriptors) say who did
//! what. The name a report shows ("node-a/cpu0.cpu", "node-b/gpu3.sm") is made in one place,
//! [`Actor::name`], from the topology's host and device names, instead of by `format!` at every
//! plan builder; plans compare actors as values.

use crate::topology::Topology;

/// A device that executes steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Actor {
    /// The CPU threads of socket `socket` of host `host` (posts, polls, copy calls).
    Cpu {
        /// The host's index in the topology.
        host: usize,
        /// The socket's index in the host's machine.
        socket: usize,
    },
    /// NIC `nic` of host `host` (WQE fetches, DMA, CQEs).
    Nic {
        /// The host's index in the topology.
        host: usize,
        /// The NIC's index in the host's machine.
        nic: usize,
    },
    /// The copy engines of GPU `gpu` of host `host` (cudaMemcpy).
    CopyEngine {
        /// The host's index in the topology.
        host: usize,
        /// The GPU's index in the host's machine.
        gpu: usize,
    },
    /// The SMs of GPU `gpu` of host `host` (kernels: NCCL's stores, loads and reductions).
    Sm {
        /// The host's index in the topology.
        host: usize,
        /// The GPU's index in the host's machine.
        gpu: usize,
    },
    /// The network between hosts (packets on the wire).
    Network,
}

impl Actor {
    /// The actor's name in records and reports: the host's name, a slash and the device's
    /// name with its kind (`.cpu`, `.ce`, `.sm`; a NIC by its own name), or "network".
    pub fn name(self, topo: &Topology) -> String {
        let host = |h: usize| &topo.hosts[h];
        match self {
            Actor::Cpu { host: h, socket } => {
                format!("{}/{}.cpu", host(h).name, host(h).spec.sockets[socket].name)
            }
            Actor::Nic { host: h, nic } => {
                format!("{}/{}", host(h).name, host(h).spec.nics[nic].name)
            }
            Actor::CopyEngine { host: h, gpu } => {
                format!("{}/{}.ce", host(h).name, host(h).spec.gpus[gpu].name)
            }
            Actor::Sm { host: h, gpu } => {
                format!("{}/{}.sm", host(h).name, host(h).spec.gpus[gpu].name)
            }
            Actor::Network => "network".into(),
        }
    }
}

//! What one simulation is asked to do: the message size, where each side's buffers are, which
//! copies are staged, and how finely to move data. Built by the scenario layer from a path name;
//! the components only execute it.

use crate::units::Ps;

/// Where a NIC reads or writes the payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buffer {
    /// Pinned host memory on `socket` at address `addr` (virtual = physical here: pinned pages
    /// are identity-mapped by the model's address map).
    Host { socket: usize, addr: u64 },
    /// GPU memory: virtual address `va`, bus address `bus` (va + BAR offset).
    Gpu { gpu: usize, va: u64, bus: u64 },
}

impl Buffer {
    pub fn is_gpu(&self) -> bool {
        matches!(self, Buffer::Gpu { .. })
    }
    /// Address the NIC puts in its DMA descriptor (after MTT translation).
    pub fn dma_addr(&self) -> u64 {
        match *self {
            Buffer::Host { addr, .. } => addr,
            Buffer::Gpu { bus, .. } => bus,
        }
    }
    /// Address the application posted (before translation).
    pub fn virt_addr(&self) -> u64 {
        match *self {
            Buffer::Host { addr, .. } => addr,
            Buffer::Gpu { va, .. } => va,
        }
    }
}

/// A cudaMemcpy between the user's GPU buffer and a pinned host bounce buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Staging {
    pub gpu: usize,
    pub gpu_va: u64,
    pub bounce_socket: usize,
    pub bounce_addr: u64,
}

/// One side (sender or receiver) of a transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SidePlan {
    /// The host (index into the topology's hosts).
    pub host: usize,
    /// The NIC used (index into the machine's NICs).
    pub nic: usize,
    /// Socket of the CPU thread driving the verbs (and of the queues and CQs in host memory).
    pub cpu_socket: usize,
    /// Where the NIC reads (sender) or writes (receiver) the payload.
    pub nic_buffer: Buffer,
    /// Host staging copy on this side, if any.
    pub staging: Option<Staging>,
    /// Registration cost paid per transfer on this side (0 with a registration cache).
    pub register: Ps,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    pub size: u64,
    pub sender: SidePlan,
    pub receiver: SidePlan,
    /// GPUDirect receive flush (a loopback RDMA Read of the receive buffer) before the data
    /// counts as visible.
    pub flush: bool,
}

/// How the engine should move data and what it should record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimOptions {
    /// Force TLP-by-TLP and packet-by-packet movement for every size.
    pub tlp_granularity: bool,
    /// Messages above this size move in coalesced bursts.
    pub coalesce_above: u64,
    pub burst_bytes: u64,
    pub jitter: bool,
    pub seed: u64,
    /// Keep spans and descriptors (the noise-free message); off for iterations and streaming.
    pub record: bool,
}

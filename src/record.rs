//! What components leave behind: timed spans of work and the DMA descriptors the NICs build.
//!
//! Components push records as they simulate; nothing downstream (stats, report) needs to know how
//! they were produced. Times are integer picoseconds.

use crate::units::Ps;

/// The fixed vocabulary of stages, in pipeline order. The order matters: where spans overlap, the
/// critical-path attribution gives the overlap to the stage furthest down the pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    Register,
    MemcpyD2h,
    Post,
    WqeFetch,
    DmaRead,
    NicTx,
    Wire,
    NicRx,
    DmaWrite,
    Cqe,
    Poll,
    Flush,
    MemcpyH2d,
}

impl Stage {
    pub const ALL: [Stage; 13] = [
        Stage::Register,
        Stage::MemcpyD2h,
        Stage::Post,
        Stage::WqeFetch,
        Stage::DmaRead,
        Stage::NicTx,
        Stage::Wire,
        Stage::NicRx,
        Stage::DmaWrite,
        Stage::Cqe,
        Stage::Poll,
        Stage::Flush,
        Stage::MemcpyH2d,
    ];

    /// The name used in stages.csv.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Register => "register",
            Stage::MemcpyD2h => "memcpy_d2h",
            Stage::Post => "post",
            Stage::WqeFetch => "wqe_fetch",
            Stage::DmaRead => "dma_read",
            Stage::NicTx => "nic_tx",
            Stage::Wire => "wire",
            Stage::NicRx => "nic_rx",
            Stage::DmaWrite => "dma_write",
            Stage::Cqe => "cqe",
            Stage::Poll => "poll",
            Stage::Flush => "flush",
            Stage::MemcpyH2d => "memcpy_h2d",
        }
    }

    pub fn from_name(name: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// One piece of work done for one message by one component.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub msg: u32,
    pub stage: Stage,
    /// Which component did it, e.g. `node-a/nic0` or `node-a/pcie:sw0>nic0`.
    pub component: u32,
    pub start: Ps,
    pub end: Ps,
    /// Payload bytes moved by this span (0 for control work).
    pub bytes: u64,
}

/// A DMA descriptor as a NIC builds it (the seed program's `DmaDescriptor`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Descriptor {
    pub msg: u32,
    /// The NIC that built it.
    pub component: u32,
    pub at: Ps,
    /// Source address for a gather (send) descriptor, destination for a scatter (receive) one.
    pub addr: u64,
    pub len: u64,
    /// Bit 0: 0 = host memory, 1 = GPU memory through GPUDirect (as in the seed).
    pub flags: u32,
    pub direction: DescriptorDir,
    /// Virtual address the application posted, before the NIC's MTT translation.
    pub virt_addr: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DescriptorDir {
    /// The sending NIC reads (gathers) the payload from here.
    Gather,
    /// The receiving NIC writes (scatters) the payload to here.
    Scatter,
}

/// Everything recorded during one simulation, plus the names spans refer to.
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    pub enabled: bool,
    pub spans: Vec<Span>,
    pub descriptors: Vec<Descriptor>,
    pub component_names: Vec<String>,
}

impl Recorder {
    pub fn new(enabled: bool, component_names: Vec<String>) -> Self {
        Recorder { enabled, spans: Vec::new(), descriptors: Vec::new(), component_names }
    }

    #[inline]
    pub fn span(&mut self, msg: u32, stage: Stage, component: u32, start: Ps, end: Ps, bytes: u64) {
        if self.enabled {
            debug_assert!(end >= start, "span {stage:?} ends before it starts");
            self.spans.push(Span { msg, stage, component, start, end, bytes });
        }
    }

    pub fn descriptor(&mut self, d: Descriptor) {
        if self.enabled {
            self.descriptors.push(d);
        }
    }

    pub fn component_name(&self, id: u32) -> &str {
        self.component_names.get(id as usize).map_or("?", String::as_str)
    }
}

//! What components leave behind: timed spans of work and the DMA descriptors the NICs build.
//!
//! Components push records as they simulate; nothing downstream (stats, report) needs to know how
//! they were produced. Times are integer picoseconds.

use std::sync::Arc;

use crate::ids::{ChannelId, StepId};
use crate::plan::Movement;
use crate::topology::Unit;
use crate::units::Ps;

/// The fixed vocabulary of stages, in pipeline order. The order matters: where spans overlap, the
/// critical-path attribution gives the overlap to the stage furthest down the pipeline.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Stage {
    /// Memory registration inside the latency (registration per transfer): base plus per-page cost.
    Register,
    /// cudaMemcpy from GPU memory into the host bounce buffer (staged paths): launch, copy engine
    /// DMA, sync.
    MemcpyD2h,
    /// GDRCopy: the sending thread reads the GPU buffer through its BAR1 mapping into host memory.
    GdrcopyRead,
    /// The CPU builds the WQE and rings the doorbell (MMIO, BlueFlame with inline payloads).
    Post,
    /// The NIC reads the WQE by DMA after a plain 8-byte doorbell.
    WqeFetch,
    /// An RDMA Read's request packet crossing from the requester to the data's NIC.
    ReadRequest,
    /// The NIC's payload DMA read (requests out, completions back) under its read window.
    DmaRead,
    /// The send engine: WQE processing, MTT lookup, packetisation and the TX pipeline.
    NicTx,
    /// Serialisation on the network and its switches and cables.
    Wire,
    /// The receive engine: RX pipeline and MTT lookup.
    NicRx,
    /// The receiving NIC's posted DMA writes of the payload into memory.
    DmaWrite,
    /// The NIC writes the completion queue entry into host memory.
    Cqe,
    /// The CPU busy-polls the completion (and reposts the receive).
    Poll,
    /// GPUDirect's flush: a 1-byte RDMA Read that makes the written data visible to the GPU.
    Flush,
    /// cudaMemcpy from the host bounce buffer into GPU memory (staged paths).
    MemcpyH2d,
    /// GDRCopy: the receiving thread writes the host buffer into GPU memory through BAR1.
    GdrcopyWrite,
    /// cudaMemcpyPeer between two GPUs of a host (or within one): launch, copy engine DMA over
    /// NVLink, PCIe peer-to-peer or through a host buffer, completion. Last, so that the
    /// stages of the network paths keep their numbers.
    MemcpyPeer,
    /// NCCL's PXN: the sending GPU's kernel stores the payload into the buffer of the GPU next
    /// to the NIC (its relay) over NVLink, then its flag into the proxy's host memory, which
    /// the proxy thread polls before it posts the RDMA from the relay's memory.
    Relay,
    /// A workload flow's reduction on its sending GPU between the delivery of the data it
    /// waited for and its own post (`reduce = true`): launch plus bytes at `reduce_gbps`.
    Reduce,
    /// A workload message waiting for a slot of its flow's window: the send completion of an
    /// earlier message of the flow, after that message was delivered.
    Window,
    /// NCCL's host path (no GPUDirect), sending side: the GPU's kernel stores the chunk into
    /// pinned, mapped host memory over PCIe, then its flag, which the proxy thread polls
    /// before it posts the RDMA from host memory. No cudaMemcpy.
    KernelStore,
    /// NCCL's host path, receiving side: the GPU's kernel, spinning on the flag the proxy
    /// stores into mapped host memory after its poll, sees it by a load over PCIe, then loads
    /// the chunk from host memory into the GPU buffer.
    KernelLoad,
    /// NCCL's P2P transport inside a node: the sending GPU's kernel stores a slice into the
    /// receiving GPU's buffer over NVLink or PCIe, then its tail flag, which the receiving
    /// kernel sees by polling its own memory.
    P2p,
}

impl Stage {
    /// Every stage, in pipeline order (the declaration order).
    pub const ALL: [Stage; 23] = [
        Stage::Register,
        Stage::MemcpyD2h,
        Stage::GdrcopyRead,
        Stage::Post,
        Stage::WqeFetch,
        Stage::ReadRequest,
        Stage::DmaRead,
        Stage::NicTx,
        Stage::Wire,
        Stage::NicRx,
        Stage::DmaWrite,
        Stage::Cqe,
        Stage::Poll,
        Stage::Flush,
        Stage::MemcpyH2d,
        Stage::GdrcopyWrite,
        Stage::MemcpyPeer,
        Stage::Relay,
        Stage::Reduce,
        Stage::Window,
        Stage::KernelStore,
        Stage::KernelLoad,
        Stage::P2p,
    ];

    /// The name used in stages.csv.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Register => "register",
            Stage::MemcpyD2h => "memcpy_d2h",
            Stage::GdrcopyRead => "gdrcopy_read",
            Stage::Post => "post",
            Stage::WqeFetch => "wqe_fetch",
            Stage::ReadRequest => "read_request",
            Stage::DmaRead => "dma_read",
            Stage::NicTx => "nic_tx",
            Stage::Wire => "wire",
            Stage::NicRx => "nic_rx",
            Stage::DmaWrite => "dma_write",
            Stage::Cqe => "cqe",
            Stage::Poll => "poll",
            Stage::Flush => "flush",
            Stage::MemcpyH2d => "memcpy_h2d",
            Stage::GdrcopyWrite => "gdrcopy_write",
            Stage::MemcpyPeer => "memcpy_peer",
            Stage::Relay => "relay",
            Stage::Reduce => "reduce",
            Stage::Window => "window",
            Stage::KernelStore => "kernel_store",
            Stage::KernelLoad => "kernel_load",
            Stage::P2p => "p2p",
        }
    }

    /// The stage whose [`Stage::name`] is `name` (as in stages.csv), if any.
    pub fn from_name(name: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// One stage of one message, as the first and the last byte saw it.
///
/// A streaming stage (DMA, wire) is entered by the message's first byte at `start` and left by
/// it at `first_out`; the last byte enters at `last_in` and leaves at `end`. Control stages have
/// `first_out == end` and `last_in == start`. The critical-path attribution needs all four: a
/// stage that held the last byte longer than the first was the bottleneck.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    /// The flow of the point it belongs to (0 for a one-flow point).
    pub flow: u32,
    /// The message of that flow's stream.
    pub msg: u32,
    /// The plan step it records.
    pub step: StepId,
    /// What kind of work it was.
    pub stage: Stage,
    /// Which component did it (index into [`Recorder::component_names`]).
    pub component: u32,
    /// When the first byte entered the stage, in picoseconds.
    pub start: Ps,
    /// When the first byte left it, in picoseconds.
    pub first_out: Ps,
    /// When the last byte entered it, in picoseconds.
    pub last_in: Ps,
    /// When the last byte left it (the stage's end), in picoseconds.
    pub end: Ps,
    /// Payload bytes moved by this stage (0 for control work).
    pub bytes: u64,
}

impl Span {
    /// A control stage: one piece of work from `start` to `end`.
    pub fn control(
        msg: u32,
        step: StepId,
        stage: Stage,
        component: u32,
        start: Ps,
        end: Ps,
    ) -> Span {
        Span {
            flow: 0,
            msg,
            step,
            stage,
            component,
            start,
            first_out: end,
            last_in: start,
            end,
            bytes: 0,
        }
    }
}

/// A DMA descriptor as a NIC builds it (the seed program's `DmaDescriptor`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Descriptor {
    /// The message it belongs to.
    pub msg: u32,
    /// The plan step that built it.
    pub step: StepId,
    /// The NIC that built it.
    pub component: u32,
    /// When the NIC built it, in picoseconds.
    pub at: Ps,
    /// Source address for a gather (send) descriptor, destination for a scatter (receive) one.
    pub addr: u64,
    /// Bytes it covers.
    pub len: u64,
    /// Bit 0: 0 = host memory, 1 = GPU memory through GPUDirect (as in the seed).
    pub flags: u32,
    /// Whether the NIC reads (gathers) or writes (scatters) through it.
    pub direction: DescriptorDir,
    /// Virtual address the application posted, before the NIC's MTT translation.
    pub virt_addr: u64,
}

/// Which way a [`Descriptor`] moves the payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DescriptorDir {
    /// The sending NIC reads (gathers) the payload from here.
    Gather,
    /// The receiving NIC writes (scatters) the payload to here.
    Scatter,
}

/// Data crossing one channel: a unit (a TLP or a packet) during its service, or a bulk transfer
/// during a stretch at one rate. The raw material of timelines and link checks. Channel ids index
/// [`Recorder::component_names`] directly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hop {
    /// The flow of the point it belongs to.
    pub flow: u32,
    /// The message of that flow's stream.
    pub msg: u32,
    /// The plan step it belongs to.
    pub step: StepId,
    /// Identifies the train across its hops (for flow arrows); unique within a run.
    pub train: u64,
    /// The channel that carried it.
    pub channel: ChannelId,
    /// When the channel started and stopped carrying it (its service; for a bulk transfer, the
    /// stretch at one rate, the channel carrying it evenly).
    pub start: Ps,
    /// When the channel stopped carrying it, in picoseconds.
    pub end: Ps,
    /// Message payload bytes it carried (headers excluded).
    pub payload: u64,
    /// Units (1; 0 for a bulk stretch, whose TLPs or packets are not counted one by one).
    pub units: u64,
    /// Bytes it put on the channel, headers included.
    pub wire: u64,
    /// What its units were on this channel (requests and completions of a read differ).
    pub unit: Unit,
    /// What the train is for.
    pub what: Movement,
}

/// Everything recorded during one simulation, plus the names spans refer to.
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    /// Whether anything is kept: off, every push is dropped (iterations and streaming runs).
    pub enabled: bool,
    /// Whether hops and descriptors are kept too (walks and traces; see
    /// [`crate::components::SimOptions::traffic`]).
    pub traffic: bool,
    /// Spans of every message's steps, in the order they were pushed.
    pub spans: Vec<Span>,
    /// DMA descriptors the NICs built.
    pub descriptors: Vec<Descriptor>,
    /// Data crossing channels, one record per unit and channel (or bulk stretch).
    pub hops: Vec<Hop>,
    /// Names of the components that spans, descriptors and hops refer to by id: the topology's
    /// channels first (so a channel id is its own index), then the plans' actors.
    pub component_names: Names,
}

/// Component names: the topology's channel names, shared with it (a fabric's recorder costs
/// the same on 2 hosts as on 128), then the actors' own.
#[derive(Clone, Debug, Default)]
pub struct Names {
    channels: Arc<[String]>,
    actors: Vec<String>,
}

impl Names {
    /// The channels' names `channels`, and no actor yet.
    pub fn new(channels: Arc<[String]>) -> Self {
        Names {
            channels,
            actors: Vec::new(),
        }
    }

    /// Names another component: its id is the number of names before it.
    pub fn push(&mut self, name: String) -> u32 {
        self.actors.push(name);
        (self.len() - 1) as u32
    }

    /// Names in all.
    pub fn len(&self) -> usize {
        self.channels.len() + self.actors.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The name of component `id`, if there is one.
    pub fn get(&self, id: u32) -> Option<&str> {
        let id = id as usize;
        match id.checked_sub(self.channels.len()) {
            None => Some(&self.channels[id]),
            Some(a) => self.actors.get(a).map(String::as_str),
        }
    }
}

impl Recorder {
    /// A recorder, keeping records only when `enabled` (hops and descriptors only with
    /// `traffic` too), that names components `component_names`.
    pub fn new(enabled: bool, traffic: bool, component_names: Names) -> Self {
        Recorder {
            enabled,
            traffic: enabled && traffic,
            spans: Vec::new(),
            descriptors: Vec::new(),
            hops: Vec::new(),
            component_names,
        }
    }

    /// Keeps `span` (when enabled).
    #[inline]
    pub fn span(&mut self, span: Span) {
        if self.enabled {
            debug_assert!(
                span.end >= span.start,
                "span {:?} ends before it starts",
                span.stage
            );
            self.spans.push(span);
        }
    }

    /// Keeps `d` (when keeping the traffic).
    pub fn descriptor(&mut self, d: Descriptor) {
        if self.traffic {
            self.descriptors.push(d);
        }
    }

    /// The name of component `id` ("?" for an id it does not know).
    pub fn component_name(&self, id: u32) -> &str {
        self.component_names.get(id).unwrap_or("?")
    }
}

//! What a train is for: the typed name of each movement of data or control a step makes, which
//! hop records carry so that `walk` and `trace` read what happened without matching strings.

use super::{Copy, CqeKind, PacketKind, Plan, StepId, StepKind};

/// One kind of train: a step's own movement, or one phase of a step that moves several.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Movement {
    /// The MMIO write of a post (BlueFlame WQE or doorbell).
    Mmio,
    /// The NIC's DMA read of a WQE after a doorbell.
    WqeFetch,
    /// A WQE through the NIC's send engine.
    SendEngine,
    /// A DMA read of data (requests out, completions back): the payload, or a flush's byte.
    PayloadRead,
    /// Packets through the transmit pipeline.
    Tx,
    /// Packets across the network.
    Wire,
    /// Packets through the receive pipeline.
    Rx,
    /// A DMA write of data: the payload, or a flush's byte into host memory.
    PayloadWrite,
    /// A header-only packet.
    Packet(PacketKind),
    /// A NIC's write of a completion queue entry.
    Cqe(CqeKind),
    /// cudaMemcpy device to host: the copy engine's writes.
    D2h,
    /// cudaMemcpy host to device: the copy engine's reads of host memory ...
    H2dRead,
    /// ... and its writes into GPU memory.
    H2dWrite,
    /// GDRCopy into the GPU: the CPU's write-combined stores through BAR1 into GPU memory.
    WcStores,
}

impl Movement {
    /// A short name for traces.
    pub fn name(self) -> &'static str {
        match self {
            Movement::Mmio => "MMIO post",
            Movement::WqeFetch => "WQE fetch",
            Movement::SendEngine => "send engine",
            Movement::PayloadRead => "payload read",
            Movement::Tx => "tx pipeline",
            Movement::Wire => "wire",
            Movement::Rx => "rx pipeline",
            Movement::PayloadWrite => "payload write",
            Movement::Packet(PacketKind::Ack) => "ACK",
            Movement::Packet(PacketKind::ReadRequest) => "read request",
            Movement::Cqe(CqeKind::Recv) => "receive CQE",
            Movement::Cqe(CqeKind::Send) => "send CQE",
            Movement::Cqe(CqeKind::Flush) => "flush CQE",
            Movement::Cqe(CqeKind::Read) => "read CQE",
            Movement::D2h => "memcpy D2H",
            Movement::H2dRead => "memcpy H2D read",
            Movement::H2dWrite => "memcpy H2D write",
            Movement::WcStores => "GDRCopy stores",
        }
    }

    /// Whether it is a DMA read (its hops carry requests, then completions).
    pub fn is_read(self) -> bool {
        matches!(
            self,
            Movement::PayloadRead | Movement::WqeFetch | Movement::H2dRead
        )
    }

    /// Whether it carries data (rather than control structures); whether that data is the
    /// message's payload is the step's [`super::Step::payload`].
    pub fn carries_data(self) -> bool {
        matches!(
            self,
            Movement::PayloadRead
                | Movement::PayloadWrite
                | Movement::D2h
                | Movement::H2dRead
                | Movement::H2dWrite
        )
    }
}

impl Plan {
    /// What a train of `step` in `phase` is.
    pub fn movement(&self, step: StepId, phase: u8) -> Movement {
        match (&self.steps[step.index()].kind, phase) {
            (StepKind::Post { .. }, _) => Movement::Mmio,
            (StepKind::WqeFetch { .. } | StepKind::RecvWqeFetch { .. }, 0) => Movement::WqeFetch,
            (StepKind::WqeFetch { .. }, _) => Movement::SendEngine,
            (StepKind::DmaRead { .. }, _) => Movement::PayloadRead,
            (StepKind::NicTx { .. }, _) => Movement::Tx,
            (StepKind::Wire { .. }, _) => Movement::Wire,
            (StepKind::NicRx { .. }, _) => Movement::Rx,
            (StepKind::DmaWrite { .. }, _) => Movement::PayloadWrite,
            (StepKind::Packet { what, .. }, _) => Movement::Packet(*what),
            (StepKind::Cqe { kind, .. }, _) => Movement::Cqe(*kind),
            (StepKind::CpuCopy { .. }, _) => Movement::WcStores,
            (StepKind::Memcpy { copy, .. } | StepKind::KernelCopy { copy, .. }, phase) => {
                match (copy, phase) {
                    (Copy::D2h { .. }, _) => Movement::D2h,
                    (Copy::H2d { .. }, 0) => Movement::H2dRead,
                    (Copy::H2d { .. }, _) => Movement::H2dWrite,
                }
            }
            (kind, _) => unreachable!("{kind:?} moves nothing"),
        }
    }
}

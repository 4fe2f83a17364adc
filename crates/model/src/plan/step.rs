//! The step vocabulary: every kind of work a message's plan can ask a device to do.

use super::{Buffer, Dep, GpuRef, NicRef, PlanRoute, StepId};
use crate::record::Stage;
use crate::topology::{ChannelId, ReadEngineId};
use crate::units::Ps;

/// One step of a plan.
#[derive(Clone, Debug)]
pub struct Step {
    /// What the step does, and on which device and routes.
    pub kind: StepKind,
    /// The stages.csv stage it reports as (None: off the one-way path, not reported).
    pub stage: Option<Stage>,
    /// Actor it is recorded against (index into [`super::Plan::actors`]).
    pub actor: u32,
    /// Milestones of earlier steps it waits for before it starts.
    pub deps: Vec<Dep>,
    /// The step whose output data streams into this one (it starts on its first byte).
    pub input: Option<StepId>,
    /// Data bytes it moves (the message size for payload steps, 1 for a flush read; 0 for
    /// control work).
    pub bytes: u64,
    /// Whether those bytes are the message's payload (host-memory bytes, PCIe crossings),
    /// rather than control data such as the flush's byte.
    pub payload: bool,
}

/// A DMA read under a requester's outstanding-read window: requests go out on `req`, the
/// completer's memory and the completions come back on `cpl`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadSpec {
    /// The read engine (window) of the requester.
    pub engine: ReadEngineId,
    /// The route of the read requests, requester to completer's memory.
    pub req: PlanRoute,
    /// The route of the completions, completer's memory back to the requester.
    pub cpl: PlanRoute,
    /// Largest read request.
    pub mrrs: u64,
    /// Largest completion payload (the effective MPS of the completion route).
    pub mps: u64,
}

impl ReadSpec {
    /// Largest completion one of its requests is answered with: MPS, or the whole request
    /// where MRRS is below MPS (a 512-byte request under MPS 4096 comes back in one
    /// 512-byte completion, with its own header).
    pub fn completion(&self) -> u64 {
        self.mps.min(self.mrrs)
    }
}

/// What a DMA descriptor names: the buffer and the length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gather {
    /// The buffer and its addresses.
    pub buffer: Buffer,
    /// Bytes it covers.
    pub len: u64,
}

/// The data movement of a cudaMemcpy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Copy {
    /// Device to host: the copy engine posts writes along `route` (GPU memory, PCIe, DRAM).
    D2h {
        /// The route of the writes, GPU memory to host DRAM.
        route: PlanRoute,
        /// Largest write payload (the route's effective MPS), in bytes.
        mps: u64,
    },
    /// Host to device: the copy engine reads host memory under its window, then commits the
    /// data into GPU memory on `commit`.
    H2d {
        /// The copy engine's read of host memory.
        read: ReadSpec,
        /// The route of the writes into GPU memory.
        commit: PlanRoute,
    },
}

/// The CUDA driver's CPU copy of a cudaMemcpy with pageable host memory: the calling thread's
/// extra time, and the DRAM channel its loads and stores (twice the size) pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DriverCopy {
    /// The calling thread's extra time, in picoseconds.
    pub cost: Ps,
    /// The host DRAM channel the copy's loads and stores pass.
    pub dram: ChannelId,
}

/// Which completion queue entry a NIC writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CqeKind {
    /// The receive completion of a Write with Immediate (what the receiving thread polls).
    Recv,
    /// The send completion (after the RC ACK): frees the sender's window slot.
    Send,
    /// The completion of the GPUDirect flush read.
    Flush,
    /// The requester's completion of an RDMA Read (after the last response is written).
    Read,
}

/// What a header-only packet is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PacketKind {
    /// The receiver's RC acknowledgement.
    Ack,
    /// An RDMA Read request.
    ReadRequest,
}

/// The kinds of work.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepKind {
    /// ibv_reg_mr of a buffer on the thread, paid per transfer.
    Register {
        /// The thread that registers (index into [`super::Plan::threads`]).
        thread: u16,
        /// The registration's cost (base plus per page), in picoseconds.
        cost: Ps,
    },
    /// The thread copies between GPU memory and a host buffer through the GPU's BAR1 mapping
    /// (GDRCopy): busy for `cost`; the host side of the copy moves `bytes` through the DRAM
    /// channel `dram` (counted in its payload bytes; at a CPU's copy rate it never binds it).
    /// A copy into the GPU (`store`) is done when its last write-combined stores have crossed
    /// PCIe into GPU memory, not when the thread has issued them (its loads out of the GPU wait
    /// for their data, so a copy out of it is done when the thread is).
    CpuCopy {
        /// The copying thread (index into [`super::Plan::threads`]).
        thread: u16,
        /// How long the copy keeps it busy, in picoseconds.
        cost: Ps,
        /// The host DRAM channel the host side of the copy passes.
        dram: ChannelId,
        /// Bytes the copy moves through `dram`.
        bytes: u64,
        /// Into the GPU: the route of the stores (CPU, PCIe, GPU memory) and the bytes still
        /// on their way when the thread returns (the last write-combining buffer).
        store: Option<(PlanRoute, u64)>,
    },
    /// A cudaMemcpy: launched by the thread, moved by the GPU's copy engine, then signalled.
    /// Synchronous (`blocking`): the thread spins until it returns. Asynchronous
    /// (cudaMemcpyAsync on a stream): the thread is free after the launch and the copy is done
    /// when its completion is signalled (the thread polls an event among its other work).
    /// With pageable host memory (`driver`), the CUDA driver adds its CPU copy through its own
    /// pinned buffer: before the DMA for H2D, after it for D2H.
    Memcpy {
        /// The calling thread (index into [`super::Plan::threads`]).
        thread: u16,
        /// The GPU whose copy engine moves the data.
        gpu: GpuRef,
        /// The copy engine's data movement (direction and routes).
        copy: Copy,
        /// cudaMemcpy (the thread spins until it returns) rather than cudaMemcpyAsync.
        blocking: bool,
        /// The driver's CPU copy, with pageable host memory.
        driver: Option<DriverCopy>,
    },
    /// A copy by the GPU's own SMs inside a kernel that is already running (NCCL's PXN: the
    /// sending GPU stores a chunk into its relay GPU's buffer over NVLink, then its flag into
    /// the proxy's host memory): no launch, no CPU thread, no completion signalling; it starts
    /// when its dependencies are met and is done when its last byte has landed.
    KernelCopy {
        /// The GPU whose SMs move the data.
        gpu: GpuRef,
        /// The data movement (posted writes along a route, as a copy engine's D2H).
        copy: Copy,
    },
    /// The thread builds and posts a send WQE; its MMIO write (the BlueFlame WQE, or an 8-byte
    /// doorbell) travels to the NIC. For an inline send the CPU reads the payload from `inline`
    /// DRAM into the WQE.
    Post {
        /// The posting thread (index into [`super::Plan::threads`]).
        thread: u16,
        /// The route of the MMIO write from the CPU to the NIC.
        mmio: PlanRoute,
        /// Bytes of the MMIO write (the BlueFlame WQE with any inline payload, or the doorbell).
        bytes: u64,
        /// For an inline send, the DRAM channel the CPU reads the payload from.
        inline: Option<ChannelId>,
    },
    /// The NIC obtains the WQE (by DMA after a doorbell: `fetch` with the bytes it reads) and
    /// passes it through its send engine, then builds the gather descriptor (where the data
    /// it sends is local: not for an RDMA Read, whose responder builds it).
    WqeFetch {
        /// The NIC.
        nic: NicRef,
        /// After a doorbell: the DMA read of the WQE and the bytes it reads (None: BlueFlame).
        fetch: Option<(ReadSpec, u64)>,
        /// The route through the NIC's send engine.
        engine: PlanRoute,
        /// Size of the WQE, in bytes.
        wqe_bytes: u64,
        /// The gather descriptor it builds (None for an RDMA Read's requester).
        gather: Option<Gather>,
    },
    /// The NIC reads the payload by DMA (after its MTT lookup). An RDMA Read's responder builds
    /// its gather descriptor (`gather`) from the request when it arrives.
    DmaRead {
        /// The reading NIC.
        nic: NicRef,
        /// The read: engine (window), request and completion routes, MRRS and MPS.
        read: ReadSpec,
        /// The descriptor an RDMA Read's responder builds when the request arrives.
        gather: Option<Gather>,
    },
    /// The receiving NIC fetches a pre-posted receive WQE (`bytes`) from the receive queue by
    /// DMA: the scatter address of a Send.
    RecvWqeFetch {
        /// The receiving NIC.
        nic: NicRef,
        /// The DMA read of the receive WQE.
        read: ReadSpec,
        /// Size of the receive WQE, in bytes.
        bytes: u64,
    },
    /// The NIC packetises by MTU and passes its transmit pipeline.
    NicTx {
        /// The sending NIC.
        nic: NicRef,
        /// The route through its transmit pipeline.
        route: PlanRoute,
    },
    /// Packets cross the network.
    Wire {
        /// The network route, NIC to NIC (wires, switches, cables).
        route: PlanRoute,
    },
    /// The receiving NIC's receive pipeline.
    NicRx {
        /// The route through the receive pipeline.
        route: PlanRoute,
    },
    /// The receiving NIC writes the payload by DMA (after its MTT lookup).
    DmaWrite {
        /// The writing NIC.
        nic: NicRef,
        /// The route of the posted writes, NIC to memory.
        route: PlanRoute,
        /// Largest write payload (the route's effective MPS), in bytes.
        mps: u64,
        /// The scatter descriptor: where the payload lands.
        scatter: Gather,
    },
    /// A NIC writes a completion entry into its host's CQ.
    Cqe {
        /// The NIC that writes it.
        nic: NicRef,
        /// Which completion it is.
        kind: CqeKind,
        /// The route of its write into host memory.
        route: PlanRoute,
    },
    /// The thread polls its CQ and finds the entry (`extra`: reposting a receive WQE).
    Poll {
        /// The polling thread (index into [`super::Plan::threads`]).
        thread: u16,
        /// Work after finding the entry (reposting a receive WQE), in picoseconds.
        extra: Ps,
    },
    /// A header-only packet of `bytes` along `route` (an ACK back to the sender; a read
    /// request, through the network or a NIC's own pipelines on a loopback QP).
    Packet {
        /// The route it takes.
        route: PlanRoute,
        /// Its size on the wire, in bytes.
        bytes: u64,
        /// What it is.
        what: PacketKind,
    },
    /// A fixed delay on no shared resource: a GPU kernel spinning on a flag in its own memory
    /// sees the flag one memory access after it lands.
    Wait {
        /// The delay, in picoseconds.
        ps: Ps,
    },
    /// A posted write's place behind the data before it on a shared route (a receive CQE
    /// behind the payload in host memory): done `gap` after `data` lands where that data moved
    /// as a bulk transfer, whose tail the fluid sharing lets a unit pass; done as it lands where
    /// it moved TLP by TLP, whose servers keep the order themselves.
    Ordered {
        /// The data step (a DMA write) the write is ordered behind.
        data: StepId,
        /// How long after the data's last byte the write lands on an idle route, in picoseconds.
        gap: Ps,
    },
    /// The data is visible to its consumer: the one-way latency ends here.
    Deliver,
    /// The message is over on both sides: its window slot (and bounce buffers) are free.
    Finish,
}

impl StepKind {
    /// The data movement of a copy (a cudaMemcpy or a kernel's copy) and the GPU that makes it.
    pub fn copy(&self) -> Option<(Copy, GpuRef)> {
        match *self {
            StepKind::Memcpy { copy, gpu, .. } | StepKind::KernelCopy { copy, gpu } => {
                Some((copy, gpu))
            }
            _ => None,
        }
    }

    /// The CPU thread that executes it, for thread steps.
    pub fn thread(&self) -> Option<u16> {
        match *self {
            StepKind::Register { thread, .. }
            | StepKind::CpuCopy { thread, .. }
            | StepKind::Memcpy { thread, .. }
            | StepKind::Post { thread, .. }
            | StepKind::Poll { thread, .. } => Some(thread),
            _ => None,
        }
    }
}

//! The walk as plain data: what [`crate::inspect`] extracts from the simulation and the
//! layout renders. Times are integer picoseconds; addresses are the simulated machine's.

pub use crate::config::{Op, PathKind};
pub use crate::scenario::paths::EffectivePath;
pub use crate::topology::Affinity;
use crate::units::Ps;

#[derive(Clone, Debug, PartialEq)]
pub struct Walk {
    pub config_name: String,
    pub scenario: String,
    /// GPU-NIC affinity class of the sender (PIX, PXB, PHB, NODE, SYS).
    pub class: Affinity,
    pub size: u64,
    /// The RDMA operation walked.
    pub op: Op,
    /// Sender first, receiver second.
    pub ends: [Endpoint; 2],
    /// The staged path first, then the GPUDirect path.
    pub paths: Vec<PathWalk>,
}

/// One host's side of the scenario and its address map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub host: String,
    pub gpu: String,
    pub gpu_model: String,
    pub nic: String,
    pub nic_model: String,
    /// GPU buffer virtual address (the GPU's heap base).
    pub gpu_va: u64,
    /// Bus address = virtual address + this (the BAR window).
    pub bar_offset: u64,
    /// Pinned host (bounce) buffer address.
    pub host_buffer: u64,
}

impl Endpoint {
    pub fn gpu_bus(&self) -> u64 {
        self.gpu_va.wrapping_add(self.bar_offset)
    }
}

/// One path, walked.
#[derive(Clone, Debug, PartialEq)]
pub struct PathWalk {
    /// What was asked: a staging path (staged, gdrcopy, staged_pipelined, auto) or gpudirect.
    pub path: PathKind,
    /// What ran (a GPUDirect side without P2P falls back to staging).
    pub effective_path: EffectivePath,
    /// One-time work done before t = 0 (kept out of the latency).
    pub setup: Vec<Setup>,
    /// `setup_us` of results.csv for this point.
    pub setup_ps: Ps,
    /// The steps on the way from the sender's GPU buffer to the receiver's, in order.
    pub steps: Vec<Step>,
    /// Work the message causes that is not on its one-way latency (the RC ACK, the send CQE).
    pub side_steps: Vec<Step>,
    /// One-way latency (results.csv `lat_model_us`).
    pub latency_ps: Ps,
    /// The sender NIC's gather descriptor and the receiver NIC's scatter descriptor.
    pub gather: Option<Desc>,
    pub scatter: Option<Desc>,
    /// cudaMemcpy stages in the message: (host, direction is D2H).
    pub copies: Vec<(String, bool)>,
    /// Payload bytes summed over the PCIe link directions they crossed (see the contrast text).
    pub pcie_link_bytes: u64,
    /// Payload bytes summed over the root complexes they passed.
    pub root_complex_bytes: u64,
    /// Payload bytes written to plus read from host DRAM, both hosts (results.csv host_mem_bytes).
    pub host_mem_bytes: u64,
    /// CPU time per message, both hosts (results.csv cpu_busy_us).
    pub cpu_busy_ps: Ps,
    /// Whether the data ends in GPU memory (directly, or by a copy after the RDMA).
    pub dst_gpu: bool,
}

/// A DMA descriptor as the NIC built it (the seed's `DmaDescriptor`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Desc {
    pub component: String,
    pub at: Ps,
    /// Source (gather) or destination (scatter) address, after translation.
    pub addr: u64,
    /// The address the application posted, before translation.
    pub virt_addr: u64,
    pub len: u64,
    /// Bit 0: 0 = host memory, 1 = GPU memory through GPUDirect.
    pub flags: u32,
    pub gather: bool,
}

/// One-time setup of one host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Setup {
    /// `count` pinned bounce buffers allocated (cudaMallocHost) and registered (ibv_reg_mr); or,
    /// `pageable`, malloc'd and registered (pinned for the NIC, pageable to CUDA).
    Bounce {
        host: String,
        pageable: bool,
        count: u32,
        addr: u64,
        alloc_ps: Ps,
        register_ps: Ps,
        pages: u64,
        page_bytes: u64,
    },
    /// GDRCopy's mapping of the GPU buffer (gdr_pin_buffer + gdr_map), once.
    GdrMap { host: String, va: u64, cost_ps: Ps },
    /// GPU memory registered through peer memory: pins the pages and builds the NIC's
    /// translation table (MTT).
    GpuMr {
        host: String,
        va: u64,
        bytes: u64,
        pages: u64,
        page_bytes: u64,
        cost_ps: Ps,
        /// The first entries of the table: (virtual page, bus page).
        mtt: Vec<(u64, u64)>,
        when: MrWhen,
    },
}

/// When a GPU memory registration is paid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MrWhen {
    /// Once, at first use, through a registration cache (setup_us).
    Cached,
    /// On every transfer, on the sender's CPU before the post: a timed step.
    PerTransferStep,
    /// On every transfer, on the receiver's CPU while the sender works (in its CPU time).
    PerTransferReceiver,
}

/// Which key the NIC looks its memory region up by: its own WQE's (lkey), or the one a remote
/// peer sent in the packet (rkey, of the one-sided operations' target).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    Lkey,
    Rkey,
}

impl Key {
    /// The key's name as the verbs API writes it.
    pub fn name(self) -> &'static str {
        match self {
            Key::Lkey => "lkey",
            Key::Rkey => "rkey",
        }
    }
}

/// What the consumer polls to learn the data arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollKind {
    /// The receive CQE (Write with Immediate, Send): the thread reposts a receive WQE.
    RecvCqe,
    /// The requester's CQE of an RDMA Read.
    ReadCqe,
    /// The last byte of the buffer, by the receiving CPU (plain RDMA Write into host memory).
    LastByteCpu,
    /// The last byte of the buffer, by a GPU kernel (plain RDMA Write into GPU memory).
    LastByteGpu,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub start: Ps,
    pub dur: Ps,
    pub component: String,
    pub kind: StepKind,
    /// Its parts, each timed (printed indented, unnumbered).
    pub parts: Vec<Step>,
}

/// What a step is. Routes are lists of nodes and channels, e.g. ["gpu0.mem", "gpu0", "sw0"].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepKind {
    MemcpyD2h {
        src_gpu: u64,
        dst_host: u64,
        bytes: u64,
    },
    MemcpyH2d {
        src_host: u64,
        dst_gpu: u64,
        bytes: u64,
    },
    /// cudaMemcpyAsync on a copy-engine stream (pipelined staging): the thread is free after
    /// the launch.
    MemcpyAsync {
        d2h: bool,
        gpu: u64,
        host: u64,
        bytes: u64,
    },
    CopyLaunch,
    /// The copy engine's DMA: posted writes into host memory (D2H) or reads of it (H2D).
    CopyDma {
        d2h: bool,
        tlps: u64,
        tlp_bytes: u64,
        route: Vec<String>,
    },
    CopySync,
    /// An async copy's completion event, which its thread polls among its other work.
    CopyEvent,
    /// The CUDA driver's CPU copy between its pinned buffer and a pageable bounce buffer.
    DriverCopy {
        d2h: bool,
    },
    /// GDRCopy: the thread copies between GPU memory (through its BAR1 mapping) and a host
    /// buffer: uncached loads to the host (`to_host`), write-combined stores to the GPU.
    Gdrcopy {
        to_host: bool,
        gpu: u64,
        host: u64,
        bytes: u64,
    },
    /// A pipelined message's chunks after the first (walked step by step), overlapped.
    Chunks {
        more: u64,
        bytes: u64,
        total: u64,
    },
    /// Registration per transfer (ibv_reg_mr in the latency).
    Register {
        gpu: bool,
        addr: u64,
        bytes: u64,
    },
    /// The posting CPU builds the WQE of `op` (the receiver's CPU for an RDMA Read): its
    /// local buffer, and the remote one for the one-sided operations.
    BuildWqe {
        op: Op,
        addr: u64,
        len: u64,
        gpu: bool,
        inline: bool,
        remote: Option<u64>,
    },
    /// The MMIO write that hands the WQE to the NIC: BlueFlame (WQE + doorbell) or doorbell only.
    Mmio {
        bytes: u64,
        blueflame: bool,
        route: Vec<String>,
    },
    /// The NIC takes the WQE: parse (BlueFlame) or fetch by DMA read from host memory and parse.
    WqeFetch {
        fetched: bool,
        route: Vec<String>,
    },
    /// The NIC's per-transfer lookup in the translation table built at registration.
    MttLookup {
        va: u64,
        bus: u64,
        gpu: bool,
        key: Key,
    },
    /// An RDMA Read's request packet, requester to responder.
    ReadRequest {
        route: Vec<String>,
    },
    /// A Send's receive WQE, fetched by the receiver's NIC ahead of the data.
    RecvWqeFetch {
        bytes: u64,
        route: Vec<String>,
    },
    Descriptor(Desc),
    /// Payload carried inside the WQE (no DMA read).
    Inline {
        bytes: u64,
    },
    DmaRead {
        requests: u64,
        request_bytes: u64,
        completions: u64,
        gpu: bool,
        route: Vec<String>,
        first_data: Ps,
    },
    NicTx,
    Wire {
        packets: u64,
        mtu: u64,
        route: Vec<String>,
    },
    NicRx,
    DmaWrite {
        writes: u64,
        write_bytes: u64,
        gpu: bool,
        route: Vec<String>,
    },
    Cqe {
        op: Op,
        bytes: u64,
        route: Vec<String>,
    },
    Poll {
        what: PollKind,
    },
    Flush {
        addr: u64,
    },
    FlushPost,
    FlushMmio {
        route: Vec<String>,
    },
    FlushEngine,
    /// The flush's read request (false) or response (true) through the NIC's send and receive
    /// pipelines of the loopback QP.
    FlushLoopback {
        response: bool,
    },
    FlushRead {
        request: Vec<String>,
        completion: Vec<String>,
    },
    /// The flushed byte written into pinned host memory.
    FlushWrite {
        route: Vec<String>,
    },
    FlushCqe {
        route: Vec<String>,
    },
    FlushPoll,
    /// The last payload write lands after the CQE was polled: the data is visible from then on.
    DataLands {
        gpu: bool,
        route: Vec<String>,
    },
    Ack {
        route: Vec<String>,
    },
    SendCqe {
        route: Vec<String>,
    },
}

// ---- formatting helpers -----------------------------------------------------------------------

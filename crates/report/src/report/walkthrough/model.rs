//! The walk as plain data: what gdrsim's `inspect` extracts from the simulation and the
//! layout renders. Times are integer picoseconds; addresses are the simulated machine's.

pub use crate::config::{Op, PathKind};
pub use crate::effective::EffectivePath;
pub use crate::topology::Affinity;
use crate::units::Ps;

/// The whole walk of one message: the scenario, its two ends and every path walked.
#[derive(Clone, Debug, PartialEq)]
pub struct Walk {
    /// The config's `name`.
    pub config_name: String,
    /// The scenario's name.
    pub scenario: String,
    /// GPU-NIC affinity class of the sender (PIX, PXB, PHB, NODE, SYS).
    pub class: Affinity,
    /// The message size, bytes.
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
    /// The host's name, e.g. "node-a".
    pub host: String,
    /// The GPU's name on its host, e.g. "gpu0".
    pub gpu: String,
    /// The GPU's model, e.g. "H100 PCIe".
    pub gpu_model: String,
    /// The NIC's name on its host, e.g. "nic0".
    pub nic: String,
    /// The NIC's model, e.g. "ConnectX-7 NDR".
    pub nic_model: String,
    /// GPU buffer virtual address (the GPU's heap base).
    pub gpu_va: u64,
    /// Bus address = virtual address + this (the BAR window).
    pub bar_offset: u64,
    /// Pinned host (bounce) buffer address.
    pub host_buffer: u64,
}

impl Endpoint {
    /// The GPU buffer's bus address, the one a peer's DMA uses: `gpu_va + bar_offset`.
    pub fn gpu_bus(&self) -> u64 {
        self.gpu_va.wrapping_add(self.bar_offset)
    }
}

/// One path, walked.
#[derive(Clone, Debug, PartialEq)]
pub struct PathWalk {
    /// What was asked: a staging path (staged, gdrcopy, staged_pipelined, auto), pxn or
    /// gpudirect.
    pub path: PathKind,
    /// What ran (a GPUDirect side without P2P falls back to staging; `pxn` without a relay
    /// sends by GPUDirect).
    pub effective_path: EffectivePath,
    /// Why the path runs as `effective_path` where it chose or fell back (results.csv
    /// `reason`); empty otherwise.
    pub reason: String,
    /// PXN: the sender's hand-over to its relay GPU, where it relays.
    pub relay: Option<RelayWalk>,
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
    /// See `gather`: the receiver NIC's scatter descriptor (None where the run recorded none).
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

/// NCCL's PXN on the sending side, as the walk sums it up: the GPUs, how they are joined and
/// how near the relay is to the NIC.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelayWalk {
    /// The GPU holding the user's buffer, e.g. "gpu0".
    pub from: String,
    /// The GPU next to the NIC whose memory the NIC reads, e.g. "gpu4".
    pub via: String,
    /// The NIC, e.g. "nic4".
    pub nic: String,
    /// How `from` reaches `via` (NVLink: NV18).
    pub link: Affinity,
    /// The relay's affinity to the NIC (PIX).
    pub via_class: Affinity,
    /// The hand-over of the first chunk: from the first store over NVLink to the proxy's poll
    /// finding its flag, picoseconds.
    pub hand_over_ps: Ps,
}

/// A DMA descriptor as the NIC built it (the seed's `DmaDescriptor`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Desc {
    /// The NIC that built it, e.g. "node-a/nic0".
    pub component: String,
    /// When it was built, picoseconds (t = 0 when the data is ready in the sender's GPU buffer).
    pub at: Ps,
    /// Source (gather) or destination (scatter) address, after translation.
    pub addr: u64,
    /// The address the application posted, before translation.
    pub virt_addr: u64,
    /// Bytes it covers.
    pub len: u64,
    /// Bit 0: 0 = host memory, 1 = GPU memory through GPUDirect.
    pub flags: u32,
    /// Gather (the NIC reads the source) when true, scatter (it writes the destination) when
    /// false.
    pub gather: bool,
    /// PXN: the relay GPU whose memory a gather reads (not the user's GPU), e.g. "gpu4".
    pub relay: Option<String>,
}

impl Desc {
    /// What translation added to the posted address (a GPU buffer's BAR offset).
    pub fn bar_offset(&self) -> u64 {
        self.addr.wrapping_sub(self.virt_addr)
    }
}

/// One-time setup of one host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Setup {
    /// `count` pinned bounce buffers allocated (cudaMallocHost) and registered (ibv_reg_mr); or,
    /// `pageable`, malloc'd and registered (pinned for the NIC, pageable to CUDA).
    Bounce {
        /// The host's name.
        host: String,
        /// Whether the buffers are pageable (malloc) rather than pinned (cudaMallocHost).
        pageable: bool,
        /// How many buffers (a pipelined path's ring depth, else the path's bounce buffers).
        count: u32,
        /// The first buffer's address.
        addr: u64,
        /// cudaMallocHost of one buffer, picoseconds (0 for pageable buffers).
        alloc_ps: Ps,
        /// ibv_reg_mr of one buffer, picoseconds.
        register_ps: Ps,
        /// Host pages one buffer's memory region spans.
        pages: u64,
        /// The host page size, bytes.
        page_bytes: u64,
    },
    /// GDRCopy's mapping of the GPU buffer (gdr_pin_buffer + gdr_map), once.
    GdrMap {
        /// The host's name.
        host: String,
        /// The GPU buffer's virtual address.
        va: u64,
        /// Pinning and mapping it, picoseconds.
        cost_ps: Ps,
    },
    /// GPU memory registered through peer memory: pins the pages and builds the NIC's
    /// translation table (MTT).
    GpuMr {
        /// The host's name.
        host: String,
        /// The GPU buffer's virtual address.
        va: u64,
        /// Bytes registered (the message size).
        bytes: u64,
        /// GPU pages pinned (one table entry each).
        pages: u64,
        /// The GPU page size, bytes.
        page_bytes: u64,
        /// The registration, picoseconds.
        cost_ps: Ps,
        /// The first entries of the table: (virtual page, bus page).
        mtt: Vec<(u64, u64)>,
        /// Whether it is paid once (setup) or on every transfer, and by whom.
        when: MrWhen,
        /// PXN: the relay GPU's ring NCCL registers once at connection setup (the GPU's name,
        /// its chunk buffers), not the user's buffer.
        ring: Option<(String, u32)>,
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
    /// The local key, from the NIC's own WQE.
    Lkey,
    /// The remote key, carried in the packet of a one-sided operation.
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

/// One timed step of the walk: what ran, where and when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// When it begins, picoseconds (t = 0 when the data is ready in the sender's GPU buffer).
    pub start: Ps,
    /// How long it takes, picoseconds.
    pub dur: Ps,
    /// What does it, e.g. "node-a/gpu0.ce", "node-a/nic0" or "network".
    pub component: String,
    /// What it is, with the figures its line prints.
    pub kind: StepKind,
    /// Its parts, each timed (printed indented, unnumbered).
    pub parts: Vec<Step>,
}

/// What a step is. Routes are lists of nodes and channels, e.g. ["gpu0.mem", "gpu0", "sw0"].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepKind {
    /// A blocking cudaMemcpy from the sender's GPU buffer into its host bounce buffer (its parts:
    /// launch, copy-engine DMA, sync).
    MemcpyD2h {
        /// The GPU buffer's virtual address.
        src_gpu: u64,
        /// The bounce buffer's address.
        dst_host: u64,
        /// Bytes copied (the message, or a pipelined chunk).
        bytes: u64,
    },
    /// A blocking cudaMemcpy from the receiver's host bounce buffer into its GPU buffer (its parts
    /// as `MemcpyD2h`'s).
    MemcpyH2d {
        /// The bounce buffer's address.
        src_host: u64,
        /// The GPU buffer's virtual address.
        dst_gpu: u64,
        /// Bytes copied (the message, or a pipelined chunk).
        bytes: u64,
    },
    /// cudaMemcpyAsync on a copy-engine stream (pipelined staging): the thread is free after
    /// the launch.
    MemcpyAsync {
        /// Its direction: true GPU to host, false host to GPU.
        d2h: bool,
        /// The GPU buffer's virtual address.
        gpu: u64,
        /// The host bounce buffer's address.
        host: u64,
        /// Bytes copied (a pipelined chunk).
        bytes: u64,
    },
    /// A cudaMemcpy's part from the call until the copy engine starts.
    CopyLaunch,
    /// The copy engine's DMA: posted writes into host memory (D2H) or reads of it (H2D).
    CopyDma {
        /// Its direction: true posted writes into host memory, false reads of it.
        d2h: bool,
        /// Posted writes (D2H) or read requests (H2D).
        tlps: u64,
        /// The most bytes of one: the route's effective MPS (D2H) or the copy engine's read request
        /// size (H2D).
        tlp_bytes: u64,
        /// The route of the first one (for H2D, its completions and the write into GPU memory).
        route: Vec<String>,
    },
    /// A blocking cudaMemcpy's last part: completion signalled, the calling thread returns.
    CopySync,
    /// An async copy's completion event, which its thread polls among its other work.
    CopyEvent,
    /// The CUDA driver's CPU copy between its pinned buffer and a pageable bounce buffer.
    DriverCopy {
        /// Its direction: true from the driver's pinned buffer into the pageable one (after the
        /// DMA), false the other way (before it).
        d2h: bool,
    },
    /// GDRCopy: the thread copies between GPU memory (through its BAR1 mapping) and a host
    /// buffer: uncached loads to the host (`to_host`), write-combined stores to the GPU.
    Gdrcopy {
        /// Its direction: true GPU to host (the sender), false host to GPU (the receiver).
        to_host: bool,
        /// The GPU buffer's virtual address.
        gpu: u64,
        /// The host buffer's address.
        host: u64,
        /// Bytes copied.
        bytes: u64,
    },
    /// A pipelined message's chunks after the first (walked step by step), overlapped.
    Chunks {
        /// Chunks after the first.
        more: u64,
        /// Bytes of one chunk.
        bytes: u64,
        /// Bytes of the whole message.
        total: u64,
        /// Whether they go through a PXN relay's ring (else through the ring of bounce
        /// buffers).
        relay: bool,
        /// Whether the last one's cudaMemcpyHtoD completes the message (else its RDMA does).
        copy_in: bool,
        /// Whether the copies are the kernels' stores and loads (NCCL's host path).
        kernel: bool,
        /// Whether they go through NCCL's chunk buffers in GPU memory (NCCL's GPUDirect
        /// sender, its kernel handing each chunk to the proxy).
        handover: bool,
    },
    /// PXN: the sending GPU's kernel (already running: no launch, no CPU thread) stores the
    /// chunk over NVLink into the relay GPU's buffer.
    KernelStore {
        /// The sending GPU's name and its buffer's virtual address.
        from: (String, u64),
        /// The relay GPU's name and its buffer's virtual address.
        to: (String, u64),
        /// Bytes stored (the message, or a chunk).
        bytes: u64,
        /// Posted writes.
        writes: u64,
        /// The most bytes of one (the route's effective MPS).
        write_bytes: u64,
        /// The first write's route, node by node.
        route: Vec<String>,
    },
    /// PXN: after the chunk, the kernel stores its flag into the proxy's host memory.
    RelayFlag {
        /// The flag's size, bytes.
        bytes: u64,
        /// GPU to host memory, node by node.
        route: Vec<String>,
    },
    /// PXN: the relay's proxy thread, polling its FIFO in host memory, finds the flag.
    ProxyPoll {
        /// The relay GPU whose buffer now holds the chunk.
        via: String,
    },
    /// NCCL's host path: the sending GPU's kernel (already running: no launch, no CPU thread)
    /// stores the chunk over PCIe into pinned, mapped host memory.
    HostStore {
        /// The sending GPU's name and its buffer's virtual address.
        from: (String, u64),
        /// The host buffer's address.
        to: u64,
        /// Bytes stored (the message, or a chunk).
        bytes: u64,
        /// Posted writes.
        writes: u64,
        /// The most bytes of one (the route's effective MPS).
        write_bytes: u64,
        /// The first write's route, node by node.
        route: Vec<String>,
    },
    /// NCCL's host path: the proxy thread, polling its FIFO, finds the flag; the chunk is in
    /// host memory.
    ProxyFinds,
    /// NCCL's host path: the receiving kernel, spinning on the flag the proxy stored into
    /// mapped host memory after its poll, loads it over PCIe.
    FlagLoad {
        /// The flag's size, bytes.
        bytes: u64,
        /// The load's completion route, host memory to GPU, node by node.
        route: Vec<String>,
    },
    /// NCCL's host path: the receiving kernel loads the chunk from mapped host memory and
    /// stores it into the GPU buffer.
    HostLoad {
        /// The host buffer's address.
        from: u64,
        /// The receiving GPU's name and its buffer's virtual address.
        to: (String, u64),
        /// Bytes loaded.
        bytes: u64,
        /// Read requests.
        reads: u64,
        /// The completions' route into GPU memory, node by node.
        route: Vec<String>,
    },
    /// Registration per transfer (ibv_reg_mr in the latency).
    Register {
        /// Whether the registered buffer is GPU memory (else host memory).
        gpu: bool,
        /// The buffer's virtual address.
        addr: u64,
        /// Bytes registered (the message size).
        bytes: u64,
    },
    /// The posting CPU builds the WQE of `op` (the receiver's CPU for an RDMA Read): its
    /// local buffer, and the remote one for the one-sided operations.
    BuildWqe {
        /// The RDMA operation the WQE asks for.
        op: Op,
        /// The scatter-gather entry's address: the poster's buffer, virtual.
        addr: u64,
        /// The scatter-gather entry's length, bytes (the message, or a pipelined chunk).
        len: u64,
        /// Whether that buffer is GPU memory (else host memory).
        gpu: bool,
        /// Whether the payload is copied into the WQE (inline send).
        inline: bool,
        /// The peer's buffer address for Write, Write with Immediate and Read; None for a Send (the
        /// receive WQE names the destination).
        remote: Option<u64>,
    },
    /// The MMIO write that hands the WQE to the NIC: BlueFlame (WQE + doorbell) or doorbell only.
    Mmio {
        /// Bytes written: the WQE for BlueFlame, else the 8 B doorbell.
        bytes: u64,
        /// Whether the WQE rides in the MMIO write (BlueFlame) rather than a doorbell alone.
        blueflame: bool,
        /// CPU to NIC, node by node.
        route: Vec<String>,
    },
    /// The NIC takes the WQE: parse (BlueFlame) or fetch by DMA read from host memory and parse.
    WqeFetch {
        /// Whether the NIC read the WQE from host memory (false: it came by BlueFlame).
        fetched: bool,
        /// The fetch's DMA route, node by node (empty when not fetched).
        route: Vec<String>,
    },
    /// The NIC's per-transfer lookup in the translation table built at registration.
    MttLookup {
        /// The address the application posted (virtual).
        va: u64,
        /// The address the DMA uses after translation.
        bus: u64,
        /// Whether it is GPU memory (host memory translates to itself).
        gpu: bool,
        /// The key the region was found by.
        key: Key,
    },
    /// An RDMA Read's request packet, requester to responder.
    ReadRequest {
        /// Across the network, NIC to NIC.
        route: Vec<String>,
    },
    /// A Send's receive WQE, fetched by the receiver's NIC ahead of the data.
    RecvWqeFetch {
        /// The receive WQE's size, bytes.
        bytes: u64,
        /// The fetch's completions, node by node.
        route: Vec<String>,
    },
    /// The NIC builds a DMA descriptor (gather or scatter).
    Descriptor(Desc),
    /// Payload carried inside the WQE (no DMA read).
    Inline {
        /// The payload's size, bytes.
        bytes: u64,
    },
    /// The NIC's DMA read of the payload (host or GPU memory).
    DmaRead {
        /// Read requests issued.
        requests: u64,
        /// The most bytes one request asks for (the NIC's max read request size).
        request_bytes: u64,
        /// Completions returned.
        completions: u64,
        /// Whether it reads GPU memory (else host memory).
        gpu: bool,
        /// The first completions' route back to the NIC, node by node.
        route: Vec<String>,
        /// When the first data left the read for the NIC, picoseconds (t = 0 as in
        /// [`Step::start`]).
        first_data: Ps,
    },
    /// The NIC's transmit pipeline: packetising and headers.
    NicTx,
    /// The packets on the network, NIC to NIC.
    Wire {
        /// Packets sent.
        packets: u64,
        /// The sending NIC's MTU, bytes.
        mtu: u64,
        /// The first packet's route, node by node.
        route: Vec<String>,
    },
    /// The receiving NIC's receive pipeline.
    NicRx,
    /// The receiving NIC's DMA write of the payload into host or GPU memory.
    DmaWrite {
        /// Posted writes issued.
        writes: u64,
        /// The most bytes of one (the route's effective MPS).
        write_bytes: u64,
        /// Whether it writes GPU memory (else host memory).
        gpu: bool,
        /// The first write's route, node by node.
        route: Vec<String>,
    },
    /// The completion queue entry the NIC writes into host memory: the receive CQE, or the
    /// requester's CQE of a Read.
    Cqe {
        /// The operation it completes.
        op: Op,
        /// The CQE's size, bytes.
        bytes: u64,
        /// NIC to host memory, node by node.
        route: Vec<String>,
    },
    /// The consumer finds that the data arrived.
    Poll {
        /// What it polls.
        what: PollKind,
    },
    /// GPUDirect's flush: a 1-byte RDMA Read through a loopback QP, so earlier posted writes are
    /// visible to the GPU (its parts: post, MMIO, fetch, engine, loopback, read, write, CQE, poll).
    Flush {
        /// The GPU address read (the receive buffer's DMA address).
        addr: u64,
    },
    /// The CPU posts the flush read (by doorbell).
    FlushPost,
    /// The flush WQE's MMIO write to the NIC.
    FlushMmio {
        /// CPU to NIC, node by node.
        route: Vec<String>,
    },
    /// The NIC's send engine parses the flush WQE.
    FlushEngine,
    /// The flush's read request (false) or response (true) through the NIC's send and receive
    /// pipelines of the loopback QP.
    FlushLoopback {
        /// Which packet: false the read request, true the 1 B response.
        response: bool,
    },
    /// The flush's read of the GPU buffer, behind the payload writes.
    FlushRead {
        /// The read request's route, node by node.
        request: Vec<String>,
        /// The 1 B completion's route back, node by node.
        completion: Vec<String>,
    },
    /// The flushed byte written into pinned host memory.
    FlushWrite {
        /// NIC to host memory, node by node.
        route: Vec<String>,
    },
    /// The flush's CQE written to host memory.
    FlushCqe {
        /// NIC to host memory, node by node.
        route: Vec<String>,
    },
    /// The CPU's poll finds the flush CQE.
    FlushPoll,
    /// The last payload write lands after the CQE was polled: the data is visible from then on.
    DataLands {
        /// Whether it lands in GPU memory (else host memory).
        gpu: bool,
        /// The first payload write's route, node by node.
        route: Vec<String>,
    },
    /// The responder's RC ACK back to the sender (paces streaming, off the one-way latency).
    Ack {
        /// Across the network, NIC to NIC.
        route: Vec<String>,
    },
    /// The sender's send CQE written to its host memory: the work request and its buffer are
    /// complete.
    SendCqe {
        /// NIC to host memory, node by node.
        route: Vec<String>,
    },
}

// ---- formatting helpers -----------------------------------------------------------------------

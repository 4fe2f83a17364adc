//! `gdrsim walk`: the seed program's walk-through of the traditional (staged) and GPUDirect
//! paths, step by step, on the simulated machine.
//!
//! The seed (a mock C++ program, in Chinese) prints, for each path, the steps and the DMA
//! descriptor the NIC builds, then contrasts the two descriptors' sources. This module renders the
//! same walk from plain data that [`crate::inspect`] extracts from one noise-free simulation of each
//! path, so every step carries its simulated start time, duration and component, and the contrast
//! is counted rather than asserted. English and Chinese ([`Lang`]) render the same data.
//!
//! Times are integer picoseconds in the data and are printed in microseconds rounded to the
//! nanosecond. Addresses are printed as `0x` followed by upper-case hex digits.

pub use crate::config::Op;
use crate::units::{PS_PER_NS, Ps, fmt_bytes};

/// Output language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    En,
    Zh,
}

impl Lang {
    pub fn parse(s: &str) -> Option<Lang> {
        match s {
            "en" => Some(Lang::En),
            "zh" => Some(Lang::Zh),
            _ => None,
        }
    }
}

/// Everything the walk prints, as plain data.
#[derive(Clone, Debug, PartialEq)]
pub struct Walk {
    pub config_name: String,
    pub scenario: String,
    /// GPU-NIC affinity class of the sender (PIX, PXB, PHB, NODE, SYS).
    pub class: String,
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
    /// What was asked: "staged" or "gpudirect".
    pub path: String,
    /// What ran (a GPUDirect side without P2P falls back to staging).
    pub effective_path: String,
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
    fn name(self) -> &'static str {
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

/// The verb's name as the verbs API and perftest write it.
fn op_title(op: Op) -> &'static str {
    match op {
        Op::WriteImm => "RDMA Write with Immediate",
        Op::Write => "RDMA Write",
        Op::Read => "RDMA Read",
        Op::Send => "Send",
    }
}

/// One timed step.
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

/// Microseconds rounded to the nanosecond: "7.380".
pub fn us(ps: Ps) -> String {
    let ns = (ps + PS_PER_NS / 2) / PS_PER_NS;
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

/// `0x` + upper-case hex, as the issue and DESIGN.md write addresses.
pub fn hex(a: u64) -> String {
    format!("0x{a:X}")
}

fn route(r: &[String]) -> String {
    r.join(" > ")
}

fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

fn ratio(a: u64, size: u64) -> String {
    if size == 0 {
        return "0".into();
    }
    if a.is_multiple_of(size) {
        (a / size).to_string()
    } else {
        format!("{:.2}", a as f64 / size as f64)
    }
}

// ---- text of one step ------------------------------------------------------------------------

fn mem_en(gpu: bool) -> &'static str {
    if gpu { "GPU memory" } else { "host memory" }
}

fn mem_zh(gpu: bool) -> &'static str {
    if gpu { "GPU显存" } else { "主机内存" }
}

fn flags_en(flags: u32) -> &'static str {
    if flags & 1 == 1 {
        "GPUDirect: GPU memory"
    } else {
        "host memory"
    }
}

fn flags_zh(flags: u32) -> &'static str {
    if flags & 1 == 1 {
        "GPUDirect路径：GPU显存"
    } else {
        "传统路径：主机内存"
    }
}

fn desc_en(d: &Desc) -> String {
    if d.gather {
        format!(
            "DMA descriptor (gather, the NIC reads): src={}, len={}, flags={} ({})",
            hex(d.addr),
            d.len,
            d.flags,
            flags_en(d.flags)
        )
    } else {
        format!(
            "DMA descriptor (scatter, the NIC writes): dst={}, len={}, flags={} ({})",
            hex(d.addr),
            d.len,
            d.flags,
            flags_en(d.flags)
        )
    }
}

fn desc_zh(d: &Desc) -> String {
    if d.gather {
        format!(
            "网卡构建DMA描述符（gather，网卡读取）：src={}, len={}, flags={}（{}）",
            hex(d.addr),
            d.len,
            d.flags,
            flags_zh(d.flags)
        )
    } else {
        format!(
            "接收端网卡构建DMA描述符（scatter，网卡写入）：dst={}, len={}, flags={}（{}）",
            hex(d.addr),
            d.len,
            d.flags,
            flags_zh(d.flags)
        )
    }
}

fn text_en(k: &StepKind) -> String {
    match k {
        StepKind::MemcpyD2h {
            src_gpu,
            dst_host,
            bytes,
        } => format!(
            "cudaMemcpyDtoH: GPU[{}] -> Host[{}] {bytes} bytes",
            hex(*src_gpu),
            hex(*dst_host)
        ),
        StepKind::MemcpyH2d {
            src_host,
            dst_gpu,
            bytes,
        } => format!(
            "cudaMemcpyHtoD: Host[{}] -> GPU[{}] {bytes} bytes",
            hex(*src_host),
            hex(*dst_gpu)
        ),
        StepKind::CopyLaunch => "launch: the cudaMemcpy call until the copy engine starts".into(),
        StepKind::MemcpyAsync {
            d2h: true,
            gpu,
            host,
            bytes,
        } => format!(
            "cudaMemcpyAsync DtoH: GPU[{}] -> Host[{}] {bytes} bytes, on a copy-engine stream",
            hex(*gpu),
            hex(*host)
        ),
        StepKind::MemcpyAsync {
            d2h: false,
            gpu,
            host,
            bytes,
        } => format!(
            "cudaMemcpyAsync HtoD: Host[{}] -> GPU[{}] {bytes} bytes, on a copy-engine stream",
            hex(*host),
            hex(*gpu)
        ),
        StepKind::CopyEvent => {
            "completion event recorded; the thread, free since the launch, sees it at its next poll".into()
        }

        StepKind::CopyDma {
            d2h: true,
            tlps,
            tlp_bytes,
            route: r,
        } => format!(
            "copy engine DMA: {} of up to {tlp_bytes} B into host memory, {}",
            plural(*tlps, "posted write", "posted writes"),
            route(r)
        ),
        StepKind::CopyDma {
            d2h: false,
            tlps,
            tlp_bytes,
            route: r,
        } => format!(
            "copy engine DMA: {} of up to {tlp_bytes} B to host memory, completions {}",
            plural(*tlps, "read request", "read requests"),
            route(r)
        ),
                StepKind::CopySync => {
            "completion signalled, the calling thread returns (it spin-waited throughout)".into()
        }
        StepKind::Gdrcopy {
            to_host: true,
            gpu,
            host,
            bytes,
        } => format!(
            "GDRCopy (gdr_copy_from_mapping): the CPU reads GPU[{}] through its BAR1 mapping into Host[{}], {bytes} bytes (uncached loads)",
            hex(*gpu),
            hex(*host)
        ),
        StepKind::Gdrcopy {
            to_host: false,
            gpu,
            host,
            bytes,
        } => format!(
            "GDRCopy (gdr_copy_to_mapping): the CPU writes Host[{}] into GPU[{}] through its BAR1 mapping, {bytes} bytes (write-combined stores)",
            hex(*host),
            hex(*gpu)
        ),
        StepKind::Chunks { more, bytes, total } => format!(
            "the other {} of {bytes} bytes follow these steps, overlapped through the ring of bounce buffers; the last one's cudaMemcpyHtoD completes the {total} bytes",
            plural(*more, "chunk", "chunks")
        ),
        StepKind::DriverCopy { d2h: true } => "the driver's CPU copy from its pinned buffer into the pageable bounce buffer (bounce = \"pageable\")".into(),
        StepKind::DriverCopy { d2h: false } => "the driver's CPU copy from the pageable bounce buffer into its pinned buffer (bounce = \"pageable\")".into(),
        StepKind::Register { gpu, addr, bytes } => format!(
            "ibv_reg_mr on {} [{}], {bytes} bytes (per transfer): builds the NIC's translation table",
            mem_en(*gpu),
            hex(*addr)
        ),
                StepKind::BuildWqe {
            op,
            addr,
            len,
            gpu,
            inline,
            remote,
        } => {
            let who = if *op == Op::Read { "receiving CPU" } else { "CPU" };
            let mut s = format!(
                "{who} builds the {} WQE ({}): sge addr={} ({} virtual address), len={len}, lkey of its MR",
                if *op == Op::Read { "read" } else { "send" },
                op_title(*op),
                hex(*addr),
                if *gpu { "GPU" } else { "host" }
            );
            match (op, remote) {
                (Op::Read, Some(r)) => s.push_str(&format!(
                    "; remote addr={} (the source), rkey of the sender's MR",
                    hex(*r)
                )),
                (_, Some(r)) => {
                    s.push_str(&format!("; remote addr={}, rkey of the receiver's MR", hex(*r)))
                }
                (_, None) => s.push_str("; the receiver's posted receive WQE names the destination"),
            }
            if *inline {
                s.push_str("; the payload is copied into the WQE (inline)");
            }
            s
        }
        StepKind::Mmio {
            bytes,
            blueflame: true,
            route: r,
        } => format!(
            "BlueFlame MMIO write: the {bytes} B WQE and the doorbell, CPU > {}",
            route(r)
        ),
        StepKind::Mmio {
            bytes,
            blueflame: false,
            route: r,
        } => format!("doorbell: {bytes} B MMIO write, CPU > {}", route(r)),
        StepKind::WqeFetch { fetched: false, .. } => {
            "NIC send engine parses the WQE (BlueFlame: no fetch from host memory)".into()
        }
        StepKind::WqeFetch {
            fetched: true,
            route: r,
        } => format!(
            "WQE fetch: the NIC reads the WQE from host memory by DMA ({}) and parses it",
            route(r)
        ),
                StepKind::MttLookup {
            va,
            bus,
            gpu: true,
            key,
        } => format!(
            "MR lookup by {}, MTT translation: GPU virtual address [{}] -> bus address [{}] (table built at registration)",
            key.name(),
            hex(*va),
            hex(*bus)
        ),
        StepKind::MttLookup { va, bus, key, .. } => format!(
            "MR lookup by {}, MTT translation: host virtual address [{}] -> [{}] (pinned host memory, address unchanged)",
            key.name(),
            hex(*va),
            hex(*bus)
        ),
        StepKind::ReadRequest { route: r } => format!(
            "read request: 1 packet (RETH: remote address, rkey, length) to the data's owner, {}",
            route(r)
        ),
        StepKind::RecvWqeFetch { bytes, route: r } => format!(
            "receive WQE fetch, ahead of the data: the NIC reads the posted {bytes} B receive WQE by DMA ({}); its sge gives the destination",
            route(r)
        ),
        StepKind::Descriptor(d) => desc_en(d),
        StepKind::Inline { bytes } => {
            format!("no DMA read: the {bytes} B payload arrived inside the WQE")
        }
        StepKind::DmaRead {
            requests,
            request_bytes,
            completions,
            gpu,
            route: r,
            first_data,
        } => format!(
            "DMA read of {}: {} of up to {request_bytes} B, {} back {} (first data at {})",
            mem_en(*gpu),
            plural(*requests, "read request", "read requests"),
            plural(*completions, "completion", "completions"),
            route(r),
            us(*first_data)
        ),
        StepKind::NicTx => "NIC transmit pipeline (packetise, headers)".into(),
        StepKind::Wire {
            packets,
            mtu,
            route: r,
        } => format!(
            "wire: {} (MTU {mtu} B), {}",
            plural(*packets, "packet", "packets"),
            route(r)
        ),
        StepKind::NicRx => "remote NIC receive pipeline".into(),
        StepKind::DmaWrite {
            writes,
            write_bytes,
            gpu,
            route: r,
        } => format!(
            "DMA write into {}: {} of up to {write_bytes} B, {}",
            mem_en(*gpu),
            plural(*writes, "posted write", "posted writes"),
            route(r)
        ),
                StepKind::Cqe {
            op: Op::Read,
            bytes,
            route: r,
        } => format!(
            "CQE of the read ({bytes} B) written to the requester's host memory after the last response, {}",
            route(r)
        ),
        StepKind::Cqe {
            op: Op::Send,
            bytes,
            route: r,
        } => format!(
            "receive CQE ({bytes} B) written to host memory (the Send consumed the posted receive WQE), {}",
            route(r)
        ),
        StepKind::Cqe { bytes, route: r, .. } => format!(
            "receive CQE ({bytes} B) written to host memory (the Write with Immediate consumed a posted receive WQE), {}",
            route(r)
        ),
        StepKind::Poll {
            what: PollKind::RecvCqe,
        } => "CQ poll: the receiving CPU finds the CQE and reposts a receive WQE".into(),
        StepKind::Poll {
            what: PollKind::ReadCqe,
        } => "CQ poll: the requesting CPU finds the read's CQE: the data is in its buffer".into(),
        StepKind::Poll {
            what: PollKind::LastByteCpu,
        } => "the receiving CPU polls the last byte of the buffer and sees it change (a plain Write has no CQE)".into(),
        StepKind::Poll {
            what: PollKind::LastByteGpu,
        } => "a GPU kernel polls the last byte of the buffer in GPU memory and sees it change (a plain Write has no CQE)".into(),
        StepKind::Flush { addr } => format!(
            "flush: 1-byte RDMA Read of GPU[{}] through a loopback QP, so the earlier posted writes are visible to the GPU",
            hex(*addr)
        ),
        StepKind::FlushPost => "CPU posts the flush read (not inline: by doorbell)".into(),
        StepKind::FlushMmio { route: r } => format!("MMIO: the WQE to the NIC, CPU > {}", route(r)),
        StepKind::FlushEngine => "NIC send engine parses it".into(),
        StepKind::FlushLoopback { response: false } => {
            "the read request loops back through the NIC's send and receive pipelines".into()
        }
        StepKind::FlushLoopback { response: true } => {
            "the 1 B response loops back through the NIC's send and receive pipelines".into()
        }
        StepKind::FlushRead {
            request,
            completion,
        } => format!(
            "read request {} (behind the payload writes), 1 B completion {}",
            route(request),
            route(completion)
        ),
        StepKind::FlushWrite { route: r } => {
            format!("the byte written into pinned host memory, {}", route(r))
        }
        StepKind::FlushCqe { route: r } => {
            format!("flush CQE written to host memory, {}", route(r))
        }
        StepKind::FlushPoll => "CQ poll finds the flush CQE".into(),
        StepKind::DataLands { gpu, route: r } => format!(
            "the last payload write lands in {} memory, {}: the data is visible from here (the CQE, on another route, was polled before it)",
            if *gpu { "GPU" } else { "host" },
            route(r)
        ),
        StepKind::Ack { route: r } => format!(
            "RC ACK back to the sender, {} (paces streaming, not on the one-way latency)",
            route(r)
        ),
        StepKind::SendCqe { route: r } => format!(
            "send CQE written to the sender's host memory, {}: the work request (and its buffer) is complete",
            route(r)
        ),
    }
}

fn text_zh(k: &StepKind) -> String {
    match k {
        StepKind::MemcpyD2h {
            src_gpu,
            dst_host,
            bytes,
        } => format!(
            "cudaMemcpyDtoH: GPU[{}] -> Host[{}] {bytes} bytes（GPU到主机拷贝）",
            hex(*src_gpu),
            hex(*dst_host)
        ),
        StepKind::MemcpyH2d {
            src_host,
            dst_gpu,
            bytes,
        } => format!(
            "cudaMemcpyHtoD: Host[{}] -> GPU[{}] {bytes} bytes（主机到GPU拷贝）",
            hex(*src_host),
            hex(*dst_gpu)
        ),
        StepKind::CopyLaunch => "启动：从调用cudaMemcpy到拷贝引擎开始工作".into(),
        StepKind::MemcpyAsync {
            d2h: true,
            gpu,
            host,
            bytes,
        } => format!(
            "cudaMemcpyAsync DtoH: GPU[{}] -> Host[{}] {bytes} bytes（拷贝引擎流上的异步拷贝）",
            hex(*gpu),
            hex(*host)
        ),
        StepKind::MemcpyAsync {
            d2h: false,
            gpu,
            host,
            bytes,
        } => format!(
            "cudaMemcpyAsync HtoD: Host[{}] -> GPU[{}] {bytes} bytes（拷贝引擎流上的异步拷贝）",
            hex(*host),
            hex(*gpu)
        ),
        StepKind::CopyEvent => "完成事件已记录；线程自启动后即空闲，在下次轮询时发现它".into(),

        StepKind::CopyDma {
            d2h: true,
            tlps,
            tlp_bytes,
            route: r,
        } => format!(
            "拷贝引擎DMA：{tlps}个写事务（posted write，每个至多{tlp_bytes} B）写入主机内存，{}",
            route(r)
        ),
        StepKind::CopyDma {
            d2h: false,
            tlps,
            tlp_bytes,
            route: r,
        } => format!(
            "拷贝引擎DMA：{tlps}个读请求（每个至多{tlp_bytes} B）读取主机内存，完成包经 {}",
            route(r)
        ),
        StepKind::CopySync => "完成通知，调用线程返回（其间一直忙等）".into(),
        StepKind::Gdrcopy {
            to_host: true,
            gpu,
            host,
            bytes,
        } => format!(
            "GDRCopy（gdr_copy_from_mapping）：CPU经BAR1映射读取GPU[{}]写入Host[{}]，{bytes} 字节（非缓存读）",
            hex(*gpu),
            hex(*host)
        ),
        StepKind::Gdrcopy {
            to_host: false,
            gpu,
            host,
            bytes,
        } => format!(
            "GDRCopy（gdr_copy_to_mapping）：CPU将Host[{}]经BAR1映射写入GPU[{}]，{bytes} 字节（写合并）",
            hex(*host),
            hex(*gpu)
        ),
        StepKind::Chunks { more, bytes, total } => format!(
            "其余 {more} 个 {bytes} 字节的分块重复上述步骤，经中转缓冲区环重叠进行；最后一块的 cudaMemcpyHtoD 完成全部 {total} 字节"
        ),
        StepKind::DriverCopy { d2h: true } => {
            "驱动程序的CPU拷贝：从其固定缓冲区拷入可分页中转缓冲区（bounce = \"pageable\"）".into()
        }
        StepKind::DriverCopy { d2h: false } => {
            "驱动程序的CPU拷贝：从可分页中转缓冲区拷入其固定缓冲区（bounce = \"pageable\"）".into()
        }
        StepKind::Register { gpu, addr, bytes } => format!(
            "ibv_reg_mr 注册{}[{}]，{bytes} 字节（每次传输都注册）：构建网卡的地址转换表",
            mem_zh(*gpu),
            hex(*addr)
        ),
        StepKind::BuildWqe {
            op,
            addr,
            len,
            gpu,
            inline,
            remote,
        } => {
            let mut s = format!(
                "{}构建{}WQE（{}）：sge addr={}（{}虚拟地址），len={len}，lkey指向其MR",
                if *op == Op::Read {
                    "接收端CPU"
                } else {
                    "CPU"
                },
                if *op == Op::Read { "读" } else { "发送" },
                op_title(*op),
                hex(*addr),
                if *gpu { "GPU" } else { "主机" }
            );
            match (op, remote) {
                (Op::Read, Some(r)) => s.push_str(&format!(
                    "；远端地址={}（数据源），rkey指向发送端的MR",
                    hex(*r)
                )),
                (_, Some(r)) => s.push_str(&format!("；远端地址={}，rkey指向接收端的MR", hex(*r))),
                (_, None) => s.push_str("；目的地址由接收端预先提交的接收WQE给出"),
            }
            if *inline {
                s.push_str("；数据直接拷入WQE（inline）");
            }
            s
        }
        StepKind::Mmio {
            bytes,
            blueflame: true,
            route: r,
        } => format!(
            "BlueFlame MMIO写：{bytes} B的WQE连同门铃（doorbell），CPU > {}",
            route(r)
        ),
        StepKind::Mmio {
            bytes,
            blueflame: false,
            route: r,
        } => format!("门铃（doorbell）：{bytes} B MMIO写，CPU > {}", route(r)),
        StepKind::WqeFetch { fetched: false, .. } => {
            "网卡发送引擎解析WQE（BlueFlame：无需从主机内存取WQE）".into()
        }
        StepKind::WqeFetch {
            fetched: true,
            route: r,
        } => format!("取WQE：网卡通过DMA从主机内存读取WQE（{}）并解析", route(r)),
        StepKind::MttLookup {
            va,
            bus,
            gpu: true,
            key,
        } => format!(
            "网卡按{}查MR并经MTT转换：GPU虚拟地址[{}] -> 总线地址[{}]（转换表在注册时建立）",
            key.name(),
            hex(*va),
            hex(*bus)
        ),
        StepKind::MttLookup { va, bus, key, .. } => format!(
            "网卡按{}查MR并经MTT转换：主机虚拟地址[{}] -> [{}]（固定主机内存，地址不变）",
            key.name(),
            hex(*va),
            hex(*bus)
        ),
        StepKind::ReadRequest { route: r } => format!(
            "读请求：1个数据包（RETH：远端地址、rkey、长度）发往数据所在端，{}",
            route(r)
        ),
        StepKind::RecvWqeFetch { bytes, route: r } => format!(
            "取接收WQE（在数据到达之前预取）：网卡通过DMA读取预先提交的{bytes} B接收WQE（{}），其sge给出目的地址",
            route(r)
        ),
        StepKind::Descriptor(d) => desc_zh(d),
        StepKind::Inline { bytes } => {
            format!("无需DMA读取：{bytes} B数据已随WQE送达网卡")
        }
        StepKind::DmaRead {
            requests,
            request_bytes,
            completions,
            gpu,
            route: r,
            first_data,
        } => format!(
            "网卡DMA读取{}：{requests}个读请求（每个至多{request_bytes} B），{completions}个完成包经 {} 返回（首批数据于 {}）",
            mem_zh(*gpu),
            route(r),
            us(*first_data)
        ),
        StepKind::NicTx => "网卡发送流水线（分包、加包头）".into(),
        StepKind::Wire {
            packets,
            mtu,
            route: r,
        } => format!("线路传输：{packets}个数据包（MTU {mtu} B），{}", route(r)),
        StepKind::NicRx => "远端网卡接收流水线".into(),
        StepKind::DmaWrite {
            writes,
            write_bytes,
            gpu,
            route: r,
        } => format!(
            "网卡DMA写入{}：{writes}个写事务（posted write，每个至多{write_bytes} B），{}",
            mem_zh(*gpu),
            route(r)
        ),
        StepKind::Cqe {
            op: Op::Read,
            bytes,
            route: r,
        } => format!(
            "读操作的完成项CQE（{bytes} B）在最后一个响应写入后写入请求端主机内存，{}",
            route(r)
        ),
        StepKind::Cqe {
            op: Op::Send,
            bytes,
            route: r,
        } => format!(
            "接收完成项CQE（{bytes} B）写入主机内存（Send消耗预先提交的接收WQE），{}",
            route(r)
        ),
        StepKind::Cqe {
            bytes, route: r, ..
        } => format!(
            "接收完成项CQE（{bytes} B）写入主机内存（Write with Immediate消耗一个预先提交的接收WQE），{}",
            route(r)
        ),
        StepKind::Poll {
            what: PollKind::RecvCqe,
        } => "轮询CQ：接收端CPU发现CQE，并重新提交接收WQE".into(),
        StepKind::Poll {
            what: PollKind::ReadCqe,
        } => "轮询CQ：请求端CPU发现读操作的CQE：数据已在其缓冲区中".into(),
        StepKind::Poll {
            what: PollKind::LastByteCpu,
        } => "接收端CPU轮询缓冲区最后一个字节，发现其变化（普通Write没有CQE）".into(),
        StepKind::Poll {
            what: PollKind::LastByteGpu,
        } => "GPU内核轮询GPU显存中缓冲区的最后一个字节，发现其变化（普通Write没有CQE）".into(),
        StepKind::Flush { addr } => format!(
            "刷新（flush）：经回环QP对GPU[{}]做1字节RDMA Read，确保此前的写入对GPU可见",
            hex(*addr)
        ),
        StepKind::FlushPost => "CPU提交flush读请求（非内联：经门铃）".into(),
        StepKind::FlushMmio { route: r } => format!("MMIO：WQE送往网卡，CPU > {}", route(r)),
        StepKind::FlushEngine => "网卡发送引擎解析WQE".into(),
        StepKind::FlushLoopback { response: false } => {
            "读请求经回环QP穿过网卡的发送与接收流水线".into()
        }
        StepKind::FlushLoopback { response: true } => {
            "1 B响应经回环QP穿过网卡的发送与接收流水线".into()
        }
        StepKind::FlushRead {
            request,
            completion,
        } => format!(
            "读请求 {}（排在数据写入之后），1 B完成包 {}",
            route(request),
            route(completion)
        ),
        StepKind::FlushWrite { route: r } => format!("该字节写入锁页主机内存，{}", route(r)),
        StepKind::FlushCqe { route: r } => format!("flush的CQE写入主机内存，{}", route(r)),
        StepKind::FlushPoll => "轮询CQ发现flush的CQE".into(),
        StepKind::DataLands { gpu, route: r } => format!(
            "最后一次数据写入落入{}内存，{}：数据自此可见（走另一条路径的CQE已先被轮询到）",
            if *gpu { "GPU" } else { "主机" },
            route(r)
        ),
        StepKind::Ack { route: r } => format!(
            "RC确认（ACK）返回发送端，{}（影响流水吞吐，不在单向延迟路径上）",
            route(r)
        ),
        StepKind::SendCqe { route: r } => format!(
            "发送完成项CQE写入发送端主机内存，{}：该工作请求（及其缓冲区）完成",
            route(r)
        ),
    }
}

// ---- the whole walk --------------------------------------------------------------------------

struct Table {
    lines: Vec<String>,
    comp_width: usize,
}

impl Table {
    fn header(&mut self, lang: Lang) {
        let (s, d, c, w) = match lang {
            Lang::En => ("start", "dur", "component", "step"),
            Lang::Zh => ("开始", "耗时", "部件", "步骤"),
        };
        // CJK headers are two columns wide per character.
        let pad = |t: &str, width: usize| {
            let cols: usize = t.chars().map(|ch| if ch.is_ascii() { 1 } else { 2 }).sum();
            " ".repeat(width.saturating_sub(cols)) + t
        };
        let padr = |t: &str, width: usize| {
            let cols: usize = t.chars().map(|ch| if ch.is_ascii() { 1 } else { 2 }).sum();
            t.to_string() + &" ".repeat(width.saturating_sub(cols))
        };
        self.lines.push(format!(
            "  {:>3} {} {}  {}  {}",
            "#",
            pad(s, 9),
            pad(d, 9),
            padr(c, self.comp_width),
            w
        ));
    }

    fn step(&mut self, n: Option<usize>, s: &Step, lang: Lang, depth: usize) {
        let text = match lang {
            Lang::En => text_en(&s.kind),
            Lang::Zh => text_zh(&s.kind),
        };
        let num = n.map(|n| n.to_string()).unwrap_or_default();
        let comp = if depth == 0 { s.component.as_str() } else { "" };
        self.lines.push(format!(
            "  {:>3} {:>9} {:>9}  {:<w$}  {}{}",
            num,
            us(s.start),
            us(s.dur),
            comp,
            "  ".repeat(depth),
            text,
            w = self.comp_width
        ));
        for p in &s.parts {
            self.step(None, p, lang, depth + 1);
        }
    }
}

fn comp_width(p: &PathWalk) -> usize {
    fn walk(s: &Step, w: &mut usize) {
        *w = (*w).max(s.component.len());
        for p in &s.parts {
            walk(p, w);
        }
    }
    let mut w = 9;
    for s in p.steps.iter().chain(&p.side_steps) {
        walk(s, &mut w);
    }
    w
}

fn setup_text(s: &Setup, lang: Lang) -> Vec<String> {
    match (s, lang) {
        (
            Setup::Bounce {
                host,
                pageable: true,
                count,
                addr,
                register_ps,
                pages,
                page_bytes,
                ..
            },
            Lang::En,
        ) => vec![format!(
            "{host}: {} at {}: malloc + ibv_reg_mr {} us each (pinned for the NIC by its registration; CUDA copies it as pageable memory; host MR: {} of {})",
            plural(
                u64::from(*count),
                "pageable bounce buffer",
                "pageable bounce buffers"
            ),
            hex(*addr),
            us(*register_ps),
            plural(*pages, "page", "pages"),
            fmt_bytes(*page_bytes)
        )],
        (
            Setup::Bounce {
                host,
                pageable: true,
                count,
                addr,
                register_ps,
                pages,
                page_bytes,
                ..
            },
            Lang::Zh,
        ) => vec![format!(
            "{host}：在 {} 分配并注册 {count} 个可分页中转缓冲区：每个 malloc + ibv_reg_mr {} us（注册使其对网卡固定；CUDA按可分页内存拷贝；主机MR：{pages} 页 × {}）",
            hex(*addr),
            us(*register_ps),
            fmt_bytes(*page_bytes)
        )],
        (
            Setup::Bounce {
                host,
                count,
                addr,
                alloc_ps,
                register_ps,
                pages,
                page_bytes,
                ..
            },
            Lang::En,
        ) => vec![format!(
            "{host}: {} at {}: cudaMallocHost {} us + ibv_reg_mr {} us each (host MR: {} of {}, bus address = virtual address)",
            plural(
                u64::from(*count),
                "pinned bounce buffer",
                "pinned bounce buffers"
            ),
            hex(*addr),
            us(*alloc_ps),
            us(*register_ps),
            plural(*pages, "page", "pages"),
            fmt_bytes(*page_bytes)
        )],
        (
            Setup::Bounce {
                host,
                count,
                addr,
                alloc_ps,
                register_ps,
                pages,
                page_bytes,
                ..
            },
            Lang::Zh,
        ) => vec![format!(
            "{host}：在 {} 分配并注册 {count} 个固定（pinned）中转缓冲区：每个 cudaMallocHost {} us + ibv_reg_mr {} us（主机MR：{pages} 页 × {}，总线地址 = 虚拟地址）",
            hex(*addr),
            us(*alloc_ps),
            us(*register_ps),
            fmt_bytes(*page_bytes)
        )],
        (Setup::GdrMap { host, va, cost_ps }, Lang::En) => vec![format!(
            "{host}: gdr_pin_buffer + gdr_map of GPU memory [{}] into the CPU's address space through BAR1, {} us, once",
            hex(*va),
            us(*cost_ps)
        )],
        (Setup::GdrMap { host, va, cost_ps }, Lang::Zh) => vec![format!(
            "{host}：gdr_pin_buffer + gdr_map 将GPU显存 [{}] 经BAR1映射到CPU地址空间，{} us，一次性",
            hex(*va),
            us(*cost_ps)
        )],
        (
            Setup::GpuMr {
                host,
                va,
                bytes,
                pages,
                page_bytes,
                cost_ps,
                mtt,
                when,
            },
            lang,
        ) => {
            let mut out = vec![match lang {
                Lang::En => format!(
                    "{host}: ibv_reg_mr on GPU memory [{}], {bytes} bytes, through peer memory: pins {} of {} and builds the NIC's translation table (MTT), {} us{}",
                    hex(*va),
                    plural(*pages, "GPU page", "GPU pages"),
                    fmt_bytes(*page_bytes),
                    us(*cost_ps),
                    match when {
                        MrWhen::Cached => ", once (registration cache)",
                        MrWhen::PerTransferStep => " (per transfer: a timed step below)",
                        MrWhen::PerTransferReceiver =>
                            " (per transfer, on this host's CPU from t = 0 while the sender works)",
                    }
                ),
                Lang::Zh => format!(
                    "{host}：ibv_reg_mr 经 peer memory 注册GPU显存[{}]，{bytes} 字节：锁定 {pages} 个GPU页（每页 {}）并构建网卡地址转换表（MTT），{} us{}",
                    hex(*va),
                    fmt_bytes(*page_bytes),
                    us(*cost_ps),
                    match when {
                        MrWhen::Cached => "，只做一次（注册缓存）",
                        MrWhen::PerTransferStep => "（每次传输都注册：见下方计时步骤）",
                        MrWhen::PerTransferReceiver =>
                            "（每次传输都注册：在发送端工作的同时，由本机CPU从 t = 0 开始执行）",
                    }
                ),
            }];
            for (i, (v, b)) in mtt.iter().enumerate() {
                out.push(match lang {
                    Lang::En => format!(
                        "    MTT[{i}]: GPU virtual address [{}] -> bus address [{}]",
                        hex(*v),
                        hex(*b)
                    ),
                    Lang::Zh => format!(
                        "    MTT[{i}]：GPU虚拟地址[{}] -> 总线地址[{}]",
                        hex(*v),
                        hex(*b)
                    ),
                });
            }
            if (mtt.len() as u64) < *pages {
                out.push(match lang {
                    Lang::En => format!("    ... {} entries in all", pages),
                    Lang::Zh => format!("    ……共 {pages} 项"),
                });
            }
            out
        }
    }
}

/// The walk as text in `lang`.
pub fn render(w: &Walk, lang: Lang) -> String {
    let mut out: Vec<String> = Vec::new();
    let [s, r] = &w.ends;
    match lang {
        Lang::En => {
            out.push(format!(
                "gdrsim walk: {} bytes ({}) from GPU memory on {} to GPU memory on {}, step by step on the simulated machine",
                w.size,
                fmt_bytes(w.size),
                s.host,
                r.host
            ));
            out.push(format!(
                "config: {}; scenario: {} (GPU-NIC affinity {})",
                w.config_name, w.scenario, w.class
            ));
            out.push(format!(
                "sender:   {}  {} ({}) -> {} ({})",
                s.host, s.gpu, s.gpu_model, s.nic, s.nic_model
            ));
            out.push(format!(
                "receiver: {}  {} ({}) -> {} ({})",
                r.host, r.nic, r.nic_model, r.gpu, r.gpu_model
            ));
        }
        Lang::Zh => {
            out.push(format!(
                "gdrsim walk：在模拟机器上逐步演示 {} 字节（{}）从 {} 的GPU显存传到 {} 的GPU显存",
                w.size,
                fmt_bytes(w.size),
                s.host,
                r.host
            ));
            out.push(format!(
                "配置：{}；场景：{}（GPU与网卡的亲和关系 {}）",
                w.config_name, w.scenario, w.class
            ));
            out.push(format!(
                "发送端：{}  {} ({}) -> {} ({})",
                s.host, s.gpu, s.gpu_model, s.nic, s.nic_model
            ));
            out.push(format!(
                "接收端：{}  {} ({}) -> {} ({})",
                r.host, r.nic, r.nic_model, r.gpu, r.gpu_model
            ));
        }
    }
    out.push(match (lang, w.op) {
        (Lang::En, Op::Read) => format!(
            "operation: {} ({}): the receiver's NIC reads the sender's buffer; the sender's CPU takes no part",
            op_title(w.op),
            w.op.name()
        ),
        (Lang::En, _) => format!("operation: {} ({})", op_title(w.op), w.op.name()),
        (Lang::Zh, Op::Read) => format!(
            "操作：{}（{}）：接收端网卡读取发送端缓冲区，发送端CPU不参与",
            op_title(w.op),
            w.op.name()
        ),
        (Lang::Zh, _) => format!("操作：{}（{}）", op_title(w.op), w.op.name()),
    });
    if !w.paths.iter().any(|p| p.path != "gpudirect") {
        out.push(match lang {
            Lang::En => "the staged path cannot carry this operation (the source's CPU would have to copy it into a bounce buffer first), so only GPUDirect is walked".into(),
            Lang::Zh => "传统（中转）路径无法承载此操作（数据源端的CPU须先将其拷入中转缓冲区），因此只演示GPUDirect路径".into(),
        });
    }
    let same_map =
        s.gpu_va == r.gpu_va && s.bar_offset == r.bar_offset && s.host_buffer == r.host_buffer;
    let maps: Vec<&Endpoint> = if same_map { vec![s] } else { vec![s, r] };
    for e in maps {
        let who = if same_map {
            String::new()
        } else {
            format!("{} ", e.host)
        };
        match lang {
            Lang::En => {
                out.push(format!(
                    "{who}address map (config): GPU buffer virtual address {} ({}.heap_base) + BAR offset {} ({}.bar_offset) = GPU bus address {}",
                    hex(e.gpu_va),
                    e.gpu,
                    hex(e.bar_offset),
                    e.gpu,
                    hex(e.gpu_bus())
                ));
                out.push(format!(
                    "{who}pinned host bounce buffer {} (host_buffer_base)",
                    hex(e.host_buffer)
                ));
            }
            Lang::Zh => {
                out.push(format!(
                    "{who}地址映射（来自配置）：GPU显存虚拟地址 {}（{}.heap_base）+ BAR偏移 {}（{}.bar_offset）= GPU总线地址 {}",
                    hex(e.gpu_va),
                    e.gpu,
                    hex(e.bar_offset),
                    e.gpu,
                    hex(e.gpu_bus())
                ));
                out.push(format!(
                    "{who}固定（pinned）主机中转缓冲区 {}（host_buffer_base）",
                    hex(e.host_buffer)
                ));
            }
        }
    }
    out.push(match lang {
        Lang::En => "times: simulated, noise-free (jitter off), in microseconds; t = 0 when the data is ready in the sender's GPU buffer".into(),
        Lang::Zh => "时间：模拟所得，无噪声（关闭抖动），单位微秒；t = 0 为数据在发送端GPU缓冲区就绪的时刻".into(),
    });

    for (i, p) in w.paths.iter().enumerate() {
        out.push(String::new());
        let gpudirect = p.path == "gpudirect";
        let how = p.effective_path.as_str();
        out.push(match (lang, gpudirect) {
            (Lang::En, false) if how == "gdrcopy" => format!(
                "=== [{}] GDRCopy path ({}): GPU -(CPU through BAR1)-> host memory -> NIC -> wire -> NIC -> host memory -(CPU through BAR1)-> GPU ===",
                i + 1,
                p.path
            ),
            (Lang::En, false) if how == "staged_pipelined" => format!(
                "=== [{}] Pipelined staging ({}): GPU -> host memory -> NIC -> wire -> NIC -> host memory -> GPU, chunk by chunk, overlapped ===",
                i + 1,
                p.path
            ),
            (Lang::Zh, false) if how == "gdrcopy" => format!(
                "=== [{}] [GDRCopy路径]（{}）：GPU -（CPU经BAR1）-> 主机内存 -> 网卡 -> 线路 -> 网卡 -> 主机内存 -（CPU经BAR1）-> GPU ===",
                i + 1,
                p.path
            ),
            (Lang::Zh, false) if how == "staged_pipelined" => format!(
                "=== [{}] [流水线中转路径]（{}）：GPU -> 主机内存 -> 网卡 -> 线路 -> 网卡 -> 主机内存 -> GPU，分块重叠进行 ===",
                i + 1,
                p.path
            ),
            (Lang::En, false) => format!(
                "=== [{}] Traditional path ({}): GPU -> host memory -> NIC -> wire -> NIC -> host memory -> GPU ===",
                i + 1,
                p.path
            ),
            (Lang::En, true) => format!(
                "=== [{}] GPUDirect path ({}): the NIC reads and writes GPU memory directly ===",
                i + 1,
                p.path
            ),
            (Lang::Zh, false) => format!(
                "=== [{}] [传统路径]（{}）：GPU -> 主机内存 -> 网卡 -> 线路 -> 网卡 -> 主机内存 -> GPU ===",
                i + 1,
                p.path
            ),
            (Lang::Zh, true) => format!(
                "=== [{}] [GPUDirect路径]（{}）：网卡直接读写GPU显存 ===",
                i + 1,
                p.path
            ),
        });
        if p.path == "auto" {
            out.push(match lang {
                Lang::En => format!(
                    "note: auto runs what NCCL would choose here: {}",
                    p.effective_path
                ),
                Lang::Zh => format!("注意：auto 按NCCL在此处的选择运行：{}", p.effective_path),
            });
        } else if p.effective_path != p.path {
            out.push(match lang {
                Lang::En => format!(
                    "note: peer-to-peer is not available in this scenario; effective path: {}",
                    p.effective_path
                ),
                Lang::Zh => format!(
                    "注意：此场景不支持点对点（P2P）访问，实际路径：{}",
                    p.effective_path
                ),
            });
        }
        let bounce = p.setup.iter().any(|x| matches!(x, Setup::Bounce { .. }));
        out.push(match lang {
            Lang::En => format!(
                "{} (setup_us = {}: the one-time part, before t = 0, not in the latency):",
                if bounce {
                    "memory registration and bounce buffers"
                } else {
                    "memory registration"
                },
                us(p.setup_ps)
            ),
            Lang::Zh => format!(
                "{}（setup_us = {}：一次性开销，在 t = 0 之前完成，不计入延迟）：",
                if bounce {
                    "内存注册与中转缓冲区"
                } else {
                    "内存注册"
                },
                us(p.setup_ps)
            ),
        });
        for item in &p.setup {
            for line in setup_text(item, lang) {
                out.push(format!("  {line}"));
            }
        }
        let mut t = Table {
            lines: Vec::new(),
            comp_width: comp_width(p),
        };
        t.header(lang);
        for (n, s) in p.steps.iter().enumerate() {
            t.step(Some(n + 1), s, lang, 0);
        }
        out.append(&mut t.lines);
        let dst_gpu = p.dst_gpu;
        out.push(match lang {
            Lang::En => format!(
                "  {:>3} {:>9} {:>9}  {:<w$}  delivered: the data is visible in {} on {}; one-way latency {} us",
                "",
                us(p.latency_ps),
                "",
                "",
                if dst_gpu { "GPU memory" } else { "host memory" },
                r.host,
                us(p.latency_ps),
                w = t.comp_width
            ),
            Lang::Zh => format!(
                "  {:>3} {:>9} {:>9}  {:<w$}  送达：数据在 {} 的{}中可见；单向延迟 {} us",
                "",
                us(p.latency_ps),
                "",
                "",
                r.host,
                if dst_gpu { "GPU显存" } else { "主机内存" },
                us(p.latency_ps),
                w = t.comp_width
            ),
        });
        if let Some(g) = &p.gather {
            out.push(match (lang, gpudirect) {
                (Lang::En, false) => format!(
                    "  traditional DMA descriptor: src={}, len={}, flags={}",
                    hex(g.addr),
                    g.len,
                    g.flags
                ),
                (Lang::En, true) => format!(
                    "  GPUDirect DMA descriptor: src={}, len={}, flags={}",
                    hex(g.addr),
                    g.len,
                    g.flags
                ),
                (Lang::Zh, false) => format!(
                    "  传统DMA描述符: src={}, len={}, flags={}",
                    hex(g.addr),
                    g.len,
                    g.flags
                ),
                (Lang::Zh, true) => format!(
                    "  GPUDirect DMA描述符: src={}, len={}, flags={}",
                    hex(g.addr),
                    g.len,
                    g.flags
                ),
            });
        }
        if !p.side_steps.is_empty() {
            out.push(match lang {
                Lang::En => "  off the latency path:".into(),
                Lang::Zh => "  不在延迟路径上：".into(),
            });
            let mut t = Table {
                lines: Vec::new(),
                comp_width: comp_width(p),
            };
            for s in &p.side_steps {
                t.step(None, s, lang, 0);
            }
            out.append(&mut t.lines);
        }
    }
    out.push(String::new());
    contrast(w, lang, &mut out);
    let mut text = out.join("\n");
    text.push('\n');
    text
}

fn contrast(w: &Walk, lang: Lang, out: &mut Vec<String>) {
    let (Some(st), Some(gd)) = (
        w.paths.iter().find(|p| p.path != "gpudirect"),
        w.paths.iter().find(|p| p.path == "gpudirect"),
    ) else {
        return;
    };
    let [s, r] = &w.ends;
    out.push(match lang {
        Lang::En => "=== Contrast (counted from the simulation) ===".into(),
        Lang::Zh => "=== 对比结果（由模拟统计得出） ===".into(),
    });
    let what = |d: &Desc, e: &Endpoint, lang: Lang| -> String {
        let gpu = d.flags & 1 == 1;
        match (lang, gpu) {
            (Lang::En, false) => "host memory: pinned bounce buffer".into(),
            (Lang::En, true) => format!(
                "GPU bus address = virtual address {} + BAR offset {}",
                hex(d.virt_addr),
                hex(e.bar_offset)
            ),
            (Lang::Zh, false) => "主机内存：固定中转缓冲区".into(),
            (Lang::Zh, true) => format!(
                "GPU总线地址 = 虚拟地址 {} + BAR偏移 {}",
                hex(d.virt_addr),
                hex(e.bar_offset)
            ),
        }
    };
    if let (Some(a), Some(b)) = (&st.gather, &gd.gather) {
        match lang {
            Lang::En => {
                out.push(format!(
                    "traditional DMA source: {} ({})",
                    hex(a.addr),
                    what(a, s, lang)
                ));
                out.push(format!(
                    "GPUDirect DMA source:   {} ({})",
                    hex(b.addr),
                    what(b, s, lang)
                ));
            }
            Lang::Zh => {
                out.push(format!(
                    "传统路径DMA源地址: {}（{}）",
                    hex(a.addr),
                    what(a, s, lang)
                ));
                out.push(format!(
                    "GPUDirect DMA源地址: {}（{}）",
                    hex(b.addr),
                    what(b, s, lang)
                ));
            }
        }
    }
    if let (Some(a), Some(b)) = (&st.scatter, &gd.scatter) {
        match lang {
            Lang::En => {
                out.push(format!(
                    "traditional DMA destination on {}: {} ({})",
                    r.host,
                    hex(a.addr),
                    what(a, r, lang)
                ));
                out.push(format!(
                    "GPUDirect DMA destination on {}:   {} ({})",
                    r.host,
                    hex(b.addr),
                    what(b, r, lang)
                ));
            }
            Lang::Zh => {
                out.push(format!(
                    "传统路径在 {} 的DMA目的地址: {}（{}）",
                    r.host,
                    hex(a.addr),
                    what(a, r, lang)
                ));
                out.push(format!(
                    "GPUDirect在 {} 的DMA目的地址: {}（{}）",
                    r.host,
                    hex(b.addr),
                    what(b, r, lang)
                ));
            }
        }
    }
    let size = w.size;
    let rows: Vec<(String, String, String, String)> = {
        let n = |v: u64| v.to_string();
        let diff = |a: u64, b: u64| {
            if a >= b {
                (a - b).to_string()
            } else {
                format!("-{}", b - a)
            }
        };
        let ratio_diff = |a: u64, b: u64| {
            if a >= b {
                ratio(a - b, size)
            } else {
                format!("-{}", ratio(b - a, size))
            }
        };
        let lat_diff = if st.latency_ps >= gd.latency_ps {
            us(st.latency_ps - gd.latency_ps)
        } else {
            format!("-{}", us(gd.latency_ps - st.latency_ps))
        };
        let cpu_diff = if st.cpu_busy_ps >= gd.cpu_busy_ps {
            us(st.cpu_busy_ps - gd.cpu_busy_ps)
        } else {
            format!("-{}", us(gd.cpu_busy_ps - st.cpu_busy_ps))
        };
        let labels: [&str; 6] = match lang {
            Lang::En => [
                "cudaMemcpy copies",
                "PCIe link traversals (payload)",
                "root-complex passes (payload)",
                "bytes through host memory",
                "CPU time per message (us)",
                "one-way latency (us)",
            ],
            Lang::Zh => [
                "cudaMemcpy拷贝次数",
                "PCIe链路穿越次数（数据）",
                "经过根复合体次数（数据）",
                "经过主机内存的字节数",
                "每条消息的CPU时间（us）",
                "单向延迟（us）",
            ],
        };
        let (ca, cb) = (st.copies.len() as u64, gd.copies.len() as u64);
        vec![
            (labels[0].into(), n(ca), n(cb), diff(ca, cb)),
            (
                labels[1].into(),
                ratio(st.pcie_link_bytes, size),
                ratio(gd.pcie_link_bytes, size),
                ratio_diff(st.pcie_link_bytes, gd.pcie_link_bytes),
            ),
            (
                labels[2].into(),
                ratio(st.root_complex_bytes, size),
                ratio(gd.root_complex_bytes, size),
                ratio_diff(st.root_complex_bytes, gd.root_complex_bytes),
            ),
            (
                labels[3].into(),
                n(st.host_mem_bytes),
                n(gd.host_mem_bytes),
                diff(st.host_mem_bytes, gd.host_mem_bytes),
            ),
            (
                labels[4].into(),
                us(st.cpu_busy_ps),
                us(gd.cpu_busy_ps),
                cpu_diff,
            ),
            (
                labels[5].into(),
                us(st.latency_ps),
                us(gd.latency_ps),
                lat_diff,
            ),
        ]
    };
    let cols = |t: &str| -> usize { t.chars().map(|c| if c.is_ascii() { 1 } else { 2 }).sum() };
    let lw = rows.iter().map(|r| cols(&r.0)).max().unwrap_or(0);
    let removed = match lang {
        Lang::En => "removed",
        Lang::Zh => "减少",
    };
    out.push(format!(
        "  {}  {:>12} {:>12} {}",
        " ".repeat(lw),
        st.path,
        gd.path,
        " ".repeat(12 - cols(removed)) + removed
    ));
    for (label, a, b, d) in &rows {
        out.push(format!(
            "  {}{}  {:>12} {:>12} {:>12}",
            label,
            " ".repeat(lw - cols(label)),
            a,
            b,
            d
        ));
    }
    if gd.latency_ps > 0 && st.latency_ps > 0 {
        let x = st.latency_ps as f64 / gd.latency_ps as f64;
        out.push(match (lang, x >= 1.0) {
            (Lang::En, true) => {
                format!("  GPUDirect one-way latency is {x:.2}x lower than staged.")
            }
            (Lang::En, false) => format!(
                "  GPUDirect one-way latency is {:.2}x higher than staged here.",
                1.0 / x
            ),
            (Lang::Zh, true) => format!("  GPUDirect的单向延迟是传统路径的 1/{x:.2}。"),
            (Lang::Zh, false) => format!(
                "  此场景中GPUDirect的单向延迟是传统路径的 {:.2} 倍。",
                1.0 / x
            ),
        });
    }
    match lang {
        Lang::En => {
            out.push("definitions: a PCIe link traversal is one crossing of one PCIe link direction by the whole message payload: payload bytes summed over the".into());
            out.push("  PCIe link directions they crossed (payload DMA read completions, payload DMA writes, cudaMemcpy data), divided by the message size;".into());
            out.push("  read requests, WQEs, doorbells, CQEs, ACKs and the flush read are not counted. Root-complex passes count the same way over root".into());
            out.push("  complexes. Bytes through host memory: payload bytes written to plus read from host DRAM on both hosts (results.csv host_mem_bytes).".into());
        }
        Lang::Zh => {
            out.push("定义：PCIe链路穿越次数 = 数据载荷经过的每个PCIe链路方向上的字节数之和（网卡DMA读的完成包、网卡DMA写、cudaMemcpy的数据）除以消息大小；".into());
            out.push("  读请求、WQE、门铃、CQE、ACK与flush读不计。经过根复合体次数按同样方法统计。经过主机内存的字节数：两台主机DRAM中写入与读出的".into());
            out.push("  载荷字节数之和（即results.csv的host_mem_bytes）。".into());
        }
    }
    // Which copies GPUDirect removed.
    let removed: Vec<&(String, bool)> = st
        .copies
        .iter()
        .filter(|c| !gd.copies.contains(c))
        .collect();
    if removed.is_empty() {
        out.push(match lang {
            Lang::En => format!(
                "GPUDirect removed no copy here (effective path: {}).",
                gd.effective_path
            ),
            Lang::Zh => format!(
                "此场景中GPUDirect没有省去任何拷贝（实际路径：{}）。",
                gd.effective_path
            ),
        });
    } else {
        let list: Vec<String> = removed
            .iter()
            .map(|(host, d2h)| match (lang, d2h) {
                (Lang::En, true) => format!("the GPU->host copy (cudaMemcpyDtoH) on {host}"),
                (Lang::En, false) => format!("the host->GPU copy (cudaMemcpyHtoD) on {host}"),
                (Lang::Zh, true) => format!("{host} 上GPU->主机的拷贝（cudaMemcpyDtoH）"),
                (Lang::Zh, false) => format!("{host} 上主机->GPU的拷贝（cudaMemcpyHtoD）"),
            })
            .collect();
        out.push(match lang {
            Lang::En => format!(
                "GPUDirect removed {}: the NIC reads and writes GPU memory directly.",
                list.join(" and ")
            ),
            Lang::Zh => format!("GPUDirect省去了 {}，网卡直接读写显存。", list.join(" 和 ")),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_round_to_the_nanosecond() {
        assert_eq!(us(0), "0.000");
        assert_eq!(us(7_379_724), "7.380");
        assert_eq!(us(499), "0.000");
        assert_eq!(us(500), "0.001");
        assert_eq!(us(17_795_603), "17.796");
    }

    #[test]
    fn addresses_are_upper_case_hex() {
        assert_eq!(hex(0x2A_8000_0000), "0x2A80000000");
        assert_eq!(hex(0x1000_0000), "0x10000000");
    }
}

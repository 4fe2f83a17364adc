//! The options a study is written in: paths, operations, and the words of `[sim]`, endpoint
//! and `[output]` options. Each is an enum read by serde through [`Choice`] (its word list is
//! its `ALL`), written back by `name()`.

use super::choice::{Choice, choice};

/// How registration cost is paid.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Registration {
    /// Once, at first use, through a registration cache (goes to setup_us).
    #[default]
    Cached,
    /// On every transfer (in the latency).
    PerTransfer,
    /// Through a least-recently-used cache of `registration_cache_entries` registrations, the
    /// workload cycling over `buffers` buffers per side: all of them stay registered (setup)
    /// when they fit; otherwise every transfer misses (cyclic access defeats LRU) and pays the
    /// eviction's deregistration and its own registration in its latency.
    Lru,
}

impl Registration {
    /// Every value, in the order messages list their words.
    pub const ALL: [Registration; 3] = [
        Registration::Cached,
        Registration::PerTransfer,
        Registration::Lru,
    ];

    /// The word a config writes for the value.
    pub fn name(self) -> &'static str {
        match self {
            Registration::Cached => "cached",
            Registration::PerTransfer => "per_transfer",
            Registration::Lru => "lru",
        }
    }
}

/// Data paths a sweep can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathKind {
    /// Pinned host memory to pinned host memory.
    Host,
    /// cudaMemcpy to a pinned bounce buffer, the host path, cudaMemcpy back.
    Staged,
    /// The NIC reads and writes GPU memory directly.
    GpuDirect,
    /// What NCCL would choose for the pair, side by side: PXN on the sending side where it
    /// applies (`pxn`), GPUDirect where the GPU-NIC class is at most `net_gdr_level` (and, on
    /// the sending side, the GPU is Ampere or later), host staging otherwise.
    Auto,
    /// Host staging where the CPU copies through the GPU's BAR1 mapping (GDRCopy), as
    /// MVAPICH2-GDR and UCX do for small messages (row B6: up to 8 KiB).
    Gdrcopy,
    /// Host staging in chunks, pipelined as communication libraries do it: cudaMemcpyAsync of
    /// each chunk into one of `pipeline_depth` bounce buffers, one RDMA per chunk, and the
    /// receiver's copy of each chunk as it arrives.
    StagedPipelined,
    /// NCCL's PXN on the sending side: the GPU's kernel stores each chunk over NVLink into the
    /// buffer of the GPU next to the NIC (its relay), whose proxy posts the RDMA from there by
    /// GPUDirect; the receiver receives locally, as `gpudirect`. Where the GPU is itself the
    /// NIC's nearest or no NVLink joins the two, the sender runs as `gpudirect`.
    Pxn,
    /// NCCL's host path with GPUDirect off (NCCL_NET_GDR_LEVEL=LOC): the sending GPU's kernel
    /// stores each chunk into pinned, mapped host memory and its flag, the proxy thread posts
    /// the RDMA from there; the receiving proxy flags the chunk to the receiving kernel, which
    /// loads it from host memory. No cudaMemcpy (`src/transport/net.cc`).
    NcclHost,
}

impl PathKind {
    /// The word a config writes for the value.
    pub fn name(self) -> &'static str {
        match self {
            PathKind::Host => "host",
            PathKind::Staged => "staged",
            PathKind::GpuDirect => "gpudirect",
            PathKind::Auto => "auto",
            PathKind::Gdrcopy => "gdrcopy",
            PathKind::StagedPipelined => "staged_pipelined",
            PathKind::Pxn => "pxn",
            PathKind::NcclHost => "nccl_host",
        }
    }
    /// Every value, in the order messages list their words.
    pub const ALL: [PathKind; 8] = [
        PathKind::Host,
        PathKind::Staged,
        PathKind::GpuDirect,
        PathKind::Auto,
        PathKind::Gdrcopy,
        PathKind::StagedPipelined,
        PathKind::Pxn,
        PathKind::NcclHost,
    ];
}

/// RDMA operations a sweep can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// RDMA Write with Immediate: the receiver's NIC consumes a pre-posted receive WQE and
    /// writes a receive CQE that the receiving thread polls (what NCCL's IB transport uses).
    WriteImm,
    /// Plain RDMA Write: no receive WQE and no receive CQE; the consumer learns of the data by
    /// polling the last byte of its buffer, as `ib_write_lat` does.
    Write,
    /// RDMA Read: the data's destination (the flow's receiver) posts; the source side's NIC
    /// answers without its CPU.
    Read,
    /// Send/Recv: the receiver's NIC takes the scatter address from a pre-posted receive WQE,
    /// fetched by DMA, and writes a receive CQE.
    Send,
}

impl Op {
    /// Every value, in the order messages list their words.
    pub const ALL: [Op; 4] = [Op::WriteImm, Op::Write, Op::Read, Op::Send];

    /// The word a config writes for the value.
    pub fn name(self) -> &'static str {
        match self {
            Op::WriteImm => "write_imm",
            Op::Write => "write",
            Op::Read => "read",
            Op::Send => "send",
        }
    }

    /// Whether `path` can carry the operation: an RDMA Read's source side takes no part with
    /// its CPU, so no path that stages (or may, as `auto`) can feed it.
    pub fn carried_by(self, path: PathKind) -> bool {
        self != Op::Read
            || !matches!(
                path,
                PathKind::Staged
                    | PathKind::Auto
                    | PathKind::Gdrcopy
                    | PathKind::StagedPipelined
                    | PathKind::NcclHost
            )
    }

    /// The name a point's seed is derived from. Write with Immediate keeps "write", the name
    /// it had when it was the only operation, so that renaming it moved no jitter stream.
    pub fn seed_name(self) -> &'static str {
        match self {
            Op::WriteImm => "write",
            Op::Write => "write_plain",
            o => o.name(),
        }
    }
}

/// Whether a GPUDirect receive is flushed before its data counts as visible.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FlushMode {
    /// As NCCL (since 2.19, `ncclTopoNeedFlush`): an RDMA-Read flush for GPUs of compute
    /// capability below 9.0, none from Hopper on (it orders the NIC's writes).
    #[default]
    Auto,
    /// Always flush (NCCL_NET_FORCE_FLUSH=1).
    RdmaRead,
    /// Never flush.
    None,
}

impl FlushMode {
    /// Every value, in the order messages list their words.
    pub const ALL: [FlushMode; 3] = [FlushMode::Auto, FlushMode::RdmaRead, FlushMode::None];

    /// The word a config writes for the value.
    pub fn name(self) -> &'static str {
        match self {
            FlushMode::Auto => "auto",
            FlushMode::RdmaRead => "rdma_read",
            FlushMode::None => "none",
        }
    }

    /// Whether a receive into a GPU of compute capability `cc` (major, minor) is flushed.
    pub fn flushes(self, cc: (u32, u32)) -> bool {
        match self {
            FlushMode::Auto => cc < (9, 0),
            FlushMode::RdmaRead => true,
            FlushMode::None => false,
        }
    }
}

/// Whether the `auto` path's sending side reads GPU memory by GPUDirect, as NCCL's
/// `NCCL_NET_GDR_READ` (`ncclTopoCheckGdr`, `src/graph/paths.cc`): within `net_gdr_level`, a
/// send that may not read its GPU takes NCCL's host path on the send side (the kernel stores
/// into mapped host memory, the NIC reads that) while the receive side keeps its own choice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GdrRead {
    /// NCCL's default (the variable unset): GPUDirect reads from compute capability 8.0 up;
    /// below it only where the GPU has an NVLink peer (or is its node's only GPU), as NCCL
    /// keeps a pre-Ampere GPU's reads off a PCIe shared with other flows.
    #[default]
    Auto,
    /// `NCCL_NET_GDR_READ=1`: GPUDirect reads wherever the level allows.
    On,
    /// `NCCL_NET_GDR_READ=0`: never; every send from GPU memory goes by NCCL's host path.
    Off,
}

impl GdrRead {
    /// Every value, in the order messages list their words.
    pub const ALL: [GdrRead; 3] = [GdrRead::Auto, GdrRead::On, GdrRead::Off];

    /// The word a config writes for the value.
    pub fn name(self) -> &'static str {
        match self {
            GdrRead::Auto => "auto",
            GdrRead::On => "on",
            GdrRead::Off => "off",
        }
    }

    /// Whether NCCL reads a GPU of compute capability `cc` by GPUDirect, where `nvlink` says
    /// the GPU has an NVLink peer or is its node's only GPU.
    pub fn reads(self, cc: (u32, u32), nvlink: bool) -> bool {
        match self {
            GdrRead::Auto => cc >= (8, 0) || nvlink,
            GdrRead::On => true,
            GdrRead::Off => false,
        }
    }
}

/// How finely transfers are simulated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Granularity {
    /// Messages above `coalesce_above_bytes` move as bulk transfers of fluid rate; smaller
    /// ones TLP by TLP and packet by packet.
    #[default]
    Auto,
    /// Every message TLP by TLP (bounded to messages of at most 16 MiB).
    Tlp,
}

impl Granularity {
    /// Every value, in the order messages list their words.
    pub const ALL: [Granularity; 2] = [Granularity::Auto, Granularity::Tlp];

    /// The word a config writes for the value.
    pub fn name(self) -> &'static str {
        match self {
            Granularity::Auto => "auto",
            Granularity::Tlp => "tlp",
        }
    }

    /// Whether every message is simulated TLP by TLP.
    pub fn tlp(self) -> bool {
        self == Granularity::Tlp
    }
}

/// Where one side's data lives (`buffer` of an endpoint).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferPlace {
    /// GPU memory (the default where the side names a GPU).
    Gpu,
    /// Pinned host memory, whatever the path does on the other side.
    Host,
}

impl BufferPlace {
    /// Every value, in the order messages list their words.
    pub const ALL: [BufferPlace; 2] = [BufferPlace::Gpu, BufferPlace::Host];

    /// The word a config writes for the value.
    pub fn name(self) -> &'static str {
        match self {
            BufferPlace::Gpu => "gpu",
            BufferPlace::Host => "host",
        }
    }
}

/// The host buffer a staged side copies through (`bounce` of an endpoint).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BounceKind {
    /// cudaMallocHost'd (the default).
    Pinned,
    /// malloc'd and registered for the NIC, which CUDA sees as pageable.
    Pageable,
}

impl BounceKind {
    /// Every value, in the order messages list their words.
    pub const ALL: [BounceKind; 2] = [BounceKind::Pinned, BounceKind::Pageable];

    /// The word a config writes for the value.
    pub fn name(self) -> &'static str {
        match self {
            BounceKind::Pinned => "pinned",
            BounceKind::Pageable => "pageable",
        }
    }
}

/// A chart the `[output] charts` option can ask for, in the order they are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChartKind {
    /// p50 one-way latency against size, with a min..p99 band per line.
    Latency,
    /// Streaming bandwidth against size, with each scenario's route ceiling.
    Bandwidth,
    /// nccl-tests' bus bandwidth of the NCCL collectives against size: drawn only in a study
    /// with collectives, where it is listed or beside `bandwidth`.
    Busbw,
    /// GPUDirect over staging (latency and bandwidth ratios), with the crossovers.
    Speedup,
    /// Stacked critical-path stages at the breakdown sizes.
    Breakdown,
    /// The scenarios side by side at the comparison size.
    Scenarios,
    /// The busiest channel directions of the streaming run at the comparison size.
    Links,
}

impl ChartKind {
    /// Every value, in the order messages list their words.
    pub const ALL: [ChartKind; 7] = [
        ChartKind::Latency,
        ChartKind::Bandwidth,
        ChartKind::Busbw,
        ChartKind::Speedup,
        ChartKind::Breakdown,
        ChartKind::Scenarios,
        ChartKind::Links,
    ];

    /// The chart's word in the config and its file name.
    pub fn name(self) -> &'static str {
        match self {
            ChartKind::Latency => "latency",
            ChartKind::Bandwidth => "bandwidth",
            ChartKind::Busbw => "busbw",
            ChartKind::Speedup => "speedup",
            ChartKind::Breakdown => "breakdown",
            ChartKind::Scenarios => "scenarios",
            ChartKind::Links => "links",
        }
    }
}

/// An image format of `[output] formats`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageFormat {
    /// Scalable vector graphics.
    Svg,
    /// A bitmap of `width_px` x `height_px`.
    Png,
}

impl ImageFormat {
    /// Every value, in the order messages list their words.
    pub const ALL: [ImageFormat; 2] = [ImageFormat::Svg, ImageFormat::Png];

    /// The format's word in the config and its file extension.
    pub fn name(self) -> &'static str {
        match self {
            ImageFormat::Svg => "svg",
            ImageFormat::Png => "png",
        }
    }
}

pub use crate::topology::Affinity;

choice!(
    PathKind,
    Registration,
    FlushMode,
    GdrRead,
    Granularity,
    BufferPlace,
    BounceKind,
    ChartKind,
    ImageFormat,
);

/// Ops list their words with what each is, as the sweep's messages have always said.
impl Choice for Op {
    const ALL: &'static [Self] = &Op::ALL;
    fn word(self) -> &'static str {
        self.name()
    }
    fn expected() -> String {
        "one of write_imm (RDMA Write with Immediate), write (plain RDMA Write), read \
         (RDMA Read), send (Send/Recv)"
            .to_string()
    }
}
choice!(@serde Op);

#[cfg(test)]
mod tests {
    use super::GdrRead;

    /// NCCL_NET_GDR_READ (`ncclTopoCheckGdr`): unset, reads from compute capability 8.0 up and
    /// below it only beside NVLink; 1 always; 0 never.
    #[test]
    fn gdr_reads_follow_nccls_rule() {
        let volta = (7, 0);
        assert!(GdrRead::Auto.reads((8, 0), false));
        assert!(!GdrRead::Auto.reads(volta, false));
        assert!(GdrRead::Auto.reads(volta, true));
        assert!(GdrRead::On.reads(volta, false));
        assert!(!GdrRead::Off.reads((9, 0), true));
    }
}

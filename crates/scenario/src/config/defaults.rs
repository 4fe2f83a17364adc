//! Defaults of every key a config may omit, with where each comes from: the model parameters
//! of the hardware and the settings of `[sim]`, `[output]` and `[network]`. Row ids refer to the
//! project's reference measurements (docs/references.md); "calibrated" means
//! chosen so that a composed figure of the model matches the cited row; "estimate" means no
//! source pins it; "setting" means a choice of how to simulate or report, not of hardware.
//! `config/raw.rs` binds each key to its default here; configs/default.toml spells them out
//! (a test checks the two agree).

use super::options::{
    Affinity, ChartKind, FlushMode, GdrRead, Granularity, ImageFormat, Registration,
};
use crate::topology::spec::{Fabric, Routing, WqeDelivery};
use crate::units::{Ps, Rate, ns};

// ---- study ---------------------------------------------------------------------------------
/// The seed of the jitter streams. Setting.
pub const SEED: u64 = 1;

// ---- [sim] ---------------------------------------------------------------------------------
/// Jittered iterations per point, and at least this many whatever the size. Settings.
pub const ITERATIONS: u32 = 100;
/// Iterations per point at least, whatever the size (see [`ITERATIONS`]). Setting.
pub const MIN_ITERATIONS: u32 = 5;
/// Bytes the iterations of one point may move in all (fewer iterations for large messages).
pub const ITERATION_BUDGET: u64 = 1 << 30;
/// Streaming: messages in flight (perftest's `tx_depth` is 128; NCCL keeps 8 per channel, so 16
/// is between), messages per stream and the bytes a stream may move. Settings.
pub const STREAM_WINDOW: u32 = 16;
/// Streaming: messages per stream (see [`STREAM_WINDOW`]). Setting.
pub const STREAM_MESSAGES: u32 = 128;
/// Streaming: bytes a stream may move at most, 64 GiB (see [`STREAM_WINDOW`]): enough for
/// 64 messages (configs/default.toml's `stream_messages`) up to 1 GiB, so the budget never cuts a 1 GiB point of a
/// deep pipeline (staging's copy out, wire, copy in) to a stream that is still filling
/// (`Summary::steady`; 8 messages of three stages average 8 / 10 of the bottleneck). Large
/// messages move as bulk transfers, so bytes cost no events. Setting.
pub const STREAM_BUDGET: u64 = 64 << 30;
/// TLP by TLP up to [`COALESCE_ABOVE`], bulk transfers above. Setting.
pub const GRANULARITY: Granularity = Granularity::Auto;
/// Above this, messages move as bulk transfers of fluid rate. Setting.
pub const COALESCE_ABOVE: u64 = 512;
/// Bulk transfers in flight from which a re-solve of their rates waits to batch (below,
/// every start and end re-solves at once: exact max-min sharing). Setting: the studies of one
/// or a few hosts stay exact; an all-to-all of 16 nodes holds 16,256.
pub const EXACT_SHARING_BELOW: u32 = 256;
/// How long such a re-solve waits, in millionths of the transfers' mean span: at most
/// about four times as much throughput is lost (0.8%). Setting.
pub const SHARING_WAIT_PPM: u32 = 2_000;
/// Registration paid once, in setup (a registration cache that never misses). Setting.
pub const REGISTRATION: Registration = Registration::Cached;
/// The random delays (DRAM access jitter, CQ poll phases) on. Setting.
pub const JITTER: bool = true;
/// The GPUDirect receive flush as NCCL decides it (none from compute capability 9.0). Setting.
pub const FLUSH: FlushMode = FlushMode::Auto;
/// Row B3: NCCL uses GPUDirect only up to PXB by default (ncclTopoCheckGdr).
pub const NET_GDR_LEVEL: Affinity = Affinity::Pxb;
/// Row G3: NCCL's `NCCL_NET_GDR_C2C` (default 1) also uses GPUDirect where the GPU reaches a
/// NIC of its own CPU over NVLink-C2C and PCIe (path P2C, Grace Hopper).
pub const NET_GDR_C2C: bool = true;
/// NCCL's `NCCL_NET_GDR_READ` unset (-2): GPUDirect reads from compute capability 8.0 up,
/// below it only beside NVLink (`ncclTopoCheckGdr`, src/graph/paths.cc).
pub const NET_GDR_READ: GdrRead = GdrRead::Auto;
/// NCCL relays sends through the NIC's nearest GPU over NVLink (PXN) unless
/// `NCCL_PXN_DISABLE=1` (default 0, NCCL 2.12 and later: src/graph/paths.cc).
pub const PXN: bool = true;
/// Registrations a library's cache keeps (UCX and NCCL bound theirs by memory). Estimate.
pub const REGISTRATION_CACHE_ENTRIES: u32 = 64;
/// Distinct buffers per side the workload cycles over. Setting.
pub const BUFFERS: u32 = 1;
/// Row B6: MVAPICH2's MV2_CUDA_BLOCK_SIZE (NCCL uses 128 KiB, NCCL_P2P_NET_CHUNKSIZE).
pub const CHUNK: u64 = 256 << 10;
/// Bounce buffers in flight per side: NCCL's NCCL_STEPS = 8 slots per connection
/// (src/include/device.h); MVAPICH2 does not document its count.
pub const PIPELINE_DEPTH: u32 = 8;
/// perftest's DEF_RX_SEND (src/perftest_parameters.h): receives posted for Send tests.
pub const RECV_DEPTH: u32 = 512;
/// perftest's MIN_RNR_TIMER (12: 0.64 ms), set on every RC QP it connects.
pub const MIN_RNR_TIMER: u32 = 12;

// ---- [output] ------------------------------------------------------------------------------
/// Every chart but `links` (drawn where asked for). Settings.
pub const CHARTS: [ChartKind; 5] = [
    ChartKind::Latency,
    ChartKind::Bandwidth,
    ChartKind::Speedup,
    ChartKind::Breakdown,
    ChartKind::Scenarios,
];
/// Every chart in SVG and PNG. Setting.
pub const FORMATS: [ImageFormat; 2] = [ImageFormat::Svg, ImageFormat::Png];
/// Chart width in pixels. Setting.
pub const WIDTH_PX: u32 = 1600;
/// Chart height in pixels. Setting.
pub const HEIGHT_PX: u32 = 1000;
/// A small, a medium and a large message for the stage breakdown.
pub const BREAKDOWN_SIZES: [u64; 3] = [8, 64 << 10, 16 << 20];
/// The scenario-comparison chart's message size: 1 MiB. Setting.
pub const COMPARE_SIZE: u64 = 1 << 20;

// ---- host CPU ------------------------------------------------------------------------------
/// Building a send WQE and issuing its BlueFlame copy. Estimate (part of the 0.9-1.9 µs host
/// verbs latency of rows F1/F5/F6 that the adapter's sub-600 ns of row F7 leaves to the host).
pub const CPU_POST: Ps = ns(100);
/// Reposting one receive WQE. Estimate.
pub const CPU_POST_RECV: Ps = ns(40);
/// One CQ poll that finds a CQE (a cache-line read of the NIC-written CQE). Estimate.
pub const CPU_POLL: Ps = ns(60);
/// The CUDA driver's extra work for a cudaMemcpy to or from pageable memory (its CPU copy
/// through its own pinned buffer, the part not hidden behind the DMA): fitted to row D9
/// (RTX 4090, Gen4 x16: pageable against pinned at 1 and 16 MiB). D2H: 28.9 µs + 24.0 GB/s.
pub const PAGEABLE_D2H_LATENCY: Ps = ns(28_900);
/// D2H rate of the driver's CPU copy: 24.0 GB/s (row D9, see [`PAGEABLE_D2H_LATENCY`]).
pub const PAGEABLE_D2H_RATE: Rate = Rate::from_bytes_per_s(24_000_000_000);
/// H2D (the driver overlaps more of it): 17.9 µs + 88.6 GB/s. Row D9.
pub const PAGEABLE_H2D_LATENCY: Ps = ns(17_900);
/// H2D rate of the driver's CPU copy: 88.6 GB/s (row D9).
pub const PAGEABLE_H2D_RATE: Rate = Rate::from_bytes_per_s(88_600_000_000);

// ---- registration --------------------------------------------------------------------------
/// ibv_reg_mr fixed cost. Estimate (rows E4/E5 give only per-GB figures).
pub const REG_HOST_BASE: Ps = ns(5_000);
/// Per 4 KiB host page: row E4 (256 GB in > 20 s ≈ 78 ms/GB ≈ 0.3 µs per page).
pub const REG_HOST_PER_PAGE: Ps = ns(300);
/// GPU pinning through peer memory, fixed part: row E2 (T4: 41.6 µs for 64 KiB).
pub const REG_GPU_BASE: Ps = ns(40_500);
/// Per 64 KiB GPU page: row E2 (42.7 µs for 128 KiB vs 41.6 µs for 64 KiB).
pub const REG_GPU_PER_PAGE: Ps = ns(1_100);
/// cudaMallocHost of a pinned bounce buffer: row D18 (~1038 µs per call).
pub const BOUNCE_ALLOC: Ps = ns(1_000_000);
/// ibv_dereg_mr: row E5 (500 GB unregistered in 11.754 s against 49.198 s to register:
/// about 90 ns per 4 KiB page); the fixed part is an estimate.
pub const DEREG_HOST_BASE: Ps = ns(2_000);
/// ibv_dereg_mr per 4 KiB host page: about 90 ns (row E5, see [`DEREG_HOST_BASE`]).
pub const DEREG_HOST_PER_PAGE: Ps = ns(90);
/// Unpinning a GPU buffer: row E2 (T4: 25.4 µs for 64 KiB, 25.9 µs for 128 KiB).
pub const DEREG_GPU_BASE: Ps = ns(24_900);
/// Unpinning per 64 KiB GPU page: row E2 (0.5 µs more for 128 KiB than for 64 KiB).
pub const DEREG_GPU_PER_PAGE: Ps = ns(500);

// ---- PCIe ----------------------------------------------------------------------------------
/// PHY + data-link latency per link traversal. Calibrated with ROOT_COMPLEX_LATENCY and
/// DRAM_LATENCY so that a 64 B DMA read from a root-port device takes ~0.55 µs (rows C10/C11).
pub const PCIE_LINK_LATENCY: Ps = ns(20);
/// MPS 256: the setting of the row C5 model figures and common on servers.
pub const PCIE_MPS: u64 = 256;
/// End-to-end CRC off, as BIOSes leave it (PCIe Base Specification: optional, 4 B per TLP).
pub const PCIE_ECRC: bool = false;

// ---- sockets and root complexes ------------------------------------------------------------
/// No CPU family: the built-in defaults below, no P2P caps (a family's defaults, with their
/// sources: [`crate::topology::cpu_family`]). Setting.
pub const CPU_FAMILY: crate::topology::CpuFamily = crate::topology::CpuFamily::None;
/// DRAM access latency: ~100 ns (DESIGN.md; with the above gives rows C10/C11).
pub const DRAM_LATENCY: Ps = ns(100);
/// DRAM bandwidth per socket: 8 channels of DDR5-4800 (datasheet, 307 GB/s), rounded down.
pub const DRAM_RATE: Rate = Rate::from_bytes_per_s(300_000_000_000);
/// Share of the DRAM's peak that sustained DMA reaches, in percent, where the socket names no
/// CPU family: 100, the rate as given (a family sets its own, row C20).
pub const DRAM_EFFICIENCY_PCT: u32 = 100;
/// Median extra DMA read delay: row C10, median - min of the 8 B read (533 - 506 ns).
pub const DRAM_JITTER: Ps = ns(27);
/// One root-complex traversal. Calibrated: 2 x 20 ns links + 2 x 200 ns + 100 ns DRAM + TLP
/// serialisation ≈ 0.55 µs for a 64 B read (rows C10/C11).
pub const ROOT_COMPLEX_LATENCY: Ps = ns(200);
/// Inter-socket link (UPI) one way: rows C13/C14, remote memory adds ~106 ns per round trip.
pub const SOCKET_LINK_LATENCY: Ps = ns(53);
/// One UPI 2.0 link at 16 GT/s: ~32 GB/s per direction (Intel Xeon Scalable datasheets).
pub const SOCKET_LINK_RATE: Rate = Rate::from_bytes_per_s(32_000_000_000);

// ---- PCIe switch ---------------------------------------------------------------------------
/// Cut-through port-to-port latency: row C7 (Broadcom PEX88000 Gen4: 105 ns).
pub const SWITCH_LATENCY: Ps = ns(105);
/// ACS upstream forwarding off: peer-to-peer turns inside the switch (the GPUDirect setting).
pub const ACS_REDIRECT: bool = false;

// ---- NVLink --------------------------------------------------------------------------------
/// One NVLink 3 or 4 link: 25 GB/s each direction (NVIDIA A100 and H100 datasheets: 12 links,
/// 600 GB/s, and 18 links, 900 GB/s, both directions together).
pub const NVLINK_RATE: Rate = Rate::from_bytes_per_s(25_000_000_000);
/// One NVLink crossing. Estimate: CUDA's p2pBandwidthLatencyTest reports ~1.5-2 µs GPU-to-GPU
/// on NVLink boards, almost all of it the copy's launch and completion, not the link.
pub const NVLINK_LATENCY: Ps = ns(100);
/// Largest payload of one NVLink data packet. Estimate from the packet format NVIDIA published
/// for NVLink 1 and 2 (Foley and Danskin, "Ultra-performance Pascal GPU and NVLink
/// interconnect", IEEE Micro 2017): 16-byte flits, a header flit, optional address-extension
/// and byte-enable flits, up to 16 data flits (256 B).
pub const NVLINK_MPS: u64 = 256;
/// Protocol bytes per NVLink packet beside its payload. Estimate: two 16-byte flits (the header
/// and an address extension; same source), so 256 B packets carry 89% data. Between the rows
/// it is checked against: row L2 measures 93% of the link rate over an A100's direct NV4, rows
/// L4 and L5 about 83% between H100s through the NVSwitch (one 16-byte flit would give 94%,
/// three 84%).
pub const NVLINK_OVERHEAD: u64 = 32;
/// An NVSwitch traversal. Estimate, of the order of a PCIe switch's (row C7).
pub const NVSWITCH_LATENCY: Ps = ns(100);

// ---- NVLink-C2C ----------------------------------------------------------------------------
/// NVLink-C2C between Grace and Hopper: 450 GB/s each direction (NVIDIA GH200 datasheet: 900
/// GB/s, both directions together).
pub const C2C_RATE: Rate = Rate::from_bytes_per_s(450_000_000_000);
/// One NVLink-C2C crossing. Estimate: no crossing latency is published; of the order of an
/// NVLink crossing plus the Grace fabric's port, below a root complex's traversal.
pub const C2C_LATENCY: Ps = ns(150);
/// Largest payload of one NVLink-C2C packet. Estimate: NVLink packets carry at most 256 B of
/// data.
pub const C2C_MPS: u64 = 256;
/// Protocol bytes per NVLink-C2C packet beside its payload. Estimate: one 16-byte header
/// flit per packet.
pub const C2C_OVERHEAD: u64 = 16;

// ---- GPU -----------------------------------------------------------------------------------
/// The GPU model a machine gets when its config names none.
pub const GPU_MODEL: &str = "H100 PCIe";

/// Compute capability of a GPU model, for the models whose name says it (the first entry whose name
/// the model contains: A100 before A10; NVIDIA's CUDA GPUs table,
/// developer.nvidia.com/cuda-gpus); 9.0 (Hopper, the default model) otherwise. It decides
/// whether NCCL flushes GPUDirect receives (below 9.0 it does).
pub fn compute_capability(model: &str) -> (u32, u32) {
    let m = model.to_ascii_uppercase();
    const TABLE: [(&str, (u32, u32)); 14] = [
        ("B200", (10, 0)),
        ("B100", (10, 0)),
        ("H200", (9, 0)),
        ("H100", (9, 0)),
        ("ADA", (8, 9)),
        ("L40", (8, 9)),
        ("L4", (8, 9)),
        ("A100", (8, 0)),
        ("A30", (8, 0)),
        ("A10", (8, 6)),
        ("A40", (8, 6)),
        ("A6000", (8, 6)),
        ("T4", (7, 5)),
        ("V100", (7, 0)),
    ];
    TABLE
        .iter()
        .find(|(name, _)| m.contains(name))
        .map_or((9, 0), |&(_, cc)| cc)
}
/// GPU memory as seen through the BAR by a peer: derived from row D4 (a 1 B BAR read from the
/// CPU takes 0.91 µs round trip, of which ~0.55 µs is PCIe and root complex, rows C10/C11).
pub const GPU_MEMORY_LATENCY: Ps = ns(350);
/// H100 PCIe HBM2e bandwidth, 2.0 TB/s (NVIDIA datasheet).
pub const GPU_MEMORY_RATE: Rate = Rate::from_bytes_per_s(2_000_000_000_000);
/// A GPU's reduction rate (a kernel summing a received buffer into the local one, in output
/// bytes per second): memory-bound, two loads and one store per reduced byte, so a third of
/// [`GPU_MEMORY_RATE`] (H100 PCIe: 2.0 TB/s / 3). Estimate; plus a kernel launch of
/// [`GPU_REDUCE_LAUNCH`].
pub const GPU_REDUCE_RATE: Rate = Rate::from_bytes_per_s(666_000_000_000);
/// A reduction kernel's launch until it moves data: the cudaLaunchKernel cost of a few µs seen
/// from the host, most of it hidden when kernels are queued back to back. Estimate.
pub const GPU_REDUCE_LAUNCH: Ps = ns(2_000);
/// No jitter on GPU memory accesses: the rows measure none apart from the path's. Estimate.
pub const GPU_MEMORY_JITTER: Ps = 0;

/// The seed program's GPU heap base and BAR offset.
pub const GPU_HEAP_BASE: u64 = 0x2A_0000_0000;
/// The seed program's GPU BAR offset: bus address = virtual address + this.
pub const GPU_BAR_OFFSET: u64 = 0x8000_0000;
/// The seed program's pinned host buffer.
pub const HOST_BUFFER_BASE: u64 = 0x1000_0000;
/// cudaMemcpy call-to-DMA and DMA-to-return overheads of Kepler-era GPUs (compute capability
/// below 7.0): rows D1 (6-7 µs), D2 (8-9 µs) and S2 (UCX cuda_copy: 4.0 µs send overhead + 1.8 µs
/// latency). Newer GPUs default to [`MEMCPY_LAUNCH_VOLTA`] ([`memcpy_costs`]).
pub const MEMCPY_LAUNCH: Ps = ns(4_500);
/// From the copy's last byte landing to cudaMemcpy returning (see [`MEMCPY_LAUNCH`]).
pub const MEMCPY_SYNC: Ps = ns(2_000);
/// cudaMemcpy's call-to-DMA overhead from Volta (compute capability 7.0) on: the copy engine's
/// own cost per copy ([`CE_COPY`], row L6), the host's call taken as no more. With
/// [`MEMCPY_SYNC_VOLTA`] a call costs 2.0 µs besides its DMA: row D17 (a small cudaMemcpy on
/// H100 takes about 2 µs) and row D9 (RTX 4090: pinned D2H at 1 MiB runs at 25.42 GB/s against
/// 26.55 at 16 MiB, about 1.75 µs per call).
pub const MEMCPY_LAUNCH_VOLTA: Ps = CE_COPY;
/// From the last byte landing to cudaMemcpy returning, from Volta on: the rest of row D17's
/// 2 µs (estimate of the split).
pub const MEMCPY_SYNC_VOLTA: Ps = ns(400);

/// cudaMemcpy's launch and sync overheads by default for a GPU of compute capability `cc`:
/// Kepler-era figures below 7.0, the measured figures of current GPUs from 7.0 on (the
/// Kepler-era ones are about 3.5 times what rows D9 and D17 imply for them).
pub fn memcpy_costs(cc: (u32, u32)) -> (Ps, Ps) {
    if cc < (7, 0) {
        (MEMCPY_LAUNCH, MEMCPY_SYNC)
    } else {
        (MEMCPY_LAUNCH_VOLTA, MEMCPY_SYNC_VOLTA)
    }
}
/// The copy engine's own cost per copy on the GPU's timeline (fetching the copy's methods,
/// acquiring and releasing its semaphores), which a stream of copies timed by events pays
/// between one copy and the next; part of [`MEMCPY_LAUNCH`] seen from the host. Estimate from
/// row L6: a 16-byte copy within one A100 takes 2.29 to 2.95 µs between events, about 0.7 µs
/// of it the memory's read and write.
pub const CE_COPY: Ps = ns(1_600);
/// Copy-engine outstanding reads for H2D. H100 reaches >= 52 GB/s in both directions on Gen5
/// (row D15), so its window covers the round trip even behind a switch (128 x 512 B = 64 KiB
/// over ~0.8 µs). Older GPUs may read with fewer (rows D8/D9: H2D 5-10% below D2H, i.e. ~28 x
/// 512 B over ~0.6 µs on Gen4); the device models (`preset` on a GPU, config/device.rs) set it
/// per model where a row gives it. Ada (L40S, L4) keeps this default: 28 reproduces row D9's
/// 23.85 GB/s on a Gen4 x16 root port, but would halve H2D behind two PCIe switches (12.75
/// GB/s on configs/dgx-a100.toml's GPU0) where row D11's 8-GPU Ada server reads at 23.9-26.4.
pub const CE_READ_WINDOW: u32 = 128;
/// Copy-engine outstanding reads of a peer GPU over NVLink (P2P reads, cudaMemcpyPeer with the
/// destination's engine). Estimate: NVLink reads run at the write rate on HGX H100 boards
/// (row L4: nvbandwidth's CE reads 371 GB/s; row L5: the sample's P2P writes 376 GB/s), so the
/// window covers ~400 GB/s over the read's ~1 µs round trip through the NVSwitch (1024 x
/// 512 B = 512 KiB); the PCIe window ([`CE_READ_WINDOW`]) would hold them near 68 GB/s.
pub const CE_NVLINK_READ_WINDOW: u32 = 1024;
/// The copy engine's largest read request, in bytes (see [`CE_READ_WINDOW`]).
pub const CE_MRRS: u64 = 512;

// ---- NIC -----------------------------------------------------------------------------------
/// The NIC model a machine gets when its config names none: the NDR part whose wire rate is
/// the default.
pub const NIC_MODEL: &str = "ConnectX-7 NDR";
/// libmlx5's default ringing (see [`WqeDelivery::Auto`]).
pub const WQE_DELIVERY: WqeDelivery = WqeDelivery::Auto;

/// ConnectX-7 NDR: 400 Gb/s net data rate (rows F9, F10: 4 x 106.25 Gb/s PAM4 signalling).
pub const WIRE_RATE: Rate = Rate::from_bps(400_000_000_000);
/// InfiniBand maximum MTU.
pub const MTU: u64 = 4096;
/// Per-packet bytes of an RDMA Write on InfiniBand: LRH 8 + BTH 12 + ICRC 4 + VCRC 2 (IBTA spec;
/// the fields row S1 lists for UCX's model). The first packet's RETH (16 B) and the last one's
/// ImmDt (4 B) are not charged: under 0.5 ns per message at 400 Gb/s, where charging all 46 B to
/// every packet would understate large-message bandwidth by 0.5%.
pub const PACKET_OVERHEAD: u64 = 26;
/// ACK packet: LRH 8 + BTH 12 + AETH 4 + ICRC 4 + VCRC 2.
pub const ACK_BYTES: u64 = 30;
/// One 64-byte WQE basic block, and mlx5's 64-byte CQE.
pub const WQE_BYTES: u64 = 64;
/// mlx5's 64-byte CQE (see [`WQE_BYTES`]).
pub const CQE_BYTES: u64 = 64;
/// Inline payload limit for host memory: mlx5's typical max_inline_data (perftest's latency
/// tests post small messages inline; with CUDA buffers perftest forces inline off).
pub const INLINE_MAX: u64 = 220;
/// WQE parsing and scheduling. Estimate within the adapter's sub-600 ns (rows F7, F8, F11).
pub const WQE_PROCESS: Ps = ns(50);
/// WQE spacing in the send engine: row F9, 330-370 M msg/s ≈ 3 ns per message.
pub const WQE_INTERVAL: Ps = ns(3);
/// Send-engine processing units (queue pairs map to them by QP number modulo the count; each
/// spaces its WQEs by `wqe_interval` times the count, so the NIC's aggregate stays the
/// datasheet message rate). Estimate: one, so one QP alone reaches the datasheet rate, as no
/// ConnectX datasheet gives a per-QP rate (rows F7, F9, F13 are aggregates; row F18 measured
/// about 16 Mpps per send queue and four times that over four or more on a ConnectX-4).
pub const PROCESSING_UNITS: u32 = 1;
/// MTT lookup per work request (translation-cache hit). Estimate.
pub const MTT_LOOKUP: Ps = ns(30);
/// Transmit and receive pipelines. Estimates that keep the adapter's own share under the
/// sub-600 ns of rows F7/F8/F11 (50 + 30 + 150 + 150 + 30 = 410 ns).
pub const TX_PIPELINE: Ps = ns(150);
/// The receive pipeline (see [`TX_PIPELINE`]). Estimate.
pub const RX_PIPELINE: Ps = ns(150);
/// Outstanding DMA read requests of the NIC. Estimate: with 512 B requests, 64 KiB in flight
/// sustains PCIe Gen5 x16 up to a ~1.2 µs round trip (PIX, PHB) but not across sockets.
pub const NIC_READ_WINDOW: u32 = 128;
/// The NIC's largest DMA read request: 512 B (the row C5 setting, as for the copy engine).
pub const NIC_MRRS: u64 = 512;
/// GDRCopy from GPU memory (uncached loads through BAR1), fitted to row D4 (V100:
/// 0.91 us for 1 B, 7.98 us for 4 KB, 114.1 us for 64 KB): 0.91 us + bytes at 0.579 GB/s.
pub const GDRCOPY_READ_LATENCY: Ps = 910_000;
/// GDRCopy read rate: 0.579 GB/s (row D4, see [`GDRCOPY_READ_LATENCY`]).
pub const GDRCOPY_READ_RATE: Rate = Rate::from_bps(4_632_000_000);
/// GDRCopy into GPU memory (write-combined stores), fitted to row D3 (0.089 us for 1 B,
/// 0.437 us for 4 KB, 6.49 us for 64 KB): 0.089 us + bytes at 10.15 GB/s.
pub const GDRCOPY_WRITE_LATENCY: Ps = 89_000;
/// GDRCopy write rate: 10.15 GB/s (row D3, see [`GDRCOPY_WRITE_LATENCY`]).
pub const GDRCOPY_WRITE_RATE: Rate = Rate::from_bps(81_200_000_000);
/// RDMA Reads outstanding per queue pair: the ConnectX devices' `max_qp_rd_atom`, which
/// perftest's `ib_read_bw` uses by default (`-o`: "default max of device"; its banner prints
/// "Outstand reads : 16" on mlx5).
pub const MAX_RD_ATOMIC: u32 = 16;
/// A receive WQE: one 16-byte data segment per scatter entry (rdma-core providers/mlx5
/// `struct mlx5_wqe_data_seg`); perftest posts receives of one entry.
pub const RECV_WQE_BYTES: u64 = 16;

// ---- network -------------------------------------------------------------------------------
/// One leaf switch between the hosts. Setting.
pub const NET_SWITCH_HOPS: u32 = 1;

/// InfiniBand HDR/NDR switch port-to-port: row F12 (QM8790 "sub-130 ns"; conflicting sources).
pub const NET_SWITCH_LATENCY: Ps = ns(130);
/// Length of each cable, in metres. Setting.
pub const CABLE_M: u64 = 3;
/// Signal propagation in copper or fibre: ~5 ns/m (DESIGN.md).
pub const PROPAGATION_PER_M: Ps = ns(5);
/// Today's network: `switch_hops` non-blocking switches. Setting.
pub const NET_FABRIC: Fabric = Fabric::SingleSwitch;
/// Hosts per leaf switch of a leaf-spine fabric. Setting (a rack of 4 hosts).
pub const HOSTS_PER_LEAF: u32 = 4;
/// Spine switches of a leaf-spine fabric. Setting.
pub const SPINES: u32 = 2;
/// Leaf ports: NVIDIA QM9700/QM9790 (Quantum-2), 64 NDR 400 Gb/s ports (datasheet).
pub const LEAF_RADIX: u32 = 64;
/// Oversubscription 1:1 (non-blocking): as many uplinks as host ports. Setting.
pub const OVERSUBSCRIPTION: (u32, u32) = (1, 1);
/// Hosts per scalable unit of a rail-optimized fabric: NVIDIA's DGX SuperPOD (H100) scalable
/// unit of 32 DGX H100 (DGX SuperPOD reference architecture, as issue #23 quotes it).
pub const HOSTS_PER_UNIT: u32 = 32;
/// Scalable units of a rail-optimized fabric. Setting (one unit).
pub const UNITS: u32 = 1;
/// Spines per scalable unit of a rail-optimized fabric: the DGX SuperPOD (H100) reference
/// architecture's compute fabric for 4 units, 32 rail leaves and 16 spines (48 QM9700
/// switches, as issue #23 quotes it), is 4 spines per unit.
pub const SPINES_PER_UNIT: u32 = 4;
/// Pods of a fat tree. Setting (two: the smallest tree with a core tier to cross).
pub const PODS: u32 = 2;
/// Spines of one fat-tree pod. Setting.
pub const SPINES_PER_POD: u32 = 2;
/// Core switches of a fat tree. Setting.
pub const CORES: u32 = 4;
/// Queue pairs per connection: NCCL's default for NCCL_IB_QPS_PER_CONNECTION
/// (`NCCL_PARAM(IbQpsPerConn, "IB_QPS_PER_CONNECTION", 1)`, src/transport/net_ib/connect.cc).
pub const QPS_PER_CONNECTION: u32 = 1;
/// Static ECMP: what switches do unless adaptive routing is enabled. Setting.
pub const NET_ROUTING: Routing = Routing::Ecmp;

#[cfg(test)]
mod tests {
    use crate::config::raw::*;
    use crate::config::section::ParamDoc;
    use crate::config::{DEFAULT_TOML, parse};

    /// Removes every declared key of `params` from `t`.
    fn strip(t: &mut toml::Table, params: &[ParamDoc]) {
        // A socket's CPU family chooses its defaults; it is kept.
        for p in params.iter().filter(|p| p.key != "cpu_family") {
            t.remove(p.key);
        }
    }

    fn each(t: &mut toml::Table, list: &str, params: &[ParamDoc], extra: &[&str]) {
        for v in t
            .get_mut(list)
            .and_then(|v| v.as_array_mut())
            .into_iter()
            .flatten()
        {
            let v = v.as_table_mut().expect("a table");
            strip(v, params);
            for k in extra {
                v.remove(*k);
            }
        }
    }

    /// configs/default.toml spells out every machine, network and output default: the same
    /// config with all those keys deleted loads to the same hardware, network and charts.
    #[test]
    fn omitted_keys_take_the_values_default_toml_spells_out() {
        let full = parse(DEFAULT_TOML, "default.toml").expect("the default config loads");
        let mut doc: toml::Table = DEFAULT_TOML.parse().expect("TOML");
        doc.remove("output");
        doc.remove("network");
        for m in doc["machines"].as_array_mut().expect("machines") {
            let m = m.as_table_mut().expect("a machine table");
            m.remove("host_buffer_base");
            m.remove("cpu");
            m.remove("registration");
            m.remove("pcie");
            each(m, "sockets", RawSocket::PARAMS, &[]);
            each(m, "socket_links", RawSocketLink::PARAMS, &[]);
            each(m, "root_complexes", RawRootComplex::PARAMS, &[]);
            each(m, "switches", RawSwitch::PARAMS, &[]);
            each(m, "gpus", RawGpu::PARAMS, &["compute_capability"]);
            each(m, "nics", RawNic::PARAMS, &[]);
            each(m, "links", &[], &["mps_bytes", "latency_ns"]);
        }
        let text = toml::to_string(&doc).expect("serialisable");
        for key in [
            "post_ns",
            "wire_rate_gbps",
            "dram_latency_ns",
            "mps_bytes",
            "cable_m",
        ] {
            assert!(!text.contains(key), "{key} was not removed");
        }
        let bare = parse(&text, "bare").expect("the bare config loads");
        for (a, b) in full.hosts.iter().zip(&bare.hosts) {
            assert_eq!(a.machine, b.machine, "machine {}", a.machine.name);
        }
        assert_eq!(full.network, bare.network);
        assert_eq!(full.output, bare.output);
    }

    /// Every declared parameter has a unit and a source, and no key is declared twice in a
    /// section.
    /// cudaMemcpy's overheads by default follow the GPU's generation: a GPU of compute
    /// capability below 7.0 pays the Kepler-era 4.5 + 2 µs (rows D1/D2/S2), a newer one
    /// 1.6 + 0.4 µs (rows L6, D17); a config that sets them keeps its values.
    #[test]
    fn memcpy_overheads_follow_the_compute_capability_unless_set() {
        let without: String = DEFAULT_TOML
            .lines()
            .filter(|l| !l.starts_with("memcpy_launch_ns") && !l.starts_with("memcpy_sync_ns"))
            .map(|l| format!("{l}\n"))
            .collect();
        let gpu = |text: &str, cc: &str| {
            let text = text.replace(
                "compute_capability = \"9.0\"",
                &format!("compute_capability = \"{cc}\""),
            );
            let cfg = parse(&text, "cc.toml").expect("loads");
            cfg.hosts[0].machine.gpus[0].copy_engine
        };
        let kepler = gpu(&without, "3.5");
        assert_eq!(
            (kepler.launch, kepler.sync),
            (super::MEMCPY_LAUNCH, super::MEMCPY_SYNC)
        );
        assert_eq!((kepler.launch, kepler.sync), (4_500_000, 2_000_000));
        for cc in ["7.0", "8.0", "9.0"] {
            let newer = gpu(&without, cc);
            assert_eq!((newer.launch, newer.sync), (1_600_000, 400_000), "{cc}");
        }
        let set = without.replace(
            "gdrcopy_read_latency_ns",
            "memcpy_launch_ns = 3000\nmemcpy_sync_ns = 1000\ngdrcopy_read_latency_ns",
        );
        let kept = gpu(&set, "9.0");
        assert_eq!((kept.launch, kept.sync), (3_000_000, 1_000_000));
    }

    #[test]
    fn every_parameter_names_its_source() {
        for params in SECTIONS.map(|s| s.params) {
            for (i, p) in params.iter().enumerate() {
                assert!(!p.source.trim().is_empty(), "{} has no source", p.key);
                assert!(!p.unit.is_empty(), "{} has no unit", p.key);
                assert!(
                    params[..i].iter().all(|q| q.key != p.key),
                    "{} declared twice",
                    p.key
                );
            }
        }
    }
}

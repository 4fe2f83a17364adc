//! The TOML as written: a serde mirror with every key spelled out and unknown keys refused.
//! Quantities stay raw ([`Q`]) until [`super::convert`] parses them with their key path in hand.
//!
//! Each parameter section is declared once with [`section!`]: its key, kind, default (from
//! [`super::defaults`]), the spec field it sets and the source of the default. The conversion,
//! the resolved config and the parameter list all come from that one line.

use serde::Deserialize;

use super::defaults as d;
use super::limits::{
    MAX_CABLE_M, MAX_COUNT, MAX_PER_PAGE, MAX_QPS_PER_CONNECTION, MAX_RADIX, MAX_SPINES,
    MAX_SWITCH_HOPS, MAX_WINDOW,
};
use super::section::{ParamDoc, section};
use super::{
    Affinity, BounceKind, BufferPlace, ChartKind, FlushMode, GdrRead, Granularity, ImageFormat, Op,
    OutputOptions, PathKind, Registration, SimConfig,
};
use crate::topology::spec::*;

/// A quantity as written: a bare number (in the unit the key's name gives) or a string with a
/// unit ("4KiB", "120ns", "200Gb/s").
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Q {
    Int(i64),
    Float(f64),
    Str(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    pub name: String,
    pub description: Option<String>,
    pub seed: Option<u64>,
    #[serde(default)]
    pub sim: RawSim,
    pub sweep: RawSweep,
    #[serde(default)]
    pub output: RawOutput,
    #[serde(default)]
    pub network: RawNetwork,
    #[serde(default)]
    pub machines: Vec<RawMachine>,
    #[serde(default)]
    pub hosts: Vec<RawHost>,
    #[serde(default)]
    pub scenarios: Vec<RawScenario>,
}

section! {
    /// `[sim]`: how a point is simulated.
    pub struct RawSim => SimConfig {
        iterations: count[1, MAX_COUNT, "a number of iterations"] = d::ITERATIONS
            => iterations; "setting",
        min_iterations: count[1, MAX_COUNT, "a number of iterations"] = d::MIN_ITERATIONS
            => min_iterations; "setting",
        iteration_budget_bytes: bytes = d::ITERATION_BUDGET => iteration_budget_bytes; "setting",
        stream_window: count[1, MAX_COUNT, "a number of messages in flight"] = d::STREAM_WINDOW
            => stream_window; "setting",
        stream_messages: count[1, MAX_COUNT, "a number of messages"] = d::STREAM_MESSAGES
            => stream_messages; "setting",
        stream_budget_bytes: bytes = d::STREAM_BUDGET => stream_budget_bytes; "setting",
        granularity: pick<Granularity> = d::GRANULARITY => granularity; "setting",
        coalesce_above_bytes: bytes = d::COALESCE_ABOVE => coalesce_above; "setting",
        registration: pick<Registration> = d::REGISTRATION => registration; "setting",
        jitter: flag = d::JITTER => jitter; "setting",
        flush: pick<FlushMode> = d::FLUSH => flush; "NCCL 2.19 ncclTopoNeedFlush",
        net_gdr_level: pick<Affinity> = d::NET_GDR_LEVEL => net_gdr_level; "row B3",
        net_gdr_c2c: flag = d::NET_GDR_C2C => net_gdr_c2c; "row G3",
        net_gdr_read: pick<GdrRead> = d::NET_GDR_READ => net_gdr_read;
            "row B4 (NCCL_NET_GDR_READ, src/graph/paths.cc ncclTopoCheckGdr)",
        pxn: flag = d::PXN => pxn; "NCCL NCCL_PXN_DISABLE (src/graph/paths.cc)",
        registration_cache_entries: count[1, MAX_COUNT, "a number of registrations"]
            = d::REGISTRATION_CACHE_ENTRIES => registration_cache_entries; "estimate",
        buffers: count[1, MAX_COUNT, "a number of distinct buffers per side"] = d::BUFFERS
            => buffers; "setting",
        chunk_bytes: bytes_in[4096, 1 << 30] = d::CHUNK => chunk_bytes; "row B6",
        pipeline_depth: count[1, 64, "a number of bounce buffers per side"] = d::PIPELINE_DEPTH
            => pipeline_depth; "NCCL NCCL_STEPS (src/include/device.h)",
        recv_depth: count[1, MAX_COUNT, "a number of posted receive WQEs"] = d::RECV_DEPTH
            => recv_depth; "perftest DEF_RX_SEND (src/perftest_parameters.h)",
        min_rnr_timer: count[0, 31, "the verbs' RNR timer code (IBTA table 45: 12 is 0.64 ms)"]
            = d::MIN_RNR_TIMER => min_rnr_timer; "perftest MIN_RNR_TIMER",
        exact_sharing_below: count[1, u32::MAX, "a number of bulk transfers in flight"]
            = d::EXACT_SHARING_BELOW => exact_sharing_below; "setting",
        sharing_wait_ppm: count[0, 100_000, "millionths of the transfers' mean span"]
            = d::SHARING_WAIT_PPM => sharing_wait_ppm; "setting",
    }
    also {
        /// Removed; refused with a note.
        burst_bytes: Option<Q>,
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSweep {
    pub sizes: RawSizes,
    pub paths: Vec<PathKind>,
    pub ops: Option<Vec<Op>>,
    /// Parameters to vary (expanded by [`super::sweep`], from the document).
    #[allow(dead_code)]
    pub vary: Option<toml::Table>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum RawSizes {
    List(Vec<Q>),
    Range(RawRange),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRange {
    pub from: Q,
    pub to: Q,
    pub factor: Option<u64>,
}

section! {
    /// `[output]`: which charts, in which formats and sizes.
    pub struct RawOutput => OutputOptions {
        charts: picks<ChartKind> = d::CHARTS => charts; "setting",
        formats: picks<ImageFormat> = d::FORMATS => formats; "setting",
        width_px: count[200, 8000, "a size in pixels"] = d::WIDTH_PX => width_px; "setting",
        height_px: count[200, 8000, "a size in pixels"] = d::HEIGHT_PX => height_px; "setting",
        breakdown_sizes: sizes = &d::BREAKDOWN_SIZES => breakdown_sizes; "setting",
        compare_size: bytes = d::COMPARE_SIZE => compare_size; "setting",
    }
}

section! {
    /// `[network]`: the switches and cables between the hosts.
    pub struct RawNetwork => NetworkSpec {
        switch_hops: count[0, MAX_SWITCH_HOPS, "a number of switches"] = d::NET_SWITCH_HOPS
            => switch_hops; "setting",
        switch_latency_ns: dur = d::NET_SWITCH_LATENCY => switch_latency; "row F12",
        cable_m: count64[0, MAX_CABLE_M, "a cable length in metres"] = d::CABLE_M
            => cable_m; "setting",
        propagation_ns_per_m: dur = d::PROPAGATION_PER_M => propagation_per_m; "DESIGN.md",
        fabric: pick<Fabric> = d::NET_FABRIC => fabric; "setting",
        hosts_per_leaf: count[1, MAX_COUNT, "a number of hosts"] = d::HOSTS_PER_LEAF
            => leaf_spine.hosts_per_leaf; "setting",
        spines: count[1, MAX_SPINES, "a number of spine switches"] = d::SPINES
            => leaf_spine.spines; "setting",
        leaf_radix: count[2, MAX_RADIX, "a number of switch ports"] = d::LEAF_RADIX
            => leaf_spine.leaf_radix; "NVIDIA QM9700 datasheet (64 NDR ports)",
        routing: pick<Routing> = d::NET_ROUTING => routing; "setting",
        hosts_per_unit: count[1, MAX_COUNT, "a number of hosts"] = d::HOSTS_PER_UNIT
            => rail.hosts_per_unit; "NVIDIA DGX SuperPOD H100 reference architecture (32 nodes a unit)",
        units: count[1, MAX_COUNT, "a number of scalable units"] = d::UNITS
            => rail.units; "setting",
        spines_per_unit: count[1, MAX_SPINES, "a number of spine switches"] = d::SPINES_PER_UNIT
            => rail.spines_per_unit; "NVIDIA DGX SuperPOD H100 reference architecture (16 spines for 4 units)",
        pods: count[1, MAX_COUNT, "a number of pods"] = d::PODS => fat_tree.pods; "setting",
        spines_per_pod: count[1, MAX_SPINES, "a number of spine switches"] = d::SPINES_PER_POD
            => fat_tree.spines_per_pod; "setting",
        cores: count[1, MAX_SPINES, "a number of core switches"] = d::CORES
            => fat_tree.cores; "setting",
        qps_per_connection: count[1, MAX_QPS_PER_CONNECTION, "a number of queue pairs"]
            = d::QPS_PER_CONNECTION => qps_per_connection;
            "NCCL NCCL_IB_QPS_PER_CONNECTION default 1 (src/transport/net_ib/connect.cc)",
    }
    also {
        /// Host ports over spine ports per leaf: an integer (2 is 2:1) or "num:den".
        oversubscription: Option<Q>,
        /// Rate of a leaf-spine cable; absent: the fastest NIC port.
        spine_port_gbps: Option<Q>,
        /// Ports of a spine switch; absent: `leaf_radix`.
        spine_radix: Option<u32>,
        /// A fat tree's spine ports to leaves over ports to cores: as `oversubscription`.
        core_oversubscription: Option<Q>,
        /// Ports of a fat tree's core switch; absent: the spines' radix.
        core_radix: Option<u32>,
    }
}

/// The leaf-spine keys converted by hand (a ratio; a rate whose default is another value),
/// listed here for `gdrsim params`.
pub const FABRIC_PARAMS: &[ParamDoc] = &[
    ParamDoc {
        key: "oversubscription",
        unit: "ratio",
        domain: super::Domain::Text,
        source: "setting (default 1: non-blocking)",
    },
    ParamDoc {
        key: "spine_port_gbps",
        unit: "Gb/s",
        domain: super::Domain::Rate {
            min: super::limits::MIN_RATE_BPS,
        },
        source: "setting (default: the fastest NIC port's wire rate)",
    },
    ParamDoc {
        key: "spine_radix",
        unit: "count",
        domain: super::Domain::Count {
            lo: 2,
            hi: MAX_RADIX as u64,
        },
        source: "setting (default: leaf_radix, one switch model throughout)",
    },
    ParamDoc {
        key: "core_oversubscription",
        unit: "ratio",
        domain: super::Domain::Text,
        source: "setting (default 1: non-blocking)",
    },
    ParamDoc {
        key: "core_radix",
        unit: "count",
        domain: super::Domain::Count {
            lo: 2,
            hi: MAX_RADIX as u64,
        },
        source: "setting (default: the spines' radix)",
    },
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMachine {
    pub name: String,
    pub host_buffer_base: Option<u64>,
    #[serde(default)]
    pub cpu: RawCpu,
    #[serde(default)]
    pub registration: RawRegistration,
    #[serde(default)]
    pub pcie: RawPcie,
    pub sockets: Vec<RawSocket>,
    #[serde(default)]
    pub socket_links: Vec<RawSocketLink>,
    pub root_complexes: Vec<RawRootComplex>,
    #[serde(default)]
    pub switches: Vec<RawSwitch>,
    #[serde(default)]
    pub gpus: Vec<RawGpu>,
    pub nics: Vec<RawNic>,
    pub links: Vec<RawLink>,
    #[serde(default)]
    pub nvswitches: Vec<RawNvSwitch>,
    #[serde(default)]
    pub nvlinks: Vec<RawNvLink>,
    #[serde(default)]
    pub c2c_links: Vec<RawC2cLink>,
}

section! {
    /// `[machines.cpu]`: the host CPU's verbs costs and the driver's pageable copies.
    pub struct RawCpu => CpuSpec {
        post_ns: dur = d::CPU_POST => post; "estimate (rows F1/F5/F6 less F7)",
        post_recv_ns: dur = d::CPU_POST_RECV => post_recv; "estimate",
        poll_ns: dur = d::CPU_POLL => poll; "estimate",
        pageable_d2h_latency_ns: dur = d::PAGEABLE_D2H_LATENCY => pageable.d2h_latency; "row D9",
        pageable_d2h_gbps: rate = d::PAGEABLE_D2H_RATE => pageable.d2h_rate; "row D9",
        pageable_h2d_latency_ns: dur = d::PAGEABLE_H2D_LATENCY => pageable.h2d_latency; "row D9",
        pageable_h2d_gbps: rate = d::PAGEABLE_H2D_RATE => pageable.h2d_rate; "row D9",
    }
}

section! {
    /// `[machines.registration]`: memory registration and deregistration.
    pub struct RawRegistration => RegistrationSpec {
        host_base_ns: dur = d::REG_HOST_BASE => host_base; "estimate",
        host_per_page_ns: dur_max[MAX_PER_PAGE] = d::REG_HOST_PER_PAGE => host_per_page; "row E4",
        gpu_base_ns: dur = d::REG_GPU_BASE => gpu_base; "row E2",
        gpu_per_page_ns: dur_max[MAX_PER_PAGE] = d::REG_GPU_PER_PAGE => gpu_per_page; "row E2",
        bounce_alloc_ns: dur = d::BOUNCE_ALLOC => bounce_alloc; "row D18",
        host_dereg_base_ns: dur = d::DEREG_HOST_BASE => host_dereg_base; "estimate",
        host_dereg_per_page_ns: dur_max[MAX_PER_PAGE] = d::DEREG_HOST_PER_PAGE
            => host_dereg_per_page; "row E5",
        gpu_dereg_base_ns: dur = d::DEREG_GPU_BASE => gpu_dereg_base; "row E2",
        gpu_dereg_per_page_ns: dur_max[MAX_PER_PAGE] = d::DEREG_GPU_PER_PAGE
            => gpu_dereg_per_page; "row E2",
    }
}

section! {
    /// `[machines.pcie]`: the machine's PCIe defaults (each link may override them).
    pub struct RawPcie => PcieSpec {
        link_latency_ns: dur = d::PCIE_LINK_LATENCY => link_latency; "calibrated (rows C10/C11)",
        mps_bytes: pow2[128, 4096] = d::PCIE_MPS => mps; "row C5",
        ecrc: flag = d::PCIE_ECRC => ecrc; "PCIe Base Specification (optional, off)",
    }
    also {
        /// Removed; refused with a note.
        rcb_bytes: Option<Q>,
    }
}

section! {
    /// `[[machines.sockets]]`: one socket and its DRAM.
    pub struct RawSocket => SocketSpec {
        cpu_family: pick<crate::topology::CpuFamily> = d::CPU_FAMILY => cpu_family;
            "setting (its defaults: docs/references.md, CPU families)",
        dram_latency_ns: dur = d::DRAM_LATENCY => dram.latency; "DESIGN.md (rows C10/C11)",
        dram_rate_gbps: rate = d::DRAM_RATE => dram.rate; "datasheet (8 x DDR5-4800)",
        dram_jitter_ns: dur = d::DRAM_JITTER => dram.jitter_median; "row C10",
        dram_efficiency_pct: count[1, 100, "a percentage of the DRAM's datasheet rate"]
            = d::DRAM_EFFICIENCY_PCT => dram_efficiency_pct;
            "setting (100 without a CPU family: the rate as given; a family's: row C20, estimate)",
    }
    also {
        name: String,
        /// The CPUs `nvidia-smi topo -m` lists for the socket's devices ("48-63,176-191"),
        /// kept for `gdrsim topo` to print.
        cpu_affinity: Option<String>,
        /// Its NUMA node as the OS numbers it, kept for `gdrsim topo` to print.
        numa_node: Option<u32>,
    }
}

section! {
    /// `[[machines.socket_links]]`: the link between two sockets.
    pub struct RawSocketLink => SocketLinkSpec {
        rate_gbps: rate = d::SOCKET_LINK_RATE => rate; "datasheet (UPI 2.0, 16 GT/s)",
        latency_ns: dur = d::SOCKET_LINK_LATENCY => latency; "rows C13/C14",
    }
    also {
        a: String,
        b: String,
        p2p_read: Option<bool>,
        p2p_write: Option<bool>,
        p2p_read_rate_gbps: Option<Q>,
        p2p_write_rate_gbps: Option<Q>,
    }
}

section! {
    /// `[[machines.root_complexes]]`: one root complex under its socket.
    pub struct RawRootComplex => RootComplexSpec {
        latency_ns: dur = d::ROOT_COMPLEX_LATENCY => latency; "calibrated (rows C10/C11)",
    }
    also {
        name: String,
        socket: String,
        p2p_read: Option<bool>,
        p2p_write: Option<bool>,
        p2p_read_rate_gbps: Option<Q>,
        p2p_write_rate_gbps: Option<Q>,
    }
}

section! {
    /// `[[machines.switches]]`: one PCIe switch.
    pub struct RawSwitch => SwitchSpec {
        latency_ns: dur = d::SWITCH_LATENCY => latency; "row C7",
        acs_redirect: flag = d::ACS_REDIRECT => acs_redirect; "setting",
    }
    also {
        name: String,
    }
}

section! {
    /// `[[machines.nvswitches]]`: an NVSwitch fabric.
    pub struct RawNvSwitch => NvSwitchSpec {
        latency_ns: dur = d::NVSWITCH_LATENCY => latency; "estimate",
    }
    also {
        name: String,
    }
}

section! {
    /// `[[machines.nvlinks]]`: NVLinks bonded between a GPU and a GPU or an NVSwitch.
    pub struct RawNvLink => NvLinkSpec {
        link_rate_gbps: rate = d::NVLINK_RATE => link_rate; "datasheet (NVLink 3/4: 25 GB/s per link each way)",
        latency_ns: dur = d::NVLINK_LATENCY => latency; "estimate",
        mps_bytes: pow2[64, 4096] = d::NVLINK_MPS => mps; "estimate",
        overhead_bytes: bytes_in[0, 256] = d::NVLINK_OVERHEAD => overhead; "estimate",
    }
    also {
        a: String,
        b: String,
        links: u32,
    }
}

section! {
    /// `[[machines.c2c_links]]`: the NVLink-C2C link of a GPU to its socket (Grace Hopper).
    pub struct RawC2cLink => C2cLinkSpec {
        rate_gbps: rate = d::C2C_RATE => rate; "datasheet (GH200: NVLink-C2C 900 GB/s both ways)",
        latency_ns: dur = d::C2C_LATENCY => latency; "estimate",
        mps_bytes: pow2[64, 4096] = d::C2C_MPS => mps; "estimate",
        overhead_bytes: bytes_in[0, 256] = d::C2C_OVERHEAD => overhead; "estimate",
    }
    also {
        socket: String,
        gpu: String,
    }
}

section! {
    /// `[[machines.gpus]]`: one GPU, its memory, copy engines and BAR1 copies.
    pub struct RawGpu => GpuSpec {
        model: text = d::GPU_MODEL => model; "setting",
        memory_latency_ns: dur = d::GPU_MEMORY_LATENCY => memory.latency; "row D4",
        memory_rate_gbps: rate = d::GPU_MEMORY_RATE => memory.rate; "datasheet (H100 PCIe)",
        memory_jitter_ns: dur = d::GPU_MEMORY_JITTER => memory.jitter_median; "estimate",
        heap_base: addr = d::GPU_HEAP_BASE => heap_base; "seed program",
        bar_offset: addr = d::GPU_BAR_OFFSET => bar_offset; "seed program",
        memcpy_launch_ns: dur = d::MEMCPY_LAUNCH => copy_engine.launch;
            "rows D1/D2/S2 below compute capability 7.0, L6/D17/D9 from 7.0",
        memcpy_sync_ns: dur = d::MEMCPY_SYNC => copy_engine.sync;
            "estimate from compute capability 7.0 (the rest of row D17's 2 us); rows D1/D2/S2 below",
        ce_copy_ns: dur = d::CE_COPY => copy_engine.copy; "row L6",
        reduce_gbps: rate = d::GPU_REDUCE_RATE => reduce.rate; "estimate",
        reduce_launch_ns: dur = d::GPU_REDUCE_LAUNCH => reduce.launch; "estimate",
        ce_read_window: count[1, MAX_WINDOW, "a number of outstanding reads"]
            = d::CE_READ_WINDOW => copy_engine.read_window; "row D15",
        ce_nvlink_read_window: count[1, MAX_WINDOW, "a number of outstanding reads"]
            = d::CE_NVLINK_READ_WINDOW => copy_engine.nvlink_read_window; "estimate",
        ce_mrrs_bytes: pow2[128, 4096] = d::CE_MRRS => copy_engine.mrrs; "estimate",
        gdrcopy_read_latency_ns: dur = d::GDRCOPY_READ_LATENCY => gdrcopy.read_latency; "row D4",
        gdrcopy_read_gbps: rate = d::GDRCOPY_READ_RATE => gdrcopy.read_rate; "row D4",
        gdrcopy_write_latency_ns: dur = d::GDRCOPY_WRITE_LATENCY
            => gdrcopy.write_latency; "row D3",
        gdrcopy_write_gbps: rate = d::GDRCOPY_WRITE_RATE => gdrcopy.write_rate; "row D3",
    }
    also {
        name: String,
        /// "major.minor"; by default from the model's name.
        compute_capability: Option<String>,
    }
}

section! {
    /// `[[machines.nics]]`: one NIC: wire, packets, WQEs, pipelines and DMA.
    pub struct RawNic => NicSpec {
        model: text = d::NIC_MODEL => model; "setting",
        wire_rate_gbps: rate = d::WIRE_RATE => wire_rate; "rows F9/F10",
        mtu_bytes: pow2[256, 4096] = d::MTU => mtu; "IBTA specification",
        packet_overhead_bytes: bytes_in[0, 512] = d::PACKET_OVERHEAD
            => packet_overhead; "IBTA specification (row S1)",
        ack_bytes: bytes_in[1, 512] = d::ACK_BYTES => ack_bytes; "IBTA specification",
        wqe_delivery: pick<WqeDelivery> = d::WQE_DELIVERY => wqe_delivery; "row G5",
        wqe_bytes: bytes_in[16, 4096] = d::WQE_BYTES => wqe_bytes; "rdma-core libmlx5",
        cqe_bytes: bytes_in[16, 512] = d::CQE_BYTES => cqe_bytes; "rdma-core libmlx5",
        inline_max_bytes: bytes_in[0, 4096] = d::INLINE_MAX => inline_max; "rdma-core libmlx5",
        wqe_process_ns: dur = d::WQE_PROCESS => wqe_process; "estimate (rows F7/F8/F11)",
        wqe_interval_ns: dur = d::WQE_INTERVAL => wqe_interval; "row F9",
        processing_units: count[1, 256, "a number of send-engine processing units"]
            = d::PROCESSING_UNITS => processing_units; "estimate (rows F7, F9, F18)",
        mtt_lookup_ns: dur = d::MTT_LOOKUP => mtt_lookup; "estimate",
        tx_pipeline_ns: dur = d::TX_PIPELINE => tx_pipeline; "estimate (rows F7/F8/F11)",
        rx_pipeline_ns: dur = d::RX_PIPELINE => rx_pipeline; "estimate (rows F7/F8/F11)",
        read_window: count[1, MAX_WINDOW, "a number of outstanding reads"] = d::NIC_READ_WINDOW
            => read_window; "estimate",
        mrrs_bytes: pow2[128, 4096] = d::NIC_MRRS => mrrs; "estimate",
        max_rd_atomic: count[1, 255, "a number of outstanding RDMA Reads per queue pair (8 \
            bits in the QP context)"] = d::MAX_RD_ATOMIC => max_rd_atomic; "perftest ib_read_bw",
        recv_wqe_bytes: bytes_in[16, 4096] = d::RECV_WQE_BYTES
            => recv_wqe_bytes; "rdma-core mlx5_wqe_data_seg",
    }
    also {
        name: String,
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLink {
    pub up: String,
    pub down: String,
    pub generation: u32,
    pub width: u32,
    pub mps_bytes: Option<Q>,
    pub latency_ns: Option<Q>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHost {
    pub name: String,
    pub machine: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    pub name: String,
    pub sender: Option<RawEndpoint>,
    pub receiver: Option<RawEndpoint>,
    pub bidirectional: Option<bool>,
    pub flows: Option<Vec<RawFlow>>,
    pub all_gpus: Option<RawAllGpus>,
    pub collective: Option<RawCollective>,
}

/// `collective = { kind = "all_reduce", hosts = "all", gpus_per_host = 8, channels = 16 }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCollective {
    pub kind: super::collective::CollectiveKind,
    pub algorithm: Option<super::collective::Algorithm>,
    pub protocol: Option<super::collective::Protocol>,
    pub hosts: Option<RawHostList>,
    pub gpus_per_host: Option<u32>,
    pub channels: Option<RawCount>,
    pub root: Option<i64>,
    pub buffsize: Option<Q>,
}

/// `"auto"` or a count.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum RawCount {
    Count(i64),
    Word(String),
}

/// `"all"` or a list of host names.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum RawHostList {
    Word(String),
    List(Vec<String>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFlow {
    pub sender: RawEndpoint,
    pub receiver: RawEndpoint,
    pub bidirectional: Option<bool>,
    /// The name other flows' `after` uses (default: `f` and the flow's index).
    pub name: Option<String>,
    /// The flows whose messages gate this flow's (all of them).
    pub after: Option<Vec<RawAfter>>,
    /// A reduction on the sending GPU between the gating deliveries and the post.
    pub reduce: Option<bool>,
    /// Messages the flow carries in a workload with dependencies.
    pub messages: Option<u32>,
}

/// `after = [{ flow = "r0", lag = 1 }]`: message k waits for message k - lag of flow r0.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAfter {
    pub flow: String,
    pub lag: Option<u32>,
}

/// Every GPU of `sender` with its nearest NIC, to the same GPU index on `receiver`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAllGpus {
    pub sender: String,
    pub receiver: String,
    pub bidirectional: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEndpoint {
    pub host: String,
    /// The NIC (optional for a flow inside one host, which crosses no NIC).
    pub nic: Option<String>,
    pub gpu: Option<String>,
    /// Socket whose DRAM holds host buffers (default: the NIC's socket).
    pub memory: Option<String>,
    /// Where the side's data lives: "gpu" (the default with a gpu) or "host" (pinned host
    /// memory, whatever the path does on the other side).
    pub buffer: Option<BufferPlace>,
    /// The host buffer a staged side copies through: "pinned" (cudaMallocHost, the default) or
    /// "pageable" (malloc'd and registered for the NIC, which CUDA sees as pageable).
    pub bounce: Option<BounceKind>,
}

/// A declared section and where it sits in a config (`[]` marks an array of tables).
#[derive(Clone, Copy, Debug)]
pub struct Section {
    /// Where its tables sit: a key path, `[]` marking an array of tables (`machines[].nics[]`).
    pub path: &'static str,
    /// Its parameters: key, unit, domain and source of the default.
    pub params: &'static [ParamDoc],
}

/// The peer-to-peer keys of a socket link or root complex, converted by hand (each direction
/// an allowed flag and an optional cap) and listed here for `gdrsim params`. Their defaults
/// come from the socket's `cpu_family` (none: allowed and uncapped); `gdrsim params` prints
/// the family's source for each value it sets.
pub const P2P_PARAMS: &[ParamDoc] = &[
    ParamDoc {
        key: "p2p_read",
        unit: "bool",
        domain: super::Domain::Flag,
        source: "setting (default: allowed, or as its socket's cpu_family says)",
    },
    ParamDoc {
        key: "p2p_read_rate_gbps",
        unit: "Gb/s",
        domain: super::Domain::Rate {
            min: super::limits::MIN_RATE_BPS,
        },
        source: "its socket's cpu_family (none: no cap)",
    },
    ParamDoc {
        key: "p2p_write",
        unit: "bool",
        domain: super::Domain::Flag,
        source: "setting (default: allowed, or as its socket's cpu_family says)",
    },
    ParamDoc {
        key: "p2p_write_rate_gbps",
        unit: "Gb/s",
        domain: super::Domain::Rate {
            min: super::limits::MIN_RATE_BPS,
        },
        source: "its socket's cpu_family (none: no cap)",
    },
];

/// Every declared section: the parameters a config may set, with their domains and sources.
pub const SECTIONS: [Section; 18] = [
    Section {
        path: "sim",
        params: RawSim::PARAMS,
    },
    Section {
        path: "output",
        params: RawOutput::PARAMS,
    },
    Section {
        path: "network",
        params: RawNetwork::PARAMS,
    },
    Section {
        path: "network",
        params: FABRIC_PARAMS,
    },
    Section {
        path: "machines[].cpu",
        params: RawCpu::PARAMS,
    },
    Section {
        path: "machines[].registration",
        params: RawRegistration::PARAMS,
    },
    Section {
        path: "machines[].pcie",
        params: RawPcie::PARAMS,
    },
    Section {
        path: "machines[].sockets[]",
        params: RawSocket::PARAMS,
    },
    Section {
        path: "machines[].socket_links[]",
        params: RawSocketLink::PARAMS,
    },
    Section {
        path: "machines[].socket_links[]",
        params: P2P_PARAMS,
    },
    Section {
        path: "machines[].root_complexes[]",
        params: RawRootComplex::PARAMS,
    },
    Section {
        path: "machines[].root_complexes[]",
        params: P2P_PARAMS,
    },
    Section {
        path: "machines[].switches[]",
        params: RawSwitch::PARAMS,
    },
    Section {
        path: "machines[].gpus[]",
        params: RawGpu::PARAMS,
    },
    Section {
        path: "machines[].nvswitches[]",
        params: RawNvSwitch::PARAMS,
    },
    Section {
        path: "machines[].nvlinks[]",
        params: RawNvLink::PARAMS,
    },
    Section {
        path: "machines[].c2c_links[]",
        params: RawC2cLink::PARAMS,
    },
    Section {
        path: "machines[].nics[]",
        params: RawNic::PARAMS,
    },
];

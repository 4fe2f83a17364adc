//! The TOML as written: a serde mirror with every key spelled out and unknown keys refused.
//! Quantities stay raw ([`Q`]) until [`super::convert`] parses them with their key path in hand.

use serde::Deserialize;

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

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSim {
    pub iterations: Option<u32>,
    pub min_iterations: Option<u32>,
    pub iteration_budget_bytes: Option<Q>,
    pub stream_window: Option<u32>,
    pub stream_messages: Option<u32>,
    pub stream_budget_bytes: Option<Q>,
    pub granularity: Option<String>,
    pub coalesce_above_bytes: Option<Q>,
    pub burst_bytes: Option<Q>,
    pub registration: Option<String>,
    pub jitter: Option<bool>,
    pub flush: Option<String>,
    pub net_gdr_level: Option<String>,
    pub registration_cache_entries: Option<u32>,
    pub buffers: Option<u32>,
    pub chunk_bytes: Option<Q>,
    pub pipeline_depth: Option<u32>,
    pub recv_depth: Option<u32>,
    pub min_rnr_timer: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSweep {
    pub sizes: RawSizes,
    pub paths: Vec<String>,
    pub ops: Option<Vec<String>>,
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

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOutput {
    pub charts: Option<Vec<String>>,
    pub formats: Option<Vec<String>>,
    pub width_px: Option<u32>,
    pub height_px: Option<u32>,
    pub breakdown_sizes: Option<Vec<Q>>,
    pub compare_size: Option<Q>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNetwork {
    pub switch_hops: Option<u32>,
    pub switch_latency_ns: Option<Q>,
    pub cable_m: Option<u64>,
    pub propagation_ns_per_m: Option<Q>,
}

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
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCpu {
    pub post_ns: Option<Q>,
    pub post_recv_ns: Option<Q>,
    pub poll_ns: Option<Q>,
    pub pageable_d2h_latency_ns: Option<Q>,
    pub pageable_d2h_gbps: Option<Q>,
    pub pageable_h2d_latency_ns: Option<Q>,
    pub pageable_h2d_gbps: Option<Q>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRegistration {
    pub host_base_ns: Option<Q>,
    pub host_per_page_ns: Option<Q>,
    pub gpu_base_ns: Option<Q>,
    pub gpu_per_page_ns: Option<Q>,
    pub bounce_alloc_ns: Option<Q>,
    pub host_dereg_base_ns: Option<Q>,
    pub host_dereg_per_page_ns: Option<Q>,
    pub gpu_dereg_base_ns: Option<Q>,
    pub gpu_dereg_per_page_ns: Option<Q>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPcie {
    pub link_latency_ns: Option<Q>,
    pub mps_bytes: Option<Q>,
    pub rcb_bytes: Option<Q>,
    pub ecrc: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSocket {
    pub name: String,
    pub dram_latency_ns: Option<Q>,
    pub dram_rate_gbps: Option<Q>,
    pub dram_jitter_ns: Option<Q>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSocketLink {
    pub a: String,
    pub b: String,
    pub rate_gbps: Option<Q>,
    pub latency_ns: Option<Q>,
    pub p2p_read: Option<bool>,
    pub p2p_write: Option<bool>,
    pub p2p_read_rate_gbps: Option<Q>,
    pub p2p_write_rate_gbps: Option<Q>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRootComplex {
    pub name: String,
    pub socket: String,
    pub latency_ns: Option<Q>,
    pub p2p_read: Option<bool>,
    pub p2p_write: Option<bool>,
    pub p2p_read_rate_gbps: Option<Q>,
    pub p2p_write_rate_gbps: Option<Q>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSwitch {
    pub name: String,
    pub latency_ns: Option<Q>,
    pub acs_redirect: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGpu {
    pub name: String,
    pub model: Option<String>,
    pub compute_capability: Option<String>,
    pub memory_latency_ns: Option<Q>,
    pub memory_rate_gbps: Option<Q>,
    pub memory_jitter_ns: Option<Q>,
    pub heap_base: Option<u64>,
    pub bar_offset: Option<u64>,
    pub memcpy_launch_ns: Option<Q>,
    pub memcpy_sync_ns: Option<Q>,
    pub ce_read_window: Option<u32>,
    pub ce_mrrs_bytes: Option<Q>,
    pub gdrcopy_read_latency_ns: Option<Q>,
    pub gdrcopy_read_gbps: Option<Q>,
    pub gdrcopy_write_latency_ns: Option<Q>,
    pub gdrcopy_write_gbps: Option<Q>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNic {
    pub name: String,
    pub model: Option<String>,
    pub wire_rate_gbps: Option<Q>,
    pub mtu_bytes: Option<Q>,
    pub packet_overhead_bytes: Option<Q>,
    pub ack_bytes: Option<Q>,
    pub wqe_delivery: Option<String>,
    pub wqe_bytes: Option<Q>,
    pub cqe_bytes: Option<Q>,
    pub inline_max_bytes: Option<Q>,
    pub wqe_process_ns: Option<Q>,
    pub wqe_interval_ns: Option<Q>,
    pub mtt_lookup_ns: Option<Q>,
    pub tx_pipeline_ns: Option<Q>,
    pub rx_pipeline_ns: Option<Q>,
    pub read_window: Option<u32>,
    pub mrrs_bytes: Option<Q>,
    pub max_rd_atomic: Option<u32>,
    pub recv_wqe_bytes: Option<Q>,
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
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFlow {
    pub sender: RawEndpoint,
    pub receiver: RawEndpoint,
    pub bidirectional: Option<bool>,
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
    pub nic: String,
    pub gpu: Option<String>,
    /// Socket whose DRAM holds host buffers (default: the NIC's socket).
    pub memory: Option<String>,
    /// Where the side's data lives: "gpu" (the default with a gpu) or "host" (pinned host
    /// memory, whatever the path does on the other side).
    pub buffer: Option<String>,
    /// The host buffer a staged side copies through: "pinned" (cudaMallocHost, the default) or
    /// "pageable" (malloc'd and registered for the NIC, which CUDA sees as pageable).
    pub bounce: Option<String>,
}

//! The typed description of the simulated hardware: what a validated config holds and what the
//! components read their parameters from. Plain data with units in the types (picoseconds,
//! bytes, [`Rate`]); defaults and their sources live with the config (configs/default.toml).

use crate::units::{Ps, Rate};

/// Peer-to-peer forwarding policy of a root complex or inter-socket link for one direction of
/// traffic (reads or writes). Client CPUs forward P2P writes only (row B7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum P2p {
    /// Not forwarded: the route is refused (and GPUDirect falls back to staging).
    #[default]
    Refused,
    /// Allowed, optionally capped at a forwarding rate.
    Allowed(Option<Rate>),
}

/// A memory (host DRAM of one socket, or a GPU's device memory).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemorySpec {
    /// Access latency seen by a DMA request arriving at the memory controller.
    pub latency: Ps,
    /// Bandwidth of the memory for DMA traffic.
    pub rate: Rate,
    /// Median of the extra access delay drawn per access when jitter is on (0 = none).
    pub jitter_median: Ps,
}

/// Host-software costs of one CPU thread driving the verbs and CUDA APIs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuSpec {
    /// Building and posting one send WQE (before the MMIO write leaves the core).
    pub post: Ps,
    /// Reposting one receive WQE after consuming a receive completion.
    pub post_recv: Ps,
    /// One CQ poll that finds a completion (reads the CQE line written by the NIC).
    pub poll: Ps,
    /// cudaMemcpy with pageable host memory: the driver's CPU copy through its pinned buffer.
    pub pageable: PageableSpec,
}

/// What a cudaMemcpy to or from pageable host memory costs beyond a pinned one: the CUDA
/// driver stages it through its own pinned buffer with a CPU memcpy, of which a latency and a
/// rate are what the DMA does not hide.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageableSpec {
    /// Device to host: the fixed part of the driver's extra time at the fitted sizes, in ps.
    pub d2h_latency: Ps,
    /// Device to host: the rate of the driver's CPU copy.
    pub d2h_rate: Rate,
    /// Host to device: the fixed part of the driver's extra time at the fitted sizes, in ps.
    pub h2d_latency: Ps,
    /// Host to device: the rate of the driver's CPU copy.
    pub h2d_rate: Rate,
}

impl PageableSpec {
    /// The smallest copy the latencies were fitted at (row D9's 1 MiB).
    pub const FITTED_FROM: u64 = 1 << 20;

    /// The calling thread's extra time for a copy of `bytes` device to host (`d2h`) or back.
    /// The fixed part is the fill of the driver's staging pipeline at the fitted sizes; a
    /// smaller copy needs only its share of it (scaled by size below [`Self::FITTED_FROM`], an
    /// estimate: no measurement below 1 MiB pins it).
    pub fn cost(&self, d2h: bool, bytes: u64) -> Ps {
        let (latency, rate) = match d2h {
            true => (self.d2h_latency, self.d2h_rate),
            false => (self.h2d_latency, self.h2d_rate),
        };
        let share = (latency as u128 * bytes.min(Self::FITTED_FROM) as u128
            / Self::FITTED_FROM as u128) as Ps;
        share + rate.tx_time(bytes)
    }
}

/// Memory-registration costs (ibv_reg_mr; GPU memory through peer memory / dma-buf).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegistrationSpec {
    /// Host buffer registration: fixed part, in picoseconds.
    pub host_base: Ps,
    /// Per 4 KiB host page.
    pub host_per_page: Ps,
    /// GPU buffer registration: fixed part, in picoseconds.
    pub gpu_base: Ps,
    /// Per 64 KiB GPU page.
    pub gpu_per_page: Ps,
    /// cudaMallocHost of one pinned bounce buffer.
    pub bounce_alloc: Ps,
    /// ibv_dereg_mr of a host buffer: fixed part and per 4 KiB page.
    pub host_dereg_base: Ps,
    /// ibv_dereg_mr of a host buffer: per 4 KiB page, in picoseconds.
    pub host_dereg_per_page: Ps,
    /// Unpinning a GPU buffer: fixed part and per 64 KiB page.
    pub gpu_dereg_base: Ps,
    /// Unpinning a GPU buffer: per 64 KiB page, in picoseconds.
    pub gpu_dereg_per_page: Ps,
}

/// Bytes of a host page as registration counts them (4 KiB).
pub const HOST_PAGE: u64 = 4096;
/// Bytes of a GPU page as registration counts them (64 KiB, GPUDirect's pinning granule).
pub const GPU_PAGE: u64 = 64 << 10;

impl RegistrationSpec {
    /// Registering a host buffer of `bytes`: base plus per page (at least one page).
    pub fn host_cost(&self, bytes: u64) -> Ps {
        self.host_base + bytes.div_ceil(HOST_PAGE).max(1) * self.host_per_page
    }
    /// Registering a GPU buffer of `bytes`: base plus per 64 KiB page (at least one).
    pub fn gpu_cost(&self, bytes: u64) -> Ps {
        self.gpu_base + bytes.div_ceil(GPU_PAGE).max(1) * self.gpu_per_page
    }
    /// Deregistering a host buffer of `bytes`: base plus per page (at least one page).
    pub fn host_dereg_cost(&self, bytes: u64) -> Ps {
        self.host_dereg_base + bytes.div_ceil(HOST_PAGE).max(1) * self.host_dereg_per_page
    }
    /// Unpinning a GPU buffer of `bytes`: base plus per 64 KiB page (at least one).
    pub fn gpu_dereg_cost(&self, bytes: u64) -> Ps {
        self.gpu_dereg_base + bytes.div_ceil(GPU_PAGE).max(1) * self.gpu_dereg_per_page
    }
}

/// Link-level PCIe settings shared by a machine's links unless a link overrides them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PcieSpec {
    /// PHY + data-link pipeline latency of one link traversal.
    pub link_latency: Ps,
    /// Max payload size of a TLP, in bytes (a link may set its own; a route uses the minimum).
    pub mps: u64,
    /// End-to-end CRC on every TLP (4 more header bytes).
    pub ecrc: bool,
}

/// A CPU socket and its DRAM.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SocketSpec {
    /// Its name in the machine ("cpu0").
    pub name: String,
    /// Its processor family, which set the defaults of its DRAM, its root complexes' and its
    /// socket links' P2P forwarding and its socket links' rate ([`super::CpuFamily`]).
    pub cpu_family: super::CpuFamily,
    /// Its DRAM (`rate`: the datasheet peak).
    pub dram: MemorySpec,
    /// The share of the DRAM's datasheet peak that sustained DMA reaches, in percent (STREAM-
    /// class rates are 70-85% of peak): its DRAM channel runs at `dram.rate` x this / 100.
    pub dram_efficiency_pct: u32,
    /// The CPU list `nvidia-smi topo -m` prints for its devices, where the config gives one
    /// (an imported matrix's); `gdrsim topo` prints the socket's name otherwise.
    pub cpu_affinity: Option<String>,
    /// Its NUMA node as the OS numbers it, where the config gives one; `gdrsim topo` prints
    /// the socket's index otherwise.
    pub numa_node: Option<u32>,
}

impl Default for SocketSpec {
    fn default() -> Self {
        SocketSpec {
            name: String::new(),
            cpu_family: super::CpuFamily::default(),
            dram: MemorySpec::default(),
            // No family: the DRAM's rate as given.
            dram_efficiency_pct: 100,
            cpu_affinity: None,
            numa_node: None,
        }
    }
}

/// Whether `text` is a CPU list as Linux prints one: numbers and ranges joined by commas
/// ("0-55,112-167"), the form of a socket's `cpu_affinity`.
pub fn is_cpu_list(text: &str) -> bool {
    !text.is_empty()
        && text.split(',').all(|part| {
            let mut ends = part.splitn(2, '-');
            let number = |s: Option<&str>| {
                s.is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            };
            let first = ends.next();
            let second = ends.next();
            number(first) && (second.is_none() || number(second))
        })
}

/// An inter-socket link (UPI, Infinity Fabric) between sockets `a` and `b`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SocketLinkSpec {
    /// One socket's name.
    pub a: String,
    /// The other socket's name.
    pub b: String,
    /// Bandwidth of each direction.
    pub rate: Rate,
    /// One crossing, in picoseconds.
    pub latency: Ps,
    /// Forwarding of peer-to-peer reads across it.
    pub p2p_read: P2p,
    /// Forwarding of peer-to-peer writes across it.
    pub p2p_write: P2p,
}

/// A root complex (a host bridge with its root ports) of a socket.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RootComplexSpec {
    /// Its name in the machine ("rc0").
    pub name: String,
    /// The name of the socket it belongs to.
    pub socket: String,
    /// One traversal (root port <-> memory fabric, or root port <-> root port for P2P).
    pub latency: Ps,
    /// Forwarding of peer-to-peer reads between its root ports.
    pub p2p_read: P2p,
    /// Forwarding of peer-to-peer writes between its root ports.
    pub p2p_write: P2p,
}

/// A PCIe switch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SwitchSpec {
    /// Its name in the machine ("sw0").
    pub name: String,
    /// Cut-through port-to-port latency.
    pub latency: Ps,
    /// ACS P2P redirect on the downstream ports: P2P between devices under this switch goes up
    /// through the root complex instead of turning inside the switch.
    pub acs_redirect: bool,
}

/// An NVSwitch: the crossbar of an NVLink fabric (HGX boards put several on the baseboard;
/// the model makes them one node, as the GPUs see one fabric).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NvSwitchSpec {
    /// Its name in the machine ("nvswitch").
    pub name: String,
    /// Port-to-port traversal.
    pub latency: Ps,
}

/// A bonded set of NVLinks between a GPU (`a`) and another GPU or an NVSwitch (`b`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NvLinkSpec {
    /// The GPU's name.
    pub a: String,
    /// The other end's name: a GPU or an NVSwitch.
    pub b: String,
    /// Links in the bond (`nvidia-smi topo -m` prints `NV<links>`).
    pub links: u32,
    /// Data rate of one link, each direction.
    pub link_rate: Rate,
    /// One crossing (PHY, link layer and the port), in picoseconds.
    pub latency: Ps,
    /// Largest payload of one packet on the bond, in bytes: it packetises what crosses it.
    pub mps: u64,
    /// Protocol bytes each of its packets adds (a write, a read request or a read's data
    /// takes one packet per `mps` bytes of payload, at least one).
    pub overhead: u64,
}

/// An NVLink-C2C link between a CPU socket and a GPU (Grace Hopper): the GPU's only attachment
/// to its host, coherent, in place of a PCIe link. Copies between host memory and the GPU and a
/// NIC's peer-to-peer traffic into the GPU cross it; the GPU hangs under the socket's memory
/// fabric (no root complex of its own).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct C2cLinkSpec {
    /// The socket's name.
    pub socket: String,
    /// The GPU's name.
    pub gpu: String,
    /// Data rate of each direction.
    pub rate: Rate,
    /// One crossing, in picoseconds.
    pub latency: Ps,
    /// Largest payload of one packet on the link, in bytes: it packetises what crosses it.
    pub mps: u64,
    /// Protocol bytes each of its packets adds on the link (a write, a read request or a
    /// completion takes one packet per `mps` bytes of payload, at least one).
    pub overhead: u64,
}

/// The GPU's copy engine (cudaMemcpy) and its host-software overheads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CopyEngineSpec {
    /// cudaMemcpy call and launch until the copy engine starts moving data.
    pub launch: Ps,
    /// From the last byte landing to the calling thread returning (completion signalling).
    pub sync: Ps,
    /// The engine's own cost per copy on the GPU (its methods and semaphores): what separates
    /// two copies of one stream on the GPU's timeline. Seen from the host it is part of
    /// `launch`, so only the GPU-timeline tools (nvbandwidth, p2p-matrix) charge it.
    pub copy: Ps,
    /// Outstanding read requests (H2D reads host memory; P2P reads over PCIe).
    pub read_window: u32,
    /// Outstanding read requests of a peer GPU's memory over NVLink (P2P reads).
    pub nvlink_read_window: u32,
    /// Largest read request the copy engine issues, in bytes.
    pub mrrs: u64,
}

/// A GPU: its memory, copy engine, BAR addresses and GDRCopy costs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GpuSpec {
    /// Its name in the machine ("gpu0").
    pub name: String,
    /// The product, for reports ("H100 PCIe").
    pub model: String,
    /// CUDA compute capability (major, minor): decides the GPUDirect receive flush.
    pub compute_capability: (u32, u32),
    /// Its device memory.
    pub memory: MemorySpec,
    /// Virtual address of the first allocation (cuMemAlloc heap), as in the seed program.
    pub heap_base: u64,
    /// Bus address = virtual address + this offset (the BAR window), as in the seed program.
    pub bar_offset: u64,
    /// Its copy engine (cudaMemcpy).
    pub copy_engine: CopyEngineSpec,
    /// CPU copies through its BAR1 mapping (GDRCopy).
    pub gdrcopy: GdrcopySpec,
    /// Its reduction kernel (a workload flow's `reduce`).
    pub reduce: ReduceSpec,
}

/// A GPU's reduction of a received buffer into its own before the result is sent on (NCCL's
/// reduce step): a launch, then the output bytes at a rate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReduceSpec {
    /// Launch until the kernel moves data.
    pub launch: Ps,
    /// Output bytes per second.
    pub rate: Rate,
}

impl ReduceSpec {
    /// How long reducing `bytes` takes.
    pub fn time(&self, bytes: u64) -> Ps {
        self.launch + self.rate.tx_time(bytes)
    }
}

/// CPU copies through the GPU's BAR1 mapping (the GDRCopy library): each direction costs the
/// calling thread a fixed part plus the bytes at a rate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GdrcopySpec {
    /// `gdr_copy_from_mapping`: uncached loads from GPU memory.
    pub read_latency: Ps,
    /// `gdr_copy_from_mapping`'s rate.
    pub read_rate: Rate,
    /// `gdr_copy_to_mapping`: write-combined stores into GPU memory.
    pub write_latency: Ps,
    /// `gdr_copy_to_mapping`'s rate.
    pub write_rate: Rate,
}

impl GdrcopySpec {
    /// The thread's time to copy `bytes` out of (`read`) or into the GPU.
    pub fn cost(&self, read: bool, bytes: u64) -> Ps {
        match read {
            true => self.read_latency + self.read_rate.tx_time(bytes),
            false => self.write_latency + self.write_rate.tx_time(bytes),
        }
    }
}

/// How the NIC receives a send WQE: through BlueFlame (the CPU writes the whole WQE through MMIO
/// together with the doorbell) or by an 8-byte doorbell, after which the NIC fetches the WQE
/// from the send queue by DMA read. libmlx5 decides per post (`post_send_db` in rdma-core
/// `providers/mlx5/qp.c`): BlueFlame when the post holds one WQE, the WQE fits the BlueFlame
/// buffer and it is inline **or `prefer_bf` is set**, which `get_always_bf` (`mlx5.c`) sets
/// unless `MLX5_POST_SEND_PREFER_BF=0`: by default every single-WQE post that fits, inline or
/// not (reference row G5). A post of several WQEs rings the doorbell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WqeDelivery {
    /// libmlx5's default (`prefer_bf` = 1): BlueFlame for a single WQE that fits, a doorbell
    /// for a post of several.
    #[default]
    Auto,
    /// BlueFlame for a single WQE that fits, as `auto` (`MLX5_POST_SEND_PREFER_BF=1` set
    /// explicitly).
    BlueFlame,
    /// BlueFlame only for a single inline WQE (`MLX5_POST_SEND_PREFER_BF=0`).
    InlineOnly,
    /// Never BlueFlame (`MLX5_SHUT_UP_BF=1`).
    Doorbell,
}

/// The BlueFlame buffer of an mlx5 UAR page: half of its 512-byte register (libmlx5 `bf_buf_size`).
pub const BLUEFLAME_BYTES: u64 = 256;

impl WqeDelivery {
    /// Every delivery, in the order the config documents them.
    pub const ALL: [WqeDelivery; 4] = [
        WqeDelivery::Auto,
        WqeDelivery::BlueFlame,
        WqeDelivery::InlineOnly,
        WqeDelivery::Doorbell,
    ];

    /// Whether a post of `wqes` WQEs, the first of `wqe_bytes` (inline data included), goes by
    /// BlueFlame (`nreq == 1`, fits, inline or `prefer_bf`).
    pub fn blueflame(self, wqes: u32, inline: bool, wqe_bytes: u64) -> bool {
        let single = wqes == 1 && wqe_bytes <= BLUEFLAME_BYTES;
        match self {
            WqeDelivery::Auto | WqeDelivery::BlueFlame => single,
            WqeDelivery::InlineOnly => single && inline,
            WqeDelivery::Doorbell => false,
        }
    }

    /// The name the config uses ("auto", "blueflame", "doorbell").
    pub fn name(self) -> &'static str {
        match self {
            WqeDelivery::Auto => "auto",
            WqeDelivery::BlueFlame => "blueflame",
            WqeDelivery::InlineOnly => "inline-only",
            WqeDelivery::Doorbell => "doorbell",
        }
    }
}

/// Bytes of an RDMA Write WQE carrying `inline` bytes inline, as libmlx5 lays it out: the
/// control and remote-address segments (16 B each), the inline segment header (4 B) and the data,
/// padded to 16 B, in whole 64-byte basic blocks (MLX5_SEND_WQE_BB).
pub fn inline_wqe_bytes(inline: u64) -> u64 {
    (32 + (4 + inline).next_multiple_of(16)).next_multiple_of(64)
}

/// An RDMA NIC (one port).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NicSpec {
    /// Its name in the machine ("nic0").
    pub name: String,
    /// The product, for reports ("ConnectX-7 NDR").
    pub model: String,
    /// Net data rate of the port (after line coding and FEC).
    pub wire_rate: Rate,
    /// Path MTU: payload bytes per packet at most.
    pub mtu: u64,
    /// Header and trailer bytes per packet on the wire (transport + link headers, CRCs).
    pub packet_overhead: u64,
    /// Size of an ACK packet on the wire.
    pub ack_bytes: u64,
    /// How the CPU hands it a send WQE (BlueFlame or doorbell).
    pub wqe_delivery: WqeDelivery,
    /// Bytes of a send WQE without inline data (what a doorbell makes it fetch by DMA).
    pub wqe_bytes: u64,
    /// Bytes of a completion queue entry it writes into host memory.
    pub cqe_bytes: u64,
    /// Payloads up to this size are copied into the WQE by the CPU (host memory only).
    pub inline_max: u64,
    /// WQE parsing and scheduling latency inside the NIC.
    pub wqe_process: Ps,
    /// Minimum spacing between WQEs in the send engine over all its units (1 / the NIC's
    /// aggregate message rate).
    pub wqe_interval: Ps,
    /// The send engine's processing units: QP `q` uses unit `q mod processing_units`, and each
    /// unit spaces its WQEs by `wqe_interval * processing_units` (one QP's message rate).
    pub processing_units: u32,
    /// Address translation (MTT lookup) per work request.
    pub mtt_lookup: Ps,
    /// The transmit pipeline's latency, in picoseconds.
    pub tx_pipeline: Ps,
    /// The receive pipeline's latency, in picoseconds.
    pub rx_pipeline: Ps,
    /// Outstanding DMA read requests (tags).
    pub read_window: u32,
    /// Largest DMA read request it issues, in bytes.
    pub mrrs: u64,
    /// RDMA Reads a queue pair may have outstanding as requester (`max_rd_atomic`): an RDMA
    /// Read stream never has more messages in flight.
    pub max_rd_atomic: u32,
    /// Bytes of one receive WQE the NIC fetches from the receive queue for a Send.
    pub recv_wqe_bytes: u64,
}

/// Links of a machine's PCIe tree: `up` is the upstream node (root complex or switch), `down`
/// the downstream one (switch, GPU or NIC).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkSpec {
    /// The upstream node's name.
    pub up: String,
    /// The downstream node's name.
    pub down: String,
    /// PCIe generation (1 to 6).
    pub generation: u32,
    /// Lanes.
    pub width: u32,
    /// The link's max payload size, in bytes.
    pub mps: u64,
    /// One traversal (PHY and data link), in picoseconds.
    pub latency: Ps,
}

/// One machine model: its CPU costs, registration, PCIe settings and the items of its tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachineSpec {
    /// The machine model's name.
    pub name: String,
    /// Host-software costs of a thread.
    pub cpu: CpuSpec,
    /// Memory-registration costs.
    pub registration: RegistrationSpec,
    /// Link-level PCIe settings shared by its links.
    pub pcie: PcieSpec,
    /// Base address of the pinned host (bounce) buffers, as in the seed program.
    pub host_buffer_base: u64,
    /// Its CPU sockets.
    pub sockets: Vec<SocketSpec>,
    /// Links between its sockets.
    pub socket_links: Vec<SocketLinkSpec>,
    /// Its root complexes.
    pub root_complexes: Vec<RootComplexSpec>,
    /// Its PCIe switches.
    pub switches: Vec<SwitchSpec>,
    /// Its GPUs.
    pub gpus: Vec<GpuSpec>,
    /// Its NICs.
    pub nics: Vec<NicSpec>,
    /// Its PCIe links.
    pub links: Vec<LinkSpec>,
    /// Its NVSwitches.
    pub nvswitches: Vec<NvSwitchSpec>,
    /// Its NVLink bonds.
    pub nvlinks: Vec<NvLinkSpec>,
    /// Its NVLink-C2C links (a GPU attached to a socket instead of by PCIe).
    pub c2c_links: Vec<C2cLinkSpec>,
}

/// A host of the study: a named instance of a machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostSpec {
    /// The host's name ("node-a").
    pub name: String,
    /// Its machine.
    pub machine: MachineSpec,
}

/// The network between the two hosts' NIC ports: cables and cut-through switches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetworkSpec {
    /// Network switches between two NIC ports (0: cabled back to back). The single-switch
    /// fabric only.
    pub switch_hops: u32,
    /// Cut-through latency of one switch, in picoseconds.
    pub switch_latency: Ps,
    /// Length of each cable (there are switch_hops + 1 of them).
    pub cable_m: u64,
    /// Signal propagation per metre of cable, in picoseconds.
    pub propagation_per_m: Ps,
    /// How the switches are laid out.
    pub fabric: Fabric,
    /// The leaf-spine generator's numbers (read with `fabric = "leaf-spine"`; its
    /// oversubscription, leaf radix and spine port rate with `fabric = "rail-optimized"` too).
    pub leaf_spine: LeafSpineSpec,
    /// The rail-optimized generator's numbers (read with `fabric = "rail-optimized"` only).
    pub rail: RailSpec,
    /// The fat-tree generator's numbers above its leaves (read with `fabric = "fat-tree"`
    /// only; its leaves are `leaf_spine`'s: hosts per leaf, oversubscription, radixes).
    pub fat_tree: FatTreeSpec,
    /// How a flow picks one of several equal-cost paths.
    pub routing: Routing,
    /// Queue pairs per connection (NCCL_IB_QPS_PER_CONNECTION): a flow's messages ride them
    /// round robin, and ECMP hashes each QP on its own (0 reads as 1). Flow `i` of a scenario
    /// has QP numbers `i x Q .. i x Q + Q - 1`, so one QP keeps QP `i`.
    pub qps_per_connection: u32,
}

impl NetworkSpec {
    /// The queue pairs of one connection (at least one).
    pub fn qps(&self) -> u32 {
        self.qps_per_connection.max(1)
    }
}

/// The layout of the network's switches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fabric {
    /// `switch_hops` switches between any two ports, non-blocking (each port has private
    /// channels through the core), or back to back with `switch_hops = 0`: today's network.
    #[default]
    SingleSwitch,
    /// Two tiers: hosts on leaf switches, every leaf cabled to the spines; the leaf-to-spine
    /// and spine-to-leaf cables are shared by every flow that crosses them.
    LeafSpine,
    /// Two tiers by rail: NIC `i` of every host of a scalable unit on the unit's rail leaf
    /// `i`; every rail leaf of every unit cabled to the spines, which are shared by the units.
    RailOptimized,
    /// Three tiers: hosts on leaves, leaves grouped into pods each with its own spines, every
    /// pod's spines cabled to the core switches.
    FatTree,
}

impl Fabric {
    /// Every fabric, in the order messages list them.
    pub const ALL: [Fabric; 4] = [
        Fabric::SingleSwitch,
        Fabric::LeafSpine,
        Fabric::RailOptimized,
        Fabric::FatTree,
    ];
    /// The word a config writes.
    pub fn name(self) -> &'static str {
        match self {
            Fabric::SingleSwitch => "single-switch",
            Fabric::LeafSpine => "leaf-spine",
            Fabric::RailOptimized => "rail-optimized",
            Fabric::FatTree => "fat-tree",
        }
    }

    /// Whether the fabric is built as tiers of switches (leaves, spines, and the fat-tree's
    /// cores) with shared cables: every fabric but the single switch.
    pub fn tiered(self) -> bool {
        self != Fabric::SingleSwitch
    }
}

/// How a flow's route picks among equal-cost paths through the spines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Routing {
    /// Static ECMP: a hash of (source port, destination port, QP number) picks the path, as
    /// switches hash a flow's 5-tuple (RoCE's UDP source port varies per QP).
    #[default]
    Ecmp,
    /// Adaptive, approximated at route-build time: each flow in turn takes the equal-cost
    /// path whose cables carry the fewest flows already placed (not per packet, not by queue
    /// depth).
    Adaptive,
}

impl Routing {
    /// Every routing, in the order messages list them.
    pub const ALL: [Routing; 2] = [Routing::Ecmp, Routing::Adaptive];
    /// The word a config writes.
    pub fn name(self) -> &'static str {
        match self {
            Routing::Ecmp => "ecmp",
            Routing::Adaptive => "adaptive",
        }
    }
}

/// A leaf-spine fabric's numbers: hosts fill leaves in config order, `hosts_per_leaf` to a
/// leaf; each leaf has `downlinks / oversubscription` uplinks, spread over the spines in turn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LeafSpineSpec {
    /// Hosts cabled to one leaf (every NIC port of each).
    pub hosts_per_leaf: u32,
    /// Spine switches.
    pub spines: u32,
    /// Host-facing ports over spine-facing ports of a leaf, as numerator and denominator
    /// (2:1 is (2, 1): half as many uplinks as downlinks).
    pub oversubscription: (u32, u32),
    /// Ports of one leaf switch.
    pub leaf_radix: u32,
    /// Ports of one spine switch (None: the leaves' radix, one switch model throughout).
    pub spine_radix: Option<u32>,
    /// Rate of a leaf-spine cable (None: the fastest NIC port of the study).
    pub spine_port: Option<Rate>,
}

impl LeafSpineSpec {
    /// Ports of one spine switch: `spine_radix`, or the leaves' radix where it is not set.
    pub fn spine_radix(&self) -> u32 {
        self.spine_radix.unwrap_or(self.leaf_radix)
    }
}

/// A rail-optimized fabric's numbers: hosts fill scalable units in config order,
/// `hosts_per_unit` to a unit; a unit has one rail leaf per NIC of its hosts; the spines,
/// `units x spines_per_unit` of them, are shared by every unit (as NVIDIA's DGX SuperPOD
/// spine group is).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RailSpec {
    /// Hosts of one scalable unit (every NIC port of each on its rail's leaf).
    pub hosts_per_unit: u32,
    /// Scalable units: the study's hosts must be `hosts_per_unit x units`.
    pub units: u32,
    /// Spine switches per unit.
    pub spines_per_unit: u32,
}

/// A fat tree's numbers above its leaves: the leaves (`hosts_per_leaf` hosts each, in config
/// order) fill `pods` pods in order, each pod with `spines_per_pod` spines of its own; every
/// pod spine has `cables from its leaves / core_oversubscription` uplinks to the `cores`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FatTreeSpec {
    /// Pods: groups of leaves with their own spines.
    pub pods: u32,
    /// Spine switches of one pod.
    pub spines_per_pod: u32,
    /// Core switches, shared by every pod.
    pub cores: u32,
    /// Leaf-facing over core-facing ports of a spine, as numerator and denominator.
    pub core_oversubscription: (u32, u32),
    /// Ports of one core switch (None: the spines' radix).
    pub core_radix: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// libmlx5's post_send_db (row G5): BlueFlame for a post of one WQE that fits the 256-byte
    /// buffer, inline or not, since `prefer_bf` is 1 by default; a doorbell for a post of
    /// several WQEs or a WQE too large; inline only with `MLX5_POST_SEND_PREFER_BF=0`; never
    /// with `MLX5_SHUT_UP_BF=1`.
    #[test]
    fn blueflame_for_every_single_wqe_that_fits_unless_told_otherwise() {
        for d in [WqeDelivery::Auto, WqeDelivery::BlueFlame] {
            assert!(d.blueflame(1, true, 64));
            assert!(d.blueflame(1, false, 64));
            assert!(!d.blueflame(2, false, 64));
            assert!(!d.blueflame(1, true, 320));
        }
        assert!(WqeDelivery::InlineOnly.blueflame(1, true, 64));
        assert!(!WqeDelivery::InlineOnly.blueflame(1, false, 64));
        assert!(!WqeDelivery::InlineOnly.blueflame(2, true, 64));
        assert!(!WqeDelivery::Doorbell.blueflame(1, true, 64));
    }

    /// ctrl 16 + raddr 16 + inline header 4 + data, padded to 16, in 64-byte basic blocks.
    #[test]
    fn inline_wqes_fill_whole_basic_blocks() {
        assert_eq!(inline_wqe_bytes(8), 64);
        assert_eq!(inline_wqe_bytes(28), 64);
        assert_eq!(inline_wqe_bytes(29), 128);
        assert_eq!(inline_wqe_bytes(220), 256);
    }

    #[test]
    fn cpu_lists_are_numbers_and_ranges() {
        for ok in ["0-55,112-167", "3", "0-7,9", "48-63,176-191"] {
            assert!(super::is_cpu_list(ok), "{ok}");
        }
        for bad in ["", "cpu0", "0-", "-3", "0-7;9", "0,,1", "1-2-3", "N/A"] {
            assert!(!super::is_cpu_list(bad), "{bad}");
        }
    }
}

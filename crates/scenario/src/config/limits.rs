//! Upper bounds of the values a config may hold: each keeps a mistyped number from exhausting
//! memory or time, and together they bound every sum the simulation forms (see
//! `scenario/horizon.rs`).

use crate::units::{self, Ps};

/// Iterations, messages, registrations, buffers, receives: counts of simulated things.
pub const MAX_COUNT: u32 = 100_000;
/// Outstanding read requests of a DMA engine.
pub const MAX_WINDOW: u32 = 65_536;
/// Any single latency or cost: 10 s.
pub const MAX_DURATION: Ps = 10 * units::PS_PER_S;
/// Per-page registration costs: 10 ms (row E1's worst pin is 1.3 ms per 64 KiB), so 16 GiB of
/// pages stays within hours.
pub const MAX_PER_PAGE: Ps = 10_000 * units::PS_PER_US;
/// Network switches between two hosts.
pub const MAX_SWITCH_HOPS: u32 = 64;
/// Spine switches of a leaf-spine fabric.
pub const MAX_SPINES: u32 = 1024;
/// Queue pairs per connection: NCCL's NCCL_IB_MAX_QPS (src/transport/net_ib/common.h).
pub const MAX_QPS_PER_CONNECTION: u32 = 128;
/// Ports of one switch.
pub const MAX_RADIX: u32 = 4096;
/// Either side of an oversubscription ratio.
pub const MAX_RATIO: u32 = 1024;
/// Cable length in metres.
pub const MAX_CABLE_M: u64 = 100_000;
/// The slowest rate accepted: slower would make a 16 GiB message outlast u64 picoseconds.
pub const MIN_RATE_BPS: u64 = 1_000_000;
/// The largest message simulated TLP by TLP (`granularity = "tlp"`).
pub const MAX_TLP_GRANULAR: u64 = 16 << 20;
/// The largest message of a sweep.
pub const MAX_MESSAGE: u64 = 16 << 30;
/// The longest study `name`, in bytes of UTF-8 (a CJK character takes 3). The name becomes
/// file names of up to 68 bytes more (`.NAME-shard-9999-of-10000.gdrsim-tmp-PID-N-old`, the
/// temporary sibling of a shard's output folder set aside), and a file name has at most 255
/// bytes on Linux, macOS and Windows file systems: 100 leaves room to spare.
pub const MAX_NAME_BYTES: usize = 100;

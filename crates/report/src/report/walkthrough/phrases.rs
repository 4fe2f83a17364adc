//! What a language of the walk must say: every sentence, label and column heading the layout
//! (`layout`, `contrast`) prints, as one method each. The layout decides what
//! is printed where and in what order; a language only words it. A new language is one file
//! implementing [`Phrases`] and one [`super::Lang`] variant.

use super::model::{
    Affinity, Desc, EffectivePath, Endpoint, Op, PathKind, RelayWalk, Setup, StepKind, Walk,
};
use crate::units::Ps;

/// How a path's heading describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathStyle {
    /// Whole-message staging through pinned host memory.
    Traditional,
    /// Staging chunk by chunk through a ring of bounce buffers.
    Pipelined,
    /// NCCL's host path: GPU kernels store into and load from mapped host memory, chunk by
    /// chunk, no cudaMemcpy.
    NcclHost,
    /// The CPU copies through GDRCopy's BAR1 mapping.
    Gdrcopy,
    /// The NIC reads and writes GPU memory.
    GpuDirect,
    /// NCCL's PXN: the sending GPU hands the data over NVLink to the GPU next to the NIC, which
    /// the NIC reads; the receiver takes it in GPU memory, or stages it (`staged_recv`).
    Pxn {
        /// Whether the receiver stages through host memory (else GPUDirect).
        staged_recv: bool,
    },
}

/// The words of one language.
pub trait Phrases {
    // ---- the heading of the walk ----
    /// First line: what moves from where to where.
    fn title(&self, w: &Walk) -> String;
    /// Config, scenario and affinity class.
    fn config_line(&self, w: &Walk) -> String;
    /// The sender's host, GPU and NIC.
    fn sender(&self, e: &Endpoint) -> String;
    /// The receiver's host, NIC and GPU.
    fn receiver(&self, e: &Endpoint) -> String;
    /// The RDMA operation walked.
    fn operation(&self, op: Op) -> String;
    /// Why only GPUDirect is walked when staging cannot carry the operation.
    fn staged_cannot_carry(&self) -> &'static str;
    /// How a GPU buffer's virtual address becomes its bus address; `who` names the host
    /// ("node-a ") when the two hosts' maps differ, else is empty.
    fn address_map(&self, who: &str, e: &Endpoint) -> String;
    /// Where the pinned bounce buffer is.
    fn bounce_buffer(&self, who: &str, e: &Endpoint) -> String;
    /// What the times are and where t = 0 is.
    fn times_note(&self) -> &'static str;

    // ---- one path ----
    /// `=== [n] ... ===` for the path asked (`path`) walked in `style`.
    fn path_heading(&self, n: usize, style: PathStyle, path: PathKind) -> String;
    /// `auto` ran what NCCL would choose.
    fn auto_note(&self, effective: EffectivePath) -> String;
    /// GPUDirect fell back because peer-to-peer is not available.
    fn no_p2p_note(&self, effective: EffectivePath) -> String;
    /// `pxn` found no relay for the sender and runs as `effective`, for `reason` (results.csv
    /// `reason`).
    fn no_relay_note(&self, effective: EffectivePath, reason: &str) -> String;
    /// The heading of the one-time setup list.
    fn setup_heading(&self, bounce: bool, setup_ps: Ps) -> String;
    /// One setup item's line.
    fn setup(&self, s: &Setup) -> String;
    /// One entry of a GPU MR's translation table.
    fn mtt_entry(&self, i: usize, va: u64, bus: u64) -> String;
    /// The table has more entries than shown.
    fn mtt_more(&self, pages: u64) -> String;
    /// Column headings of the step table: start, duration, component, step.
    fn columns(&self) -> [&'static str; 4];
    /// What one step does.
    fn step(&self, k: &StepKind) -> String;
    /// The last row: where the data is visible and the one-way latency.
    fn delivered(&self, dst_gpu: bool, host: &str, latency_ps: Ps) -> String;
    /// The gather descriptor in the seed program's words.
    fn descriptor_summary(&self, gpudirect: bool, d: &Desc) -> String;
    /// The heading of the steps off the latency path.
    fn off_latency(&self) -> &'static str;

    // ---- the contrast of the two paths ----
    /// The contrast's heading.
    fn contrast_heading(&self) -> &'static str;
    /// What a descriptor's address is (host buffer, or GPU bus address = VA + BAR offset).
    fn address_kind(&self, d: &Desc, e: &Endpoint) -> String;
    /// The DMA source of one path walked in `style`; `kind` from [`Phrases::address_kind`].
    fn source(&self, style: PathStyle, addr: u64, kind: &str) -> String;
    /// The DMA destination of one path on the receiving host.
    fn destination(&self, style: PathStyle, host: &str, addr: u64, kind: &str) -> String;
    /// Row labels of the counted table: copies, PCIe link traversals, root-complex passes,
    /// bytes through host memory, CPU time, one-way latency.
    fn counted(&self) -> [&'static str; 6];
    /// The heading of the difference column.
    fn removed_column(&self) -> &'static str;
    /// GPUDirect's latency is `x` times lower (`x >= 1`) than that of the path walked first
    /// (in style `than`).
    fn lower_latency(&self, x: f64, than: PathStyle) -> String;
    /// GPUDirect's latency is `x` times higher (`x > 1`) than that of the path walked first.
    fn higher_latency(&self, x: f64, than: PathStyle) -> String;
    /// How the counted rows are defined, line by line.
    fn definitions(&self) -> &'static [&'static str];
    /// GPUDirect removed no copy.
    fn removed_none(&self, effective: EffectivePath) -> String;
    /// One copy GPUDirect removed.
    fn removed_copy(&self, host: &str, d2h: bool) -> String;
    /// The sentence listing the removed copies.
    fn removed_copies(&self, list: &[String]) -> String;
    /// What PXN does instead of GPUDirect's read of the far GPU: no host copy on the sending
    /// side, an NVLink hop and a proxy hand-over; `class` is the sender's own class to the NIC.
    fn relay_contrast(&self, r: &RelayWalk, class: Affinity) -> String;
}

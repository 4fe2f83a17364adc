//! Everything a run writes: CSVs, charts, the Markdown report, the walk-through text and traces.
//!
//! Writers take plain result data ([`crate::stats::Summary`], [`RunInfo`]) and know nothing of
//! the engine or the hardware components. Every file goes through [`atomic`]: written to a
//! temporary name and renamed, so a failed run never leaves a half-written output behind.

pub mod atomic;
pub mod charts;
mod contention;
pub mod csv_in;
pub mod csv_out;
pub mod decision;
pub mod folder;
pub mod markdown;
mod network;
pub mod output_dir;
pub mod overlay;
pub mod stdout;
pub mod table;
pub mod trace;
pub mod vocab;
pub mod walkthrough;

pub use stdout::emit;

use crate::config::OutputOptions;
use crate::topology::Affinity;

/// What the report needs to know about the run besides the result rows.
#[derive(Clone, Debug, Default)]
pub struct RunInfo {
    /// The config's `name` (also the output folder name).
    pub config_name: String,
    /// One line on the simulated hardware, for chart titles, e.g.
    /// "H100 (PCIe Gen5 x16) + ConnectX-7 NDR 400 Gb/s".
    pub hardware: String,
    /// The exact command line that reproduces this run.
    pub command: String,
    /// The config's scenarios, in config order (the result rows' `scenario` names them).
    pub scenarios: Vec<ScenarioInfo>,
    /// The config's `[output]` options: which charts, in which formats and sizes.
    pub output: OutputOptions,
    /// The conclusions a change of one estimate flips (`run --sensitivity`): the change in
    /// percent and one line per flip; None when the run did not assess them.
    pub fragile: Option<(f64, Vec<String>)>,
    /// Measured figures matched to the results (`run --measured FILE`): drawn on the latency
    /// and bandwidth charts, compared in report.md; None without a measurement.
    pub measured: Option<overlay::Overlay>,
    /// `[sweep] vary`: each variant's label with its (key, value) pairs, in variant order;
    /// empty without a sweep. The scenarios and the rows the charts and report get are then
    /// one per scenario and variant, named `SCENARIO [LABEL]` ([`display_rows`]).
    pub variants: Vec<(String, Vec<(String, String)>)>,
}

/// The name charts, report.md and the summary table give a scenario of a sweep variant:
/// `PIX [read_window=64, registration=cached]`.
pub fn variant_name(scenario: &str, variant: &str) -> String {
    format!("{scenario} [{variant}]")
}

/// `rows` as the charts and report show them: where a row belongs to a sweep variant, its
/// scenario is named with the variant ([`variant_name`]), so each (scenario, variant) is its
/// own series; rows without a variant are borrowed as they are.
pub fn display_rows(
    rows: &[crate::stats::Summary],
) -> std::borrow::Cow<'_, [crate::stats::Summary]> {
    if rows.iter().all(|r| r.variant.is_empty()) {
        return std::borrow::Cow::Borrowed(rows);
    }
    std::borrow::Cow::Owned(
        rows.iter()
            .map(|r| {
                let mut r = r.clone();
                if !r.variant.is_empty() {
                    r.scenario = variant_name(&r.scenario, &r.variant);
                }
                r
            })
            .collect(),
    )
}

/// One scenario (a sender/receiver placement) as the report describes it.
#[derive(Clone, Debug, Default)]
pub struct ScenarioInfo {
    /// The scenario's name, as in the config and the result rows.
    pub name: String,
    /// GPU-NIC affinity class (PIX, PXB, PHB, NODE, SYS) of its first flow; None where the
    /// report knows the scenario only by name.
    pub class: Option<Affinity>,
    /// Flows it runs together.
    pub flows: usize,
    /// The sender's payload route, hop by hop, e.g. ["gpu0", "pcie Gen5 x16", "sw0", ..., "nic0"].
    pub route: Vec<String>,
    /// An `nvidia-smi topo -m` style matrix of the sender host (plain text, may be empty).
    pub topo_matrix: String,
    /// The ceiling of the scenario's GPUDirect streaming (all its flows at once, steady state
    /// of the max-min sharing) for bandwidth charts (GB/s, 1e9 B/s).
    pub ceiling_gbps: f64,
    /// Its label: what binds it and the rate, e.g. "node-a/nic0 read window: 29.3 GB/s".
    pub ceiling_label: String,
}

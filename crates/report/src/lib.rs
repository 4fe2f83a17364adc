//! gdrsim's outputs, above the scenario layer (`gdrsim_scenario`) and below studies, tools and
//! commands: [`report`] writes result rows and run descriptions as CSVs, charts, report.md, the
//! walk-through text and traces, every file atomically.
//!
//! The crate boundary is the layering: writers take plain result data and cannot reach the
//! engine's run loop, a study driver or a tool. The `gdrsim` crate re-exports [`report`] under
//! its old path.
// Every public item says what it holds or does (clippy runs with -D warnings).
#![warn(missing_docs)]

pub use gdrsim_scenario::{
    bottleneck, choice, components, config, effective, engine, fabric_load, plan, progress, record,
    scenario, seed, stats, topology, units,
};

pub mod report;

//! gdrsim's scenario layer, above the model (`gdrsim_model`) and below reports, studies and
//! tools: [`config`] reads a TOML file into a typed, checked machine and study (one declaration
//! per key with its unit, default, bounds and source); [`scenario`] turns each point (scenario,
//! path, op, size) into a plan on the model's topology and simulates it; [`stats`] and
//! [`effective`] and [`bottleneck`] are the result rows and the words they use; [`progress`] reports work done.
//!
//! The crate boundary is the layering: nothing here can import a report writer, a study driver
//! or a tool. The `gdrsim` crate re-exports these modules under their old paths.
// Every public item says what it holds or does (clippy runs with -D warnings).
#![warn(missing_docs)]

pub use gdrsim_model::{choice, components, engine, plan, record, seed, topology, units};

pub mod bottleneck;
pub mod config;
pub mod effective;
pub mod fabric_load;
pub mod progress;
pub mod scenario;
pub mod stats;

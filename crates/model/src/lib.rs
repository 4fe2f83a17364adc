//! gdrsim's model layer: what a machine is and how its devices move bytes, with no notion of a
//! config file, a study or an output.
//!
//! From the bottom up: [`units`] (integer picoseconds, bytes and rates), [`seed`] (stable
//! hashing and seed mixing), [`engine`] (the event queue), [`topology`] (hosts, their PCIe
//! trees, sockets and links, the network, as channels and routes: plain data), [`plan`] (a
//! message as a plan of steps over those channels), [`record`] (what a run records: spans,
//! descriptors, hops) and [`components`] (the devices, as servers crossed by trains, that
//! execute plans on the event queue).
//!
//! The crate boundary is the layering: the compiler refuses any import of the study, report or
//! tool layers from here (the `gdrsim` crate builds topologies and plans from a config and
//! re-exports these modules under their old paths).
// Every public item says what it holds or does (clippy runs with -D warnings).
#![warn(missing_docs)]

pub mod choice;
pub mod components;
pub mod engine;
pub mod ids;
pub mod plan;
pub mod record;
pub mod seed;
pub mod topology;
pub mod units;

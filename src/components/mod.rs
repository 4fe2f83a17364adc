//! The hardware: channels and trains (PCIe links, switches, root complexes, memories, wires),
//! NICs, CPU threads and GPU copy engines, all driven by one closed [`Event`] enum.
//!
//! Components read their parameters from the typed topology ([`crate::topology::spec`]) and
//! never see TOML; what they do is recorded into a [`crate::record::Recorder`].

mod app;
pub mod channel;
mod cpu;
pub mod fabric;
mod nic;
pub mod plan;

pub use app::Outcome;
pub use fabric::Fabric;
pub use plan::{Buffer, Plan, SidePlan, SimOptions, Staging};

/// Everything that can happen in the simulated hardware.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A train's head reaches the next queueing channel of its route (or its destination).
    Hop(u32),
    /// The CPU thread of a host finished its current piece of work.
    CpuDone { host: u8 },
    /// The application starts sending a message.
    Start { msg: u32 },
}

//! The hardware that executes plans: channels and trains (PCIe links, switches, root complexes,
//! memories, wires), NICs, CPU threads and GPU copy engines, all driven by one closed [`Event`]
//! enum.
//!
//! Components read their parameters from the typed topology ([`crate::topology::spec`]) and the
//! steps of [`crate::plan`]; they never see TOML. What they do is recorded into a
//! [`crate::record::Recorder`].

pub mod channel;
mod copy;
mod cpu;
pub mod fabric;
mod nic;
mod options;
mod run;
mod steps;

pub use fabric::Fabric;
pub use options::SimOptions;
pub use run::Outcome;

/// Everything that can happen in the simulated hardware.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A train's head reaches the next queueing channel of its route (or its destination).
    Hop(u32),
    /// A CPU thread finished its current piece of work.
    CpuDone { cpu: u32 },
    /// A flow's application starts sending a message.
    Start { flow: u16, msg: u32 },
}

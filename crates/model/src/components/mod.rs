//! The hardware that executes plans: channels and the units crossing them (PCIe links,
//! switches, root complexes, memories, wires), bulk transfers sharing them, NICs, CPU threads
//! and GPU copy engines, all driven by one closed [`Event`] enum.
//!
//! Components read their parameters from the typed topology ([`crate::topology::spec`]) and the
//! steps of [`crate::plan`]; they never see TOML. What they do is recorded into a
//! [`crate::record::Recorder`].

mod bulk;
pub(crate) mod channel;
mod copy;
mod cpu;
pub(crate) mod fabric;
mod fast_hash;
pub(crate) mod fluid;
pub mod footprint;
mod nic;
mod options;
mod paged;
mod queueing;
mod read_window;
mod reads;
mod recv_queue;
mod reduce_rule;
mod run;
mod signal;
mod steps;
mod units;

use crate::ids::{ChannelId, StepId, TrainId};
pub use bulk::Limit;
pub use channel::idle_transit;
pub use fabric::{Fabric, gating_message};
pub use options::{Sharing, SimOptions};
pub use reduce_rule::ReduceRule;
pub use run::{FlowOutcome, Outcome};
pub use signal::signaled;

/// Everything that can happen in the simulated hardware.
///
/// A 32-bit tag (`repr(u32)`) keeps every variant's fields at their natural offsets in 16
/// bytes, so an event moves through the queue as two aligned words; with the default layout
/// (a 16-bit tag, fields packed from byte 2) it moved as two overlapping unaligned words,
/// which stalled the loads that read it back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Event {
    /// A unit reaches the next server of its route (or its destination).
    Hop(TrainId),
    /// A server finished its unit and has units waiting.
    ServerFree(ChannelId),
    /// A CPU thread finished its current piece of work.
    CpuDone {
        /// The thread's index in the fabric's CPU table.
        cpu: u32,
    },
    /// A flow's application starts sending a message.
    Start {
        /// Index of the flow in the point (its plan).
        flow: u32,
        /// Index of the message in the flow's stream.
        msg: u32,
    },
    /// A step whose dependencies were met ahead of time may start.
    Ready {
        /// Index of the flow in the point (its plan).
        flow: u32,
        /// Index of the message in the flow's stream.
        msg: u32,
        /// Index of the step in the flow's plan.
        step: StepId,
    },
    /// A bulk transfer's first data reached its reference point: it starts sharing.
    BulkReady(u32),
    /// The next end among the bulk transfers (stale if its version is not the latest).
    Fluid(u64),
    /// A refused Send's retry reaches the receiving NIC with its receive WQE posted.
    RnrRetry {
        /// Index of the flow in the point (its plan).
        flow: u32,
        /// Index of the refused message in the flow's stream.
        msg: u32,
    },
    /// The bulk transfers that started or ended at this time get their new rates, once for
    /// all of them (after every other event already due now).
    Share,
    /// A unit that crossed a channel beside bulk transfers has had its room there: the part
    /// of the channel's rate it took while they caught up goes back to them.
    UnitGone(ChannelId),
}

//! What a fabric run keeps in memory until it ends, for the cost gate's estimate
//! (gdrsim's `scenario::cost`): every message's state (kept so that the outcome can be read
//! after the run; a recording run keeps its spans too; the records of its steps go back to
//! the flow's pool as each message ends, recording or not), and the fixed part of every bulk
//! transfer (an upper bound: a done transfer gives back its lists, and a later transfer takes
//! its slot, so a stream holds the slots of its transfers in flight). Units in flight
//! (trains, reads, pending events) are reused and bounded by the windows, so they are left
//! out. The sizes come from the types themselves where they can, so the estimate follows the
//! code; the constants are what the types do not say, measured.

use std::mem::size_of;

use super::bulk::Job;
use super::fabric::{Msg, StepState};
use super::options::SimOptions;
use crate::plan::Plan;
use crate::record::Span;

/// The allocator's header on each message's step array (glibc malloc on 64-bit: 16 bytes).
const ALLOC_HEADER: u64 = 16;
/// Per message, its figures outside the fabric: the outcome's (start, delivery), slot-freed
/// time and byte counts (40 bytes), and the copies and samples the callers collect from them.
/// Measured with the rest: 100,000 iterations of a 4 KiB GPUDirect message (14 steps) take
/// 1.75 KB each, the types 1.70 KB of it.
const OUTCOME: u64 = 64;
/// Per bulk transfer, its index in the solver's visited marks.
const BULK_MARK: u64 = 8;
/// Per flow of a run, the fabric's own state for it: its threads, component names and route
/// table (heaptrack, 1024 flows: 1.5 KB each).
const FLOW_SETUP: u64 = 1536;
/// Per flow that moves bulk transfers, the lists of the one it has moving at a time (its
/// stages and the solver's view of it, given back when the transfer ends) and its shape (its
/// channel uses and demand, which its transfers share, kept for the run): held by the run in
/// progress only (heaptrack, 1024 flows of 1 MiB: 5 MB before the shapes were kept, which
/// hold about 1.5 KB a flow for a GPUDirect chain).
const ACTIVE_BULK: u64 = 4096;

fn bytes_of<T>() -> u64 {
    size_of::<T>() as u64
}

/// Bytes one message of `plan` keeps until its run ends, run with `opts`: its state, and with
/// recording on, a span per reported step (in an array of its own). A run gives a message's
/// step records back when it ends ([`steps_in_flight`]), and its bulk transfers' slots to the
/// next transfers ([`jobs_in_flight`]).
pub fn message_bytes(plan: &Plan, opts: &SimOptions) -> u64 {
    let spans = match opts.record {
        true => {
            let reported = plan.steps.iter().filter(|s| s.stage.is_some()).count() as u64;
            bytes_of::<Box<[Span]>>() + reported * bytes_of::<Span>() + ALLOC_HEADER
        }
        false => 0,
    };
    bytes_of::<Msg>() + OUTCOME + spans
}

/// Bytes of bulk transfers a flow of `plan` holds at once with at most `window` messages in
/// flight: a transfer per chain of streaming steps above the coalescing threshold (a staged
/// message has three, a chunked one three per chunk) of each message in flight, and of each
/// ending (a done transfer's slot goes to the next transfer, `Bulks::free_jobs`, so a run
/// holds the slots of the most it ever had in motion, not one per message).
pub fn jobs_in_flight(plan: &Plan, opts: &SimOptions, window: u64) -> u64 {
    2 * window.max(1) * bulk_chains(plan, opts) * (bytes_of::<Job>() + BULK_MARK)
}

/// One message's step records, with the allocator's header.
fn step_array(plan: &Plan) -> u64 {
    plan.steps.len() as u64 * bytes_of::<StepState>() + ALLOC_HEADER
}

/// Bytes of step records a flow of `plan` holds at once in a run that keeps at most `window`
/// messages in flight: those in flight and those ending, at most twice the window
/// (`components::run`'s pool test), whatever the messages it carries.
pub fn steps_in_flight(plan: &Plan, window: u64) -> u64 {
    2 * window.max(1) * step_array(plan)
}

/// The chains of streaming steps of one message of `plan` that move as bulk transfers under
/// `opts`.
fn bulk_chains(plan: &Plan, opts: &SimOptions) -> u64 {
    plan.steps
        .iter()
        .filter(|s| s.payload && s.input.is_none())
        .filter(|s| !opts.tlp_granularity && s.bytes > opts.coalesce_above)
        .count() as u64
}

/// Bytes a run keeps at its end: each flow's state and every message it carried, its plan
/// and the number given with it, under a window of `window` messages in flight.
pub fn run_bytes<'p>(
    flows: impl IntoIterator<Item = (&'p Plan, u64)>,
    opts: &SimOptions,
    window: u64,
) -> u64 {
    flows.into_iter().fold(0u64, |sum, (plan, messages)| {
        let each = message_bytes(plan, opts);
        let in_flight = window.min(messages);
        let pooled = steps_in_flight(plan, in_flight) + jobs_in_flight(plan, opts, in_flight);
        let flow = FLOW_SETUP.saturating_add(pooled);
        sum.saturating_add(flow.saturating_add(messages.saturating_mul(each)))
    })
}

/// Bytes a run holds only while it runs: each flow's bulk transfer in motion with its lists.
pub fn in_motion_bytes<'p>(plans: impl IntoIterator<Item = &'p Plan>, opts: &SimOptions) -> u64 {
    let moving = plans
        .into_iter()
        .filter(|p| bulk_chains(p, opts) > 0)
        .count() as u64;
    moving * ACTIVE_BULK
}

/// Bytes a plan holds: its steps with their dependencies, waiters and actors (heaptrack, 1024
/// plans of 14 steps: 300 bytes a step).
pub fn plan_bytes(plan: &Plan) -> u64 {
    plan.steps.len() as u64 * 300
}

//! The cost gate of `walk` and `trace` (issue #27 item 9): a recorded run keeps a record of
//! every unit on every channel it crosses (a [`Hop`]: TLP by TLP, every TLP of every link), and
//! a trace turns each into a slice with its arguments and then into JSON text. Both grow with
//! the units the run moves, which the run's estimated events count (about 12 events per
//! 256-byte TLP, [`crate::scenario::cost::message_events`]). The estimate is made from the
//! plan alone, before any simulation, and refused through the same gate as every other
//! command that simulates ([`crate::study::admit`]).
//!
//! The per-event constants are measured peaks (`/usr/bin/time -v`, release build, default
//! config with `granularity = "tlp"`, staged `write_imm`, see tests/it/gate.rs), less the
//! base every run holds:
//! - a walk's peak is its larger path's recorder: the hops (about 88 bytes each with the
//!   vector's spare capacity) and the spans and descriptors around them: 16 MiB staged is
//!   2.36e6 estimated events and 215 MB at its peak, 4 MiB 5.9e5 and 59 MB: about 88 bytes
//!   per event;
//! - a trace's peak is its recorder, the slices built from it (names and arguments as strings),
//!   the tracks and the rendered JSON text: 1 MiB staged is 1.47e5 estimated events and 647 MB,
//!   2 MiB 2.95e5 and 1.28 GB, 256 KiB 3.7e4 and 171 MB: about 4.4 KB per event;
//! - a trace's file is about 212 bytes per event (31.2 MB at 1 MiB, 62.5 MB at 2 MiB).

use super::*;
use crate::study::{self, Work};

/// Peak bytes a walk holds per estimated event of the path it records, and per bulk
/// transfer (measured, see above).
pub(super) const WALK_BYTES: (u64, u64) = (88, 8 << 10);
/// Peak bytes a trace holds per estimated event of its run, and per bulk transfer (measured,
/// see above).
pub(super) const TRACE_BYTES: (u64, u64) = (4400, 400 << 10);
/// Bytes of trace file per estimated event of its run, and per bulk transfer (measured, see
/// above).
pub(super) const TRACE_FILE_BYTES: (u64, u64) = (212, 24 << 10);

/// What a recorded run moves: its estimated events (at least 0: 0 where the plan cannot be
/// built, the run then says why) and, of them, its bulk transfers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Recording {
    /// Estimated events ([`crate::scenario::cost::message_events`] per message).
    pub events: u64,
    /// Bulk transfers (movements above `coalesce_above_bytes` with `granularity = "auto"`):
    /// each is recorded as a stretch per channel per change of its rate, however many bytes
    /// it moves.
    pub bulks: u64,
}

/// Events of one bulk transfer in the events estimate
/// ([`crate::scenario::cost::message_events`]'s `PER_BULK`).
const EVENTS_PER_BULK: u64 = 20;

/// What `messages` messages of (scenario `si`, `path`, `op`, `size`) on one flow move, from
/// its plan.
pub(super) fn recorded(
    cfg: &Config,
    topo: &Topology,
    si: usize,
    (path, op): (PathKind, Op),
    size: u64,
    messages: u32,
) -> Recording {
    let sc = &cfg.scenarios[si];
    paths::plan(cfg, sc.first(), topo, path, op, size).map_or(Recording::default(), |built| {
        let n = u64::from(messages);
        let bulks = built
            .plan
            .steps
            .iter()
            .filter(|s| s.payload && s.input.is_none())
            .filter(|s| !cfg.sim.granularity.tlp() && s.bytes > cfg.sim.coalesce_above)
            .count() as u64;
        Recording {
            events: crate::scenario::cost::message_events(cfg, &built.plan).saturating_mul(n),
            bulks: bulks.saturating_mul(n),
        }
    })
}

impl Recording {
    /// What a recording run of it holds at its peak, at `per` (bytes per event TLP by TLP,
    /// bytes per bulk transfer) over the base every run holds.
    pub fn memory(&self, (per_event, per_bulk): (u64, u64)) -> u64 {
        crate::scenario::cost::BASE_BYTES.saturating_add(self.bytes((per_event, per_bulk)))
    }

    /// `per_event` bytes per event moving units one by one, `per_bulk` per bulk transfer.
    pub fn bytes(&self, (per_event, per_bulk): (u64, u64)) -> u64 {
        let units = self
            .events
            .saturating_sub(self.bulks.saturating_mul(EVENTS_PER_BULK));
        units
            .saturating_mul(per_event)
            .saturating_add(self.bulks.saturating_mul(per_bulk))
    }
}

/// The gate's view of a walk or a trace: `what` ("a walk", "a trace"), its events and peak
/// memory, `over` what it moves ("1 message of 16 MiB on path staged"), `smaller` how to ask
/// for less ("a smaller --size").
pub(super) fn work(what: &str, events: u64, memory: u64, over: String, smaller: &str) -> Work {
    let figure = |x: String| format!("{over} ({x})");
    Work {
        what: what.to_string(),
        events,
        over: over.clone(),
        memory,
        threads: 1,
        costliest: vec![figure(format!("{:.1e}", events as f64))],
        largest: vec![figure(crate::units::fmt_bytes(memory))],
        cut_events: format!("{smaller}, or granularity = \"auto\" in the config's [sim]"),
        cut_memory: format!(
            "{smaller}, or granularity = \"auto\" in the config's [sim] (TLP by TLP it \
             records every TLP)"
        ),
    }
}

/// Refuses, before any work, a walk or trace whose `work` is above `limits`, as bad input of
/// the config `config` names.
pub(super) fn admit(
    config: Option<&Path>,
    work: &Work,
    limits: &study::Limits,
) -> Result<(), ConfigError> {
    study::admit(&study::source_name(config), work, limits)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The formula, from its derivation: 16 MiB staged TLP by TLP moves the message three times
    /// (D2H copy, RDMA, H2D copy), 65,536 TLPs each at 12 events, plus 32 fixed: 2,359,328
    /// events, 16 MiB + 88 B each = 224 MB (measured peak 215 MB).
    #[test]
    fn a_walk_of_16_mib_staged_tlp_by_tlp_is_estimated_from_its_tlps() {
        let text = crate::config::DEFAULT_TOML
            .replacen("granularity = \"auto\"", "granularity = \"tlp\"", 1)
            .replacen("to = \"1GiB\"", "to = \"16MiB\"", 1);
        let cfg = crate::config::parse(&text, "tlp.toml").unwrap();
        let topo = scenario::topology(&cfg);
        let size = 16 << 20;
        let staged = (PathKind::Staged, Op::WriteImm);
        let run = recorded(&cfg, &topo, 0, staged, size, 1);
        assert_eq!(run.events, 32 + 3 * 65_536 * 12);
        assert_eq!(run.bulks, 0);
        let gpudirect = (PathKind::GpuDirect, Op::WriteImm);
        let direct = recorded(&cfg, &topo, 0, gpudirect, size, 1);
        assert_eq!(direct.events, 32 + 65_536 * 12);
        let memory = run.memory(WALK_BYTES);
        assert_eq!(memory, (16 << 20) + 88 * run.events);
        assert!((200_000_000..250_000_000).contains(&memory), "{memory}");
    }
}

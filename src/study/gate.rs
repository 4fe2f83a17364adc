//! The one cost gate: every command that simulates a study or a tool's runs (`run`, its
//! shards, `sensitivity`, the benchmark emulations perftest, nvbandwidth and p2p-matrix,
//! `calibrate`, `validate`, and `walk` and `trace`, which record every unit of one point:
//! src/inspect/cost.rs) says what it is about to simulate, estimated in events and peak
//! memory, and is refused before any work (exit 2, naming what to change) where either is
//! above its limit. The events bound the time, the memory what the system would kill the run
//! for part-way.

use crate::config::ConfigError;
use crate::units::fmt_bytes;

/// The default `--max-events`: about two days of one core.
pub const DEFAULT_MAX_EVENTS: u64 = 250_000_000_000;

/// Estimated events one core works through per second (see
/// [`crate::scenario::cost::EVENTS_PER_CORE_SECOND`]).
const EVENTS_PER_SECOND: f64 = crate::scenario::cost::EVENTS_PER_CORE_SECOND as f64;

/// What a command may cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Estimated events at most (`--max-events`).
    pub max_events: u64,
    /// Estimated peak memory at most, bytes (`--max-memory`); None: no limit (the machine's
    /// memory is not known).
    pub max_memory: Option<u64>,
    /// Whether `max_memory` was given (else it is the machine's).
    pub memory_given: bool,
}

impl Limits {
    /// The limits given on the command line, the defaults for the others: two days of one
    /// core, and the memory this machine lets a run hold ([`super::machine::memory`]).
    pub fn new(max_events: Option<u64>, max_memory: Option<u64>) -> Limits {
        Limits {
            max_events: max_events.unwrap_or(DEFAULT_MAX_EVENTS),
            max_memory: max_memory.or_else(super::machine::memory),
            memory_given: max_memory.is_some(),
        }
    }

    /// `--max-memory SIZE` ("8GiB", "512MB", bytes) read as the gate reads it.
    pub fn parse_memory(s: &str) -> Result<u64, ConfigError> {
        crate::units::parse_bytes(s)
            .ok()
            .filter(|&b| b > 0)
            .ok_or_else(|| {
                ConfigError::new(
                    "command line",
                    "--max-memory",
                    "a size of memory such as \"8GiB\" or \"512MB\"",
                    format!("{s:?}"),
                )
            })
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::new(None, None)
    }
}

/// What a command is about to simulate, estimated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Work {
    /// What it is, as the refusal names it: "a study", "a sensitivity study", "a test".
    pub what: String,
    /// Estimated events.
    pub events: u64,
    /// What they are spread over: "279 points", "400000 messages".
    pub over: String,
    /// Estimated peak memory, bytes, with `threads` worker threads.
    pub memory: u64,
    /// The worker threads it runs on (as many parts at once).
    pub threads: usize,
    /// Its costliest parts by events, each named with its figure: "PIX staged write_imm 16
    /// KiB (2.9e5)".
    pub costliest: Vec<String>,
    /// Its largest parts by memory, each named with its figure.
    pub largest: Vec<String>,
    /// Other ways to make its events fit, after raising the limit: "cut it into shards with
    /// --shard K/N".
    pub cut_events: String,
    /// Other ways to make its memory fit: "run fewer points at once with --jobs, ...".
    pub cut_memory: String,
}

impl Work {
    /// This work, then `next` in the same process (`run --sensitivity`): their events add up,
    /// and so does the memory each holds beyond the `base` both count, since this one's rows
    /// stay while the next one runs. The costlier one's parts are named first.
    pub fn then(self, next: Work, base: u64) -> Work {
        let (first, second) = if next.events > self.events {
            (&next, &self)
        } else {
            (&self, &next)
        };
        let (big, small) = if next.memory > self.memory {
            (&next, &self)
        } else {
            (&self, &next)
        };
        let costliest = first.costliest.iter().chain(&second.costliest);
        let largest = big.largest.iter().chain(&small.largest);
        Work {
            what: format!("{} and {}", self.what, next.what),
            events: self.events.saturating_add(next.events),
            over: format!("{}, then {}", self.over, next.over),
            memory: (self.memory.saturating_add(next.memory)).saturating_sub(base),
            threads: self.threads.max(next.threads),
            costliest: costliest.take(3).cloned().collect(),
            largest: largest.take(3).cloned().collect(),
            cut_events: self.cut_events.clone(),
            cut_memory: self.cut_memory.clone(),
        }
    }
}

/// Lets `work` through, or refuses it, before any work, as bad input of `file` (the config
/// it came from) where its events or its memory are above `limits`.
pub fn admit(file: &str, work: &Work, limits: &Limits) -> Result<(), ConfigError> {
    let or = |cut: &str| {
        if cut.is_empty() {
            String::new()
        } else {
            format!(", or {cut}")
        }
    };
    if work.events > limits.max_events {
        let or_cut = or(&work.cut_events);
        return Err(ConfigError::new(
            file,
            "",
            format!(
                "{} of at most {:.1e} estimated events (raise the limit with --max-events{or_cut})",
                work.what, limits.max_events as f64
            ),
            format!(
                "{:.1e} events over {}, about {} on one core; the costliest: {}",
                work.events as f64,
                work.over,
                fmt_seconds(work.events as f64 / EVENTS_PER_SECOND),
                work.costliest.join(", ")
            ),
        ));
    }
    if let Some(max) = limits.max_memory
        && work.memory > max
    {
        let whose = if limits.memory_given {
            ""
        } else {
            "this machine's memory; "
        };
        let or_cut = or(&work.cut_memory);
        return Err(ConfigError::new(
            file,
            "",
            format!(
                "{} of at most {} of memory at its peak ({whose}raise the limit with \
                 --max-memory{or_cut})",
                work.what,
                fmt_bytes(max)
            ),
            format!(
                "about {} over {} on {} thread{}; the largest: {}",
                fmt_bytes(work.memory),
                work.over,
                work.threads,
                if work.threads == 1 { "" } else { "s" },
                work.largest.join(", ")
            ),
        ));
    }
    Ok(())
}

/// "0.4 s", "3 min", "2.5 h".
pub fn fmt_seconds(s: f64) -> String {
    if s < 60.0 {
        format!("{s:.1} s")
    } else if s < 3600.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work() -> Work {
        Work {
            what: "a study".into(),
            events: 1000,
            over: "2 points".into(),
            memory: 3 << 30,
            threads: 2,
            costliest: vec!["A (6.0e2)".into()],
            largest: vec!["B (2 GiB)".into()],
            cut_events: "cut it into shards with --shard K/N".into(),
            cut_memory: "run fewer at once with --jobs".into(),
        }
    }

    /// Events first, then memory, each refusal naming the flag that raises its limit and
    /// whose limit it was.
    #[test]
    fn refuses_above_either_limit_naming_the_flag() {
        let fits = Limits {
            max_events: 1000,
            max_memory: Some(3 << 30),
            memory_given: false,
        };
        assert_eq!(admit("c.toml", &work(), &fits), Ok(()));
        let e = admit(
            "c.toml",
            &work(),
            &Limits {
                max_events: 999,
                ..fits
            },
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "c.toml: expected a study of at most 1.0e3 estimated events (raise the limit with \
             --max-events, or cut it into shards with --shard K/N), found 1.0e3 events over 2 \
             points, about 0.0 s on one core; the costliest: A (6.0e2)"
        );
        let small = Limits {
            max_memory: Some(2 << 30),
            ..fits
        };
        let e = admit("c.toml", &work(), &small).unwrap_err().to_string();
        assert_eq!(
            e,
            "c.toml: expected a study of at most 2 GiB of memory at its peak (this machine's \
             memory; raise the limit with --max-memory, or run fewer at once with --jobs), found \
             about 3 GiB over 2 points on 2 threads; the largest: B (2 GiB)"
        );
        let given = Limits {
            memory_given: true,
            ..small
        };
        let e = admit("c.toml", &work(), &given).unwrap_err().to_string();
        assert!(
            e.contains("peak (raise the limit with --max-memory, or"),
            "{e}"
        );
        let unknown = Limits {
            max_memory: None,
            ..fits
        };
        assert_eq!(admit("c.toml", &work(), &unknown), Ok(()));
    }

    #[test]
    fn memory_sizes_read_as_config_sizes() {
        assert_eq!(Limits::parse_memory("8GiB"), Ok(8 << 30));
        assert_eq!(Limits::parse_memory("512MB"), Ok(512_000_000));
        assert!(Limits::parse_memory("0").is_err());
        let e = Limits::parse_memory("lots").unwrap_err().to_string();
        assert!(e.contains("--max-memory"), "{e}");
    }
}

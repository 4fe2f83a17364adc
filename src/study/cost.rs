//! What a study is estimated to cost before it runs: the line `check` prints and the limit
//! `run` refuses a study over, both from [`crate::scenario::cost`]'s estimate.

use crate::config::{Config, ConfigError};
use crate::scenario;
use crate::units::fmt_bytes;

/// What a study is estimated to cost, for `check`: "estimated: 2.1e8 events, about 1.0 s on 2
/// cores, 26 MB peak; costliest point: PIX gpudirect write_imm 1 GiB (3% of the events)".
pub fn cost_line(cfg: &Config) -> String {
    let cores = threads(0);
    let c = scenario::cost::study(cfg, cores);
    let top = c
        .top
        .first()
        .map(|&(i, e)| {
            format!(
                "; costliest point: {} ({:.0}% of the events)",
                describe_point(cfg, i),
                100.0 * e as f64 / c.events.max(1) as f64
            )
        })
        .unwrap_or_default();
    format!(
        "estimated: {:.1e} events, about {} on {cores} core{}, {} peak{top}",
        c.events as f64,
        fmt_seconds(c.seconds(cores)),
        if cores == 1 { "" } else { "s" },
        fmt_bytes(c.memory)
    )
}

/// "PIX gpudirect write_imm 1 GiB": point `i` of the plan.
fn describe_point(cfg: &Config, i: usize) -> String {
    let p = &scenario::plan(cfg)[i];
    format!(
        "{} {} {} {}",
        cfg.scenarios[p.scenario].name,
        p.path.name(),
        p.op.name(),
        fmt_bytes(p.size)
    )
}

/// The worker threads a run of `jobs` (0: all cores, as rayon counts them) has.
pub fn threads(jobs: usize) -> usize {
    if jobs == 0 {
        rayon::current_num_threads()
    } else {
        jobs
    }
}

/// "0.4 s", "3 min", "2.5 h".
fn fmt_seconds(s: f64) -> String {
    if s < 60.0 {
        format!("{s:.1} s")
    } else if s < 3600.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// Refuses, before any work, a run whose estimated events exceed `max_events`, naming what
/// makes it expensive and how to raise the limit.
pub fn check_cost(
    cfg: &Config,
    ids: &[usize],
    file: &str,
    max_events: u64,
) -> Result<(), ConfigError> {
    let c = scenario::cost::study_of(cfg, ids, 1);
    if c.events <= max_events {
        return Ok(());
    }
    let top: Vec<String> = c
        .top
        .iter()
        .map(|&(i, e)| format!("{} ({:.1e})", describe_point(cfg, i), e as f64))
        .collect();
    Err(ConfigError::new(
        file,
        "",
        format!(
            "a study of at most {max_events:.1e} estimated events (raise the limit with \
             --max-events, or cut it into shards with --shard K/N)",
            max_events = max_events as f64
        ),
        format!(
            "{:.1e} events over {} points, about {} on one core; the costliest: {}",
            c.events as f64,
            c.points,
            fmt_seconds(c.seconds(1)),
            top.join(", ")
        ),
    ))
}

/// The default `--max-events`: about two days of one core.
pub const DEFAULT_MAX_EVENTS: u64 = 250_000_000_000;

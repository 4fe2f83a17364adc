//! What a study is estimated to cost before it runs: the line `check` prints and what `run`
//! puts before the cost gate ([`super::gate`]), both from [`crate::scenario::cost`]'s
//! estimate.

use super::gate::{Work, fmt_seconds};
use crate::config::Config;
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
                "; costliest point: {} ({} of the events)",
                describe_point(cfg, i),
                crate::units::fmt_percent(100.0 * e as f64 / c.events.max(1) as f64)
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
    point_name(cfg, &scenario::plan(cfg)[i])
}

/// "PIX gpudirect write_imm 1 GiB": point `p` of `cfg`.
pub fn point_name(cfg: &Config, p: &scenario::Point) -> String {
    let variant = match cfg.variant_label(p.variant) {
        "" => String::new(),
        label => format!(" [{label}]"),
    };
    format!(
        "{}{variant} {} {} {}",
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

/// What running the points `ids` of `cfg` on `threads` threads is, for the cost gate: its events and peak memory, its costliest and largest points named.
pub fn study_work(cfg: &Config, ids: &[usize], threads: usize) -> Work {
    let c = scenario::cost::study_of(cfg, ids, threads);
    let named = |v: &[(usize, u64)], figure: &dyn Fn(u64) -> String| -> Vec<String> {
        v.iter()
            .map(|&(i, x)| format!("{} ({})", describe_point(cfg, i), figure(x)))
            .collect()
    };
    let threads = threads.min(c.points).max(1);
    let shards = "cut it into shards with --shard K/N";
    // A point's messages are held until it ends: only fewer of them make one point smaller.
    let fewer = "give its largest points fewer messages ([sim] iterations, stream_messages) or \
                 flows";
    Work {
        what: "a study".into(),
        events: c.events,
        over: format!("{} point{}", c.points, if c.points == 1 { "" } else { "s" }),
        memory: c.memory,
        threads,
        costliest: named(&c.top, &|e| format!("{:.1e}", e as f64)),
        largest: named(&c.largest, &|b| fmt_bytes(b)),
        cut_events: shards.into(),
        cut_memory: if threads > 1 {
            format!("run fewer points at once with --jobs, {shards}, or {fewer}")
        } else {
            format!("{shards}, or {fewer}")
        },
    }
}

/// What a command that draws no chart holds whatever it simulates (measured: `nvbandwidth 0
/// -b 64`, 8.2 MiB).
const TOOL_BASE_BYTES: u64 = 8 << 20;

/// What a tool that makes `runs` fabric runs, `threads` at a time, is for the cost gate: each
/// run named with its estimated events and memory (a run's fabric is dropped when it ends: the
/// peak is the largest runs, as many as run at once), over `over` ("400000 messages over 2
/// queue pairs"), `cut` saying what makes it smaller.
pub fn runs_work(
    what: &str,
    over: String,
    runs: &[(String, u64, u64)],
    cut: &str,
    threads: usize,
) -> Work {
    let events: Vec<u64> = runs.iter().map(|r| r.1).collect();
    let memory: Vec<u64> = runs.iter().map(|r| r.2).collect();
    let named = |v: Vec<(usize, u64)>, figure: &dyn Fn(u64) -> String| -> Vec<String> {
        v.into_iter()
            .map(|(i, x)| format!("{} ({})", runs[i].0, figure(x)))
            .collect()
    };
    let mut sorted = memory.clone();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    let threads = threads.min(runs.len()).max(1);
    let at_once = sorted
        .iter()
        .take(threads)
        .fold(0u64, |a, &m| a.saturating_add(m));
    Work {
        what: what.into(),
        events: events.iter().fold(0u64, |a, &e| a.saturating_add(e)),
        over,
        memory: TOOL_BASE_BYTES.saturating_add(at_once),
        threads,
        costliest: named(scenario::cost::first_three(&events), &|e| {
            format!("{:.1e}", e as f64)
        }),
        largest: named(scenario::cost::first_three(&memory), &fmt_bytes),
        cut_events: cut.into(),
        cut_memory: cut.into(),
    }
}

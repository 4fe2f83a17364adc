//! Simulating a study's points in parallel, in point order, with the horizon backstop: the one
//! way `run`, `sensitivity` and the benches turn points into result rows.

use anyhow::{Context, Result};
use rayon::prelude::*;

use crate::config::{Config, ConfigError};
use crate::progress::Progress;
use crate::scenario;
use crate::stats::Summary;

/// Simulates `points` of `cfg` on `jobs` threads (0 = all cores). Results come back in
/// point order whatever the thread count, so output is byte-identical for any `jobs`. Each
/// point keeps only its summary: its recorder is dropped as soon as it is folded.
pub fn simulate(
    cfg: &Config,
    points: &[scenario::Point],
    jobs: usize,
    progress: &Progress,
) -> Result<Vec<Summary>> {
    // One topology per sweep variant (one without a sweep).
    let topos = scenario::topologies(cfg);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .context("starting worker threads")?;
    let results = pool.install(|| {
        points
            .par_iter()
            .map(|p| {
                let mut r = scenario::simulate_point(cfg.variant(p.variant), &topos[p.variant], p);
                progress.inc();
                if cfg.sweep.is_some() {
                    r.summary.variant = cfg.variant_label(p.variant).to_string();
                }
                (r.summary, r.past_horizon)
            })
            .collect::<Vec<_>>()
    });
    // The static bound (scenario::horizon) refuses such configs first; this is the backstop
    // that keeps a wrapped time from ever becoming a result.
    if let Some((s, _)) = results.iter().find(|r| r.1) {
        return Err(past_horizon("config", s).into());
    }
    Ok(results.into_iter().map(|r| r.0).collect())
}

/// The error of a point whose run passed the simulator's horizon; `file` names where its
/// config came from ("config", or a sensitivity variant).
pub(crate) fn past_horizon(file: &str, s: &Summary) -> ConfigError {
    ConfigError::new(
        file,
        "[sim] and the machines' durations and rates",
        "runs that end within the simulator's horizon of 2^62 ps (53 days simulated)",
        format!(
            "scenario {:?}, path {}, {} bytes: an event beyond it",
            s.scenario, s.path, s.size_bytes
        ),
    )
}

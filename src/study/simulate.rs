//! Simulating a study's points in parallel, in point order, with the horizon backstop: the one
//! way `run`, `sensitivity` and the benches turn points into result rows.

use anyhow::{Context, Result};
use rayon::prelude::*;

use crate::config::{Config, ConfigError};
use crate::progress::Progress;
use crate::scenario;
use crate::stats::Summary;
use crate::topology::Topology;

/// Simulates `points` of `cfg` on `jobs` threads (0 = all cores). Results come back in
/// point order whatever the thread count, so output is byte-identical for any `jobs`. Each
/// point keeps only its summary: its recorder is dropped as soon as it is folded.
pub fn simulate(
    cfg: &Config,
    points: &[scenario::Point],
    jobs: usize,
    progress: &Progress,
) -> Result<Vec<Summary>> {
    let results = each_point(cfg, points, jobs, |c, topo, p| {
        let mut r = scenario::simulate_point(c, topo, p);
        progress.inc();
        if cfg.sweep.is_some() {
            r.summary.variant = cfg.variant_label(p.variant).to_string();
        }
        (r.summary, r.past_horizon)
    })?;
    // The static bound (scenario::horizon) refuses such configs first; this is the backstop
    // that keeps a wrapped time from ever becoming a result.
    if let Some((s, _)) = results.iter().find(|r| r.1) {
        return Err(past_horizon("config", s).into());
    }
    Ok(results.into_iter().map(|r| r.0).collect())
}

/// Simulates only the jittered repeats of `points` of `cfg`, each a workload's (a
/// collective's), on `jobs` threads (0 = all cores), in point order: what `gdrsim nccl-tests`
/// prints, without the noise-free run each point's full row also takes
/// ([`scenario::workload::simulate_repeats`]). The same horizon backstop as [`simulate`].
pub fn simulate_repeats(
    cfg: &Config,
    points: &[scenario::Point],
    jobs: usize,
    progress: &Progress,
) -> Result<Vec<scenario::workload::Repeats>> {
    let results = each_point(cfg, points, jobs, |c, topo, p| -> Result<_> {
        let sc = &c.scenarios[p.scenario];
        let w = sc.workload.as_ref().with_context(|| {
            format!(
                "scenario {:?} is not a workload: no repeats of its own",
                sc.name
            )
        })?;
        let r = scenario::workload::simulate_repeats(c, topo, p, w);
        progress.inc();
        match r.past_horizon {
            true => Err(past_horizon_at("config", (&sc.name, p.path, p.size)).into()),
            false => Ok(r),
        }
    })?;
    results.into_iter().collect()
}

/// `f` of every point of `points` (with its sweep variant's config and topology) on `jobs`
/// worker threads (0 = all cores), in point order whatever the thread count.
fn each_point<T: Send>(
    cfg: &Config,
    points: &[scenario::Point],
    jobs: usize,
    f: impl Fn(&Config, &Topology, &scenario::Point) -> T + Sync,
) -> Result<Vec<T>> {
    // One topology per sweep variant (one without a sweep).
    let topos = scenario::topologies(cfg);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .context("starting worker threads")?;
    Ok(pool.install(|| {
        points
            .par_iter()
            .map(|p| f(cfg.variant(p.variant), &topos[p.variant], p))
            .collect()
    }))
}

/// The error of a point whose run passed the simulator's horizon; `file` names where its
/// config came from ("config", or a sensitivity variant).
pub(crate) fn past_horizon(file: &str, s: &Summary) -> ConfigError {
    past_horizon_at(file, (&s.scenario, s.path, s.size_bytes))
}

/// [`past_horizon`] of the point of scenario `name` on `path` at `size` bytes.
fn past_horizon_at(
    file: &str,
    (name, path, size): (&str, crate::config::PathKind, u64),
) -> ConfigError {
    ConfigError::new(
        file,
        "[sim] and the machines' durations and rates",
        "runs that end within the simulator's horizon of 2^62 ps (53 days simulated)",
        format!("scenario {name:?}, path {path}, {size} bytes: an event beyond it"),
    )
}

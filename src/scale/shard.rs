//! One shard of a study: which points it runs and what its folder holds.
//!
//! Points are dealt to shards by estimated cost ([`crate::scenario::cost`]), largest first,
//! each to the shard with the least work so far (ties to the lowest index): the same points go
//! to the same shard on every machine, and no shard waits on one huge point among many small
//! ones. A shard folder holds the resolved `config.toml`, `shard.json` (config hash, seed,
//! shard, point ids, the command that reproduces the study), `rows.jsonl` (each point's
//! summary, exactly: floats round-trip) and its part of `results.csv` and `stages.csv` to read.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::config::{Config, ConfigError};
use crate::report::{atomic, csv_out};
use crate::scenario::{self, Point, cost};
use crate::stats::Summary;

/// The most shards a study may be cut into (Slurm's default MaxArraySize is 1001).
pub const MAX_SHARDS: u32 = 10_000;

/// The K-th (from 0, as `SLURM_ARRAY_TASK_ID` counts) of N shards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// K: which shard, from 0.
    pub index: u32,
    /// N: how many shards the study is cut into.
    pub count: u32,
}

impl Shard {
    /// Parses `K/N` as given to `--shard`.
    pub fn parse(s: &str) -> Result<Shard, ConfigError> {
        let bad = || {
            ConfigError::new(
                "command line",
                "--shard",
                format!("K/N: shard K (from 0) of N shards, N from 1 to {MAX_SHARDS}, K < N"),
                format!("{s:?}"),
            )
        };
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            k.trim().parse::<u32>().map_err(|_| bad())?,
            n.trim().parse::<u32>().map_err(|_| bad())?,
        );
        if count == 0 || count > MAX_SHARDS || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// "K/N".
    pub fn label(self) -> String {
        format!("{}/{}", self.index, self.count)
    }
}

/// The shard of every point of `points` (in order) when the study is cut into `count`.
pub fn assign(cfg: &Config, points: &[Point], count: u32) -> Vec<u32> {
    let topos = crate::scenario::topologies(cfg);
    let costs: Vec<u64> = points
        .iter()
        .map(|p| cost::estimate(cfg.variant(p.variant), &topos[p.variant], p))
        .collect();
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(costs[i]), i));
    let mut load = vec![0u64; count as usize];
    let mut of = vec![0u32; points.len()];
    for i in order {
        let (k, _) = load
            .iter()
            .enumerate()
            .min_by_key(|&(k, &l)| (l, k))
            .expect("at least one shard");
        load[k] = load[k].saturating_add(costs[i]);
        of[i] = k as u32;
    }
    of
}

/// The ids (indices into [`scenario::plan`]) of the points `shard` runs, in point order.
pub fn point_ids(cfg: &Config, shard: Shard) -> Vec<usize> {
    let points = scenario::plan(cfg);
    assign(cfg, &points, shard.count)
        .into_iter()
        .enumerate()
        .filter(|&(_, k)| k == shard.index)
        .map(|(i, _)| i)
        .collect()
}

/// What `shard.json` records.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ShardManifest {
    /// The gdrsim version that ran the shard (merge refuses shards of different versions).
    pub gdrsim: String,
    /// The config's name.
    pub config: String,
    /// FNV-1a of the resolved `config.toml` beside it.
    pub config_fnv1a64: String,
    /// The seed the study ran with.
    pub seed: u64,
    /// K: this shard's index, from 0.
    pub shard: u32,
    /// N: the study's number of shards.
    pub shards: u32,
    /// Points of the whole study.
    pub points_total: usize,
    /// The points this shard ran, as indices in the study's point order.
    pub points: Vec<usize>,
    /// The command that reproduces the whole study on one machine.
    pub command: String,
}

pub(crate) const SHARD_MANIFEST: &str = "shard.json";
pub(crate) const ROWS: &str = "rows.jsonl";

/// Writes a shard's files into `dir`; returns the paths written.
pub fn write(
    dir: &Path,
    cfg: &Config,
    shard: Shard,
    ids: &[usize],
    rows: &[Summary],
    command: &str,
) -> Result<Vec<PathBuf>> {
    let resolved = crate::config::to_toml(cfg);
    let manifest = ShardManifest {
        gdrsim: env!("CARGO_PKG_VERSION").to_string(),
        config: cfg.name.clone(),
        config_fnv1a64: format!("{:016x}", crate::seed::fnv1a(resolved.as_bytes())),
        seed: cfg.seed,
        shard: shard.index,
        shards: shard.count,
        points_total: scenario::plan(cfg).len(),
        points: ids.to_vec(),
        command: command.to_string(),
    };
    let mut lines = String::new();
    for r in rows {
        lines.push_str(&serde_json::to_string(r).context("encoding a result row")?);
        lines.push('\n');
    }
    let mut written = Vec::new();
    for (name, bytes) in [
        ("config.toml", resolved.into_bytes()),
        (
            SHARD_MANIFEST,
            (serde_json::to_string_pretty(&manifest)? + "\n").into_bytes(),
        ),
        (ROWS, lines.into_bytes()),
        ("results.csv", csv_out::results_csv(rows)?),
        ("stages.csv", csv_out::stages_csv(rows)?),
    ] {
        let p = dir.join(name);
        atomic::write(&p, &bytes)?;
        written.push(p);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{DEFAULT_TOML, parse};

    #[test]
    fn shards_parse_from_k_of_n() {
        assert_eq!(Shard::parse("0/4").unwrap(), Shard { index: 0, count: 4 });
        assert_eq!(Shard::parse("3/4").unwrap().label(), "3/4");
        for bad in ["4/4", "1/0", "x/2", "2", "-1/3", "0/10001"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    /// Every point goes to exactly one shard, the same one each time, and the shards' estimated
    /// costs are balanced: none more than its fair share plus the largest point.
    #[test]
    fn assignment_is_deterministic_and_balanced() {
        let cfg = parse(DEFAULT_TOML, "default").unwrap();
        let points = scenario::plan(&cfg);
        for n in [1u32, 2, 7, 100] {
            let a = assign(&cfg, &points, n);
            assert_eq!(a, assign(&cfg, &points, n));
            assert!(a.iter().all(|&k| k < n));
            let topo = scenario::topology(&cfg);
            let costs: Vec<u64> = points
                .iter()
                .map(|p| cost::estimate(&cfg, &topo, p))
                .collect();
            let total: u64 = costs.iter().sum();
            let biggest = *costs.iter().max().unwrap();
            let mut load = vec![0u64; n as usize];
            for (i, &k) in a.iter().enumerate() {
                load[k as usize] += costs[i];
            }
            let fair = total / u64::from(n);
            assert!(
                load.iter().all(|&l| l <= fair + biggest),
                "{n} shards: loads {load:?}, fair {fair}, largest point {biggest}"
            );
            let mut all: Vec<usize> = (0..n)
                .flat_map(|k| point_ids(&cfg, Shard { index: k, count: n }))
                .collect();
            all.sort();
            assert_eq!(all, (0..points.len()).collect::<Vec<_>>());
        }
    }
}

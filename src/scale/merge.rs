//! `gdrsim merge OUT SHARD_DIR...`: checks that the shard folders belong to one study (same
//! resolved config, seed and shard count) and cover each of its points exactly once, then hands
//! the rows, in point order, to the same writer as a single run. The merged folder is
//! byte-identical to `gdrsim run` of the same config and seed on one machine.
//!
//! A shard's files are taken only as its run wrote them: each file the merge reads must match
//! the hash the shard folder's manifest.json recorded, and each row must be the point the deal
//! gives its place, so rows copied from another shard or reordered are refused, not merged
//! into the wrong points.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::shard::{self, MAX_SHARDS, ROWS, SHARD_MANIFEST, Shard, ShardManifest};
use crate::config::{self, Config, ConfigError, choice::Choice};
use crate::report::output_dir::MANIFEST;
use crate::scenario::{self, Point};
use crate::stats::Summary;

/// One shard folder, read and checked on its own.
struct Part {
    dir: PathBuf,
    manifest: ShardManifest,
    config_text: String,
    rows: Vec<Summary>,
}

fn bad(
    file: &Path,
    key: &str,
    expected: impl Into<String>,
    found: impl Into<String>,
) -> ConfigError {
    ConfigError::new(&file.display().to_string(), key, expected, found)
}

fn read_part(dir: &Path) -> Result<Part, ConfigError> {
    let mf = dir.join(SHARD_MANIFEST);
    let text = std::fs::read_to_string(&mf).map_err(|e| {
        bad(
            &mf,
            "",
            "a shard folder written by gdrsim run --shard K/N (with its shard.json)",
            format!("an I/O error: {e}"),
        )
    })?;
    let manifest: ShardManifest = serde_json::from_str(&text)
        .map_err(|e| bad(&mf, "", "a shard manifest", format!("invalid JSON: {e}")))?;
    // Rows are this version's summaries: a shard of another version may hold other fields or
    // other figures.
    if manifest.gdrsim != env!("CARGO_PKG_VERSION") {
        return Err(bad(
            &mf,
            "gdrsim",
            format!(
                "a shard written by this gdrsim ({})",
                env!("CARGO_PKG_VERSION")
            ),
            format!("one written by gdrsim {}", manifest.gdrsim),
        ));
    }
    check_cut(&mf, &manifest)?;
    let cf = dir.join("config.toml");
    let config_text = std::fs::read_to_string(&cf).map_err(|e| {
        bad(
            &cf,
            "",
            "the shard's resolved config",
            format!("an I/O error: {e}"),
        )
    })?;
    let hash = format!("{:016x}", crate::seed::fnv1a(config_text.as_bytes()));
    if hash != manifest.config_fnv1a64 {
        return Err(bad(
            &cf,
            "",
            format!(
                "the config the shard ran (FNV-1a {})",
                manifest.config_fnv1a64
            ),
            format!("a config.toml changed since (FNV-1a {hash})"),
        ));
    }
    let rf = dir.join(ROWS);
    let lines = std::fs::read_to_string(&rf).map_err(|e| {
        bad(
            &rf,
            "",
            "the shard's result rows",
            format!("an I/O error: {e}"),
        )
    })?;
    let rows = lines
        .lines()
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str::<Summary>(l).map_err(|e| {
                bad(
                    &rf,
                    &format!("line {}", i + 1),
                    "a result row",
                    format!("{e}"),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if rows.len() != manifest.points.len() {
        return Err(bad(
            &rf,
            "",
            format!(
                "{} rows, one per point of shard.json",
                manifest.points.len()
            ),
            format!("{} rows (a truncated shard?)", rows.len()),
        ));
    }
    check_written(
        dir,
        &[
            ("config.toml", config_text.as_bytes()),
            (SHARD_MANIFEST, text.as_bytes()),
            (ROWS, lines.as_bytes()),
        ],
    )?;
    Ok(Part {
        dir: dir.to_path_buf(),
        manifest,
        config_text,
        rows,
    })
}

/// Checks the shard and shard count of `shard.json` (`mf`) as `--shard K/N` bounds them, so
/// that no count read from a file sizes the merge's tables.
fn check_cut(mf: &Path, m: &ShardManifest) -> Result<(), ConfigError> {
    if !(1..=MAX_SHARDS).contains(&m.shards) {
        return Err(bad(
            mf,
            "shards",
            format!("a shard count from 1 to {MAX_SHARDS}, as --shard K/N takes it"),
            m.shards.to_string(),
        ));
    }
    if m.shard >= m.shards {
        return Err(bad(
            mf,
            "shard",
            format!("a shard below {}", m.shards),
            m.shard.to_string(),
        ));
    }
    Ok(())
}

/// The most missing shards an error lists (the rest are counted).
const MISSING_LISTED: usize = 10;

/// Checks that `parts` hold each of the study's `count` shards once; the table of shards seen
/// holds one entry per folder given, whatever `count` says.
fn check_cover(parts: &[Part], count: u32) -> Result<(), ConfigError> {
    let mut seen: BTreeMap<u32, &Path> = BTreeMap::new();
    for p in parts {
        let k = p.manifest.shard;
        if let Some(other) = seen.insert(k, &p.dir) {
            return Err(cli(
                "each shard once",
                format!(
                    "shard {k}/{count} twice: {} and {}",
                    other.display(),
                    p.dir.display()
                ),
            ));
        }
    }
    let absent = count as usize - seen.len();
    if absent == 0 {
        return Ok(());
    }
    let mut listed: Vec<String> = (0..count)
        .filter(|k| !seen.contains_key(k))
        .take(MISSING_LISTED)
        .map(|k| format!("{k}/{count}"))
        .collect();
    let first = listed[0].clone();
    if absent > MISSING_LISTED {
        listed.push(format!("and {} more", absent - MISSING_LISTED));
    }
    Err(cli(
        "every shard of the study",
        format!(
            "shard {} missing (run it with: {} --shard {first} --out DIR, or sbatch \
             --array=K on the study's array script)",
            listed.join(", "),
            parts[0].manifest.command
        ),
    ))
}

/// An error of the command line's shard folders.
fn cli(expected: &str, found: String) -> ConfigError {
    ConfigError::new("command line", "SHARD_DIR", expected, found)
}

/// An entry of an output folder's manifest.json: a file as the run wrote it.
#[derive(serde::Deserialize)]
struct Written {
    name: String,
    bytes: u64,
    fnv1a64: String,
}

/// What the merge reads of a shard folder's manifest.json.
#[derive(serde::Deserialize)]
struct FolderManifest {
    files: Vec<Written>,
}

/// Checks that each of `files` (name, contents) of the shard folder `dir` is the file its run
/// wrote, by the size and hash in the folder's manifest.json: a rows.jsonl copied from another
/// shard, or edited, would otherwise merge into the wrong points.
fn check_written(dir: &Path, files: &[(&str, &[u8])]) -> Result<(), ConfigError> {
    let mf = dir.join(MANIFEST);
    let text = std::fs::read_to_string(&mf).map_err(|e| {
        bad(
            &mf,
            "",
            "the shard folder's manifest, as gdrsim run --shard writes it",
            format!("an I/O error: {e}"),
        )
    })?;
    let manifest: FolderManifest = serde_json::from_str(&text).map_err(|e| {
        bad(
            &mf,
            "files",
            "an output folder's manifest",
            format!("invalid JSON: {e}"),
        )
    })?;
    for (name, bytes) in files {
        let hash = format!("{:016x}", crate::seed::fnv1a(bytes));
        let Some(w) = manifest.files.iter().find(|w| w.name == *name) else {
            return Err(bad(
                &mf,
                "files",
                format!("an entry for {name}, as the shard's run wrote it"),
                "none",
            ));
        };
        if w.fnv1a64 != hash || w.bytes != bytes.len() as u64 {
            return Err(bad(
                &dir.join(name),
                "",
                format!(
                    "the file the shard's run wrote ({} bytes, FNV-1a {}, as manifest.json \
                     records it)",
                    w.bytes, w.fnv1a64
                ),
                format!(
                    "{} bytes, FNV-1a {hash}: a file changed, or copied from another shard, \
                     since",
                    bytes.len()
                ),
            ));
        }
    }
    Ok(())
}

/// Checks that each row of a shard is the point the deal gives its place (scenario, path, op
/// and size), so no row lands on another point's place.
fn check_rows(p: &Part, cfg: &Config, plan: &[Point]) -> Result<(), ConfigError> {
    for (line, (&id, row)) in p.manifest.points.iter().zip(&p.rows).enumerate() {
        let point = &plan[id];
        let scenario = &cfg.scenarios[point.scenario].name;
        let same = row.scenario == *scenario
            && row.variant == cfg.variant_label(point.variant)
            && row.path == point.path
            && row.op == point.op
            && row.size_bytes == point.size;
        if !same {
            return Err(bad(
                &p.dir.join(ROWS),
                &format!("line {}", line + 1),
                format!(
                    "the row of point {id} (scenario {scenario}, path {}, op {}, {} bytes)",
                    point.path.word(),
                    point.op.word(),
                    point.size
                ),
                format!(
                    "a row of scenario {}, path {}, op {}, {} bytes (rows of another shard, or \
                     reordered?)",
                    row.scenario,
                    row.path.word(),
                    row.op.word(),
                    row.size_bytes
                ),
            ));
        }
    }
    Ok(())
}

/// Checks the command line's folders before anything is read: no shard folder given twice
/// (under any spelling), and an output folder that is neither a shard folder nor holds one,
/// since merge replaces the output folder whole. Paths are compared canonicalized; a shard
/// folder that cannot be resolved is left to [`assemble`] to refuse.
pub fn check_folders(out: &Path, dirs: &[PathBuf]) -> Result<(), ConfigError> {
    let mut seen: Vec<(PathBuf, &Path)> = Vec::new();
    for d in dirs {
        let Ok(real) = d.canonicalize() else {
            continue;
        };
        if let Some((_, first)) = seen.iter().find(|(r, _)| *r == real) {
            return Err(cli(
                "each shard folder once",
                format!(
                    "{} and {}: the same folder twice",
                    first.display(),
                    d.display()
                ),
            ));
        }
        seen.push((real, d));
    }
    let Ok(out_real) = out.canonicalize() else {
        // Not there yet: it holds nothing to lose.
        return Ok(());
    };
    if let Some((real, d)) = seen.iter().find(|(r, _)| r.starts_with(&out_real)) {
        let what = if *real == out_real { "is" } else { "holds" };
        return Err(ConfigError::new(
            "command line",
            "OUT",
            "an output folder that is not a shard folder given and holds none (merge replaces \
             it whole)",
            format!("{} {what} shard folder {}", out.display(), d.display()),
        ));
    }
    Ok(())
}

/// Reads and checks the shards; returns the study's config, its rows in point order and the
/// command that reproduces it.
pub fn assemble(dirs: &[PathBuf]) -> Result<(Config, Vec<Summary>, String), ConfigError> {
    if dirs.is_empty() {
        return Err(cli("at least one shard folder", "none".into()));
    }
    let parts = dirs
        .iter()
        .map(|d| read_part(d))
        .collect::<Result<Vec<_>, _>>()?;
    let first = &parts[0];
    let m0 = &first.manifest;
    for p in &parts[1..] {
        let m = &p.manifest;
        let file = p.dir.join(SHARD_MANIFEST);
        if m.config_fnv1a64 != m0.config_fnv1a64 || m.seed != m0.seed {
            return Err(bad(
                &file,
                "config_fnv1a64",
                format!(
                    "the study of {} (config FNV-1a {}, seed {})",
                    first.dir.display(),
                    m0.config_fnv1a64,
                    m0.seed
                ),
                format!(
                    "config FNV-1a {}, seed {}: another study",
                    m.config_fnv1a64, m.seed
                ),
            ));
        }
        if m.shards != m0.shards {
            return Err(bad(
                &file,
                "shards",
                format!("{} shards, as {} was cut", m0.shards, first.dir.display()),
                m.shards.to_string(),
            ));
        }
    }
    check_cover(&parts, m0.shards)?;
    let file = first.dir.join("config.toml").display().to_string();
    let cfg = config::parse(&first.config_text, &file)?;
    let command = m0.command.clone();
    let plan = scenario::plan(&cfg);
    let total = plan.len();
    // The deal, once for every shard (it estimates the cost of every point).
    let deal = shard::assign(&cfg, &plan, m0.shards);
    let mut rows: Vec<Option<Summary>> = vec![None; total];
    for p in parts {
        let shard = Shard {
            index: p.manifest.shard,
            count: p.manifest.shards,
        };
        // The points are the ones the config deals to this shard: a shard of another cut, or
        // a manifest edited by hand, is refused.
        let expected: Vec<usize> = (0..total).filter(|&i| deal[i] == shard.index).collect();
        if p.manifest.points != expected || p.manifest.points_total != total {
            return Err(bad(
                &p.dir.join(SHARD_MANIFEST),
                "points",
                format!(
                    "the {} points the config deals to shard {}",
                    expected.len(),
                    shard.label()
                ),
                format!("{} other points", p.manifest.points.len()),
            ));
        }
        check_rows(&p, &cfg, &plan)?;
        for (id, row) in p.manifest.points.into_iter().zip(p.rows) {
            rows[id] = Some(row);
        }
    }
    let rows = rows
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| cli("every point of the study", "a point no shard ran".into()))?;
    Ok((cfg, rows, command))
}

//! The `gdrsim` binary driven on real configs, as a user runs it, by topic: output contracts
//! ([`contracts`]), bad input ([`errors`]) and the other commands ([`tools`]). This module holds
//! what they share; the helpers every integration test uses are `support`'s.
//!
//! - every file in configs/ passes `gdrsim check`;
//! - the default run writes the contract outputs (results.csv with its 20 columns in order,
//!   stages.csv, config.toml), its resolved config loads back and reproduces results.csv byte
//!   for byte, and running it twice gives identical bytes;
//! - `--jobs 1` and `--jobs 2` give identical bytes; `--seed` changes the jitter only;
//! - bad input: one test per class of mistake, each expecting exit code 2, exactly one error line
//!   on stderr naming the file, the key path, what was expected and what was found, no panic,
//!   and nothing written (plus a wrong-typed quantity, a duplicate name and a TOML syntax
//!   error, whose messages must still say what was found and where);
//! - `gdrsim topo` prints the `nvidia-smi topo -m` matrix and its legend;
//! - the client-cpu example falls back from GPUDirect to staging.
//!
//! Bad configs are made by editing a copy of configs/default.toml (one replacement each, whose
//! anchor must exist), so they follow the real config. Runs other than the default one use a
//! reduced sweep to keep this file fast. Outputs go under support::scratch folders.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

pub(super) use crate::support::{gdrsim, s, text};

mod contracts;
mod errors;
mod tools;

const BIN: &str = env!("CARGO_BIN_EXE_gdrsim");

/// The frozen first twenty columns of results.csv (DESIGN.md section 1).
const RESULTS_COLUMNS: [&str; 20] = [
    "scenario",
    "class",
    "path",
    "effective_path",
    "op",
    "size_bytes",
    "iterations",
    "lat_model_us",
    "lat_min_us",
    "lat_p50_us",
    "lat_mean_us",
    "lat_p99_us",
    "lat_max_us",
    "lat_stdev_us",
    "lat_ci95_us",
    "bw_GBps",
    "msg_rate_mps",
    "cpu_busy_us",
    "host_mem_bytes",
    "setup_us",
];

const STAGES_COLUMNS: [&str; 9] = [
    "scenario",
    "path",
    "op",
    "size_bytes",
    "stage",
    "component",
    "start_us",
    "end_us",
    "critical_us",
];

/// A reduced sweep for runs other than the default one: a small message (inline, TLP by TLP),
/// a medium one, and two large ones that move as bulk transfers.
const SMALL_SWEEP: &str = r#"sizes = ["8B", "4KiB", "256KiB", "4MiB"]"#;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh (absent) path: `out` in a fresh `support::scratch` folder of this module.
fn scratch(name: &str) -> PathBuf {
    crate::support::scratch("cli", name).join("out")
}

fn assert_ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed with {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    );
}

fn read(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

fn default_toml() -> String {
    fs::read_to_string(root().join("configs/default.toml")).expect("configs/default.toml")
}

/// configs/default.toml with the first occurrence of each `old` replaced by `new`. Every anchor
/// must exist, so a change to the default config shows up here instead of silently testing
/// nothing.
fn default_with(edits: &[(&str, &str)]) -> String {
    let mut t = default_toml();
    for (old, new) in edits {
        assert!(
            t.contains(old),
            "anchor {old:?} is no longer in configs/default.toml: update this test"
        );
        t = t.replacen(old, new, 1);
    }
    t
}

/// Replaces the `sizes = ...` line of a config's [sweep] table.
fn with_sizes(config: &str, sizes_line: &str) -> String {
    let mut replaced = 0;
    let lines: Vec<&str> = config
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("sizes =") {
                replaced += 1;
                sizes_line
            } else {
                l
            }
        })
        .collect();
    assert_eq!(replaced, 1, "expected exactly one `sizes =` line");
    lines.join("\n") + "\n"
}

/// Writes `contents` as `<scratch>/<name>.toml` and returns the path.
fn write_config(name: &str, contents: &str) -> PathBuf {
    let dir = scratch(&format!("{name}-cfg"));
    fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.toml"));
    fs::write(&p, contents).unwrap();
    p
}

/// `gdrsim run CONFIG --quiet --out DIR [extra...]`; returns DIR.
fn run_config(config: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let out = scratch(name);
    let mut args = vec!["run", s(config), "--quiet", "--out", s(&out)];
    args.extend_from_slice(extra);
    let o = gdrsim(&args);
    assert_ok(&o, &format!("gdrsim {}", args.join(" ")));
    assert!(o.stdout.is_empty(), "--quiet printed: {}", text(&o.stdout));
    out
}

/// The embedded default config, run once for every test that needs it.
fn default_run() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = scratch("default-a");
        let o = gdrsim(&["run", "--quiet", "--out", s(&out)]);
        assert_ok(&o, "gdrsim run --quiet (embedded default)");
        assert!(o.stdout.is_empty(), "--quiet printed: {}", text(&o.stdout));
        out
    })
}

fn csv_table(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let body = String::from_utf8(read(path)).expect("utf-8 csv");
    let mut lines = body.lines();
    let header = lines
        .next()
        .expect("a header")
        .split(',')
        .map(String::from)
        .collect();
    // No field of these files contains a comma or a quote (names, numbers, stage names).
    let rows = lines
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    (header, rows)
}

/// A decimal microsecond value with at most 6 decimals as exact picoseconds.
fn ps(us: &str) -> i128 {
    let (int, frac) = us.split_once('.').unwrap_or((us, ""));
    assert!(frac.len() <= 6, "more than 6 decimals: {us}");
    let frac = format!("{frac:0<6}");
    let v: i128 = format!("{}{frac}", int.trim_start_matches('-'))
        .parse()
        .unwrap_or_else(|_| panic!("not a decimal: {us}"));
    if us.starts_with('-') { -v } else { v }
}

// ---- configs/ ---------------------------------------------------------------------------------

/// The folder's manifest lists exactly its files, each with its size and hash.
fn assert_whole(dir: &Path) {
    let m: serde_json::Value =
        serde_json::from_slice(&read(&dir.join("manifest.json"))).expect("a manifest");
    let mut listed: Vec<String> = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let name = e["name"].as_str().unwrap().to_string();
            let bytes = read(&dir.join(&name));
            assert_eq!(e["bytes"], bytes.len(), "{name}: size");
            let h = gdrsim::seed::fnv1a(&bytes);
            assert_eq!(e["fnv1a64"], format!("{h:016x}"), "{name}: hash");
            name
        })
        .collect();
    listed.push("manifest.json".into());
    listed.sort();
    let mut present: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    present.sort();
    assert_eq!(
        listed,
        present,
        "{}: files beyond the manifest",
        dir.display()
    );
}

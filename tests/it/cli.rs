//! The `gdrsim` binary driven on real configs, as a user runs it.
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
//! reduced sweep to keep this file fast. Outputs go under CARGO_TARGET_TMPDIR.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

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

/// A fresh (absent) path under the cargo-provided scratch folder.
fn scratch(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}"));
    let _ = fs::remove_dir_all(&p);
    let _ = fs::remove_file(&p);
    p
}

fn gdrsim(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(root())
        .output()
        .expect("the gdrsim binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
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

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
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

fn csv_rows(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
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

#[test]
fn every_config_in_configs_passes_check() {
    let mut configs: Vec<PathBuf> = fs::read_dir(root().join("configs"))
        .expect("configs/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    configs.sort();
    let names: Vec<String> = configs
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for must in [
        "default.toml",
        "topologies.toml",
        "client-cpu.toml",
        "dgx-a100.toml",
        "registration.toml",
        "dgx-h100.toml",
    ] {
        assert!(names.iter().any(|n| n == must), "configs/{must} missing");
    }
    for c in &configs {
        let o = gdrsim(&["check", s(c)]);
        assert_ok(&o, &format!("gdrsim check {}", c.display()));
        let stdout = text(&o.stdout);
        assert!(stdout.contains(": ok ("), "{}: {stdout}", c.display());
        assert!(o.stderr.is_empty(), "{}: {}", c.display(), text(&o.stderr));
    }
}

// ---- the default run ----------------------------------------------------------------------------

#[test]
fn default_run_writes_the_contract_outputs() {
    let dir = default_run();
    for f in ["results.csv", "stages.csv", "config.toml", "report.md"] {
        assert!(dir.join(f).is_file(), "{f} not written");
    }
    // No temp files left behind by the atomic writes.
    for e in fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            !name.starts_with('.') && !name.ends_with(".tmp"),
            "left over: {name}"
        );
    }

    let (header, rows) = csv_rows(&dir.join("results.csv"));
    assert!(header.len() >= 20, "results.csv header: {header:?}");
    assert_eq!(
        header[..20],
        RESULTS_COLUMNS,
        "results.csv contract columns"
    );
    assert!(!rows.is_empty());
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let mut points = BTreeMap::new();
    for r in &rows {
        assert_eq!(r.len(), header.len(), "row {r:?}");
        // Jitter only ever adds delay.
        assert!(
            ps(&r[col("lat_min_us")]) >= ps(&r[col("lat_model_us")]),
            "lat_min_us < lat_model_us: {r:?}"
        );
        let key = (
            r[col("scenario")].clone(),
            r[col("path")].clone(),
            r[col("op")].clone(),
            r[col("size_bytes")].clone(),
        );
        assert!(
            points.insert(key, ps(&r[col("lat_model_us")])).is_none(),
            "duplicate point {r:?}"
        );
    }

    let (sheader, srows) = csv_rows(&dir.join("stages.csv"));
    assert_eq!(sheader, STAGES_COLUMNS, "stages.csv columns");
    // The critical_us of a point sum exactly to its lat_model_us.
    let mut sums: BTreeMap<(String, String, String, String), i128> = BTreeMap::new();
    for r in &srows {
        assert_eq!(r.len(), 9, "row {r:?}");
        *sums
            .entry((r[0].clone(), r[1].clone(), r[2].clone(), r[3].clone()))
            .or_default() += ps(&r[8]);
    }
    assert_eq!(
        sums.keys().collect::<Vec<_>>(),
        points.keys().collect::<Vec<_>>(),
        "stages.csv covers the points of results.csv"
    );
    for (k, model) in &points {
        assert_eq!(sums[k], *model, "critical_us sum of {k:?}");
    }

    // The resolved config loads back.
    let cfg = dir.join("config.toml");
    let o = gdrsim(&["check", s(&cfg)]);
    assert_ok(&o, "gdrsim check <out>/config.toml");
}

/// Issue #27 item 2: jitter only ever adds delay, in the staging study too (seed 16 gave a
/// one-flow point lat_min_us 38.80 under its lat_model_us 38.84). Every row of
/// configs/staging.toml under seeds 16 and 17 has lat_min_us >= lat_model_us.
#[test]
fn jitter_only_adds_delay_in_the_staging_study() {
    let config = root().join("configs/staging.toml");
    for seed in ["16", "17"] {
        let out = run_config(&config, &format!("staging-seed{seed}"), &["--seed", seed]);
        let (header, rows) = csv_rows(&out.join("results.csv"));
        let col = |name: &str| header.iter().position(|h| h == name).unwrap();
        assert!(rows.len() > 100, "{} rows", rows.len());
        for r in &rows {
            assert!(
                ps(&r[col("lat_min_us")]) >= ps(&r[col("lat_model_us")]),
                "seed {seed}: lat_min_us < lat_model_us: {r:?}"
            );
        }
    }
}

/// Issue #27 item 5, the contract as README states it: with several independent flows,
/// results.csv's `lat_model_us` is the first flow's noise-free latency (flows.csv's row 0) and
/// `lat_min_us` is over every flow's messages, so it may be below it (here the faster PIX
/// flow's messages); with one flow, jitter only adds delay (see the tests above).
#[test]
fn with_several_flows_lat_model_is_the_first_flows() {
    let mut text = default_toml();
    let first = text.find("[[scenarios]]").unwrap();
    text.truncate(first);
    text.push_str(
        "[[scenarios]]\nname = \"SYS and PIX\"\nflows = [\n  { sender = { host = \"node-a\", \
         nic = \"nic0\", gpu = \"gpu3\" }, receiver = { host = \"node-b\", nic = \"nic0\", gpu \
         = \"gpu3\" } },\n  { sender = { host = \"node-a\", nic = \"nic0\", gpu = \"gpu0\" }, \
         receiver = { host = \"node-b\", nic = \"nic0\", gpu = \"gpu0\" } },\n]\n",
    );
    let text = with_sizes(&text, "sizes = [\"4KiB\"]");
    let text: String = (text.lines())
        .map(|l| match l.starts_with("paths =") {
            true => "paths = [\"gpudirect\"]\n".to_string(),
            false => format!("{l}\n"),
        })
        .collect();
    let config = write_config("two-flows.toml", &text);
    let out = run_config(&config, "two-flows", &[]);
    let (header, rows) = csv_rows(&out.join("results.csv"));
    let (fheader, flows) = csv_rows(&out.join("flows.csv"));
    let col = |h: &[String], name: &str| h.iter().position(|x| x == name).unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(flows.len(), 2, "{flows:?}");
    let model = ps(&rows[0][col(&header, "lat_model_us")]);
    let min = ps(&rows[0][col(&header, "lat_min_us")]);
    let per_flow: Vec<i128> = (flows.iter())
        .map(|f| ps(&f[col(&fheader, "lat_model_us")]))
        .collect();
    assert_eq!(model, per_flow[0], "lat_model_us is flow 0's");
    assert!(
        per_flow[1] < per_flow[0],
        "PIX is faster than SYS: {per_flow:?}"
    );
    assert!(
        min < model,
        "lat_min_us {min} ps over both flows, lat_model_us {model}"
    );
}

#[test]
fn the_resolved_config_reproduces_the_run() {
    let a = default_run();
    let c = run_config(&a.join("config.toml"), "default-from-resolved", &[]);
    for f in ["results.csv", "stages.csv", "config.toml"] {
        assert!(
            read(&a.join(f)) == read(&c.join(f)),
            "{f} differs when re-run from the resolved config.toml"
        );
    }
}

#[test]
fn running_the_default_config_twice_gives_identical_bytes() {
    let a = default_run();
    let b = scratch("default-b");
    let o = gdrsim(&["run", "--quiet", "--out", s(&b)]);
    assert_ok(&o, "second default run");
    let mut files: Vec<String> = fs::read_dir(a)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut compared = 0;
    // The report and manifest record the command that reproduces the results, which does not
    // name the output folder: every file is identical, those two included.
    for f in &files {
        assert!(
            read(&a.join(f)) == read(&b.join(f)),
            "{f} differs between two identical runs"
        );
        compared += 1;
    }
    assert!(compared >= 4, "compared only {files:?}");
}

/// The one-pair shorthand and the explicit one-flow list (`flows = [{ sender, receiver }]`) are
/// one scenario: every CSV byte-identical.
#[test]
fn the_one_pair_shorthand_and_a_one_flow_list_give_identical_bytes() {
    let pair = "sender = { host = \"node-a\", nic = \"nic0\", gpu = \"gpu0\" }\nreceiver = { host = \"node-b\", nic = \"nic0\", gpu = \"gpu0\" }";
    let list = "flows = [{ sender = { host = \"node-a\", nic = \"nic0\", gpu = \"gpu0\" }, receiver = { host = \"node-b\", nic = \"nic0\", gpu = \"gpu0\" } }]";
    let sizes = "sizes = [\"8B\", \"64KiB\", \"4MiB\"]";
    let a = write_config("shorthand", &with_sizes(&default_with(&[]), sizes));
    let b = write_config(
        "one-flow-list",
        &with_sizes(&default_with(&[(pair, list)]), sizes),
    );
    let (a, b) = (
        run_config(&a, "shorthand", &[]),
        run_config(&b, "one-flow-list", &[]),
    );
    for f in ["results.csv", "stages.csv", "flows.csv", "links.csv"] {
        assert!(read(&a.join(f)) == read(&b.join(f)), "{f} differs");
        assert!(!read(&a.join(f)).is_empty(), "{f} empty");
    }
}

/// Issue #28 item 4: the first table of report.md is the decision table, one line per scenario
/// of results.csv, in config order, each naming a winner or a tie in every band. (The embedded
/// default run is configs/default.toml: `include_str!`.)
#[test]
fn default_report_opens_with_the_decision_table_one_line_per_scenario() {
    let dir = default_run();
    let (header, rows) = csv_rows(&dir.join("results.csv"));
    let col = header.iter().position(|h| h == "scenario").unwrap();
    let mut scenarios: Vec<String> = Vec::new();
    for r in &rows {
        if !scenarios.contains(&r[col]) {
            scenarios.push(r[col].clone());
        }
    }
    let md = String::from_utf8(read(&dir.join("report.md"))).unwrap();
    let table: Vec<&str> = md
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert!(
        table[0].starts_with("| Scenario | Latency, small ≤ 4 KiB |"),
        "the first table is not the decision table:\n{}",
        table.join("\n")
    );
    let first_table = md.find("\n|").unwrap();
    assert!(md.find("## Decision").unwrap() < first_table);
    assert!(first_table < md.find("## What was simulated").unwrap());
    assert_eq!(table.len(), 2 + scenarios.len(), "{}", table.join("\n"));
    let columns = table[0].matches(" | ").count();
    for (line, name) in table[2..].iter().zip(&scenarios) {
        assert!(line.starts_with(&format!("| {name} |")), "{line}");
        assert_eq!(line.matches(" | ").count(), columns, "{line}");
        for cell in line.trim_matches('|').split(" | ").skip(1) {
            let cell = cell.trim();
            assert!(
                cell.starts_with("GPUDirect")
                    || cell.starts_with("staged")
                    || cell.starts_with("tie"),
                "{line}"
            );
        }
    }
}

// ---- threads and seeds --------------------------------------------------------------------------

#[test]
fn jobs_1_and_jobs_2_give_identical_bytes_and_seed_moves_only_the_jitter() {
    let cfg = write_config("small", &with_sizes(&default_toml(), SMALL_SWEEP));
    let one = run_config(&cfg, "small-jobs1", &["--jobs", "1"]);
    let two = run_config(&cfg, "small-jobs2", &["--jobs", "2"]);
    for f in ["results.csv", "stages.csv", "config.toml"] {
        assert!(
            read(&one.join(f)) == read(&two.join(f)),
            "{f} differs between --jobs 1 and --jobs 2"
        );
    }

    // Another seed: the noise-free model and its stages stay, the jittered statistics move.
    let seeded = run_config(&cfg, "small-seed", &["--jobs", "2", "--seed", "7"]);
    assert!(read(&one.join("stages.csv")) == read(&seeded.join("stages.csv")));
    let (h, a) = csv_rows(&one.join("results.csv"));
    let (_, b) = csv_rows(&seeded.join("results.csv"));
    let col = |name: &str| h.iter().position(|x| x == name).unwrap();
    assert_eq!(a.len(), b.len());
    let mut moved = 0;
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x[col("lat_model_us")], y[col("lat_model_us")]);
        if x[col("lat_p50_us")] != y[col("lat_p50_us")] {
            moved += 1;
        }
    }
    assert!(moved > 0, "--seed 7 changed no jittered statistic");
    assert!(
        text(&read(&seeded.join("config.toml"))).contains("seed = 7"),
        "the resolved config records the overriding seed"
    );
}

// ---- bad input ----------------------------------------------------------------------------------

/// Runs `check` and `run` on a bad config file and checks the error report: exit code 2, one
/// line on stderr naming the file and every `needles` fragment (key path, expected, found), no
/// panic, nothing on stdout, and no output folder.
fn assert_rejected(config: &Path, needles: &[&str]) {
    let out = scratch(&format!(
        "{}-out",
        config.file_stem().unwrap().to_string_lossy()
    ));
    for args in [
        vec!["check", s(config)],
        vec!["run", s(config), "--out", s(&out)],
    ] {
        let o = gdrsim(&args);
        let stderr = text(&o.stderr);
        let what = format!("gdrsim {}", args.join(" "));
        assert_eq!(
            o.status.code(),
            Some(2),
            "{what}: exit code; stderr:\n{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{what} panicked:\n{stderr}");
        assert!(o.stdout.is_empty(), "{what} printed: {}", text(&o.stdout));
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{what}: one error line expected:\n{stderr}");
        let line = lines[0];
        assert!(line.starts_with("error: "), "{what}: {line}");
        assert!(
            line.contains(s(config)),
            "{what}: does not name the file: {line}"
        );
        assert!(
            line.contains("expected ") && line.contains(", found "),
            "{what}: no expected/found: {line}"
        );
        for n in needles {
            assert!(line.contains(n), "{what}: {n:?} missing from: {line}");
        }
        assert!(!out.exists(), "{what}: wrote {}", out.display());
    }
}

/// A bad config derived from configs/default.toml by one replacement.
fn assert_edit_rejected(name: &str, old: &str, new: &str, needles: &[&str]) {
    let cfg = write_config(name, &default_with(&[(old, new)]));
    assert_rejected(&cfg, needles);
}

#[test]
fn bad_input_unknown_key() {
    assert_edit_rejected(
        "unknown-key",
        "[sim]\n",
        "[sim]\nwarmup_iterations = 5\n",
        &[
            "key `sim.warmup_iterations`",
            "expected a known key (one of",
            "`iterations`",
            "found unknown key `warmup_iterations`",
        ],
    );
}

#[test]
fn bad_input_rate_where_a_size_is_expected() {
    assert_edit_rejected(
        "rate-for-size",
        "mtu_bytes = 4096",
        r#"mtu_bytes = "4KB/s""#,
        &[
            "key `machines[0].nics[0].mtu_bytes`",
            "expected a positive size in bytes",
            r#"found "4KB/s""#,
        ],
    );
}

#[test]
fn bad_input_zero_size() {
    assert_edit_rejected(
        "zero-size",
        "wqe_bytes = 64",
        "wqe_bytes = 0",
        &[
            "key `machines[0].nics[0].wqe_bytes`",
            "expected a positive size in bytes",
            "found 0",
        ],
    );
}

#[test]
fn bad_input_negative_size() {
    assert_edit_rejected(
        "negative-size",
        "cqe_bytes = 64",
        "cqe_bytes = -64",
        &[
            "key `machines[0].nics[0].cqe_bytes`",
            "expected a positive size in bytes",
            "found -64",
        ],
    );
}

#[test]
fn bad_input_link_width_3() {
    assert_edit_rejected(
        "width-3",
        "width = 16",
        "width = 3",
        &[
            "key `machines[0].links[0].width`",
            "expected a link width of 1, 2, 4, 8, 12, 16 or 32 lanes",
            "found 3",
        ],
    );
}

#[test]
fn bad_input_out_of_range_counts_and_lengths() {
    assert_edit_rejected(
        "switch-hops",
        "switch_hops = 1",
        "switch_hops = 100000",
        &[
            "key `network.switch_hops`",
            "expected a number of switches from 0 to 64",
            "found 100000",
        ],
    );
    assert_edit_rejected(
        "iterations",
        "iterations = 60 ",
        "iterations = 4000000000 ",
        &[
            "key `sim.iterations`",
            "expected a number of iterations from 1 to 100000",
            "found 4000000000",
        ],
    );
    assert_edit_rejected(
        "cable",
        "cable_m = 3",
        "cable_m = 18446744073709551615",
        &[
            "key `network.cable_m`",
            "expected a cable length",
            "found 18446744073709551615",
        ],
    );
    assert_edit_rejected(
        "mtu",
        "mtu_bytes = 4096",
        "mtu_bytes = 8192",
        &[
            "mtu_bytes`",
            "expected a power of two from 256 to 4096 bytes",
            "found 8192",
        ],
    );
    assert_edit_rejected(
        "recv-depth",
        "recv_depth = 512 ",
        "recv_depth = 0 ",
        &[
            "key `sim.recv_depth`",
            "expected a number of posted receive WQEs from 1 to 100000",
            "found 0",
        ],
    );
    assert_edit_rejected(
        "rnr-timer",
        "min_rnr_timer = 12 ",
        "min_rnr_timer = 32 ",
        &[
            "key `sim.min_rnr_timer`",
            "expected the verbs' RNR timer code (IBTA table 45: 12 is 0.64 ms) from 0 to 31",
            "found 32",
        ],
    );
    assert_edit_rejected(
        "heap",
        "heap_base = 0x2A00000000",
        "heap_base = 0xFFFFFFFFFFFFFF00",
        &[
            "heap_base`",
            "expected a heap base",
            "found 0xffffffffffffff00",
        ],
    );
}

#[test]
fn bad_input_mps_not_a_power_of_two() {
    assert_edit_rejected(
        "mps-384",
        "mps_bytes = 256",
        "mps_bytes = 384",
        &[
            "key `machines[0].pcie.mps_bytes`",
            "expected a power of two from 128 to 4096 bytes",
            "found 384",
        ],
    );
}

#[test]
fn bad_input_mrrs_out_of_range() {
    for (v, name) in [("64", "mrrs-64"), ("8192", "mrrs-8192")] {
        assert_edit_rejected(
            name,
            "\nmrrs_bytes = 512",
            &format!("\nmrrs_bytes = {v}"),
            &[
                "key `machines[0].nics[0].mrrs_bytes`",
                "expected a power of two from 128 to 4096 bytes",
                &format!("found {v}"),
            ],
        );
    }
}

#[test]
fn bad_input_link_to_a_device_that_does_not_exist() {
    assert_edit_rejected(
        "link-to-nothing",
        r#"down = "gpu3""#,
        r#"down = "gpu9""#,
        &[
            "key `machines[0].links[",
            "].down`",
            "expected a switch, GPU or NIC of this machine (",
            "gpu3",
            r#"found "gpu9""#,
        ],
    );
}

#[test]
fn bad_input_scenario_naming_a_missing_host() {
    assert_edit_rejected(
        "missing-host",
        r#"sender = { host = "node-a""#,
        r#"sender = { host = "node-x""#,
        &[
            "key `scenarios[0].sender.host`",
            "expected one of the [[hosts]] (node-a, node-b)",
            r#"found "node-x""#,
        ],
    );
}

#[test]
fn bad_input_scenario_naming_a_missing_device() {
    assert_edit_rejected(
        "missing-nic",
        r#"receiver = { host = "node-b", nic = "nic0""#,
        r#"receiver = { host = "node-b", nic = "nic9""#,
        &[
            "key `scenarios[0].receiver.nic`",
            "expected a NIC of machine",
            "(nic0)",
            r#"found "nic9""#,
        ],
    );
    assert_edit_rejected(
        "missing-gpu",
        r#"gpu = "gpu0" }"#,
        r#"gpu = "gpu7" }"#,
        &[
            "key `scenarios[0].sender.gpu`",
            "expected a GPU of machine",
            "gpu0",
            r#"found "gpu7""#,
        ],
    );
}

/// Issue #27 item 15: an integer beyond 64 bits where a quantity or the sweep's sizes go said
/// "expected any value" (serde's buffer for an untagged enum takes every TOML value but a
/// 128-bit integer). Each such error now says what the key accepts, its range included.
#[test]
fn bad_input_128_bit_integer_says_what_is_expected() {
    let big = "99999999999999999999";
    let cases = [
        (
            "mtu_bytes = 4096",
            "machines[0].nics[0].mtu_bytes",
            "expected a size in bytes, a power of two from 256 to 4096",
        ),
        (
            "switch_latency_ns = 130",
            "network.switch_latency_ns",
            "expected a duration of at most 10 s",
        ),
        (
            "sizes = { from = \"1B\", to = \"1GiB\", factor = 2 }",
            "sweep.sizes",
            "expected a list of sizes",
        ),
        (
            "to = \"1GiB\"",
            "sweep.sizes.to",
            "expected a message size from 1 byte to 17179869184 bytes (16 GiB)",
        ),
        (
            "breakdown_sizes = [\"8B\", \"64KiB\", \"16MiB\"]",
            "output.breakdown_sizes[0]",
            "expected a positive size in bytes",
        ),
    ];
    for (i, (old, key, expected)) in cases.into_iter().enumerate() {
        let (k, v) = old.split_once(" = ").unwrap();
        // The key's value, or a list's first element.
        let new = if v.starts_with('[') {
            format!("{k} = [{big}]")
        } else {
            format!("{k} = {big}")
        };
        let cfg = write_config(&format!("int128-{i}"), &default_with(&[(old, &new)]));
        assert_rejected(
            &cfg,
            &[
                &format!("key `{key}`"),
                expected,
                &format!("found integer {big} (beyond 64 bits)"),
            ],
        );
        let o = gdrsim(&["check", s(&cfg)]);
        assert!(
            !text(&o.stderr).contains("any value"),
            "{}",
            text(&o.stderr)
        );
    }
}

#[test]
fn bad_input_wrong_type_for_a_quantity() {
    // A quantity is a number or a string with a unit; serde alone cannot say what was found.
    assert_edit_rejected(
        "bool-for-size",
        "mtu_bytes = 4096",
        "mtu_bytes = true",
        &[
            "key `machines[0].nics[0].mtu_bytes`",
            "expected a size in bytes",
            "found boolean true",
        ],
    );
}

#[test]
fn bad_input_duplicate_name_points_at_the_second_one() {
    assert_edit_rejected(
        "duplicate-gpu",
        r#"name = "gpu1""#,
        r#"name = "gpu0""#,
        &[
            "key `machines[0].gpus[1].name`",
            "machines[0].gpus[0].name is already \"gpu0\"",
            r#"found "gpu0" again"#,
        ],
    );
}

#[test]
fn bad_input_syntax_error_names_the_line() {
    // A key given twice: the second one is the error, on its own line.
    let text = default_toml();
    let line = text
        .lines()
        .position(|l| l.starts_with("seed ="))
        .expect("a seed line")
        + 2;
    let cfg = write_config(
        "duplicate-key",
        &default_with(&[("\nseed =", "\nseed = 1\nseed =")]),
    );
    assert_rejected(
        &cfg,
        &[
            "expected a TOML document",
            &format!("found a syntax error at line {line}, column 1"),
            "duplicate key",
        ],
    );
}

#[test]
fn bad_input_missing_file() {
    let missing = root().join("tests/bad_configs/does-not-exist.toml");
    assert!(!missing.exists());
    assert_rejected(
        &missing,
        &["expected a readable TOML file", "found an I/O error"],
    );
}

#[test]
fn bad_input_a_file_that_is_not_toml() {
    assert_rejected(
        &root().join("tests/bad_configs/not-toml.toml"),
        &["expected a TOML document", "found a syntax error at line 1"],
    );
}

// ---- topo and the examples ----------------------------------------------------------------------

#[test]
fn topo_prints_the_matrix_and_its_legend() {
    let o = gdrsim(&["topo"]);
    assert_ok(&o, "gdrsim topo");
    let out = text(&o.stdout);
    for needle in [
        "GPU0",
        "NIC0",
        "CPU Affinity",
        "PIX",
        "PHB",
        "SYS",
        "Legend:",
        "X    = Self",
        "PXB  = Connection traversing multiple PCIe bridges",
        "NIC Legend:",
    ] {
        assert!(out.contains(needle), "{needle:?} missing from:\n{out}");
    }
    // The matrix is symmetric in classes: the GPU0 row's NIC0 cell is the NIC0 row's GPU0 cell.
    let row = |name: &str| -> Vec<String> {
        out.lines()
            .find(|l| l.starts_with(&format!("{name}\t")))
            .unwrap_or_else(|| panic!("no {name} row"))
            .split('\t')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let header: Vec<String> = out
        .lines()
        .find(|l| l.starts_with('\t'))
        .expect("a header row")
        .split('\t')
        .map(|c| c.trim().to_string())
        .collect();
    let nic = header.iter().position(|c| c == "NIC0").unwrap();
    let gpu = header.iter().position(|c| c == "GPU0").unwrap();
    assert_eq!(row("GPU0")[nic], row("NIC0")[gpu]);
}

/// The first host's `topo -m` matrix of `gdrsim topo [config]`: (column names, rows by name).
fn topo_matrix(config: Option<&Path>) -> (Vec<String>, Vec<(String, Vec<String>)>) {
    let o = match config {
        Some(c) => gdrsim(&["topo", s(c)]),
        None => gdrsim(&["topo"]),
    };
    assert_ok(&o, "gdrsim topo");
    let out = text(&o.stdout);
    let mut lines = out.lines().skip_while(|l| !l.starts_with('\t'));
    let header: Vec<String> = lines
        .next()
        .expect("a header row")
        .split('\t')
        .skip(1)
        .map(|c| c.trim().to_string())
        .collect();
    let rows = lines
        .take_while(|l| !l.trim().is_empty())
        .map(|l| {
            let mut cells = l.split('\t').map(|c| c.trim().to_string());
            let name = cells.next().unwrap();
            (name, cells.collect())
        })
        .collect();
    (header, rows)
}

/// Asserts every GPU and NIC cell of a matrix against `want(row, column)`, and its symmetry.
fn assert_matrix(
    config: Option<&Path>,
    devices: &[&str],
    want: impl Fn(&str, &str) -> &'static str,
) {
    let (header, rows) = topo_matrix(config);
    for (name, cells) in &rows {
        assert!(devices.contains(&name.as_str()), "unexpected row {name}");
        for col in devices {
            let i = header
                .iter()
                .position(|h| h == col)
                .unwrap_or_else(|| panic!("no column {col}"));
            let expected = if name == col { "X" } else { want(name, col) };
            assert_eq!(cells[i], expected, "cell {name} x {col}");
        }
    }
    assert_eq!(rows.len(), devices.len(), "one row per device");
}

#[test]
fn topo_matrices_of_the_examples_cell_by_cell() {
    // The default config: GPU0 under the NIC's switch, GPU1 on a root port of the same root
    // complex, GPU2 on another root complex of socket 0, GPU3 on socket 1.
    let class = |a: &str, b: &str| -> &'static str {
        let place = |d: &str| match d {
            "GPU0" | "NIC0" => 0,
            "GPU1" => 1,
            "GPU2" => 2,
            _ => 3,
        };
        let (x, y) = (place(a).min(place(b)), place(a).max(place(b)));
        match (x, y) {
            (0, 0) => "PIX",
            (_, 3) => "SYS",
            (_, 2) => "NODE",
            _ => "PHB",
        }
    };
    assert_matrix(None, &["GPU0", "GPU1", "GPU2", "GPU3", "NIC0"], class);

    // topologies.toml: PIX, PXB (cascaded switches), PHB, NODE, SYS, one GPU each.
    let topologies = root().join("configs/topologies.toml");
    let rank = |d: &str| match d {
        "GPU0" | "NIC0" => 0,
        "GPU1" => 1,
        "GPU2" => 2,
        "GPU3" => 3,
        _ => 4,
    };
    assert_matrix(
        Some(&topologies),
        &["GPU0", "GPU1", "GPU2", "GPU3", "GPU4", "NIC0"],
        |a, b| match rank(a).max(rank(b)) {
            0 => "PIX",
            1 => "PXB",
            2 => "PHB",
            3 => "NODE",
            _ => "SYS",
        },
    );

    // DGX H100: GPU i and NIC i share a switch (PIX); pairs 0-3 on socket 0 and 4-7 on socket 1,
    // each switch on its own root port: NODE within a socket, SYS across.
    let dgx = root().join("configs/dgx-h100.toml");
    let names: Vec<String> = (0..8)
        .map(|i| format!("GPU{i}"))
        .chain((0..8).map(|i| format!("NIC{i}")))
        .collect();
    let devices: Vec<&str> = names.iter().map(String::as_str).collect();
    let index = |d: &str| d[3..].parse::<u32>().unwrap();
    assert_matrix(Some(&dgx), &devices, |a, b| {
        let (i, j) = (index(a), index(b));
        // Its GPUs are joined by the NVSwitch fabric, 18 links each.
        if a.starts_with("GPU") && b.starts_with("GPU") {
            "NV18"
        } else if i == j {
            "PIX"
        } else if i / 4 == j / 4 {
            "NODE"
        } else {
            "SYS"
        }
    });
}

#[test]
fn client_cpu_gpudirect_falls_back_to_staging() {
    let text = fs::read_to_string(root().join("configs/client-cpu.toml")).unwrap();
    let cfg = write_config(
        "client-small",
        &with_sizes(&text, r#"sizes = ["8B", "64KiB"]"#),
    );
    let out = run_config(&cfg, "client-small", &[]);
    let (h, rows) = csv_rows(&out.join("results.csv"));
    let col = |name: &str| h.iter().position(|x| x == name).unwrap();
    let direct: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r[col("path")] == "gpudirect")
        .collect();
    assert!(!direct.is_empty());
    for r in direct {
        assert_eq!(r[col("effective_path")], "staged", "{r:?}");
    }
}

#[test]
fn bad_input_read_with_the_staged_path() {
    assert_edit_rejected(
        "read-staged",
        "ops = [\"write_imm\"]",
        "ops = [\"read\"]",
        &["sweep.ops[0]", "staged", "read"],
    );
}

/// A client CPU's root complex refuses P2P reads (row B7): a GPUDirect RDMA Read from its GPU
/// has no route and no staging to fall back on, so the config is refused before any work.
#[test]
fn bad_input_read_from_a_gpu_the_nic_may_not_read() {
    let text = fs::read_to_string(root().join("configs/client-cpu.toml")).unwrap();
    let text = text
        .replace("ops = [\"write_imm\"]", "ops = [\"read\"]")
        .replace(
            "paths = [\"host\", \"staged\", \"gpudirect\"]",
            "paths = [\"gpudirect\"]",
        );
    assert!(text.contains("ops = [\"read\"]") && text.contains("paths = [\"gpudirect\"]"));
    let cfg = write_config("read-p2p", &text);
    assert_rejected(&cfg, &["scenarios[0]", "read on gpudirect", "refused"]);
}

#[test]
fn bad_input_unknown_op_and_no_ops() {
    assert_edit_rejected(
        "op-send",
        "ops = [\"write_imm\"]",
        "ops = [\"atomic\"]",
        &["sweep.ops[0]", "write_imm", "read"],
    );
    assert_edit_rejected(
        "no-ops",
        "ops = [\"write_imm\"]",
        "ops = []",
        &["sweep.ops", "at least one op"],
    );
}

#[test]
fn bad_input_unknown_buffer_kind() {
    assert_edit_rejected(
        "buffer-disk",
        "sender = { host = \"node-a\", nic = \"nic0\", gpu = \"gpu0\" }",
        "sender = { host = \"node-a\", nic = \"nic0\", gpu = \"gpu0\", buffer = \"disk\" }",
        &["scenarios[0].sender.buffer", "one of gpu, host", "disk"],
    );
    assert_edit_rejected(
        "bounce-kind",
        "sender = { host = \"node-a\", nic = \"nic0\", gpu = \"gpu0\" }",
        "sender = { host = \"node-a\", nic = \"nic0\", gpu = \"gpu0\", bounce = \"swap\" }",
        &[
            "scenarios[0].sender.bounce",
            "one of pinned, pageable",
            "swap",
        ],
    );
    assert_edit_rejected(
        "bounce-host",
        "sender = { host = \"node-a\", nic = \"nic0\", gpu = \"gpu0\" }",
        "sender = { host = \"node-a\", nic = \"nic0\", buffer = \"host\", bounce = \"pageable\" }",
        &[
            "scenarios[0].sender.bounce",
            "a side with GPU memory",
            "host-memory side",
        ],
    );
}

/// Issue #13, item 3: a size listed twice would give duplicate rows, and a range past the
/// 16 GiB limit was cut short silently: both refused, naming the key.
#[test]
fn bad_input_duplicate_sizes_and_a_range_past_16_gib() {
    let dup = write_config(
        "dup-sizes",
        &with_sizes(&default_toml(), "sizes = [\"4KiB\", \"8B\", \"4KiB\"]"),
    );
    assert_rejected(&dup, &["sweep.sizes[2]", "listed once", "sweep.sizes[0]"]);
    let big = write_config(
        "big-range",
        &with_sizes(
            &default_toml(),
            "sizes = { from = \"8B\", to = \"17GiB\", factor = 2 }",
        ),
    );
    assert_rejected(&big, &["sweep.sizes.to", "up to 16 GiB"]);
}

/// Issue #13, item 5: a name that cannot be a folder, and an output path that cannot be
/// written, are bad input: exit 2 before any simulation (they failed with exit 1 at the end).
#[test]
fn bad_input_unusable_name_and_output_path() {
    let long = format!("name = \"{}\"", "x".repeat(300));
    assert_edit_rejected(
        "long-name",
        "name = \"default\"",
        &long,
        &["`name`", "1 to 100"],
    );
    assert_edit_rejected(
        "slash-name",
        "name = \"default\"",
        "name = \"a/b\"",
        &["`name`"],
    );
    let file = scratch("out-is-a-file");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(&file, b"x").unwrap();
    let started = std::time::Instant::now();
    let o = gdrsim(&["run", "--quiet", "--out", s(&file)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("--out") && text(&o.stderr).contains("not a folder"));
    assert!(
        started.elapsed().as_secs_f64() < 5.0,
        "refused before simulating"
    );
}

/// Issue #27, item 15: the name was bounded in characters, so 100 CJK characters (300 bytes)
/// passed `check` and `run` failed at the end with "File name too long" (exit 1). It is
/// bounded in bytes; a name at the bound runs, into the longest folder name gdrsim derives
/// from it (a shard's), twice, so that the earlier folder is also set aside and replaced.
#[test]
fn bad_input_name_too_long_in_bytes() {
    let cjk = format!("name = \"{}\"", "名".repeat(100));
    assert_edit_rejected(
        "cjk-name",
        "name = \"default\"",
        &cjk,
        &["`name`", "1 to 100 bytes", "(300 bytes)"],
    );
    let at_bound = format!("{}x", "名".repeat(33));
    assert_eq!(at_bound.len(), 100);
    let cfg = write_config(
        "cjk-name-at-bound",
        &with_sizes(
            &default_with(&[("name = \"default\"", &format!("name = \"{at_bound}\""))]),
            "sizes = [\"8B\"]",
        ),
    );
    let out = scratch("cjk-name-at-bound").join(format!("{at_bound}-shard-9999-of-10000"));
    for _ in 0..2 {
        let args = ["run", s(&cfg), "--quiet", "--out", s(&out)];
        assert_ok(&gdrsim(&args), "a 100-byte name");
    }
    assert!(out.join("results.csv").is_file());
}

/// Issue #13, item 9: a config read from /dev/zero stops at 16 MiB instead of exhausting
/// memory; a host buffer base that would wrap past 2^64 is refused like a GPU heap base.
#[test]
fn bad_input_endless_file_and_wrapping_host_buffer_base() {
    if Path::new("/dev/zero").exists() {
        assert_rejected(Path::new("/dev/zero"), &["/dev/zero", "at most 16 MiB"]);
    }
    assert_edit_rejected(
        "host-base-wraps",
        "host_buffer_base = 0x10000000",
        "host_buffer_base = 0xFFFFFFFFFFFFF000",
        &["machines[0].host_buffer_base", "below 2^64"],
    );
}

/// Issue #13, item 1: values bounded one by one can still multiply past u64 picoseconds. A
/// cable of 100 km at 10 s per metre is refused naming both keys; so is a config whose runs
/// (100,000 iterations of messages that each cross 65 cables of 1 s per metre) would pass the
/// simulator's 53-day horizon, before any work.
#[test]
fn bad_input_times_whose_product_passes_the_horizon() {
    assert_edit_rejected_all(
        "cable-product",
        &[
            ("cable_m = 3", "cable_m = 100000"),
            (
                "propagation_ns_per_m = 5 ",
                "propagation_ns_per_m = \"1ms\" ",
            ),
        ],
        &[
            "key `network.cable_m`",
            "cable_m x propagation_ns_per_m",
            "100000 m x 1000000000 ps/m",
        ],
    );
    let cfg = write_config(
        "horizon",
        &default_with(&[
            ("cable_m = 3", "cable_m = 100000"),
            (
                "propagation_ns_per_m = 5 ",
                "propagation_ns_per_m = \"100us\" ",
            ),
        ]),
    );
    let out = gdrsim(&["check", s(&cfg)]);
    assert!(out.status.success(), "10 s cables are long but legal");
    assert_edit_rejected_all(
        "horizon-run",
        &[
            ("iterations = 60 ", "iterations = 100000 "),
            (
                "propagation_ns_per_m = 5 ",
                "propagation_ns_per_m = \"1s\" ",
            ),
            ("switch_hops = 1", "switch_hops = 64"),
        ],
        &[
            "key `sim.iterations`",
            "horizon of 53.4 days",
            "100000 messages",
        ],
    );
}

/// Issue #28 item 11: the horizon error blamed `sim.iterations` without saying which point
/// crossed it. It names the scenario, the path and the size: here only the pipeline, whose
/// chunks each pay the hosts' fixed costs, crosses, at 4 GiB (512 iterations within the
/// budget), and GPUDirect, moving the message whole, does not.
#[test]
fn the_horizon_error_names_the_point_that_crosses_it() {
    assert_edit_rejected_all(
        "horizon-point",
        &[
            ("iterations = 60 ", "iterations = 100000 "),
            (
                "iteration_budget_bytes = \"512MiB\"",
                "iteration_budget_bytes = \"2TiB\"",
            ),
            (
                "sizes = { from = \"1B\", to = \"1GiB\", factor = 2 }",
                "sizes = [\"4KiB\", \"4GiB\"]",
            ),
            (
                "paths = [\"host\", \"staged\", \"gpudirect\"]",
                "paths = [\"gpudirect\", \"staged_pipelined\"]",
            ),
        ],
        &[
            "key `sim.iterations`",
            "horizon of 53.4 days",
            "scenario `PIX`, path staged_pipelined, 4 GiB messages",
            "512 messages x 1 flow x",
        ],
    );
}

/// Issue #13, item 2: `granularity = "tlp"` with a 16 GiB message exhausted memory; TLP by TLP
/// is bounded to 16 MiB messages, refused above before any work.
#[test]
fn bad_input_tlp_granularity_for_large_messages() {
    assert_edit_rejected_all(
        "tlp-large",
        &[
            ("granularity = \"auto\"", "granularity = \"tlp\""),
            (
                "sizes = { from = \"1B\", to = \"1GiB\", factor = 2 }",
                "sizes = [\"4KiB\", \"16GiB\"]",
            ),
        ],
        &[
            "key `sim.granularity`",
            "above 16 MiB",
            "\"tlp\" with a 16 GiB message",
        ],
    );
}

fn assert_edit_rejected_all(name: &str, edits: &[(&str, &str)], needles: &[&str]) {
    let cfg = write_config(name, &default_with(edits));
    assert_rejected(&cfg, needles);
}

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

/// Waits up to 60 s for `path` to exist.
fn wait_for(path: &Path) -> bool {
    for _ in 0..600 {
        if path.exists() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    false
}

/// Issue #13, item 4: a run's folder is one unit. A second run into a folder another run is
/// writing is refused (exit 2) before any work; a run killed with SIGKILL leaves the previous
/// folder whole (its manifest matches every file) and no stale lock: the next run goes ahead
/// and replaces it whole, charts no longer asked for included.
#[test]
fn output_folders_are_whole_under_concurrency_and_kill() {
    let base = scratch("whole");
    fs::create_dir_all(&base).unwrap();
    let dir = base.join("out");
    let lock = base.join(".out.gdrsim.lock");
    // A first complete run, with every chart.
    let o = gdrsim(&["run", "--quiet", "--out", s(&dir)]);
    assert_ok(&o, "first run");
    assert_whole(&dir);
    assert!(dir.join("speedup.svg").exists());

    // A run in progress holds the folder: a second one is refused at once.
    let mut first = Command::new(BIN)
        .args(["run", "--quiet", "--out", s(&dir)])
        .current_dir(root())
        .spawn()
        .unwrap();
    assert!(wait_for(&lock), "the running gdrsim takes its lock");
    let second = gdrsim(&["run", "--quiet", "--out", s(&dir)]);
    assert_eq!(second.status.code(), Some(2));
    assert!(
        text(&second.stderr).contains("another gdrsim run"),
        "{}",
        text(&second.stderr)
    );
    // Killed mid-run: the old folder stays whole, the lock is left behind but stale.
    first.kill().unwrap();
    first.wait().unwrap();
    assert_whole(&dir);

    // The next run (only the latency chart this time) clears the stale lock and replaces the
    // folder whole: no chart of the earlier run is left.
    let cfg = write_config(
        "whole-cfg",
        &default_with(&[(
            "charts = [\"latency\", \"bandwidth\", \"speedup\", \"breakdown\", \"scenarios\"]",
            "charts = [\"latency\"]",
        )]),
    );
    let o = gdrsim(&["run", s(&cfg), "--quiet", "--out", s(&dir)]);
    assert_ok(&o, "run after a kill");
    assert_whole(&dir);
    assert!(
        !dir.join("speedup.svg").exists(),
        "a chart no longer asked for is gone"
    );
    let left: Vec<String> = fs::read_dir(&base)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        left,
        vec!["out".to_string()],
        "no lock or temporary folder left"
    );
    fs::remove_dir_all(&base).unwrap();
}

/// Issue #13: a full disk. A run that cannot write its folder fails (exit 1, the OS error
/// named) and leaves the previous folder whole, with no temporary folder or lock beside it.
/// Needs a small tmpfs, so it mounts one where it may (as root) and says it skipped otherwise.
#[test]
fn a_full_disk_fails_cleanly_and_keeps_the_previous_folder() {
    let base = scratch("full-disk");
    fs::create_dir_all(&base).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=512k", "tmpfs", s(&base)])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|st| st.success());
    if !mounted {
        eprintln!(
            "skipped: no tmpfs could be mounted at {} (not root)",
            base.display()
        );
        return;
    }
    /// Unmounts when the test ends, passed or failed.
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).status();
        }
    }
    let _unmount = Unmount(&base);
    let dir = base.join("out");
    let small = write_config(
        "full-disk-small",
        &default_with(&[
            (
                "sizes = { from = \"1B\", to = \"1GiB\", factor = 2 }",
                "sizes = [\"1B\", \"4KiB\"]",
            ),
            (
                "charts = [\"latency\", \"bandwidth\", \"speedup\", \"breakdown\", \"scenarios\"]",
                "charts = [\"latency\"]",
            ),
            ("formats = [\"svg\", \"png\"]", "formats = [\"svg\"]"),
        ]),
    );
    let o = gdrsim(&["run", s(&small), "--quiet", "--out", s(&dir)]);
    assert_ok(&o, "a small run that fits");
    assert_whole(&dir);
    let before = read(&dir.join("manifest.json"));
    // The whole default study (charts of megabytes) does not fit.
    let o = gdrsim(&["run", "--quiet", "--out", s(&dir)]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("No space left on device"),
        "{}",
        text(&o.stderr)
    );
    assert_whole(&dir);
    assert_eq!(
        read(&dir.join("manifest.json")),
        before,
        "the earlier run is kept"
    );
    let left: Vec<String> = fs::read_dir(&base)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        left,
        vec!["out".to_string()],
        "no temporary folder or lock left"
    );
}

/// Issue #13, item 8: a legal but implausible value (a 0.1 ns network switch) is a warning on
/// stderr naming the key and the usual range; `--strict` makes it an error (exit 2) before any
/// work; every shipped config passes `--strict`.
#[test]
fn implausible_values_warn_and_strict_refuses_them() {
    let cfg = write_config(
        "implausible",
        &default_with(&[("switch_latency_ns = 130 ", "switch_latency_ns = 0.1 ")]),
    );
    let o = gdrsim(&["check", s(&cfg)]);
    assert_ok(&o, "check with a warning");
    let err = text(&o.stderr);
    assert!(
        err.starts_with("warning: ") && err.contains("key `network.switch_latency_ns`: 0.1 ns"),
        "{err}"
    );
    for args in [
        vec!["check", s(&cfg), "--strict"],
        vec!["run", s(&cfg), "--strict", "--out", "never-written"],
    ] {
        let o = gdrsim(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(text(&o.stderr).contains("expected a plausible value"));
    }
    assert!(!root().join("never-written").exists());
    for c in fs::read_dir(root().join("configs")).unwrap() {
        let c = c.unwrap().path();
        // configs/presets/ holds machines, not configs (tests/it/presets.rs checks them).
        if c.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let o = gdrsim(&["check", "--strict", s(&c)]);
        assert_ok(&o, &format!("check --strict {}", c.display()));
        assert!(o.stderr.is_empty(), "{}: {}", c.display(), text(&o.stderr));
    }
}

/// Issue #13, item 7: every message names the key, what was expected and what was written, on
/// one line: integers beyond 64 bits, floats beyond range, an empty array for a table, a
/// duplicate key (named, with its line), a size past 16 GiB as written; `-` reads stdin.
#[test]
fn bad_input_messages_name_what_was_written() {
    for (name, edits, needles) in [
        (
            "int-128",
            vec![("iterations = 60 ", "iterations = 99999999999999999999 ")],
            vec![
                "key `sim.iterations`",
                "integer 99999999999999999999 (beyond 64 bits)",
            ],
        ),
        (
            "float-inf",
            vec![("iterations = 60 ", "iterations = 1e9999 ")],
            vec!["key `sim.iterations`", "beyond the range of a 64-bit float"],
        ),
        (
            "empty-receiver",
            vec![(
                "receiver = { host = \"node-b\", nic = \"nic0\", gpu = \"gpu0\" }",
                "receiver = []",
            )],
            vec![
                "key `scenarios[0].receiver`",
                "expected a table",
                "an array of 0 values",
            ],
        ),
        (
            "dup-key",
            vec![("iterations = 60 ", "iterations = 60\niterations = 61 ")],
            vec!["line 20", "duplicate key `iterations`"],
        ),
        (
            "size-17g",
            vec![(
                "sizes = { from = \"1B\", to = \"1GiB\", factor = 2 }",
                "sizes = [\"17GiB\"]",
            )],
            vec!["key `sweep.sizes`", "found 17 GiB (18253611008 bytes)"],
        ),
    ] {
        let cfg = write_config(name, &default_with(&edits));
        assert_rejected(&cfg, &needles);
    }
    let o = Command::new(BIN)
        .args(["check", "-"])
        .current_dir(root())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write as _;
            c.stdin
                .take()
                .unwrap()
                .write_all(default_toml().as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert_ok(&o, "check - (stdin)");
    assert!(text(&o.stdout).starts_with("-: ok"));
}

/// Issue #12: `run --shard K/N` then `merge` gives the folder a single run writes, byte for
/// byte, whatever the shard count and threads; merge refuses, as bad input naming the shard, a
/// missing or repeated shard (one folder twice, or a copy of it), a shard of another study and
/// a truncated one.
#[test]
fn shards_merge_to_the_single_run() {
    let base = scratch("shards");
    fs::create_dir_all(&base).unwrap();
    let cfg = write_config(
        "shards-cfg",
        &default_with(&[(
            "sizes = { from = \"1B\", to = \"1GiB\", factor = 2 }",
            "sizes = { from = \"1B\", to = \"16MiB\", factor = 4 }",
        )]),
    );
    let single = base.join("single");
    assert_ok(
        &gdrsim(&["run", s(&cfg), "--quiet", "--out", s(&single)]),
        "single run",
    );
    for (n, jobs) in [(3u32, "1"), (5, "2")] {
        let dirs: Vec<PathBuf> = (0..n).map(|k| base.join(format!("n{n}-s{k}"))).collect();
        for (k, d) in dirs.iter().enumerate() {
            let shard = format!("{k}/{n}");
            let o = gdrsim(&[
                "run",
                s(&cfg),
                "--shard",
                &shard,
                "--jobs",
                jobs,
                "--out",
                s(d),
            ]);
            assert_ok(&o, &format!("shard {shard}"));
            assert!(text(&o.stdout).contains(&format!("wrote shard {shard}")));
        }
        let merged = base.join(format!("merged-{n}"));
        let mut args = vec!["merge", s(&merged), "--quiet"];
        args.extend(dirs.iter().map(|d| s(d)));
        assert_ok(&gdrsim(&args), "merge");
        let mut files: Vec<String> = fs::read_dir(&single)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        assert!(files.len() >= 8, "{files:?}");
        for f in &files {
            assert!(
                read(&single.join(f)) == read(&merged.join(f)),
                "{f} of {n} merged shards differs from the single run"
            );
        }
    }
    let d = |k: u32| base.join(format!("n3-s{k}"));
    let refused = |args: &[&str], needle: &str| {
        let o = gdrsim(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains(needle),
            "{args:?}: {}",
            text(&o.stderr)
        );
        assert!(!base.join("bad").exists(), "{args:?} wrote a folder");
    };
    let bad = base.join("bad");
    refused(&["merge", s(&bad), s(&d(0)), s(&d(2))], "shard 1/3 missing");
    refused(
        &["merge", s(&bad), s(&d(0)), s(&d(1)), s(&d(1)), s(&d(2))],
        "the same folder twice",
    );
    // A copy of a shard folder is the same shard twice.
    let copy = base.join("n3-s1-copy");
    fs::create_dir_all(&copy).unwrap();
    for e in fs::read_dir(d(1)).unwrap() {
        let e = e.unwrap();
        fs::copy(e.path(), copy.join(e.file_name())).unwrap();
    }
    refused(
        &["merge", s(&bad), s(&d(0)), s(&d(1)), s(&copy), s(&d(2))],
        "shard 1/3 twice",
    );
    let other = base.join("other-seed");
    assert_ok(
        &gdrsim(&[
            "run",
            s(&cfg),
            "--seed",
            "9",
            "--shard",
            "1/3",
            "--quiet",
            "--out",
            s(&other),
        ]),
        "a shard of another seed",
    );
    refused(
        &["merge", s(&bad), s(&d(0)), s(&other), s(&d(2))],
        "another study",
    );
    let rows = d(2).join("rows.jsonl");
    let full = read(&rows);
    fs::write(&rows, &full[..full.len() / 2]).unwrap();
    refused(
        &["merge", s(&bad), s(&d(0)), s(&d(1)), s(&d(2))],
        "rows.jsonl",
    );
    fs::write(&rows, &full).unwrap();
    refused(
        &["run", s(&cfg), "--shard", "3/3", "--out", s(&bad)],
        "--shard",
    );
}

/// Issue #28 item 11: bare `gdrsim` is `gdrsim run`, but `gdrsim --quiet` (run's options
/// without the word `run`) was refused. Run's options come first as they would after `run`; a
/// mistyped command is still named as one, and `--help` and `--version` are gdrsim's own.
#[test]
fn run_options_without_the_word_run_run_the_study() {
    let dir = scratch("bare-options");
    let o = gdrsim(&[
        "--quiet",
        "--seed",
        "7",
        "--out",
        s(&dir),
        "configs/ring.toml",
    ]);
    assert_ok(&o, "gdrsim --quiet --seed 7 --out DIR configs/ring.toml");
    assert!(o.stdout.is_empty(), "--quiet: {}", text(&o.stdout));
    assert!(dir.join("results.csv").exists());
    let report = fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        report.contains("gdrsim run configs/ring.toml --seed 7"),
        "{report}"
    );
    let o = gdrsim(&["chekc"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("unrecognized subcommand 'chekc'"));
    let o = gdrsim(&["--version"]);
    assert_ok(&o, "--version");
    assert!(text(&o.stdout).starts_with("gdrsim "));
    let o = gdrsim(&["--help"]);
    assert_ok(&o, "--help");
    assert!(text(&o.stdout).contains("With no command, gdrsim is gdrsim run"));
}

/// Issue #28 item 11: the costliest of thousands of points is a small share of the events,
/// and `check` printed it as "(0% of the events)"; it keeps two significant digits.
#[test]
fn check_gives_a_small_costliest_share_its_digits() {
    let mut toml = default_toml();
    for i in 0..40 {
        toml.push_str(&format!(
            "\n[[scenarios]]\nname = \"copy {i}\"\nsender = {{ host = \"node-a\", nic = \"nic0\", gpu = \"gpu0\" }}\nreceiver = {{ host = \"node-b\", nic = \"nic0\", gpu = \"gpu0\" }}\n"
        ));
    }
    let cfg = write_config("many-points", &toml);
    let o = gdrsim(&["check", s(&cfg)]);
    assert_ok(&o, "check");
    let out = text(&o.stdout);
    let share = out
        .split("costliest point: ")
        .nth(1)
        .and_then(|t| t.split(" (").nth(1))
        .and_then(|t| t.split("% of the events)").next())
        .unwrap_or_else(|| panic!("no costliest point: {out}"));
    let v: f64 = share
        .parse()
        .unwrap_or_else(|_| panic!("{share:?} in {out}"));
    assert!(v > 0.0 && v < 1.0, "{out}");
    assert!(
        share.starts_with("0.") && share.len() >= 4,
        "two digits: {out}"
    );
}

/// Issue #12: `check` prints a study's estimated cost; `run` refuses, before any work and as
/// bad input, a study estimated above `--max-events`, naming its costliest points.
#[test]
fn costly_studies_are_estimated_and_refused_before_any_work() {
    let o = gdrsim(&["check", "configs/default.toml"]);
    assert_ok(&o, "check");
    let out = text(&o.stdout);
    assert!(
        out.contains("estimated: ") && out.contains(" events, about ") && out.contains("peak"),
        "{out}"
    );
    let dir = scratch("too-costly");
    let o = gdrsim(&["run", "--max-events", "1000000", "--out", s(&dir)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("--max-events") && err.contains("the costliest: ") && err.contains("staged"),
        "{err}"
    );
    assert!(!dir.exists(), "a refused run wrote {}", dir.display());
    // A shard is judged by its own points: one sixth of the study fits.
    let o = gdrsim(&[
        "run",
        "--max-events",
        "3000000",
        "--shard",
        "0/6",
        "--quiet",
        "--out",
        s(&dir),
    ]);
    assert_ok(&o, "a shard within the limit");
}

/// Issue #11: `sensitivity` varies every estimate and names the conclusions one of them flips.
/// On the default machine the NIC's read requests (an estimate) decide whether GPUDirect or
/// staging streams faster on PHB and SYS: halving MRRS flips them. (Without its CPU family:
/// the sapphire-rapids caps on P2P through the root complex and across UPI leave PHB and SYS to
/// staging whatever the MRRS.)
#[test]
fn sensitivity_names_the_estimates_a_conclusion_hangs_on() {
    let family = ("cpu_family = \"sapphire-rapids\"", "cpu_family = \"none\"");
    let cfg = write_config(
        "sensitivity-cfg",
        &default_with(&[
            (
                "sizes = { from = \"1B\", to = \"1GiB\", factor = 2 }",
                "sizes = [\"4KiB\", \"1MiB\", \"64MiB\"]",
            ),
            family,
            family,
        ]),
    );
    let csv = scratch("sensitivity").with_extension("csv");
    let chart = scratch("sensitivity-chart").with_extension("svg");
    let o = gdrsim(&[
        "sensitivity",
        s(&cfg),
        "--quiet",
        "--csv",
        s(&csv),
        "--chart",
        s(&chart),
    ]);
    assert_ok(&o, "sensitivity");
    // --chart: the tornado chart, with the estimate that flips the SYS bandwidth conclusion.
    let svg = text(&read(&chart));
    assert!(svg.trim_start().starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(
        svg.contains("Sensitivity: what each estimate does")
            && svg.contains("\nnics[0].mrrs_bytes (flips)\n"),
        "{svg}"
    );
    let out = text(&o.stdout);
    assert!(
        out.contains("estimates, each scaled by 25% up and down"),
        "{out}"
    );
    assert!(
        out.contains("Fragile conclusions")
            && out.contains("machines[0].nics[0].mrrs_bytes /2")
            && out.contains("gpudirect -> staged"),
        "{out}"
    );
    let table = text(&read(&csv));
    assert!(table.starts_with(
        "parameter,change,value,max_ratio_change,where,flips,max_bandwidth_change,\
         bandwidth_where,crossovers_moved\n"
    ));
    assert!(table.lines().count() > 20, "{table}");
    // `run --sensitivity` marks the same conclusions fragile in its report.
    let dir = scratch("sensitivity-run");
    let o = gdrsim(&["run", s(&cfg), "--sensitivity", "--quiet", "--out", s(&dir)]);
    assert_ok(&o, "run --sensitivity");
    let md = text(&read(&dir.join("report.md")));
    assert!(
        md.contains("## Fragile conclusions") && md.contains("mrrs_bytes /2"),
        "{md}"
    );
    assert!(md.contains("--sensitivity 25%"), "the reproducing command");
    assert!(dir.join("sensitivity.csv").is_file());
    // The tornado chart beside it (in the config's formats), linked from the section.
    assert!(dir.join("tornado.svg").is_file() && dir.join("tornado.png").is_file());
    let section = md
        .split("## Fragile conclusions")
        .nth(1)
        .and_then(|r| r.split("\n## ").next())
        .unwrap_or_default();
    assert!(
        section.contains("[SVG](tornado.svg)") && section.contains("[PNG](tornado.png)"),
        "{section}"
    );
    assert_eq!(md.matches("tornado.svg").count(), 1, "linked there only");
    assert_whole(&dir);
    // A bad --chart is refused before any work: the CSV, written after the study, is not.
    let before = scratch("sensitivity-never").with_extension("csv");
    for bad in [
        vec!["sensitivity", "--delta", "0%"],
        vec!["sensitivity", "--csv", "no/such/folder/x.csv"],
        vec![
            "sensitivity",
            "--csv",
            s(&before),
            "--chart",
            "no/such/folder/t.svg",
        ],
        vec!["sensitivity", "--csv", s(&before), "--chart", "tornado.txt"],
        vec![
            "run",
            "--sensitivity",
            "--shard",
            "0/2",
            "--out",
            "never-written",
        ],
    ] {
        let o = gdrsim(&bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", text(&o.stderr));
    }
    assert!(!before.exists() && !Path::new("tornado.txt").exists());
}

/// Issue #11: `perftest` prints perftest's layout from the simulated machine. On the default
/// machine (H100 + ConnectX-7 NDR, PIX), GPUDirect ib_write_bw at 8 MiB reaches within 3% of
/// row A21's measured 392.8 Gb/s; `-a` sweeps perftest's 23 sizes; ib_write_lat --use_cuda is
/// refused as perftest refuses it.
#[test]
fn perftest_reports_in_perftests_layout() {
    let o = gdrsim(&[
        "perftest",
        "ib_write_bw",
        "--use_cuda",
        "--report_gbits",
        "-s",
        "8MiB",
    ]);
    assert_ok(&o, "ib_write_bw");
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "-".repeat(87));
    assert_eq!(lines[1], "                    RDMA_Write BW Test");
    assert!(out.contains(" Max inline data : 0[B]\n"), "{out}");
    let header = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]";
    let at = lines
        .iter()
        .position(|l| *l == header)
        .expect("the BW header");
    let row: Vec<&str> = lines[at + 1].split_whitespace().collect();
    assert_eq!(&row[..2], ["8388608", "5000"]);
    let avg: f64 = row[3].parse().unwrap();
    assert!(
        (avg / 392.8 - 1.0).abs() < 0.03,
        "BW average {avg} Gb/s against A21's 392.8"
    );
    let o = gdrsim(&["perftest", "ib_send_bw", "-a", "-n", "200"]);
    assert_ok(&o, "ib_send_bw -a");
    let rows = text(&o.stdout)
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some("200"))
        .count();
    assert_eq!(rows, 23, "{}", text(&o.stdout));
    let o = gdrsim(&["perftest", "ib_read_lat", "-n", "500"]);
    assert_ok(&o, "ib_read_lat");
    let out = text(&o.stdout);
    assert!(out.contains(" Outstand reads  : 16\n") && out.contains("99.9% percentile[usec]"));
    for bad in [
        vec!["perftest", "ib_write_lat", "--use_cuda"],
        vec!["perftest", "ib_atomic_bw"],
        vec!["perftest", "ib_write_bw", "-n", "1"],
    ] {
        let o = gdrsim(&bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", text(&o.stderr));
    }
}

/// The figures of a perftest bandwidth run's one result row: #iterations, BW peak, BW
/// average, MsgRate.
fn bw_row(args: &[&str]) -> (String, u64, f64, f64, f64) {
    let o = gdrsim(args);
    assert_ok(&o, &args.join(" "));
    let out = text(&o.stdout);
    let header = out
        .lines()
        .position(|l| l.starts_with(" #bytes     #iterations"))
        .expect("the BW header");
    let row: Vec<&str> = out
        .lines()
        .nth(header + 1)
        .unwrap()
        .split_whitespace()
        .collect();
    let f = |i: usize| row[i].parse::<f64>().unwrap();
    (out.clone(), row[1].parse().unwrap(), f(2), f(3), f(4))
}

/// Issue #11, perftest `-q` and `-b`. `-q N` runs N QPs from perftest's one single-threaded
/// process: #iterations is `-n` times N (print_report_bw's num_of_calculated_iters). At 4 KiB
/// one QP of ib_read_bw is bound by its 16 reads in flight (max_rd_atomic: 16 x 4 KiB per
/// round trip, about 3.3 us with BlueFlame posts: 159 Gb/s), so two QPs carry more (172: the
/// 4 KiB read's own ceiling); but the one thread posts every message, so no QP count
/// beats one post per `post_ns` (100 ns on the default config: 10 Mpps). `-b` sums both sides'
/// reports (print_full_bw_report): the model's links are full duplex, so an 8 MiB GPUDirect
/// Write both ways carries twice one way, within 2%, and never more than twice the 400 Gb/s
/// wire. Latency tests refuse both options as perftest does.
#[test]
fn perftest_queue_pairs_share_one_process_and_both_directions_add_up() {
    let read = |q: &str| {
        bw_row(&[
            "perftest",
            "ib_read_bw",
            "-s",
            "4096",
            "-n",
            "1000",
            "-q",
            q,
            "--report_gbits",
        ])
    };
    let (out1, n1, _, avg1, _) = read("1");
    let (out2, n2, _, avg2, _) = read("2");
    let (_, n8, _, avg8, rate8) = read("8");
    assert!(out1.contains(" Number of qps   : 1\t") && out2.contains(" Number of qps   : 2\t"));
    assert_eq!((n1, n2, n8), (1000, 2000, 8000));
    assert!(avg2 > avg1 * 1.05, "two QPs {avg2} Gb/s against one {avg1}");
    assert!(avg8 >= avg2 * 0.98, "eight QPs {avg8} against two {avg2}");
    assert!(rate8 <= 10.0, "one thread posts at most 10 Mpps: {rate8}");
    let write = |b: bool| {
        let mut a = vec![
            "perftest",
            "ib_write_bw",
            "-s",
            "8MiB",
            "-n",
            "300",
            "--use_cuda",
            "--report_gbits",
        ];
        if b {
            a.push("-b");
        }
        bw_row(&a)
    };
    let (_, _, _, one, _) = write(false);
    let (out, n, peak, both, _) = write(true);
    assert!(out.contains("RDMA_Write Bidirectional BW Test\n"), "{out}");
    assert_eq!(n, 300, "each side's iterations, as perftest prints them");
    assert!(
        (both / (2.0 * one) - 1.0).abs() < 0.02,
        "both ways {both} Gb/s against one way {one}"
    );
    assert!(both <= 800.0 && peak <= 800.0, "{both} {peak}");
    for bad in [
        vec!["perftest", "ib_write_lat", "-b"],
        vec!["perftest", "ib_send_lat", "-q", "2"],
        vec!["perftest", "ib_write_bw", "-q", "0"],
        vec!["perftest", "ib_write_bw", "-q", "100", "-b"],
        vec!["perftest", "ib_write_bw", "-t", "0"],
        vec!["perftest", "ib_write_bw", "-t", "15001"],
    ] {
        let o = gdrsim(&bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains("key `-"), "{}", text(&o.stderr));
    }
    // perftest never keeps more in flight than an iterations run posts (force_dependecies).
    let o = gdrsim(&[
        "perftest",
        "ib_write_bw",
        "-n",
        "10",
        "-t",
        "64",
        "-s",
        "4096",
    ]);
    assert_ok(&o, "-t above -n");
    assert!(text(&o.stdout).contains(" TX depth        : 10\n"));
}

/// Issue #11: `validate` runs the embedded validation set; a row that passed and no longer
/// does fails the command (exit 1, naming it); a malformed set is bad input (exit 2).
#[test]
fn validate_fails_when_a_passing_row_stops_passing() {
    let o = gdrsim(&["validate"]);
    assert_ok(&o, "validate");
    let out = text(&o.stdout);
    assert!(
        out.contains("median absolute error") && out.contains("A21"),
        "{out}"
    );
    let set = write_config(
        "validation-broken",
        &text(&read(&root().join("data/validation.toml")))
            .replace("published = 392.9", "published = 300.0"),
    );
    let o = gdrsim(&["validate", "--set", s(&set)]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("A21"), "{}", text(&o.stderr));
    let bad = write_config("validation-bad", "[[row]]\nid = 3\n");
    let o = gdrsim(&["validate", "--set", s(&bad)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
}

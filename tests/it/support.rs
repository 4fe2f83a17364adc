//! Shared helpers for the model tests: configs derived from the embedded default by text edits
//! (so they follow it), and single points simulated through the public API.

use gdrsim::components::{Fabric, Outcome, SimOptions};
use gdrsim::config::{self, Config, Op, PathKind};
use gdrsim::record::Recorder;
use gdrsim::scenario::{self, Point, PointResult};
use gdrsim::stats::Summary;

/// The default config with each `(from, to)` text replacement applied (each must match).
pub fn cfg_with(edits: &[(&str, &str)]) -> Config {
    cfg_from(config::DEFAULT_TOML, edits)
}

/// `text` with its sockets' CPU family (sapphire-rapids) replaced by none: no P2P caps, for
/// tests of mechanisms the family's caps would hide.
pub fn without_family(text: &str) -> String {
    assert!(text.contains("cpu_family = \"sapphire-rapids\""));
    text.replace(
        "cpu_family = \"sapphire-rapids\"",
        "cpu_family = \"none\"           ",
    )
}

/// The default config without its CPU family (see [`without_family`]), then `edits`.
pub fn cfg_without_family(edits: &[(&str, &str)]) -> Config {
    cfg_from(&without_family(config::DEFAULT_TOML), edits)
}

/// `text` with each `(from, to)` text replacement applied (each must match), loaded.
pub fn cfg_from(text: &str, edits: &[(&str, &str)]) -> Config {
    let mut text = text.to_string();
    for (from, to) in edits {
        assert!(
            text.contains(from),
            "edit target not found in default.toml: {from}"
        );
        text = text.replacen(from, to, 1);
    }
    config::parse(&text, "test.toml").unwrap_or_else(|e| panic!("test config invalid: {e}"))
}

pub fn default_cfg() -> Config {
    cfg_with(&[])
}

pub fn scenario_index(cfg: &Config, name: &str) -> usize {
    cfg.scenarios
        .iter()
        .position(|s| s.name == name)
        .expect("scenario exists")
}

/// The write-with-immediate point of `scenario`, `path` and `size`, seeded as `gdrsim run`
/// seeds it.
pub fn point_of(cfg: &Config, scenario: &str, path: PathKind, size: u64) -> Point {
    let si = scenario_index(cfg, scenario);
    let op = gdrsim::config::Op::WriteImm;
    Point::at(cfg.seed, si, path, op, size)
}

/// Simulates one point as `gdrsim run` does.
pub fn point(cfg: &Config, scenario: &str, path: PathKind, size: u64) -> PointResult {
    let topo = scenario::topology(cfg);
    scenario::simulate_point(cfg, &topo, &point_of(cfg, scenario, path, size))
}

/// The first scenario's write-with-immediate point of `path` and `size`, seed 1, simulated:
/// the summary.
pub fn first_summary(cfg: &Config, path: PathKind, size: u64) -> Summary {
    let topo = scenario::topology(cfg);
    let p = Point {
        scenario: 0,
        path,
        op: gdrsim::config::Op::WriteImm,
        size,
        seed: 1,
        variant: 0,
    };
    scenario::simulate_point(cfg, &topo, &p).summary
}

pub fn summary(cfg: &Config, scenario: &str, path: PathKind, size: u64) -> Summary {
    point(cfg, scenario, path, size).summary
}

/// One noise-free message (or a stream) through the fabric directly, with recording.
pub fn run_fabric(
    cfg: &Config,
    scenario: &str,
    path: PathKind,
    size: u64,
    tlp: bool,
    window: u32,
    total: u32,
) -> (Outcome, Recorder) {
    run_fabric_op(
        cfg,
        scenario,
        path,
        Op::WriteImm,
        size,
        (tlp, window, total),
    )
}

/// Noise-free, recorded simulation options (TLP by TLP when `tlp`).
fn recording(cfg: &Config, tlp: bool) -> SimOptions {
    gdrsim::scenario::sim_options(cfg, 7)
        .noise_free()
        .recording()
        .tlp(tlp)
}

/// [`run_fabric`] for any op.
pub fn run_fabric_op(
    cfg: &Config,
    scenario: &str,
    path: PathKind,
    op: Op,
    size: u64,
    (tlp, window, total): (bool, u32, u32),
) -> (Outcome, Recorder) {
    let si = scenario_index(cfg, scenario);
    let topo = scenario::topology(cfg);
    let built = scenario::paths::plan(cfg, cfg.scenarios[si].first(), &topo, path, op, size)
        .expect("routes");
    let opts = recording(cfg, tlp);
    let mut f = Fabric::new(&topo, &[&built.plan], opts);
    let out = f.run(window, total);
    let rec = std::mem::take(&mut f.recorder);
    (out, rec)
}

/// The noise-free latency of one message, in picoseconds.
pub fn model_latency(cfg: &Config, scenario: &str, path: PathKind, size: u64, tlp: bool) -> u64 {
    model_latency_op(cfg, scenario, path, Op::WriteImm, size, tlp)
}

/// [`model_latency`] for any op.
pub fn model_latency_op(
    cfg: &Config,
    scenario: &str,
    path: PathKind,
    op: Op,
    size: u64,
    tlp: bool,
) -> u64 {
    let (out, _) = run_fabric_op(cfg, scenario, path, op, size, (tlp, 1, 1));
    out.messages[0].1 - out.messages[0].0
}

pub fn rel_diff(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-300)
}

/// Every flow of scenario `si` streaming `total` messages (at most `window` in flight each)
/// through the fabric directly, noise-free, with recording: the outcome, the records and the
/// flows' plans (hops refer to their steps).
pub fn run_flows(
    cfg: &Config,
    si: usize,
    path: PathKind,
    size: u64,
    tlp: bool,
    window: u32,
    total: u32,
) -> (Outcome, Recorder, Vec<gdrsim::plan::Plan>) {
    let topo = scenario::topology(cfg);
    let plans: Vec<gdrsim::plan::Plan> = cfg.scenarios[si]
        .flows
        .iter()
        .map(|f| {
            scenario::paths::plan(cfg, f, &topo, path, gdrsim::config::Op::WriteImm, size)
                .expect("routes")
                .plan
        })
        .collect();
    let opts = recording(cfg, tlp);
    let refs: Vec<&gdrsim::plan::Plan> = plans.iter().collect();
    let mut f = Fabric::new(&topo, &refs, opts);
    let out = f.run(window, total);
    let rec = std::mem::take(&mut f.recorder);
    drop(f);
    (out, rec, plans)
}

/// The property tests' random seed: fixed, so that CI runs the same cases every time and a
/// failure reproduces; `GDRSIM_PROPTEST_SEED=random` (or a number) explores other cases.
pub fn proptest_seed() -> proptest::test_runner::RngSeed {
    use proptest::test_runner::RngSeed;
    match std::env::var("GDRSIM_PROPTEST_SEED") {
        Ok(s) if s == "random" => RngSeed::Random,
        Ok(s) => RngSeed::Fixed(
            s.parse()
                .expect("GDRSIM_PROPTEST_SEED: a number or `random`"),
        ),
        Err(_) => RngSeed::Fixed(0x6764_7273_696d),
    }
}

/// The gdrsim binary run from the project root, as a user runs it.
pub fn gdrsim(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_gdrsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the gdrsim binary runs")
}

/// [`gdrsim`] that must finish within `secs` seconds (killed and failed otherwise): for
/// reproducers whose bug makes the command run on instead of failing. For commands of little
/// output (a full pipe would stall the command until the limit).
pub fn gdrsim_within(secs: u64, args: &[&str]) -> std::process::Output {
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_gdrsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the gdrsim binary runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while child.try_wait().expect("waiting on gdrsim").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("gdrsim {args:?} ran past {secs} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().expect("gdrsim's output")
}

/// Bytes of a command's output as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The stdout of a command that must succeed (its stderr in the failure).
pub fn ok(o: &std::process::Output, what: &str) -> String {
    assert!(
        o.status.success(),
        "{what} failed: {:?}\n{}",
        o.status,
        text(&o.stderr)
    );
    text(&o.stdout)
}

/// Asserts that a command given `src` and `--out out` refused it as bad input: exit 2, stderr
/// the one line `error: SRC` + `message`, nothing written to `out` or stdout (`what` names the
/// case in failures).
pub fn refused(
    o: &std::process::Output,
    what: &str,
    src: &std::path::Path,
    message: &str,
    out: &std::path::Path,
) {
    let stderr = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{what}: {stderr}");
    assert_eq!(
        stderr.trim_end(),
        format!("error: {}{message}", src.display()),
        "{what}"
    );
    assert!(!out.exists(), "{what}: nothing written");
    assert!(o.stdout.is_empty(), "{what}: nothing printed");
}

/// A fresh scratch folder for test `name` of module `module`, named by this test process so
/// that two runs at once do not share one. What earlier runs of the same test left (their
/// process has ended) is removed first: the folders stay with the test until it runs again,
/// for a look after a failure, and do not pile up in the temporary folder run after run.
pub fn scratch(module: &str, name: &str) -> std::path::PathBuf {
    let tmp = std::env::temp_dir();
    let (prefix, suffix) = (format!("gdrsim-it-{module}-"), format!("-{name}"));
    for e in std::fs::read_dir(&tmp).into_iter().flatten().flatten() {
        let file = e.file_name();
        let Some(pid) = file
            .to_str()
            .and_then(|f| f.strip_prefix(&prefix)?.strip_suffix(&suffix))
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let alive = std::path::Path::new(&format!("/proc/{pid}")).exists();
        if pid != std::process::id() && !alive {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
    let d = tmp.join(format!("{prefix}{}{suffix}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes `text` as the config `c.toml` of a fresh scratch folder and runs `gdrsim run` on it
/// into `out/` of that folder; returns (config, output folder).
pub fn run_study(module: &str, name: &str, text: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = scratch(module, name);
    let c = dir.join("c.toml");
    std::fs::write(&c, text).unwrap();
    let out = dir.join("out");
    ok(&gdrsim(&["run", s(&c), "--quiet", "--out", s(&out)]), name);
    (c, out)
}

/// A path as a command-line argument.
pub fn s(p: &std::path::Path) -> &str {
    p.to_str().expect("test paths are UTF-8")
}

/// configs/dgx-h100.toml with its machine spelled out: the `dgx-h100` preset's file pasted in
/// place of its `preset` key (the two load to the same config: tests/it/presets.rs).
pub fn dgx_h100_spelled_out() -> String {
    let root = env!("CARGO_MANIFEST_DIR");
    let config = std::fs::read_to_string(format!("{root}/configs/dgx-h100.toml")).unwrap();
    let preset = std::fs::read_to_string(format!("{root}/configs/presets/dgx-h100.toml")).unwrap();
    let machine = preset
        .split_once("\n[[machines]]\n")
        .expect("the preset's table")
        .1;
    let from = "[[machines]]\nname = \"dgx-h100\"\npreset = \"dgx-h100\"";
    assert!(
        config.contains(from),
        "configs/dgx-h100.toml names the preset"
    );
    config.replacen(from, &format!("[[machines]]\n{}", machine.trim_end()), 1)
}

/// The rows of a CSV file written by gdrsim, each as (column -> cell).
pub fn csv_rows(path: &std::path::Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            header
                .iter()
                .cloned()
                .zip(rec.iter().map(String::from))
                .collect()
        })
        .collect()
}

/// Writes `body` as `dir/NAME.toml` and asserts that `gdrsim check` refuses it: exit 2, the
/// error naming `key` and saying `needle`.
pub fn check_refuses(dir: &std::path::Path, name: &str, body: &str, key: &str, needle: &str) {
    let p = dir.join(format!("{name}.toml"));
    std::fs::write(&p, body).unwrap();
    let o = gdrsim(&["check", s(&p)]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{name}: {err}");
    assert!(err.contains(&format!("key `{key}`")), "{name}: {err}");
    assert!(err.contains(needle), "{name}: {err}");
}

/// The exit code and the peak resident memory of `gdrsim ARGS`: the highest
/// `VmHWM` of /proc/PID/status read while it runs (every millisecond; the high-water mark only
/// grows, so only what it adds in its last millisecond is missed). Not wait4's ru_maxrss: a
/// child spawned by vfork and exec carries its parent's high-water mark (this test process's,
/// with the other tests' allocations) into its own: under the full suite every child measured
/// the harness's hundreds of MiB (780 points read 0.05x).
#[cfg(target_os = "linux")]
pub fn gdrsim_peak(args: &[&str]) -> (i32, u64) {
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_gdrsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the gdrsim binary runs");
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0u64;
    loop {
        let hwm = std::fs::read_to_string(&status).ok().and_then(|t| {
            let line = t.lines().find(|l| l.starts_with("VmHWM:"))?.to_string();
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        });
        peak = peak.max(hwm.unwrap_or(0) * 1024);
        if let Some(code) = child.try_wait().expect("waiting on gdrsim") {
            return (code.code().unwrap_or(-1), peak);
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// "67.3 MiB" (as gdrsim prints sizes) in bytes.
pub fn bytes_of(s: &str) -> u64 {
    let (n, unit) = s.split_once(' ').expect("a number and a unit");
    let scale = match unit {
        "B" => 1u64,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        u => panic!("unit {u}"),
    };
    (n.parse::<f64>().expect("a number") * scale as f64) as u64
}

//! Fuzzing the config surface (issue #13): mutated TOML from every file in `configs/` (numbers
//! to extremes, types swapped, keys deleted or renamed, malformed units) goes through the
//! library's own load (`study::load_config`: parse, route and horizon checks). Every config is
//! either refused with a config error (the exit-2 class, one line naming a key) or accepted, and
//! then a bounded simulation of its first and last points never panics and gives finite
//! figures within physical bounds. `GDRSIM_FUZZ_CASES=10000` runs a long campaign; the default
//! is a few hundred cases, deterministic (`GDRSIM_FUZZ_SEED` moves them).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

use gdrsim::config::ConfigError;
use gdrsim::scenario;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use toml::Value;

const EXTREME_INTS: &[i64] = &[0, 1, -1, 3, 4096, 1 << 31, 1 << 53, i64::MAX, i64::MIN];
const ODD_STRINGS: &[&str] = &[
    "",
    "10s",
    "1ps",
    "1e9999GB/s",
    "-5ns",
    "5 parsecs",
    "16GiB",
    "0B",
    "1Mb/s",
    "NaN",
    "gpu",
    "\u{0}",
];

fn configs() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("configs");
    let mut v: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .map(|(name, text)| {
            let text = match name.starts_with("cluster-") {
                true => four_nodes(&text),
                false => text,
            };
            (name, text)
        })
        .collect();
    v.sort();
    v
}

/// A shipped cluster study (16 nodes at 128 MiB, minutes a point) at 2 nodes and 1 MiB: the
/// same keys to mutate, a fraction of a second a point (each accepted mutation runs two).
fn four_nodes(text: &str) -> String {
    let mut t = text.to_string();
    for (from, to) in [
        ("\ncount = 16\n", "\ncount = 2\n"),
        ("\nhosts_per_unit = 16 ", "\nhosts_per_unit = 2 "),
        ("sizes = [\"128MiB\"]", "sizes = [\"1MiB\"]"),
    ] {
        if from.contains("hosts_per_unit") && !t.contains(from) {
            continue;
        }
        assert!(t.contains(from), "a cluster config lost {from:?}");
        t = t.replacen(from, to, 1);
    }
    t
}

/// Every path to a leaf (a value that is not a table or an array of tables).
fn leaves(v: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        Value::Table(t) => {
            for (k, x) in t {
                at.push(k.clone());
                leaves(x, at, out);
                at.pop();
            }
        }
        Value::Array(a) if a.iter().all(|x| x.is_table()) && !a.is_empty() => {
            for (i, x) in a.iter().enumerate() {
                at.push(i.to_string());
                leaves(x, at, out);
                at.pop();
            }
        }
        _ => out.push(at.clone()),
    }
}

/// The parent table of `path` and the leaf's key, if the path still leads there.
fn parent_of<'a>(root: &'a mut Value, path: &[String]) -> Option<&'a mut toml::Table> {
    let mut v = root;
    for p in &path[..path.len() - 1] {
        v = match v {
            Value::Table(t) => t.get_mut(p)?,
            Value::Array(a) => a.get_mut(p.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    v.as_table_mut()
}

fn mutate(root: &mut Value, rng: &mut Xoshiro256PlusPlus) {
    let mut all = Vec::new();
    leaves(root, &mut Vec::new(), &mut all);
    let path = all[rng.random_range(0..all.len())].clone();
    let key = path.last().unwrap().clone();
    let Some(t) = parent_of(root, &path) else {
        return;
    };
    let old = t.get(&key).cloned();
    let pick = |r: &mut Xoshiro256PlusPlus, n: usize| r.random_range(0..n);
    let new = match rng.random_range(0..8) {
        0 => Some(Value::Integer(EXTREME_INTS[pick(rng, EXTREME_INTS.len())])),
        1 => Some(Value::Float(
            [1e300, -1e300, 0.0, -0.0, 1e-300, f64::NAN, f64::INFINITY][pick(rng, 7)],
        )),
        2 => Some(Value::String(
            ODD_STRINGS[pick(rng, ODD_STRINGS.len())].into(),
        )),
        3 => Some(Value::Boolean(rng.random())),
        4 => Some(Value::Array(vec![])),
        // Scale a number by a large factor, keeping its type.
        5 => match &old {
            Some(Value::Integer(i)) => Some(Value::Integer(i.saturating_mul(1_000_000))),
            Some(Value::Float(f)) => Some(Value::Float(f * 1e9)),
            Some(Value::String(s)) => Some(Value::String(format!("{s}000000"))),
            o => o.clone(),
        },
        6 => None,
        _ => {
            // Rename: the value under a key nobody knows.
            if let Some(v) = old.clone() {
                t.insert(format!("{key}_x"), v);
            }
            None
        }
    };
    match new {
        Some(v) => {
            t.insert(key, v);
        }
        None => {
            t.remove(&key);
        }
    }
}

/// A bounded run of the config's first and last points: finite figures within physics.
fn simulate_bounded(mut cfg: gdrsim::config::Config) {
    cfg.sim.iterations = cfg.sim.iterations.min(3);
    cfg.sim.min_iterations = cfg.sim.min_iterations.min(cfg.sim.iterations);
    cfg.sim.stream_messages = cfg.sim.stream_messages.min(4);
    let topo = scenario::topology(&cfg);
    let points = scenario::plan(&cfg);
    for p in [points.first(), points.last()].into_iter().flatten() {
        let r = scenario::simulate_point(&cfg, &topo, p);
        if r.past_horizon {
            continue;
        }
        let s = &r.summary;
        assert!(
            s.lat_model_ps > 0,
            "{} {:?}: zero latency",
            s.scenario,
            s.path
        );
        for v in [s.bw_gbps, s.msg_rate_mps, s.lat.p50_us, s.lat.mean_us] {
            assert!(v.is_finite() && v >= 0.0, "{} {}: {v}", s.scenario, s.path);
        }
        // No run beats 10 TB/s: faster than any link a config may describe.
        assert!(
            s.bw_gbps < 10_000.0,
            "{} {}: {} GB/s",
            s.scenario,
            s.path,
            s.bw_gbps
        );
    }
}

#[test]
fn mutated_configs_load_cleanly_or_are_refused_with_a_config_error() {
    let cases: usize = std::env::var("GDRSIM_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(400);
    let seed: u64 = std::env::var("GDRSIM_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x6675_7a7a);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let sources = configs();
    assert!(sources.len() >= 8, "configs/ has its examples");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fuzz-configs");
    std::fs::create_dir_all(&dir).unwrap();
    let (mut accepted, mut refused) = (0, 0);
    for case in 0..cases {
        let (name, text) = &sources[case % sources.len()];
        let mut doc: Value = toml::from_str(text).unwrap();
        for _ in 0..rng.random_range(0..=2) {
            mutate(&mut doc, &mut rng);
        }
        let mutated = toml::to_string(&doc).unwrap();
        let file = dir.join(format!("case-{case}.toml"));
        std::fs::write(&file, &mutated).unwrap();
        let loaded = catch_unwind(|| gdrsim::study::load_config(Some(&file)));
        let Ok(loaded) = loaded else {
            panic!("case {case} (from {name}) panicked while loading:\n{mutated}");
        };
        match loaded {
            Ok(cfg) => {
                accepted += 1;
                let run = catch_unwind(AssertUnwindSafe(|| simulate_bounded(cfg)));
                assert!(
                    run.is_ok(),
                    "case {case} (from {name}) panicked or broke a bound in simulation:\n{mutated}"
                );
            }
            Err(e) => {
                // Typed: load_config fails only with a ConfigError (exit 2).
                refused += 1;
                let e: ConfigError = e;
                let msg = e.to_string();
                if std::env::var_os("GDRSIM_FUZZ_SHOW").is_some() {
                    eprintln!("case {case} ({name}): {msg}");
                }
                assert!(
                    !msg.contains('\n'),
                    "case {case}: a two-line message: {msg}"
                );
            }
        }
        let _ = std::fs::remove_file(&file);
    }
    eprintln!("{cases} cases: {accepted} accepted and simulated, {refused} refused");
    // Both outcomes occur, or the mutations test nothing.
    assert!(
        accepted > cases / 20 && refused > cases / 20,
        "{accepted} accepted, {refused} refused"
    );
}

//! `[sweep] vary` (issue #28 item 9): a study run once per combination of parameter values,
//! driven through the binary: the `variant` column and its values, rows = variants x points,
//! the charts' series and the report's table, refusals with exit 2 naming the key, `check`'s
//! count, and shards merged byte for byte equal to one run.

use std::fs;
use std::path::{Path, PathBuf};

use crate::support::{check_refuses, csv_rows, gdrsim, ok, run_study, s, scratch, text};

const CONFIG: &str = "configs/sweep.toml";

fn example() -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(CONFIG)).unwrap()
}

/// The example with `vary` replaced by `vary` (a TOML inline-table body, or nothing).
fn with_vary(vary: &str) -> String {
    let text = example();
    let line = text
        .lines()
        .find(|l| l.starts_with("vary = "))
        .expect("configs/sweep.toml has a vary line")
        .to_string();
    if vary.is_empty() {
        text.replacen(&format!("{line}\n"), "", 1)
    } else {
        text.replacen(&line, &format!("vary = {{ {vary} }}"), 1)
    }
}

const LABELS: [&str; 4] = [
    "read_window=128, registration=cached",
    "read_window=128, registration=per_transfer",
    "read_window=512, registration=cached",
    "read_window=512, registration=per_transfer",
];

#[test]
fn every_variant_runs_every_point_with_a_variant_column() {
    let (_, out) = run_study("sweep", "run", &example());
    let (_, plain) = run_study("sweep", "plain", &with_vary(""));
    let rows = csv_rows(&out.join("results.csv"));
    let base = csv_rows(&plain.join("results.csv"));
    // 2 scenarios x 2 paths x 4 sizes = 16 points, 4 variants.
    assert_eq!(base.len(), 16);
    assert_eq!(rows.len(), 4 * base.len());
    assert!(!base[0].contains_key("variant"));
    let header = fs::read_to_string(out.join("results.csv")).unwrap();
    let header = header.lines().next().unwrap();
    assert!(header.ends_with(",variant"), "{header}");
    for (v, label) in LABELS.iter().enumerate() {
        let of: Vec<_> = rows[v * 16..(v + 1) * 16].iter().collect();
        assert!(of.iter().all(|r| r["variant"] == *label), "{label}");
        // Each variant's rows are the points of the study without a sweep, in its order.
        for (r, b) in of.iter().zip(&base) {
            for k in ["scenario", "path", "op", "size_bytes"] {
                assert_eq!(r[k], b[k], "{label} {k}");
            }
        }
    }
    // The study without a sweep keeps its defaults: read window 128, cached. Variant 0 is it.
    for (r, b) in rows[..16].iter().zip(&base) {
        assert_eq!(r["lat_model_us"], b["lat_model_us"]);
        assert_eq!(r["bw_GBps"], b["bw_GBps"]);
    }
    // Per-transfer registration puts a GPU pin in every GPUDirect message.
    let lat = |v: usize, scenario: &str, path: &str, size: &str| -> f64 {
        rows[v * 16..(v + 1) * 16]
            .iter()
            .find(|r| r["scenario"] == scenario && r["path"] == path && r["size_bytes"] == size)
            .unwrap()["lat_model_us"]
            .parse()
            .unwrap()
    };
    assert!(lat(1, "PIX", "gpudirect", "8") > lat(0, "PIX", "gpudirect", "8") + 10.0);
    for f in ["stages.csv", "flows.csv", "links.csv"] {
        let r = csv_rows(&out.join(f));
        assert!(
            r.iter().all(|r| LABELS.contains(&r["variant"].as_str())),
            "{f}"
        );
        for l in LABELS {
            assert!(r.iter().any(|r| r["variant"] == l), "{f}: {l}");
        }
    }
    // The resolved config records the sweep and reruns to the same results.
    let resolved = fs::read_to_string(out.join("config.toml")).unwrap();
    assert!(resolved.contains("[sweep.vary]"), "{resolved}");
    let again = out.parent().unwrap().join("again");
    let o = gdrsim(&[
        "run",
        s(&out.join("config.toml")),
        "--quiet",
        "--out",
        s(&again),
    ]);
    ok(&o, "rerun of the resolved config");
    assert_eq!(
        fs::read(out.join("results.csv")).unwrap(),
        fs::read(again.join("results.csv")).unwrap()
    );
    // The report lists the variants; the charts draw a series per scenario and variant.
    let md = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Variants"), "{md}");
    for l in LABELS {
        assert!(md.contains(&format!("| {l} |")), "report.md: {l}");
        assert!(md.contains(&format!("PIX [{l}]")), "report.md: PIX [{l}]");
    }
    let svg = fs::read_to_string(out.join("latency.svg")).unwrap();
    for l in LABELS {
        assert!(
            svg.contains(&format!("NODE [{l}]")),
            "latency.svg: NODE [{l}]"
        );
    }
    let svg = fs::read_to_string(out.join("bandwidth.svg")).unwrap();
    assert!(svg.contains(LABELS[3]), "bandwidth.svg");
}

/// `check` warns of an implausible value of any variant, naming it; `--strict` refuses it.
#[test]
fn implausible_variant_values_are_warned_of() {
    let dir = scratch("sweep", "plausible");
    let c = dir.join("c.toml");
    let vary = "\"network.switch_latency_ns\" = [100, 50000]";
    fs::write(&c, with_vary(vary)).unwrap();
    let o = gdrsim(&["check", s(&c)]);
    ok(&o, "check");
    let err = text(&o.stderr);
    assert!(err.contains("network.switch_latency_ns"), "{err}");
    assert!(
        err.contains("sweep variant switch_latency_ns=50000"),
        "{err}"
    );
    assert!(!err.contains("switch_latency_ns=100)"), "{err}");
    let o = gdrsim(&["check", "--strict", s(&c)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
}

#[test]
fn check_counts_the_variants() {
    let o = gdrsim(&["check", CONFIG]);
    let out = ok(&o, "check");
    assert!(
        out.contains("2 scenarios, 2 paths, 4 sizes, 4 variants: 64 points"),
        "{out}"
    );
    let dir = scratch("sweep", "check-one");
    let c = dir.join("c.toml");
    fs::write(&c, with_vary("\"sim.registration\" = [\"per_transfer\"]")).unwrap();
    let out = ok(&gdrsim(&["check", s(&c)]), "check one variant");
    assert!(out.contains("1 variant: 16 points"), "{out}");
}

#[test]
fn bad_sweeps_exit_2_naming_the_key() {
    let dir = scratch("sweep", "bad");
    for (name, vary, key, needle) in [
        (
            "unknown",
            "\"machines[0].nics[*].read_windows\" = [64]",
            "sweep.vary.\"machines[0].nics[*].read_windows\"",
            "names no parameter",
        ),
        (
            "wrong-type",
            "\"machines[0].nics[*].read_window\" = [64, \"big\"]",
            "sweep.vary.\"machines[0].nics[*].read_window\"[1]",
            "\"big\"",
        ),
        (
            "wrong-unit",
            "\"network.switch_latency_ns\" = [\"100ns\", \"3 parsecs\"]",
            "sweep.vary.\"network.switch_latency_ns\"[1]",
            "a duration",
        ),
        (
            "empty",
            "\"sim.registration\" = []",
            "sweep.vary.\"sim.registration\"",
            "a non-empty list",
        ),
        (
            "not-a-list",
            "\"sim.registration\" = \"cached\"",
            "sweep.vary.\"sim.registration\"",
            "a non-empty list",
        ),
        (
            "too-many",
            "\"sim.iterations\" = [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17], \
             \"sim.stream_window\" = [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]",
            "sweep.vary",
            "at most 256 variants",
        ),
    ] {
        check_refuses(&dir, name, &with_vary(vary), key, needle);
        // run refuses it too, before any work, writing nothing.
        let c = dir.join(format!("{name}.toml"));
        let out = dir.join(format!("{name}-out"));
        let o = gdrsim(&["run", s(&c), "--quiet", "--out", s(&out)]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", text(&o.stderr));
        let err = text(&o.stderr);
        assert!(err.contains(&c.display().to_string()), "{name}: {err}");
        assert!(!out.exists(), "{name}: wrote {}", out.display());
    }
    // Options that need a study without a sweep.
    let out = dir.join("sens");
    let o = gdrsim(&[
        "run",
        CONFIG,
        "--sensitivity",
        "10%",
        "--quiet",
        "--out",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("sweep.vary"));
    assert!(!out.exists());
}

/// Shards of a sweep deal variants x points; merged, they are the single run byte for byte.
#[test]
fn sharded_and_merged_sweep_equals_one_run() {
    let base = scratch("sweep", "shards");
    let single = base.join("single");
    ok(
        &gdrsim(&["run", CONFIG, "--quiet", "--out", s(&single)]),
        "single run",
    );
    let n = 3;
    let dirs: Vec<PathBuf> = (0..n).map(|k| base.join(format!("s{k}"))).collect();
    let mut dealt = 0;
    for (k, d) in dirs.iter().enumerate() {
        let shard = format!("{k}/{n}");
        ok(
            &gdrsim(&["run", CONFIG, "--shard", &shard, "--quiet", "--out", s(d)]),
            &shard,
        );
        let part = csv_rows(&d.join("results.csv"));
        dealt += part.len();
    }
    assert_eq!(dealt, 64, "every point of every variant in one shard");
    let merged = base.join("merged");
    let mut args = vec!["merge", s(&merged), "--quiet"];
    args.extend(dirs.iter().map(|d| s(d)));
    ok(&gdrsim(&args), "merge");
    let mut files: Vec<String> = fs::read_dir(&single)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert!(files.contains(&"results.csv".to_string()));
    for f in &files {
        assert_eq!(
            fs::read(single.join(f)).unwrap(),
            fs::read(merged.join(f)).unwrap_or_default(),
            "{f} differs between the single run and the merge"
        );
    }
}

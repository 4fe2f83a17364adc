//! `gdrsim compare` on real studies (issue #28 item 5): two small runs of shipped configs
//! (default.toml, cached registration, and registration.toml, per-transfer), compared; the
//! figures in compare.csv are those of the studies' results.csv; mismatched sweeps and unusable
//! folders are refused with exit 2, one line naming the folder, and nothing written.
//!
//! Each study has two or three sizes (6 to 27 points), so a run takes a fraction of a second.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::support::{csv_rows, gdrsim, ok, s, scratch, text};

/// `configs/NAME.toml` with each `(from, to)` text edit applied (each must match), written
/// into `dir` and run into `dir/OUT`; returns the study folder.
fn study(dir: &Path, name: &str, out: &str, edits: &[(&str, &str)]) -> PathBuf {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut t = fs::read_to_string(format!("{root}/configs/{name}.toml")).unwrap();
    for (from, to) in edits {
        assert!(t.contains(from), "{name}.toml has no {from:?}");
        t = t.replacen(from, to, 1);
    }
    let c = dir.join(format!("{out}.toml"));
    fs::write(&c, t).unwrap();
    let d = dir.join(out);
    ok(&gdrsim(&["run", s(&c), "--quiet", "--out", s(&d)]), out);
    d
}

const DEFAULT_SIZES: &str = "sizes = { from = \"1B\", to = \"1GiB\", factor = 2 }";
const REG_SIZES: &str = "sizes = { from = \"1B\", to = \"1GiB\", factor = 8 }";
const SMALL: &str = "sizes = [\"8B\", \"4KiB\"]";

/// The default study (PIX, PHB, SYS; cached registration) at 8 B and 4 KiB.
fn default_study(dir: &Path) -> PathBuf {
    study(dir, "default", "cached", &[(DEFAULT_SIZES, SMALL)])
}

/// registration.toml (PIX; per-transfer registration) at 8 B and 4 KiB, with `edits`.
fn registration_study(dir: &Path, out: &str, edits: &[(&str, &str)]) -> PathBuf {
    let mut all = vec![(REG_SIZES, SMALL)];
    all.extend_from_slice(edits);
    study(dir, "registration", out, &all)
}

type Row = BTreeMap<String, String>;

fn num(r: &Row, col: &str) -> f64 {
    let cell = r
        .get(col)
        .unwrap_or_else(|| panic!("no column {col} in {r:?}"));
    cell.parse().unwrap_or_else(|_| panic!("{col}: {cell:?}"))
}

/// The results.csv row of a point.
fn point<'a>(rows: &'a [Row], scenario: &str, path: &str, size: &str) -> &'a Row {
    rows.iter()
        .find(|r| r["scenario"] == scenario && r["path"] == path && r["size_bytes"] == size)
        .unwrap_or_else(|| panic!("no {scenario} {path} {size}"))
}

#[test]
fn compare_csv_holds_each_studys_figures_and_their_ratios() {
    let base = scratch("compare", "figures");
    let (a, b) = (default_study(&base), registration_study(&base, "per", &[]));
    let out = base.join("cmp");
    let stdout = ok(&gdrsim(&["compare", s(&out), s(&a), s(&b)]), "compare");
    assert!(
        stdout.contains("compared default vs registration: 6 points matched on (scenario"),
        "{stdout}"
    );
    let mut files: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let want = [
        "bandwidth.png",
        "bandwidth.svg",
        "compare.csv",
        "compare.md",
        "latency.png",
        "latency.svg",
        "manifest.json",
    ];
    assert_eq!(files, want);

    let (ra, rb) = (
        csv_rows(&a.join("results.csv")),
        csv_rows(&b.join("results.csv")),
    );
    let rows = csv_rows(&out.join("compare.csv"));
    // registration.toml has PIX only: host, staged and gpudirect at two sizes.
    assert_eq!(rows.len(), 6);
    for r in &rows {
        assert_eq!(
            (r["scenario"].as_str(), r["matched_on"].as_str()),
            ("PIX", "scenario")
        );
        let x = point(&ra, "PIX", &r["path"], &r["size_bytes"]);
        let y = point(&rb, "PIX", &r["path"], &r["size_bytes"]);
        assert_eq!(r["lat_p50_us:default"], x["lat_p50_us"]);
        assert_eq!(r["bw_GBps:registration"], y["bw_GBps"]);
        assert_eq!(r["effective_path:registration"], y["effective_path"]);
        let lat = num(y, "lat_p50_us") / num(x, "lat_p50_us");
        let bw = num(y, "bw_GBps") / num(x, "bw_GBps");
        assert!(
            (num(r, "lat_ratio:registration/default") - lat).abs() < 1e-6,
            "{r:?}"
        );
        assert!(
            (num(r, "bw_ratio:registration/default") - bw).abs() < 1e-6,
            "{r:?}"
        );
        // Per-transfer registration costs GPUDirect tens of µs per message.
        if r["path"] == "gpudirect" {
            assert!(lat > 5.0, "{r:?}");
            assert_eq!(
                (r["lat_best"].as_str(), r["bw_best"].as_str()),
                ("default", "default")
            );
        }
    }
    let md = fs::read_to_string(out.join("compare.md")).unwrap();
    for needle in [
        "# Studies compared: default vs registration",
        "matched on (scenario, path, op, size): 6 points",
        "Left out, not run by every study: scenario PHB, scenario SYS of default.",
        "| PIX | GPUDirect | 4 KiB |",
        "![latency](latency.png)",
    ] {
        assert!(md.contains(needle), "no {needle:?} in\n{md}");
    }
    // Its own folder is replaced by a second compare, with labels of the user's.
    let args = [
        "compare",
        s(&out),
        s(&a),
        s(&b),
        "--label",
        "cached",
        "--quiet",
    ];
    assert!(ok(&gdrsim(&args), "again").is_empty());
    let rows = csv_rows(&out.join("compare.csv"));
    assert!(
        rows[0].contains_key("lat_ratio:registration/cached"),
        "{:?}",
        rows[0]
    );
}

#[test]
fn single_scenarios_of_different_names_are_matched_on_path() {
    let base = scratch("compare", "by-path");
    let a = registration_study(&base, "a", &[]);
    let rename = (
        "[[scenarios]]\nname = \"PIX\"",
        "[[scenarios]]\nname = \"GPU0-NIC0\"",
    );
    let b = registration_study(&base, "b", &[rename]);
    let out = base.join("cmp");
    let args = [
        "compare",
        s(&out),
        s(&a),
        s(&b),
        "--label",
        "A",
        "--label",
        "B",
    ];
    ok(&gdrsim(&args), "compare");
    let rows = csv_rows(&out.join("compare.csv"));
    assert_eq!(rows.len(), 6);
    assert!(
        rows.iter()
            .all(|r| r["matched_on"] == "path" && r["scenario"] == "PIX vs GPU0-NIC0")
    );
    // The same machine and seed: every ratio is 1.
    assert!(
        rows.iter().all(|r| num(r, "lat_ratio:B/A") == 1.0),
        "{rows:?}"
    );
    let md = fs::read_to_string(out.join("compare.md")).unwrap();
    assert!(
        md.contains("matched on (path, op, size) alone: A's PIX against B's GPU0-NIC0"),
        "{md}"
    );
}

/// `gdrsim compare OUT DIRS...` must refuse: exit 2, one error line holding each of
/// `needles`, nothing written.
fn refused(out: &Path, dirs: &[&Path], needles: &[&str]) {
    let mut args = vec!["compare", s(out)];
    args.extend(dirs.iter().map(|d| s(d)));
    let o = gdrsim(&args);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: no {n:?} in {err}");
    }
    assert!(o.stdout.is_empty(), "{args:?}");
}

#[test]
fn mismatched_sweeps_and_unusable_folders_are_refused_before_writing() {
    let base = scratch("compare", "refused");
    let a = default_study(&base);
    let out = base.join("cmp");
    let sizes = study(
        &base,
        "default",
        "sizes",
        &[(DEFAULT_SIZES, "sizes = [\"8B\", \"64KiB\"]")],
    );
    // Both are `default`: each is labelled by its folder.
    let (la, lb) = (a.display().to_string(), sizes.display().to_string());
    let not_in = format!("found 8 B, 64 KiB (64 KiB not in {la}; 4 KiB missing)");
    refused(
        &out,
        &[&a, &sizes],
        &[
            &format!("{lb}: expected the message sizes of {la}"),
            &not_in,
        ],
    );
    let write = [
        (DEFAULT_SIZES, SMALL),
        ("ops = [\"write_imm\"]", "ops = [\"write\"]"),
    ];
    let ops = study(&base, "default", "ops", &write);
    refused(
        &out,
        &[&a, &ops],
        &[
            "ops: expected the operations of",
            "write_imm",
            "found write",
        ],
    );
    let host = study(
        &base,
        "default",
        "host",
        &[
            (DEFAULT_SIZES, SMALL),
            (
                "paths = [\"host\", \"staged\", \"gpudirect\"]",
                "paths = [\"host\"]",
            ),
        ],
    );
    let gpu = registration_study(
        &base,
        "gpu",
        &[(
            "paths = [\"host\", \"staged\", \"gpudirect\"]",
            "paths = [\"gpudirect\"]",
        )],
    );
    refused(
        &out,
        &[&host, &gpu],
        &[
            "gpu: expected a (scenario, path, op) in common with default",
            "only PIX gpudirect write_imm",
        ],
    );
    let empty = base.join("empty");
    fs::create_dir_all(&empty).unwrap();
    refused(&out, &[&a, &empty], &["empty/results.csv", "I/O error"]);
    refused(
        &out,
        &[&a, &base.join("nowhere")],
        &["nowhere: expected a study folder", "no such folder"],
    );
    refused(&out, &[&a, &a], &["expected each study folder once"]);
    assert!(!out.exists(), "nothing written");
    // An output folder that is one of the studies, or another program's, is not replaced.
    let ok_b = registration_study(&base, "per", &[]);
    refused(&a, &[&a, &ok_b], &["holds the study"]);
    let theirs = base.join("theirs");
    fs::create_dir_all(&theirs).unwrap();
    fs::write(theirs.join("notes.txt"), "mine").unwrap();
    refused(
        &theirs,
        &[&a, &ok_b],
        &["no manifest.json of a gdrsim run", "it would be replaced"],
    );
    assert_eq!(
        fs::read_to_string(theirs.join("notes.txt")).unwrap(),
        "mine"
    );
    assert!(a.join("results.csv").is_file() && !a.join("compare.csv").exists());
}

//! `gdrsim merge` on hostile shard folders (issue #27): every one is bad input, refused with
//! exit 2 and one error line naming the file and what was expected, and nothing is written.
//!
//! The shards are of a small study (two sizes: 18 points), so each run takes milliseconds.

use std::fs;
use std::path::{Path, PathBuf};

use crate::support::{gdrsim, ok, s, scratch, text};

/// configs/default.toml with two sizes: 18 points.
fn small_config(dir: &Path) -> PathBuf {
    let root = env!("CARGO_MANIFEST_DIR");
    let text = fs::read_to_string(format!("{root}/configs/default.toml")).unwrap();
    let from = "sizes = { from = \"1B\", to = \"1GiB\", factor = 2 }";
    assert!(text.contains(from), "the default config's sweep changed");
    let c = dir.join("c.toml");
    fs::write(&c, text.replacen(from, "sizes = [\"8B\", \"4KiB\"]", 1)).unwrap();
    c
}

/// The `n` shard folders of the small study, in a fresh scratch folder `name`; returns the
/// scratch folder and the shards.
fn shards(name: &str, n: u32) -> (PathBuf, Vec<PathBuf>) {
    let base = scratch("merge", name);
    let c = small_config(&base);
    let dirs: Vec<PathBuf> = (0..n).map(|k| base.join(format!("s{k}"))).collect();
    for (k, d) in dirs.iter().enumerate() {
        let shard = format!("{k}/{n}");
        let args = ["run", s(&c), "--shard", &shard, "--quiet", "--out", s(d)];
        ok(&gdrsim(&args), &format!("shard {shard}"));
    }
    (base, dirs)
}

/// `gdrsim merge OUT DIRS...` must refuse: exit 2, one error line containing each of
/// `needles`, `out` not written.
fn refused(out: &Path, dirs: &[&Path], needles: &[&str]) {
    let mut args = vec!["merge", s(out), "--quiet"];
    args.extend(dirs.iter().map(|d| s(d)));
    let o = gdrsim(&args);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: no {n:?} in {err}");
    }
    assert!(!out.exists(), "{args:?} wrote {}", out.display());
}

/// Item 4: a shard whose rows.jsonl was copied from another shard of as many points, or
/// whose rows were reordered, is refused (it merged with exit 0, points duplicated and
/// missing): the rows must be the file the shard's manifest.json records, and each row the
/// point the deal gives its place, even where the manifest was made to agree.
#[test]
fn foreign_or_reordered_rows_are_refused() {
    let (base, d) = shards("foreign-rows", 3);
    let out = base.join("merged");
    let all = [d[0].as_path(), &d[1], &d[2]];
    let rows = |k: usize| d[k].join("rows.jsonl");
    let own = fs::read_to_string(rows(0)).unwrap();
    let other = fs::read_to_string(rows(1)).unwrap();
    assert_eq!(own.lines().count(), other.lines().count(), "equal shards");
    fs::write(rows(0), &other).unwrap();
    refused(
        &out,
        &all,
        &["s0/rows.jsonl", "manifest.json", "another shard"],
    );

    let mut lines: Vec<&str> = own.lines().collect();
    lines.swap(0, 1);
    let reordered = lines.join("\n") + "\n";
    fs::write(rows(0), &reordered).unwrap();
    refused(&out, &all, &["s0/rows.jsonl", "FNV-1a"]);

    // The manifest made to agree with the reordered rows: the rows themselves are checked.
    let mf = d[0].join("manifest.json");
    let manifest = fs::read_to_string(&mf).unwrap();
    let hash = |t: &str| format!("{:016x}", gdrsim::seed::fnv1a(t.as_bytes()));
    fs::write(&mf, manifest.replace(&hash(&own), &hash(&reordered))).unwrap();
    refused(
        &out,
        &all,
        &[
            "s0/rows.jsonl: key `line 1`",
            "the row of point 0",
            "reordered",
        ],
    );

    fs::write(&mf, manifest).unwrap();
    fs::write(rows(0), own).unwrap();
    let mut args = vec!["merge", s(&out), "--quiet"];
    args.extend(all.iter().map(|d| s(d)));
    ok(&gdrsim(&args), "the shards as written");
}

/// Writes `text` as `file` of shard folder `dir` and makes its manifest.json agree (a forged
/// shard that the hash check alone would pass).
fn forge(dir: &Path, file: &str, text: &str) {
    fs::write(dir.join(file), text).unwrap();
    let mf = dir.join("manifest.json");
    let mut m: serde_json::Value = serde_json::from_str(&fs::read_to_string(&mf).unwrap()).unwrap();
    let entry = m["files"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|f| f["name"] == file)
        .unwrap();
    entry["bytes"] = text.len().into();
    entry["fnv1a64"] = format!("{:016x}", gdrsim::seed::fnv1a(text.as_bytes())).into();
    fs::write(&mf, serde_json::to_string_pretty(&m).unwrap()).unwrap();
}

/// Item 7: a shard.json claiming 4,000,000,000 shards is refused by its count, before any
/// table is sized by it (merge allocated 96 GB for it and aborted); a count within the bound
/// but far above the folders given lists the first missing shards and counts the rest.
#[test]
fn a_huge_shard_count_is_refused_without_allocating_for_it() {
    let (base, d) = shards("huge-count", 2);
    let out = base.join("merged");
    let manifest = fs::read_to_string(d[0].join("shard.json")).unwrap();
    let with = |n: &str| manifest.replace("\"shards\": 2,", &format!("\"shards\": {n},"));
    assert_ne!(with("3"), manifest, "the edit applies");
    forge(&d[0], "shard.json", &with("4000000000"));
    refused(
        &out,
        &[&d[0]],
        &[
            "s0/shard.json: key `shards`",
            "from 1 to 10000",
            "found 4000000000",
        ],
    );
    forge(&d[0], "shard.json", &with("10000"));
    refused(
        &out,
        &[&d[0]],
        &[
            "shard 1/10000, 2/10000",
            "9/10000, 10/10000, and 9989 more missing",
        ],
    );
}

/// Every file of folder `d` by name, with its bytes.
fn files(d: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.path().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

/// Item 14: `merge s0 s0 s1` (the output one of the shards) replaced shard folder s0 with the
/// merged study; an output folder holding the shards would have lost them all. Both are
/// refused, as is one shard folder given twice under two spellings, and the shards are kept
/// as they were.
#[test]
fn an_output_that_is_or_holds_a_shard_is_refused() {
    let (base, d) = shards("out-is-input", 2);
    let s0 = files(&d[0]);
    let o = gdrsim(&["merge", s(&d[0]), "--quiet", s(&d[0]), s(&d[1])]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("key `OUT`") && err.contains("s0 is shard folder"),
        "{err}"
    );
    assert_eq!(files(&d[0]), s0, "shard folder s0 was changed");

    let out = base.join("merged");
    let again = base.join(".").join("s0");
    refused(
        &out,
        &[&d[0], &again, &d[1]],
        &["the same folder twice", "key `SHARD_DIR`"],
    );

    // A study folder (a manifest of its own) with the shards inside it.
    let study = base.join("study");
    fs::create_dir(&study).unwrap();
    fs::write(study.join("manifest.json"), "{}").unwrap();
    let inner: Vec<PathBuf> = d
        .iter()
        .map(|x| study.join(x.file_name().unwrap()))
        .collect();
    for (from, to) in d.iter().zip(&inner) {
        fs::rename(from, to).unwrap();
    }
    let o = gdrsim(&["merge", s(&study), "--quiet", s(&inner[0]), s(&inner[1])]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("study holds shard folder"), "{err}");
    assert_eq!(files(&inner[0]), s0, "shard folder s0 was lost");
}

/// Item 11: `run --out` and `merge` replace a folder only where its manifest, one gdrsim
/// wrote, lists every file it holds. A file the user added to an earlier run's output (or a
/// folder of their own that merely holds a manifest.json) is kept: exit 2, nothing touched.
/// Before, the whole folder was replaced and the user's file deleted.
#[test]
fn a_folder_with_files_its_manifest_does_not_list_is_not_replaced() {
    let (base, d) = shards("user-files", 2);
    let out = base.join("merged");
    let dirs = [d[0].as_path(), &d[1]];
    let mut args = vec!["merge", s(&out), "--quiet"];
    args.extend(dirs.iter().map(|p| s(p)));
    ok(&gdrsim(&args), "the first merge");
    let thesis = out.join("thesis.tex");
    fs::write(&thesis, "precious").unwrap();
    for again in [
        args.clone(),
        vec!["run", s(&base.join("c.toml")), "--quiet", "--out", s(&out)],
    ] {
        let o = gdrsim(&again);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{again:?}: {err}");
        assert!(
            err.contains("holds thesis.tex, which its manifest.json does not list"),
            "{again:?}: {err}"
        );
        assert_eq!(fs::read_to_string(&thesis).unwrap(), "precious");
        assert!(out.join("manifest.json").is_file());
    }
    // A folder of the user's own with a manifest.json of its own is not taken for an output.
    let own = base.join("own");
    fs::create_dir_all(&own).unwrap();
    fs::write(own.join("manifest.json"), "{\"files\": []}").unwrap();
    fs::write(own.join("data.csv"), "mine").unwrap();
    let o = gdrsim(&["run", s(&base.join("c.toml")), "--quiet", "--out", s(&own)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert_eq!(fs::read_to_string(own.join("data.csv")).unwrap(), "mine");
    let _ = fs::remove_dir_all(&base);
}

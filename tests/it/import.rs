//! `gdrsim import topo-m` driven as a user runs it, on the samples in tests/data/topo-m:
//!
//! - round trip: import a sample, then `gdrsim topo` of the config prints the same GPU/NIC
//!   cells, every one (NV# cells excepted, which come back as a PCIe class with a note), and
//!   only the listed cells of a matrix no tree reproduces differ (GPU-NIC cells never);
//! - `gdrsim check` accepts every imported config;
//! - `--like` takes another config's parameters; gdrsim's own `topo` output imports back;
//! - bad input: exit 2, one `FILE:LINE:COLUMN: expected ..., found ...` line, nothing written.
//!
//! The round trip reads `gdrsim topo`'s output with a tab splitter of its own (not the
//! importer's parser), so a parser bug cannot hide on both sides.

use std::fs;
use std::path::{Path, PathBuf};

use crate::support::{gdrsim, refused};

fn tmp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("import");
    fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn sample(name: &str) -> String {
    format!("tests/data/topo-m/{name}")
}

/// Labels and cells of a tab-separated matrix: the header's device labels, then each row's
/// label and its cells (trimmed), up to the first empty line.
fn cells(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split(['\t', ' '])
        .filter(|s| !s.is_empty())
        .map(String::from)
        .take_while(|s| s != "CPU")
        .collect();
    let n = header.len();
    let rows = lines
        .take_while(|l| !l.trim().is_empty())
        .map(|l| {
            let toks: Vec<String> = if l.contains('\t') {
                l.split('\t').map(|s| s.trim().to_string()).collect()
            } else {
                l.split_whitespace().map(String::from).collect()
            };
            toks[..=n].to_vec()
        })
        .collect();
    (header, rows)
}

/// The CPU Affinity and NUMA Affinity cells of each GPU row (the two after its cells).
fn affinities(text: &str) -> Vec<(String, String)> {
    let (labels, _) = cells(text);
    let n = labels.len();
    text.lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("GPU"))
        .map(|l| {
            let toks: Vec<&str> = if l.contains('\t') {
                l.split('\t').map(str::trim).collect()
            } else {
                l.split_whitespace().collect()
            };
            (toks[n + 1].to_string(), toks[n + 2].to_string())
        })
        .collect()
}

/// The first host's matrix of `gdrsim topo CONFIG`.
fn topo_of(config: &Path) -> String {
    let o = gdrsim(&["topo", config.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let first = text.lines().next().unwrap();
    assert!(first.starts_with("node-a ("), "{first}");
    text.split_once('\n').unwrap().1.to_string()
}

/// Imports `name`, checks the config, and compares `gdrsim topo`'s cells with the sample's.
/// Returns the cells that differ, as "ROW-COLUMN SAMPLE -> MODEL", and stderr.
fn round_trip(name: &str) -> (Vec<String>, String) {
    let out = tmp(&format!("{name}.toml"));
    let _ = fs::remove_file(&out);
    let o = gdrsim(&[
        "import",
        "topo-m",
        &sample(name),
        "--gpu",
        "h100-pcie",
        "--nic",
        "connectx-7",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{name}: {stderr}");
    assert!(o.stdout.is_empty(), "the config goes to --out only");
    let check = gdrsim(&["check", out.to_str().unwrap()]);
    assert!(
        check.status.success(),
        "{name}: check refuses the import: {}",
        String::from_utf8_lossy(&check.stderr)
    );
    let want = fs::read_to_string(sample(name)).unwrap();
    let (labels, rows) = cells(&want);
    let topo = topo_of(&out);
    let (_, got) = cells(&topo);
    let mut differ = Vec::new();
    // The affinity columns too: the sockets keep the matrix's CPU lists and NUMA nodes.
    for (g, (w, t)) in affinities(&want).iter().zip(affinities(&topo)).enumerate() {
        if *w != t {
            differ.push(format!("GPU{g} affinity {w:?} -> {t:?}"));
        }
    }
    assert_eq!(got.len(), rows.len(), "{name}: device count");
    let gpus = labels.iter().filter(|l| l.starts_with("GPU")).count();
    for (r, row) in rows.iter().enumerate() {
        // Rows in the same order: GPUs, then NICs (gdrsim names them NICn).
        let expect_label = if r < gpus {
            format!("GPU{r}")
        } else {
            format!("NIC{}", r - gpus)
        };
        assert_eq!(got[r][0], expect_label, "{name}: row {r}");
        for c in 0..labels.len() {
            let (w, g) = (&row[c + 1], &got[r][c + 1]);
            if w.starts_with("NV") {
                assert!(r < gpus && c < gpus, "NV# only between GPUs");
            }
            if w != g && r < c {
                differ.push(format!("{}-{} {w} -> {g}", labels[r], labels[c]));
            }
        }
    }
    (differ, stderr)
}

#[test]
fn import_round_trips_every_consistent_sample() {
    for name in [
        "pcie-8gpu.txt",
        "workstation-2gpu.txt",
        "hgx-16gpu.txt",
        "dgx-a100.txt",
        "dgx-h100.txt",
        "dgx-h100-spaces.txt",
        "hgx-a100-4gpu.txt",
    ] {
        let (differ, stderr) = round_trip(name);
        assert!(differ.is_empty(), "{name}: cells differ: {differ:?}");
        assert!(
            stderr.contains(
                "note: parameters: GPUs h100-pcie (H100 PCIe, PCIe Gen5 x16), NICs connectx-7 \
                 (ConnectX-7 NDR, PCIe Gen5 x16); every other key the built-in defaults"
            ),
            "{stderr}"
        );
        let nv = fs::read_to_string(sample(name))
            .unwrap()
            .split_whitespace()
            .any(|t| {
                t.strip_prefix("NV")
                    .is_some_and(|n| n.parse::<u32>().is_ok())
            });
        assert_eq!(
            stderr.contains("note: NVLink: "),
            nv,
            "{name}: the NVLink note comes exactly with NV# cells: {stderr}"
        );
        assert!(!stderr.contains("differ"), "{name}: {stderr}");
    }
}

#[test]
fn an_inconsistent_matrix_keeps_its_gpu_nic_cells_and_says_which_differ() {
    let (differ, stderr) = round_trip("sys-same-numa.txt");
    assert_eq!(differ, vec!["GPU0-GPU1 NODE -> SYS"]);
    assert!(
        stderr.contains("1 cell(s) differ")
            && stderr.contains("GPU0-GPU1 NODE -> SYS (with NIC0: GPU0-NIC0 PIX, GPU1-NIC0 SYS)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("NUMA node 0 are on more than one socket"),
        "{stderr}"
    );
}

#[test]
fn import_pairs_each_gpu_with_its_nearest_nic() {
    let out = tmp("pairs.toml");
    let o = gdrsim(&[
        "import",
        "topo-m",
        &sample("pcie-8gpu.txt"),
        "--gpu",
        "h100-pcie",
        "--nic",
        "connectx-7",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let text = fs::read_to_string(&out).unwrap();
    let names: Vec<&str> = text
        .lines()
        .skip_while(|l| *l != "[[scenarios]]")
        .filter_map(|l| l.strip_prefix("name = "))
        .collect();
    assert_eq!(
        names,
        [
            "\"GPU0-NIC0\"",
            "\"GPU1-NIC0\"",
            "\"GPU2-NIC1\"",
            "\"GPU3-NIC1\"",
            "\"GPU4-NIC2\"",
            "\"GPU5-NIC2\"",
            "\"GPU6-NIC3\"",
            "\"GPU7-NIC3\"",
        ]
    );
    assert!(text.contains("sender = { host = \"node-a\", nic = \"mlx5_0\", gpu = \"gpu0\" }"));
    // Without --out, the same config on stdout.
    let o = gdrsim(&[
        "import",
        "topo-m",
        &sample("pcie-8gpu.txt"),
        "--gpu",
        "h100-pcie",
        "--nic",
        "connectx-7",
    ]);
    assert!(o.status.success());
    assert_eq!(String::from_utf8(o.stdout).unwrap(), text);
}

#[test]
fn like_takes_another_configs_parameters() {
    let out = tmp("like.toml");
    let o = gdrsim(&[
        "import",
        "topo-m",
        &sample("workstation-2gpu.txt"),
        "--like",
        "configs/dgx-h100.toml",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("parameters: the first machine of configs/dgx-h100.toml"),
        "{stderr}"
    );
    let text = fs::read_to_string(&out).unwrap();
    assert!(
        text.contains("model = \"H100 SXM5 80GB\""),
        "GPU parameters copied"
    );
    assert!(
        text.contains("wire_rate_gbps = 400"),
        "NIC parameters copied"
    );
    assert!(
        text.contains("dram_rate_gbps = \"300GB/s\""),
        "socket parameters copied"
    );
    assert!(gdrsim(&["check", out.to_str().unwrap()]).status.success());
    // A --like config that does not load is refused as a config (exit 2), nothing written.
    let _ = fs::remove_file(&out);
    let o = gdrsim(&[
        "import",
        "topo-m",
        &sample("workstation-2gpu.txt"),
        "--like",
        "tests/bad_configs/not-toml.toml",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!out.exists());
}

#[test]
fn gdrsim_topo_output_imports_back_to_the_same_cells() {
    // configs/topologies.toml has one GPU in each of the five placements.
    let first = topo_of(Path::new("configs/topologies.toml"));
    let src = tmp("topologies-topo.txt");
    let matrix: String = first.split("node-b (").next().unwrap().to_string();
    fs::write(&src, &matrix).unwrap();
    let out = tmp("topologies-import.toml");
    let o = gdrsim(&[
        "import",
        "topo-m",
        src.to_str().unwrap(),
        "--gpu",
        "h100-pcie",
        "--nic",
        "connectx-7",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(cells(&topo_of(&out)).1, cells(&matrix).1);
}

#[test]
fn bad_input_exits_2_naming_line_and_column_and_writes_nothing() {
    let good = fs::read_to_string(sample("workstation-2gpu.txt")).unwrap();
    let cases: [(&str, String, &str); 5] = [
        (
            "truncated",
            good.lines().take(2).map(|l| format!("{l}\n")).collect(),
            ":3:1: expected the row of GPU1 (3 rows in all: the matrix is truncated), found end of file",
        ),
        (
            "unknown-cell",
            good.replacen("PHB", "PHX", 1),
            ":2:10: expected a cell for column GPU1 (X, PIX, PXB, PHB, NODE, SYS or NV# with # from 1 to 36), found `PHX`",
        ),
        (
            "asymmetric",
            good.replace("NIC0\tPHB\tPHB", "NIC0\tPHB\tPXB"),
            ":4:10: expected PHB (the matrix is symmetric: GPU1 to NIC0 is PHB at line 3 column 14), found `PXB`",
        ),
        (
            "short-row",
            good.replace("GPU1\tPHB\t X \tPHB\t0-23\t0", "GPU1\tPHB\t X "),
            ":3:13: expected 3 cells in the row of GPU1 (one for column NIC0), found end of line",
        ),
        (
            "no-diagonal",
            good.replace("GPU1\tPHB\t X ", "GPU1\tPHB\tPHB"),
            ":3:10: expected X (the diagonal: GPU1 to itself), found `PHB`",
        ),
    ];
    for (what, text, message) in cases {
        assert_ne!(text, good, "{what}: the edit applies");
        let src = tmp(&format!("bad-{what}.txt"));
        fs::write(&src, &text).unwrap();
        let out = tmp(&format!("bad-{what}.toml"));
        let _ = fs::remove_file(&out);
        let o = gdrsim(&[
            "import",
            "topo-m",
            src.to_str().unwrap(),
            "--gpu",
            "h100-pcie",
            "--nic",
            "connectx-7",
            "--out",
            out.to_str().unwrap(),
        ]);
        refused(&o, what, &src, message, &out);
    }
    // A missing file is bad input too.
    let o = gdrsim(&["import", "topo-m", "tests/data/topo-m/no-such-file.txt"]);
    assert_eq!(o.status.code(), Some(2));
}

/// Issue #28 item 10: a matrix names no GPU or NIC model, so `import topo-m` takes them from
/// `--gpu` and `--nic` (or another machine's with `--like`/`--preset`) and never guesses:
/// without them it refuses (exit 2) naming the flags and the models, and writes nothing.
#[test]
fn models_come_from_gpu_and_nic_and_are_never_guessed() {
    let out = tmp("models.toml");
    let _ = fs::remove_file(&out);
    let src = sample("pcie-8gpu.txt");
    let run = |extra: &[&str]| {
        let mut a = vec![
            "import",
            "topo-m",
            src.as_str(),
            "--out",
            out.to_str().unwrap(),
        ];
        a.extend_from_slice(extra);
        gdrsim(&a)
    };
    for (extra, flag) in [
        (&[][..], "--gpu"),
        (&["--gpu", "l40s"][..], "--nic"),
        (&["--nic", "connectx-6"][..], "--gpu"),
    ] {
        let o = run(extra);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {e}");
        assert!(e.contains(&format!("key `{flag}`")), "{e}");
        assert!(e.contains("--gpu MODEL --nic MODEL"), "{e}");
        assert!(
            e.contains("h200-sxm") && e.contains("l4") && e.contains("bluefield-3"),
            "{e}"
        );
        assert!(e.contains("--gpu h100-pcie --nic connectx-7"), "{e}");
        assert!(!out.exists(), "{extra:?}: nothing is written");
    }
    let o = run(&["--gpu", "h300", "--nic", "connectx-7"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("key `--gpu`") && e.contains("\"h300\""), "{e}");
    assert!(e.contains("a100-pcie") && !e.contains("connectx-8"), "{e}");
    assert!(!out.exists());

    // With them every GPU and NIC names its model, and the links down to them train at the
    // model's generation and width.
    let o = run(&["--gpu", "l40s", "--nic", "connectx-6"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{e}");
    assert!(
        e.contains("GPUs l40s (L40S, PCIe Gen4 x16), NICs connectx-6"),
        "{e}"
    );
    let text = fs::read_to_string(&out).unwrap();
    assert_eq!(text.matches("preset = \"l40s\"").count(), 8);
    assert_eq!(text.matches("preset = \"connectx-6\"").count(), 5);
    assert!(
        text.contains("down = \"gpu0\"\ngeneration = 4\nwidth = 16"),
        "{text}"
    );
    let check = gdrsim(&["check", out.to_str().unwrap()]);
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let params = gdrsim(&["params", out.to_str().unwrap()]);
    assert!(params.status.success());
    let params = String::from_utf8(params.stdout).unwrap();
    let row = |key: &str| {
        params
            .lines()
            .find(|l| l.starts_with(&format!("{key} ")))
            .unwrap_or_else(|| panic!("{key} in\n{params}"))
            .split_whitespace()
            .nth(1)
            .unwrap()
            .to_string()
    };
    assert_eq!(row("machines[0].gpus[7].model"), "L40S");
    assert_eq!(row("machines[0].gpus[7].compute_capability"), "8.9");
    assert_eq!(row("machines[0].gpus[0].memory_rate_gbps"), "6912"); // 864 GB/s
    assert_eq!(row("machines[0].nics[0].wire_rate_gbps"), "200");
    assert!(params.contains(".generation "), "{params}");
    assert!(
        params
            .lines()
            .any(|l| l.contains(".generation ") && l.split_whitespace().nth(1) == Some("4")),
        "{params}"
    );
}

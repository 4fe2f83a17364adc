//! Issue #10, flows inside one host: a scenario whose sender and receiver are two GPUs of one
//! host runs as the cudaMemcpyPeer it is (`gpudirect` and `auto`: peer access over NVLink or
//! PCIe peer-to-peer, `staged`: through pinned host memory), driven as a user runs it:
//!
//! - classes NV18 (DGX H100 GPUs on the NVSwitch), PIX and SYS (a 2-socket PCIe server);
//! - NVLink copies at the bond's rate (links x per-link rate, from the config), PCIe peer
//!   copies and staged copies under a Gen5 x16 link's ceiling, small copies ordered PIX before
//!   SYS (row B14), staging slower than peer copies at every size;
//! - `read` has the destination's copy engine read its peer; without peer access `gpudirect`
//!   stages and says why;
//! - bad intra-host flows, paths and ops are exit 2 naming the key; walk and perftest refuse
//!   such a scenario; the resolved config loads back.

use std::collections::BTreeMap;
use std::fs;

use crate::support::{check_refuses, csv_rows, gdrsim, ok, run_study, s, scratch, text};

const STUDY: &str = r#"name = "intra"
[sim]
jitter = false
iterations = 3
stream_messages = 16
[sweep]
sizes = ["8B", "64MiB"]
paths = ["staged", "gpudirect", "auto"]
[[hosts]]
name = "a"
preset = "dgx-h100"
[[hosts]]
name = "b"
preset = "pcie-gen5-2s"
[[scenarios]]
name = "nvlink"
sender = { host = "a", gpu = "gpu0" }
receiver = { host = "a", gpu = "gpu1" }
[[scenarios]]
name = "pcie-pix"
sender = { host = "b", gpu = "gpu0" }
receiver = { host = "b", gpu = "gpu1" }
[[scenarios]]
name = "pcie-sys"
sender = { host = "b", gpu = "gpu0" }
receiver = { host = "b", gpu = "gpu4" }
"#;

type Row = BTreeMap<String, String>;

fn run(name: &str, text_in: &str) -> (Vec<Row>, std::path::PathBuf) {
    let (_, out) = run_study("intra", name, text_in);
    (csv_rows(&out.join("results.csv")), out)
}

fn find<'a>(rows: &'a [Row], scenario: &str, path: &str, size: &str) -> &'a Row {
    rows.iter()
        .find(|r| r["scenario"] == scenario && r["path"] == path && r["size_bytes"] == size)
        .unwrap_or_else(|| panic!("no row {scenario} {path} {size}"))
}

fn num(r: &Row, col: &str) -> f64 {
    r[col].parse().unwrap()
}

#[test]
fn copies_between_gpus_of_one_host_take_nvlink_pcie_or_host_memory() {
    let (rows, out) = run("study", STUDY);
    for (sc, class) in [("nvlink", "NV18"), ("pcie-pix", "PIX"), ("pcie-sys", "SYS")] {
        let r = find(&rows, sc, "gpudirect", "8");
        assert_eq!(r["class"], class, "{sc}");
        assert_eq!(r["effective_path"], "gpudirect", "{sc}");
        assert!(r["reason"].ends_with("copy engine writes into gpu1's memory") || sc == "pcie-sys");
        assert_eq!(find(&rows, sc, "auto", "8")["effective_path"], "gpudirect");
        assert_eq!(find(&rows, sc, "staged", "8")["effective_path"], "staged");
        // Staging copies twice, each with its launch and completion; across the sockets of a
        // Sapphire Rapids host the peer copy is capped at the family's 22 GB/s (row P11) and
        // staging overtakes it at 64 MiB.
        for size in ["8", "67108864"] {
            let (st, gd) = (
                find(&rows, sc, "staged", size),
                find(&rows, sc, "gpudirect", size),
            );
            let staged_slower = num(st, "lat_model_us") > num(gd, "lat_model_us");
            assert_eq!(
                staged_slower,
                !(sc == "pcie-sys" && size == "67108864"),
                "{sc} {size}: staged {st:?} against {gd:?}"
            );
        }
        // No host memory for a peer copy, twice the size for a staged one.
        assert_eq!(
            find(&rows, sc, "gpudirect", "67108864")["host_mem_bytes"],
            "0"
        );
        assert_eq!(
            num(find(&rows, sc, "staged", "67108864"), "host_mem_bytes"),
            2.0 * 67108864.0
        );
    }
    // NVLink: the bond's payload ceiling, 18 links of 25 GB/s each way (the preset's) less two
    // 16-byte flits per 256-byte packet: 400 GB/s.
    let nv = num(find(&rows, "nvlink", "gpudirect", "67108864"), "bw_GBps");
    let ceiling = 450.0 * 256.0 / 288.0;
    assert!(nv <= ceiling && nv > 0.97 * ceiling, "NVLink copy {nv}");
    // PCIe: at most a Gen5 x16 link's posted-write ceiling (C5: 52.0 GB/s at MPS 256).
    for (sc, path) in [
        ("pcie-pix", "gpudirect"),
        ("pcie-pix", "staged"),
        ("pcie-sys", "staged"),
    ] {
        let bw = num(find(&rows, sc, path, "67108864"), "bw_GBps");
        assert!(bw < 52.1 && bw > 40.0, "{sc} {path}: {bw}");
    }
    // Across the sockets: the socket link's P2P cap of the preset's Sapphire Rapids (row P11).
    let sys = find(&rows, "pcie-sys", "gpudirect", "67108864");
    assert!(
        num(sys, "bw_GBps") <= 22.0 && num(sys, "bw_GBps") > 21.0,
        "{sys:?}"
    );
    assert!(sys["bottleneck"].contains("p2p-write"), "{sys:?}");
    // Small copies: under one switch before across the sockets (row B14).
    assert!(
        num(find(&rows, "pcie-pix", "gpudirect", "8"), "lat_model_us")
            < num(find(&rows, "pcie-sys", "gpudirect", "8"), "lat_model_us")
    );
    // Its ends are GPUs, no NIC.
    let flows = csv_rows(&out.join("flows.csv"));
    let f = flows.iter().find(|r| r["scenario"] == "nvlink").unwrap();
    assert_eq!(
        (f["sender"].as_str(), f["receiver"].as_str()),
        ("a/gpu0", "a/gpu1")
    );
    // The stage of a copy between GPUs is memcpy_peer; the resolved config loads back.
    let stages = csv_rows(&out.join("stages.csv"));
    assert!(
        stages
            .iter()
            .filter(|r| r["scenario"] == "nvlink")
            .all(|r| r["stage"] == "memcpy_peer")
    );
    ok(&gdrsim(&["check", s(&out.join("config.toml"))]), "resolved");
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("a/nvlink:gpu0>nvswitch -> a/nvswitch -> a/nvlink:nvswitch>gpu1"));
}

#[test]
fn reads_and_refused_peer_access_are_said() {
    let reads = STUDY.replace(
        "paths = [\"staged\", \"gpudirect\", \"auto\"]",
        "paths = [\"gpudirect\"]\nops = [\"read\"]",
    );
    let (rows, _) = run("read", &reads);
    let r = find(&rows, "nvlink", "gpudirect", "8");
    assert_eq!(r["op"], "read");
    assert_eq!(r["reason"], "gpu1's copy engine reads gpu0's memory");
    // The sockets of the PCIe server refuse peer-to-peer reads: no peer access across them.
    let refused = STUDY
        .replace(
            "[[scenarios]]\nname = \"nvlink\"",
            "[[machines]]\nname = \"no-p2p\"\npreset = \"pcie-gen5-2s\"\n\
         [[machines.socket_links]]\na = \"cpu0\"\nb = \"cpu1\"\np2p_read = false\n\
         [[scenarios]]\nname = \"nvlink\"",
        )
        .replace(
            "name = \"b\"\npreset = \"pcie-gen5-2s\"",
            "name = \"b\"\nmachine = \"no-p2p\"",
        );
    let (rows, _) = run("refused", &refused);
    let r = find(&rows, "pcie-sys", "gpudirect", "8");
    assert_eq!(r["effective_path"], "staged");
    assert_eq!(
        r["reason"],
        "no peer access between gpu0 and gpu4 -> staged through host memory"
    );
    assert_eq!(
        find(&rows, "pcie-pix", "gpudirect", "8")["effective_path"],
        "gpudirect"
    );
}

#[test]
fn bad_flows_inside_one_host_are_refused_naming_the_key() {
    let dir = scratch("intra", "bad");
    let cases = [
        (
            STUDY.replace(
                "receiver = { host = \"a\", gpu = \"gpu1\" }",
                "receiver = { host = \"a\", gpu = \"gpu0\" }",
            ),
            "scenarios[0].receiver.gpu",
            "another GPU than the sender's",
        ),
        (
            STUDY.replace(
                "receiver = { host = \"a\", gpu = \"gpu1\" }",
                "receiver = { host = \"a\", gpu = \"gpu1\", buffer = \"host\" }",
            ),
            "scenarios[0].receiver.buffer",
            "GPU memory on both sides",
        ),
        (
            STUDY.replace("\"staged\", \"gpudirect\"", "\"host\", \"gpudirect\""),
            "sweep.paths",
            "paths a copy between two GPUs has",
        ),
        (
            STUDY.replace(
                "paths = [\"staged\", \"gpudirect\", \"auto\"]",
                "paths = [\"gpudirect\"]\nops = [\"send\"]",
            ),
            "sweep.ops",
            "operations a copy between two GPUs has",
        ),
        (
            STUDY.replace(
                "receiver = { host = \"a\", gpu = \"gpu1\" }",
                "receiver = { host = \"b\", gpu = \"gpu1\" }",
            ),
            "scenarios[0].sender.nic",
            "a flow between hosts crosses the network",
        ),
    ];
    for (i, (body, key, needle)) in cases.iter().enumerate() {
        check_refuses(&dir, &format!("bad{i}"), body, key, needle);
    }
    let p = dir.join("ok.toml");
    fs::write(&p, STUDY).unwrap();
    for args in [
        vec!["walk", s(&p), "--size", "4096"],
        vec!["perftest", "ib_write_bw", s(&p)],
    ] {
        let o = gdrsim(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            text(&o.stderr).contains("a scenario between two hosts"),
            "{args:?}"
        );
        assert!(o.stdout.is_empty());
    }
    // trace takes such a scenario, with the paths and ops a copy has.
    let t = dir.join("t.json");
    for (flag, value, needle) in [
        (
            "--path",
            "pxn",
            "a path a copy between two GPUs of one host has",
        ),
        ("--op", "send", "an operation a copy between two GPUs has"),
    ] {
        let mut args = vec!["trace", s(&p), "--size", "4KiB", "--out", s(&t)];
        args.extend([flag, value]);
        if flag == "--op" {
            args.extend(["--path", "gpudirect"]);
        }
        let o = gdrsim(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            text(&o.stderr).contains(needle),
            "{args:?}: {}",
            text(&o.stderr)
        );
        assert!(!t.exists());
    }
    let args = [
        "trace",
        s(&p),
        "--size",
        "4KiB",
        "--path",
        "gpudirect",
        "--out",
        s(&t),
    ];
    ok(&gdrsim(&args), "trace");
}

/// A study with NV# classes runs as shards and merges back to the local run (the shard files
/// carry NV18, which a config's class keys never take).
#[test]
fn shards_of_an_nvlink_study_merge_to_the_local_run() {
    let (c, full) = run_study("intra", "shards", STUDY);
    let dir = c.parent().unwrap().to_path_buf();
    let mut shards = Vec::new();
    for k in 0..2 {
        let d = dir.join(format!("s{k}"));
        let shard = format!("{k}/2");
        ok(
            &gdrsim(&["run", s(&c), "--quiet", "--shard", &shard, "--out", s(&d)]),
            "shard",
        );
        shards.push(d);
    }
    let merged = dir.join("merged");
    ok(
        &gdrsim(&["merge", s(&merged), s(&shards[0]), s(&shards[1]), "--quiet"]),
        "merge",
    );
    for f in ["results.csv", "stages.csv", "flows.csv"] {
        assert_eq!(
            fs::read(merged.join(f)).unwrap(),
            fs::read(full.join(f)).unwrap(),
            "{f}"
        );
    }
}

//! Issue #10, NVLink-C2C: a Grace Hopper GPU hangs from its socket by `[[machines.c2c_links]]`
//! instead of a PCIe link, driven as a user runs configs/gh200.toml:
//!
//! - `gdrsim topo` classes its GPU NODE to the NIC on a root port of the same Grace (C2C is the
//!   GPU's host bridge), and `gdrsim params` lists the link's parameters with their sources;
//! - copies between Grace memory and the GPU cross C2C: nvbandwidth's D2H runs at the link's
//!   payload ceiling computed here from the config (rate x MPS / (MPS + header)), H2D at most
//!   that and bound by the copy engine's read window, both far above a Gen5 x16 link's ~52 GB/s;
//! - the `auto` path takes GPUDirect over NCCL's P2C path (row G3, `NCCL_NET_GDR_C2C`) and
//!   stages with `net_gdr_c2c = false`, each with its reason;
//! - a bad `c2c_links` table is exit 2 naming its key.

use std::fs;

use crate::support::{check_refuses, csv_rows, gdrsim, ok, s, scratch};

const GH200: &str = "configs/gh200.toml";

/// The figure of a one-GPU nvbandwidth testcase on configs/gh200.toml.
fn nvbandwidth(testcase: &str) -> f64 {
    let out = ok(&gdrsim(&["nvbandwidth", testcase, GH200]), testcase);
    let sum = out
        .lines()
        .find_map(|l| l.strip_prefix(&format!("SUM {testcase} ")))
        .unwrap_or_else(|| panic!("no SUM line in\n{out}"));
    sum.trim().parse().expect("a figure")
}

#[test]
fn the_gpu_hangs_from_grace_by_c2c_and_is_node_to_its_nic() {
    let topo = ok(&gdrsim(&["topo", GH200]), "topo");
    let row = topo
        .lines()
        .find(|l| l.starts_with("GPU0\t"))
        .expect("a GPU0 row");
    let cells: Vec<&str> = row.split('\t').map(str::trim).collect();
    assert_eq!(&cells[1..4], ["X", "NODE", "grace"], "{row}");
    let params = ok(&gdrsim(&["params", GH200]), "params");
    for (key, source) in [
        ("machines[0].c2c_links[0].rate_gbps", "datasheet"),
        ("machines[0].c2c_links[0].latency_ns", "estimate"),
        ("machines[0].c2c_links[0].mps_bytes", "estimate"),
        ("machines[0].c2c_links[0].overhead_bytes", "estimate"),
    ] {
        let line = params
            .lines()
            .find(|l| l.split_whitespace().next() == Some(key))
            .unwrap_or_else(|| panic!("{key} in\n{params}"));
        assert!(line.contains(source), "{line}");
    }
    // No PCIe link above the GPU: its only link is C2C.
    let cfg = gdrsim::config::load(std::path::Path::new(GH200)).unwrap();
    let m = &cfg.hosts[0].machine;
    assert!(m.links.iter().all(|l| l.down != "gpu0"));
    assert_eq!(m.c2c_links.len(), 1);
}

#[test]
fn copies_between_grace_memory_and_the_gpu_cross_c2c() {
    let cfg = gdrsim::config::load(std::path::Path::new(GH200)).unwrap();
    let l = &cfg.hosts[0].machine.c2c_links[0];
    // Posted writes of MPS bytes each pay one header on the link.
    let ceiling = l.rate.bps() as f64 / 8e9 * l.mps as f64 / (l.mps + l.overhead) as f64;
    // ... or Grace's DRAM, at its sustained share of the datasheet peak (row C20), below it.
    let s = &cfg.hosts[0].machine.sockets[0];
    let dram = s.dram.rate.bps() as f64 / 8e9 * f64::from(s.dram_efficiency_pct) / 100.0;
    let bound = ceiling.min(dram);
    let d2h = nvbandwidth("device_to_host_memcpy_ce");
    let h2d = nvbandwidth("host_to_device_memcpy_ce");
    assert!(
        d2h <= bound && d2h > 0.98 * bound,
        "D2H {d2h} at the C2C ceiling {ceiling} or the DRAM's {dram}"
    );
    assert!(h2d <= ceiling, "H2D {h2d} under the ceiling {ceiling}");
    // Row L1: ~346 GB/s H2D over C2C (the preset's read window is calibrated on it).
    assert!((h2d / 346.0 - 1.0).abs() < 0.05, "H2D {h2d} against row L1");
    // A PCIe Gen5 x16 GPU (the default machine) copies at ~52 GB/s.
    let pcie = ok(
        &gdrsim(&["nvbandwidth", "host_to_device_memcpy_ce"]),
        "default",
    );
    // The first GPU's cell: the matrix's first row after its title and column line.
    let lines: Vec<&str> = pcie.lines().collect();
    let title = lines
        .iter()
        .position(|l| l.starts_with("memcpy CE CPU(row) -> GPU(column)"))
        .expect("the matrix title");
    let pcie: f64 = lines[title + 2]
        .split_whitespace()
        .nth(1)
        .expect("a cell")
        .parse()
        .unwrap();
    assert!(h2d > 5.0 * pcie, "C2C {h2d} against PCIe {pcie}");
}

/// The `effective_path` and `reason` of the 8-byte `auto` row of a run of `config`.
fn auto_row(config: &std::path::Path, out: &std::path::Path) -> (String, String) {
    ok(
        &gdrsim(&["run", s(config), "--quiet", "--out", s(out)]),
        "run",
    );
    let rows = csv_rows(&out.join("results.csv"));
    let row = rows
        .iter()
        .find(|r| r["path"] == "auto" && r["size_bytes"] == "8")
        .expect("an auto row at 8 B");
    (row["effective_path"].clone(), row["reason"].clone())
}

#[test]
fn auto_takes_gpudirect_over_p2c_as_nccl_net_gdr_c2c_does() {
    let dir = scratch("c2c", "auto");
    let text_in = fs::read_to_string(GH200).unwrap();
    let cut = |t: &str| {
        t.replace(
            "sizes = { from = \"8B\", to = \"256MiB\", factor = 8 }",
            "sizes = [\"8B\"]",
        )
        .replace(
            "paths = [\"staged\", \"staged_pipelined\", \"gpudirect\", \"auto\"]",
            "paths = [\"auto\"]",
        )
    };
    let on = dir.join("on.toml");
    fs::write(&on, cut(&text_in)).unwrap();
    let (eff, reason) = auto_row(&on, &dir.join("on"));
    assert_eq!(eff, "gpudirect");
    assert!(
        reason.contains("over NVLink-C2C (P2C) within NET_GDR_C2C"),
        "{reason}"
    );
    let off = dir.join("off.toml");
    fs::write(
        &off,
        cut(&text_in).replace(
            "stream_messages = 48\n",
            "stream_messages = 48\nnet_gdr_c2c = false\n",
        ),
    )
    .unwrap();
    let (eff, reason) = auto_row(&off, &dir.join("off"));
    assert_eq!(eff, "nccl_host");
    assert!(reason.contains("NODE beyond NET_GDR_LEVEL PXB"), "{reason}");
}

#[test]
fn bad_c2c_tables_are_refused_naming_the_key() {
    let dir = scratch("c2c", "bad");
    let base = "name = \"c\"\n[sweep]\nsizes = [\"8B\"]\npaths = [\"gpudirect\"]\n[[machines]]\nname = \"m\"\npreset = \"gh200\"\n{extra}\
                [[hosts]]\nname = \"a\"\nmachine = \"m\"\n[[hosts]]\nname = \"b\"\nmachine = \
                \"m\"\n[[scenarios]]\nname = \"s\"\nsender = { host = \"a\", nic = \"nic0\", gpu \
                = \"gpu0\" }\nreceiver = { host = \"b\", nic = \"nic0\", gpu = \"gpu0\" }\n";
    let cases = [
        (
            "[[machines.links]]\nup = \"rc0\"\ndown = \"gpu0\"\ngeneration = 5\nwidth = 16\n",
            "machines[0].links[1].down",
            "without an NVLink-C2C link",
        ),
        (
            "[[machines.c2c_links]]\ngpu = \"gpu0\"\nsocket = \"cpu9\"\n",
            "machines[0].c2c_links[0].socket",
            "one of the machine's sockets",
        ),
        (
            "[[machines.c2c_links]]\ngpu = \"gpu0\"\nrate_gbps = \"fast\"\n",
            "machines[0].c2c_links[0].rate_gbps",
            "expected",
        ),
        (
            "[[machines.c2c_links]]\ngpu = \"gpu7\"\nsocket = \"grace\"\n",
            "machines[0].c2c_links[1].gpu",
            "a GPU of this machine",
        ),
        (
            "[[machines.c2c_links]]\ngpu = \"gpu0\"\nmps_bytes = 100\n",
            "machines[0].c2c_links[0].mps_bytes",
            "expected",
        ),
    ];
    for (i, (extra, key, needle)) in cases.iter().enumerate() {
        let body = base.replace("{extra}", extra);
        check_refuses(&dir, &format!("bad{i}"), &body, key, needle);
    }
    // Two links for one GPU, in a machine spelled out.
    let two = "name = \"c\"\n[sweep]\nsizes = [\"8B\"]\npaths = [\"gpudirect\"]\n[[machines]]\nname = \"m\"\n[[machines.sockets]]\nname = \"s0\"\n\
               [[machines.root_complexes]]\nname = \"rc0\"\nsocket = \"s0\"\n\
               [[machines.gpus]]\nname = \"g\"\n[[machines.nics]]\nname = \"n\"\n\
               [[machines.links]]\nup = \"rc0\"\ndown = \"n\"\ngeneration = 5\nwidth = 16\n\
               [[machines.c2c_links]]\nsocket = \"s0\"\ngpu = \"g\"\n\
               [[machines.c2c_links]]\nsocket = \"s0\"\ngpu = \"g\"\n\
               [[hosts]]\nname = \"a\"\nmachine = \"m\"\n[[hosts]]\nname = \"b\"\nmachine = \"m\"\n\
               [[scenarios]]\nname = \"s\"\nsender = { host = \"a\", nic = \"n\", gpu = \"g\" }\n\
               receiver = { host = \"b\", nic = \"n\", gpu = \"g\" }\n";
    check_refuses(
        &dir,
        "two",
        two,
        "machines[0].c2c_links[1].gpu",
        "one NVLink-C2C link per GPU",
    );
}

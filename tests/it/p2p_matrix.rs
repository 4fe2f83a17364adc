//! Issue #10, intra-node transfers: `gdrsim p2p-matrix` measures every GPU pair of a host as
//! CUDA's p2pBandwidthLatencyTest does, over NVLink, PCIe peer-to-peer or host staging.

use crate::support::{gdrsim, ok, s, scratch, text};
use std::fs;

/// A matrix of the report by its title: rows of cells, the GPU index column dropped.
fn matrix(out: &str, title: &str) -> Vec<Vec<f64>> {
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|l| *l == title)
        .unwrap_or_else(|| panic!("{title} in\n{out}"));
    lines[at + 2..]
        .iter()
        .take_while(|l| l.starts_with("     ") && !l.trim().is_empty())
        .map(|l| {
            l.split_whitespace()
                .skip(1)
                .map(|v| v.parse().unwrap())
                .collect()
        })
        .collect()
}

/// DGX H100 (configs/dgx-h100.toml: 18 NVLink 4 links per GPU into the NVSwitch, 25 GB/s
/// each way per link = 450 GB/s, 400 GB/s of payload beside two 16-byte flits per 256-byte
/// packet): every pair has peer access; P2P writes between two GPUs run at the bond's payload
/// rate, within 8% (each 16 MB copy's own latency, about 1 µs, and the copy engine's 1.6 µs per
/// copy, against its 40 µs) and never above it; both ways at once carry twice as much, within
/// 8% and never above 800; with P2P off the copies stage
/// through host memory over PCIe
/// Gen5 x16 (~63 GB/s raw each way) and run below that. Every cell is in the CSV, and the
/// heatmap is written.
#[test]
fn nvlink_pairs_run_at_the_bond_rate_and_staging_below_pcie() {
    let dir = scratch("p2p_matrix", "h100");
    let (csv, svg) = (dir.join("p2p.csv"), dir.join("p2p.svg"));
    let out = ok(
        &gdrsim(&[
            "p2p-matrix",
            "configs/dgx-h100.toml",
            "--numElems",
            "4000000",
            "--csv",
            s(&csv),
            "--chart",
            s(&svg),
        ]),
        "p2p-matrix",
    );
    assert!(out.starts_with("[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]\n"));
    assert!(!out.contains("CANNOT"), "{out}");
    let uni = matrix(
        &out,
        "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)",
    );
    let bi = matrix(&out, "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)");
    let off = matrix(&out, "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)");
    assert_eq!(uni.len(), 8);
    for i in 0..8 {
        for j in (0..8).filter(|&j| j != i) {
            assert!(
                uni[i][j] <= 400.0 && uni[i][j] > 400.0 * 0.92,
                "{i}-{j}: {}",
                uni[i][j]
            );
            assert!(
                bi[i][j] <= 800.0 && bi[i][j] > 800.0 * 0.92,
                "{i}-{j}: {}",
                bi[i][j]
            );
            assert!(
                off[i][j] < 63.0 && off[i][j] > 20.0,
                "{i}-{j}: {}",
                off[i][j]
            );
        }
    }
    // The diagonal: a copy within one GPU, its bytes counted twice (read and write) in both
    // matrices as the sample counts them; the two copies at once of the bidirectional one share
    // the same memory, so its figure is about the unidirectional one (not half of it: above it
    // by up to a quarter at these 16 MB copies, as each copy's fixed cost, 2.3 µs against ~10
    // µs of transfer, hides behind the other's transfer), both under twice HBM3's 3.35 TB/s.
    for (i, row) in uni.iter().enumerate() {
        let (u, b) = (row[i], bi[i][i]);
        assert!(b >= u && b < 1.3 * u, "gpu{i}: uni {u} bi {b}");
        assert!(u < 2.0 * 3350.0, "gpu{i}: {u}");
    }
    let lat = matrix(&out, "P2P=Enabled Latency (P2P Writes) Matrix (us)");
    let lat_off = matrix(&out, "P2P=Disabled Latency Matrix (us)");
    assert!(
        lat[0][1] < lat_off[0][1],
        "NVLink {} staged {}",
        lat[0][1],
        lat_off[0][1]
    );
    // Latency on the GPU's timeline: a 16-byte copy within one GPU within row L6's 2.29 to
    // 2.95 µs (HGX A100, the copy engine's per-copy cost dominating), and a P2P write over
    // NVLink above it by less than a microsecond (the bond and the NVSwitch crossed twice).
    for (i, row) in lat.iter().enumerate() {
        let (own, peer) = (row[i], row[(i + 1) % 8]);
        assert!((2.29..=2.95).contains(&own), "gpu{i}: {own}");
        assert!(
            peer > own && peer < own + 1.0,
            "gpu{i} to its neighbour: {peer}"
        );
    }
    let rows = fs::read_to_string(&csv).unwrap();
    // 8 matrices (4 bandwidth, 2 x GPU and CPU latency) of 64 cells, and the header.
    assert_eq!(rows.lines().count(), 1 + 8 * 64, "{rows}");
    assert!(rows.starts_with("host,matrix,src_gpu,dst_gpu,value,unit,peer_access\n"));
    let chart = fs::read_to_string(&svg).unwrap();
    assert!(chart.starts_with("<svg") && chart.contains("GPU7"));
    let _ = fs::remove_dir_all(&dir);
}

/// PCIe peer-to-peer between GPUs ordered as row B14 describes ("~100 ns cut-through latency
/// on PCIe switches vs 1-2 us on CPU root port"): two GPUs under one switch (PIX) are nearer
/// than two on different root complexes of a socket (NODE), and those nearer than two on
/// different sockets (SYS), in latency and bandwidth; across sockets the socket link caps the
/// bandwidth. The machine is imported from tests/data/topo-m/pcie-b14.txt. (B14's Turin
/// figures put a same-NUMA pair at 0.36 µs below a same-switch pair at 0.45 µs; the model,
/// with its root complex slower than a switch, does not reproduce that inversion.)
#[test]
fn pcie_peer_copies_order_pix_node_sys() {
    let dir = scratch("p2p_matrix", "b14");
    let cfg = dir.join("b14.toml");
    ok(
        &gdrsim(&[
            "import",
            "topo-m",
            "tests/data/topo-m/pcie-b14.txt",
            "--gpu",
            "h100-pcie",
            "--nic",
            "connectx-7",
            "--out",
            s(&cfg),
        ]),
        "import",
    );
    let out = ok(
        &gdrsim(&["p2p-matrix", s(&cfg), "--numElems", "4000000", "--p2p_read"]),
        "p2p-matrix",
    );
    for (bw, lat) in [
        (
            "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)",
            "P2P=Enabled Latency (P2P Writes) Matrix (us)",
        ),
        (
            "Unidirectional P2P=Enabled Bandwidth (P2P Reads) Matrix (GB/s)",
            "P2P=Enabled Latency (P2P Reads) Matrix (us)",
        ),
    ] {
        let (b, l) = (matrix(&out, bw), matrix(&out, lat));
        // GPU0-GPU1 PIX, GPU0-GPU2 NODE, GPU0-GPU3 SYS.
        assert!(l[0][1] < l[0][2] && l[0][2] < l[0][3], "{lat}: {:?}", l[0]);
        assert!(b[0][1] >= b[0][2] && b[0][2] > b[0][3], "{bw}: {:?}", b[0]);
        assert!(
            b[0][3] <= 32.0,
            "the 32 GB/s socket link caps SYS: {}",
            b[0][3]
        );
    }
    for bad in [
        vec!["p2p-matrix", "--csv", "cells.txt"],
        vec!["p2p-matrix", "--host", "nowhere"],
        vec!["p2p-matrix", "--numElems", "0"],
    ] {
        let o = gdrsim(&bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", text(&o.stderr));
    }
    let _ = fs::remove_dir_all(&dir);
}

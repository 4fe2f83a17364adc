//! Plausible synthetic results for the chart and report tests (no simulation involved).
//!
//! A crude pipeline model: every stage has a fixed cost plus, for payload stages, the bytes over
//! its rate; only the bottleneck payload stage carries the whole message, the others one 4 KiB
//! chunk (pipelining). Staged pays two cudaMemcpy's in series; GPUDirect reads GPU memory over
//! peer-to-peer, whose rate depends on the placement class, so on SYS staged wins for large
//! messages and the speedup chart has crossovers.

use crate::config::choice::Choice;
use crate::config::{ChartKind, Op, PathKind};
use crate::effective::EffectivePath;
use crate::topology::Affinity;

use crate::record::Stage;
use crate::report::{OutputOptions, RunInfo, ScenarioInfo};
use crate::stats::{LatencyStats, LinkRow, StageRow, Summary};
use crate::units::PS_PER_US;

/// (name, class, peer-to-peer read rate GB/s, ceiling GB/s)
pub const SCENARIOS: [(&str, &str, f64, f64); 3] = [
    ("PIX", "PIX", 48.0, 49.3),
    ("PHB", "PHB", 30.0, 49.3),
    ("SYS", "SYS", 7.0, 49.3),
];

/// 8 B, 64 B, ..., 1 GiB (every third power of two).
pub fn sweep() -> Vec<u64> {
    (3..=30).step_by(3).map(|k| 1u64 << k).collect()
}

/// A run description of `scenarios` (name, class, peer-to-peer rate and ceiling in GB/s), every
/// chart on.
pub fn info(scenarios: &[(&str, &str, f64, f64)]) -> RunInfo {
    RunInfo {
        config_name: "synthetic".into(),
        hardware: "H100 (PCIe Gen5 x16) + ConnectX-7 NDR 400 Gb/s".into(),
        command: "gdrsim run configs/synthetic.toml --out /tmp/x".into(),
        scenarios: scenarios
            .iter()
            .enumerate()
            .map(|(i, &(name, class, _, ceiling))| ScenarioInfo {
                name: name.into(),
                class: Affinity::from_name(class),
                flows: 1,
                route: ["gpu0", "pcie Gen5 x16", "sw0", "pcie Gen5 x16", "nic0"]
                    .map(String::from)
                    .to_vec(),
                topo_matrix: if i == 0 {
                    "        GPU0  NIC0\nGPU0     X    PIX\nNIC0    PIX    X".into()
                } else {
                    String::new()
                },
                ceiling_gbps: ceiling - i as f64 * 3.0,
                ceiling_label: format!(
                    "wire NDR 400 Gb/s eff. {:.1} GB/s",
                    ceiling - i as f64 * 3.0
                ),
            })
            .collect(),
        output: OutputOptions {
            charts: ChartKind::ALL.to_vec(),
            ..OutputOptions::default()
        },
        fragile: None,
        measured: None,
        variants: Vec::new(),
    }
}

fn us(v: f64) -> u64 {
    (v * PS_PER_US as f64).round() as u64
}

/// One row of the synthetic model.
pub fn row(scenario: (&str, &str, f64, f64), path: &str, size: u64) -> Summary {
    let (name, class, p2p, _) = scenario;
    let b = size as f64;
    let chunk = b.min(4096.0);
    // The further the NIC sits from the GPU (lower peer-to-peer rate), the more each DMA pays in
    // fixed latency and the slower host-memory DMA gets: PIX 0 µs, PHB 0.45 µs, SYS 1 µs.
    let far = (48.0 - p2p) / 40.0;
    let host_dma = 52.0e9 - (48.0 - p2p) * 0.3e9;
    let wire = 49.0e9;
    let memcpy = 24.0e9;
    let dma = if path == "gpudirect" {
        p2p * 1e9
    } else {
        host_dma
    };
    let payload = [
        (Stage::DmaRead, dma, 0.6 + far),
        (Stage::Wire, wire, 0.9),
        (Stage::DmaWrite, dma, 0.55 + far),
    ];
    // Only the first slowest payload stage carries the whole message; the rest one chunk.
    let slowest = payload.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let first_slowest = payload.iter().position(|p| p.1 == slowest).unwrap_or(0);
    let mut stages: Vec<(Stage, f64)> = vec![(Stage::Post, 0.35), (Stage::WqeFetch, 0.45)];
    for (i, (st, rate, fixed)) in payload.into_iter().enumerate() {
        let bytes = if i == first_slowest { b } else { chunk };
        stages.push((st, fixed + bytes / rate * 1e6));
    }
    stages.extend([
        (Stage::NicTx, 0.12),
        (Stage::NicRx, 0.12),
        (Stage::Cqe, 0.3),
        (Stage::Poll, 0.25),
    ]);
    if path == "staged" {
        stages.push((Stage::MemcpyD2h, 4.5 + b / memcpy * 1e6));
        stages.push((Stage::MemcpyH2d, 4.5 + b / memcpy * 1e6));
    }
    if path == "gpudirect" {
        stages.push((Stage::Flush, 0.9));
    }
    stages.sort_by_key(|(st, _)| *st);
    let rows: Vec<StageRow> = stages
        .iter()
        .map(|&(stage, t)| StageRow {
            stage,
            component: "c".into(),
            start_ps: 0,
            end_ps: us(t),
            critical_ps: us(t),
        })
        .collect();
    let model_ps: u64 = rows.iter().map(|r| r.critical_ps).sum();
    let model = model_ps as f64 / PS_PER_US as f64;
    let bottleneck = if path == "staged" {
        slowest.min(memcpy)
    } else {
        slowest
    };
    let overhead = if path == "staged" {
        350_000.0
    } else {
        40_000.0
    };
    Summary {
        variant: String::new(),
        scenario: name.into(),
        class: Affinity::from_name(class).expect("a test class"),
        path: PathKind::from_word(path).expect("a test path"),
        effective_path: EffectivePath::from_name(path).expect("a test path"),
        op: Op::WriteImm,
        size_bytes: size,
        iterations: 1000,
        lat_model_ps: model_ps,
        lat: LatencyStats {
            min_us: model * 1.004,
            p50_us: model * 1.03,
            mean_us: model * 1.04,
            p99_us: model * 1.18,
            max_us: model * 1.4,
            stdev_us: model * 0.04,
            ci95_us: model * 0.003,
        },
        bw_gbps: bottleneck / 1e9 * b / (b + overhead),
        msg_rate_mps: bottleneck / (b + overhead) / 1e6,
        cpu_busy_ps: us(0.6),
        host_mem_bytes: match path {
            "staged" => 4 * size,
            "host" => 2 * size,
            _ => 0,
        },
        setup_ps: 0,
        stages: rows,
        flows: 1,
        bottleneck: crate::bottleneck::Bottleneck::Channel("wire:a/nic0>switch1".into()),
        reason: String::new(),
        rnr_naks: 0,
        steady: true,
        flow_rows: Vec::new(),
        links: links(path, bottleneck / 1e9 * b / (b + overhead)),
        workload_ps: None,
        busbw_gbps: None,
        chain: Vec::new(),
        fabric: None,
    }
}

/// The channels a synthetic streaming run crossed: the wire at the run's rate, the NIC's and
/// (for staged) the host memory's links below it.
fn links(path: &str, gbps: f64) -> Vec<LinkRow> {
    let mut out = vec![
        ("a/wire:nic0>switch1", 50.0),
        ("a/pcie:sw0>nic0", 63.0),
        ("b/pcie:nic0>sw0", 63.0),
    ];
    if path == "staged" {
        out.push(("a/dram:cpu0", 150.0));
    }
    out.into_iter()
        .map(|(channel, capacity)| LinkRow {
            channel: channel.into(),
            bytes: (gbps * 1e9 * 0.01) as u64,
            busy: (gbps / capacity).min(1.0),
            rate_gbps: gbps,
            capacity_gbps: capacity,
        })
        .collect()
}

/// Every scenario x path x size of a realistic run.
pub fn rows(scenarios: &[(&str, &str, f64, f64)], paths: &[&str], sizes: &[u64]) -> Vec<Summary> {
    let mut out = Vec::new();
    for &s in scenarios {
        for p in paths {
            for &z in sizes {
                out.push(row(s, p, z));
            }
        }
    }
    out
}

/// The full realistic set: 3 scenarios x host/staged/gpudirect x 8 B..1 GiB.
pub fn realistic() -> (RunInfo, Vec<Summary>) {
    (
        info(&SCENARIOS),
        rows(&SCENARIOS, &["host", "staged", "gpudirect"], &sweep()),
    )
}

/// A measurement of `rows` (`run --measured`): at every fourth row, its p50 latency 10% above
/// the model's and its bandwidth 10% below, so that the errors are -9.09% and +11.1%.
pub fn overlay(rows: &[Summary]) -> crate::report::overlay::Overlay {
    use crate::report::overlay::{Figure, Matched, Overlay};
    let mut matched = Vec::new();
    for (i, r) in rows.iter().enumerate().step_by(4) {
        for (figure, factor) in [(Figure::Latency, 1.1), (Figure::Bandwidth, 0.9)] {
            matched.push(Matched {
                csv_line: 2 + matched.len(),
                source_file: "lab.log".into(),
                source_line: 10 + i,
                test: "ib_write_bw".into(),
                memory: "gpu".into(),
                statistic: "average".into(),
                value: figure.of(r) * factor,
                unit: "GB/s".into(),
                scenario: r.scenario.clone(),
                path: r.path,
                op: r.op,
                size_bytes: r.size_bytes,
                figure,
                measured: figure.of(r) * factor,
                model: figure.of(r),
            });
        }
    }
    Overlay {
        file: "/lab/measured.csv".into(),
        scenario: rows[0].scenario.clone(),
        matched,
        notes: vec!["skipped 3 nvbandwidth rows: no run point".into()],
    }
}

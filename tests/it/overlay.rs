//! Issue #11, measurements beside the model: `gdrsim run CONFIG --measured FILE` matches the
//! measured-data CSV's rows to results points, adds the measured figure and the error to
//! results.csv, writes model_vs_measured.csv, compares them in report.md and draws them on the latency
//! and bandwidth charts. Measurements synthesised by `gdrsim perftest` (-> `gdrsim measured`)
//! with the config's own streaming shape, so the definitions agree and the errors are only
//! jitter (other seeds) and perftest's two printed decimals.

use crate::support::{gdrsim, ok, s, scratch, text};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use gdrsim::report::csv_out::{MEASURED_COLUMNS, RESULTS_HEADER};

/// Runs host and gpudirect with write_imm, write, read and send, 8 B to 16 MiB by 4x, with
/// stream_window 16 and stream_messages 64.
const CONFIG: &str = "configs/verbs.toml";

/// The CSV as maps of column to cell (no quoted commas in these files).
fn table(csv: &str) -> (Vec<String>, Vec<BTreeMap<String, String>>) {
    let mut lines = csv.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    let rows = lines
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            assert_eq!(cells.len(), header.len(), "{l}");
            header
                .iter()
                .cloned()
                .zip(cells.into_iter().map(String::from))
                .collect()
        })
        .collect();
    (header, rows)
}

/// perftest logs of the GPU (`--use_cuda`) write bandwidth sweep with the config's window and
/// message count, and a completion per message (`-Q 1`: a study's streams poll every one, where
/// perftest's `-a` would moderate them), and of the GPU send latency sweep, read into one
/// measured-data CSV.
fn measured_csv(dir: &Path) -> PathBuf {
    let runs: [(&str, &[&str]); 2] = [
        (
            "bw.log",
            &[
                "ib_write_bw",
                CONFIG,
                "--use_cuda",
                "-a",
                "-t",
                "16",
                "-n",
                "64",
                "-Q",
                "1",
            ],
        ),
        (
            "lat.log",
            &["ib_send_lat", CONFIG, "--use_cuda", "-a", "-n", "200"],
        ),
    ];
    let mut logs = Vec::new();
    for (name, args) in runs {
        let mut a = vec!["perftest"];
        a.extend_from_slice(args);
        let p = dir.join(name);
        fs::write(&p, ok(&gdrsim(&a), "perftest")).unwrap();
        logs.push(p);
    }
    let csv = dir.join("m.csv");
    ok(
        &gdrsim(&[
            "measured",
            s(&logs[0]),
            s(&logs[1]),
            "--memory",
            "gpu",
            "--out",
            s(&csv),
        ]),
        "measured",
    );
    csv
}

#[test]
fn measured_points_get_error_columns_a_report_section_and_chart_markers() {
    let dir = scratch("overlay", "overlay");
    let csv = measured_csv(&dir);
    let out = dir.join("run");
    let o = gdrsim(&["run", CONFIG, "--out", s(&out), "--measured", s(&csv)]);
    ok(&o, "run --measured");
    let err = text(&o.stderr);
    assert!(
        err.contains("22 measured figures matched to results points of scenario PIX"),
        "{err}"
    );
    assert!(err.contains("bandwidth peak rows"), "{err}");

    // results.csv: the contract's columns, then the four measured ones.
    let (header, rows) = table(&fs::read_to_string(out.join("results.csv")).unwrap());
    let n = RESULTS_HEADER.len();
    assert_eq!(header[..n], RESULTS_HEADER);
    assert_eq!(header[n..], MEASURED_COLUMNS);
    let at = |path: &str, op: &str| -> Vec<&BTreeMap<String, String>> {
        rows.iter()
            .filter(|r| r["scenario"] == "PIX" && r["path"] == path && r["op"] == op)
            .collect()
    };
    // perftest -a (2 B to 8 MiB by 2x) meets the sweep (8 B to 16 MiB by 4x) at 8 B ... 8 MiB.
    let bw = at("gpudirect", "write");
    let lat = at("gpudirect", "send");
    let mut worst = (0.0f64, 0.0f64);
    for r in &bw {
        let size: u64 = r["size_bytes"].parse().unwrap();
        let measured: f64 = r["measured_bw_GBps"].parse().unwrap();
        let model: f64 = r["bw_GBps"].parse().unwrap();
        let e: f64 = r["bw_error_pct"].parse().unwrap();
        // From the six printed decimals of a tiny bandwidth: within 0.01 points.
        assert!(
            ((model - measured) / measured * 100.0 - e).abs() < 1e-2,
            "{r:?}"
        );
        // Same definition and shape: only the jitter's seed differs, which matters where a
        // few microseconds of 64 small messages are the whole run.
        let bound = if size >= 32 << 10 { 0.1 } else { 2.0 };
        assert!(e.abs() < bound, "write bw at {size} B: error {e}%");
        assert_eq!(r["measured_lat_us"], "", "no write latency was measured");
        worst.0 = worst.0.max(e.abs());
    }
    for r in &lat {
        let size: u64 = r["size_bytes"].parse().unwrap();
        let e: f64 = r["lat_error_pct"].parse().unwrap();
        // t_typical is half a round trip of two alike one-way messages: the one-way p50
        // within jitter and perftest's two decimals (0.005 µs of 3 µs = 0.17%).
        assert!(e.abs() < 0.5, "send latency at {size} B: error {e}%");
        worst.1 = worst.1.max(e.abs());
    }
    assert_eq!((bw.len(), lat.len()), (11, 11), "8 B to 8 MiB by 4x");
    for r in at("host", "write")
        .iter()
        .chain(&at("gpudirect", "write_imm"))
    {
        assert!(MEASURED_COLUMNS.iter().all(|c| r[*c].is_empty()), "{r:?}");
    }
    for r in rows.iter().filter(|r| r["scenario"] != "PIX") {
        assert!(MEASURED_COLUMNS.iter().all(|c| r[*c].is_empty()), "{r:?}");
    }
    eprintln!(
        "worst error: bandwidth {:.3}%, latency {:.3}%",
        worst.0, worst.1
    );

    // model_vs_measured.csv: one row per matched figure.
    let (_, m) = table(&fs::read_to_string(out.join("model_vs_measured.csv")).unwrap());
    assert_eq!(m.len(), 22);
    assert_eq!(
        m.iter().filter(|r| r["model_column"] == "bw_GBps").count(),
        11
    );
    assert!(
        m.iter()
            .all(|r| r["scenario"] == "PIX" && r["path"] == "gpudirect")
    );

    // report.md and the manifest: the section and the command with --measured.
    let md = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Model against measurement"), "{md}");
    assert!(md.contains("Median absolute error:"));
    assert_eq!(
        md.lines()
            .filter(|l| l.starts_with("| ib_send_lat | gpu | gpudirect | send |"))
            .count(),
        11
    );
    let command = format!("gdrsim run {CONFIG} --measured {}", s(&csv));
    assert!(md.contains(&command), "{md}");
    let manifest = fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(
        manifest.contains(&format!("\"command\": \"{command}\"")),
        "{manifest}"
    );
    assert!(manifest.contains("\"name\": \"model_vs_measured.csv\""));

    // The charts: 11 measured points each, plus the legend's sample.
    for chart in ["latency.svg", "bandwidth.svg"] {
        let svg = fs::read_to_string(out.join(chart)).unwrap();
        assert!(svg.contains("measured (m.csv)"), "{chart}");
        assert_eq!(measured_markers(&svg), 12, "{chart}");
    }
    let speedup = fs::read_to_string(out.join("speedup.svg")).unwrap();
    assert!(!speedup.contains("measured ("));
    fs::remove_dir_all(&dir).ok();
}

/// Closed five-point polylines stroked black: the measured markers' outlines (verbs.toml has
/// three scenarios, so no series is black).
fn measured_markers(svg: &str) -> usize {
    svg.split("<polyline")
        .skip(1)
        .filter(|e| {
            let e = &e[..e.find("/>").unwrap_or(e.len())];
            let points = e
                .split("points=\"")
                .nth(1)
                .and_then(|p| p.split('"').next())
                .unwrap_or("");
            e.contains("stroke=\"#000000\"") && points.split_whitespace().count() == 5
        })
        .count()
}

/// A bad measured-data CSV (or scenario, or a shard) is refused before any simulation: exit
/// 2 naming the file, line and column, and no output folder.
#[test]
fn a_bad_measurement_is_refused_before_anything_is_written() {
    let dir = scratch("overlay", "bad");
    let header = "source_file,line,tool,test,detail,device,memory,size_bytes,iterations,metric,\
                  statistic,value,unit,row,column";
    let good = "bw.log,13,perftest,ib_write_bw,,nic0,gpu,65536,5000,bandwidth,average,2000.5,\
                MiB/s,,";
    let cases: [(&str, String, &str); 4] = [
        (
            "size.csv",
            format!("{header}\n{good}\n{}\n", good.replace("65536", "big")),
            ":3: key `size_bytes`",
        ),
        (
            "unit.csv",
            format!("{header}\n{}\n{good}\n", good.replace("MiB/s", "furlongs")),
            ":2: key `unit`",
        ),
        (
            "memory.csv",
            format!(
                "{header}\n{good}\n{good}\n{}\n",
                good.replace(",gpu,", ",vram,")
            ),
            ":4: key `memory`",
        ),
        (
            "header.csv",
            format!("{}\n{good}\n", header.replace("statistic", "stat")),
            ":1:",
        ),
    ];
    for (name, body, at) in &cases {
        let csv = dir.join(name);
        fs::write(&csv, body).unwrap();
        let out = dir.join(format!("out-{name}"));
        let o = gdrsim(&["run", CONFIG, "--out", s(&out), "--measured", s(&csv)]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(&format!("{}{at}", s(&csv))), "{name}: {err}");
        assert!(!out.exists(), "{name}: an output folder was written");
    }
    let leftovers: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    let csv = dir.join("good.csv");
    fs::write(&csv, format!("{header}\n{good}\n")).unwrap();
    let out = dir.join("out-good");
    let refused: [&[&str]; 3] = [
        &["--measured-scenario", "nowhere"],
        &["--shard", "0/2"],
        &["--measured-scenario", "PIX", "--measured", "missing.csv"],
    ];
    for extra in refused {
        let mut a = vec!["run", CONFIG, "--out", s(&out), "--measured", s(&csv)];
        a.extend_from_slice(extra);
        let o = gdrsim(&a);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", text(&o.stderr));
        assert!(!out.exists(), "{extra:?}");
    }
    // --measured-scenario needs --measured (a usage error, clap's exit 2).
    let o = gdrsim(&[
        "run",
        CONFIG,
        "--out",
        s(&out),
        "--measured-scenario",
        "PIX",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!out.exists());
    fs::remove_dir_all(&dir).ok();
}

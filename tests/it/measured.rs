//! Issue #11, measurements in: `gdrsim measured` reads perftest and nvbandwidth logs into the
//! measured-data CSV; `gdrsim calibrate` fits config parameters to it.

use crate::support::{gdrsim, gdrsim_within, ok, s, scratch, text};
use std::fs;
use std::path::{Path, PathBuf};

/// `gdrsim perftest ARGS` written to `dir/name`.
fn perftest_log(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let mut a = vec!["perftest"];
    a.extend_from_slice(args);
    let log = ok(&gdrsim(&a), "perftest");
    let p = dir.join(name);
    fs::write(&p, log).unwrap();
    p
}

/// A 4 KiB `ib_write_bw` log of the emulator written to `dir`/good.log, its text and the
/// index of its 4096-byte row, for tests that edit that row.
fn bw_log_and_row(dir: &Path) -> (PathBuf, String, usize) {
    let good = perftest_log(dir, "good.log", &["ib_write_bw", "-s", "4096", "-n", "100"]);
    let log = fs::read_to_string(&good).unwrap();
    let row = (log.lines())
        .position(|l| l.trim_start().starts_with("4096 "))
        .unwrap();
    (good, log, row)
}

/// `calibrate` of the default config's wire rate to the measured-data CSV `csv`, writing
/// `out`; killed and failed if it runs past 30 s (a wrapped size ran on and on).
fn calibrate_wire_rate(csv: &Path, out: &Path) -> std::process::Output {
    let fit = "machines[0].nics[0].wire_rate_gbps";
    let args = ["calibrate", "configs/default.toml", "--measured", s(csv)];
    gdrsim_within(30, &[&args[..], &["--fit", fit, "--out", s(out)]].concat())
}

/// configs/default.toml with each line that begins `from` changed to begin `to` (each must
/// be there), written to `dir`/perturbed.toml.
fn perturbed(dir: &Path, edits: &[(&str, &str)]) -> PathBuf {
    let mut text =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/default.toml"))
            .unwrap();
    for (from, to) in edits {
        let from = format!("\n{from}");
        assert!(text.contains(&from), "{from}");
        text = text.replacen(&from, &format!("\n{to}"), 1);
    }
    let cfg = dir.join("perturbed.toml");
    fs::write(&cfg, text).unwrap();
    cfg
}

/// The CSV's rows as maps of column to cell.
fn rows(csv: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    let mut lines = csv.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    lines
        .map(|l| {
            header
                .iter()
                .cloned()
                .zip(l.split(',').map(String::from))
                .collect()
        })
        .collect()
}

/// The emulator's text goes through the parser unchanged: every figure `gdrsim perftest`
/// prints is one CSV row with its size, statistic and unit, in the log's order.
#[test]
fn perftest_output_round_trips_into_the_csv() {
    let dir = scratch("measured", "round-trip");
    let bw = perftest_log(
        &dir,
        "bw.log",
        &[
            "ib_write_bw",
            "--use_cuda",
            "--report_gbits",
            "-n",
            "200",
            "-s",
            "1MiB",
        ],
    );
    let lat = perftest_log(&dir, "lat.log", &["ib_send_lat", "-n", "200", "-s", "64"]);
    let out = dir.join("m.csv");
    ok(
        &gdrsim(&[
            "measured",
            s(&bw),
            s(&lat),
            "--memory",
            "gpu",
            "--out",
            s(&out),
        ]),
        "measured",
    );
    let csv = fs::read_to_string(&out).unwrap();
    let r = rows(&csv);
    assert_eq!(r.len(), 3 + 7, "{csv}");
    // The figures are the ones printed in the log's result row.
    let log = fs::read_to_string(&bw).unwrap();
    let printed: Vec<&str> = log
        .lines()
        .find(|l| l.trim_start().starts_with("1048576"))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(r[1]["statistic"], "average");
    assert_eq!(r[1]["unit"], "Gb/s");
    assert_eq!(
        r[1]["value"].parse::<f64>().unwrap(),
        printed[3].parse::<f64>().unwrap()
    );
    assert_eq!(
        (r[1]["size_bytes"].as_str(), r[1]["iterations"].as_str()),
        ("1048576", "200")
    );
    assert_eq!(
        (r[1]["test"].as_str(), r[1]["memory"].as_str()),
        ("ib_write_bw", "gpu")
    );
    assert_eq!(r[9]["statistic"], "p99.9");
    assert_eq!(r[9]["test"], "ib_send_lat");
    // To stdout without --out: the same bytes.
    let o = gdrsim(&["measured", s(&bw), s(&lat), "--memory", "gpu"]);
    assert_eq!(ok(&o, "measured to stdout"), csv);
    let _ = fs::remove_dir_all(&dir);
}

/// A cut or broken log is bad input: exit 2, the message names the file and line and what
/// was expected, and no output file appears (nor a temporary one).
#[test]
fn a_bad_log_exits_2_naming_the_line_and_writes_nothing() {
    let dir = scratch("measured", "bad");
    let good = perftest_log(&dir, "good.log", &["ib_write_bw", "-a", "-n", "200"]);
    let log = fs::read_to_string(&good).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim_start().starts_with("4096 "))
        .unwrap();
    // Cut in the middle of the 4096-byte row.
    let cut = dir.join("cut.log");
    let keep = lines[..at].join("\n") + "\n" + &lines[at][..20];
    fs::write(&cut, keep).unwrap();
    let out = dir.join("m.csv");
    let o = gdrsim(&["measured", s(&good), s(&cut), "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains(&format!("cut.log:{}:", at + 1)), "{err}");
    assert!(err.contains("expected a result row of 5 numbers"), "{err}");
    assert!(!out.exists());
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 2, "only the two logs");
    // The closing dashed line missing: the end of the file is named.
    let open = dir.join("open.log");
    fs::write(&open, lines[..=at].join("\n")).unwrap();
    let o = gdrsim(&["measured", s(&open), "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains(&format!("open.log:{}:", at + 2)) && err.contains("end of the file"),
        "{err}"
    );
    // Not a log at all; a missing file.
    let o = gdrsim(&["measured", "Cargo.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("Cargo.toml:1:"),
        "{}",
        text(&o.stderr)
    );
    let o = gdrsim(&["measured", s(&dir.join("absent.log"))]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!out.exists());
    let _ = fs::remove_dir_all(&dir);
}

/// Issue #27 item 15: a -1 bandwidth in a perftest row was written into the CSV as a
/// measurement. perftest's figures are ratios of non-negative counts, so a negative one is a
/// corrupt log: refused with FILE:LINE, nothing written; so is a negative nvbandwidth cell and
/// a negative value in a measured-data CSV given to `calibrate`. 0 (perftest's peak under
/// --noPeak) still reads.
#[test]
fn a_negative_figure_is_refused_naming_the_line() {
    let dir = scratch("measured", "negative");
    let (good, log, at) = bw_log_and_row(&dir);
    let lines: Vec<&str> = log.lines().collect();
    let cells: Vec<&str> = lines[at].split_whitespace().collect();
    let out = dir.join("m.csv");
    for (name, peak) in [("minus.log", "-1"), ("zero.log", "0.00")] {
        let row = lines[at].replacen(cells[2], peak, 1);
        let mut edited = lines.clone();
        edited[at] = &row;
        let p = dir.join(name);
        fs::write(&p, edited.join("\n") + "\n").unwrap();
        let o = gdrsim(&["measured", s(&p), "--out", s(&out)]);
        let err = text(&o.stderr);
        if peak == "-1" {
            assert_eq!(o.status.code(), Some(2), "{err}");
            assert!(
                err.contains(&format!(
                    "minus.log:{}: expected bandwidth peak (a finite number, 0 or more",
                    at + 1
                )) && err.contains("found \"-1\""),
                "{err}"
            );
            assert!(!out.exists(), "nothing written");
        } else {
            ok(&o, "a peak of 0");
            let r = rows(&fs::read_to_string(&out).unwrap());
            assert_eq!(r[0]["value"], "0.0");
            fs::remove_file(&out).unwrap();
        }
    }
    let nvb = dir.join("nvb.log");
    fs::write(
        &nvb,
        "Running host_to_device_memcpy_ce.\n\
         memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n\
         \x20          0         1\n\
         \x200     26.03     -1.00\n\
         \n",
    )
    .unwrap();
    let o = gdrsim(&["measured", s(&nvb)]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("nvb.log:4: expected a number of 0 or more"),
        "{err}"
    );
    // A measured-data CSV edited by hand.
    ok(
        &gdrsim(&["measured", s(&good), "--out", s(&out)]),
        "measured",
    );
    let csv = fs::read_to_string(&out).unwrap();
    let first = csv.lines().nth(1).unwrap();
    let value = first.split(',').nth(11).unwrap();
    fs::write(
        &out,
        csv.replacen(first, &first.replacen(value, "-1", 1), 1),
    )
    .unwrap();
    let cal = dir.join("calibrated.toml");
    let o = calibrate_wire_rate(&out, &cal);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("m.csv:2: key `value`: expected a finite number, 0 or more"),
        "{err}"
    );
    assert!(!cal.exists());
    let _ = fs::remove_dir_all(&dir);
}

/// An nvbandwidth log beside a perftest log: one CSV, each matrix cell a row.
#[test]
fn nvbandwidth_matrices_join_the_csv() {
    let dir = scratch("measured", "nvb");
    let nvb = dir.join("nvb.log");
    fs::write(
        &nvb,
        "Running host_to_device_memcpy_ce.\n\
         memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n\
         \x20          0         1\n\
         \x200     26.03     25.94\n\
         \n\
         SUM host_to_device_memcpy_ce 51.97\n",
    )
    .unwrap();
    let lat = perftest_log(&dir, "lat.log", &["ib_write_lat", "-n", "100"]);
    let csv = ok(&gdrsim(&["measured", s(&nvb), s(&lat)]), "measured");
    let r = rows(&csv);
    assert_eq!(r.len(), 3 + 7, "{csv}");
    assert_eq!(
        (
            r[1]["tool"].as_str(),
            r[1]["column"].as_str(),
            r[1]["value"].as_str()
        ),
        ("nvbandwidth", "1", "25.94")
    );
    assert_eq!(r[2]["statistic"], "sum");
    assert_eq!(r[3]["memory"], "host");
    let _ = fs::remove_dir_all(&dir);
}

/// Issue #11's calibration test: three parameters of the default config perturbed (the CPU's
/// post cost, the NIC's transmit pipeline, the wire rate), "measurements" synthesised by
/// gdrsim itself (perftest emulation -> text -> `measured` -> CSV), and `calibrate` from the
/// unperturbed config recovers each within 2%; the calibrated config is the input with those
/// keys set, and the fit error falls.
#[test]
fn calibrate_recovers_perturbed_parameters() {
    let dir = scratch("measured", "calibrate");
    let cfg = perturbed(
        &dir,
        &[
            ("post_ns = 100 ", "post_ns = 130 "),
            ("tx_pipeline_ns = 150 ", "tx_pipeline_ns = 190 "),
            ("wire_rate_gbps = 400 ", "wire_rate_gbps = 350 "),
        ],
    );
    let c = s(&cfg);
    let mut gpu = Vec::new();
    let mut host = Vec::new();
    for size in ["2", "1024"] {
        host.push(perftest_log(
            &dir,
            &format!("sl{size}.log"),
            &["ib_send_lat", c, "-n", "100", "-s", size],
        ));
        gpu.push(perftest_log(
            &dir,
            &format!("rl{size}.log"),
            &["ib_read_lat", c, "--use_cuda", "-n", "100", "-s", size],
        ));
    }
    for size in ["64", "4096", "1MiB"] {
        gpu.push(perftest_log(
            &dir,
            &format!("wb{size}.log"),
            &["ib_write_bw", c, "--use_cuda", "-n", "200", "-s", size],
        ));
    }
    let (g, h, all) = (
        dir.join("gpu.csv"),
        dir.join("host.csv"),
        dir.join("all.csv"),
    );
    let mut a: Vec<&str> = vec!["measured", "--memory", "gpu", "--out", s(&g)];
    a.extend(gpu.iter().map(|p| s(p)));
    ok(&gdrsim(&a), "measured gpu");
    let mut a: Vec<&str> = vec!["measured", "--out", s(&h)];
    a.extend(host.iter().map(|p| s(p)));
    ok(&gdrsim(&a), "measured host");
    let host_csv = fs::read_to_string(&h).unwrap();
    let joined = fs::read_to_string(&g).unwrap() + host_csv.split_once('\n').unwrap().1;
    fs::write(&all, joined).unwrap();
    let out = dir.join("calibrated.toml");
    let keys = [
        "machines[0].cpu.post_ns",
        "machines[0].nics[0].tx_pipeline_ns",
        "machines[0].nics[0].wire_rate_gbps",
    ];
    let started = std::time::Instant::now();
    let o = gdrsim(&[
        "calibrate",
        "configs/default.toml",
        "--measured",
        s(&all),
        "--fit",
        &keys.join(","),
        "--out",
        s(&out),
    ]);
    let report = ok(&o, "calibrate");
    eprintln!("calibrate took {:?}\n{report}", started.elapsed());
    for (key, want) in keys.iter().zip([130.0, 190.0, 350.0]) {
        let line = report
            .lines()
            .find(|l| l.starts_with(key))
            .unwrap_or_else(|| panic!("{key} in\n{report}"));
        let fitted: f64 = line.split_whitespace().nth(2).unwrap().parse().unwrap();
        assert!(
            (fitted / want - 1.0).abs() < 0.02,
            "{key}: fitted {fitted}, true {want}\n{report}"
        );
    }
    let fit_line = report.lines().find(|l| l.starts_with("fit error")).unwrap();
    assert!(
        fit_line.contains("before") && fit_line.contains("after"),
        "{report}"
    );
    // The calibrated config loads, and the perturbed values are in it.
    let o = gdrsim(&["params", s(&out)]);
    let params = ok(&o, "params of the calibrated config");
    let value = |k: &str| -> String {
        params
            .lines()
            .find(|l| l.starts_with(k))
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .to_string()
    };
    assert_ne!(value("machines[0].cpu.post_ns"), "100");
    assert_eq!(
        value("machines[0].nics[0].rx_pipeline_ns"),
        "150",
        "unfitted keys unchanged"
    );
    // Bad requests are bad input: an unknown key, a count, no usable rows.
    for (args, needle) in [
        (
            vec!["--fit", "machines[0].nics[0].no_such_ns"],
            "no_such_ns",
        ),
        (
            vec!["--fit", "machines[0].nics[0].read_window"],
            "duration, rate or byte size",
        ),
    ] {
        let mut a = vec![
            "calibrate",
            "configs/default.toml",
            "--measured",
            s(&all),
            "--out",
            s(&out),
        ];
        a.extend(args);
        let o = gdrsim(&a);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
        assert!(text(&o.stderr).contains(needle), "{}", text(&o.stderr));
    }
    let _ = fs::remove_dir_all(&dir);
}

/// Issue #11, calibration against multi-QP and bidirectional perftest logs: `ib_read_bw -q 4
/// -b` and `ib_write_bw -q 2` of a config whose post cost is 130 ns instead of 100. At 4 KiB
/// (reads) and 64 B (writes) the one perftest thread posting for every QP bounds both runs, so
/// the post cost is what their bandwidth and message rate measure; `measured` keeps `-q` and
/// `-b` in the detail (`bidirectional;qps=4`) and calibrate reruns them so. MiB/s, not
/// --report_gbits, so perftest's two decimals keep the small figures exact enough.
#[test]
fn calibrate_reads_queue_pairs_and_both_directions_from_the_log() {
    let dir = scratch("measured", "calibrate-qps");
    let base =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/default.toml"))
            .unwrap();
    assert!(base.contains("\npost_ns = 100 "));
    let cfg = dir.join("post130.toml");
    fs::write(
        &cfg,
        base.replacen("\npost_ns = 100 ", "\npost_ns = 130 ", 1),
    )
    .unwrap();
    let c = s(&cfg);
    let read = ["ib_read_bw", c, "-q", "4", "-b", "-s", "4096", "-n", "200"];
    let write = ["ib_write_bw", c, "-q", "2", "-s", "64", "-n", "200"];
    let logs = [
        perftest_log(&dir, "read.log", &read),
        perftest_log(&dir, "write.log", &write),
    ];
    let csv = dir.join("m.csv");
    ok(
        &gdrsim(&["measured", s(&logs[0]), s(&logs[1]), "--out", s(&csv)]),
        "measured",
    );
    let m = rows(&fs::read_to_string(&csv).unwrap());
    assert_eq!(m[0]["detail"], "bidirectional;qps=4");
    assert_eq!(
        m[0]["iterations"], "800",
        "perftest prints -n times the QPs"
    );
    let out = dir.join("calibrated.toml");
    let key = "machines[0].cpu.post_ns";
    let o = gdrsim(&[
        "calibrate",
        "configs/default.toml",
        "--measured",
        s(&csv),
        "--fit",
        key,
        "--out",
        s(&out),
    ]);
    let report = ok(&o, "calibrate");
    let line = report.lines().find(|l| l.starts_with(key)).unwrap();
    let fitted: f64 = line.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!((fitted / 130.0 - 1.0).abs() < 0.02, "{report}");
    assert!(
        report.contains("4 rows"),
        "average and MsgRate of both: {report}"
    );
    let _ = fs::remove_dir_all(&dir);
}

/// Issue #11, calibration against nvbandwidth: `gdrsim nvbandwidth` logs of a perturbed
/// config, read by `measured`, fitted by `calibrate` from the unperturbed one.
///
/// On the shipped configs nvbandwidth's copies run at the PCIe link's ceiling, which no
/// continuous parameter sets (generation, width and MPS are structure, the copy engine's read
/// window a count, its MRRS a power of two): root-complex and DRAM latency, DRAM and GPU memory
/// rates leave the figures flat until they become the bottleneck. So the base here is the
/// default machine with two bottlenecks put in: root complex 0 slow enough (800 ns) that the
/// copy engine's read window bounds GPU 0 and 1's host-to-device copies, and socket 1's DRAM
/// (40 GB/s) below GPU 3's link in both directions. Perturbed to 920 ns and 34 GB/s, both are
/// recovered within 2% from three testcases (H2D, D2H, bidirectional H2D) of 4 MiB buffers.
#[test]
fn calibrate_recovers_parameters_from_nvbandwidth_logs() {
    let dir = scratch("measured", "calibrate-nvb");
    let default =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/default.toml"))
            .unwrap();
    let with = |rc_ns: u32, dram_gbs: u32| {
        let (rc, dram) = ("\nlatency_ns = 200 ", "\ndram_rate_gbps = \"300GB/s\"\n");
        assert!(default.contains(rc) && default.contains(dram));
        default
            .replacen(rc, &format!("\nlatency_ns = {rc_ns} "), 1)
            .replacen(dram, &format!("\ndram_rate_gbps = \"{dram_gbs}GB/s\"\n"), 1)
    };
    let (base, pert) = (dir.join("base.toml"), dir.join("perturbed.toml"));
    fs::write(&base, with(800, 40)).unwrap();
    fs::write(&pert, with(920, 34)).unwrap();
    let quick = ["-b", "4", "-i", "1", "--loopCount", "4"];
    let mut logs = Vec::new();
    for tc in [
        "host_to_device_memcpy_ce",
        "device_to_host_memcpy_ce",
        "host_to_device_bidirectional_memcpy_ce",
    ] {
        let mut a = vec!["nvbandwidth", tc, s(&pert)];
        a.extend(quick);
        let p = dir.join(format!("{tc}.log"));
        fs::write(&p, ok(&gdrsim(&a), "nvbandwidth")).unwrap();
        logs.push(p);
    }
    let csv = dir.join("nvb.csv");
    let mut a = vec!["measured", "--out", s(&csv)];
    a.extend(logs.iter().map(|p| s(p)));
    ok(&gdrsim(&a), "measured");
    let out = dir.join("calibrated.toml");
    let keys = [
        "machines[0].root_complexes[0].latency_ns",
        "machines[0].sockets[1].dram_rate_gbps",
    ];
    let started = std::time::Instant::now();
    let calibrate = |extra: &[&str]| {
        let mut a = vec![
            "calibrate",
            s(&base),
            "--measured",
            s(&csv),
            "--out",
            s(&out),
            "--nvb-buffer-size",
            "4",
            "--nvb-samples",
            "1",
            "--nvb-loops",
            "4",
        ];
        a.extend_from_slice(extra);
        gdrsim(&a)
    };
    let keys_arg = keys.join(",");
    let report = ok(&calibrate(&["--fit", &keys_arg]), "calibrate");
    eprintln!("calibrate took {:?}\n{report}", started.elapsed());
    // 920 ns; 34 GB/s is 272 Gb/s, the parameter's unit.
    for (key, want) in keys.iter().zip([920.0, 272.0]) {
        let line = report
            .lines()
            .find(|l| l.starts_with(key))
            .unwrap_or_else(|| panic!("{key} in\n{report}"));
        let fitted: f64 = line.split_whitespace().nth(2).unwrap().parse().unwrap();
        assert!(
            (fitted / want - 1.0).abs() < 0.02,
            "{key}: fitted {fitted}, true {want}\n{report}"
        );
    }
    // 3 testcases x 4 GPUs fitted; the SUM lines are noted, not fitted.
    assert!(report.contains("(RMS relative, 12 rows)"), "{report}");
    assert!(report.contains("SUM rows"), "{report}");
    // Options outside nvbandwidth's ranges are refused under calibrate's names.
    let o = calibrate(&["--fit", &keys_arg, "--nvb-samples", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("--nvb-samples"),
        "{}",
        text(&o.stderr)
    );
    let _ = fs::remove_dir_all(&dir);
}

/// Issue #11, calibrate: three delays that only ever add (the CPU's post, the NIC's TX
/// pipeline, the network switch) fitted to latency rows alone cannot be set apart: the fit
/// error falls, but the report says so, pair by pair, rather than print three values as if
/// each were known (an audit found -3% and +4% misses printed without a word).
#[test]
fn calibrate_warns_of_parameters_the_rows_cannot_set_apart() {
    let dir = scratch("measured", "collinear");
    let cfg = perturbed(
        &dir,
        &[
            ("post_ns = 100 ", "post_ns = 80 "),
            ("tx_pipeline_ns = 150 ", "tx_pipeline_ns = 200 "),
            ("switch_latency_ns = 130 ", "switch_latency_ns = 160 "),
        ],
    );
    let c = s(&cfg);
    let mut logs = Vec::new();
    for size in ["2", "1024"] {
        for test in ["ib_send_lat", "ib_write_lat"] {
            let name = format!("{test}{size}.log");
            logs.push(perftest_log(
                &dir,
                &name,
                &[test, c, "-n", "100", "-s", size],
            ));
        }
    }
    let csv = dir.join("m.csv");
    let mut a: Vec<&str> = vec!["measured", "--out", s(&csv)];
    a.extend(logs.iter().map(|p| s(p)));
    ok(&gdrsim(&a), "measured");
    let keys =
        "machines[0].cpu.post_ns,machines[0].nics[0].tx_pipeline_ns,network.switch_latency_ns";
    let out = dir.join("c.toml");
    let report = ok(
        &gdrsim(&[
            "calibrate",
            "configs/default.toml",
            "--measured",
            s(&csv),
            "--fit",
            keys,
            "--out",
            s(&out),
        ]),
        "calibrate",
    );
    let warnings: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .collect();
    assert_eq!(warnings.len(), 3, "every pair of the three\n{report}");
    assert!(
        warnings[0].starts_with(
            "warning: machines[0].cpu.post_ns and machines[0].nics[0].tx_pipeline_ns are \
             correlated at -1.000"
        ),
        "{report}"
    );
    assert!(report.contains("note: no standard errors"), "{report}");
    let _ = fs::remove_dir_all(&dir);
}

/// Issue #27 item 8: a size near 2^64 in a perftest log, in a measured-data CSV or in a
/// `validate --set` row is refused when read, naming the line or row and the size (it
/// overflowed the emulation: a panic with overflow checks, a run that went on and on in the
/// release build). 16 GiB, the model's largest message, is the bound.
#[test]
fn sizes_beyond_the_model_are_refused_when_read() {
    let dir = scratch("measured", "huge-size");
    let (good, log, row) = bw_log_and_row(&dir);
    let huge = "18446744073709551615";
    let edited: Vec<String> = log
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == row {
                l.replacen("4096", huge, 1)
            } else {
                l.to_string()
            }
        })
        .collect();
    let bad_log = dir.join("huge.log");
    fs::write(&bad_log, edited.join("\n") + "\n").unwrap();
    let csv = dir.join("m.csv");
    let o = gdrsim_within(30, &["measured", s(&bad_log), "--out", s(&csv)]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "huge.log:{}: expected #bytes (a message size up to 16 GiB",
            row + 1
        )) && err.contains(huge),
        "{err}"
    );
    assert!(!csv.exists());

    // The same row in a measured-data CSV (as written before the check, or by hand).
    ok(
        &gdrsim(&["measured", s(&good), "--out", s(&csv)]),
        "measured",
    );
    let rows = fs::read_to_string(&csv)
        .unwrap()
        .replace(",4096,", &format!(",{huge},"));
    fs::write(&csv, rows).unwrap();
    let out = dir.join("calibrated.toml");
    let o = calibrate_wire_rate(&csv, &out);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("m.csv:2: key `size_bytes`") && err.contains(huge),
        "{err}"
    );
    assert!(!out.exists());

    // A validation set's row.
    let set =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("data/validation.toml"))
            .unwrap();
    let first = set.split("[[row]]").nth(1).unwrap();
    assert!(first.contains("\nsize = 8388608\n"), "{first}");
    let bad_set = dir.join("set.toml");
    fs::write(
        &bad_set,
        format!(
            "[[row]]{}",
            first.replace("\nsize = 8388608\n", &format!("\nsize = {huge}\n"))
        ),
    )
    .unwrap();
    let o = gdrsim_within(30, &["validate", "--set", s(&bad_set)]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("key `row A21 size`: expected a size up to 16 GiB") && err.contains(huge),
        "{err}"
    );
    let _ = fs::remove_dir_all(&dir);
}

/// Issue #27 item 15: `calibrate --iters 0` (or 1) ran every emulation with 2 iterations in
/// silence; outside perftest's -n range (2 to 100000) it is refused, saying the range.
#[test]
fn calibrate_iters_outside_perftests_range_are_refused() {
    let dir = scratch("measured", "iters");
    let log = perftest_log(&dir, "w.log", &["ib_write_bw", "-s", "4096", "-n", "100"]);
    let csv = dir.join("m.csv");
    ok(
        &gdrsim(&["measured", s(&log), "--out", s(&csv)]),
        "measured",
    );
    let out = dir.join("calibrated.toml");
    for iters in ["0", "1", "100001"] {
        let o = gdrsim(&[
            "calibrate",
            "configs/default.toml",
            "--measured",
            s(&csv),
            "--fit",
            "machines[0].nics[0].wire_rate_gbps",
            "--iters",
            iters,
            "--out",
            s(&out),
        ]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "--iters {iters}: {err}");
        assert!(
            err.contains(&format!(
                "key `--iters`: expected from 2 to 100000 iterations (the range of perftest's \
                 -n), found {iters}"
            )),
            "{err}"
        );
        assert!(!out.exists());
    }
    let _ = fs::remove_dir_all(&dir);
}

/// Issue #28 item 8: what calibrate writes is checked. Latencies measured on a config whose
/// post cost is 20 µs (200 times the default's): with `--range 4` the fit ends at its bound
/// (400 ns), which is no fit and is refused (exit 2, the key named, nothing written) unless
/// `--allow-bound`; with `--range 1000` it recovers the 20 µs, which `check --strict` refuses
/// (a post costs 5 ns to 10 µs) unless `--allow-implausible`.
#[test]
fn calibrate_refuses_a_fit_at_its_bound_and_an_implausible_config() {
    let dir = scratch("measured", "calibrate-refusals");
    let cfg = perturbed(&dir, &[("post_ns = 100 ", "post_ns = 20000 ")]);
    let log = perftest_log(
        &dir,
        "sl.log",
        &["ib_send_lat", s(&cfg), "-n", "100", "-s", "2"],
    );
    let csv = dir.join("m.csv");
    ok(
        &gdrsim(&["measured", "--out", s(&csv), s(&log)]),
        "measured",
    );
    let out = dir.join("calibrated.toml");
    let run = |extra: &[&str]| {
        let _ = fs::remove_file(&out);
        let mut a = vec![
            "calibrate",
            "configs/default.toml",
            "--measured",
            s(&csv),
            "--fit",
            "machines[0].cpu.post_ns",
            "--out",
            s(&out),
        ];
        a.extend_from_slice(extra);
        gdrsim(&a)
    };
    let refused = |o: &std::process::Output, needles: &[&str]| {
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        for n in needles {
            assert!(err.contains(n), "{n}: {err}");
        }
        assert!(!out.exists(), "nothing written");
    };
    refused(&run(&[]), &["machines[0].cpu.post_ns", "--allow-bound"]);
    let report = ok(&run(&["--allow-bound"]), "calibrate --allow-bound");
    assert!(report.contains("ended at its bound"), "{report}");
    assert!(out.exists());
    refused(
        &run(&["--range", "1000"]),
        &["cpu.post_ns", "--strict", "--allow-implausible"],
    );
    let report = ok(
        &run(&["--range", "1000", "--allow-implausible"]),
        "calibrate --allow-implausible",
    );
    assert!(report.contains("fails `check --strict`"), "{report}");
    let fitted: f64 = (report.lines())
        .find(|l| l.starts_with("machines[0].cpu.post_ns"))
        .and_then(|l| l.split_whitespace().nth(2))
        .unwrap()
        .parse()
        .unwrap();
    assert!((fitted / 20000.0 - 1.0).abs() < 0.05, "{report}");
    let _ = fs::remove_dir_all(&dir);
}

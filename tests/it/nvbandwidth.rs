//! `gdrsim nvbandwidth` driven as a user runs it (issue #11): nvbandwidth's copy-engine
//! testcases on the simulated machine, in nvbandwidth v0.8's layout.
//!
//! - the H2D and D2H figures of every GPU of the default machine lie under the data-rate
//!   ceiling of its PCIe link (computed here from the config: completions for H2D, posted
//!   writes for D2H, at the link's MPS) and above 80% of it;
//! - bidirectional: each direction at most its unidirectional figure, D2H below it;
//! - the layout lines (version, devices, `Running`, title, matrix, SUM, closing note), the SUM
//!   the sum of the printed cells, a one-GPU config a one-column matrix;
//! - `-l` lists nvbandwidth's eight testcases with its indices, as `--help` says; bad input exits 2 with
//!   one error naming the option, before any output; two runs give the same bytes.

use std::path::PathBuf;
use std::process::{Command, Output};

use gdrsim::config::{self, Config};
use gdrsim::topology::pcie;

const BIN: &str = env!("CARGO_BIN_EXE_gdrsim");

fn gdrsim(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).expect("utf-8")
}

fn config_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("configs")
        .join(name)
}

/// The matrix row of a testcase's output: its cells as printed, and the SUM line's figure.
fn row(out: &str, key: &str) -> (Vec<f64>, f64) {
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|l| *l == format!("Running {key}."))
        .unwrap_or_else(|| panic!("no Running line in\n{out}"));
    let cells: Vec<f64> = lines[at + 3]
        .split_whitespace()
        .skip(1)
        .map(|v| v.parse().expect("a figure"))
        .collect();
    assert_eq!(lines[at + 4], "", "a blank line after the matrix");
    let sum = lines[at + 5]
        .strip_prefix(&format!("SUM {key} "))
        .unwrap_or_else(|| panic!("SUM line: {:?}", lines[at + 5]))
        .parse()
        .expect("the SUM figure");
    (cells, sum)
}

/// The data-rate ceiling (GB/s) of the PCIe link above each GPU of the config's first host:
/// H2D data comes down as completions, D2H goes up as posted writes, at the link's MPS.
fn ceilings(cfg: &Config, h2d: bool) -> Vec<f64> {
    let m = &cfg.hosts[0].machine;
    m.gpus
        .iter()
        .map(|g| {
            let l = m
                .links
                .iter()
                .find(|l| l.down == g.name)
                .expect("a link above the GPU");
            let mps = l.mps.min(m.pcie.mps);
            let r = if h2d {
                pcie::effective_read_rate(l.generation, l.width, mps, m.pcie.ecrc)
            } else {
                pcie::effective_write_rate(l.generation, l.width, mps, m.pcie.ecrc)
            };
            r.gbytes_per_s()
        })
        .collect()
}

#[test]
fn unidirectional_figures_sit_under_the_link_ceiling() {
    let cfg = config::parse(config::DEFAULT_TOML, "default").unwrap();
    for (key, h2d) in [
        ("host_to_device_memcpy_ce", true),
        ("device_to_host_memcpy_ce", false),
    ] {
        let out = stdout(&gdrsim(&["nvbandwidth", key]));
        let (cells, sum) = row(&out, key);
        let ceiling = ceilings(&cfg, h2d);
        assert_eq!(cells.len(), ceiling.len(), "one column per GPU:\n{out}");
        for (v, c) in cells.iter().zip(&ceiling) {
            assert!(*v < *c && *v > 0.8 * c, "{key}: {v} GB/s, link ceiling {c}");
        }
        let printed: f64 = cells.iter().sum();
        assert!(
            (sum - printed).abs() < 0.01 * cells.len() as f64,
            "{sum} vs {printed}"
        );
    }
}

#[test]
fn bidirectional_is_never_above_unidirectional() {
    let fig = |key: &str| row(&stdout(&gdrsim(&["nvbandwidth", key, "-i", "1"])), key).0;
    let h2d = fig("host_to_device_memcpy_ce");
    let d2h = fig("device_to_host_memcpy_ce");
    let h2d_bi = fig("host_to_device_bidirectional_memcpy_ce");
    let d2h_bi = fig("device_to_host_bidirectional_memcpy_ce");
    for g in 0..h2d.len() {
        assert!(
            h2d_bi[g] <= h2d[g],
            "GPU {g}: H2D {} -> {}",
            h2d[g],
            h2d_bi[g]
        );
        assert!(
            d2h_bi[g] < d2h[g],
            "GPU {g}: D2H {} -> {}",
            d2h[g],
            d2h_bi[g]
        );
    }
}

#[test]
fn output_follows_nvbandwidths_layout() {
    let out = stdout(&gdrsim(&["nvbandwidth", "0", "-b", "64", "-i", "1"]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "nvbandwidth Version: v0.8");
    assert!(lines[1].starts_with("Built from Git version: gdrsim "));
    assert_eq!(lines[2], "");
    assert!(lines[3].starts_with("NOTE: You have chosen a buffer size that is smaller"));
    assert_eq!(&lines[5..7], ["node-a", "Device 0: H100 PCIe (gpu0)"]);
    let at = lines
        .iter()
        .position(|l| *l == "Running host_to_device_memcpy_ce.")
        .unwrap();
    assert_eq!(
        lines[at + 1],
        "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)"
    );
    assert_eq!(lines[at + 2], "           0         1         2         3");
    let cells = lines[at + 3];
    assert_eq!(cells.len(), 2 + 4 * 10, "{cells:?}");
    assert!(cells.starts_with(" 0 "));
    assert!(out.ends_with(
        "NOTE: The reported results may not reflect the full capabilities of the platform.\n\
         Performance can vary with software drivers, hardware clocks, and system topology.\n\n"
    ));
    // A one-GPU machine prints a one-column matrix.
    let one = config_path("client-cpu.toml");
    let out = stdout(&gdrsim(&[
        "nvbandwidth",
        "device_to_host_memcpy_ce",
        one.to_str().unwrap(),
    ]));
    let (cells, _) = row(&out, "device_to_host_memcpy_ce");
    assert_eq!(cells.len(), 1, "{out}");
    assert!(out.contains("\n           0\n 0 "), "{out}");
    // Deterministic: the same bytes twice.
    let args = ["nvbandwidth", "host_to_device_bidirectional_memcpy_ce"];
    assert_eq!(gdrsim(&args).stdout, gdrsim(&args).stdout);
}

#[test]
fn list_names_nvbandwidths_testcases() {
    for flag in ["-l", "--list"] {
        let out = stdout(&gdrsim(&["nvbandwidth", flag]));
        assert!(out.contains("Index, Name:\n\tDescription\n=======================\n"));
        for (i, key) in [
            "host_to_device_memcpy_ce",
            "device_to_host_memcpy_ce",
            "host_to_device_bidirectional_memcpy_ce",
            "device_to_host_bidirectional_memcpy_ce",
            "device_to_device_memcpy_read_ce",
            "device_to_device_memcpy_write_ce",
        ]
        .iter()
        .enumerate()
        {
            assert!(out.contains(&format!("\n{i}, {key}:\n\t")), "{key}:\n{out}");
        }
    }
}

/// Issue #11 with #10's peer copies: the device-to-device testcases. On configs/dgx-h100.toml
/// every pair copies over its NVLink bond (18 x 25 GB/s = 450 GB/s; 400 GB/s of payload beside
/// two 16-byte flits per 256-byte packet), so each cell is within 2% of that and never above;
/// the diagonal is N/A, as nvbandwidth skips a GPU with itself. Reads over NVLink run at the
/// write rate within 1% (rows L4 and L5: 371 and 376 GB/s on HGX H100), not at the PCIe read
/// window's ~68 GB/s. On the
/// PCIe machine of tests/data/topo-m/pcie-b14.txt (no NVLink) the read testcase orders the
/// pairs PIX >= NODE > SYS, the 32 GB/s socket link capping SYS.
#[test]
fn device_to_device_testcases_copy_between_peers() {
    let out = stdout(&gdrsim(&[
        "nvbandwidth",
        "device_to_device_memcpy_write_ce",
        "configs/dgx-h100.toml",
        "-b",
        "64",
    ]));
    assert!(
        out.contains("memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)\n"),
        "{out}"
    );
    let rows: Vec<Vec<&str>> = out
        .lines()
        .filter(|l| l.starts_with(' ') && l.split_whitespace().count() == 9)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 8, "{out}");
    for (i, r) in rows.iter().enumerate() {
        for (j, c) in r[1..].iter().enumerate() {
            if i == j {
                assert_eq!(*c, "N/A");
            } else {
                let v: f64 = c.parse().unwrap();
                // The NV18 bond's payload ceiling: 450 GB/s less two 16-byte flits per
                // 256-byte packet (400 GB/s).
                assert!(v <= 400.0 && v > 392.0, "{i}-{j}: {v}");
            }
        }
    }
    let cell = |testcase: &str| -> f64 {
        let out = stdout(&gdrsim(&[
            "nvbandwidth",
            testcase,
            "configs/dgx-h100.toml",
            "-b",
            "64",
        ]));
        let row = out
            .lines()
            .find(|l| l.starts_with(" 0 "))
            .unwrap_or_else(|| panic!("{out}"));
        row.split_whitespace().nth(2).unwrap().parse().unwrap()
    };
    let (read, write) = (
        cell("device_to_device_memcpy_read_ce"),
        cell("device_to_device_memcpy_write_ce"),
    );
    assert!(
        (read - write).abs() < 0.01 * write,
        "read {read} write {write}"
    );
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let cfg = dir.join("nvbandwidth-b14.toml");
    let o = gdrsim(&[
        "import",
        "topo-m",
        "tests/data/topo-m/pcie-b14.txt",
        "--gpu",
        "h100-pcie",
        "--nic",
        "connectx-7",
        "--out",
        cfg.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = stdout(&gdrsim(&[
        "nvbandwidth",
        "4",
        cfg.to_str().unwrap(),
        "-b",
        "64",
    ]));
    let row0: Vec<f64> = out
        .lines()
        .find(|l| l.starts_with(" 0 "))
        .unwrap()
        .split_whitespace()
        .skip(2)
        .map(|v| v.parse().unwrap())
        .collect();
    assert!(
        row0[0] >= row0[1] && row0[1] > row0[2] && row0[2] <= 32.0,
        "{row0:?}"
    );
}

/// The bidirectional device-to-device testcases (6, 7) print nvbandwidth's three matrices per
/// run, each with its SUM line: each copy of a pair, then their sum. On DGX H100 both copies of
/// a pair cross their own direction of the NV18 bond, so each runs within 1% of a one-way copy
/// (writes; reads lose a little to the other copy's read requests) and the total is their sum.
#[test]
fn bidirectional_device_to_device_testcases_print_each_copy_and_the_total() {
    let out = stdout(&gdrsim(&[
        "nvbandwidth",
        "device_to_device_bidirectional_memcpy_write_ce",
        "configs/dgx-h100.toml",
        "-b",
        "64",
    ]));
    let blocks: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("memcpy CE") || l.starts_with("SUM "))
        .collect();
    assert_eq!(
        blocks,
        [
            "memcpy CE GPU(row) <-> GPU(column) Write1 bandwidth (GB/s)",
            blocks[1],
            "memcpy CE GPU(row) <-> GPU(column) Write2 bandwidth (GB/s)",
            blocks[3],
            "memcpy CE GPU(row) <-> GPU(column) Total bandwidth (GB/s)",
            blocks[5],
        ],
        "{out}"
    );
    for (i, suffix) in ["_write1", "_write2", "_total"].iter().enumerate() {
        let want = format!("SUM device_to_device_bidirectional_memcpy_write_ce{suffix} ");
        assert!(blocks[2 * i + 1].starts_with(&want), "{out}");
    }
    let cells: Vec<f64> = out
        .lines()
        .filter(|l| l.starts_with(" 3 "))
        .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
        .collect();
    assert_eq!(cells.len(), 3, "{out}");
    let (one, two, total) = (cells[0], cells[1], cells[2]);
    // Within 2% of the bond's 400 GB/s: each 64 MiB copy (168 µs) also pays the copy engine's
    // 1.6 µs.
    assert!(
        one <= 400.0 && one > 392.0 && two <= 400.0 && two > 392.0,
        "{cells:?}"
    );
    assert!((total - one - two).abs() < 0.02, "{cells:?}");
    let out = stdout(&gdrsim(&[
        "nvbandwidth",
        "6",
        "configs/dgx-h100.toml",
        "-b",
        "64",
    ]));
    assert!(out.contains("Running device_to_device_bidirectional_memcpy_read_ce.\n"));
    let read1: f64 = out
        .lines()
        .find(|l| l.starts_with(" 0 "))
        .and_then(|l| l.split_whitespace().nth(2))
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        read1 <= one && read1 > 0.9 * one,
        "read {read1} write {one}"
    );
}

#[test]
fn bad_input_exits_2_naming_the_option() {
    for (args, says) in [
        (vec!["nvbandwidth", "host_to_device_memcpy_sm"], "TESTCASE"),
        (vec!["nvbandwidth", "8"], "TESTCASE"),
        (vec!["nvbandwidth", "0", "-b", "x"], "--bufferSize"),
        (vec!["nvbandwidth", "0", "-b", "0"], "-b"),
        (vec!["nvbandwidth", "0", "-i", "0"], "-i"),
        (vec!["nvbandwidth", "0", "-i", "-3"], "--testSamples"),
        (vec!["nvbandwidth", "0", "--loopCount", "0"], "--loopCount"),
        (vec!["nvbandwidth", "0", "--host", "nowhere"], "--host"),
        (vec!["nvbandwidth", "0", "no-such.toml"], "no-such.toml"),
    ] {
        let o = gdrsim(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?} should name {says}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(o.stdout.is_empty(), "{args:?} printed before refusing");
    }
    // TLP by TLP, the config's own bound on message size holds for the copies too.
    let tlp = config::DEFAULT_TOML
        .replacen("granularity = \"auto\"", "granularity = \"tlp\"", 1)
        .replacen("to = \"1GiB\"", "to = \"1MiB\"", 1);
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("nvbandwidth-tlp.toml");
    std::fs::write(&path, tlp).expect("write the config");
    let o = gdrsim(&["nvbandwidth", "0", path.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("-b") && err.contains("tlp"), "{err}");
}

/// Issue #28 item 11: `nvbandwidth --help` named four testcases (the host ones) where `-l`
/// lists eight. The help says how many there are, in the count `-l` gives, and names each
/// direction `-l` lists.
#[test]
fn help_says_what_list_lists() {
    let list = stdout(&gdrsim(&["nvbandwidth", "-l"]));
    let names: Vec<&str> = list
        .lines()
        .filter_map(|l| {
            let (index, name) = l.split_once(", ")?;
            index.parse::<usize>().ok()?;
            name.strip_suffix(':')
        })
        .collect();
    let help = stdout(&gdrsim(&["nvbandwidth", "--help"])).replace('\n', " ");
    let words = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    let count = words[names.len()];
    assert!(
        help.contains(&format!("nvbandwidth's {count} copy-engine testcases")),
        "{} testcases listed, help: {help}",
        names.len()
    );
    for (word, direction) in [
        ("host to device", "host_to_device"),
        ("device to host", "device_to_host"),
        ("device to device", "device_to_device"),
        ("bidirectional", "bidirectional"),
        ("read", "_read_"),
        ("write", "_write_"),
    ] {
        assert!(names.iter().any(|n| n.contains(direction)), "{direction}");
        assert!(help.contains(word), "{word}: {help}");
    }
}

/// nvbandwidth's own `-t TESTCASE` (by name or index) runs the same testcase as the positional
/// form, byte for byte, and its one argument is then the config; a testcase given both ways
/// exits 2 naming `-t`, before any output.
#[test]
fn t_flag_names_the_testcase_as_nvbandwidth_does() {
    let dgx = config_path("dgx-a100.toml");
    let dgx = dgx.to_str().expect("utf-8 path");
    let small = ["-b", "8", "-i", "1", "--loopCount", "2"];
    let run = |args: &[&str]| {
        let mut all = vec!["nvbandwidth"];
        all.extend_from_slice(args);
        all.extend_from_slice(&small);
        stdout(&gdrsim(&all))
    };
    let positional = run(&["device_to_host_memcpy_ce", dgx]);
    assert_eq!(run(&["-t", "device_to_host_memcpy_ce", dgx]), positional);
    assert_eq!(run(&["--testcase", "1", dgx]), positional);
    assert!(
        positional.contains("Running device_to_host_memcpy_ce."),
        "{positional}"
    );
    // Without a config, the embedded default machine, as without -t.
    assert_eq!(run(&["-t", "0"]), run(&["0"]));
    let both = gdrsim(&["nvbandwidth", "-t", "0", "1", dgx]);
    assert_eq!(both.status.code(), Some(2));
    assert!(both.stdout.is_empty());
    let err = String::from_utf8_lossy(&both.stderr);
    assert!(err.contains("`-t`") && err.contains("-t 0 and 1"), "{err}");
}

//! `gdrsim nccl-tests` driven as a user runs it (issue #24): nccl-tests' ring collectives on
//! the simulated machine, in nccl-tests 2.19.6's layout, line for line: the `#` header
//! (version, program, nThread/nGpus/sizes line, devices, one `#  Rank` line per rank), the
//! column header verbatim, one row of 13 fields per size (busbw = algbw x 2(n-1)/n), the
//! footer with the mean busbw; bad flags exit 2 with an error naming the flag, before any
//! output.

use std::process::{Command, Output};

use crate::support::scratch;

/// Two DGX H100-class hosts, few jittered repeats: the hosts, machines and network a run
/// takes (no [sweep] or scenarios needed).
const SMALL: &str = "name = \"nt\"\nseed = 3\n[sim]\niterations = 2\nmin_iterations = 1\n\
    [network]\nswitch_hops = 1\n[[machines]]\nname = \"dgx\"\npreset = \"dgx-h100\"\n\
    [[hosts]]\nname = \"alpha\"\nmachine = \"dgx\"\n[[hosts]]\nname = \"beta\"\nmachine = \"dgx\"\n";

/// The column header as nccl-tests 2.19.6 prints it (NVIDIA/nccl-tests 2.19.6,
/// from `src/util.cu` writeResultHeader).
const COLUMN_HEADER: [&str; 4] = [
    "#",
    "#                                                              out-of-place                       in-place          ",
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong ",
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         ",
];

/// The binary with no NCCL variable from the environment.
fn nccl_tests(args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gdrsim"));
    c.arg("nccl-tests")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    for (name, _) in std::env::vars().filter(|(n, _)| n.starts_with("NCCL_")) {
        c.env_remove(name);
    }
    c.output().expect("the gdrsim binary runs")
}

fn small_config(name: &str) -> std::path::PathBuf {
    let dir = scratch("nccl_tests", name);
    let path = dir.join("small.toml");
    std::fs::write(&path, SMALL).unwrap();
    path
}

/// A C printf figure of getFloatStr: 7 columns for time, 6 for bandwidths.
fn figure(s: &str) -> f64 {
    s.parse().unwrap_or_else(|_| panic!("a figure: {s:?}"))
}

/// The size rows of a report (the lines that are not `#` comments), each split into its
/// fields: size count type redop root, then time algbw busbw #wrong out of place and in place.
fn rows(out: &str) -> Vec<Vec<&str>> {
    out.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split_whitespace().collect())
        .collect()
}

#[test]
fn all_reduce_prints_nccl_tests_layout_line_for_line() {
    let cfg = small_config("layout");
    let o = nccl_tests(&[
        "all_reduce_perf",
        cfg.to_str().unwrap(),
        "-b",
        "1M",
        "-e",
        "4M",
        "-f",
        "2",
        "-g",
        "2",
    ]);
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    // The header.
    assert!(
        lines[0].starts_with("# nccl-tests version 2.19.6 nccl-headers="),
        "{}",
        lines[0]
    );
    assert_eq!(lines[1], "# Collective test starting: all_reduce_perf");
    assert_eq!(
        lines[2],
        "# nThread 1 nGpus 2 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 1 \
         iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0"
    );
    assert_eq!(lines[3], "#");
    assert_eq!(lines[4], "# Using devices");
    // One line per rank: 2 hosts x 2 GPUs, in rank order, host by host.
    let ranks: Vec<&str> = lines[5..9].to_vec();
    for (r, l) in ranks.iter().enumerate() {
        let (host, dev) = (if r < 2 { "alpha" } else { "beta" }, r % 2);
        let want = format!("#  Rank {r:>2} Group  0 Pid ");
        assert!(l.starts_with(&want), "{l}");
        assert!(
            l.contains(&format!(" on {host:>10} device {dev:>2} [")),
            "{l}"
        );
        assert!(l.ends_with("] NVIDIA H100 SXM5 80GB"), "{l}");
    }
    assert!(!lines[9].starts_with("#  Rank"));
    // gdrsim's own lines are comments; then the column header, verbatim.
    let at = lines
        .iter()
        .position(|l| *l == COLUMN_HEADER[1])
        .expect("the column header")
        - 1;
    assert!(lines[9..at].iter().all(|l| l.starts_with("# gdrsim: ")));
    assert!(
        lines[9..at].iter().any(|l| l.contains("path auto")),
        "the path used is printed"
    );
    assert_eq!(&lines[at..at + 4], &COLUMN_HEADER);
    // One row per size: 13 fields, the sizes and counts of floats.
    let rows = &lines[at + 4..at + 7];
    let n = 4.0;
    let mut busbws = Vec::new();
    for (k, row) in rows.iter().enumerate() {
        let f: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(f.len(), 13, "{row}");
        let size = 1u64 << (20 + k);
        assert_eq!(f[0], size.to_string());
        assert_eq!(f[1], (size / 4).to_string());
        assert_eq!(&f[2..5], &["float", "sum", "-1"]);
        // The widths of nccl-tests' format: %12li  %12li  %8s  %6s  %6s, then per placement
        // "  %7s  %6s  %6s  %6g".
        assert_eq!(
            row.len(),
            12 + 2 + 12 + 2 + 8 + 2 + 6 + 2 + 6 + 2 * (2 + 7 + 2 + 6 + 2 + 6 + 2 + 6)
        );
        let (time, algbw, busbw) = (figure(f[5]), figure(f[6]), figure(f[7]));
        assert_eq!(f[8], "0");
        assert_eq!(&f[5..9], &f[9..13], "in-place prints the same figures");
        assert!(time > 0.0);
        // algbw = size / time; busbw = algbw x 2(n-1)/n, within the printed rounding.
        let want = size as f64 / 1e3 / time;
        assert!(
            (algbw - want).abs() <= 0.006 + want * 5e-4,
            "{algbw} vs {want}"
        );
        let want = algbw * 2.0 * (n - 1.0) / n;
        assert!((busbw - want).abs() <= 0.02, "{busbw} vs {want}");
        busbws.push(busbw);
    }
    // The footer: the mean busbw over both placements of every size (%g), and the end.
    let rest = &lines[at + 7..];
    assert_eq!(rest[0], "# Out of bounds values : 0 OK");
    let avg: f64 = rest[1]
        .strip_prefix("# Avg bus bandwidth    : ")
        .and_then(|s| s.strip_suffix(' '))
        .unwrap_or_else(|| panic!("{}", rest[1]))
        .parse()
        .unwrap();
    let mean = busbws.iter().sum::<f64>() / busbws.len() as f64;
    assert!((avg - mean).abs() < 0.01, "{avg} vs {mean}");
    assert_eq!(
        &rest[2..],
        &["#", "# Collective test concluded: all_reduce_perf", "#", ""]
    );
    assert!(out.ends_with("#\n\n"));
}

/// All-gather: sizes rounded down to ranks x 16 bytes, redop `none`, busbw (n-1)/n; -c 0
/// prints N/A; NCCL_MAX_NCHANNELS is honoured and printed.
#[test]
fn all_gather_rounds_sizes_and_honours_channels() {
    let cfg = small_config("gather");
    let o = nccl_tests(&[
        "all_gather_perf",
        cfg.to_str().unwrap(),
        "-b",
        "1000",
        "-e",
        "1000",
        "-g",
        "1",
        "-c",
        "0",
        "--env",
        "NCCL_MAX_NCHANNELS=2",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    // NCCL's tuner picks LL for so few bytes.
    assert!(
        out.contains(
            "# gdrsim: NCCL_ALGO unset (the ring, NCCL's only algorithm here), protocol by size \
             as NCCL's tuner picks it for the ring: LL "
        ) && out.contains("; 2 channels"),
        "{out}"
    );
    let all = rows(&out);
    let f = &all[0];
    // 250 floats / 2 ranks = 125, down to 124 (16 bytes' worth); the buffer 124 x 2 x 4.
    assert_eq!(&f[..5], &["992", "124", "float", "none", "-1"]);
    assert_eq!(f[8], "N/A");
    let (algbw, busbw) = (figure(f[6]), figure(f[7]));
    assert!((busbw - algbw / 2.0).abs() <= 0.01, "{algbw} {busbw}");
}

/// alltoall_perf: every pair's sends, redop none, the per-peer count rounded as nccl-tests'
/// `AlltoAllGetCollByteCount` does, busbw = algbw x (n-1)/n; NCCL_NET_GDR_LEVEL=LOC runs NCCL's
/// host path and says so, slower than GPUDirect; NCCL_NET_GDR_READ=0 the host path on the
/// send side only, slower too.
#[test]
fn alltoall_runs_every_pair_and_gdr_off_is_the_host_path() {
    let cfg = small_config("alltoall");
    let run = |env: &str| {
        let o = nccl_tests(&[
            "alltoall_perf",
            cfg.to_str().unwrap(),
            "-b",
            "1M",
            "-e",
            "1M",
            "-g",
            "2",
            "--env",
            env,
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let on = run("NCCL_NET_GDR_LEVEL=PXB");
    let off = run("NCCL_NET_GDR_LEVEL=LOC");
    assert!(off.contains("# gdrsim: path nccl_host"), "{off}");
    // NCCL_NET_GDR_READ=0: the senders store into host memory, the receivers keep GPUDirect.
    let no_read = run("NCCL_NET_GDR_READ=0");
    assert!(
        no_read.contains("GPUDirect reads off (NCCL_NET_GDR_READ)")
            && no_read.contains("ran as nccl_host_send_gpudirect_recv"),
        "{no_read}"
    );
    assert!(figure(rows(&no_read)[0][5]) > figure(rows(&on)[0][5]));
    let (on_rows, off_rows) = (rows(&on), rows(&off));
    let (a, b) = (&on_rows[0], &off_rows[0]);
    // 262144 floats / 4 ranks = 65536 a peer (already a multiple of 4); 1 MiB in all.
    assert_eq!(&a[..5], &["1048576", "65536", "float", "none", "-1"]);
    let (algbw, busbw) = (figure(a[6]), figure(a[7]));
    assert!((busbw - algbw * 3.0 / 4.0).abs() <= 0.01, "{algbw} {busbw}");
    assert!(
        figure(b[5]) > figure(a[5]),
        "GDR off {} us, on {} us",
        b[5],
        a[5]
    );
}

/// NCCL_ALGO=Tree runs NCCL's tree all-reduce (said in the note line, faster than the ring
/// for a small buffer over 2 x 8 GPUs: 2 (7 + 1) hops up and down against the ring's 30
/// steps); Ring,Tree lets NCCL's tuner pick per size and names what it picked (Tree/LL at 8
/// bytes with 8 GPUs a node; with 2 a node NCCL's model prefers the ring); Ring is the ring,
/// as unset.
#[test]
fn nccl_algo_tree_runs_the_tree_and_ring_tree_lets_the_tuner_pick() {
    let cfg = small_config("tree");
    let run = |env: &str| {
        let o = nccl_tests(&[
            "all_reduce_perf",
            cfg.to_str().unwrap(),
            "-b",
            "8",
            "-e",
            "8",
            "-g",
            "8",
            "--env",
            env,
        ]);
        assert!(
            o.status.success(),
            "{env}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    };
    let time = |out: &str| -> f64 { figure(rows(out)[0][5]) };
    let tree = run("NCCL_ALGO=Tree");
    let ring = run("NCCL_ALGO=Ring");
    let both = run("NCCL_ALGO=ring,TREE");
    assert!(
        tree.contains("# gdrsim: NCCL_ALGO Tree, protocol by size as NCCL's tuner picks it for the tree: LL 8 B;"),
        "{tree}"
    );
    assert!(
        ring.contains("# gdrsim: NCCL_ALGO Ring, protocol by size"),
        "{ring}"
    );
    assert!(
        both.contains("# gdrsim: NCCL_ALGO Ring,Tree, algorithm and protocol by size as NCCL's tuner picks them: Tree/LL 8 B;"),
        "{both}"
    );
    assert!(
        time(&tree) < time(&ring),
        "tree {} us, ring {} us",
        time(&tree),
        time(&ring)
    );
    assert_eq!(time(&both), time(&tree));
}

/// broadcast_perf: redop `none`, the root column (`-r`, default 0), busbw = algbw; `-r -1`
/// runs every rank as the root in turn, a sweep each, in nccl-tests' order (every size of
/// root 0, then of root 1, ...). sendrecv_perf: the op as given, root -1, busbw = algbw, and
/// `#wrong` N/A in place (nccl-tests does not check sendrecv in place); its note names the p2p
/// channels a pair stripes over.
#[test]
fn broadcast_and_sendrecv_print_their_roots_and_checks() {
    let cfg = small_config("bcast");
    let cfg = cfg.to_str().unwrap();
    let run = |args: &[&str]| {
        let o = nccl_tests(args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let sizes = ["-b", "64K", "-e", "1M", "-f", "16", "-g", "2"];
    let one: Vec<&str> = ["broadcast_perf", cfg]
        .iter()
        .chain(&sizes)
        .copied()
        .collect();
    let out = run(&one);
    assert!(
        out.contains("# Collective test starting: broadcast_perf"),
        "{out}"
    );
    let r = rows(&out);
    assert_eq!(r.len(), 2);
    assert_eq!(&r[0][..5], &["65536", "16384", "float", "none", "0"]);
    for row in &r {
        assert_eq!(row.len(), 13, "{row:?}");
        assert_eq!(row[6], row[7], "busbw = algbw: {row:?}");
    }
    let mut every = one.clone();
    every.extend(["-r", "-1"]);
    let out = run(&every);
    let r = rows(&out);
    let roots: Vec<&str> = r.iter().map(|row| row[4]).collect();
    assert_eq!(roots, ["0", "0", "1", "1", "2", "2", "3", "3"]);
    assert_eq!(r[0][0], "65536");
    assert_eq!(r[1][0], "1048576");
    let mut third = one.clone();
    third.extend(["-r", "2"]);
    assert!(rows(&run(&third)).iter().all(|row| row[4] == "2"));

    let sr: Vec<&str> = ["sendrecv_perf", cfg]
        .iter()
        .chain(&sizes)
        .copied()
        .collect();
    let out = run(&sr);
    assert!(out.contains("p2p channels"), "{out}");
    for row in rows(&out) {
        assert_eq!(&row[2..5], &["float", "sum", "-1"]);
        assert_eq!(row[6], row[7], "busbw = algbw: {row:?}");
        assert_eq!((row[8], row[12]), ("0", "N/A"), "{row:?}");
    }
}

/// Bad flags and NCCL settings the model lacks exit 2 with one error naming the flag, before
/// any output.
#[test]
fn bad_flags_are_refused_naming_the_flag() {
    let cfg = small_config("bad");
    let cfg = cfg.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["reduce_perf", cfg], "not modelled yet"),
        (&["gather_perf", cfg], "not modelled yet"),
        (&["broadcast_perf", cfg, "-g", "2", "-r", "4"], "-r"),
        (&["broadcast_perf", cfg, "-r", "x"], "-r"),
        (&["broadcast_perf", cfg, "-r", "-2"], "-r"),
        (&["all_reduce_perff", cfg], "all_reduce_perf"),
        (&["all_reduce_perf", cfg, "-b", "1X"], "-b"),
        (&["all_reduce_perf", cfg, "-b", "8M", "-e", "1M"], "-b/-e"),
        (&["all_reduce_perf", cfg, "-e", "32G"], "-e"),
        (&["all_reduce_perf", cfg, "-g", "9"], "-g"),
        (&["all_reduce_perf", cfg, "-g", "0"], "-g"),
        (&["all_reduce_perf", cfg, "-n", "0"], "-n"),
        (&["all_reduce_perf", cfg, "-d", "float33"], "-d"),
        (&["all_reduce_perf", cfg, "-o", "xor"], "-o"),
        (&["all_reduce_perf", cfg, "-b", "0", "-f", "2"], "-b"),
        (
            &["all_reduce_perf", cfg, "--env", "NCCL_ALGO=NVLS"],
            "Ring,Tree",
        ),
        (
            &["all_gather_perf", cfg, "--env", "NCCL_ALGO=Tree"],
            "all_reduce only",
        ),
        (
            &["all_reduce_perf", cfg, "--env", "NCCL_PROTO=LL,LL128"],
            "single",
        ),
        (
            &["all_reduce_perf", cfg, "--env", "NCCL_NET_GDR_LEVEL=NVL"],
            "NCCL_NET_GDR_LEVEL",
        ),
        (&["all_reduce_perf", cfg, "--env", "NCCL_FOO=1"], "--env"),
        (
            &["all_reduce_perf", cfg, "--env", "NCCL_BUFFSIZE=1"],
            "NCCL_BUFFSIZE",
        ),
        (
            &["all_reduce_perf", cfg, "--env", "NCCL_NET_GDR_READ=on"],
            "NCCL_NET_GDR_READ",
        ),
        (&["all_reduce_perf", cfg, "-x", "1"], "-x"),
    ];
    for (args, says) in cases {
        let o = nccl_tests(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}: output before the refusal");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // The environment's NCCL_ALGO counts as the flag does.
    let mut c = Command::new(env!("CARGO_BIN_EXE_gdrsim"));
    let o = c
        .args(["nccl-tests", "all_reduce_perf", cfg])
        .env("NCCL_ALGO", "CollnetDirect")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("NCCL_ALGO"));
}

/// `gdrsim measured` reads the command's own output back: every row's busbw per placement and
/// the average, as printed.
#[test]
fn measured_reads_the_output_back() {
    let cfg = small_config("measured");
    let o = nccl_tests(&[
        "reduce_scatter_perf",
        cfg.to_str().unwrap(),
        "-b",
        "1M",
        "-e",
        "2M",
        "-f",
        "2",
        "-g",
        "1",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    let m = gdrsim::measured::parse_text("rs.log", &out, gdrsim::measured::Memory::Auto).unwrap();
    assert_eq!(m.len(), 2 * 2 * 3 + 1);
    assert!(
        m.iter()
            .all(|r| r.tool == "nccl-tests" && r.test == "reduce_scatter_perf")
    );
    assert_eq!(m[0].detail, "out-of-place;float;sum");
    assert_eq!(m[0].size_bytes, Some(1 << 20));
    assert_eq!(m[0].iterations, Some(20));
    let printed: Vec<f64> = rows(&out)
        .iter()
        .flat_map(|f| [f[7].parse::<f64>().unwrap(), f[11].parse().unwrap()])
        .collect();
    let read: Vec<f64> = m
        .iter()
        .filter(|r| r.statistic == "busbw")
        .map(|r| r.value)
        .collect();
    assert_eq!(read, printed);
    assert_eq!(m.last().unwrap().statistic, "avg_busbw");
}

/// The README quotes `all_reduce_perf -b 8 -e 1G -f 8 -g 8` on the built-in machine; its
/// figures are what the command prints (they had drifted from it after physics changes that
/// nothing tied to the text): the time at 8 B and 16 MiB, the busbw at 1 GiB, each to the
/// precision the README gives.
#[test]
fn the_readmes_all_reduce_figures_are_what_the_command_prints() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let text = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    let anchor = "On the built-in machine `all_reduce_perf -b 8 -e 1G -f 8 -g 8`";
    let at = text.find(anchor).expect("the README quotes the command");
    let para = &text[at..(at + 900).min(text.len())];
    // The number written just before `what` in the paragraph.
    let quoted = |what: &str| -> String {
        let end = para
            .find(what)
            .unwrap_or_else(|| panic!("{what:?} in: {para}"));
        let words: Vec<&str> = para[..end].split_whitespace().collect();
        words.last().expect("a figure").to_string()
    };
    let out = nccl_tests(&[
        "all_reduce_perf",
        "-b",
        "8",
        "-e",
        "1G",
        "-f",
        "8",
        "-g",
        "8",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let all = rows(&stdout);
    let row = |size: &str| {
        (all.iter().find(|f| f[0] == size))
            .unwrap_or_else(|| panic!("a row of {size} B in:\n{stdout}"))
    };
    let one = |x: &str| format!("{:.1}", figure(x));
    assert_eq!(quoted("µs at 8 B"), one(row("8")[5]), "8 B");
    assert_eq!(quoted("µs at 16 MiB"), one(row("16777216")[5]), "16 MiB");
    assert_eq!(
        quoted("GB/s busbw at 1 GiB"),
        one(row("1073741824")[7]),
        "1 GiB"
    );
}

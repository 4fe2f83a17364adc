//! The cost gate (issue #27 item 9): every command that simulates is estimated before any
//! work, events and peak memory, and refused as bad input (exit 2, nothing written, the one
//! line naming what to change) above `--max-events` or `--max-memory`.

use crate::support::*;

/// Asserts that `o` was refused by the gate: exit 2, nothing on stdout, one line on stderr
/// that says `needle`.
fn gated(o: &std::process::Output, needle: &str) {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(needle), "{needle}: {err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(o.stdout.is_empty(), "{}", text(&o.stdout));
}

/// `sensitivity` took no limit at all: a study `run` refuses ran as some 60 variants of it.
/// Its variants are now estimated and gated, and `run --sensitivity` gates the study and its
/// variants together.
#[test]
fn sensitivity_is_gated_with_its_variants() {
    let dir = scratch("gate", "sensitivity");
    let csv = dir.join("s.csv");
    let o = gdrsim_within(
        30,
        &["sensitivity", "--max-events", "3000000", "--csv", s(&csv)],
    );
    gated(
        &o,
        "expected a sensitivity study of at most 3.0e6 estimated events (raise the limit with \
         --max-events",
    );
    assert!(!csv.exists());
    let o = gdrsim_within(30, &["sensitivity", "--max-memory", "20MiB"]);
    gated(
        &o,
        "of memory at its peak (raise the limit with --max-memory",
    );
    // The default study alone (4.4e6 events) fits 1e7; with its variants it does not.
    let out = dir.join("out");
    let args = [
        "run",
        "--sensitivity",
        "--max-events",
        "10000000",
        "--out",
        s(&out),
    ];
    gated(
        &gdrsim_within(30, &args),
        "a study and a sensitivity study of at most 1.0e7 estimated events (raise the limit \
         with --max-events, or leave out --sensitivity",
    );
    assert!(!out.exists());
}

/// The peak memory the gate estimated for `gdrsim ARGS`, read from its refusal under a limit
/// of one byte.
fn estimated_peak(args: &[&str]) -> u64 {
    let o = gdrsim_within(30, &[args, &["--max-memory", "1"]].concat());
    gated(&o, "of memory at its peak");
    let err = text(&o.stderr);
    let at = err.find("found about ").expect("the estimate") + "found about ".len();
    let figure: Vec<&str> = err[at..].split(' ').take(2).collect();
    bytes_of(&figure.join(" "))
}

/// Issue #27 item 9: perftest's legal `-b -q 1000 -n 200 -t 15000` held gigabytes for hours,
/// and nvbandwidth or p2p-matrix with TLP-by-TLP copies of the largest buffers ran for
/// thousands of hours: each goes through the gate, refused before any work and naming what
/// to change, and the memory it is refused for is within 3x of what a run holds.
#[test]
fn the_benchmark_emulations_are_gated() {
    let repro = [
        "perftest",
        "ib_send_bw",
        "-b",
        "-q",
        "1000",
        "-n",
        "200",
        "-t",
        "15000",
    ];
    gated(
        &gdrsim_within(30, &[&repro[..], &["--max-memory", "512MiB"]].concat()),
        "expected an ib_send_bw run of at most 512 MiB of memory at its peak (raise the limit \
         with --max-memory, or fewer iterations (-n), queue pairs (-q) or sizes), found about",
    );
    gated(
        &gdrsim_within(30, &[&repro[..], &["--max-events", "1000000"]].concat()),
        "400000 messages over 2000 queue pairs at 1 size",
    );
    // TLP by TLP, 4 GPUs x 1,000 samples x 10,004 copies of 16 MiB: 3e13 events, over the
    // default limit.
    let dir = scratch("gate", "tools");
    let tlp = dir.join("tlp.toml");
    let text_ = gdrsim::config::DEFAULT_TOML
        .replacen("granularity = \"auto\"", "granularity = \"tlp\"", 1)
        .replacen("to = \"1GiB\"", "to = \"16MiB\"", 1);
    std::fs::write(&tlp, text_).unwrap();
    let o = gdrsim_within(
        30,
        &[
            "nvbandwidth",
            "0",
            s(&tlp),
            "-b",
            "16",
            "-i",
            "1000",
            "--loopCount",
            "10000",
        ],
    );
    gated(
        &o,
        "expected a host_to_device_memcpy_ce testcase of at most 2.5e11 estimated events \
         (raise the limit with --max-events, or fewer samples (-i), copies (--loopCount) or a \
         smaller buffer (-b)), found 3.1e13 events",
    );
    let csv = dir.join("m.csv");
    let o = gdrsim_within(
        30,
        &["p2p-matrix", "--max-events", "1000", "--csv", s(&csv)],
    );
    gated(
        &o,
        "expected a p2p-matrix run of at most 1.0e3 estimated events",
    );
    assert!(!csv.exists());
    // The estimates are models of the runs.
    for args in [
        &["perftest", "ib_send_bw", "-b", "-q", "10", "-n", "2000"][..],
        &["perftest", "ib_read_lat", "-n", "20000"],
        &["nvbandwidth", "3", "-b", "64", "--loopCount", "2000"],
        &["p2p-matrix", "--numElems", "1000000"],
    ] {
        let estimate = estimated_peak(args);
        let (code, peak) = gdrsim_peak(args);
        assert_eq!(code, 0, "{args:?}");
        let ratio = estimate as f64 / peak as f64;
        eprintln!("{args:?}: estimated {estimate} B, peak {peak} B ({ratio:.2}x)");
        assert!((1.0 / 3.0..=3.0).contains(&ratio), "{args:?}: {ratio:.2}");
    }
}

/// `calibrate` ran its emulations at every Nelder-Mead evaluation, whatever they cost: it now
/// estimates every emulated run at the most evaluations the fit makes, refuses before any
/// work above either limit, and writes no calibrated config.
#[test]
fn calibrate_is_gated() {
    let dir = scratch("gate", "calibrate");
    let log = dir.join("bw.log");
    let args = ["perftest", "ib_write_bw", "-s", "4096", "-n", "100"];
    std::fs::write(&log, ok(&gdrsim(&args), "perftest")).unwrap();
    let csv = dir.join("m.csv");
    ok(
        &gdrsim(&["measured", s(&log), "--out", s(&csv)]),
        "measured",
    );
    let out = dir.join("calibrated.toml");
    let calibrate = |limit: &[&str]| {
        let fit = "machines[0].nics[0].wire_rate_gbps";
        let args = [
            "calibrate",
            "configs/default.toml",
            "--measured",
            s(&csv),
            "--fit",
            fit,
            "--out",
            s(&out),
        ];
        gdrsim_within(30, &[&args[..], limit].concat())
    };
    gated(
        &calibrate(&["--max-events", "100000"]),
        "expected a calibration of at most 1.0e5 estimated events (raise the limit with \
         --max-events, or fewer measured rows (--stats), --fit keys or iterations (--iters)), \
         found 3.2e6 events over 1 emulated run of up to 608 evaluations",
    );
    assert!(!out.exists());
    gated(
        &calibrate(&["--max-memory", "1MiB"]),
        "expected a calibration of at most 1 MiB of memory at its peak (raise the limit with \
         --max-memory",
    );
    assert!(!out.exists());
    // Under the defaults it fits and writes its config.
    ok(&calibrate(&[]), "calibrate");
    assert!(out.exists());
}

/// `validate` ran every row of a set, whatever it asked for: a row of 4e9 copies of 16 GiB
/// holds terabytes. The set is estimated row by row before any row runs and refused above
/// either limit.
#[test]
fn validate_is_gated() {
    gated(
        &gdrsim_within(30, &["validate", "--max-events", "1000"]),
        "data/validation.toml (embedded): expected a validation set of at most 1.0e3 \
         estimated events (raise the limit with --max-events, or fewer rows, or rows of fewer \
         iterations or smaller sizes), found",
    );
    let dir = scratch("gate", "validate");
    let set = dir.join("set.toml");
    std::fs::write(
        &set,
        "[[row]]\nid = \"X1\"\nwhat = \"host-to-device copies of 16 GiB\"\n\
         note = \"the cost gate\"\ntool = \"cudaMemcpy\"\ntest = \"h2d\"\n\
         size = 17179869184\niters = 4000000000\nfigure = \"gbytes_per_s\"\n\
         published = 50.0\ntolerance = 0.1\npasses = true\n",
    )
    .unwrap();
    gated(
        &gdrsim_within(30, &["validate", "--set", s(&set), "--max-memory", "64GiB"]),
        "expected a validation set of at most 64 GiB of memory at its peak (raise the limit \
         with --max-memory, or fewer rows, or rows of fewer iterations or smaller sizes), found \
         about 834.5 GiB over 1 row on 1 thread; the largest: row X1 h2d (834.5 GiB)",
    );
}

/// `walk` and `trace` record every unit of their run and were not gated: a walk of 64 MiB TLP
/// by TLP held 840 MB, a trace of 16 MiB 3.7 GB, and `trace` simulated a whole message before
/// its own size check. Both are now estimated from the plan before any work and refused
/// through the gate, and the estimate is within 3x of what a run holds.
#[test]
fn walk_and_trace_are_gated() {
    let dir = scratch("gate", "inspect");
    let tlp = dir.join("tlp.toml");
    let text_ = gdrsim::config::DEFAULT_TOML
        .replacen("granularity = \"auto\"", "granularity = \"tlp\"", 1)
        .replacen("to = \"1GiB\"", "to = \"16MiB\"", 1);
    std::fs::write(&tlp, text_).unwrap();
    gated(
        &gdrsim_within(
            30,
            &["walk", s(&tlp), "--size", "64MiB", "--max-memory", "512MiB"],
        ),
        "expected a walk of at most 512 MiB of memory at its peak (raise the limit with \
         --max-memory, or a smaller --size, or granularity = \"auto\" in the config's [sim]",
    );
    gated(
        &gdrsim_within(30, &["walk", "--max-events", "10"]),
        "expected a walk of at most 1.0e1 estimated events (raise the limit with --max-events",
    );
    let out = dir.join("t.json");
    let trace = |extra: &[&str]| {
        let args = ["trace", s(&tlp), "--path", "staged", "--out", s(&out)];
        gdrsim_within(30, &[&args[..], extra].concat())
    };
    gated(
        &trace(&["--size", "2MiB", "--max-memory", "256MiB"]),
        "expected a trace of at most 256 MiB of memory at its peak",
    );
    assert!(!out.exists());
    // Its own size check comes first too: 16 MiB TLP by TLP is refused at once (it used to
    // simulate a message of it before refusing).
    let t = std::time::Instant::now();
    gated(
        &trace(&["--size", "16MiB"]),
        "expected a trace of at most 128 MiB (fewer messages or a smaller --size)",
    );
    assert!(t.elapsed().as_secs_f64() < 1.0, "{:?}", t.elapsed());
    assert!(!out.exists());
    // Normal cases run under the defaults.
    ok(&gdrsim(&["walk"]), "walk");
    ok(&trace(&["--size", "64KiB"]), "trace");
    assert!(out.exists());
    std::fs::remove_file(&out).unwrap();
    // The estimates are models of the runs.
    for args in [
        &["walk", s(&tlp), "--size", "4MiB"][..],
        &["walk", "--size", "1GiB", "--path", "staged_pipelined"],
        &[
            "trace",
            s(&tlp),
            "--path",
            "staged",
            "--size",
            "256KiB",
            "--out",
            s(&out),
        ],
        &[
            "trace",
            "--path",
            "gpudirect",
            "--size",
            "64KiB",
            "--messages",
            "200",
            "--out",
            s(&out),
        ],
    ] {
        let estimate = estimated_peak(args);
        let (code, peak) = gdrsim_peak(args);
        assert_eq!(code, 0, "{args:?}");
        let ratio = estimate as f64 / peak as f64;
        eprintln!("{args:?}: estimated {estimate} B, peak {peak} B ({ratio:.2}x)");
        assert!((1.0 / 3.0..=3.0).contains(&ratio), "{args:?}: {ratio:.2}");
    }
}

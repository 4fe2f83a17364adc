//! Bad input: one test per class of mistake, each expecting exit code 2, exactly one error
//! line on stderr naming the file, the key path, what was expected and what was found, no
//! panic, and nothing written (plus a wrong-typed quantity, a duplicate name and a TOML syntax
//! error, whose messages must still say what was found and where). Bad configs are made by
//! editing a copy of configs/default.toml (one replacement each, whose anchor must exist), so
//! they follow the real config.

use super::*;

// ---- bad input ----------------------------------------------------------------------------------

/// Runs `check` and `run` on a bad config file and checks the error report: exit code 2, one
/// line on stderr naming the file and every `needles` fragment (key path, expected, found), no
/// panic, nothing on stdout, and no output folder.
fn assert_rejected(config: &Path, needles: &[&str]) {
    let out = scratch(&format!(
        "{}-out",
        config.file_stem().unwrap().to_string_lossy()
    ));
    for args in [
        vec!["check", s(config)],
        vec!["run", s(config), "--out", s(&out)],
    ] {
        let o = gdrsim(&args);
        let stderr = text(&o.stderr);
        let what = format!("gdrsim {}", args.join(" "));
        assert_eq!(
            o.status.code(),
            Some(2),
            "{what}: exit code; stderr:\n{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{what} panicked:\n{stderr}");
        assert!(o.stdout.is_empty(), "{what} printed: {}", text(&o.stdout));
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{what}: one error line expected:\n{stderr}");
        let line = lines[0];
        assert!(line.starts_with("error: "), "{what}: {line}");
        assert!(
            line.contains(s(config)),
            "{what}: does not name the file: {line}"
        );
        assert!(
            line.contains("expected ") && line.contains(", found "),
            "{what}: no expected/found: {line}"
        );
        for n in needles {
            assert!(line.contains(n), "{what}: {n:?} missing from: {line}");
        }
        assert!(!out.exists(), "{what}: wrote {}", out.display());
    }
}

/// A bad config derived from configs/default.toml by one replacement.
fn assert_edit_rejected(name: &str, old: &str, new: &str, needles: &[&str]) {
    let cfg = write_config(name, &default_with(&[(old, new)]));
    assert_rejected(&cfg, needles);
}

#[test]
fn bad_input_unknown_key() {
    assert_edit_rejected(
        "unknown-key",
        "[sim]\n",
        "[sim]\nwarmup_iterations = 5\n",
        &[
            "key `sim.warmup_iterations`",
            "expected a known key (one of",
            "`iterations`",
            "found unknown key `warmup_iterations`",
        ],
    );
}

#[test]
fn bad_input_rate_where_a_size_is_expected() {
    assert_edit_rejected(
        "rate-for-size",
        "mtu_bytes = 4096",
        r#"mtu_bytes = "4KB/s""#,
        &[
            "key `machines[0].nics[0].mtu_bytes`",
            "expected a positive size in bytes",
            r#"found "4KB/s""#,
        ],
    );
}

#[test]
fn bad_input_zero_size() {
    assert_edit_rejected(
        "zero-size",
        "wqe_bytes = 64",
        "wqe_bytes = 0",
        &[
            "key `machines[0].nics[0].wqe_bytes`",
            "expected a positive size in bytes",
            "found 0",
        ],
    );
}

#[test]
fn bad_input_negative_size() {
    assert_edit_rejected(
        "negative-size",
        "cqe_bytes = 64",
        "cqe_bytes = -64",
        &[
            "key `machines[0].nics[0].cqe_bytes`",
            "expected a positive size in bytes",
            "found -64",
        ],
    );
}

#[test]
fn bad_input_link_width_3() {
    assert_edit_rejected(
        "width-3",
        "width = 16",
        "width = 3",
        &[
            "key `machines[0].links[0].width`",
            "expected a link width of 1, 2, 4, 8, 12, 16 or 32 lanes",
            "found 3",
        ],
    );
}

#[test]
fn bad_input_out_of_range_counts_and_lengths() {
    assert_edit_rejected(
        "switch-hops",
        "switch_hops = 1",
        "switch_hops = 100000",
        &[
            "key `network.switch_hops`",
            "expected a number of switches from 0 to 64",
            "found 100000",
        ],
    );
    assert_edit_rejected(
        "iterations",
        "iterations = 60 ",
        "iterations = 4000000000 ",
        &[
            "key `sim.iterations`",
            "expected a number of iterations from 1 to 100000",
            "found 4000000000",
        ],
    );
    assert_edit_rejected(
        "cable",
        "cable_m = 3",
        "cable_m = 18446744073709551615",
        &[
            "key `network.cable_m`",
            "expected a cable length",
            "found 18446744073709551615",
        ],
    );
    assert_edit_rejected(
        "mtu",
        "mtu_bytes = 4096",
        "mtu_bytes = 8192",
        &[
            "mtu_bytes`",
            "expected a power of two from 256 to 4096 bytes",
            "found 8192",
        ],
    );
    assert_edit_rejected(
        "recv-depth",
        "recv_depth = 512 ",
        "recv_depth = 0 ",
        &[
            "key `sim.recv_depth`",
            "expected a number of posted receive WQEs from 1 to 100000",
            "found 0",
        ],
    );
    assert_edit_rejected(
        "rnr-timer",
        "min_rnr_timer = 12 ",
        "min_rnr_timer = 32 ",
        &[
            "key `sim.min_rnr_timer`",
            "expected the verbs' RNR timer code (IBTA table 45: 12 is 0.64 ms) from 0 to 31",
            "found 32",
        ],
    );
    assert_edit_rejected(
        "heap",
        "heap_base = 0x2A00000000",
        "heap_base = 0xFFFFFFFFFFFFFF00",
        &[
            "heap_base`",
            "expected a heap base",
            "found 0xffffffffffffff00",
        ],
    );
}

#[test]
fn bad_input_mps_not_a_power_of_two() {
    assert_edit_rejected(
        "mps-384",
        "mps_bytes = 256",
        "mps_bytes = 384",
        &[
            "key `machines[0].pcie.mps_bytes`",
            "expected a power of two from 128 to 4096 bytes",
            "found 384",
        ],
    );
}

#[test]
fn bad_input_mrrs_out_of_range() {
    for (v, name) in [("64", "mrrs-64"), ("8192", "mrrs-8192")] {
        assert_edit_rejected(
            name,
            "\nmrrs_bytes = 512",
            &format!("\nmrrs_bytes = {v}"),
            &[
                "key `machines[0].nics[0].mrrs_bytes`",
                "expected a power of two from 128 to 4096 bytes",
                &format!("found {v}"),
            ],
        );
    }
}

#[test]
fn bad_input_link_to_a_device_that_does_not_exist() {
    assert_edit_rejected(
        "link-to-nothing",
        r#"down = "gpu3""#,
        r#"down = "gpu9""#,
        &[
            "key `machines[0].links[",
            "].down`",
            "expected a switch, GPU or NIC of this machine (",
            "gpu3",
            r#"found "gpu9""#,
        ],
    );
}

#[test]
fn bad_input_scenario_naming_a_missing_host() {
    assert_edit_rejected(
        "missing-host",
        r#"sender = { host = "node-a""#,
        r#"sender = { host = "node-x""#,
        &[
            "key `scenarios[0].sender.host`",
            "expected one of the [[hosts]] (node-a, node-b)",
            r#"found "node-x""#,
        ],
    );
}

#[test]
fn bad_input_scenario_naming_a_missing_device() {
    assert_edit_rejected(
        "missing-nic",
        r#"receiver = { host = "node-b", nic = "nic0""#,
        r#"receiver = { host = "node-b", nic = "nic9""#,
        &[
            "key `scenarios[0].receiver.nic`",
            "expected a NIC of machine",
            "(nic0)",
            r#"found "nic9""#,
        ],
    );
    assert_edit_rejected(
        "missing-gpu",
        r#"gpu = "gpu0" }"#,
        r#"gpu = "gpu7" }"#,
        &[
            "key `scenarios[0].sender.gpu`",
            "expected a GPU of machine",
            "gpu0",
            r#"found "gpu7""#,
        ],
    );
}

/// Issue #27 item 15: an integer beyond 64 bits where a quantity or the sweep's sizes go said
/// "expected any value" (serde's buffer for an untagged enum takes every TOML value but a
/// 128-bit integer). Each such error now says what the key accepts, its range included.
#[test]
fn bad_input_128_bit_integer_says_what_is_expected() {
    let big = "99999999999999999999";
    let cases = [
        (
            "mtu_bytes = 4096",
            "machines[0].nics[0].mtu_bytes",
            "expected a size in bytes, a power of two from 256 to 4096",
        ),
        (
            "switch_latency_ns = 130",
            "network.switch_latency_ns",
            "expected a duration of at most 10 s",
        ),
        (
            "sizes = { from = \"1B\", to = \"1GiB\", factor = 2 }",
            "sweep.sizes",
            "expected a list of sizes",
        ),
        (
            "to = \"1GiB\"",
            "sweep.sizes.to",
            "expected a message size from 1 byte to 17179869184 bytes (16 GiB)",
        ),
        (
            "breakdown_sizes = [\"8B\", \"64KiB\", \"16MiB\"]",
            "output.breakdown_sizes[0]",
            "expected a positive size in bytes",
        ),
    ];
    for (i, (old, key, expected)) in cases.into_iter().enumerate() {
        let (k, v) = old.split_once(" = ").unwrap();
        // The key's value, or a list's first element.
        let new = if v.starts_with('[') {
            format!("{k} = [{big}]")
        } else {
            format!("{k} = {big}")
        };
        let cfg = write_config(&format!("int128-{i}"), &default_with(&[(old, &new)]));
        assert_rejected(
            &cfg,
            &[
                &format!("key `{key}`"),
                expected,
                &format!("found integer {big} (beyond 64 bits)"),
            ],
        );
        let o = gdrsim(&["check", s(&cfg)]);
        assert!(
            !text(&o.stderr).contains("any value"),
            "{}",
            text(&o.stderr)
        );
    }
}

#[test]
fn bad_input_wrong_type_for_a_quantity() {
    // A quantity is a number or a string with a unit; serde alone cannot say what was found.
    assert_edit_rejected(
        "bool-for-size",
        "mtu_bytes = 4096",
        "mtu_bytes = true",
        &[
            "key `machines[0].nics[0].mtu_bytes`",
            "expected a size in bytes",
            "found boolean true",
        ],
    );
}

#[test]
fn bad_input_duplicate_name_points_at_the_second_one() {
    assert_edit_rejected(
        "duplicate-gpu",
        r#"name = "gpu1""#,
        r#"name = "gpu0""#,
        &[
            "key `machines[0].gpus[1].name`",
            "machines[0].gpus[0].name is already \"gpu0\"",
            r#"found "gpu0" again"#,
        ],
    );
}

#[test]
fn bad_input_syntax_error_names_the_line() {
    // A key given twice: the second one is the error, on its own line.
    let text = default_toml();
    let line = text
        .lines()
        .position(|l| l.starts_with("seed ="))
        .expect("a seed line")
        + 2;
    let cfg = write_config(
        "duplicate-key",
        &default_with(&[("\nseed =", "\nseed = 1\nseed =")]),
    );
    assert_rejected(
        &cfg,
        &[
            "expected a TOML document",
            &format!("found a syntax error at line {line}, column 1"),
            "duplicate key",
        ],
    );
}

#[test]
fn bad_input_missing_file() {
    let missing = root().join("tests/bad_configs/does-not-exist.toml");
    assert!(!missing.exists());
    assert_rejected(
        &missing,
        &["expected a readable TOML file", "found an I/O error"],
    );
}

#[test]
fn bad_input_a_file_that_is_not_toml() {
    assert_rejected(
        &root().join("tests/bad_configs/not-toml.toml"),
        &["expected a TOML document", "found a syntax error at line 1"],
    );
}

#[test]
fn bad_input_read_with_the_staged_path() {
    assert_edit_rejected(
        "read-staged",
        "ops = [\"write_imm\"]",
        "ops = [\"read\"]",
        &["sweep.ops[0]", "staged", "read"],
    );
}

/// A client CPU's root complex refuses P2P reads (row B7): a GPUDirect RDMA Read from its GPU
/// has no route and no staging to fall back on, so the config is refused before any work.
#[test]
fn bad_input_read_from_a_gpu_the_nic_may_not_read() {
    let text = fs::read_to_string(root().join("configs/client-cpu.toml")).unwrap();
    let text = text
        .replace("ops = [\"write_imm\"]", "ops = [\"read\"]")
        .replace(
            "paths = [\"host\", \"staged\", \"gpudirect\"]",
            "paths = [\"gpudirect\"]",
        );
    assert!(text.contains("ops = [\"read\"]") && text.contains("paths = [\"gpudirect\"]"));
    let cfg = write_config("read-p2p", &text);
    assert_rejected(&cfg, &["scenarios[0]", "read on gpudirect", "refused"]);
}

#[test]
fn bad_input_unknown_op_and_no_ops() {
    assert_edit_rejected(
        "op-send",
        "ops = [\"write_imm\"]",
        "ops = [\"atomic\"]",
        &["sweep.ops[0]", "write_imm", "read"],
    );
    assert_edit_rejected(
        "no-ops",
        "ops = [\"write_imm\"]",
        "ops = []",
        &["sweep.ops", "at least one op"],
    );
}

#[test]
fn bad_input_unknown_buffer_kind() {
    assert_edit_rejected(
        "buffer-disk",
        "sender = { host = \"node-a\", nic = \"nic0\", gpu = \"gpu0\" }",
        "sender = { host = \"node-a\", nic = \"nic0\", gpu = \"gpu0\", buffer = \"disk\" }",
        &["scenarios[0].sender.buffer", "one of gpu, host", "disk"],
    );
    assert_edit_rejected(
        "bounce-kind",
        "sender = { host = \"node-a\", nic = \"nic0\", gpu = \"gpu0\" }",
        "sender = { host = \"node-a\", nic = \"nic0\", gpu = \"gpu0\", bounce = \"swap\" }",
        &[
            "scenarios[0].sender.bounce",
            "one of pinned, pageable",
            "swap",
        ],
    );
    assert_edit_rejected(
        "bounce-host",
        "sender = { host = \"node-a\", nic = \"nic0\", gpu = \"gpu0\" }",
        "sender = { host = \"node-a\", nic = \"nic0\", buffer = \"host\", bounce = \"pageable\" }",
        &[
            "scenarios[0].sender.bounce",
            "a side with GPU memory",
            "host-memory side",
        ],
    );
}

/// Issue #13, item 3: a size listed twice would give duplicate rows, and a range past the
/// 16 GiB limit was cut short silently: both refused, naming the key.
#[test]
fn bad_input_duplicate_sizes_and_a_range_past_16_gib() {
    let dup = write_config(
        "dup-sizes",
        &with_sizes(&default_toml(), "sizes = [\"4KiB\", \"8B\", \"4KiB\"]"),
    );
    assert_rejected(&dup, &["sweep.sizes[2]", "listed once", "sweep.sizes[0]"]);
    let big = write_config(
        "big-range",
        &with_sizes(
            &default_toml(),
            "sizes = { from = \"8B\", to = \"17GiB\", factor = 2 }",
        ),
    );
    assert_rejected(&big, &["sweep.sizes.to", "up to 16 GiB"]);
}

/// Issue #13, item 5: a name that cannot be a folder, and an output path that cannot be
/// written, are bad input: exit 2 before any simulation (they failed with exit 1 at the end).
#[test]
fn bad_input_unusable_name_and_output_path() {
    let long = format!("name = \"{}\"", "x".repeat(300));
    assert_edit_rejected(
        "long-name",
        "name = \"default\"",
        &long,
        &["`name`", "1 to 100"],
    );
    assert_edit_rejected(
        "slash-name",
        "name = \"default\"",
        "name = \"a/b\"",
        &["`name`"],
    );
    let file = scratch("out-is-a-file");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(&file, b"x").unwrap();
    let started = std::time::Instant::now();
    let o = gdrsim(&["run", "--quiet", "--out", s(&file)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("--out") && text(&o.stderr).contains("not a folder"));
    assert!(
        started.elapsed().as_secs_f64() < 5.0,
        "refused before simulating"
    );
}

/// Issue #27, item 15: the name was bounded in characters, so 100 CJK characters (300 bytes)
/// passed `check` and `run` failed at the end with "File name too long" (exit 1). It is
/// bounded in bytes; a name at the bound runs, into the longest folder name gdrsim derives
/// from it (a shard's), twice, so that the earlier folder is also set aside and replaced.
#[test]
fn bad_input_name_too_long_in_bytes() {
    let cjk = format!("name = \"{}\"", "名".repeat(100));
    assert_edit_rejected(
        "cjk-name",
        "name = \"default\"",
        &cjk,
        &["`name`", "1 to 100 bytes", "(300 bytes)"],
    );
    let at_bound = format!("{}x", "名".repeat(33));
    assert_eq!(at_bound.len(), 100);
    let cfg = write_config(
        "cjk-name-at-bound",
        &with_sizes(
            &default_with(&[("name = \"default\"", &format!("name = \"{at_bound}\""))]),
            "sizes = [\"8B\"]",
        ),
    );
    let out = scratch("cjk-name-at-bound").join(format!("{at_bound}-shard-9999-of-10000"));
    for _ in 0..2 {
        let args = ["run", s(&cfg), "--quiet", "--out", s(&out)];
        assert_ok(&gdrsim(&args), "a 100-byte name");
    }
    assert!(out.join("results.csv").is_file());
}

/// Issue #13, item 9: a config read from /dev/zero stops at 16 MiB instead of exhausting
/// memory; a host buffer base that would wrap past 2^64 is refused like a GPU heap base.
#[test]
fn bad_input_endless_file_and_wrapping_host_buffer_base() {
    if Path::new("/dev/zero").exists() {
        assert_rejected(Path::new("/dev/zero"), &["/dev/zero", "at most 16 MiB"]);
    }
    assert_edit_rejected(
        "host-base-wraps",
        "host_buffer_base = 0x10000000",
        "host_buffer_base = 0xFFFFFFFFFFFFF000",
        &["machines[0].host_buffer_base", "below 2^64"],
    );
}

/// Issue #13, item 1: values bounded one by one can still multiply past u64 picoseconds. A
/// cable of 100 km at 10 s per metre is refused naming both keys; so is a config whose runs
/// (100,000 iterations of messages that each cross 65 cables of 1 s per metre) would pass the
/// simulator's 53-day horizon, before any work.
#[test]
fn bad_input_times_whose_product_passes_the_horizon() {
    assert_edit_rejected_all(
        "cable-product",
        &[
            ("cable_m = 3", "cable_m = 100000"),
            (
                "propagation_ns_per_m = 5 ",
                "propagation_ns_per_m = \"1ms\" ",
            ),
        ],
        &[
            "key `network.cable_m`",
            "cable_m x propagation_ns_per_m",
            "100000 m x 1000000000 ps/m",
        ],
    );
    let cfg = write_config(
        "horizon",
        &default_with(&[
            ("cable_m = 3", "cable_m = 100000"),
            (
                "propagation_ns_per_m = 5 ",
                "propagation_ns_per_m = \"100us\" ",
            ),
        ]),
    );
    let out = gdrsim(&["check", s(&cfg)]);
    assert!(out.status.success(), "10 s cables are long but legal");
    assert_edit_rejected_all(
        "horizon-run",
        &[
            ("iterations = 60 ", "iterations = 100000 "),
            (
                "propagation_ns_per_m = 5 ",
                "propagation_ns_per_m = \"1s\" ",
            ),
            ("switch_hops = 1", "switch_hops = 64"),
        ],
        &[
            "key `sim.iterations`",
            "horizon of 53.4 days",
            "100000 messages",
        ],
    );
}

/// Issue #28 item 11: the horizon error blamed `sim.iterations` without saying which point
/// crossed it. It names the scenario, the path and the size: here only the pipeline, whose
/// chunks each pay the hosts' fixed costs, crosses, at 4 GiB (512 iterations within the
/// budget), and GPUDirect, moving the message whole, does not.
#[test]
fn the_horizon_error_names_the_point_that_crosses_it() {
    assert_edit_rejected_all(
        "horizon-point",
        &[
            ("iterations = 60 ", "iterations = 100000 "),
            (
                "iteration_budget_bytes = \"512MiB\"",
                "iteration_budget_bytes = \"2TiB\"",
            ),
            (
                "sizes = { from = \"1B\", to = \"1GiB\", factor = 2 }",
                "sizes = [\"4KiB\", \"4GiB\"]",
            ),
            (
                "paths = [\"host\", \"staged\", \"gpudirect\"]",
                "paths = [\"gpudirect\", \"staged_pipelined\"]",
            ),
        ],
        &[
            "key `sim.iterations`",
            "horizon of 53.4 days",
            "scenario `PIX`, path staged_pipelined, 4 GiB messages",
            "512 messages x 1 flow x",
        ],
    );
}

/// Issue #13, item 2: `granularity = "tlp"` with a 16 GiB message exhausted memory; TLP by TLP
/// is bounded to 16 MiB messages, refused above before any work.
#[test]
fn bad_input_tlp_granularity_for_large_messages() {
    assert_edit_rejected_all(
        "tlp-large",
        &[
            ("granularity = \"auto\"", "granularity = \"tlp\""),
            (
                "sizes = { from = \"1B\", to = \"1GiB\", factor = 2 }",
                "sizes = [\"4KiB\", \"16GiB\"]",
            ),
        ],
        &[
            "key `sim.granularity`",
            "above 16 MiB",
            "\"tlp\" with a 16 GiB message",
        ],
    );
}

fn assert_edit_rejected_all(name: &str, edits: &[(&str, &str)], needles: &[&str]) {
    let cfg = write_config(name, &default_with(edits));
    assert_rejected(&cfg, needles);
}

/// Issue #13, item 8: a legal but implausible value (a 0.1 ns network switch) is a warning on
/// stderr naming the key and the usual range; `--strict` makes it an error (exit 2) before any
/// work; every shipped config passes `--strict`.
#[test]
fn implausible_values_warn_and_strict_refuses_them() {
    let cfg = write_config(
        "implausible",
        &default_with(&[("switch_latency_ns = 130 ", "switch_latency_ns = 0.1 ")]),
    );
    let o = gdrsim(&["check", s(&cfg)]);
    assert_ok(&o, "check with a warning");
    let err = text(&o.stderr);
    assert!(
        err.starts_with("warning: ") && err.contains("key `network.switch_latency_ns`: 0.1 ns"),
        "{err}"
    );
    for args in [
        vec!["check", s(&cfg), "--strict"],
        vec!["run", s(&cfg), "--strict", "--out", "never-written"],
    ] {
        let o = gdrsim(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(text(&o.stderr).contains("expected a plausible value"));
    }
    assert!(!root().join("never-written").exists());
    for c in fs::read_dir(root().join("configs")).unwrap() {
        let c = c.unwrap().path();
        // configs/presets/ holds machines, not configs (tests/it/presets.rs checks them).
        if c.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let o = gdrsim(&["check", "--strict", s(&c)]);
        assert_ok(&o, &format!("check --strict {}", c.display()));
        assert!(o.stderr.is_empty(), "{}: {}", c.display(), text(&o.stderr));
    }
}

/// Issue #13, item 7: every message names the key, what was expected and what was written, on
/// one line: integers beyond 64 bits, floats beyond range, an empty array for a table, a
/// duplicate key (named, with its line), a size past 16 GiB as written; `-` reads stdin.
#[test]
fn bad_input_messages_name_what_was_written() {
    for (name, edits, needles) in [
        (
            "int-128",
            vec![("iterations = 60 ", "iterations = 99999999999999999999 ")],
            vec![
                "key `sim.iterations`",
                "integer 99999999999999999999 (beyond 64 bits)",
            ],
        ),
        (
            "float-inf",
            vec![("iterations = 60 ", "iterations = 1e9999 ")],
            vec!["key `sim.iterations`", "beyond the range of a 64-bit float"],
        ),
        (
            "empty-receiver",
            vec![(
                "receiver = { host = \"node-b\", nic = \"nic0\", gpu = \"gpu0\" }",
                "receiver = []",
            )],
            vec![
                "key `scenarios[0].receiver`",
                "expected a table",
                "an array of 0 values",
            ],
        ),
        (
            "dup-key",
            vec![("iterations = 60 ", "iterations = 60\niterations = 61 ")],
            vec!["line 20", "duplicate key `iterations`"],
        ),
        (
            "size-17g",
            vec![(
                "sizes = { from = \"1B\", to = \"1GiB\", factor = 2 }",
                "sizes = [\"17GiB\"]",
            )],
            vec!["key `sweep.sizes`", "found 17 GiB (18253611008 bytes)"],
        ),
    ] {
        let cfg = write_config(name, &default_with(&edits));
        assert_rejected(&cfg, &needles);
    }
    let o = Command::new(BIN)
        .args(["check", "-"])
        .current_dir(root())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write as _;
            c.stdin
                .take()
                .unwrap()
                .write_all(default_toml().as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert_ok(&o, "check - (stdin)");
    assert!(text(&o.stdout).starts_with("-: ok"));
}

// ---- leaf-spine fabrics: each key whose numbers do not add up is named -----------------------

#[test]
fn bad_input_oversubscription_leaving_no_uplink() {
    // One host of one NIC a leaf: 1 port at 2:1 is half an uplink.
    assert_edit_rejected(
        "ls-no-uplink",
        "switch_hops = 1\n",
        "fabric = \"leaf-spine\"\nhosts_per_leaf = 1\noversubscription = 2\n",
        &[
            "key `network.oversubscription`",
            "a whole number of uplinks, at least one",
            "found 2:1",
        ],
    );
}

#[test]
fn bad_input_leaf_ports_beyond_its_radix() {
    // Two hosts of one NIC a leaf, non-blocking: 2 host ports + 2 uplinks on a 3-port leaf.
    assert_edit_rejected(
        "ls-radix",
        "switch_hops = 1\n",
        "fabric = \"leaf-spine\"\nhosts_per_leaf = 2\nleaf_radix = 3\n",
        &[
            "key `network.leaf_radix`",
            "2 host ports (hosts node-a..node-b) + 2 uplinks = 4 ports",
            "found 3",
        ],
    );
}

#[test]
fn bad_input_oversubscription_not_a_ratio() {
    assert_edit_rejected(
        "ls-ratio",
        "switch_hops = 1\n",
        "fabric = \"leaf-spine\"\noversubscription = \"2:0\"\n",
        &[
            "key `network.oversubscription`",
            "an integer or a ratio \"num:den\"",
            "found \"2:0\"",
        ],
    );
}

#[test]
fn bad_input_leaf_spine_key_without_the_fabric() {
    assert_edit_rejected(
        "ls-no-fabric",
        "switch_hops = 1\n",
        "switch_hops = 1\nspines = 4\n",
        &[
            "key `network.spines`",
            "fabric = \"leaf-spine\" for a leaf-spine key",
            "found fabric = \"single-switch\"",
        ],
    );
}

#[test]
fn bad_input_switch_hops_in_a_leaf_spine_fabric() {
    assert_edit_rejected(
        "ls-hops",
        "switch_hops = 1\n",
        "switch_hops = 1\nfabric = \"leaf-spine\"\n",
        &[
            "key `network.switch_hops`",
            "no switch_hops with fabric = \"leaf-spine\"",
            "found 1",
        ],
    );
}

/// A rail-optimized fabric whose units do not divide the hosts (the default config's two):
/// exit 2 naming the key, what it must divide and the value found.
#[test]
fn bad_input_rail_units_that_do_not_divide_the_hosts() {
    assert_edit_rejected(
        "rail-units",
        "switch_hops = 1\n",
        "fabric = \"rail-optimized\"\nhosts_per_unit = 3\n",
        &[
            "key `network.hosts_per_unit`",
            "divides the study's 2 hosts into whole scalable units",
            "found 3",
        ],
    );
    assert_edit_rejected(
        "rail-unit-count",
        "switch_hops = 1\n",
        "fabric = \"rail-optimized\"\nhosts_per_unit = 1\nunits = 4\n",
        &[
            "key `network.units`",
            "expected 2 (the study's 2 hosts",
            "found 4",
        ],
    );
}

/// Issue #23: spines and cores beyond their radix are refused by the binary (exit 2) naming
/// the key. The default config's two hosts, one a leaf, each leaf's uplinks doubled (1:2).
#[test]
fn bad_input_switch_ports_beyond_their_radix() {
    let ls =
        "fabric = \"leaf-spine\"\nhosts_per_leaf = 1\nspines = 1\noversubscription = \"1:2\"\n";
    assert_edit_rejected(
        "ls-spine-radix",
        "switch_hops = 1\n",
        &format!("{ls}spine_radix = 3\n"),
        &["key `network.spine_radix`", "spine0's", "found 3"],
    );
    let ft = "fabric = \"fat-tree\"\nhosts_per_leaf = 1\npods = 2\nspines_per_pod = 1\ncores = 1\n\
              oversubscription = \"1:2\"\n";
    assert_edit_rejected(
        "ft-spine-radix",
        "switch_hops = 1\n",
        &format!("{ft}spine_radix = 3\n"),
        &["key `network.spine_radix`", "pod0.spine0's", "found 3"],
    );
    assert_edit_rejected(
        "ft-core-radix",
        "switch_hops = 1\n",
        &format!("{ft}core_radix = 3\n"),
        &["key `network.core_radix`", "core0's", "found 3"],
    );
    assert_edit_rejected(
        "ft-pods",
        "switch_hops = 1\n",
        "fabric = \"fat-tree\"\nhosts_per_leaf = 1\npods = 3\n",
        &["key `network.pods`", "into whole pods", "found 3"],
    );
}

#[test]
fn bad_input_unknown_fabric() {
    assert_edit_rejected(
        "ls-dragonfly",
        "switch_hops = 1\n",
        "fabric = \"dragonfly\"\n",
        &[
            "key `network.fabric`",
            "single-switch, leaf-spine, rail-optimized, fat-tree",
            "dragonfly",
        ],
    );
}

#[test]
fn bad_input_host_array_of_no_hosts() {
    assert_edit_rejected(
        "hosts-count",
        "name = \"node-b\"\n",
        "name = \"node-b\"\ncount = 0\n",
        &[
            "key `hosts[1].count`",
            "a number of hosts from 1 to 100000",
            "found integer 0",
        ],
    );
}

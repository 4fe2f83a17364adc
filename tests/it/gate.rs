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

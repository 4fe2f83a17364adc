//! Which rows of the studies are the same point, and when studies cannot be compared.
//!
//! A comparison is per message size, so the studies must have swept the same sizes and the
//! same operations: anything else is a mismatched sweep, refused. Rows are then matched on
//! (scenario, path, op, size) where a scenario name is in every study (machine A's `PIX`
//! against machine B's `PIX`); where none is and every study has a single scenario (two
//! imported machines naming their one placement differently), on (path, op, size). Paths,
//! scenarios and sizes that not every study has are left out and listed, never guessed at.

use crate::config::{ConfigError, Op, PathKind};
use crate::stats::Summary;
use crate::units::fmt_bytes;

use super::study::Study;

/// What rows were matched on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum On {
    /// (scenario, path, op, size): a scenario name is in every study.
    Scenario,
    /// (path, op, size): no scenario name is in every study, and each has one scenario.
    Path,
}

impl On {
    /// compare.csv's `matched_on` word.
    pub fn name(self) -> &'static str {
        match self {
            On::Scenario => "scenario",
            On::Path => "path",
        }
    }
}

/// One point every study ran: its key and each study's row, in study order.
#[derive(Clone, Debug)]
pub struct Point<'a> {
    /// The scenario: its name, or (matched on path) the studies' names joined by " vs ".
    pub scenario: String,
    /// The path asked for.
    pub path: PathKind,
    /// The RDMA operation.
    pub op: Op,
    /// The message size, bytes.
    pub size: u64,
    /// Each study's row, in the studies' order (the first is the baseline).
    pub rows: Vec<&'a Summary>,
}

/// The matched points, in the baseline's row order, and what was left out.
#[derive(Clone, Debug)]
pub struct Matching<'a> {
    /// What the rows were matched on.
    pub on: On,
    /// Every point each study ran, in the baseline's row order.
    pub points: Vec<Point<'a>>,
    /// Per study (label, its series that matched nothing, as "PIX gdrcopy write_imm"), for
    /// studies that have any.
    pub left_out: Vec<(String, Vec<String>)>,
}

/// Matches the studies' rows, or refuses studies that cannot be compared: different sizes or
/// ops, a point twice in one study, no scenario to pair, or no (scenario, path, op) in common.
/// The first study is the baseline every other is checked against.
pub fn match_rows(studies: &[Study]) -> Result<Matching<'_>, ConfigError> {
    let base = &studies[0];
    for s in studies {
        unique(s)?;
    }
    for s in &studies[1..] {
        same_sweep(base, s)?;
    }
    let on = pairing(studies)?;
    let key = |r: &Summary| {
        let sc = if on == On::Scenario {
            r.scenario.as_str()
        } else {
            ""
        };
        (sc.to_string(), r.path, r.op, r.size_bytes)
    };
    let mut points = Vec::new();
    for r in &base.rows {
        let k = key(r);
        let rows: Option<Vec<&Summary>> = studies
            .iter()
            .map(|s| s.rows.iter().find(|x| key(x) == k))
            .collect();
        let Some(rows) = rows else { continue };
        let mut names: Vec<&str> = Vec::new();
        for x in &rows {
            if !names.contains(&x.scenario.as_str()) {
                names.push(&x.scenario);
            }
        }
        points.push(Point {
            scenario: names.join(" vs "),
            path: r.path,
            op: r.op,
            size: r.size_bytes,
            rows,
        });
    }
    if points.is_empty() {
        return Err(nothing_in_common(studies, on));
    }
    let left_out = studies
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let matched = |r: &Summary| points.iter().any(|p| std::ptr::eq(p.rows[i], r));
            let names = left_out_of(s, matched);
            (!names.is_empty()).then(|| (s.label.clone(), names))
        })
        .collect();
    Ok(Matching {
        on,
        points,
        left_out,
    })
}

/// What of `s` matched nothing: "scenario SYS" where none of a scenario's rows matched, else
/// its series ("PIX gdrcopy write_imm") with a row that did not.
fn left_out_of(s: &Study, matched: impl Fn(&Summary) -> bool) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for sc in distinct(&s.rows, |r| r.scenario.clone()) {
        let rows: Vec<&Summary> = s.rows.iter().filter(|r| r.scenario == sc).collect();
        let missed: Vec<&Summary> = rows.iter().copied().filter(|r| !matched(r)).collect();
        if missed.len() == rows.len() {
            names.push(format!("scenario {sc}"));
            continue;
        }
        for r in missed {
            let name = series_name(r);
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// "PIX gpudirect write_imm": a row's series.
fn series_name(r: &Summary) -> String {
    format!("{} {} {}", r.scenario, r.path.name(), r.op.name())
}

/// A study's problem, named by its folder.
fn refuse(s: &Study, expected: impl Into<String>, found: impl Into<String>) -> ConfigError {
    ConfigError::new(&s.dir.display().to_string(), "", expected, found)
}

/// Each (scenario, path, op, size) at most once in a study (results.csv of one run has it so).
fn unique(s: &Study) -> Result<(), ConfigError> {
    for (i, r) in s.rows.iter().enumerate() {
        let twice = s.rows[..i].iter().any(|x| {
            (&x.scenario, x.path, x.op, x.size_bytes) == (&r.scenario, r.path, r.op, r.size_bytes)
        });
        if twice {
            return Err(refuse(
                s,
                "a results.csv with one row per (scenario, path, op, size), as `gdrsim run` \
                 writes it",
                format!(
                    "two rows of {} at {}",
                    series_name(r),
                    fmt_bytes(r.size_bytes)
                ),
            ));
        }
    }
    Ok(())
}

/// The distinct values of `f` over the rows, in order of first appearance.
fn distinct<T: PartialEq>(rows: &[Summary], f: impl Fn(&Summary) -> T) -> Vec<T> {
    let mut out = Vec::new();
    for r in rows {
        let v = f(r);
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// The swept sizes, ascending.
fn sizes(s: &Study) -> Vec<u64> {
    let mut z = distinct(&s.rows, |r| r.size_bytes);
    z.sort_unstable();
    z
}

/// "8 B, 4 KiB, 1 MiB", or "28 sizes from 1 B to 1 GiB" for a long list.
fn sizes_text(z: &[u64]) -> String {
    match z {
        [] => "no sizes".into(),
        _ if z.len() <= 6 => z
            .iter()
            .map(|&b| fmt_bytes(b))
            .collect::<Vec<_>>()
            .join(", "),
        _ => format!(
            "{} sizes from {} to {}",
            z.len(),
            fmt_bytes(z[0]),
            fmt_bytes(z[z.len() - 1])
        ),
    }
}

/// At most four items, then "and N more".
fn some<T: AsRef<str>>(items: &[T]) -> String {
    let shown: Vec<&str> = items.iter().take(4).map(|s| s.as_ref()).collect();
    match items.len() {
        n if n > 4 => format!("{} and {} more", shown.join(", "), n - 4),
        _ => shown.join(", "),
    }
}

/// Refuses `s` where its sizes or ops are not the baseline's.
fn same_sweep(base: &Study, s: &Study) -> Result<(), ConfigError> {
    let (zb, zs) = (sizes(base), sizes(s));
    if zb != zs {
        let extra: Vec<String> = zs
            .iter()
            .filter(|z| !zb.contains(z))
            .map(|&z| fmt_bytes(z))
            .collect();
        let missing: Vec<String> = zb
            .iter()
            .filter(|z| !zs.contains(z))
            .map(|&z| fmt_bytes(z))
            .collect();
        let mut diff = Vec::new();
        if !extra.is_empty() {
            diff.push(format!("{} not in {}", some(&extra), base.label));
        }
        if !missing.is_empty() {
            diff.push(format!("{} missing", some(&missing)));
        }
        return Err(refuse(
            s,
            format!(
                "the message sizes of {} ({}: {}), as a comparison is size by size (a \
                 mismatched sweep: run both with one `[sweep] sizes`)",
                base.label,
                base.dir.display(),
                sizes_text(&zb)
            ),
            format!("{} ({})", sizes_text(&zs), diff.join("; ")),
        ));
    }
    let ops = |x: &Study| {
        let mut o: Vec<&str> = distinct(&x.rows, |r| r.op.name());
        o.sort_unstable();
        o
    };
    let (ob, os) = (ops(base), ops(s));
    if ob != os {
        return Err(refuse(
            s,
            format!(
                "the operations of {} ({}: {}) (a mismatched sweep: run both with one \
                 `[sweep] ops`)",
                base.label,
                base.dir.display(),
                ob.join(", ")
            ),
            os.join(", "),
        ));
    }
    Ok(())
}

/// What to match on: scenario names where one is in every study, else the path where every
/// study has one scenario; refused otherwise, naming the first study that shares no scenario
/// with those before it.
fn pairing(studies: &[Study]) -> Result<On, ConfigError> {
    let names = |s: &Study| distinct(&s.rows, |r| r.scenario.clone());
    let mut common = names(&studies[0]);
    for s in &studies[1..] {
        let mine = names(s);
        common.retain(|n| mine.contains(n));
    }
    if !common.is_empty() {
        return Ok(On::Scenario);
    }
    if studies.iter().all(|s| names(s).len() == 1) {
        return Ok(On::Path);
    }
    let mut seen = names(&studies[0]);
    for (i, s) in studies.iter().enumerate().skip(1) {
        let mine = names(s);
        seen.retain(|n| mine.contains(n));
        if seen.is_empty() {
            let before: Vec<&str> = studies[..i].iter().map(|x| x.label.as_str()).collect();
            return Err(refuse(
                s,
                format!(
                    "a scenario named as in {} ({}), to match rows on (scenario, path, op, \
                     size); or a single scenario in every study, to match them on (path, op, \
                     size)",
                    before.join(" and "),
                    some(&names(&studies[0]))
                ),
                format!("scenarios {}", some(&mine)),
            ));
        }
    }
    unreachable!("no scenario in common implies a study that shares none with those before it")
}

/// Why no point matched: the first study with no (scenario, path, op) of the baseline.
fn nothing_in_common(studies: &[Study], on: On) -> ConfigError {
    let series = |s: &Study| {
        distinct(&s.rows, |r| match on {
            On::Scenario => series_name(r),
            On::Path => format!("{} {}", r.path.name(), r.op.name()),
        })
    };
    let base = series(&studies[0]);
    let s = studies[1..]
        .iter()
        .find(|s| !series(s).iter().any(|x| base.contains(x)))
        .unwrap_or(&studies[studies.len() - 1]);
    let what = match on {
        On::Scenario => "(scenario, path, op)",
        On::Path => "(path, op)",
    };
    refuse(
        s,
        format!(
            "a {what} in common with {} ({}: {})",
            studies[0].label,
            studies[0].dir.display(),
            some(&base)
        ),
        format!("only {}", some(&series(s))),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::charts::testdata;
    use std::path::PathBuf;

    fn study(
        label: &str,
        scenarios: &[(&str, &str, f64, f64)],
        paths: &[&str],
        sizes: &[u64],
    ) -> Study {
        Study {
            dir: PathBuf::from(format!("out/{label}")),
            name: label.into(),
            label: label.into(),
            rows: testdata::rows(scenarios, paths, sizes),
            info: None,
        }
    }

    const PIX: (&str, &str, f64, f64) = testdata::SCENARIOS[0];
    const SYS: (&str, &str, f64, f64) = testdata::SCENARIOS[2];

    #[test]
    fn rows_match_on_scenario_and_what_only_one_has_is_left_out() {
        let a = study(
            "a",
            &[PIX, SYS],
            &["host", "staged", "gpudirect"],
            &[8, 4096],
        );
        let b = study("b", &[PIX], &["staged", "gpudirect"], &[8, 4096]);
        let studies = [a, b];
        let m = match_rows(&studies).unwrap();
        assert_eq!(m.on, On::Scenario);
        let keys: Vec<(&str, &str, u64)> = m
            .points
            .iter()
            .map(|p| (p.scenario.as_str(), p.path.name(), p.size))
            .collect();
        assert_eq!(
            keys,
            [
                ("PIX", "staged", 8),
                ("PIX", "staged", 4096),
                ("PIX", "gpudirect", 8),
                ("PIX", "gpudirect", 4096)
            ]
        );
        for p in &m.points {
            assert_eq!(p.rows.len(), 2);
            assert!(
                p.rows
                    .iter()
                    .all(|r| r.scenario == "PIX" && r.path == p.path)
            );
        }
        assert_eq!(m.left_out.len(), 1);
        assert_eq!(m.left_out[0].0, "a");
        assert_eq!(m.left_out[0].1, ["PIX host write_imm", "scenario SYS"]);
    }

    #[test]
    fn single_scenarios_of_different_names_match_on_path() {
        let a = study("a", &[PIX], &["gpudirect"], &[8, 4096]);
        let b = study("b", &[SYS], &["staged", "gpudirect"], &[8, 4096]);
        let studies = [a, b];
        let m = match_rows(&studies).unwrap();
        assert_eq!(m.on, On::Path);
        assert_eq!(m.points.len(), 2);
        assert_eq!(m.points[0].scenario, "PIX vs SYS");
        assert_eq!(m.points[0].rows[1].scenario, "SYS");
    }

    #[test]
    fn mismatched_sweeps_are_refused_naming_the_folder_and_the_difference() {
        let all = ["staged", "gpudirect"];
        let a = study("a", &[PIX], &all, &[8, 4096, 1 << 20]);
        let cases: [(Study, &[&str]); 4] = [
            (
                study("b", &[PIX], &all, &[8, 65536, 1 << 20]),
                &[
                    "out/b: expected the message sizes of a",
                    "8 B, 4 KiB, 1 MiB",
                    "64 KiB not in a; 4 KiB missing",
                ],
            ),
            (
                study("b", &[SYS, PIX], &all, &[8, 4096, 1 << 20]).with_scenarios(&["X", "Y"]),
                &[
                    "out/b: expected a scenario named as in a (PIX)",
                    "found scenarios X, Y",
                ],
            ),
            (
                study("b", &[PIX], &["host"], &[8, 4096, 1 << 20]),
                &[
                    "expected a (scenario, path, op) in common with a",
                    "only PIX host write_imm",
                ],
            ),
            (
                study("b", &[PIX], &all, &[8, 4096, 1 << 20]).with_op(Op::Read),
                &["expected the operations of a", "write_imm", "found read"],
            ),
        ];
        for (b, needles) in cases {
            let studies = [a.clone(), b];
            let e = match_rows(&studies).unwrap_err().to_string();
            for n in needles {
                assert!(e.contains(n), "no {n:?} in {e}");
            }
        }
        let mut twice = a.clone();
        twice.rows.push(twice.rows[0].clone());
        let e = match_rows(&[twice, a]).unwrap_err().to_string();
        assert!(e.contains("two rows of PIX staged write_imm at 8 B"), "{e}");
    }

    impl Study {
        fn with_scenarios(mut self, names: &[&str]) -> Study {
            let old: Vec<String> = distinct(&self.rows, |r| r.scenario.clone());
            for r in &mut self.rows {
                let i = old.iter().position(|n| *n == r.scenario).unwrap();
                r.scenario = names[i].into();
            }
            self
        }

        fn with_op(mut self, op: Op) -> Study {
            for r in &mut self.rows {
                r.op = op;
            }
            self
        }
    }
}

//! The decision table at the top of report.md: per scenario (a machine and a placement), which
//! GPU data path wins each size band for latency and for bandwidth, by how much, and what binds
//! the winner, in one line per scenario.
//!
//! Everything in it comes from the result rows: the p50 latencies and their 95 % confidence
//! half-widths, the streaming bandwidths, the critical-path stages and the streaming run's
//! bottleneck. A size whose margin is within the noise, or whose bandwidth points are not at
//! steady state, is a tie: the table never invents a winner.

use std::fmt::Write as _;

use crate::config::PathKind;
use crate::report::charts::data::{Model, Series, TIE, sig3};
use crate::report::markdown::md_inline;
use crate::report::vocab::{display, scenario_label};
use crate::stats::Summary;
use crate::units::fmt_bytes;

/// The size bands, as a reviewer groups message sizes: small messages (latency-bound, eager
/// protocols, up to one 4 KiB page), medium ones (up to 1 MiB, where libraries switch to
/// rendezvous and pipelining) and large ones (bandwidth-bound). (label, above, up to and
/// including): a size belongs to a band when `above < size <= upto`.
pub const BANDS: [(&str, u64, u64); 3] = [
    ("small ≤ 4 KiB", 0, 4 << 10),
    ("medium ≤ 1 MiB", 4 << 10, 1 << 20),
    ("large > 1 MiB", 1 << 20, u64::MAX),
];

/// Two bandwidths within this fraction of each other are a tie: between seeds, streams of
/// 1-8 KiB messages vary by about 4 %, and the rows carry no per-point bandwidth interval.
pub const BW_NOISE: f64 = 0.05;

/// Which figure of merit a cell decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fig {
    Latency,
    Bandwidth,
}

/// What one swept size says.
#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    /// `who` (the winning path, with any path that ran the same way) beats the best other path
    /// by the factor `margin` (> 1); `binds` names what limits the winner.
    Win {
        who: String,
        margin: f64,
        binds: String,
    },
    /// Within the noise; `unsteady` when a bandwidth point was not at steady state.
    Tie { unsteady: bool },
    /// Every path ran the same way (e.g. GPUDirect fell back to staging): nothing to choose.
    Alike { ran: String },
}

/// Consecutive sizes of a band with the same outcome.
struct Run {
    from: u64,
    outcome: Outcome,
    lo: f64,
    hi: f64,
    /// A winner's run that holds ties between its wins ("GPUDirect ... or tie").
    ties: bool,
}

/// Writes the "Decision" section: one table row per scenario (and op when the run has several).
pub fn decision(out: &mut String, m: &Model) {
    let bands: Vec<&(&str, u64, u64)> = BANDS
        .iter()
        .filter(|&&(_, lo, hi)| m.sizes.iter().any(|&z| in_band(z, lo, hi)))
        .collect();
    let mut lines = Vec::new();
    for (si, sc) in m.scenarios.iter().enumerate() {
        for (oi, op) in m.ops.iter().enumerate() {
            let cands: Vec<&Series> = m
                .series
                .iter()
                .filter(|s| s.scenario == si && s.op == oi && m.paths[s.path] != PathKind::Host)
                .collect();
            if cands.is_empty() {
                continue;
            }
            let mut name = scenario_label(&sc.name, sc.class);
            if m.multi_op() {
                name = format!("{name}, {op}");
            }
            let mut cells = vec![md_inline(&name)];
            for fig in [Fig::Latency, Fig::Bandwidth] {
                for &&(_, lo, hi) in &bands {
                    cells.push(md_inline(&cell(m, &cands, fig, lo, hi)));
                }
            }
            lines.push(format!("| {} |", cells.join(" | ")));
        }
    }
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(out, "## Decision\n");
    let mut head = vec!["Scenario".to_string()];
    for fig in ["Latency", "Bandwidth"] {
        for (label, _, _) in &bands {
            head.push(format!("{fig}, {label}"));
        }
    }
    let _ = writeln!(out, "| {} |", head.join(" | "));
    let _ = writeln!(out, "|---|{}|", vec!["---"; head.len() - 1].join("|"));
    for l in lines {
        let _ = writeln!(out, "{l}");
    }
    let _ = writeln!(
        out,
        "\nEach cell: the GPU data path that wins the band, its margin over the best other path \
         (the range over the band's swept sizes: the other's p50 over the winner's for latency, the \
         winner's bandwidth over the other's), and in brackets what binds the winner at the largest \
         size it wins: its stage with the largest share of the critical path (latency) or the \
         streaming run's bottleneck (bandwidth). \"from X\": the winner changes at swept size X; \
         \"or tie\": some sizes between its wins are ties. \
         **tie**: within the noise (latencies within the sum of both 95 % confidence half-widths or \
         {}%, bandwidths within {}%); \"not steady\": a bandwidth whose streaming run was too short \
         for steady state (its average more than {}% below the delivery rate of its middle half: \
         results.csv's `steady` column), kept out of the conclusions. \"all ran as X\": every path ran the same way (a fallback). `host` (no GPU) \
         is not a contender.\n",
        sig3(TIE * 100.0),
        sig3(BW_NOISE * 100.0),
        sig3(BW_NOISE * 100.0),
    );
}

/// One cell: the runs of outcomes over the band's sizes.
fn cell(m: &Model, cands: &[&Series], fig: Fig, lo: u64, hi: u64) -> String {
    if cands.len() < 2 {
        return format!("only {}", display(m.paths[cands[0].path]));
    }
    let mut runs: Vec<Run> = Vec::new();
    for &z in m.sizes.iter().filter(|&&z| in_band(z, lo, hi)) {
        let Some(o) = outcome(m, cands, fig, z) else {
            continue;
        };
        let margin = match &o {
            Outcome::Win { margin, .. } => *margin,
            _ => 1.0,
        };
        match runs.last_mut() {
            Some(r) if same(&r.outcome, &o) => {
                r.lo = r.lo.min(margin);
                r.hi = r.hi.max(margin);
                // What binds: at the largest size of the run.
                r.outcome = merge(&r.outcome, o);
            }
            _ => runs.push(Run {
                from: z,
                outcome: o,
                lo: margin,
                hi: margin,
                ties: false,
            }),
        }
    }
    // A tie between two wins of the same path does not change the winner: "W or tie".
    let mut i = 1;
    while i + 1 < runs.len() {
        let sandwiched = runs[i].outcome == Outcome::Tie { unsteady: false }
            && matches!(runs[i - 1].outcome, Outcome::Win { .. })
            && same(&runs[i - 1].outcome, &runs[i + 1].outcome);
        if sandwiched {
            let next = runs.remove(i + 1);
            runs.remove(i);
            let prev = &mut runs[i - 1];
            prev.lo = prev.lo.min(next.lo);
            prev.hi = prev.hi.max(next.hi);
            prev.outcome = merge(&prev.outcome, next.outcome);
            prev.ties = true;
        } else {
            i += 1;
        }
    }
    if runs.is_empty() {
        return "–".into();
    }
    let parts: Vec<String> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let from = if i == 0 {
                String::new()
            } else {
                format!(" from {}", fmt_bytes(r.from))
            };
            match &r.outcome {
                Outcome::Win { who, binds, .. } => {
                    let range = if sig3(r.lo) == sig3(r.hi) {
                        format!("{}×", sig3(r.lo))
                    } else {
                        format!("{}–{}×", sig3(r.lo), sig3(r.hi))
                    };
                    let binds = if binds.is_empty() {
                        String::new()
                    } else {
                        format!(" ({binds})")
                    };
                    let ties = if r.ties { " or tie" } else { "" };
                    format!("{who}{from} {range}{ties}{binds}")
                }
                Outcome::Alike { ran } => format!("all ran as {ran}{from}"),
                Outcome::Tie { unsteady } => {
                    let what = if *unsteady { "tie (not steady)" } else { "tie" };
                    format!("{what}{from}")
                }
            }
        })
        .collect();
    parts.join("; ")
}

/// Whether two outcomes belong to one run: the same winner, or both ties of the same kind.
fn same(a: &Outcome, b: &Outcome) -> bool {
    match (a, b) {
        (Outcome::Win { who: x, .. }, Outcome::Win { who: y, .. }) => x == y,
        (Outcome::Tie { unsteady: x }, Outcome::Tie { unsteady: y }) => x == y,
        (Outcome::Alike { ran: x }, Outcome::Alike { ran: y }) => x == y,
        _ => false,
    }
}

/// The later of two outcomes of one run, keeping what binds unless the later one names nothing.
fn merge(a: &Outcome, b: Outcome) -> Outcome {
    match (a, b) {
        (Outcome::Win { binds: old, .. }, Outcome::Win { who, margin, binds }) => Outcome::Win {
            who,
            margin,
            binds: if binds.is_empty() { old.clone() } else { binds },
        },
        (_, b) => b,
    }
}

/// The outcome at size `z`, or None where fewer than two paths ran it.
fn outcome(m: &Model, cands: &[&Series], fig: Fig, z: u64) -> Option<Outcome> {
    let mut at: Vec<(&Series, &Summary)> = cands
        .iter()
        .filter_map(|s| s.at(z).map(|r| (*s, r)))
        .collect();
    if at.len() < 2 {
        return None;
    }
    match fig {
        Fig::Latency => at.sort_by(|a, b| a.1.lat.p50_us.total_cmp(&b.1.lat.p50_us)),
        Fig::Bandwidth => at.sort_by(|a, b| b.1.bw_gbps.total_cmp(&a.1.bw_gbps)),
    }
    let (ws, w) = at[0];
    // Paths that ran the same way as the winner (auto choosing GPUDirect, a fallback) share
    // its win; the comparison is with the best path that ran differently.
    let mut who: Vec<usize> = vec![ws.path];
    let mut other = None;
    for &(s, r) in &at[1..] {
        if r.effective_path == w.effective_path {
            who.push(s.path);
        } else {
            other = Some((s, r));
            break;
        }
    }
    let Some((os, o)) = other else {
        return Some(Outcome::Alike {
            ran: w.effective_path.name().to_string(),
        });
    };
    // In the report's path order, so that the same group is always named alike.
    who.sort_unstable();
    let who = who
        .iter()
        .map(|&p| display(m.paths[p]))
        .collect::<Vec<_>>()
        .join("/");
    match fig {
        Fig::Latency => {
            let Some(margin) = latency_margin(w, o) else {
                return Some(Outcome::Tie { unsteady: false });
            };
            let binds = w
                .stages
                .iter()
                .max_by_key(|st| st.critical_ps)
                .map(|st| st.stage.name().to_string())
                .unwrap_or_default();
            Some(Outcome::Win { who, margin, binds })
        }
        Fig::Bandwidth => {
            if !steady(ws, z) || !steady(os, z) {
                return Some(Outcome::Tie { unsteady: true });
            }
            let Some(margin) = bandwidth_margin(w.bw_gbps, o.bw_gbps) else {
                return Some(Outcome::Tie { unsteady: false });
            };
            Some(Outcome::Win {
                who,
                margin,
                binds: w.bottleneck.to_string(),
            })
        }
    }
}

/// Whether the series' bandwidth at `z` is at steady state: the simulation's own flag
/// (`Summary::steady`: its streaming run's average within 5 % of the rate of its middle half).
pub fn steady(s: &Series, z: u64) -> bool {
    s.at(z).is_none_or(|r| r.steady)
}

/// By how much latency `w` beats `o` (o's p50 over w's) where it does beyond the noise: by more
/// than both 95 % half-widths together and by more than [`TIE`]; None for a tie.
pub fn latency_margin(w: &Summary, o: &Summary) -> Option<f64> {
    let (a, b) = (w.lat.p50_us, o.lat.p50_us);
    let margin = b / a;
    let noise = w.lat.ci95_us.max(0.0) + o.lat.ci95_us.max(0.0);
    (a > 0.0 && margin.is_finite() && b - a > noise && margin > 1.0 + TIE).then_some(margin)
}

/// By how much bandwidth `w` beats `o` (their ratio) where it does by more than [`BW_NOISE`];
/// None for a tie.
pub fn bandwidth_margin(w: f64, o: f64) -> Option<f64> {
    let margin = w / o;
    (o > 0.0 && margin.is_finite() && margin > 1.0 + BW_NOISE).then_some(margin)
}

/// Whether size `z` falls in the band `(lo, hi]`.
fn in_band(z: u64, lo: u64, hi: u64) -> bool {
    lo < z && z <= hi
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bottleneck::Bottleneck;
    use crate::report::charts::testdata;

    /// Rows of staged and GPUDirect on one scenario at `sizes`, with their p50 latency (µs),
    /// its 95 % half-width and bandwidth (GB/s) set by `f(path, size)`.
    fn rows_of(
        name: &str,
        sizes: &[u64],
        f: impl Fn(&str, u64) -> (f64, f64, f64),
    ) -> Vec<Summary> {
        let sc = (name, "SYS", 7.0, 49.3);
        let mut out = Vec::new();
        for p in ["host", "staged", "gpudirect"] {
            for &z in sizes {
                let mut r = testdata::row(sc, p, z);
                let (p50, ci, bw) = f(p, z);
                r.lat.p50_us = p50;
                r.lat.ci95_us = ci;
                r.bw_gbps = bw;
                r.bottleneck = Bottleneck::Channel(format!("{p}-bound"));
                out.push(r);
            }
        }
        out
    }

    fn table(info: &crate::report::RunInfo, rows: &[Summary]) -> String {
        let m = Model::new(info, rows);
        let mut out = String::new();
        decision(&mut out, &m);
        out
    }

    fn table_rows(md: &str) -> Vec<Vec<String>> {
        md.lines()
            .filter(|l| l.starts_with('|'))
            .skip(2)
            .map(|l| {
                l.trim_matches('|')
                    .split(" | ")
                    .map(|c| c.trim().to_string())
                    .collect()
            })
            .collect()
    }

    const SIZES: [u64; 9] = [
        64,
        1 << 10,
        4 << 10,
        16 << 10,
        64 << 10,
        128 << 10,
        1 << 20,
        16 << 20,
        1 << 30,
    ];

    #[test]
    fn a_winner_that_flips_inside_a_band_is_named_from_its_first_size() {
        // GPUDirect wins latency up to 64 KiB and loses from 128 KiB; bandwidth likewise.
        let rows = rows_of("SYS", &SIZES, |p, z| {
            let gd_wins = z <= 64 << 10;
            let (fast, slow) = (2.0 + z as f64 / 1e4, 4.0 + z as f64 / 1e4 * 1.5);
            let lat = match (p, gd_wins) {
                ("gpudirect", true) | ("staged", false) => fast,
                _ => slow,
            };
            // Bandwidth: GPUDirect flat at 34 GB/s, staged rising with size: GPUDirect wins up
            // to 16 KiB, a tie at 64 KiB (3 %), staged from 128 KiB.
            let bw = match p {
                "gpudirect" => 34.0,
                _ => 2.5 * (z as f64).log2() - 5.0,
            };
            (lat, 0.01, bw)
        });
        let info = testdata::info(&[("SYS", "SYS", 7.0, 49.3)]);
        let md = table(&info, &rows);
        let t = table_rows(&md);
        assert_eq!(t.len(), 1, "{md}");
        let r = &t[0];
        assert_eq!(r.len(), 7, "{md}");
        assert!(r[1].starts_with("GPUDirect "), "{md}");
        assert!(!r[1].contains("from"), "{md}");
        assert!(r[2].starts_with("GPUDirect "), "{md}");
        assert!(r[2].contains("; staged from 128 KiB "), "{md}");
        assert!(r[3].starts_with("staged "), "{md}");
        assert!(r[4].starts_with("GPUDirect "), "{md}");
        assert!(r[5].starts_with("GPUDirect "), "{md}");
        assert!(
            r[5].contains("; tie from 64 KiB; staged from 128 KiB "),
            "{md}"
        );
        assert!(r[5].contains("(gpudirect-bound)"), "{md}");
        assert!(r[5].contains("(staged-bound)"), "{md}");
        // host is fast but moves no GPU data: never a winner.
        assert!(!md.contains("host "), "{md}");
    }

    #[test]
    fn margins_within_the_noise_and_unsteady_points_are_ties() {
        let rows = rows_of("PIX", &SIZES, |p, z| {
            // Latency: 0.2 µs apart with half-widths of 0.15 µs each: within the noise.
            let lat = if p == "gpudirect" { 3.0 } else { 3.2 };
            // Bandwidth: 3 % apart up to 1 MiB; above, staged is far behind but its streaming
            // run did not reach steady state.
            let bw = match p {
                "gpudirect" => 30.0,
                _ if z > 1 << 20 => 20.0,
                _ => 29.1,
            };
            (lat, 0.15, bw)
        });
        let rows: Vec<Summary> = rows
            .into_iter()
            .map(|mut r| {
                r.steady = !(r.path == PathKind::Staged && r.size_bytes > 1 << 20);
                r
            })
            .collect();
        let info = testdata::info(&[("PIX", "PIX", 7.0, 49.3)]);
        let md = table(&info, &rows);
        let r = &table_rows(&md)[0];
        for c in &r[1..6] {
            assert_eq!(c, "tie", "{md}");
        }
        assert_eq!(r[6], "tie (not steady)", "{md}");
    }

    /// The flag decides, not the figures: a bandwidth well below a smaller size's that the
    /// simulation found steady (a real fall, e.g. a cache or window limit) is a result.
    #[test]
    fn a_steady_fall_with_size_is_a_result() {
        let sizes = [1 << 20, 16 << 20];
        let rows = rows_of("PIX", &sizes, |p, z| {
            let bw = match (p, z) {
                ("gpudirect", _) => 30.0,
                (_, z) if z > 1 << 20 => 15.0,
                _ => 29.5,
            };
            (if p == "gpudirect" { 5.0 } else { 9.0 }, 0.01, bw)
        });
        let info = testdata::info(&[("PIX", "PIX", 7.0, 49.3)]);
        let md = table(&info, &rows);
        let r = &table_rows(&md)[0];
        assert_eq!(r[4], "GPUDirect 2× (gpudirect-bound)", "{md}");
    }

    #[test]
    fn a_tie_between_wins_of_one_path_keeps_the_winner() {
        // Bandwidth in the large band: GPUDirect 11 % ahead at 16 MiB and 1 GiB, 2 % at 64 MiB.
        let sizes = [16 << 20, 64 << 20, 1 << 30];
        let rows = rows_of("PIX", &sizes, |p, z| {
            let bw = match (p, z >> 20) {
                ("gpudirect", 1024) => 44.0,
                ("gpudirect", _) => 40.0,
                (_, 16) => 36.0,
                (_, 64) => 39.2,
                _ => 39.5,
            };
            (if p == "gpudirect" { 5.0 } else { 9.0 }, 0.01, bw)
        });
        let info = testdata::info(&[("PIX", "PIX", 7.0, 49.3)]);
        let md = table(&info, &rows);
        let r = &table_rows(&md)[0];
        assert_eq!(r.len(), 3, "{md}");
        assert_eq!(r[2], "GPUDirect 1.11× or tie (gpudirect-bound)", "{md}");
    }

    #[test]
    fn paths_that_all_ran_alike_are_not_called_a_tie() {
        // GPUDirect without peer-to-peer falls back to staging: nothing to choose between.
        let mut rows = rows_of("client", &SIZES, |p, _| {
            (if p == "gpudirect" { 5.1 } else { 5.0 }, 0.01, 10.0)
        });
        for r in &mut rows {
            if r.path == PathKind::GpuDirect {
                r.effective_path = crate::effective::EffectivePath::from_name("staged").unwrap();
            }
        }
        let info = testdata::info(&[("client", "PHB", 7.0, 49.3)]);
        let md = table(&info, &rows);
        let r = &table_rows(&md)[0];
        for c in &r[1..] {
            assert_eq!(c, "all ran as staged", "{md}");
        }
    }

    #[test]
    fn long_scenario_names_keep_one_line_and_every_column() {
        let names = [
            "H100 GPU0 -> NIC0 PIX (rail 0, same switch)",
            "H100 GPU4 -> NIC0 SYS across the socket link | far",
        ];
        let mut rows = Vec::new();
        for n in names {
            rows.extend(rows_of(n, &SIZES, |p, z| {
                let lat = if p == "gpudirect" { 2.0 } else { 9.0 } + z as f64 / 1e4;
                (lat, 0.01, if p == "gpudirect" { 40.0 } else { 20.0 })
            }));
        }
        let info = testdata::info(&[(names[0], "PIX", 7.0, 49.3), (names[1], "SYS", 7.0, 49.3)]);
        let md = table(&info, &rows);
        let t: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(t.len(), 4, "{md}");
        // Every line has the same number of unescaped cell separators.
        let seps = |l: &str| l.replace("\\|", "").matches('|').count();
        assert!(t.iter().all(|l| seps(l) == seps(t[0])), "{md}");
        assert!(
            t[2].contains("H100 GPU0 -> NIC0 PIX (rail 0, same switch)"),
            "{md}"
        );
        assert!(t[3].contains("across the socket link \\| far |"), "{md}");
        assert!(t[3].contains("GPUDirect 2×"), "{md}");
    }
}

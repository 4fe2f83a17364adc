//! compare.md: what was compared and how the rows were matched, an overview per series (the
//! range of each ratio over every matched size and who wins how often), a table at the key
//! sizes a reviewer can paste, the charts and the command that reproduces it.

use std::fmt::Write as _;

use crate::config::{Op, PathKind};
use crate::report::charts::data::{TIE, fmt_us, sig3};
use crate::report::decision::BW_NOISE;
use crate::report::markdown::{fmt_gbps, md_inline, table_sizes};
use crate::report::vocab::display;
use crate::units::fmt_bytes;

use super::matching::{Matching, On, Point};
use super::study::Study;
use super::verdict::{self, Best, ratio};

/// Renders compare.md; `charts` are the chart files' names in the folder (PNG first shown).
pub fn render(studies: &[Study], m: &Matching, charts: &[String], command: &str) -> String {
    let labels: Vec<&str> = studies.iter().map(|s| s.label.as_str()).collect();
    let mut out = format!(
        "# Studies compared: {}\n\n",
        md_inline(&labels.join(" vs "))
    );
    studies_table(&mut out, studies, m);
    matching_text(&mut out, studies, m);
    overview(&mut out, studies, m);
    key_sizes(&mut out, studies, m);
    let _ = writeln!(out, "## Charts\n");
    // busbw: only where the studies are collectives (its files are there only then).
    for stem in ["latency", "bandwidth", "busbw"] {
        let files: Vec<&String> = charts
            .iter()
            .filter(|c| c.starts_with(&format!("{stem}.")))
            .collect();
        if let Some(shown) = files.iter().find(|f| f.ends_with(".png")).or(files.first()) {
            let links: Vec<String> = files.iter().map(|f| format!("[{f}]({f})")).collect();
            let _ = writeln!(out, "![{stem}]({shown})\n\nFiles: {}\n", links.join(", "));
        }
    }
    let _ = writeln!(
        out,
        "Each line is one study's scenario on one path (colour: study and scenario; stroke and \
         marker: path), only at the matched points.\n"
    );
    let _ = writeln!(
        out,
        "## Reproduce\n\nEvery figure comes from the studies' results.csv; this command \
         writes this folder again from them:\n\n```sh\n{}\n```\n\nEvery matched point with each \
         study's figures and the ratios: [`compare.csv`](compare.csv).",
        command.trim()
    );
    out
}

fn studies_table(out: &mut String, studies: &[Study], m: &Matching) {
    let _ = writeln!(
        out,
        "| | Study | Hardware | Folder | Rows | Matched |\n|---|---|---|---|---|---|"
    );
    for (i, s) in studies.iter().enumerate() {
        let role = if i == 0 { "baseline" } else { "" };
        // What the study's config.toml says it ran on; "–" where that does not load.
        let hardware = (s.info.as_ref())
            .map(|i| i.hardware.trim())
            .filter(|h| !h.is_empty())
            .unwrap_or("–");
        let _ = writeln!(
            out,
            "| {role} | {} | {} | `{}` | {} | {} |",
            md_inline(&s.label),
            md_inline(hardware),
            md_inline(&s.dir.display().to_string()),
            s.rows.len(),
            m.points.len()
        );
    }
    let _ = writeln!(
        out,
        "\nRatios are each study over the baseline, {}: a latency ratio above 1 is slower than \
         the baseline, a bandwidth ratio above 1 is more bandwidth.\n",
        md_inline(&studies[0].label)
    );
}

fn matching_text(out: &mut String, studies: &[Study], m: &Matching) {
    let mut sizes: Vec<u64> = m.points.iter().map(|p| p.size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let paths = distinct(m, |p| display(p.path).to_string());
    let ops = distinct(m, |p| p.op.name().to_string());
    let what = format!(
        "{} paths ({}), op {} and {} sizes from {} to {}",
        paths.len(),
        paths.join(", "),
        ops.join(", "),
        sizes.len(),
        fmt_bytes(sizes[0]),
        fmt_bytes(sizes[sizes.len() - 1])
    );
    match m.on {
        On::Scenario => {
            let sc = distinct(m, |p| p.scenario.clone());
            let _ = writeln!(
                out,
                "Rows are matched on (scenario, path, op, size): {} points that every study ran \
                 (scenarios {}; {what}).\n",
                m.points.len(),
                md_inline(&sc.join(", "))
            );
        }
        On::Path => {
            let each: Vec<String> = studies
                .iter()
                .zip(&m.points[0].rows)
                .map(|(s, r)| format!("{}'s {}", s.label, r.scenario))
                .collect();
            let _ = writeln!(
                out,
                "**No scenario name is in every study, and each study has one scenario, so rows \
                 are matched on (path, op, size) alone: {}.** {} points ({what}).\n",
                md_inline(&each.join(" against ")),
                m.points.len()
            );
        }
    }
    for (label, series) in &m.left_out {
        let _ = writeln!(
            out,
            "Left out, not run by every study: {} of {}.\n",
            md_inline(&series.join(", ")),
            md_inline(label)
        );
    }
    let differ: Vec<String> = m
        .points
        .iter()
        .filter(|p| {
            p.rows
                .iter()
                .any(|r| r.effective_path != p.rows[0].effective_path)
        })
        .map(|p| {
            let ran: Vec<String> = studies
                .iter()
                .zip(&p.rows)
                .map(|(s, r)| format!("{} {}", s.label, r.effective_path))
                .collect();
            format!(
                "{} {} at {} ({})",
                p.scenario,
                p.path,
                fmt_bytes(p.size),
                ran.join(", ")
            )
        })
        .collect();
    if !differ.is_empty() {
        let shown: Vec<&String> = differ.iter().take(6).collect();
        let more = differ.len().saturating_sub(6);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "The studies ran different paths at {} points (a fallback in one of them): {}{more}.\n",
            differ.len(),
            md_inline(
                &shown
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        );
    }
}

/// The distinct values of `f` over the points, in order.
fn distinct(m: &Matching, f: impl Fn(&Point) -> String) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for p in &m.points {
        let x = f(p);
        if !v.contains(&x) {
            v.push(x);
        }
    }
    v
}

/// The series of the points: (scenario, path, op), in order.
fn series(m: &Matching) -> Vec<(String, PathKind, Op)> {
    let mut v: Vec<(String, PathKind, Op)> = Vec::new();
    for p in &m.points {
        let k = (p.scenario.clone(), p.path, p.op);
        if !v.contains(&k) {
            v.push(k);
        }
    }
    v
}

/// The series' name cells: scenario, path, and the op where the points have several.
fn name_cells(m: &Matching, (sc, path, op): &(String, PathKind, Op)) -> Vec<String> {
    let mut c = vec![md_inline(sc), display(*path).to_string()];
    if distinct(m, |p| p.op.name().to_string()).len() > 1 {
        c.push(op.name().to_string());
    }
    c
}

fn name_head(m: &Matching) -> Vec<String> {
    let mut h = vec!["Scenario".to_string(), "Path".to_string()];
    if distinct(m, |p| p.op.name().to_string()).len() > 1 {
        h.push("Op".into());
    }
    h
}

fn table_head(out: &mut String, head: &[String]) {
    let _ = writeln!(out, "| {} |", head.join(" | "));
    let _ = writeln!(out, "|{}|", vec!["---"; head.len()].join("|"));
}

/// "0.95–1.31×", or one value where the range rounds to one.
fn range_text(v: &[f64]) -> String {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        "–".into()
    } else if sig3(lo) == sig3(hi) {
        format!("{}×", sig3(lo))
    } else {
        format!("{}–{}×", sig3(lo), sig3(hi))
    }
}

/// "A 20, B 3, tie 8": how often each outcome came out.
fn counts(studies: &[Study], outcomes: &[Best]) -> String {
    let mut kinds: Vec<Best> = (0..studies.len()).map(Best::Study).collect();
    kinds.extend([Best::Tie, Best::NotSteady]);
    let parts: Vec<String> = kinds
        .into_iter()
        .filter_map(|k| {
            let n = outcomes.iter().filter(|o| **o == k).count();
            (n > 0).then(|| format!("{} {n}", md_inline(&k.text(studies))))
        })
        .collect();
    parts.join(", ")
}

fn overview(out: &mut String, studies: &[Study], m: &Matching) {
    let _ = writeln!(out, "## Overview\n");
    let base = &studies[0].label;
    let mut head = name_head(m);
    for s in &studies[1..] {
        head.push(format!(
            "p50 latency, {} / {}",
            md_inline(&s.label),
            md_inline(base)
        ));
    }
    head.push("Lowest latency (sizes)".into());
    for s in &studies[1..] {
        head.push(format!(
            "Bandwidth, {} / {}",
            md_inline(&s.label),
            md_inline(base)
        ));
    }
    head.push("Highest bandwidth (sizes)".into());
    table_head(out, &head);
    for k in series(m) {
        let pts: Vec<&Point> = m
            .points
            .iter()
            .filter(|p| (&p.scenario, p.path, p.op) == (&k.0, k.1, k.2))
            .collect();
        let mut cells = name_cells(m, &k);
        let ratios = |i: usize, f: fn(&crate::stats::Summary) -> f64| -> Vec<f64> {
            pts.iter()
                .filter_map(|p| ratio(f(p.rows[i]), f(p.rows[0])))
                .collect()
        };
        for i in 1..studies.len() {
            cells.push(range_text(&ratios(i, |r| r.lat.p50_us)));
        }
        let lat: Vec<Best> = pts.iter().map(|p| verdict::latency(p)).collect();
        cells.push(counts(studies, &lat));
        for i in 1..studies.len() {
            cells.push(range_text(&ratios(i, |r| r.bw_gbps)));
        }
        let bw: Vec<Best> = pts.iter().map(|p| verdict::bandwidth(p)).collect();
        cells.push(counts(studies, &bw));
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    let _ = writeln!(
        out,
        "\nRatios: the range over every matched size. **tie**: latencies within the sum of both \
         95 % confidence half-widths or {}%, bandwidths within {}%; \"not steady\": a bandwidth \
         whose streaming run was too short for steady state in some study (its average more \
         than {}% below the delivery rate of its middle half: results.csv's `steady` column), \
         kept out of the verdict.\n",
        sig3(TIE * 100.0),
        sig3(BW_NOISE * 100.0),
        sig3(BW_NOISE * 100.0)
    );
}

/// "+12.3%", "−4.1%", "0%": the change of `v` over `base`.
fn change(v: f64, base: f64) -> String {
    match ratio(v, base) {
        Some(r) => {
            let pct = (r - 1.0) * 100.0;
            match sig3(pct.abs()).as_str() {
                "0" => "0%".into(),
                a if pct > 0.0 => format!("+{a}%"),
                a => format!("−{a}%"),
            }
        }
        None => "–".into(),
    }
}

fn key_sizes(out: &mut String, studies: &[Study], m: &Matching) {
    let mut all: Vec<u64> = m.points.iter().map(|p| p.size).collect();
    all.sort_unstable();
    all.dedup();
    let sizes = table_sizes(&all);
    let _ = writeln!(out, "## At key sizes\n");
    let base = &studies[0].label;
    let mut head = name_head(m);
    head.push("Size".into());
    for s in studies {
        head.push(format!("p50 {}", md_inline(&s.label)));
    }
    for s in &studies[1..] {
        head.push(format!("{} vs {}", md_inline(&s.label), md_inline(base)));
    }
    head.push("Faster".into());
    for s in studies {
        head.push(format!("BW {}", md_inline(&s.label)));
    }
    for s in &studies[1..] {
        head.push(format!("{} vs {}", md_inline(&s.label), md_inline(base)));
    }
    head.push("More bandwidth".into());
    table_head(out, &head);
    for k in series(m) {
        for p in m
            .points
            .iter()
            .filter(|p| (&p.scenario, p.path, p.op) == (&k.0, k.1, k.2) && sizes.contains(&p.size))
        {
            let mut cells = name_cells(m, &k);
            cells.push(fmt_bytes(p.size));
            cells.extend(p.rows.iter().map(|r| fmt_us(r.lat.p50_us)));
            cells.extend(
                p.rows[1..]
                    .iter()
                    .map(|r| change(r.lat.p50_us, p.rows[0].lat.p50_us)),
            );
            cells.push(md_inline(&verdict::latency(p).text(studies)));
            cells.extend(p.rows.iter().map(|r| fmt_gbps(r.bw_gbps)));
            cells.extend(
                p.rows[1..]
                    .iter()
                    .map(|r| change(r.bw_gbps, p.rows[0].bw_gbps)),
            );
            cells.push(md_inline(&verdict::bandwidth(p).text(studies)));
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
    }
    let _ = writeln!(
        out,
        "\np50: one-way latency, the median over the jittered iterations; BW: streaming \
         bandwidth in GB/s (10⁹ B/s). \"vs\": the change over the baseline (for latency, + is \
         slower). Every size is in [`compare.csv`](compare.csv).\n"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::matching::match_rows;
    use crate::report::charts::testdata;
    use std::path::PathBuf;

    fn study(label: &str, scenario: (&str, &str, f64, f64), lat: f64) -> Study {
        let mut rows = testdata::rows(&[scenario], &["staged", "gpudirect"], &testdata::sweep());
        for r in &mut rows {
            r.lat.p50_us *= lat;
        }
        Study {
            dir: PathBuf::from(format!("out/{label}")),
            name: label.into(),
            label: label.into(),
            rows,
            info: None,
        }
    }

    #[test]
    fn the_report_states_the_matching_and_tabulates_the_key_sizes() {
        let studies = [
            study("A", testdata::SCENARIOS[0], 1.0),
            study("B", testdata::SCENARIOS[0], 1.5),
        ];
        let m = match_rows(&studies).unwrap();
        let md = render(
            &studies,
            &m,
            &["latency.png".into(), "latency.svg".into()],
            "gdrsim compare o a b",
        );
        assert!(!md.contains("busbw"), "{md}");
        let with_busbw = render(
            &studies,
            &m,
            &["busbw.png".into(), "busbw.svg".into()],
            "gdrsim compare o a b",
        );
        assert!(
            with_busbw.contains(
                "![busbw](busbw.png)\n\nFiles: [busbw.png](busbw.png), [busbw.svg](busbw.svg)"
            ),
            "{with_busbw}"
        );
        assert!(md.starts_with("# Studies compared: A vs B\n"), "{md}");
        assert!(
            md.contains("| baseline | A | – | `out/A` | 20 | 20 |"),
            "{md}"
        );
        assert!(
            md.contains("matched on (scenario, path, op, size): 20 points"),
            "{md}"
        );
        assert!(md.contains("| PIX | GPUDirect | 1.5× | A 10 |"), "{md}");
        // The key sizes present in the sweep (8 B, 4 KiB (no), 1 GiB ...): each a row per series.
        assert!(md.contains("| PIX | staged | 8 B |"), "{md}");
        assert!(md.contains("| +50% | A |"), "{md}");
        assert!(md.contains("![latency](latency.png)"), "{md}");
        assert!(md.contains("```sh\ngdrsim compare o a b\n```"), "{md}");

        let studies = [
            study("A", testdata::SCENARIOS[0], 1.0),
            study("B", testdata::SCENARIOS[2], 1.0),
        ];
        let m = match_rows(&studies).unwrap();
        let md = render(&studies, &m, &[], "c");
        assert!(
            md.contains("matched on (path, op, size) alone: A's PIX against B's SYS"),
            "{md}"
        );
    }

    #[test]
    fn changes_are_signed_percentages() {
        assert_eq!(change(1.5, 1.0), "+50%");
        assert_eq!(change(0.9, 1.0), "−10%");
        assert_eq!(change(1.0, 1.0), "0%");
        assert_eq!(change(1.0, 0.0), "–");
        assert_eq!(range_text(&[0.95, 1.31]), "0.95–1.31×");
        assert_eq!(range_text(&[]), "–");
    }
}

//! The short table `gdrsim run` prints when it is done, from the result rows alone.

use crate::config::PathKind;
use crate::stats::Summary;
use crate::units::{fmt_bytes, ps_to_us};

/// The short table printed after a run: per scenario and path, latency at a small and a large
/// size and the bandwidth at the largest size. The text columns are as wide as their longest
/// entry (at least as wide as before they grew), so long scenario names and paths such as
/// `staged_pipelined` keep the columns after them aligned.
pub fn summary_table(rows: &[Summary]) -> String {
    let small = rows.iter().map(|r| r.size_bytes).min().unwrap_or(0);
    let large = rows.iter().map(|r| r.size_bytes).max().unwrap_or(0);
    let mut keys: Vec<(&str, PathKind)> = Vec::new();
    for r in rows {
        if !keys.contains(&(r.scenario.as_str(), r.path)) {
            keys.push((r.scenario.as_str(), r.path));
        }
    }
    let lines: Vec<[String; 7]> = keys
        .into_iter()
        .filter_map(|(s, p)| {
            let of = |size| {
                rows.iter()
                    .find(|r| r.scenario == s && r.path == p && r.size_bytes == size)
            };
            let (a, b) = (of(small)?, of(large)?);
            Some([
                s.to_string(),
                a.class.to_string(),
                p.to_string(),
                b.effective_path.to_string(),
                format!("{:.3} us", ps_to_us(a.lat_model_ps)),
                format!("{:.1} us", ps_to_us(b.lat_model_ps)),
                format!("{:.2}", b.bw_gbps),
            ])
        })
        .collect();
    let head = [
        "scenario".to_string(),
        "class".to_string(),
        "path".to_string(),
        "effective".to_string(),
        format!("lat@{}", fmt_bytes(small).replace(' ', "")),
        format!("lat@{}", fmt_bytes(large).replace(' ', "")),
        format!("bw@{} GB/s", fmt_bytes(large).replace(' ', "")),
    ];
    // Text columns left-aligned, figures right-aligned; the widths the table always had as
    // the least.
    let least = [10, 6, 10, 28, 14, 14, 16];
    let chars = |s: &String| s.chars().count();
    let width: Vec<usize> = (0..7)
        .map(|c| {
            lines
                .iter()
                .map(|l| chars(&l[c]))
                .chain([chars(&head[c]), least[c]])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let row = |cells: &[String; 7]| {
        let mut out: Vec<String> = Vec::new();
        for (c, cell) in cells.iter().enumerate() {
            let pad = " ".repeat(width[c] - chars(cell));
            out.push(if c < 4 {
                format!("{cell}{pad}")
            } else {
                format!("{pad}{cell}")
            });
        }
        out.join(" ") + "\n"
    };
    let mut out = row(&head);
    for l in &lines {
        out.push_str(&row(l));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::charts::testdata;

    /// Issue #28 item 3: with 20-30 character scenario names and `staged_pipelined`, the
    /// columns after them were pushed right line by line. Every column starts at the same
    /// character on every line.
    #[test]
    fn columns_line_up_with_long_names_and_paths() {
        let long = crate::report::charts::long_names::LONG;
        let rows = testdata::rows(
            &long,
            &["staged", "gpudirect", "staged_pipelined"],
            &[8, 1 << 20],
        );
        let text = summary_table(&rows);
        let lines: Vec<Vec<char>> = text.lines().map(|l| l.chars().collect()).collect();
        assert_eq!(lines.len(), 1 + long.len() * 3, "{text}");
        // Each column starts where its heading does, on every line.
        let head: String = lines[0].iter().collect();
        let at = |word: &str| head[..head.find(word).unwrap()].chars().count();
        for l in &lines[1..] {
            let from = |i: usize| l[i..].iter().collect::<String>();
            assert_eq!(l.len(), lines[0].len(), "{text}");
            assert!(
                ["PIX", "PXB", "PHB", "NODE", "SYS"]
                    .iter()
                    .any(|c| from(at("class")).starts_with(c)),
                "{text}"
            );
            assert!(
                ["staged", "gpudirect"]
                    .iter()
                    .any(|p| from(at("path")).starts_with(p)),
                "{text}"
            );
            assert!(
                l[at("path") - 1] == ' ' && l[at("effective") - 1] == ' ',
                "{text}"
            );
            assert!(
                from(at("effective")).starts_with(&from(at("path"))[..6]),
                "{text}"
            );
        }
        // The short study's table is what it always was.
        let short = testdata::rows(&testdata::SCENARIOS, &["gpudirect"], &[8, 1 << 20]);
        let t = summary_table(&short);
        assert!(
            t.starts_with("scenario   class  path       effective "),
            "{t}"
        );
        assert!(
            t.contains("\nPIX        PIX    gpudirect  gpudirect "),
            "{t}"
        );
    }
}

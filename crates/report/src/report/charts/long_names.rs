//! Chart tests with realistic scenario names ("H100 GPU0 -> NIC0 PIX", 20-30 characters),
//! several scenarios and several paths: what a reviewer's study looks like, where short test
//! names ("PIX") hid layouts that leave no room for the data. The charts are rendered as SVG and
//! their marks counted from it.

use super::data::Model;
use super::style::Theme;
use super::*;
use crate::report::RunInfo;
use crate::stats::Summary;

/// Five scenarios with the names a real study gives them.
pub(crate) const LONG: [(&str, &str, f64, f64); 5] = [
    ("H100 GPU0 -> NIC0 PIX", "PIX", 48.0, 49.3),
    ("H100 GPU1 -> NIC0 PXB", "PXB", 40.0, 49.3),
    ("H100 GPU2 -> NIC0 PHB", "PHB", 30.0, 49.3),
    ("H100 GPU3 -> NIC0 NODE", "NODE", 20.0, 49.3),
    ("H100 GPU4 -> NIC0 SYS (cross-socket)", "SYS", 7.0, 49.3),
];

/// Five paths, as a study comparing every way of moving the data runs them.
pub(crate) const PATHS: [&str; 5] = ["host", "staged", "gpudirect", "staged_pipelined", "gdrcopy"];

/// The long-named study at `paths`, swept 8 B to 1 GiB.
pub(crate) fn study(paths: &[&str]) -> (RunInfo, Vec<Summary>) {
    (
        testdata::info(&LONG),
        testdata::rows(&LONG, paths, &testdata::sweep()),
    )
}

/// Renders `kind` of the study as SVG at 1600x1000.
pub(crate) fn svg(kind: Kind, info: &RunInfo, rows: &[Summary]) -> String {
    register_fonts().unwrap();
    let model = Model::new(info, rows);
    let ctx = Ctx {
        model: &model,
        info,
        th: Theme::new(1600, 1000),
    };
    render_svg(kind, &ctx).unwrap()
}

/// `text` as the SVG writes it.
pub(crate) fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A number attribute of an SVG element's text.
fn attr(tag: &str, name: &str) -> Option<f64> {
    tag.split(&format!(" {name}=\""))
        .nth(1)?
        .split('"')
        .next()?
        .parse()
        .ok()
}

/// A string attribute of an SVG element's text.
fn attr_str<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    tag.split(&format!(" {name}=\"")).nth(1)?.split('"').next()
}

/// The breakdown's stage segments: a filled rectangle followed by the same rectangle outlined
/// in white (legend swatches are outlined in their own colour), as (x, y, width, height).
pub(crate) fn segments(svg: &str) -> Vec<(f64, f64, f64, f64)> {
    let rects: Vec<&str> = svg.lines().filter(|l| l.starts_with("<rect")).collect();
    let geometry = |l: &str| {
        Some((
            attr(l, "x")?,
            attr(l, "y")?,
            attr(l, "width")?,
            attr(l, "height")?,
        ))
    };
    rects
        .windows(2)
        .filter(|w| {
            attr_str(w[0], "stroke") == Some("none")
                && attr_str(w[1], "stroke") == Some("#FFFFFF")
                && attr_str(w[1], "fill") == Some("none")
                && geometry(w[0]) == geometry(w[1])
        })
        .filter_map(|w| geometry(w[0]))
        .collect()
}

/// The bars the segments make: segments of one row (same y and height) that touch, joined;
/// as (x, y, length) in pixels, in drawing order.
pub(crate) fn bars(svg: &str) -> Vec<(f64, f64, f64)> {
    let mut out: Vec<(f64, f64, f64, f64)> = Vec::new();
    for (x, y, w, h) in segments(svg) {
        match out
            .iter_mut()
            .find(|b| b.1 == y && b.3 == h && (b.0 + b.2 - x).abs() <= 1.0)
        {
            Some(b) => b.2 = x + w - b.0,
            None => out.push((x, y, w, h)),
        }
    }
    out.into_iter().map(|(x, y, l, _)| (x, y, l)).collect()
}

/// Issue #28 item 1: with 20-30 character scenario names, five scenarios and five paths (75
/// bars over three sizes), the breakdown drew its labels and no bars: the panels were set side
/// by side, each with its own column of long labels, which left the bars a few pixels. Every
/// bar must be drawn, and each panel's longest bar must take a good part of its panel.
#[test]
fn breakdown_draws_every_bar_with_long_names() {
    let (info, rows) = study(&PATHS);
    let svg = svg(Kind::Breakdown, &info, &rows);
    let bars = bars(&svg);
    let sizes = super::breakdown::breakdown_sizes(&info.output.breakdown_sizes, &testdata::sweep());
    assert_eq!(
        bars.len(),
        LONG.len() * PATHS.len() * sizes.len(),
        "{bars:?}"
    );
    // Panels side by side: split the bars by where they start.
    let mut starts: Vec<f64> = bars.iter().map(|b| b.0).collect();
    starts.sort_by(f64::total_cmp);
    starts.dedup_by(|a, b| (*a - *b).abs() < 2.0);
    assert_eq!(
        starts.len(),
        sizes.len(),
        "one bar origin per panel: {starts:?}"
    );
    for x0 in starts {
        let longest = bars
            .iter()
            .filter(|b| (b.0 - x0).abs() < 2.0)
            .map(|b| b.2)
            .fold(0.0, f64::max);
        assert!(
            longest >= 150.0,
            "the panel at x = {x0} has bars of at most {longest} px"
        );
    }
}

/// Issue #28 item 3: names that already say their class ("H100 GPU0 -> NIC0 PIX") were given
/// it again in the legends ("H100 GPU0 -> NIC0 PIX (PIX)"); a name that does not say it keeps
/// it ("H100 GPU4 -> NIC0 SYS (cross-socket)" says SYS).
#[test]
fn legends_do_not_repeat_the_class_a_name_says() {
    let (info, rows) = study(&["staged", "gpudirect"]);
    for kind in [
        Kind::Latency,
        Kind::Bandwidth,
        Kind::Speedup,
        Kind::Scenarios,
        Kind::Links,
    ] {
        let svg = svg(kind, &info, &rows);
        for (name, class, _, _) in LONG {
            let name = esc(name);
            assert!(svg.contains(&name), "{kind:?}: {name}");
            assert!(
                !svg.contains(&format!("{name} ({class})")),
                "{kind:?}: {name} ({class})"
            );
        }
    }
}

/// Issue #28 item 3: faceted by path (25 lines), the size charts set five panels in one row,
/// each too narrow for more than one size label ("1 MiB") beside its repeated axis title.
/// In a grid of three columns each panel labels 1 KiB, 1 MiB and 1 GiB, the x title is under
/// each column once and the y title beside each row once.
#[test]
fn faceted_size_charts_label_every_panel_and_title_each_axis_once() {
    let (info, rows) = study(&PATHS);
    for (kind, y_title) in [
        (Kind::Latency, "one-way latency, p50 (log scale)"),
        (Kind::Bandwidth, "bandwidth (GB/s)"),
    ] {
        let svg = svg(kind, &info, &rows);
        let texts = |t: &str| svg.matches(&format!("\n{t}\n</text>")).count();
        for path in PATHS {
            assert_eq!(
                texts(path),
                2,
                "{kind:?}: {path} in the legend and as a caption"
            );
        }
        for label in ["1 KiB", "1 MiB", "1 GiB"] {
            assert_eq!(
                texts(label),
                PATHS.len(),
                "{kind:?}: {label} on every panel"
            );
        }
        assert_eq!(
            texts("message size (log scale)"),
            3,
            "{kind:?}: one x title per column"
        );
        assert_eq!(texts(y_title), 2, "{kind:?}: one y title per row");
    }
}

/// The `y` of every SVG text element, with its text.
fn texts_at(svg: &str) -> Vec<(f64, String)> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let tag = &t[..t.find('>')?];
            let body = t[t.find('>')? + 1..t.find("</text>")?].trim().to_string();
            Some((attr(tag, "y")?, body))
        })
        .collect()
}

/// Issue #28 item 3: with many crossovers, the speedup chart wrote each one's sentence into the
/// plot (over the lines and each other) and listed them in a legend that ran off the image. The
/// plot now carries numbered tags; the legend lists the numbered sentences that fit and says
/// how many more report.md has, every text inside the image; a crossover to the pipelined
/// baseline is not named twice ("staged_pipelined wins ... vs staged_pipelined").
#[test]
fn speedup_crossovers_are_numbered_and_the_legend_stays_in_the_image() {
    let names: Vec<String> = (0..12)
        .map(|i| format!("H100 GPU{i} -> NIC{} rail{i} far", i / 2))
        .collect();
    let scenarios: Vec<(&str, &str, f64, f64)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), "SYS", 4.0 + i as f64, 49.3))
        .collect();
    let info = testdata::info(&scenarios);
    let mut rows = testdata::rows(&scenarios, &["staged", "gpudirect"], &testdata::sweep());
    // The pipeline as staged (the synthetic model has none of its own), so it wins where
    // staged does.
    let pipelined: Vec<Summary> = rows
        .iter()
        .filter(|r| r.path == crate::config::PathKind::Staged)
        .map(|r| {
            let mut r = r.clone();
            r.path = crate::config::PathKind::StagedPipelined;
            r.effective_path =
                crate::effective::EffectivePath::of(crate::config::PathKind::StagedPipelined)
                    .unwrap();
            r
        })
        .collect();
    rows.extend(pipelined);
    let model = Model::new(&info, &rows);
    let total: usize = model
        .speedups()
        .iter()
        .map(|s| {
            s.crossovers(data::Metric::Latency).len() + s.crossovers(data::Metric::Bandwidth).len()
        })
        .sum();
    assert!(total >= 12, "crossovers: {total}");
    let svg = svg(Kind::Speedup, &info, &rows);
    let texts = texts_at(&svg);
    for (y, t) in &texts {
        assert!(*y >= 0.0 && *y < 1000.0, "{t:?} at y = {y}");
    }
    // Numbered sentences in the legend and the count of the rest.
    let listed = texts
        .iter()
        .filter(|(_, t)| {
            t.split_once(". ")
                .is_some_and(|(n, rest)| n.parse::<usize>().is_ok() && rest.contains(':'))
        })
        .count();
    let more: usize = texts
        .iter()
        .find_map(|(_, t)| t.strip_prefix("… and ")?.split(' ').next()?.parse().ok())
        .expect("the overflow note");
    assert!(
        listed > 0 && more > 0 && listed + more == total,
        "{listed} + {more} != {total}"
    );
    // A tag per crossover in the plot, no sentence there.
    for i in 1..=total {
        assert!(texts.iter().any(|(_, t)| *t == i.to_string()), "tag {i}");
    }
    let sentences: Vec<&String> = texts
        .iter()
        .map(|t| &t.1)
        .filter(|t| t.contains(" wins at "))
        .collect();
    assert_eq!(
        sentences.len(),
        listed,
        "sentences only in the legend: {sentences:?}"
    );
    assert!(
        sentences
            .iter()
            .any(|t| t.contains("staged_pipelined wins")),
        "{sentences:?}"
    );
    for t in sentences {
        assert!(
            !(t.contains("staged_pipelined wins") && t.contains("vs staged_pipelined")),
            "{t}"
        );
    }
}

/// Every text of an SVG as the box it covers, (left, right, top, bottom) in pixels, with its
/// text: measured in its font as the chart measured it. Rotated text (y titles) is left out.
pub(crate) fn text_boxes(svg: &str) -> Vec<(f64, f64, f64, f64, String)> {
    register_fonts().unwrap();
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let tag = &t[..t.find('>')?];
            if tag.contains("transform") {
                return None;
            }
            let body = t[t.find('>')? + 1..t.find("</text>")?].trim();
            let text = body
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&apos;", "'")
                .replace("&quot;", "\"")
                .replace("&amp;", "&");
            // plotters' SVG backend writes a font's size divided by 1.24.
            let (x, y, size) = (
                attr(tag, "x")?,
                attr(tag, "y")?,
                attr(tag, "font-size")? * 1.24,
            );
            let weight = if tag.contains("font-weight=\"bold\"") {
                FontStyle::Bold
            } else {
                FontStyle::Normal
            };
            let font = FontDesc::new(FontFamily::SansSerif, size, weight);
            let (w, h) = style::text_size(&font, &text);
            let (w, h) = (w as f64, h as f64);
            let left = match attr_str(tag, "text-anchor") {
                Some("end") => x - w,
                Some("middle") => x - w / 2.0,
                _ => x,
            };
            let top = match attr_str(tag, "dy") {
                Some("0.76em") => y,
                Some("0.5ex") => y - h / 2.0,
                _ => y - h,
            };
            Some((left, left + w, top, top + h, text))
        })
        .collect()
}

/// The pairs of texts of an SVG whose boxes overlap by more than a pixel each way, and the
/// texts that reach outside a `w` x `h` image.
pub(crate) fn text_clashes(svg: &str, (w, h): (f64, f64)) -> Vec<String> {
    let boxes = text_boxes(svg);
    let mut out = Vec::new();
    for (i, a) in boxes.iter().enumerate() {
        if a.0 < -1.0 || a.1 > w + 1.0 || a.2 < -1.0 || a.3 > h + 1.0 {
            out.push(format!("{:?} outside the image", a.4));
        }
        for b in &boxes[i + 1..] {
            let dx = a.1.min(b.1) - a.0.max(b.0);
            let dy = a.3.min(b.3) - a.2.max(b.2);
            if dx > 1.0 && dy > 1.0 {
                out.push(format!("{:?} over {:?}", a.4, b.4));
            }
        }
    }
    out
}

/// Issue #28 item 3: the links chart set its channel labels left of each panel's axis, which
/// with long channel names ran into the panel before it (and off the image in the first),
/// while each bar's value ran into the next panel's labels. No text may overlap another or
/// leave the image.
#[test]
fn links_chart_texts_neither_clash_nor_leave_the_image() {
    let (info, rows) = study(&PATHS);
    let clashes = text_clashes(&svg(Kind::Links, &info, &rows), (1600.0, 1000.0));
    assert!(
        clashes.is_empty(),
        "{} clashes: {clashes:#?}",
        clashes.len()
    );
}

/// Every chart of the long-named study on five paths: no text over another or off the image.
#[test]
fn no_chart_of_the_long_named_study_has_clashing_text() {
    let (info, rows) = study(&PATHS);
    let mut all = Vec::new();
    for kind in Kind::ALL {
        for c in text_clashes(&svg(kind, &info, &rows), (1600.0, 1000.0)) {
            all.push(format!("{kind:?}: {c}"));
        }
    }
    assert!(all.is_empty(), "{} clashes: {all:#?}", all.len());
}

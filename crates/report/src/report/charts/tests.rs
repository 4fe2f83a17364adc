//! Chart tests on synthetic rows: every chart in both formats, SVG well-formed with its title and
//! axis text, PNG of the configured size and not blank, degenerate sets without panics.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use super::data::Model;
use super::style::Theme;
use super::testdata::{self, SCENARIOS};
use super::*;
use crate::config::{ImageFormat, Op, PathKind};
use crate::effective::EffectivePath;
use crate::report::RunInfo;
use crate::stats::Summary;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gdrsim-charts-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Text every chart's SVG must contain besides its title: an axis label (or, for charts with
/// nothing to plot, the explanation).
fn axis_text(kind: Kind) -> &'static str {
    match kind {
        Kind::Latency => "one-way latency, p50 (log scale)",
        Kind::Bandwidth => "bandwidth (GB/s)",
        Kind::Busbw => "busbw (GB/s)",
        Kind::Speedup => "message size (log scale)",
        Kind::Breakdown => "critical-path time",
        Kind::Scenarios => "one-way latency, p50",
        Kind::Links => "busy (% of capacity)",
    }
}

/// A minimal XML well-formedness check: declaration or <svg> first, </svg> last, and every tag
/// closed in order (plotters escapes text, so '<' only starts tags).
fn check_well_formed(svg: &str) -> Result<(), String> {
    let t = svg.trim();
    if !(t.starts_with("<svg") || t.starts_with("<?xml")) {
        return Err("does not start with <svg or <?xml".into());
    }
    if !t.ends_with("</svg>") {
        return Err("does not end with </svg>".into());
    }
    let mut stack: Vec<&str> = Vec::new();
    let mut rest = t;
    while let Some(i) = rest.find('<') {
        let j = rest[i..].find('>').ok_or("unterminated tag")? + i;
        let tag = &rest[i + 1..j];
        rest = &rest[j + 1..];
        if tag.starts_with('?') || tag.starts_with('!') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            match stack.pop() {
                Some(open) if open == name.trim() => {}
                other => return Err(format!("</{name}> closes {other:?}")),
            }
        } else if !tag.ends_with('/') {
            let name = tag.split_whitespace().next().ok_or("empty tag")?;
            stack.push(name);
        }
    }
    if stack.is_empty() {
        Ok(())
    } else {
        Err(format!("unclosed {stack:?}"))
    }
}

/// Width and height from a PNG's IHDR chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(bytes.len() > 24, "PNG too short");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

/// Renders a chart into an RGB buffer and counts non-white pixels: (overall, in the title strip).
fn ink(kind: Kind, info: &RunInfo, rows: &[Summary]) -> (usize, usize) {
    register_fonts().unwrap();
    let (w, h) = image_size(info);
    let model = Model::new(info, rows);
    let ctx = Ctx {
        model: &model,
        info,
        th: Theme::new(w, h),
    };
    let mut buf = vec![0u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        draw(&root, kind, &ctx).unwrap();
        root.present().unwrap();
    }
    let dark = |px: &[u8]| px.iter().any(|&c| c < 235);
    let all = buf.chunks(3).filter(|p| dark(p)).count();
    let title_rows = (h as usize) * 6 / 100;
    let title = buf[..title_rows * w as usize * 3]
        .chunks(3)
        .filter(|p| dark(p))
        .count();
    (all, title)
}

/// The charts a run of `rows` draws of those `info` lists (`busbw` only with collectives).
fn drawn(info: &RunInfo, rows: &[Summary]) -> Vec<Kind> {
    let collectives = rows.iter().any(|r| r.busbw_gbps.is_some());
    super::kinds(&info.output.charts, collectives)
}

/// Writes all charts and checks every file; returns the paths.
fn check_all(name: &str, info: &RunInfo, rows: &[Summary]) -> Vec<PathBuf> {
    let dir = tmp(name);
    let paths = write_charts(&dir, info, rows).unwrap();
    let kinds = drawn(info, rows);
    assert_eq!(paths.len(), 2 * kinds.len(), "{paths:?}");
    let (w, h) = image_size(info);
    for &kind in &kinds {
        let svg_path = dir.join(format!("{}.svg", kind.name()));
        let png_path = dir.join(format!("{}.png", kind.name()));
        assert!(paths.contains(&svg_path) && paths.contains(&png_path));
        let svg = std::fs::read_to_string(&svg_path).unwrap();
        check_well_formed(&svg).unwrap_or_else(|e| panic!("{name} {}: {e}", kind.name()));
        assert!(
            svg.contains(super::title(kind)),
            "{name} {}: title missing",
            kind.name()
        );
        let png = std::fs::read(&png_path).unwrap();
        assert_eq!(png_size(&png), (w, h), "{name} {}", kind.name());
    }
    for &kind in &kinds {
        let (_, title) = ink(kind, info, rows);
        assert!(title > 100, "{name} {}: title strip blank", kind.name());
    }
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    std::fs::remove_dir_all(&dir).unwrap();
    paths
}

#[test]
fn realistic_run_gives_every_chart_in_both_formats() {
    let (mut info, rows) = testdata::realistic();
    // A non-default size, to check that the configured one is used.
    info.output.width_px = 1200;
    info.output.height_px = 750;
    let dir = tmp("realistic");
    let paths = write_charts(&dir, &info, &rows).unwrap();
    let names: Vec<String> = paths
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names[..2],
        ["latency.svg", "latency.png"],
        "configured order, svg then png"
    );
    for kind in drawn(&info, &rows) {
        let svg = std::fs::read_to_string(dir.join(format!("{}.svg", kind.name()))).unwrap();
        check_well_formed(&svg).unwrap_or_else(|e| panic!("{}: {e}", kind.name()));
        assert!(svg.contains(super::title(kind)), "{}", kind.name());
        assert!(
            svg.contains(&info.hardware),
            "{}: hardware in the title",
            kind.name()
        );
        assert!(
            svg.contains(axis_text(kind)),
            "{}: axis label missing",
            kind.name()
        );
        assert_eq!(
            png_size(&std::fs::read(dir.join(format!("{}.png", kind.name()))).unwrap()),
            (1200, 750)
        );
        let (all, title) = ink(kind, &info, &rows);
        let area = 1200 * 750;
        assert!(all > area / 50, "{}: only {all} drawn pixels", kind.name());
        assert!(title > 300, "{}: title strip blank ({title})", kind.name());
    }
    // Chart-specific content.
    let speedup = std::fs::read_to_string(dir.join("speedup.svg")).unwrap();
    assert!(
        speedup.contains("staged wins at ≥") && speedup.contains("on SYS"),
        "crossover annotated in words"
    );
    let bw = std::fs::read_to_string(dir.join("bandwidth.svg")).unwrap();
    assert!(bw.contains("ceiling: wire NDR 400 Gb/s eff."));
    let latency = std::fs::read_to_string(dir.join("latency.svg")).unwrap();
    for label in ["8 B", "1 GiB", "µs"] {
        assert!(latency.contains(label), "latency tick {label}");
    }
    let breakdown = std::fs::read_to_string(dir.join("breakdown.svg")).unwrap();
    for stage in ["wire", "memcpy_d2h", "flush"] {
        assert!(breakdown.contains(stage), "breakdown legend lacks {stage}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A study with collectives draws `busbw` right after `bandwidth` (without listing it), one
/// line per collective scenario and path, sizes labelled like the other charts; a point-to-point
/// scenario beside them stays off it; listing `busbw` without collectives draws nothing.
#[test]
fn collectives_get_a_busbw_chart_after_bandwidth() {
    let (mut info, mut rows) = testdata::realistic();
    info.output.charts = vec![Kind::Latency, Kind::Bandwidth, Kind::Speedup];
    for r in rows.iter_mut().filter(|r| r.scenario != "PIX") {
        r.busbw_gbps = Some(r.bw_gbps * 1.75);
    }
    let dir = tmp("busbw");
    let names: Vec<String> = write_charts(&dir, &info, &rows)
        .unwrap()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let stems: Vec<&str> = names.iter().map(|n| n.split('.').next().unwrap()).collect();
    assert_eq!(
        stems,
        [
            "latency",
            "latency",
            "bandwidth",
            "bandwidth",
            "busbw",
            "busbw",
            "speedup",
            "speedup"
        ]
    );
    let svg = std::fs::read_to_string(dir.join("busbw.svg")).unwrap();
    check_well_formed(&svg).unwrap();
    for text in [
        title(Kind::Busbw),
        "busbw (GB/s)",
        " KiB",
        " MiB",
        "PHB",
        "SYS",
        "gpudirect",
    ] {
        assert!(svg.contains(text), "busbw.svg lacks {text}");
    }
    assert!(
        !svg.contains(">PIX<"),
        "a point-to-point scenario is not a collective"
    );
    assert_eq!(
        png_size(&std::fs::read(dir.join("busbw.png")).unwrap()),
        image_size(&info)
    );
    let (all, title_ink) = ink(Kind::Busbw, &info, &rows);
    assert!(
        all > 1600 * 1000 / 100 && title_ink > 300,
        "{all} {title_ink}"
    );
    // Listed first, it is drawn there, once; without collectives, never.
    assert_eq!(
        super::kinds(&[Kind::Busbw, Kind::Bandwidth, Kind::Busbw], true),
        [Kind::Busbw, Kind::Bandwidth]
    );
    assert_eq!(
        super::kinds(&[Kind::Busbw, Kind::Bandwidth], false),
        [Kind::Bandwidth]
    );
    assert_eq!(super::kinds(&[Kind::Latency], true), [Kind::Latency]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn only_configured_charts_and_formats_are_written() {
    let (mut info, rows) = testdata::realistic();
    info.output.charts = vec![Kind::Speedup, Kind::Latency, Kind::Speedup];
    info.output.formats = vec![ImageFormat::Png];
    info.output.width_px = 640;
    info.output.height_px = 400;
    let dir = tmp("subset");
    let paths = write_charts(&dir, &info, &rows).unwrap();
    assert_eq!(
        paths,
        vec![dir.join("speedup.png"), dir.join("latency.png")]
    );
    assert_eq!(png_size(&std::fs::read(&paths[0]).unwrap()), (640, 400));
    assert!(!dir.join("latency.svg").exists());

    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn degenerate_sets_render_without_panicking() {
    let one = [SCENARIOS[2]];
    let small = |mut info: RunInfo| {
        info.output.width_px = 800;
        info.output.height_px = 500;
        info
    };
    // A single size, a single path, a single scenario.
    let info = small(testdata::info(&one));
    check_all(
        "single",
        &info,
        &testdata::rows(&one, &["gpudirect"], &[4096]),
    );
    // Staged and GPUDirect at one size only: a speedup with a single point, no crossover.
    check_all(
        "pair1",
        &info,
        &testdata::rows(&one, &["staged", "gpudirect"], &[1 << 20]),
    );
    // No staged/GPUDirect pair: the speedup chart says so.
    let rows = testdata::rows(&one, &["host", "staged"], &testdata::sweep());
    check_all("nopair", &info, &rows);
    let dir = tmp("nopair-text");
    write_charts(&dir, &info, &rows).unwrap();
    assert!(
        std::fs::read_to_string(dir.join("speedup.svg"))
            .unwrap()
            .contains("No staged + gpudirect pair")
    );
    std::fs::remove_dir_all(&dir).unwrap();
    // Zero bandwidth and zero latencies everywhere.
    let mut zero = testdata::rows(&one, &["staged", "gpudirect"], &[8, 64]);
    for r in &mut zero {
        r.bw_gbps = 0.0;
        r.lat = Default::default();
        r.lat_model_ps = 0;
        r.stages.clear();
    }
    check_all("zero", &info, &zero);
    // No rows at all, and no run description at all.
    check_all("empty", &info, &[]);
    check_all(
        "bare",
        &small(RunInfo {
            output: testdata::info(&[]).output,
            ..RunInfo::default()
        }),
        &testdata::rows(&one, &["host"], &[8, 1 << 30]),
    );
    // A GPUDirect fallback, two ops, and a scenario the run info does not describe.
    let mut rows = testdata::rows(&SCENARIOS, &["staged", "gpudirect"], &[8, 4096, 1 << 20]);
    for r in rows
        .iter_mut()
        .filter(|r| r.scenario == "SYS" && r.path == PathKind::GpuDirect)
    {
        r.effective_path = EffectivePath::of(PathKind::Staged).unwrap();
    }
    let mut read = rows.clone();
    for r in &mut read {
        r.op = Op::Read;
    }
    rows.extend(read);
    check_all("mixed", &small(testdata::info(&SCENARIOS[..1])), &rows);
    // Many bars in the breakdown (side-by-side panels) and tiny images.
    let mut info = testdata::info(&SCENARIOS);
    info.output.width_px = 320;
    info.output.height_px = 200;
    let mut rows = testdata::rows(
        &SCENARIOS,
        &["host", "staged", "gpudirect"],
        &testdata::sweep(),
    );
    rows.extend(testdata::rows(
        &[("NODE", "NODE", 20.0, 40.0), ("PXB", "PXB", 40.0, 45.0)],
        &["host", "staged", "gpudirect"],
        &testdata::sweep(),
    ));
    check_all("crowded", &info, &rows);
}

#[test]
fn charts_are_byte_for_byte_reproducible() {
    let (mut info, rows) = testdata::realistic();
    info.output.width_px = 480;
    info.output.height_px = 300;
    let (a, b) = (tmp("repro-a"), tmp("repro-b"));
    let pa = write_charts(&a, &info, &rows).unwrap();
    let pb = write_charts(&b, &info, &rows).unwrap();
    for (x, y) in pa.iter().zip(&pb) {
        assert_eq!(
            std::fs::read(x).unwrap(),
            std::fs::read(y).unwrap(),
            "{}",
            x.display()
        );
    }
    std::fs::remove_dir_all(&a).unwrap();
    std::fs::remove_dir_all(&b).unwrap();
}

/// Renders the realistic set to `$GDRSIM_CHART_PREVIEW` (default /tmp/charts-preview) for a
/// human to look at: `cargo test --lib report::charts::tests::preview -- --ignored`.
#[test]
#[ignore]
fn preview() {
    let dir =
        std::env::var("GDRSIM_CHART_PREVIEW").unwrap_or_else(|_| "/tmp/charts-preview".into());
    let dir = Path::new(&dir);
    let (info, rows) = testdata::realistic();
    let charts = write_charts(dir, &info, &rows).unwrap();
    crate::report::markdown::write_markdown(dir, &info, &rows, &charts).unwrap();
    // Degenerate and small variants, to look at too.
    let one = [SCENARIOS[2]];
    let mut small = testdata::info(&SCENARIOS);
    small.output.width_px = 800;
    small.output.height_px = 500;
    write_charts(&dir.join("small"), &small, &rows).unwrap();
    let single = testdata::info(&one);
    write_charts(
        &dir.join("single"),
        &single,
        &testdata::rows(&one, &["gpudirect"], &[4096]),
    )
    .unwrap();
    let nopair = testdata::rows(&one, &["host", "staged"], &testdata::sweep());
    write_charts(&dir.join("nopair"), &single, &nopair).unwrap();
    let mut mixed = testdata::rows(&SCENARIOS, &["staged", "gpudirect"], &testdata::sweep());
    for r in mixed
        .iter_mut()
        .filter(|r| r.scenario == "SYS" && r.path == PathKind::GpuDirect)
    {
        r.effective_path = EffectivePath::of(PathKind::Staged).unwrap();
    }
    let mut read = mixed.clone();
    for r in &mut read {
        r.op = Op::Read;
        r.lat.p50_us *= 1.2;
    }
    mixed.extend(read);
    write_charts(&dir.join("mixed"), &testdata::info(&SCENARIOS), &mixed).unwrap();
}

/// Ten scenarios on three paths (30 lines): the size charts draw one panel per path, each
/// captioned with its path, and the ninth and tenth scenarios get colours of their own.
#[test]
fn many_scenarios_are_faceted_by_path_with_distinct_colours() {
    let names: Vec<String> = (0..10).map(|i| format!("S{i}")).collect();
    let scenarios: Vec<(&str, &str, f64, f64)> = names
        .iter()
        .map(|n| (n.as_str(), "PIX", 50e9, 49.7))
        .collect();
    let info = testdata::info(&scenarios);
    let rows = testdata::rows(
        &scenarios,
        &["host", "staged", "gpudirect"],
        &[8, 4096, 1 << 20],
    );
    let model = Model::new(&info, &rows);
    assert_eq!(model.facets(), vec![Some(0), Some(1), Some(2)]);
    let few = testdata::rows(
        &scenarios[..4],
        &["host", "staged", "gpudirect"],
        &[8, 4096],
    );
    assert_eq!(Model::new(&info, &few).facets(), vec![None]);
    let colours: std::collections::HashSet<_> =
        (0..10).map(|i| style::scenario_color(i).rgb()).collect();
    assert_eq!(colours.len(), 10);
    register_fonts().unwrap();
    for kind in [Kind::Latency, Kind::Bandwidth] {
        let ctx = Ctx {
            model: &model,
            info: &info,
            th: Theme::new(1600, 1000),
        };
        let svg = render_svg(kind, &ctx).unwrap();
        // Each path's name: once in the legend, once more as its panel's caption.
        for path in ["host", "staged", "gpudirect"] {
            let n = svg.matches(&format!("\n{path}\n")).count();
            assert_eq!(n, 2, "{kind:?}: {path} panel");
        }
        let few_model = Model::new(&info, &few);
        let ctx = Ctx {
            model: &few_model,
            info: &info,
            th: Theme::new(1600, 1000),
        };
        let svg = render_svg(kind, &ctx).unwrap();
        assert_eq!(svg.matches("\nstaged\n").count(), 1, "{kind:?}: one panel");
    }
}

/// The polylines of the measured markers' black outlines in an SVG: closed diamonds of five
/// points stroked black (no path marker or line is a black five-point polyline; the seventh
/// scenario colour is black, and these charts have three scenarios).
pub(crate) fn measured_markers(svg: &str) -> usize {
    svg.split("<polyline")
        .skip(1)
        .filter(|e| {
            let e = &e[..e.find("/>").unwrap_or(e.len())];
            let points = e
                .split("points=\"")
                .nth(1)
                .and_then(|p| p.split('"').next())
                .unwrap_or("");
            e.contains("stroke=\"#000000\"") && points.split_whitespace().count() == 5
        })
        .count()
}

/// `run --measured`: a hollow black-outlined marker per measured point on the latency and
/// bandwidth charts, a legend entry naming the file; nothing of it without a measurement.
#[test]
fn measured_points_are_drawn_with_their_own_marker_and_legend() {
    register_fonts().unwrap();
    let (mut info, rows) = testdata::realistic();
    let o = testdata::overlay(&rows);
    let per_figure = o.matched.len() / 2;
    assert!(per_figure >= 5);
    for kind in [Kind::Latency, Kind::Bandwidth] {
        info.measured = None;
        let model = Model::new(&info, &rows);
        let th = Theme::new(1600, 1000);
        let plain = render_svg(
            kind,
            &Ctx {
                model: &model,
                info: &info,
                th,
            },
        )
        .unwrap();
        assert_eq!(measured_markers(&plain), 0, "{kind:?}");
        assert!(!plain.contains("measured ("));
        let mut with = info.clone();
        with.measured = Some(o.clone());
        let model = Model::new(&with, &rows);
        let th = Theme::new(1600, 1000);
        let svg = render_svg(
            kind,
            &Ctx {
                model: &model,
                info: &with,
                th,
            },
        )
        .unwrap();
        check_well_formed(&svg).unwrap();
        // One per point, one in the legend.
        assert_eq!(measured_markers(&svg), per_figure + 1, "{kind:?}");
        assert!(svg.contains("measured (measured.csv)"), "{kind:?}");
    }
    // Other charts do not change.
    info.measured = None;
    let model = Model::new(&info, &rows);
    let plain = render_svg(
        Kind::Speedup,
        &Ctx {
            model: &model,
            info: &info,
            th: Theme::new(1600, 1000),
        },
    )
    .unwrap();
    let mut with = info.clone();
    with.measured = Some(o);
    let model = Model::new(&with, &rows);
    let svg = render_svg(
        Kind::Speedup,
        &Ctx {
            model: &model,
            info: &with,
            th: Theme::new(1600, 1000),
        },
    )
    .unwrap();
    assert_eq!(plain, svg);
}

/// The `y` and `x` of the first SVG text element whose content is exactly `content`.
fn text_at(svg: &str, content: &str) -> Option<(f64, f64)> {
    let i = svg.find(&format!("\n{content}\n</text>"))?;
    let tag = &svg[svg[..i].rfind("<text")?..i];
    let attr = |name: &str| -> Option<f64> {
        let a = tag.find(&format!(" {name}=\""))? + name.len() + 3;
        tag[a..].split('"').next()?.parse().ok()
    };
    Some((attr("x")?, attr("y")?))
}

/// The vertical polylines of an SVG in `stroke`: (x, y from, y to).
fn vertical_lines(svg: &str, stroke: &str) -> Vec<(f64, f64, f64)> {
    svg.lines()
        .filter(|l| l.starts_with("<polyline") && l.contains(&format!("stroke=\"{stroke}\"")))
        .filter_map(|l| {
            let pts = l.split("points=\"").nth(1)?.split('"').next()?;
            let p: Vec<(f64, f64)> = pts
                .split_whitespace()
                .filter_map(|xy| {
                    let (x, y) = xy.split_once(',')?;
                    Some((x.parse().ok()?, y.parse().ok()?))
                })
                .collect();
            (p.len() == 2 && p[0].0 == p[1].0 && p[0].1 != p[1].1)
                .then(|| (p[0].0, p[0].1.min(p[1].1), p[0].1.max(p[1].1)))
        })
        .collect()
}

fn tornado_fixture() -> tornado::Tornado {
    use tornado::{Bar, End, Panel, Tornado};
    let end = |v: &str, r: f64| {
        Some(End {
            value: v.into(),
            ratio: r,
        })
    };
    let bar = |k: &str, down, up| Bar {
        key: k.into(),
        down,
        up,
    };
    Tornado {
        hardware: "Test GPU + test NIC".into(),
        delta: 0.25,
        threshold: 0.05,
        panels: vec![Panel {
            comparison: "SYS write_imm vs staged".into(),
            metric: super::data::Metric::Bandwidth,
            size: 1 << 30,
            base: 1.2,
            // Given in no particular order: the chart sorts them.
            bars: vec![
                bar("x.mid_bytes", end("3 B", 1.1), end("5 B", 1.35)),
                bar("x.small_ns", end("1 ns", 1.19), end("2 ns", 1.21)),
                bar("x.big_window", end("96", 0.8), end("160", 1.5)),
                bar("x.one_sided_ns", None, end("9 ns", 1.6)),
            ],
        }],
    }
}

/// The tornado chart: one bar per estimate that moves the ratio by the threshold, widest at
/// the top; the one under it left out; the bar that crosses 1x (and only it) marked as a flip,
/// with its outline across the solid 1x line, which is labelled "1×"; the base line labelled.
#[test]
fn tornado_sorts_bars_by_span_and_marks_the_ones_across_1x() {
    let t = tornado_fixture();
    let svg = tornado::render_svg(&t, (1600, 1000)).unwrap();
    check_well_formed(&svg).unwrap();
    assert!(svg.contains(tornado::TITLE) && svg.contains("Test GPU + test NIC"));
    let y = |k: &str| text_at(&svg, k).map(|p| p.1);
    let (big, one, mid) = (
        y("x.big_window (flips)").expect("the flipping bar, marked"),
        y("x.one_sided_ns").expect("a bar with one variant"),
        y("x.mid_bytes").expect("the narrowest bar shown"),
    );
    assert!(big < one && one < mid, "widest first: {big} {one} {mid}");
    assert!(y("x.small_ns").is_none() && !svg.contains("x.small_ns"));
    assert!(y("x.big_window").is_none() && y("x.mid_bytes (flips)").is_none());
    // Ends: each variant's value and ratio, on its side of the base.
    let (down, up) = (
        text_at(&svg, "96: 0.8×").unwrap(),
        text_at(&svg, "160: 1.5×").unwrap(),
    );
    assert!(down.0 < up.0 && (down.1 - big).abs() < 1.0);
    let (one_x, _) = text_at(&svg, "1×").expect("the 1x line's label");
    let (base_x, _) = text_at(&svg, "base 1.2×").expect("the base line's label");
    assert!(one_x < base_x);
    let ink = vertical_lines(&svg, "#1E1E1E");
    let line = ink
        .iter()
        .find(|l| (l.0 - one_x).abs() < 1.0)
        .unwrap_or_else(|| panic!("a solid line at 1× (x = {one_x}): {ink:?}"));
    assert!(line.1 < big && line.2 > mid, "it spans the bars: {line:?}");
    // The flip's outline: an unfilled ink rectangle on its row, across the 1x line.
    let outlined = svg.lines().filter(|l| {
        l.starts_with("<rect") && l.contains("stroke=\"#1E1E1E\"") && l.contains("fill=\"none\"")
    });
    let rects: Vec<(f64, f64, f64, f64)> = outlined
        .filter_map(|l| {
            let a = |n: &str| -> Option<f64> {
                l.split(&format!(" {n}=\""))
                    .nth(1)?
                    .split('"')
                    .next()?
                    .parse()
                    .ok()
            };
            Some((a("x")?, a("y")?, a("width")?, a("height")?))
        })
        .collect();
    assert_eq!(rects.len(), 1, "one flip outlined: {rects:?}");
    let (x, ry, w, h) = rects[0];
    assert!(
        x < one_x && x + w > one_x && ry < big && ry + h > big,
        "{rects:?}"
    );
    // PNG through the same code, of the asked size.
    let dir = tmp("tornado");
    std::fs::create_dir_all(&dir).unwrap();
    tornado::write(&dir.join("t.png"), &t, (800, 500)).unwrap();
    assert_eq!(
        png_size(&std::fs::read(dir.join("t.png")).unwrap()),
        (800, 500)
    );
    assert!(tornado::write(&dir.join("t.jpg"), &t, (800, 500)).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Nothing over the threshold: a message in place of panels, no bars.
#[test]
fn tornado_without_a_bar_over_the_threshold_says_so() {
    let mut t = tornado_fixture();
    t.threshold = 0.9;
    for b in &mut t.panels[0].bars {
        b.down = None;
        b.up = b.up.take().map(|mut e| {
            e.ratio = 1.25;
            e
        });
    }
    let svg = tornado::render_svg(&t, (1600, 1000)).unwrap();
    check_well_formed(&svg).unwrap();
    assert!(
        svg.contains("No estimate moves a headline ratio by 90%"),
        "{svg}"
    );
    assert!(!svg.contains("x.big_window"));
}

/// The grey rings of the bandwidth chart: circles stroked in the muted grey.
fn grey_rings(svg: &str) -> usize {
    svg.split("<circle")
        .skip(1)
        .filter(|e| {
            let e = &e[..e.find("/>").unwrap_or(e.len())];
            e.contains("stroke=\"#5F5F5F\"")
        })
        .count()
}

/// A point whose streaming run did not reach steady state gets a grey ring on the bandwidth
/// chart and the legend says what the ring means; steady points get none.
#[test]
fn bandwidth_points_not_at_steady_state_are_ringed() {
    register_fonts().unwrap();
    let (info, mut rows) = testdata::realistic();
    let render = |rows: &[Summary]| {
        let model = Model::new(&info, rows);
        let ctx = Ctx {
            model: &model,
            info: &info,
            th: Theme::new(1600, 1000),
        };
        render_svg(Kind::Bandwidth, &ctx).unwrap()
    };
    let plain = render(&rows);
    assert_eq!(grey_rings(&plain), 0);
    assert!(!plain.contains("Grey ring"));
    for r in rows.iter_mut().rev().take(3) {
        r.steady = false;
    }
    let svg = render(&rows);
    check_well_formed(&svg).unwrap();
    assert_eq!(grey_rings(&svg), 3);
    assert!(svg.contains("Grey ring: not steady"));
}

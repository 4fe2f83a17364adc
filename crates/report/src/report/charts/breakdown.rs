//! `breakdown`: where the one-way latency goes, stage by stage, at a few message sizes.
//!
//! Layout choice: **one panel per size, each with its own linear time axis**, and horizontal
//! stacked bars (one per scenario x path) whose segments are the stages' exclusive critical-path
//! shares in pipeline order. A bar's length is therefore exactly the noise-free one-way latency
//! (printed at its end). Why not one shared axis: an 8 B message takes microseconds and a 16 MiB
//! one milliseconds, so on a shared linear axis the small bars vanish, and on a log axis stacked
//! segments lose their meaning (a segment's length would no longer be its time). Why not
//! normalised 100 % bars: they hide the absolute cost that a design review asks about. Separate
//! linear panels keep both readable; segments wide enough carry their stage name and share of the
//! bar, and the legend lists the stages that occur. Panels are stacked top to bottom, or set side
//! by side when there are too many bars for the height.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::data::{Series, fmt_us, nearest_size};
use super::style::{self, ChartSpec, Legend, PlotResult, text_size};
use super::{Ctx, Kind};
use crate::record::Stage;
use crate::stats::Summary;
use crate::units::{fmt_bytes, ps_to_us};

/// One colour per stage, colour-blind safe (Okabe-Ito plus Paul Tol's muted scheme), chosen so
/// neighbours in pipeline order differ strongly in hue or lightness.
pub fn stage_color(stage: Stage) -> RGBColor {
    match stage {
        Stage::Register => RGBColor(187, 187, 187),
        Stage::MemcpyD2h => RGBColor(230, 159, 0),
        Stage::GdrcopyRead => RGBColor(240, 228, 66),
        Stage::Post => RGBColor(86, 180, 233),
        Stage::WqeFetch => RGBColor(51, 34, 136),
        Stage::ReadRequest => RGBColor(153, 153, 51),
        Stage::DmaRead => RGBColor(0, 158, 115),
        Stage::NicTx => RGBColor(136, 204, 238),
        Stage::Wire => RGBColor(0, 114, 178),
        Stage::NicRx => RGBColor(68, 170, 153),
        Stage::DmaWrite => RGBColor(17, 119, 51),
        Stage::Cqe => RGBColor(221, 204, 119),
        Stage::Poll => RGBColor(204, 121, 167),
        Stage::Flush => RGBColor(136, 34, 85),
        Stage::MemcpyH2d => RGBColor(213, 94, 0),
        Stage::GdrcopyWrite => RGBColor(102, 17, 0),
        Stage::MemcpyPeer => RGBColor(170, 68, 153),
        Stage::Relay => RGBColor(68, 119, 170),
        Stage::Reduce => RGBColor(204, 102, 119),
        Stage::Window => RGBColor(221, 221, 221),
        Stage::KernelStore => RGBColor(238, 153, 51),
        Stage::KernelLoad => RGBColor(187, 85, 102),
        Stage::P2p => RGBColor(51, 187, 238),
    }
}

/// The sizes to show: each requested size snapped to the nearest swept one, deduplicated,
/// ascending, with the requests that led to it. With no request: smallest, middle, largest.
pub fn breakdown_sizes(requested: &[u64], swept: &[u64]) -> Vec<(u64, Vec<u64>)> {
    let mut out: Vec<(u64, Vec<u64>)> = Vec::new();
    let defaults;
    let requested = if requested.is_empty() && !swept.is_empty() {
        defaults = [swept[0], swept[swept.len() / 2], swept[swept.len() - 1]];
        &defaults[..]
    } else {
        requested
    };
    for &want in requested {
        let Some(got) = nearest_size(swept, want) else {
            continue;
        };
        match out.iter_mut().find(|(s, _)| *s == got) {
            Some((_, reqs)) => reqs.push(want),
            None => out.push((got, vec![want])),
        }
    }
    out.sort_by_key(|(s, _)| *s);
    out
}

/// A bar row: its label and series. Side by side, every panel has the same rows (a series with
/// no result at a panel's size leaves its row empty there), so one label column serves all.
struct BarRow<'a> {
    label: String,
    series: &'a Series<'a>,
}

/// The rows of the series that have a result at any of `sizes`, in the model's order.
fn bar_rows<'a>(ctx: &'a Ctx, sizes: &[u64]) -> Vec<BarRow<'a>> {
    let m = ctx.model;
    m.series
        .iter()
        .filter(|s| sizes.iter().any(|z| s.at(*z).is_some()))
        .map(|s| BarRow {
            label: m.label(s),
            series: s,
        })
        .collect()
}

/// Panels stacked top to bottom while they hold this many bars in all; more, and they are set
/// side by side (each panel then has the whole height for its bars).
const STACK_AT_MOST: usize = 30;

/// The bar labels' font size (base, at 1600x1000) for `k` bar slots in a panel `ph` pixels
/// tall: it shrinks with the bar pitch so a crowded panel never overlaps its labels.
fn label_base(th: &style::Theme, ph: u32, k: usize) -> f64 {
    let pitch = (ph as f64 * 0.62) / k as f64;
    (pitch * 0.62 / th.s).clamp(8.0, style::fs::TICK)
}

/// The widest label (text and swatch) of `rows` in the font for `base`, plus its padding.
fn label_space(th: &style::Theme, base: f64, rows: &[BarRow]) -> i32 {
    let font = th.font(base);
    let swatch = th.fs(base) as i32 * 3 / 4;
    let w = rows
        .iter()
        .map(|r| text_size(&font, &r.label).0)
        .max()
        .unwrap_or(0);
    w + swatch + th.px(26.0)
}

pub fn draw<DB: DrawingBackend>(root: &style::Area<DB>, ctx: &Ctx) -> Result<()> {
    let (m, th) = (ctx.model, &ctx.th);
    let sizes = breakdown_sizes(&ctx.info.output.breakdown_sizes, &m.sizes);
    let used: Vec<Stage> = Stage::ALL
        .into_iter()
        .filter(|st| {
            sizes.iter().any(|(size, _)| {
                m.series
                    .iter()
                    .filter_map(|s| s.at(*size))
                    .any(|r| r.stages.iter().any(|x| x.stage == *st && x.critical_ps > 0))
            })
        })
        .collect();
    let mut legend = vec![Legend::Head("Stage (pipeline order)".into())];
    for st in &used {
        let c = stage_color(*st);
        legend.push(Legend::Boxed(c.to_rgba(), c, st.name().into()));
    }
    legend.push(Legend::Gap);
    legend.push(Legend::Head("Scenario (swatch)".into()));
    for (i, s) in m.scenarios.iter().enumerate() {
        legend.push(Legend::Color(style::scenario_color(i), s.name.clone()));
    }
    legend.push(Legend::Gap);
    // A workload's bar is its critical chain across flows, its length the completion time.
    let workloads = m
        .series
        .iter()
        .any(|s| s.rows.iter().any(|r| r.workload_ps.is_some()));
    let (note, subtitle) = if workloads {
        (
            "Each segment is the stage's exclusive share of the critical path; a bar's length is the noise-free one-way latency, \
             or a workload's completion time (its critical chain across flows, chain.csv). Each panel has its own time scale.",
            "Critical path of one noise-free message (a workload: its chain of messages across flows) per scenario and path, split by stage.",
        )
    } else {
        (
            "Each segment is the stage's exclusive share of the critical path; a bar's length is the noise-free one-way latency. \
             Each panel has its own time scale.",
            "Critical path of one noise-free message per scenario and path, split by stage, at selected message sizes.",
        )
    };
    legend.push(Legend::Note(note.into()));
    let plot = super::frame(
        root,
        ctx,
        &ctx.title(super::title(Kind::Breakdown)),
        subtitle,
        &legend,
    )?;
    let at: Vec<u64> = sizes.iter().map(|(s, _)| *s).collect();
    let nbars: usize = at.iter().map(|z| bar_rows(ctx, &[*z]).len()).sum();
    if sizes.is_empty() || nbars == 0 {
        return style::message(&plot, th, "No results with a stage breakdown to plot.");
    }
    let n = sizes.len();
    if nbars <= STACK_AT_MOST {
        // Top to bottom, full width: each panel its bars and its own labels.
        for (panel, (size, reqs)) in plot.split_evenly((n, 1)).iter().zip(&sizes) {
            let rows = bar_rows(ctx, &[*size]);
            let (pw, ph) = panel.dim_in_pixel();
            let base = label_base(th, ph, rows.len().max(5));
            let space = label_space(th, base, &rows).min(pw as i32 / 2);
            let caption = caption(th, *size, reqs, pw as i32);
            let geo = Geometry {
                base,
                y_space: space,
                labels: true,
            };
            draw_panel(root, panel, ctx, *size, &caption, &rows, &geo)?;
        }
        return Ok(());
    }
    // Side by side: the labels once, in a column at the left that every panel's rows line up
    // with, so long scenario names cost their width once rather than once per panel.
    let rows = bar_rows(ctx, &at);
    let (pw, ph) = plot.dim_in_pixel();
    let base = label_base(th, ph, rows.len().max(5));
    let space = label_space(th, base, &rows).min(pw as i32 * 45 / 100);
    let pad = th.px(14.0);
    let (_, panels) = plot.split_horizontally(space - pad);
    for (i, (panel, (size, reqs))) in panels.split_evenly((1, n)).iter().zip(&sizes).enumerate() {
        let (w, _) = panel.dim_in_pixel();
        let caption = caption(th, *size, reqs, w as i32);
        let geo = Geometry {
            base,
            y_space: pad,
            labels: i == 0,
        };
        draw_panel(root, panel, ctx, *size, &caption, &rows, &geo)?;
    }
    Ok(())
}

/// "16 MiB message (nearest swept size to 10 MiB)", shortened until it fits `width` pixels.
fn caption(th: &style::Theme, size: u64, reqs: &[u64], width: i32) -> String {
    let asked: Vec<String> = reqs
        .iter()
        .filter(|r| **r != size)
        .map(|r| fmt_bytes(*r))
        .collect();
    let mut options = Vec::new();
    if !asked.is_empty() {
        options.push(format!(
            "{} message (nearest swept size to {})",
            fmt_bytes(size),
            asked.join(", ")
        ));
        options.push(format!("{} (asked {})", fmt_bytes(size), asked.join(", ")));
    }
    options.push(format!("{} message", fmt_bytes(size)));
    options.push(fmt_bytes(size));
    let font = th.bold(style::fs::PANEL);
    let last = options.len() - 1;
    options
        .iter()
        .position(|t| text_size(&font, t).0 <= width)
        .map_or(options[last].clone(), |i| options[i].clone())
}

/// How a panel draws its rows: the labels' font size (base), the room left of its axis, and
/// whether it draws the labels (there) at all.
struct Geometry {
    base: f64,
    y_space: i32,
    labels: bool,
}

fn draw_panel<DB: DrawingBackend>(
    root: &style::Area<DB>,
    panel: &style::Area<DB>,
    ctx: &Ctx,
    size: u64,
    caption: &str,
    rows: &[BarRow],
    geo: &Geometry,
) -> Result<()> {
    let th = &ctx.th;
    // Room for at least five bars, so one or two bars stay bar-shaped; bars sit at the top.
    let k = rows.len().max(5);
    let (pw, _) = panel.dim_in_pixel();
    let font = th.font(geo.base);
    let swatch = th.fs(geo.base) as i32 * 3 / 4;
    let totals: Vec<Option<(&Summary, u64)>> = rows
        .iter()
        .map(|b| {
            b.series.at(size).map(|r| {
                let sum: u64 = r.stages.iter().map(|s| s.critical_ps).sum();
                (r, if sum > 0 { sum } else { r.lat_model_ps })
            })
        })
        .collect();
    let max_us = totals
        .iter()
        .flatten()
        .map(|(_, t)| ps_to_us(*t))
        .fold(0.0, f64::max);
    // Headroom for the value printed after the longest bar, so it stays inside the panel.
    let data_w = (pw as i32 - geo.y_space - th.px(32.0)).max(1) as f64;
    let value_w = totals
        .iter()
        .flatten()
        .map(|(_, t)| text_size(&font, &fmt_us(ps_to_us(*t))).0)
        .max()
        .unwrap_or(0) as f64
        + th.px(12.0) as f64;
    let headroom = (value_w / (data_w - value_w).max(data_w / 3.0)).max(0.16);
    let x = style::linear_axis(
        max_us,
        ((pw as i32 - geo.y_space) / th.px(120.0)).clamp(3, 10) as usize,
        headroom,
    );
    let y = style::Axis {
        range: -0.6..(k as f64 - 0.4),
        bold: vec![],
        light: vec![],
    };
    let spec = ChartSpec {
        x,
        y,
        x_desc: "critical-path time",
        y_desc: "",
        x_fmt: &|v| if *v == 0.0 { "0".into() } else { fmt_us(*v) },
        y_fmt: &|_| String::new(),
        caption: Some(caption),
        y_label_space: Some(geo.y_space),
    };
    let chart = style::build_chart(panel, th, &spec)?;
    let half = 0.34;
    let seg_font = th.font((geo.base - 1.0).max(8.0));
    // Stage names inside segments only where the bar is taller than the text.
    let bar_px = (chart.backend_coord(&(0.0, -half)).1 - chart.backend_coord(&(0.0, half)).1).abs();
    let seg_labels = bar_px >= text_size(&seg_font, "Ag").1 + 2;
    for (i, (bar, total)) in rows.iter().zip(&totals).enumerate() {
        let yc = (k - 1 - i) as f64;
        if let Some((row, total)) = total {
            let total_us = ps_to_us(*total);
            draw_bar(root, &chart, th, row, yc, total_us, &seg_font, seg_labels)?;
            let (ex, ey) = chart.backend_coord(&(total_us, yc));
            let tstyle = font
                .color(&style::INK)
                .pos(Pos::new(HPos::Left, VPos::Center));
            root.draw_text(&fmt_us(total_us), &tstyle, (ex + th.px(8.0), ey))
                .plot()?;
        }
        if !geo.labels {
            continue;
        }
        // The bar's label with its scenario's colour swatch, right-aligned against the axis.
        let (ax, ey) = chart.backend_coord(&(0.0, yc));
        let lstyle = font
            .color(&style::INK)
            .pos(Pos::new(HPos::Right, VPos::Center));
        let tx = ax - th.px(10.0);
        // Cut (with an ellipsis) only where a label would run off the image.
        let label = style::fit(
            &font,
            &bar.label,
            (tx - swatch - th.px(16.0)).max(th.px(40.0)),
        );
        root.draw_text(&label, &lstyle, (tx, ey)).plot()?;
        let sx = tx - text_size(&font, &label).0 - th.px(6.0);
        let c = style::scenario_color(bar.series.scenario);
        root.draw(&Rectangle::new(
            [(sx - swatch, ey - swatch / 2), (sx, ey + swatch / 2)],
            c.filled(),
        ))
        .plot()?;
    }
    Ok(())
}

/// One stacked bar at row `yc`: its stages' exclusive shares in pipeline order, each segment
/// named (with its share when it fits) where the bar is tall and the segment wide enough.
#[allow(clippy::too_many_arguments)]
fn draw_bar<DB: DrawingBackend>(
    root: &style::Area<DB>,
    chart: &ChartContext<'_, DB, style::Coord>,
    th: &style::Theme,
    row: &Summary,
    yc: f64,
    total_us: f64,
    seg_font: &FontDesc,
    seg_labels: bool,
) -> Result<()> {
    let pa = chart.plotting_area();
    let half = 0.34;
    let mut cum = 0.0;
    let stages: Vec<_> = row.stages.iter().filter(|s| s.critical_ps > 0).collect();
    if stages.is_empty() && total_us > 0.0 {
        let c = style::GRID_BOLD;
        pa.draw(&Rectangle::new(
            [(0.0, yc - half), (total_us, yc + half)],
            c.filled(),
        ))
        .plot()?;
    }
    for st in stages {
        let v = ps_to_us(st.critical_ps);
        let c = stage_color(st.stage);
        let rect = [(cum, yc - half), (cum + v, yc + half)];
        pa.draw(&Rectangle::new(rect, c.filled())).plot()?;
        pa.draw(&Rectangle::new(rect, WHITE.stroke_width(1)))
            .plot()?;
        let (a, b) = (
            chart.backend_coord(&(cum, yc)),
            chart.backend_coord(&(cum + v, yc)),
        );
        let pct = if total_us > 0.0 {
            100.0 * v / total_us
        } else {
            0.0
        };
        let long = format!("{} {:.0}%", st.stage.name(), pct);
        let room = b.0 - a.0 - th.px(8.0);
        let text = [long, st.stage.name().to_string()]
            .into_iter()
            .find(|t| seg_labels && text_size(seg_font, t).0 <= room);
        if let Some(t) = text {
            let style = seg_font
                .clone()
                .color(&style::text_on(&c))
                .pos(Pos::new(HPos::Center, VPos::Center));
            root.draw_text(&t, &style, ((a.0 + b.0) / 2, a.1)).plot()?;
        }
        cum += v;
    }
    Ok(())
}

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
    }
}

/// Dark text on light fills, white on dark ones.
fn text_on(c: &RGBColor) -> RGBColor {
    let l = 0.299 * c.0 as f64 + 0.587 * c.1 as f64 + 0.114 * c.2 as f64;
    if l > 140.0 { style::INK } else { WHITE }
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

/// The bars of one panel: (label, scenario index, row).
fn bars<'a>(ctx: &'a Ctx, size: u64) -> Vec<(String, &'a Series<'a>, &'a Summary)> {
    let m = ctx.model;
    m.series
        .iter()
        .filter_map(|s| s.at(size).map(|r| (m.label(s), s, r)))
        .collect()
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
        &ctx.title(Kind::Breakdown.title()),
        subtitle,
        &legend,
    )?;
    let nbars: usize = sizes.iter().map(|(s, _)| bars(ctx, *s).len()).sum();
    if sizes.is_empty() || nbars == 0 {
        return style::message(&plot, th, "No results with a stage breakdown to plot.");
    }
    let n = sizes.len();
    let panels = if nbars <= 30 {
        plot.split_evenly((n, 1))
    } else {
        plot.split_evenly((1, n))
    };
    for (panel, (size, reqs)) in panels.iter().zip(&sizes) {
        let caption = if reqs.iter().all(|r| r == size) {
            format!("{} message", fmt_bytes(*size))
        } else {
            let asked: Vec<String> = reqs
                .iter()
                .filter(|r| *r != size)
                .map(|r| fmt_bytes(*r))
                .collect();
            format!(
                "{} message (nearest swept size to {})",
                fmt_bytes(*size),
                asked.join(", ")
            )
        };
        draw_panel(root, panel, ctx, *size, &caption)?;
    }
    Ok(())
}

fn draw_panel<DB: DrawingBackend>(
    root: &style::Area<DB>,
    panel: &style::Area<DB>,
    ctx: &Ctx,
    size: u64,
    caption: &str,
) -> Result<()> {
    let th = &ctx.th;
    let bars = bars(ctx, size);
    // Room for at least five bars, so one or two bars stay bar-shaped; bars sit at the top.
    let k = bars.len().max(5);
    let (pw, ph) = panel.dim_in_pixel();
    // Bar labels shrink with the bar pitch so a crowded panel never overlaps its labels.
    let pitch = (ph as f64 * 0.62) / k as f64;
    let label_base = (pitch * 0.62 / th.s).clamp(8.0, style::fs::TICK);
    let font = th.font(label_base);
    let swatch = th.fs(label_base) as i32 * 3 / 4;
    let label_w = bars
        .iter()
        .map(|(l, _, _)| text_size(&font, l).0)
        .max()
        .unwrap_or(0);
    let y_space = label_w + swatch + th.px(26.0);

    let totals: Vec<u64> = bars
        .iter()
        .map(|(_, _, r)| {
            let sum: u64 = r.stages.iter().map(|s| s.critical_ps).sum();
            if sum > 0 { sum } else { r.lat_model_ps }
        })
        .collect();
    let max_us = totals.iter().map(|t| ps_to_us(*t)).fold(0.0, f64::max);
    let x = style::linear_axis(
        max_us,
        ((pw as i32 - y_space) / th.px(120.0)).clamp(2, 10) as usize,
        0.16,
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
        y_label_space: Some(y_space),
    };
    let chart = style::build_chart(panel, th, &spec)?;
    let pa = chart.plotting_area();
    let half = 0.34;
    let seg_font = th.font((label_base - 1.0).max(8.0));
    // Stage names inside segments only where the bar is taller than the text.
    let bar_px = (chart.backend_coord(&(0.0, -half)).1 - chart.backend_coord(&(0.0, half)).1).abs();
    let seg_labels = bar_px >= text_size(&seg_font, "Ag").1 + 2;
    for (i, ((label, series, row), total)) in bars.iter().zip(&totals).enumerate() {
        let yc = (k - 1 - i) as f64;
        let total_us = ps_to_us(*total);
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
                .find(|t| seg_labels && text_size(&seg_font, t).0 <= room);
            if let Some(t) = text {
                let style = seg_font
                    .color(&text_on(&c))
                    .pos(Pos::new(HPos::Center, VPos::Center));
                root.draw_text(&t, &style, ((a.0 + b.0) / 2, a.1)).plot()?;
            }
            cum += v;
        }
        let (ex, ey) = chart.backend_coord(&(total_us, yc));
        let tstyle = font
            .color(&style::INK)
            .pos(Pos::new(HPos::Left, VPos::Center));
        root.draw_text(&fmt_us(total_us), &tstyle, (ex + th.px(8.0), ey))
            .plot()?;
        // The bar's label with its scenario's colour swatch, right-aligned against the axis.
        let (ax, _) = chart.backend_coord(&(0.0, yc));
        let lstyle = font
            .color(&style::INK)
            .pos(Pos::new(HPos::Right, VPos::Center));
        let tx = ax - th.px(10.0);
        root.draw_text(label, &lstyle, (tx, ey)).plot()?;
        let sx = tx - text_size(&font, label).0 - th.px(6.0);
        let c = style::scenario_color(series.scenario);
        root.draw(&Rectangle::new(
            [(sx - swatch, ey - swatch / 2), (sx, ey + swatch / 2)],
            c.filled(),
        ))
        .plot()?;
    }
    Ok(())
}

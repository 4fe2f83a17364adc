//! `scenarios`: the scenarios (GPU-NIC placements: PIX, PHB, SYS...) side by side at one message
//! size, latency on the left and bandwidth on the right.
//!
//! Bars are horizontal and grouped by path, with the scenarios adjacent inside each group, because
//! the question this chart answers is "what does placement cost for a given path": the bars to
//! compare are next to each other and share the scenario colours of every other chart. Values are
//! printed at the bar ends; on the bandwidth side a dashed tick marks each scenario's GPUDirect route ceiling.

use crate::config::PathKind;
use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::data::{fmt_us, sig3};
use super::style::{self, ChartSpec, Dash, Legend, PlotResult, text_size};
use super::{Ctx, Kind};
use crate::stats::Summary;
use crate::units::fmt_bytes;

/// One bar: its slot from the top, the scenario, its label and row.
struct Bar<'a> {
    slot: usize,
    scenario: usize,
    label: String,
    row: &'a Summary,
}

/// A path group: its name and the slots it spans.
struct Group {
    name: String,
    first: usize,
    last: usize,
}

pub fn draw<DB: DrawingBackend>(root: &style::Area<DB>, ctx: &Ctx) -> Result<()> {
    let (m, th) = (ctx.model, &ctx.th);
    let size = m.nearest_size(ctx.info.output.compare_size);
    let mut bars: Vec<Bar> = Vec::new();
    let mut groups: Vec<Group> = Vec::new();
    let mut slot = 0;
    for (pi, path) in m.paths.iter().enumerate() {
        let first = slot;
        for s in m.series.iter().filter(|s| s.path == pi) {
            let Some(row) = size.and_then(|z| s.at(z)) else {
                continue;
            };
            let mut label = m.scenarios[s.scenario].name.clone();
            if m.multi_op() {
                label.push_str(&format!(" {}", m.ops[s.op]));
            }
            if let Some(f) = &s.fallback {
                label.push_str(&format!(" (ran {f})"));
            }
            bars.push(Bar {
                slot,
                scenario: s.scenario,
                label,
                row,
            });
            slot += 1;
        }
        if slot > first {
            groups.push(Group {
                name: path.to_string(),
                first,
                last: slot - 1,
            });
            slot += 1; // a blank slot between groups
        }
    }
    // The axis has room for at least six bars so a lone bar does not fill the panel; bars sit at
    // the top.
    let nslots = slot.saturating_sub(1).max(6);

    let mut legend = style::series_legend(m, false);
    let has_ceiling = m
        .scenarios
        .iter()
        .any(|s| s.info.is_some_and(|i| i.ceiling_gbps > 0.0));
    if has_ceiling {
        legend.push(Legend::Gap);
        legend.push(Legend::Line(
            style::INK,
            Dash::Dashed,
            None,
            "route ceiling".into(),
        ));
    }
    legend.push(Legend::Gap);
    legend.push(Legend::Note(
        "Bars grouped by path; scenarios side by side within each group.".into(),
    ));
    let what = match size {
        Some(z) => format!("{} at {}", super::title(Kind::Scenarios), fmt_bytes(z)),
        None => super::title(Kind::Scenarios).to_string(),
    };
    let subtitle = match size {
        Some(z) if z != ctx.info.output.compare_size => format!(
            "p50 one-way latency and streaming bandwidth per scenario and path; {} is the swept size nearest to the requested {}.",
            fmt_bytes(z),
            fmt_bytes(ctx.info.output.compare_size)
        ),
        _ => "p50 one-way latency and streaming bandwidth per scenario and path.".to_string(),
    };
    let plot = super::frame(root, ctx, &ctx.title(&what), &subtitle, &legend)?;
    if bars.is_empty() {
        return style::message(&plot, th, "No results to compare.");
    }

    let (pw, ph) = plot.dim_in_pixel();
    let panels = plot.split_evenly((1, 2));
    let pitch = (ph as f64 * 0.75) / nslots as f64;
    let label_base = (pitch * 0.5 / th.s).clamp(8.0, style::fs::TICK);
    let font = th.font(label_base);
    let gfont = th.bold(label_base);
    let swatch = th.fs(label_base) as i32 * 3 / 4;
    let group_w = groups
        .iter()
        .map(|g| text_size(&gfont, &g.name).0)
        .max()
        .unwrap_or(0);
    let bar_w = bars
        .iter()
        .map(|b| text_size(&font, &b.label).0)
        .max()
        .unwrap_or(0);
    let y_space = group_w + bar_w + swatch + th.px(40.0);
    let max_labels = ((pw as i32 / 2 - y_space) / th.px(85.0)).clamp(2, 8) as usize;

    for (pi, panel) in panels.iter().enumerate() {
        let latency = pi == 0;
        let value = |r: &Summary| if latency { r.lat.p50_us } else { r.bw_gbps };
        // The ceiling is that of the GPU-to-GPU (GPUDirect) route; other paths take other routes.
        let ceiling = |b: &Bar| {
            if b.row.path != PathKind::GpuDirect {
                return 0.0;
            }
            m.scenarios[b.scenario].info.map_or(0.0, |i| i.ceiling_gbps)
        };
        let mut top = bars
            .iter()
            .map(|b| value(b.row))
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        if !latency {
            top = bars
                .iter()
                .map(ceiling)
                .filter(|v| v.is_finite())
                .fold(top, f64::max);
        }
        let x = style::linear_axis(top, max_labels, 0.22);
        let y = style::Axis {
            range: -0.6..(nslots as f64 - 0.4),
            bold: vec![],
            light: vec![],
        };
        let fmt_lat = |v: &f64| if *v == 0.0 { "0".into() } else { fmt_us(*v) };
        let fmt_bw = |v: &f64| sig3(*v);
        let spec = ChartSpec {
            x,
            y,
            x_desc: if latency {
                "one-way latency, p50"
            } else {
                "bandwidth (GB/s)"
            },
            y_desc: "",
            x_fmt: if latency { &fmt_lat } else { &fmt_bw },
            y_fmt: &|_| String::new(),
            caption: Some(if latency {
                "Latency (shorter is better)"
            } else {
                "Bandwidth (longer is better)"
            }),
            y_label_space: Some(y_space),
        };
        let chart = style::build_chart(panel, th, &spec)?;
        let pa = chart.plotting_area();
        let yc = |slot: usize| (nslots - 1 - slot) as f64;
        let half = 0.38;
        for b in &bars {
            let c = style::scenario_color(b.scenario);
            let v = value(b.row);
            let v = if v.is_finite() { v.max(0.0) } else { 0.0 };
            let y = yc(b.slot);
            pa.draw(&Rectangle::new(
                [(0.0, y - half), (v, y + half)],
                c.filled(),
            ))
            .plot()?;
            if !latency && ceiling(b) > 0.0 {
                let cl = ceiling(b);
                style::draw_path(
                    pa,
                    vec![(cl, y - 0.5), (cl, y + 0.5)],
                    &style::INK,
                    Dash::Dashed,
                    th.stroke(2.0),
                    th,
                )?;
            }
            let (ex, ey) = chart.backend_coord(&(v, y));
            let text = if latency {
                fmt_us(v)
            } else {
                format!("{} GB/s", sig3(v))
            };
            let st = font
                .color(&style::INK)
                .pos(Pos::new(HPos::Left, VPos::Center));
            // Past the ceiling tick when the text would run into it.
            let mut tx0 = ex + th.px(8.0);
            if !latency && ceiling(b) > 0.0 {
                let (cx, _) = chart.backend_coord(&(ceiling(b), y));
                if cx >= ex - th.px(4.0) && cx <= tx0 + text_size(&font, &text).0 + th.px(4.0) {
                    tx0 = cx.max(ex) + th.px(8.0);
                }
            }
            root.draw_text(&text, &st, (tx0, ey)).plot()?;
            // Scenario label with swatch, right-aligned against the axis.
            let (ax, _) = chart.backend_coord(&(0.0, y));
            let tx = ax - th.px(10.0);
            let lst = font
                .color(&style::INK)
                .pos(Pos::new(HPos::Right, VPos::Center));
            root.draw_text(&b.label, &lst, (tx, ey)).plot()?;
            let sx = tx - text_size(&font, &b.label).0 - th.px(6.0);
            root.draw(&Rectangle::new(
                [(sx - swatch, ey - swatch / 2), (sx, ey + swatch / 2)],
                c.filled(),
            ))
            .plot()?;
        }
        // Path group names at the left edge of the label area, centred on their group.
        for g in &groups {
            let (ax, y0) = chart.backend_coord(&(0.0, yc(g.first)));
            let (_, y1) = chart.backend_coord(&(0.0, yc(g.last)));
            let gx = ax - y_space + th.px(6.0);
            let st = gfont
                .color(&style::INK)
                .pos(Pos::new(HPos::Left, VPos::Center));
            root.draw_text(&g.name, &st, (gx, (y0 + y1) / 2)).plot()?;
        }
    }
    Ok(())
}

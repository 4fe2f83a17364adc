//! `bandwidth`: streaming bandwidth against message size (log x, linear y from 0).
//!
//! The y axis is linear because bandwidth is read as a fraction of a ceiling, and each scenario's
//! route ceiling is drawn as a dashed horizontal line in its colour with its label. Scenarios that
//! share a ceiling (same value and label) share one line, labelled with all their names, so equal
//! ceilings do not stack illegible labels on top of each other; labels of close ceilings are
//! pushed apart vertically.

use crate::config::PathKind;
use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::data::sig3;
use super::style::{self, ChartSpec, Dash, Legend, PlotResult};
use super::{Ctx, Kind};
use crate::report::overlay::Figure;

/// One dashed ceiling line and the scenarios it belongs to.
struct Ceiling {
    gbps: f64,
    label: String,
    scenarios: Vec<usize>,
}

/// The legend's note on the ring around a point whose streaming run did not reach steady state.
pub const NOT_STEADY_NOTE: &str = "Grey ring: not steady (its stream too short for the pipeline fill; more messages would raise it), kept out of the conclusions.";

pub fn draw<DB: DrawingBackend>(root: &style::Area<DB>, ctx: &Ctx) -> Result<()> {
    let (m, th) = (ctx.model, &ctx.th);
    let mut ceilings: Vec<Ceiling> = Vec::new();
    for (i, s) in m.scenarios.iter().enumerate() {
        let Some(info) = s.info else { continue };
        if !(info.ceiling_gbps > 0.0 && info.ceiling_gbps.is_finite()) {
            continue;
        }
        match ceilings
            .iter_mut()
            .find(|c| (c.gbps - info.ceiling_gbps).abs() < 1e-9 && c.label == info.ceiling_label)
        {
            Some(c) => c.scenarios.push(i),
            None => ceilings.push(Ceiling {
                gbps: info.ceiling_gbps,
                label: info.ceiling_label.clone(),
                scenarios: vec![i],
            }),
        }
    }

    let mut legend = style::series_legend(m, true);
    legend.extend(ctx.measured_legend(
        Figure::Bandwidth,
        "Hollow diamond, in its series' colour: perftest BW average in GB/s (MiB/s x 2^20 / 10⁹).",
    ));
    if !ceilings.is_empty() {
        legend.push(Legend::Gap);
        legend.push(Legend::Line(
            style::MUTED,
            Dash::Dashed,
            None,
            "route ceiling".into(),
        ));
    }
    if m.series.iter().any(|s| s.rows.iter().any(|r| !r.steady)) {
        legend.push(Legend::Gap);
        legend.push(Legend::Note(NOT_STEADY_NOTE.into()));
    }
    if let Some(note) = m.coincident_note(|r| r.bw_gbps) {
        legend.push(Legend::Gap);
        legend.push(Legend::Note(note));
    }
    legend.push(Legend::Gap);
    legend.push(Legend::Note("GB/s = 10⁹ bytes per second. Ceiling: the slowest link of the route, after protocol overhead.".into()));
    let subtitle = "Back-to-back messages: all bytes over first post to last delivery (perftest BW average). Dashed: each scenario's GPUDirect route ceiling (its slowest link).";
    let plot = super::frame(
        root,
        ctx,
        &ctx.title(super::title(Kind::Bandwidth)),
        subtitle,
        &legend,
    )?;
    if m.series.is_empty() {
        return style::message(&plot, th, "No bandwidth results to plot.");
    }

    let top = m
        .series
        .iter()
        .flat_map(|s| s.rows.iter().map(|r| r.bw_gbps))
        .chain(ceilings.iter().map(|c| c.gbps))
        .chain(ctx.measured_values(Figure::Bandwidth))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let facets = m.facets();
    for (facet, cell) in facets.iter().zip(super::facet_grid(&plot, facets.len())) {
        // The ceilings are those of the GPUDirect routes: drawn where GPUDirect lines are.
        let mine: Vec<&Ceiling> = match facet {
            Some(p) if m.paths[*p] != PathKind::GpuDirect => Vec::new(),
            _ => ceilings.iter().collect(),
        };
        panel(&cell, root, ctx, *facet, &mine, top)?;
    }
    Ok(())
}

/// One panel: the series of path `facet` (all when None), the given ceilings, a shared top.
fn panel<DB: DrawingBackend>(
    cell: &super::Facet<DB>,
    root: &style::Area<DB>,
    ctx: &Ctx,
    facet: Option<usize>,
    ceilings: &[&Ceiling],
    top: f64,
) -> Result<()> {
    let (m, th, plot) = (ctx.model, &ctx.th, &cell.area);
    let (pw, ph) = plot.dim_in_pixel();
    let x = style::size_axis(&m.sizes, (pw as i32 / th.px(100.0)).max(2) as usize);
    let y = style::linear_axis(top, (ph as i32 / th.px(70.0)).clamp(2, 12) as usize, 0.1);
    let spec = ChartSpec {
        x: x.clone(),
        y,
        x_desc: if cell.x_title {
            "message size (log scale)"
        } else {
            ""
        },
        y_desc: if cell.y_title { "bandwidth (GB/s)" } else { "" },
        x_fmt: &|v| style::size_label(*v),
        y_fmt: &|v| sig3(*v),
        caption: facet.map(|p| m.paths[p].name()),
        y_label_space: None,
    };
    let chart = style::build_chart(plot, th, &spec)?;
    let pa = chart.plotting_area();
    let (x0, x1) = (x.range.start, x.range.end);

    // Ceilings under the data, labels last (over everything).
    for c in ceilings {
        let color = if c.scenarios.len() == 1 {
            style::scenario_color(c.scenarios[0])
        } else {
            style::MUTED
        };
        style::draw_path(
            pa,
            vec![(x0, c.gbps), (x1, c.gbps)],
            &color,
            Dash::Dashed,
            th.stroke(2.0),
            th,
        )?;
    }
    let lx = |b: u64| (b.max(1) as f64).log2();
    for s in m
        .series
        .iter()
        .filter(|s| facet.is_none_or(|p| s.path == p))
    {
        let c = style::scenario_color(s.scenario);
        let ps = style::path_style(m.paths[s.path]);
        let pts: Vec<(f64, f64)> = s
            .rows
            .iter()
            .filter(|r| r.bw_gbps.is_finite())
            .map(|r| (lx(r.size_bytes), r.bw_gbps.max(0.0)))
            .collect();
        style::draw_path(
            pa,
            pts.clone(),
            &c,
            ps.dash,
            th.stroke(style::op_width(s.op)),
            th,
        )?;
        for p in pts {
            style::draw_marker(pa, p, ps.marker, &c, th)?;
        }
        for r in s.rows.iter().filter(|r| !r.steady && r.bw_gbps.is_finite()) {
            let at = (lx(r.size_bytes), r.bw_gbps.max(0.0));
            let ring = style::MUTED.stroke_width(th.stroke(2.0));
            pa.draw(&(EmptyElement::at(at) + Circle::new((0, 0), th.px(11.0), ring)))
                .plot()?;
        }
    }
    for s in m
        .series
        .iter()
        .filter(|s| facet.is_none_or(|p| s.path == p))
    {
        let c = style::scenario_color(s.scenario);
        for (size, v) in ctx.measured(s, Figure::Bandwidth) {
            style::draw_marker(pa, (lx(size), v), style::Marker::Measured, &c, th)?;
        }
    }

    // Labels just above their line at the left (where bandwidth is lowest and the area empty),
    // top to bottom, each pushed below the previous one if they would overlap.
    let mut order: Vec<&Ceiling> = ceilings.to_vec();
    order.sort_by(|a, b| b.gbps.total_cmp(&a.gbps));
    let lh = (th.fs(style::fs::NOTE) * 1.45) as i32;
    let left = chart.backend_coord(&(x0, 0.0)).0 + th.px(10.0);
    let mut prev_bottom = i32::MIN;
    for c in order {
        let names: Vec<&str> = c
            .scenarios
            .iter()
            .map(|&i| m.scenarios[i].name.as_str())
            .collect();
        let what = if c.label.is_empty() {
            format!("{} GB/s", sig3(c.gbps))
        } else {
            c.label.clone()
        };
        // The longest of these that fits in the panel (narrow when faceted).
        let room = chart.backend_coord(&(x1, 0.0)).0 - left - th.px(6.0);
        let font = th.font(style::fs::NOTE);
        let text = [
            format!("{} ceiling: {what}", names.join(", ")),
            format!("{}: {} GB/s", names.join(", "), sig3(c.gbps)),
            format!("{} GB/s", sig3(c.gbps)),
        ]
        .into_iter()
        .find(|t| style::text_size(&font, t).0 <= room)
        .unwrap_or_else(|| format!("{} GB/s", sig3(c.gbps)));
        let color = if c.scenarios.len() == 1 {
            style::scenario_color(c.scenarios[0])
        } else {
            style::INK
        };
        let line_y = chart.backend_coord(&(x0, c.gbps)).1;
        let bottom = (line_y - th.px(5.0)).max(prev_bottom + lh);
        style::boxed_label(
            root,
            th,
            &text,
            (left, bottom),
            Pos::new(HPos::Left, VPos::Bottom),
            &color,
            style::fs::NOTE,
        )?;
        prev_bottom = bottom;
    }
    Ok(())
}

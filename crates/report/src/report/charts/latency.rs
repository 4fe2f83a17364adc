//! `latency`: one-way p50 latency against message size on log-log axes.
//!
//! Each scenario x path is a line (colour = scenario, stroke and marker = path) with a translucent
//! band from the fastest iteration to the 99th percentile, so the spread the jitter model adds is
//! visible without a second chart. Bands are drawn first, lines over them, so no band hides a
//! line. A series with a single size gets an error bar instead of a (zero-width) band.

use anyhow::Result;
use plotters::prelude::*;

use super::style::{self, ChartSpec, Legend, PlotResult};
use super::{Ctx, Kind};
use crate::report::overlay::Figure;

pub fn draw<DB: DrawingBackend>(root: &style::Area<DB>, ctx: &Ctx) -> Result<()> {
    let (m, th) = (ctx.model, &ctx.th);
    let mut legend = style::series_legend(m, true);
    legend.extend(ctx.measured_legend(
        Figure::Latency,
        "Hollow diamond, in its series' colour: perftest t_typical (median; half a round trip \
         for Write and Send) against the model's one-way p50.",
    ));
    legend.push(Legend::Gap);
    legend.push(Legend::Note(
        "Line: median (p50). Shaded band: fastest iteration (min) to p99.".into(),
    ));
    let iters = iterations_note(ctx);
    let subtitle = format!(
        "One-way: source buffer ready on the sender until the data is visible to its consumer on the receiver. {iters}"
    );
    let plot = super::frame(
        root,
        ctx,
        &ctx.title(super::title(Kind::Latency)),
        &subtitle,
        &legend,
    )?;
    let rows: Vec<_> = m.series.iter().flat_map(|s| s.rows.iter()).collect();
    let vals = rows
        .iter()
        .flat_map(|r| [r.lat.min_us, r.lat.p50_us, r.lat.p99_us])
        .chain(ctx.measured_values(Figure::Latency))
        .filter(|v| *v > 0.0 && v.is_finite());
    let (lo, hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    if !lo.is_finite() {
        return style::message(&plot, th, "No latency results to plot.");
    }
    let facets = m.facets();
    for (facet, cell) in facets.iter().zip(super::facet_grid(&plot, facets.len())) {
        panel(&cell, ctx, *facet, (lo, hi))?;
    }
    Ok(())
}

/// One panel: the series of path `facet` (all when None) on a shared latency range.
fn panel<DB: DrawingBackend>(
    cell: &super::Facet<DB>,
    ctx: &Ctx,
    facet: Option<usize>,
    (lo, hi): (f64, f64),
) -> Result<()> {
    let (m, th, area) = (ctx.model, &ctx.th, &cell.area);
    let (pw, ph) = area.dim_in_pixel();
    let x = style::size_axis(&m.sizes, (pw as i32 / th.px(100.0)).max(2) as usize);
    let y = style::log_time_axis(lo, hi, (ph as i32 / th.px(48.0)).max(2) as usize);
    let spec = ChartSpec {
        x,
        y,
        x_desc: if cell.x_title {
            "message size (log scale)"
        } else {
            ""
        },
        y_desc: if cell.y_title {
            "one-way latency, p50 (log scale)"
        } else {
            ""
        },
        x_fmt: &|v| style::size_label(*v),
        y_fmt: &|v| style::log_time_label(*v),
        caption: facet.map(|p| m.paths[p].name()),
        y_label_space: None,
    };
    let chart = style::build_chart(area, th, &spec)?;
    let pa = chart.plotting_area();
    let lx = |b: u64| (b.max(1) as f64).log2();
    let ok = |v: f64| v > 0.0 && v.is_finite();
    let series: Vec<_> = m
        .series
        .iter()
        .filter(|s| facet.is_none_or(|p| s.path == p))
        .collect();

    for s in &series {
        let c = style::scenario_color(s.scenario);
        let pts: Vec<_> = s
            .rows
            .iter()
            .filter(|r| ok(r.lat.min_us) && ok(r.lat.p99_us))
            .collect();
        if pts.len() >= 2 {
            let mut poly: Vec<(f64, f64)> = pts
                .iter()
                .map(|r| (lx(r.size_bytes), r.lat.p99_us.log10()))
                .collect();
            poly.extend(
                pts.iter()
                    .rev()
                    .map(|r| (lx(r.size_bytes), r.lat.min_us.log10())),
            );
            pa.draw(&Polygon::new(poly, c.mix(0.13).filled())).plot()?;
        } else if let Some(r) = pts.first() {
            let (x, w) = (lx(r.size_bytes), th.px(7.0));
            let (a, b) = (r.lat.min_us.log10(), r.lat.p99_us.log10());
            let st = c.stroke_width(th.stroke(2.0));
            pa.draw(&PathElement::new(vec![(x, a), (x, b)], st))
                .plot()?;
            for y in [a, b] {
                pa.draw(&(EmptyElement::at((x, y)) + PathElement::new(vec![(-w, 0), (w, 0)], st)))
                    .plot()?;
            }
        }
    }
    for s in &series {
        let c = style::scenario_color(s.scenario);
        let ps = style::path_style(m.paths[s.path]);
        let pts: Vec<(f64, f64)> = s
            .rows
            .iter()
            .filter(|r| ok(r.lat.p50_us))
            .map(|r| (lx(r.size_bytes), r.lat.p50_us.log10()))
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
    }
    // Measured points over every line, so none hides one.
    for s in &series {
        let c = style::scenario_color(s.scenario);
        for (size, v) in ctx.measured(s, Figure::Latency) {
            style::draw_marker(pa, (lx(size), v.log10()), style::Marker::Measured, &c, th)?;
        }
    }
    Ok(())
}

/// "p50 over 1000 iterations per point." (or the range when points differ).
pub(super) fn iterations_note(ctx: &Ctx) -> String {
    let its = ctx
        .model
        .series
        .iter()
        .flat_map(|s| s.rows.iter().map(|r| r.iterations));
    match its.fold(None, |acc: Option<(u32, u32)>, n| {
        Some(acc.map_or((n, n), |(a, b)| (a.min(n), b.max(n))))
    }) {
        Some((a, b)) if a == b => format!("Statistics over {a} jittered iterations per point."),
        Some((a, b)) => format!("Statistics over {a} to {b} jittered iterations per point."),
        None => String::new(),
    }
}

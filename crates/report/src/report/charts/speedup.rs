//! `speedup`: GPUDirect over host-staged, per scenario, against message size.
//!
//! Two panels share the size axis: latency (staged p50 / GPUDirect p50) above, bandwidth
//! (GPUDirect / staged) below, so "above 1x" always means GPUDirect is better. The ratio axis is
//! logarithmic so 2x and 0.5x are the same distance from the 1x line. Every change of winner is
//! marked with a vertical line at the (log-log interpolated) crossover and a numbered tag at its
//! top; the legend lists the numbered sentences (the first swept size where the new winner
//! wins), as many as fit, so neither the plot nor the legend fills with prose when many
//! scenarios cross over. Markers at the swept sizes are drawn while the lines are few.

use crate::report::vocab::scenario_label;
use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::data::{BASELINES, Crossover, Metric, Speedup};
use super::style::{self, ChartSpec, Dash, Legend, PlotResult};
use super::{Ctx, Kind};

/// Lines per panel up to which every swept size gets a marker; above it the markers of ten
/// or more lines bury the lines themselves.
const MARKED_LINES: usize = 6;

pub fn draw<DB: DrawingBackend>(root: &style::Area<DB>, ctx: &Ctx) -> Result<()> {
    let (m, th) = (ctx.model, &ctx.th);
    let sp = m.speedups();
    let name = |s: &Speedup| m.speedup_name(s);
    // "staged_pipelined wins ... on SYS", not "... on SYS vs staged_pipelined": the winner
    // already names the comparison.
    let headline = |s: &Speedup, c: &Crossover| {
        if c.winner == s.baseline {
            let plain = Speedup {
                baseline: BASELINES[0],
                ..s.clone()
            };
            c.headline(&m.speedup_name(&plain))
        } else {
            c.headline(&name(s))
        }
    };
    // Dashed lines compare with the pipeline, solid ones with one cudaMemcpy per message.
    let dash = |s: &Speedup| {
        if s.baseline == BASELINES[0] {
            Dash::Solid
        } else {
            Dash::Dashed
        }
    };
    let pipelined = sp.iter().any(|s| s.baseline != BASELINES[0]);

    let mut legend = Vec::new();
    if !sp.is_empty() {
        legend.push(Legend::Head("Scenario (colour)".into()));
    }
    let mut seen = Vec::new();
    for s in &sp {
        if !seen.contains(&s.scenario) {
            seen.push(s.scenario);
            let sc = &m.scenarios[s.scenario];
            let label = scenario_label(&sc.name, sc.class);
            legend.push(Legend::Color(style::scenario_color(s.scenario), label));
        }
    }
    if m.multi_op() {
        legend.push(Legend::Gap);
        legend.push(Legend::Head("Op (line width)".into()));
        for (i, op) in m.ops.iter().enumerate() {
            legend.push(Legend::Stroke(style::op_width(i), op.to_string()));
        }
    }
    if pipelined {
        legend.push(Legend::Gap);
        legend.push(Legend::Head("Baseline (dash)".into()));
        legend.push(Legend::Line(
            style::INK,
            Dash::Solid,
            None,
            "staged (one cudaMemcpy)".into(),
        ));
        legend.push(Legend::Line(
            style::INK,
            Dash::Dashed,
            None,
            "staged_pipelined (chunks)".into(),
        ));
    }
    if !sp.is_empty() {
        legend.push(Legend::Gap);
        legend.push(Legend::Line(
            style::INK,
            Dash::Solid,
            None,
            "1× (equal)".into(),
        ));
        legend.push(Legend::Note("Above 1×: GPUDirect better. Latency: staged p50 / GPUDirect p50. Bandwidth: GPUDirect / staged.".into()));
    }
    // Numbered in reading order: the latency panel's, then the bandwidth panel's, left to
    // right.
    let mut crossings = Vec::new();
    for metric in [Metric::Latency, Metric::Bandwidth] {
        let from = crossings.len();
        for s in &sp {
            for c in s.crossovers(metric) {
                crossings.push((metric, s, c));
            }
        }
        crossings[from..].sort_by(|a, b| a.2.at.total_cmp(&b.2.at));
    }
    if !sp.is_empty() {
        legend.push(Legend::Gap);
        legend.push(Legend::Head("Crossovers".into()));
        if crossings.is_empty() {
            legend.push(Legend::Note(
                "None: the same path wins at every swept size.".into(),
            ));
        }
        legend.push(Legend::Overflow(
            "… and {n} more: report.md lists every crossover.".into(),
        ));
        for (i, (metric, s, c)) in crossings.iter().enumerate() {
            legend.push(Legend::Note(format!(
                "{}. {}: {}.",
                i + 1,
                capital(metric.name()),
                headline(s, c)
            )));
        }
    }
    for s in sp.iter().filter(|s| s.gpudirect_fallback.is_some()) {
        legend.push(Legend::Note(format!(
            "{}: gpudirect ran {} (no peer-to-peer), so its ratio is not GPUDirect's.",
            name(s),
            s.gpudirect_fallback.as_deref().unwrap_or("another path")
        )));
    }

    let subtitle = if pipelined {
        "Ratio of GPUDirect RDMA to host staging (solid: one cudaMemcpy per message; dashed: chunked and pipelined), same scenario and size."
    } else {
        "Ratio of GPUDirect RDMA to the host-staged path (cudaMemcpy through a host bounce buffer), same scenario and size."
    };
    let plot = super::frame(
        root,
        ctx,
        &ctx.title(super::title(Kind::Speedup)),
        subtitle,
        &legend,
    )?;
    if sp.is_empty() {
        return style::message(
            &plot,
            th,
            "No staged + gpudirect pair in this run: nothing to compare. Run both paths on a scenario to get this chart.",
        );
    }

    let mut sizes: Vec<u64> = sp
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.size))
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    let panels = plot.split_evenly((2, 1));
    let metrics = [Metric::Latency, Metric::Bandwidth];
    let axes: Vec<style::Axis> = metrics
        .iter()
        .map(|metric| {
            let vals = sp
                .iter()
                .flat_map(|s| s.points.iter().filter_map(|p| metric.of(p)));
            let (lo, hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
            style::ratio_axis(lo, hi)
        })
        .collect();
    // One label width for both panels, so their size axes line up.
    let tick = th.font(style::fs::TICK);
    let widest = axes
        .iter()
        .flat_map(|a| {
            a.bold
                .iter()
                .map(|v| style::text_size(&tick, &style::ratio_label(*v)).0)
        })
        .max()
        .unwrap_or(0);
    let y_space = widest + th.px(18.0) + (th.fs(style::fs::AXIS_DESC) * 1.6) as i32;
    for ((panel, metric), y) in panels.iter().zip(metrics).zip(axes) {
        let (pw, _) = panel.dim_in_pixel();
        let x = style::size_axis(&sizes, (pw as i32 / th.px(100.0)).max(2) as usize);
        let caption = match metric {
            Metric::Latency => "Latency speedup: staged p50 / GPUDirect p50 (log scale)",
            Metric::Bandwidth => "Bandwidth ratio: GPUDirect / staged (log scale)",
        };
        let spec = ChartSpec {
            x: x.clone(),
            y: y.clone(),
            x_desc: "message size (log scale)",
            // Rotated, the left arrow points down and the right one up.
            y_desc: "← staged better | GPUDirect better →",
            x_fmt: &|v| style::size_label(*v),
            y_fmt: &|v| style::ratio_label(*v),
            caption: Some(caption),
            y_label_space: Some(y_space),
        };
        let chart = style::build_chart(panel, th, &spec)?;
        let pa = chart.plotting_area();
        let (x0, x1) = (x.range.start, x.range.end);
        pa.draw(&PathElement::new(
            vec![(x0, 0.0), (x1, 0.0)],
            style::INK.stroke_width(th.stroke(2.0)),
        ))
        .plot()?;

        let ours: Vec<_> = crossings
            .iter()
            .filter(|(mt, _, _)| *mt == metric)
            .collect();
        for (_, s, c) in &ours {
            let color = style::scenario_color(s.scenario);
            let cx = c.at.max(1.0).log2();
            style::draw_path(
                pa,
                vec![(cx, y.range.start), (cx, y.range.end)],
                &color,
                Dash::Dotted,
                th.stroke(2.0),
                th,
            )?;
        }
        let lx = |b: u64| (b.max(1) as f64).log2();
        for s in &sp {
            let color = style::scenario_color(s.scenario);
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .filter_map(|p| metric.of(p).map(|r| (lx(p.size), r.log2())))
                .collect();
            style::draw_path(
                pa,
                pts.clone(),
                &color,
                dash(s),
                th.stroke(style::op_width(s.op)),
                th,
            )?;
            if sp.len() <= MARKED_LINES {
                for p in pts {
                    style::draw_marker(pa, p, style::Marker::Circle, &color, th)?;
                }
            }
        }

        // Each crossover's number at the top of its line, in its scenario's colour; tags that
        // would touch drop a row.
        let (_, top) = chart.backend_coord(&(x0, y.range.end));
        let tag_font = th.bold(style::fs::NOTE);
        let row_h = (th.fs(style::fs::NOTE) * 1.7) as i32;
        let mut placed: Vec<(i32, i32, i32)> = Vec::new();
        let mut tags: Vec<(usize, i32, &Speedup)> = crossings
            .iter()
            .enumerate()
            .filter(|(_, (mt, _, _))| *mt == metric)
            .map(|(i, (_, s, c))| (i, chart.backend_coord(&(c.at.max(1.0).log2(), 0.0)).0, *s))
            .collect();
        tags.sort_by_key(|t| (t.1, t.0));
        for (i, px, s) in tags {
            let text = (i + 1).to_string();
            let w = style::text_size(&tag_font, &text).0 + th.px(10.0);
            let row = (0..)
                .find(|r| {
                    placed
                        .iter()
                        .all(|&(x, pw, pr)| pr != *r || (px - x).abs() > (w + pw) / 2)
                })
                .unwrap_or(0);
            placed.push((px, w, row));
            let color = style::scenario_color(s.scenario);
            let (cy, half_h) = (top + th.px(8.0) + row * row_h + row_h / 2, row_h * 4 / 10);
            root.draw(&Rectangle::new(
                [(px - w / 2, cy - half_h), (px + w / 2, cy + half_h)],
                color.filled(),
            ))
            .plot()?;
            let ink = tag_font
                .color(&style::text_on(&color))
                .pos(Pos::new(HPos::Center, VPos::Center));
            root.draw_text(&text, &ink, (px, cy)).plot()?;
        }
    }
    Ok(())
}

/// "latency" -> "Latency".
fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

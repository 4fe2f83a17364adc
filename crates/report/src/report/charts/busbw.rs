//! `busbw`: nccl-tests' bus bandwidth of a study's NCCL collectives against the buffer size (log
//! x, linear y from 0), drawn only when the study has collectives.
//!
//! One line per (collective scenario, path), coloured by scenario and stroked by path as in every
//! other chart of the run (the scenario keeps its colour index among all of the run's scenarios,
//! so a study that mixes collectives with point-to-point scenarios colours them alike on every
//! chart). busbw is the figure nccl-tests reads across sizes and GPU counts: algbw (the buffer
//! over the mean completion time) times all-reduce's 2(n-1)/n, all-gather's, reduce-scatter's
//! and all-to-all's (n-1)/n, broadcast's and sendrecv's 1, so a line
//! that flattens at a link's rate shows where that link binds.

use anyhow::Result;
use plotters::prelude::*;

use super::data::{Series, sig3};
use super::style::{self, ChartSpec, Legend};
use super::{Ctx, Kind};

/// The series that have a busbw figure (a collective's rows), in the model's order.
pub(crate) fn series<'a>(ctx: &'a Ctx) -> Vec<&'a Series<'a>> {
    ctx.model
        .series
        .iter()
        .filter(|s| s.rows.iter().any(|r| r.busbw_gbps.is_some()))
        .collect()
}

pub fn draw<DB: DrawingBackend>(root: &style::Area<DB>, ctx: &Ctx) -> Result<()> {
    let (m, th) = (ctx.model, &ctx.th);
    let lines = series(ctx);
    let mut legend = vec![Legend::Head("Collective (colour)".into())];
    let mut scenarios: Vec<usize> = lines.iter().map(|s| s.scenario).collect();
    scenarios.dedup();
    for &i in &scenarios {
        let s = &m.scenarios[i];
        legend.push(Legend::Color(
            style::scenario_color(i),
            crate::report::vocab::scenario_label(&s.name, s.class),
        ));
    }
    let mut paths: Vec<usize> = lines.iter().map(|s| s.path).collect();
    paths.sort_unstable();
    paths.dedup();
    legend.push(Legend::Gap);
    legend.push(Legend::Head("Path (line, marker)".into()));
    for &p in &paths {
        let st = style::path_style(m.paths[p]);
        legend.push(Legend::Line(
            style::INK,
            st.dash,
            Some(st.marker),
            m.paths[p].to_string(),
        ));
    }
    if let Some(note) = coincident_note(ctx, &lines) {
        legend.push(Legend::Gap);
        legend.push(Legend::Note(note));
    }
    legend.push(Legend::Gap);
    legend.push(Legend::Note(
        "busbw = algbw × 2(n-1)/n for all-reduce, × (n-1)/n for all-gather, reduce-scatter and \
         all-to-all (nccl-tests' bus bandwidth, n ranks); algbw = buffer / mean completion time. \
         GB/s = 10⁹ bytes per second."
            .into(),
    ));
    let subtitle = "Ring collectives of NCCL's Simple steps (all-to-all: every pair's sends); \
                    size is nccl-tests' (each rank's buffer, all-gather's output). NCCL's tuner \
                    would pick tree or LL/LL128 at small sizes, which the model does not (yet).";
    let plot = super::frame(
        root,
        ctx,
        &ctx.title(super::title(Kind::Busbw)),
        subtitle,
        &legend,
    )?;
    let top = lines
        .iter()
        .flat_map(|s| s.rows.iter().filter_map(|r| r.busbw_gbps))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    if lines.is_empty() {
        return style::message(&plot, th, "No collective results to plot.");
    }
    // One panel per path when the lines would crowd one (as the bandwidth chart facets).
    let facets: Vec<Option<usize>> =
        if lines.len() > super::data::FACET_ABOVE_SERIES && paths.len() > 1 {
            paths.iter().map(|&p| Some(p)).collect()
        } else {
            vec![None]
        };
    let sizes: Vec<u64> = {
        let mut v: Vec<u64> = lines
            .iter()
            .flat_map(|s| s.rows.iter().map(|r| r.size_bytes))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    for (facet, cell) in facets.iter().zip(super::facet_grid(&plot, facets.len())) {
        let (pw, ph) = cell.area.dim_in_pixel();
        let spec = ChartSpec {
            x: style::size_axis(&sizes, (pw as i32 / th.px(100.0)).max(2) as usize),
            y: style::linear_axis(top, (ph as i32 / th.px(70.0)).clamp(2, 12) as usize, 0.1),
            x_desc: if cell.x_title {
                "buffer size, nccl-tests' size (log scale)"
            } else {
                ""
            },
            y_desc: if cell.y_title { "busbw (GB/s)" } else { "" },
            x_fmt: &|v| style::size_label(*v),
            y_fmt: &|v| sig3(*v),
            caption: facet.map(|p| m.paths[p].name()),
            y_label_space: None,
        };
        let chart = style::build_chart(&cell.area, th, &spec)?;
        let pa = chart.plotting_area();
        let lx = |b: u64| (b.max(1) as f64).log2();
        for s in lines.iter().filter(|s| facet.is_none_or(|p| s.path == p)) {
            let c = style::scenario_color(s.scenario);
            let ps = style::path_style(m.paths[s.path]);
            let pts: Vec<(f64, f64)> = s
                .rows
                .iter()
                .filter_map(|r| Some((lx(r.size_bytes), r.busbw_gbps?)))
                .filter(|p| p.1.is_finite())
                .map(|(x, y)| (x, y.max(0.0)))
                .collect();
            style::draw_path(pa, pts.clone(), &c, ps.dash, th.stroke(3.0), th)?;
            for p in pts {
                style::draw_marker(pa, p, ps.marker, &c, th)?;
            }
        }
    }
    Ok(())
}

/// The lines drawn over each other (busbw equal within 0.5 % at every size, of any scenario
/// and path: all-to-all's `gpudirect` and `auto` run alike where PXN does not apply), named
/// so that a reader does not hunt for a missing line.
fn coincident_note(ctx: &Ctx, lines: &[&Series]) -> Option<String> {
    let m = ctx.model;
    let busbw = |s: &Series| -> Vec<(u64, f64)> {
        s.rows
            .iter()
            .filter_map(|r| Some((r.size_bytes, r.busbw_gbps?)))
            .collect()
    };
    let same = |a: &Series, b: &Series| {
        let (x, y) = (busbw(a), busbw(b));
        x.len() == y.len()
            && x.iter().zip(&y).all(|(&(za, u), &(zb, v))| {
                za == zb && (u - v).abs() <= 0.005 * u.abs().max(v.abs()) + 1e-12
            })
    };
    let mut groups: Vec<Vec<&Series>> = Vec::new();
    for &s in lines {
        match groups.iter_mut().find(|g| same(g[0], s)) {
            Some(g) => g.push(s),
            None => groups.push(vec![s]),
        }
    }
    let parts: Vec<String> = groups
        .iter()
        .filter(|g| g.len() > 1)
        .map(|g| {
            let names: Vec<String> = g
                .iter()
                .map(|s| format!("{} {}", m.scenarios[s.scenario].name, m.paths[s.path]))
                .collect();
            names.join(", ")
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "Drawn over each other (equal within 0.5 %): {}.",
            parts.join("; ")
        )
    })
}

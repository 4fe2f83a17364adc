//! The run's charts, each written as SVG and/or PNG with the same content.
//!
//! | name        | what it shows                                                                 |
//! |-------------|-------------------------------------------------------------------------------|
//! | `latency`   | one-way p50 latency vs size, log-log, with a min..p99 band per line           |
//! | `bandwidth` | streaming bandwidth vs size with each scenario's route ceiling                |
//! | `busbw`     | nccl-tests' bus bandwidth of the NCCL collectives vs size (collectives only)  |
//! | `speedup`   | GPUDirect over staged (latency and bandwidth ratios) with crossovers          |
//! | `breakdown` | stacked critical-path stages at a few sizes, one panel per size               |
//! | `scenarios` | scenarios side by side at one size, latency and bandwidth per path            |
//! | `tornado`   | what each estimate does to a headline ratio (`sensitivity`; not a run chart)  |
//!
//! Every chart is drawn by one function generic over the plotters backend, so the SVG, the PNG
//! and the in-memory bitmap the tests inspect come from the same code. The encoding follows the
//! same rules in every chart of a run: one Okabe-Ito colour per scenario, one stroke pattern and
//! marker per path (`style::path_style`), legends in a panel to the right of the data, sizes
//! labelled 8 B / 4 KiB / 1 GiB and times µs / ms.
//!
//! Text is rendered with DejaVu Sans embedded in the binary (the `dejavu` crate) and registered
//! with plotters once per process, so PNGs need no system fonts: plotters panics when drawing
//! bitmap text with no font registered.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context, Result, bail};
use plotters::prelude::*;

use crate::config::ImageFormat;
use crate::report::overlay::Figure;
use crate::report::{RunInfo, atomic};
use crate::stats::Summary;

mod bandwidth;
mod breakdown;
mod busbw;
pub mod data;
mod latency;
mod links;
#[cfg(test)]
pub(crate) mod long_names;
mod scenarios;
mod speedup;
mod style;
/// Hand-made result rows and run descriptions for tests (here and, through the `testdata`
/// feature, the gdrsim crate's): compiled only for tests.
#[cfg(any(test, feature = "testdata"))]
pub mod testdata;
#[cfg(test)]
mod tests;
pub mod tornado;

use data::Model;
use style::{Area, PlotResult, Theme};

/// One chart kind: the config's word for it and its file name come from
/// [`crate::config::ChartKind`]; its title is the report's ([`title`]).
pub use crate::config::ChartKind as Kind;

/// A chart's title without the hardware, e.g. "One-way latency vs message size".
pub fn title(kind: Kind) -> &'static str {
    match kind {
        Kind::Latency => "One-way latency vs message size",
        Kind::Bandwidth => "Streaming bandwidth vs message size",
        Kind::Busbw => "NCCL collectives: bus bandwidth (busbw) vs buffer size",
        Kind::Speedup => "GPUDirect RDMA vs host-staged: speedup vs message size",
        Kind::Breakdown => "Where the time goes: critical-path stages",
        Kind::Scenarios => "Scenarios compared",
        Kind::Links => "Link utilisation: the busiest channels",
    }
}

/// Everything a chart function reads.
pub(crate) struct Ctx<'a> {
    pub model: &'a Model<'a>,
    pub info: &'a RunInfo,
    pub th: Theme,
}

impl Ctx<'_> {
    /// The measured points (`run --measured`) of series `s` for `figure`: (size, value in µs or
    /// GB/s), in the measured-data CSV's order; empty without a measurement.
    pub fn measured(&self, s: &data::Series, figure: Figure) -> Vec<(u64, f64)> {
        let (Some(o), m) = (&self.info.measured, self.model) else {
            return Vec::new();
        };
        o.matched
            .iter()
            .filter(|x| {
                x.figure == figure
                    && x.scenario == m.scenarios[s.scenario].name
                    && x.path == m.paths[s.path]
                    && x.op == m.ops[s.op]
                    && x.measured.is_finite()
                    && x.measured > 0.0
            })
            .map(|x| (x.size_bytes, x.measured))
            .collect()
    }

    /// Every measured value of `figure` on the chart, for its axis range.
    pub fn measured_values(&self, figure: Figure) -> Vec<f64> {
        self.model
            .series
            .iter()
            .flat_map(|s| self.measured(s, figure).into_iter().map(|p| p.1))
            .collect()
    }

    /// The legend entry of the measured points ("measured (FILE)" and what they are), when
    /// the chart has any.
    pub fn measured_legend(&self, figure: Figure, what: &str) -> Vec<style::Legend> {
        match &self.info.measured {
            Some(o) if !self.measured_values(figure).is_empty() => vec![
                style::Legend::Gap,
                style::Legend::Point(
                    style::INK,
                    style::Marker::Measured,
                    format!("measured ({})", o.file_name()),
                ),
                style::Legend::Note(what.to_string()),
            ],
            _ => Vec::new(),
        }
    }

    /// "{what} — {hardware}", or just what when the hardware is not described.
    pub fn title(&self, what: &str) -> String {
        if self.info.hardware.trim().is_empty() {
            what.to_string()
        } else {
            format!("{what} — {}", self.info.hardware.trim())
        }
    }
}

/// Registers DejaVu Sans (regular and bold) as plotters' "sans-serif", once per process.
pub fn register_fonts() -> Result<()> {
    static DONE: OnceLock<bool> = OnceLock::new();
    let ok = *DONE.get_or_init(|| {
        let regular = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            dejavu::sans::regular(),
        )
        .is_ok();
        let bold =
            plotters::style::register_font("sans-serif", FontStyle::Bold, dejavu::sans::bold())
                .is_ok();
        regular && bold
    });
    if !ok {
        bail!("the embedded DejaVu Sans font could not be loaded");
    }
    Ok(())
}

/// The image size: the configured one, with the default standing in for a zero dimension.
pub fn image_size(info: &RunInfo) -> (u32, u32) {
    let d = crate::report::OutputOptions::default();
    let w = if info.output.width_px == 0 {
        d.width_px
    } else {
        info.output.width_px
    };
    let h = if info.output.height_px == 0 {
        d.height_px
    } else {
        info.output.height_px
    };
    (w, h)
}

/// Draws every chart that `info.output.charts` names, in every format of `info.output.formats`,
/// as `<dir>/<name>.<format>`; returns the paths written, chart by chart in the configured order.
///
/// Each file is rendered completely before it is renamed into place ([`atomic`]), so a failure
/// leaves earlier charts intact and no half-written file. A chart or format listed twice is
/// drawn once.
/// Degenerate input (no rows, one size, one path, zero bandwidth, no staged/GPUDirect pair)
/// still gives every chart, with a message where there is nothing to plot.
///
/// `busbw` is the chart of a study with NCCL collectives (rows with a busbw figure): there it
/// is drawn where `charts` lists it, or else right after `bandwidth`; without collectives it is
/// never drawn, so such a study's files are those of the charts it lists ([`kinds`]).
pub fn write_charts(dir: &Path, info: &RunInfo, rows: &[Summary]) -> Result<Vec<PathBuf>> {
    register_fonts()?;
    let collectives = rows.iter().any(|r| r.busbw_gbps.is_some());
    let kinds = kinds(&info.output.charts, collectives);
    let mut formats: Vec<ImageFormat> = Vec::new();
    for &f in &info.output.formats {
        if !formats.contains(&f) {
            formats.push(f);
        }
    }
    let (w, h) = image_size(info);
    let model = Model::new(info, rows);
    let ctx = Ctx {
        model: &model,
        info,
        th: Theme::new(w, h),
    };
    let mut written = Vec::new();
    for kind in kinds {
        for &format in &formats {
            let path = dir.join(format!("{}.{}", kind.name(), format.name()));
            let result = match format {
                ImageFormat::Svg => {
                    render_svg(kind, &ctx).and_then(|svg| atomic::write(&path, svg.as_bytes()))
                }
                ImageFormat::Png => atomic::write_with(&path, |tmp| {
                    let root = BitMapBackend::new(tmp, (w, h)).into_drawing_area();
                    draw(&root, kind, &ctx)?;
                    root.present().plot()
                }),
            };
            result.with_context(|| format!("writing chart {}", path.display()))?;
            written.push(path);
        }
    }
    Ok(written)
}

/// The charts a run draws, in order, each once: those `listed`, and where the run has
/// collectives, `busbw` right after `bandwidth` unless listed; `busbw` only with collectives.
pub fn kinds(listed: &[Kind], collectives: bool) -> Vec<Kind> {
    let mut kinds: Vec<Kind> = Vec::new();
    for &k in listed {
        if kinds.contains(&k) || (k == Kind::Busbw && !collectives) {
            continue;
        }
        kinds.push(k);
        if k == Kind::Bandwidth && collectives && !listed.contains(&Kind::Busbw) {
            kinds.push(Kind::Busbw);
        }
    }
    kinds
}

/// Renders one chart as an SVG document.
pub(crate) fn render_svg(kind: Kind, ctx: &Ctx) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (ctx.th.w, ctx.th.h)).into_drawing_area();
        draw(&root, kind, ctx)?;
        root.present().plot()?;
    }
    Ok(svg)
}

/// Draws one chart onto any backend.
pub(crate) fn draw<DB: DrawingBackend>(root: &Area<DB>, kind: Kind, ctx: &Ctx) -> Result<()> {
    root.fill(&WHITE).plot()?;
    match kind {
        Kind::Latency => latency::draw(root, ctx),
        Kind::Bandwidth => bandwidth::draw(root, ctx),
        Kind::Busbw => busbw::draw(root, ctx),
        Kind::Speedup => speedup::draw(root, ctx),
        Kind::Breakdown => breakdown::draw(root, ctx),
        Kind::Scenarios => scenarios::draw(root, ctx),
        Kind::Links => links::draw(root, ctx),
    }
}

/// A panel of a chart faceted by path, where the grid put it: its area, and whether it
/// carries the axis titles (the x title under the bottom panel of each column, the y title
/// beside the first column), so a grid of panels names each axis once, not once per panel.
pub(crate) struct Facet<DB: DrawingBackend> {
    pub area: Area<DB>,
    pub x_title: bool,
    pub y_title: bool,
}

/// The panels of `n` facets in a grid of at most three columns (two columns of two for four):
/// in one row, five or more panels were each too narrow for more than one size label.
pub(crate) fn facet_grid<DB: DrawingBackend>(plot: &Area<DB>, n: usize) -> Vec<Facet<DB>> {
    let rows = n.div_ceil(3).max(1);
    let cols = n.div_ceil(rows).max(1);
    plot.split_evenly((rows, cols))
        .into_iter()
        .take(n)
        .enumerate()
        .map(|(i, area)| Facet {
            area,
            x_title: i + cols >= n,
            y_title: i % cols == 0,
        })
        .collect()
}

/// Title block and legend panel around a data area: returns the data area.
fn frame<DB: DrawingBackend>(
    root: &Area<DB>,
    ctx: &Ctx,
    title: &str,
    subtitle: &str,
    legend: &[style::Legend],
) -> Result<Area<DB>> {
    let th = &ctx.th;
    let body = style::title_block(root, th, title, subtitle)?;
    let lw = style::legend_width(th, legend);
    let (bw, _) = body.dim_in_pixel();
    let (plot, leg) = body.split_horizontally(bw.saturating_sub(lw));
    style::draw_legend(&leg, th, legend)?;
    Ok(plot)
}

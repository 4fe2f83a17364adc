//! `tornado`: what each estimate does to a headline ratio (`gdrsim sensitivity --chart`, and
//! `run --sensitivity` as tornado.svg beside sensitivity.csv).
//!
//! One panel per headline (a comparison of GPUDirect with a staging baseline, latency or
//! bandwidth ratio, at one size), one horizontal bar per estimate: from the ratio its "down"
//! variant gives to the one its "up" variant gives, around the base run's ratio (a dashed
//! line). The ratio axis is logarithmic like the speedup chart's, and the solid line at 1×
//! is where the winner changes: a bar that reaches across it flips the conclusion, and is
//! outlined and labelled so. Bars are sorted by their span, widest at the top; estimates that
//! move the ratio less than the threshold (and flip nothing) are left out, as in the text
//! report. The data comes from gdrsim's `sensitivity`, which knows nothing of drawing.

use std::path::Path;

use anyhow::{Context, Result, bail};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::data::{Metric, TIE, fmt_ratio};
use super::style::{self, ChartSpec, Dash, Legend, PlotResult, Theme, text_size};
use crate::report::atomic;
use crate::units::fmt_bytes;

/// Panels drawn at most (comparisons times metrics); the others are named in the legend.
pub const MAX_PANELS: usize = 6;
/// Bars drawn per panel at most, the widest.
pub const MAX_BARS: usize = 10;
/// The chart's title, before the hardware.
pub const TITLE: &str = "Sensitivity: what each estimate does to GPUDirect over staging";

/// The colour of an estimate scaled up, and of one scaled down (Okabe-Ito blue and orange).
const UP: RGBColor = RGBColor(0, 114, 178);
const DOWN: RGBColor = RGBColor(230, 159, 0);

/// One variant's end of a bar.
#[derive(Clone, Debug, PartialEq)]
pub struct End {
    /// The estimate's value in this variant, for a reader ("256 B", "187.5 ns").
    pub value: String,
    /// The headline ratio this variant gives.
    pub ratio: f64,
}

/// One estimate's bar: what its two variants give (either may be missing, when scaling could
/// not change the value or the variant did not load).
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    /// The parameter's key, as `gdrsim params` names it.
    pub key: String,
    /// The variant scaled down.
    pub down: Option<End>,
    /// The variant scaled up.
    pub up: Option<End>,
}

/// Who wins at a ratio: GPUDirect above 1, the baseline below, nobody within [`TIE`].
fn winner(r: f64) -> i8 {
    if (r - 1.0).abs() <= TIE {
        0
    } else if r > 1.0 {
        1
    } else {
        -1
    }
}

impl Bar {
    fn ends(&self) -> impl Iterator<Item = &End> {
        self.down.iter().chain(&self.up)
    }

    /// The lowest and highest ratio of the bar, the base included.
    pub fn range(&self, base: f64) -> (f64, f64) {
        self.ends()
            .map(|e| e.ratio)
            .fold((base, base), |(lo, hi), r| (lo.min(r), hi.max(r)))
    }

    /// Its length on the (log) ratio axis: log2(highest / lowest).
    pub fn span(&self, base: f64) -> f64 {
        let (lo, hi) = self.range(base);
        if lo > 0.0 && hi > 0.0 {
            (hi / lo).log2()
        } else {
            0.0
        }
    }

    /// The largest relative move of a variant's ratio from the base's.
    pub fn moves(&self, base: f64) -> f64 {
        self.ends()
            .map(|e| (e.ratio / base - 1.0).abs())
            .fold(0.0, f64::max)
    }

    /// Whether a variant puts the other path ahead (a tie on either side flips nothing, as in
    /// the text report).
    pub fn flips(&self, base: f64) -> bool {
        let w0 = winner(base);
        self.ends().any(|e| {
            let w1 = winner(e.ratio);
            w0 != 0 && w1 != 0 && w0 != w1
        })
    }
}

/// The labels at one end of a bar: "256 B: 0.78×" for each variant on that side of the base
/// (left: below it), the nearer first.
fn end_text(b: &Bar, base: f64, left: bool) -> String {
    let mut ends: Vec<&End> = b.ends().filter(|e| (e.ratio < base) == left).collect();
    ends.sort_by(|x, y| {
        let (dx, dy) = ((x.ratio / base).ln().abs(), (y.ratio / base).ln().abs());
        dx.total_cmp(&dy)
    });
    ends.iter()
        .map(|e| format!("{}: {}", e.value, fmt_ratio(e.ratio)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One headline: a comparison's ratio of one metric at one size, and every estimate's bar.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    /// The comparison, "PHB write_imm vs staged".
    pub comparison: String,
    /// Latency or bandwidth ratio.
    pub metric: Metric,
    /// The message size of the headline.
    pub size: u64,
    /// The base run's ratio.
    pub base: f64,
    /// Every estimate varied, in any order ([`Panel::shown`] sorts and filters).
    pub bars: Vec<Bar>,
}

impl Panel {
    /// The bars drawn: those that move the ratio by at least `threshold` or flip the winner,
    /// widest span first (equal spans by key), at most [`MAX_BARS`].
    pub fn shown(&self, threshold: f64) -> Vec<&Bar> {
        let mut v: Vec<&Bar> = self
            .bars
            .iter()
            .filter(|b| b.moves(self.base) >= threshold || b.flips(self.base))
            .collect();
        v.sort_by(|a, b| {
            b.span(self.base)
                .total_cmp(&a.span(self.base))
                .then_with(|| a.key.cmp(&b.key))
        });
        v.truncate(MAX_BARS);
        v
    }

    /// "PHB write_imm vs staged: bandwidth at 1 GiB".
    pub fn name(&self) -> String {
        format!(
            "{}: {} at {}",
            self.comparison,
            self.metric.name(),
            fmt_bytes(self.size)
        )
    }
}

/// Everything the chart shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Tornado {
    /// The simulated hardware, for the title (may be empty).
    pub hardware: String,
    /// The relative step of the variants (0.25).
    pub delta: f64,
    /// Bars that move a ratio less than this (relative) and flip nothing are left out.
    pub threshold: f64,
    /// The headlines, in report order (comparison, then latency before bandwidth).
    pub panels: Vec<Panel>,
}

impl Tornado {
    /// The panels drawn: those with a bar to show, at most [`MAX_PANELS`] (those with a flip
    /// first, then the widest), kept in their given order.
    pub fn shown(&self) -> Vec<&Panel> {
        let mut idx: Vec<usize> = (0..self.panels.len())
            .filter(|&i| !self.panels[i].shown(self.threshold).is_empty())
            .collect();
        let rank = |i: usize| {
            let p = &self.panels[i];
            let bars = p.shown(self.threshold);
            let flips = bars.iter().any(|b| b.flips(p.base));
            let span = bars.iter().map(|b| b.span(p.base)).fold(0.0, f64::max);
            (flips, span)
        };
        idx.sort_by(|&a, &b| {
            let (ra, rb) = (rank(a), rank(b));
            rb.0.cmp(&ra.0).then(rb.1.total_cmp(&ra.1)).then(a.cmp(&b))
        });
        idx.truncate(MAX_PANELS);
        idx.sort_unstable();
        idx.into_iter().map(|i| &self.panels[i]).collect()
    }

    /// `"machines[0]."` when every key drawn is under that one machine (the labels leave it
    /// out, the legend says so), else "".
    pub fn common_prefix(&self) -> &'static str {
        const ONE: &str = "machines[0].";
        let mut keys = self
            .shown()
            .into_iter()
            .flat_map(|p| p.shown(self.threshold))
            .map(|b| b.key.as_str())
            .peekable();
        if keys.peek().is_some() && keys.all(|k| k.starts_with(ONE)) {
            ONE
        } else {
            ""
        }
    }

    fn title(&self) -> String {
        if self.hardware.trim().is_empty() {
            TITLE.to_string()
        } else {
            format!("{TITLE} — {}", self.hardware.trim())
        }
    }
}

/// Writes the chart to `path`, as SVG or PNG by its extension, `size` pixels.
pub fn write(path: &Path, t: &Tornado, size: (u32, u32)) -> Result<()> {
    super::register_fonts()?;
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let th = Theme::new(size.0, size.1);
    let result = match ext.as_str() {
        "svg" => render_svg(t, size).and_then(|svg| atomic::write(path, svg.as_bytes())),
        "png" => atomic::write_with(path, |tmp| {
            let root = BitMapBackend::new(tmp, size).into_drawing_area();
            draw(&root, &th, t)?;
            root.present().plot()
        }),
        _ => bail!("a chart file ends in .svg or .png"),
    };
    result.with_context(|| format!("writing chart {}", path.display()))
}

/// The chart as an SVG document of `size` pixels.
pub fn render_svg(t: &Tornado, size: (u32, u32)) -> Result<String> {
    super::register_fonts()?;
    let th = Theme::new(size.0, size.1);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        draw(&root, &th, t)?;
        root.present().plot()?;
    }
    Ok(svg)
}

/// Draws the chart onto any backend.
pub(crate) fn draw<DB: DrawingBackend>(
    root: &style::Area<DB>,
    th: &Theme,
    t: &Tornado,
) -> Result<()> {
    root.fill(&WHITE).plot()?;
    let shown = t.shown();
    let pct = |f: f64| format!("{:.0}%", f * 100.0);
    let step = format!("{:.2}", 1.0 + t.delta);
    let mut legend = vec![
        Legend::Head("Estimate (bar colour)".into()),
        Legend::Boxed(
            UP.to_rgba(),
            UP,
            format!("scaled up (×{step}; ×2 a power of two)"),
        ),
        Legend::Boxed(
            DOWN.to_rgba(),
            DOWN,
            format!("scaled down (/{step}; /2 a power of two)"),
        ),
        Legend::Gap,
        Legend::Line(style::INK, Dash::Solid, None, "1× (equal)".into()),
        Legend::Line(style::MUTED, Dash::Dashed, None, "base run's ratio".into()),
        Legend::Note(
            "Above 1×: GPUDirect better. A bar across 1× flips the winner: outlined, \
             \"(flips)\" after its key. Bar ends: the estimate's value and the ratio it gives."
                .into(),
        ),
        Legend::Gap,
        Legend::Note(format!(
            "Widest first. Left out: estimates that move the ratio by less than {} and flip \
             nothing{}.",
            pct(t.threshold),
            if t.panels
                .iter()
                .any(|p| p.shown(t.threshold).len() == MAX_BARS)
            {
                format!(", and all but the {MAX_BARS} widest")
            } else {
                String::new()
            }
        )),
    ];
    let hidden: Vec<String> = t
        .panels
        .iter()
        .filter(|p| !shown.iter().any(|s| std::ptr::eq(*s, *p)))
        .map(|p| p.name())
        .collect();
    if !hidden.is_empty() {
        legend.push(Legend::Gap);
        legend.push(Legend::Note(format!(
            "Not drawn ({}): {}.",
            hidden.len(),
            hidden.join("; ")
        )));
    }
    if !t.common_prefix().is_empty() {
        legend.push(Legend::Gap);
        legend.push(Legend::Note(format!(
            "Keys are under {}: the only machine among the bars.",
            t.common_prefix().trim_end_matches('.')
        )));
    }
    let subtitle = format!(
        "Every estimate (a parameter no measurement pins) scaled {} up and down, one at a time. \
         Each comparison at its largest size: there the transfer streams, and its ratio rests on \
         the read windows, request sizes and forwarding that most estimates set.",
        pct(t.delta)
    );
    let body = style::title_block(root, th, &t.title(), &subtitle)?;
    let lw = style::legend_width(th, &legend);
    let (bw, _) = body.dim_in_pixel();
    let (plot, leg) = body.split_horizontally(bw.saturating_sub(lw));
    style::draw_legend(&leg, th, &legend)?;
    if shown.is_empty() {
        return style::message(
            &plot,
            th,
            &format!(
                "No estimate moves a headline ratio by {} or flips a winner.",
                pct(t.threshold)
            ),
        );
    }
    let prefix = t.common_prefix();
    let cols = if shown.len() > 1 { 2 } else { 1 };
    let rows = shown.len().div_ceil(cols);
    let areas = plot.split_evenly((rows, cols));
    for (p, area) in shown.iter().zip(&areas) {
        draw_panel(area, root, th, p, t.threshold, prefix)?;
    }
    Ok(())
}

fn draw_panel<DB: DrawingBackend>(
    area: &style::Area<DB>,
    root: &style::Area<DB>,
    th: &Theme,
    p: &Panel,
    threshold: f64,
    prefix: &str,
) -> Result<()> {
    let bars = p.shown(threshold);
    let n = bars.len().max(3);
    let (pw, ph) = area.dim_in_pixel();
    let pitch = (ph as f64 * 0.6) / n as f64;
    let fsz = (pitch * 0.55 / th.s).clamp(7.0, style::fs::NOTE);
    let (font, bold) = (th.font(fsz), th.bold(fsz));
    let label = |b: &Bar| {
        let key = b.key.strip_prefix(prefix).unwrap_or(&b.key);
        if b.flips(p.base) {
            format!("{key} (flips)")
        } else {
            key.to_string()
        }
    };
    let label_w = bars
        .iter()
        .map(|b| text_size(&bold, &label(b)).0)
        .max()
        .unwrap_or(0);
    let y_space = (label_w + th.px(16.0)).min(pw as i32 * 45 / 100);
    // The ratio axis around the bars, the base and 1x, with room at both ends for the labels.
    let (lo, hi) = bars
        .iter()
        .fold((p.base.min(1.0), p.base.max(1.0)), |(l, h), b| {
            let (a, z) = b.range(p.base);
            (l.min(a), h.max(z))
        });
    // Room beyond the bars for the widest end labels on each side: with fractions fa and fb
    // of the data width, the axis spans D / (1 - fa - fb) for bars spanning D.
    let data_w = (pw as i32 - y_space - th.px(40.0)).max(1) as f64;
    let side_w = |left: bool| {
        bars.iter()
            .map(|b| text_size(&font, &end_text(b, p.base, left)).0)
            .max()
            .unwrap_or(0) as f64
            + th.px(14.0) as f64
    };
    let (fa, fb) = (side_w(true) / data_w, side_w(false) / data_w);
    let scale = (1.0 - fa - fb).max(0.25);
    let total = (hi / lo).log2().max(0.3) / scale;
    let x = style::ratio_axis(lo / 2f64.powf(fa * total), hi * 2f64.powf(fb * total));
    let caption = format!("{} (base {})", p.name(), fmt_ratio(p.base));
    // A band above the bars for the 1x label and one below for the base's.
    let (y0, y1) = (-1.1, n as f64 + 0.2);
    let spec = ChartSpec {
        x: x.clone(),
        y: style::Axis {
            range: y0..y1,
            bold: vec![],
            light: vec![],
        },
        x_desc: match p.metric {
            Metric::Latency => "staged p50 / GPUDirect p50 (log scale)",
            Metric::Bandwidth => "GPUDirect / staged bandwidth (log scale)",
        },
        y_desc: "",
        x_fmt: &|v| style::ratio_label(*v),
        y_fmt: &|_| String::new(),
        caption: Some(&caption),
        y_label_space: Some(y_space),
    };
    let chart = style::build_chart(area, th, &spec)?;
    let pa = chart.plotting_area();
    let lb = p.base.max(f64::MIN_POSITIVE).log2();
    // Bars first, then the two lines over them.
    for (i, b) in bars.iter().enumerate() {
        let y = (n - 1 - i) as f64;
        for (end, color) in [(&b.down, DOWN), (&b.up, UP)] {
            if let Some(e) = end {
                let r = e.ratio.max(f64::MIN_POSITIVE).log2();
                pa.draw(&Rectangle::new(
                    [(lb.min(r), y - 0.32), (lb.max(r), y + 0.32)],
                    color.filled(),
                ))
                .plot()?;
            }
        }
        let (lo, hi) = b.range(p.base);
        let flips = b.flips(p.base);
        if flips {
            pa.draw(&Rectangle::new(
                [(lo.log2(), y - 0.4), (hi.log2(), y + 0.4)],
                style::INK.stroke_width(th.stroke(2.5)),
            ))
            .plot()?;
        }
        // The key left of the axis; each variant's value and ratio at its side of the base.
        let (ax, ey) = chart.backend_coord(&(x.range.start, y));
        let f = if flips { &bold } else { &font };
        let key = style::fit(f, &label(b), y_space - th.px(12.0));
        root.draw_text(
            &key,
            &f.color(&style::INK)
                .pos(Pos::new(HPos::Right, VPos::Center)),
            (ax - th.px(8.0), ey),
        )
        .plot()?;
        for (side, left, at, sign) in [(HPos::Right, true, lo, -1), (HPos::Left, false, hi, 1)] {
            let s = end_text(b, p.base, left);
            if s.is_empty() {
                continue;
            }
            let (px, _) = chart.backend_coord(&(at.log2(), y));
            let dx = sign * th.px(6.0);
            root.draw_text(
                &s,
                &font.color(&style::INK).pos(Pos::new(side, VPos::Center)),
                (px + dx, ey),
            )
            .plot()?;
        }
    }
    pa.draw(&PathElement::new(
        vec![(0.0, y0), (0.0, y1)],
        style::INK.stroke_width(th.stroke(2.0)),
    ))
    .plot()?;
    style::draw_path(
        pa,
        vec![(lb, y0), (lb, y1)],
        &style::MUTED,
        Dash::Dashed,
        th.stroke(1.5),
        th,
    )?;
    // "1×" at the top of its line, the base's value at the bottom of its own.
    let (ox, top) = chart.backend_coord(&(0.0, y1));
    style::boxed_label(
        root,
        th,
        "1×",
        (ox, top + th.px(4.0)),
        Pos::new(HPos::Center, VPos::Top),
        &style::INK,
        style::fs::NOTE,
    )?;
    let (bx, bottom) = chart.backend_coord(&(lb, y0));
    style::boxed_label(
        root,
        th,
        &format!("base {}", fmt_ratio(p.base)),
        (bx, bottom - th.px(4.0)),
        Pos::new(HPos::Center, VPos::Bottom),
        &style::MUTED,
        style::fs::NOTE,
    )?;
    Ok(())
}

//! Look and feel shared by every chart: palette, line styles, fonts scaled to the image size,
//! axes with human tick labels, the title block and the legend panel.
//!
//! All axes are plain `f64` ranges with explicit key points ([`Axis`]): log axes are drawn in
//! log space (log2 of bytes, log10 of µs, log2 of a ratio) so that the tick positions and their
//! labels (1 KiB, 1 MiB; 10 µs, 1 ms; 0.5×, 2×) are exactly what a reader expects, and no value
//! ever reaches a logarithm unguarded (plotters' own log axes pick decimal ticks that are wrong
//! for byte sizes, and panic-prone ranges for degenerate data).

use std::ops::Range;

use anyhow::Result;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::units::fmt_bytes;

/// A drawing area in pixel coordinates.
pub type Area<DB> = DrawingArea<DB, Shift>;
/// Every chart's data coordinates: two `f64` axes with explicit ticks.
pub type Coord = Cartesian2d<Axis, Axis>;

/// Plotters' errors are generic over the backend; the report only needs their message.
pub trait PlotResult<T> {
    fn plot(self) -> Result<T>;
}

impl<T, E: std::fmt::Display> PlotResult<T> for std::result::Result<T, E> {
    fn plot(self) -> Result<T> {
        self.map_err(|e| anyhow::anyhow!("drawing a chart: {e}"))
    }
}

/// The Okabe-Ito palette, ordered so the first colours are the most distinct from each other and
/// from white (yellow, the weakest on white, comes last). One colour per scenario.
pub const OKABE_ITO: [RGBColor; 8] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 0, 0),       // black
    RGBColor(240, 228, 66),  // yellow
];

/// Eight more, for the ninth to sixteenth scenario (Paul Tol's muted and dark colours, apart
/// from the Okabe-Ito ones), so that up to 16 scenarios never share a colour.
const MORE: [RGBColor; 8] = [
    RGBColor(51, 34, 136),   // indigo
    RGBColor(17, 119, 51),   // green
    RGBColor(136, 34, 85),   // wine
    RGBColor(153, 153, 51),  // olive
    RGBColor(170, 68, 153),  // purple
    RGBColor(68, 170, 153),  // teal
    RGBColor(102, 17, 0),    // brown
    RGBColor(102, 153, 204), // steel blue
];

/// The colour of scenario `i` (distinct for the first 16).
pub fn scenario_color(i: usize) -> RGBColor {
    let i = i % (OKABE_ITO.len() + MORE.len());
    if i < OKABE_ITO.len() {
        OKABE_ITO[i]
    } else {
        MORE[i - OKABE_ITO.len()]
    }
}

pub const INK: RGBColor = RGBColor(30, 30, 30);
pub const MUTED: RGBColor = RGBColor(95, 95, 95);
pub const GRID_BOLD: RGBColor = RGBColor(200, 200, 200);
pub const GRID_LIGHT: RGBColor = RGBColor(232, 232, 232);

/// The stroke pattern of a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dash {
    Solid,
    Dashed,
    Dotted,
    LongDashed,
}

/// The point marker of a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
    Cross,
}

/// How a path is drawn: a stroke pattern and a marker, so paths stay distinguishable in grey
/// scale and for every kind of colour vision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathStyle {
    pub dash: Dash,
    pub marker: Marker,
}

/// The style of path `name` (index `i` in the run's path order). The three known paths get fixed
/// styles (GPUDirect, the headline, is solid) so every run reads the same; others cycle.
pub fn path_style(name: &str, i: usize) -> PathStyle {
    let (dash, marker) = match name {
        "gpudirect" => (Dash::Solid, Marker::Circle),
        "staged" => (Dash::Dashed, Marker::Square),
        "host" => (Dash::Dotted, Marker::Triangle),
        _ => [
            (Dash::LongDashed, Marker::Diamond),
            (Dash::Dashed, Marker::Cross),
        ][i % 2],
    };
    PathStyle { dash, marker }
}

/// Line width (at 1600x1000) of op `i` when a run has several ops: thick, thinner, thin. Colour and
/// pattern already carry scenario and path, so the op gets the one remaining channel.
pub fn op_width(i: usize) -> f64 {
    [2.5, 1.3, 0.8][i.min(2)]
}

/// Sizes that scale with the image: every length is given for the default 1600x1000 and scaled
/// by the smaller of the two ratios, so a smaller PNG is a smaller copy, not a cramped one.
#[derive(Clone, Copy, Debug)]
pub struct Theme {
    pub w: u32,
    pub h: u32,
    pub s: f64,
}

impl Theme {
    pub fn new(w: u32, h: u32) -> Self {
        let s = (w as f64 / 1600.0).min(h as f64 / 1000.0).max(0.05);
        Theme { w, h, s }
    }
    /// A length in pixels.
    pub fn px(&self, base: f64) -> i32 {
        (base * self.s).round().max(1.0) as i32
    }
    /// A font size (never below 8 px, the smallest that DejaVu renders legibly).
    pub fn fs(&self, base: f64) -> f64 {
        (base * self.s).max(8.0)
    }
    pub fn font(&self, base: f64) -> FontDesc<'static> {
        FontDesc::new(FontFamily::SansSerif, self.fs(base), FontStyle::Normal)
    }
    pub fn bold(&self, base: f64) -> FontDesc<'static> {
        FontDesc::new(FontFamily::SansSerif, self.fs(base), FontStyle::Bold)
    }
    pub fn stroke(&self, base: f64) -> u32 {
        (base * self.s).round().max(1.0) as u32
    }
}

/// Font sizes (at 1600x1000) used across charts.
pub mod fs {
    pub const TITLE: f64 = 30.0;
    pub const SUBTITLE: f64 = 18.0;
    pub const PANEL: f64 = 21.0;
    pub const AXIS_DESC: f64 = 19.0;
    pub const TICK: f64 = 16.0;
    pub const LEGEND: f64 = 16.0;
    pub const LEGEND_HEAD: f64 = 17.0;
    pub const NOTE: f64 = 15.0;
}

/// Width and height of `text` in `font`, in pixels (0 when the font is unavailable, which only
/// happens if registration failed; drawing then fails with a clear error anyway).
pub fn text_size(font: &FontDesc, text: &str) -> (i32, i32) {
    font.box_size(text)
        .map(|(w, h)| (w as i32, h as i32))
        .unwrap_or((0, 0))
}

/// Splits `text` into lines no wider than `max_w` pixels, at spaces.
pub fn wrap(font: &FontDesc, text: &str, max_w: i32) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        let candidate = if cur.is_empty() {
            word.to_string()
        } else {
            format!("{cur} {word}")
        };
        if !cur.is_empty() && text_size(font, &candidate).0 > max_w {
            lines.push(std::mem::replace(&mut cur, word.to_string()));
        } else {
            cur = candidate;
        }
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    lines
}

/// Draws the title (bold, shrunk until it fits the width) and a muted subtitle across the top of
/// `root`; returns the area below them.
pub fn title_block<DB: DrawingBackend>(
    root: &Area<DB>,
    th: &Theme,
    title: &str,
    subtitle: &str,
) -> Result<Area<DB>> {
    let (w, _) = root.dim_in_pixel();
    let margin = th.px(24.0);
    let max_w = w as i32 - 2 * margin;
    let mut size = fs::TITLE;
    while size > 12.0 && text_size(&th.bold(size), title).0 > max_w {
        size -= 1.0;
    }
    let tfont = th.bold(size);
    let th_px = th.fs(size).round() as i32;
    let top = th.px(18.0);
    root.draw_text(
        title,
        &tfont.color(&INK).pos(Pos::new(HPos::Left, VPos::Top)),
        (margin, top),
    )
    .plot()?;
    let mut y = top + (th_px as f64 * 1.3) as i32;
    let sfont = th.font(fs::SUBTITLE);
    for line in wrap(&sfont, subtitle, max_w) {
        root.draw_text(
            &line,
            &sfont.color(&MUTED).pos(Pos::new(HPos::Left, VPos::Top)),
            (margin, y),
        )
        .plot()?;
        y += (th.fs(fs::SUBTITLE) * 1.35) as i32;
    }
    let (_, body) = root.split_vertically(y + th.px(8.0));
    Ok(body)
}

/// One entry of a legend panel.
#[derive(Clone, Debug)]
pub enum Legend {
    /// A section heading.
    Head(String),
    /// A colour with a label (a scenario).
    Color(RGBColor, String),
    /// A line sample with marker (a path).
    Line(RGBColor, Dash, Option<Marker>, String),
    /// A filled box (a stage, or a path's bar shade).
    Boxed(RGBAColor, RGBColor, String),
    /// Muted explanatory text, wrapped to the panel width.
    Note(String),
    /// A solid line of the given base width (an op, when a run has several).
    Stroke(f64, String),
    /// Vertical space.
    Gap,
}

/// The width a legend panel needs for its entries (clamped to 14%..34% of the image width so the
/// data area never loses more than a third of the image to long labels; longer labels wrap or are
/// cut with an ellipsis).
pub fn legend_width(th: &Theme, items: &[Legend]) -> u32 {
    let font = th.font(fs::LEGEND);
    let head = th.bold(fs::LEGEND_HEAD);
    let sample = th.px(56.0);
    let mut w = 0;
    for it in items {
        let need = match it {
            Legend::Head(t) => text_size(&head, t).0,
            Legend::Color(_, t)
            | Legend::Line(_, _, _, t)
            | Legend::Boxed(_, _, t)
            | Legend::Stroke(_, t) => sample + text_size(&font, t).0,
            Legend::Note(_) | Legend::Gap => 0,
        };
        w = w.max(need);
    }
    let w = (w + 2 * th.px(20.0)) as u32;
    w.clamp(th.w * 14 / 100, th.w * 34 / 100)
}

/// Draws legend entries top-down in `area` (which lies outside every data area).
pub fn draw_legend<DB: DrawingBackend>(
    area: &Area<DB>,
    th: &Theme,
    items: &[Legend],
) -> Result<()> {
    let (w, h) = area.dim_in_pixel();
    let font = th.font(fs::LEGEND);
    let head = th.bold(fs::LEGEND_HEAD);
    let note = th.font(fs::NOTE);
    let x0 = th.px(12.0);
    let sample = th.px(44.0);
    let tx = x0 + sample + th.px(10.0);
    let line_h = (th.fs(fs::LEGEND) * 1.6) as i32;
    let max_text = w as i32 - tx - th.px(12.0);
    let mut y = th.px(30.0);
    let left = Pos::new(HPos::Left, VPos::Center);
    for it in items {
        if y > h as i32 - line_h / 2 {
            break;
        }
        match it {
            Legend::Head(t) => {
                y += th.px(4.0);
                area.draw_text(t, &head.color(&INK).pos(left), (x0, y))
                    .plot()?;
                y += line_h;
            }
            Legend::Color(c, t) => {
                let r = th.px(8.0);
                let mid = x0 + sample / 2;
                area.draw(&Rectangle::new(
                    [(mid - 2 * r, y - r), (mid + 2 * r, y + r)],
                    c.filled(),
                ))
                .plot()?;
                area.draw_text(
                    &fit(&font, t, max_text),
                    &font.color(&INK).pos(left),
                    (tx, y),
                )
                .plot()?;
                y += line_h;
            }
            Legend::Line(c, dash, marker, t) => {
                let pts = vec![(x0, y), (x0 + sample, y)];
                draw_path(area, pts, c, *dash, th.stroke(2.5), th)?;
                if let Some(m) = marker {
                    draw_marker(area, (x0 + sample / 2, y), *m, c, th)?;
                }
                area.draw_text(
                    &fit(&font, t, max_text),
                    &font.color(&INK).pos(left),
                    (tx, y),
                )
                .plot()?;
                y += line_h;
            }
            Legend::Boxed(fill, border, t) => {
                let r = th.px(8.0);
                let mid = x0 + sample / 2;
                let rect = [(mid - 2 * r, y - r), (mid + 2 * r, y + r)];
                area.draw(&Rectangle::new(rect, fill.filled())).plot()?;
                area.draw(&Rectangle::new(rect, border.stroke_width(th.stroke(1.0))))
                    .plot()?;
                area.draw_text(
                    &fit(&font, t, max_text),
                    &font.color(&INK).pos(left),
                    (tx, y),
                )
                .plot()?;
                y += line_h;
            }
            Legend::Note(t) => {
                for line in wrap(&note, t, w as i32 - x0 - th.px(18.0)) {
                    area.draw_text(&line, &note.color(&MUTED).pos(left), (x0, y))
                        .plot()?;
                    y += (th.fs(fs::NOTE) * 1.4) as i32;
                }
            }
            Legend::Stroke(width, t) => {
                draw_path(
                    area,
                    vec![(x0, y), (x0 + sample, y)],
                    &INK,
                    Dash::Solid,
                    th.stroke(*width),
                    th,
                )?;
                area.draw_text(
                    &fit(&font, t, max_text),
                    &font.color(&INK).pos(left),
                    (tx, y),
                )
                .plot()?;
                y += line_h;
            }
            Legend::Gap => y += line_h / 2,
        }
    }
    Ok(())
}

/// `text`, cut with an ellipsis to fit `max_w` pixels.
pub fn fit(font: &FontDesc, text: &str, max_w: i32) -> String {
    if text_size(font, text).0 <= max_w {
        return text.to_string();
    }
    let mut chars: Vec<char> = text.chars().collect();
    while !chars.is_empty() {
        chars.pop();
        let s: String = chars.iter().collect::<String>() + "…";
        if text_size(font, &s).0 <= max_w {
            return s;
        }
    }
    String::new()
}

/// Scenario colours and path styles as legend entries, plus notes.
pub fn series_legend(m: &super::data::Model, with_paths: bool) -> Vec<Legend> {
    let mut items = vec![Legend::Head("Scenario (colour)".into())];
    for (i, s) in m.scenarios.iter().enumerate() {
        let label = if s.class.is_empty() || s.class == s.name {
            s.name.clone()
        } else {
            format!("{} ({})", s.name, s.class)
        };
        items.push(Legend::Color(scenario_color(i), label));
    }
    if with_paths {
        items.push(Legend::Gap);
        items.push(Legend::Head("Path (line, marker)".into()));
        for (i, p) in m.paths.iter().enumerate() {
            let st = path_style(p, i);
            items.push(Legend::Line(INK, st.dash, Some(st.marker), p.clone()));
        }
    }
    if m.multi_op() {
        items.push(Legend::Gap);
        items.push(Legend::Head("Op (line width)".into()));
        for (i, op) in m.ops.iter().enumerate() {
            items.push(Legend::Stroke(op_width(i), op.clone()));
        }
    }
    let fallbacks: Vec<String> = m
        .series
        .iter()
        .filter(|s| s.fallback.is_some())
        .map(|s| m.label(s))
        .collect();
    if !fallbacks.is_empty() {
        // `auto` chooses a path by design; `gpudirect` running another one fell back.
        let with = m.series.iter().filter(|s| s.fallback.is_some());
        let autos = with.clone().filter(|s| m.paths[s.path] == "auto").count();
        let head = match (autos, with.count() - autos) {
            (_, 0) => "Ran as",
            (0, _) => "Fell back",
            _ => "Fell back or chose",
        };
        items.push(Legend::Gap);
        items.push(Legend::Note(format!("{head}: {}.", fallbacks.join("; "))));
    }
    items
}

/// Draws a polyline in pixel or data coordinates with a stroke pattern.
pub fn draw_path<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    pts: Vec<CT::From>,
    color: &RGBColor,
    dash: Dash,
    width: u32,
    th: &Theme,
) -> Result<()>
where
    CT::From: Clone,
{
    if pts.len() < 2 {
        return Ok(());
    }
    let style = color.stroke_width(width);
    let (on, off) = match dash {
        Dash::Solid => return area.draw(&PathElement::new(pts, style)).plot(),
        Dash::Dashed => (th.px(11.0), th.px(7.0)),
        Dash::Dotted => (th.px(2.5), th.px(6.0)),
        Dash::LongDashed => (th.px(24.0), th.px(8.0)),
    };
    area.draw(&DashedPathElement::new(pts, on, off, style))
        .plot()
}

/// Draws a marker centred at a pixel or data coordinate.
pub fn draw_marker<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    at: CT::From,
    marker: Marker,
    color: &RGBColor,
    th: &Theme,
) -> Result<()> {
    let r = th.px(5.5);
    let fill = color.filled();
    let white = WHITE.filled();
    let ring = color.stroke_width(th.stroke(2.0));
    let e = EmptyElement::at(at);
    match marker {
        Marker::Circle => {
            area.draw(&(e + Circle::new((0, 0), r, white) + Circle::new((0, 0), r, ring)))
        }
        Marker::Square => area.draw(&(e + Rectangle::new([(-r, -r), (r, r)], fill))),
        Marker::Triangle => {
            let r = r + 1;
            area.draw(&(e + Polygon::new(vec![(0, -r), (r, r * 3 / 4), (-r, r * 3 / 4)], fill)))
        }
        Marker::Diamond => {
            let r = r + 1;
            area.draw(&(e + Polygon::new(vec![(0, -r), (r, 0), (0, r), (-r, 0)], fill)))
        }
        Marker::Cross => {
            area.draw(&(e + Cross::new((0, 0), r, color.stroke_width(th.stroke(2.5)))))
        }
    }
    .plot()
}

/// One axis: its range and its labelled (bold) and unlabelled (light) grid positions. It is its
/// own plotters coordinate (plotters' `WithKeyPoints` over `f64` cannot draw a mesh in 0.3.7).
#[derive(Clone, Debug)]
pub struct Axis {
    pub range: Range<f64>,
    pub bold: Vec<f64>,
    pub light: Vec<f64>,
}

impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let span = self.range.end - self.range.start;
        if span.abs() < f64::EPSILON || !v.is_finite() {
            return (limit.0 + limit.1) / 2;
        }
        // Far-off values are clamped so a stray point cannot overflow pixel arithmetic.
        let t = ((v - self.range.start) / span).clamp(-4.0, 5.0);
        limit.0 + (t * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.light.clone()
        } else {
            self.bold.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.range.clone()
    }
}

/// A range that is never empty or inverted (a single value gets +-`pad_if_flat`).
fn widen(lo: f64, hi: f64, pad_if_flat: f64) -> (f64, f64) {
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 1.0);
    }
    if hi - lo < 1e-9 {
        (lo - pad_if_flat, hi + pad_if_flat)
    } else {
        (lo, hi)
    }
}

/// The message-size axis in log2(bytes): labels at powers of two spaced so at most `max_labels`
/// fit (8 B, 64 B, 512 B, 4 KiB...), grid at every power of two.
pub fn size_axis(sizes: &[u64], max_labels: usize) -> Axis {
    let lg = |b: u64| (b.max(1) as f64).log2();
    let lo = sizes.iter().copied().map(lg).fold(f64::INFINITY, f64::min);
    let hi = sizes
        .iter()
        .copied()
        .map(lg)
        .fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = widen(lo, hi, 1.0);
    let pad = ((hi - lo) * 0.03).max(0.25);
    let (lo, hi) = ((lo - pad).max(0.0), (hi + pad).min(63.0));
    let (k0, k1) = (lo.ceil() as i64, hi.floor() as i64);
    let span = (k1 - k0).max(1) as usize;
    let step = [1usize, 2, 3, 4, 5, 6, 10, 20]
        .into_iter()
        .find(|st| span / st < max_labels.max(2))
        .unwrap_or(20) as i64;
    let bold = (k0..=k1)
        .filter(|k| k.rem_euclid(step) == 0)
        .map(|k| k as f64)
        .collect();
    let light = (k0..=k1).map(|k| k as f64).collect();
    Axis {
        range: lo..hi,
        bold,
        light,
    }
}

/// Tick label of a size axis value (log2 bytes).
pub fn size_label(v: f64) -> String {
    let b = 2f64.powf(v).round();
    if b < 1.0 || b > u64::MAX as f64 {
        String::new()
    } else {
        fmt_bytes(b as u64)
    }
}

/// A time axis in log10(µs) covering `lo..hi` µs: labels at 1-2-5 of each decade when
/// `max_labels` allows (so small-message latencies read as "5 µs", not "below 10 µs"), at
/// decades only otherwise; grid at 1..9 of each decade.
pub fn log_time_axis(lo_us: f64, hi_us: f64, max_labels: usize) -> Axis {
    let lo = if lo_us > 0.0 && lo_us.is_finite() {
        lo_us.log10()
    } else {
        -3.0
    };
    let hi = if hi_us > 0.0 && hi_us.is_finite() {
        hi_us.log10()
    } else {
        lo + 1.0
    };
    let (lo, hi) = (lo.min(hi), hi.max(lo));
    // At least one decade, centred on the data, so there are always labels to read values by.
    let mid = (lo + hi) / 2.0;
    let (lo, hi) = if hi - lo < 1.0 {
        (mid - 0.5, mid + 0.5)
    } else {
        (lo, hi)
    };
    let pad = (hi - lo) * 0.04;
    let (lo, hi) = (lo - pad, hi + pad);
    let dense = (hi - lo) * 3.0 <= max_labels as f64;
    let mut bold = Vec::new();
    let mut light = Vec::new();
    for d in (lo.floor() as i32)..=(hi.ceil() as i32) {
        for m in 1..10 {
            let v = (m as f64).log10() + d as f64;
            if v < lo || v > hi {
                continue;
            }
            if m == 1 || (dense && (m == 2 || m == 5)) {
                bold.push(v);
            } else {
                light.push(v);
            }
        }
    }
    Axis {
        range: lo..hi,
        bold,
        light,
    }
}

/// Tick label of a log10(µs) value: "500 ns", "2 µs", "10 ms".
pub fn log_time_label(v: f64) -> String {
    super::data::fmt_us(10f64.powf(v))
}

/// A ratio axis in log2(ratio), always including 1x: labels at powers of two, plus 0.67, 0.8,
/// 1.25, 1.5, 3 (and 6) when powers of two alone would give fewer than four labels; grid at
/// every nice value in range.
pub fn ratio_axis(lo: f64, hi: f64) -> Axis {
    // At least 0.78x..1.27x, so near-equal ratios still get 0.8x / 1x / 1.25x labels.
    let l = if lo > 0.0 && lo.is_finite() {
        lo.log2().min(-0.35)
    } else {
        -1.0
    };
    let h = if hi > 0.0 && hi.is_finite() {
        hi.log2().max(0.35)
    } else {
        1.0
    };
    let pad = (h - l) * 0.06;
    let (l, h) = (l - pad, h + pad);
    let inside = |v: &f64| *v >= l && *v <= h;
    let mut bold: Vec<f64> = ((l.ceil() as i32)..=(h.floor() as i32))
        .map(|k| k as f64)
        .collect();
    const EXTRA: [f64; 6] = [0.67, 0.8, 1.25, 1.5, 3.0, 6.0];
    const NICE: [f64; 13] = [
        0.1, 0.2, 0.3, 0.4, 0.67, 0.8, 1.25, 1.5, 3.0, 5.0, 6.0, 10.0, 12.0,
    ];
    if bold.len() < 4 {
        bold.extend(EXTRA.iter().map(|v| v.log2()).filter(inside));
        bold.sort_by(f64::total_cmp);
    }
    let light = if h - l > 6.0 {
        Vec::new()
    } else {
        NICE.iter()
            .map(|v| v.log2())
            .filter(inside)
            .filter(|v| !bold.iter().any(|b| (b - v).abs() < 1e-9))
            .collect()
    };
    Axis {
        range: l..h,
        bold,
        light,
    }
}

/// Tick label of a log2(ratio) value: "0.5×", "1×", "2×".
pub fn ratio_label(v: f64) -> String {
    super::data::fmt_ratio(2f64.powf(v))
}

/// A linear axis from 0 to a little above `hi` (`headroom` as a fraction, room for value labels),
/// with "nice" steps (1, 2, 2.5, 5 x 10^k) giving at most `max_labels` labels. A zero, negative
/// or non-finite `hi` (e.g. every bandwidth zero) gives 0..1.
pub fn linear_axis(hi: f64, max_labels: usize, headroom: f64) -> Axis {
    let hi = if hi > 0.0 && hi.is_finite() { hi } else { 1.0 };
    let top = hi * (1.0 + headroom.max(0.0));
    let raw = top / max_labels.max(2) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let last = (top / step).floor() as i64;
    let bold: Vec<f64> = (0..=last).map(|k| k as f64 * step).collect();
    let light = (0..=2 * last).map(|k| k as f64 * step / 2.0).collect();
    Axis {
        range: 0.0..top,
        bold,
        light,
    }
}

/// Sets up a chart in `area` with the standard margins, grid, tick labels and axis titles.
pub struct ChartSpec<'a> {
    pub x: Axis,
    pub y: Axis,
    pub x_desc: &'a str,
    pub y_desc: &'a str,
    pub x_fmt: &'a dyn Fn(&f64) -> String,
    pub y_fmt: &'a dyn Fn(&f64) -> String,
    /// An optional caption above the plotting area (for panels).
    pub caption: Option<&'a str>,
    /// Width of the y label area when the caller draws its own y labels (bar charts), instead of
    /// sizing it to the tick labels.
    pub y_label_space: Option<i32>,
}

/// Builds the chart and draws its mesh; returns the context to draw series into.
pub fn build_chart<'a, DB: DrawingBackend + 'a>(
    area: &'a Area<DB>,
    th: &Theme,
    spec: &ChartSpec,
) -> Result<ChartContext<'a, DB, Coord>> {
    let tick = th.font(fs::TICK);
    let y_label_w = spec
        .y
        .bold
        .iter()
        .map(|v| text_size(&tick, &(spec.y_fmt)(v)).0)
        .max()
        .unwrap_or(0);
    let y_area = match spec.y_label_space {
        Some(w) => w,
        None => y_label_w + th.px(18.0) + (th.fs(fs::AXIS_DESC) * 1.6) as i32,
    };
    let mut b = ChartBuilder::on(area);
    b.margin_top(th.px(14.0))
        .margin_right(th.px(24.0))
        .margin_left(th.px(8.0))
        .margin_bottom(th.px(6.0))
        .x_label_area_size(th.px(34.0) + (th.fs(fs::AXIS_DESC) * 1.5) as i32)
        .y_label_area_size(y_area);
    if let Some(c) = spec.caption {
        b.caption(c, th.bold(fs::PANEL).color(&INK));
    }
    let mut chart = b
        .build_cartesian_2d(spec.x.clone(), spec.y.clone())
        .plot()?;
    chart
        .configure_mesh()
        .x_desc(spec.x_desc)
        .y_desc(spec.y_desc)
        .x_label_formatter(spec.x_fmt)
        .y_label_formatter(spec.y_fmt)
        .label_style(tick.color(&INK))
        .axis_desc_style(th.font(fs::AXIS_DESC).color(&INK))
        .bold_line_style(GRID_BOLD.stroke_width(1))
        .light_line_style(GRID_LIGHT.stroke_width(1))
        .axis_style(MUTED.stroke_width(th.stroke(1.5)))
        .set_all_tick_mark_size(th.px(6.0))
        .draw()
        .plot()?;
    Ok(chart)
}

/// Draws `text` centred in `area` (for charts that have nothing to show).
pub fn message<DB: DrawingBackend>(area: &Area<DB>, th: &Theme, text: &str) -> Result<()> {
    let (w, h) = area.dim_in_pixel();
    let font = th.font(fs::PANEL);
    let lines = wrap(&font, text, w as i32 * 8 / 10);
    let lh = (th.fs(fs::PANEL) * 1.5) as i32;
    let mut y = h as i32 / 2 - lh * lines.len() as i32 / 2;
    for line in lines {
        area.draw_text(
            &line,
            &font.color(&MUTED).pos(Pos::new(HPos::Center, VPos::Center)),
            (w as i32 / 2, y),
        )
        .plot()?;
        y += lh;
    }
    Ok(())
}

/// A text label with a white, slightly transparent backing box so it stays readable over grid
/// lines and data; `at` is in pixels of `area`, anchored at `pos`.
pub fn boxed_label<DB: DrawingBackend>(
    area: &Area<DB>,
    th: &Theme,
    text: &str,
    at: (i32, i32),
    pos: Pos,
    color: &RGBColor,
    base: f64,
) -> Result<()> {
    let font = th.font(base);
    let (w, h) = text_size(&font, text);
    let x0 = match pos.h_pos {
        HPos::Left => at.0,
        HPos::Center => at.0 - w / 2,
        HPos::Right => at.0 - w,
    };
    let y0 = match pos.v_pos {
        VPos::Top => at.1,
        VPos::Center => at.1 - h / 2,
        VPos::Bottom => at.1 - h,
    };
    let p = th.px(4.0);
    area.draw(&Rectangle::new(
        [(x0 - p, y0 - p), (x0 + w + p, y0 + h + p)],
        WHITE.mix(0.85).filled(),
    ))
    .plot()?;
    area.draw_text(text, &font.color(color).pos(pos), at).plot()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_axis_labels_powers_of_two_and_survives_one_size() {
        let a = size_axis(&[8, 1 << 30], 12);
        let labels: Vec<String> = a.bold.iter().map(|v| size_label(*v)).collect();
        assert!(
            labels.contains(&"1 KiB".to_string()) || labels.contains(&"4 KiB".to_string()),
            "{labels:?}"
        );
        assert!(labels.len() <= 12 && labels.len() >= 4, "{labels:?}");
        let one = size_axis(&[4096], 12);
        assert!(one.range.start < 12.0 && one.range.end > 12.0);
        assert!(one.bold.contains(&12.0));
        let none = size_axis(&[], 12);
        assert!(none.range.end > none.range.start);
    }

    #[test]
    fn time_and_ratio_axes_are_never_empty() {
        for (lo, hi) in [(1.0, 1.0), (0.0, 0.0), (f64::NAN, 5.0), (2.0, 2e6)] {
            let a = log_time_axis(lo, hi, 12);
            assert!(a.range.end > a.range.start, "{lo} {hi}");
            assert!(!a.bold.is_empty(), "{lo} {hi}");
        }
        let r = ratio_axis(0.8, 2.5);
        assert!(r.bold.iter().any(|v| v.abs() < 1e-12), "1x always labelled");
        let r = ratio_axis(1.0, 1.0);
        assert!(r.range.start < 0.0 && r.range.end > 0.0);
        assert!(r.bold.len() >= 3, "{:?}", r.bold);
        let t = log_time_axis(4.1, 4.9, 12);
        assert!(
            t.bold.len() >= 2,
            "a narrow range still gets labels: {:?}",
            t.bold
        );
        let l = linear_axis(0.0, 8, 0.1);
        assert!(l.range.end > l.range.start && !l.bold.is_empty());
    }
}

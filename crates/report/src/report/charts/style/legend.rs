//! The legend panel and the series' lines and markers it explains.

use super::*;
use crate::config::PathKind;
use crate::report::vocab::scenario_label;

/// One entry of a legend panel.
#[derive(Clone, Debug)]
pub enum Legend {
    /// A section heading.
    Head(String),
    /// A colour with a label (a scenario).
    Color(RGBColor, String),
    /// A line sample with marker (a path).
    Line(RGBColor, Dash, Option<Marker>, String),
    /// A marker alone (measured points).
    Point(RGBColor, Marker, String),
    /// A filled box (a stage, or a path's bar shade).
    Boxed(RGBAColor, RGBColor, String),
    /// Muted explanatory text, wrapped to the panel width.
    Note(String),
    /// A solid line of the given base width (an op, when a run has several).
    Stroke(f64, String),
    /// Vertical space.
    Gap,
    /// Nothing, where every entry after it fits the panel; where they do not, as many of them
    /// as fit and then this note, its `{n}` replaced by how many were left out (say where the
    /// reader finds them), so a long list never runs off the image.
    Overflow(String),
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
            | Legend::Point(_, _, t)
            | Legend::Boxed(_, _, t)
            | Legend::Stroke(_, t) => sample + text_size(&font, t).0,
            Legend::Note(_) | Legend::Gap | Legend::Overflow(_) => 0,
        };
        w = w.max(need);
    }
    let w = (w + 2 * th.px(20.0)) as u32;
    w.clamp(th.w * 14 / 100, th.w * 34 / 100)
}

/// The vertical room entry `it` takes in a legend panel `w` pixels wide.
fn item_height(th: &Theme, it: &Legend, w: u32) -> i32 {
    let line_h = (th.fs(fs::LEGEND) * 1.6) as i32;
    match it {
        Legend::Head(_) => th.px(4.0) + line_h,
        Legend::Color(..)
        | Legend::Line(..)
        | Legend::Point(..)
        | Legend::Boxed(..)
        | Legend::Stroke(..) => line_h,
        Legend::Note(t) => note_lines(th, t, w).len() as i32 * note_line_h(th),
        Legend::Gap => line_h / 2,
        Legend::Overflow(_) => 0,
    }
}

fn note_lines(th: &Theme, t: &str, w: u32) -> Vec<String> {
    wrap(&th.font(fs::NOTE), t, w as i32 - th.px(12.0) - th.px(18.0))
}

fn note_line_h(th: &Theme) -> i32 {
    (th.fs(fs::NOTE) * 1.4) as i32
}

/// The entries to draw in a panel `w` x `h`: all of them, or, where they overflow after a
/// [`Legend::Overflow`], those that fit followed by its note.
fn fitted(th: &Theme, items: &[Legend], (w, h): (u32, u32)) -> Vec<Legend> {
    let height = |its: &[Legend]| -> i32 { its.iter().map(|it| item_height(th, it, w)).sum() };
    let room = h as i32 - th.px(30.0);
    let Some(at) = items
        .iter()
        .position(|it| matches!(it, Legend::Overflow(_)))
    else {
        return items.to_vec();
    };
    if height(items) <= room {
        return items.to_vec();
    }
    let Legend::Overflow(text) = &items[at] else {
        unreachable!()
    };
    let (head, tail) = (&items[..at], &items[at + 1..]);
    let mut keep = tail.len();
    loop {
        let note = Legend::Note(text.replace("{n}", &(tail.len() - keep).to_string()));
        let mut out = head.to_vec();
        out.extend_from_slice(&tail[..keep]);
        if keep == 0 || height(&out) + item_height(th, &note, w) <= room {
            out.push(note);
            return out;
        }
        keep -= 1;
    }
}

/// Draws legend entries top-down in `area` (which lies outside every data area).
pub fn draw_legend<DB: DrawingBackend>(
    area: &Area<DB>,
    th: &Theme,
    items: &[Legend],
) -> Result<()> {
    let (w, h) = area.dim_in_pixel();
    let items = fitted(th, items, (w, h));
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
    for it in &items {
        if y > h as i32 - line_h / 2 {
            break;
        }
        match it {
            Legend::Head(t) => {
                area.draw_text(t, &head.color(&INK).pos(left), (x0, y + th.px(4.0)))
                    .plot()?;
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
            }
            Legend::Point(c, m, t) => {
                draw_marker(area, (x0 + sample / 2, y), *m, c, th)?;
                area.draw_text(
                    &fit(&font, t, max_text),
                    &font.color(&INK).pos(left),
                    (tx, y),
                )
                .plot()?;
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
            }
            Legend::Note(t) => {
                let mut ly = y;
                for line in note_lines(th, t, w) {
                    area.draw_text(&line, &note.color(&MUTED).pos(left), (x0, ly))
                        .plot()?;
                    ly += note_line_h(th);
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
            }
            Legend::Gap | Legend::Overflow(_) => {}
        }
        y += item_height(th, it, w);
    }
    Ok(())
}

/// Scenario colours and path styles as legend entries, plus notes.
pub fn series_legend(m: &crate::report::charts::data::Model, with_paths: bool) -> Vec<Legend> {
    let mut items = vec![Legend::Head("Scenario (colour)".into())];
    for (i, s) in m.scenarios.iter().enumerate() {
        let label = scenario_label(&s.name, s.class);
        items.push(Legend::Color(scenario_color(i), label));
    }
    if with_paths {
        items.push(Legend::Gap);
        items.push(Legend::Head("Path (line, marker)".into()));
        for p in &m.paths {
            let st = path_style(*p);
            items.push(Legend::Line(INK, st.dash, Some(st.marker), p.to_string()));
        }
    }
    if m.multi_op() {
        items.push(Legend::Gap);
        items.push(Legend::Head("Op (line width)".into()));
        for (i, op) in m.ops.iter().enumerate() {
            items.push(Legend::Stroke(op_width(i), op.to_string()));
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
        let autos = with
            .clone()
            .filter(|s| m.paths[s.path] == PathKind::Auto)
            .count();
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
        Marker::TriangleDown => {
            let r = r + 1;
            area.draw(&(e + Polygon::new(vec![(0, r), (r, -r * 3 / 4), (-r, -r * 3 / 4)], fill)))
        }
        Marker::Plus => {
            let st = color.stroke_width(th.stroke(2.5));
            let r = r + 1;
            area.draw(
                &(e + PathElement::new(vec![(-r, 0), (r, 0)], st)
                    + PathElement::new(vec![(0, -r), (0, r)], st)),
            )
        }
        Marker::HollowSquare => area.draw(
            &(e + Rectangle::new([(-r, -r), (r, r)], white)
                + Rectangle::new([(-r, -r), (r, r)], ring)),
        ),
        Marker::Measured => {
            let r = th.px(9.0);
            let ring = vec![(0, -r), (r, 0), (0, r), (-r, 0), (0, -r)];
            let outline = PathElement::new(ring.clone(), BLACK.stroke_width(th.stroke(4.5)));
            let inner = PathElement::new(ring, color.stroke_width(th.stroke(2.0)));
            area.draw(&(e + outline + inner))
        }
    }
    .plot()
}

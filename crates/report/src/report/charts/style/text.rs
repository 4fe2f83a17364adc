//! Fonts scaled to the image, text measurement, wrapping and fitting, the title block.

use super::*;

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

//! Colours and line styles: one colour per scenario, a dash and marker per path.

use super::*;
use crate::config::PathKind;

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
pub(super) const MORE: [RGBColor; 8] = [
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

/// Dark text on light fills, white on dark ones.
pub fn text_on(c: &RGBColor) -> RGBColor {
    let l = 0.299 * c.0 as f64 + 0.587 * c.1 as f64 + 0.114 * c.2 as f64;
    if l > 140.0 { INK } else { WHITE }
}

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
    /// A triangle pointing down.
    TriangleDown,
    /// An upright cross (+), apart from the diagonal [`Marker::Cross`].
    Plus,
    /// A square outlined in the series colour, white inside, apart from the filled
    /// [`Marker::Square`].
    HollowSquare,
    /// A measured figure (`run --measured`): a large hollow diamond outlined in black around
    /// a ring of the series colour, so it reads apart from every path's marker and leaves the
    /// model's marker visible inside it.
    Measured,
}

/// How a path is drawn: a stroke pattern and a marker, so paths stay distinguishable in grey
/// scale and for every kind of colour vision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathStyle {
    pub dash: Dash,
    pub marker: Marker,
}

/// The style of `path`: fixed per path, so every run reads the same and no two paths share a
/// marker (they cycled by position before, and a third such path repeated the diamond).
/// GPUDirect, the headline, and PXN, its relayed form, are solid; the staging paths dashed.
pub fn path_style(path: PathKind) -> PathStyle {
    let (dash, marker) = match path {
        PathKind::GpuDirect => (Dash::Solid, Marker::Circle),
        PathKind::Staged => (Dash::Dashed, Marker::Square),
        PathKind::Host => (Dash::Dotted, Marker::Triangle),
        PathKind::StagedPipelined => (Dash::LongDashed, Marker::Diamond),
        PathKind::Gdrcopy => (Dash::Dashed, Marker::Cross),
        PathKind::Auto => (Dash::LongDashed, Marker::Plus),
        PathKind::Pxn => (Dash::Solid, Marker::TriangleDown),
        PathKind::NcclHost => (Dash::Dotted, Marker::HollowSquare),
    };
    PathStyle { dash, marker }
}

/// Line width (at 1600x1000) of op `i` when a run has several ops: thick, thinner, thin. Colour and
/// pattern already carry scenario and path, so the op gets the one remaining channel.
pub fn op_width(i: usize) -> f64 {
    [2.5, 1.3, 0.8][i.min(2)]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue #28 item 3: every path its own marker, none the measured points' one, and no two
    /// paths the same line.
    #[test]
    fn every_path_has_a_marker_and_line_of_its_own() {
        let styles: Vec<PathStyle> = PathKind::ALL.into_iter().map(path_style).collect();
        for (i, a) in styles.iter().enumerate() {
            assert_ne!(a.marker, Marker::Measured);
            for (j, b) in styles.iter().enumerate().skip(i + 1) {
                assert_ne!(
                    a.marker,
                    b.marker,
                    "{} and {}",
                    PathKind::ALL[i],
                    PathKind::ALL[j]
                );
                assert_ne!(a, b);
            }
        }
    }
}

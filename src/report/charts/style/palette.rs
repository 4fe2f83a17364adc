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

/// The style of `path` (index `i` in the run's path order). The three known paths get fixed
/// styles (GPUDirect, the headline, is solid) so every run reads the same; others cycle.
pub fn path_style(path: PathKind, i: usize) -> PathStyle {
    let (dash, marker) = match path {
        PathKind::GpuDirect => (Dash::Solid, Marker::Circle),
        PathKind::Staged => (Dash::Dashed, Marker::Square),
        PathKind::Host => (Dash::Dotted, Marker::Triangle),
        PathKind::Auto | PathKind::Gdrcopy | PathKind::StagedPipelined | PathKind::Pxn => [
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

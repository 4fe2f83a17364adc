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

mod axes;
mod frame;
mod legend;
mod palette;
mod text;

pub use self::{axes::*, frame::*, legend::*, palette::*, text::*};

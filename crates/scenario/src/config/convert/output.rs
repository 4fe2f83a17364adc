//! `[output]`: which charts, in which formats and sizes. The keys, defaults and ranges are
//! declared in `raw.rs`.

use super::super::OutputOptions;
use super::super::raw::RawOutput;
use super::quantity::{Cx, R};

pub(super) fn convert(cx: &Cx, o: &RawOutput) -> R<OutputOptions> {
    let mut out = OutputOptions::default();
    o.apply(cx, &|k| format!("output.{k}"), &mut out)?;
    Ok(out)
}

//! `[output]`: which charts, in which formats and sizes.

use super::super::raw::RawOutput;
use super::quantity::{Cx, R};
use crate::report::OutputOptions;
use crate::report::charts::CHART_NAMES;

pub(super) fn convert(cx: &Cx, o: &RawOutput) -> R<OutputOptions> {
    let mut out = OutputOptions::default();
    if let Some(charts) = &o.charts {
        for (i, c) in charts.iter().enumerate() {
            if !CHART_NAMES.contains(&c.as_str()) {
                return Err(cx.err(
                    &format!("output.charts[{i}]"),
                    format!("one of {}", CHART_NAMES.join(", ")),
                    format!("{c:?}"),
                ));
            }
        }
        out.charts = charts.clone();
    }
    if let Some(formats) = &o.formats {
        for (i, f) in formats.iter().enumerate() {
            if !["svg", "png"].contains(&f.as_str()) {
                return Err(cx.err(
                    &format!("output.formats[{i}]"),
                    "one of svg, png",
                    format!("{f:?}"),
                ));
            }
        }
        out.formats = formats.clone();
    }
    for (v, key, slot) in [
        (o.width_px, "output.width_px", &mut out.width_px),
        (o.height_px, "output.height_px", &mut out.height_px),
    ] {
        if let Some(v) = v {
            if !(200..=8000).contains(&v) {
                return Err(cx.err(key, "a size from 200 to 8000 pixels", v.to_string()));
            }
            *slot = v;
        }
    }
    if let Some(sizes) = &o.breakdown_sizes {
        out.breakdown_sizes = sizes
            .iter()
            .enumerate()
            .map(|(i, q)| cx.size(q, &format!("output.breakdown_sizes[{i}]")))
            .collect::<R<_>>()?;
    }
    if let Some(q) = &o.compare_size {
        out.compare_size = cx.size(q, "output.compare_size")?;
    }
    Ok(out)
}

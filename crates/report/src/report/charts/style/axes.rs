//! Axes with explicit key points and human tick labels: sizes, log times, ratios, linear.

use super::*;

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
pub(super) fn widen(lo: f64, hi: f64, pad_if_flat: f64) -> (f64, f64) {
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
/// fit (8 B, 64 B, 512 B, 4 KiB...), grid at every power of two. A narrow panel still gets
/// the room of four labels: 1 KiB, 1 MiB, 1 GiB across a full sweep, not "1 MiB" alone.
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
        .find(|st| span / st < max_labels.max(4))
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
    crate::report::charts::data::fmt_us(10f64.powf(v))
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
    crate::report::charts::data::fmt_ratio(2f64.powf(v))
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

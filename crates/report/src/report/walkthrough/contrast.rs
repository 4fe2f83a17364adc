//! The contrast of the staged and GPUDirect walks: their descriptors' addresses side by side,
//! and a table of what each path cost, counted from the simulation rather than asserted.

use super::format::{columns, ratio, us};
use super::layout::style;
use super::model::{PathKind, PathWalk, Walk};
use super::phrases::{PathStyle, Phrases};
use crate::units::Ps;

/// Appends the contrast when the walk has both a staged and a GPUDirect path.
pub(crate) fn contrast(w: &Walk, words: &dyn Phrases, out: &mut Vec<String>) {
    let (Some(st), Some(gd)) = (
        w.paths.iter().find(|p| p.path != PathKind::GpuDirect),
        w.paths.iter().find(|p| p.path == PathKind::GpuDirect),
    ) else {
        return;
    };
    let [s, r] = &w.ends;
    let (first, direct) = (style(st), PathStyle::GpuDirect);
    out.push(words.contrast_heading().into());
    if let (Some(a), Some(b)) = (&st.gather, &gd.gather) {
        out.push(words.source(first, a.addr, &words.address_kind(a, s)));
        out.push(words.source(direct, b.addr, &words.address_kind(b, s)));
    }
    if let (Some(a), Some(b)) = (&st.scatter, &gd.scatter) {
        out.push(words.destination(first, &r.host, a.addr, &words.address_kind(a, r)));
        out.push(words.destination(direct, &r.host, b.addr, &words.address_kind(b, r)));
    }
    counted_table(w.size, st, gd, words, out);
    if gd.latency_ps > 0 && st.latency_ps > 0 {
        let x = st.latency_ps as f64 / gd.latency_ps as f64;
        out.push(format!(
            "  {}",
            if x >= 1.0 {
                words.lower_latency(x, first)
            } else {
                words.higher_latency(1.0 / x, first)
            }
        ));
    }
    out.extend(words.definitions().iter().map(|l| l.to_string()));
    // Which copies GPUDirect removed.
    let removed: Vec<String> = st
        .copies
        .iter()
        .filter(|c| !gd.copies.contains(c))
        .map(|(host, d2h)| words.removed_copy(host, *d2h))
        .collect();
    out.push(if removed.is_empty() {
        words.removed_none(gd.effective_path)
    } else {
        words.removed_copies(&removed)
    });
    // What PXN does instead of the NIC's read of the far GPU.
    if let Some(relay) = &st.relay {
        out.push(words.relay_contrast(relay, w.class));
    }
}

/// The counted rows, staged against GPUDirect, with what GPUDirect removed.
fn counted_table(
    size: u64,
    st: &PathWalk,
    gd: &PathWalk,
    words: &dyn Phrases,
    out: &mut Vec<String>,
) {
    // One row: the staged value, the GPUDirect value and staged minus GPUDirect, signed.
    let row = |a: u64, b: u64, show: &dyn Fn(u64) -> String| {
        let diff = if a >= b {
            show(a - b)
        } else {
            format!("-{}", show(b - a))
        };
        (show(a), show(b), diff)
    };
    let n = |v: u64| v.to_string();
    let per_msg = |v: u64| ratio(v, size);
    let time = |v: Ps| us(v);
    let values: [(String, String, String); 6] = [
        row(st.copies.len() as u64, gd.copies.len() as u64, &n),
        row(st.pcie_link_bytes, gd.pcie_link_bytes, &per_msg),
        row(st.root_complex_bytes, gd.root_complex_bytes, &per_msg),
        row(st.host_mem_bytes, gd.host_mem_bytes, &n),
        row(st.cpu_busy_ps, gd.cpu_busy_ps, &time),
        row(st.latency_ps, gd.latency_ps, &time),
    ];
    let labels = words.counted();
    let lw = labels.iter().map(|l| columns(l)).max().unwrap_or(0);
    let removed = words.removed_column();
    out.push(format!(
        "  {}  {:>12} {:>12} {}",
        " ".repeat(lw),
        st.path,
        gd.path,
        " ".repeat(12 - columns(removed)) + removed
    ));
    for (label, (a, b, d)) in labels.iter().zip(&values) {
        out.push(format!(
            "  {}{}  {:>12} {:>12} {:>12}",
            label,
            " ".repeat(lw - columns(label)),
            a,
            b,
            d
        ));
    }
}

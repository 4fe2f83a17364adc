//! The heatmap of the P2P-enabled bandwidth and latency matrices: one panel each, a cell per
//! GPU pair coloured by its value (darker is faster for bandwidth, slower for latency), its
//! value written in it. Plain SVG text: nothing here simulates or reads the config.

use std::fmt::Write as _;

use super::{Matrix, Report};

const CELL: usize = 56;
const MARGIN: usize = 60;

/// Light to dark blue by `t` in [0, 1].
fn shade(t: f64) -> (u8, u8, u8) {
    let t = t.clamp(0.0, 1.0);
    let lerp = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    (lerp(239.0, 8.0), lerp(243.0, 48.0), lerp(255.0, 107.0))
}

fn panel(out: &mut String, m: &Matrix, x0: usize, y0: usize) {
    let n = m.cells.len();
    let values = m.cells.iter().flatten().copied();
    let (lo, hi) = values.fold((f64::MAX, f64::MIN), |(l, h), v| (l.min(v), h.max(v)));
    let _ = writeln!(
        out,
        r#"<text x="{x0}" y="{}" font-size="13" font-weight="bold">{} ({})</text>"#,
        y0 - 28,
        m.key.replace('_', " "),
        m.unit
    );
    for j in 0..n {
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" font-size="11" text-anchor="middle">GPU{j}</text>"#,
            x0 + j * CELL + CELL / 2,
            y0 - 6
        );
    }
    for (i, row) in m.cells.iter().enumerate() {
        let y = y0 + i * CELL;
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" font-size="11" text-anchor="end">GPU{i}</text>"#,
            x0 - 6,
            y + CELL / 2 + 4
        );
        for (j, &v) in row.iter().enumerate() {
            let t = if hi > lo { (v - lo) / (hi - lo) } else { 1.0 };
            let (r, g, b) = shade(t);
            let ink = if t > 0.55 { "white" } else { "black" };
            let x = x0 + j * CELL;
            let _ = writeln!(
                out,
                r#"<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="rgb({r},{g},{b})" stroke="white"/><text x="{}" y="{}" font-size="11" text-anchor="middle" fill="{ink}">{v:.1}</text>"#,
                x + CELL / 2,
                y + CELL / 2 + 4
            );
        }
    }
}

/// The SVG: the unidirectional and bidirectional P2P=Enabled bandwidth matrices and the
/// P2P=Enabled GPU latency matrix, side by side.
pub fn svg(r: &Report) -> String {
    let keys = [
        "unidirectional_p2p_writes",
        "bidirectional_p2p_enabled",
        "latency_p2p_writes_gpu",
    ];
    let shown: Vec<&Matrix> = keys
        .iter()
        .filter_map(|k| r.matrices.iter().find(|m| m.key == *k))
        .collect();
    let n = r.gpus.len();
    let w = MARGIN + shown.len() * (n * CELL + MARGIN);
    let h = 2 * MARGIN + n * CELL + 20;
    let mut out = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
<text x="{MARGIN}" y="20" font-size="15" font-weight="bold">GPU pairs of {} (simulated, p2pBandwidthLatencyTest)</text>
"#,
        r.host
    );
    for (k, m) in shown.iter().enumerate() {
        panel(&mut out, m, MARGIN + k * (n * CELL + MARGIN), MARGIN + 30);
    }
    out.push_str("</svg>\n");
    out
}

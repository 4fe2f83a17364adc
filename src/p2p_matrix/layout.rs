//! The report as p2pBandwidthLatencyTest prints it (its printf formats), and the CSV of every
//! cell.

use std::fmt::Write as _;

use super::Report;

/// The sample's name line.
const NAME: &str = "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]";

/// One matrix body: the `   D\D` (or `   GPU`/`   CPU`) header and `%6.02f ` cells.
fn body(out: &mut String, corner: &str, cells: &[Vec<f64>]) {
    let _ = write!(out, "{corner}");
    for j in 0..cells.len() {
        let _ = write!(out, "{j:6} ");
    }
    out.push('\n');
    for (i, row) in cells.iter().enumerate() {
        let _ = write!(out, "{i:6} ");
        for v in row {
            let _ = write!(out, "{v:6.2} ");
        }
        out.push('\n');
    }
}

/// The whole text.
pub fn text(r: &Report) -> String {
    let mut out = format!("{NAME}\n");
    for (i, g) in r.gpus.iter().enumerate() {
        // No bus ids in the model: the GPU's index stands for them.
        let _ = writeln!(
            out,
            "Device: {i}, {g}, pciBusID: {i:x}, pciDeviceID: 0, pciDomainID:0"
        );
    }
    for (i, row) in r.access.iter().enumerate() {
        for (j, &a) in row.iter().enumerate() {
            if i != j {
                let can = if a { "CAN" } else { "CANNOT" };
                let _ = writeln!(out, "Device={i} {can} Access Peer Device={j}");
            }
        }
    }
    out.push_str(
        "\n***NOTE: In case a device doesn't have P2P access to other one, it falls back to \
         normal memcopy procedure.\nSo you can see lesser Bandwidth (GB/s) and unstable Latency \
         (us) in those cases.\n\n",
    );
    out.push_str("P2P Connectivity Matrix\n     D\\D");
    for j in 0..r.access.len() {
        let _ = write!(out, "{j:6}");
    }
    out.push('\n');
    for (i, row) in r.access.iter().enumerate() {
        let _ = write!(out, "{i:6}\t");
        for &a in row {
            let _ = write!(out, "{:6}", u8::from(a));
        }
        out.push('\n');
    }
    let mut k = 0;
    while k < r.matrices.len() {
        let m = &r.matrices[k];
        let _ = writeln!(out, "{}", m.title);
        if m.unit == "us" {
            body(&mut out, "   GPU", &m.cells);
            out.push('\n');
            body(&mut out, "   CPU", &r.matrices[k + 1].cells);
            k += 2;
        } else {
            body(&mut out, "   D\\D", &m.cells);
            k += 1;
        }
    }
    out.push_str(
        "\nNOTE: The CUDA Samples are not meant for performance measurements. Results may vary \
         when GPU Boost is enabled.\n",
    );
    out
}

/// One row per cell: `matrix,src,dst,value,unit,peer_access`.
pub fn csv(r: &Report) -> String {
    let mut out = String::from("host,matrix,src_gpu,dst_gpu,value,unit,peer_access\n");
    for m in &r.matrices {
        for (i, row) in m.cells.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "{},{},{i},{j},{v:.3},{},{}",
                    r.host, m.key, m.unit, r.access[i][j]
                );
            }
        }
    }
    out
}

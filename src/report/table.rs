//! The short table `gdrsim run` prints when it is done, from the result rows alone.

use crate::config::PathKind;
use crate::stats::Summary;
use crate::units::{fmt_bytes, ps_to_us};

/// The short table printed after a run: per scenario and path, latency at a small and a large
/// size and the bandwidth at the largest size.
pub fn summary_table(rows: &[Summary]) -> String {
    let small = rows.iter().map(|r| r.size_bytes).min().unwrap_or(0);
    let large = rows.iter().map(|r| r.size_bytes).max().unwrap_or(0);
    let mut out = format!(
        "{:<10} {:<6} {:<10} {:<28} {:>14} {:>14} {:>16}\n",
        "scenario",
        "class",
        "path",
        "effective",
        format!("lat@{}", fmt_bytes(small).replace(' ', "")),
        format!("lat@{}", fmt_bytes(large).replace(' ', "")),
        format!("bw@{} GB/s", fmt_bytes(large).replace(' ', ""))
    );
    let mut keys: Vec<(&str, PathKind)> = Vec::new();
    for r in rows {
        if !keys.contains(&(r.scenario.as_str(), r.path)) {
            keys.push((r.scenario.as_str(), r.path));
        }
    }
    for (s, p) in keys {
        let of = |size| {
            rows.iter()
                .find(|r| r.scenario == s && r.path == p && r.size_bytes == size)
        };
        let (Some(a), Some(b)) = (of(small), of(large)) else {
            continue;
        };
        out.push_str(&format!(
            "{:<10} {:<6} {:<10} {:<28} {:>11.3} us {:>11.1} us {:>16.2}\n",
            s,
            a.class,
            p,
            b.effective_path,
            ps_to_us(a.lat_model_ps),
            ps_to_us(b.lat_model_ps),
            b.bw_gbps
        ));
    }
    out
}

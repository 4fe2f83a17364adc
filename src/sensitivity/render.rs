//! The sensitivity report as text, CSV and the tornado chart's data.

use super::*;

/// The report as text: the variants by effect (flips first, then the largest change of a
/// ratio), and the fragile conclusions.
pub fn render(r: &Report, threshold: f64) -> String {
    let mut s = format!(
        "{} estimates, each scaled by {:.0}% up and down ({} runs; {} points simulated, {} taken \
         from the base run where the estimate cannot reach them). A ratio is GPUDirect over its \
         staging baseline, a bandwidth a path's at the largest size; moves under {:.0}% are left \
         out.\n\n",
        r.estimates,
        r.delta * 100.0,
        r.runs,
        r.simulated,
        r.reused,
        threshold * 100.0
    );
    let shown: Vec<&Effect> = r
        .effects
        .iter()
        .filter(|e| {
            !e.flips.is_empty()
                || !e.moved.is_empty()
                || e.max_change.abs() >= threshold
                || e.bw_change.abs() >= threshold
        })
        .collect();
    let wk = shown.iter().map(|e| e.key.len()).max().unwrap_or(9).max(9);
    s.push_str(&format!(
        "{:<wk$}  {:<6}  {:>8}  {:>9}  where (ratio; bandwidth)\n",
        "parameter", "change", "ratio", "bandwidth"
    ));
    for e in &shown {
        let bw_at = match e.bw_change.abs() >= threshold {
            true => format!("; {}", e.bw_at),
            false => String::new(),
        };
        s.push_str(&format!(
            "{:<wk$}  {:<6}  {:>+7.1}%  {:>+8.1}%  {}{bw_at}\n",
            e.key,
            e.direction,
            e.max_change * 100.0,
            e.bw_change * 100.0,
            e.max_at
        ));
    }
    if shown.is_empty() {
        s.push_str("(no estimate moves a headline ratio or bandwidth that much)\n");
    }
    let fragile = fragile(r);
    s.push('\n');
    if fragile.is_empty() {
        s.push_str("No conclusion flips: every winner and bottleneck holds under each change.\n");
    } else {
        s.push_str(&format!("Fragile conclusions ({}):\n", fragile.len()));
        for f in fragile {
            s.push_str(&format!("  {f}\n"));
        }
    }
    let moved: Vec<String> = r
        .effects
        .iter()
        .flat_map(|e| {
            e.moved
                .iter()
                .map(move |m| format!("  {m}  ({} {})", e.key, e.direction))
        })
        .collect();
    if !moved.is_empty() {
        s.push_str(&format!("\nCrossovers moved ({}):\n", moved.len()));
        for m in moved {
            s.push_str(&m);
            s.push('\n');
        }
    }
    s
}

/// One line per flipped conclusion (adjacent sizes joined), with the estimate and direction
/// that flip it.
pub fn fragile(r: &Report) -> Vec<String> {
    r.effects
        .iter()
        .flat_map(|e| {
            joined(&e.flips)
                .into_iter()
                .map(move |f| format!("{f}  ({} {})", e.key, e.direction))
        })
        .collect()
}

/// Every variant as CSV: parameter, change, value, the largest ratio change and where, flips,
/// the largest bandwidth change and where, the crossovers moved.
pub fn csv(r: &Report) -> Result<Vec<u8>> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record([
        "parameter",
        "change",
        "value",
        "max_ratio_change",
        "where",
        "flips",
        "max_bandwidth_change",
        "bandwidth_where",
        "crossovers_moved",
    ])?;
    for e in &r.effects {
        let flips: Vec<String> = e.flips.iter().map(Flip::text).collect();
        w.write_record([
            e.key.as_str(),
            &e.direction,
            &e.value,
            &format!("{:.6}", e.max_change),
            &e.max_at,
            &flips.join("; "),
            &format!("{:.6}", e.bw_change),
            &e.bw_at,
            &e.moved.join("; "),
        ])?;
    }
    Ok(w.into_inner()?)
}

/// The tornado chart of `r` ([`crate::report::charts::tornado`]): per comparison, its latency
/// and its bandwidth ratio at the largest size it has, one bar per estimate from the ratio of
/// its variant down to that of its variant up. The largest size, because there the transfer
/// streams and its ratio rests on what most estimates set (read windows, read request sizes,
/// forwarding); at small sizes fixed costs that are measured (cudaMemcpy launch) dominate.
/// Every conclusion the default study has that flips is a large-size bandwidth one.
pub fn tornado(r: &Report, threshold: f64) -> Tornado {
    let mut labels: Vec<&str> = Vec::new();
    for (l, ..) in &r.base.ratios {
        if !labels.contains(&l.as_str()) {
            labels.push(l);
        }
    }
    let mut keys: Vec<&str> = Vec::new();
    for e in &r.effects {
        if !keys.contains(&e.key.as_str()) {
            keys.push(&e.key);
        }
    }
    let mut panels = Vec::new();
    for label in labels {
        for metric in [Metric::Latency, Metric::Bandwidth] {
            let Some(&(_, size, _, base)) = r
                .base
                .ratios
                .iter()
                .filter(|(l, _, m, _)| l == label && *m == metric)
                .max_by_key(|(_, s, _, _)| *s)
            else {
                continue;
            };
            let end = |key: &str, up: bool| {
                let e = r.effects.iter().find(|e| e.key == key && e.up == up)?;
                let ratio = e
                    .headlines
                    .ratios
                    .iter()
                    .find(|(l, s, m, _)| l == label && *s == size && *m == metric)?
                    .3;
                Some(End {
                    value: e.shown.clone(),
                    ratio,
                })
            };
            let bars = keys
                .iter()
                .map(|&k| Bar {
                    key: k.to_string(),
                    down: end(k, false),
                    up: end(k, true),
                })
                .filter(|b| b.down.is_some() || b.up.is_some())
                .collect();
            panels.push(Panel {
                comparison: label.to_string(),
                metric,
                size,
                base,
                bars,
            });
        }
    }
    Tornado {
        hardware: r.hardware.clone(),
        delta: r.delta,
        threshold,
        panels,
    }
}

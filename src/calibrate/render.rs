//! The calibration report as text.

use super::*;

/// The report as text: each fitted value with its standard error, the fit error before and
/// after, and the notes on skipped rows.
pub fn render(r: &Report, out: &Path) -> String {
    let mut s = String::new();
    let wk = r
        .fitted
        .iter()
        .map(|f| f.param.key.len())
        .max()
        .unwrap_or(9)
        .max(9);
    s.push_str(&format!(
        "{:<wk$}  {:>12}  {:>12}  {:>12}  {:>8}  unit\n",
        "parameter", "start", "fitted", "std error", "factor"
    ));
    for f in &r.fitted {
        let value = in_unit(&show(&f.value)).unwrap_or(f.start * f.factor);
        let sd = f
            .rel_sd
            .map_or("n/a".to_string(), |sd| format!("{:.4}", sd * value));
        s.push_str(&format!(
            "{:<wk$}  {:>12.4}  {:>12.4}  {:>12}  {:>8.4}  {}{}\n",
            f.param.key,
            f.start,
            value,
            sd,
            f.factor,
            f.param.unit,
            if f.at_bound {
                "  (at the --range bound)"
            } else {
                ""
            }
        ));
    }
    for f in r.fitted.iter().filter(|f| !f.siblings.is_empty()) {
        s.push_str(&format!(
            "applied to {} identical device{} as well: {}\n",
            f.siblings.len(),
            if f.siblings.len() == 1 { "" } else { "s" },
            f.siblings.join(", ")
        ));
    }
    for f in r.fitted.iter().filter(|f| f.at_bound) {
        s.push_str(&format!(
            "warning: {} ended at its bound (written with --allow-bound): the rows want it \
             beyond, so its value is not a fit\n",
            f.param.key
        ));
    }
    for w in &r.implausible {
        s.push_str(&format!(
            "warning: the calibrated config fails `check --strict` (written with \
             --allow-implausible): {w}\n"
        ));
    }
    s.push_str(&format!(
        "fit error (RMS relative, {} rows): {:.3}% before, {:.3}% after ({} evaluations)\n",
        r.rows,
        r.rms_before * 100.0,
        r.rms_after * 100.0,
        r.evaluations
    ));
    if r.fitted.iter().all(|f| f.rel_sd.is_none()) {
        s.push_str(
            "note: no standard errors: there are no more rows than fitted parameters, or the \
             rows do not determine every one of them (see any warning below)\n",
        );
    }
    for &(a, b, rho) in &r.correlated {
        s.push_str(&format!(
            "warning: {} and {} are correlated at {rho:+.3}: the rows fix a combination of the \
             two ({}), not each; fit one with the other held, or add rows that set them apart\n",
            r.fitted[a].param.key,
            r.fitted[b].param.key,
            if rho < 0.0 {
                "one up and the other down leaves the fit as it is, as for two delays that add"
            } else {
                "both up or both down together leaves the fit as it is"
            }
        ));
    }
    for n in &r.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s.push_str(&format!("calibrated config written to {}\n", out.display()));
    s
}

//! results.csv and stages.csv, in the column order of the output contract (DESIGN.md section 1).

use crate::stats::Summary;
use crate::units::ps_to_us_exact;

/// The results.csv header; the first twenty columns are a frozen contract.
pub const RESULTS_HEADER: [&str; 20] = [
    "scenario",
    "class",
    "path",
    "effective_path",
    "op",
    "size_bytes",
    "iterations",
    "lat_model_us",
    "lat_min_us",
    "lat_p50_us",
    "lat_mean_us",
    "lat_p99_us",
    "lat_max_us",
    "lat_stdev_us",
    "lat_ci95_us",
    "bw_GBps",
    "msg_rate_mps",
    "cpu_busy_us",
    "host_mem_bytes",
    "setup_us",
];

pub const STAGES_HEADER: [&str; 9] = [
    "scenario",
    "path",
    "op",
    "size_bytes",
    "stage",
    "component",
    "start_us",
    "end_us",
    "critical_us",
];

fn f(v: f64) -> String {
    format!("{v:.6}")
}

/// Renders results.csv.
pub fn results_csv(rows: &[Summary]) -> anyhow::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(RESULTS_HEADER)?;
    for r in rows {
        w.write_record([
            r.scenario.clone(),
            r.class.clone(),
            r.path.clone(),
            r.effective_path.clone(),
            r.op.clone(),
            r.size_bytes.to_string(),
            r.iterations.to_string(),
            ps_to_us_exact(r.lat_model_ps),
            f(r.lat.min_us),
            f(r.lat.p50_us),
            f(r.lat.mean_us),
            f(r.lat.p99_us),
            f(r.lat.max_us),
            f(r.lat.stdev_us),
            f(r.lat.ci95_us),
            f(r.bw_gbps),
            f(r.msg_rate_mps),
            ps_to_us_exact(r.cpu_busy_ps),
            r.host_mem_bytes.to_string(),
            ps_to_us_exact(r.setup_ps),
        ])?;
    }
    Ok(w.into_inner()?)
}

/// Renders stages.csv: one row per stage of each point's noise-free message.
pub fn stages_csv(rows: &[Summary]) -> anyhow::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(STAGES_HEADER)?;
    for r in rows {
        for s in &r.stages {
            w.write_record([
                r.scenario.as_str(),
                r.path.as_str(),
                r.op.as_str(),
                &r.size_bytes.to_string(),
                s.stage.name(),
                &s.component,
                &ps_to_us_exact(s.start_ps),
                &ps_to_us_exact(s.end_ps),
                &ps_to_us_exact(s.critical_ps),
            ])?;
        }
    }
    Ok(w.into_inner()?)
}

//! results.csv, stages.csv, flows.csv and links.csv, in the column order of the output contract
//! (DESIGN.md section 1; columns after the contract's are appended, never inserted).

use crate::report::overlay::{Figure, Overlay, error_pct};
use crate::stats::Summary;
use crate::units::ps_to_us_exact;

/// The results.csv header; the first twenty columns are a frozen contract, `flows`,
/// `bottleneck`, `reason`, `rnr_naks` and `steady` follow.
pub const RESULTS_HEADER: [&str; 25] = [
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
    "flows",
    "bottleneck",
    "reason",
    "rnr_naks",
    "steady",
];

/// The flows.csv header: the point's scenario, path, op and size, then one flow's columns
/// ([`crate::stats::FlowRow`]) and the point's bottleneck.
pub const FLOWS_HEADER: [&str; 13] = [
    "scenario",
    "path",
    "op",
    "size_bytes",
    "flow",
    "sender",
    "receiver",
    "class",
    "effective_path",
    "lat_model_us",
    "lat_mean_us",
    "bw_GBps",
    "bottleneck",
];

/// The flows.csv column after `bottleneck` where a flow crossed a switch fabric
/// (`fabric = "leaf-spine"`, `"rail-optimized"`): the switches its payload crossed
/// (`leaf0>spine2>leaf1`). A study on the single-switch network has no such column, so its
/// files keep their bytes.
pub const SWITCH_PATH_COLUMN: &str = "switch_path";

/// The links.csv header: the point's scenario, path, op and size, then one channel direction's
/// columns ([`crate::stats::LinkRow`]).
pub const LINKS_HEADER: [&str; 9] = [
    "scenario",
    "path",
    "op",
    "size_bytes",
    "channel",
    "bytes",
    "busy",
    "rate_GBps",
    "capacity_GBps",
];

/// The stages.csv header: the point's scenario, path, op and size, then one stage's columns
/// ([`crate::stats::StageRow`]; times in µs).
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

/// The column every CSV gets last where the study sweeps parameters (`[sweep] vary`): the
/// row's variant, as its label (`read_window=64, registration=cached`). A study without a
/// sweep has no such column, so its files keep their bytes.
pub const VARIANT_COLUMN: &str = "variant";

/// Whether the rows come from a sweep (and the CSVs get [`VARIANT_COLUMN`]).
fn swept(rows: &[Summary]) -> bool {
    rows.iter().any(|r| !r.variant.is_empty())
}

/// `header` with [`VARIANT_COLUMN`] appended where `sweep`.
fn with_variant<'a>(header: &[&'a str], sweep: bool) -> Vec<&'a str> {
    let mut h = header.to_vec();
    if sweep {
        h.push(VARIANT_COLUMN);
    }
    h
}

/// A row's `cells`, whose last is its variant, without that last cell where not `sweep`.
fn row_cells<'a>(cells: &[&'a str], sweep: bool) -> Vec<&'a str> {
    let n = cells.len() - usize::from(!sweep);
    cells[..n].to_vec()
}

/// A figure as results.csv writes it (see [`f`]), for files that quote it (compare.csv).
pub fn figure(v: f64) -> String {
    f(v)
}

/// Six decimals; below 0.001, six significant digits in exponent form, so that a slow point's
/// bandwidth does not print as 0.000000.
fn f(v: f64) -> String {
    if v != 0.0 && v.abs() < 1e-3 {
        format!("{v:.5e}")
    } else {
        format!("{v:.6}")
    }
}

/// The columns results.csv gets after [`RESULTS_HEADER`] with `run --measured`: the
/// measurement matched to the point (perftest t_typical against `lat_p50_us`, BW average
/// against `bw_GBps`) and (model - measured) / measured in percent; empty where none matched.
pub const MEASURED_COLUMNS: [&str; 4] = [
    "measured_lat_us",
    "lat_error_pct",
    "measured_bw_GBps",
    "bw_error_pct",
];

/// The column results.csv gets after [`RESULTS_HEADER`] where a scenario is a workload whose
/// flows wait on flows: its noise-free completion time, first start to the last delivery of
/// every flow (equal to `lat_model_us`; empty on rows of independent flows).
pub const WORKLOAD_COLUMN: &str = "workload_us";

/// The column results.csv gets after [`WORKLOAD_COLUMN`] where a scenario is a collective:
/// nccl-tests' bus bandwidth (`bw_GBps` is its algbw, the buffer over the mean time); empty on
/// other rows; the column is only there when the study has a collective.
pub const BUSBW_COLUMN: &str = "busbw_GBps";

/// The chain.csv header: the point, then one link of its workload's critical chain
/// ([`crate::stats::ChainRow`]; times in µs).
pub const CHAIN_HEADER: [&str; 11] = [
    "scenario",
    "path",
    "op",
    "size_bytes",
    "flow",
    "msg",
    "stage",
    "component",
    "start_us",
    "end_us",
    "critical_us",
];

/// Renders chain.csv: each workload point's critical chain, in time order; the `critical_us`
/// of a point sum exactly to its `workload_us`.
pub fn chain_csv(rows: &[Summary]) -> anyhow::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let sweep = swept(rows);
    w.write_record(with_variant(&CHAIN_HEADER, sweep))?;
    for r in rows {
        for c in &r.chain {
            w.write_record(row_cells(
                &[
                    r.scenario.as_str(),
                    r.path.name(),
                    r.op.name(),
                    &r.size_bytes.to_string(),
                    &c.flow,
                    &c.msg.to_string(),
                    c.stage.name(),
                    &c.component,
                    &ps_to_us_exact(c.start_ps),
                    &ps_to_us_exact(c.end_ps),
                    &ps_to_us_exact(c.critical_ps),
                    &r.variant,
                ],
                sweep,
            ))?;
        }
    }
    Ok(w.into_inner()?)
}

/// Renders results.csv.
pub fn results_csv(rows: &[Summary]) -> anyhow::Result<Vec<u8>> {
    results_csv_with(rows, None)
}

/// Renders results.csv, with the [`MEASURED_COLUMNS`] when there is a measurement (`run
/// --measured`); without one, exactly [`results_csv`].
pub fn results_csv_with(rows: &[Summary], measured: Option<&Overlay>) -> anyhow::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<&str> = RESULTS_HEADER.to_vec();
    // Only a study with a workload (flows that wait on flows) has the column: the results of
    // independent flows keep their bytes.
    let workloads = rows.iter().any(|r| r.workload_ps.is_some());
    if workloads {
        header.push(WORKLOAD_COLUMN);
    }
    let collectives = rows.iter().any(|r| r.busbw_gbps.is_some());
    if collectives {
        header.push(BUSBW_COLUMN);
    }
    if measured.is_some() {
        header.extend(MEASURED_COLUMNS);
    }
    let sweep = swept(rows);
    if sweep {
        header.push(VARIANT_COLUMN);
    }
    w.write_record(&header)?;
    for r in rows {
        let mut cells = vec![
            r.scenario.clone(),
            r.class.name().to_string(),
            r.path.name().to_string(),
            r.effective_path.name().to_string(),
            r.op.name().to_string(),
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
            r.flows.to_string(),
            r.bottleneck.to_string(),
            r.reason.clone(),
            r.rnr_naks.to_string(),
            r.steady.to_string(),
        ];
        if workloads {
            cells.push(r.workload_ps.map(ps_to_us_exact).unwrap_or_default());
        }
        if collectives {
            cells.push(r.busbw_gbps.map(f).unwrap_or_default());
        }
        if let Some(o) = measured {
            for figure in [Figure::Latency, Figure::Bandwidth] {
                match o.measured_at(r, figure) {
                    Some(v) => {
                        cells.push(f(v));
                        cells.push(f(error_pct(figure.of(r), v)));
                    }
                    None => cells.extend([String::new(), String::new()]),
                }
            }
        }
        if sweep {
            cells.push(r.variant.clone());
        }
        w.write_record(&cells)?;
    }
    Ok(w.into_inner()?)
}

/// Renders stages.csv: one row per stage of each point's noise-free message.
pub fn stages_csv(rows: &[Summary]) -> anyhow::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let sweep = swept(rows);
    w.write_record(with_variant(&STAGES_HEADER, sweep))?;
    for r in rows {
        for s in &r.stages {
            w.write_record(row_cells(
                &[
                    r.scenario.as_str(),
                    r.path.name(),
                    r.op.name(),
                    &r.size_bytes.to_string(),
                    s.stage.name(),
                    &s.component,
                    &ps_to_us_exact(s.start_ps),
                    &ps_to_us_exact(s.end_ps),
                    &ps_to_us_exact(s.critical_ps),
                    &r.variant,
                ],
                sweep,
            ))?;
        }
    }
    Ok(w.into_inner()?)
}

/// Renders flows.csv: one row per flow of each point (its noise-free latency with every flow's
/// first message at once, its mean over the jittered iterations, its own streaming bandwidth).
pub fn flows_csv(rows: &[Summary]) -> anyhow::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let sweep = swept(rows);
    let fabric = rows
        .iter()
        .any(|r| r.flow_rows.iter().any(|f| !f.switch_path.is_empty()));
    let mut header = FLOWS_HEADER.to_vec();
    if fabric {
        header.push(SWITCH_PATH_COLUMN);
    }
    w.write_record(with_variant(&header, sweep))?;
    for r in rows {
        for fl in &r.flow_rows {
            let bottleneck = fl.bottleneck.as_ref().unwrap_or(&r.bottleneck).to_string();
            let (size, flow) = (r.size_bytes.to_string(), fl.flow.to_string());
            let (lat_model, lat_mean) = (ps_to_us_exact(fl.lat_model_ps), f(fl.lat_mean_us));
            let bw = f(fl.bw_gbps);
            let mut cells = vec![
                r.scenario.as_str(),
                r.path.name(),
                r.op.name(),
                &size,
                &flow,
                &fl.sender,
                &fl.receiver,
                fl.class.name(),
                fl.effective_path.name(),
                &lat_model,
                &lat_mean,
                &bw,
                &bottleneck,
            ];
            if fabric {
                cells.push(&fl.switch_path);
            }
            cells.push(&r.variant);
            w.write_record(row_cells(&cells, sweep))?;
        }
    }
    Ok(w.into_inner()?)
}

/// Renders links.csv: for each point, every channel direction its streaming run crossed, with
/// its wire bytes, the fraction of its capacity it was busy, and its achieved and full rate.
pub fn links_csv(rows: &[Summary]) -> anyhow::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let sweep = swept(rows);
    w.write_record(with_variant(&LINKS_HEADER, sweep))?;
    for r in rows {
        for l in &r.links {
            w.write_record(row_cells(
                &[
                    r.scenario.as_str(),
                    r.path.name(),
                    r.op.name(),
                    &r.size_bytes.to_string(),
                    &l.channel,
                    &l.bytes.to_string(),
                    &f(l.busy),
                    &f(l.rate_gbps),
                    &f(l.capacity_gbps),
                    &r.variant,
                ],
                sweep,
            ))?;
        }
    }
    Ok(w.into_inner()?)
}

#[cfg(test)]
mod tests {
    use super::f;

    #[test]
    fn small_values_keep_their_digits() {
        assert_eq!(f(49.555348), "49.555348");
        assert_eq!(f(0.005099), "0.005099");
        assert_eq!(f(0.000217), "2.17000e-4");
        assert_eq!(f(3.2e-9), "3.20000e-9");
        assert_eq!(f(0.0), "0.000000");
    }
}

#[cfg(test)]
mod measured_tests {
    use super::*;
    use crate::report::charts::testdata;

    #[test]
    fn measured_columns_only_with_a_measurement() {
        let rows = testdata::rows(
            &testdata::SCENARIOS[..1],
            &["gpudirect"],
            &testdata::sweep(),
        );
        let plain = results_csv(&rows).unwrap();
        assert_eq!(results_csv_with(&rows, None).unwrap(), plain);
        let o = testdata::overlay(&rows);
        let text = String::from_utf8(results_csv_with(&rows, Some(&o)).unwrap()).unwrap();
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        assert_eq!(header.len(), RESULTS_HEADER.len() + MEASURED_COLUMNS.len());
        assert_eq!(header[RESULTS_HEADER.len()..], MEASURED_COLUMNS);
        let cells: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
        let n = RESULTS_HEADER.len();
        // Row 0 is measured: latency 10% over the model (error -9.09%), bandwidth 10% under.
        let e: f64 = cells[0][n + 1].parse().unwrap();
        assert!((e - (1.0 / 1.1 - 1.0) * 100.0).abs() < 1e-5, "{e}");
        let e: f64 = cells[0][n + 3].parse().unwrap();
        assert!((e - (1.0 / 0.9 - 1.0) * 100.0).abs() < 1e-5, "{e}");
        // Row 1 is not: four empty cells.
        assert_eq!(cells[1][n..], ["", "", "", ""]);
        // The plain columns are the same bytes.
        let plain = String::from_utf8(plain).unwrap();
        for (a, b) in plain.lines().zip(text.lines()).skip(1) {
            assert!(b.starts_with(a), "{a}\n{b}");
        }
    }
}

//! Orchestration only: load -> build -> plan -> simulate (in parallel) -> summarize -> write.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rayon::prelude::*;

use crate::config::{self, Config, ConfigError};
use crate::report::{self, RunInfo, ScenarioInfo, atomic, csv_out};
use crate::scenario::{self, PointResult};
use crate::stats::Summary;
use crate::topology::{self, NodeKind, Place};
use crate::units::{fmt_bytes, ps_to_us};

/// Loads `path`, or the embedded default config when there is none.
pub fn load_config(path: Option<&Path>) -> Result<Config, ConfigError> {
    match path {
        Some(p) => config::load(p),
        None => config::parse(config::DEFAULT_TOML, config::DEFAULT_NAME),
    }
}

/// Simulates every point of `cfg` on `jobs` threads (0 = all cores). Results come back in
/// point order whatever the thread count, so output is byte-identical for any `jobs`.
pub fn simulate(cfg: &Config, jobs: usize, progress: bool) -> Result<Vec<PointResult>> {
    let topo = scenario::topology(cfg);
    let points = scenario::plan(cfg);
    let bar = progress.then(|| {
        let b = indicatif::ProgressBar::new(points.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} {pos}/{len} points {wide_bar} {elapsed_precise}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    });
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .context("starting worker threads")?;
    let results = pool.install(|| {
        points
            .par_iter()
            .map(|p| {
                let r = scenario::simulate_point(cfg, &topo, p);
                if let Some(b) = &bar {
                    b.inc(1);
                }
                r
            })
            .collect::<Vec<_>>()
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(results)
}

/// Describes each scenario for the report: class, sender route, topo matrix, bottleneck ceiling.
pub fn run_info(cfg: &Config, command: &str) -> RunInfo {
    let topo = &scenario::topology(cfg);
    let scenarios = cfg
        .scenarios
        .iter()
        .map(|sc| {
            let h = &topo.hosts[sc.sender.host];
            let nic = Place::Device(h.node_index(NodeKind::Nic(sc.sender.nic)));
            // The GPU-to-NIC route (GPUDirect), or host memory where there is no GPU.
            let src = scenario::paths::sender_source(topo, sc, config::PathKind::GpuDirect);
            let class = scenario::paths::sender_class(topo, sc, config::PathKind::GpuDirect);
            let route: Vec<String> = h
                .route(src, nic, topology::Flow::ReadCompletion)
                .map(|r| {
                    r.channels
                        .iter()
                        .map(|&c| topo.channels[c as usize].name.clone())
                        .collect()
                })
                .unwrap_or_else(|e| vec![format!("(P2P refused: {e})")]);
            let (ceiling_gbps, ceiling_label) = ceiling(cfg, topo, sc);
            ScenarioInfo {
                name: sc.name.clone(),
                class: class.to_string(),
                route,
                topo_matrix: topology::topo_matrix::render(h),
                ceiling_gbps,
                ceiling_label,
            }
        })
        .collect();
    let m = &cfg.hosts[cfg.scenarios[0].sender.host].machine;
    let nic = &m.nics[cfg.scenarios[0].sender.nic];
    let gpu = cfg.scenarios[0]
        .sender
        .gpu
        .map(|g| m.gpus[g].model.clone())
        .unwrap_or_else(|| "host memory".into());
    RunInfo {
        config_name: cfg.name.clone(),
        hardware: format!(
            "{gpu} + {} {} Gb/s",
            nic.model,
            nic.wire_rate.bps() / 1_000_000_000
        ),
        command: command.to_string(),
        scenarios,
        output: cfg.output.clone(),
    }
}

/// The bottleneck of a scenario's GPU-to-GPU payload path (GPUDirect where P2P allows, else
/// host memory): the slowest channel over the sender's read route, the wire and the receiver's
/// write route, as an effective payload rate, for the dashed ceiling of the charts.
fn ceiling(cfg: &Config, topo: &topology::Topology, sc: &config::ScenarioSpec) -> (f64, String) {
    let s = (sc.sender.host, sc.sender.nic);
    let r = (sc.receiver.host, sc.receiver.nic);
    let mtu = cfg.hosts[s.0].machine.nics[s.1].mtu;
    let mut best: Option<(crate::units::Rate, String)> = topo.wire_route(s, r).and_then(|route| {
        topo.wire_ceiling(&route, mtu)
            .map(|(r, n)| (r, n.to_string()))
    });
    for (e, sender) in [(&sc.sender, true), (&sc.receiver, false)] {
        let host = &topo.hosts[e.host];
        let nic = Place::Device(host.node_index(NodeKind::Nic(e.nic)));
        let gpu = e
            .gpu
            .map(|g| Place::Device(host.node_index(NodeKind::Gpu(g))));
        let buf = gpu.unwrap_or(Place::Memory(e.memory_socket));
        let route = if sender {
            host.route(buf, nic, topology::Flow::ReadCompletion)
                .map(|r| (r, topology::Unit::Completion))
        } else {
            host.route(nic, buf, topology::Flow::Write)
                .map(|r| (r, topology::Unit::Write))
        };
        let Ok((route, unit)) = route else { continue };
        if let Some((rate, name)) = topo.route_ceiling(&route, unit)
            && best.as_ref().is_none_or(|(b, _)| rate < *b)
        {
            best = Some((rate, name.to_string()));
        }
    }
    match best {
        Some((rate, name)) => (
            rate.gbytes_per_s(),
            format!("{name} eff. {:.1} GB/s", rate.gbytes_per_s()),
        ),
        None => (0.0, "no bottleneck found".into()),
    }
}

/// Writes every output of a run into `dir`: CSVs and resolved config first, then charts and
/// the report. Each file is written atomically.
pub fn write_outputs(
    dir: &Path,
    cfg: &Config,
    info: &RunInfo,
    rows: &[Summary],
) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for (name, bytes) in [
        ("results.csv", csv_out::results_csv(rows)?),
        ("stages.csv", csv_out::stages_csv(rows)?),
        ("config.toml", config::to_toml(cfg).into_bytes()),
    ] {
        let p = dir.join(name);
        atomic::write(&p, &bytes)?;
        written.push(p);
    }
    let charts = report::charts::write_charts(dir, info, rows)?;
    written.extend(charts.iter().cloned());
    written.push(report::markdown::write_markdown(dir, info, rows, &charts)?);
    Ok(written)
}

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
    let mut keys: Vec<(&str, &str)> = Vec::new();
    for r in rows {
        if !keys.contains(&(r.scenario.as_str(), r.path.as_str())) {
            keys.push((r.scenario.as_str(), r.path.as_str()));
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

/// `gdrsim run`: the whole job. Returns the output folder.
pub fn run(
    config: Option<&Path>,
    out: Option<&Path>,
    seed: Option<u64>,
    jobs: usize,
    quiet: bool,
    command: &str,
) -> Result<PathBuf> {
    let mut cfg = load_config(config)?;
    if let Some(s) = seed {
        cfg.seed = s;
    }
    let dir = out
        .map(Path::to_path_buf)
        .unwrap_or_else(|| Path::new("output").join(&cfg.name));
    let progress = !quiet && std::io::stderr().is_terminal();
    let results = simulate(&cfg, jobs, progress)?;
    let rows: Vec<Summary> = results.into_iter().map(|r| r.summary).collect();
    let info = run_info(&cfg, command);
    write_outputs(&dir, &cfg, &info, &rows)?;
    if !quiet {
        print!("{}", summary_table(&rows));
        println!("wrote {}", dir.display());
    }
    Ok(dir)
}

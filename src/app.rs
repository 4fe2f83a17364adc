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
    let cfg = match path {
        Some(p) => config::load(p)?,
        None => config::parse(config::DEFAULT_TOML, config::DEFAULT_NAME)?,
    };
    let file = path.map_or(config::DEFAULT_NAME.to_string(), |p| {
        p.display().to_string()
    });
    let topo = scenario::topology(&cfg);
    scenario::check_plans(&cfg, &topo)
        .and_then(|()| scenario::horizon::check(&cfg, &topo))
        .map_err(|(key, expected, found)| ConfigError::new(&file, key, expected, found))?;
    Ok(cfg)
}

/// Warns (on stderr, unless `quiet`) of every implausible value of the config at `path` (see
/// [`config::plausible`]); with `strict`, the first one is the error instead.
pub fn plausibility(path: Option<&Path>, strict: bool, quiet: bool) -> Result<(), ConfigError> {
    let cfg = load_config(path)?;
    let file = path.map_or(config::DEFAULT_NAME.to_string(), |p| {
        p.display().to_string()
    });
    let warnings = config::plausible::warnings(&cfg);
    if strict && let Some(w) = warnings.first() {
        return Err(w.clone().into_error(&file));
    }
    if !quiet {
        for w in &warnings {
            eprintln!("warning: {file}: {w}");
        }
    }
    Ok(())
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
    // The static bound (scenario::horizon) refuses such configs first; this is the backstop
    // that keeps a wrapped time from ever becoming a result.
    if let Some(r) = results.iter().find(|r| r.past_horizon) {
        let s = &r.summary;
        return Err(ConfigError::new(
            "config",
            "[sim] and the machines' durations and rates",
            "runs that end within the simulator's horizon of 2^62 ps (53 days simulated)",
            format!(
                "scenario {:?}, path {}, {} bytes: an event beyond it",
                s.scenario, s.path, s.size_bytes
            ),
        )
        .into());
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
            let flow = sc.first();
            let h = &topo.hosts[flow.sender.host];
            let nic = Place::Device(h.node_index(NodeKind::Nic(flow.sender.nic)));
            // The GPU-to-NIC route (GPUDirect), or host memory where there is no GPU.
            let src = scenario::paths::sender_source(topo, flow, config::PathKind::GpuDirect);
            let class = scenario::paths::sender_class(topo, flow, config::PathKind::GpuDirect);
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
                flows: sc.flows.len(),
                route,
                topo_matrix: topology::topo_matrix::render(h),
                ceiling_gbps,
                ceiling_label,
            }
        })
        .collect();
    let first = cfg.scenarios[0].first();
    let m = &cfg.hosts[first.sender.host].machine;
    let nic = &m.nics[first.sender.nic];
    let gpu = first
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

/// The ceiling of a scenario's GPUDirect streaming: every flow's payload transfer at once, in
/// steady state under max-min sharing (what the simulation's bulk transfers converge to), as the
/// aggregate payload rate and what binds it: a link, a memory or a read window.
fn ceiling(cfg: &Config, topo: &topology::Topology, sc: &config::ScenarioSpec) -> (f64, String) {
    const SIZE: u64 = 1 << 30;
    let built: Vec<scenario::paths::Built> = sc
        .flows
        .iter()
        .filter_map(|f| {
            scenario::paths::plan(
                cfg,
                f,
                topo,
                config::PathKind::GpuDirect,
                config::Op::WriteImm,
                SIZE,
            )
            .ok()
        })
        .collect();
    let plans: Vec<&crate::plan::Plan> = built.iter().map(|b| &b.plan).collect();
    if plans.is_empty() {
        return (0.0, "no bottleneck found".into());
    }
    let opts = crate::components::SimOptions {
        tlp_granularity: false,
        coalesce_above: cfg.sim.coalesce_above,
        jitter: false,
        seed: cfg.seed,
        record: false,
    };
    let mut f = crate::components::Fabric::new(topo, &plans, opts);
    let rates = f.steady_state();
    let total: u64 = rates.iter().map(|r| r.0).sum();
    let gbps = total as f64 / 1e9;
    // Name the limit that binds the most flows.
    let mut limits: Vec<(crate::components::Limit, usize)> = Vec::new();
    for &(_, l) in &rates {
        match limits.iter_mut().find(|x| x.0 == l) {
            Some(x) => x.1 += 1,
            None => limits.push((l, 1)),
        }
    }
    let name = match limits.iter().max_by_key(|x| x.1).map(|x| x.0) {
        Some(crate::components::Limit::Channel(c)) => topo.channels[c as usize].name.clone(),
        Some(crate::components::Limit::Window(e)) => topo.engine_name(e),
        _ => "nothing".into(),
    };
    (gbps, format!("{name}: {gbps:.1} GB/s"))
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
        ("flows.csv", csv_out::flows_csv(rows)?),
        ("links.csv", csv_out::links_csv(rows)?),
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
    // Claimed before any work: a concurrent run into the same folder is refused now, not
    // after both have simulated.
    let out = report::output_dir::OutputDir::claim(&dir)?;
    let progress = !quiet && std::io::stderr().is_terminal();
    let results = simulate(&cfg, jobs, progress)?;
    let rows: Vec<Summary> = results.into_iter().map(|r| r.summary).collect();
    let info = run_info(&cfg, command);
    let written = write_outputs(out.path(), &cfg, &info, &rows)?;
    let record = report::output_dir::RunRecord {
        config_name: &cfg.name,
        seed: cfg.seed,
        command,
    };
    out.commit(&record, &written)?;
    if !quiet {
        emit(&format!(
            "{}wrote {}\n",
            summary_table(&rows),
            dir.display()
        ))?;
    }
    Ok(dir)
}

/// Writes `text` to stdout. A closed pipe (`gdrsim topo | head`) ends the output quietly, as it
/// does for every Unix tool, instead of panicking as `print!` would.
pub fn emit(text: &str) -> Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(e).context("writing to stdout"))
        }
        _ => Ok(()),
    }
}

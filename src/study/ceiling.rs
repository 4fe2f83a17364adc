//! The route ceiling a bandwidth chart draws: a scenario's GPUDirect streaming in steady state,
//! solved once by the fabric's max-min sharing rather than simulated.

use crate::components::{Fabric, Limit};
use crate::config::{self, Config};
use crate::plan::Plan;
use crate::scenario;
use crate::topology::Topology;

/// The ceiling of a scenario's GPUDirect streaming: every flow's payload transfer at once, in
/// steady state under max-min sharing (what the simulation's bulk transfers converge to), as the
/// aggregate payload rate (GB/s) and what binds it: a link, a memory or a read window.
pub fn ceiling(cfg: &Config, topo: &Topology, sc: &config::ScenarioSpec) -> (f64, String) {
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
    let plans: Vec<&Plan> = built.iter().map(|b| &b.plan).collect();
    if plans.is_empty() {
        return (0.0, "no bottleneck found".into());
    }
    let opts = scenario::sim_options(cfg, cfg.seed).noise_free().tlp(false);
    let mut f = Fabric::new(topo, &plans, opts);
    let rates = f.steady_state();
    let total: u64 = rates.iter().map(|r| r.0).sum();
    let gbps = total as f64 / 1e9;
    // Name the limit that binds the most flows.
    let mut limits: Vec<(Limit, usize)> = Vec::new();
    for &(_, l) in &rates {
        match limits.iter_mut().find(|x| x.0 == l) {
            Some(x) => x.1 += 1,
            None => limits.push((l, 1)),
        }
    }
    let name = match limits.iter().max_by_key(|x| x.1).map(|x| x.0) {
        Some(Limit::Channel(c)) => topo.channels[c.index()].name.clone(),
        Some(Limit::Window(e)) => topo.engine_name(e),
        _ => "nothing".into(),
    };
    (gbps, format!("{name}: {gbps:.1} GB/s"))
}

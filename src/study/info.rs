//! Describing a study for its report and charts: per scenario its class, the sender's route,
//! the host's topo matrix and the GPUDirect ceiling; the hardware line of the chart titles.

use crate::config::{self, Config};
use crate::report::{RunInfo, ScenarioInfo};
use crate::scenario;
use crate::topology;

use super::ceiling;

/// Describes each scenario for the report: class, sender route, topo matrix, bottleneck ceiling.
pub fn run_info(cfg: &Config, command: &str) -> RunInfo {
    let Some(sweep) = &cfg.sweep else {
        return run_info_one(cfg, command);
    };
    // A sweep: every variant's scenarios, each named with its variant as the charts' and
    // report's rows are (see report::display_rows).
    let mut info = run_info_one(cfg.variant(0), command);
    info.scenarios = sweep
        .variants
        .iter()
        .flat_map(|v| {
            run_info_one(&v.cfg, command)
                .scenarios
                .into_iter()
                .map(|mut s| {
                    s.name = crate::report::variant_name(&s.name, &v.label);
                    s
                })
        })
        .collect();
    info.variants = sweep
        .variants
        .iter()
        .map(|v| (v.label.clone(), v.values.clone()))
        .collect();
    info
}

/// [`run_info`] of a study without a sweep.
fn run_info_one(cfg: &Config, command: &str) -> RunInfo {
    let topo = &scenario::topology(cfg);
    let scenarios = cfg
        .scenarios
        .iter()
        .map(|sc| {
            let flow = sc.first();
            let h = &topo.hosts[flow.sender.host];
            // The GPU-to-NIC route (GPUDirect), or host memory where there is no GPU; inside
            // one host, the GPU-to-GPU route of the peer copy.
            let class = scenario::paths::sender_class(topo, flow, config::PathKind::GpuDirect);
            let route: Vec<String> = scenario::paths::payload_route(topo, flow)
                .map(|r| {
                    r.channels
                        .iter()
                        .map(|&c| topo.channels[c.index()].name.clone())
                        .collect()
                })
                .unwrap_or_else(|e| vec![format!("(P2P refused: {e})")]);
            let (ceiling_gbps, ceiling_label) = ceiling(cfg, topo, sc);
            ScenarioInfo {
                name: sc.name.clone(),
                class: Some(class),
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
        fragile: None,
        measured: None,
        variants: Vec::new(),
    }
}

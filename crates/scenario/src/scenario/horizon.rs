//! The simulated-time horizon, checked before any work: every run of every point must end
//! within [`HORIZON`] (2^62 ps, about 53 days simulated), so no sum of two times wraps a u64.
//!
//! The bound is computed from the config's own values, generously, per point and run:
//! - a message's own time is at most, over every channel of the topology, 8 crossings of its
//!   latency plus 4 of its serialisation of twice the message (headers) and 64 KiB (control),
//!   plus the DRAM jitter of its accesses at 100 times the median (the lognormal of sigma 0.75
//!   passes that with probability below 1e-9 per access; each draw is capped at 1 s anyway),
//!   plus 8 times every fixed cost of both hosts (CPU, registration, copy calls, NIC pipelines),
//!   per chunk for the paths that move a message in chunks (staged_pipelined, pxn, auto);
//! - a refused Send waits its RNR retries, at most one timer beyond its repost;
//! - a run is at most its flows' messages one after another (the resources are work-conserving).
//!
//! Should a run still pass the horizon, the engine drops the event and the run is reported as
//! an error ([`crate::engine::Queue::past_horizon`]), never as a figure.

use crate::config::{Config, PathKind, rnr_timer_ps};
use crate::engine::HORIZON;
use crate::topology::Topology;
use crate::units::{Ps, fmt_bytes, fmt_duration};

/// A message's time bound, picoseconds, with its parts (what, picoseconds).
type Bound = (Vec<(String, u128)>, u128);

/// `Err((key, expected, found))` when some point of `cfg` could run past the horizon: the
/// first in plan order (scenario, path, size), named with what makes its run long.
pub fn check(cfg: &Config, topo: &Topology) -> Result<(), (String, String, String)> {
    // A message's bound depends on its size and on whether its path moves it in chunks, not on
    // the scenario: computed once per message size for each (a collective's messages are its
    // slices).
    let mut bounds: std::collections::HashMap<(u64, bool), Bound> = Default::default();
    for (si, sc) in cfg.scenarios.iter().enumerate() {
        for &path in &cfg.paths {
            for &size in &cfg.sizes {
                let bytes = sc.workload.as_ref().map_or(size, |w| {
                    super::workload::message_bytes(cfg, w, (size, path))
                });
                let key = (bytes, chunked(path));
                let (parts, per_msg) = bounds
                    .entry(key)
                    .or_insert_with(|| message_bound(cfg, topo, bytes, key.1));
                check_point(cfg, (si, sc), path, size, parts, *per_msg)?;
            }
        }
    }
    Ok(())
}

/// Whether `path` may move a message in chunks (the pipeline, PXN's relay, or `auto`, which
/// may pick either), each chunk paying the fixed costs again.
fn chunked(path: PathKind) -> bool {
    matches!(
        path,
        PathKind::StagedPipelined | PathKind::Pxn | PathKind::Auto | PathKind::NcclHost
    )
}

/// The bound of the longest run of scenario `sc` on `path` at message size `size`, whose
/// messages each take at most `per_msg` (its largest part among `parts`).
fn check_point(
    cfg: &Config,
    (si, sc): (usize, &crate::config::ScenarioSpec),
    path: PathKind,
    size: u64,
    parts: &[(String, u128)],
    per_msg: u128,
) -> Result<(), (String, String, String)> {
    let timer = rnr_timer_ps(cfg.sim.min_rnr_timer) as u128;
    // Messages of the longest run: independent flows' iterations or streamed messages, each
    // flow; a workload's messages, every flow's together.
    let iterations = super::simulate::iterations(cfg, size);
    let streamed = super::simulate::stream_shape(cfg, size).1;
    let (key, flows, messages) = match &sc.workload {
        None if streamed > iterations => (
            "sim.stream_messages".to_string(),
            sc.flows.len() as u128,
            u128::from(streamed),
        ),
        None => (
            "sim.iterations".to_string(),
            sc.flows.len() as u128,
            u128::from(iterations),
        ),
        Some(w) => (
            format!("scenarios[{si}]"),
            1,
            u128::from(super::workload::run_messages(cfg, w, (size, path))),
        ),
    };
    let run = flows * messages * (2 * per_msg + timer);
    if run <= HORIZON as u128 {
        return Ok(());
    }
    let (what, worst) = parts
        .iter()
        .max_by_key(|p| p.1)
        .cloned()
        .unwrap_or_default();
    Err((
        key,
        format!(
            "runs within the simulator's horizon of {} (2^62 ps): messages x flows x a message's \
             time must stay below it",
            fmt_duration(HORIZON)
        ),
        format!(
            "scenario `{}`, path {path}, {} messages: up to {messages} messages x {flows} \
             flow{} x {} per message (bound); its largest part: {what} ({})",
            sc.name,
            fmt_bytes(size),
            if flows == 1 { "" } else { "s" },
            fmt_duration(per_msg.min(Ps::MAX as u128) as Ps),
            fmt_duration(worst.min(Ps::MAX as u128) as Ps)
        ),
    ))
}

/// An upper bound of one message's time at `size`, moved in chunks or whole, and its parts
/// (what, picoseconds).
fn message_bound(cfg: &Config, topo: &Topology, size: u64, chunked: bool) -> Bound {
    let mut parts: Vec<(String, u128)> = Vec::new();
    let bytes = 2 * size + (64 << 10);
    let chunks = if chunked {
        size.div_ceil(cfg.sim.chunk_bytes).clamp(1, 1024) as u128
    } else {
        1
    };
    // Unit by unit, every access draws its jitter; a bulk transfer draws once.
    let by_unit = cfg.sim.granularity.tlp() || size <= cfg.sim.coalesce_above;
    let accesses = if by_unit {
        4 * (size / 64 + 64) as u128
    } else {
        4 * 64 * chunks
    };
    // A message crosses channels of its two hosts and a network route: every channel of the
    // host that costs most, twice, and the network's costliest channel as many times as the
    // longest network route has channels (a bound that does not grow with the hosts defined).
    let mut host_sum = vec![(0u128, 0u128); cfg.hosts.len()];
    let mut net = (String::new(), 0u128);
    for c in &topo.channels {
        let lat = 8 * c.latency as u128;
        let ser = 4 * c.rate.tx_time(bytes) as u128;
        let jitter = accesses * (100 * c.jitter_median).min(crate::units::PS_PER_S) as u128;
        let cost = lat + ser + jitter;
        match c.host {
            Some(h) => host_sum[h].0 += cost,
            None if cost > net.1 => net = (c.name.clone(), cost),
            None => {}
        }
    }
    // A leaf-spine route crosses the host cable, leaf to spine, spine to leaf, leaf port; a
    // fat tree's between pods two more (spine to core, core to spine).
    let spine_hops =
        (topo.network.leaf_spine.as_ref()).map_or(0, |ls| 2 + 2 * ls.tiers_above() as u128);
    let hops = topo
        .network
        .ports
        .iter()
        .map(|p| 2 + p.core.len() as u128)
        .max()
        .unwrap_or(1)
        .max(spine_hops);
    parts.push((
        format!("{hops} crossings of network channel {}", net.0),
        hops * net.1,
    ));
    for (h, host) in cfg.hosts.iter().enumerate() {
        let m = &host.machine;
        let reg = &m.registration;
        let mut fixed = (m.cpu.post + m.cpu.post_recv + m.cpu.poll) as u128
            + (reg.host_cost(size) + reg.gpu_cost(size)) as u128
            + (reg.host_dereg_cost(size) + reg.gpu_dereg_cost(size)) as u128
            + (m.cpu.pageable.cost(true, size) + m.cpu.pageable.cost(false, size)) as u128;
        for g in &m.gpus {
            fixed += (g.copy_engine.launch + g.copy_engine.sync + g.reduce.time(size)) as u128
                + (g.gdrcopy.cost(true, size) + g.gdrcopy.cost(false, size)) as u128
                + g.memory.latency as u128;
        }
        for n in &m.nics {
            fixed += (n.wqe_process
                + n.wqe_interval * n.processing_units.max(1) as u64
                + n.mtt_lookup) as u128
                + (n.tx_pipeline + n.rx_pipeline) as u128;
        }
        host_sum[h].1 = 8 * chunks * fixed;
    }
    // The costliest host, counted for both ends.
    if let Some((h, &(channels, fixed))) =
        host_sum.iter().enumerate().max_by_key(|(_, c)| c.0 + c.1)
    {
        let name = &cfg.hosts[h].name;
        parts.push((format!("channels of host {name}, twice"), 2 * channels));
        parts.push((format!("fixed costs of host {name}, twice"), 2 * fixed));
    }
    let total = parts.iter().map(|p| p.1).sum();
    (parts, total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_study_is_far_inside_the_horizon() {
        let cfg = crate::config::parse(crate::config::DEFAULT_TOML, "default.toml").unwrap();
        let topo = crate::scenario::topology(&cfg);
        assert!(check(&cfg, &topo).is_ok());
        let (_, per_msg) = message_bound(&cfg, &topo, 1 << 30, false);
        // A 1 GiB message takes about 25 ms; the bound (every channel carrying it four times,
        // every host's GDRCopy and pageable copies of all of it) is some 5,000 times that:
        // loose, yet a 60-iteration sweep of it stays hours inside the horizon.
        assert!(
            per_msg > 25_000_000_000 && per_msg < 1000 * crate::units::PS_PER_S as u128,
            "{per_msg} ps"
        );
    }
}

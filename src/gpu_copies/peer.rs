//! Copies between GPU pairs of one host on the simulated machine: the time of streams of
//! copies run at once on the GPU's timeline (which pairs have peer access is
//! [`crate::scenario::peer::peer_access`]).

use anyhow::{Context, Result};

use crate::components::{Fabric, Outcome};
use crate::config::Config;
use crate::scenario::{self, peer::PeerCopy};
use crate::topology::Topology;
use crate::units::Ps;

/// One stream of copies: from GPU `src` to GPU `dst` (the same: within one GPU), how, and the
/// bytes of each copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stream {
    /// The GPU copied from (index into the host's GPUs).
    pub src: usize,
    /// The GPU copied to.
    pub dst: usize,
    /// Peer writes, peer reads, or staged through host memory.
    pub how: PeerCopy,
    /// Bytes of each copy.
    pub size: u64,
}

/// The copy plan of each of `streams` between GPUs of host `host`.
pub fn plans(topo: &Topology, host: usize, streams: &[Stream]) -> Result<Vec<crate::plan::Plan>> {
    streams
        .iter()
        .map(|s| {
            scenario::peer::copy(topo, host, (s.src, s.dst), s.how, s.size)
                .with_context(|| format!("building the copy from GPU {} to GPU {}", s.src, s.dst))
        })
        .collect()
}

/// The streams run at once in one fabric, each `count` copies back to back (the next starts
/// when the one before has landed, as on a CUDA stream); what the run did, flow by flow.
pub fn simulate(
    cfg: &Config,
    topo: &Topology,
    host: usize,
    streams: &[Stream],
    count: u32,
    seed: u64,
) -> Result<Outcome> {
    let plans = plans(topo, host, streams)?;
    let refs: Vec<&crate::plan::Plan> = plans.iter().collect();
    let mut f = Fabric::new(topo, &refs, scenario::sim_options(cfg, seed));
    let out = f.run(1, count);
    if out.stats.past_horizon {
        anyhow::bail!("the copies passed the simulator's horizon");
    }
    Ok(out)
}

/// The streams run at once ([`simulate`]), each `count` copies. Returns each stream's time
/// from its first copy's start to its last copy's end, and the CPU time each copy cost the
/// threads, on average (the simulated threads' busy time: the launches).
pub fn run(
    cfg: &Config,
    topo: &Topology,
    host: usize,
    streams: &[Stream],
    count: u32,
    seed: u64,
) -> Result<(Vec<Ps>, Ps)> {
    let out = simulate(cfg, topo, host, streams, count.max(1), seed)?;
    let times = out
        .flows
        .iter()
        .map(|fl| {
            let first = fl.messages.first().map_or(0, |m| m.0);
            let last = fl.messages.last().map_or(0, |m| m.1);
            last.saturating_sub(first)
        })
        .collect();
    let busy: Ps = out.cpu_time.iter().map(|t| t.1).sum();
    let copies = u64::from(count.max(1)) * streams.len() as u64;
    Ok((times, busy / copies.max(1)))
}

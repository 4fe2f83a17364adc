//! A point's cost before it is simulated, in estimated events: what balances shards (a 16 GiB
//! point costs far more than an 8 B one) and what `check` reports. The estimate follows the
//! simulation's shape: every iteration and every streamed message of every flow moves its
//! message TLP by TLP up to `coalesce_above_bytes` (or always, with `granularity = "tlp"`) and
//! as a few bulk segments above it; `staged_pipelined` moves one chunk at a time.

use super::Point;
use super::simulate::{iterations, stream_shape};
use crate::config::{Config, PathKind};

/// Events a message costs besides its data: posts, WQE fetch, completion, polls.
const PER_MESSAGE: u64 = 40;
/// Events of one bulk transfer (its segments and the rate re-solves around it).
const PER_BULK: u64 = 24;
/// The payload a TLP-granular message moves per event (an MPS-sized write or read, one hop).
const BYTES_PER_EVENT: u64 = 256;

/// Estimated events of one point (at least 1).
pub fn estimate(cfg: &Config, p: &Point) -> u64 {
    let size = p.size.max(1);
    let units = |bytes: u64| -> u64 {
        if cfg.sim.granularity.tlp() || bytes <= cfg.sim.coalesce_above {
            bytes.div_ceil(BYTES_PER_EVENT)
        } else {
            PER_BULK
        }
    };
    let per_message = match p.path {
        PathKind::StagedPipelined => {
            let chunk = cfg.sim.chunk_bytes.max(1);
            let chunks = size.div_ceil(chunk);
            // Each chunk is a copy in, an RDMA and a copy out.
            chunks.saturating_mul(3 * units(size.min(chunk)) + PER_MESSAGE)
        }
        PathKind::Pxn => {
            let chunk = cfg.sim.chunk_bytes.max(1);
            let chunks = size.div_ceil(chunk);
            // Each chunk is a copy over NVLink, its flag and an RDMA.
            chunks.saturating_mul(2 * units(size.min(chunk)) + PER_MESSAGE)
        }
        // Two copies around the host transfer.
        PathKind::Staged | PathKind::Gdrcopy | PathKind::Auto => 3 * units(size) + PER_MESSAGE,
        PathKind::Host | PathKind::GpuDirect => units(size) + PER_MESSAGE,
    };
    let (_, streamed) = stream_shape(cfg, size);
    let messages = u64::from(iterations(cfg, size)) + u64::from(streamed);
    let flows = cfg.scenarios[p.scenario].flows.len() as u64;
    messages
        .saturating_mul(flows)
        .saturating_mul(per_message)
        .max(1)
}

/// Estimated events one core works through per second (measured on the project's 2-core
/// machine: the default study's 2.6e6 in about 1.3 s of CPU, 120 scenarios of it, 1.1e8, in
/// about 75 s).
pub const EVENTS_PER_CORE_SECOND: u64 = 1_500_000;
/// Memory a run holds per point until it writes its outputs (its summary row with stages,
/// flows and links), measured: 11,160 points of 120 scenarios took 57 MB above a 279-point run.
pub const BYTES_PER_POINT: u64 = 5_500;
/// What every run holds whatever its size (binary, config, topology, chart buffers).
pub const BASE_BYTES: u64 = 24 << 20;

/// A study's estimated cost.
#[derive(Clone, Debug, PartialEq)]
pub struct StudyCost {
    /// Points in the study.
    pub points: usize,
    /// Simulation events over every point, estimated.
    pub events: u64,
    /// Peak memory of a run, bytes.
    pub memory: u64,
    /// The costliest points: (index in the plan, events), most expensive first.
    pub top: Vec<(usize, u64)>,
}

impl StudyCost {
    /// Wall-clock seconds on `cores` cores.
    pub fn seconds(&self, cores: usize) -> f64 {
        self.events as f64 / (EVENTS_PER_CORE_SECOND as f64 * cores.max(1) as f64)
    }
}

/// The cost of every point of `cfg` together.
pub fn study(cfg: &Config) -> StudyCost {
    let n = super::plan(cfg).len();
    study_of(cfg, &(0..n).collect::<Vec<_>>())
}

/// The cost of the points `ids` (indices into the plan) of `cfg`.
pub fn study_of(cfg: &Config, ids: &[usize]) -> StudyCost {
    let plan = super::plan(cfg);
    let points: Vec<&Point> = ids.iter().map(|&i| &plan[i]).collect();
    let costs: Vec<u64> = points.iter().map(|p| estimate(cfg, p)).collect();
    let mut top: Vec<(usize, u64)> = costs
        .iter()
        .copied()
        .enumerate()
        .map(|(j, c)| (ids[j], c))
        .collect();
    top.sort_by_key(|&(i, c)| (std::cmp::Reverse(c), i));
    top.truncate(3);
    StudyCost {
        points: points.len(),
        events: costs.iter().fold(0u64, |a, &c| a.saturating_add(c)),
        memory: BASE_BYTES.saturating_add((points.len() as u64).saturating_mul(BYTES_PER_POINT)),
        top,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{DEFAULT_TOML, parse};

    /// Estimates grow with the size up to the bulk threshold and stay bounded past it, and
    /// are within a small factor of the events the simulation really processes.
    #[test]
    fn estimates_track_the_simulated_events() {
        let cfg = parse(DEFAULT_TOML, "default").unwrap();
        let topo = crate::scenario::topology(&cfg);
        let points = crate::scenario::plan(&cfg);
        let mut ratios = Vec::new();
        for p in points
            .iter()
            .filter(|p| p.size.is_power_of_two() && p.size % 4 == 0)
            .step_by(7)
        {
            let est = estimate(&cfg, p) as f64;
            let real = crate::scenario::simulate_point(&cfg, &topo, p)
                .events
                .max(1) as f64;
            ratios.push(est / real);
        }
        ratios.sort_by(f64::total_cmp);
        let median = ratios[ratios.len() / 2];
        assert!(
            (0.2..5.0).contains(&median),
            "median estimate / events {median}"
        );
        let (lo, hi) = (ratios[0], ratios[ratios.len() - 1]);
        eprintln!("estimate / events: median {median:.2}, from {lo:.2} to {hi:.2}");
        assert!(
            lo > 0.02 && hi < 50.0,
            "estimate / events from {lo} to {hi}"
        );
    }
}

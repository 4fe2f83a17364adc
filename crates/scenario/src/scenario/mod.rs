//! Studies as lists of points (scenario x path x op x size), the data paths as plans, and the
//! simulation of one point into a result row.

pub mod build;
pub mod collective;
pub mod cost;
pub mod horizon;
pub mod memory;
#[cfg(test)]
mod model_checks;
pub mod nccl_p2p;
pub mod paths;
pub mod peer;
pub mod relay;
mod simulate;
pub mod tuner;
pub mod workload;

pub use simulate::{PointResult, perftest_bw_average, simulate_point, stream_shape};

use crate::components::{Sharing, SimOptions};
use crate::config::collective::Protocol;
use crate::config::{Config, Op, PathKind};
pub use crate::seed::{mix, stable_hash};
use crate::topology::{self, Topology};

/// One point of a sweep. Its seed derives from the config seed and the point's identity, so a
/// point's result does not depend on which other points run or in what order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Point {
    /// Index of the scenario in the config's scenarios.
    pub scenario: usize,
    /// The data path asked for (it may fall back: see the result's `effective_path`).
    pub path: PathKind,
    /// The RDMA operation.
    pub op: Op,
    /// Message size, in bytes.
    pub size: u64,
    /// The point's seed ([`point_seed`] of the config seed and the four above).
    pub seed: u64,
    /// The sweep variant it runs on (`[sweep] vary`; 0 without a sweep): see
    /// [`Config::variant`].
    pub variant: usize,
}

impl Point {
    /// The point of scenario `scenario`, `path`, `op` and `size` without a sweep variant, with
    /// its seed from the config's `seed` ([`point_seed`]): what `gdrsim run` simulates there.
    pub fn at(seed: u64, scenario: usize, path: PathKind, op: Op, size: u64) -> Point {
        Point {
            scenario,
            path,
            op,
            size,
            seed: point_seed(seed, scenario, path, op, size),
            variant: 0,
        }
    }
}

/// All points of a config, in output order: variant (where the config sweeps parameters),
/// then scenario, then path, then op, then size. Every variant's points have the seeds of the
/// study without a sweep, so variants differ by their values, not by their random draws.
pub fn plan(cfg: &Config) -> Vec<Point> {
    (0..cfg.variant_count())
        .flat_map(|v| {
            plan_one(cfg.variant(v))
                .into_iter()
                .map(move |p| Point { variant: v, ..p })
        })
        .collect()
}

/// One topology per variant of the study (one without a sweep), indexed by
/// [`Point::variant`].
pub fn topologies(cfg: &Config) -> Vec<Topology> {
    (0..cfg.variant_count())
        .map(|v| topology(cfg.variant(v)))
        .collect()
}

/// The points of a study without a sweep.
fn plan_one(cfg: &Config) -> Vec<Point> {
    let mut points = Vec::new();
    for (si, _) in cfg.scenarios.iter().enumerate() {
        for &path in &cfg.paths {
            for op in &cfg.ops {
                for &size in &cfg.sizes {
                    points.push(Point {
                        scenario: si,
                        path,
                        op: *op,
                        size,
                        seed: point_seed(cfg.seed, si, path, *op, size),
                        variant: 0,
                    });
                }
            }
        }
    }
    points
}

/// The machines of the study: every host and the network, built once and shared by every point.
pub fn topology(cfg: &Config) -> Topology {
    let flows: Vec<topology::FlowPorts> = cfg
        .scenarios
        .iter()
        .flat_map(|sc| &sc.flows)
        .filter(|f| !f.is_intra())
        .flat_map(|f| {
            // Each of the flow's QPs is placed on its own (adaptive routing).
            (0..cfg.network.qps()).map(move |k| topology::FlowPorts {
                pair: (
                    (f.sender.host, f.sender.nic),
                    (f.receiver.host, f.receiver.nic),
                ),
                qp: paths::qp_number(&cfg.network, f.qp, k),
            })
        })
        .collect();
    topology::build(&cfg.hosts, &cfg.network, &flows)
}

/// The simulation options a config asks for, with `seed`: its granularity, bulk threshold and
/// jitter, recording nothing. Every caller (`run`, `walk`, `trace`, the ceiling, tests,
/// benches) starts here and narrows with [`SimOptions::noise_free`], [`SimOptions::recording`]
/// or [`SimOptions::tlp`].
pub fn sim_options(cfg: &Config, seed: u64) -> SimOptions {
    SimOptions {
        tlp_granularity: cfg.sim.granularity.tlp(),
        coalesce_above: cfg.sim.coalesce_above,
        jitter: cfg.sim.jitter,
        seed,
        record: false,
        traffic: false,
        sharing: Sharing {
            exact_below: cfg.sim.exact_sharing_below,
            defer_ppm: cfg.sim.sharing_wait_ppm,
        },
    }
}

/// The seed of point (scenario `si`, `path`, `op`, `size`) under the config seed `seed`: every
/// caller (`run`, `walk`, `trace`, tests, benches) takes a point's seed from here.
pub fn point_seed(seed: u64, si: usize, path: PathKind, op: Op, size: u64) -> u64 {
    mix(
        seed,
        &[si as u64, path as u64, stable_hash(op.seed_name()), size],
    )
}

/// The largest size [`check_plans`] builds plans at (64 KiB: one chunk of every pipelined
/// path, a few hundred bytes a pair of ranks in a 128-rank all-to-all).
const CHECK_SIZE_CAP: u64 = 64 << 10;

/// Builds the plan of every flow of every scenario for every path and op of the study, so that
/// a combination no route allows (an RDMA Read from a GPU whose NIC may not read it
/// peer-to-peer) is refused before any work, naming the scenario. Routes do not depend on the
/// size, so the plans are built at the sweep's smallest size, at most `CHECK_SIZE_CAP`: a
/// plan's steps grow with its chunks, and a 16-node all-to-all at 128 MiB took 100 s to plan.
/// Returns (key, expected, found) for the config error.
pub fn check_plans(cfg: &Config, topo: &Topology) -> Result<(), (String, String, String)> {
    let size = (cfg.sizes.iter().copied().min())
        .unwrap_or(8)
        .min(CHECK_SIZE_CAP);
    for (si, sc) in cfg.scenarios.iter().enumerate() {
        for &path in &cfg.paths {
            for &op in &cfg.ops {
                for i in 0..sc.flows.len() {
                    if let Err(e) =
                        workload::plan(cfg, topo, sc, i, (path, op), (size, Protocol::Simple))
                    {
                        let why = match op {
                            Op::Read => {
                                " (an RDMA Read's source cannot be staged: its CPU takes no part)"
                            }
                            Op::Write | Op::WriteImm | Op::Send => "",
                        };
                        return Err((
                            format!("scenarios[{si}]"),
                            format!("routes for every path and op of the sweep{why}"),
                            format!("{:?}: {} on {}: {e}", sc.name, op.name(), path.name()),
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

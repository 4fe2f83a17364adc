//! Studies as lists of points (scenario x path x op x size), the data paths as plans, and the
//! simulation of one point into a result row.

pub mod build;
pub mod paths;
mod simulate;

pub use simulate::{PointResult, simulate_point};

use crate::config::{Config, PathKind};
use crate::topology::{self, Topology};

/// One point of a sweep. Its seed derives from the config seed and the point's identity, so a
/// point's result does not depend on which other points run or in what order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Point {
    pub scenario: usize,
    pub path: PathKind,
    pub op: String,
    pub size: u64,
    pub seed: u64,
}

/// All points of a config, in output order: scenario, then path, then op, then size.
pub fn plan(cfg: &Config) -> Vec<Point> {
    let mut points = Vec::new();
    for (si, _) in cfg.scenarios.iter().enumerate() {
        for &path in &cfg.paths {
            for op in &cfg.ops {
                for &size in &cfg.sizes {
                    let seed = mix(cfg.seed, &[si as u64, path as u64, size]);
                    points.push(Point {
                        scenario: si,
                        path,
                        op: op.clone(),
                        size,
                        seed,
                    });
                }
            }
        }
    }
    points
}

/// The machines of the study: every host and the network, built once and shared by every point.
pub fn topology(cfg: &Config) -> Topology {
    let pairs: Vec<topology::PortPair> = cfg
        .scenarios
        .iter()
        .map(|sc| {
            (
                (sc.sender.host, sc.sender.nic),
                (sc.receiver.host, sc.receiver.nic),
            )
        })
        .collect();
    topology::build(&cfg.hosts, &cfg.network, &pairs)
}

/// SplitMix64-style mixing: a stable seed from a base and a few integers.
pub fn mix(base: u64, parts: &[u64]) -> u64 {
    let mut x = base ^ 0x9E37_79B9_7F4A_7C15;
    for &p in parts {
        x = x.wrapping_add(p).wrapping_add(0x9E37_79B9_7F4A_7C15);
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^= x >> 31;
    }
    x
}

//! nvbandwidth's methodology on the simulated machine (v0.8 memcpy.cpp, `doMemcpyCore`).
//!
//! What is nvbandwidth's:
//! - Each copy of a testcase has a stream. A spin kernel blocks every stream while nvbandwidth
//!   enqueues, per stream, `WARMUP_COUNT` (4) warm-up copies, a start event, `loopCount` (16)
//!   copies of the buffer and an end event; then it releases the flag. So the host's launch
//!   cost is outside the timed interval, and a stream's copies follow one another on the GPU.
//! - A sample's bandwidth is `size * loopCount * 1e6 / elapsed_us` in whole bytes per second,
//!   `elapsed_us` the start-to-end event time in µs truncated to an integer.
//! - `testSamples` (`-i`, 3) samples; the median (`-m`: the mean) of their bandwidths, times
//!   1e-9, is the GB/s reported.
//! - Bidirectional: the measured stream copies `size` one way while a second stream copies
//!   twice the size the other way (so that it outlasts the measured one), both on the same GPU;
//!   only the measured stream's bandwidth is reported.
//!
//! What is the model's: a stream is a flow whose messages are its copies, one in flight (the
//! next starts when the one before has landed); a copy is the staged path's cudaMemcpyAsync
//! (the copy engine's posted writes for D2H, its reads under its own window for H2D), with the
//! launch and completion-signalling costs set to zero, as they are off the GPU's timeline here.
//! Events are the simulated times of the copies' last bytes. Both streams of a bidirectional
//! sample run in one fabric, sharing every link, memory and window. The interfering stream's
//! wait on the measured stream's start event is not modelled (it would hold the interfering
//! stream only where its direction runs more than twice as fast as the measured one).

use anyhow::{Context, Result};

use crate::components::Fabric;
use crate::config::{Config, ConfigError};
use crate::scenario::{self, build};
use crate::topology::{NodeKind, Topology};
use crate::units::Ps;

/// nvbandwidth's WARMUP_COUNT: copies per stream before the start event.
pub const WARMUP_COUNT: u32 = 4;

/// One stream of a sample: the GPU, the direction and the bytes of each copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stream {
    /// The GPU it copies to or from (index into the host's GPUs).
    pub gpu: usize,
    /// Its direction: true host to device, false device to host.
    pub h2d: bool,
    /// Bytes of each copy.
    pub size: u64,
}

pub use crate::gpu_copies::gpu_timeline;

/// The socket of GPU `gpu` of host `host`: nvbandwidth allocates its host buffer after binding
/// to the GPU's NUMA node, so the pinned pages are local to it.
pub fn local_socket(topo: &Topology, host: usize, gpu: usize) -> usize {
    let h = &topo.hosts[host];
    h.nodes[h.node_index(NodeKind::Gpu(gpu))].socket
}

/// The copy plan of each of `streams` on host `host` (the host buffer on the GPU's socket).
pub fn plans(topo: &Topology, host: usize, streams: &[Stream]) -> Result<Vec<crate::plan::Plan>> {
    streams
        .iter()
        .map(|s| {
            let socket = local_socket(topo, host, s.gpu);
            build::memcpy(topo, (host, s.gpu, socket), s.h2d, s.size).with_context(|| {
                format!(
                    "building the copy {} GPU {}",
                    if s.h2d { "to" } else { "from" },
                    s.gpu
                )
            })
        })
        .collect()
}

/// One sample of `streams` on host `host`: every stream runs `WARMUP_COUNT + loops` copies, one
/// after another, all streams at once. Returns the first (measured) stream's start-to-end event
/// time in picoseconds.
pub fn sample(
    cfg: &Config,
    topo: &Topology,
    host: usize,
    streams: &[Stream],
    loops: u32,
    seed: u64,
) -> Result<Ps> {
    let plans = plans(topo, host, streams)?;
    let refs: Vec<&crate::plan::Plan> = plans.iter().collect();
    let mut f = Fabric::new(topo, &refs, scenario::sim_options(cfg, seed));
    let total = WARMUP_COUNT
        .checked_add(loops)
        .context("too many copies per stream")?;
    let out = f.run(1, total);
    if out.stats.past_horizon {
        // Bad input for this machine, not a failure: fewer or smaller copies fit.
        return Err(ConfigError::new(
            "command line",
            "-b/--loopCount",
            "copies that end within the simulator's horizon (2^62 ps, about 53 days simulated)",
            format!(
                "{} copies of {} bytes per stream",
                total,
                streams.first().map_or(0, |s| s.size)
            ),
        )
        .into());
    }
    let m = &out.messages;
    // The start event follows the last warm-up copy in the stream; the end event the last copy.
    let start = m[WARMUP_COUNT as usize - 1].1;
    let end = m[m.len() - 1].1;
    Ok(end.saturating_sub(start))
}

/// One sample of peer copies between GPUs of host `host`, run at once (nvbandwidth's
/// `doMemcpyVector`: a copy and its interfering copy the other way): one stream of
/// `WARMUP_COUNT + loops` copies each; returns each stream's start-to-end event time after
/// its warm-ups.
pub fn peer_samples(
    cfg: &Config,
    topo: &Topology,
    host: usize,
    copies: &[crate::gpu_copies::peer::Stream],
    loops: u32,
    seed: u64,
) -> Result<Vec<Ps>> {
    let total = WARMUP_COUNT
        .checked_add(loops)
        .context("too many copies per stream")?;
    let out = crate::gpu_copies::peer::simulate(cfg, topo, host, copies, total, seed)?;
    Ok(out
        .flows
        .iter()
        .map(|fl| {
            let m = &fl.messages;
            m[m.len() - 1]
                .1
                .saturating_sub(m[WARMUP_COUNT as usize - 1].1)
        })
        .collect())
}

/// One sample's bandwidth as nvbandwidth computes it: `size * loops * 1e6 / elapsed_us` in
/// whole bytes per second, `elapsed_us` truncated to whole microseconds.
pub fn bandwidth(size: u64, loops: u32, elapsed: Ps) -> Result<u64, ConfigError> {
    let us = elapsed / 1_000_000;
    let too_short = || {
        ConfigError::new(
            "command line",
            "-b",
            "a buffer whose copies take at least a microsecond",
            format!("{size} bytes, {loops} copies in {elapsed} ps"),
        )
    };
    if us == 0 {
        return Err(too_short());
    }
    let bytes = size as u128 * loops as u128 * 1_000_000;
    u64::try_from(bytes / us as u128).map_err(|_| too_short())
}

/// nvbandwidth's `PerformanceStatistic`: the median of the samples (the mean of the middle two
/// for an even count), or their mean.
pub fn statistic(values: &[u64], mean: bool) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v: Vec<f64> = values.iter().map(|&b| b as f64).collect();
    v.sort_by(f64::total_cmp);
    if mean {
        return v.iter().sum::<f64>() / v.len() as f64;
    }
    let n = v.len();
    if n.is_multiple_of(2) {
        (v[n / 2] + v[n / 2 - 1]) / 2.0
    } else {
        v[n / 2]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// memcpy.cpp: 512 MiB x 16 copies in 330,123.9 µs is 26,020,... B/s: the time truncated
    /// to whole µs, the quotient to whole bytes per second.
    #[test]
    fn bandwidth_follows_nvbandwidth() {
        let size = 512 << 20;
        let elapsed: Ps = 330_123_900_000; // 330,123.9 µs
        let want = (size as u128 * 16 * 1_000_000 / 330_123) as u64;
        assert_eq!(bandwidth(size, 16, elapsed).unwrap(), want);
        assert!(bandwidth(size, 16, 999_999).is_err(), "under a µs");
    }

    #[test]
    fn median_and_mean_as_performance_statistic() {
        assert_eq!(statistic(&[3, 1, 2], false), 2.0);
        assert_eq!(statistic(&[4, 1, 3, 2], false), 2.5);
        assert_eq!(statistic(&[4, 1, 3, 2], true), 2.5);
        assert_eq!(statistic(&[10, 1, 1], true), 4.0);
        assert_eq!(statistic(&[], false), 0.0);
    }

    /// The model's side of the method: a 64 MiB stream on the default machine's first GPU
    /// takes twice as long between the events for 16 copies as for 8 (the warm-ups are
    /// outside), and a copy twice the size the other way beside it never speeds it up; the
    /// D2H stream is slowed by the H2D reads' requests sharing its link direction.
    #[test]
    fn timed_interval_covers_the_loop_copies_only() {
        let cfg = gpu_timeline(
            &crate::config::parse(crate::config::DEFAULT_TOML, "default").expect("default"),
        );
        let topo = scenario::topology(&cfg);
        let size = 64 << 20;
        let stream = |h2d: bool, size: u64| Stream { gpu: 0, h2d, size };
        for h2d in [true, false] {
            let one = stream(h2d, size);
            let t16 = sample(&cfg, &topo, 0, &[one], 16, 1).unwrap();
            let t8 = sample(&cfg, &topo, 0, &[one], 8, 1).unwrap();
            let ratio = t16 as f64 / t8 as f64;
            assert!((ratio - 2.0).abs() < 0.01, "16 copies / 8 copies = {ratio}");
            let back = stream(!h2d, 2 * size);
            let bidir = sample(&cfg, &topo, 0, &[one, back], 16, 1).unwrap();
            assert!(bidir >= t16, "interfered {bidir} ps, alone {t16} ps");
            if !h2d {
                assert!(bidir > t16, "D2H interfered {bidir} ps, alone {t16} ps");
            }
        }
    }
}

//! What `p2p-matrix` is about to simulate, for the cost gate: per matrix and GPU pair one run
//! of its copies, as [`super::measure`] makes them (bandwidth: [`BW_REPEAT`] copies of
//! `--numElems` ints per stream; latency: [`LAT_REPEAT`] copies of one int4, on the GPU's
//! timeline and again on the CPU's), one after another.

use anyhow::Result;

use super::{Args, BW_REPEAT, LAT_BYTES, LAT_REPEAT, checked, copy_kind};
use crate::config::Config;
use crate::gpu_copies::peer::Stream;
use crate::scenario::{self, peer::peer_access};
use crate::study::{self, Work};

/// One kind of matrix: its name, whether P2P is on, whether the copies read, whether both
/// ways run at once, the bytes and the copies per stream, and the runs per cell.
type Kind = (&'static str, bool, bool, bool, u64, u32, u64);

/// The events and memory of every cell of every matrix `a` asks of `cfg`.
pub fn work(cfg: &Config, a: &Args) -> Result<Work> {
    let (host, gpus) = checked(cfg, a)?;
    let timeline = crate::gpu_copies::gpu_timeline(cfg);
    let topo = scenario::topology(&timeline);
    let h = &topo.hosts[host];
    let size = a.elems * 4;
    let mut kinds: Vec<Kind> = vec![
        (
            "unidirectional P2P=Disabled",
            false,
            false,
            false,
            size,
            BW_REPEAT,
            1,
        ),
        (
            "unidirectional P2P writes",
            true,
            false,
            false,
            size,
            BW_REPEAT,
            1,
        ),
        (
            "bidirectional P2P=Disabled",
            false,
            false,
            true,
            size,
            BW_REPEAT,
            1,
        ),
        (
            "bidirectional P2P=Enabled",
            true,
            false,
            true,
            size,
            BW_REPEAT,
            1,
        ),
        (
            "latency P2P=Disabled",
            false,
            false,
            false,
            LAT_BYTES,
            LAT_REPEAT,
            2,
        ),
        (
            "latency P2P writes",
            true,
            false,
            false,
            LAT_BYTES,
            LAT_REPEAT,
            2,
        ),
    ];
    if a.p2p_read {
        kinds.push((
            "unidirectional P2P reads",
            true,
            true,
            false,
            size,
            BW_REPEAT,
            1,
        ));
        kinds.push((
            "latency P2P reads",
            true,
            true,
            false,
            LAT_BYTES,
            LAT_REPEAT,
            2,
        ));
    }
    let mut runs = Vec::new();
    for (name, p2p, read, both, bytes, copies, repeat) in kinds {
        for (i, j) in (0..gpus).flat_map(|i| (0..gpus).map(move |j| (i, j))) {
            let stream = |src, dst, read| Stream {
                src,
                dst,
                how: copy_kind(p2p && peer_access(h, src, dst), read),
                size: bytes,
            };
            let mut streams = vec![stream(i, j, read)];
            if both {
                streams.push(stream(j, i, false));
            }
            let plans = crate::gpu_copies::peer::plans(&topo, host, &streams)?;
            let flows: Vec<(&crate::plan::Plan, u64)> =
                plans.iter().map(|p| (p, u64::from(copies))).collect();
            let (events, memory) = scenario::cost::fabric_run(&timeline, &flows, 1);
            let label = format!("{name} GPU {i} to GPU {j}");
            runs.push((label, events.saturating_mul(repeat), memory));
        }
    }
    let over = format!("{} cells of {} GPUs", runs.len(), gpus);
    let cut = "fewer ints per copy (--numElems)";
    Ok(study::runs_work("a p2p-matrix run", over, &runs, cut, 1))
}

/// The run [`super::first_pair`] makes (a validation row's cell), for the cost gate: its
/// estimated events and memory.
pub fn first_pair_run(cfg: &Config, both_ways: bool, size: u64) -> Result<(u64, u64)> {
    let (timeline, topo, there, back) = super::first_pair_streams(cfg, size)?;
    let streams = if both_ways {
        vec![there, back]
    } else {
        vec![there]
    };
    let plans = crate::gpu_copies::peer::plans(&topo, 0, &streams)?;
    let flows: Vec<(&crate::plan::Plan, u64)> =
        plans.iter().map(|p| (p, u64::from(BW_REPEAT))).collect();
    Ok(scenario::cost::fabric_run(&timeline, &flows, 1))
}

//! `[sim]`: how a point is simulated (iterations, streaming, granularity, registration, flush,
//! staging pipeline, receive queue).

use super::super::raw::RawSim;
use super::super::{FlushMode, GDR_LEVELS, Registration, SimConfig};
use super::quantity::{Cx, MAX_COUNT, R};

pub(super) fn convert(cx: &Cx, s: &RawSim) -> R<SimConfig> {
    let granularity = cx.one_of(&s.granularity, "sim.granularity", &["auto", "tlp"], "auto")?;
    let registration = cx.one_of(
        &s.registration,
        "sim.registration",
        &["cached", "per_transfer", "lru"],
        "cached",
    )?;
    let flush = cx.one_of(
        &s.flush,
        "sim.flush",
        &["auto", "rdma_read", "none"],
        "auto",
    )?;
    // Counts of simulated messages: bounded so a typo cannot exhaust memory or time.
    let positive = |v: Option<u32>, key: &str, default: u32| -> R<u32> {
        match v {
            Some(0) => Err(cx.err(key, "a positive integer", "0")),
            Some(v) if v > MAX_COUNT => Err(cx.err(
                key,
                format!("an integer from 1 to {MAX_COUNT}"),
                v.to_string(),
            )),
            Some(v) => Ok(v),
            None => Ok(default),
        }
    };
    if s.burst_bytes.is_some() {
        return Err(cx.err(
            "sim.burst_bytes",
            "no burst_bytes key (removed: messages above coalesce_above_bytes move as bulk \
             transfers, not bursts)",
            "burst_bytes",
        ));
    }
    Ok(SimConfig {
        iterations: positive(s.iterations, "sim.iterations", 100)?,
        min_iterations: positive(s.min_iterations, "sim.min_iterations", 5)?,
        iteration_budget_bytes: cx.bytes(
            &s.iteration_budget_bytes,
            "sim.iteration_budget_bytes",
            1 << 30,
        )?,
        stream_window: positive(s.stream_window, "sim.stream_window", 16)?,
        stream_messages: positive(s.stream_messages, "sim.stream_messages", 128)?,
        stream_budget_bytes: cx.bytes(
            &s.stream_budget_bytes,
            "sim.stream_budget_bytes",
            8 << 30,
        )?,
        tlp_granularity: granularity == "tlp",
        coalesce_above: cx.bytes(
            &s.coalesce_above_bytes,
            "sim.coalesce_above_bytes",
            64 << 10,
        )?,

        registration: match registration.as_str() {
            "cached" => Registration::Cached,
            "lru" => Registration::Lru,
            _ => Registration::PerTransfer,
        },
        // Estimate: registrations a library's cache keeps (UCX and NCCL bound theirs by memory).
        registration_cache_entries: cx.count_in(
            s.registration_cache_entries,
            "sim.registration_cache_entries",
            64,
            1..=MAX_COUNT,
            "a number of registrations",
        )?,
        buffers: cx.count_in(
            s.buffers,
            "sim.buffers",
            1,
            1..=MAX_COUNT,
            "a number of distinct buffers per side",
        )?,
        jitter: s.jitter.unwrap_or(true),
        flush: match flush.as_str() {
            "auto" => FlushMode::Auto,
            "rdma_read" => FlushMode::RdmaRead,
            _ => FlushMode::None,
        },
        // Row B3: NCCL uses GPUDirect only up to PXB by default (ncclTopoCheckGdr).
        // Row B6: MVAPICH2's MV2_CUDA_BLOCK_SIZE (NCCL uses 128 KiB, NCCL_P2P_NET_CHUNKSIZE).
        chunk_bytes: cx.bytes_in(&s.chunk_bytes, "sim.chunk_bytes", 256 << 10, 4096, 1 << 30)?,
        // Bounce buffers in flight per side: NCCL's NCCL_STEPS = 8 slots per connection
        // (src/include/device.h); MVAPICH2 does not document its count (estimate).
        pipeline_depth: cx.count_in(
            s.pipeline_depth,
            "sim.pipeline_depth",
            8,
            1..=64,
            "a number of bounce buffers per side",
        )?,
        // perftest's DEF_RX_SEND (src/perftest_parameters.h): receives posted for Send tests.
        recv_depth: cx.count_in(
            s.recv_depth,
            "sim.recv_depth",
            512,
            1..=MAX_COUNT,
            "a number of posted receive WQEs",
        )?,
        // perftest's MIN_RNR_TIMER (12: 0.64 ms), set on every RC QP it connects.
        min_rnr_timer: match s.min_rnr_timer.unwrap_or(12) {
            c @ 0..=31 => c as u8,
            c => {
                return Err(cx.err(
                    "sim.min_rnr_timer",
                    "the verbs' RNR timer code from 0 to 31 (IBTA table 45: 12 is 0.64 ms)",
                    c.to_string(),
                ));
            }
        },
        net_gdr_level: {
            let level = cx.one_of(&s.net_gdr_level, "sim.net_gdr_level", &GDR_LEVELS, "PXB")?;
            GDR_LEVELS.iter().position(|l| *l == level).unwrap_or(1)
        },
    })
}

//! `[sim]`: how a point is simulated (iterations, streaming, granularity, registration, flush,
//! staging pipeline, receive queue). The keys, defaults and ranges are declared in `raw.rs`.

use super::super::SimConfig;
use super::super::raw::RawSim;
use super::quantity::{Cx, R};

pub(super) fn convert(cx: &Cx, s: &RawSim) -> R<SimConfig> {
    if s.burst_bytes.is_some() {
        return Err(cx.err(
            "sim.burst_bytes",
            "no burst_bytes key (removed: messages above coalesce_above_bytes move as bulk \
             transfers, not bursts)",
            "burst_bytes",
        ));
    }
    let mut sim = SimConfig::default();
    s.apply(cx, &|k| format!("sim.{k}"), &mut sim)?;
    Ok(sim)
}

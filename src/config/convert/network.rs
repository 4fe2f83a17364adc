//! `[network]`: the switches and cables between the hosts.

use super::super::defaults as d;
use super::super::raw::RawNetwork;
use super::quantity::{Cx, MAX_DURATION, R, fmt_ps};
use crate::topology::spec::NetworkSpec;

const MAX_SWITCH_HOPS: u32 = 64;
const MAX_CABLE_M: u64 = 100_000;

pub(super) fn convert(cx: &Cx, n: &RawNetwork) -> R<NetworkSpec> {
    let network = NetworkSpec {
        switch_hops: match n.switch_hops.unwrap_or(1) {
            h if h > MAX_SWITCH_HOPS => {
                return Err(cx.err(
                    "network.switch_hops",
                    format!("from 0 to {MAX_SWITCH_HOPS} switches"),
                    h.to_string(),
                ));
            }
            h => h,
        },
        switch_latency: cx.dur(
            &n.switch_latency_ns,
            "network.switch_latency_ns",
            d::NET_SWITCH_LATENCY,
        )?,
        cable_m: match n.cable_m.unwrap_or(d::CABLE_M) {
            m if m > MAX_CABLE_M => {
                return Err(cx.err(
                    "network.cable_m",
                    format!("a cable length from 0 to {MAX_CABLE_M} m"),
                    m.to_string(),
                ));
            }
            m => m,
        },
        propagation_per_m: cx.dur(
            &n.propagation_ns_per_m,
            "network.propagation_ns_per_m",
            d::PROPAGATION_PER_M,
        )?,
    };
    // Each value is bounded; their product, a cable's latency, must be too.
    if network.cable_m.saturating_mul(network.propagation_per_m) > MAX_DURATION {
        return Err(cx.err(
            "network.cable_m",
            format!(
                "cable_m x propagation_ns_per_m (a cable's latency) of at most {}",
                fmt_ps(MAX_DURATION)
            ),
            format!("{} m x {} ps/m", network.cable_m, network.propagation_per_m),
        ));
    }
    Ok(network)
}

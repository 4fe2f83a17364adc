//! `[network]`: the switches and cables between the hosts. The keys, defaults and ranges are
//! declared in `raw.rs`; here the check of their product.

use super::super::limits::MAX_DURATION;
use super::super::raw::RawNetwork;
use super::quantity::{Cx, R, fmt_ps};
use crate::topology::spec::NetworkSpec;

pub(super) fn convert(cx: &Cx, n: &RawNetwork) -> R<NetworkSpec> {
    let mut network = NetworkSpec::default();
    n.apply(cx, &|k| format!("network.{k}"), &mut network)?;
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

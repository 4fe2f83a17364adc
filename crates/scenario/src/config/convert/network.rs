//! `[network]`: the switches and cables between the hosts. The keys, defaults and ranges are
//! declared in `raw.rs`; here the check of their product, the leaf-spine keys converted by
//! hand, and the refusal of keys the chosen fabric does not read.

use super::super::defaults as d;
use super::super::limits::{MAX_DURATION, MAX_RADIX, MAX_RATIO};
use super::super::raw::{Q, RawNetwork};
use super::quantity::{Cx, R, fmt_ps};
use crate::topology::spec::{Fabric, NetworkSpec};

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
    network.leaf_spine.oversubscription = match &n.oversubscription {
        None => d::OVERSUBSCRIPTION,
        Some(q) => ratio(cx, q)?,
    };
    network.leaf_spine.spine_port = match &n.spine_port_gbps {
        None => None,
        q => Some(cx.rate(q, "network.spine_port_gbps", Default::default())?),
    };
    network.leaf_spine.spine_radix = match n.spine_radix {
        None => None,
        v => Some(cx.count_in(
            v,
            "network.spine_radix",
            0,
            2..=MAX_RADIX,
            "a number of switch ports",
        )?),
    };
    // A key the fabric does not read is a mistake (a leaf-spine study whose `fabric` line
    // was forgotten), not something to ignore.
    let leaf_keys = [
        ("hosts_per_leaf", n.hosts_per_leaf.is_some()),
        ("spines", n.spines.is_some()),
    ];
    let rail_keys = [
        ("hosts_per_unit", n.hosts_per_unit.is_some()),
        ("units", n.units.is_some()),
        ("spines_per_unit", n.spines_per_unit.is_some()),
    ];
    // Read by both two-tier generators.
    let shared_keys = [
        ("oversubscription", n.oversubscription.is_some()),
        ("leaf_radix", n.leaf_radix.is_some()),
        ("spine_radix", n.spine_radix.is_some()),
        ("spine_port_gbps", n.spine_port_gbps.is_some()),
        ("routing", n.routing.is_some()),
        ("qps_per_connection", n.qps_per_connection.is_some()),
    ];
    let set = |keys: &[(&'static str, bool)]| keys.iter().find(|k| k.1).map(|k| k.0);
    let refuse = |k: &str, expected: &str| {
        let found = format!("fabric = \"{}\"", network.fabric.name());
        Err(cx.err(&format!("network.{k}"), expected, found))
    };
    match network.fabric {
        Fabric::SingleSwitch => {
            if let Some(k) = set(&leaf_keys).or(set(&shared_keys)) {
                return refuse(
                    k,
                    "fabric = \"leaf-spine\" for a leaf-spine key (the single-switch fabric \
                     has no leaves or spines)",
                );
            }
            if let Some(k) = set(&rail_keys) {
                return refuse(
                    k,
                    "fabric = \"rail-optimized\" for a rail-optimized key (the single-switch \
                     fabric has no scalable units)",
                );
            }
        }
        Fabric::LeafSpine | Fabric::RailOptimized => {
            if let Some(h) = n.switch_hops {
                return Err(cx.err(
                    "network.switch_hops",
                    format!(
                        "no switch_hops with fabric = \"{}\" (one switch within a leaf, \
                         three across the spines)",
                        network.fabric.name()
                    ),
                    h.to_string(),
                ));
            }
            let (other, theirs) = if network.fabric == Fabric::LeafSpine {
                (set(&rail_keys), Fabric::RailOptimized)
            } else {
                (set(&leaf_keys), Fabric::LeafSpine)
            };
            if let Some(k) = other {
                return refuse(
                    k,
                    &format!(
                        "fabric = \"{}\" for this key (fabric = \"{}\" does not read it)",
                        theirs.name(),
                        network.fabric.name()
                    ),
                );
            }
        }
    }
    Ok(network)
}

/// An oversubscription: an integer `n` (n:1) or a string "num:den", each side 1 to
/// [`MAX_RATIO`].
fn ratio(cx: &Cx, q: &Q) -> R<(u32, u32)> {
    let key = "network.oversubscription";
    let expected = format!(
        "an integer or a ratio \"num:den\" (host ports to spine ports of a leaf), each from 1 \
         to {MAX_RATIO}"
    );
    let side = |v: &str| {
        v.trim()
            .parse::<u32>()
            .ok()
            .filter(|v| (1..=MAX_RATIO).contains(v))
    };
    let parsed = match q {
        Q::Int(v) => u32::try_from(*v)
            .ok()
            .filter(|v| (1..=MAX_RATIO).contains(v))
            .map(|v| (v, 1)),
        Q::Str(s) => s
            .split_once(':')
            .and_then(|(a, b)| Some((side(a)?, side(b)?))),
        Q::Float(_) => None,
    };
    parsed.ok_or_else(|| {
        let found = match q {
            Q::Int(v) => v.to_string(),
            Q::Float(v) => format!("{v:?}"),
            Q::Str(s) => format!("{s:?}"),
        };
        cx.err(key, expected, found)
    })
}

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
        Some(q) => ratio(
            cx,
            q,
            "oversubscription",
            "host ports to spine ports of a leaf",
        )?,
    };
    network.fat_tree.core_oversubscription = match &n.core_oversubscription {
        None => d::OVERSUBSCRIPTION,
        Some(q) => ratio(
            cx,
            q,
            "core_oversubscription",
            "leaf ports to core ports of a spine",
        )?,
    };
    network.leaf_spine.spine_port = match &n.spine_port_gbps {
        None => None,
        q => Some(cx.rate(q, "network.spine_port_gbps", Default::default())?),
    };
    let radix = |v: Option<u32>, key: &str| match v {
        None => Ok(None),
        v => cx
            .count_in(v, key, 0, 2..=MAX_RADIX, "a number of switch ports")
            .map(Some),
    };
    network.leaf_spine.spine_radix = radix(n.spine_radix, "network.spine_radix")?;
    network.fat_tree.core_radix = radix(n.core_radix, "network.core_radix")?;
    if network.fabric.tiered()
        && let Some(h) = n.switch_hops
    {
        return Err(cx.err(
            "network.switch_hops",
            format!(
                "no switch_hops with fabric = \"{}\" (one switch within a leaf, three across \
                 the spines, five across a fat tree's cores)",
                network.fabric.name()
            ),
            h.to_string(),
        ));
    }
    // A key the fabric does not read is a mistake (a leaf-spine study whose `fabric` line
    // was forgotten), not something to ignore. Each key with the fabrics that read it, the
    // first of them the one a message suggests.
    use Fabric::{FatTree, LeafSpine, RailOptimized};
    const TIERED: &[Fabric] = &[LeafSpine, RailOptimized, FatTree];
    let keys: [(&str, bool, &[Fabric]); 15] = [
        (
            "hosts_per_leaf",
            n.hosts_per_leaf.is_some(),
            &[LeafSpine, FatTree],
        ),
        ("spines", n.spines.is_some(), &[LeafSpine]),
        ("oversubscription", n.oversubscription.is_some(), TIERED),
        ("leaf_radix", n.leaf_radix.is_some(), TIERED),
        ("spine_radix", n.spine_radix.is_some(), TIERED),
        ("spine_port_gbps", n.spine_port_gbps.is_some(), TIERED),
        ("routing", n.routing.is_some(), TIERED),
        ("qps_per_connection", n.qps_per_connection.is_some(), TIERED),
        (
            "hosts_per_unit",
            n.hosts_per_unit.is_some(),
            &[RailOptimized],
        ),
        ("units", n.units.is_some(), &[RailOptimized]),
        (
            "spines_per_unit",
            n.spines_per_unit.is_some(),
            &[RailOptimized],
        ),
        ("pods", n.pods.is_some(), &[FatTree]),
        ("spines_per_pod", n.spines_per_pod.is_some(), &[FatTree]),
        ("cores", n.cores.is_some(), &[FatTree]),
        (
            "core_oversubscription",
            n.core_oversubscription.is_some(),
            &[FatTree],
        ),
    ];
    let core_radix = ("core_radix", n.core_radix.is_some(), &[FatTree][..]);
    let unread = (keys.iter().chain([&core_radix]))
        .find(|(_, set, by)| *set && !by.contains(&network.fabric));
    if let Some(&(k, _, by)) = unread {
        let theirs = by[0];
        let expected = if network.fabric == Fabric::SingleSwitch {
            let what = match theirs {
                LeafSpine => "leaves or spines",
                RailOptimized => "scalable units",
                _ => "pods or cores",
            };
            format!(
                "fabric = \"{0}\" for a {0} key (the single-switch fabric has no {what})",
                theirs.name()
            )
        } else {
            format!(
                "fabric = \"{}\" for this key (fabric = \"{}\" does not read it)",
                theirs.name(),
                network.fabric.name()
            )
        };
        let found = format!("fabric = \"{}\"", network.fabric.name());
        return Err(cx.err(&format!("network.{k}"), expected, found));
    }
    Ok(network)
}

/// An oversubscription (`key`: `oversubscription`, `core_oversubscription`): an integer `n`
/// (n:1) or a string "num:den", each side 1 to [`MAX_RATIO`]; `what` says which ports over
/// which.
fn ratio(cx: &Cx, q: &Q, key: &str, what: &str) -> R<(u32, u32)> {
    let key = format!("network.{key}");
    let expected =
        format!("an integer or a ratio \"num:den\" ({what}), each from 1 to {MAX_RATIO}");
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
        cx.err(&key, expected, found)
    })
}

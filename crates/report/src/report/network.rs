//! The report's network section: for every point whose flows crossed a switch fabric
//! (`fabric = "leaf-spine"`, `"rail-optimized"`), the cable that bound it in words a cluster
//! engineer reads ("spine2 -> leaf1 downlink 100% busy: 3 flows hashed onto it by ECMP"), how
//! many flows the routes put on it and why (a hash collision, adaptive placement, or
//! oversubscription), against the NIC line rate of those flows; where no cable of the
//! network bound the point, its busiest leaf-spine cable. The counts are the simulation's
//! routes ([`crate::fabric_load`]), the same that flows.csv's `switch_path` gives per flow.

use std::fmt::Write as _;

use super::charts::data::{Model, sig3};
use super::markdown::{fmt_gbps, fmt_pct, md_inline};
use super::vocab::display;
use crate::fabric_load::{Cable, CableLoad, FabricLoad, PathChoice};
use crate::stats::{LinkRow, Summary};
use crate::units::fmt_bytes;

/// The busy share from which a binding cable is said to be saturated (as the contention
/// section's table says of any channel).
const SATURATED: f64 = 0.95;

/// Flow indices listed by name, at most.
const LISTED: usize = 8;

/// Writes the section, or nothing when no point crossed a switch fabric.
pub(super) fn network(out: &mut String, compare_size: u64, m: &Model) {
    let Some(size) = m.nearest_size(compare_size) else {
        return;
    };
    let rows: Vec<(&str, &Summary, &FabricLoad)> = m
        .series
        .iter()
        .filter_map(|s| {
            let r = s.at(size)?;
            Some((m.scenarios[s.scenario].name.as_str(), r, r.fabric.as_ref()?))
        })
        .filter(|(_, _, f)| !f.cables.is_empty())
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(out, "## Network\n");
    let _ = writeln!(
        out,
        "Points whose flows cross the switch fabric, at {} (the swept size nearest the compare \
         size): the cable that bound each, how busy it was, how many flows the routes put on \
         it and why, against the line rate of their NICs. The flows on a cable are counted \
         from the routes the simulation ran (flows.csv's `switch_path` gives each flow's \
         switches; links.csv every cable's load).\n",
        fmt_bytes(size)
    );
    for (name, r, fabric) in rows {
        let _ = writeln!(
            out,
            "- **{}** ({}): {}",
            md_inline(name),
            display(r.path),
            point(r, fabric)
        );
    }
    let _ = writeln!(out);
}

/// The sentence for one point: its binding cable, or that the network did not bind it.
pub(super) fn point(r: &Summary, fabric: &FabricLoad) -> String {
    let link = |channel: &str| r.links.iter().find(|l| l.channel == channel);
    // A NIC port's own cable, or a leaf's port into a NIC that one flow alone fills, runs at
    // the NIC's line rate: the NIC binds there, not the network.
    let bound = r.bottleneck.channel().and_then(|name| {
        let cable = fabric.cable(name)?;
        let l = link(name)?;
        let network =
            cable.cable.is_spine() || (cable.cable == Cable::PortDown && cable.flows.len() > 1);
        network.then_some((cable, l))
    });
    if let Some((cable, l)) = bound {
        // A workload's cable can bind its bulk transfers the longest and still idle through
        // the run's latency-bound phases: its busy share is then over the whole run.
        let busy = if l.busy >= SATURATED {
            format!("{} busy", fmt_pct(l.busy * 100.0))
        } else {
            format!(
                "bound the transfers longest ({} busy over the run)",
                fmt_pct(l.busy * 100.0)
            )
        };
        return format!(
            "{} {busy}: {}; {}.",
            cable_words(cable),
            why(cable, fabric.routing),
            per_flow(r, cable, l)
        );
    }
    let busiest = (fabric.cables.iter())
        .filter(|c| c.cable.is_spine())
        .filter_map(|c| Some((c, link(&c.channel)?)))
        .max_by(|a, b| (a.1.busy.total_cmp(&b.1.busy)).then_with(|| b.0.channel.cmp(&a.0.channel)));
    let by = format!("`{}`", md_inline(&r.bottleneck.to_string()));
    match busiest {
        Some((c, l)) => format!(
            "the network did not bind it (bound by {by}); its busiest spine cable, {}, was {} \
             busy with {}.",
            cable_words(c),
            fmt_pct(l.busy * 100.0),
            count(c)
        ),
        None => format!("no flow crossed a spine (bound by {by})."),
    }
}

/// "`spine2>leaf1` (spine2 -> leaf1 downlink)", "`leaf0>spine1#1` (leaf0 -> spine1 uplink
/// #1)", "`leaf1>b0/nic0` (leaf1 -> b0/nic0 leaf port)".
fn cable_words(c: &CableLoad) -> String {
    let (to, tag) = c.to.split_once('#').unwrap_or((&c.to, ""));
    let tag = if tag.is_empty() {
        String::new()
    } else {
        format!(" #{tag}")
    };
    format!(
        "`{}` ({} -> {} {}{tag})",
        md_inline(&c.channel),
        md_inline(&c.from),
        md_inline(to),
        c.cable.word()
    )
}

/// "3 flows (1, 4, 6)", "1 flow (2)", with their QPs where a flow has several.
fn count(c: &CableLoad) -> String {
    let n = c.flows.len();
    let mut ids: Vec<String> = c.flows.iter().take(LISTED).map(u32::to_string).collect();
    if n > LISTED {
        ids.push("…".into());
    }
    let qps = if c.qps as usize != n {
        format!(", {} QPs", c.qps)
    } else {
        String::new()
    };
    format!(
        "{n} flow{} ({}{qps})",
        if n == 1 { "" } else { "s" },
        ids.join(", ")
    )
}

/// Why the routes put that many flows on the cable: more than an even spread over its
/// equal-cost cables (ECMP's hash collided, or adaptive routing placed them so), an even
/// spread of more flows than cables (oversubscription), flows into or out of one NIC port, or
/// no more flows than cables.
fn why(c: &CableLoad, routing: PathChoice) -> String {
    let n = c.flows.len() as u32;
    let what = count(c);
    if !c.cable.is_spine() {
        let way = if c.cable == Cable::PortUp {
            "out of"
        } else {
            "into"
        };
        return format!("{what} routed {way} one NIC port");
    }
    let into = c.to.split('#').next().unwrap_or(&c.to);
    let (leaf, cables, ports) = match c.cable {
        Cable::Uplink => (c.from.as_str(), "uplinks", "host ports"),
        Cable::CoreUplink => (c.from.as_str(), "core uplinks", "cables from its leaves"),
        Cable::CoreDownlink => (into, "cables from the cores", "cables from its leaves"),
        _ => (into, "cables from the spines", "host ports"),
    };
    let group = c.group.max(1);
    let even = c.group_flows.div_ceil(group);
    let spread = format!(
        "an even spread of the {} flows {} {leaf} over its {group} {cables} puts {even} on each",
        c.group_flows,
        if c.cable.is_up() { "leaving" } else { "into" },
    );
    if n > even {
        match routing {
            PathChoice::Ecmp => format!("{what} hashed onto it by ECMP, where {spread}"),
            PathChoice::Adaptive => format!(
                "{what} placed on it by adaptive routing (placed over every scenario's flows), \
                 where {spread}"
            ),
        }
    } else if c.group_flows > group {
        let ratio = if c.leaf_ports > group {
            let g = gcd(c.leaf_ports, group);
            format!(
                " ({} {ports} over {group} {cables}: {}:{} oversubscribed)",
                c.leaf_ports,
                c.leaf_ports / g,
                group / g
            )
        } else {
            String::new()
        };
        format!(
            "{what} routed over it, as evenly as can be: {} flows {} {leaf} share its {group} \
             {cables}{ratio}",
            c.group_flows,
            if c.cable.is_up() { "leaving" } else { "into" },
        )
    } else {
        format!("{what} routed over it, no more than one a cable")
    }
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a.max(1) } else { gcd(b, a % b) }
}

/// What its flows got: the cable's rate shared among them against their NICs' line rate,
/// and what they moved ("they share its 12.5 GB/s, 4.17 GB/s each, a third of their NICs'
/// 12.5 GB/s line rate; they moved 4.13 GB/s each").
fn per_flow(r: &Summary, c: &CableLoad, l: &LinkRow) -> String {
    let n = c.flows.len().max(1);
    let each = l.capacity_gbps / n as f64;
    let share = if c.line_gbps > 0.0 {
        each / c.line_gbps
    } else {
        0.0
    };
    let of_line = match n {
        _ if c.line_gbps <= 0.0 => String::new(),
        _ if (share - 1.0).abs() < 0.005 => ", their NICs' line rate".to_string(),
        _ if share > 1.0 => format!(", above their NICs' {} line rate", fmt_gbps(c.line_gbps)),
        2..=4 if (share * n as f64 - 1.0).abs() < 0.005 => format!(
            ", {} of their NICs' {} line rate",
            ["half", "a third", "a quarter"][n - 2],
            fmt_gbps(c.line_gbps)
        ),
        _ => format!(
            ", {} of their NICs' {} line rate",
            fmt_pct(share * 100.0),
            fmt_gbps(c.line_gbps)
        ),
    };
    let moved: Vec<f64> = (r.flow_rows.iter())
        .filter(|f| c.flows.binary_search(&f.flow).is_ok())
        .map(|f| f.bw_gbps)
        .collect();
    let lo = moved.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = moved.iter().copied().fold(0.0, f64::max);
    let got = if moved.is_empty() {
        String::new()
    } else if sig3(lo) == sig3(hi) {
        format!("; they moved {} each", fmt_gbps(hi))
    } else {
        format!("; they moved {} to {}", fmt_gbps(lo), fmt_gbps(hi))
    };
    if n == 1 {
        return format!(
            "its {} is {} of its NIC's {} line rate{}",
            fmt_gbps(l.capacity_gbps),
            fmt_pct(share * 100.0),
            fmt_gbps(c.line_gbps),
            got.replacen("; they moved", "; it moved", 1)
                .replace(" each", "")
        );
    }
    format!(
        "they share its {}, {} each{of_line}{got}",
        fmt_gbps(l.capacity_gbps),
        fmt_gbps(each)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bottleneck::Bottleneck;
    use crate::report::charts::testdata;
    use crate::stats::FlowRow;

    fn cable(channel: &str, kind: Cable, flows: &[u32], group: u32, group_flows: u32) -> CableLoad {
        let (from, to) = channel.split_once('>').unwrap();
        CableLoad {
            channel: channel.into(),
            cable: kind,
            from: from.into(),
            to: to.into(),
            flows: flows.to_vec(),
            qps: flows.len() as u32,
            group,
            group_flows,
            leaf_ports: 8,
            line_gbps: 12.5,
        }
    }

    /// A point of 8 flows bound by `bound` at `busy`, its flows at `bw` GB/s each.
    fn row(bound: &str, busy: f64, bw: f64) -> Summary {
        let mut r = testdata::row(("x", "PIX", 1.0, 1.0), "host", 1 << 24);
        r.flows = 8;
        r.bottleneck = Bottleneck::Channel(bound.into());
        r.links = vec![LinkRow {
            channel: bound.into(),
            bytes: 1,
            busy,
            rate_gbps: busy * 12.5,
            capacity_gbps: 12.5,
        }];
        r.flow_rows = (0..8)
            .map(|i| FlowRow {
                flow: i,
                sender: format!("a{i}"),
                receiver: format!("b{i}"),
                class: crate::topology::Affinity::Pix,
                effective_path: r.effective_path,
                lat_model_ps: 1,
                lat_mean_us: 1.0,
                bw_gbps: bw,
                bottleneck: None,
                switch_path: String::new(),
            })
            .collect();
        r
    }

    /// ECMP put 3 of the 8 flows into leaf1 on one of its 8 cables from the spines: a
    /// collision, named with the flows, their share against their NICs' line rate, and what
    /// they moved.
    #[test]
    fn an_ecmp_collision_names_the_cable_and_its_flows() {
        let fabric = FabricLoad {
            routing: PathChoice::Ecmp,
            cables: vec![cable("spine2>leaf1", Cable::Downlink, &[1, 4, 6], 8, 8)],
        };
        let text = point(&row("spine2>leaf1", 1.0, 4.13), &fabric);
        assert_eq!(
            text,
            "`spine2>leaf1` (spine2 -> leaf1 downlink) 100% busy: 3 flows (1, 4, 6) hashed \
             onto it by ECMP, where an even spread of the 8 flows into leaf1 over its 8 cables \
             from the spines puts 1 on each; they share its 12.5 GB/s, 4.17 GB/s each, a third \
             of their NICs' 12.5 GB/s line rate; they moved 4.13 GB/s each."
        );
    }

    /// 2:1: two flows on each of 4 uplinks is no collision but the oversubscription.
    #[test]
    fn an_even_spread_over_too_few_uplinks_is_oversubscription() {
        let mut c = cable("leaf0>spine1", Cable::Uplink, &[0, 5], 4, 8);
        c.from = "leaf0".into();
        let fabric = FabricLoad {
            routing: PathChoice::Adaptive,
            cables: vec![c],
        };
        let text = point(&row("leaf0>spine1", 0.99, 6.2), &fabric);
        assert!(
            text.contains(
                "2 flows (0, 5) routed over it, as evenly as can be: 8 flows leaving leaf0 \
                 share its 4 uplinks (8 host ports over 4 uplinks: 2:1 oversubscribed)"
            ),
            "{text}"
        );
        assert!(
            text.contains("half of their NICs' 12.5 GB/s line rate"),
            "{text}"
        );
    }

    /// Where a NIC port binds, the network did not; the busiest spine cable is named.
    #[test]
    fn a_nic_port_bound_point_names_the_busiest_spine_cable() {
        let fabric = FabricLoad {
            routing: PathChoice::Adaptive,
            cables: vec![cable("leaf0>spine1#1", Cable::Uplink, &[3], 8, 8)],
        };
        let mut r = row("wire:a3/nic0>leaf0", 1.0, 12.3);
        r.links.push(LinkRow {
            channel: "leaf0>spine1#1".into(),
            bytes: 1,
            busy: 0.98,
            rate_gbps: 12.2,
            capacity_gbps: 12.5,
        });
        assert_eq!(
            point(&r, &fabric),
            "the network did not bind it (bound by `wire:a3/nic0>leaf0`); its busiest spine \
             cable, `leaf0>spine1#1` (leaf0 -> spine1 uplink #1), was 98% busy with 1 flow (3)."
        );
    }

    /// Without a fabric no section; with one, a line per point at the compare size.
    #[test]
    fn the_section_lists_each_fabric_point() {
        let scenarios = [("cross-leaf", "PIX", 1.0, 1.0)];
        let info = testdata::info(&scenarios);
        let mut rows = testdata::rows(&scenarios, &["host"], &[1 << 24]);
        let mut out = String::new();
        network(&mut out, 1 << 24, &Model::new(&info, &rows));
        assert!(out.is_empty(), "{out}");
        let bound = row("spine2>leaf1", 1.0, 4.13);
        rows[0].bottleneck = bound.bottleneck.clone();
        rows[0].links = bound.links.clone();
        rows[0].flow_rows = bound.flow_rows.clone();
        rows[0].fabric = Some(FabricLoad {
            routing: PathChoice::Ecmp,
            cables: vec![cable("spine2>leaf1", Cable::Downlink, &[1, 4, 6], 8, 8)],
        });
        network(&mut out, 1 << 24, &Model::new(&info, &rows));
        assert!(out.starts_with("## Network\n"), "{out}");
        assert!(
            out.contains("- **cross-leaf** (host): `spine2>leaf1` (spine2 -> leaf1 downlink) 100% busy: 3 flows"),
            "{out}"
        );
    }
}

//! Scenarios: the flows that run together, each a sender and a receiver endpoint resolved to a
//! host, a NIC, a GPU and the socket of its host buffers.
//!
//! A scenario says its flows in one of three forms: one pair (`sender`, `receiver`, optional
//! `bidirectional`), a list (`flows = [{ sender, receiver, bidirectional }, ...]`), or every GPU
//! of one host with its nearest NIC to the GPU of the same index on another
//! (`all_gpus = { sender = "host", receiver = "host", bidirectional }`). A bidirectional flow is
//! two flows, one each way.

use super::convert::{Cx, R};
use super::limits::MAX_COUNT;
use super::raw::{RawAllGpus, RawEndpoint, RawFlow, RawScenario};
use super::{
    BounceKind, BufferPlace, Endpoint, FlowDeps, FlowSpec, Op, PathKind, ScenarioSpec, Workload,
};
use crate::topology::spec::{HostSpec, MachineSpec, NetworkSpec};

pub(super) fn convert(
    cx: &Cx,
    i: usize,
    s: &RawScenario,
    hosts: &[HostSpec],
    needs_gpu: bool,
) -> R<ScenarioSpec> {
    let key = format!("scenarios[{i}]");
    let forms = [
        s.sender.is_some() || s.receiver.is_some(),
        s.flows.is_some(),
        s.all_gpus.is_some(),
        s.collective.is_some(),
    ];
    let one_form = "exactly one of: sender and receiver; flows = [...]; all_gpus = { sender, \
                    receiver }; collective = { kind, ... }";
    match forms.iter().filter(|f| **f).count() {
        0 => return Err(cx.err(&key, one_form, "none of them")),
        1 => {}
        _ => return Err(cx.err(&key, one_form, "more than one")),
    }
    let mut flows = Vec::new();
    let mut workload = None;
    if forms[0] {
        let (Some(snd), Some(rcv)) = (&s.sender, &s.receiver) else {
            let missing = if s.sender.is_none() {
                "sender"
            } else {
                "receiver"
            };
            return Err(cx.err(
                &format!("{key}.{missing}"),
                "a value (a flow has a sender and a receiver)",
                "nothing (the key is missing)",
            ));
        };
        let both = s.bidirectional.unwrap_or(false);
        pair(cx, &key, (snd, rcv), both, hosts, needs_gpu, &mut flows)?;
    } else if let Some(list) = &s.flows {
        if s.bidirectional.is_some() {
            return Err(cx.err(
                &format!("{key}.bidirectional"),
                "bidirectional on each flow of the list",
                "bidirectional on the scenario",
            ));
        }
        if list.is_empty() {
            return Err(cx.err(
                &format!("{key}.flows"),
                "at least one flow",
                "an empty list",
            ));
        }
        for (j, f) in list.iter().enumerate() {
            let k = format!("{key}.flows[{j}]");
            let both = f.bidirectional.unwrap_or(false);
            pair(
                cx,
                &k,
                (&f.sender, &f.receiver),
                both,
                hosts,
                needs_gpu,
                &mut flows,
            )?;
        }
        workload = workload_of(cx, &key, list)?;
        for (j, d) in workload.iter().flat_map(|w| w.flows.iter().enumerate()) {
            if d.reduce && flows[j].sender.gpu.is_none() {
                return Err(cx.err(
                    &format!("{key}.flows[{j}].reduce"),
                    "a sender with a GPU buffer (the reduction runs on the sending GPU)",
                    "reduce = true on a host-memory sender",
                ));
            }
        }
    } else if let Some(all) = &s.all_gpus {
        if s.bidirectional.is_some() {
            return Err(cx.err(
                &format!("{key}.bidirectional"),
                "bidirectional inside all_gpus",
                "bidirectional on the scenario",
            ));
        }
        all_gpus(cx, &format!("{key}.all_gpus"), all, hosts, &mut flows)?;
    } else if let Some(c) = &s.collective {
        if s.bidirectional.is_some() {
            return Err(cx.err(
                &format!("{key}.bidirectional"),
                "no bidirectional on a collective (its rings say which way data moves)",
                "bidirectional on the scenario",
            ));
        }
        let (collective, deps) =
            super::collective::convert(cx, &format!("{key}.collective"), c, hosts, &mut flows)?;
        workload = Some(Workload {
            flows: deps,
            collective: Some(collective),
        });
    }
    // Each flow's QP number is its index in the scenario.
    for (i, f) in flows.iter_mut().enumerate() {
        f.qp = i as u32;
    }
    Ok(ScenarioSpec {
        name: s.name.clone(),
        flows,
        workload,
    })
}

/// The dependencies of a flow list, where any flow says `after`, `reduce` or `messages` (else
/// None: independent flows). Names are unique, `after` names flows of the list, and every cycle
/// of dependencies has a lag of at least 1 (a cycle of lag 0 would wait for itself).
fn workload_of(cx: &Cx, key: &str, list: &[RawFlow]) -> R<Option<Workload>> {
    let dependent = |f: &RawFlow| f.after.is_some() || f.reduce.is_some() || f.messages.is_some();
    if !list.iter().any(dependent) {
        return Ok(None);
    }
    let names: Vec<String> = list
        .iter()
        .enumerate()
        .map(|(j, f)| f.name.clone().unwrap_or_else(|| format!("f{j}")))
        .collect();
    // Each name's flow (the first with it), found in constant time: a generated collective
    // lists 10^5 flows, and a scan per name or per gate would cost their square.
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (j, f) in list.iter().enumerate() {
        let k = format!("{key}.flows[{j}]");
        if f.bidirectional.is_some() {
            return Err(cx.err(
                &format!("{k}.bidirectional"),
                "one flow per direction in a workload with dependencies (name each and say what \
                 gates it)",
                "bidirectional",
            ));
        }
        if *index.entry(names[j].as_str()).or_insert(j) != j {
            return Err(cx.err(
                &format!("{k}.name"),
                "a name no other flow of the scenario has",
                format!("{:?} (also an earlier flow's)", names[j]),
            ));
        }
        if let Some(m) = f.messages.filter(|&m| m == 0 || m > MAX_COUNT) {
            return Err(cx.err(
                &format!("{k}.messages"),
                format!("at least 1 message and at most {MAX_COUNT}"),
                m.to_string(),
            ));
        }
    }
    let mut flows = Vec::with_capacity(list.len());
    for (j, f) in list.iter().enumerate() {
        let mut after = Vec::new();
        for (a, gate) in f.after.iter().flatten().enumerate() {
            let Some(&on) = index.get(gate.flow.as_str()) else {
                let shown: Vec<&str> = names.iter().take(8).map(String::as_str).collect();
                let more = if names.len() > 8 { ", ..." } else { "" };
                return Err(cx.err(
                    &format!("{key}.flows[{j}].after[{a}].flow"),
                    format!(
                        "the name of a flow of this scenario ({}{more})",
                        shown.join(", ")
                    ),
                    format!("{:?}", gate.flow),
                ));
            };
            after.push((on, gate.lag.unwrap_or(0)));
        }
        flows.push(FlowDeps {
            name: names[j].clone(),
            after,
            reduce: f.reduce.unwrap_or(false),
            messages: f.messages,
            pxn_sender: None,
        });
    }
    if let Some(cycle) = zero_lag_cycle(&flows) {
        let names: Vec<&str> = cycle.iter().map(|&i| flows[i].name.as_str()).collect();
        return Err(cx.err(
            &format!("{key}.flows"),
            "no cycle of dependencies with lag 0 (each waits for the other's same message: \
             none could start; a ring needs a lag of at least 1 somewhere)",
            format!("the cycle {}", names.join(" waits for ")),
        ));
    }
    Ok(Some(Workload {
        flows,
        collective: None,
    }))
}

/// A cycle among the lag-0 dependencies (flow indices, the first repeated at the end), if any:
/// an iterative depth-first search, linear in flows and dependencies.
pub(crate) fn zero_lag_cycle(flows: &[FlowDeps]) -> Option<Vec<usize>> {
    // 0: unseen, 1: on the current path, 2: done.
    let mut state = vec![0u8; flows.len()];
    let edges = |i: usize| {
        flows[i]
            .after
            .iter()
            .filter(|g| g.1 == 0)
            .map(|g| g.0)
            .collect::<Vec<_>>()
    };
    for root in 0..flows.len() {
        if state[root] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, Vec<usize>)> = vec![(root, edges(root))];
        state[root] = 1;
        while let Some((node, next)) = stack.last_mut() {
            let node = *node;
            match next.pop() {
                Some(n) if state[n] == 1 => {
                    let from = stack.iter().position(|s| s.0 == n).unwrap_or(0);
                    let mut cycle: Vec<usize> = stack[from..].iter().map(|s| s.0).collect();
                    cycle.push(n);
                    return Some(cycle);
                }
                Some(n) if state[n] == 0 => {
                    state[n] = 1;
                    stack.push((n, edges(n)));
                }
                Some(_) => {}
                None => {
                    state[node] = 2;
                    stack.pop();
                }
            }
        }
    }
    None
}

/// One sender/receiver pair, both ways when `both`.
fn pair(
    cx: &Cx,
    key: &str,
    (snd, rcv): (&RawEndpoint, &RawEndpoint),
    both: bool,
    hosts: &[HostSpec],
    needs_gpu: bool,
    flows: &mut Vec<FlowSpec>,
) -> R<()> {
    // A flow inside one host is a copy between two of its GPUs (cudaMemcpyPeer).
    let intra = snd.host == rcv.host;
    let sender = endpoint(
        cx,
        hosts,
        snd,
        &format!("{key}.sender"),
        needs_gpu || intra,
        intra,
    )?;
    let receiver = endpoint(
        cx,
        hosts,
        rcv,
        &format!("{key}.receiver"),
        needs_gpu || intra,
        intra,
    )?;
    if intra {
        for (e, side) in [(&sender, "sender"), (&receiver, "receiver")] {
            if e.gpu.is_none() {
                return Err(cx.err(
                    &format!("{key}.{side}.buffer"),
                    "GPU memory on both sides of a flow inside one host (a copy between two \
                     of its GPUs; a flow with host memory crosses the network to another host)",
                    "buffer = \"host\"",
                ));
            }
        }
        if sender.gpu == receiver.gpu {
            return Err(cx.err(
                &format!("{key}.receiver.gpu"),
                "another GPU than the sender's (a flow inside one host copies between two GPUs)",
                format!("{:?}", rcv.gpu.as_deref().unwrap_or_default()),
            ));
        }
    }
    flows.push(FlowSpec {
        sender: sender.clone(),
        receiver: receiver.clone(),
        qp: 0,
    });
    if both {
        flows.push(FlowSpec {
            sender: receiver,
            receiver: sender,
            qp: 0,
        });
    }
    Ok(())
}

/// Every GPU of the sender host with its nearest NIC, to the GPU of the same index on the
/// receiver host with its nearest NIC.
fn all_gpus(
    cx: &Cx,
    key: &str,
    all: &RawAllGpus,
    hosts: &[HostSpec],
    flows: &mut Vec<FlowSpec>,
) -> R<()> {
    let host = |name: &str, k: &str| -> R<usize> {
        hosts.iter().position(|h| h.name == name).ok_or_else(|| {
            let names: Vec<&str> = hosts.iter().map(|h| h.name.as_str()).collect();
            cx.err(
                &format!("{key}.{k}"),
                format!("one of the [[hosts]] ({})", names.join(", ")),
                format!("{name:?}"),
            )
        })
    };
    let (sh, rh) = (
        host(&all.sender, "sender")?,
        host(&all.receiver, "receiver")?,
    );
    if sh == rh {
        return Err(cx.err(
            &format!("{key}.receiver"),
            "a host other than the sender's",
            format!("{:?}", all.receiver),
        ));
    }
    let (sm, rm) = (&hosts[sh].machine, &hosts[rh].machine);
    for (h, m, k) in [(sh, sm, "sender"), (rh, rm, "receiver")] {
        if m.gpus.is_empty() || m.nics.is_empty() {
            return Err(cx.err(
                &format!("{key}.{k}"),
                "a host whose machine has GPUs and NICs",
                format!("{:?} (machine {:?})", hosts[h].name, m.name),
            ));
        }
    }
    if rm.gpus.len() < sm.gpus.len() {
        return Err(cx.err(
            &format!("{key}.receiver"),
            format!("a host with at least the sender's {} GPUs", sm.gpus.len()),
            format!("{:?} with {}", all.receiver, rm.gpus.len()),
        ));
    }
    let s_near = crate::topology::host_graph(&hosts[sh]).nearest_nics();
    let r_near = crate::topology::host_graph(&hosts[rh]).nearest_nics();
    for g in 0..sm.gpus.len() {
        let sender = gpu_endpoint((sh, sm), g, s_near[g]);
        let receiver = gpu_endpoint((rh, rm), g, r_near[g]);
        flows.push(FlowSpec {
            sender: sender.clone(),
            receiver: receiver.clone(),
            qp: 0,
        });
        if all.bidirectional.unwrap_or(false) {
            flows.push(FlowSpec {
                sender: receiver,
                receiver: sender,
                qp: 0,
            });
        }
    }
    Ok(())
}

/// GPU `g` of host `h` (machine `m`) through NIC `nic`, its host buffers on the NIC's socket
/// (the socket of the first NIC where the machine has none: a flow inside one host crosses no
/// NIC).
pub(super) fn gpu_endpoint((h, m): (usize, &MachineSpec), g: usize, nic: usize) -> Endpoint {
    Endpoint {
        host: h,
        nic,
        gpu: Some(g),
        memory_socket: m.nics.get(nic).map_or(0, |n| socket_of(m, &n.name)),
        pageable_bounce: false,
    }
}

/// A leaf-spine fabric's numbers must add up for the hosts it carries: every leaf's host
/// ports and uplinks fit its radix, the oversubscription divides its host ports into a
/// whole number of uplinks, at least one (the generator's rule, `leaf_spine::uplinks_for`),
/// and the cables the busiest spine takes fit the spines' radix.
pub(super) fn check_fabric(cx: &Cx, hosts: &[HostSpec], network: &NetworkSpec) -> R<()> {
    use crate::topology::spec::Fabric;
    match network.fabric {
        Fabric::SingleSwitch => Ok(()),
        Fabric::RailOptimized => check_rails(cx, hosts, network),
        Fabric::FatTree => check_fat_tree(cx, hosts, network),
        Fabric::LeafSpine => {
            let uplinks = check_leaves(cx, hosts, network)?;
            let spines = network.leaf_spine.spines.max(1) as usize;
            check_spine_ports(cx, network, &uplinks, spines, "")
        }
    }
}

/// The leaves of a leaf-spine fabric or a fat tree (`hosts_per_leaf` hosts each, in config
/// order): the oversubscription divides each leaf's host ports into a whole number of
/// uplinks, at least one, and its host ports and uplinks fit `leaf_radix`. Answers each
/// leaf's uplinks.
fn check_leaves(cx: &Cx, hosts: &[HostSpec], network: &NetworkSpec) -> R<Vec<usize>> {
    let ls = &network.leaf_spine;
    let (num, den) = ls.oversubscription;
    let per_leaf = ls.hosts_per_leaf.max(1) as usize;
    let mut uplinks_per_leaf = Vec::new();
    for (leaf, on) in hosts.chunks(per_leaf).enumerate() {
        let ports: usize = on.iter().map(|h| h.machine.nics.len()).sum();
        let scaled = ports * den as usize;
        if scaled < num as usize || !scaled.is_multiple_of(num as usize) {
            return Err(cx.err(
                "network.oversubscription",
                format!(
                    "a ratio that divides leaf {leaf}'s {ports} host ports (hosts {}) into a \
                     whole number of uplinks, at least one",
                    names(on)
                ),
                format!("{num}:{den}"),
            ));
        }
        let uplinks = scaled / num as usize;
        if ports + uplinks > ls.leaf_radix as usize {
            return Err(cx.err(
                "network.leaf_radix",
                format!(
                    "at least leaf {leaf}'s {ports} host ports (hosts {}) + {uplinks} uplinks \
                     = {} ports",
                    names(on),
                    ports + uplinks
                ),
                ls.leaf_radix.to_string(),
            ));
        }
        uplinks_per_leaf.push(uplinks);
    }
    Ok(uplinks_per_leaf)
}

/// A fat tree's numbers must add up: its leaves as a leaf-spine's ([`check_leaves`]); the
/// leaves fill `pods` whole pods; every pod spine takes at least one cable from its leaves;
/// `core_oversubscription` divides a spine's cables from its leaves into a whole number of
/// uplinks to the cores, at least one; a spine's cables (from its leaves and to the cores) fit
/// `spine_radix`; every core takes at least one cable, and no more than `core_radix` (by
/// default the spines'). The cabling is the generator's ([`crate::topology::fat_tree`]).
fn check_fat_tree(cx: &Cx, hosts: &[HostSpec], network: &NetworkSpec) -> R<()> {
    use crate::topology::fat_tree::{cables_to_spine, core_of};
    let uplinks = check_leaves(cx, hosts, network)?;
    let (ls, ft) = (&network.leaf_spine, &network.fat_tree);
    let leaves = uplinks.len();
    let pods = ft.pods.max(1) as usize;
    if leaves == 0 {
        return Ok(());
    }
    if !leaves.is_multiple_of(pods) {
        return Err(cx.err(
            "network.pods",
            format!(
                "a number of pods that divides the study's {leaves} leaves ({} hosts, \
                 hosts_per_leaf = {}) into whole pods",
                hosts.len(),
                ls.hosts_per_leaf
            ),
            pods.to_string(),
        ));
    }
    let per_pod_leaves = leaves / pods;
    let per_pod = ft.spines_per_pod.max(1) as usize;
    let cores = ft.cores.max(1) as usize;
    let (num, den) = ft.core_oversubscription;
    let spine_radix = ls.spine_radix();
    let mut per_core = vec![0usize; cores];
    for s in 0..pods.saturating_mul(per_pod) {
        let (p, j) = (s / per_pod, s % per_pod);
        let pod = &uplinks[p * per_pod_leaves..(p + 1) * per_pod_leaves];
        let down: usize = pod.iter().map(|&u| cables_to_spine(u, j, per_pod)).sum();
        if down == 0 {
            return Err(cx.err(
                "network.spines_per_pod",
                format!(
                    "at most {} spines a pod (a leaf's uplinks go to its pod's spines in turn, \
                     and pod{p}.spine{j} would take none)",
                    pod.iter().copied().max().unwrap_or(0)
                ),
                per_pod.to_string(),
            ));
        }
        let scaled = down.saturating_mul(den as usize);
        if scaled < num as usize || !scaled.is_multiple_of(num as usize) {
            return Err(cx.err(
                "network.core_oversubscription",
                format!(
                    "a ratio that divides pod{p}.spine{j}'s {down} cables from its leaves into a \
                     whole number of uplinks to the cores, at least one"
                ),
                format!("{num}:{den}"),
            ));
        }
        let up = scaled / num as usize;
        if down.saturating_add(up) > spine_radix as usize {
            return Err(cx.err(
                "network.spine_radix",
                format!(
                    "at least pod{p}.spine{j}'s {down} cables from its leaves + {up} to the \
                     cores = {} ports{}",
                    down.saturating_add(up),
                    if ls.spine_radix.is_none() {
                        "; spine_radix defaults to leaf_radix"
                    } else {
                        ""
                    }
                ),
                spine_radix.to_string(),
            ));
        }
        for k in 0..up {
            per_core[core_of(j, k, per_pod, cores)] += 1;
        }
    }
    if let Some(c) = per_core.iter().position(|&n| n == 0) {
        let used = per_core.iter().filter(|&&n| n > 0).count();
        return Err(cx.err(
            "network.cores",
            format!(
                "at most {used} cores (the pod spines' uplinks reach {used}: pod spine j's \
                 uplink k goes to core (j x ceil(cores / spines_per_pod) + k) mod cores, and \
                 core{c} would take no cable)"
            ),
            cores.to_string(),
        ));
    }
    let core_radix = ft.core_radix.unwrap_or(spine_radix) as usize;
    let (c, most) = (per_core.iter().enumerate())
        .max_by_key(|&(c, &n)| (n, std::cmp::Reverse(c)))
        .map_or((0, 0), |(c, &n)| (c, n));
    if most > core_radix {
        return Err(cx.err(
            "network.core_radix",
            format!(
                "at least core{c}'s {most} ports (cables from the {pods} pods' spines){}",
                if ft.core_radix.is_none() {
                    "; core_radix defaults to the spines' radix"
                } else {
                    ""
                }
            ),
            core_radix.to_string(),
        ));
    }
    Ok(())
}

/// The cables the busiest spine takes must fit `spine_radix`: uplink `k` of a leaf goes to
/// spine `k mod spines` (the generator's rule), so spine 0 takes `ceil(u / spines)` of each
/// leaf's `u` uplinks. `what` adds to the message what the leaves are (" rail").
fn check_spine_ports(
    cx: &Cx,
    network: &NetworkSpec,
    uplinks_per_leaf: &[usize],
    spines: usize,
    what: &str,
) -> R<()> {
    let ls = &network.leaf_spine;
    let ports: usize = uplinks_per_leaf.iter().map(|u| u.div_ceil(spines)).sum();
    let radix = ls.spine_radix();
    if ports > radix as usize {
        let most = uplinks_per_leaf.iter().max().copied().unwrap_or(0);
        return Err(cx.err(
            "network.spine_radix",
            format!(
                "at least spine0's {ports} ports (up to {} cables from each of the {}{what} \
                 leaves{})",
                most.div_ceil(spines),
                uplinks_per_leaf.len(),
                if ls.spine_radix.is_none() {
                    "; spine_radix defaults to leaf_radix"
                } else {
                    ""
                }
            ),
            radix.to_string(),
        ));
    }
    Ok(())
}

/// A rail-optimized fabric's numbers must add up: every host has the same number of NICs (one
/// rail each), the hosts fill `units` units of `hosts_per_unit`, a rail leaf's host ports and
/// uplinks fit its radix, the oversubscription divides its host ports into a whole number of
/// uplinks, and the cables each spine takes from every rail leaf fit `spine_radix` (by
/// default the leaves' radix: one switch model throughout, as the DGX SuperPOD's QM9700
/// leaves and spines).
fn check_rails(cx: &Cx, hosts: &[HostSpec], network: &NetworkSpec) -> R<()> {
    let rail = &network.rail;
    let per_unit = rail.hosts_per_unit.max(1) as usize;
    let Some(first) = hosts.first() else {
        return Ok(());
    };
    let rails = first.machine.nics.len();
    if let Some((i, h)) = (hosts.iter().enumerate()).find(|(_, h)| h.machine.nics.len() != rails) {
        return Err(cx.err(
            &format!("hosts[{i}].machine"),
            format!(
                "a machine with {rails} NICs, as host {} has (a rail-optimized fabric has one \
                 rail per NIC, the same on every host)",
                first.name
            ),
            format!(
                "host {} (machine {:?}) with {} NICs",
                h.name,
                h.machine.name,
                h.machine.nics.len()
            ),
        ));
    }
    if !hosts.len().is_multiple_of(per_unit) {
        return Err(cx.err(
            "network.hosts_per_unit",
            format!(
                "a number of hosts per unit that divides the study's {} hosts into whole \
                 scalable units",
                hosts.len()
            ),
            per_unit.to_string(),
        ));
    }
    let units = hosts.len() / per_unit;
    if units != rail.units as usize {
        return Err(cx.err(
            "network.units",
            format!(
                "{units} (the study's {} hosts over hosts_per_unit = {per_unit})",
                hosts.len()
            ),
            rail.units.to_string(),
        ));
    }
    let ls = &network.leaf_spine;
    let (num, den) = ls.oversubscription;
    // A rail leaf's host ports: one NIC of each host of its unit.
    let scaled = per_unit.saturating_mul(den as usize);
    if scaled < num as usize || !scaled.is_multiple_of(num as usize) {
        return Err(cx.err(
            "network.oversubscription",
            format!(
                "a ratio that divides a rail leaf's {per_unit} host ports (one per host of its \
                 unit) into a whole number of uplinks, at least one"
            ),
            format!("{num}:{den}"),
        ));
    }
    let uplinks = scaled / num as usize;
    let radix = ls.leaf_radix as usize;
    if per_unit.saturating_add(uplinks) > radix {
        return Err(cx.err(
            "network.leaf_radix",
            format!(
                "at least a rail leaf's {per_unit} host ports + {uplinks} uplinks = {} ports",
                per_unit.saturating_add(uplinks)
            ),
            ls.leaf_radix.to_string(),
        ));
    }
    let spines = units.saturating_mul(rail.spines_per_unit.max(1) as usize);
    let leaves = units.saturating_mul(rails);
    check_spine_ports(cx, network, &vec![uplinks; leaves], spines, " rail")
}

/// The names of `hosts`, the first and last of a long list.
fn names(hosts: &[HostSpec]) -> String {
    match hosts {
        [] => String::new(),
        [one] => one.name.clone(),
        [first, .., last] => format!("{}..{}", first.name, last.name),
    }
}

/// Without switches (`switch_hops = 0`) NIC ports are cabled back to back: each port can talk to
/// one peer only.
pub(super) fn check_cables(
    cx: &Cx,
    scenarios: &[ScenarioSpec],
    hosts: &[HostSpec],
    network: &NetworkSpec,
) -> R<()> {
    if network.switch_hops > 0 {
        return Ok(());
    }
    let mut peer: Vec<((usize, usize), (usize, usize))> = Vec::new();
    let name =
        |(h, n): (usize, usize)| format!("{}/{}", hosts[h].name, hosts[h].machine.nics[n].name);
    for sc in scenarios {
        for f in sc.flows.iter().filter(|f| !f.is_intra()) {
            let (a, z) = (
                (f.sender.host, f.sender.nic),
                (f.receiver.host, f.receiver.nic),
            );
            for (x, y) in [(a, z), (z, a)] {
                match peer.iter().find(|p| p.0 == x) {
                    Some(p) if p.1 != y => {
                        return Err(cx.err(
                            "network.switch_hops",
                            format!(
                                "at least one switch: with switch_hops = 0 each NIC port is \
                                 cabled to one peer, but {} talks to {} and {}",
                                name(x),
                                name(p.1),
                                name(y)
                            ),
                            "0",
                        ));
                    }
                    Some(_) => {}
                    None => peer.push((x, y)),
                }
            }
        }
    }
    Ok(())
}

pub(super) fn endpoint(
    cx: &Cx,
    hosts: &[HostSpec],
    e: &RawEndpoint,
    key: &str,
    needs_gpu: bool,
    intra: bool,
) -> R<Endpoint> {
    let names: Vec<&str> = hosts.iter().map(|h| h.name.as_str()).collect();
    let host = hosts.iter().position(|h| h.name == e.host).ok_or_else(|| {
        cx.err(
            &format!("{key}.host"),
            format!("one of the [[hosts]] ({})", names.join(", ")),
            format!("{:?}", e.host),
        )
    })?;
    let m = &hosts[host].machine;
    let list = |v: Vec<&str>| {
        if v.is_empty() {
            "none defined".to_string()
        } else {
            v.join(", ")
        }
    };
    let nics = || list(m.nics.iter().map(|n| n.name.as_str()).collect());
    let nic = match &e.nic {
        Some(name) => m.nics.iter().position(|n| &n.name == name).ok_or_else(|| {
            cx.err(
                &format!("{key}.nic"),
                format!("a NIC of machine {:?} ({})", m.name, nics()),
                format!("{name:?}"),
            )
        })?,
        // Inside one host no NIC takes part: the GPU's nearest stands in (its socket drives).
        None if intra => {
            let g = e
                .gpu
                .as_ref()
                .and_then(|g| m.gpus.iter().position(|x| &x.name == g));
            g.map_or(0, |g| {
                crate::topology::host_graph(&hosts[host]).nearest_nics()[g]
            })
        }
        None => {
            return Err(cx.err(
                &format!("{key}.nic"),
                format!(
                    "a NIC of machine {:?} ({}): a flow between hosts crosses the network",
                    m.name,
                    nics()
                ),
                "nothing (the key is missing)",
            ));
        }
    };
    let host_buffer = e.buffer == Some(BufferPlace::Host);
    if e.buffer == Some(BufferPlace::Gpu) && e.gpu.is_none() {
        return Err(cx.err(
            &format!("{key}.gpu"),
            "a GPU for buffer = \"gpu\"",
            "no gpu key",
        ));
    }
    let gpu = match &e.gpu {
        // A host buffer: the side moves host memory on every path.
        _ if host_buffer => None,
        Some(g) => Some(m.gpus.iter().position(|x| &x.name == g).ok_or_else(|| {
            cx.err(
                &format!("{key}.gpu"),
                format!(
                    "a GPU of machine {:?} ({})",
                    m.name,
                    list(m.gpus.iter().map(|n| n.name.as_str()).collect())
                ),
                format!("{g:?}"),
            )
        })?),
        None if needs_gpu => {
            return Err(cx.err(
                &format!("{key}.gpu"),
                "a GPU (the sweep has a path through GPU memory), or buffer = \"host\"",
                "no gpu key",
            ));
        }
        None => None,
    };
    // Default: host buffers on the NIC's socket.
    let nic_socket = socket_of(m, &m.nics[nic].name);
    let memory_socket = match &e.memory {
        Some(s) => m.sockets.iter().position(|x| &x.name == s).ok_or_else(|| {
            cx.err(
                &format!("{key}.memory"),
                format!("a socket of machine {:?}", m.name),
                format!("{s:?}"),
            )
        })?,
        None => nic_socket,
    };
    let pageable_bounce = match e.bounce {
        None | Some(BounceKind::Pinned) => false,
        Some(BounceKind::Pageable) if gpu.is_some() => true,
        Some(BounceKind::Pageable) => {
            return Err(cx.err(
                &format!("{key}.bounce"),
                "a side with GPU memory for bounce = \"pageable\" (a host-memory side stages \
                 nothing; its buffer is pinned by its registration)",
                "\"pageable\" on a host-memory side",
            ));
        }
    };
    Ok(Endpoint {
        host,
        nic,
        gpu,
        memory_socket,
        pageable_bounce,
    })
}

/// The socket a device hangs under (validated tree).
pub(super) fn socket_of(m: &MachineSpec, device: &str) -> usize {
    let mut cur = device.to_string();
    while let Some(l) = m.links.iter().find(|l| l.down == cur) {
        cur = l.up.clone();
    }
    let rc = m
        .root_complexes
        .iter()
        .find(|r| r.name == cur)
        .expect("validated chain");
    m.sockets
        .iter()
        .position(|s| s.name == rc.socket)
        .expect("validated socket")
}

/// The paths a flow inside one host runs: a peer copy (`gpudirect`, and `auto` as CUDA does it:
/// peer access where the GPUs have it) or a copy staged through host memory (`staged`).
pub const INTRA_PATHS: [PathKind; 3] = [PathKind::Staged, PathKind::GpuDirect, PathKind::Auto];

/// The operations a flow inside one host runs: the source writing into its peer (`write_imm`,
/// `write`) or the destination reading it (`read`); no two-sided `send`.
pub const INTRA_OPS: [Op; 3] = [Op::WriteImm, Op::Write, Op::Read];

/// [`INTRA_PATHS`] as a reader sees them: "staged, gpudirect, auto".
pub fn intra_path_words() -> String {
    let words: Vec<&str> = INTRA_PATHS.iter().map(|p| p.name()).collect();
    words.join(", ")
}

/// Whether the scenario was generated from `collective = {...}`.
fn is_collective(s: &ScenarioSpec) -> bool {
    s.workload.as_ref().is_some_and(|w| w.collective.is_some())
}

/// The paths a collective's edges between nodes run: NCCL's net transport with GPUDirect
/// (`gpudirect`), as NCCL chooses per GPU-NIC pair (`auto`, PXN where it applies), PXN, or
/// NCCL's host path with GPUDirect off (`nccl_host`).
pub const COLLECTIVE_PATHS: [PathKind; 4] = [
    PathKind::GpuDirect,
    PathKind::Auto,
    PathKind::Pxn,
    PathKind::NcclHost,
];

/// A collective runs NCCL's transports: the sweep may ask it only for the paths NCCL has, and
/// for RDMA Write with Immediate (what NCCL's IB transport posts).
fn check_collectives(cx: &Cx, scenarios: &[ScenarioSpec], paths: &[PathKind], ops: &[Op]) -> R<()> {
    let Some((i, sc)) = scenarios.iter().enumerate().find(|(_, s)| is_collective(s)) else {
        return Ok(());
    };
    let what = format!("scenario {:?} (scenarios[{i}]) is a collective", sc.name);
    if let Some(p) = paths.iter().find(|p| !COLLECTIVE_PATHS.contains(p)) {
        let words: Vec<&str> = COLLECTIVE_PATHS.iter().map(|p| p.name()).collect();
        return Err(cx.err(
            "sweep.paths",
            format!(
                "paths NCCL's transports have ({}; NCCL never stages through cudaMemcpy): \
                 {what}",
                words.join(", ")
            ),
            p.name(),
        ));
    }
    if let Some(o) = ops.iter().find(|&&o| o != Op::WriteImm) {
        return Err(cx.err(
            "sweep.ops",
            format!("write_imm (NCCL's IB transport posts RDMA Write with Immediate): {what}"),
            o.name(),
        ));
    }
    Ok(())
}

/// A flow inside one host is a cudaMemcpyPeer: the sweep may ask it only for the paths and
/// operations a copy has (writes into the peer, or the destination reading it).
pub(super) fn check_intra(
    cx: &Cx,
    scenarios: &[ScenarioSpec],
    paths: &[PathKind],
    ops: &[Op],
) -> R<()> {
    check_collectives(cx, scenarios, paths, ops)?;
    let Some((i, sc)) = scenarios
        .iter()
        .enumerate()
        .filter(|(_, s)| !is_collective(s))
        .find(|(_, s)| s.flows.iter().any(FlowSpec::is_intra))
    else {
        return Ok(());
    };
    let inside = format!(
        "scenario {:?} (scenarios[{i}]) has a flow inside one host, a copy between two GPUs",
        sc.name
    );
    if let Some(p) = paths.iter().find(|p| !INTRA_PATHS.contains(p)) {
        return Err(cx.err(
            "sweep.paths",
            format!(
                "paths a copy between two GPUs has ({}): {inside}",
                intra_path_words()
            ),
            p.name(),
        ));
    }
    if let Some(o) = ops.iter().find(|o| !INTRA_OPS.contains(o)) {
        return Err(cx.err(
            "sweep.ops",
            format!(
                "operations a copy between two GPUs has (write_imm or write: the source writes \
                 into its peer; read: the destination reads it): {inside}"
            ),
            o.name(),
        ));
    }
    Ok(())
}

//! Hop bookkeeping: which channels a message's trains crossed, and how many bytes.

use std::collections::{BTreeSet, HashMap};

use super::*;
use crate::plan::StepId;
use crate::topology::ChannelId;

/// The hops of one message, by the stage of the step they belong to and what they are.
pub(super) struct Hops<'a> {
    pub(super) rec: &'a Recorder,
    pub(super) topo: &'a Topology,
    pub(super) plan: &'a crate::plan::Plan,
    pub(super) msg: u32,
    /// The steps walked (a pipelined message's first chunk), all when None.
    pub(super) steps: Option<std::ops::Range<StepId>>,
}

impl<'a> Hops<'a> {
    /// Hops of movement `what` of steps reporting as `stage` (None: steps off the one-way
    /// path, such as the ACK).
    pub(super) fn of(&self, stage: Option<Stage>, what: Movement) -> Vec<&'a Hop> {
        self.rec
            .hops
            .iter()
            .filter(|h| h.msg == self.msg && h.what == what && self.plan.stage(h.step) == stage)
            .filter(|h| self.steps.as_ref().is_none_or(|r| r.contains(&h.step)))
            .collect()
    }

    /// Hops of `what` on channels of host `host` (None: the network).
    pub(super) fn of_host(
        &self,
        stage: Option<Stage>,
        what: Movement,
        host: Option<usize>,
    ) -> Vec<&'a Hop> {
        self.of(stage, what)
            .into_iter()
            .filter(|h| self.host_of(h.channel) == host)
            .collect()
    }

    pub(super) fn host_of(&self, ch: ChannelId) -> Option<usize> {
        self.topo.channels.get(ch.index()).and_then(|c| c.host)
    }

    /// The channel's name without its host prefix ("node-a/pcie:sw0>nic0" -> "pcie:sw0>nic0").
    pub(super) fn short(&self, ch: ChannelId) -> String {
        short_name(self.topo, self.rec, ch.0)
    }

    /// A route as the nodes it passes: links "pcie:a>b" give a and b; switches, root
    /// complexes and memories give themselves; repeats collapse.
    pub(super) fn nodes(&self, hops: &[&Hop]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut push = |n: &str| {
            if out.last().map(String::as_str) != Some(n) {
                out.push(n.to_string());
            }
        };
        for h in hops {
            let name = self.short(h.channel);
            let base = name
                .strip_prefix("pcie:")
                .or_else(|| name.strip_prefix("upi:"))
                .or_else(|| name.strip_prefix("nvlink:"))
                .or_else(|| name.strip_prefix("wire:"))
                .unwrap_or(&name);
            let base = match base.find(".p2p-") {
                Some(i) => &base[..i],
                None => base,
            };
            match base.split_once('>') {
                Some((a, b)) => {
                    push(a);
                    push(b);
                }
                None => push(base),
            }
        }
        out
    }
}

impl<'a> Hops<'a> {
    /// Extent of a set of hops: (first start, when the last one reached the channel after: a
    /// server's hop ends with the unit's service, its latency comes on top).
    pub(super) fn extent(&self, hops: &[&Hop]) -> Option<(Ps, Ps)> {
        let s = hops.iter().map(|h| h.start).min()?;
        let e = hops
            .iter()
            .map(|h| {
                let c = &self.topo.channels[h.channel.index()];
                h.end + c.latency * u64::from(h.units > 0 && c.is_server())
            })
            .max()?;
        Some((s, e))
    }
}

/// Units of kind `unit` among `hops` (distinct trains), or None where a bulk transfer moved
/// the data (its TLPs and packets are not counted one by one).
pub(super) fn count(hops: &[&Hop], unit: Unit) -> Option<u64> {
    if hops.iter().any(|h| h.units == 0) {
        return None;
    }
    let mut seen = std::collections::HashSet::new();
    Some(
        hops.iter()
            .filter(|h| h.unit == unit && seen.insert(h.train))
            .count() as u64,
    )
}

/// The hops of the first unit of kind `unit` among `hops` (for routes).
pub(super) fn first_of<'a>(hops: &[&'a Hop], unit: Unit) -> Vec<&'a Hop> {
    let Some(first) = hops.iter().find(|h| h.unit == unit) else {
        return Vec::new();
    };
    let mut seen = std::collections::HashSet::new();
    hops.iter()
        .copied()
        .filter(|h| h.train == first.train && seen.insert(h.channel))
        .collect()
}

pub(super) fn short_name(topo: &Topology, rec: &Recorder, ch: u32) -> String {
    let name = rec.component_name(ch);
    let host = if (ch as usize) < topo.channels.len() {
        topo.channels[ch as usize].host
    } else {
        topo.hosts
            .iter()
            .position(|h| name.starts_with(&format!("{}/", h.name)))
    };
    match host {
        Some(h) => name
            .strip_prefix(&format!("{}/", topo.hosts[h].name))
            .unwrap_or(name)
            .to_string(),
        None => name.to_string(),
    }
}

/// Payload bytes of message `msg` over channels of `kind` (see the module doc).
pub(super) fn payload_bytes_over(
    topo: &Topology,
    run: &Recorded,
    msg: u32,
    kind: fn(&ChannelKind) -> bool,
) -> u64 {
    run.recorder
        .hops
        .iter()
        .filter(|h| h.msg == msg && kind(&topo.channels[h.channel.index()].kind))
        .map(|h| hop_payload(topo, run, h))
        .sum()
}

/// The message payload hop `h` carried: its data where its step moves the payload, the inline
/// payload in the sender's MMIO write of the WQE, else none.
fn hop_payload(topo: &Topology, run: &Recorded, h: &Hop) -> u64 {
    if h.what.carries_data() && run.steps.steps[h.step.index()].payload {
        h.payload
    } else if run.inline
        && h.what == Movement::Mmio
        && topo.channels[h.channel.index()].host == Some(run.plan.sender.host)
    {
        run.plan.size
    } else {
        0
    }
}

/// Payload bytes of message `msg` summed over the root complexes they passed. A root complex
/// has a channel of its own (its traversal), but a transfer moved in bulk records only the
/// channels that serialise (links, memories, caps), not that one: so each movement of a step
/// (a unit's train, or a bulk transfer's stretch) counts the distinct root complexes its
/// channels belong to or lead into (the traversal, the P2P caps, the PCIe links to its
/// children), times the payload it moved. A 1 MiB GPUDirect message across the sockets passes
/// two per side whether it moves in TLPs or in bulk.
pub(super) fn root_complex_bytes(topo: &Topology, run: &Recorded, msg: u32) -> u64 {
    let mut rc_of: HashMap<ChannelId, (usize, usize)> = HashMap::new();
    for (h, host) in topo.hosts.iter().enumerate() {
        for (i, n) in host.nodes.iter().enumerate() {
            if let crate::topology::NodeKind::RootComplex(r) = n.kind {
                let (read, write) = host.rc_caps[r];
                for c in [n.traverse, read, write].into_iter().flatten() {
                    rc_of.insert(c, (h, i));
                }
            }
            if let Some((p, up, down)) = n.parent
                && matches!(
                    host.nodes[p].kind,
                    crate::topology::NodeKind::RootComplex(_)
                )
            {
                rc_of.insert(up, (h, p));
                rc_of.insert(down, (h, p));
            }
        }
    }
    // Per movement: its first channel, the payload through it, the root complexes it met.
    type Passes = (ChannelId, u64, BTreeSet<(usize, usize)>);
    let mut moves: HashMap<(StepId, u64, Movement), Passes> = HashMap::new();
    for h in run.recorder.hops.iter().filter(|h| h.msg == msg) {
        let payload = hop_payload(topo, run, h);
        if payload == 0 {
            continue;
        }
        let m = moves
            .entry((h.step, h.train, h.what))
            .or_insert_with(|| (h.channel, 0, BTreeSet::new()));
        if h.channel == m.0 {
            m.1 += payload;
        }
        if let Some(rc) = rc_of.get(&h.channel) {
            m.2.insert(*rc);
        }
    }
    moves
        .values()
        .map(|(_, bytes, rcs)| bytes * rcs.len() as u64)
        .sum()
}

// ---- the walk --------------------------------------------------------------------------------

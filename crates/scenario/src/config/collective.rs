//! A collective scenario (`collective = { kind = "all_reduce", hosts = "all", ... }`): NCCL's
//! collective over every GPU of the named hosts, generated as flows that wait on flows (one
//! ring per channel, each edge a flow gated by the edge before it), so PCIe, NVLink, host
//! memory, NICs and the network contend as they do for any flow.
//!
//! The ring through a node, as NCCL's search builds it (`src/graph/search.cc`; NVIDIA/nccl
//! 2.30): channel `c` uses NIC `c mod NICs` of every node (NCCL assigns NICs to channels round
//! robin), enters the node at that NIC's local GPU, visits the node's other GPUs in index order
//! from there, and leaves from the last of them through the same NIC (one rail per channel).
//! The last is another GPU as near the NIC as the entry where there is one (a DGX A100's
//! switch complex holds two GPUs PXB to its two NICs: the ring leaves from the entry's
//! partner, read by GPUDirect); else it is the GPU before the entry, which is not the NIC's
//! own, so NCCL's PXN relays its sends through the NIC's GPU where the swept path says so,
//! `auto` or `pxn` (a DGX H100). On one node the ring is the GPUs only,
//! channel `c` starting at GPU `c mod G`. Edges inside a node are NCCL's P2P transport (the
//! kernel's stores into the peer over NVLink or PCIe), edges between nodes its net transport
//! over the swept path.

use super::choice::choice;
use super::convert::{Cx, R};
use super::p2p_channels::{self, P2pChannels, Peer};
use super::raw::{RawCollective, RawCount, RawHostList};
use super::scenarios::gpu_endpoint;
use super::{FlowDeps, FlowSpec};
use crate::topology::CpuFamily;
use crate::topology::spec::HostSpec;
use crate::topology::{Affinity, NodeKind, Place};

/// The collective operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollectiveKind {
    /// Reduce-scatter then all-gather around the ring: 2(n-1) sends per chunk.
    AllReduce,
    /// Each rank's slice passed around the ring: n-1 sends per chunk.
    AllGather,
    /// Partial sums passed around the ring and reduced at each hop: n-1 sends per chunk.
    ReduceScatter,
    /// Every rank sends size / n to every other rank: NCCL's grouped ncclSend/ncclRecv, one
    /// flow per ordered pair of ranks, no ring.
    AllToAll,
    /// The root's buffer passed down the ring's chain from the root to every other rank (n - 1
    /// edges a channel, no reduction).
    Broadcast,
    /// Every rank sends size to the next rank and receives size from the one before (NCCL's
    /// grouped ncclSend/ncclRecv, nccl-tests' sendrecv_perf), striped over NCCL's p2p channels.
    SendRecv,
}

impl CollectiveKind {
    /// Every value, in the order messages list their words.
    pub const ALL: [CollectiveKind; 6] = [
        CollectiveKind::AllReduce,
        CollectiveKind::AllGather,
        CollectiveKind::ReduceScatter,
        CollectiveKind::AllToAll,
        CollectiveKind::Broadcast,
        CollectiveKind::SendRecv,
    ];

    /// The word a config writes for the value.
    pub fn name(self) -> &'static str {
        match self {
            CollectiveKind::AllReduce => "all_reduce",
            CollectiveKind::AllGather => "all_gather",
            CollectiveKind::ReduceScatter => "reduce_scatter",
            CollectiveKind::AllToAll => "all_to_all",
            CollectiveKind::Broadcast => "broadcast",
            CollectiveKind::SendRecv => "sendrecv",
        }
    }
}

/// The algorithm that moves the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// Per size, the algorithm NCCL's tuner picks (all-reduce: ring or tree, its cost model,
    /// [`crate::scenario::tuner`]; the other kinds: ring). The default, as NCCL's.
    Auto,
    /// One ring per channel over every rank.
    Ring,
    /// NCCL's double binary tree across nodes, a chain inside each node (all-reduce only).
    Tree,
}

impl Algorithm {
    /// Every value, in the order messages list their words.
    pub const ALL: [Algorithm; 3] = [Algorithm::Auto, Algorithm::Ring, Algorithm::Tree];

    /// The word a config writes for the value.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Auto => "auto",
            Algorithm::Ring => "ring",
            Algorithm::Tree => "tree",
        }
    }

    /// NCCL's spelling (NCCL_ALGO, its logs).
    pub fn nccl_name(self) -> &'static str {
        match self {
            Algorithm::Auto => "auto",
            Algorithm::Ring => "Ring",
            Algorithm::Tree => "Tree",
        }
    }
}

/// NCCL's protocol: how each step's data and flag travel (NVIDIA/nccl `src/device/prims_*.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// Per size, the protocol NCCL's tuner picks (its cost model, `src/graph/tuning.cc`, over
    /// the ring: [`crate::scenario::tuner`]).
    Auto,
    /// Data then a fence and a flag, in steps of NCCL_BUFFSIZE / NCCL_STEPS (512 KiB).
    Simple,
    /// Low latency: 8-byte data words each stored with its 8-byte flag in one 16-byte line,
    /// so the receiver sees data and flag in one store and no fence waits between them; half
    /// of every byte moved is flags. Steps of 32 KiB of data.
    Ll,
    /// 128-byte lines of 120 bytes of data and an 8-byte flag (NVLink delivers a line's
    /// stores in order): no fence, 1/16 of every byte moved is flags. Steps of 576,000 bytes
    /// of data.
    Ll128,
}

impl Protocol {
    /// Every value, in the order messages list their words.
    pub const ALL: [Protocol; 4] = [
        Protocol::Auto,
        Protocol::Simple,
        Protocol::Ll,
        Protocol::Ll128,
    ];

    /// The word a config writes for the value.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Auto => "auto",
            Protocol::Simple => "simple",
            Protocol::Ll => "ll",
            Protocol::Ll128 => "ll128",
        }
    }

    /// NCCL's spelling (NCCL_PROTO, its logs).
    pub fn nccl_name(self) -> &'static str {
        match self {
            Protocol::Auto => "auto",
            Protocol::Simple => "Simple",
            Protocol::Ll => "LL",
            Protocol::Ll128 => "LL128",
        }
    }
}

choice!(CollectiveKind, Algorithm, Protocol);

/// A collective over `hosts` x `gpus_per_host` ranks in `channels` rings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Collective {
    /// The operation (nccl-tests' `*_perf`).
    pub kind: CollectiveKind,
    /// How the data moves between ranks.
    pub algorithm: Algorithm,
    /// How each step's data and flag travel.
    pub protocol: Protocol,
    /// The hosts taking part (indices into the config's hosts), in ring order.
    pub hosts: Vec<usize>,
    /// GPUs per host taking part: GPUs 0..gpus_per_host of each.
    pub gpus_per_host: u32,
    /// Rings run side by side (NCCL's channels), each over every rank.
    pub channels: u32,
    /// What NCCL's tuner knows of the machine (its topology search's result).
    pub graph: NcclGraph,
    /// The scenario's flows before this index are the rings' edges, from it the trees' (a
    /// ring-only collective: the flow count; a tree-only one: 0; `auto` all-reduce has both,
    /// and each size runs the set the tuner picks).
    pub tree_start: usize,
    /// A broadcast's root (nccl-tests' `-r`): the rank whose buffer every rank receives,
    /// ranks numbered host by host in `hosts` order, GPU by GPU (0 for the other kinds).
    pub root: u32,
    /// NCCL's channels for p2p operations on this machine (a sendrecv's, which stripes each
    /// pair's bytes over them: its flows are `per_peer` rounds of one flow a rank).
    pub p2p: P2pChannels,
    /// NCCL_BUFFSIZE: the Simple protocol's buffer per connection, NCCL_STEPS steps of it
    /// (`buffsize`, default [`DEFAULT_BUFFSIZE`]).
    pub buff_bytes: u64,
}

/// NCCL_BUFFSIZE's default (`src/init.cc` DEFAULT_BUFFSIZE): 4 MiB per connection for the
/// Simple protocol, 8 steps of 512 KiB.
pub const DEFAULT_BUFFSIZE: u64 = 4 << 20;
/// The smallest and largest `buffsize` a collective takes (64 KiB: 8 steps of 8 KiB).
pub const BUFFSIZE_RANGE: (u64, u64) = (64 << 10, 1 << 30);

/// A GPU generation as NCCL's tuner tables index it (by the lowest compute capability).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GpuArch {
    /// Compute capability below 8.0.
    Volta,
    /// 8.x.
    Ampere,
    /// 9.x.
    #[default]
    Hopper,
    /// 10.0 and up.
    Blackwell,
}

impl GpuArch {
    /// The generation of compute capability (major, minor).
    pub fn of(cc: (u32, u32)) -> GpuArch {
        match cc.0 {
            0..=7 => GpuArch::Volta,
            8 => GpuArch::Ampere,
            9 => GpuArch::Hopper,
            _ => GpuArch::Blackwell,
        }
    }
}

/// What NCCL's tuner reads from its topology search (`ncclTopoCompute`, `src/graph/search.cc`)
/// for the ring, as this model estimates it from the configured hardware: the search's rings
/// and the speed of each (one of NCCL's candidate speeds, the largest the path allows).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NcclGraph {
    /// Nodes (hosts) taking part.
    pub nodes: u32,
    /// The search's rings, before NCCL duplicates them into channels.
    pub rings: u32,
    /// Each ring's speed, MB/s (NCCL's bwIntra = bwInter of the ring graph).
    pub ring_mbps: u32,
    /// The lowest GPU generation taking part.
    pub arch: GpuArch,
    /// An AMD CPU (NCCL's LL ceilings across nodes differ by CPU vendor).
    pub amd: bool,
    /// GPUs of a node reach each other over NVLink (else PCIe: NCCL's intra hardware class).
    pub nvlink: bool,
    /// The farthest `topo -m` class between a ring's last GPU in a node and its channel's NIC,
    /// over every node and channel (PIX within one node): with the path and PXN, NCCL's
    /// `typeInter`, which decides whether LL128 is on by default.
    pub exit_class: Affinity,
}

/// NCCL's candidate ring speeds, GB/s x 10 (`src/graph/search.cc`: speedArrayIntra/Inter, and
/// the sm90 and sm100 arrays), highest first.
fn speeds(arch: GpuArch, inter: bool) -> &'static [u32] {
    match (arch, inter) {
        (GpuArch::Volta | GpuArch::Ampere, false) => {
            &[400, 300, 200, 180, 150, 120, 100, 90, 70, 60, 50, 40, 30]
        }
        (GpuArch::Volta | GpuArch::Ampere, true) => &[
            480, 300, 280, 240, 200, 180, 150, 120, 100, 90, 70, 60, 50, 40, 30, 24, 12, 2, 1,
        ],
        (GpuArch::Hopper, false) => &[600, 500, 400, 300, 240, 200, 150, 120, 110, 60, 30],
        (GpuArch::Hopper, true) => &[
            480, 450, 420, 400, 300, 240, 220, 200, 175, 150, 120, 60, 30, 24, 12, 2, 1,
        ],
        (GpuArch::Blackwell, false) => {
            &[900, 800, 700, 600, 500, 450, 400, 300, 240, 200, 190, 180]
        }
        (GpuArch::Blackwell, true) => &[
            960, 860, 800, 480, 451, 420, 400, 300, 240, 220, 200, 175, 150, 120, 60, 30, 24, 12,
            2, 1,
        ],
    }
}

/// The search's rings for `chosen` hosts x `gpus` GPUs (estimate): across nodes one ring per
/// NIC of the first host, at the largest candidate speed within the NIC's rate; within one
/// node a quarter of the default channels (NCCL doubles the search's rings twice), at the
/// largest candidate within the GPU's NVLink bandwidth (else its PCIe link's) over the rings.
fn nccl_graph(hosts: &[HostSpec], chosen: &[usize], gpus: u32) -> NcclGraph {
    let m = &hosts[chosen[0]].machine;
    let arch = chosen
        .iter()
        .flat_map(|&h| hosts[h].machine.gpus.iter().take(gpus as usize))
        .map(|g| GpuArch::of(g.compute_capability))
        .min_by_key(|a| *a as u8)
        .unwrap_or_default();
    let gpu0 = m.gpus.first().map(|g| g.name.as_str()).unwrap_or("");
    let nvlink_mbps: u64 = m
        .nvlinks
        .iter()
        .filter(|l| l.a == gpu0 || l.b == gpu0)
        .map(|l| u64::from(l.links) * l.link_rate.bps() / 8_000_000)
        .sum();
    let multi = chosen.len() > 1;
    let (rings, limit_mbps) = if multi {
        let nics = m.nics.len().max(1) as u32;
        let nic = m.nics.first().map_or(0, |n| n.wire_rate.bps() / 8_000_000);
        (nics, nic)
    } else {
        let rings = default_channels(hosts, chosen, gpus).div_ceil(4).max(1);
        let pcie = m.links.iter().find(|l| l.down == gpu0).map_or(0, |l| {
            crate::topology::pcie::raw_rate(l.generation, l.width).bps() / 8_000_000
        });
        let bw = if nvlink_mbps > 0 { nvlink_mbps } else { pcie };
        (rings, bw / u64::from(rings))
    };
    let table = speeds(arch, multi);
    let pick = table
        .iter()
        .find(|&&s| u64::from(s) * 100 <= limit_mbps)
        .or(table.last())
        .copied()
        .unwrap_or(1);
    NcclGraph {
        nodes: chosen.len() as u32,
        rings,
        ring_mbps: pick * 100,
        arch,
        amd: matches!(
            m.sockets.first().map(|s| s.cpu_family),
            Some(CpuFamily::EpycRome | CpuFamily::EpycMilan | CpuFamily::EpycGenoa)
        ),
        nvlink: gpus == 1 || nvlink_mbps > 0,
        exit_class: Affinity::Pix,
    }
}

impl Collective {
    /// Ranks: every GPU taking part.
    pub fn ranks(&self) -> u32 {
        self.hosts.len() as u32 * self.gpus_per_host
    }

    /// The flows (of the scenario's `flows`) that run `algorithm`: the rings' edges or the
    /// trees'.
    pub fn flows_of(&self, algorithm: Algorithm, flows: usize) -> std::ops::Range<usize> {
        let split = self.tree_start.min(flows);
        match algorithm {
            Algorithm::Tree => split..flows,
            Algorithm::Ring | Algorithm::Auto => 0..split,
        }
    }
}

/// The most rings a collective may ask for (NCCL's MAXCHANNELS).
pub const MAX_CHANNELS: u32 = 64;

/// Reads `collective = {...}` of scenario `key` into its collective, its flows (channel by
/// channel, ring edge by ring edge) and their names and gates (each edge waits for the edge
/// before it in its ring; the lag is the schedule's, set per size).
pub(super) fn convert(
    cx: &Cx,
    key: &str,
    raw: &RawCollective,
    hosts: &[HostSpec],
    flows: &mut Vec<FlowSpec>,
) -> R<(Collective, Vec<FlowDeps>)> {
    let k = |x: &str| format!("{key}.{x}");
    let host_names = || {
        hosts
            .iter()
            .map(|h| h.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let chosen: Vec<usize> = match &raw.hosts {
        None => (0..hosts.len()).collect(),
        Some(RawHostList::Word(w)) if w == "all" => (0..hosts.len()).collect(),
        Some(RawHostList::Word(w)) => {
            return Err(cx.err(
                &k("hosts"),
                "\"all\" or a list of [[hosts]] names",
                format!("{w:?}"),
            ));
        }
        Some(RawHostList::List(list)) => {
            let mut out = Vec::with_capacity(list.len());
            for (j, name) in list.iter().enumerate() {
                let Some(h) = hosts.iter().position(|h| &h.name == name) else {
                    return Err(cx.err(
                        &format!("{key}.hosts[{j}]"),
                        format!("one of the [[hosts]] ({})", host_names()),
                        format!("{name:?}"),
                    ));
                };
                if out.contains(&h) {
                    return Err(cx.err(
                        &format!("{key}.hosts[{j}]"),
                        "each host once",
                        format!("{name:?} again"),
                    ));
                }
                out.push(h);
            }
            out
        }
    };
    if chosen.is_empty() {
        return Err(cx.err(&k("hosts"), "at least one host", "none"));
    }
    let fewest = chosen
        .iter()
        .map(|&h| hosts[h].machine.gpus.len())
        .min()
        .unwrap_or(0);
    let gpus_per_host = match raw.gpus_per_host {
        None if fewest == 0 => {
            return Err(cx.err(
                &k("hosts"),
                "hosts whose machines have GPUs",
                "a host without GPUs",
            ));
        }
        None => fewest as u32,
        Some(n) if n == 0 || n as usize > fewest => {
            return Err(cx.err(
                &k("gpus_per_host"),
                format!("1 to {fewest} (the GPUs of the smallest host taking part)"),
                n.to_string(),
            ));
        }
        Some(n) => n,
    };
    if chosen.len() > 1
        && let Some(&h) = chosen.iter().find(|&&h| hosts[h].machine.nics.is_empty())
    {
        return Err(cx.err(
            &k("hosts"),
            "hosts whose machines have NICs (the ring crosses the network between hosts)",
            format!("{:?} without one", hosts[h].name),
        ));
    }
    let ranks = chosen.len() as u32 * gpus_per_host;
    if ranks < 2 {
        return Err(cx.err(
            &k("gpus_per_host"),
            "at least two ranks in all (hosts x gpus_per_host)",
            format!("{} host x {gpus_per_host} GPU", chosen.len()),
        ));
    }
    let expected = format!("\"auto\" or 1 to {MAX_CHANNELS} (NCCL's MAXCHANNELS)");
    let channels = match &raw.channels {
        None => default_channels(hosts, &chosen, gpus_per_host),
        Some(RawCount::Word(w)) if w == "auto" => default_channels(hosts, &chosen, gpus_per_host),
        Some(RawCount::Count(n)) if (1..=MAX_CHANNELS as i64).contains(n) => *n as u32,
        Some(RawCount::Count(n)) => return Err(cx.err(&k("channels"), expected, n.to_string())),
        Some(RawCount::Word(w)) => return Err(cx.err(&k("channels"), expected, format!("{w:?}"))),
    };
    let algorithm = raw.algorithm.unwrap_or(Algorithm::Auto);
    if algorithm == Algorithm::Tree && raw.kind != CollectiveKind::AllReduce {
        return Err(cx.err(
            &k("algorithm"),
            "\"ring\" or \"auto\" (NCCL's tree runs all_reduce only)",
            format!("\"tree\" for {}", raw.kind.name()),
        ));
    }
    let root = match raw.root {
        None => 0,
        Some(r) if raw.kind != CollectiveKind::Broadcast => {
            return Err(cx.err(
                &k("root"),
                "no root: only a broadcast has one",
                format!("root = {r} for {}", raw.kind.name()),
            ));
        }
        Some(r) if (0..i64::from(ranks)).contains(&r) => r as u32,
        Some(r) => {
            return Err(cx.err(
                &k("root"),
                format!(
                    "a rank from 0 to {} (ranks are numbered host by host, GPU by GPU)",
                    ranks - 1
                ),
                r.to_string(),
            ));
        }
    };
    let (lo, hi) = BUFFSIZE_RANGE;
    let buff_bytes = cx.bytes_in(&raw.buffsize, &k("buffsize"), DEFAULT_BUFFSIZE, lo, hi)?;
    let c = Collective {
        kind: raw.kind,
        algorithm,
        tree_start: 0,
        root,
        p2p: P2pChannels::default(),
        buff_bytes,
        protocol: raw.protocol.unwrap_or(Protocol::Auto),
        graph: nccl_graph(hosts, &chosen, gpus_per_host),
        hosts: chosen,
        gpus_per_host,
        channels,
    };
    // Per host, each GPU's nearest NIC, and each GPU's class to each NIC (`topo -m`).
    let (near, classes): (Vec<Vec<usize>>, Vec<Vec<Vec<Affinity>>>) = hosts
        .iter()
        .map(|h| {
            if h.machine.nics.is_empty() {
                return (Vec::new(), Vec::new());
            }
            let t = crate::topology::host_graph(h);
            let class = |g: usize, n: usize| {
                let at = |k: NodeKind| Place::Device(t.node_index(k));
                t.class(at(NodeKind::Gpu(g)), at(NodeKind::Nic(n)))
            };
            let classes = (0..h.machine.gpus.len())
                .map(|g| (0..h.machine.nics.len()).map(|n| class(g, n)).collect())
                .collect();
            (t.nearest_nics(), classes)
        })
        .unzip();
    let g_n = gpus_per_host as usize;
    let multi = c.hosts.len() > 1;
    // Channel `ch`'s NIC on host `h`, and the GPU its ring enters the host at: the NIC's
    // local GPU (the first taking part whose nearest NIC it is), else the channel's turn.
    let nic_of = |h: usize, ch: u32| ch as usize % hosts[h].machine.nics.len().max(1);
    let entry = |h: usize, ch: u32| {
        let nic = nic_of(h, ch);
        match (0..g_n).find(|&g| near[h].get(g) == Some(&nic)) {
            Some(g) if multi => g,
            _ => ch as usize % g_n,
        }
    };
    // The GPU the ring leaves host `h` from, the last it visits: the last GPU (in index order
    // from the entry) that is as near the channel's NIC as the entry GPU, where one is (a DGX
    // A100's two GPUs of a switch complex are both PXB to its two NICs: NCCL's search ends
    // the ring at the entry's partner, which the NIC reads by GPUDirect, no PXN), else the
    // GPU before the entry (a DGX H100's NIC has one near GPU: PXN relays the last one's
    // sends).
    let exit = |h: usize, ch: u32, e: usize| {
        let nic = nic_of(h, ch);
        let class = |g: usize| classes[h].get(g).and_then(|c| c.get(nic)).copied();
        (1..g_n)
            .rev()
            .map(|k| (e + k) % g_n)
            .find(|&g| multi && class(g).is_some() && class(g) <= class(e))
            .unwrap_or((e + g_n - 1) % g_n)
    };
    let mut c = c;
    if multi {
        c.graph.exit_class = c
            .hosts
            .iter()
            .flat_map(|&h| (0..channels).map(move |ch| (h, ch)))
            .filter_map(|(h, ch)| {
                let x = exit(h, ch, entry(h, ch));
                classes[h]
                    .get(x)
                    .and_then(|v| v.get(nic_of(h, ch)))
                    .copied()
            })
            .max()
            .unwrap_or(Affinity::Pix);
    }
    // GPU `g` of host `h` through `nic`, or through its own nearest NIC where `nic` is None.
    let at = |(h, g): (usize, usize), nic: Option<usize>| {
        let nic = nic.unwrap_or_else(|| near[h].get(g).copied().unwrap_or(0));
        gpu_endpoint((h, &hosts[h].machine), g, nic)
    };
    let end = |rank: (usize, usize), ch: u32| at(rank, multi.then(|| nic_of(rank.0, ch)));
    let n = ranks as usize;
    let name =
        |(h, g): (usize, usize)| format!("{}/{}", hosts[h].name, hosts[h].machine.gpus[g].name);
    // Every rank as (host, GPU), in rank order (host by host, GPU by GPU).
    let rank_list: Vec<(usize, usize)> = c
        .hosts
        .iter()
        .flat_map(|&h| (0..g_n).map(move |g| (h, g)))
        .collect();
    // A p2p send from `a` to `b` (an all-to-all's, a sendrecv's) between the two GPUs' own
    // NICs; nothing gates it (NCCL runs a group's sends and receives together).
    let own = |rank: (usize, usize)| at(rank, None);
    let p2p = |(a, b): ((usize, usize), (usize, usize)), label: String| {
        // NCCL's P2P NIC with PXN: the one local to the GPU of the receiver's index.
        let pxn = near[a.0]
            .get(b.1)
            .copied()
            .filter(|&nic| a.0 != b.0 && Some(nic) != near[a.0].get(a.1).copied());
        let flow = FlowSpec {
            sender: own(a),
            receiver: own(b),
            qp: 0,
        };
        let deps = FlowDeps {
            name: label,
            after: Vec::new(),
            reduce: false,
            messages: None,
            pxn_sender: pxn.map(|nic| at(a, Some(nic))),
        };
        (flow, deps)
    };
    if matches!(c.kind, CollectiveKind::AllToAll | CollectiveKind::SendRecv) {
        // NCCL's p2p channels: GPU 0 of the first host stands for every rank; maxP2pPeers is
        // 2 for nccl-tests' sendrecv, the ranks for an all-to-all.
        let h0 = c.hosts[0];
        let max_peers = if c.kind == CollectiveKind::SendRecv {
            2
        } else {
            ranks
        };
        let nodes = c.hosts.len() as u32;
        let p2p_ch = p2p_channels_of(&hosts[h0], &classes[h0], g_n, (nodes, channels), max_peers);
        // An all-to-all: one flow per ordered pair of ranks. A sendrecv: rank r to rank r + 1,
        // once per channel a pair may stripe over: round `p`'s flows are `p * n ..`, so a
        // size that stripes over k channels runs the first k n.
        let pairs: Vec<_> = if c.kind == CollectiveKind::AllToAll {
            (rank_list.iter())
                .flat_map(|&a| {
                    rank_list
                        .iter()
                        .filter(move |&&b| b != a)
                        .map(move |&b| (a, b))
                })
                .map(|(a, b)| ((a, b), format!("{}->{}", name(a), name(b))))
                .collect()
        } else {
            (0..p2p_ch.per_peer as usize)
                .flat_map(|p| (0..n).map(move |r| (p, r)))
                .map(|(p, r)| {
                    let (a, b) = (rank_list[r], rank_list[(r + 1) % n]);
                    ((a, b), format!("c{p} {}->{}", name(a), name(b)))
                })
                .collect()
        };
        let mut deps = Vec::with_capacity(pairs.len());
        for (pair, label) in pairs {
            let (f, d) = p2p(pair, label);
            flows.push(f);
            deps.push(d);
        }
        let tree_start = deps.len();
        return Ok((
            Collective {
                tree_start,
                p2p: p2p_ch,
                ..c
            },
            deps,
        ));
    }
    let rings = c.algorithm != Algorithm::Tree;
    let mut deps = Vec::with_capacity(n * channels as usize);
    for ch in (0..channels).filter(|_| rings) {
        // (host, GPU) of each rank in ring order; flow `i` goes from rank `i` to rank `i + 1`
        // (the last back to the first).
        let ring: Vec<(usize, usize)> = c
            .hosts
            .iter()
            .flat_map(|&h| {
                let e = entry(h, ch);
                let x = exit(h, ch, e);
                // The entry, the others in index order, the exit last.
                (0..g_n)
                    .map(move |k| (e + k) % g_n)
                    .filter(move |&g| g != x)
                    .chain(std::iter::once(x))
                    .map(move |g| (h, g))
            })
            .collect();
        // A broadcast's chain carries nothing into the root: that edge has no flow. Each
        // edge's flow index (None for that one).
        let root = rank_list[c.root as usize];
        let skip = |i: usize| c.kind == CollectiveKind::Broadcast && ring[(i + 1) % n] == root;
        let mut index = vec![None; n];
        let mut next = flows.len();
        for (i, slot) in index.iter_mut().enumerate() {
            if !skip(i) {
                *slot = Some(next);
                next += 1;
            }
        }
        for i in (0..n).filter(|&i| !skip(i)) {
            let (from, to) = (ring[i], ring[(i + 1) % n]);
            flows.push(FlowSpec {
                sender: end(from, ch),
                receiver: end(to, ch),
                qp: 0,
            });
            deps.push(FlowDeps {
                name: format!("c{ch} {}->{}", name(from), name(to)),
                // The edge before it in the ring; the lag (slices per chunk) is the size's.
                after: index[(i + n - 1) % n].map(|j| (j, 1)).into_iter().collect(),
                reduce: false,
                messages: None,
                pxn_sender: None,
            });
        }
    }
    c.tree_start = deps.len();
    if c.kind == CollectiveKind::AllReduce && c.algorithm != Algorithm::Ring {
        // The in-node chain of each host for a channel: the ring's order (entry first).
        let chain = |h: usize, ch: u32| -> Vec<(usize, usize)> {
            let e = entry(h, ch);
            let x = exit(h, ch, e);
            (0..g_n)
                .map(move |k| (e + k) % g_n)
                .filter(move |&g| g != x)
                .chain(std::iter::once(x))
                .map(move |g| (h, g))
                .collect()
        };
        for ch in 0..channels {
            let chains: Vec<Vec<(usize, usize)>> = c.hosts.iter().map(|&h| chain(h, ch)).collect();
            let base = flows.len();
            for e in tree_edges(&chains, tree_of(ch, channels)) {
                let (from, to) = e.ends;
                flows.push(FlowSpec {
                    sender: end(from, ch),
                    receiver: end(to, ch),
                    qp: 0,
                });
                deps.push(FlowDeps {
                    name: format!(
                        "c{ch} tree{} {} {}->{}",
                        tree_of(ch, channels),
                        if e.up { "up" } else { "down" },
                        name(from),
                        name(to)
                    ),
                    after: e.after.iter().map(|&j| (j + base, 0)).collect(),
                    reduce: e.reduce,
                    messages: None,
                    pxn_sender: None,
                });
            }
        }
    }
    Ok((c, deps))
}

/// NCCL's p2p channels on `host` (every host taking part alike: its GPU 0 stands for every
/// rank), `gpus` GPUs of it taking part, on `nodes` nodes, the collectives running `nchannels`
/// channels, at most `max_peers` peers an operation group; `classes[g][nic]` is GPU g's class
/// to each NIC.
/// GPU 0's peers: the node's other GPUs over NVLink (the NVLinks of the path: a direct bond's,
/// else through the NVSwitches the fewer of the two GPUs') or PCIe, and across nodes its local
/// NICs (the nearest by class, in index order, each at its path's bandwidth: the least of its
/// wire and the two PCIe links; the GPU's own, its PCIe link, bounds the count).
fn p2p_channels_of(
    host: &HostSpec,
    classes: &[Vec<Affinity>],
    gpus: usize,
    (nodes, nchannels): (u32, u32),
    max_peers: u32,
) -> P2pChannels {
    let m = &host.machine;
    let name = |g: usize| m.gpus[g].name.as_str();
    let switch = |x: &str| m.nvswitches.iter().any(|s| s.name == x);
    let to_switches = |g: &str| -> u32 {
        m.nvlinks
            .iter()
            .filter(|l| (l.a == g && switch(&l.b)) || (l.b == g && switch(&l.a)))
            .map(|l| l.links)
            .sum()
    };
    let links = |a: &str, b: &str| -> u32 {
        let direct: u32 = m
            .nvlinks
            .iter()
            .filter(|l| (l.a == a && l.b == b) || (l.a == b && l.b == a))
            .map(|l| l.links)
            .sum();
        if direct > 0 {
            direct
        } else {
            to_switches(a).min(to_switches(b))
        }
    };
    let pcie = |dev: &str| {
        m.links
            .iter()
            .find(|l| l.down == dev)
            .map(|l| p2p_channels::pcie_mbps(l.generation, l.width))
    };
    let mut peers: Vec<Peer> = (1..gpus)
        .map(|g| match links(name(0), name(g)) {
            0 => Peer::Pcie,
            l => Peer::NvLink { links: l },
        })
        .collect();
    if nodes > 1 {
        let gpu_mbps = pcie(name(0)).unwrap_or(u64::MAX);
        let mine = classes.first().map(Vec::as_slice).unwrap_or(&[]);
        let best = mine.iter().min().copied();
        let nics: Vec<u64> = m
            .nics
            .iter()
            .zip(mine)
            .filter(|(_, c)| Some(**c) == best)
            .map(|(nic, _)| {
                let wire = nic.wire_rate.bps() / 8_000_000;
                wire.min(pcie(&nic.name).unwrap_or(u64::MAX)).min(gpu_mbps)
            })
            .collect();
        peers.push(p2p_channels::local_nets(&nics, gpu_mbps));
    }
    P2pChannels::of(&peers, nodes, nchannels, max_peers)
}

/// A built-in default of NCCL's channel count, as `gdrsim params` lists it for a study with
/// collectives: not a config key (a collective's `channels` overrides the count it gives).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChannelDefault {
    /// Its name in the list.
    pub key: &'static str,
    /// The value.
    pub value: u32,
    /// Its unit, as `gdrsim params` prints it.
    pub unit: &'static str,
    /// Where it comes from.
    pub source: &'static str,
}

/// Rings per NIC of the first host when a collective crosses nodes.
pub const CHANNELS_PER_NIC: ChannelDefault = ChannelDefault {
    key: "nccl.channels_per_nic",
    value: 2,
    unit: "count",
    source: "estimate: rings per NIC of the first host across nodes, NCCL 2.30's search run by \
             hand for a DGX H100 (ncclTopoCompute finds one ring per NIC, ncclTopoPostset \
             doubles them: 16 for 8 NICs, as NVIDIA/nccl#1453's \"Channel 00/16\" shows)",
};

/// Rings per GPU when a collective stays in one node.
pub const CHANNELS_PER_GPU: ChannelDefault = ChannelDefault {
    key: "nccl.channels_per_gpu",
    value: 3,
    unit: "count",
    source: "estimate: rings per GPU within one node, NCCL 2.30's search run by hand for 8 \
             GPUs on NVSwitch (6 NVLink rings doubled twice: 24, as 8-GPU Hopper logs' \"24 \
             coll channels\" show)",
};

/// The built-in channel defaults, in the order `gdrsim params` lists them.
pub const CHANNEL_DEFAULTS: [ChannelDefault; 2] = [CHANNELS_PER_NIC, CHANNELS_PER_GPU];

/// NCCL's channel count where the config gives none: across nodes [`CHANNELS_PER_NIC`] times
/// the NICs of the first host, within one node [`CHANNELS_PER_GPU`] times the GPUs; 2 to
/// [`MAX_CHANNELS`].
fn default_channels(hosts: &[HostSpec], chosen: &[usize], gpus: u32) -> u32 {
    let nics = hosts[chosen[0]].machine.nics.len() as u32;
    let rings = if chosen.len() > 1 {
        CHANNELS_PER_NIC.value * nics.max(1)
    } else {
        CHANNELS_PER_GPU.value * gpus
    };
    rings.clamp(2, MAX_CHANNELS)
}

/// Which of NCCL's two trees channel `ch` of `channels` runs: the first half tree 0, the
/// second tree 1 (NCCL's `connectTrees`: channel c on tree 0, its copy c + nChannels on tree 1).
pub fn tree_of(ch: u32, channels: u32) -> u32 {
    u32::from(2 * u64::from(ch) >= u64::from(channels) && channels > 1)
}

/// NCCL's binary tree over `n` nodes (`ncclGetBtree`, `src/graph/trees.cc`): node `rank`'s
/// parent, its two children (down0, down1) and which child of its parent it is (0: down0,
/// 1: down1). Node 0 is the root.
pub fn btree(n: usize, rank: usize) -> (Option<usize>, [Option<usize>; 2], u8) {
    let mut bit = 1usize;
    while bit < n {
        if bit & rank != 0 {
            break;
        }
        bit <<= 1;
    }
    if rank == 0 {
        return (None, [None, (n > 1).then_some(bit >> 1)], 0);
    }
    let mut up = (rank ^ bit) | (bit << 1);
    if up >= n {
        up = rank ^ bit;
    }
    let child_type = u8::from(rank >= up);
    let mut lowbit = bit >> 1;
    let down0 = (lowbit != 0).then(|| rank - lowbit);
    let mut down1 = (lowbit != 0).then(|| rank + lowbit);
    while down1.is_some_and(|d| d >= n) {
        down1 = (lowbit != 0).then(|| rank + lowbit);
        lowbit >>= 1;
    }
    (Some(up), [down0, down1], child_type)
}

/// NCCL's double binary tree (`ncclGetDtree`): tree 0 is [`btree`]; tree 1 its mirror (node
/// n - 1 - r) where `n` is even, else the btree shifted by one node.
pub fn dtree(n: usize, rank: usize, tree: u32) -> (Option<usize>, [Option<usize>; 2], u8) {
    if tree == 0 || n < 2 {
        return btree(n, rank);
    }
    let odd = n % 2 == 1;
    // Tree 1's rank r is the btree's rank map(r); the btree's rank x is tree 1's unmap(x).
    let map = |r: usize| if odd { (r + n - 1) % n } else { n - 1 - r };
    let unmap = |x: usize| if odd { (x + 1) % n } else { n - 1 - x };
    let (u, [d0, d1], t) = btree(n, map(rank));
    (u.map(unmap), [d0.map(unmap), d1.map(unmap)], t)
}

/// One edge of a channel's tree, one direction: a flow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeEdge {
    /// Sender and receiver (host, GPU).
    pub ends: ((usize, usize), (usize, usize)),
    /// Reduce (towards the root) or broadcast (away from it).
    pub up: bool,
    /// The edges (indices into the channel's list) whose message k this edge's message k
    /// waits for: an up edge its sender's children's up edges; a down edge from the root the
    /// root's children's up edges; any other down edge the down edge into its sender.
    pub after: Vec<usize>,
    /// A reduction before each message: an up edge from a rank with children, and the
    /// root's down edges (NCCL's `recvReduceCopySend`).
    pub reduce: bool,
}

/// A channel's tree as NCCL connects it (`src/graph/connect.cc`): inside each node the chain
/// `chains[node]` (element 0 faces the parent node, each GPU's parent the one before it);
/// across nodes [`dtree`] `tree`, whose child nodes connect from their chain's first GPU to
/// the parent node's second GPU (a down0 child) or first (a down1 child: NCCL's
/// BALANCED_TREE pattern). Every up edge, then every down edge, rank by rank in node order.
pub fn tree_edges(chains: &[Vec<(usize, usize)>], tree: u32) -> Vec<TreeEdge> {
    let nodes = chains.len();
    // Ranks as (node, position in its chain); parent of each.
    let ranks: Vec<(usize, usize)> = (0..nodes)
        .flat_map(|n| (0..chains[n].len()).map(move |i| (n, i)))
        .collect();
    let parent = |(n, i): (usize, usize)| -> Option<(usize, usize)> {
        if i > 0 {
            return Some((n, i - 1));
        }
        let (up, _, child_type) = dtree(nodes, n, tree);
        up.map(|u| {
            let last = chains[u].len().saturating_sub(1);
            (u, if child_type == 0 { last.min(1) } else { 0 })
        })
    };
    let children = |r: (usize, usize)| -> Vec<(usize, usize)> {
        ranks
            .iter()
            .copied()
            .filter(|&x| parent(x) == Some(r))
            .collect()
    };
    let with_parent: Vec<(usize, usize)> = ranks
        .iter()
        .copied()
        .filter(|&r| parent(r).is_some())
        .collect();
    let m = with_parent.len();
    let up_index = |r: (usize, usize)| with_parent.iter().position(|&x| x == r);
    let at = |(n, i): (usize, usize)| chains[n][i];
    let mut edges = Vec::with_capacity(2 * m);
    for &r in &with_parent {
        let kids = children(r);
        edges.push(TreeEdge {
            ends: (at(r), at(parent(r).unwrap_or(r))),
            up: true,
            after: kids.iter().filter_map(|&k| up_index(k)).collect(),
            reduce: !kids.is_empty(),
        });
    }
    for &r in &with_parent {
        let p = parent(r).unwrap_or(r);
        let (after, reduce) = match parent(p) {
            // The root: what its children sent up, reduced with its own.
            None => (
                children(p).iter().filter_map(|&k| up_index(k)).collect(),
                true,
            ),
            Some(_) => (up_index(p).map(|j| m + j).into_iter().collect(), false),
        };
        edges.push(TreeEdge {
            ends: (at(p), at(r)),
            up: false,
            after,
            reduce,
        });
    }
    edges
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NCCL's own illustration of its btree (`src/graph/trees.cc`, 14 ranks): 0 - 8, 8's
    /// children 4 and 12, 12's 10 and 13 (13: xx101[0]), leaves 1, 3, ..., 13.
    #[test]
    fn btree_is_nccls() {
        assert_eq!(btree(14, 0), (None, [None, Some(8)], 0));
        assert_eq!(btree(14, 8), (Some(0), [Some(4), Some(12)], 1));
        assert_eq!(btree(14, 4), (Some(8), [Some(2), Some(6)], 0));
        assert_eq!(btree(14, 12), (Some(8), [Some(10), Some(13)], 1));
        assert_eq!(btree(14, 13), (Some(12), [None, None], 1));
        assert_eq!(btree(14, 1), (Some(2), [None, None], 0));
        assert_eq!(btree(2, 0), (None, [None, Some(1)], 0));
        assert_eq!(btree(2, 1), (Some(0), [None, None], 1));
        assert_eq!(btree(1, 0), (None, [None, None], 0));
    }

    /// The second tree: the mirror for an even count (12 ranks: root 11, its child 3), the
    /// shift by one for an odd count (13 ranks: root 1, its child 9); every rank has exactly
    /// one parent but the root in both trees.
    #[test]
    fn dtree_mirrors_or_shifts() {
        assert_eq!(dtree(12, 11, 1), (None, [None, Some(3)], 0));
        assert_eq!(dtree(12, 3, 1).0, Some(11));
        assert_eq!(dtree(13, 1, 1), (None, [None, Some(9)], 0));
        assert_eq!(dtree(13, 9, 1).0, Some(1));
        for n in 1..40 {
            for t in 0..2 {
                let roots = (0..n).filter(|&r| dtree(n, r, t).0.is_none()).count();
                assert_eq!(roots, 1, "n {n} tree {t}");
                for r in 0..n {
                    if let Some(u) = dtree(n, r, t).0 {
                        let (_, kids, _) = dtree(n, u, t);
                        assert!(kids.contains(&Some(r)), "n {n} tree {t} rank {r}");
                    }
                }
            }
        }
    }

    #[test]
    fn channels_split_between_the_two_trees() {
        assert_eq!((0..16).map(|c| tree_of(c, 16)).sum::<u32>(), 8);
        assert_eq!((tree_of(7, 16), tree_of(8, 16)), (0, 1));
        assert_eq!(tree_of(0, 1), 0);
    }

    /// Two nodes of two GPUs, tree 0: node 1 is node 0's down1 child, so its chain head (b0)
    /// sends up to node 0's head (a0), the root; a1 and b1 hang below their heads.
    #[test]
    fn tree_edges_chain_in_nodes_and_join_heads() {
        let (a0, a1, b0, b1) = ((0, 0), (0, 1), (1, 0), (1, 1));
        let e = tree_edges(&[vec![a0, a1], vec![b0, b1]], 0);
        let view: Vec<_> = e
            .iter()
            .map(|e| (e.ends, e.up, e.after.clone(), e.reduce))
            .collect();
        assert_eq!(
            view,
            vec![
                ((a1, a0), true, vec![], false),
                ((b0, a0), true, vec![2], true),
                ((b1, b0), true, vec![], false),
                ((a0, a1), false, vec![0, 1], true),
                ((a0, b0), false, vec![0, 1], true),
                ((b0, b1), false, vec![4], false),
            ]
        );
        // Tree 1 (the mirror) roots at node 1.
        let e = tree_edges(&[vec![a0, a1], vec![b0, b1]], 1);
        assert!(e.iter().any(|e| e.up && e.ends == (a0, b0)));
        // Four nodes of one GPU: 0 <- 2 <- {1, 3}, node 2 reduces its two children.
        let one: Vec<Vec<(usize, usize)>> = (0..4).map(|n| vec![(n, 0)]).collect();
        let e = tree_edges(&one, 0);
        assert_eq!(e.len(), 6);
        let up2 = e.iter().position(|e| e.up && e.ends == ((2, 0), (0, 0)));
        let up2 = &e[up2.expect("2 sends up to 0")];
        assert!(up2.reduce && up2.after.len() == 2);
    }
}

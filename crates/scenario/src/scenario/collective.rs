//! A collective's schedule at one size: how NCCL's ring cuts the buffer into the messages its
//! flows carry (Simple protocol), which of them reduce before they are sent on, and the
//! figures nccl-tests reports (algbw, busbw).
//!
//! NCCL's ring (`runRing` in `src/device/all_reduce.h`, `all_gather.h`, `reduce_scatter.h`):
//! each channel takes its share of the buffer in loops; in a loop each rank owns a chunk of at
//! most `CHUNK_STEPS` steps of NCCL_BUFFSIZE / NCCL_STEPS bytes (fewer where the buffer is
//! small: the chunk shrinks to the rank's share), and moves it to the next rank in slices of at
//! most `SLICE_STEPS` steps (a chunk is cut in two slices, each at least 1/32 of the largest:
//! `prims_simple.h`), each slice one RDMA (or one P2P store) and two FIFO steps. A ring
//! all-reduce sends 2(n-1) chunks a loop: its own first, then n-1 it received and reduced
//! (reduce-scatter; the last of them completes the sum), then n-2 it received and passes on
//! (all-gather); all-gather and reduce-scatter send n-1. So a flow (one ring edge) carries
//! loops x sends x slices messages, and its message k waits for message k - slices of the edge
//! before it (the same slice of the previous send, which this rank received), plus the
//! reduction where that send reduces. Simplification: every slice of a point has one size (the
//! rank's share divided evenly over loops and slices, rounded up to a byte, so a flow moves at
//! most loops x slices bytes more than NCCL would).
//!
//! LL and LL128 (chosen by `protocol`, or per size by NCCL's tuner, [`super::tuner`]) move a
//! chunk of one step per send (NCCL gives every protocol but ring Simple one step per chunk and
//! per slice), eight steps in flight, and carry their flags in the data: a message's bytes on
//! every link are its lines (LL: 16 bytes per 8 of data; LL128: 128 per 120), and the receiver
//! sees a line when it lands, with no separate flag (`nccl_p2p`).

use crate::components::ReduceRule;
use crate::config::collective::{Algorithm, Collective, CollectiveKind, Protocol};
use crate::config::p2p_channels::LL_THRESHOLD;

/// NCCL_STEPS: slots of the connection's FIFO.
pub const STEPS: u32 = 8;
/// Steps of one slice (NCCL's `*_SLICESTEPS` = NCCL_STEPS / 4 for the ring collectives).
pub const SLICE_STEPS: u32 = STEPS / 4;
/// Steps of one chunk (NCCL's `*_CHUNKSTEPS` = NCCL_STEPS / 2).
pub const CHUNK_STEPS: u32 = STEPS / 2;
/// A slice is at least the largest one over this (NCCL's `prims_simple.h`: a chunk's slices
/// are max(chunk / 2, 1 MiB / 32)).
pub const MIN_SLICE_DIVISOR: u64 = 32;

/// One Simple step's bytes of collective `c`: its NCCL_BUFFSIZE / NCCL_STEPS.
fn simple_step(c: &Collective) -> u64 {
    (c.buff_bytes / u64::from(STEPS)).max(1)
}

/// LL's buffer per connection: 8 lines per thread x 512 threads x NCCL_STEPS x 16-byte lines
/// (NVIDIA/nccl `src/init.cc` DEFAULT_LL_BUFFSIZE).
pub const LL_BUFF_BYTES: u64 = 8 * 512 * STEPS as u64 * 16;
/// LL128's buffer per connection: 120 elements per thread x 640 threads x NCCL_STEPS x 8 bytes
/// (`src/init.cc` DEFAULT_LL128_BUFFSIZE).
pub const LL128_BUFF_BYTES: u64 = 120 * 640 * STEPS as u64 * 8;

/// Data bytes of one step of `protocol` (`src/enqueue.cc`: the step's bytes, halved for LL's
/// flags, 120/128 of it for LL128's), where a Simple step is `simple` bytes (NCCL_BUFFSIZE /
/// NCCL_STEPS).
pub fn step_data_bytes(protocol: Protocol, simple: u64) -> u64 {
    match protocol {
        Protocol::Simple | Protocol::Auto => simple,
        Protocol::Ll => LL_BUFF_BYTES / STEPS as u64 / 2,
        Protocol::Ll128 => LL128_BUFF_BYTES / STEPS as u64 / 128 * 120,
    }
}

/// Bytes on the links for `data` bytes in `protocol`'s lines: LL stores each 8 bytes of data
/// with an 8-byte flag, LL128 each 120 bytes with 8 of flag in a 128-byte line.
pub fn line_bytes(protocol: Protocol, data: u64) -> u64 {
    match protocol {
        Protocol::Simple | Protocol::Auto => data,
        Protocol::Ll => data.div_ceil(8).saturating_mul(16),
        Protocol::Ll128 => data.div_ceil(120).saturating_mul(128),
    }
}

/// What each flow of a collective does at one size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// The algorithm that runs (`algorithm`, or the tuner's choice for the size): only its
    /// flows carry messages ([`Collective::flows_of`]).
    pub algorithm: Algorithm,
    /// The protocol that moves the data (`protocol`, or the tuner's choice for the size).
    pub protocol: Protocol,
    /// Bytes of every message (one slice) on the links: its data, in LL and LL128 its lines.
    pub message_bytes: u64,
    /// Data bytes of every message (what a reduction reads).
    pub data_bytes: u64,
    /// Messages each flow carries.
    pub messages: u32,
    /// Slices per chunk: message k of a flow waits for message k - lag of the edge before it.
    pub lag: u32,
    /// Slices in flight per connection (FIFO slots over steps per slice).
    pub window: u32,
    /// Which messages reduce first (the delay is set per machine: `ReduceRule::delay` 0 here).
    pub reduce: ReduceRule,
    /// A sendrecv's channels at this size (NCCL stripes each pair's bytes over them): only
    /// its first `parts` rounds of flows run ([`running`]). None for the other kinds.
    pub parts: Option<u32>,
}

/// The flows of `c` (`flows` in all) that carry messages at a size whose schedule is `s`:
/// the edges of the algorithm the size runs ([`Collective::flows_of`]), of a sendrecv the
/// rounds of the channels its pairs stripe over.
pub fn running(c: &Collective, s: &Schedule, flows: usize) -> std::ops::Range<usize> {
    let r = c.flows_of(s.algorithm, flows);
    match s.parts {
        Some(p) => {
            let n = (p as usize).saturating_mul(c.ranks() as usize);
            r.start..r.end.min(r.start.saturating_add(n))
        }
        None => r,
    }
}

/// The schedule of `c` over a buffer of `size` bytes (nccl-tests' size: each rank's buffer for
/// all-reduce and reduce-scatter's input, the gathered output for all-gather).
pub fn schedule(c: &Collective, size: u64, net: super::tuner::Net) -> Schedule {
    let n = u64::from(c.ranks());
    match c.kind {
        CollectiveKind::AllToAll => return pairwise(c, size),
        CollectiveKind::SendRecv => return sendrecv(c, size),
        _ => {}
    }
    let (algorithm, protocol) = super::tuner::pick(c, size, net);
    if algorithm == Algorithm::Tree {
        return tree(c, size, protocol);
    }
    // A broadcast moves the whole buffer down the chain; the others a rank's share.
    let broadcast = c.kind == CollectiveKind::Broadcast;
    let owners = if broadcast { 1 } else { n };
    let share = size.div_ceil(owners * u64::from(c.channels)).max(1);
    let (loops, slices) = if protocol == Protocol::Simple && !broadcast {
        let chunk_max = simple_step(c) * u64::from(CHUNK_STEPS);
        let slice_max = simple_step(c) * u64::from(SLICE_STEPS);
        let loops = share.div_ceil(chunk_max);
        let per_loop = share.div_ceil(loops);
        let per_chunk = u64::from(CHUNK_STEPS / SLICE_STEPS);
        let slices = per_loop
            .div_ceil(slice_max / MIN_SLICE_DIVISOR)
            .clamp(1, per_chunk);
        (loops, slices)
    } else {
        // One step per chunk and per slice.
        (share.div_ceil(step_data_bytes(protocol, simple_step(c))), 1)
    };
    let data_bytes = share.div_ceil(loops * slices);
    let sends = sends(c.kind, n);
    let messages = loops * sends * slices;
    let reduce = match c.kind {
        // Sends 1..n-1 of each loop carry what the rank received, reduced into its own.
        CollectiveKind::AllReduce => ReduceRule {
            delay: 0,
            period: (sends * slices) as u32,
            from: slices as u32,
            to: (n * slices) as u32,
            first: 0,
        },
        // Every send but the first loop's first reduces (the first of a later loop follows
        // the previous loop's last receive, which reduces into the result).
        CollectiveKind::ReduceScatter => ReduceRule {
            delay: 0,
            period: 1,
            from: 0,
            to: 1,
            first: slices as u32,
        },
        CollectiveKind::AllGather
        | CollectiveKind::AllToAll
        | CollectiveKind::Broadcast
        | CollectiveKind::SendRecv => ReduceRule::NONE,
    };
    let window = match protocol {
        // A broadcast's slice is one step (BROADCAST_SLICESTEPS 1).
        Protocol::Simple | Protocol::Auto if !broadcast => STEPS / SLICE_STEPS,
        _ => STEPS,
    };
    Schedule {
        algorithm: Algorithm::Ring,
        protocol,
        message_bytes: line_bytes(protocol, data_bytes),
        data_bytes,
        messages: u32::try_from(messages).unwrap_or(u32::MAX),
        // A broadcast's chunk k leaves a rank once chunk k has arrived: the same message of
        // the edge before; the others wait for the previous send's slice.
        lag: if broadcast { 0 } else { slices as u32 },
        window: window.max(1),
        reduce,
        parts: None,
    }
}

/// The tree all-reduce's schedule (NCCL's `runTreeSplit`, `src/device/all_reduce.h`, and its
/// chunking in `calcCollChunking`, `src/enqueue.cc`): each channel takes size / channels of
/// the buffer (NCCL splits the count over channels, CBD) and moves it in chunks of one step
/// (a tree gets one step per chunk and per slice in every protocol: Simple 512 KiB, LL 32 KiB
/// of data, LL128 576,000 bytes, halved while the buffer is small against the tree's depth,
/// NCCL's own loop for Tree/LL128), each chunk one message on every edge, NCCL_STEPS in flight
/// per connection. Message k of an edge waits for message k of the edges that feed it (lag 0:
/// a chunk goes up as soon as every child has sent it, and down as soon as the parent has
/// it); the reductions are the flows' own (`FlowDeps::reduce`: a rank with children, and the
/// root's sends down), at the GPU's reduce rate. Simplifications: every chunk of a point has
/// one size (the share over the chunks, rounded up to a byte); the root and the split ranks'
/// two thread groups (reduce up, broadcast down) run as independent flows with the full
/// reduction rate each, where NCCL halves a rank's threads between them.
fn tree(c: &Collective, size: u64, protocol: Protocol) -> Schedule {
    let channels = u64::from(c.channels).max(1);
    let share = size.div_ceil(channels).max(1);
    let mut chunk = step_data_bytes(protocol, simple_step(c));
    if protocol == Protocol::Ll128 {
        // NCCL: nstepsLL128 = 1 + log2i(nNodes) + 0.1 ppn; halve the chunk (not under 128
        // KiB) while nBytes / (nChannels chunk) < nstepsLL128 x 64 / ppn, then (not under 32
        // KiB) while it is < nstepsLL128 x 16 / ppn; in tenths, integers only.
        let nodes = c.hosts.len().max(1) as u64;
        let ppn = u64::from(c.gpus_per_host).max(1);
        let steps10 = 10 + 10 * u64::from(nodes.ilog2()) + ppn;
        let below = |chunk: u64, k: u64| {
            let q = size / channels.saturating_mul(chunk).max(1);
            q.saturating_mul(10 * ppn) < steps10 * k
        };
        while below(chunk, 64) && chunk > 131_072 {
            chunk /= 2;
        }
        while below(chunk, 16) && chunk > 32_768 {
            chunk /= 2;
        }
    }
    let messages = share.div_ceil(chunk.max(1)).max(1);
    let data_bytes = share.div_ceil(messages);
    Schedule {
        algorithm: Algorithm::Tree,
        protocol,
        message_bytes: line_bytes(protocol, data_bytes),
        data_bytes,
        messages: u32::try_from(messages).unwrap_or(u32::MAX),
        lag: 0,
        window: STEPS,
        reduce: ReduceRule::NONE,
        parts: None,
    }
}

/// NCCL_P2P_NET_CHUNKSIZE's default: a send to a peer goes in chunks of 128 KiB across nodes.
pub const P2P_NET_CHUNK: u64 = 128 << 10;
/// NCCL_P2P_NVL_CHUNKSIZE's default: 512 KiB where every peer is over NVLink (one node).
pub const P2P_NVL_CHUNK: u64 = 512 << 10;

/// An all-to-all's schedule: each ordered pair of ranks moves size / n ([`p2p_chunks`]: in
/// NCCL's p2p chunks, or in LL where the pair's share is at most 16 KiB a channel), NCCL_STEPS
/// chunks in flight per connection. One flow a pair: where NCCL would stripe a pair's share
/// over several channels (a share over a chunk across nodes), its chunks go one flow's way
/// (an all-to-all's other pairs run side by side).
fn pairwise(c: &Collective, size: u64) -> Schedule {
    let n = u64::from(c.ranks());
    let bytes = (size / n).max(1);
    let (protocol, _, chunk) = p2p_chunks(c, bytes);
    p2p_schedule(protocol, bytes, chunk, None)
}

/// A p2p flow's schedule: `bytes` in `protocol`, in messages of at most `chunk` data bytes
/// (one size: the bytes over the chunks, rounded up to a byte), NCCL_STEPS in flight, nothing
/// gating it (lag 0), no reduction; `parts` a sendrecv's channels.
fn p2p_schedule(protocol: Protocol, bytes: u64, chunk: u64, parts: Option<u32>) -> Schedule {
    let messages = bytes.div_ceil(chunk.max(1)).max(1);
    let data_bytes = bytes.div_ceil(messages);
    Schedule {
        algorithm: Algorithm::Ring,
        protocol,
        message_bytes: line_bytes(protocol, data_bytes),
        data_bytes,
        messages: u32::try_from(messages).unwrap_or(u32::MAX),
        lag: 0,
        window: STEPS,
        reduce: ReduceRule::NONE,
        parts,
    }
}

/// NCCL_P2P_PCI_CHUNKSIZE's default: 128 KiB where a node's GPUs talk over PCIe.
pub const P2P_PCI_CHUNK: u64 = 128 << 10;

/// How NCCL moves one p2p operation of `bytes` with one peer (`src/enqueue.cc`,
/// `addP2pToPlan`): the protocol, the channels it stripes over
/// ([`P2pChannels::op_channels`]) and the data bytes of each chunk. The chunk is the
/// communicator's p2p chunk size (128 KiB across nodes, 512 KiB within one over NVLink, 128 KiB
/// over PCIe), across nodes a quarter of it where the bytes are under one chunk, half under
/// eight; LL (NCCL_P2P_LL_THRESHOLD: at most 16 KiB a channel) moves LL's steps (64 KiB of
/// lines, 32 KiB of data; across nodes halved under eight steps). Simplification: across
/// nodes every pair takes the network pairs' chunk (NCCL halves or quarters only the chunks
/// of a pair that crosses the network, at sizes under 1 MiB).
///
/// [`P2pChannels::op_channels`]: crate::config::p2p_channels::P2pChannels::op_channels
fn p2p_chunks(c: &Collective, bytes: u64) -> (Protocol, u32, u64) {
    let nodes = c.hosts.len() as u32;
    let step = if nodes > 1 {
        P2P_NET_CHUNK
    } else if c.graph.nvlink {
        P2P_NVL_CHUNK
    } else {
        P2P_PCI_CHUNK
    };
    // NCCL keeps the p2p chunk within a Simple step (`src/init.cc`).
    let step = step.min(simple_step(c));
    let parts = c.p2p.op_channels(c.ranks(), nodes, bytes, step);
    let ll = bytes <= u64::from(parts) * LL_THRESHOLD;
    let (protocol, step) = if ll {
        (Protocol::Ll, LL_BUFF_BYTES / u64::from(STEPS))
    } else {
        (Protocol::Simple, step)
    };
    let mut chunk = step;
    if nodes > 1 {
        if !ll && bytes < step {
            chunk /= 4;
        } else if bytes < 8 * step {
            chunk /= 2;
        }
    }
    let data = if ll { chunk / 2 } else { chunk };
    (protocol, parts, data.max(1))
}

/// A sendrecv's schedule: each pair moves the whole size, striped over the channels NCCL
/// gives one operation of that size, each channel's part in the chunks of [`p2p_chunks`],
/// NCCL_STEPS chunks in flight per channel.
fn sendrecv(c: &Collective, size: u64) -> Schedule {
    let bytes = size.max(1);
    let (protocol, parts, chunk) = p2p_chunks(c, bytes);
    let part = bytes.div_ceil(u64::from(parts));
    p2p_schedule(protocol, part, chunk, Some(parts))
}

/// Chunks each rank sends per loop: all-reduce 2(n-1), the others n-1.
fn sends(kind: CollectiveKind, n: u64) -> u64 {
    match kind {
        CollectiveKind::AllReduce => 2 * (n - 1),
        CollectiveKind::AllGather | CollectiveKind::ReduceScatter | CollectiveKind::AllToAll => {
            n - 1
        }
        // Each edge of the chain passes each chunk on once.
        CollectiveKind::Broadcast | CollectiveKind::SendRecv => 1,
    }
}

/// nccl-tests' bus bandwidth factor (`GetBw` in its `src/*.cu`): all-reduce 2(n-1)/n,
/// all-gather, reduce-scatter and all-to-all (n-1)/n, broadcast and sendrecv 1, as
/// (numerator, denominator).
pub fn busbw_factor(kind: CollectiveKind, ranks: u32) -> (u64, u64) {
    let n = u64::from(ranks);
    match kind {
        CollectiveKind::AllReduce => (2 * (n - 1), n),
        CollectiveKind::AllGather | CollectiveKind::ReduceScatter | CollectiveKind::AllToAll => {
            (n - 1, n)
        }
        CollectiveKind::Broadcast | CollectiveKind::SendRecv => (1, 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::collective::{Algorithm, Protocol};

    const NET: super::super::tuner::Net = super::super::tuner::Net {
        path: crate::config::PathKind::Auto,
        pxn: true,
    };

    fn ring(kind: CollectiveKind, hosts: usize, gpus: u32, channels: u32) -> Collective {
        Collective {
            kind,
            algorithm: Algorithm::Ring,
            protocol: Protocol::Simple,
            graph: crate::config::collective::NcclGraph::default(),
            tree_start: usize::MAX,
            root: 0,
            p2p: Default::default(),
            buff_bytes: crate::config::collective::DEFAULT_BUFFSIZE,
            hosts: (0..hosts).collect(),
            gpus_per_host: gpus,
            channels,
        }
    }

    #[test]
    fn a_small_buffer_is_one_slice_per_send() {
        // 4 ranks x 2 channels, 64 KiB: 8 KiB per rank and channel, one loop of one slice.
        let s = schedule(&ring(CollectiveKind::AllReduce, 4, 1, 2), 64 << 10, NET);
        assert_eq!(s.message_bytes, 8 << 10);
        assert_eq!((s.messages, s.lag, s.window), (6, 1, 4));
        // Sends 1, 2, 3 reduce; 0, 4, 5 do not.
        assert_eq!(s.reduce.delay, 0, "the delay is set per machine");
        let paying: Vec<u32> = (0..6)
            .filter(|&k| {
                ReduceRule {
                    delay: 1,
                    ..s.reduce
                }
                .delay_of(k)
                    > 0
            })
            .collect();
        assert_eq!(paying, [1, 2, 3]);
    }

    #[test]
    fn a_large_buffer_loops_in_chunks_of_slices() {
        // 2 ranks x 1 channel, 8 MiB all-gather: a 4 MiB share, 2 loops of 2 MiB chunks, each
        // two 1 MiB slices; one send a loop.
        let s = schedule(&ring(CollectiveKind::AllGather, 2, 1, 1), 8 << 20, NET);
        assert_eq!(s.message_bytes, 1 << 20);
        assert_eq!((s.messages, s.lag), (4, 2));
        assert_eq!(s.reduce, ReduceRule::NONE);
        // The bytes a flow moves are the share each send, to within a byte per slice.
        let moved = u64::from(s.messages) * s.message_bytes;
        assert_eq!(moved, 4 << 20);
    }

    /// NCCL_BUFFSIZE (`buffsize`) sets the Simple step: 1 MiB gives steps of 128 KiB, so the
    /// 8 MiB all-gather above goes in 8 loops of 512 KiB chunks, two 256 KiB slices each; the
    /// tree's Simple chunk is one step; a p2p chunk stays within a step (64 KiB at 512 KiB).
    #[test]
    fn the_buffsize_sets_the_simple_step() {
        let mut c = ring(CollectiveKind::AllGather, 2, 1, 1);
        c.buff_bytes = 1 << 20;
        let s = schedule(&c, 8 << 20, NET);
        assert_eq!((s.message_bytes, s.messages, s.lag), (256 << 10, 16, 2));
        let mut t = ring(CollectiveKind::AllReduce, 2, 1, 1);
        t.algorithm = Algorithm::Tree;
        t.buff_bytes = 1 << 20;
        let s = schedule(&t, 2 << 20, NET);
        assert_eq!((s.message_bytes, s.messages), (128 << 10, 16));
        let mut a = ring(CollectiveKind::AllToAll, 2, 8, 1);
        a.buff_bytes = 512 << 10;
        let s = schedule(&a, 64 << 20, NET);
        assert_eq!((s.message_bytes, s.messages), (64 << 10, 64));
    }

    #[test]
    fn reduce_scatter_reduces_all_but_the_first_chunk() {
        let s = schedule(&ring(CollectiveKind::ReduceScatter, 4, 1, 1), 24 << 20, NET);
        // Share 6 MiB: 3 loops of 2 MiB, 2 slices each, 3 sends a loop.
        assert_eq!((s.messages, s.lag, s.message_bytes), (18, 2, 1 << 20));
        let rule = ReduceRule {
            delay: 1,
            ..s.reduce
        };
        assert_eq!(rule.delay_of(0) + rule.delay_of(1), 0);
        assert!((2..18).all(|k| rule.delay_of(k) == 1));
    }

    #[test]
    fn uneven_shares_round_up_by_less_than_a_byte_per_slice() {
        let c = ring(CollectiveKind::AllReduce, 3, 1, 3);
        for size in [1u64, 7, 1000, 3 << 20, (5 << 20) + 3, 1 << 30] {
            let s = schedule(&c, size, NET);
            let share = size.div_ceil(9).max(1);
            let per_send = u64::from(s.messages) / sends(c.kind, 3) * s.message_bytes;
            let slices = u64::from(s.messages) / sends(c.kind, 3);
            assert!(per_send >= share && per_send < share + slices, "{size}");
            assert!(s.message_bytes <= simple_step(&c) * u64::from(SLICE_STEPS));
        }
    }

    #[test]
    fn all_to_all_sends_each_pair_its_share_in_p2p_chunks() {
        // 16 ranks over 2 hosts, 64 MiB a rank: 4 MiB a pair in 32 chunks of 128 KiB.
        let s = schedule(&ring(CollectiveKind::AllToAll, 2, 8, 1), 64 << 20, NET);
        assert_eq!((s.message_bytes, s.messages, s.window), (128 << 10, 32, 8));
        // 512 KiB a pair (under 8 chunks): 64 KiB chunks; 16 KiB a pair: one of 16 KiB.
        let s = schedule(&ring(CollectiveKind::AllToAll, 2, 8, 1), 8 << 20, NET);
        assert_eq!((s.message_bytes, s.messages), (64 << 10, 8));
        // 16 KiB a pair: NCCL's p2p LL (at most 16 KiB a channel), one step of lines.
        let s = schedule(&ring(CollectiveKind::AllToAll, 2, 8, 1), 256 << 10, NET);
        assert_eq!(s.protocol, Protocol::Ll);
        assert_eq!(
            (s.data_bytes, s.message_bytes, s.messages),
            (16 << 10, 32 << 10, 1)
        );
        let s = schedule(&ring(CollectiveKind::AllToAll, 2, 8, 1), 512 << 10, NET);
        assert_eq!(
            (s.protocol, s.message_bytes, s.messages),
            (Protocol::Simple, 32 << 10, 1)
        );
        // One node: NVLink chunks of 512 KiB; over PCIe 128 KiB.
        let mut one = ring(CollectiveKind::AllToAll, 1, 8, 1);
        one.graph.nvlink = true;
        let s = schedule(&one, 64 << 20, NET);
        assert_eq!((s.message_bytes, s.messages), (512 << 10, 16));
        one.graph.nvlink = false;
        let s = schedule(&one, 64 << 20, NET);
        assert_eq!((s.message_bytes, s.messages), (128 << 10, 64));
        assert_eq!(s.reduce, ReduceRule::NONE);
    }

    /// The tree: each channel's size / channels in chunks of one step, lag 0 (chunk k waits for
    /// chunk k), 8 in flight, no periodic reduction (the flows marked `reduce` pay it).
    #[test]
    fn the_tree_cuts_each_channels_share_into_steps() {
        let mut c = ring(CollectiveKind::AllReduce, 2, 1, 1);
        c.algorithm = Algorithm::Tree;
        let s = schedule(&c, 2 << 20, NET);
        assert_eq!(s.algorithm, Algorithm::Tree);
        assert_eq!(
            (s.message_bytes, s.messages, s.lag, s.window),
            (512 << 10, 4, 0, 8)
        );
        assert_eq!(s.reduce, ReduceRule::NONE);
        // 16 channels of 1 MiB: 64 KiB a channel, one chunk.
        c.channels = 16;
        let s = schedule(&c, 1 << 20, NET);
        assert_eq!((s.data_bytes, s.messages), (64 << 10, 1));
        // LL: 32 KiB of data a chunk, lines on the wire.
        c.protocol = Protocol::Ll;
        let s = schedule(&c, 1 << 20, NET);
        assert_eq!(
            (s.data_bytes, s.message_bytes, s.messages),
            (32 << 10, 64 << 10, 2)
        );
        // LL128 on 2 x 8 GPUs, 16 channels, 1 MiB: NCCL halves 576,000 to 72,000 (not under
        // 128 KiB: 144,000 > 131,072 halves once more), then to 18,000 (36,000 > 32,768).
        let mut c = ring(CollectiveKind::AllReduce, 2, 8, 16);
        c.algorithm = Algorithm::Tree;
        c.protocol = Protocol::Ll128;
        let s = schedule(&c, 1 << 20, NET);
        assert_eq!((s.messages, s.data_bytes), (4, 16 << 10));
        // 1 GiB: no halving, 576,000-byte chunks.
        let s = schedule(&c, 1 << 30, NET);
        assert_eq!(s.messages, (1u64 << 26).div_ceil(576_000) as u32);
    }

    #[test]
    fn busbw_factors_are_nccl_tests() {
        assert_eq!(busbw_factor(CollectiveKind::AllReduce, 8), (14, 8));
        assert_eq!(busbw_factor(CollectiveKind::AllGather, 16), (15, 16));
        assert_eq!(busbw_factor(CollectiveKind::Broadcast, 16), (1, 1));
        assert_eq!(busbw_factor(CollectiveKind::SendRecv, 16), (1, 1));
    }

    /// A broadcast moves the whole buffer down the chain: each channel's size / channels in
    /// chunks of one step (BROADCAST_CHUNKSTEPS = SLICESTEPS = 1: 512 KiB in Simple), chunk k
    /// of an edge waiting for chunk k of the edge before (lag 0), 8 in flight, no reduction.
    #[test]
    fn a_broadcast_passes_each_channels_buffer_on_in_steps() {
        let c = ring(CollectiveKind::Broadcast, 2, 8, 16);
        let s = schedule(&c, 64 << 20, NET);
        assert_eq!(
            (s.message_bytes, s.messages, s.lag, s.window),
            (512 << 10, 8, 0, 8)
        );
        assert_eq!((s.reduce, s.parts), (ReduceRule::NONE, None));
        // A small buffer: one message of the channel's share.
        let s = schedule(&c, 64 << 10, NET);
        assert_eq!((s.message_bytes, s.messages), (4 << 10, 1));
        // LL: 32 KiB of data a step, twice that on the links.
        let mut ll = c.clone();
        ll.protocol = Protocol::Ll;
        let s = schedule(&ll, 1 << 20, NET);
        assert_eq!(
            (s.data_bytes, s.message_bytes, s.messages),
            (32 << 10, 64 << 10, 2)
        );
    }

    /// A sendrecv on two DGX H100 (p2p: 4 channels a peer of 16): 8 B in LL on one channel (a
    /// 16-byte line); 1 MiB in Simple over 4 channels of 256 KiB, each in 128 KiB chunks (the
    /// pair's bytes are not under 8 chunks); 256 KiB over 2 channels in 64 KiB chunks (under 8
    /// chunks: half). In one node (32 of 32 channels, NVLink): 1 GiB over 32 channels in 512
    /// KiB chunks. Only the rounds of the channels used run.
    #[test]
    fn a_sendrecv_stripes_each_pair_over_nccls_p2p_channels() {
        use crate::config::p2p_channels::P2pChannels;
        let mut c = ring(CollectiveKind::SendRecv, 2, 8, 16);
        c.p2p = P2pChannels {
            per_peer: 4,
            channels: 16,
        };
        let s = schedule(&c, 8, NET);
        assert_eq!(s.protocol, Protocol::Ll);
        assert_eq!(
            (s.parts, s.messages, s.data_bytes, s.message_bytes),
            (Some(1), 1, 8, 16)
        );
        assert_eq!(running(&c, &s, 64), 0..16);
        let s = schedule(&c, 1 << 20, NET);
        assert_eq!(s.protocol, Protocol::Simple);
        assert_eq!(
            (s.parts, s.messages, s.message_bytes),
            (Some(4), 2, 128 << 10)
        );
        assert_eq!(running(&c, &s, 64), 0..64);
        let s = schedule(&c, 256 << 10, NET);
        assert_eq!(
            (s.parts, s.messages, s.message_bytes),
            (Some(2), 2, 64 << 10)
        );
        assert_eq!((s.lag, s.window, s.reduce), (0, 8, ReduceRule::NONE));
        let mut one = ring(CollectiveKind::SendRecv, 1, 8, 24);
        one.graph.nvlink = true;
        one.p2p = P2pChannels {
            per_peer: 32,
            channels: 32,
        };
        let s = schedule(&one, 1 << 30, NET);
        assert_eq!(
            (s.parts, s.messages, s.message_bytes),
            (Some(32), 64, 512 << 10)
        );
    }
}

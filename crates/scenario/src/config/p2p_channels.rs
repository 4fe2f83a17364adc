//! NCCL's channels for point-to-point operations (ncclSend / ncclRecv, so nccl-tests'
//! sendrecv_perf): how many channels one peer may get, as NCCL works it out from the machine
//! when a communicator starts (NVIDIA/nccl 2.30 `src/graph/paths.cc`,
//! `ncclTopoGetNchannels`, `ncclTopoComputeP2pChannelsPerPeer`, `ncclTopoComputeP2pChannels`),
//! and how many of them one operation of a given size stripes its bytes over
//! (`src/enqueue.cc`, `addP2pToPlan` and its caller). A pair that gets more channels moves its
//! bytes with more thread blocks and more connections side by side: over NVLink one thread
//! block's stores do not fill the link, so the count decides what a send-receive reaches.

/// NCCL_P2P_PER_CHANNEL_NET_BW's default (`src/graph/paths.cc`): a peer across the network
/// gets one channel per this many GB/s of its GPU's local NICs (at least one per NIC).
pub const PER_CHANNEL_NET_GBPS: u64 = 14;
/// NCCL_MAX_DEV_WORK_P2P_PER_BATCH (`src/include/device.h`): p2p operations one channel runs
/// at once.
pub const P2P_PER_BATCH: u32 = 8;
/// NCCL_P2P_LL_THRESHOLD's default (`src/enqueue.cc`): an operation of at most this many bytes
/// per channel goes in LL.
pub const LL_THRESHOLD: u64 = 16_384;
/// MAXCHANNELS.
const MAX: u32 = 64;

/// What NCCL's topology search leaves for p2p operations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct P2pChannels {
    /// p2pnChannelsPerPeer: the most channels one operation with one peer stripes over.
    pub per_peer: u32,
    /// p2pnChannels: the channels p2p operations may use in all.
    pub channels: u32,
}

/// One peer's channels as `ncclTopoGetNchannels` counts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// A GPU of the same node over NVLink: `links` NVLinks on the path (NCCL: path bandwidth
    /// over one NVLink's, the NVLinks of the narrower end through an NVSwitch).
    NvLink {
        /// NVLinks on the path.
        links: u32,
    },
    /// A GPU of the same node over PCIe.
    Pcie,
    /// A GPU of another node: the sender GPU's local NICs NCCL counts (`netCount`) and their
    /// bandwidth in all, GB/s (`netBw`, `ncclTopoGetLocalNetCountByBw`).
    Net {
        /// Local NICs counted.
        nics: u32,
        /// Their bandwidth in all, GB/s.
        gbps: u64,
    },
}

impl Peer {
    /// Channels NCCL gives this peer: NVLink 2 x max(1, links), PCIe 2, the network at least
    /// one per local NIC and one per [`PER_CHANNEL_NET_GBPS`] of their bandwidth.
    pub fn channels(self) -> u32 {
        match self {
            Peer::NvLink { links } => 2 * links.max(1),
            Peer::Pcie => 2,
            Peer::Net { nics: 0, .. } => 2,
            Peer::Net { nics, gbps } => nics.max(gbps.div_ceil(PER_CHANNEL_NET_GBPS) as u32),
        }
    }
}

impl P2pChannels {
    /// NCCL's figures for a rank whose peers are `peers`, in a communicator of `nodes` nodes
    /// whose collectives run `nchannels` channels, at most `max_peers` peers per operation
    /// group (the communicator's maxP2pPeers: its rank count unless set; nccl-tests'
    /// sendrecv sets 2): per peer the fewest channels any peer gets, rounded up to a power of
    /// two; in all the collectives' channels rounded up to a power of two (at most 64); across
    /// nodes the per-peer count halved while that many for every batch of
    /// [`P2P_PER_BATCH`] peers would not fit, within one node at most the count in all.
    pub fn of(peers: &[Peer], nodes: u32, nchannels: u32, max_peers: u32) -> P2pChannels {
        let fewest = peers
            .iter()
            .map(|p| p.channels())
            .min()
            .unwrap_or(1)
            .clamp(1, MAX);
        let mut per_peer = fewest.next_power_of_two();
        let channels = nchannels.clamp(1, MAX).next_power_of_two();
        if nodes > 1 {
            let batches = max_peers.max(1).div_ceil(P2P_PER_BATCH);
            while per_peer.saturating_mul(batches) > channels && per_peer > 1 {
                per_peer /= 2;
            }
        } else {
            per_peer = per_peer.min(channels);
        }
        P2pChannels { per_peer, channels }
    }

    /// The channels one operation of `bytes` with one peer stripes over, in a communicator of
    /// `ranks` ranks on `nodes` nodes whose p2p chunk is `step` bytes (`addP2pToPlan`): at
    /// most `per_peer / 2^k` to start with, the least k that lets every rank have its own
    /// channels; no more than one per minimum part (half a chunk across nodes, an eighth
    /// within one); doubled (up to `per_peer`) while a part is over its maximum (a chunk
    /// across nodes, 32 within one). At least one.
    pub fn op_channels(&self, ranks: u32, nodes: u32, bytes: u64, step: u64) -> u32 {
        let mut min = self.per_peer.max(1);
        while min.saturating_mul(ranks) > self.channels && min > 1 {
            min /= 2;
        }
        if bytes == 0 {
            return 1;
        }
        let (min_part, max_part) = if nodes > 1 {
            (step / 2, step)
        } else {
            (step / 8, step.saturating_mul(32))
        };
        let parts = bytes.div_ceil(min_part.max(1)).min(u64::from(min)) as u32;
        let mut n = parts.max(1);
        let mut part = min_part.max(bytes.div_ceil(u64::from(n)));
        while part > max_part && n <= self.per_peer / 2 {
            n *= 2;
            part = bytes.div_ceil(u64::from(n));
        }
        n
    }
}

/// NCCL's PCIe bandwidth of a link, GB/s x 1000 (`src/graph/xml.h` kvDictPciGen: the lane's
/// rate / 80, so 0.75 GB/s a Gen3 lane, 3 a Gen5 lane).
pub fn pcie_mbps(generation: u32, width: u32) -> u64 {
    let per_lane: u64 = match generation {
        0 | 1 => 188,
        2 => 375,
        3 => 750,
        4 => 1_500,
        5 => 3_000,
        _ => 6_000,
    };
    per_lane * u64::from(width)
}

/// `ncclTopoGetLocalNetCountByBw`: the GPU's local NICs (bandwidth of each, MB/s, in NCCL's
/// order) counted until their bandwidth reaches the GPU's own (`gpu_mbps`, its path to the
/// CPU): the count and their bandwidth in all, GB/s rounded down.
pub fn local_nets(nics_mbps: &[u64], gpu_mbps: u64) -> Peer {
    let mut total = 0u64;
    let mut nics = 0u32;
    for &bw in nics_mbps {
        total = total.saturating_add(bw);
        nics += 1;
        if total >= gpu_mbps {
            break;
        }
    }
    Peer::Net {
        nics,
        gbps: total / 1000,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A DGX H100 (H100 SXM: 18 NVLinks to the NVSwitches; one 400G NIC a GPU, PCIe Gen5 x16):
    /// NVLink peers get 36 channels, a network peer max(1, ceil(48 / 14)) = 4 (the NIC's path
    /// at its Gen5 x16 link's 48 GB/s). Two nodes of 16 channels: 4 a peer; one node of 24
    /// channels: 32 (36 rounded up to 64, at most 32 in all).
    #[test]
    fn a_dgx_h100_gives_a_peer_nccls_channels() {
        let nv = Peer::NvLink { links: 18 };
        let net = local_nets(&[pcie_mbps(5, 16)], pcie_mbps(5, 16));
        assert_eq!(net, Peer::Net { nics: 1, gbps: 48 });
        assert_eq!((nv.channels(), net.channels()), (36, 4));
        let two = P2pChannels::of(
            &[nv; 7].iter().copied().chain([net]).collect::<Vec<_>>(),
            2,
            16,
            2,
        );
        assert_eq!(
            two,
            P2pChannels {
                per_peer: 4,
                channels: 16
            }
        );
        let one = P2pChannels::of(&[nv; 7], 1, 24, 8);
        assert_eq!(
            one,
            P2pChannels {
                per_peer: 32,
                channels: 32
            }
        );
        // 128 peers a group (an all-to-all of 16 nodes): 16 batches of 8, 4 x 16 > 16 halves
        // it to 1.
        let many = P2pChannels::of(&[net], 16, 16, 128);
        assert_eq!(many.per_peer, 1);
        assert_eq!(Peer::Pcie.channels(), 2);
    }

    /// `addP2pToPlan` on those figures: across two nodes (16 ranks, 16 channels) a pair starts
    /// on one channel (4 x 16 > 16 halves to 1), then doubles while a part is over 128 KiB,
    /// to 4 at most; within one node (8 ranks, 32 channels) it starts on 4 (32 x 8 > 32 down
    /// to 4), no more than one per 64 KiB, and doubles while a part is over 16 MiB, to 32.
    #[test]
    fn an_operation_stripes_over_nccls_channels() {
        let two = P2pChannels {
            per_peer: 4,
            channels: 16,
        };
        let k = 128 << 10;
        assert_eq!(two.op_channels(16, 2, 8, k), 1);
        assert_eq!(two.op_channels(16, 2, 128 << 10, k), 1);
        assert_eq!(two.op_channels(16, 2, 200 << 10, k), 2);
        assert_eq!(two.op_channels(16, 2, 1 << 30, k), 4);
        let one = P2pChannels {
            per_peer: 32,
            channels: 32,
        };
        let k = 512 << 10;
        assert_eq!(one.op_channels(8, 1, 8, k), 1);
        assert_eq!(one.op_channels(8, 1, 100 << 10, k), 2);
        assert_eq!(one.op_channels(8, 1, 64 << 20, k), 4);
        assert_eq!(one.op_channels(8, 1, 65 << 20, k), 8);
        assert_eq!(one.op_channels(8, 1, 1 << 30, k), 32);
        assert_eq!(one.op_channels(8, 1, 0, k), 1);
    }

    /// Two HDR NICs local to an A100 (Gen4 x16, 24 GB/s): the first already reaches the GPU's
    /// bandwidth, so one NIC of 25 GB/s: 2 channels.
    #[test]
    fn local_nics_count_until_they_match_the_gpu() {
        let net = local_nets(&[25_000, 25_000], pcie_mbps(4, 16));
        assert_eq!(net, Peer::Net { nics: 1, gbps: 25 });
        assert_eq!(net.channels(), 2);
        let slow = local_nets(&[12_500, 12_500], pcie_mbps(4, 16));
        assert_eq!(slow, Peer::Net { nics: 2, gbps: 25 });
    }
}

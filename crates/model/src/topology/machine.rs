//! One host from its machine description: the PCIe tree (sockets, root complexes, switches,
//! GPUs, NICs and the links between them), its memories, NIC pipelines and socket links, each
//! place where traffic queues or waits as a channel.

use super::pcie;
use super::spec::{HostSpec, P2p};
use super::*;

/// Collects the channels of the whole cluster as hosts and the network are instantiated.
pub(super) struct Builder {
    pub(super) channels: Vec<ChannelSpec>,
}

impl Builder {
    pub(super) fn add(
        &mut self,
        name: String,
        kind: ChannelKind,
        rate: Rate,
        latency: Ps,
        overhead: [u64; 5],
        host: Option<usize>,
    ) -> ChannelId {
        self.channels.push(ChannelSpec {
            name,
            kind,
            rate,
            latency,
            overhead,
            host,
            jitter_median: 0,
            segment: 0,
        });
        ChannelId::from_index(self.channels.len() - 1)
    }
    /// A link that carries whatever crosses it in packets of its own (NVLink, NVLink-C2C): one
    /// `header` per `mps` bytes of payload for writes, read requests and read data; network
    /// units never cross it.
    pub(super) fn packetised(
        &mut self,
        name: String,
        kind: ChannelKind,
        rate: Rate,
        latency: Ps,
        (mps, header): (u64, u64),
        host: usize,
    ) -> ChannelId {
        let c = self.add(
            name,
            kind,
            rate,
            latency,
            [header, header, header, 0, 0],
            Some(host),
        );
        self.channels[c.index()].segment = mps;
        c
    }
    pub(super) fn latency_only(
        &mut self,
        name: String,
        kind: ChannelKind,
        latency: Ps,
        host: Option<usize>,
    ) -> ChannelId {
        self.add(name, kind, Rate::from_bps(0), latency, [0; 5], host)
    }
    fn cap(&mut self, name: String, p2p: P2p, host: usize) -> Option<ChannelId> {
        match p2p {
            P2p::Allowed(Some(rate)) => {
                Some(self.add(name, ChannelKind::P2pCap, rate, 0, [0; 5], Some(host)))
            }
            _ => None,
        }
    }
}

/// Instantiates host number `h` of the cluster; its channel names are prefixed with the host name
/// (`node-a/sw0`).
pub(super) fn build_host(b: &mut Builder, h: usize, host: &HostSpec) -> HostTopo {
    let m = &host.machine;
    let name = |n: &str| format!("{}/{}", host.name, n);
    let mut nodes: Vec<Node> = Vec::new();
    let dram = m
        .sockets
        .iter()
        .map(|s| {
            let id = b.add(
                name(&format!("{}.dram", s.name)),
                ChannelKind::HostMemory,
                // Sustained DMA reaches a share of the datasheet peak.
                s.dram.rate.scale(u64::from(s.dram_efficiency_pct), 100),
                s.dram.latency,
                [0; 5],
                Some(h),
            );
            b.channels[id.index()].jitter_median = s.dram.jitter_median;
            id
        })
        .collect();
    for (i, s) in m.sockets.iter().enumerate() {
        nodes.push(Node {
            name: s.name.clone(),
            kind: NodeKind::Socket(i),
            parent: None,
            link_mps: 0,
            link: (0, 0),
            socket: i,
            traverse: None,
        });
    }
    let mut rc_caps = Vec::new();
    for (i, rc) in m.root_complexes.iter().enumerate() {
        let socket = m
            .sockets
            .iter()
            .position(|s| s.name == rc.socket)
            .expect("validated");
        let traverse = b.latency_only(
            name(&rc.name),
            ChannelKind::RootComplex,
            rc.latency,
            Some(h),
        );
        nodes.push(Node {
            name: rc.name.clone(),
            kind: NodeKind::RootComplex(i),
            parent: None,
            link_mps: 0,
            link: (0, 0),
            socket,
            traverse: Some(traverse),
        });
        rc_caps.push((
            b.cap(name(&format!("{}.p2p-read", rc.name)), rc.p2p_read, h),
            b.cap(name(&format!("{}.p2p-write", rc.name)), rc.p2p_write, h),
        ));
    }
    for (i, sw) in m.switches.iter().enumerate() {
        let traverse = b.latency_only(name(&sw.name), ChannelKind::Switch, sw.latency, Some(h));
        nodes.push(Node {
            name: sw.name.clone(),
            kind: NodeKind::Switch(i),
            parent: None,
            link_mps: 0,
            link: (0, 0),
            socket: 0,
            traverse: Some(traverse),
        });
    }
    let gpu_memory = m
        .gpus
        .iter()
        .enumerate()
        .map(|(i, g)| {
            nodes.push(Node {
                name: g.name.clone(),
                kind: NodeKind::Gpu(i),
                parent: None,
                link_mps: 0,
                link: (0, 0),
                socket: 0,
                traverse: None,
            });
            let id = b.add(
                name(&format!("{}.mem", g.name)),
                ChannelKind::GpuMemory,
                g.memory.rate,
                g.memory.latency,
                [0; 5],
                Some(h),
            );
            b.channels[id.index()].jitter_median = g.memory.jitter_median;
            id
        })
        .collect();
    let nics = m
        .nics
        .iter()
        .enumerate()
        .map(|(i, n)| {
            nodes.push(Node {
                name: n.name.clone(),
                kind: NodeKind::Nic(i),
                parent: None,
                link_mps: 0,
                link: (0, 0),
                socket: 0,
                traverse: None,
            });
            // Each processing unit of the send engine serialises its QPs' WQEs: a rate such
            // that one 64-byte WQE takes wqe_interval times the units (so all units together
            // space WQEs by wqe_interval, the NIC's aggregate message rate).
            let units = n.processing_units.max(1);
            let spacing = n.wqe_interval as u128 * units as u128;
            let engine_rate = Rate::from_bps(
                (n.wqe_bytes as u128 * 8 * crate::units::PS_PER_S as u128)
                    .checked_div(spacing)
                    .unwrap_or(0) as u64,
            );
            let engine = (0..units)
                .map(|u| {
                    let unit = if u == 0 {
                        format!("{}.sq", n.name)
                    } else {
                        format!("{}.sq{u}", n.name)
                    };
                    b.add(
                        name(&unit),
                        ChannelKind::NicEngine,
                        engine_rate,
                        n.wqe_process,
                        [0; 5],
                        Some(h),
                    )
                })
                .min()
                .expect("at least one unit");
            NicChannels {
                engine,
                units,
                tx: b.latency_only(
                    name(&format!("{}.tx", n.name)),
                    ChannelKind::NicPipeline,
                    n.tx_pipeline,
                    Some(h),
                ),
                rx: b.latency_only(
                    name(&format!("{}.rx", n.name)),
                    ChannelKind::NicPipeline,
                    n.rx_pipeline,
                    Some(h),
                ),
            }
        })
        .collect();
    for link in &m.links {
        let up = nodes
            .iter()
            .position(|n| n.name == link.up)
            .expect("validated");
        let down = nodes
            .iter()
            .position(|n| n.name == link.down)
            .expect("validated");
        let rate = pcie::tlp_rate(link.generation, link.width, link.mps);
        let ovh = [
            pcie::request_overhead(link.generation, m.pcie.ecrc),
            pcie::request_overhead(link.generation, m.pcie.ecrc),
            pcie::completion_overhead(link.generation, m.pcie.ecrc),
            0,
            0,
        ];
        let kind = |upstream| ChannelKind::PcieLink {
            generation: link.generation,
            width: link.width,
            upstream,
        };
        let up_ch = b.add(
            name(&format!("pcie:{}>{}", link.down, link.up)),
            kind(true),
            rate,
            link.latency,
            ovh,
            Some(h),
        );
        let down_ch = b.add(
            name(&format!("pcie:{}>{}", link.up, link.down)),
            kind(false),
            rate,
            link.latency,
            ovh,
            Some(h),
        );
        nodes[down].parent = Some((up, up_ch, down_ch));
        nodes[down].link_mps = link.mps;
        nodes[down].link = (link.generation, link.width);
    }
    // A GPU on NVLink-C2C hangs from its socket.
    let mut c2c = Vec::new();
    for l in &m.c2c_links {
        let socket = m
            .sockets
            .iter()
            .position(|s| s.name == l.socket)
            .expect("validated");
        let gpu = nodes
            .iter()
            .position(|n| n.name == l.gpu)
            .expect("validated");
        // C2C carries PCIe TLPs and copy-engine transfers in its own packets.
        let ch = |b: &mut Builder, from: &str, to: &str| {
            b.packetised(
                name(&format!("c2c:{from}>{to}")),
                ChannelKind::C2c,
                l.rate,
                l.latency,
                (l.mps, l.overhead),
                h,
            )
        };
        let up = ch(b, &l.gpu, &l.socket);
        let down = ch(b, &l.socket, &l.gpu);
        nodes[gpu].socket = socket;
        c2c.push((socket, gpu, up, down));
    }
    // Sockets of tree nodes: follow parents up to a root complex.
    for i in 0..nodes.len() {
        let mut j = i;
        while let Some((p, _, _)) = nodes[j].parent {
            j = p;
        }
        nodes[i].socket = nodes[j].socket;
    }
    let socket_links: Vec<SocketLinkChannels> = m
        .socket_links
        .iter()
        .map(|l| {
            let a = m
                .sockets
                .iter()
                .position(|s| s.name == l.a)
                .expect("validated");
            let z = m
                .sockets
                .iter()
                .position(|s| s.name == l.b)
                .expect("validated");
            let ch = |b: &mut Builder, from: &str, to: &str| {
                b.add(
                    name(&format!("upi:{from}>{to}")),
                    ChannelKind::SocketLink,
                    l.rate,
                    l.latency,
                    [0; 5],
                    Some(h),
                )
            };
            // One cap channel per direction for P2P reads and one for P2P requests.
            let caps = |b: &mut Builder, what: &str, p2p: P2p| {
                [(&l.a, &l.b), (&l.b, &l.a)]
                    .map(|(x, y)| b.cap(name(&format!("upi:{x}>{y}.{what}")), p2p, h))
            };
            SocketLinkChannels {
                a,
                b: z,
                forward: ch(b, &l.a, &l.b),
                backward: ch(b, &l.b, &l.a),
                read_cap: caps(b, "p2p-read", l.p2p_read),
                write_cap: caps(b, "p2p-write", l.p2p_write),
            }
        })
        .collect();
    // The NVLink fabric, after every PCIe node and channel so that a machine without NVLink
    // numbers its nodes and channels as it always did.
    for (i, s) in m.nvswitches.iter().enumerate() {
        let traverse = b.latency_only(name(&s.name), ChannelKind::NvSwitch, s.latency, Some(h));
        nodes.push(Node {
            name: s.name.clone(),
            kind: NodeKind::NvSwitch(i),
            parent: None,
            link_mps: 0,
            link: (0, 0),
            socket: 0,
            traverse: Some(traverse),
        });
    }
    let mut edges = edges(&nodes, &socket_links);
    for (socket, gpu, up, down) in c2c {
        let a = nodes
            .iter()
            .position(|n| n.kind == NodeKind::Socket(socket))
            .expect("every socket is a node");
        edges.push(Edge {
            a,
            b: gpu,
            kind: EdgeKind::C2c { up, down },
        });
    }
    for l in &m.nvlinks {
        let at = |n: &str| nodes.iter().position(|x| x.name == n).expect("validated");
        let rate = Rate::from_bps(l.link_rate.bps().saturating_mul(u64::from(l.links)));
        let ch = |b: &mut Builder, from: &str, to: &str| {
            b.packetised(
                name(&format!("nvlink:{from}>{to}")),
                ChannelKind::NvLink { links: l.links },
                rate,
                l.latency,
                (l.mps, l.overhead),
                h,
            )
        };
        let kind = EdgeKind::NvLink {
            forward: ch(b, &l.a, &l.b),
            backward: ch(b, &l.b, &l.a),
            links: l.links,
        };
        edges.push(Edge {
            a: at(&l.a),
            b: at(&l.b),
            kind,
        });
    }
    let mut adjacent = vec![Vec::new(); nodes.len()];
    for (i, e) in edges.iter().enumerate() {
        adjacent[e.a].push(i);
        adjacent[e.b].push(i);
    }
    HostTopo {
        name: host.name.clone(),
        spec: m.clone(),
        nodes,
        dram,
        gpu_memory,
        nics,
        rc_caps,
        socket_links,
        edges,
        adjacent,
        paths: Default::default(),
    }
}

/// The typed edges of a host's graph: its PCIe links, each root complex's attachment to its
/// socket, and the links between sockets.
fn edges(nodes: &[Node], socket_links: &[SocketLinkChannels]) -> Vec<Edge> {
    let socket_node = |s: usize| {
        nodes
            .iter()
            .position(|n| n.kind == NodeKind::Socket(s))
            .expect("every socket is a node")
    };
    let mut edges = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        if let Some((up, up_ch, down_ch)) = n.parent {
            edges.push(Edge {
                a: up,
                b: i,
                kind: EdgeKind::Pcie {
                    up: up_ch,
                    down: down_ch,
                    mps: n.link_mps,
                },
            });
        }
        if let NodeKind::RootComplex(_) = n.kind {
            edges.push(Edge {
                a: socket_node(n.socket),
                b: i,
                kind: EdgeKind::Attach,
            });
        }
    }
    for (l, link) in socket_links.iter().enumerate() {
        edges.push(Edge {
            a: socket_node(link.a),
            b: socket_node(link.b),
            kind: EdgeKind::Socket { link: l },
        });
    }
    edges
}

//! NCCL's P2P transport between two GPUs of one host, as a collective's ring edge inside a
//! node uses it: the sending GPU's kernel stores each slice over NVLink (or PCIe peer to peer)
//! into the receiving GPU's FIFO buffer, then the FIFO's tail flag; the receiving kernel,
//! spinning on that flag in its own memory, sees it one memory access later. No copy engine,
//! no CPU thread, no NIC (NVIDIA/nccl `src/transport/p2p.cc`; NCCL_P2P_USE_CUDA_MEMCPY off).
//! The sender's slot comes back when the receiver has taken the slice (its head flag).
//!
//! In LL and LL128 the flag rides in every line of the data (NCCL's `prims_ll.h`,
//! `prims_ll128.h`): the receiver sees the slice when its lines land, with no fence and no
//! flag store after them; the lines' flag bytes are in the slice's size.

use super::build::{add, carries, done};
use super::paths::Built;
use crate::components::idle_transit;
use crate::config::FlowSpec;
use crate::config::collective::Protocol;
use crate::effective::SideMode;
use crate::plan::{Actor, Copy, GpuRef, Plan, StepKind};
use crate::record::Stage;
use crate::topology::{ChannelSpec, Flow, NodeKind, Place, RouteError, Topology, Unit};
use crate::units::Ps;

/// Bytes of the tail flag the sending kernel stores after a slice (one 8-byte word).
pub const TAIL_BYTES: u64 = 8;

/// When the tail flag, stored right after the data has landed, lands in the receiver's memory:
/// its write's crossing of `route` (the sender's memory, the links, the receiver's memory) on
/// idle channels ([`idle_transit`], the latency part of any bulk transfer). Under load the
/// write would also wait behind a unit of the other channels' data at each link (a 4 KiB
/// NVLink write is about 9 ns at 450 GB/s), which this leaves out: a slice of Simple moves in
/// microseconds, and a unit of its own per slice, crossing a route of half a dozen channels
/// among the bulk transfers, cost the simulation more events than the data did.
fn tail_crossing(route: &[&ChannelSpec]) -> Ps {
    idle_transit(route, Unit::Write, TAIL_BYTES, 1).0
}

/// The plan of one slice of `size` bytes (lines in LL and LL128) from the sender's GPU to the
/// receiver's, on one host, in `protocol`.
pub fn plan(
    topo: &Topology,
    flow: &FlowSpec,
    size: u64,
    protocol: Protocol,
) -> Result<Built, RouteError> {
    let host = flow.sender.host;
    let h = &topo.hosts[host];
    let (src, dst) = super::peer::gpu_pair(flow);
    let at = |g: usize| Place::Device(h.node_index(NodeKind::Gpu(g)));
    let mut p = Plan::new(size);
    let sm = |p: &mut Plan, gpu: usize| p.actor(Actor::Sm { host, gpu });
    let (tx, rx) = (sm(&mut p, src), sm(&mut p, dst));
    let route = h.route(at(src), at(dst), Flow::Write)?;
    let mut c = vec![h.gpu_memory[src]];
    c.extend(route.channels.iter().copied());
    c.push(h.gpu_memory[dst]);
    let copy = Copy::D2h {
        route: p.route(c.clone()),
        mps: route.mps,
    };
    let gpu = GpuRef { host, gpu: src };
    let ready = add(&mut p, StepKind::Wait { ps: 0 }, None, tx, vec![], None);
    let data = add(
        &mut p,
        StepKind::KernelCopy { gpu, copy },
        Some(Stage::P2p),
        tx,
        vec![done(ready)],
        None,
    );
    carries(&mut p, data, size, true);
    // The receiving kernel's next load of the flag finds it: after the tail flag's crossing
    // in Simple (stored after the data: the kernel fences between them), at once in LL and
    // LL128 (the flags came with the lines).
    let seen = h.spec.gpus[dst].memory.latency;
    let flag = match protocol {
        Protocol::Simple | Protocol::Auto => {
            let route: Vec<&ChannelSpec> = c.iter().map(|&x| &topo.channels[x.index()]).collect();
            tail_crossing(&route)
        }
        Protocol::Ll | Protocol::Ll128 => 0,
    };
    let look = add(
        &mut p,
        StepKind::Wait { ps: flag + seen },
        Some(Stage::P2p),
        rx,
        vec![done(data)],
        None,
    );
    super::peer::deliver_and_finish(&mut p, look, rx);
    // Each side driven from its own GPU's socket (its kernel, no CPU thread).
    let socket = |g: usize| h.nodes[h.node_index(NodeKind::Gpu(g))].socket;
    let (s, d) = (&h.spec.gpus[src].name, &h.spec.gpus[dst].name);
    let reason = format!("{s}'s kernel stores into {d}'s memory (NCCL P2P)");
    Ok(super::peer::between_gpus(
        h,
        flow,
        (p, size),
        socket,
        (SideMode::Direct, reason),
    ))
}

#[cfg(test)]
mod tests {
    use super::{TAIL_BYTES, tail_crossing};
    use crate::components::{Fabric, SimOptions};
    use crate::plan::{Actor, Copy, GpuRef, Plan, StepKind};
    use crate::scenario::build::{add, carries};
    use crate::topology::{ChannelSpec, Flow, NodeKind, Place};

    /// The tail flag's wait is what the fabric gives its write on the idle route: the 8-byte
    /// kernel store from GPU 0 to GPU 1 of a DGX H100 (its memory, NVLink out, NVSwitch,
    /// NVLink in, the peer's memory), run alone TLP by TLP, lands exactly `tail_crossing`
    /// after it starts (picoseconds, no queue, nothing beside it).
    #[test]
    fn the_tail_flag_takes_its_writes_crossing_of_the_idle_route() {
        let text = "name = \"p2p\"\n[sweep]\nsizes = [\"1MiB\"]\npaths = [\"gpudirect\"]\n\
                    ops = [\"write_imm\"]\n[[machines]]\nname = \"dgx\"\npreset = \"dgx-h100\"\n\
                    [[hosts]]\nname = \"a\"\nmachine = \"dgx\"\n[[scenarios]]\nname = \"s\"\n\
                    sender = { host = \"a\", nic = \"nic0\", gpu = \"gpu0\" }\n\
                    receiver = { host = \"a\", nic = \"nic1\", gpu = \"gpu1\" }\n";
        let cfg = crate::config::parse(text, "p2p.toml").unwrap();
        let topo = crate::scenario::topology(&cfg);
        let h = &topo.hosts[0];
        let at = |g: usize| Place::Device(h.node_index(NodeKind::Gpu(g)));
        let route = h.route(at(0), at(1), Flow::Write).unwrap();
        let mut c = vec![h.gpu_memory[0]];
        c.extend(route.channels.iter().copied());
        c.push(h.gpu_memory[1]);
        let specs: Vec<&ChannelSpec> = c.iter().map(|&x| &topo.channels[x.index()]).collect();
        assert!(specs.iter().filter(|s| s.is_server()).count() >= 3, "{c:?}");

        let mut p = Plan::new(TAIL_BYTES);
        let sm = p.actor(Actor::Sm { host: 0, gpu: 0 });
        let copy = Copy::D2h {
            route: p.route(c.clone()),
            mps: route.mps,
        };
        let gpu = GpuRef { host: 0, gpu: 0 };
        let store = add(
            &mut p,
            StepKind::KernelCopy { gpu, copy },
            None,
            sm,
            vec![],
            None,
        );
        carries(&mut p, store, TAIL_BYTES, false);
        super::super::peer::deliver_and_finish(&mut p, store, sm);
        let opts = SimOptions {
            tlp_granularity: true,
            coalesce_above: 16 << 10,
            jitter: false,
            seed: 1,
            record: false,
            traffic: false,
            sharing: crate::components::Sharing::EXACT,
        };
        let out = Fabric::new(&topo, &[&p], opts).run(1, 1);
        let (start, delivered) = out.messages[0];
        assert_eq!(delivered - start, tail_crossing(&specs));
    }
}

//! Plan builders: the steps of one message, with their dependencies, devices and routes.
//!
//! `write_imm` is RDMA Write with Immediate on any pair of sides (host memory, a staged GPU or
//! GPUDirect): the sender's thread (optionally copies the GPU buffer to a bounce buffer and
//! registers it, then) posts; its NIC gets the WQE, reads the payload and transmits it; the
//! receiving NIC writes it and a receive CQE that the receiver's thread polls; then the flush
//! or the copy back to the GPU; the receiver's ACK completes the sender's work request.

use super::paths::{SidePlan, Sides, Staging};
use crate::plan::{
    Actor, Buffer, Copy, CqeKind, Dep, DriverCopy, Gather, GpuRef, Handles, Milestone, NicRef,
    PacketKind, Plan, PlanRoute, ReadSpec, Step, StepId, StepKind,
};
use crate::record::Stage;
use crate::topology::spec::inline_wqe_bytes;
use crate::topology::{ChannelId, ChannelSpec, Flow, NodeKind, Place, RouteError, Topology, Unit};

/// Adds one step of control work to `p`.
pub(super) fn add(
    p: &mut Plan,
    kind: StepKind,
    stage: Option<Stage>,
    actor: u32,
    deps: Vec<Dep>,
    input: Option<StepId>,
) -> StepId {
    p.step(Step {
        kind,
        stage,
        actor,
        deps,
        input,
        bytes: 0,
        payload: false,
    })
}

/// Marks step `id` as moving `bytes` of data, the message's payload or not.
pub(super) fn carries(p: &mut Plan, id: StepId, bytes: u64, payload: bool) -> StepId {
    let s = &mut p.steps[id.index()];
    s.bytes = bytes;
    s.payload = payload;
    id
}

pub(super) fn done(step: StepId) -> Dep {
    Dep {
        step,
        on: Milestone::Done,
    }
}

/// After `step` in its thread's program order.
fn after_queued(step: Option<StepId>) -> Vec<Dep> {
    step.map(|s| Dep {
        step: s,
        on: Milestone::Queued,
    })
    .into_iter()
    .collect()
}

/// What a thread's poll of `cqe`, the completion announcing `write`, waits for: the CQE, and
/// where the two share their route's end (host memory), the CQE's place behind the data.
/// PCIe keeps posted writes in order along a shared route, so such a CQE is never visible
/// before the data it announces: TLP by TLP it queues behind the data's last write at every
/// server they share, but a bulk transfer's tail moves in the fluid sharing, which a unit may
/// pass, so the plan says how far behind it lands (see [`ordering_gap`]). Where the data goes
/// elsewhere (GPU memory) the CQE may well land first; that is what the GPUDirect flush is for.
fn poll_deps(p: &mut Plan, topo: &Topology, cqe: StepId, write: StepId) -> Vec<Dep> {
    let (StepKind::Cqe { nic, route, .. }, StepKind::DmaWrite { route: w, mps, .. }) =
        (&p.steps[cqe.index()].kind, &p.steps[write.index()].kind)
    else {
        unreachable!("a poll's CQE announces a DMA write")
    };
    let (cqe_route, data_route) = (&p.routes[(*route).index()], &p.routes[(*w).index()]);
    // Only data read by DMA can move as a bulk transfer (an inline payload goes TLP by TLP).
    let mut root = write;
    while let Some(from) = p.steps[root.index()].input {
        root = from;
    }
    let read = matches!(p.steps[root.index()].kind, StepKind::DmaRead { .. });
    let mut deps = vec![done(cqe)];
    if read && cqe_route.last().is_some() && cqe_route.last() == data_route.last() {
        let shared: Vec<&ChannelSpec> = cqe_route
            .iter()
            .filter(|c| data_route.contains(c))
            .map(|&c| &topo.channels[c.index()])
            .collect();
        let cqe_bytes = topo.hosts[nic.host].spec.nics[nic.nic].cqe_bytes;
        let size = p.steps[write.index()].bytes;
        let gap = ordering_gap(&shared, cqe_bytes, size, (*mps).max(1));
        let actor = p.steps[cqe.index()].actor;
        let kind = StepKind::Ordered { data: write, gap };
        deps.push(done(add(p, kind, None, actor, vec![done(write)], None)));
    }
    deps
}

/// How long after the data's last byte a posted write of `bytes` queued right behind it lands,
/// over the idle `shared` channels in route order, for data of `size` bytes written in TLPs of
/// at most `mps`. The data's last two TLPs (a full one and the tail) and the write enter the
/// first shared channel back to back, as a stream bound by its link leaves them; at every
/// store-and-forward server each leaves one service after the later of its arrival and the
/// unit ahead's departure, then crosses the channel's latency. TLP by TLP this is what the
/// servers do on an idle route; contention only delays the write further.
fn ordering_gap(shared: &[&ChannelSpec], bytes: u64, size: u64, mps: u64) -> crate::units::Ps {
    let tail = (size.max(1) - 1) % mps + 1;
    let units: &[u64] = if size > mps {
        &[mps, tail, bytes]
    } else {
        &[tail, bytes]
    };
    let mut arrive = [0; 3];
    for c in shared {
        let mut free = 0;
        for (at, &payload) in arrive.iter_mut().zip(units) {
            free = (*at).max(free) + c.rate.tx_time(c.wire_bytes(Unit::Write, payload, 1));
            *at = free + c.latency;
        }
    }
    let n = units.len();
    arrive[n - 1] - arrive[n - 2]
}

/// How the receiver of a write-like transfer takes the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Receive {
    /// RDMA Write with Immediate: a receive CQE the thread polls.
    Imm,
    /// Plain RDMA Write: the consumer polls the last byte.
    LastByte,
    /// Send/Recv: as with the immediate, and the NIC needs the pre-posted receive WQE for the
    /// scatter address. Pre-posted receives are prefetched: the NIC reads the WQE from the
    /// receive queue when the message starts (perftest keeps the queue full), and the receive
    /// CQE waits for it.
    Send,
}

/// The plan of one RDMA Write or Send between `sides` (see [`Receive`]), and whether its
/// payload is inline.
///
/// Without the immediate there is no receive WQE and no receive CQE: the consumer polls the
/// last byte of its buffer, as `ib_write_lat` does. A CPU polls host memory (one poll that
/// finds it, `poll_ns`); for a GPU buffer a kernel spins on the flag in its own memory, as
/// NCCL's LL protocol does, and sees it one GPU memory access after it lands, so no flush is
/// needed: the NIC's posted writes land in order.
pub fn write(topo: &Topology, sides: &Sides, how: Receive) -> Result<(Plan, bool), RouteError> {
    let imm = how != Receive::LastByte;
    let (s, r) = (sides.sender, sides.receiver);
    let (sh, rh) = (&topo.hosts[s.host], &topo.hosts[r.host]);
    let s_nic = &sh.spec.nics[s.nic];
    let r_nic = &rh.spec.nics[r.nic];
    let size = sides.size;
    let mut p = Plan::new(size);

    // Actors (recorded against), in a fixed order: each side's thread, NIC and copy engine.
    let mut actors = [(0, 0, 0); 2];
    for (i, side) in [s, r].iter().enumerate() {
        let host = side.host;
        let cpu = p.actor(Actor::Cpu {
            host,
            socket: side.cpu_socket,
        });
        let nic = p.actor(Actor::Nic {
            host,
            nic: side.nic,
        });
        let gpu = side.staging.map(|st| st.gpu).or(match side.nic_buffer {
            Buffer::Gpu { gpu, .. } => Some(gpu),
            Buffer::Host { .. } => None,
        });
        let ce = match gpu {
            Some(gpu) => p.actor(Actor::CopyEngine { host, gpu }),
            None => cpu,
        };
        actors[i] = (cpu, nic, ce);
    }
    let network = p.actor(Actor::Network);
    let (s_cpu, s_nic_a, s_ce) = actors[0];
    let (r_cpu, r_nic_a, r_ce) = actors[1];
    let ts = p.thread(s.host, s.cpu_socket);
    let tr = p.thread(r.host, r.cpu_socket);

    // Routes.
    let mut mmio = [PlanRoute(0); 2];
    let mut cqe = [PlanRoute(0); 2];
    let mut engine = [PlanRoute(0); 2];
    for (i, side) in [s, r].iter().enumerate() {
        (mmio[i], cqe[i], engine[i]) = nic_routes(&mut p, topo, side)?;
    }
    let wqe_fetch = sq_fetch(&mut p, topo, &s)?;
    let payload_read = buffer_read(&mut p, topo, &s)?;
    let (payload_write, mps_write) = buffer_write(&mut p, topo, &r)?;
    let (s_ch, r_ch) = (sh.nics[s.nic], rh.nics[r.nic]);
    let tx = p.route(vec![s_ch.tx]);
    let no_cable = || RouteError::NoCable {
        from: format!("{}/{}", sh.name, s_nic.name),
        to: format!("{}/{}", rh.name, r_nic.name),
    };
    let forward = topo
        .wire_route((s.host, s.nic), (r.host, r.nic), sides.qp)
        .ok_or_else(no_cable)?;
    let backward = topo
        .wire_route((r.host, r.nic), (s.host, s.nic), sides.qp)
        .ok_or_else(no_cable)?;
    let wire = p.route(forward);
    let rx = p.route(vec![r_ch.rx]);
    let mut a = vec![r_ch.tx];
    a.extend(backward);
    a.push(s_ch.rx);
    let ack = p.route(a);

    // The sender's program: copy out, register, post.
    // GPU payloads are never inline (perftest forces inline off with --use_cuda); host ones up
    // to the NIC's inline limit ride in the WQE. Every post here is of one WQE, which libmlx5
    // writes by BlueFlame when it fits (inline or not, row G5).
    let inline = !s.nic_buffer.is_gpu() && size <= s_nic.inline_max;
    let wqe_bytes = if inline {
        inline_wqe_bytes(size)
    } else {
        s_nic.wqe_bytes
    };
    let blueflame = s_nic.wqe_delivery.blueflame(1, inline, wqe_bytes);
    let mut prev = None;
    if let Some(st) = s.staging.filter(|st| st.by_cpu) {
        // GDRCopy: the thread reads the GPU buffer through BAR1 into the host buffer.
        let kind = StepKind::CpuCopy {
            thread: ts,
            cost: sh.spec.gpus[st.gpu].gdrcopy.cost(true, size),
            dram: sh.dram[st.bounce_socket],
            bytes: size,
            store: None,
        };
        prev = Some(add(
            &mut p,
            kind,
            Some(Stage::GdrcopyRead),
            s_cpu,
            vec![],
            None,
        ));
    } else if let Some(st) = s.staging {
        let kind = copy_from_gpu(&mut p, topo, &s, st, ts, true)?;
        let copy = add(&mut p, kind, Some(Stage::MemcpyD2h), s_ce, vec![], None);
        prev = Some(carries(&mut p, copy, size, true));
    }
    if s.register > 0 {
        let kind = StepKind::Register {
            thread: ts,
            cost: s.register,
        };
        let deps = after_queued(prev);
        prev = Some(add(&mut p, kind, Some(Stage::Register), s_cpu, deps, None));
    }
    let post_bytes = if blueflame { wqe_bytes } else { 8 };
    let inline_dram = match s.nic_buffer {
        Buffer::Host { socket, .. } if inline => Some(sh.dram[socket]),
        _ => None,
    };
    let post = add(
        &mut p,
        StepKind::Post {
            thread: ts,
            mmio: mmio[0],
            bytes: post_bytes,
            inline: inline_dram,
        },
        Some(Stage::Post),
        s_cpu,
        after_queued(prev),
        None,
    );
    if r.register > 0 {
        // The receiver registers its buffer meanwhile (it must exist before the data lands;
        // with equal costs it always does, since the sender registers first too).
        let kind = StepKind::Register {
            thread: tr,
            cost: r.register,
        };
        add(&mut p, kind, None, r_cpu, vec![], None);
    }

    // The sending NIC.
    let s_ref = NicRef {
        host: s.host,
        nic: s.nic,
    };
    let r_ref = NicRef {
        host: r.host,
        nic: r.nic,
    };
    let fetch = (!blueflame).then_some((wqe_fetch, wqe_bytes));
    let wqe = add(
        &mut p,
        StepKind::WqeFetch {
            nic: s_ref,
            fetch,
            engine: engine[0],
            wqe_bytes: s_nic.wqe_bytes,
            gather: Some(Gather {
                buffer: s.nic_buffer,
                len: size,
            }),
        },
        Some(Stage::WqeFetch),
        s_nic_a,
        vec![done(post)],
        None,
    );
    let (tx_deps, tx_input) = if inline {
        (vec![done(wqe)], None)
    } else {
        let kind = StepKind::DmaRead {
            nic: s_ref,
            read: payload_read,
            gather: None,
        };
        let read = add(
            &mut p,
            kind,
            Some(Stage::DmaRead),
            s_nic_a,
            vec![done(wqe)],
            None,
        );
        (vec![], Some(carries(&mut p, read, size, true)))
    };
    let ends = ((s_ref, s_nic_a), (r_ref, r_nic_a, r.nic_buffer), network);
    let written = (payload_write, mps_write);
    let (wires, rxs, write) = stream(
        &mut p,
        ends,
        (tx, wire, rx),
        written,
        (tx_deps, tx_input),
        size,
    );
    let (mut recv_fetch, mut rcqe) = (None, None);
    let poll = if imm {
        let kind = StepKind::Cqe {
            nic: r_ref,
            kind: CqeKind::Recv,
            route: cqe[1],
        };
        let mut last_write = vec![Dep {
            step: write,
            on: Milestone::LastIn,
        }];
        if how == Receive::Send {
            let fetch = recv_wqe_fetch(&mut p, topo, &r, r_nic_a)?;
            recv_fetch = Some(fetch);
            last_write.push(done(fetch));
        }
        let cqe = add(&mut p, kind, Some(Stage::Cqe), r_nic_a, last_write, None);
        rcqe = Some(cqe);
        let kind = StepKind::Poll {
            thread: tr,
            extra: rh.spec.cpu.post_recv,
        };
        let deps = poll_deps(&mut p, topo, cqe, write);
        add(&mut p, kind, Some(Stage::Poll), r_cpu, deps, None)
    } else {
        last_byte_poll(&mut p, topo, &r, tr, r_cpu, write)
    };
    let kind = StepKind::Packet {
        route: ack,
        bytes: r_nic.ack_bytes,
        what: PacketKind::Ack,
    };
    let acks = add(&mut p, kind, None, r_nic_a, vec![done(rxs)], None);
    let receiver = ((tr, r_cpu, r_nic_a, r_ce), (mmio[1], engine[1], cqe[1]));
    let deliver = deliver(
        &mut p,
        topo,
        (&r, sides.flush),
        receiver,
        (poll, write),
        size,
    )?;

    // The sender's completion.
    let kind = StepKind::Cqe {
        nic: s_ref,
        kind: CqeKind::Send,
        route: cqe[0],
    };
    let scqe = add(&mut p, kind, None, s_nic_a, vec![done(acks)], None);
    let kind = StepKind::Poll {
        thread: ts,
        extra: 0,
    };
    let spoll = add(&mut p, kind, None, s_cpu, vec![done(scqe)], None);
    let mut finish = vec![done(deliver), done(spoll)];
    // Per-transfer registration deregisters once the work request is complete: the sender
    // before it reuses its window slot, the receiver after the data is delivered (its thread's
    // time, off the one-way latency).
    finish.extend(deregister(&mut p, &s, (ts, s_cpu), spoll).map(done));
    deregister(&mut p, &r, (tr, r_cpu), deliver);
    let finish = add(&mut p, StepKind::Finish, None, r_cpu, finish, None);
    p.handles = Handles {
        post: Some(post),
        fetch: Some(wqe),
        read: tx_input,
        wire: Some(wires),
        write: Some(write),
        recv_fetch,
        cqe: rcqe,
        poll: Some(poll),
        ack: Some(acks),
        send_poll: Some(spoll),
        finish: Some(finish),
    };
    p.link();
    Ok((p, inline))
}

/// The side's ibv_dereg_mr once step `after` is done, on its thread, where registration is
/// per transfer (the step, if any).
fn deregister(
    p: &mut Plan,
    side: &SidePlan,
    (thread, cpu): (u16, u32),
    after: StepId,
) -> Option<StepId> {
    (side.deregister > 0).then(|| {
        let kind = StepKind::Register {
            thread,
            cost: side.deregister,
        };
        add(p, kind, None, cpu, vec![done(after)], None)
    })
}

/// What follows the receiving thread's poll: the flush where one is due, the copy into the GPU
/// for a staged receiver, then the delivery, which is causal: the consumer has the data no
/// earlier than its last byte is written into the destination memory, whatever the thread saw
/// first. Sets and returns the plan's delivery step.
#[allow(clippy::type_complexity)]
fn deliver(
    p: &mut Plan,
    topo: &Topology,
    (r, flushes): (&SidePlan, bool),
    ((thread, cpu, nic, ce), routes): ((u16, u32, u32, u32), (PlanRoute, PlanRoute, PlanRoute)),
    (poll, write): (StepId, StepId),
    size: u64,
) -> Result<StepId, RouteError> {
    let mut last = poll;
    if flushes && let Buffer::Gpu { gpu, .. } = r.nic_buffer {
        last = flush(p, topo, r, gpu, (thread, cpu, nic), routes, poll)?;
    }
    if let Some(st) = r.staging {
        last = copy_to_gpu(p, topo, r, st, (thread, ce), last, size)?;
    }
    let deliver = add(
        p,
        StepKind::Deliver,
        None,
        cpu,
        vec![done(last), done(write)],
        None,
    );
    p.deliver = deliver;
    Ok(deliver)
}

/// The payload's streaming steps from the sending NIC to the receiving NIC's DMA writes:
/// transmit pipeline, wire, receive pipeline, writes into the receive buffer. Returns the
/// wire, receive and write steps.
#[allow(clippy::type_complexity)]
fn stream(
    p: &mut Plan,
    ((s_ref, s_actor), (r_ref, r_actor, buffer), network): (
        (NicRef, u32),
        (NicRef, u32, Buffer),
        u32,
    ),
    (tx, wire, rx): (PlanRoute, PlanRoute, PlanRoute),
    (route, mps): (PlanRoute, u64),
    (tx_deps, tx_input): (Vec<Dep>, Option<StepId>),
    size: u64,
) -> (StepId, StepId, StepId) {
    let kind = StepKind::NicTx {
        nic: s_ref,
        route: tx,
    };
    let txs = add(p, kind, Some(Stage::NicTx), s_actor, tx_deps, tx_input);
    let txs = carries(p, txs, size, true);
    let kind = StepKind::Wire { route: wire };
    let wires = add(p, kind, Some(Stage::Wire), network, vec![], Some(txs));
    let wires = carries(p, wires, size, true);
    let kind = StepKind::NicRx { route: rx };
    let rxs = add(p, kind, Some(Stage::NicRx), r_actor, vec![], Some(wires));
    let rxs = carries(p, rxs, size, true);
    let kind = StepKind::DmaWrite {
        nic: r_ref,
        route,
        mps,
        scatter: Gather { buffer, len: size },
    };
    let write = add(p, kind, Some(Stage::DmaWrite), r_actor, vec![], Some(rxs));
    (wires, rxs, carries(p, write, size, true))
}

/// A side's control routes: the thread's MMIO writes to its NIC, the NIC's CQE writes into the
/// thread's DRAM, and the NIC's send engine.
fn nic_routes(
    p: &mut Plan,
    topo: &Topology,
    side: &SidePlan,
) -> Result<(PlanRoute, PlanRoute, PlanRoute), RouteError> {
    let host = &topo.hosts[side.host];
    let nic = Place::Device(host.node_index(NodeKind::Nic(side.nic)));
    let mmio = p.route(
        host.route(Place::Cpu(side.cpu_socket), nic, Flow::Write)?
            .channels,
    );
    let mut c = host
        .route(nic, Place::Memory(side.cpu_socket), Flow::Write)?
        .channels;
    c.push(host.dram[side.cpu_socket]);
    let cqe = p.route(c);
    let engine = p.route(vec![host.nics[side.nic].engine]);
    Ok((mmio, cqe, engine))
}

/// The NIC's DMA read of a WQE from its send queue in the thread's DRAM (after a doorbell).
fn sq_fetch(p: &mut Plan, topo: &Topology, side: &SidePlan) -> Result<ReadSpec, RouteError> {
    let host = &topo.hosts[side.host];
    let nic = Place::Device(host.node_index(NodeKind::Nic(side.nic)));
    let sq = Place::Memory(side.cpu_socket);
    let req = p.route(host.route(nic, sq, Flow::ReadRequest)?.channels);
    let back = host.route(sq, nic, Flow::ReadCompletion)?;
    let mut c = vec![host.dram[side.cpu_socket]];
    c.extend(back.channels);
    Ok(ReadSpec {
        engine: topo.wqe_engine(side.host, side.nic),
        req,
        cpl: p.route(c),
        mrrs: host.spec.nics[side.nic].mrrs,
        mps: back.mps,
    })
}

/// Where the NIC reads or writes a side's payload buffer: its place and its memory channel.
fn buffer_at(topo: &Topology, side: &SidePlan) -> (Place, ChannelId) {
    let host = &topo.hosts[side.host];
    match side.nic_buffer {
        Buffer::Host { socket, .. } => (Place::Memory(socket), host.dram[socket]),
        Buffer::Gpu { gpu, .. } => (
            Place::Device(host.node_index(NodeKind::Gpu(gpu))),
            host.gpu_memory[gpu],
        ),
    }
}

/// The NIC's DMA read of a side's payload buffer, under the NIC's read window.
fn buffer_read(p: &mut Plan, topo: &Topology, side: &SidePlan) -> Result<ReadSpec, RouteError> {
    let host = &topo.hosts[side.host];
    let nic = Place::Device(host.node_index(NodeKind::Nic(side.nic)));
    let (src, mem) = buffer_at(topo, side);
    let req = p.route(host.route(nic, src, Flow::ReadRequest)?.channels);
    let back = host.route(src, nic, Flow::ReadCompletion)?;
    let mut c = vec![mem];
    c.extend(back.channels);
    Ok(ReadSpec {
        engine: topo.nic_engine(side.host, side.nic),
        req,
        cpl: p.route(c),
        mrrs: host.spec.nics[side.nic].mrrs,
        mps: back.mps,
    })
}

/// The NIC's DMA writes into a side's payload buffer: the route and its MPS.
fn buffer_write(
    p: &mut Plan,
    topo: &Topology,
    side: &SidePlan,
) -> Result<(PlanRoute, u64), RouteError> {
    let host = &topo.hosts[side.host];
    let nic = Place::Device(host.node_index(NodeKind::Nic(side.nic)));
    let (dst, mem) = buffer_at(topo, side);
    let w = host.route(nic, dst, Flow::Write)?;
    let mut c = w.channels;
    c.push(mem);
    Ok((p.route(c), w.mps))
}

/// The receiving NIC's fetch of a pre-posted receive WQE from the receive queue (in the DRAM
/// of the receiving thread's socket), under the NIC's WQE-fetch window.
fn recv_wqe_fetch(
    p: &mut Plan,
    topo: &Topology,
    r: &SidePlan,
    actor: u32,
) -> Result<StepId, RouteError> {
    // The receive queue sits with the send queue, in the thread's DRAM.
    let read = sq_fetch(p, topo, r)?;
    let spec = &topo.hosts[r.host].spec.nics[r.nic];
    let kind = StepKind::RecvWqeFetch {
        nic: NicRef {
            host: r.host,
            nic: r.nic,
        },
        read,
        bytes: spec.recv_wqe_bytes,
    };
    Ok(add(p, kind, None, actor, vec![], None))
}

/// The driver's CPU copy of a staged side's cudaMemcpy where its bounce buffer is pageable.
fn driver_copy(
    topo: &Topology,
    side: &SidePlan,
    st: Staging,
    (d2h, bytes): (bool, u64),
) -> Option<DriverCopy> {
    let spec = &topo.hosts[side.host].spec;
    st.pageable.then(|| DriverCopy {
        cost: spec.cpu.pageable.cost(d2h, bytes),
        dram: topo.hosts[side.host].dram[st.bounce_socket],
    })
}

/// The sender's cudaMemcpy D2H from its GPU into its bounce buffer: the copy engine posts
/// writes from GPU memory over PCIe into DRAM.
fn copy_from_gpu(
    p: &mut Plan,
    topo: &Topology,
    s: &SidePlan,
    st: Staging,
    thread: u16,
    blocking: bool,
) -> Result<StepKind, RouteError> {
    let (copy, gpu) = d2h_copy(p, topo, s, st)?;
    Ok(StepKind::Memcpy {
        thread,
        gpu,
        copy,
        driver: driver_copy(topo, s, st, (true, p.size)),
        blocking,
    })
}

/// The data movement out of a staging side's GPU into its host buffer: posted writes from GPU
/// memory over PCIe into DRAM (a copy engine's, or a kernel's stores).
fn d2h_copy(
    p: &mut Plan,
    topo: &Topology,
    s: &SidePlan,
    st: Staging,
) -> Result<(Copy, GpuRef), RouteError> {
    let sh = &topo.hosts[s.host];
    let g = Place::Device(sh.node_index(NodeKind::Gpu(st.gpu)));
    let route = sh.route(g, Place::Memory(st.bounce_socket), Flow::Write)?;
    let mut c = vec![sh.gpu_memory[st.gpu]];
    c.extend(route.channels);
    c.push(sh.dram[st.bounce_socket]);
    let copy = Copy::D2h {
        route: p.route(c),
        mps: route.mps,
    };
    let gpu = GpuRef {
        host: s.host,
        gpu: st.gpu,
    };
    Ok((copy, gpu))
}

/// The data movement into a staging side's GPU from its host buffer: reads of host memory under
/// the GPU's read window (a copy engine's, or a kernel's loads), then the commit into GPU
/// memory.
fn h2d_copy(
    p: &mut Plan,
    topo: &Topology,
    r: &SidePlan,
    st: Staging,
) -> Result<(Copy, GpuRef), RouteError> {
    h2d_read(p, topo, (r.host, st.gpu), st.bounce_socket, true)
}

/// GPU `gpu` of `host` reading the host memory of `socket` under its read window; the data
/// then committed into GPU memory (`commits`: a copy's), or taken in the reader's registers
/// (a kernel's load of a flag: nothing to commit).
fn h2d_read(
    p: &mut Plan,
    topo: &Topology,
    (host, gpu): (usize, usize),
    socket: usize,
    commits: bool,
) -> Result<(Copy, GpuRef), RouteError> {
    let rh = &topo.hosts[host];
    let g = Place::Device(rh.node_index(NodeKind::Gpu(gpu)));
    let memory = Place::Memory(socket);
    let req = p.route(rh.route(g, memory, Flow::ReadRequest)?.channels);
    let back = rh.route(memory, g, Flow::ReadCompletion)?;
    let mut c = vec![rh.dram[socket]];
    c.extend(back.channels);
    let cpl = p.route(c);
    let commit = p.route(match commits {
        true => vec![rh.gpu_memory[gpu]],
        false => Vec::new(),
    });
    let ce = rh.spec.gpus[gpu].copy_engine;
    let copy = Copy::H2d {
        read: ReadSpec {
            engine: topo.gpu_engine(host, gpu),
            req,
            cpl,
            mrrs: ce.mrrs,
            mps: back.mps,
        },
        commit,
    };
    Ok((copy, GpuRef { host, gpu }))
}

/// NCCL's host path, sending side, for one chunk of `bytes` (`net.cc` without GPUDirect: the
/// send buffer is pinned, mapped host memory): the GPU's kernel, already running, stores the
/// chunk over PCIe into the host buffer, then its flag (the FIFO entry and tail, as PXN's
/// hand-over) into the proxy's host memory, which the proxy thread (`thread`, on `actor`) finds
/// by polling. No launch, no cudaMemcpy. It waits for the steps `after` (a free slot of the
/// ring). Returns the poll.
fn kernel_store(
    p: &mut Plan,
    topo: &Topology,
    s: &SidePlan,
    st: Staging,
    (thread, actor): (u16, u32),
    after: Vec<StepId>,
    bytes: u64,
) -> Result<StepId, RouteError> {
    let sm = p.actor(Actor::Sm {
        host: s.host,
        gpu: st.gpu,
    });
    let (copy, gpu) = d2h_copy(p, topo, s, st)?;
    let deps = after.into_iter().map(done).collect();
    let kind = StepKind::KernelCopy { gpu, copy };
    let data = add(p, kind, Some(Stage::KernelStore), sm, deps, None);
    carries(p, data, bytes, true);
    // The flag, stored after the data (the kernel fences between them), into the proxy's
    // memory on the socket of its thread.
    let flag_st = Staging {
        bounce_socket: s.cpu_socket,
        ..st
    };
    let (copy, gpu) = d2h_copy(p, topo, s, flag_st)?;
    let kind = StepKind::KernelCopy { gpu, copy };
    let flag = add(
        p,
        kind,
        Some(Stage::KernelStore),
        sm,
        vec![done(data)],
        None,
    );
    carries(p, flag, super::relay::FLAG_BYTES, false);
    let kind = StepKind::Poll { thread, extra: 0 };
    Ok(add(
        p,
        kind,
        Some(Stage::KernelStore),
        actor,
        vec![done(flag)],
        None,
    ))
}

/// NCCL's host path, receiving side, for one chunk of `bytes` after the proxy's poll `after`
/// found it: the proxy stores the chunk's flag (the tail) into mapped host memory, where the
/// receiving kernel, spinning on it, sees it by a load over PCIe (one read of the flag's
/// bytes: a round trip from the GPU to host memory); then the kernel loads the chunk from the
/// host buffer into the GPU buffer, under the GPU's read window. No launch, no cudaMemcpy.
/// Returns the load of the data.
fn kernel_load(
    p: &mut Plan,
    topo: &Topology,
    r: &SidePlan,
    st: Staging,
    after: StepId,
    bytes: u64,
) -> Result<StepId, RouteError> {
    let sm = p.actor(Actor::Sm {
        host: r.host,
        gpu: st.gpu,
    });
    let flag = tail_load(p, topo, r, st.gpu, after)?;
    let (copy, gpu) = h2d_copy(p, topo, r, st)?;
    let kind = StepKind::KernelCopy { gpu, copy };
    let data = add(p, kind, Some(Stage::KernelLoad), sm, vec![done(flag)], None);
    Ok(carries(p, data, bytes, true))
}

/// The receiving proxy's hand-over of a chunk to the kernel once its poll `after` found it
/// (`recvProxyProgress` stores `recvMem->tail` in its host memory; the kernel of GPU `gpu`,
/// spinning on it, sees it by a load over PCIe: one read of the flag's bytes from the host
/// memory of the proxy's socket, a round trip into its registers). NCCL's host path pays it
/// before its load of the chunk, a GPUDirect receiver (`auto`) before its kernel reads the
/// chunk in its own memory. Returns the load.
fn tail_load(
    p: &mut Plan,
    topo: &Topology,
    r: &SidePlan,
    gpu: usize,
    after: StepId,
) -> Result<StepId, RouteError> {
    let sm = p.actor(Actor::Sm { host: r.host, gpu });
    let (copy, gpu) = h2d_read(p, topo, (r.host, gpu), r.cpu_socket, false)?;
    let kind = StepKind::KernelCopy { gpu, copy };
    let flag = add(
        p,
        kind,
        Some(Stage::KernelLoad),
        sm,
        vec![done(after)],
        None,
    );
    Ok(carries(p, flag, super::relay::FLAG_BYTES, false))
}

/// A CPU's write-combining buffer: stores to a write-combined mapping (GDRCopy's BAR1) leave
/// the core in bursts of at most this many bytes (one cache line), so the last burst is what
/// is still on its way when the copying thread returns.
const WC_BUFFER_BYTES: u64 = 64;

/// The receiver's cudaMemcpy H2D from its bounce buffer into the GPU, after `after`: the copy
/// engine reads the bounce buffer under its own window and commits into GPU memory.
fn copy_to_gpu(
    p: &mut Plan,
    topo: &Topology,
    r: &SidePlan,
    st: Staging,
    (thread, actor): (u16, u32),
    after: StepId,
    size: u64,
) -> Result<StepId, RouteError> {
    copy_to_gpu_as(p, topo, r, st, (thread, actor), (after, true), size)
}

/// [`copy_to_gpu`], synchronous (`blocking`) or a cudaMemcpyAsync.
fn copy_to_gpu_as(
    p: &mut Plan,
    topo: &Topology,
    r: &SidePlan,
    st: Staging,
    (thread, actor): (u16, u32),
    (after, blocking): (StepId, bool),
    size: u64,
) -> Result<StepId, RouteError> {
    let rh = &topo.hosts[r.host];
    if st.by_cpu {
        // GDRCopy: the thread writes the host buffer into the GPU through BAR1; the copy is in
        // GPU memory when the last write-combined stores (one 64-byte buffer) have crossed.
        let g = Place::Device(rh.node_index(NodeKind::Gpu(st.gpu)));
        let mut c = rh.route(Place::Cpu(r.cpu_socket), g, Flow::Write)?.channels;
        c.push(rh.gpu_memory[st.gpu]);
        let kind = StepKind::CpuCopy {
            thread,
            cost: rh.spec.gpus[st.gpu].gdrcopy.cost(false, size),
            dram: rh.dram[st.bounce_socket],
            bytes: size,
            store: Some((p.route(c), size.clamp(1, WC_BUFFER_BYTES))),
        };
        let cpu = p.actor(Actor::Cpu {
            host: r.host,
            socket: r.cpu_socket,
        });
        return Ok(add(
            p,
            kind,
            Some(Stage::GdrcopyWrite),
            cpu,
            vec![done(after)],
            None,
        ));
    }
    let (copy, gpu) = h2d_copy(p, topo, r, st)?;
    let kind = StepKind::Memcpy {
        thread,
        gpu,
        copy,
        blocking,
        driver: driver_copy(topo, r, st, (false, size)),
    };
    let copy = add(
        p,
        kind,
        Some(Stage::MemcpyH2d),
        actor,
        vec![done(after)],
        None,
    );
    Ok(carries(p, copy, size, true))
}

/// The consumer of a plain RDMA Write polls the last byte of its buffer once the NIC's last
/// write has landed there: the receiving thread for host memory, a GPU kernel for GPU memory.
fn last_byte_poll(
    p: &mut Plan,
    topo: &Topology,
    r: &SidePlan,
    thread: u16,
    cpu: u32,
    write: StepId,
) -> StepId {
    let host = &topo.hosts[r.host];
    match r.nic_buffer {
        Buffer::Host { .. } => {
            let kind = StepKind::Poll { thread, extra: 0 };
            add(p, kind, Some(Stage::Poll), cpu, vec![done(write)], None)
        }
        Buffer::Gpu { gpu, .. } => {
            let g = &host.spec.gpus[gpu];
            let actor = p.actor(Actor::Sm { host: r.host, gpu });
            let kind = StepKind::Wait {
                ps: g.memory.latency,
            };
            add(p, kind, Some(Stage::Poll), actor, vec![done(write)], None)
        }
    }
}

/// The GPUDirect receive flush as NCCL issues it (`ncclIbIflush`, for GPUs that need one): the
/// receiving thread posts a 1-byte RDMA Read of the GPU receive buffer into a pinned host byte
/// on a loopback QP. It is not inline, so (as libmlx5 posts it) it goes by doorbell and the NIC
/// fetches the WQE. The
/// request passes the NIC's send and receive pipelines; the NIC reads the byte (its request
/// queues behind the payload's posted writes, which is what makes the data visible), the
/// response passes the pipelines again, the NIC writes the byte into host memory and a CQE,
/// which the thread polls. Every step reports as the `flush` stage.
fn flush(
    p: &mut Plan,
    topo: &Topology,
    r: &SidePlan,
    gpu: usize,
    (thread, cpu, nic_actor): (u16, u32, u32),
    (mmio, engine, cqe): (PlanRoute, PlanRoute, PlanRoute),
    after: StepId,
) -> Result<StepId, RouteError> {
    let h = &topo.hosts[r.host];
    let spec = &h.spec.nics[r.nic];
    let nic = NicRef {
        host: r.host,
        nic: r.nic,
    };
    let np = Place::Device(h.node_index(NodeKind::Nic(r.nic)));
    let sq = Place::Memory(r.cpu_socket);
    let f = Some(Stage::Flush);
    // One WQE, not inline: BlueFlame by libmlx5's default (row G5).
    let blueflame = spec.wqe_delivery.blueflame(1, false, spec.wqe_bytes);
    let post = StepKind::Post {
        thread,
        mmio,
        bytes: if blueflame { spec.wqe_bytes } else { 8 },
        inline: None,
    };
    let post = add(p, post, f, cpu, vec![done(after)], None);
    let fetch = sq_fetch(p, topo, r)?;
    let kind = StepKind::WqeFetch {
        nic,
        fetch: (!blueflame).then_some((fetch, spec.wqe_bytes)),
        engine,
        wqe_bytes: spec.wqe_bytes,
        gather: Some(Gather {
            buffer: r.nic_buffer,
            len: 1,
        }),
    };
    let wqe = add(p, kind, f, nic_actor, vec![done(post)], None);
    let (tx, rx) = (h.nics[r.nic].tx, h.nics[r.nic].rx);
    let loopback = p.route(vec![tx, rx]);
    // An RDMA Read request: the transport headers plus its RETH (16 B).
    let kind = StepKind::Packet {
        route: loopback,
        bytes: spec.packet_overhead + 16,
        what: PacketKind::ReadRequest,
    };
    let req = add(p, kind, f, nic_actor, vec![done(wqe)], None);
    // The byte read is of the receive buffer in the GPU.
    debug_assert!(matches!(r.nic_buffer, Buffer::Gpu { gpu: g, .. } if g == gpu));
    let read = buffer_read(p, topo, r)?;
    let kind = StepKind::DmaRead {
        nic,
        read,
        gather: None,
    };
    let read = add(p, kind, f, nic_actor, vec![done(req)], None);
    let read = carries(p, read, 1, false);
    let kind = StepKind::NicTx {
        nic,
        route: p.route(vec![tx]),
    };
    let txs = add(p, kind, f, nic_actor, vec![], Some(read));
    let txs = carries(p, txs, 1, false);
    let kind = StepKind::NicRx {
        route: p.route(vec![rx]),
    };
    let rxs = add(p, kind, f, nic_actor, vec![], Some(txs));
    let rxs = carries(p, rxs, 1, false);
    let w = h.route(np, sq, Flow::Write)?;
    let mut c = w.channels;
    c.push(h.dram[r.cpu_socket]);
    let kind = StepKind::DmaWrite {
        nic,
        route: p.route(c),
        mps: w.mps,
        scatter: Gather {
            buffer: Buffer::Host {
                socket: r.cpu_socket,
                addr: h.spec.host_buffer_base,
            },
            len: 1,
        },
    };
    let write = add(p, kind, f, nic_actor, vec![], Some(rxs));
    let write = carries(p, write, 1, false);
    let kind = StepKind::Cqe {
        nic,
        kind: CqeKind::Flush,
        route: cqe,
    };
    let last_write = vec![Dep {
        step: write,
        on: Milestone::LastIn,
    }];
    let cqe = add(p, kind, f, nic_actor, last_write, None);
    let poll = StepKind::Poll { thread, extra: 0 };
    let deps = poll_deps(p, topo, cqe, write);
    Ok(add(p, poll, f, cpu, deps, None))
}

/// The plan of one RDMA Read that moves `sides.size` bytes from the flow's sender (the
/// responder, whose CPU takes no part) to its receiver (the requester).
///
/// The requester's thread posts the read (not inline: a doorbell, then the NIC fetches the
/// WQE); its NIC sends the read request (transport headers and a 16-byte RETH) through its
/// transmit pipeline, the network and the responder's receive pipeline; the responder's NIC
/// looks up the MTT and reads the source buffer by DMA under its read window, packetises the
/// response by MTU and sends it back; the requester's NIC writes it, then its completion (which
/// the thread polls); then the flush or the copy into the GPU as for a write. The response is
/// the acknowledgement: there is no ACK packet.
pub fn read(topo: &Topology, sides: &Sides) -> Result<Plan, RouteError> {
    let (s, r) = (sides.sender, sides.receiver);
    let (sh, rh) = (&topo.hosts[s.host], &topo.hosts[r.host]);
    let (s_nic, r_nic) = (&sh.spec.nics[s.nic], &rh.spec.nics[r.nic]);
    let size = sides.size;
    let mut p = Plan::new(size);
    let actor = |p: &mut Plan, side: &SidePlan| {
        let (host, socket, nic) = (side.host, side.cpu_socket, side.nic);
        (
            p.actor(Actor::Cpu { host, socket }),
            p.actor(Actor::Nic { host, nic }),
        )
    };
    let (s_cpu, s_nic_a) = actor(&mut p, &s);
    let (r_cpu, r_nic_a) = actor(&mut p, &r);
    let r_ce = match r.staging {
        Some(st) => p.actor(Actor::CopyEngine {
            host: r.host,
            gpu: st.gpu,
        }),
        None => r_cpu,
    };
    let network = p.actor(Actor::Network);
    let ts = p.thread(s.host, s.cpu_socket);
    let tr = p.thread(r.host, r.cpu_socket);
    let (s_ref, r_ref) = (
        NicRef {
            host: s.host,
            nic: s.nic,
        },
        NicRef {
            host: r.host,
            nic: r.nic,
        },
    );

    // The requester posts and its NIC fetches the WQE from the send queue.
    let (mmio, cqe, engine) = nic_routes(&mut p, topo, &r)?;
    let fetch = sq_fetch(&mut p, topo, &r)?;
    if s.register > 0 {
        let kind = StepKind::Register {
            thread: ts,
            cost: s.register,
        };
        add(&mut p, kind, None, s_cpu, vec![], None);
    }
    let mut prev = None;
    if r.register > 0 {
        let kind = StepKind::Register {
            thread: tr,
            cost: r.register,
        };
        prev = Some(add(
            &mut p,
            kind,
            Some(Stage::Register),
            r_cpu,
            vec![],
            None,
        ));
    }
    let blueflame = r_nic.wqe_delivery.blueflame(1, false, r_nic.wqe_bytes);
    let kind = StepKind::Post {
        thread: tr,
        mmio,
        bytes: if blueflame { r_nic.wqe_bytes } else { 8 },
        inline: None,
    };
    let post = add(
        &mut p,
        kind,
        Some(Stage::Post),
        r_cpu,
        after_queued(prev),
        None,
    );
    let kind = StepKind::WqeFetch {
        nic: r_ref,
        fetch: (!blueflame).then_some((fetch, r_nic.wqe_bytes)),
        engine,
        wqe_bytes: r_nic.wqe_bytes,
        // The requester's WQE names its local destination; the responder builds the gather
        // descriptor of the source when the request arrives.
        gather: None,
    };
    let wqe = add(
        &mut p,
        kind,
        Some(Stage::WqeFetch),
        r_nic_a,
        vec![done(post)],
        None,
    );

    // The request crosses to the responder.
    let no_cable = || RouteError::NoCable {
        from: format!("{}/{}", rh.name, r_nic.name),
        to: format!("{}/{}", sh.name, s_nic.name),
    };
    let (s_ch, r_ch) = (sh.nics[s.nic], rh.nics[r.nic]);
    let mut c = vec![r_ch.tx];
    c.extend(
        topo.wire_route((r.host, r.nic), (s.host, s.nic), sides.qp)
            .ok_or_else(no_cable)?,
    );
    c.push(s_ch.rx);
    let kind = StepKind::Packet {
        route: p.route(c),
        bytes: r_nic.packet_overhead + 16,
        what: PacketKind::ReadRequest,
    };
    let request = add(
        &mut p,
        kind,
        Some(Stage::ReadRequest),
        r_nic_a,
        vec![done(wqe)],
        None,
    );

    // The responder's NIC reads the source and sends the response.
    let read = buffer_read(&mut p, topo, &s)?;
    let kind = StepKind::DmaRead {
        nic: s_ref,
        read,
        gather: Some(Gather {
            buffer: s.nic_buffer,
            len: size,
        }),
    };
    let dma = add(
        &mut p,
        kind,
        Some(Stage::DmaRead),
        s_nic_a,
        vec![done(request)],
        None,
    );
    let dma = carries(&mut p, dma, size, true);
    let forward = topo
        .wire_route((s.host, s.nic), (r.host, r.nic), sides.qp)
        .ok_or_else(no_cable)?;
    let routes = (
        p.route(vec![s_ch.tx]),
        p.route(forward),
        p.route(vec![r_ch.rx]),
    );
    let written = buffer_write(&mut p, topo, &r)?;
    let ends = ((s_ref, s_nic_a), (r_ref, r_nic_a, r.nic_buffer), network);
    let (wires, _, write) = stream(&mut p, ends, routes, written, (vec![], Some(dma)), size);
    let kind = StepKind::Cqe {
        nic: r_ref,
        kind: CqeKind::Read,
        route: cqe,
    };
    let last_write = vec![Dep {
        step: write,
        on: Milestone::LastIn,
    }];
    let rcqe = add(&mut p, kind, Some(Stage::Cqe), r_nic_a, last_write, None);
    let kind = StepKind::Poll {
        thread: tr,
        extra: 0,
    };
    let deps = poll_deps(&mut p, topo, rcqe, write);
    let poll = add(&mut p, kind, Some(Stage::Poll), r_cpu, deps, None);
    let receiver = ((tr, r_cpu, r_nic_a, r_ce), (mmio, engine, cqe));
    let deliver = deliver(
        &mut p,
        topo,
        (&r, sides.flush),
        receiver,
        (poll, write),
        size,
    )?;
    // Both sides deregister once the read is delivered (the responder on notice of it).
    deregister(&mut p, &r, (tr, r_cpu), deliver);
    deregister(&mut p, &s, (ts, s_cpu), deliver);
    let finish = add(
        &mut p,
        StepKind::Finish,
        None,
        r_cpu,
        vec![done(deliver)],
        None,
    );
    p.handles = Handles {
        post: Some(post),
        fetch: Some(wqe),
        read: Some(dma),
        wire: Some(wires),
        write: Some(write),
        cqe: Some(rcqe),
        poll: Some(poll),
        finish: Some(finish),
        ..Handles::default()
    };
    p.link();
    Ok(p)
}

/// Most chunks in one pipelined message: a larger message uses larger chunks, so that a plan
/// and its events stay bounded whatever the size (1024 chunks of 256 KiB is 256 MiB).
pub const MAX_CHUNKS: u64 = 1024;

/// A chunked message's chunk size and count: `chunk` bytes, grown where the message would need
/// more than [`MAX_CHUNKS`].
pub fn chunking(size: u64, chunk: u64) -> (u64, u64) {
    let chunk = chunk.max(size.div_ceil(MAX_CHUNKS)).clamp(1, size.max(1));
    (chunk, size.div_ceil(chunk).max(1))
}

/// The plan of a message staged in chunks and pipelined, as communication libraries do it
/// (MVAPICH2's `MV2_CUDA_BLOCK_SIZE`, NCCL's proxy): the sending thread launches a
/// cudaMemcpyAsync D2H of each chunk into one of `depth` bounce buffers (it is not blocked for
/// the copy) and posts that chunk's RDMA once its copy completes; the receiving thread polls
/// each chunk's completion and launches its H2D; when a chunk's H2D is done the receiver hands
/// its bounce buffer back with a small credit packet (its post is not charged), and the
/// sender reuses a buffer only after that credit and its own send completion. The data is
/// delivered when the last H2D is done. Each chunk's RDMA is the host-to-host write of
/// [`write()`] between the two bounce buffers.
pub fn pipelined(
    topo: &Topology,
    sides: &Sides,
    how: Receive,
    (chunk, depth): (u64, u32),
) -> Result<Plan, RouteError> {
    let size = sides.size;
    let (chunk, n) = chunking(size, chunk);
    let (s, r) = (sides.sender, sides.receiver);
    // The sender copies each chunk into a bounce buffer (staging) or its relay GPU (PXN); the
    // receiver copies each out of a bounce buffer, or takes it in its GPU (GPUDirect).
    // (NCCL's host path on the receiving side alone: the sender posts each chunk from its own
    // buffer, GPU or host memory, with no copy.)
    let s_copy = match (s.staging, s.relay, s.nic_buffer) {
        (Some(st), _, _) if st.kernel => SendCopy::Kernel(st),
        (Some(st), _, _) => SendCopy::Memcpy(st),
        (None, Some(relay), _) => SendCopy::Relay(relay),
        (None, None, Buffer::Gpu { gpu, .. }) if s.handover => SendCopy::Flag(gpu),
        (None, None, _) => SendCopy::None,
    };
    let r_st = r.staging;
    // One chunk's RDMA between the chunk buffers (registered once, in setup), flushed where
    // a GPUDirect receiver needs it.
    let bounce = |side: SidePlan| SidePlan {
        staging: None,
        relay: None,
        handover: false,
        register: 0,
        ..side
    };
    let chunk_sides = |bytes: u64| Sides {
        size: bytes,
        sender: bounce(s),
        receiver: bounce(r),
        flush: sides.flush,
        qp: sides.qp,
    };
    let (first, _) = write(topo, &chunk_sides(chunk.min(size)), how)?;
    let mut p = Plan::new(size);
    p.routes = first.routes.clone();
    p.actors = first.actors.clone();
    p.threads = first.threads.clone();
    let shared_routes = first.routes.len();
    // write() runs the sender on thread 0 and the receiver on thread 1.
    let (ts, tr) = (0u16, 1u16);
    let s_ce = match s_copy {
        SendCopy::Memcpy(st) => Some(p.actor(Actor::CopyEngine {
            host: s.host,
            gpu: st.gpu,
        })),
        _ => None,
    };
    let r_ce = r_st.filter(|st| !st.kernel).map(|st| {
        p.actor(Actor::CopyEngine {
            host: r.host,
            gpu: st.gpu,
        })
    });
    let roles = first.handles;
    let role = |step: Option<StepId>| step.expect("write() names every role of a write");
    let r_cpu = first.steps[first.deliver.index()].actor;
    let s_cpu = first.steps[role(roles.post).index()].actor;
    let d2h_kind = match s_copy {
        SendCopy::Memcpy(st) => Some(copy_from_gpu(&mut p, topo, &s, st, ts, false)?),
        _ => None,
    };
    let ack = first.steps[(role(roles.ack)).index()].clone();

    let (mut spolls, mut credits, mut joins) = (Vec::new(), Vec::new(), Vec::new());
    let mut last_deps = Vec::new();
    // Every chunk is a full one but perhaps the last: two chunk plans serve them all.
    let tail = match size % chunk {
        0 => None,
        rest if n > 1 => Some(write(topo, &chunk_sides(rest), how)?.0),
        _ => None,
    };
    if let Some(t) = &tail {
        debug_assert_eq!(t.routes[..], p.routes[..shared_routes]);
    }
    for k in 0..n {
        let bytes = chunk.min(size - k * chunk);
        let cp = match &tail {
            Some(t) if bytes != chunk.min(size) => t,
            _ => &first,
        };
        // The copy out of the GPU into a free chunk buffer: the sender's, once its RDMA is
        // complete, and the receiver's bounce buffer, once copied out (its credit).
        let mut after = Vec::new();
        if k >= depth as u64 {
            let free = (k - depth as u64) as usize;
            after.push(spolls[free]);
            after.extend(credits.get(free));
        }
        let d2h = match (&d2h_kind, s_copy) {
            (Some(kind), _) => {
                let deps = after.into_iter().map(done).collect();
                let ce = s_ce.expect("a staging sender has its copy engine");
                let d2h = add(&mut p, kind.clone(), Some(Stage::MemcpyD2h), ce, deps, None);
                Some(carries(&mut p, d2h, bytes, true))
            }
            (None, SendCopy::Relay(relay)) => Some(super::relay::hand_over(
                &mut p,
                topo,
                s.host,
                (relay.from, relay.via, s.cpu_socket),
                (ts, s_cpu),
                after,
                bytes,
            )?),
            (None, SendCopy::Kernel(st)) => Some(kernel_store(
                &mut p,
                topo,
                &s,
                st,
                (ts, s_cpu),
                after,
                bytes,
            )?),
            // NCCL's GPUDirect sender: the kernel's flag once the chunk's slot is free (its
            // stores of the chunk into NCCL's buffer, in the same GPU's memory, are not
            // modelled), then the proxy's poll.
            (None, SendCopy::Flag(gpu)) => Some(super::relay::signal(
                &mut p,
                topo,
                (s.host, gpu, s.cpu_socket),
                (ts, s_cpu),
                after.into_iter().map(done).collect(),
                Stage::KernelStore,
            )?),
            (None, SendCopy::None) if after.is_empty() => None,
            // Nothing to copy: the post waits for the free slot itself.
            (None, SendCopy::None) => {
                let deps = after.into_iter().map(done).collect();
                Some(add(
                    &mut p,
                    StepKind::Wait { ps: 0 },
                    None,
                    s_cpu,
                    deps,
                    None,
                ))
            }
            (None, SendCopy::Memcpy(_)) => unreachable!("a staging sender has its copy"),
        };
        // The chunk's RDMA, its steps renumbered; its own delivery and finish become joins.
        let off = StepId::from_index(p.steps.len());
        let at = cp.handles.offset(off);
        if k == 0 {
            p.handles = at;
        }
        for st in &cp.steps {
            let mut st = st.clone();
            for d in &mut st.deps {
                d.step = d.step.shifted(off);
            }
            st.input = st.input.map(|i| i.shifted(off));
            if matches!(st.kind, StepKind::Deliver | StepKind::Finish) {
                st.kind = StepKind::Wait { ps: 0 };
                st.stage = None;
            }
            p.step(st);
        }
        // The chunk's post waits for its copy; its delivery is its poll (both ends are host
        // bounce buffers: no flush, no copy), joined with its last byte's write.
        let post = role(at.post);
        p.steps[post.index()].deps.extend(d2h.map(done));
        let (rpoll, write_step) = (role(at.poll), role(at.write));
        spolls.push(role(at.send_poll));
        joins.push(role(at.finish));
        // The copy into the receiver's GPU, then the credit back to the sender; a GPUDirect
        // receiver has the chunk once its poll (and flush) is done.
        match (r_st, r_ce) {
            (Some(r_st), _) if r_st.kernel => {
                let load = kernel_load(&mut p, topo, &r, r_st, rpoll, bytes)?;
                let credit = add(
                    &mut p,
                    ack.kind.clone(),
                    None,
                    ack.actor,
                    vec![done(load)],
                    None,
                );
                credits.push(credit);
                last_deps.extend([done(load), done(write_step)]);
            }
            (Some(r_st), Some(r_ce)) => {
                let h2d =
                    copy_to_gpu_as(&mut p, topo, &r, r_st, (tr, r_ce), (rpoll, false), bytes)?;
                let credit = add(
                    &mut p,
                    ack.kind.clone(),
                    None,
                    ack.actor,
                    vec![done(h2d)],
                    None,
                );
                credits.push(credit);
                last_deps.extend([done(h2d), done(write_step)]);
            }
            // NCCL's GPUDirect receiver (`auto`, Simple): its kernel has the chunk once it
            // has seen the proxy's tail, stored after the poll (and the flush).
            (None, _) if r.handover => {
                let found = match sides.flush {
                    true => cp.deliver.shifted(off),
                    false => rpoll,
                };
                let Buffer::Gpu { gpu, .. } = r.nic_buffer else {
                    unreachable!("a receiver hands over only from a GPU buffer")
                };
                let seen = tail_load(&mut p, topo, &r, gpu, found)?;
                last_deps.extend([done(seen), done(write_step)]);
            }
            // A GPUDirect receiver that flushes has the chunk once its flush is done: the
            // chunk's own delivery (now a wait), after the flush and the last byte's write.
            _ if sides.flush => last_deps.push(done(cp.deliver.shifted(off))),
            _ => last_deps.extend([done(rpoll), done(write_step)]),
        }
    }
    let deliver = add(&mut p, StepKind::Deliver, None, r_cpu, last_deps, None);
    p.deliver = deliver;
    let mut finish = vec![done(deliver)];
    finish.extend(joins.iter().chain(&credits).map(|&j| done(j)));
    p.handles.finish = Some(add(&mut p, StepKind::Finish, None, r_cpu, finish, None));
    if n > 1 || !credits.is_empty() {
        // The message has no one receive: each chunk takes its own, and a receiver that hands
        // its bounce buffers back by credit keeps one posted per buffer, the credit pacing the
        // sender, so its queue never runs dry.
        p.handles = Handles {
            recv_fetch: None,
            cqe: None,
            poll: None,
            write: None,
            ack: None,
            ..p.handles
        };
    }
    p.link();
    Ok(p)
}

/// How a chunked sender gets each chunk where its NIC reads it.
#[derive(Clone, Copy)]
enum SendCopy {
    /// cudaMemcpyAsync into a bounce buffer (pipelined staging).
    Memcpy(Staging),
    /// The kernel's stores into mapped host memory (NCCL's host path).
    Kernel(Staging),
    /// PXN's hand-over to the relay GPU.
    Relay(super::paths::Relay),
    /// NCCL's GPUDirect sender: the kernel's flag to the proxy for each chunk (GPU index),
    /// the NIC reading the GPU's buffer.
    Flag(usize),
    /// None: the NIC reads the sender's own buffer (GPUDirect or host memory).
    None,
}

/// One cudaMemcpyAsync between pinned host memory on `socket` and GPU `gpu` of `host`, on a
/// stream of its own (nvbandwidth's copy-engine testcases): the staged path's copy, D2H as the
/// copy engine's posted writes into host memory, H2D as its reads of host memory under its own
/// window, then the delivery once the last byte has landed. No NIC takes part.
pub fn memcpy(
    topo: &Topology,
    (host, gpu, socket): (usize, usize, usize),
    h2d: bool,
    size: u64,
) -> Result<Plan, RouteError> {
    let h = &topo.hosts[host];
    let addr = h.spec.host_buffer_base;
    let side = SidePlan {
        host,
        nic: 0,
        cpu_socket: socket,
        nic_buffer: Buffer::Host { socket, addr },
        staging: None,
        relay: None,
        handover: false,
        register: 0,
        deregister: 0,
    };
    let st = Staging {
        gpu,
        gpu_va: h.spec.gpus[gpu].heap_base,
        bounce_socket: socket,
        bounce_addr: addr,
        by_cpu: false,
        pageable: false,
        kernel: false,
    };
    let mut p = Plan::new(size);
    let thread = p.thread(host, socket);
    let cpu = p.actor(Actor::Cpu { host, socket });
    let ce = p.actor(Actor::CopyEngine { host, gpu });
    let copy = if h2d {
        // The copy waits for nothing: a Wait of zero stands for "the stream reached it".
        let ready = add(&mut p, StepKind::Wait { ps: 0 }, None, cpu, vec![], None);
        copy_to_gpu_as(&mut p, topo, &side, st, (thread, ce), (ready, false), size)?
    } else {
        let kind = copy_from_gpu(&mut p, topo, &side, st, thread, false)?;
        let copy = add(&mut p, kind, Some(Stage::MemcpyD2h), ce, vec![], None);
        carries(&mut p, copy, size, true)
    };
    let deliver = add(&mut p, StepKind::Deliver, None, cpu, vec![done(copy)], None);
    p.deliver = deliver;
    p.handles.finish = Some(add(
        &mut p,
        StepKind::Finish,
        None,
        cpu,
        vec![done(deliver)],
        None,
    ));
    p.link();
    Ok(p)
}

#[cfg(test)]
mod tests {
    use crate::config::{DEFAULT_TOML, Op, PathKind, parse};
    use crate::plan::{CqeKind, Handles, PacketKind, Plan, Step, StepId, StepKind};
    use crate::record::Stage;

    /// The ordering gap on one channel is the write's own service: it leaves one service
    /// after the data's tail. Behind a full TLP and a 1-byte tail on two links and a memory
    /// (the default's receive route, less its zero-service root complex and switch) the
    /// recursion gives what `gdrsim trace` of 65,537 B TLP by TLP shows: the 1-byte tail
    /// waits for the full TLP at the memory, and the CQE lands 1.183 ns after it (the DRAM at
    /// its family's sustained 80% of peak, 240 GB/s, row C23; 1.130 ns at 75%, 1.344 ns at the
    /// full 300).
    #[test]
    fn ordering_gap_follows_the_tail_through_each_server() {
        use super::{ChannelSpec, Unit, ordering_gap};
        let cfg = parse(DEFAULT_TOML, "default").unwrap();
        let topo = crate::scenario::topology(&cfg);
        let spec =
            |name: &str| -> &ChannelSpec { topo.channels.iter().find(|c| c.name == name).unwrap() };
        let link = spec("node-b/pcie:sw0>rc0");
        let service = |c: &ChannelSpec, b: u64| c.rate.tx_time(c.wire_bytes(Unit::Write, b, 1));
        assert_eq!(ordering_gap(&[link], 64, 65537, 256), service(link, 64));
        assert_eq!(ordering_gap(&[link], 64, 256, 256), service(link, 64));
        let route = [spec("node-b/pcie:nic0>sw0"), link, spec("node-b/cpu0.dram")];
        assert_eq!(ordering_gap(&route, 64, 65537, 256), 1183);
    }

    /// A pipelined message keeps its configured chunk until it would need more than
    /// MAX_CHUNKS (1024) of them; then chunks grow to size / 1024 rounded up, so a plan's
    /// steps stay bounded: 1 GiB in 256 KiB chunks would be 4096, so it goes in 1 MiB ones. A
    /// message smaller than a chunk is one chunk of its own size; a last chunk may be short.
    #[test]
    fn chunks_grow_only_past_the_most_a_message_may_have() {
        use super::{MAX_CHUNKS, chunking};
        let kib = 1024u64;
        assert_eq!(chunking(kib * kib, 256 * kib), (256 * kib, 4));
        assert_eq!(
            chunking(256 * kib * kib, 256 * kib),
            (256 * kib, MAX_CHUNKS)
        );
        assert_eq!(
            chunking(kib * kib * kib, 256 * kib),
            (kib * kib, MAX_CHUNKS)
        );
        assert_eq!(chunking(1000, 256 * kib), (1000, 1));
        assert_eq!(chunking(600 * kib, 256 * kib), (256 * kib, 3));
        assert_eq!(chunking(0, 256 * kib), (1, 1));
        // Never more than MAX_CHUNKS, and the chunks always cover the message.
        for size in [1, 4095, 1 << 20, (1 << 30) + 1, 16 << 30] {
            let (chunk, n) = chunking(size, 4 * kib);
            assert!(
                n <= MAX_CHUNKS && chunk * n >= size,
                "{size}: {chunk} x {n}"
            );
        }
    }

    /// The step a role names, which must exist where `want` says so.
    fn named<'p>(
        plan: &'p Plan,
        role: &str,
        step: Option<StepId>,
        want: bool,
    ) -> Option<&'p StepKind> {
        assert_eq!(
            step.is_some(),
            want,
            "{role}: {step:?} in {:?}",
            plan.handles
        );
        step.map(|s| &plan.steps[s.index()].kind)
    }

    /// Every builder names each role of its plan, and the step a role names is what the role
    /// says: a write names its post, fetch, payload read and write, wire, poll, ACK and send
    /// completion; a Send its receive WQE fetch; a Read no ACK; an inline payload no read; a
    /// chunked plan its first chunk's, and a receive only where its one chunk has no credit.
    #[test]
    fn builders_name_the_steps_of_each_role() {
        let cfg = parse(DEFAULT_TOML, "default").unwrap();
        let topo = crate::scenario::topology(&cfg);
        let flow = &cfg.scenarios[0].flows[0];
        let paths = [
            PathKind::Host,
            PathKind::Staged,
            PathKind::GpuDirect,
            PathKind::StagedPipelined,
        ];
        let ops = [Op::Write, Op::WriteImm, Op::Send, Op::Read];
        for (path, op, size) in paths
            .into_iter()
            .flat_map(|p| ops.map(|o| (p, o)))
            .flat_map(|(p, o)| [8, 1 << 20].map(|z| (p, o, z)))
        {
            let case = format!("{path:?} {op:?} {size} B");
            if op == Op::Read && matches!(path, PathKind::Staged | PathKind::StagedPipelined) {
                continue; // refused by the config check: a Read's source cannot be staged
            }
            let b = super::super::paths::plan(&cfg, flow, &topo, path, op, size).unwrap();
            let (p, h) = (&b.plan, b.plan.handles);
            // The default's receiver is a GPU: chunked, it hands each bounce buffer back by
            // credit, so no one receive.
            let one_receive = path != PathKind::StagedPipelined;
            assert!(
                matches!(named(p, "post", h.post, true), Some(StepKind::Post { .. })),
                "{case}"
            );
            assert!(matches!(
                named(p, "fetch", h.fetch, true),
                Some(StepKind::WqeFetch { .. })
            ));
            if let Some(read) = h.read {
                let s = &p.steps[read.index()];
                assert!(
                    matches!(s.kind, StepKind::DmaRead { .. }) && s.payload,
                    "{case}"
                );
            } else {
                // An inline payload (a chunk's too) is not read.
                let read = |s: &&Step| s.payload && matches!(s.kind, StepKind::DmaRead { .. });
                assert!(p.steps.iter().find(read).is_none(), "{case}: no read");
            }
            assert!(matches!(
                named(p, "wire", h.wire, true),
                Some(StepKind::Wire { .. })
            ));
            let write = named(p, "write", h.write, one_receive);
            assert!(write.is_none_or(|k| matches!(k, StepKind::DmaWrite { .. })));
            let fetch = named(p, "recv_fetch", h.recv_fetch, op == Op::Send && one_receive);
            assert!(fetch.is_none_or(|k| matches!(k, StepKind::RecvWqeFetch { .. })));
            let imm = op != Op::Write && one_receive;
            let cqe = named(p, "cqe", h.cqe, imm);
            let want = if op == Op::Read {
                CqeKind::Read
            } else {
                CqeKind::Recv
            };
            assert!(cqe.is_none_or(|k| matches!(k, StepKind::Cqe { kind, .. } if kind == &want)));
            named(p, "poll", h.poll, one_receive);
            if let Some(poll) = h.poll {
                assert_eq!(p.steps[poll.index()].stage, Some(Stage::Poll), "{case}");
            }
            let ack = named(p, "ack", h.ack, op != Op::Read && one_receive);
            assert!(ack.is_none_or(|k| matches!(
                k,
                StepKind::Packet {
                    what: PacketKind::Ack,
                    ..
                }
            )));
            let spoll = named(p, "send_poll", h.send_poll, op != Op::Read);
            assert!(spoll.is_none_or(|k| matches!(k, StepKind::Poll { .. })));
            assert_eq!(
                named(p, "finish", h.finish, true),
                Some(&StepKind::Finish),
                "{case}"
            );
            // The receive queue is the one the handles name.
            let queued = matches!(op, Op::Send | Op::WriteImm) && one_receive;
            assert_eq!(b.plan.recv_queue.is_some(), queued, "{case}");
            if let Some(rq) = b.plan.recv_queue {
                assert_eq!((Some(rq.poll), Some(rq.write)), (h.poll, h.write));
                assert_eq!((Some(rq.nak), rq.fetch), (h.ack, h.recv_fetch));
            }
            assert_ne!(h, Handles::default());
        }
    }
}

//! The RDMA NIC: send engine (WQE delivery, MTT lookup, payload DMA read, packetisation),
//! receive engine (payload DMA write, receive CQE, ACK), and the GPUDirect flush read.

use super::Event;
use super::fabric::{CqeKind, ENGINE_RECV_NIC, ENGINE_SEND_NIC, Fabric, Tag, Train};
use super::plan::SidePlan;
use crate::engine::Queue;
use crate::record::{Descriptor, DescriptorDir, Stage};
use crate::topology::Unit;
use crate::topology::spec::{NicSpec, WqeDelivery};
use crate::units::Ps;

impl Fabric<'_> {
    pub fn side(&self, side: usize) -> SidePlan {
        if side == 0 {
            self.plan.sender
        } else {
            self.plan.receiver
        }
    }

    pub fn nic_spec(&self, side: usize) -> &NicSpec {
        &self.topo.hosts[self.side(side).host].spec.nics[self.side(side).nic]
    }

    /// Whether the payload travels inside the WQE (host memory only, up to the inline limit).
    pub fn inline(&self) -> bool {
        !self.plan.sender.nic_buffer.is_gpu() && self.plan.size <= self.nic_spec(0).inline_max
    }

    /// A train reached the end of its route.
    pub fn arrive(&mut self, t: Train, now: Ps, q: &mut Queue<Event>) {
        let msg = t.msg;
        match t.tag {
            Tag::Mmio { side, flush } => {
                let side = side as usize;
                if !flush {
                    let from = self.msgs[msg as usize].post_start;
                    self.control_stage(msg, Stage::Post, self.comp.cpu[0], from, now);
                }
                self.msgs[msg as usize].wqe_start = now;
                if side == 0 && self.nic_spec(0).wqe_delivery == WqeDelivery::Doorbell {
                    // The NIC fetches the WQE from the send queue, inline data included.
                    let inline = if self.inline() {
                        self.plan.size.next_multiple_of(16)
                    } else {
                        0
                    };
                    let (mrrs, wqe) = (self.nic_spec(0).mrrs, self.nic_spec(0).wqe_bytes + inline);
                    let mps = self.r.mps_read.min(4096);
                    self.read(
                        ENGINE_SEND_NIC,
                        self.r.wqe_req,
                        self.r.wqe_cpl,
                        mrrs,
                        mps,
                        wqe,
                        msg,
                        Tag::WqeFetched,
                        false,
                        now,
                        q,
                    );
                } else {
                    self.send_engine(side, msg, flush, now, q);
                }
            }
            Tag::WqeFetched => {
                self.read_done(&t, now, q);
                self.send_engine(0, msg, false, now, q);
            }
            Tag::SqEngine { side: 0, .. } => self.wqe_ready(msg, now, q),
            Tag::SqEngine { .. } => {
                // The flush: a 1-byte RDMA Read of the receive buffer through a loopback QP. Its
                // request queues behind the payload's posted writes on the way to the GPU.
                let (req, cpl) = (
                    self.r.flush_req.expect("flush route"),
                    self.r.flush_cpl.expect("flush route"),
                );
                let mrrs = self.nic_spec(1).mrrs;
                self.read(
                    ENGINE_RECV_NIC,
                    req,
                    cpl,
                    mrrs,
                    256,
                    1,
                    msg,
                    Tag::FlushRead,
                    false,
                    now,
                    q,
                );
            }
            Tag::PayloadRead => {
                self.read_done(&t, now, q);
                let start = self.msgs[msg as usize].read_start;
                self.stage(
                    msg,
                    Stage::DmaRead,
                    self.comp.nic[0],
                    (start, start),
                    (t.head, t.tail),
                );
                self.packetise(msg, t.payload, t.head, t.tail, now, q);
            }
            Tag::TxDone => {
                self.stage(
                    msg,
                    Stage::NicTx,
                    self.comp.nic[0],
                    t.stage_in,
                    (t.head, t.tail),
                );
                self.relaunch(t, self.r.wire, Tag::WireDone, now, q);
            }
            Tag::WireDone => {
                self.stage(
                    msg,
                    Stage::Wire,
                    self.comp.wire,
                    t.stage_in,
                    (t.head, t.tail),
                );
                self.relaunch(t, self.r.rx, Tag::RxDone, now, q);
            }
            Tag::RxDone => {
                self.stage(
                    msg,
                    Stage::NicRx,
                    self.comp.nic[1],
                    t.stage_in,
                    (t.head, t.tail),
                );
                self.receive(t, now, q);
            }
            Tag::PayloadWritten => {
                self.stage(
                    msg,
                    Stage::DmaWrite,
                    self.comp.nic[1],
                    t.stage_in,
                    (t.head, t.tail),
                );
                self.msgs[msg as usize].writes_left -= 1;
                self.msgs[msg as usize].written_bytes += t.payload;
            }
            Tag::Ack => self.write_cqe(0, msg, CqeKind::Send, t.tail, now, q),
            Tag::Cqe(kind) => match kind {
                CqeKind::Recv => {
                    self.msgs[msg as usize].cqe_commit = t.tail;
                    self.stage(
                        msg,
                        Stage::Cqe,
                        self.comp.nic[1],
                        t.stage_in,
                        (t.head, t.tail),
                    );
                    self.cpu_push(1, super::cpu::Task::Poll { msg, kind }, now, q);
                }
                CqeKind::Send => self.cpu_push(0, super::cpu::Task::Poll { msg, kind }, now, q),
                CqeKind::Flush => self.cpu_push(1, super::cpu::Task::Poll { msg, kind }, now, q),
            },
            Tag::FlushRead => {
                self.read_done(&t, now, q);
                self.write_cqe(1, msg, CqeKind::Flush, t.tail, now, q);
            }
            Tag::D2h => self.copy_committed(0, msg, t.tail.max(now), q),
            Tag::H2d => {
                // The copy engine frees the request's tag on arrival, then writes GPU memory.
                self.read_done(&t, now, q);
                let route = self.r.h2d_commit.expect("staged receiver");
                self.relaunch(t, route, Tag::H2dCommitted, now, q);
            }
            Tag::H2dCommitted => self.copy_committed(1, msg, t.tail.max(now), q),
        }
    }

    /// The NIC of `side` writes a completion entry into its host's CQ (a posted write at `at`).
    fn write_cqe(
        &mut self,
        side: usize,
        msg: u32,
        kind: CqeKind,
        at: Ps,
        now: Ps,
        q: &mut Queue<Event>,
    ) {
        let bytes = self.nic_spec(side).cqe_bytes;
        let c = self.train(
            self.r.cqe[side],
            msg,
            Tag::Cqe(kind),
            Unit::Write,
            1,
            bytes,
            at,
            at,
        );
        self.launch(c, now, q);
    }

    /// The WQE passes the send engine (spaced by the NIC's message rate, after parsing).
    fn send_engine(&mut self, side: usize, msg: u32, flush: bool, now: Ps, q: &mut Queue<Event>) {
        let bytes = self.nic_spec(side).wqe_bytes;
        let t = self.train(
            self.r.engine[side],
            msg,
            Tag::SqEngine {
                side: side as u8,
                flush,
            },
            Unit::Packet,
            1,
            bytes,
            now,
            now,
        );
        self.launch(t, now, q);
    }

    /// The sender NIC holds a parsed WQE: build the gather descriptor, then fetch the payload
    /// (after the MTT lookup) or, for inline data, send at once.
    fn wqe_ready(&mut self, msg: u32, now: Ps, q: &mut Queue<Event>) {
        let from = self.msgs[msg as usize].wqe_start;
        self.control_stage(msg, Stage::WqeFetch, self.comp.nic[0], from, now);
        let buf = self.plan.sender.nic_buffer;
        let inline = self.inline();
        self.recorder.descriptor(Descriptor {
            msg,
            component: self.comp.nic[0],
            at: now,
            addr: buf.dma_addr(),
            len: self.plan.size,
            flags: u32::from(buf.is_gpu()),
            direction: DescriptorDir::Gather,
            virt_addr: buf.virt_addr(),
        });
        if inline {
            self.packetise(msg, self.plan.size, now, now, now, q);
            return;
        }
        let start = now + self.nic_spec(0).mtt_lookup;
        self.msgs[msg as usize].read_start = start;
        let nic = self.nic_spec(0);
        let (mrrs, window) = (nic.mrrs, nic.read_window);
        let size = self.plan.size;
        let chunk = self.read_chunk(size, mrrs, window);
        let mps = self.r.mps_read;
        let mut off = 0;
        while off < size.max(1) {
            let bytes = chunk.min(size - off).max(1);
            self.read(
                ENGINE_SEND_NIC,
                self.r.payload_req,
                self.r.payload_cpl,
                mrrs,
                mps,
                bytes,
                msg,
                Tag::PayloadRead,
                true,
                start,
                q,
            );
            off += bytes;
        }
    }

    /// Payload bytes reached the sender NIC: emit every packet they complete.
    fn packetise(
        &mut self,
        msg: u32,
        bytes: u64,
        head: Ps,
        tail: Ps,
        now: Ps,
        q: &mut Queue<Event>,
    ) {
        let mtu = self.nic_spec(0).mtu;
        let size = self.plan.size;
        let m = &mut self.msgs[msg as usize];
        m.tx_ready += bytes;
        let ready = m.tx_ready.min(size);
        let emit = if ready >= size {
            size.saturating_sub(m.tx_sent)
        } else {
            (ready - m.tx_sent) / mtu * mtu
        };
        if emit == 0 {
            return;
        }
        // When did the first packet of this batch complete? Bytes of this arrival are spread
        // evenly between its head and tail.
        let first_end = (m.tx_sent + emit.min(mtu)).saturating_sub(m.tx_ready - bytes);
        let head = if bytes == 0 || tail == head {
            tail
        } else {
            head + ((tail - head) as u128 * first_end.min(bytes) as u128 / bytes as u128) as Ps
        };
        m.tx_sent += emit;
        let chunk = self.chunk(size, mtu);
        let mut off = 0;
        let n = emit.div_ceil(chunk).max(1);
        for i in 0..n {
            let b = chunk.min(emit - off);
            let units = b.div_ceil(mtu).max(1);
            // TLP/packet granularity: each packet leaves when complete; bursts keep head/tail.
            let (h, t) = if n == 1 {
                (head, tail)
            } else {
                let at = head + (tail - head) * (i + 1) / n;
                (at, at)
            };
            let mut tr = self.train(
                self.r.tx,
                msg,
                Tag::TxDone,
                Unit::Packet,
                units,
                b,
                h.max(now),
                t.max(now),
            );
            tr.stage_in = (tr.head, tr.tail);
            self.launch(tr, now, q);
            off += b;
        }
    }

    /// Re-injects a train on the next segment of its journey, keeping its times.
    fn relaunch(&mut self, mut t: Train, route: u16, tag: Tag, now: Ps, q: &mut Queue<Event>) {
        t.route = route;
        t.hop = 0;
        t.tag = tag;
        t.src = self.routes[route as usize]
            .first()
            .copied()
            .unwrap_or(u32::MAX);
        t.stage_in = (t.head, t.tail);
        self.launch(t, now, q);
    }

    /// Packets reached the receiver NIC: MTT lookup, DMA write of the payload, and when the
    /// message is complete the receive CQE (behind the writes) and the ACK to the sender.
    fn receive(&mut self, t: Train, now: Ps, q: &mut Queue<Event>) {
        let msg = t.msg;
        let size = self.plan.size;
        let nic = self.nic_spec(1);
        let mtt = nic.mtt_lookup;
        let buf = self.plan.receiver.nic_buffer;
        if self.msgs[msg as usize].rx_bytes == 0 {
            self.recorder.descriptor(Descriptor {
                msg,
                component: self.comp.nic[1],
                at: now,
                addr: buf.dma_addr(),
                len: size,
                flags: u32::from(buf.is_gpu()),
                direction: DescriptorDir::Scatter,
                virt_addr: buf.virt_addr(),
            });
        }
        self.msgs[msg as usize].rx_bytes += t.payload;
        let (head, tail) = (t.head + mtt, t.tail + mtt);
        let mps = self.r.mps_write;
        let chunk = self.chunk(size, mps);
        let n = t.payload.div_ceil(chunk).max(1);
        // One write TLP's time on the first link: a packet's TLPs leave back to back, so the
        // k-th of them is ready for the DMA-write stage only k TLP times after the first (that
        // spacing comes from the packet, and must not count as the PCIe write stage stretching
        // the stream in the critical-path analysis).
        let first = self.routes[self.r.payload_write as usize][0] as usize;
        let tlp = self.channels[first]
            .rate
            .tx_time(self.channels[first].wire_bytes(Unit::Write, chunk.min(mps), 1));
        let mut off = 0;
        for i in 0..n {
            let b = chunk.min(t.payload - off);
            let (h, tl) = if n == 1 {
                (head, tail)
            } else {
                let at = head + (tail - head) * (i + 1) / n;
                (at, at)
            };
            let mut w = self.train(
                self.r.payload_write,
                msg,
                Tag::PayloadWritten,
                Unit::Write,
                b.div_ceil(mps),
                b,
                h,
                tl,
            );
            if n > 1 {
                w.stage_in = (h + i * tlp, tl + i * tlp);
            }
            w.counts_payload = true;
            self.msgs[msg as usize].writes_left += 1;
            self.launch(w, now, q);
            off += b;
        }
        if self.msgs[msg as usize].rx_bytes >= size {
            // Write with Immediate: consume the pre-posted receive WQE, write the CQE after the
            // data (same queue, so it cannot pass the payload on a shared route).
            self.write_cqe(1, msg, CqeKind::Recv, tail, now, q);
            // Reliable connection: the ACK completes the sender's work request.
            // The ACK is a header-only packet of ack_bytes on the wire.
            let ack = self.nic_spec(1).ack_bytes;
            let a = self.train(
                self.r.ack,
                msg,
                Tag::Ack,
                Unit::Control,
                1,
                ack,
                t.tail,
                t.tail,
            );
            self.launch(a, now, q);
        }
    }

    /// cudaMemcpy D2H: the copy engine reads GPU memory and posts writes into the bounce buffer.
    pub fn start_d2h(&mut self, msg: u32, now: Ps, q: &mut Queue<Event>) {
        let size = self.plan.size;
        let mps = self.r.mps_d2h;
        let chunk = self.chunk(size, mps);
        let route = self.r.d2h.expect("staged sender has a D2H route");
        let n = size.max(1).div_ceil(chunk);
        self.msgs[msg as usize].memcpy_left = n as u32;
        let mut off = 0;
        for _ in 0..n {
            let b = chunk.min(size - off);
            let mut w = self.train(
                route,
                msg,
                Tag::D2h,
                Unit::Write,
                b.div_ceil(mps),
                b,
                now,
                now,
            );
            w.counts_payload = true;
            self.launch(w, now, q);
            off += b;
        }
    }

    /// cudaMemcpy H2D: the copy engine reads the bounce buffer under its own read window.
    pub fn start_h2d(&mut self, msg: u32, now: Ps, q: &mut Queue<Event>) {
        let size = self.plan.size;
        let st = self.plan.receiver.staging.expect("staged receiver");
        let ce = self.topo.hosts[self.plan.receiver.host].spec.gpus[st.gpu].copy_engine;
        let chunk = self.read_chunk(size, ce.mrrs, ce.read_window);
        let (req, cpl) = (self.r.h2d_req.expect("h2d"), self.r.h2d_cpl.expect("h2d"));
        let mps = self.r.mps_h2d;
        let n = size.max(1).div_ceil(chunk);
        self.msgs[msg as usize].memcpy_left = n as u32;
        let mut off = 0;
        for _ in 0..n {
            let b = chunk.min(size - off);
            self.read(
                super::fabric::ENGINE_RECV_GPU,
                req,
                cpl,
                ce.mrrs,
                mps,
                b,
                msg,
                Tag::H2d,
                true,
                now,
                q,
            );
            off += b;
        }
    }
}

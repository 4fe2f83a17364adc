//! The RDMA NIC: send engine (WQE delivery, MTT lookup, payload DMA read, packetisation),
//! receive engine (payload DMA write, the receive CQE after the data, ACK), and the GPUDirect
//! flush read.

use super::Event;
use super::fabric::{Fabric, Train, read_completions};
use super::read_window::ReadWindow;
use super::steps::Instance;
use crate::engine::Queue;
use crate::plan::{Gather, Milestone, NicRef, Step, StepKind};
use crate::record::{Descriptor, DescriptorDir};
use crate::topology::spec::NicSpec;
use crate::topology::{Topology, Unit};
use crate::units::Ps;

/// One NIC's own state: its outstanding-read windows. Its queue pairs' send queues are the
/// flows' (a flow is one QP); its send engine and ports are channels of the topology.
#[derive(Debug)]
pub struct Nic {
    /// Payload reads: gathers, RDMA Read responses, flushes (a queue per flow, round robin).
    pub data: ReadWindow,
    /// WQE fetches after a doorbell, apart from its data reads.
    pub wqe: ReadWindow,
}

impl Nic {
    /// NIC `n` (numbered over every host) of `topo`, its windows as `windows` sizes them.
    pub fn new(windows: &[u32], topo: &Topology, n: usize) -> Nic {
        let (data, wqe) = topo.nic_engines(n);
        Nic {
            data: ReadWindow::new(windows[data.index()], false),
            wqe: ReadWindow::new(windows[wqe.index()], false),
        }
    }
}

impl Fabric<'_> {
    pub(crate) fn nic_spec(&self, nic: NicRef) -> &NicSpec {
        &self.topo.hosts[nic.host].spec.nics[nic.nic]
    }

    fn step_of(&self, Instance { flow, step, .. }: Instance) -> &Step {
        &self.plan_of(flow).steps[step.index()]
    }

    fn kind(&self, inst: Instance) -> &StepKind {
        &self.step_of(inst).kind
    }

    /// The WQE reached the NIC (a posted MMIO write): after a doorbell the NIC fetches it from
    /// the send queue by DMA read (inline data included), else it goes to the send engine.
    pub(super) fn wqe_fetch(&mut self, inst: Instance, at: Ps, now: Ps, q: &mut Queue<Event>) {
        let StepKind::WqeFetch { fetch, .. } = *self.kind(inst) else {
            unreachable!()
        };
        self.step_state(inst).started = at;
        match fetch {
            Some((read, bytes)) => {
                self.step_state(inst).parts = read_completions(bytes, read.mrrs, read.mps) as u32;
                self.read_for(inst, read, bytes, false, now, q);
            }
            None => self.send_engine(inst, 1, now, q),
        }
    }

    /// The WQE passes the send engine (spaced by the NIC's message rate, after parsing).
    pub(super) fn send_engine(&mut self, inst: Instance, phase: u8, now: Ps, q: &mut Queue<Event>) {
        let StepKind::WqeFetch {
            engine,
            wqe_bytes: bytes,
            ..
        } = *self.kind(inst)
        else {
            unreachable!("only a WQE passes the send engine")
        };
        let route = self.route_of(inst.flow, inst.msg, engine);
        let t = self.train(route, inst.with_phase(phase), Unit::Packet, bytes, now);
        self.launch(t, now, q);
    }

    /// The NIC holds a parsed WQE: it builds the gather descriptor; the payload read (or, for
    /// inline data, the transmission) follows in the plan.
    pub(super) fn wqe_ready(&mut self, inst: Instance, now: Ps, q: &mut Queue<Event>) {
        let from = self.step_state(inst).started;
        self.record_control(inst, from, now);
        let StepKind::WqeFetch { gather, .. } = *self.kind(inst) else {
            unreachable!()
        };
        if let Some(g) = gather {
            self.record_gather(inst, g, now);
        }
        self.fire(inst, Milestone::Done, now, now, q);
    }

    /// The gather descriptor the NIC of step `inst` builds at `at` (a record only).
    fn record_gather(&mut self, inst: Instance, gather: Gather, at: Ps) {
        let component = self.actor_id(inst);
        self.recorder.descriptor(Descriptor {
            msg: inst.msg,
            step: inst.step,
            component,
            at,
            addr: gather.buffer.dma_addr(),
            len: gather.len,
            flags: u32::from(gather.buffer.is_gpu()),
            direction: DescriptorDir::Gather,
            virt_addr: gather.buffer.virt_addr(),
        });
    }

    /// The payload read starts after the MTT lookup: as a bulk transfer for a large message,
    /// else request by request under the NIC's window.
    pub(super) fn payload_read(&mut self, inst: Instance, at: Ps, now: Ps, q: &mut Queue<Event>) {
        let StepKind::DmaRead { nic, gather, .. } = *self.kind(inst) else {
            unreachable!()
        };
        if let Some(g) = gather {
            self.record_gather(inst, g, at);
        }
        let start = at + self.nic_spec(nic).mtt_lookup;
        self.step_state(inst).started = start;
        if self.is_bulk(self.step_of(inst).bytes) {
            self.bulk_start(inst, start, q);
        } else if start > now {
            q.schedule(
                start,
                Event::Ready {
                    flow: inst.flow,
                    msg: inst.msg,
                    step: inst.step,
                },
            );
        } else {
            self.issue_payload_read(inst, now, q);
        }
    }

    /// The payload read's requests, at most MRRS each.
    pub(super) fn issue_payload_read(&mut self, inst: Instance, now: Ps, q: &mut Queue<Event>) {
        let StepKind::DmaRead { read, .. } = *self.kind(inst) else {
            unreachable!()
        };
        let (size, payload) = (self.step_of(inst).bytes, self.step_of(inst).payload);
        self.read_for(inst, read, size, payload, now, q);
    }

    /// Payload bytes reached the sending NIC's transmit step `inst` at `at`: emit every packet
    /// they complete.
    pub(super) fn packetise(
        &mut self,
        inst: Instance,
        bytes: u64,
        at: Ps,
        now: Ps,
        q: &mut Queue<Event>,
    ) {
        let StepKind::NicTx { nic, .. } = *self.kind(inst) else {
            unreachable!()
        };
        let mtu = self.nic_spec(nic).mtu;
        let size = self.step_of(inst).bytes;
        let m = self.step_state(inst);
        m.bytes_in += bytes;
        let ready = m.bytes_in.min(size);
        let emit = if ready >= size {
            size.saturating_sub(m.bytes_out)
        } else {
            (ready - m.bytes_out) / mtu * mtu
        };
        m.bytes_out += emit;
        let route = self.step_route(inst.flow, inst.msg, inst.step);
        let mut off = 0;
        while off < emit {
            let b = mtu.min(emit - off);
            let tr = self.train(route, inst.with_phase(0), Unit::Packet, b, at);
            self.launch(tr, now, q);
            off += b;
        }
    }

    /// A packet reached the end of the receive pipeline: the NIC looks up its MTT and writes the
    /// payload by DMA, TLP by TLP; once the message is in, the CQE step (behind the last write)
    /// and the ACK may go.
    pub(super) fn receive(&mut self, t: Train, now: Ps, q: &mut Queue<Event>) {
        let rx = Instance::new(t.flow, t.msg, t.step);
        let plan = self.plan_of(t.flow);
        let size = plan.steps[t.step.index()].bytes;
        let write_step = plan.output(t.step).expect("received data is written");
        let wr = Instance::new(t.flow, t.msg, write_step);
        let StepKind::DmaWrite { nic, mps, .. } = *self.kind(wr) else {
            unreachable!()
        };
        let mtt = self.nic_spec(nic).mtt_lookup;
        if self.step_state(rx).bytes_in == 0 {
            self.scatter_descriptor(wr, now);
        }
        self.step_state(rx).bytes_in += t.payload;
        let at = t.head + mtt;
        let route = self.step_route(t.flow, t.msg, write_step);
        // One write TLP's time on the first link: a packet's TLPs leave back to back, so the
        // k-th of them is ready for the DMA-write stage only k TLP times after the first (that
        // spacing comes from the packet, and must not count as the PCIe write stage stretching
        // the stream in the critical-path analysis).
        let first = (self.routes[route.index()][0]).index();
        let tlp = self.channels[first]
            .rate
            .tx_time(self.channels[first].wire_bytes(Unit::Write, mps.min(t.payload.max(1)), 1));
        let counts = plan.steps[write_step.index()].payload;
        let n = t.payload.div_ceil(mps).max(1);
        let mut off = 0;
        for i in 0..n {
            let b = mps.min(t.payload - off);
            let mut w = self.train(route, wr.with_phase(0), Unit::Write, b, at);
            w.stage_in = at + i * tlp;
            w.counts_payload = counts;
            self.launch(w, now, q);
            off += b;
        }
        if self.step_state(rx).bytes_in >= size {
            // The NIC issued its last payload write: what follows it (the receive CQE, which
            // cannot pass the data on a shared route) may go; the packets are in, so the ACK too.
            self.fire(wr, Milestone::LastIn, at, now, q);
            self.fire(rx, Milestone::Done, t.head, now, q);
        }
    }

    /// The receiving NIC's scatter descriptor (recorded once, when the first data arrives).
    pub(super) fn scatter_descriptor(&mut self, wr: Instance, at: Ps) {
        let StepKind::DmaWrite { scatter, .. } = *self.kind(wr) else {
            unreachable!()
        };
        let component = self.actor_id(wr);
        self.recorder.descriptor(Descriptor {
            msg: wr.msg,
            step: wr.step,
            component,
            at,
            addr: scatter.buffer.dma_addr(),
            len: scatter.len,
            flags: u32::from(scatter.buffer.is_gpu()),
            direction: DescriptorDir::Scatter,
            virt_addr: scatter.buffer.virt_addr(),
        });
    }

    /// The NIC writes a completion entry into its host's CQ (a posted write at `at`).
    pub(super) fn write_cqe(&mut self, inst: Instance, at: Ps, now: Ps, q: &mut Queue<Event>) {
        let StepKind::Cqe { nic, .. } = *self.kind(inst) else {
            unreachable!()
        };
        let bytes = self.nic_spec(nic).cqe_bytes;
        let route = self.step_route(inst.flow, inst.msg, inst.step);
        let c = self.train(route, inst.with_phase(0), Unit::Write, bytes, at);
        self.launch(c, now, q);
    }

    /// A header-only packet: the receiver's RC ACK (it completes the sender's work request),
    /// or a read request.
    pub(super) fn send_packet(&mut self, inst: Instance, at: Ps, now: Ps, q: &mut Queue<Event>) {
        let StepKind::Packet { bytes, .. } = *self.kind(inst) else {
            unreachable!()
        };
        let route = self.step_route(inst.flow, inst.msg, inst.step);
        let a = self.train(route, inst.with_phase(0), Unit::Control, bytes, at);
        self.launch(a, now, q);
    }

    /// The recorder component id of the step's actor.
    pub(super) fn actor_id(&self, Instance { flow, step, .. }: Instance) -> u32 {
        let f = &self.flows[flow as usize];
        f.actors[f.plan.steps[step.index()].actor as usize]
    }
}

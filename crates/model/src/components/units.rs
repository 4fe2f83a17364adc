//! Units in flight (a TLP, a packet, a doorbell or a CQE as one [`Train`]) and the servers
//! they cross: a unit takes each channel of its route in turn, waits in the channel's round
//! robin, is served at its wire size and moves on after the channel's latency.

use super::Event;
use super::channel;
use super::fabric::{Fabric, RouteId, Train, TrainId};
use crate::engine::Queue;
use crate::plan::StepId;
use crate::record::Hop;
use crate::topology::{ChannelId, Unit};
use crate::units::Ps;

impl Fabric<'_> {
    /// A fresh serial number (for records).
    pub fn next_serial(&mut self) -> u64 {
        self.serial += 1;
        self.serial
    }

    /// Allocates a train (reusing finished slots).
    pub fn new_train(&mut self, mut t: Train) -> TrainId {
        t.serial = self.next_serial();
        if let Some(id) = self.free_trains.pop() {
            self.trains[id.index()] = t;
            id
        } else {
            self.trains.push(t);
            TrainId::from_index(self.trains.len() - 1)
        }
    }

    /// A unit of step instance (flow, msg, step, phase) carrying `payload` bytes, entering
    /// fabric route `route` at `head`.
    pub fn train(
        &self,
        route: RouteId,
        (flow, msg, step, phase): (u32, u32, StepId, u8),
        unit: Unit,
        payload: u64,
        head: Ps,
    ) -> Train {
        Train {
            route,
            hop: 0,
            head,
            unit,
            payload,
            read: None,
            flow,
            msg,
            step,
            phase,
            stage_in: head,
            counts_payload: false,
            src: self.source(route, flow),
            extra: 0,
            serial: 0,
        }
    }

    /// Injects a unit and moves it as far as it can go now.
    pub fn launch(&mut self, t: Train, now: Ps, q: &mut Queue<Event>) {
        let id = self.new_train(t);
        self.advance(id, now, q);
    }

    /// Re-injects a unit on the next segment of its journey (the next step's route), keeping
    /// its time.
    pub fn relaunch(
        &mut self,
        mut t: Train,
        route: RouteId,
        (step, phase): (StepId, u8),
        now: Ps,
        q: &mut Queue<Event>,
    ) {
        t.route = route;
        t.hop = 0;
        t.step = step;
        t.phase = phase;
        t.src = self.source(route, t.flow);
        t.stage_in = t.head;
        self.launch(t, now, q);
    }

    /// Moves unit `id` along its route until it must wait (for a future time, or for a busy
    /// server) or arrives.
    pub fn advance(&mut self, id: TrainId, now: Ps, q: &mut Queue<Event>) {
        loop {
            let t = self.trains[id.index()];
            let route = &self.routes[t.route.index()];
            if t.hop as usize == route.len() {
                if t.head > now {
                    q.schedule(t.head, Event::Hop(id));
                    return;
                }
                self.free_trains.push(id);
                match t.read {
                    Some(r) if t.unit == Unit::ReadRequest => self.completer(t, r, now, q),
                    _ => self.arrive(t, now, q),
                }
                return;
            }
            let c = route[t.hop as usize];
            let spec = &self.channels[c.index()];
            if !spec.is_server() {
                let latency = spec.latency;
                self.record_hop(&t, c, (t.head, t.head + latency), 0);
                let t = &mut self.trains[id.index()];
                t.head += latency;
                t.hop += 1;
                continue;
            }
            // A cut-through switch forwards a packet once its header is in: the unit is ready
            // for the output port its serialisation on the previous link (less the header)
            // before it has fully arrived.
            let early = match (channel::cut_through(spec), t.hop) {
                (true, hop) if hop > 0 => {
                    let prev = &self.channels[route[hop as usize - 1].index()];
                    let (u, _) = channel::service(prev, t.unit, t.payload);
                    u.saturating_sub(prev.rate.tx_time(channel::CUT_THROUGH_BYTES))
                }
                _ => 0,
            };
            let ready = t.head.saturating_sub(early);
            if ready > now {
                q.schedule(ready, Event::Hop(id));
                return;
            }
            if !self.servers[c.index()].idle(now) {
                let (_, wire) = channel::service(spec, t.unit, t.payload);
                let srv = &mut self.servers[c.index()];
                srv.enqueue(t.src, id, wire);
                if !srv.wake_pending {
                    srv.wake_pending = true;
                    let at = srv.busy_until.max(now);
                    q.schedule(at, Event::ServerFree(c));
                }
                return;
            }
            self.serve(c, id, now, q);
        }
    }

    /// Records unit `t` crossing channel `c` over `(start, end)` with `wire` bytes (when
    /// keeping the traffic: walk and trace).
    fn record_hop(&mut self, t: &Train, c: ChannelId, (start, end): (Ps, Ps), wire: u64) {
        if !self.recorder.traffic {
            return;
        }
        let what = self.flows[t.flow as usize].plan.movement(t.step, t.phase);
        self.recorder.hops.push(Hop {
            flow: t.flow,
            msg: t.msg,
            step: t.step,
            train: t.serial,
            channel: c,
            start,
            end,
            payload: t.payload,
            units: 1,
            wire,
            unit: t.unit,
            what,
        });
    }

    /// Server `c` serves unit `id` from `now`; the unit moves on to its next channel.
    fn serve(&mut self, c: ChannelId, id: TrainId, now: Ps, q: &mut Queue<Event>) {
        // From the topology's channels (not a borrow of the fabric): it outlives the calls below.
        let channels = self.channels;
        let spec = &channels[c.index()];
        let t = self.trains[id.index()];
        let (u, wire) = channel::service(spec, t.unit, t.payload);
        // Bulk transfers crossing this link leave the unit room, or wait while it serialises.
        // It leaves when its own service (and its wait) is over; the channel's records keep
        // it until the room the transfers leave it has carried its bytes.
        let (hold, room) = self.unit_beside_bulk(c, (t.src, now), u, q);
        let srv = &mut self.servers[c.index()];
        let mut out = srv.serve(now, hold, u, wire);
        if channel::cut_through(spec) && t.hop > 0 {
            // ... but never leaves before it has arrived and its header has gone out.
            out = out.max(t.head + spec.rate.tx_time(channel::CUT_THROUGH_BYTES));
        }
        if t.counts_payload && channel::is_host_memory(spec) {
            srv.payload_bytes += t.payload;
            self.flows[t.flow as usize].msgs[t.msg as usize].host_mem_bytes += t.payload;
        }
        self.record_hop(&t, c, (now, out.max(now + room)), wire);
        let mut head = out + spec.latency + t.extra;
        if let Some(rid) = t.read.filter(|_| t.extra > 0) {
            // A jittered completion leaves the memory no earlier than its requester's last.
            let engine = self.window(self.reads[rid as usize].engine);
            if let Some((_, at)) = engine.last_data.filter(|l| l.0 == c) {
                head = head.max(at);
            }
            engine.last_data = Some((c, head));
        }
        let t = &mut self.trains[id.index()];
        t.head = head;
        t.extra = 0;
        t.hop += 1;
    }

    /// Server `c` finished its unit and has units waiting: serve the next, round robin.
    pub fn server_free(&mut self, c: ChannelId, now: Ps, q: &mut Queue<Event>) {
        self.servers[c.index()].wake_pending = false;
        let Some(id) = self.servers[c.index()].dequeue() else {
            return;
        };
        self.serve(c, id, now, q);
        let srv = &mut self.servers[c.index()];
        if srv.has_waiting() {
            srv.wake_pending = true;
            q.schedule(srv.busy_until, Event::ServerFree(c));
        }
        self.advance(id, now, q);
    }
}

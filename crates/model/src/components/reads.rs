//! DMA reads under a requester's outstanding-read window: a read is cut into requests of at
//! most MRRS, each issues when its window (a NIC's or a copy engine's) has a tag, the completer's
//! memory answers in completions of at most MPS, and the last completion frees the tag.

use super::Event;
use super::channel;
use super::fabric::{Fabric, RouteId, Train};
use super::read_window::ReadWindow;
use crate::engine::Queue;
use crate::plan::StepId;
use crate::topology::{ReadEngineId, ReadEngineOwner, Unit};
use crate::units::Ps;

/// One outstanding DMA read request: what to do with its completions.
#[derive(Clone, Copy, Debug)]
pub struct ReadReq {
    pub engine: ReadEngineId,
    pub cpl_route: RouteId,
    pub mps: u64,
    pub bytes: u64,
    /// Completions still to arrive at the requester.
    pub left: u32,
    pub counts_payload: bool,
}

impl Fabric<'_> {
    /// Read window `e`, in the NIC or copy engine that owns it.
    pub(crate) fn window(&mut self, e: ReadEngineId) -> &mut ReadWindow {
        match self.topo.owner_of(e) {
            ReadEngineOwner::NicData(n) => &mut self.nics[n].data,
            ReadEngineOwner::NicWqe(n) => &mut self.nics[n].wqe,
            ReadEngineOwner::CopyEngine(g) => &mut self.copy_engines[g].pcie,
            ReadEngineOwner::CopyEngineNvlink(g) => &mut self.copy_engines[g].nvlink,
        }
    }

    /// Queues a read of `bytes` (requests of at most `mrrs`, completions of at most `mps`) on a
    /// read engine for step instance `who`; each request issues when the engine has a tag.
    #[allow(clippy::too_many_arguments)]
    pub fn read(
        &mut self,
        engine: ReadEngineId,
        (req, cpl): (RouteId, RouteId),
        (mrrs, mps): (u64, u64),
        bytes: u64,
        who: (u32, u32, StepId, u8),
        counts_payload: bool,
        now: Ps,
        q: &mut Queue<Event>,
    ) {
        let mut off = 0;
        let total = bytes.max(1);
        while off < total {
            let b = mrrs.min(total - off);
            let r = ReadReq {
                engine,
                cpl_route: cpl,
                mps,
                bytes: b,
                left: 0,
                counts_payload,
            };
            let rid = match self.free_reads.pop() {
                Some(i) => {
                    self.reads[i as usize] = r;
                    i
                }
                None => {
                    self.reads.push(r);
                    (self.reads.len() - 1) as u32
                }
            };
            let mut t = self.train(req, who, Unit::ReadRequest, 0, now);
            t.read = Some(rid);
            let id = self.new_train(t);
            self.window(engine).push(who.0, id);
            off += b;
        }
        self.issue_reads(engine, now, q);
    }

    /// Step instance `inst` (phase 0) reads `bytes` as `spec` says: its plan routes resolved
    /// to this flow's, under the requester's window.
    pub(super) fn read_for(
        &mut self,
        inst: crate::components::steps::Instance,
        spec: crate::plan::ReadSpec,
        bytes: u64,
        payload: bool,
        now: Ps,
        q: &mut Queue<Event>,
    ) {
        let routes = (
            self.route_of(inst.flow, inst.msg, spec.req),
            self.route_of(inst.flow, inst.msg, spec.cpl),
        );
        let who = inst.with_phase(0);
        let sizes = (spec.mrrs, spec.mps);
        self.read(spec.engine, routes, sizes, bytes, who, payload, now, q);
    }

    /// Issues waiting requests while tags are free.
    fn issue_reads(&mut self, engine: ReadEngineId, now: Ps, q: &mut Queue<Event>) {
        while self.window(engine).tags_free > 0 {
            let Some(id) = self.window(engine).pop() else {
                return;
            };
            self.window(engine).tags_free -= 1;
            let t = &mut self.trains[id.index()];
            t.head = now;
            t.stage_in = now;
            self.advance(id, now, q);
        }
    }

    /// A request reached its completer: the memory answers with completions of at most MPS
    /// (after its access jitter, one draw per read).
    pub(super) fn completer(&mut self, t: Train, rid: u32, now: Ps, q: &mut Queue<Event>) {
        let r = self.reads[rid as usize];
        let first = self.routes[r.cpl_route.index()][0];
        let jitter = if channel::is_memory(&self.channels[first.index()]) {
            self.servers[first.index()].draw_jitter()
        } else {
            0
        };
        let n = r.bytes.div_ceil(r.mps).max(1);
        self.reads[rid as usize].left = n as u32;
        let mut off = 0;
        for _ in 0..n {
            let b = r.mps.min(r.bytes - off);
            let mut c = self.train(
                r.cpl_route,
                (t.flow, t.msg, t.step, t.phase),
                Unit::Completion,
                b,
                now,
            );
            c.read = Some(rid);
            c.counts_payload = r.counts_payload;
            c.extra = jitter;
            c.stage_in = t.stage_in;
            self.launch(c, now, q);
            off += b;
        }
    }

    /// A completion reached its requester: after the read's last one, its tag is free.
    /// Returns whether this was the read's last completion.
    pub fn read_done(&mut self, t: &Train, now: Ps, q: &mut Queue<Event>) -> bool {
        let Some(rid) = t.read else { return true };
        let r = &mut self.reads[rid as usize];
        r.left -= 1;
        if r.left > 0 {
            return false;
        }
        let engine = r.engine;
        self.free_reads.push(rid);
        self.window(engine).tags_free += 1;
        self.issue_reads(engine, now, q);
        true
    }
}

/// How many completions a read of `bytes` returns when split into requests of at most `mrrs`
/// bytes, each answered in completions of at most `mps`: an MRRS below the MPS gives one
/// completion per request, not one per MPS of the whole read.
pub fn read_completions(bytes: u64, mrrs: u64, mps: u64) -> u64 {
    let total = bytes.max(1);
    let (full, rest) = (total / mrrs, total % mrrs);
    full * mrrs.div_ceil(mps) + rest.div_ceil(mps)
}

#[cfg(test)]
mod tests {
    use super::read_completions;

    #[test]
    fn completions_are_counted_per_request() {
        // MRRS 512 under MPS 4096: one completion per 512-byte request.
        assert_eq!(read_completions(4 << 20, 512, 4096), 8192);
        // MRRS 4096 over MPS 256: 16 per request.
        assert_eq!(read_completions(8192, 4096, 256), 32);
        // A tail request of 300 bytes at MPS 256 gives two.
        assert_eq!(read_completions(4096 + 300, 4096, 256), 16 + 2);
        // A zero-byte read still answers once.
        assert_eq!(read_completions(0, 512, 256), 1);
    }
}

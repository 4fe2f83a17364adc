//! The trace's tracks, created on first use: a component's stage track, or a channel's track,
//! in one of three processes (the sender's host, the receiver's, the network).

use super::*;

/// Which track each recorded component or channel got.
pub(super) struct Tracks<'a> {
    topo: &'a Topology,
    rec: &'a Recorder,
    /// The sending and receiving hosts.
    hosts: (usize, usize),
    /// Track index per recorded id (channels first, then components).
    track_of: Vec<Option<usize>>,
}

/// The network's process.
const NETWORK: usize = 2;

impl<'a> Tracks<'a> {
    /// No track yet for `run`'s components and channels.
    pub(super) fn new(topo: &'a Topology, run: &'a Recorded) -> Self {
        Tracks {
            topo,
            rec: &run.recorder,
            hosts: (run.plan.sender.host, run.plan.receiver.host),
            track_of: vec![None; run.recorder.component_names.len()],
        }
    }

    /// The trace process of a host: 0 the sender's, 1 the receiver's, 2 the network.
    pub(super) fn process_of(&self, host: Option<usize>) -> usize {
        match host {
            Some(h) if h == self.hosts.0 => 0,
            Some(h) if h == self.hosts.1 => 1,
            _ => NETWORK,
        }
    }

    /// The track of recorded id `id`, added to `data` on first use: channels sort after the
    /// stage tracks, in topology order.
    pub(super) fn track(&mut self, data: &mut TraceData, id: u32) -> usize {
        if let Some(t) = self.track_of[id as usize] {
            return t;
        }
        let (topo, rec) = (self.topo, self.rec);
        let n_channels = topo.channels.len();
        let (process, name, sort) = if (id as usize) < n_channels {
            let c = &topo.channels[id as usize];
            (
                self.process_of(c.host),
                short_name(topo, rec, id),
                100 + id as u64,
            )
        } else {
            let full = rec.component_name(id);
            let p = self.process_of(
                topo.hosts
                    .iter()
                    .position(|h| full.starts_with(&format!("{}/", h.name))),
            );
            (
                p,
                format!("{} (stages)", short_name(topo, rec, id)),
                1 + id as u64 - n_channels as u64,
            )
        };
        data.tracks.push(Track {
            process,
            name,
            sort,
        });
        self.track_of[id as usize] = Some(data.tracks.len() - 1);
        data.tracks.len() - 1
    }
}

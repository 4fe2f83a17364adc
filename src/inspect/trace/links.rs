//! The trace's link utilisation: the busy windows of every server PCIe link, wire, network
//! switch and socket link the run crossed.

use super::tracks::Tracks;
use super::*;

/// One busy-window series per counted channel.
pub(super) fn busy(data: &mut TraceData, tracks: &Tracks, topo: &Topology, run: &Recorded) {
    let rec = &run.recorder;
    // Link utilisation.
    for (c, spec) in topo.channels.iter().enumerate() {
        let counted = matches!(
            spec.kind,
            ChannelKind::PcieLink { .. }
                | ChannelKind::Wire
                | ChannelKind::NetworkSwitch
                | ChannelKind::SocketLink
        );
        if !counted || !spec.is_server() {
            continue;
        }
        let windows: Vec<(Ps, Ps, Ps)> = rec
            .hops
            .iter()
            .filter(|h| h.channel.index() == c)
            .map(|h| {
                let bytes = spec.wire_bytes(h.unit, h.payload, h.units);
                (
                    h.start,
                    h.end.saturating_sub(spec.latency).max(h.start),
                    spec.rate.tx_time(bytes),
                )
            })
            .collect();
        if windows.is_empty() {
            continue;
        }
        data.links.push(LinkBusy {
            process: tracks.process_of(spec.host),
            name: short_name(topo, rec, c as u32),
            windows,
        });
    }
}

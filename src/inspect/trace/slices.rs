//! The trace's message, stage and descriptor slices.

use super::tracks::Tracks;
use super::*;

/// Messages: the one-way latency of each, on a track of their own.
pub(super) fn messages(data: &mut TraceData, run: &Recorded, size: u64) {
    data.tracks.push(Track {
        process: 0,
        name: "messages (one-way latency)".into(),
        sort: 0,
    });
    let msg_track = data.tracks.len() - 1;
    for (k, &(s, e)) in run.outcome.messages.iter().enumerate() {
        data.slices.push(Slice {
            track: msg_track,
            name: format!("msg {k}"),
            cat: "message".into(),
            start: s,
            end: e,
            instant: false,
            args: vec![
                ("msg".into(), Arg::Int(k as u64)),
                ("start_us".into(), us_exact(s)),
                ("end_us".into(), us_exact(e)),
                ("latency_us".into(), us_exact(e - s)),
                ("size_bytes".into(), Arg::Int(size)),
            ],
        });
    }
}

/// Stages, with message 0's critical-path shares and the addresses they move between; one
/// flow per message through its stages.
pub(super) fn stages(
    data: &mut TraceData,
    tracks: &mut Tracks,
    run: &Recorded,
    size: u64,
    messages: u32,
) {
    let rec = &run.recorder;
    let plan = run.plan;
    let msg0: Vec<&Span> = run.spans.iter().filter(|s| s.msg == 0).collect();
    let (s0, e0) = run.outcome.messages[0];
    let critical = crate::stats::critical_path(&run.steps, &msg0, e0 - s0, |c| {
        rec.component_name(c).to_string()
    });
    let mut stage_chains: Vec<Vec<usize>> = vec![Vec::new(); messages as usize];
    for s in &run.spans {
        let t = tracks.track(data, s.component);
        let mut args = vec![
            ("msg".into(), Arg::Int(s.msg as u64)),
            ("stage".into(), Arg::from(s.stage.name())),
            (
                "component".into(),
                Arg::from(rec.component_name(s.component)),
            ),
            ("start_us".into(), us_exact(s.start)),
            ("first_out_us".into(), us_exact(s.first_out)),
            ("last_in_us".into(), us_exact(s.last_in)),
            ("end_us".into(), us_exact(s.end)),
        ];
        if s.msg == 0
            && let Some(row) = critical.iter().find(|r| r.stage == s.stage)
        {
            args.push(("critical_us".into(), us_exact(row.critical_ps)));
        }
        args.push(("size_bytes".into(), Arg::Int(size)));
        let (src, dst) = (plan.sender.nic_buffer, plan.receiver.nic_buffer);
        match (s.stage, plan.sender.staging, plan.receiver.staging) {
            (Stage::DmaRead, ..) => args.push(("src".into(), hex(src.dma_addr()))),
            (Stage::DmaWrite, ..) => args.push(("dst".into(), hex(dst.dma_addr()))),
            (Stage::Flush, ..) => args.push(("src".into(), hex(dst.dma_addr()))),
            (Stage::MemcpyD2h, Some(st), _) => {
                args.push(("src".into(), hex(st.gpu_va)));
                args.push(("dst".into(), hex(st.bounce_addr)));
            }
            (Stage::MemcpyH2d, _, Some(st)) => {
                args.push(("src".into(), hex(st.bounce_addr)));
                args.push(("dst".into(), hex(st.gpu_va)));
            }
            _ => {}
        }
        data.slices.push(Slice {
            track: t,
            name: s.stage.name().into(),
            cat: "stage".into(),
            start: s.start,
            end: s.end,
            instant: false,
            args,
        });
        stage_chains[s.msg as usize].push(data.slices.len() - 1);
    }
    for mut chain in stage_chains {
        chain.sort_by_key(|&i| data.slices[i].start);
        data.flows.push(chain);
    }
}

/// Descriptors, as instants on the NIC's stage track.
pub(super) fn descriptors(data: &mut TraceData, tracks: &mut Tracks, run: &Recorded) {
    for d in &run.recorder.descriptors {
        let t = tracks.track(data, d.component);
        let gather = d.direction == DescriptorDir::Gather;
        data.slices.push(Slice {
            track: t,
            name: if gather {
                "DMA descriptor (gather)".into()
            } else {
                "DMA descriptor (scatter)".into()
            },
            cat: "descriptor".into(),
            start: d.at,
            end: d.at,
            instant: true,
            args: vec![
                ("msg".into(), Arg::Int(d.msg as u64)),
                (if gather { "src" } else { "dst" }.into(), hex(d.addr)),
                ("virt_addr".into(), hex(d.virt_addr)),
                ("len".into(), Arg::Int(d.len)),
                ("flags".into(), Arg::Int(d.flags as u64)),
            ],
        });
    }
}

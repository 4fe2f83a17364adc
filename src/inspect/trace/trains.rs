//! The trace's hops: a slice per train per channel, with the addresses of payload trains at
//! their offset in the buffer, and a flow per train.

use super::tracks::Tracks;
use super::*;

/// A slice per train per channel and a flow per train.
pub(super) fn hops(data: &mut TraceData, tracks: &mut Tracks, run: &Recorded) {
    let rec = &run.recorder;
    let plan = run.plan;
    // Hops: a slice per train per channel, addresses of payload trains, a flow per train.
    // Offsets within the buffer: the payload trains of one (message, kind) in issue order.
    let mut train_bytes: BTreeMap<u64, u64> = BTreeMap::new();
    let mut first_seen: Vec<&Hop> = Vec::new();
    for hop in &rec.hops {
        let b = train_bytes.entry(hop.train).or_insert_with(|| {
            first_seen.push(hop);
            0
        });
        *b = (*b).max(hop.payload);
    }
    let mut next: BTreeMap<(u32, Movement), u64> = BTreeMap::new();
    let mut train_offset: BTreeMap<u64, u64> = BTreeMap::new();
    for hop in first_seen {
        let slot = next.entry((hop.msg, hop.what)).or_insert(0);
        train_offset.insert(hop.train, *slot);
        *slot += train_bytes[&hop.train];
    }
    let offset_of = |train: u64| train_offset.get(&train).copied().unwrap_or(0);
    let mut train_chains: Vec<Vec<usize>> = Vec::new();
    let mut chain_of: BTreeMap<u64, usize> = BTreeMap::new();
    let staging_s = plan.sender.staging;
    let staging_r = plan.receiver.staging;
    for hop in &rec.hops {
        let t = tracks.track(data, hop.channel.0);
        let request = hop.what.is_read() && hop.payload == 0;
        let mut args = vec![
            ("msg".into(), Arg::Int(hop.msg as u64)),
            ("train".into(), Arg::Int(hop.train)),
            (
                "channel".into(),
                Arg::from(rec.component_name(hop.channel.0)),
            ),
            ("payload_bytes".into(), Arg::Int(hop.payload)),
            ("units".into(), Arg::Int(hop.units)),
            ("start_us".into(), us_exact(hop.start)),
            ("end_us".into(), us_exact(hop.end)),
        ];
        let off = offset_of(hop.train);
        let what = hop.what;
        let flush = run.steps.stage(hop.step) == Some(Stage::Flush);
        if flush {
            if what == Movement::PayloadRead {
                args.push(("src".into(), hex(plan.receiver.nic_buffer.dma_addr())));
            }
        } else if what == Movement::PayloadRead {
            args.push(("src".into(), hex(plan.sender.nic_buffer.dma_addr() + off)));
        } else if what == Movement::PayloadWrite {
            args.push(("dst".into(), hex(plan.receiver.nic_buffer.dma_addr() + off)));
        } else if what == Movement::D2h
            && let Some(st) = staging_s
        {
            args.push(("src".into(), hex(st.gpu_va + off)));
            args.push(("dst".into(), hex(st.bounce_addr + off)));
        } else if (what == Movement::H2dRead || what == Movement::H2dWrite)
            && let Some(st) = staging_r
        {
            args.push(("src".into(), hex(st.bounce_addr + off)));
            args.push(("dst".into(), hex(st.gpu_va + off)));
        }
        data.slices.push(Slice {
            track: t,
            name: match (flush, request) {
                (true, true) => format!("flush {} (request)", what.name()),
                (true, false) => format!("flush {}", what.name()),
                (false, true) => format!("{} (request)", what.name()),
                (false, false) => what.name().to_string(),
            },
            cat: "hop".into(),
            start: hop.start,
            end: hop.end,
            instant: false,
            args,
        });
        let i = data.slices.len() - 1;
        let c = *chain_of.entry(hop.train).or_insert_with(|| {
            train_chains.push(Vec::new());
            train_chains.len() - 1
        });
        train_chains[c].push(i);
    }
    data.flows.extend(train_chains);
}

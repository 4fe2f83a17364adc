//! The trace of a workload point (an NCCL collective's): one track per flow, which for a
//! collective is one edge of one channel's ring or tree (`c3 n0/gpu1->n0/gpu2`), on its
//! sender's host; each message (a ring's slice, a tree's chunk) a slice from its first
//! stage's start to its last stage's end, named `msg K`, with its stages (`p2p`, `relay`,
//! `wire`, `reduce`...) beside it, and one flow arrow through them. From the point's
//! noise-free run, the one whose stages and critical chain `gdrsim run` reports.

use super::*;
use crate::config::Workload;

/// What a workload trace will hold, from its plans, before any work: its point, its workload
/// and its flows (with their messages and slices).
pub(in crate::inspect) struct Shape<'c> {
    /// The point traced.
    pub point: scenario::Point,
    /// Its scenario's workload.
    pub workload: &'c Workload,
    /// Each flow as the records number them.
    pub flows: Vec<scenario::workload::FlowRecords>,
}

impl<'c> Shape<'c> {
    /// Scenario `si`'s workload at (`path`, `op`, `size`); None where it is not a workload.
    pub fn of(
        cfg: &'c Config,
        topo: &Topology,
        si: usize,
        (path, op): (PathKind, Op),
        size: u64,
    ) -> Option<Self> {
        let workload = cfg.scenarios[si].workload.as_ref()?;
        let point = scenario::Point::at(cfg.seed, si, path, op, size);
        let flows = scenario::workload::flow_records(cfg, topo, &point, workload);
        Some(Shape {
            point,
            workload,
            flows,
        })
    }

    /// Messages over every flow.
    pub fn messages(&self) -> u64 {
        self.flows.iter().map(|f| u64::from(f.messages)).sum()
    }

    /// Slices the trace writes: per message, its own and one per stage.
    pub fn slices(&self) -> u64 {
        (self.flows.iter())
            .map(|f| u64::from(f.messages) * (1 + u64::from(f.spans_each)))
            .sum()
    }
}

/// The trace of the workload point `shape`.
pub(super) fn trace(cfg: &Config, topo: &Topology, shape: &Shape) -> TraceData {
    let p = &shape.point;
    let (completion, rec) = scenario::workload::simulate_noise_free(cfg, topo, p, shape.workload);
    let rec = &rec;
    let mut data = TraceData {
        processes: topo.hosts.iter().map(|h| h.name.clone()).collect(),
        ..TraceData::default()
    };
    for (i, f) in shape.flows.iter().enumerate() {
        data.tracks.push(Track {
            process: f.host,
            name: f.name.clone(),
            sort: i as u64,
        });
    }
    // Spans come in message order, flow by flow: one run of them per message.
    for group in rec
        .spans
        .chunk_by(|a, b| (a.flow, a.msg) == (b.flow, b.msg))
    {
        let (flow, msg) = (group[0].flow as usize, group[0].msg);
        let start = group.iter().map(|s| s.start).min().unwrap_or(0);
        let end = group.iter().map(|s| s.end).max().unwrap_or(start);
        let mut chain = vec![data.slices.len()];
        data.slices.push(Slice {
            track: flow,
            name: format!("msg {msg}"),
            cat: "message".into(),
            start,
            end,
            instant: false,
            args: vec![
                ("flow".into(), Arg::from(shape.flows[flow].name.as_str())),
                ("msg".into(), Arg::Int(u64::from(msg))),
                ("start_us".into(), us_exact(start)),
                ("end_us".into(), us_exact(end)),
                ("latency_us".into(), us_exact(end - start)),
            ],
        });
        for s in group {
            chain.push(data.slices.len());
            data.slices.push(Slice {
                track: flow,
                name: s.stage.name().to_string(),
                cat: "stage".into(),
                start: s.start,
                end: s.end,
                instant: false,
                args: vec![
                    ("msg".into(), Arg::Int(u64::from(msg))),
                    ("stage".into(), Arg::from(s.stage.name())),
                    (
                        "component".into(),
                        Arg::from(rec.component_name(s.component)),
                    ),
                    ("start_us".into(), us_exact(s.start)),
                    ("end_us".into(), us_exact(s.end)),
                    ("bytes".into(), Arg::Int(s.bytes)),
                ],
            });
        }
        data.flows.push(chain);
    }
    data.metadata = vec![
        ("generator".into(), Arg::from("gdrsim trace")),
        ("config".into(), Arg::from(cfg.name.as_str())),
        (
            "scenario".into(),
            Arg::from(cfg.scenarios[p.scenario].name.as_str()),
        ),
        ("path".into(), Arg::from(p.path.name())),
        ("size_bytes".into(), Arg::Int(p.size)),
        ("flows".into(), Arg::Int(shape.flows.len() as u64)),
        ("messages".into(), Arg::Int(shape.messages())),
        ("completion_us".into(), us_exact(completion)),
        (
            "times".into(),
            Arg::from(
                "ts/dur in microseconds rounded to the nanosecond; exact picosecond times in args (*_us)",
            ),
        ),
        (
            "note".into(),
            Arg::from(
                "noise-free run (jitter off): one track per flow (a collective's edge of one channel), each message a slice with its stages",
            ),
        ),
    ];
    data
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two DGX H100 with 2 GPUs each and 2 channels: a ring of 4 ranks per channel, 8 flows.
    /// The trace has a track per flow (named as the flow, on its sender's host), a `msg K`
    /// slice per message of each flow, every stage within its message's slice, and no more
    /// slices than the gate's estimate from the plans; its completion is the point's.
    #[test]
    fn a_collective_trace_has_a_track_per_flow_and_a_slice_per_message() {
        let text = "name = \"t\"\nseed = 3\n[sweep]\nsizes = [\"256KiB\"]\n\
                    paths = [\"gpudirect\"]\nops = [\"write_imm\"]\n[network]\nswitch_hops = 1\n\
                    [[machines]]\nname = \"dgx\"\npreset = \"dgx-h100\"\n[[hosts]]\nname = \"a\"\n\
                    machine = \"dgx\"\n[[hosts]]\nname = \"b\"\nmachine = \"dgx\"\n\
                    [[scenarios]]\nname = \"ar\"\ncollective = { kind = \"all_reduce\", \
                    algorithm = \"ring\", gpus_per_host = 2, channels = 2 }\n";
        let cfg = crate::config::parse(text, "t.toml").unwrap();
        let topo = scenario::topology(&cfg);
        let at = (PathKind::GpuDirect, Op::WriteImm);
        let size = 256 << 10;
        let shape = Shape::of(&cfg, &topo, 0, at, size).unwrap();
        assert_eq!(shape.flows.len(), 8);
        let data = trace(&cfg, &topo, &shape);
        assert_eq!(data.processes, vec!["a".to_string(), "b".to_string()]);
        assert_eq!(data.tracks.len(), 8);
        for (t, f) in shape.flows.iter().enumerate() {
            assert_eq!(data.tracks[t].name, f.name);
            assert_eq!(data.tracks[t].process, f.host);
            let mine = |cat: &str| {
                (data.slices.iter())
                    .filter(|s| s.track == t && s.cat == cat)
                    .collect::<Vec<_>>()
            };
            let msgs = mine("message");
            assert!(f.messages > 1);
            assert_eq!(msgs.len() as u32, f.messages, "{}", f.name);
            for (k, m) in msgs.iter().enumerate() {
                assert_eq!(m.name, format!("msg {k}"));
            }
            for s in mine("stage") {
                let Some(Arg::Int(k)) = s.args.iter().find(|a| a.0 == "msg").map(|a| &a.1) else {
                    panic!("a stage names its message")
                };
                let m = msgs[*k as usize];
                assert!(m.start <= s.start && s.end <= m.end, "{}", s.name);
            }
        }
        let all = data.slices.len() as u64;
        assert!(all > 2 * shape.messages() && all <= shape.slices());
        let p = scenario::Point::at(cfg.seed, 0, at.0, at.1, size);
        let r = scenario::simulate_point(&cfg, &topo, &p);
        let completion = data.metadata.iter().find(|m| m.0 == "completion_us");
        assert_eq!(
            completion.map(|m| &m.1),
            Some(&us_exact(r.summary.lat_model_ps))
        );
    }
}

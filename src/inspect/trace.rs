//! The trace model: tracks, slices, flows and counters of one point, as
//! [`crate::report::trace`] writes them.

use super::*;

pub(super) fn us_exact(ps: Ps) -> Arg {
    Arg::Str(ps_to_us_exact(ps))
}

pub(super) fn hex(a: u64) -> Arg {
    Arg::Str(walkthrough::hex(a))
}

/// The trace of `messages` messages of (scenario `si`, `path`, `size`), at most the config's
/// streaming window in flight.
pub fn trace(
    cfg: &Config,
    si: usize,
    (path, op): (PathKind, Op),
    size: u64,
    messages: u32,
) -> Result<TraceData> {
    let topo = &scenario::topology(cfg);
    let sc = &cfg.scenarios[si];
    let messages = messages.max(1);
    let window = cfg.sim.stream_window.min(messages).max(1);
    check_point(cfg, topo, si, path, op)?;
    let run = record(cfg, topo, si, (path, op), size, window, messages)?;
    let rec = &run.recorder;
    let plan = run.plan;
    let n_channels = topo.channels.len();
    let mut data = TraceData {
        processes: vec![
            format!("{} (sender)", topo.hosts[plan.sender.host].name),
            format!("{} (receiver)", topo.hosts[plan.receiver.host].name),
            "network".to_string(),
        ],
        ..TraceData::default()
    };
    let network = 2;
    // Trace processes: the sender's host, the receiver's, the network.
    let process_of = |host: Option<usize>| match host {
        Some(h) if h == plan.sender.host => 0,
        Some(h) if h == plan.receiver.host => 1,
        _ => network,
    };
    // Tracks, created on first use: stage tracks of components, then channels in topology order.
    let mut track_of: Vec<Option<usize>> = vec![None; rec.component_names.len()];
    let mut track = |data: &mut TraceData, id: u32| -> usize {
        if let Some(t) = track_of[id as usize] {
            return t;
        }
        let (process, name, sort) = if (id as usize) < n_channels {
            let c = &topo.channels[id as usize];
            (
                process_of(c.host),
                short_name(topo, rec, id),
                100 + id as u64,
            )
        } else {
            let full = rec.component_name(id);
            let p = process_of(
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
        track_of[id as usize] = Some(data.tracks.len() - 1);
        data.tracks.len() - 1
    };
    // Messages: one-way latency of each, on a track of their own.
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
    // Stages, with message 0's critical-path shares.
    let msg0: Vec<&Span> = run.spans.iter().filter(|s| s.msg == 0).collect();
    let (s0, e0) = run.outcome.messages[0];
    let critical = crate::stats::critical_path(&run.steps, &msg0, e0 - s0, |c| {
        rec.component_name(c).to_string()
    });
    let mut stage_chains: Vec<Vec<usize>> = vec![Vec::new(); messages as usize];
    for s in &run.spans {
        let t = track(&mut data, s.component);
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
    // Descriptors, as instants on the NIC's stage track.
    for d in &rec.descriptors {
        let t = track(&mut data, d.component);
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
        let t = track(&mut data, hop.channel);
        let request = hop.what.is_read() && hop.payload == 0;
        let mut args = vec![
            ("msg".into(), Arg::Int(hop.msg as u64)),
            ("train".into(), Arg::Int(hop.train)),
            ("channel".into(), Arg::from(rec.component_name(hop.channel))),
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
            .filter(|h| h.channel as usize == c)
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
            process: process_of(spec.host),
            name: short_name(topo, rec, c as u32),
            windows,
        });
    }
    data.metadata = vec![
        ("generator".into(), Arg::from("gdrsim trace")),
        ("config".into(), Arg::from(cfg.name.as_str())),
        ("scenario".into(), Arg::from(sc.name.as_str())),
        (
            "class".into(),
            Arg::from(paths::sender_class(topo, cfg.scenarios[si].first(), path).to_string()),
        ),
        ("path".into(), Arg::from(path.name())),
        (
            "effective_path".into(),
            Arg::from(run.effective_path.name()),
        ),
        ("size_bytes".into(), Arg::Int(size)),
        ("messages".into(), Arg::Int(messages as u64)),
        ("window".into(), Arg::Int(window as u64)),
        ("msg0_latency_us".into(), us_exact(e0 - s0)),
        (
            "host_mem_bytes".into(),
            Arg::Int(run.outcome.host_mem_bytes),
        ),
        (
            "times".into(),
            Arg::from(
                "ts/dur in microseconds rounded to the nanosecond; exact picosecond times in args (*_us)",
            ),
        ),
        (
            "note".into(),
            Arg::from(
                "noise-free run (jitter off); the recorder keeps stage spans of message 0 only, the stages of later messages are rebuilt from the fabric's per-message stage times",
            ),
        ),
    ];
    Ok(data)
}

/// What `gdrsim trace` reports after writing.
pub struct TraceRun {
    pub stats: TraceStats,
    pub summary: String,
}

/// `gdrsim trace`: loads the config, traces, writes `out`.
pub fn run_trace(
    config: Option<&Path>,
    scenario: Option<&str>,
    (path, op): (&str, &str),
    size: &str,
    messages: u32,
    out: &Path,
) -> Result<TraceRun> {
    let path = parse_path(path)?;
    let op = parse_op(op)?;
    let size = parse_size(size)?;
    if messages == 0 {
        return Err(ConfigError::new(CLI, "--messages", "at least 1", "0").into());
    }
    // A trace holds every train of every message: keep it to what a viewer can open.
    if messages > 10_000 || (messages as u64).saturating_mul(size) > 4 << 30 {
        return Err(ConfigError::new(
            CLI,
            "--messages",
            "at most 10000 messages and 4 GiB in all (a trace records every burst)",
            format!("{messages} x {size} bytes"),
        )
        .into());
    }
    crate::report::output_dir::usable_file(out, "--out")?;
    let cfg = crate::app::load_config(config)?;
    let si = scenario_index(&cfg, scenario)?;
    // Every unit of every message is a slice: estimate the file from one message, and refuse
    // what no viewer opens (and what would hold gigabytes here while it is built).
    if messages > 1 {
        let one = crate::report::trace::render(&trace(&cfg, si, (path, op), size, 1)?).1;
        let estimate = one.bytes as u64 * messages as u64;
        if estimate > MAX_TRACE_BYTES {
            return Err(ConfigError::new(
                CLI,
                "--messages",
                format!(
                    "a trace of at most {} (fewer messages or a smaller --size)",
                    crate::units::fmt_bytes(MAX_TRACE_BYTES)
                ),
                format!(
                    "{messages} messages of {} slices each: about {}",
                    one.slices,
                    crate::units::fmt_bytes(estimate)
                ),
            )
            .into());
        }
    }
    let data = trace(&cfg, si, (path, op), size, messages)?;
    let stats = crate::report::trace::write(out, &data)?;
    let lat = data
        .metadata
        .iter()
        .find(|(k, _)| k == "msg0_latency_us")
        .map(|(_, v)| match v {
            Arg::Str(s) => s.clone(),
            Arg::Int(i) => i.to_string(),
        })
        .unwrap_or_default();
    let summary = format!(
        "wrote {} ({} slices, {} instants, {} tracks on {} threads, {} flows, {} counter points, {} bytes); \
                  {} {} {} {} bytes x {}: message 0 one-way latency {} us{}. Open it in ui.perfetto.dev or chrome://tracing.",
        out.display(),
        stats.slices,
        stats.instants,
        stats.tracks,
        stats.threads,
        stats.flows,
        stats.counter_points,
        stats.bytes,
        cfg.scenarios[si].name,
        path.name(),
        op.name(),
        size,
        messages,
        lat,
        if messages == 1 { " (lat_model_us)" } else { "" }
    );
    Ok(TraceRun { stats, summary })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_values_are_checked() {
        let cfg = crate::app::load_config(None).unwrap();
        assert_eq!(scenario_index(&cfg, None).unwrap(), 0);
        assert_eq!(scenario_index(&cfg, Some("SYS")).unwrap(), 2);
        assert!(scenario_index(&cfg, Some("nope")).is_err());
        assert_eq!(parse_size("4KiB").unwrap(), 4096);
        assert!(parse_size("0").is_err());
        assert!(parse_size("4 apples").is_err());
        assert!(parse_lang("fr").is_err());
        assert!(parse_path("gpudirect").is_ok());
    }
}

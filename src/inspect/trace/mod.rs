//! The trace model: tracks, slices, flows and counters of one point, as
//! [`crate::report::trace`] writes them. A recorded run becomes, in order: one slice per
//! message ([`slices::messages`]), the stages and descriptors ([`slices::stages`],
//! [`slices::descriptors`]), a slice per train per channel ([`trains`]) and link utilisation
//! ([`links`]), on tracks created on first use ([`tracks`]).

mod links;
mod slices;
mod tracks;
mod trains;
mod workload;

use self::tracks::Tracks;
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
    let messages = messages.max(1);
    let window = cfg.sim.stream_window.min(messages).max(1);
    check_point(cfg, topo, si, path, op)?;
    let run = record(cfg, topo, si, (path, op), size, window, messages)?;
    let plan = run.plan;
    let mut data = TraceData {
        processes: vec![
            format!("{} (sender)", topo.hosts[plan.sender.host].name),
            format!("{} (receiver)", topo.hosts[plan.receiver.host].name),
            "network".to_string(),
        ],
        ..TraceData::default()
    };
    let mut tracks = Tracks::new(topo, &run);
    slices::messages(&mut data, &run, size);
    slices::stages(&mut data, &mut tracks, &run, size, messages);
    slices::descriptors(&mut data, &mut tracks, &run);
    trains::hops(&mut data, &mut tracks, &run);
    links::busy(&mut data, &tracks, topo, &run);
    data.metadata = metadata(cfg, topo, si, path, &run, (size, messages, window));
    Ok(data)
}

/// The trace's metadata: what ran, and how to read its times.
fn metadata(
    cfg: &Config,
    topo: &Topology,
    si: usize,
    path: PathKind,
    run: &Recorded,
    (size, messages, window): (u64, u32, u32),
) -> Vec<(String, Arg)> {
    let (s0, e0) = run.outcome.messages[0];
    let sc = &cfg.scenarios[si];
    vec![
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
    ]
}

/// What `gdrsim trace` reports after writing.
pub struct TraceRun {
    /// What the written file holds (slices, tracks, flows, bytes).
    pub stats: TraceStats,
    /// The line printed after writing: the file, its counts and message 0's latency.
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
    limits: &crate::study::Limits,
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
    let cfg = crate::study::load_config(config)?;
    let si = scenario_index(&cfg, scenario)?;
    // Every unit of every message is a slice: estimate the run, its memory and the file from
    // the plan, before any work, and refuse what no viewer opens (and what would hold
    // gigabytes here while it is built).
    let topo = &scenario::topology(&cfg);
    check_point(&cfg, topo, si, path, op)?;
    if let Some(shape) = workload::Shape::of(&cfg, topo, si, (path, op), size) {
        return trace_workload(config, (&cfg, topo), &shape, messages, out, limits);
    }
    let run = super::cost::recorded(&cfg, topo, si, (path, op), size, messages);
    let events = run.events;
    let over = format!(
        "{messages} message{} of {} on path {}",
        if messages == 1 { "" } else { "s" },
        crate::units::fmt_bytes(size),
        path.name()
    );
    let memory = run.memory(super::cost::TRACE_BYTES);
    super::cost::admit(
        config,
        &super::cost::work(
            "a trace",
            events,
            memory,
            over.clone(),
            "a smaller --size or fewer --messages",
        ),
        limits,
    )?;
    let estimate = run.bytes(super::cost::TRACE_FILE_BYTES);
    if estimate > MAX_TRACE_BYTES {
        return Err(ConfigError::new(
            CLI,
            "--messages",
            format!(
                "a trace of at most {} (fewer messages or a smaller --size)",
                crate::units::fmt_bytes(MAX_TRACE_BYTES)
            ),
            format!(
                "{over}, {:.1e} estimated events: a file of about {}",
                events as f64,
                crate::units::fmt_bytes(estimate)
            ),
        )
        .into());
    }
    let data = trace(&cfg, si, (path, op), size, messages)?;
    let stats = crate::report::trace::write(out, &data)?;
    let lat = metadata_text(&data, "msg0_latency_us");
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

/// The value of `data`'s metadata `key` as text (empty where it has none).
fn metadata_text(data: &TraceData, key: &str) -> String {
    (data.metadata.iter())
        .find(|(k, _)| k == key)
        .map(|(_, v)| match v {
            Arg::Str(s) => s.clone(),
            Arg::Int(i) => i.to_string(),
        })
        .unwrap_or_default()
}

/// Bytes of trace file per slice of a workload trace (measured: configs/collectives.toml's
/// all-reduce at 1 MiB on gpudirect, 29,760 slices in 7.1 MB, 239 bytes each).
const WORKLOAD_SLICE_FILE_BYTES: u64 = 240;
/// Bytes a workload trace holds per slice at its peak, its slices and their JSON while it is
/// written (measured: the same trace peaks at 168.7 MB, its 1 KiB point of 1,664 slices at
/// 24.6 MB: 5.1 KB a slice).
const WORKLOAD_SLICE_BYTES: u64 = 5 << 10;

/// `gdrsim trace` of a workload (a collective): the point's noise-free run, one track per
/// flow, gated before any work: the file's size (which bounds the slices, and so what the
/// trace holds), then the run's events and memory as any trace's.
fn trace_workload(
    config: Option<&Path>,
    (cfg, topo): (&Config, &Topology),
    shape: &workload::Shape,
    messages: u32,
    out: &Path,
    limits: &crate::study::Limits,
) -> Result<TraceRun> {
    let p = &shape.point;
    let (name, path, size) = (&cfg.scenarios[p.scenario].name, p.path, p.size);
    if messages != 1 {
        return Err(ConfigError::new(
            CLI,
            "--messages",
            "1 for a workload (its trace is the whole workload: every flow's messages)",
            messages.to_string(),
        )
        .into());
    }
    let events = scenario::cost::estimate(cfg, topo, p);
    let slices = shape.slices();
    let memory = scenario::memory::point(cfg, topo, p, 1)
        .working
        .saturating_add(slices.saturating_mul(WORKLOAD_SLICE_BYTES));
    let over = format!(
        "{} of {} on path {} ({} flows, {} messages)",
        name,
        crate::units::fmt_bytes(size),
        path.name(),
        shape.flows.len(),
        shape.messages()
    );
    let estimate = slices.saturating_mul(WORKLOAD_SLICE_FILE_BYTES);
    if estimate > MAX_TRACE_BYTES {
        return Err(ConfigError::new(
            CLI,
            "--size",
            format!(
                "a trace of at most {} (a smaller --size: fewer messages)",
                crate::units::fmt_bytes(MAX_TRACE_BYTES)
            ),
            format!(
                "{over}, {slices} slices: a file of about {}",
                crate::units::fmt_bytes(estimate)
            ),
        )
        .into());
    }
    let work = super::cost::work("a trace", events, memory, over, "a smaller --size");
    super::cost::admit(config, &work, limits)?;
    let data = workload::trace(cfg, topo, shape);
    let stats = crate::report::trace::write(out, &data)?;
    let completion = metadata_text(&data, "completion_us");
    let summary = format!(
        "wrote {} ({} slices, {} tracks on {} threads, {} flows, {} bytes); {} {} {} bytes: \
         {} flows, {} messages, completion {} us (lat_model_us). Open it in ui.perfetto.dev or \
         chrome://tracing.",
        out.display(),
        stats.slices,
        stats.tracks,
        stats.threads,
        stats.flows,
        stats.bytes,
        name,
        path.name(),
        size,
        shape.flows.len(),
        shape.messages(),
        completion
    );
    Ok(TraceRun { stats, summary })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_values_are_checked() {
        let cfg = crate::study::load_config(None).unwrap();
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

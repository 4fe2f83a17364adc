//! `gdrsim trace`: a Chrome trace-event JSON file (ui.perfetto.dev, chrome://tracing).
//!
//! Takes plain data ([`TraceData`]: processes, tracks, slices with picosecond times, flow chains,
//! link busy windows) and lays it out:
//! - one process per host plus one for the network; one track per component;
//! - every track properly nested, trivially: slices that overlap in time on one component
//!   (pipelined trains on one link, for instance) go on extra lanes, each its own thread named
//!   `<track> #2`, `#3`..., so the slices of one thread never overlap;
//! - times in microseconds rounded to the nanosecond (three decimals). Rounding to a common
//!   grid keeps nesting exact: a viewer that converts to integer nanoseconds gets the same
//!   intervals that were checked here. Exact picosecond times are kept in each slice's args;
//! - flow arrows as v2 flow events (`bind_id`, `flow_out`, `flow_in` on the slices themselves),
//!   so each arrow binds to its slice whatever else happens at the same timestamp;
//! - counters: link utilisation in percent, from each train's serialisation time spread over the
//!   time it held the link.

use std::path::Path;

use anyhow::Result;
use serde_json::{Map, Value, json};

use crate::units::{PS_PER_NS, Ps};

use super::atomic;

/// An argument value shown in the viewer's details panel.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// A whole number, written as a JSON number.
    Int(u64),
    /// Text (addresses in hex, exact times), written as a JSON string.
    Str(String),
}

impl From<u64> for Arg {
    fn from(v: u64) -> Self {
        Arg::Int(v)
    }
}

impl From<String> for Arg {
    fn from(v: String) -> Self {
        Arg::Str(v)
    }
}

impl From<&str> for Arg {
    fn from(v: &str) -> Self {
        Arg::Str(v.to_string())
    }
}

/// A track: one component (a link direction, a switch, a NIC engine, a CPU thread...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Track {
    /// Index into [`TraceData::processes`].
    pub process: usize,
    /// The thread name the viewer shows (lanes after the first get " #2", " #3"...).
    pub name: String,
    /// Order within its process (smaller first).
    pub sort: u64,
}

/// A slice (or an instant when `instant`), in picoseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Slice {
    /// Index into [`TraceData::tracks`].
    pub track: usize,
    /// Its label in the viewer, e.g. a stage's name or "msg 0".
    pub name: String,
    /// Its trace-event category ("message", "stage", "descriptor", "hop"), by which a viewer
    /// filters.
    pub cat: String,
    /// When it begins, picoseconds of simulated time.
    pub start: Ps,
    /// When it ends, picoseconds (ignored for an instant; an end before `start` counts as
    /// `start`).
    pub end: Ps,
    /// Whether it is a point in time (an instant event at `start`) rather than an interval.
    pub instant: bool,
    /// Name-value pairs shown in the viewer's details panel, in this order.
    pub args: Vec<(String, Arg)>,
}

/// The busy windows of one link direction: (start, end, serialisation time within it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkBusy {
    /// Index into [`TraceData::processes`]: where its counter track goes.
    pub process: usize,
    /// The link direction's name; its counter is called "util NAME".
    pub name: String,
    /// (start, end, serialisation time within it), picoseconds, one per train that held the
    /// link.
    pub windows: Vec<(Ps, Ps, Ps)>,
}

/// Everything a trace shows, as plain data.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceData {
    /// Shown under `otherData`.
    pub metadata: Vec<(String, Arg)>,
    /// Process names (one per host plus one for the network), in the viewer's order.
    pub processes: Vec<String>,
    /// Every component's track.
    pub tracks: Vec<Track>,
    /// Every slice and instant; at equal start times they are written in this order.
    pub slices: Vec<Slice>,
    /// Chains of slice indices, each followed by one flow arrow chain, in causal order.
    pub flows: Vec<Vec<usize>>,
    /// The link directions whose utilisation is drawn as counters.
    pub links: Vec<LinkBusy>,
}

/// What a rendered trace holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceStats {
    /// Interval events written.
    pub slices: usize,
    /// Instant events written.
    pub instants: usize,
    /// Tracks (components) before splitting into lanes.
    pub tracks: usize,
    /// Threads after splitting overlapping slices into lanes.
    pub threads: usize,
    /// Flow arrow chains written (chains shorter than two slices, or touching an instant or a
    /// slice already in a chain, are dropped).
    pub flows: usize,
    /// Utilisation counter samples written, over every link.
    pub counter_points: usize,
    /// Length of the JSON text, bytes.
    pub bytes: usize,
}

/// Picoseconds to nanoseconds, rounded half up.
fn ns(ps: Ps) -> u64 {
    (ps + PS_PER_NS / 2) / PS_PER_NS
}

/// Nanoseconds as a JSON number of microseconds (exactly three decimals' worth).
fn us_num(ns: u64) -> Value {
    if ns.is_multiple_of(1000) {
        json!(ns / 1000)
    } else {
        json!(ns as f64 / 1000.0)
    }
}

fn arg_value(a: &Arg) -> Value {
    match a {
        Arg::Int(v) => json!(v),
        Arg::Str(s) => json!(s),
    }
}

/// Assigns each slice of one track to a lane so that the slices of a lane never overlap: a
/// slice goes on the first lane whose last slice ended by its start. (Overlap on one component
/// is concurrency, not nesting: a TLP arriving while another is in a switch is not part of it,
/// so no slice is made the child of another.) Sorting by start makes the lane count the
/// track's maximum concurrency. Returns the lane of each slice and the lane count. `iv` holds
/// (start, end) in nanoseconds.
pub fn assign_lanes(iv: &[(u64, u64)]) -> (Vec<usize>, usize) {
    let mut order: Vec<usize> = (0..iv.len()).collect();
    order.sort_by_key(|&i| (iv[i].0, iv[i].1, i));
    let mut last_end: Vec<u64> = Vec::new();
    let mut lane_of = vec![0; iv.len()];
    for i in order {
        let (s, e) = iv[i];
        let l = match last_end.iter().position(|&end| end <= s) {
            Some(l) => l,
            None => {
                last_end.push(0);
                last_end.len() - 1
            }
        };
        last_end[l] = e;
        lane_of[i] = l;
    }
    (lane_of, last_end.len().max(1))
}

/// Utilisation of one link as a step function: (time ns, percent) at each change. A window of
/// length w holding s of serialisation contributes s / w while it lasts.
pub fn utilisation(windows: &[(Ps, Ps, Ps)]) -> Vec<(u64, f64)> {
    // Density in parts per million, exact integers so the sum returns to 0.
    let mut changes: Vec<(Ps, i64)> = Vec::new();
    for &(s, e, busy) in windows {
        if e <= s || busy == 0 {
            continue;
        }
        let ppm = (busy.min(e - s) as u128 * 1_000_000 / (e - s) as u128) as i64;
        changes.push((s, ppm));
        changes.push((e, -ppm));
    }
    changes.sort();
    let mut out: Vec<(u64, f64)> = Vec::new();
    let mut level: i64 = 0;
    let mut i = 0;
    while i < changes.len() {
        let t = ns(changes[i].0);
        while i < changes.len() && ns(changes[i].0) == t {
            level += changes[i].1;
            i += 1;
        }
        let pct = ((level.max(0) as f64 / 100.0).round() / 100.0).min(100.0);
        match out.last_mut() {
            Some(last) if last.0 == t => last.1 = pct,
            Some(last) if last.1 == pct => {}
            _ => out.push((t, pct)),
        }
    }
    out
}

/// Renders the trace as JSON text.
pub fn render(data: &TraceData) -> (String, TraceStats) {
    let mut stats = TraceStats {
        tracks: data.tracks.len(),
        ..TraceStats::default()
    };
    // Lanes per track.
    let mut by_track: Vec<Vec<usize>> = vec![Vec::new(); data.tracks.len()];
    for (i, s) in data.slices.iter().enumerate() {
        by_track[s.track].push(i);
    }
    let mut lane = vec![0usize; data.slices.len()];
    let mut lanes = vec![1usize; data.tracks.len()];
    for (t, idx) in by_track.iter().enumerate() {
        let iv: Vec<(u64, u64)> = idx
            .iter()
            .map(|&i| {
                let s = &data.slices[i];
                (ns(s.start), ns(s.end.max(s.start)))
            })
            .collect();
        let (of, n) = assign_lanes(&iv);
        for (k, &i) in idx.iter().enumerate() {
            lane[i] = of[k];
        }
        lanes[t] = n;
    }
    // Thread ids: unique over the whole trace, in track order within each process.
    let mut track_order: Vec<usize> = (0..data.tracks.len()).collect();
    track_order.sort_by_key(|&t| (data.tracks[t].process, data.tracks[t].sort, t));
    let mut first_tid = vec![0u64; data.tracks.len()];
    let mut events: Vec<Value> = Vec::new();
    for (p, name) in data.processes.iter().enumerate() {
        let pid = p as u64 + 1;
        events.push(json!({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": name}}));
        events.push(json!({"name": "process_sort_index", "ph": "M", "pid": pid, "args": {"sort_index": pid}}));
    }
    let mut next_tid = 1u64;
    for &t in &track_order {
        let tr = &data.tracks[t];
        first_tid[t] = next_tid;
        for l in 0..lanes[t] {
            let tid = next_tid;
            next_tid += 1;
            let name = if l == 0 {
                tr.name.clone()
            } else {
                format!("{} #{}", tr.name, l + 1)
            };
            let pid = tr.process as u64 + 1;
            events.push(json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}));
            events.push(json!({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid, "args": {"sort_index": tid}}));
        }
    }
    stats.threads = (next_tid - 1) as usize;
    // Flow bindings: (id, flow_in, flow_out) per slice; a slice takes part in one chain at most.
    let mut bind: Vec<Option<(u64, bool, bool)>> = vec![None; data.slices.len()];
    for (c, chain) in data.flows.iter().enumerate() {
        if chain.len() < 2
            || chain
                .iter()
                .any(|&i| bind[i].is_some() || data.slices[i].instant)
        {
            continue;
        }
        let id = c as u64 + 1;
        let last = chain.len() - 1;
        for (k, &i) in chain.iter().enumerate() {
            bind[i] = Some((id, k > 0, k < last));
        }
        stats.flows += 1;
    }
    // Slices and instants, in time order; at equal times in exact (picosecond) order, then in
    // the order given, so that every flow chain appears in its causal order.
    let mut timed: Vec<(u64, Ps, usize, Value)> = Vec::new();
    for (i, s) in data.slices.iter().enumerate() {
        let tr = &data.tracks[s.track];
        let pid = tr.process as u64 + 1;
        let tid = first_tid[s.track] + lane[i] as u64;
        let (t0, t1) = (ns(s.start), ns(s.end.max(s.start)));
        let mut args = Map::new();
        for (k, v) in &s.args {
            args.insert(k.clone(), arg_value(v));
        }
        let mut e = Map::new();
        e.insert("name".into(), json!(s.name));
        e.insert("cat".into(), json!(s.cat));
        if s.instant {
            e.insert("ph".into(), json!("i"));
            e.insert("s".into(), json!("t"));
            stats.instants += 1;
        } else {
            e.insert("ph".into(), json!("X"));
            stats.slices += 1;
        }
        e.insert("ts".into(), us_num(t0));
        if !s.instant {
            e.insert("dur".into(), us_num(t1 - t0));
        }
        e.insert("pid".into(), json!(pid));
        e.insert("tid".into(), json!(tid));
        if let Some((id, fin, fout)) = bind[i] {
            e.insert("bind_id".into(), json!(id));
            if fin {
                e.insert("flow_in".into(), json!(true));
            }
            if fout {
                e.insert("flow_out".into(), json!(true));
            }
        }
        e.insert("args".into(), Value::Object(args));
        timed.push((t0, s.start, i, Value::Object(e)));
    }
    // Counters.
    let n_slices = data.slices.len();
    for (k, link) in data.links.iter().enumerate() {
        let pid = link.process as u64 + 1;
        for (t, pct) in utilisation(&link.windows) {
            timed.push((
                t,
                t * PS_PER_NS,
                n_slices + k,
                json!({"name": format!("util {}", link.name), "ph": "C", "ts": us_num(t), "pid": pid, "args": {"%": pct}}),
            ));
            stats.counter_points += 1;
        }
    }
    timed.sort_by_key(|a| (a.0, a.1, a.2));
    events.extend(timed.into_iter().map(|t| t.3));
    let mut other = Map::new();
    for (k, v) in &data.metadata {
        other.insert(k.clone(), arg_value(v));
    }
    let doc = json!({"traceEvents": events, "otherData": Value::Object(other)});
    let text = serde_json::to_string(&doc).expect("JSON values always serialise");
    stats.bytes = text.len();
    (text, stats)
}

/// Renders the trace and writes it to `path` atomically.
pub fn write(path: &Path, data: &TraceData) -> Result<TraceStats> {
    let (text, stats) = render(data);
    atomic::write(path, text.as_bytes())?;
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disjoint(iv: &[(u64, u64)], lane_of: &[usize], lane: usize) -> bool {
        let mut v: Vec<(u64, u64)> = iv
            .iter()
            .zip(lane_of)
            .filter(|(_, l)| **l == lane)
            .map(|(x, _)| *x)
            .collect();
        v.sort();
        v.windows(2).all(|w| w[0].1 <= w[1].0)
    }

    #[test]
    fn overlapping_slices_go_to_separate_lanes() {
        // Pipelined trains on one link: each overlaps the next.
        let iv = [
            (0, 30),
            (10, 40),
            (20, 50),
            (40, 60),
            (45, 50),
            (60, 60),
            (30, 30),
        ];
        let (lane_of, n) = assign_lanes(&iv);
        assert_eq!(n, 3, "the maximum concurrency");
        for l in 0..n {
            assert!(disjoint(&iv, &lane_of, l), "lane {l} overlaps: {lane_of:?}");
        }
        // Back to back is not overlap: (0, 30) then (30, 30) then (40, 60) then (60, 60).
        assert_eq!(lane_of[0], lane_of[6]);
        assert_eq!(lane_of[3], lane_of[5]);
    }

    #[test]
    fn utilisation_of_back_to_back_trains_is_full_then_zero() {
        let w = [(0, 10_000, 10_000), (10_000, 20_000, 5_000)];
        let u = utilisation(&w);
        assert_eq!(u, vec![(0, 100.0), (10, 50.0), (20, 0.0)]);
    }

    #[test]
    fn times_are_microseconds_with_nanosecond_precision() {
        assert_eq!(us_num(ns(531_097)), json!(0.531));
        assert_eq!(us_num(ns(2_000_000)), json!(2));
        assert_eq!(ns(1_499), 1);
        assert_eq!(ns(1_500), 2);
    }
}

//! Raw TOML -> typed, validated [`Config`]: parses quantities, fills defaults, resolves names,
//! and checks the topology is a tree that every scenario can use.

use super::defaults as d;
use super::raw::*;
use super::{Config, ConfigError, FlushMode, GDR_LEVELS, Op, PathKind, Registration, SimConfig};
use crate::report::OutputOptions;
use crate::report::charts::CHART_NAMES;
use crate::topology::pcie;
use crate::topology::spec::*;
use crate::units::{self, Ps, Rate};

pub(super) type R<T> = Result<T, ConfigError>;

/// Upper bounds that keep a mistyped number from exhausting memory or time.
const MAX_COUNT: u32 = 100_000;
const MIN_RATE_BPS: u64 = 1_000_000;
const MAX_WINDOW: u32 = 65_536;
const MAX_SWITCH_HOPS: u32 = 64;
const MAX_CABLE_M: u64 = 100_000;
/// The largest message simulated TLP by TLP (`granularity = "tlp"`).
const MAX_TLP_GRANULAR: u64 = 16 << 20;
/// Any single latency or cost: 10 s. Per-page registration costs: 10 ms (row E1's worst pin is
/// 1.3 ms per 64 KiB), so 16 GiB of pages stays within hours.
const MAX_DURATION: Ps = 10 * units::PS_PER_S;
const MAX_PER_PAGE: Ps = 10_000 * units::PS_PER_US;

fn fmt_ps(ps: Ps) -> String {
    if ps >= units::PS_PER_S {
        format!("{} s", ps / units::PS_PER_S)
    } else {
        format!("{} ms", ps / 1_000_000_000)
    }
}

/// Durations are held in u64 picoseconds, rates in u64 bit/s.
const DUR_RANGE: &str = "a duration of at most 2^64 ps (about 213 days)";
const RATE_RANGE: &str = "a rate of at most 2^64 bit/s";

pub(super) struct Cx<'a> {
    pub(super) file: &'a str,
}

fn show(q: &Q) -> String {
    match q {
        Q::Int(v) => v.to_string(),
        Q::Float(v) => format!("{v:?}"),
        Q::Str(s) => format!("{s:?}"),
    }
}

impl Cx<'_> {
    pub(super) fn err(
        &self,
        key: &str,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> ConfigError {
        ConfigError::new(self.file, key, expected, found)
    }

    /// A duration: a bare number is nanoseconds; a string carries its unit.
    fn dur(&self, q: &Option<Q>, key: &str, default: Ps) -> R<Ps> {
        self.dur_at_most(q, key, default, MAX_DURATION)
    }

    /// A duration of at most `max`: every duration is bounded so that sums over routes, pages
    /// and messages stay far inside u64 picoseconds (no overflow, whatever the config says).
    fn dur_at_most(&self, q: &Option<Q>, key: &str, default: Ps, max: Ps) -> R<Ps> {
        let v = self.dur_raw(q, key, default)?;
        if v > max {
            return Err(self.err(
                key,
                format!("a duration of at most {}", fmt_ps(max)),
                show(q.as_ref().expect("a default is within range")),
            ));
        }
        Ok(v)
    }

    fn dur_raw(&self, q: &Option<Q>, key: &str, default: Ps) -> R<Ps> {
        let expected =
            "a duration (a number of nanoseconds, or a string such as \"120ns\" or \"1.5us\")";
        match q {
            None => Ok(default),
            Some(Q::Int(v)) if *v >= 0 => (*v as u64)
                .checked_mul(units::PS_PER_NS)
                .ok_or_else(|| self.err(key, DUR_RANGE, show(q.as_ref().unwrap()))),
            Some(Q::Float(v)) if *v >= 0.0 && v.is_finite() => {
                let ps = (v * 1000.0).round();
                if ps < u64::MAX as f64 {
                    Ok(ps as u64)
                } else {
                    Err(self.err(key, DUR_RANGE, show(q.as_ref().unwrap())))
                }
            }
            Some(Q::Str(s)) => units::parse_duration(s)
                .map_err(|_| self.err(key, expected, show(q.as_ref().unwrap()))),
            Some(other) => Err(self.err(key, expected, show(other))),
        }
    }

    /// A size in bytes (> 0): a bare number is bytes; a string carries its unit.
    fn bytes(&self, q: &Option<Q>, key: &str, default: u64) -> R<u64> {
        let expected =
            "a positive size in bytes (a number, or a string such as \"4KiB\" or \"1MiB\")";
        let v = match q {
            None => return Ok(default),
            Some(Q::Int(v)) if *v > 0 => *v as u64,
            Some(Q::Str(s)) => units::parse_bytes(s)
                .map_err(|_| self.err(key, expected, show(q.as_ref().unwrap())))?,
            Some(other) => return Err(self.err(key, expected, show(other))),
        };
        if v == 0 {
            return Err(self.err(key, expected, show(q.as_ref().unwrap())));
        }
        Ok(v)
    }

    /// A size within `lo..=hi` bytes (a NIC structure, a header): the range is part of the check.
    fn bytes_in(&self, q: &Option<Q>, key: &str, default: u64, lo: u64, hi: u64) -> R<u64> {
        let v = match q {
            Some(Q::Int(0)) if lo == 0 => 0,
            _ => self.bytes(q, key, default)?,
        };
        if !(lo..=hi).contains(&v) {
            return Err(self.err(
                key,
                format!("a size from {lo} to {hi} bytes"),
                v.to_string(),
            ));
        }
        Ok(v)
    }

    fn size(&self, q: &Q, key: &str) -> R<u64> {
        self.bytes(&Some(q.clone()), key, 0)
    }

    /// A rate: a bare number is Gb/s (bits); a string carries its unit ("26GB/s", "200Gb/s").
    fn rate(&self, q: &Option<Q>, key: &str, default: Rate) -> R<Rate> {
        let expected =
            "a positive rate (a number of Gb/s, or a string such as \"200Gb/s\" or \"26GB/s\")";
        let r = match q {
            None => return Ok(default),
            Some(Q::Int(v)) if *v > 0 => Rate::from_bps(
                (*v as u64)
                    .checked_mul(1_000_000_000)
                    .ok_or_else(|| self.err(key, RATE_RANGE, show(q.as_ref().unwrap())))?,
            ),
            Some(Q::Float(v)) if *v > 0.0 && v.is_finite() => {
                let bps = (v * 1e9).round();
                if bps >= u64::MAX as f64 {
                    return Err(self.err(key, RATE_RANGE, show(q.as_ref().unwrap())));
                }
                Rate::from_bps(bps as u64)
            }
            Some(Q::Str(s)) => units::parse_rate(s)
                .map_err(|_| self.err(key, expected, show(q.as_ref().unwrap())))?,
            Some(other) => return Err(self.err(key, expected, show(other))),
        };
        if r.bps() < MIN_RATE_BPS {
            // Slower rates would make a 16 GiB message outlast u64 picoseconds.
            return Err(self.err(
                key,
                "a rate of at least 1 Mb/s",
                show(q.as_ref().expect("defaults are in range")),
            ));
        }
        Ok(r)
    }

    fn opt_rate(&self, q: &Option<Q>, key: &str) -> R<Option<Rate>> {
        match q {
            None => Ok(None),
            Some(_) => self.rate(q, key, Rate::from_bps(0)).map(Some),
        }
    }

    /// MPS / MRRS: a power of two from 128 to 4096 bytes.
    fn payload_size(&self, q: &Option<Q>, key: &str, default: u64) -> R<u64> {
        let v = self.bytes(q, key, default)?;
        if !pcie::valid_payload_size(v) {
            return Err(self.err(key, "a power of two from 128 to 4096 bytes", v.to_string()));
        }
        Ok(v)
    }

    fn p2p(&self, allowed: Option<bool>, cap: &Option<Q>, key: &str) -> R<P2p> {
        Ok(match allowed.unwrap_or(true) {
            false => P2p::Refused,
            true => P2p::Allowed(self.opt_rate(cap, key)?),
        })
    }

    /// A count `v` (or `default`) within `range`; out of it, refused as "`what` from LO to HI".
    fn count_in(
        &self,
        v: Option<u32>,
        key: &str,
        default: u32,
        range: std::ops::RangeInclusive<u32>,
        what: &str,
    ) -> R<u32> {
        let n = v.unwrap_or(default);
        if range.contains(&n) {
            return Ok(n);
        }
        Err(self.err(
            key,
            format!("{what} from {} to {}", range.start(), range.end()),
            n.to_string(),
        ))
    }

    fn one_of(&self, v: &Option<String>, key: &str, options: &[&str], default: &str) -> R<String> {
        let v = v.clone().unwrap_or_else(|| default.to_string());
        if !options.contains(&v.as_str()) {
            return Err(self.err(
                key,
                format!("one of {}", options.join(", ")),
                format!("{v:?}"),
            ));
        }
        Ok(v)
    }

    /// Names must be unique; `names` gives each with the key that defines it, and an error
    /// points at the second definition and says where the first one is.
    /// Refuses the first name used twice, naming both keys. A hash map keeps it linear: a
    /// config of 100,000 scenarios is checked in well under a second.
    fn unique<'s>(&self, names: impl Iterator<Item = (String, &'s str)>) -> R<()> {
        let mut seen: std::collections::HashMap<&str, String> = std::collections::HashMap::new();
        for (key, n) in names {
            if let Some(first) = seen.get(n) {
                return Err(self.err(
                    &key,
                    format!("a name not used before (names are unique; {first} is already {n:?})"),
                    format!("{n:?} again"),
                ));
            }
            seen.insert(n, key);
        }
        Ok(())
    }
}

pub fn convert(raw: RawConfig, file: &str) -> R<Config> {
    let cx = Cx { file };
    if raw.name.is_empty() || raw.name.contains(['/', '\\']) || raw.name.starts_with('.') {
        return Err(cx.err(
            "name",
            "a non-empty name usable as a folder name",
            format!("{:?}", raw.name),
        ));
    }
    let sim = convert_sim(&cx, &raw.sim)?;
    let sizes = convert_sizes(&cx, &raw.sweep.sizes)?;
    // TLP by TLP, every TLP and packet is an event with its records: memory and time grow
    // with the message (a 256 MiB point took 4 GB and minutes), so the mode is bounded.
    if sim.tlp_granularity
        && let Some(&big) = sizes.iter().find(|&&s| s > MAX_TLP_GRANULAR)
    {
        return Err(cx.err(
            "sim.granularity",
            format!(
                "\"auto\" for messages above {} (\"tlp\" simulates every TLP and packet: its \
                 memory and time grow with the message)",
                units::fmt_bytes(MAX_TLP_GRANULAR)
            ),
            format!(
                "\"tlp\" with a {} message in sweep.sizes",
                units::fmt_bytes(big)
            ),
        ));
    }
    let mut paths = Vec::new();
    for (i, p) in raw.sweep.paths.iter().enumerate() {
        let kind = PathKind::parse(p).ok_or_else(|| {
            cx.err(
                &format!("sweep.paths[{i}]"),
                "one of host, staged, gpudirect",
                format!("{p:?}"),
            )
        })?;
        if !paths.contains(&kind) {
            paths.push(kind);
        }
    }
    if paths.is_empty() {
        return Err(cx.err("sweep.paths", "at least one path", "an empty list"));
    }
    let names = raw
        .sweep
        .ops
        .clone()
        .unwrap_or_else(|| vec![Op::WriteImm.name().into()]);
    let mut ops = Vec::new();
    for (i, op) in names.iter().enumerate() {
        let Some(o) = Op::parse(op) else {
            return Err(cx.err(
                &format!("sweep.ops[{i}]"),
                "one of write_imm (RDMA Write with Immediate), write (plain RDMA Write), read \
                 (RDMA Read), send (Send/Recv)",
                format!("{op:?}"),
            ));
        };
        if let Some(p) = paths.iter().find(|p| !o.carried_by(**p)) {
            return Err(cx.err(
                &format!("sweep.ops[{i}]"),
                                "no `read` with a path that stages (`staged`, `gdrcopy`, or `auto`, which may): an RDMA \
                 Read's source side takes no part with its CPU, so nothing copies its GPU data \
                 to a bounce buffer (use host or gpudirect, or another op)",
                format!("\"read\" with paths containing {:?}", p.name()),
            ));
        }
        if !ops.contains(&o) {
            ops.push(o);
        }
    }
    if ops.is_empty() {
        return Err(cx.err("sweep.ops", "at least one op", "an empty list"));
    }
    let output = convert_output(&cx, &raw.output)?;
    let network = NetworkSpec {
        switch_hops: match raw.network.switch_hops.unwrap_or(1) {
            h if h > MAX_SWITCH_HOPS => {
                return Err(cx.err(
                    "network.switch_hops",
                    format!("from 0 to {MAX_SWITCH_HOPS} switches"),
                    h.to_string(),
                ));
            }
            h => h,
        },
        switch_latency: cx.dur(
            &raw.network.switch_latency_ns,
            "network.switch_latency_ns",
            d::NET_SWITCH_LATENCY,
        )?,
        cable_m: match raw.network.cable_m.unwrap_or(d::CABLE_M) {
            m if m > MAX_CABLE_M => {
                return Err(cx.err(
                    "network.cable_m",
                    format!("a cable length from 0 to {MAX_CABLE_M} m"),
                    m.to_string(),
                ));
            }
            m => m,
        },
        propagation_per_m: cx.dur(
            &raw.network.propagation_ns_per_m,
            "network.propagation_ns_per_m",
            d::PROPAGATION_PER_M,
        )?,
    };
    // Each value is bounded; their product, a cable's latency, must be too.
    if network.cable_m.saturating_mul(network.propagation_per_m) > MAX_DURATION {
        return Err(cx.err(
            "network.cable_m",
            format!(
                "cable_m x propagation_ns_per_m (a cable's latency) of at most {}",
                fmt_ps(MAX_DURATION)
            ),
            format!("{} m x {} ps/m", network.cable_m, network.propagation_per_m),
        ));
    }
    cx.unique(
        raw.machines
            .iter()
            .enumerate()
            .map(|(i, m)| (format!("machines[{i}].name"), m.name.as_str())),
    )?;
    let machines = raw
        .machines
        .iter()
        .enumerate()
        .map(|(i, m)| convert_machine(&cx, i, m))
        .collect::<R<Vec<_>>>()?;
    cx.unique(
        raw.hosts
            .iter()
            .enumerate()
            .map(|(i, h)| (format!("hosts[{i}].name"), h.name.as_str())),
    )?;
    let mut hosts = Vec::new();
    for (i, h) in raw.hosts.iter().enumerate() {
        let machine = machines
            .iter()
            .find(|m| m.name == h.machine)
            .ok_or_else(|| {
                cx.err(
                    &format!("hosts[{i}].machine"),
                    "the name of a [[machines]] entry",
                    format!("{:?}", h.machine),
                )
            })?;
        hosts.push(HostSpec {
            name: h.name.clone(),
            machine: machine.clone(),
        });
    }
    if raw.scenarios.is_empty() {
        return Err(cx.err("scenarios", "at least one [[scenarios]] entry", "none"));
    }
    cx.unique(
        raw.scenarios
            .iter()
            .enumerate()
            .map(|(i, s)| (format!("scenarios[{i}].name"), s.name.as_str())),
    )?;
    let needs_gpu = paths.iter().any(|p| *p != PathKind::Host);
    let scenarios = raw
        .scenarios
        .iter()
        .enumerate()
        .map(|(i, sc)| super::scenarios::convert(&cx, i, sc, &hosts, needs_gpu))
        .collect::<R<Vec<_>>>()?;
    super::scenarios::check_cables(&cx, &scenarios, &hosts, &network)?;
    // The name is the default output folder (output/<name>/): one path component.
    let n = &raw.name;
    if n.is_empty()
        || n.chars().count() > 100
        || n.chars().any(|c| c.is_control() || c == '/' || c == '\\')
        || n == "."
        || n == ".."
    {
        return Err(cx.err(
            "name",
            "a folder name of 1 to 100 characters without control characters, / or \\ (it \
             names output/<name>/)",
            format!("{:?}", n.chars().take(40).collect::<String>()),
        ));
    }
    Ok(Config {
        name: raw.name,
        description: raw.description.unwrap_or_default(),
        seed: raw.seed.unwrap_or(1),
        sim,
        sizes,
        paths,
        ops,
        output,
        network,
        hosts,
        scenarios,
    })
}

fn convert_sim(cx: &Cx, s: &RawSim) -> R<SimConfig> {
    let granularity = cx.one_of(&s.granularity, "sim.granularity", &["auto", "tlp"], "auto")?;
    let registration = cx.one_of(
        &s.registration,
        "sim.registration",
        &["cached", "per_transfer", "lru"],
        "cached",
    )?;
    let flush = cx.one_of(
        &s.flush,
        "sim.flush",
        &["auto", "rdma_read", "none"],
        "auto",
    )?;
    // Counts of simulated messages: bounded so a typo cannot exhaust memory or time.
    let positive = |v: Option<u32>, key: &str, default: u32| -> R<u32> {
        match v {
            Some(0) => Err(cx.err(key, "a positive integer", "0")),
            Some(v) if v > MAX_COUNT => Err(cx.err(
                key,
                format!("an integer from 1 to {MAX_COUNT}"),
                v.to_string(),
            )),
            Some(v) => Ok(v),
            None => Ok(default),
        }
    };
    if s.burst_bytes.is_some() {
        return Err(cx.err(
            "sim.burst_bytes",
            "no burst_bytes key (removed: messages above coalesce_above_bytes move as bulk \
             transfers, not bursts)",
            "burst_bytes",
        ));
    }
    Ok(SimConfig {
        iterations: positive(s.iterations, "sim.iterations", 100)?,
        min_iterations: positive(s.min_iterations, "sim.min_iterations", 5)?,
        iteration_budget_bytes: cx.bytes(
            &s.iteration_budget_bytes,
            "sim.iteration_budget_bytes",
            1 << 30,
        )?,
        stream_window: positive(s.stream_window, "sim.stream_window", 16)?,
        stream_messages: positive(s.stream_messages, "sim.stream_messages", 128)?,
        stream_budget_bytes: cx.bytes(
            &s.stream_budget_bytes,
            "sim.stream_budget_bytes",
            8 << 30,
        )?,
        tlp_granularity: granularity == "tlp",
        coalesce_above: cx.bytes(
            &s.coalesce_above_bytes,
            "sim.coalesce_above_bytes",
            64 << 10,
        )?,

        registration: match registration.as_str() {
            "cached" => Registration::Cached,
            "lru" => Registration::Lru,
            _ => Registration::PerTransfer,
        },
        // Estimate: registrations a library's cache keeps (UCX and NCCL bound theirs by memory).
        registration_cache_entries: cx.count_in(
            s.registration_cache_entries,
            "sim.registration_cache_entries",
            64,
            1..=MAX_COUNT,
            "a number of registrations",
        )?,
        buffers: cx.count_in(
            s.buffers,
            "sim.buffers",
            1,
            1..=MAX_COUNT,
            "a number of distinct buffers per side",
        )?,
        jitter: s.jitter.unwrap_or(true),
        flush: match flush.as_str() {
            "auto" => FlushMode::Auto,
            "rdma_read" => FlushMode::RdmaRead,
            _ => FlushMode::None,
        },
        // Row B3: NCCL uses GPUDirect only up to PXB by default (ncclTopoCheckGdr).
        // Row B6: MVAPICH2's MV2_CUDA_BLOCK_SIZE (NCCL uses 128 KiB, NCCL_P2P_NET_CHUNKSIZE).
        chunk_bytes: cx.bytes_in(&s.chunk_bytes, "sim.chunk_bytes", 256 << 10, 4096, 1 << 30)?,
        // Bounce buffers in flight per side: NCCL's NCCL_STEPS = 8 slots per connection
        // (src/include/device.h); MVAPICH2 does not document its count (estimate).
        pipeline_depth: cx.count_in(
            s.pipeline_depth,
            "sim.pipeline_depth",
            8,
            1..=64,
            "a number of bounce buffers per side",
        )?,
        // perftest's DEF_RX_SEND (src/perftest_parameters.h): receives posted for Send tests.
        recv_depth: cx.count_in(
            s.recv_depth,
            "sim.recv_depth",
            512,
            1..=MAX_COUNT,
            "a number of posted receive WQEs",
        )?,
        // perftest's MIN_RNR_TIMER (12: 0.64 ms), set on every RC QP it connects.
        min_rnr_timer: match s.min_rnr_timer.unwrap_or(12) {
            c @ 0..=31 => c as u8,
            c => {
                return Err(cx.err(
                    "sim.min_rnr_timer",
                    "the verbs' RNR timer code from 0 to 31 (IBTA table 45: 12 is 0.64 ms)",
                    c.to_string(),
                ));
            }
        },
        net_gdr_level: {
            let level = cx.one_of(&s.net_gdr_level, "sim.net_gdr_level", &GDR_LEVELS, "PXB")?;
            GDR_LEVELS.iter().position(|l| *l == level).unwrap_or(1)
        },
    })
}

fn convert_sizes(cx: &Cx, s: &RawSizes) -> R<Vec<u64>> {
    let mut sizes = match s {
        RawSizes::List(list) => {
            let v = list
                .iter()
                .enumerate()
                .map(|(i, q)| cx.size(q, &format!("sweep.sizes[{i}]")))
                .collect::<R<Vec<_>>>()?;
            // A size listed twice would give two identical rows.
            if let Some(i) = (1..v.len()).find(|&i| v[..i].contains(&v[i])) {
                return Err(cx.err(
                    &format!("sweep.sizes[{i}]"),
                    "sizes listed once each",
                    format!(
                        "{} bytes, already at sweep.sizes[{}]",
                        v[i],
                        v[..i].iter().position(|&x| x == v[i]).unwrap_or(0)
                    ),
                ));
            }
            v
        }
        RawSizes::Range(r) => {
            let from = cx.size(&r.from, "sweep.sizes.from")?;
            let to = cx.size(&r.to, "sweep.sizes.to")?;
            let factor = r.factor.unwrap_or(2);
            if factor < 2 {
                return Err(cx.err(
                    "sweep.sizes.factor",
                    "an integer factor of at least 2",
                    factor.to_string(),
                ));
            }
            if to > 16 << 30 {
                return Err(cx.err("sweep.sizes.to", "a size up to 16 GiB", to.to_string()));
            }
            if to < from {
                return Err(cx.err(
                    "sweep.sizes.to",
                    format!("a size of at least `from` ({from} bytes)"),
                    to.to_string(),
                ));
            }
            let mut v = vec![];
            let mut x = from;
            while x <= to {
                v.push(x);
                x = match x.checked_mul(factor) {
                    Some(n) => n,
                    None => break,
                };
            }
            v
        }
    };
    if sizes.is_empty() {
        return Err(cx.err("sweep.sizes", "at least one size", "an empty list"));
    }
    if let Some(&big) = sizes.iter().find(|&&s| s > 16 << 30) {
        return Err(cx.err(
            "sweep.sizes",
            "sizes up to 16 GiB",
            format!("{} ({big} bytes)", units::fmt_bytes(big)),
        ));
    }
    sizes.dedup();
    Ok(sizes)
}

fn convert_output(cx: &Cx, o: &RawOutput) -> R<OutputOptions> {
    let mut out = OutputOptions::default();
    if let Some(charts) = &o.charts {
        for (i, c) in charts.iter().enumerate() {
            if !CHART_NAMES.contains(&c.as_str()) {
                return Err(cx.err(
                    &format!("output.charts[{i}]"),
                    format!("one of {}", CHART_NAMES.join(", ")),
                    format!("{c:?}"),
                ));
            }
        }
        out.charts = charts.clone();
    }
    if let Some(formats) = &o.formats {
        for (i, f) in formats.iter().enumerate() {
            if !["svg", "png"].contains(&f.as_str()) {
                return Err(cx.err(
                    &format!("output.formats[{i}]"),
                    "one of svg, png",
                    format!("{f:?}"),
                ));
            }
        }
        out.formats = formats.clone();
    }
    for (v, key, slot) in [
        (o.width_px, "output.width_px", &mut out.width_px),
        (o.height_px, "output.height_px", &mut out.height_px),
    ] {
        if let Some(v) = v {
            if !(200..=8000).contains(&v) {
                return Err(cx.err(key, "a size from 200 to 8000 pixels", v.to_string()));
            }
            *slot = v;
        }
    }
    if let Some(sizes) = &o.breakdown_sizes {
        out.breakdown_sizes = sizes
            .iter()
            .enumerate()
            .map(|(i, q)| cx.size(q, &format!("output.breakdown_sizes[{i}]")))
            .collect::<R<_>>()?;
    }
    if let Some(q) = &o.compare_size {
        out.compare_size = cx.size(q, "output.compare_size")?;
    }
    Ok(out)
}

fn memory(
    cx: &Cx,
    key: &str,
    lat: &Option<Q>,
    rate: &Option<Q>,
    jitter: &Option<Q>,
    defaults: (Ps, Rate, Ps),
) -> R<MemorySpec> {
    Ok(MemorySpec {
        latency: cx.dur(lat, &format!("{key}_latency_ns"), defaults.0)?,
        rate: cx.rate(rate, &format!("{key}_rate_gbps"), defaults.1)?,
        jitter_median: cx.dur(jitter, &format!("{key}_jitter_ns"), defaults.2)?,
    })
}

fn convert_machine(cx: &Cx, i: usize, m: &RawMachine) -> R<MachineSpec> {
    let k = |rest: &str| format!("machines[{i}].{rest}");
    // Names are one namespace per machine: links and scenarios refer to them.
    let mut named: Vec<(String, &str)> = Vec::new();
    for (list, names) in [
        (
            "sockets",
            m.sockets
                .iter()
                .map(|x| x.name.as_str())
                .collect::<Vec<_>>(),
        ),
        (
            "root_complexes",
            m.root_complexes.iter().map(|x| x.name.as_str()).collect(),
        ),
        (
            "switches",
            m.switches.iter().map(|x| x.name.as_str()).collect(),
        ),
        ("gpus", m.gpus.iter().map(|x| x.name.as_str()).collect()),
        ("nics", m.nics.iter().map(|x| x.name.as_str()).collect()),
    ] {
        for (j, n) in names.into_iter().enumerate() {
            named.push((k(&format!("{list}[{j}].name")), n));
        }
    }
    cx.unique(named.into_iter())?;
    let cpu = CpuSpec {
        post: cx.dur(&m.cpu.post_ns, &k("cpu.post_ns"), d::CPU_POST)?,
        post_recv: cx.dur(
            &m.cpu.post_recv_ns,
            &k("cpu.post_recv_ns"),
            d::CPU_POST_RECV,
        )?,
        poll: cx.dur(&m.cpu.poll_ns, &k("cpu.poll_ns"), d::CPU_POLL)?,
        pageable: PageableSpec {
            d2h_latency: cx.dur(
                &m.cpu.pageable_d2h_latency_ns,
                &k("cpu.pageable_d2h_latency_ns"),
                d::PAGEABLE_D2H_LATENCY,
            )?,
            d2h_rate: cx.rate(
                &m.cpu.pageable_d2h_gbps,
                &k("cpu.pageable_d2h_gbps"),
                d::PAGEABLE_D2H_RATE,
            )?,
            h2d_latency: cx.dur(
                &m.cpu.pageable_h2d_latency_ns,
                &k("cpu.pageable_h2d_latency_ns"),
                d::PAGEABLE_H2D_LATENCY,
            )?,
            h2d_rate: cx.rate(
                &m.cpu.pageable_h2d_gbps,
                &k("cpu.pageable_h2d_gbps"),
                d::PAGEABLE_H2D_RATE,
            )?,
        },
    };
    let r = &m.registration;
    let registration = RegistrationSpec {
        host_base: cx.dur(
            &r.host_base_ns,
            &k("registration.host_base_ns"),
            d::REG_HOST_BASE,
        )?,
        host_per_page: cx.dur_at_most(
            &r.host_per_page_ns,
            &k("registration.host_per_page_ns"),
            d::REG_HOST_PER_PAGE,
            MAX_PER_PAGE,
        )?,
        gpu_base: cx.dur(
            &r.gpu_base_ns,
            &k("registration.gpu_base_ns"),
            d::REG_GPU_BASE,
        )?,
        gpu_per_page: cx.dur_at_most(
            &r.gpu_per_page_ns,
            &k("registration.gpu_per_page_ns"),
            d::REG_GPU_PER_PAGE,
            MAX_PER_PAGE,
        )?,
        bounce_alloc: cx.dur(
            &r.bounce_alloc_ns,
            &k("registration.bounce_alloc_ns"),
            d::BOUNCE_ALLOC,
        )?,
        host_dereg_base: cx.dur(
            &r.host_dereg_base_ns,
            &k("registration.host_dereg_base_ns"),
            d::DEREG_HOST_BASE,
        )?,
        host_dereg_per_page: cx.dur_at_most(
            &r.host_dereg_per_page_ns,
            &k("registration.host_dereg_per_page_ns"),
            d::DEREG_HOST_PER_PAGE,
            MAX_PER_PAGE,
        )?,
        gpu_dereg_base: cx.dur(
            &r.gpu_dereg_base_ns,
            &k("registration.gpu_dereg_base_ns"),
            d::DEREG_GPU_BASE,
        )?,
        gpu_dereg_per_page: cx.dur_at_most(
            &r.gpu_dereg_per_page_ns,
            &k("registration.gpu_dereg_per_page_ns"),
            d::DEREG_GPU_PER_PAGE,
            MAX_PER_PAGE,
        )?,
    };
    if m.pcie.rcb_bytes.is_some() {
        // Removed: every buffer is page-aligned and every read request MRRS-aligned, so
        // completions split at MPS only, which is already a multiple of the boundary.
        return Err(cx.err(
            &k("pcie.rcb_bytes"),
            "no rcb_bytes key (removed: buffers are page-aligned, so completions split at MPS \
             and the read completion boundary never changes a TLP count)",
            "rcb_bytes",
        ));
    }
    let pcie_spec = PcieSpec {
        link_latency: cx.dur(
            &m.pcie.link_latency_ns,
            &k("pcie.link_latency_ns"),
            d::PCIE_LINK_LATENCY,
        )?,
        mps: cx.payload_size(&m.pcie.mps_bytes, &k("pcie.mps_bytes"), d::PCIE_MPS)?,
        ecrc: m.pcie.ecrc.unwrap_or(false),
    };
    if m.sockets.is_empty() {
        return Err(cx.err(&k("sockets"), "at least one socket", "none"));
    }
    let sockets = m
        .sockets
        .iter()
        .enumerate()
        .map(|(j, s)| {
            Ok(SocketSpec {
                name: s.name.clone(),
                dram: memory(
                    cx,
                    &k(&format!("sockets[{j}].dram")),
                    &s.dram_latency_ns,
                    &s.dram_rate_gbps,
                    &s.dram_jitter_ns,
                    (d::DRAM_LATENCY, d::DRAM_RATE, d::DRAM_JITTER),
                )?,
            })
        })
        .collect::<R<Vec<_>>>()?;
    let socket_names: Vec<&str> = sockets.iter().map(|s| s.name.as_str()).collect();
    let socket_ref = |name: &str, key: String| -> R<()> {
        if socket_names.contains(&name) {
            Ok(())
        } else {
            Err(cx.err(
                &key,
                format!("one of the machine's sockets ({})", socket_names.join(", ")),
                format!("{name:?}"),
            ))
        }
    };
    let mut socket_links = Vec::new();
    for (j, l) in m.socket_links.iter().enumerate() {
        let kk = |f: &str| k(&format!("socket_links[{j}].{f}"));
        socket_ref(&l.a, kk("a"))?;
        socket_ref(&l.b, kk("b"))?;
        socket_links.push(SocketLinkSpec {
            a: l.a.clone(),
            b: l.b.clone(),
            rate: cx.rate(&l.rate_gbps, &kk("rate_gbps"), d::SOCKET_LINK_RATE)?,
            latency: cx.dur(&l.latency_ns, &kk("latency_ns"), d::SOCKET_LINK_LATENCY)?,
            p2p_read: cx.p2p(l.p2p_read, &l.p2p_read_rate_gbps, &kk("p2p_read_rate_gbps"))?,
            p2p_write: cx.p2p(
                l.p2p_write,
                &l.p2p_write_rate_gbps,
                &kk("p2p_write_rate_gbps"),
            )?,
        });
    }
    for (x, a) in socket_names.iter().enumerate() {
        for b in &socket_names[x + 1..] {
            if !socket_links
                .iter()
                .any(|l| (l.a == *a && l.b == *b) || (l.a == *b && l.b == *a))
            {
                return Err(cx.err(
                    &k("socket_links"),
                    format!("a link between sockets {a:?} and {b:?}"),
                    "none",
                ));
            }
        }
    }
    let mut root_complexes = Vec::new();
    for (j, rc) in m.root_complexes.iter().enumerate() {
        let kk = |f: &str| k(&format!("root_complexes[{j}].{f}"));
        socket_ref(&rc.socket, kk("socket"))?;
        root_complexes.push(RootComplexSpec {
            name: rc.name.clone(),
            socket: rc.socket.clone(),
            latency: cx.dur(&rc.latency_ns, &kk("latency_ns"), d::ROOT_COMPLEX_LATENCY)?,
            p2p_read: cx.p2p(
                rc.p2p_read,
                &rc.p2p_read_rate_gbps,
                &kk("p2p_read_rate_gbps"),
            )?,
            p2p_write: cx.p2p(
                rc.p2p_write,
                &rc.p2p_write_rate_gbps,
                &kk("p2p_write_rate_gbps"),
            )?,
        });
    }
    let switches = m
        .switches
        .iter()
        .enumerate()
        .map(|(j, s)| {
            Ok(SwitchSpec {
                name: s.name.clone(),
                latency: cx.dur(
                    &s.latency_ns,
                    &k(&format!("switches[{j}].latency_ns")),
                    d::SWITCH_LATENCY,
                )?,
                acs_redirect: s.acs_redirect.unwrap_or(false),
            })
        })
        .collect::<R<Vec<_>>>()?;
    let gpus = m
        .gpus
        .iter()
        .enumerate()
        .map(|(j, g)| {
            let kk = |f: &str| k(&format!("gpus[{j}].{f}"));
            let window = g.ce_read_window.unwrap_or(d::CE_READ_WINDOW);
            if window == 0 || window > MAX_WINDOW {
                return Err(cx.err(
                    &kk("ce_read_window"),
                    "a number of outstanding reads from 1 to 65536",
                    window.to_string(),
                ));
            }
            let model = g.model.clone().unwrap_or_else(|| d::GPU_MODEL.into());
            let compute_capability = match &g.compute_capability {
                Some(s) => parse_compute_capability(s).ok_or_else(|| {
                    cx.err(
                        &kk("compute_capability"),
                        "a compute capability \"major.minor\" such as \"8.0\" or \"9.0\"",
                        format!("{s:?}"),
                    )
                })?,
                None => d::compute_capability(&model),
            };
            Ok(GpuSpec {
                name: g.name.clone(),
                model,
                compute_capability,
                memory: memory(
                    cx,
                    &k(&format!("gpus[{j}].memory")),
                    &g.memory_latency_ns,
                    &g.memory_rate_gbps,
                    &g.memory_jitter_ns,
                    (d::GPU_MEMORY_LATENCY, d::GPU_MEMORY_RATE, 0),
                )?,
                heap_base: {
                    let base = g.heap_base.unwrap_or(d::GPU_HEAP_BASE);
                    let offset = g.bar_offset.unwrap_or(d::GPU_BAR_OFFSET);
                    if base.checked_add(offset).and_then(|a| a.checked_add(16 << 30)).is_none() {
                        return Err(cx.err(
                            &kk("heap_base"),
                            "a heap base that leaves room for the BAR offset and the buffers below 2^64",
                            format!("{base:#x} (+ bar_offset {offset:#x})"),
                        ));
                    }
                    base
                },
                bar_offset: g.bar_offset.unwrap_or(d::GPU_BAR_OFFSET),
                copy_engine: CopyEngineSpec {
                    launch: cx.dur(
                        &g.memcpy_launch_ns,
                        &kk("memcpy_launch_ns"),
                        d::MEMCPY_LAUNCH,
                    )?,
                    sync: cx.dur(&g.memcpy_sync_ns, &kk("memcpy_sync_ns"), d::MEMCPY_SYNC)?,
                    read_window: window,
                                        mrrs: cx.payload_size(&g.ce_mrrs_bytes, &kk("ce_mrrs_bytes"), d::CE_MRRS)?,
                },
                gdrcopy: GdrcopySpec {
                    read_latency: cx.dur(
                        &g.gdrcopy_read_latency_ns,
                        &kk("gdrcopy_read_latency_ns"),
                        d::GDRCOPY_READ_LATENCY,
                    )?,
                    read_rate: cx.rate(
                        &g.gdrcopy_read_gbps,
                        &kk("gdrcopy_read_gbps"),
                        d::GDRCOPY_READ_RATE,
                    )?,
                    write_latency: cx.dur(
                        &g.gdrcopy_write_latency_ns,
                        &kk("gdrcopy_write_latency_ns"),
                        d::GDRCOPY_WRITE_LATENCY,
                    )?,
                    write_rate: cx.rate(
                        &g.gdrcopy_write_gbps,
                        &kk("gdrcopy_write_gbps"),
                        d::GDRCOPY_WRITE_RATE,
                    )?,
                },
            })
        })
        .collect::<R<Vec<_>>>()?;
    let nics = m
        .nics
        .iter()
        .enumerate()
        .map(|(j, n)| convert_nic(cx, &k(&format!("nics[{j}]")), n))
        .collect::<R<Vec<_>>>()?;
    let is = |name: &str, v: &[&str]| v.contains(&name);
    let uppers: Vec<&str> = root_complexes
        .iter()
        .map(|x| x.name.as_str())
        .chain(switches.iter().map(|x| x.name.as_str()))
        .collect();
    let downs: Vec<&str> = switches
        .iter()
        .map(|x| x.name.as_str())
        .chain(gpus.iter().map(|x| x.name.as_str()))
        .chain(nics.iter().map(|x| x.name.as_str()))
        .collect();
    let mut links = Vec::new();
    for (j, l) in m.links.iter().enumerate() {
        let kk = |f: &str| k(&format!("links[{j}].{f}"));
        if !is(&l.up, &uppers) {
            return Err(cx.err(
                &kk("up"),
                format!(
                    "a root complex or switch of this machine ({})",
                    uppers.join(", ")
                ),
                format!("{:?}", l.up),
            ));
        }
        if !is(&l.down, &downs) {
            return Err(cx.err(
                &kk("down"),
                format!(
                    "a switch, GPU or NIC of this machine ({})",
                    downs.join(", ")
                ),
                format!("{:?}", l.down),
            ));
        }
        if !pcie::valid_generation(l.generation) {
            return Err(cx.err(
                &kk("generation"),
                "a PCIe generation from 1 to 6",
                l.generation.to_string(),
            ));
        }
        if !pcie::valid_width(l.width) {
            return Err(cx.err(
                &kk("width"),
                "a link width of 1, 2, 4, 8, 12, 16 or 32 lanes",
                l.width.to_string(),
            ));
        }
        links.push(LinkSpec {
            up: l.up.clone(),
            down: l.down.clone(),
            generation: l.generation,
            width: l.width,
            mps: cx.payload_size(&l.mps_bytes, &kk("mps_bytes"), pcie_spec.mps)?,
            latency: cx.dur(&l.latency_ns, &kk("latency_ns"), pcie_spec.link_latency)?,
        });
    }
    // Each downstream node hangs from exactly one link, and every chain reaches a root complex.
    for name in &downs {
        let n = links.iter().filter(|l| l.down == *name).count();
        if n != 1 {
            return Err(cx.err(
                &k("links"),
                format!("exactly one upstream link for {name:?}"),
                format!("{n}"),
            ));
        }
    }
    for name in &downs {
        let mut cur = *name;
        let mut steps = 0;
        while let Some(l) = links.iter().find(|l| l.down == cur) {
            cur = &l.up;
            steps += 1;
            if steps > downs.len() {
                return Err(cx.err(
                    &k("links"),
                    "a tree of links (no cycles)",
                    format!("a cycle through {name:?}"),
                ));
            }
        }
        if !root_complexes.iter().any(|r| r.name == cur) {
            return Err(cx.err(
                &k("links"),
                format!("a chain of links from {name:?} up to a root complex"),
                format!("it ends at {cur:?}"),
            ));
        }
    }
    if nics.is_empty() {
        return Err(cx.err(&k("nics"), "at least one NIC", "none"));
    }
    let host_buffer_base = m.host_buffer_base.unwrap_or(d::HOST_BUFFER_BASE);
    // The buffers (up to 16 GiB) and the walk's and trace's addresses stay below 2^64.
    if host_buffer_base.checked_add(32 << 30).is_none() {
        return Err(cx.err(
            &k("host_buffer_base"),
            "an address that leaves room for 32 GiB of buffers below 2^64",
            format!("{host_buffer_base:#x}"),
        ));
    }
    Ok(MachineSpec {
        name: m.name.clone(),
        cpu,
        registration,
        pcie: pcie_spec,
        host_buffer_base,
        sockets,
        socket_links,
        root_complexes,
        switches,
        gpus,
        nics,
        links,
    })
}

fn convert_nic(cx: &Cx, key: &str, n: &RawNic) -> R<NicSpec> {
    let k = |f: &str| format!("{key}.{f}");
    let delivery = cx.one_of(
        &n.wqe_delivery,
        &k("wqe_delivery"),
        &["auto", "blueflame", "doorbell"],
        "auto",
    )?;
    let window = n.read_window.unwrap_or(d::NIC_READ_WINDOW);
    if window == 0 || window > MAX_WINDOW {
        return Err(cx.err(
            &k("read_window"),
            "a number of outstanding reads from 1 to 65536",
            window.to_string(),
        ));
    }
    let max_rd_atomic = n.max_rd_atomic.unwrap_or(d::MAX_RD_ATOMIC);
    if !(1..=255).contains(&max_rd_atomic) {
        return Err(cx.err(
            &k("max_rd_atomic"),
            "a number of outstanding RDMA Reads per queue pair from 1 to 255 (8 bits in the QP context)",
            max_rd_atomic.to_string(),
        ));
    }
    let mtu = cx.bytes(&n.mtu_bytes, &k("mtu_bytes"), d::MTU)?;
    if !mtu.is_power_of_two() || !(256..=4096).contains(&mtu) {
        return Err(cx.err(
            &k("mtu_bytes"),
            "a power of two from 256 to 4096 bytes",
            mtu.to_string(),
        ));
    }
    Ok(NicSpec {
        name: n.name.clone(),
        model: n.model.clone().unwrap_or_else(|| "ConnectX-7".into()),
        wire_rate: cx.rate(&n.wire_rate_gbps, &k("wire_rate_gbps"), d::WIRE_RATE)?,
        mtu,
        packet_overhead: cx.bytes_in(
            &n.packet_overhead_bytes,
            &k("packet_overhead_bytes"),
            d::PACKET_OVERHEAD,
            0,
            512,
        )?,
        ack_bytes: cx.bytes_in(&n.ack_bytes, &k("ack_bytes"), d::ACK_BYTES, 1, 512)?,
        wqe_delivery: match delivery.as_str() {
            "auto" => WqeDelivery::Auto,
            "blueflame" => WqeDelivery::BlueFlame,
            _ => WqeDelivery::Doorbell,
        },
        wqe_bytes: cx.bytes_in(&n.wqe_bytes, &k("wqe_bytes"), d::WQE_BYTES, 16, 4096)?,
        cqe_bytes: cx.bytes_in(&n.cqe_bytes, &k("cqe_bytes"), d::CQE_BYTES, 16, 512)?,
        inline_max: cx.bytes_in(
            &n.inline_max_bytes,
            &k("inline_max_bytes"),
            d::INLINE_MAX,
            0,
            4096,
        )?,
        wqe_process: cx.dur(&n.wqe_process_ns, &k("wqe_process_ns"), d::WQE_PROCESS)?,
        wqe_interval: cx.dur(&n.wqe_interval_ns, &k("wqe_interval_ns"), d::WQE_INTERVAL)?,
        mtt_lookup: cx.dur(&n.mtt_lookup_ns, &k("mtt_lookup_ns"), d::MTT_LOOKUP)?,
        tx_pipeline: cx.dur(&n.tx_pipeline_ns, &k("tx_pipeline_ns"), d::TX_PIPELINE)?,
        rx_pipeline: cx.dur(&n.rx_pipeline_ns, &k("rx_pipeline_ns"), d::RX_PIPELINE)?,
        read_window: window,
        mrrs: cx.payload_size(&n.mrrs_bytes, &k("mrrs_bytes"), d::NIC_MRRS)?,
        max_rd_atomic,
        recv_wqe_bytes: cx.bytes_in(
            &n.recv_wqe_bytes,
            &k("recv_wqe_bytes"),
            d::RECV_WQE_BYTES,
            16,
            4096,
        )?,
    })
}

/// "9.0" -> (9, 0).
fn parse_compute_capability(s: &str) -> Option<(u32, u32)> {
    let (major, minor) = s.trim().split_once('.')?;
    let major: u32 = major.parse().ok()?;
    let minor: u32 = minor.parse().ok()?;
    ((1..=20).contains(&major) && minor < 10).then_some((major, minor))
}

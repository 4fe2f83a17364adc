//! The variants: every estimated parameter scaled up and down, the configs they give, the
//! points each must re-simulate, and their simulation.

use super::*;

/// The value of `p` scaled by `factor` (up when above 1), as the config writes it; None where
/// scaling cannot change it (a zero, a bound reached) or the kind is not a number. `calibrate`
/// sets its fitted values through it too.
pub fn scaled(p: &ParamValue, factor: f64) -> Option<Value> {
    let v = leading_number(&p.value)?;
    if v == 0.0 {
        return None;
    }
    let up = factor > 1.0;
    let out = match p.domain {
        // The resolved config writes whole ns bare, otherwise "NNNps".
        Domain::Duration { max } => {
            let ps = if p.value.ends_with("ps") { v } else { v * 1e3 };
            let n = ((ps * factor).round() as u64).min(max);
            Value::String(format!("{n}ps"))
        }
        Domain::Rate { min } => {
            let bps = if p.value.ends_with("b/s") { v } else { v * 1e9 };
            Value::String(format!("{}b/s", ((bps * factor).round() as u64).max(min)))
        }
        Domain::Bytes { lo, hi } => {
            Value::Integer(((v * factor).round() as u64).clamp(lo, hi) as i64)
        }
        Domain::Count { lo, hi } => {
            let mut n = (v * factor).round() as u64;
            if n == v as u64 {
                n = if up { n + 1 } else { n.saturating_sub(1) };
            }
            Value::Integer(n.clamp(lo, hi) as i64)
        }
        Domain::Pow2 { lo, hi } => {
            let n = v as u64;
            Value::Integer((if up { n * 2 } else { n / 2 }).clamp(lo, hi) as i64)
        }
        _ => return None,
    };
    (out.to_string() != p.value && out.as_str() != Some(p.value.as_str())).then_some(out)
}

/// The whole number a resolved config's value starts with: 187500 of "187500ps", 400 of
/// "400b/s" (the resolved config writes durations and rates as whole numbers and a unit).
pub(super) fn leading_number(s: &str) -> Option<f64> {
    let digits: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

/// The parameters that decide which path wins beyond PIX, varied whatever their source (a
/// datasheet, a reference row or an estimate), as `(section, key)`: the socket link's rate (its
/// link count and width), the P2P caps across it and through a root complex, the DRAM's
/// sustained share, the cudaMemcpy costs, how WQEs reach the NIC and the NIC's read request
/// size (issue #25 item 4: with MRRS 4096 instead of 512 GPUDirect wins SYS and NODE).
pub const DECIDING: [(&str, &str); 10] = [
    ("socket_links", "rate_gbps"),
    ("socket_links", "p2p_read_rate_gbps"),
    ("socket_links", "p2p_write_rate_gbps"),
    ("root_complexes", "p2p_read_rate_gbps"),
    ("root_complexes", "p2p_write_rate_gbps"),
    ("sockets", "dram_efficiency_pct"),
    ("gpus", "memcpy_launch_ns"),
    ("gpus", "memcpy_sync_ns"),
    ("nics", "mrrs_bytes"),
    ("nics", "wqe_delivery"),
];

/// Whether `key` (`machines[0].nics[0].mrrs_bytes`) is one of [`DECIDING`].
pub fn deciding(key: &str) -> bool {
    let mut parts = key.rsplit('.');
    let (Some(last), Some(section)) = (parts.next(), parts.next()) else {
        return false;
    };
    let section = section.split('[').next().unwrap_or(section);
    DECIDING.contains(&(section, last))
}

/// The values a deciding parameter that is no number is varied to: each other way of
/// delivering WQEs but `blueflame` (which `auto` is for one WQE). Each with its direction's
/// label and whether it counts as the variant up.
fn alternatives(p: &ParamValue) -> Vec<(Value, String, bool)> {
    if !p.key.ends_with(".wqe_delivery") {
        return Vec::new();
    }
    [("doorbell", false), ("inline-only", true)]
        .into_iter()
        .filter(|(w, _)| *w != p.value)
        .map(|(w, up)| (Value::String(w.into()), format!("={w}"), up))
        .collect()
}

/// How `p` is varied: up and down by `delta` (a power of two: to the largest value its domain
/// allows and halved, for a deciding one such as MRRS, whose real range is 128 to 4096), or to
/// its alternatives; each variant's value, label and whether it is the one up.
fn changes(p: &ParamValue, delta: f64) -> Vec<(Value, String, bool)> {
    let alt = alternatives(p);
    if !alt.is_empty() {
        return alt;
    }
    [1.0 + delta, 1.0 / (1.0 + delta)]
        .into_iter()
        .filter_map(|factor| {
            let up = factor > 1.0;
            let v = match p.domain {
                Domain::Pow2 { hi, .. } if up && deciding(&p.key) => {
                    let v = Value::Integer(hi as i64);
                    (v.to_string() != p.value).then_some(v)?
                }
                _ => scaled(p, factor)?,
            };
            let direction = match p.domain {
                Domain::Pow2 { hi, .. } if up && deciding(&p.key) => format!("={hi}"),
                Domain::Pow2 { .. } => if up { "x2" } else { "/2" }.to_string(),
                _ if up => format!("x{:.2}", 1.0 + delta),
                _ => format!("/{:.2}", 1.0 + delta),
            };
            Some((v, direction, up))
        })
        .collect()
}

/// The points of `cfg` the headlines compare: GPUDirect and its staging baselines.
pub(super) fn compared_points(cfg: &Config) -> Vec<scenario::Point> {
    let keep = |p: PathKind| p == PathKind::GpuDirect || BASELINES.contains(&p);
    scenario::plan(cfg)
        .into_iter()
        .filter(|p| keep(p.path))
        .collect()
}

/// Simulates the points of `cfg` the headlines compare.
#[cfg(test)]
pub(super) fn simulate(cfg: &Config) -> Result<Vec<Summary>> {
    study::simulate(cfg, &compared_points(cfg), 0, &Progress::new(0, true, ""))
}

/// Whether the points of scenario `s` read the same of `variant` as of `base`, so that the
/// base run's results stand for the variant's. They do when the two configs differ only in
/// what those points never read: hosts that no flow of the scenario runs on, and, on its
/// hosts, GPUs and NICs that are no flow's endpoint. (A point's simulation reads the config
/// through its flows' plans, which name only endpoint devices and the routes between them, the
/// topology, whose other devices carry no traffic and record no busy time, and `[sim]`.)
/// Everything else (the sweep, `[sim]`, the network, the scenarios, and every part of an
/// endpoint machine that is not another GPU or NIC: its CPU, sockets, switches, links) must be
/// equal, so an estimate there is never reused. Where a sender may relay by PXN (the sweep has
/// `pxn`, or `auto` with `[sim] pxn`, on a machine with NVLink), the relaying GPU is no
/// endpoint but carries the data, so no GPU of such a machine is taken as unread.
pub fn reads_same(base: &Config, variant: &Config, s: usize) -> bool {
    let Some(sc) = base.scenarios.get(s) else {
        return false;
    };
    if base.hosts.len() != variant.hosts.len() || base.scenarios != variant.scenarios {
        return false;
    }
    let ends: Vec<&Endpoint> = sc
        .flows
        .iter()
        .flat_map(|f| [&f.sender, &f.receiver])
        .collect();
    let mut patched = variant.clone();
    for (h, host) in patched.hosts.iter_mut().enumerate() {
        let (b, m) = (&base.hosts[h].machine, &mut host.machine);
        let mine: Vec<&&Endpoint> = ends.iter().filter(|e| e.host == h).collect();
        if mine.is_empty() {
            host.clone_from(&base.hosts[h]);
            continue;
        }
        if b.gpus.len() != m.gpus.len() || b.nics.len() != m.nics.len() {
            return false;
        }
        let relays = !b.nvlinks.is_empty()
            && base
                .paths
                .iter()
                .any(|&p| p == PathKind::Pxn || (p == PathKind::Auto && base.sim.pxn));
        // A GPU's reduction is read only by a workload flow that reduces.
        let reduces = sc
            .workload
            .as_ref()
            .is_some_and(|w| w.flows.iter().any(|f| f.reduce));
        for (g, gpu) in m.gpus.iter_mut().enumerate() {
            if !reduces {
                gpu.reduce = b.gpus[g].reduce;
            }
            if !relays && !mine.iter().any(|e| e.gpu == Some(g)) {
                gpu.clone_from(&b.gpus[g]);
            }
        }
        for (n, nic) in m.nics.iter_mut().enumerate() {
            if !mine.iter().any(|e| e.nic == n) {
                nic.clone_from(&b.nics[n]);
            }
        }
    }
    patched == *base
}

/// One variant of the study: an estimate scaled up or down, and the config it gives.
pub(super) struct Variant {
    pub(super) key: String,
    pub(super) direction: String,
    pub(super) value: String,
    pub(super) shown: String,
    pub(super) up: bool,
    pub(super) cfg: Config,
    pub(super) points: Vec<scenario::Point>,
    /// Per point: reused from the base run (`Some(i)`, its index there) or simulated.
    pub(super) reuse: Vec<Option<usize>>,
}

/// "187.5 ns", "256 B", "128", "75 Gb/s": a variant's value as a reader writes it.
pub(super) fn shown(domain: Domain, v: &Value) -> String {
    let n = |s: &str| leading_number(s).unwrap_or(0.0);
    match (domain, v) {
        (Domain::Duration { .. }, Value::String(s)) => {
            format!("{} ns", crate::report::charts::data::sig3(n(s) / 1e3))
        }
        (Domain::Rate { .. }, Value::String(s)) => {
            format!("{} Gb/s", crate::report::charts::data::sig3(n(s) / 1e9))
        }
        (Domain::Bytes { .. } | Domain::Pow2 { .. }, Value::Integer(i)) => fmt_bytes(*i as u64),
        (_, Value::String(s)) => s.clone(),
        (_, other) => other.to_string(),
    }
}

/// A sensitivity study ready to simulate: the base run's points and every variant's.
pub struct Variants {
    pub(super) cfg: Config,
    pub(super) delta: f64,
    pub(super) estimates: usize,
    pub(super) base_points: Vec<scenario::Point>,
    pub(super) variants: Vec<Variant>,
}

/// The base run and, for every estimate of `cfg`, a variant scaled up by `delta` and one
/// down (those that parse), each point marked for reuse where the variant cannot reach it.
pub fn variants(cfg: &Config, delta: f64) -> Result<Variants> {
    let cfg = cfg.clone();
    let base_points = compared_points(&cfg);
    let doc: Table = config::to_toml(&cfg).parse()?;
    // Every estimate, and every parameter that decides the winner beyond PIX whatever its
    // source.
    let estimates: Vec<ParamValue> = params::list(&cfg)
        .into_iter()
        .filter(|p| p.is_estimate() || deciding(&p.key))
        .collect();
    let mut variants = Vec::new();
    for p in &estimates {
        for (v, direction, up) in changes(p, delta) {
            let mut d = doc.clone();
            if params::set(&mut d, &p.key, v.clone()).is_none() {
                continue;
            }
            let Ok(variant) = config::parse(&toml::to_string(&d)?, "variant") else {
                continue;
            };
            let points = compared_points(&variant);
            let same_plan = points == base_points;
            let same: Vec<bool> = (0..cfg.scenarios.len())
                .map(|s| same_plan && reads_same(&cfg, &variant, s))
                .collect();
            let reuse = points
                .iter()
                .enumerate()
                .map(|(i, pt)| same[pt.scenario].then_some(i))
                .collect();
            variants.push(Variant {
                key: p.key.clone(),
                direction,
                value: v.as_str().map_or_else(|| v.to_string(), String::from),
                shown: shown(p.domain, &v),
                up,
                cfg: variant,
                points,
                reuse,
            });
        }
    }
    Ok(Variants {
        estimates: estimates.len(),
        cfg,
        delta,
        base_points,
        variants,
    })
}

impl Variants {
    /// Run 0 is the base, run k the k-th variant: their configs, and every point that is not
    /// reused with its run, simulated in one pool.
    pub(super) fn jobs(&self) -> (Vec<&Config>, Vec<(usize, &scenario::Point)>) {
        let configs = std::iter::once(&self.cfg)
            .chain(self.variants.iter().map(|v| &v.cfg))
            .collect();
        let base = self.base_points.iter().map(|p| (0, p));
        let others = self.variants.iter().enumerate().flat_map(|(k, v)| {
            let todo = v.points.iter().zip(&v.reuse).filter(|(_, r)| r.is_none());
            todo.map(move |(p, _)| (k + 1, p))
        });
        (configs, base.chain(others).collect())
    }

    /// What simulating them on `threads` threads is, for the cost gate: every point's events
    /// and memory, with the rows of all of them kept to the end.
    pub fn work(&self, threads: usize) -> Work {
        let (configs, jobs) = self.jobs();
        let topos: Vec<crate::topology::Topology> =
            configs.iter().map(|c| scenario::topology(c)).collect();
        let events: Vec<u64> = jobs
            .iter()
            .map(|&(k, p)| scenario::cost::estimate(configs[k], &topos[k], p))
            .collect();
        let memory: Vec<scenario::memory::PointMemory> = jobs
            .iter()
            .map(|&(k, p)| scenario::memory::point(configs[k], &topos[k], p, threads))
            .collect();
        let working: Vec<u64> = memory.iter().map(|m| m.working).collect();
        let named = |v: Vec<(usize, u64)>, figure: &dyn Fn(u64) -> String| -> Vec<String> {
            v.into_iter()
                .map(|(j, x)| {
                    let (k, p) = jobs[j];
                    let run = match k {
                        0 => "base".to_string(),
                        k => {
                            let v = &self.variants[k - 1];
                            format!("{} {}", v.key, v.direction)
                        }
                    };
                    format!(
                        "{run}: {} ({})",
                        study::point_name(configs[k], p),
                        figure(x)
                    )
                })
                .collect()
        };
        let per_event = |e: u64| format!("{:.1e}", e as f64);
        Work {
            what: "a sensitivity study".into(),
            events: events.iter().fold(0u64, |a, &e| a.saturating_add(e)),
            over: format!("{} points of {} runs", jobs.len(), configs.len()),
            memory: scenario::cost::peak_memory(&memory, threads),
            threads: threads.min(jobs.len()).max(1),
            costliest: named(scenario::cost::first_three(&events), &per_event),
            largest: named(scenario::cost::first_three(&working), &fmt_bytes),
            cut_events: "vary a smaller study (fewer scenarios or sizes)".into(),
            cut_memory: "vary a smaller study (fewer scenarios, sizes, messages or flows)".into(),
        }
    }

    /// Simulates the base run and the variants and compares each variant's headlines with
    /// the base run's.
    pub fn simulate(&self, quiet: bool) -> Result<Report> {
        let (configs, jobs) = self.jobs();
        let Variants {
            cfg,
            delta,
            estimates,
            base_points,
            variants,
        } = self;
        let delta = *delta;
        let progress = Progress::counting(jobs.len() as u64, quiet, "sensitivity", "points");
        let topos: Vec<crate::topology::Topology> =
            configs.par_iter().map(|c| scenario::topology(c)).collect();
        let results: Vec<(Summary, bool)> = jobs
            .par_iter()
            .map(|&(k, p)| {
                let r = scenario::simulate_point(configs[k], &topos[k], p);
                progress.inc();
                (r.summary, r.past_horizon)
            })
            .collect();
        progress.finish();
        if let Some(((s, _), (k, _))) = results.iter().zip(&jobs).find(|((_, past), _)| *past) {
            let file = if *k == 0 {
                "config"
            } else {
                "a sensitivity variant"
            };
            return Err(study::past_horizon(file, s).into());
        }
        let simulated = results.len();
        let mut results = results.into_iter().map(|r| r.0);
        let base_rows: Vec<Summary> = results.by_ref().take(base_points.len()).collect();
        let base = headlines(cfg, &base_rows);
        let mut effects = Vec::new();
        let mut reused = 0;
        for v in variants {
            let rows: Vec<Summary> = v
                .reuse
                .iter()
                .map(|r| match r {
                    Some(i) => {
                        reused += 1;
                        base_rows[*i].clone()
                    }
                    None => results.next().expect("one result per job"),
                })
                .collect();
            let h = headlines(&v.cfg, &rows);
            let (max_change, max_at, flips) = compare(&base, &h);
            let (bw_change, bw_at, moved) = compare_more(&base, &h);
            effects.push(Effect {
                key: v.key.clone(),
                direction: v.direction.clone(),
                value: v.value.clone(),
                shown: v.shown.clone(),
                up: v.up,
                max_change,
                max_at,
                bw_change,
                bw_at,
                moved,
                flips,
                headlines: h,
            });
        }
        effects.sort_by(|a, b| {
            (b.flips.len(), b.max_change.abs())
                .partial_cmp(&(a.flips.len(), a.max_change.abs()))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        Ok(Report {
            estimates: *estimates,
            runs: 1 + variants.len(),
            simulated,
            reused,
            delta,
            base,
            effects,
            hardware: study::run_info(cfg, "").hardware,
        })
    }
}

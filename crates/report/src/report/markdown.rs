//! report.md: a self-contained Markdown report of one run, written for a design review.
//!
//! It reads the same grouping as the charts ([`crate::report::charts::data::Model`]) so the
//! report and the charts always agree on scenario order, snapped sizes and crossovers. It links
//! only chart files that exist, by paths relative to the report, so the output folder can be
//! moved or published as a whole.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::config::PathKind;
use crate::report::charts::data::{
    BASELINES, Crossover, Metric, Model, Series, Speedup, fmt_ratio, fmt_us, nearest_size, sig3,
};
use crate::report::vocab::{class_meaning, display, path_meaning, scenario_label};
use crate::report::{RunInfo, atomic};
use crate::stats::Summary;
use crate::units::{fmt_bytes, ps_to_us};

/// The sizes the key table shows when the sweep has them.
const STANDARD_SIZES: [u64; 6] = [8, 4 << 10, 64 << 10, 1 << 20, 16 << 20, 1 << 30];

/// Writes `<dir>/report.md` and returns its path. `charts` are the files [`super::charts::write_charts`]
/// wrote; only those that exist are linked.
pub fn write_markdown(
    dir: &Path,
    info: &RunInfo,
    rows: &[Summary],
    charts: &[PathBuf],
) -> Result<PathBuf> {
    let text = render(dir, info, rows, charts);
    let path = dir.join("report.md");
    atomic::write(&path, text.as_bytes())?;
    Ok(path)
}

/// The report text (see [`write_markdown`]).
pub fn render(dir: &Path, info: &RunInfo, rows: &[Summary], charts: &[PathBuf]) -> String {
    let m = Model::new(info, rows);
    let mut out = String::new();
    let title = if info.config_name.is_empty() {
        "gdrsim run".to_string()
    } else {
        info.config_name.clone()
    };
    let _ = writeln!(
        out,
        "# GPU ↔ remote RDMA transfers: {}\n",
        md_inline(&title)
    );
    if !info.hardware.trim().is_empty() {
        let _ = writeln!(
            out,
            "Simulated hardware: **{}**.\n",
            md_inline(info.hardware.trim())
        );
    }
    variants(&mut out, info);
    super::decision::decision(&mut out, &m);
    intro(&mut out, &m);
    simulated(&mut out, &m);
    key_results(&mut out, &m);
    crossovers(&mut out, &m);
    fragile(&mut out, dir, info, charts);
    measured(&mut out, info);
    gdrcopy_crossovers(&mut out, &m);
    time_goes(&mut out, info, &m);
    super::contention::contention(&mut out, info, &m);
    super::network::network(&mut out, info.output.compare_size, &m);
    charts_section(&mut out, dir, charts);
    reproduce(&mut out, dir, info);
    out
}

fn intro(out: &mut String, m: &Model) {
    if m.sizes.is_empty() {
        let _ = writeln!(out, "This run produced no results.\n");
        return;
    }
    let iters: Vec<u32> = rows_of(m).map(|r| r.iterations).collect();
    let (lo, hi) = (
        iters.iter().min().copied().unwrap_or(0),
        iters.iter().max().copied().unwrap_or(0),
    );
    let iters = if lo == hi {
        format!("{lo}")
    } else {
        format!("{lo} to {hi}")
    };
    let _ = writeln!(
        out,
        "{} scenario{} × {} path{} ({}) × {} message size{} from {} to {}; {} {}; {} jittered iterations per point.\n",
        m.scenarios.len(),
        plural(m.scenarios.len()),
        m.paths.len(),
        plural(m.paths.len()),
        join(&m.paths),
        m.sizes.len(),
        plural(m.sizes.len()),
        fmt_bytes(m.sizes[0]),
        fmt_bytes(m.sizes[m.sizes.len() - 1]),
        if m.multi_op() { "ops" } else { "op" },
        join(&m.ops),
        iters
    );
    let _ = writeln!(
        out,
        "Latency is **one-way**: from the data being ready in the sender's source buffer until it is \
         visible to its consumer on the receiver (p50 = median over the jittered iterations); \
         perftest's latency tests cannot see that moment and report half a ping-pong round trip \
         from post to poll instead (a whole round trip for RDMA Read), which `gdrsim perftest` \
         reproduces. \
         Bandwidth is the streaming rate in GB/s (10⁹ bytes/s), as perftest's BW average defines it: all bytes of a run of back-to-back messages over the time from the first post to the last delivery. \"Speedup\" is GPUDirect \
         over staged: staged p50 / GPUDirect p50 for latency, GPUDirect / staged for bandwidth; \
         above 1× GPUDirect is better.\n"
    );
    let workloads: Vec<&str> = rows_of(m)
        .filter(|r| r.workload_ps.is_some())
        .map(|r| r.scenario.as_str())
        .fold(Vec::new(), |mut v, s| {
            if !v.contains(&s) {
                v.push(s);
            }
            v
        });
    if !workloads.is_empty() {
        let _ = writeln!(
            out,
            "**Workloads** ({}): their flows wait on flows, so their latency is the workload's \
             **completion time** (first start to the last delivery of every flow; results.csv's \
             `workload_us`), over jittered repeats of the whole workload, and their bandwidth is \
             every flow's bytes over the mean completion time. Their stage breakdown is the \
             critical chain across flows, message by message in `chain.csv`.\n",
            workloads.join(", ")
        );
    }
    collectives(m, out);
}

/// A study with NCCL collectives: what their bandwidth means, and per row nccl-tests' figures
/// with what limits busbw (the link that bound the transfers longest).
fn collectives(m: &Model, out: &mut String) {
    let rows: Vec<&Summary> = rows_of(m).filter(|r| r.busbw_gbps.is_some()).collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "**Collectives**: NCCL's collectives run as flows that wait on flows (rings and trees \
         of NCCL's steps, a broadcast's chains; all-to-all and sendrecv as p2p sends); their \
         bandwidth is nccl-tests' **algbw** (the buffer over the mean completion time) and \
         **busbw** is algbw times all-reduce's 2(n-1)/n, all-gather's, reduce-scatter's and \
         all-to-all's (n-1)/n, broadcast's and sendrecv's 1 (results.csv's `busbw_GBps`). What \
         limits busbw:\n"
    );
    let _ = writeln!(
        out,
        "| scenario | path | size | time | algbw (GB/s) | busbw (GB/s) | limited by |\n|---|---|---|---|---|---|---|"
    );
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.1} µs | {:.2} | {:.2} | {} |",
            r.scenario,
            r.path,
            fmt_bytes(r.size_bytes),
            r.lat.mean_us,
            r.bw_gbps,
            r.busbw_gbps.unwrap_or(0.0),
            r.bottleneck
        );
    }
    out.push('\n');
}

fn rows_of<'a>(m: &'a Model<'a>) -> impl Iterator<Item = &'a Summary> + 'a {
    m.series.iter().flat_map(|s| s.rows.iter().copied())
}

/// Words joined by ", ": "host, staged, gpudirect".
fn join<T: std::fmt::Display>(words: &[T]) -> String {
    words
        .iter()
        .map(|w| w.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Markdown-safe inline text: escapes table pipes and leading characters that would start markup.
pub fn md_inline(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('\n', " ")
}

/// A fenced code block whose fence is longer than any backtick run inside it.
fn code_block(out: &mut String, lang: &str, body: &str) {
    let mut longest = 0;
    let mut run = 0;
    for c in body.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    let _ = writeln!(
        out,
        "{fence}{lang}\n{}\n{fence}\n",
        body.trim_end_matches('\n')
    );
}

/// "gpu0 -> pcie Gen5 x16 -> sw0 -> ..." wrapped at about 88 columns.
fn route_chain(route: &[String]) -> String {
    let mut lines: Vec<String> = vec![String::new()];
    for (i, hop) in route.iter().enumerate() {
        let piece = if i == 0 {
            hop.clone()
        } else {
            format!(" -> {hop}")
        };
        let cur = lines.last_mut().expect("non-empty");
        if i > 0 && cur.len() + piece.len() > 88 {
            lines.push(format!("   -> {hop}"));
        } else {
            cur.push_str(&piece);
        }
    }
    lines.join("\n")
}

/// `[sweep] vary`: the variants with their values, one table row each (nothing without a
/// sweep).
fn variants(out: &mut String, info: &RunInfo) {
    let Some((_, first)) = info.variants.first() else {
        return;
    };
    let _ = writeln!(out, "## Variants\n");
    let _ = writeln!(
        out,
        "The study ran once per combination of these values (`[sweep] vary`, {} variant{}); \
         each scenario below is named with its variant.\n",
        info.variants.len(),
        plural(info.variants.len())
    );
    let keys: Vec<String> = first
        .iter()
        .map(|(k, _)| format!("`{}`", k.replace('`', "")))
        .collect();
    let _ = writeln!(out, "| variant | {} |", keys.join(" | "));
    let _ = writeln!(out, "|---|{}", "---|".repeat(keys.len()));
    for (label, values) in &info.variants {
        let vals: Vec<String> = values.iter().map(|(_, v)| md_inline(v)).collect();
        let _ = writeln!(out, "| {} | {} |", md_inline(label), vals.join(" | "));
    }
    let _ = writeln!(out);
}

fn simulated(out: &mut String, m: &Model) {
    let _ = writeln!(out, "## What was simulated\n");
    if m.scenarios.is_empty() {
        let _ = writeln!(out, "No scenario produced results.\n");
        return;
    }
    let _ = writeln!(out, "Paths:\n");
    for p in &m.paths {
        let _ = writeln!(out, "- `{p}`: {}.", path_meaning(*p));
    }
    let _ = writeln!(out);
    for s in &m.scenarios {
        let _ = writeln!(
            out,
            "### {}\n",
            md_inline(&scenario_label(&s.name, s.class))
        );
        if let Some(class) = s.class {
            let _ = writeln!(
                out,
                "Placement class **{class}**: {}.",
                class_meaning(class)
            );
        }
        if let Some(info) = s.info {
            if info.ceiling_gbps > 0.0 {
                let label = if info.ceiling_label.is_empty() {
                    format!("{} GB/s", sig3(info.ceiling_gbps))
                } else {
                    md_inline(&info.ceiling_label)
                };
                // Both are GPUDirect's (a copy's inside one host): the placement's own route,
                // not what a staged or relayed path takes.
                let _ = writeln!(out, "Bandwidth ceiling of its GPUDirect route: {label}.");
            }
            let _ = writeln!(out);
            if !info.route.is_empty() {
                let _ = writeln!(out, "Sender payload route under GPUDirect:\n");
                code_block(out, "text", &route_chain(&info.route));
            }
            if !info.topo_matrix.trim().is_empty() {
                let _ = writeln!(out, "Sender host topology (`nvidia-smi topo -m` style):\n");
                code_block(out, "text", &info.topo_matrix);
            }
        } else {
            let _ = writeln!(out);
        }
        let fallbacks: Vec<&Series> = m
            .series
            .iter()
            .filter(|x| m.scenarios[x.scenario].name == s.name && x.fallback.is_some())
            .collect();
        for f in fallbacks {
            let _ = writeln!(
                out,
                "Note: `{}` ran as `{}` here (no peer-to-peer path), so its numbers are those of the fallback.\n",
                m.paths[f.path],
                f.fallback.as_deref().unwrap_or("?")
            );
        }
    }
}

/// The standard sizes present in the sweep; when fewer than two are, up to six sizes spread
/// evenly over the sweep instead.
pub fn table_sizes(sizes: &[u64]) -> Vec<u64> {
    let std: Vec<u64> = STANDARD_SIZES
        .into_iter()
        .filter(|s| sizes.contains(s))
        .collect();
    if std.len() >= 2 || sizes.len() <= 1 {
        return if std.is_empty() { sizes.to_vec() } else { std };
    }
    let n = sizes.len().min(6);
    let mut out: Vec<u64> = (0..n)
        .map(|i| sizes[i * (sizes.len() - 1) / (n - 1).max(1)])
        .collect();
    out.dedup();
    out
}

fn key_results(out: &mut String, m: &Model) {
    let _ = writeln!(out, "## Key results\n");
    if m.series.is_empty() {
        let _ = writeln!(out, "No results.\n");
        return;
    }
    let sizes = table_sizes(&m.sizes);
    let speedups = m.speedups();
    // The headline: the spread at the smallest and the largest size.
    let ends: Vec<u64> = {
        let mut v = vec![m.sizes[0], m.sizes[m.sizes.len() - 1]];
        v.dedup();
        v
    };
    for z in ends {
        let at: Vec<(&Series, &Summary)> = m
            .series
            .iter()
            .filter_map(|s| s.at(z).map(|r| (s, r)))
            .collect();
        let by = |a: &&(&Series, &Summary), b: &&(&Series, &Summary)| {
            a.1.lat.p50_us.total_cmp(&b.1.lat.p50_us)
        };
        let (Some(fast), Some(slow)) = (at.iter().min_by(by), at.iter().max_by(by)) else {
            continue;
        };
        let who = |x: &(&Series, &Summary)| {
            format!("{} {}", m.scenarios[x.0.scenario].name, m.paths[x.0.path])
        };
        let mut line = format!(
            "- **At {}**: p50 from {} ({}) to {} ({})",
            fmt_bytes(z),
            fmt_us(fast.1.lat.p50_us),
            md_inline(&who(fast)),
            fmt_us(slow.1.lat.p50_us),
            md_inline(&who(slow))
        );
        for baseline in BASELINES {
            let ratios: Vec<f64> = speedups
                .iter()
                .filter(|sp| sp.baseline == baseline)
                .filter_map(|sp| {
                    sp.points
                        .iter()
                        .find(|p| p.size == z)
                        .and_then(|p| p.latency)
                })
                .collect();
            if let (Some(lo), Some(hi)) = (
                ratios.iter().copied().reduce(f64::min),
                ratios.iter().copied().reduce(f64::max),
            ) {
                let range = if (hi - lo).abs() < 1e-9 {
                    fmt_ratio(lo)
                } else {
                    format!("{} to {}", fmt_ratio(lo), fmt_ratio(hi))
                };
                line.push_str(&format!(
                    "; GPUDirect latency speedup over {baseline} {range}"
                ));
            }
        }
        let _ = writeln!(out, "{line}.");
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "p50 one-way latency and streaming bandwidth at standard sizes, per scenario.\n"
    );
    for (si, sc) in m.scenarios.iter().enumerate() {
        for (oi, op) in m.ops.iter().enumerate() {
            let series: Vec<&Series> = m
                .series
                .iter()
                .filter(|s| s.scenario == si && s.op == oi)
                .collect();
            if series.is_empty() {
                continue;
            }
            let sps: Vec<&Speedup> = speedups
                .iter()
                .filter(|s| s.scenario == si && s.op == oi)
                .collect();
            let op_note = if m.multi_op() {
                format!(", {op}")
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "### {}{}\n",
                md_inline(&scenario_label(&sc.name, sc.class)),
                md_inline(&op_note)
            );
            let mut head = vec!["Size".to_string()];
            head.extend(series.iter().map(|s| format!("{} p50", m.paths[s.path])));
            head.extend(series.iter().map(|s| format!("{} BW", m.paths[s.path])));
            for sp in &sps {
                head.push(if sp.baseline == PathKind::Staged {
                    "GPUDirect speedup (latency / BW)".into()
                } else {
                    format!("GPUDirect over {} (latency / BW)", sp.baseline)
                });
            }
            let _ = writeln!(out, "| {} |", head.join(" | "));
            let align = vec!["---:"; head.len()];
            let _ = writeln!(out, "|{}|", align.join("|"));
            for &z in &sizes {
                let mut cells = vec![fmt_bytes(z)];
                cells.extend(
                    series
                        .iter()
                        .map(|s| s.at(z).map_or("–".into(), |r| fmt_us(r.lat.p50_us))),
                );
                cells.extend(
                    series
                        .iter()
                        .map(|s| s.at(z).map_or("–".into(), |r| fmt_gbps(r.bw_gbps))),
                );
                for sp in &sps {
                    let p = sp.points.iter().find(|p| p.size == z);
                    let f = |v: Option<f64>| v.map_or("–".to_string(), fmt_ratio);
                    cells.push(p.map_or("–".into(), |p| {
                        format!("{} / {}", f(p.latency), f(p.bandwidth))
                    }));
                }
                let _ = writeln!(out, "| {} |", cells.join(" | "));
            }
            let _ = writeln!(out);
        }
    }
}

/// "GPUDirect wins at every swept size (1.2× to 2.4×)" and similar, for a metric without
/// crossovers.
fn steady(sp: &Speedup, metric: Metric) -> String {
    match sp.range(metric) {
        None => format!(
            "no {} ratio could be computed (a zero or missing value)",
            metric.name()
        ),
        Some((lo, hi)) => {
            let range = if (hi - lo).abs() < 1e-9 {
                fmt_ratio(lo)
            } else {
                format!("{} to {}", fmt_ratio(lo), fmt_ratio(hi))
            };
            let tie = crate::report::charts::data::TIE;
            if lo > 1.0 + tie {
                format!("GPUDirect wins at every swept size ({range})")
            } else if hi < 1.0 - tie {
                format!("{} wins at every swept size ({range})", sp.baseline)
            } else if lo >= 1.0 - tie {
                format!("GPUDirect wins or ties at every swept size ({range})")
            } else if hi <= 1.0 + tie {
                format!("{} wins or ties at every swept size ({range})", sp.baseline)
            } else {
                format!("no consistent winner ({range})")
            }
        }
    }
}

/// "48.1 GB/s", or "278 MB/s" below 1 GB/s so small-message bandwidth keeps its digits.
pub fn fmt_gbps(v: f64) -> String {
    if v > 0.0 && v < 1.0 {
        format!("{} MB/s", sig3(v * 1e3))
    } else {
        format!("{} GB/s", sig3(v))
    }
}

/// "35%", or "<1%" for a share that rounds to zero but is not zero.
pub(super) fn fmt_pct(p: f64) -> String {
    if p > 0.0 && p < 0.5 {
        "<1%".into()
    } else {
        format!("{p:.0}%")
    }
}

/// "GPUDirect wins up to 32 KiB; staged from 256 KiB up (crossing ≈ 90.5 KiB); ratio 2.23× at
/// 8 B to 0.76× at 1 GiB".
fn crossing_text(sp: &Speedup, metric: Metric, cs: &[Crossover]) -> String {
    let first = if cs[0].winner == sp.baseline {
        PathKind::GpuDirect
    } else {
        sp.baseline
    };
    let mut parts = vec![format!(
        "{} wins up to {}",
        display(first),
        fmt_bytes(cs[0].below)
    )];
    for (i, c) in cs.iter().enumerate() {
        let until = cs
            .get(i + 1)
            .map_or(" up".to_string(), |n| format!(" to {}", fmt_bytes(n.below)));
        let at = fmt_bytes(c.at.round().max(1.0) as u64);
        parts.push(format!(
            "{} from {}{until} (crossing ≈ {at})",
            display(c.winner),
            fmt_bytes(c.above)
        ));
    }
    let pts: Vec<(u64, f64)> = sp
        .points
        .iter()
        .filter_map(|p| metric.of(p).map(|r| (p.size, r)))
        .collect();
    let ends = match (pts.first(), pts.last()) {
        (Some(a), Some(b)) => {
            format!(
                "; ratio {} at {} to {} at {}",
                fmt_ratio(a.1),
                fmt_bytes(a.0),
                fmt_ratio(b.1),
                fmt_bytes(b.0)
            )
        }
        _ => String::new(),
    };
    format!("{}{ends}", parts.join("; "))
}

/// The stem of the sensitivity study's chart: linked from "Fragile conclusions", not listed
/// under "Charts".
const TORNADO: &str = "tornado";

fn stem_of(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The conclusions above that one estimate's change flips (`run --sensitivity`), and a link
/// to the tornado chart among `charts` where it was written.
fn fragile(out: &mut String, dir: &Path, info: &RunInfo, charts: &[PathBuf]) {
    let Some((delta, flips)) = &info.fragile else {
        return;
    };
    let _ = writeln!(
        out,
        "## Fragile conclusions
"
    );
    let tornado: Vec<String> = charts
        .iter()
        .filter(|p| stem_of(p) == TORNADO && p.is_file())
        .map(|p| {
            let ext = p
                .extension()
                .map(|e| e.to_string_lossy().to_uppercase())
                .unwrap_or_default();
            format!("[{ext}]({})", relative(dir, p))
        })
        .collect();
    let chart = |out: &mut String| {
        if !tornado.is_empty() {
            let _ = writeln!(
                out,
                "The tornado chart ({}) shows, per comparison at its largest size, how far each \
                 estimate moves the GPUDirect-over-staged ratios and which changes cross 1×.\n",
                tornado.join(", ")
            );
        }
    };
    if flips.is_empty() {
        let _ = writeln!(
            out,
            "Every estimate (a parameter no measurement pins) was changed by {delta:.0}% up and \
             down, one at a time: no winner, crossover or bottleneck above changes.\n"
        );
        chart(out);
        return;
    }
    let _ = writeln!(
        out,
        "Every estimate (a parameter no measurement pins) was changed by {delta:.0}% up and down, \
         one at a time. These conclusions flip under one such change; measure the parameter \
         before relying on them (`gdrsim sensitivity` gives the whole table):\n"
    );
    for f in flips {
        let _ = writeln!(out, "- {}", md_inline(f));
    }
    out.push('\n');
    chart(out);
}

/// `run --measured`: each matched measurement beside the model's figure, and the median
/// absolute error.
fn measured(out: &mut String, info: &RunInfo) {
    use crate::report::overlay::Figure;
    let Some(o) = &info.measured else {
        return;
    };
    let _ = writeln!(
        out,
        "## Model against measurement
"
    );
    let _ = writeln!(
        out,
        "Measured figures from `{}`, matched to the results points of scenario {} by path \
         (perftest on GPU memory = gpudirect, host memory = host), op (`ib_write_*` = write, \
         with `--write_with_imm` = write_imm; `ib_read_*` = read; `ib_send_*` = send) and \
         size. What is compared:\n",
        md_inline(&o.file),
        md_inline(&o.scenario)
    );
    let _ = writeln!(
        out,
        "- **Latency**: perftest's t_typical, the median of its samples, against the model's \
         p50 one-way latency (`lat_p50_us`). For Write and Send a perftest sample is half a \
         ping-pong round trip, which equals one way only where the two directions are alike \
         and the reply is posted the moment the message lands; for Read it is one request and \
         its response, which is what the model's one-way Read latency is. perftest's figure \
         is over its own iterations (1000 by default), the model's over the config's jittered \
         iterations.\n\
         - **Bandwidth**: perftest's BW average against `bw_GBps`: both are all bytes over \
         the time from the first post to the last completion, in GB/s = 10⁹ B/s (MiB/s × \
         2²⁰ / 10⁹, Gb/s / 8); perftest streams `-n` messages (5000) with `-t` in flight \
         (128), the model `stream_messages` with `stream_window` (see config.toml), so the \
         pipeline fill weighs differently where those differ.\n"
    );
    if o.matched.is_empty() {
        let _ = writeln!(out, "No measured row matched a results point.\n");
    } else {
        let _ = writeln!(
            out,
            "| test | memory | path | op | size | figure | measured | model | error |\n\
             |---|---|---|---|---:|---|---:|---:|---:|"
        );
        for m in &o.matched {
            let (what, v, model) = match m.figure {
                Figure::Latency => ("p50 latency", fmt_us(m.measured), fmt_us(m.model)),
                Figure::Bandwidth => ("bandwidth", fmt_gbps(m.measured), fmt_gbps(m.model)),
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {what} | {v} | {model} | {:+.2}% |",
                md_inline(&m.test),
                md_inline(&m.memory),
                m.path,
                m.op,
                fmt_bytes(m.size_bytes),
                m.error_pct()
            );
        }
        out.push('\n');
        if let Some(e) = o.median_abs_error_pct() {
            let _ = writeln!(
                out,
                "Median absolute error: {e:.2}% over {} figure{} (error = (model − measured) / \
                 measured; above 0 where the model is the higher). Every row with its line in \
                 the CSV: [`model_vs_measured.csv`](model_vs_measured.csv).\n",
                o.matched.len(),
                plural(o.matched.len())
            );
        }
    }
    if !o.notes.is_empty() {
        let _ = writeln!(out, "Not compared:\n");
        for n in &o.notes {
            let _ = writeln!(out, "- {}", md_inline(n));
        }
        out.push('\n');
    }
}

fn crossovers(out: &mut String, m: &Model) {
    let _ = writeln!(out, "## Crossovers\n");
    let sp = m.speedups();
    if sp.is_empty() {
        let _ = writeln!(
            out,
            "No scenario ran `gpudirect` together with `staged` or `staged_pipelined`, so there is no \
             crossover to report.\n"
        );
        return;
    }
    let _ = writeln!(
        out,
        "Where the better of GPUDirect and staged changes with message size (first swept size at which \
         the new winner wins; the chart marks the interpolated crossing).\n"
    );
    for s in &sp {
        let name = m.speedup_name(s);
        for metric in [Metric::Latency, Metric::Bandwidth] {
            let cs: Vec<Crossover> = s.crossovers(metric);
            let text = if cs.is_empty() {
                steady(s, metric)
            } else {
                crossing_text(s, metric, &cs)
            };
            let _ = writeln!(
                out,
                "- **{}**, {}: {}.",
                md_inline(&name),
                metric.name(),
                text
            );
        }
        if let Some(f) = &s.gpudirect_fallback {
            let _ = writeln!(
                out,
                "  (`gpudirect` ran as `{f}` here, so these ratios compare the fallback with {}.)",
                s.baseline
            );
        }
    }
    let _ = writeln!(out);
}

/// GDRCopy against cudaMemcpy staging, where both ran: up to which size the CPU's copies
/// through BAR1 beat the copy engine (p50 latency), as MVAPICH2-GDR's 8 KiB
/// `MV2_USE_GPUDIRECT_GDRCOPY_LIMIT` (row B6) expects.
fn gdrcopy_crossovers(out: &mut String, m: &Model) {
    let mut lines = Vec::new();
    for si in 0..m.scenarios.len() {
        for oi in 0..m.ops.len() {
            let (Some(st), Some(gc)) = (
                m.find(si, PathKind::Staged, oi),
                m.find(si, PathKind::Gdrcopy, oi),
            ) else {
                continue;
            };
            let pairs: Vec<(u64, f64, f64)> = gc
                .rows
                .iter()
                .filter_map(|g| {
                    st.at(g.size_bytes)
                        .map(|s| (g.size_bytes, g.lat.p50_us, s.lat.p50_us))
                })
                .collect();
            let wins: Vec<u64> = pairs.iter().filter(|p| p.1 < p.2).map(|p| p.0).collect();
            let loses = pairs
                .iter()
                .find(|p| p.1 >= p.2 && wins.iter().any(|&w| w < p.0));
            let mut name = m.scenarios[si].name.clone();
            if m.multi_op() {
                name = format!("{name} {}", m.ops[oi]);
            }
            let text = match (wins.iter().max(), loses) {
                (None, _) => "cudaMemcpy staging is faster at every swept size".to_string(),
                (Some(&w), Some(l)) => format!(
                    "GDRCopy is faster up to {} ({} against {}), cudaMemcpy staging from {} ({} against {})",
                    fmt_bytes(w),
                    fmt_us(pairs.iter().find(|p| p.0 == w).map_or(0.0, |p| p.1)),
                    fmt_us(pairs.iter().find(|p| p.0 == w).map_or(0.0, |p| p.2)),
                    fmt_bytes(l.0),
                    fmt_us(l.2),
                    fmt_us(l.1)
                ),
                (Some(_), None) => "GDRCopy is faster at every swept size".to_string(),
            };
            lines.push(format!("- **{}**: {text}.", md_inline(&name)));
        }
    }
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "### GDRCopy against cudaMemcpy staging\n\nOne-way p50 latency; MVAPICH2-GDR switches from GDRCopy at 8 KiB (row B6).\n"
    );
    for l in lines {
        let _ = writeln!(out, "{l}");
    }
    let _ = writeln!(out);
}

/// The small and large sizes to explain: the extreme configured breakdown sizes (snapped), or the
/// extremes of the sweep when those coincide.
fn explain_sizes(info: &RunInfo, sizes: &[u64]) -> Vec<u64> {
    let snapped: Vec<u64> = info
        .output
        .breakdown_sizes
        .iter()
        .filter_map(|&s| nearest_size(sizes, s))
        .collect();
    let (mut lo, mut hi) = (snapped.iter().min().copied(), snapped.iter().max().copied());
    if lo == hi {
        lo = sizes.first().copied();
        hi = sizes.last().copied();
    }
    let mut out: Vec<u64> = lo.into_iter().chain(hi).collect();
    out.dedup();
    out
}

fn time_goes(out: &mut String, info: &RunInfo, m: &Model) {
    let _ = writeln!(out, "## Where the time goes\n");
    let sizes = explain_sizes(info, &m.sizes);
    if sizes.is_empty() {
        let _ = writeln!(out, "No results.\n");
        return;
    }
    let _ = writeln!(
        out,
        "Critical path of the noise-free message: each stage's exclusive share of the one-way latency \
         (shares add up to the model latency exactly).\n"
    );
    for z in sizes {
        let _ = writeln!(out, "### At {}\n", fmt_bytes(z));
        let at: Vec<(&Series, &Summary)> = m
            .series
            .iter()
            .filter_map(|s| s.at(z).map(|r| (s, r)))
            .collect();
        // Which stage is largest, and how often.
        let mut tops: Vec<(&'static str, usize)> = Vec::new();
        for (_, r) in &at {
            if let Some(top) = r
                .stages
                .iter()
                .filter(|s| s.critical_ps > 0)
                .max_by_key(|s| s.critical_ps)
            {
                match tops.iter_mut().find(|(n, _)| *n == top.stage.name()) {
                    Some((_, c)) => *c += 1,
                    None => tops.push((top.stage.name(), 1)),
                }
            }
        }
        tops.sort_by_key(|t| std::cmp::Reverse(t.1));
        if !tops.is_empty() {
            let words: Vec<String> = tops
                .iter()
                .map(|(n, c)| format!("`{n}` in {c} of {}", at.len()))
                .collect();
            let _ = writeln!(out, "Largest single stage: {}.\n", words.join(", "));
        }
        let _ = writeln!(
            out,
            "| Scenario | Path | One-way latency (model) | Top stages (time, share of latency) |"
        );
        let _ = writeln!(out, "|---|---|---:|---|");
        for (s, r) in at {
            let total: u64 = r.stages.iter().map(|x| x.critical_ps).sum();
            let total = if total > 0 { total } else { r.lat_model_ps };
            let mut st: Vec<_> = r.stages.iter().filter(|x| x.critical_ps > 0).collect();
            st.sort_by(|a, b| {
                b.critical_ps
                    .cmp(&a.critical_ps)
                    .then(a.stage.cmp(&b.stage))
            });
            let top: Vec<String> = st
                .iter()
                .take(3)
                .map(|x| {
                    let pct = if total > 0 {
                        100.0 * x.critical_ps as f64 / total as f64
                    } else {
                        0.0
                    };
                    format!(
                        "`{}` {} ({})",
                        x.stage.name(),
                        fmt_us(ps_to_us(x.critical_ps)),
                        fmt_pct(pct)
                    )
                })
                .collect();
            let mut path = m.paths[s.path].to_string();
            if m.multi_op() {
                path = format!("{path} {}", m.ops[s.op]);
            }
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                md_inline(&m.scenarios[s.scenario].name),
                md_inline(&path),
                fmt_us(ps_to_us(total)),
                if top.is_empty() {
                    "(no stage breakdown)".into()
                } else {
                    top.join(", ")
                }
            );
        }
        let _ = writeln!(out);
    }
}

/// `p` relative to `dir` with forward slashes (Markdown links), or as given when it is not
/// inside `dir`.
fn relative(dir: &Path, p: &Path) -> String {
    let rel = p.strip_prefix(dir).unwrap_or(p);
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/").replace(' ', "%20")
}

/// What each chart shows, for its caption.
fn chart_caption(stem: &str) -> &'static str {
    match stem {
        "latency" => "One-way latency (p50, with a min to p99 band) against message size, log-log.",
        "bandwidth" => {
            "Streaming bandwidth against message size, with each scenario's route ceiling."
        }
        "busbw" => {
            "NCCL collectives: nccl-tests' bus bandwidth (busbw) against buffer size, one line per \
             collective and path."
        }
        "speedup" => {
            "GPUDirect over staged: latency and bandwidth ratios against size, crossovers marked."
        }
        "breakdown" => {
            "Critical-path stages at selected sizes; one panel per size, each with its own time scale."
        }
        "scenarios" => {
            "Scenarios side by side at one message size: latency and bandwidth per path."
        }
        "links" => {
            "The busiest channel directions of the streaming run at one message size, per path \
             and scenario (those with several flows): where the traffic queues."
        }
        _ => "",
    }
}

fn charts_section(out: &mut String, dir: &Path, charts: &[PathBuf]) {
    let _ = writeln!(out, "## Charts\n");
    // Group the existing files by stem, keeping the order they were written in.
    let mut stems: Vec<(String, Vec<&PathBuf>)> = Vec::new();
    for p in charts.iter().filter(|p| p.is_file()) {
        let stem = stem_of(p);
        if stem == TORNADO {
            continue;
        }
        match stems.iter_mut().find(|(s, _)| *s == stem) {
            Some((_, v)) => v.push(p),
            None => stems.push((stem, vec![p])),
        }
    }
    if stems.is_empty() {
        let _ = writeln!(out, "No charts were written for this run.\n");
        return;
    }
    for (stem, files) in stems {
        let ext = |p: &&PathBuf| {
            p.extension()
                .map(|e| e.to_string_lossy().to_lowercase())
                .unwrap_or_default()
        };
        // PNG renders everywhere Markdown is shown; SVG is the fallback and the zoomable version.
        let shown = files
            .iter()
            .find(|p| ext(p) == "png")
            .or_else(|| files.iter().find(|p| ext(p) == "svg"));
        let caption = chart_caption(&stem);
        let _ = writeln!(out, "### {}\n", md_inline(&stem));
        if !caption.is_empty() {
            let _ = writeln!(out, "{caption}\n");
        }
        if let Some(p) = shown {
            let _ = writeln!(out, "![{}]({})\n", md_inline(&stem), relative(dir, p));
        }
        let links: Vec<String> = files
            .iter()
            .map(|p| format!("[{}]({})", ext(p).to_uppercase(), relative(dir, p)))
            .collect();
        let _ = writeln!(out, "Files: {}\n", links.join(", "));
    }
}

fn reproduce(out: &mut String, dir: &Path, info: &RunInfo) {
    let _ = writeln!(out, "## Reproduce\n");
    if info.command.trim().is_empty() {
        let _ = writeln!(out, "The command of this run was not recorded.\n");
    } else {
        let _ = writeln!(
            out,
            "This exact command reproduces the run (the model is deterministic for a given seed):\n"
        );
        code_block(out, "sh", info.command.trim());
    }
    let data: Vec<String> = [
        "config.toml",
        "results.csv",
        "stages.csv",
        "model_vs_measured.csv",
    ]
    .into_iter()
    .filter(|f| dir.join(f).is_file())
    .map(|f| format!("[`{f}`]({f})"))
    .collect();
    if !data.is_empty() {
        let _ = writeln!(
            out,
            "Data and resolved configuration next to this report: {}.",
            data.join(", ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::charts::testdata;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("gdrsim-md-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    const SECTIONS: [&str; 6] = [
        "## What was simulated",
        "## Key results",
        "## Crossovers",
        "## Where the time goes",
        "## Charts",
        "## Reproduce",
    ];

    #[test]
    fn report_has_every_section_and_links_only_existing_charts() {
        let dir = tmp("full");
        let (info, rows) = testdata::realistic();
        std::fs::write(dir.join("latency.png"), b"png").unwrap();
        std::fs::write(dir.join("latency.svg"), b"<svg/>").unwrap();
        let charts = vec![
            dir.join("latency.svg"),
            dir.join("latency.png"),
            dir.join("speedup.png"),
        ];
        let path = write_markdown(&dir, &info, &rows, &charts).unwrap();
        assert_eq!(path, dir.join("report.md"));
        let md = std::fs::read_to_string(&path).unwrap();
        let mut last = 0;
        for s in SECTIONS {
            let at = md.find(s).unwrap_or_else(|| panic!("missing {s}:\n{md}"));
            assert!(at >= last, "{s} out of order");
            last = at;
        }
        assert!(md.contains("![latency](latency.png)"), "{md}");
        assert!(md.contains("[SVG](latency.svg)"));
        assert!(
            !md.contains("speedup.png"),
            "a chart that does not exist is linked"
        );
        assert!(md.contains(&format!("```sh\n{}\n```", info.command)));
        assert!(md.contains("H100 (PCIe Gen5 x16)"));
        assert!(md.contains("gpu0 -> pcie Gen5 x16 -> sw0"));
        assert!(
            md.contains("GPU0     X    PIX"),
            "topology matrix in a code block"
        );
        // Key table: the standard sizes of the sweep, with the GPUDirect speedup.
        assert!(md.contains("| 8 B |") && md.contains("| 1 GiB |") && !md.contains("| 64 B |"));
        assert!(md.contains("GPUDirect speedup (latency / BW)"));
        // The synthetic SYS placement is slower over peer-to-peer, so staged overtakes.
        assert!(md.contains("staged from 256 KiB up (crossing ≈"), "{md}");
        assert!(md.contains("**SYS**, latency"));
        // Where the time goes at a small and a large size, in words and numbers.
        assert!(
            md.contains("### At 8 B") && md.contains("### At 16 MiB"),
            "{md}"
        );
        assert!(md.contains("Largest single stage:"));
        assert!(md.contains('%'));
        assert!(
            !dir.read_dir().unwrap().any(|e| e
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".tmp"))
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn degenerate_inputs_still_give_every_section() {
        let dir = tmp("degenerate");
        let one = [testdata::SCENARIOS[0]];
        let info = testdata::info(&one);
        let cases: Vec<Vec<Summary>> = vec![
            vec![],
            testdata::rows(&one, &["gpudirect"], &[4096]),
            testdata::rows(&one, &["host", "staged"], &[100, 200]),
        ];
        for rows in cases {
            let md = render(&dir, &info, &rows, &[]);
            for s in SECTIONS {
                assert!(md.contains(s), "missing {s} for {} rows", rows.len());
            }
            assert!(md.contains("No charts were written"));
        }
        let md = render(
            &dir,
            &info,
            &testdata::rows(&one, &["host", "staged"], &[100, 200]),
            &[],
        );
        assert!(md.contains("No scenario ran `gpudirect` together with"));
        assert!(
            md.contains("| 100 B |") && md.contains("| 200 B |"),
            "non-standard sweep falls back to its own sizes"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn helpers() {
        let mut s = String::new();
        code_block(&mut s, "sh", "echo ```x```");
        assert!(s.starts_with("````sh\n"));
        assert_eq!(md_inline("a|b"), "a\\|b");
        assert_eq!(
            relative(Path::new("/o/x"), Path::new("/o/x/a b.png")),
            "a%20b.png"
        );
        assert_eq!(table_sizes(&[8, 16, 4096, 1 << 20]), vec![8, 4096, 1 << 20]);
        let long: Vec<String> = (0..30).map(|i| format!("hop{i}")).collect();
        assert!(route_chain(&long).lines().all(|l| l.len() <= 96));
    }

    #[test]
    fn measured_section_only_with_a_measurement() {
        let dir = tmp("measured");
        let (mut info, rows) = testdata::realistic();
        let plain = render(&dir, &info, &rows, &[]);
        assert!(!plain.contains("## Model against measurement"));
        info.measured = Some(testdata::overlay(&rows));
        let md = render(&dir, &info, &rows, &[]);
        let at = md.find("## Model against measurement").expect("section");
        assert!(at > md.find("## Crossovers").unwrap());
        assert!(at < md.find("## Reproduce").unwrap());
        let n = info.measured.as_ref().unwrap().matched.len();
        let table = md
            .lines()
            .filter(|l| l.starts_with("| ib_write_bw |"))
            .count();
        assert_eq!(table, n);
        assert!(md.contains("| -9.09% |"), "{md}");
        assert!(md.contains("| +11.11% |"), "{md}");
        // Half -9.09%, half +11.11%: the median of the absolute errors is their mean.
        assert!(md.contains("Median absolute error: 10.10%"), "{md}");
        assert!(md.contains("skipped 3 nvbandwidth rows"));
        assert!(md.contains("t_typical"));
        std::fs::remove_dir_all(&dir).ok();
    }
}

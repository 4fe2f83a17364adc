//! What a study concludes (its headlines: which path wins where, the crossovers, what binds)
//! and what one variant changes of it: the largest ratio moved and the conclusions flipped.

use super::*;
use crate::bottleneck::Bottleneck;

/// The headline results of one run: per comparison (scenario, op, baseline) and size, the
/// ratios and the winner of each metric, and the sizes where the winner changes (crossovers);
/// per scenario, op and path, the bandwidth at the largest size; per scenario, GPUDirect's
/// bottleneck at the largest size.
#[derive(Clone, Debug, PartialEq)]
pub struct Headlines {
    /// (comparison label, size, metric, ratio).
    pub ratios: Vec<(String, u64, Metric, f64)>,
    /// ("comparison label metric", its crossovers as the report words them: "staged wins at
    /// ≥ 512 KiB"; none where one path wins at every size).
    pub crossovers: Vec<(String, Vec<String>)>,
    /// ("scenario op path", GB/s at the largest size).
    pub bandwidths: Vec<(String, f64)>,
    /// ("scenario op", bottleneck).
    pub bottlenecks: Vec<(String, Bottleneck)>,
}

/// Who wins at a ratio: GPUDirect above 1, the baseline below, nobody within [`TIE`].
pub(super) fn winner(r: f64) -> i8 {
    if (r - 1.0).abs() <= TIE {
        0
    } else if r > 1.0 {
        1
    } else {
        -1
    }
}

/// The headline results of `rows`, simulated for `cfg`.
pub fn headlines(cfg: &Config, rows: &[Summary]) -> Headlines {
    let info = study::run_info(cfg, "");
    let model = Model::new(&info, rows);
    let mut ratios = Vec::new();
    let mut crossovers = Vec::new();
    for s in model.speedups() {
        let label = format!(
            "{} {} vs {}",
            model.scenarios[s.scenario].name, model.ops[s.op], s.baseline
        );
        for p in &s.points {
            for m in [Metric::Latency, Metric::Bandwidth] {
                if let Some(r) = m.of(p) {
                    ratios.push((label.clone(), p.size, m, r));
                }
            }
        }
        for m in [Metric::Latency, Metric::Bandwidth] {
            let at: Vec<String> = s.crossovers(m).iter().map(|c| c.short()).collect();
            crossovers.push((format!("{label} {}", m.name()), at));
        }
    }
    let largest = cfg.sizes.iter().copied().max().unwrap_or(0);
    let bandwidths = rows
        .iter()
        // A bandwidth not at steady state is no base to measure a variant's change against.
        .filter(|r| r.size_bytes == largest && r.steady)
        .map(|r| (format!("{} {} {}", r.scenario, r.op, r.path), r.bw_gbps))
        .collect();
    let bottlenecks = rows
        .iter()
        .filter(|r| r.path == PathKind::GpuDirect && r.size_bytes == largest)
        .map(|r| (format!("{} {}", r.scenario, r.op), r.bottleneck.clone()))
        .collect();
    Headlines {
        ratios,
        crossovers,
        bandwidths,
        bottlenecks,
    }
}

/// How one variant moved the headlines.
#[derive(Clone, Debug, PartialEq)]
pub struct Effect {
    /// The key path of the estimate varied, as [`crate::config::params::list`] names it
    /// (`machines[0].nics[0].read_window`).
    pub key: String,
    /// "x1.25" or "/1.25" (or "x2" for a power of two).
    pub direction: String,
    /// The value the variant gave it, as the config writes it.
    pub value: String,
    /// The same value for a reader: "187.5 ns", "256 B".
    pub shown: String,
    /// Whether the variant scaled the estimate up (else down).
    pub up: bool,
    /// The largest relative change of a ratio, signed, with where it happened.
    pub max_change: f64,
    /// Where that largest change happened: which ratio, at which size.
    pub max_at: String,
    /// The largest relative change of a bandwidth at the largest size, signed.
    pub bw_change: f64,
    /// Where it happened: "PHB write_imm gpudirect".
    pub bw_at: String,
    /// Crossovers that moved, appeared or vanished: "PHB write_imm vs staged bandwidth:
    /// staged wins at ≥ 1 MiB -> staged wins at ≥ 512 KiB".
    pub moved: Vec<String>,
    /// Conclusions that flipped.
    pub flips: Vec<Flip>,
    /// The variant's headlines (the ratios the chart draws).
    pub headlines: Headlines,
}

/// One conclusion a variant flipped: who wins a comparison at a size, or a bottleneck.
#[derive(Clone, Debug, PartialEq)]
pub struct Flip {
    /// "SYS write_imm vs staged bandwidth", or "SYS write_imm gpudirect bottleneck".
    pub what: String,
    /// The size, for a winner.
    pub size: Option<u64>,
    /// The winner (or bottleneck) in the base run.
    pub from: String,
    /// The winner (or bottleneck) in the variant.
    pub to: String,
}

impl Flip {
    /// "SYS write_imm vs staged bandwidth at 1 MiB: gpudirect -> staged".
    pub fn text(&self) -> String {
        match self.size {
            Some(s) => format!(
                "{} at {}: {} -> {}",
                self.what,
                fmt_bytes(s),
                self.from,
                self.to
            ),
            None => format!("{}: {} -> {}", self.what, self.from, self.to),
        }
    }
}

/// The flips of one variant with runs of adjacent sizes of one comparison joined: "SYS
/// write_imm vs staged bandwidth from 512 KiB to 1 GiB (12 sizes): gpudirect -> staged".
pub(super) fn joined(flips: &[Flip]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < flips.len() {
        let f = &flips[i];
        let mut j = i + 1;
        while j < flips.len()
            && f.size.is_some()
            && flips[j].size.is_some()
            && (
                flips[j].what.as_str(),
                flips[j].from.as_str(),
                flips[j].to.as_str(),
            ) == (f.what.as_str(), f.from.as_str(), f.to.as_str())
        {
            j += 1;
        }
        if j - i > 1 {
            let (a, b) = (f.size.unwrap_or(0), flips[j - 1].size.unwrap_or(0));
            out.push(format!(
                "{} from {} to {} ({} sizes): {} -> {}",
                f.what,
                fmt_bytes(a),
                fmt_bytes(b),
                j - i,
                f.from,
                f.to
            ));
        } else {
            out.push(f.text());
        }
        i = j;
    }
    out
}

/// The largest relative change of a headline bandwidth, and where; then the crossovers that
/// differ between the base run and a variant.
pub(super) fn compare_more(base: &Headlines, v: &Headlines) -> (f64, String, Vec<String>) {
    let mut max = (0.0f64, String::new());
    for (label, b0) in &base.bandwidths {
        if let Some((_, b1)) = v.bandwidths.iter().find(|(l, _)| l == label)
            && *b0 > 0.0
        {
            let change = b1 / b0 - 1.0;
            if change.abs() > max.0.abs() {
                max = (change, label.clone());
            }
        }
    }
    let words = |c: &[String]| match c.is_empty() {
        true => "no crossover".to_string(),
        false => c.join(", "),
    };
    let moved = base
        .crossovers
        .iter()
        .filter_map(|(label, c0)| {
            let (_, c1) = v.crossovers.iter().find(|(l, _)| l == label)?;
            (c1 != c0).then(|| format!("{label}: {} -> {}", words(c0), words(c1)))
        })
        .collect();
    (max.0, max.1, moved)
}

pub(super) fn compare(base: &Headlines, v: &Headlines) -> (f64, String, Vec<Flip>) {
    let mut max = (0.0f64, String::new());
    let mut flips = Vec::new();
    let name = |w: i8, label: &str| match w {
        1 => "gpudirect".to_string(),
        -1 => label
            .rsplit(" vs ")
            .next()
            .unwrap_or("baseline")
            .to_string(),
        _ => "a tie".to_string(),
    };
    for (label, size, m, r0) in &base.ratios {
        let Some((_, _, _, r1)) = v
            .ratios
            .iter()
            .find(|(l, s, mm, _)| l == label && s == size && mm == m)
        else {
            continue;
        };
        let change = r1 / r0 - 1.0;
        if change.abs() > max.0.abs() {
            max = (
                change,
                format!("{label} {} at {}", m.name(), fmt_bytes(*size)),
            );
        }
        let (w0, w1) = (winner(*r0), winner(*r1));
        if w0 != w1 && w0 != 0 && w1 != 0 {
            flips.push(Flip {
                what: format!("{label} {}", m.name()),
                size: Some(*size),
                from: name(w0, label),
                to: name(w1, label),
            });
        }
    }
    for (sc, b0) in &base.bottlenecks {
        if let Some((_, b1)) = v.bottlenecks.iter().find(|(s, _)| s == sc)
            && b1 != b0
        {
            flips.push(Flip {
                what: format!("{sc} gpudirect bottleneck"),
                size: None,
                from: b0.to_string(),
                to: b1.to_string(),
            });
        }
    }
    (max.0, max.1, flips)
}

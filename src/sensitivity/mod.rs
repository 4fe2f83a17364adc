//! `gdrsim sensitivity CONFIG [--delta 25%]`: which conclusions of a study hang on a parameter
//! nobody measured. Every parameter whose value is its default and whose source is `estimate`
//! is scaled up and down by the delta, one at a time; each variant is simulated (only the paths
//! the conclusions compare: GPUDirect and its staging baselines) and its headline results are
//! compared with the base run's: the GPUDirect-over-staging ratios per size, which path wins
//! at each size (and so the crossovers), and the bottleneck GPUDirect streams into. A
//! parameter that flips a winner or a bottleneck makes that conclusion fragile.

use std::path::Path;

use anyhow::Result;
use toml::{Table, Value};

use crate::config::params::{self, ParamValue};
use rayon::prelude::*;

use crate::config::{self, Config, Domain, Endpoint, PathKind};
use crate::progress::Progress;
use crate::report::charts::data::{BASELINES, Metric, Model, TIE};
use crate::report::charts::tornado::{Bar, End, Panel, Tornado};
use crate::scenario;
use crate::stats::Summary;
use crate::study::{self, Limits, Work};
use crate::units::fmt_bytes;

mod analysis;
mod render;
mod variants;

pub use analysis::*;
pub use render::*;
pub use variants::*;

/// The result of a sensitivity study.
pub struct Report {
    /// Estimates varied (parameters marked as estimates, not measurements).
    pub estimates: usize,
    /// Simulations run: the base run and every variant that parsed.
    pub runs: usize,
    /// Points simulated in all (the base run's and the variants').
    pub simulated: usize,
    /// Variant points taken from the base run instead, because the estimate varied provably
    /// does not reach them ([`reads_same`]).
    pub reused: usize,
    /// The relative step of the variants (0.25: every estimate x1.25 and /1.25).
    pub delta: f64,
    /// The base run's headlines.
    pub base: Headlines,
    /// Every variant's effect, flips first, then by the largest change of a ratio.
    pub effects: Vec<Effect>,
    /// The described hardware, for the chart's title.
    pub hardware: String,
}

/// Runs the study of the config at `config` within `limits`: see [`study`](fn@study).
pub fn run(config: Option<&Path>, delta: f64, quiet: bool, limits: &Limits) -> Result<Report> {
    let file = study::source_name(config);
    study(&study::load_config(config)?, delta, quiet, &file, limits)
}

/// The base run and, for every estimate, a variant up and one down, refused by the cost gate
/// (as bad input of `file`) where simulating them is above `limits`. All the points to
/// simulate, the base run's and the variants', run together on every core; a variant's point
/// whose scenario reads nothing the variant changed ([`reads_same`]) is taken from the base
/// run instead of simulated again.
pub fn study(cfg: &Config, delta: f64, quiet: bool, file: &str, limits: &Limits) -> Result<Report> {
    let v = variants(cfg, delta)?;
    study::admit(file, &v.work(study::threads(0)), limits)?;
    v.simulate(quiet)
}

/// `25%`, `0.25` or `25` -> 0.25.
pub fn parse_delta(s: &str) -> Result<f64, config::ConfigError> {
    let t = s.trim();
    let v: Option<f64> = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().ok().map(|p| p / 100.0),
        None => t
            .parse::<f64>()
            .ok()
            .map(|v| if v >= 1.0 { v / 100.0 } else { v }),
    };
    v.filter(|v| (0.01..=10.0).contains(v)).ok_or_else(|| {
        config::ConfigError::new(
            "command line",
            "--delta",
            "a change from 1% to 1000% (such as 25%)",
            format!("{s:?}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue #25 item 4: the parameters that decide the winner beyond PIX are varied whatever
    /// their source: the socket link's rate and P2P caps, the root complexes' P2P caps, the
    /// DRAM's sustained share, the cudaMemcpy costs, the WQE delivery (to its alternatives)
    /// and the NIC's MRRS (halved, and up to 4096).
    #[test]
    fn the_deciding_parameters_are_varied_whatever_their_source() {
        let cfg = config::parse(config::DEFAULT_TOML, "default").unwrap();
        let v = variants(&cfg, 0.25).unwrap();
        let has = |key: &str, direction: &str| {
            v.variants
                .iter()
                .any(|x| x.key == format!("machines[0].{key}") && x.direction == direction)
        };
        for (key, direction) in [
            ("socket_links[0].rate_gbps", "/1.25"),
            ("socket_links[0].p2p_read_rate_gbps", "x1.25"),
            ("socket_links[0].p2p_write_rate_gbps", "/1.25"),
            ("root_complexes[0].p2p_read_rate_gbps", "/1.25"),
            ("root_complexes[0].p2p_write_rate_gbps", "x1.25"),
            ("sockets[0].dram_efficiency_pct", "/1.25"),
            ("gpus[0].memcpy_launch_ns", "x1.25"),
            ("gpus[0].memcpy_sync_ns", "/1.25"),
            ("nics[0].mrrs_bytes", "/2"),
            ("nics[0].mrrs_bytes", "=4096"),
            ("nics[0].wqe_delivery", "=doorbell"),
            ("nics[0].wqe_delivery", "=inline-only"),
        ] {
            assert!(has(key, direction), "{key} {direction}");
        }
        assert!(deciding("machines[0].root_complexes[2].p2p_read_rate_gbps"));
        assert!(!deciding("machines[0].nics[0].wire_rate_gbps"));
    }

    fn pv(value: &str, domain: Domain) -> ParamValue {
        ParamValue {
            key: "k".into(),
            value: value.into(),
            unit: "",
            domain,
            source: "estimate",
            default: None,
        }
    }

    #[test]
    fn values_scale_within_their_domain() {
        let d = Domain::Duration { max: u64::MAX };
        assert_eq!(
            scaled(&pv("150", d), 1.25),
            Some(Value::String("187500ps".into()))
        );
        assert_eq!(scaled(&pv("0", d), 1.25), None);
        let w = Domain::Count { lo: 1, hi: 65536 };
        assert_eq!(scaled(&pv("128", w), 1.25), Some(Value::Integer(160)));
        assert_eq!(scaled(&pv("1", w), 0.8), None, "at its bound");
        let p = Domain::Pow2 { lo: 128, hi: 4096 };
        assert_eq!(scaled(&pv("512", p), 0.8), Some(Value::Integer(256)));
        assert_eq!(parse_delta("25%").unwrap(), 0.25);
        assert!(parse_delta("0%").is_err());
    }

    /// A variant's largest bandwidth change and where, and a crossover that appeared.
    #[test]
    fn bandwidths_and_crossovers_are_compared() {
        let h = |bw: f64, c: &[&str]| Headlines {
            ratios: Vec::new(),
            crossovers: vec![(
                "SYS write_imm vs staged bandwidth".into(),
                c.iter().map(|s| s.to_string()).collect(),
            )],
            bandwidths: vec![
                ("SYS write_imm gpudirect".into(), bw),
                ("SYS write_imm staged".into(), 40.0),
            ],
            bottlenecks: Vec::new(),
        };
        let base = h(50.0, &[]);
        let (change, at, moved) = super::compare_more(&base, &h(40.0, &["staged wins at ≥ 1 MiB"]));
        assert!((change + 0.2).abs() < 1e-12, "{change}");
        assert_eq!(at, "SYS write_imm gpudirect");
        assert_eq!(
            moved,
            ["SYS write_imm vs staged bandwidth: no crossover -> staged wins at ≥ 1 MiB"]
        );
        let (change, _, moved) = super::compare_more(&base, &base);
        assert_eq!((change, moved.len()), (0.0, 0));
    }

    /// Every op of a scenario has its own bottleneck headline (they were keyed by scenario
    /// alone, so a change was reported once per op against the first op's).
    #[test]
    fn bottlenecks_are_per_scenario_and_op() {
        let text = config::DEFAULT_TOML
            .replace("ops = [\"write_imm\"]", "ops = [\"write_imm\", \"send\"]")
            .replace(
                "sizes = { from = \"1B\", to = \"1GiB\", factor = 2 }",
                "sizes = [\"4KiB\", \"1MiB\"]",
            );
        let cfg = config::parse(&text, "two ops").unwrap();
        let h = headlines(&cfg, &simulate(&cfg).unwrap());
        let mut keys: Vec<&str> = h.bottlenecks.iter().map(|(k, _)| k.as_str()).collect();
        let n = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!((n, keys.len()), (6, 6), "{:?}", h.bottlenecks);
    }

    /// A read window cut in half flips the default study's SYS bandwidth conclusion or moves
    /// its ratios; any estimate that changes nothing shows no flip.
    #[test]
    fn an_estimate_that_binds_moves_the_headlines() {
        let cfg = config::parse(config::DEFAULT_TOML, "default").unwrap();
        let base = headlines(&cfg, &simulate(&cfg).unwrap());
        assert!(!base.ratios.is_empty());
        let same = compare(&base, &base);
        assert_eq!((same.0, same.2.len()), (0.0, 0));
        let mut doc: Table = config::to_toml(&cfg).parse().unwrap();
        params::set(
            &mut doc,
            "machines[0].nics[0].read_window",
            Value::Integer(8),
        )
        .unwrap();
        let v = config::parse(&toml::to_string(&doc).unwrap(), "v").unwrap();
        let (change, at, _) = compare(&base, &headlines(&v, &simulate(&v).unwrap()));
        assert!(
            change.abs() > 0.05,
            "a read window of 8 moved the ratios by {change} ({at})"
        );
    }

    /// Reuse is sound: for every variant of every estimate, each scenario whose points
    /// `reads_same` says the variant cannot reach simulates, recomputed, exactly to the base
    /// run's rows. And it is not vacuous: some points are reused (the GPUs no scenario or only
    /// another scenario uses), while the scenario whose GPU an estimate belongs to is not, and
    /// there the estimate does change the rows.
    #[test]
    fn reused_points_equal_recomputed_ones() {
        let text = config::DEFAULT_TOML.replace(
            "sizes = { from = \"1B\", to = \"1GiB\", factor = 2 }",
            "sizes = [\"4KiB\", \"1MiB\"]",
        );
        let cfg = config::parse(&text, "small").unwrap();
        let topo = scenario::topology(&cfg);
        let points = compared_points(&cfg);
        let run = |c: &Config, t: &crate::topology::Topology, s: usize| -> Vec<Summary> {
            points
                .iter()
                .filter(|p| p.scenario == s)
                .map(|p| scenario::simulate_point(c, t, p).summary)
                .collect()
        };
        let base: Vec<Vec<Summary>> = (0..cfg.scenarios.len())
            .map(|s| run(&cfg, &topo, s))
            .collect();
        let doc: Table = config::to_toml(&cfg).parse().unwrap();
        let (mut reused, mut kept_changed) = (0, 0);
        for p in params::list(&cfg).into_iter().filter(|p| p.is_estimate()) {
            for factor in [1.25, 0.8] {
                let Some(v) = scaled(&p, factor) else {
                    continue;
                };
                let mut d = doc.clone();
                params::set(&mut d, &p.key, v).unwrap();
                let var = config::parse(&toml::to_string(&d).unwrap(), "v").unwrap();
                assert_eq!(compared_points(&var), points);
                let vt = scenario::topology(&var);
                for (s, rows) in base.iter().enumerate() {
                    if reads_same(&cfg, &var, s) {
                        reused += 1;
                        assert!(
                            run(&var, &vt, s) == *rows,
                            "{} x{factor} reused for {} but changes it",
                            p.key,
                            cfg.scenarios[s].name
                        );
                    } else if p.key.contains(".gpus[") && run(&var, &vt, s) != *rows {
                        kept_changed += 1;
                    }
                }
            }
        }
        // ce_mrrs_bytes, memcpy_sync_ns and ce_nvlink_read_window of gpus[0..4], up and down:
        // 3 x 2 x (2 + 2 + 3 + 2) scenario runs reused; the 6 of ce_mrrs_bytes's own scenarios
        // and the 6 of memcpy_sync_ns's recomputed, and changed (a staged copy pays both; no
        // flow crosses NVLink: the NVLink window changes nothing). reduce_gbps and
        // reduce_launch_ns of gpus[0..4], up and down, reused by all 3 scenarios (none
        // reduces): 2 x 2 x 4 x 3.
        assert_eq!((reused, kept_changed), (54 + 48, 6 + 6));
    }
}

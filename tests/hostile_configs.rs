//! Hostile configs: any number in the default config replaced by an extreme value either loads
//! and simulates without a panic or overflow, or is refused with a config error (never a crash).

mod support;

use gdrsim::config::{self, PathKind};
use gdrsim::scenario::{self, Point};
use proptest::prelude::*;

/// Lines of the default config of the form `key = <number>` (keys we can mutate).
fn numeric_lines() -> Vec<usize> {
    config::DEFAULT_TOML
        .lines()
        .enumerate()
        .filter(|(_, l)| {
            let Some((k, v)) = l.split_once(" = ") else {
                return false;
            };
            !k.contains('[') && v.trim_start().starts_with(|c: char| c.is_ascii_digit())
        })
        .map(|(i, _)| i)
        .collect()
}

const EXTREMES: &[&str] = &[
    "0",
    "1",
    "-1",
    "0.001",
    "3",
    "7",
    "4096",
    "9223372036854775807",
    "1e300",
    "\"10s\"",
    "\"1Mb/s\"",
    "\"16GiB\"",
    "\"1ps\"",
    "true",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, rng_seed: support::proptest_seed(), ..ProptestConfig::default() })]

    #[test]
    fn extreme_numbers_load_cleanly_or_are_refused(
        picks in prop::collection::vec((any::<prop::sample::Index>(), 0usize..EXTREMES.len()), 1..4),
    ) {
        let lines = numeric_lines();
        let mut text: Vec<String> = config::DEFAULT_TOML.lines().map(String::from).collect();
        for (idx, v) in &picks {
            let line = lines[idx.index(lines.len())];
            let key = text[line].split_once(" = ").unwrap().0.to_string();
            text[line] = format!("{key} = {}", EXTREMES[*v]);
        }
        let text = text.join("\n");
        let Ok(cfg) = config::parse(&text, "hostile.toml") else { return Ok(()) };
        let topo = scenario::topology(&cfg);
        for path in [PathKind::Host, PathKind::Staged, PathKind::GpuDirect] {
            for size in [1u64, 1 << 20] {
                let p = Point { scenario: 0, path, op: gdrsim::config::Op::WriteImm, size, seed: 3 };
                let r = scenario::simulate_point(&cfg, &topo, &p);
                prop_assert!(r.summary.lat_model_ps > 0);
                prop_assert_eq!(r.summary.stages.iter().map(|s| s.critical_ps).sum::<u64>(), r.summary.lat_model_ps);
            }
        }
    }
}

//! Hostile but legal configs: the default config with one to four hardware parameters set to
//! the edges of what their declaration accepts (its [`Domain`]: the least and largest value,
//! a random one between) must load, and then simulate without a panic or overflow, with
//! results inside physical bounds. Values come from the parameters' own declarations, so every
//! generated config is one the loader accepts; the only refusals allowed are the documented
//! cross-checks (a cable's latency, the simulation horizon), and they must stay rare.

use gdrsim::config::params::{self, ParamValue};
use gdrsim::config::{self, Domain, Op, PathKind};
use gdrsim::scenario::{self, Point};
use toml::{Table, Value};

/// SplitMix64: a small deterministic generator (the cases are the same on every run; set
/// GDRSIM_HOSTILE_SEED to explore others).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    /// The least value, the largest, or one between (log-uniform, so small values come up).
    fn edge(&mut self, lo: u64, hi: u64) -> u64 {
        match self.below(3) {
            0 => lo,
            1 => hi,
            _ => {
                let bits = 64 - hi.leading_zeros() as u64;
                let v = self.next() >> (64 - self.below(bits + 1).max(1));
                v.clamp(lo, hi)
            }
        }
    }
}

/// A legal value of `domain` as the config writes it, or None for kinds not varied here
/// (addresses, names, lists).
fn legal_value(domain: Domain, rng: &mut Rng) -> Option<Value> {
    Some(match domain {
        Domain::Duration { max } => Value::String(format!("{}ps", rng.edge(0, max))),
        // Up to 1 Pb/s: far past any link, still a u64 of bits per second.
        Domain::Rate { min } => Value::String(format!("{}b/s", rng.edge(min, 1 << 50))),
        Domain::Bytes { lo, hi } => Value::Integer(rng.edge(lo, hi.min(1 << 40)) as i64),
        Domain::Pow2 { lo, hi } => {
            let (a, b) = (lo.trailing_zeros() as u64, hi.trailing_zeros() as u64);
            Value::Integer(1 << (a + rng.below(b - a + 1)))
        }
        Domain::Count { lo, hi } => Value::Integer(rng.edge(lo, hi) as i64),
        Domain::Flag => Value::Boolean(rng.below(2) == 1),
        Domain::Word(words) => {
            let w = words();
            Value::String(w[rng.below(w.len() as u64) as usize].to_string())
        }
        Domain::Address | Domain::Text | Domain::Words(_) | Domain::Sizes => return None,
    })
}

/// One generated config: `base` (the default study, cheap to simulate) with `n` of the
/// hardware or network parameters `keys` set to legal edge values. Returns the text and what
/// was set.
fn generate(rng: &mut Rng, n: usize, base: &Table, keys: &[ParamValue]) -> (String, Vec<String>) {
    let mut doc = base.clone();
    let mut set = Vec::new();
    while set.len() < n {
        let p = &keys[rng.below(keys.len() as u64) as usize];
        let Some(v) = legal_value(p.domain, rng) else {
            continue;
        };
        set.push(format!("{} = {v}", p.key));
        params::set(&mut doc, &p.key, v).expect("a key of the listed config");
    }
    (toml::to_string(&doc).expect("serialisable"), set)
}

/// The default config made cheap to simulate, as its resolved TOML, and its hardware and
/// network parameters.
fn base() -> (Table, Vec<ParamValue>) {
    let text = config::DEFAULT_TOML
        .replace("iterations = 60 ", "iterations = 3 ")
        .replace("min_iterations = 5 ", "min_iterations = 1 ")
        .replace("stream_messages = 64 ", "stream_messages = 8 ");
    let cfg = config::parse(&text, "default").expect("the default config loads");
    assert_eq!(cfg.sim.iterations, 3, "the edit took");
    let keys = params::list(&cfg)
        .into_iter()
        .filter(|p| !p.key.starts_with("sim.") && !p.key.starts_with("output."))
        .collect();
    let doc = config::to_toml(&cfg)
        .parse()
        .expect("the resolved config is TOML");
    (doc, keys)
}

#[test]
fn legal_edge_values_load_and_simulate_within_physical_bounds() {
    let seed = std::env::var("GDRSIM_HOSTILE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x0068_6f73_7469_6c65);
    let cases: usize = std::env::var("GDRSIM_HOSTILE_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64);
    let mut rng = Rng(seed);
    let (base, keys) = base();
    let (mut simulated, mut cross_checked) = (0, 0);
    for case in 0..cases {
        let n = 1 + rng.below(4) as usize;
        let (text, set) = generate(&mut rng, n, &base, &keys);
        let what = format!("case {case} (seed {seed:#x}): {}", set.join("; "));
        let cfg = match config::parse(&text, "hostile.toml") {
            Ok(c) => c,
            // The one cross-check of two legal values: a cable's latency is their product.
            Err(e) if e.key == "network.cable_m" => {
                cross_checked += 1;
                continue;
            }
            Err(e) => panic!("{what}: a legal config was refused: {e}"),
        };
        let topo = scenario::topology(&cfg);
        if scenario::horizon::check(&cfg, &topo).is_err() {
            cross_checked += 1;
            continue;
        }
        simulated += 1;
        for path in [PathKind::Host, PathKind::Staged, PathKind::GpuDirect] {
            for size in [1u64, 1 << 20] {
                let p = Point {
                    scenario: 0,
                    path,
                    op: Op::WriteImm,
                    size,
                    seed: 3,
                    variant: 0,
                };
                let r = scenario::simulate_point(&cfg, &topo, &p);
                let s = &r.summary;
                assert!(s.lat_model_ps > 0, "{what}: zero latency");
                assert_eq!(
                    s.stages.iter().map(|x| x.critical_ps).sum::<u64>(),
                    s.lat_model_ps,
                    "{what}: the stages do not add up to the latency"
                );
                // No stream beats the sender's wire: payload bytes per second, at most the
                // NIC's data rate.
                let e = &cfg.scenarios[0].first().sender;
                let wire = cfg.hosts[e.host].machine.nics[e.nic].wire_rate.bps() as f64;
                assert!(
                    s.bw_gbps.is_finite() && s.bw_gbps > 0.0,
                    "{what}: bandwidth {}",
                    s.bw_gbps
                );
                assert!(
                    s.bw_gbps * 8e9 <= wire * (1.0 + 1e-9),
                    "{what}: {} GB/s beyond the {wire} b/s wire",
                    s.bw_gbps
                );
            }
        }
    }
    eprintln!("{simulated} of {cases} simulated, {cross_checked} refused by a cross-check");
    // Nearly every generated config is simulated: the generator makes configs that load.
    assert!(
        simulated * 10 >= cases * 8,
        "only {simulated} of {cases} simulated ({cross_checked} refused by a cross-check)"
    );
}

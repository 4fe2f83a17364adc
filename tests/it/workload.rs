//! Flows that wait on flows: closed-form oracles of a chain and a ring, the workload's result
//! (completion time, critical chain summing to it) through the binary, and the config checks
//! of dependencies (cycles, names, reductions).

use crate::support::{check_refuses, csv_rows, point, point_of, run_study, scratch};
use gdrsim::config::{self, Config, PathKind};

/// Four DGX H100-class hosts on one non-blocking switch, with `scenarios` appended.
fn four_nodes(scenarios: &str) -> String {
    let mut t = String::from(
        "name = \"wl\"\nseed = 7\n[sim]\niterations = 3\nmin_iterations = 3\n\
         stream_window = 8\n[sweep]\nsizes = [\"1MiB\"]\npaths = [\"gpudirect\"]\n\
         ops = [\"write_imm\"]\n[output]\ncharts = []\n[network]\nswitch_hops = 1\n\
         [[machines]]\nname = \"dgx\"\npreset = \"dgx-h100\"\n",
    );
    for h in 0..4 {
        t.push_str(&format!("[[hosts]]\nname = \"n{h}\"\nmachine = \"dgx\"\n"));
    }
    t.push_str(scenarios);
    t
}

/// `{ host = "nH", nic = "nicN", gpu = "gpuN" }`.
fn end(h: usize, n: usize) -> String {
    format!("{{ host = \"n{h}\", nic = \"nic{n}\", gpu = \"gpu{n}\" }}")
}

fn parse(text: &str) -> Config {
    config::parse(text, "wl.toml").unwrap_or_else(|e| panic!("{e}"))
}

/// The one-way latency of `scenario`'s one flow alone, picoseconds.
fn alone(cfg: &Config, scenario: &str, size: u64) -> u64 {
    point(cfg, scenario, PathKind::GpuDirect, size)
        .summary
        .lat_model_ps
}

/// A chain a -> b -> c (lag 0, one 1 MiB message each) over distinct NIC pairs: nothing is
/// shared, so b's message starts the instant a's is delivered and takes b's own one-way
/// latency, and c's likewise: completion = T_a + T_b + T_c. With `reduce` on b and c, each
/// start comes a reduction later: + 2 x (launch + 1 MiB at the GPU's reduce rate).
#[test]
fn a_chain_completes_in_the_sum_of_its_one_way_latencies() {
    let size = 1u64 << 20;
    // The three legs: (name, sender, receiver), each on its own NIC pair.
    let legs = [
        ("a", end(0, 0), end(1, 0)),
        ("b", end(1, 1), end(2, 1)),
        ("c", end(2, 2), end(3, 2)),
    ];
    let flows = |reduce: bool| {
        let r = if reduce { ", reduce = true" } else { "" };
        let gates = [
            "",
            ", after = [{ flow = \"a\" }]",
            ", after = [{ flow = \"b\", lag = 0 }]",
        ];
        let list: String = legs
            .iter()
            .zip(gates)
            .map(|((name, snd, rcv), gate)| {
                let r = if gate.is_empty() { "" } else { r };
                format!("  {{ name = \"{name}\", sender = {snd}, receiver = {rcv}, messages = 1{gate}{r} }},\n")
            })
            .collect();
        format!("flows = [\n{list}]\n")
    };
    let singles: String = legs
        .iter()
        .map(|(name, snd, rcv)| {
            format!("[[scenarios]]\nname = \"{name}\"\nsender = {snd}\nreceiver = {rcv}\n")
        })
        .collect();
    let text = four_nodes(&format!(
        "[[scenarios]]\nname = \"chain\"\n{}[[scenarios]]\nname = \"chain+reduce\"\n{}{singles}",
        flows(false),
        flows(true),
    ));
    let cfg = parse(&text);
    let sum: u64 = ["a", "b", "c"].iter().map(|s| alone(&cfg, s, size)).sum();
    let chain = point(&cfg, "chain", PathKind::GpuDirect, size).summary;
    assert_eq!(chain.workload_ps, Some(chain.lat_model_ps));
    eprintln!(
        "chain: {} ps, sum of one-way latencies {sum} ps",
        chain.lat_model_ps
    );
    let err = (chain.lat_model_ps as f64 - sum as f64).abs() / sum as f64;
    assert!(
        err < 0.001,
        "chain {} ps against the sum {} ps ({:.4}%)",
        chain.lat_model_ps,
        sum,
        err * 100.0
    );
    let gpu = &cfg.hosts[1].machine.gpus[1];
    let reduce = 2 * gpu.reduce.time(size);
    assert!(reduce > 0);
    let with = point(&cfg, "chain+reduce", PathKind::GpuDirect, size).summary;
    let err = (with.lat_model_ps as f64 - (sum + reduce) as f64).abs() / (sum + reduce) as f64;
    assert!(
        err < 0.001,
        "{} against {}",
        with.lat_model_ps,
        sum + reduce
    );
    // The chain crosses the flows in order, and its shares (stages and chain) sum exactly.
    let flows: Vec<&str> = with.chain.iter().map(|c| c.flow.as_str()).collect();
    let firsts: Vec<&str> = flows
        .iter()
        .enumerate()
        .filter(|&(i, f)| i == 0 || flows[i - 1] != *f)
        .map(|(_, f)| *f)
        .collect();
    assert_eq!(firsts, ["a", "b", "c"], "{flows:?}");
    let reduces = with
        .chain
        .iter()
        .filter(|c| c.stage.name() == "reduce")
        .count();
    assert_eq!(reduces, 2);
    let chain_sum: u64 = with.chain.iter().map(|c| c.critical_ps).sum();
    let stage_sum: u64 = with.stages.iter().map(|c| c.critical_ps).sum();
    assert_eq!(chain_sum, with.lat_model_ps);
    assert_eq!(stage_sum, with.lat_model_ps);
}

/// A ring of four ranks, lag 1, six 1 MiB messages each, window 8 (never full), each rank
/// sending through NIC0/GPU0 and receiving into NIC1/GPU1 so no link carries two flows'
/// data. Derivation: message 0 of every rank starts at 0 (k < lag); message k of rank i starts
/// when message k - 1 of rank i - 1 is delivered. With every message taking the one-way time
/// T of a message alone, by induction delivery(i, k) = (k + 1) T for every rank, so the ring
/// completes at 6 T: steps x per-step time.
#[test]
fn a_lagged_ring_completes_in_steps_times_the_step_time() {
    let size = 1u64 << 20;
    let mut flows = String::from("flows = [\n");
    for i in 0..4 {
        let prev = (i + 3) % 4;
        flows.push_str(&format!(
            "  {{ name = \"r{i}\", sender = {}, receiver = {}, messages = 6, after = [{{ flow = \"r{prev}\", lag = 1 }}] }},\n",
            end(i, 0),
            end((i + 1) % 4, 1)
        ));
    }
    flows.push_str("]\n");
    let text = four_nodes(&format!(
        "[[scenarios]]\nname = \"ring\"\n{flows}\
         [[scenarios]]\nname = \"one\"\nsender = {}\nreceiver = {}\n",
        end(0, 0),
        end(1, 1)
    ));
    let cfg = parse(&text);
    let t = alone(&cfg, "one", size);
    let ring = point(&cfg, "ring", PathKind::GpuDirect, size).summary;
    let expect = 6 * t;
    eprintln!("ring: {} ps, 6 x {t} ps = {expect} ps", ring.lat_model_ps);
    let err = (ring.lat_model_ps as f64 - expect as f64).abs() / expect as f64;
    assert!(
        err < 0.001,
        "ring {} ps against 6 x {} ps ({:.4}%)",
        ring.lat_model_ps,
        t,
        err * 100.0
    );
    // `check`'s estimate is within a factor of 3 of the events the point really simulated.
    estimate_within_3x(&cfg, "ring", size);
    // Every flow's own message latency is the step time.
    for f in &ring.flow_rows {
        let e = (f.lat_model_ps as f64 - t as f64).abs() / t as f64;
        assert!(e < 0.001, "flow {}: {} against {t}", f.flow, f.lat_model_ps);
    }
    // Six messages on the chain, one per step, crossing every rank.
    let mut steps: Vec<(String, u32)> =
        ring.chain.iter().map(|c| (c.flow.clone(), c.msg)).collect();
    steps.dedup();
    assert_eq!(steps.len(), 6, "{steps:?}");
    assert_eq!(
        steps.iter().map(|s| s.1).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4, 5]
    );
}

/// `gdrsim run` of a workload writes `workload_us` (equal to the latency) and chain.csv, whose
/// shares sum to it; flows.csv has every flow.
#[test]
fn run_writes_the_workload_result_and_its_chain() {
    let mut flows = String::from("flows = [\n");
    for i in 0..3 {
        let prev = (i + 2) % 3;
        flows.push_str(&format!(
            "  {{ name = \"r{i}\", sender = {}, receiver = {}, messages = 3, reduce = true, after = [{{ flow = \"r{prev}\", lag = 1 }}] }},\n",
            end(i, 0),
            end(i + 1, 0)
        ));
    }
    flows.push_str("]\n");
    let text = four_nodes(&format!("[[scenarios]]\nname = \"ring3\"\n{flows}"))
        .replace("sizes = [\"1MiB\"]", "sizes = [\"4KiB\", \"256KiB\"]");
    let (_, out) = run_study("workload", "run", &text);
    let results = csv_rows(&out.join("results.csv"));
    assert_eq!(results.len(), 2);
    let chain = csv_rows(&out.join("chain.csv"));
    let stages = csv_rows(&out.join("stages.csv"));
    for r in &results {
        assert_eq!(r["workload_us"], r["lat_model_us"]);
        let total: f64 = r["workload_us"].parse().unwrap();
        for (what, rows) in [("chain", &chain), ("stages", &stages)] {
            let sum: f64 = rows
                .iter()
                .filter(|c| c["size_bytes"] == r["size_bytes"])
                .map(|c| c["critical_us"].parse::<f64>().unwrap())
                .sum();
            assert!((sum - total).abs() < 1e-5, "{what}: {sum} against {total}");
        }
    }
    assert!(chain.iter().any(|c| c["stage"] == "reduce"));
    let flows_csv = csv_rows(&out.join("flows.csv"));
    assert_eq!(flows_csv.len(), 6, "three flows at two sizes");
    // Each flow's own bottleneck: at 256 KiB (bulk transfers) its own wire, not the point's.
    for f in flows_csv.iter().filter(|f| f["size_bytes"] == "262144") {
        let own = format!("wire:n{}/nic0>", f["flow"]);
        assert!(f["bottleneck"].starts_with(&own), "{f:?}");
    }
    // The resolved config keeps the dependencies: it runs to the same results.
    let again = scratch("workload", "rerun").join("out");
    let o = crate::support::gdrsim(&[
        "run",
        crate::support::s(&out.join("config.toml")),
        "--quiet",
        "--out",
        crate::support::s(&again),
    ]);
    crate::support::ok(&o, "rerun of the resolved config");
    assert_eq!(
        std::fs::read(out.join("results.csv")).unwrap(),
        std::fs::read(again.join("results.csv")).unwrap()
    );
}

/// Bad dependencies are refused at check time, naming the key: a cycle of lag 0 (named), an
/// unknown flow, a reduction without a GPU, a bidirectional flow, a duplicate name.
#[test]
fn bad_dependencies_are_refused_with_their_key() {
    let dir = scratch("workload", "refused");
    let two = |a: &str, b: &str| {
        four_nodes(&format!(
            "[[scenarios]]\nname = \"s\"\nflows = [\n  {{ name = \"x\", sender = {}, receiver = {}{a} }},\n  {{ name = \"y\", sender = {}, receiver = {}{b} }},\n]\n",
            end(0, 0),
            end(1, 0),
            end(1, 1),
            end(2, 1)
        ))
    };
    check_refuses(
        &dir,
        "cycle",
        &two(
            ", after = [{ flow = \"y\" }]",
            ", after = [{ flow = \"x\", lag = 0 }]",
        ),
        "scenarios[0].flows",
        "the cycle x waits for y waits for x",
    );
    check_refuses(
        &dir,
        "self",
        &two(", after = [{ flow = \"x\" }]", ""),
        "scenarios[0].flows",
        "the cycle x waits for x",
    );
    check_refuses(
        &dir,
        "unknown",
        &two("", ", after = [{ flow = \"z\" }]"),
        "scenarios[0].flows[1].after[0].flow",
        "the name of a flow of this scenario (x, y)",
    );
    check_refuses(
        &dir,
        "bidirectional",
        &two(", bidirectional = true", ", after = [{ flow = \"x\" }]"),
        "scenarios[0].flows[0].bidirectional",
        "one flow per direction",
    );
    check_refuses(
        &dir,
        "duplicate",
        &two("", ", messages = 2").replace("name = \"y\"", "name = \"x\""),
        "scenarios[0].flows[1].name",
        "a name no other flow of the scenario has",
    );
    check_refuses(
        &dir,
        "zero",
        &two(", messages = 0", ""),
        "scenarios[0].flows[0].messages",
        "at least 1 message",
    );
    let host_sender = two("", ", reduce = true, after = [{ flow = \"x\", lag = 1 }]").replace(
        "sender = { host = \"n1\", nic = \"nic1\", gpu = \"gpu1\" }",
        "sender = { host = \"n1\", nic = \"nic1\", buffer = \"host\" }",
    );
    check_refuses(
        &dir,
        "reduce",
        &host_sender.replace("paths = [\"gpudirect\"]", "paths = [\"host\"]"),
        "scenarios[0].flows[1].reduce",
        "a sender with a GPU buffer",
    );
    // A ring (a cycle with a lag of 1) is accepted.
    let ring = two(
        ", after = [{ flow = \"y\", lag = 1 }]",
        ", after = [{ flow = \"x\" }]",
    );
    let p = dir.join("ring.toml");
    std::fs::write(&p, ring).unwrap();
    crate::support::ok(
        &crate::support::gdrsim(&["check", crate::support::s(&p)]),
        "a ring with lag 1",
    );
}

/// One generated workload: per flow, its ends (host, NIC/GPU index), what gates it (an earlier
/// flow with any lag, or any flow with a lag of at least 1: never a cycle of lag 0), its
/// reduction and its messages.
/// A generated flow: sender (host, index), receiver, gates (flow, lag), reduce, messages.
type GenFlow = ((usize, usize), (usize, usize), Vec<(usize, u32)>, bool, u32);

#[derive(Debug, Clone)]
struct Generated {
    flows: Vec<GenFlow>,
    size: &'static str,
}

fn generated() -> impl proptest::strategy::Strategy<Value = Generated> {
    use proptest::prelude::*;
    (
        2usize..6,
        prop_oneof![Just("4KiB"), Just("64KiB"), Just("1MiB")],
    )
        .prop_flat_map(|(n, size)| {
            let flow = |i: usize| {
                (
                    (0usize..4, 0usize..8),
                    (0usize..4, 0usize..8),
                    proptest::collection::vec((0..n, 0u32..3), 0..3),
                    any::<bool>(),
                    1u32..5,
                )
                    .prop_map(move |(a, z, after, reduce, messages)| {
                        // A lag-0 gate only on an earlier flow: no cycle of lag 0.
                        let after = after
                            .into_iter()
                            .filter(|&(on, lag)| lag > 0 || on < i)
                            .fold(Vec::new(), |mut v: Vec<(usize, u32)>, g| {
                                if !v.iter().any(|x| x.0 == g.0) {
                                    v.push(g);
                                }
                                v
                            });
                        // The receiver on another host than the sender.
                        let z = ((a.0 + 1 + z.0 % 3) % 4, z.1);
                        (a, z, after, reduce, messages)
                    })
            };
            (0..n)
                .map(flow)
                .collect::<Vec<_>>()
                .prop_map(move |flows| Generated { flows, size })
        })
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config { cases: 24, failure_persistence: None, rng_seed: crate::support::proptest_seed(), ..proptest::test_runner::Config::default() })]

    /// On generated workloads: no gated message starts before the messages that gate it are
    /// delivered (plus its reduction), every flow carries its messages, and the critical chain
    /// and the stages each sum exactly to the completion time, which no flow's message outlasts.
    #[test]
    fn gates_hold_and_the_chain_tiles_the_completion_time(g in generated()) {
        let mut list = String::from("flows = [\n");
        for (i, (a, z, after, reduce, messages)) in g.flows.iter().enumerate() {
            let after: Vec<String> = after
                .iter()
                .map(|(on, lag)| format!("{{ flow = \"w{on}\", lag = {lag} }}"))
                .collect();
            list.push_str(&format!(
                "  {{ name = \"w{i}\", sender = {}, receiver = {}, messages = {messages}, reduce = {reduce}, after = [{}] }},\n",
                end(a.0, a.1),
                end(z.0, z.1),
                after.join(", ")
            ));
        }
        list.push_str("]\n");
        let text = four_nodes(&format!("[[scenarios]]\nname = \"w\"\n{list}"))
            .replace("sizes = [\"1MiB\"]", &format!("sizes = [\"{}\"]", g.size));
        let cfg = parse(&text);
        let size = cfg.sizes[0];
        let topo = gdrsim::scenario::topology(&cfg);
        let sc = &cfg.scenarios[0];
        let w = sc.workload.as_ref().expect("a workload");
        let built: Vec<_> = sc
            .flows
            .iter()
            .map(|f| {
                gdrsim::scenario::paths::plan(&cfg, f, &topo, PathKind::GpuDirect, gdrsim::config::Op::WriteImm, size)
                    .unwrap()
            })
            .collect();
        let plans: Vec<_> = built.iter().map(|b| &b.plan).collect();
        let opts = gdrsim::scenario::sim_options(&cfg, 3).noise_free();
        let mut f = gdrsim::components::Fabric::new(&topo, &plans, opts);
        for (i, d) in w.flows.iter().enumerate() {
            for &(on, lag) in &d.after {
                f.gate(i, on, lag);
            }
            let e = &sc.flows[i].sender;
            let reduce = if d.reduce { cfg.hosts[e.host].machine.gpus[e.gpu.unwrap()].reduce.time(size) } else { 0 };
            f.set_reduce(i, gdrsim::components::ReduceRule::every(reduce));
            f.set_messages(i, d.messages.unwrap());
        }
        let out = f.run(8, 1);
        proptest::prop_assert!(!out.stats.past_horizon);
        for (i, d) in w.flows.iter().enumerate() {
            let msgs = &out.flows[i].messages;
            proptest::prop_assert_eq!(msgs.len() as u32, d.messages.unwrap());
            let e = &sc.flows[i].sender;
            let reduce = if d.reduce { cfg.hosts[e.host].machine.gpus[e.gpu.unwrap()].reduce.time(size) } else { 0 };
            for (k, &(start, delivered)) in msgs.iter().enumerate() {
                proptest::prop_assert!(delivered > start);
                for &(on, lag) in &d.after {
                    let Some(j) = (k as u32).checked_sub(lag) else { continue };
                    let gate = &out.flows[on].messages;
                    let j = (j as usize).min(gate.len() - 1);
                    proptest::prop_assert!(
                        start >= gate[j].1 + reduce,
                        "w{i} msg {k} started at {start} before w{on} msg {j} delivered at {} + {reduce}",
                        gate[j].1
                    );
                }
            }
        }
        let row = point(&cfg, "w", PathKind::GpuDirect, size).summary;
        let chain: u64 = row.chain.iter().map(|c| c.critical_ps).sum();
        let stages: u64 = row.stages.iter().map(|c| c.critical_ps).sum();
        proptest::prop_assert_eq!(chain, row.lat_model_ps);
        proptest::prop_assert_eq!(stages, row.lat_model_ps);
        for fl in &row.flow_rows {
            proptest::prop_assert!(fl.lat_model_ps <= row.lat_model_ps);
        }
    }
}

/// `check`'s estimate of a many-flow point is within a factor of 3 of the events the point
/// simulates: 64 concurrent flows (8 GPUs of each of 8 hosts to the next host's, a ring of
/// host pairs) at a TLP-granular size and at a bulk size.
#[test]
fn the_estimate_of_a_many_flow_point_is_within_3x_of_its_events() {
    let mut flows = String::from("flows = [\n");
    for h in 0..8 {
        for g in 0..8 {
            flows.push_str(&format!(
                "  {{ sender = {{ host = \"n{h}\", nic = \"nic{g}\", gpu = \"gpu{g}\" }}, receiver = {{ host = \"n{}\", nic = \"nic{g}\", gpu = \"gpu{g}\" }} }},\n",
                (h + 1) % 8
            ));
        }
    }
    flows.push_str("]\n");
    let mut text = four_nodes(&format!("[[scenarios]]\nname = \"many\"\n{flows}"))
        .replace("sizes = [\"1MiB\"]", "sizes = [\"4KiB\", \"1MiB\"]");
    for h in 4..8 {
        text = text.replace(
            "[[scenarios]]",
            &format!("[[hosts]]\nname = \"n{h}\"\nmachine = \"dgx\"\n[[scenarios]]"),
        );
    }
    let cfg = parse(&text);
    for &size in &cfg.sizes {
        estimate_within_3x(&cfg, "many", size);
    }
}

/// `check`'s estimate of `scenario`'s GPUDirect point at `size` is within a factor of 3 of the
/// events the point simulates.
fn estimate_within_3x(cfg: &Config, scenario: &str, size: u64) {
    let topo = gdrsim::scenario::topology(cfg);
    let p = point_of(cfg, scenario, PathKind::GpuDirect, size);
    let estimate = gdrsim::scenario::cost::estimate(cfg, &topo, &p) as f64;
    let events = gdrsim::scenario::simulate_point(cfg, &topo, &p).events as f64;
    eprintln!("{scenario} at {size} B: estimated {estimate} events, simulated {events}");
    assert!(
        estimate / events < 3.0 && events / estimate < 3.0,
        "{scenario} at {size} B: estimated {estimate} events, simulated {events}"
    );
}

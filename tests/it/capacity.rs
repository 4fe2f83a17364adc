//! Over generated many-flow mixes on the default machine (flow counts, sizes, ops, paths, GPUs
//! and NICs, both directions):
//! - no channel above its capacity, as `gdrsim run` reports it (issue #27 item 3): every
//!   links.csv row is busy at most 1 (its wire bytes over the stream's span at most its rate)
//!   and the aggregate streaming bandwidth is at most the payload ceiling of the wires the flows
//!   use (each port's rate at full packets). flow_properties checks the same capacity from the
//!   hop records on a few flows; this checks the figures a user reads, on many. A transfer's
//!   first packet that crossed outside the sharing (fixed in fed7d27) put the wire up to 1.2%
//!   above its rate here; both tests fail with it put back.
//! - latency never falls as size grows (issue #27 item 1): for one flow on the generated
//!   machines; for many flows at once it does not hold yet (an ignored reproducer).

use crate::support;

use gdrsim::config::{self, Config, Op, PathKind};
use gdrsim::scenario::{self, Point};
use proptest::prelude::*;

/// One generated study point: its flows and the knobs that change how they meet.
#[derive(Debug, Clone)]
struct Mix {
    /// Per flow: (GPU index 0..4, NIC index 0..2, sent from node-b, bidirectional).
    flows: Vec<(usize, usize, bool, bool)>,
    /// Per NIC: (wire Gb/s, MTU).
    nics: [(u64, u64); 2],
    window: u32,
    messages: u32,
    coalesce: u64,
}

fn mix() -> impl Strategy<Value = Mix> {
    let nic = (
        prop::sample::select(vec![100u64, 200, 400]),
        prop::sample::select(vec![1024u64, 2048, 4096]),
    );
    (
        prop::collection::vec((0usize..4, 0usize..2, any::<bool>(), any::<bool>()), 1..=24),
        (nic.clone(), nic, any::<bool>()),
        // Few messages in flight per flow: each flow's next message starts while the others'
        // hold the links, where a transfer's start is most likely to take more than its share.
        prop::sample::select(vec![1u32, 1, 2, 4, 16]),
        4u32..=24,
        prop::sample::select(vec![512u64, 4096, 65536]),
    )
        .prop_map(
            |(mut flows, (n0, n1, one_nic), window, messages, coalesce)| {
                if one_nic {
                    // Every flow on one port: the most flows meet on one wire.
                    flows.iter_mut().for_each(|f| f.1 = 0);
                }
                Mix {
                    flows,
                    nics: [n0, n1],
                    window,
                    messages,
                    coalesce,
                }
            },
        )
}

/// `from` in `text` replaced by `to` once (it must be there: the default config changed else).
fn edit(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "not in default.toml: {from}");
    text.replacen(from, to, 1)
}

/// The default config with `m`'s flows as its one scenario, a second NIC on the other socket
/// and a short stream.
fn config_of(m: &Mix, paths: &[PathKind], op: Op, sizes: &[u64]) -> String {
    let list = |items: Vec<String>| items.join(", ");
    let paths = list(paths.iter().map(|p| format!("\"{}\"", p.name())).collect());
    let sizes = list(sizes.iter().map(|s| s.to_string()).collect());
    let mut text = config::DEFAULT_TOML.to_string();
    let cut = text
        .find("\n[[scenarios]]")
        .expect("default.toml has scenarios");
    text.truncate(cut + 1);
    for (from, to) in [
        ("iterations = 60 ", "iterations = 3 "),
        ("min_iterations = 5 ", "min_iterations = 3 "),
        (
            "stream_window = 16 ",
            &format!("stream_window = {} ", m.window),
        ),
        (
            "stream_messages = 64 ",
            &format!("stream_messages = {} ", m.messages),
        ),
        (
            "coalesce_above_bytes = \"512B\"",
            &format!("coalesce_above_bytes = {}", m.coalesce),
        ),
        (
            "sizes = { from = \"1B\", to = \"1GiB\", factor = 2 }",
            &format!("sizes = [{sizes}]"),
        ),
        (
            "paths = [\"host\", \"staged\", \"gpudirect\"]",
            &format!("paths = [{paths}]"),
        ),
        (
            "ops = [\"write_imm\"]",
            &format!("ops = [\"{}\"]", op.name()),
        ),
        (
            "wire_rate_gbps = 400 ",
            &format!("wire_rate_gbps = {} ", m.nics[0].0),
        ),
        ("mtu_bytes = 4096", &format!("mtu_bytes = {}", m.nics[0].1)),
    ] {
        text = edit(&text, from, to);
    }
    // A second NIC on the other socket's root complex (its defaults otherwise).
    text = edit(
        &text,
        "\n\n\n[[machines.links]]",
        &format!(
            "\n[[machines.nics]]\nname = \"nic1\"\nwire_rate_gbps = {}\nmtu_bytes = {}\n\n\
             [[machines.links]]\nup = \"rc2\"\ndown = \"nic1\"\ngeneration = 5\nwidth = 16\n\n\
             [[machines.links]]",
            m.nics[1].0, m.nics[1].1
        ),
    );
    let flows: Vec<String> = m
        .flows
        .iter()
        .map(|&(g, n, back, both)| {
            let (s, r) = match back {
                true => ("node-b", "node-a"),
                false => ("node-a", "node-b"),
            };
            format!(
                "  {{ sender = {{ host = \"{s}\", nic = \"nic{n}\", gpu = \"gpu{g}\" }}, \
                 receiver = {{ host = \"{r}\", nic = \"nic{n}\", gpu = \"gpu{g}\" }}, \
                 bidirectional = {both} }}"
            )
        })
        .collect();
    text + &format!(
        "[[scenarios]]\nname = \"mix\"\nflows = [\n{}\n]\n",
        flows.join(",\n")
    )
}

/// The most payload the wires `m`'s flows cross can carry, GB/s: per NIC and direction used,
/// its rate at full packets (an MTU of payload per MTU plus the packet's headers).
fn ceiling_gbytes(cfg: &Config, m: &Mix) -> f64 {
    let nics = &cfg.hosts[0].machine.nics;
    let mut wires: Vec<(usize, bool)> = Vec::new();
    for &(_, n, back, both) in &m.flows {
        wires.push((n, back));
        if both {
            wires.push((n, !back));
        }
    }
    wires.sort_unstable();
    wires.dedup();
    wires
        .iter()
        .map(|&(n, _)| {
            let nic = &nics[n];
            nic.wire_rate
                .scale(nic.mtu, nic.mtu + nic.packet_overhead)
                .gbytes_per_s()
        })
        .sum()
}

/// Every links.csv row of the point at most busy 1 and the aggregate at most the ceiling.
fn within_capacity(m: &Mix, path: PathKind, op: Op, size: u64) -> Result<(), TestCaseError> {
    let text = config_of(m, &[path], op, &[size]);
    let cfg = config::parse(&text, "mix.toml")
        .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    let p = Point::at(cfg.seed, 0, path, op, size);
    let r = scenario::simulate_point(&cfg, &scenario::topology(&cfg), &p);
    let s = &r.summary;
    for l in &s.links {
        prop_assert!(
            l.busy <= 1.0 + 1e-9 && l.rate_gbps <= l.capacity_gbps * (1.0 + 1e-9),
            "{} busy {} ({} of {} GB/s): {} flows, {} {} {} B",
            l.channel,
            l.busy,
            l.rate_gbps,
            l.capacity_gbps,
            m.flows.len(),
            path.name(),
            op.name(),
            size
        );
    }
    let ceiling = ceiling_gbytes(&cfg, m);
    prop_assert!(
        s.bw_gbps <= ceiling * (1.0 + 1e-9),
        "aggregate {} GB/s above the wires' {} GB/s: {} flows, {} {} {} B",
        s.bw_gbps,
        ceiling,
        m.flows.len(),
        path.name(),
        op.name(),
        size
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, max_shrink_iters: 32, failure_persistence: None, rng_seed: support::proptest_seed(), ..ProptestConfig::default() })]

    #[test]
    fn no_channel_above_its_capacity_in_many_flow_mixes(
        m in mix(),
        path in prop::sample::select(vec![PathKind::Host, PathKind::Staged, PathKind::GpuDirect, PathKind::StagedPipelined, PathKind::Gdrcopy]),
        op in prop::sample::select(Op::ALL.to_vec()),
        size_exp in 9u32..22,
        extra in 0u64..4096,
    ) {
        let size = (1u64 << size_exp) + extra % (1u64 << size_exp);
        // A Read's source cannot be staged (the config refuses it): a Send stands in.
        let stages = matches!(path, PathKind::Staged | PathKind::Gdrcopy | PathKind::StagedPipelined);
        let op = if op == Op::Read && stages { Op::Send } else { op };
        within_capacity(&m, path, op, size)?;
    }
}

/// The links.csv rows above busy 1 and the results.csv rows above `ceiling` GB/s of a study
/// `gdrsim run` wrote into `out`, each as a line (none: within capacity).
fn above_capacity(out: &std::path::Path, ceiling: f64) -> Vec<String> {
    let mut found = Vec::new();
    for l in support::csv_rows(&out.join("links.csv")) {
        let busy: f64 = l["busy"].parse().unwrap();
        if busy > 1.0 + 1e-9 {
            found.push(format!(
                "{} {} B: {} busy {busy}",
                l["path"], l["size_bytes"], l["channel"]
            ));
        }
    }
    for r in support::csv_rows(&out.join("results.csv")) {
        let bw: f64 = r["bw_GBps"].parse().unwrap();
        if bw > ceiling * (1.0 + 1e-9) {
            found.push(format!(
                "{} {} B: {bw} GB/s above the port's {ceiling} GB/s",
                r["path"], r["size_bytes"]
            ));
        }
    }
    found
}

/// `flows` flows from node-a to node-b, one way, all through nic0's 400G port (4 KiB MTU),
/// spread over the first `gpus` GPUs in turn, `window` messages of a stream of `messages` in
/// flight each, bulk above 512 B.
fn one_port(flows: usize, gpus: usize, window: u32, messages: u32) -> Mix {
    Mix {
        flows: (0..flows).map(|i| (i % gpus, 0, false, false)).collect(),
        nics: [(400, 4096), (400, 4096)],
        window,
        messages,
        coalesce: 512,
    }
}

/// Issue #27 item 3's symptom, through the binary: eight flows from one GPU under the NIC's
/// switch share a 400G port (49.69 GB/s of payload at 4 KiB packets), one message in flight
/// each. Each message's first packet crossed outside the sharing (during its latency phase,
/// while the other flows' messages held the wire), so the wire was 1.0006 to 1.011 busy and
/// the aggregate 50.24 GB/s at 128 and 256 KiB (fixed in fed7d27; this keeps it fixed).
#[test]
fn eight_flows_on_one_port_stay_within_its_rate() {
    let m = one_port(8, 1, 1, 64);
    let text = config_of(
        &m,
        &[PathKind::Host, PathKind::GpuDirect],
        Op::WriteImm,
        &[32 << 10, 128 << 10, 256 << 10, 1 << 20],
    );
    let (c, out) = support::run_study("capacity", "eight", &text);
    let cfg = config::load(&c).unwrap();
    let ceiling = ceiling_gbytes(&cfg, &m);
    assert!(
        (ceiling - 49.685).abs() < 0.001,
        "the port's ceiling {ceiling}"
    );
    let found = above_capacity(&out, ceiling);
    assert!(found.is_empty(), "above capacity:\n{}", found.join("\n"));
}

/// The other symptom (256 staged write_imm flows between two hosts, wire busy 1.0025),
/// scaled to 32 flows over the four GPUs, one 128 KiB message in flight each: with the first
/// packet outside the sharing put back the wire is 1.0077 busy and the aggregate 50.07 GB/s
/// (256 flows: 1.020 and 50.69).
#[test]
fn staged_flows_on_one_port_stay_within_its_rate() {
    let m = one_port(32, 4, 1, 8);
    let text = config_of(&m, &[PathKind::Staged], Op::WriteImm, &[128 << 10]);
    let (c, out) = support::run_study("capacity", "staged", &text);
    let cfg = config::load(&c).unwrap();
    let found = above_capacity(&out, ceiling_gbytes(&cfg, &m));
    assert!(found.is_empty(), "above capacity:\n{}", found.join("\n"));
}

/// A memory that can saturate still holds its transfers in one sharing group (a memory that
/// cannot does not: the solver leaves it out of the groups, `Bulks::slack`). Staged flows
/// cross host DRAM twice (the GPU's copy in, the NIC's read out); with the socket's DRAM at
/// 20 GB/s (of which `dram_efficiency_pct` runs) sixteen flows at 400G would put far more
/// on it, so it binds: it is the bottleneck, busy to within a few percent of 1 and never
/// above, and the aggregate is what it carries over its two crossings. Were it taken for a
/// slack memory, each flow would be solved alone and the DRAM run far above its rate.
#[test]
fn a_memory_that_binds_holds_its_flows_together() {
    let m = one_port(16, 2, 4, 16);
    let text = config_of(&m, &[PathKind::Staged], Op::WriteImm, &[1 << 20]);
    let text = text.replace(
        "dram_rate_gbps = \"300GB/s\"",
        "dram_rate_gbps = \"20GB/s\"",
    );
    let (_, out) = support::run_study("capacity", "dram", &text);
    let dram: Vec<_> = support::csv_rows(&out.join("links.csv"))
        .into_iter()
        .filter(|l| l["channel"].ends_with(".dram") && l["busy"].parse::<f64>().unwrap() > 0.5)
        .collect();
    assert!(!dram.is_empty(), "no DRAM carried the staging");
    for l in &dram {
        let busy: f64 = l["busy"].parse().unwrap();
        assert!(
            (0.9..=1.0 + 1e-9).contains(&busy),
            "{} busy {busy}",
            l["channel"]
        );
    }
    let rows = support::csv_rows(&out.join("results.csv"));
    assert!(
        rows[0]["bottleneck"].ends_with(".dram"),
        "bottleneck {}",
        rows[0]["bottleneck"]
    );
}

/// When the last of `m`'s flows has its message delivered, from the first one's start, when
/// they all send one message of `size` at once, noise-free (the run a point's `lat_model`
/// comes from), picoseconds.
fn completion(m: &Mix, path: PathKind, op: Op, size: u64) -> Result<u64, TestCaseError> {
    let text = config_of(m, &[path], op, &[size]);
    let cfg = config::parse(&text, "mix.toml")
        .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    let topo = scenario::topology(&cfg);
    let plans: Vec<gdrsim::plan::Plan> = cfg.scenarios[0]
        .flows
        .iter()
        .map(|f| scenario::paths::plan(&cfg, f, &topo, path, op, size).map(|b| b.plan))
        .collect::<Result<_, _>>()
        .map_err(|e| TestCaseError::fail(format!("{e:?}\n{text}")))?;
    let refs: Vec<&gdrsim::plan::Plan> = plans.iter().collect();
    let opts = scenario::sim_options(&cfg, 7).noise_free();
    let out = gdrsim::components::Fabric::new(&topo, &refs, opts).run(1, 1);
    let first = out.flows.iter().map(|f| f.messages[0].0).min().unwrap_or(0);
    let last = out.flows.iter().map(|f| f.messages[0].1).max().unwrap_or(0);
    Ok(last - first)
}

/// A size at a power of two `1 << exp` (an MTU, an MPS, a chunk, a threshold), one below it
/// (`at` 1), or between two (`at` 2).
fn size_near(exp: u32, at: u64) -> u64 {
    match at {
        0 => 1u64 << exp,
        1 => (1u64 << exp) - 1,
        _ => (1u64 << exp) + (3u64 << exp) / 7,
    }
}

/// `m`'s last delivery of messages of `size + step` bytes comes no sooner than of `size`
/// bytes, less `slack_ppm` millionths of that, on `path` with `op` (a Read becomes a Send
/// where the path stages: a staged Read is not modelled).
fn never_sooner(
    m: &Mix,
    path: PathKind,
    op: Op,
    (size, step): (u64, u64),
    slack_ppm: u64,
) -> Result<(), TestCaseError> {
    let stages = matches!(
        path,
        PathKind::Staged | PathKind::Gdrcopy | PathKind::StagedPipelined
    );
    let op = if op == Op::Read && stages {
        Op::Send
    } else {
        op
    };
    let (a, b) = (
        completion(m, path, op, size)?,
        completion(m, path, op, size + step)?,
    );
    prop_assert!(
        u128::from(b) + u128::from(a) * u128::from(slack_ppm) / 1_000_000 >= u128::from(a),
        "{} ps at {} B, {} ps at {} B ({} {}, coalesce {}): {:?}",
        a,
        size,
        b,
        size + step,
        path.name(),
        op.name(),
        m.coalesce,
        m
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, max_shrink_iters: 32, failure_persistence: None, rng_seed: support::proptest_seed(), ..ProptestConfig::default() })]

    /// Issue #27 item 1 on generated machines and flows: a larger message never arrives
    /// sooner, for one flow (a mix's first) across the bulk threshold (512 B to 64 KiB),
    /// packet, TLP and chunk boundaries and sizes between, every path and op. Many flows at
    /// once: [`latency_never_falls_past_the_bulk_threshold_for_many_flows`].
    #[test]
    fn latency_never_falls_as_size_grows_for_one_flow(
        m in mix(),
        path in prop::sample::select(vec![PathKind::Host, PathKind::Staged, PathKind::GpuDirect, PathKind::StagedPipelined, PathKind::Gdrcopy]),
        op in prop::sample::select(Op::ALL.to_vec()),
        size_exp in 6u32..22,
        at in 0u64..3,
        step in prop::sample::select(vec![1u64, 8, 64, 4096]),
    ) {
        let one = Mix { flows: m.flows[..1].to_vec(), ..m };
        never_sooner(&one, path, op, (size_near(size_exp, at), step), 0)?;
    }

    /// Latency over generated mixes of many flows at once, one message a flow, above the bulk
    /// threshold (1 KiB to 4 MiB, at and beside powers of two, every path and op): a larger
    /// message's last delivery comes at most 3% sooner. Not never: the sharing is max-min fair
    /// where TLP by TLP and packet by packet are round robin and first come, first served, and
    /// a packet more or a chunk more shifts who shares what when (24 seeds at 1%: one found
    /// 2.3%, four bidirectional GPUDirect Write-with-Immediate flows on a 200G NIC, 3.948 us at
    /// 4095 B, 3.856 at 4159, one packet against two; at 0.1%, 3 of 12 seeds found 0.2-0.5%).
    /// The threshold has its own test below.
    #[test]
    fn latency_never_falls_as_size_grows_in_bulk_for_many_flows(
        m in mix(),
        path in prop::sample::select(vec![PathKind::Host, PathKind::Staged, PathKind::GpuDirect, PathKind::StagedPipelined, PathKind::Gdrcopy]),
        op in prop::sample::select(Op::ALL.to_vec()),
        size_exp in 10u32..22,
        at in 0u64..3,
        step in prop::sample::select(vec![1u64, 8, 64, 4096]),
    ) {
        let m = Mix { coalesce: 512, ..m };
        never_sooner(&m, path, op, (size_near(size_exp, at), step), 30_000)?;
    }

    /// Issue #27 item 1 over generated mixes of many flows at once: one message a flow, the
    /// last delivery never comes sooner one step past the bulk threshold than at it, where the
    /// NIC moves a message of one packet (the threshold at most an MTU) and nothing else crosses
    /// the threshold (host and GPUDirect paths; the head of a bulk transfer,
    /// [`many_flows_never_finish_sooner_past_the_bulk_threshold`]). Within 2%: the head
    /// stands for the round robin of the first packets' completions on one link (the slowest)
    /// and the sharing decides the rest, so TLP by TLP still comes out later here and there
    /// (64 seeds of this test: 5 past 0.5%, one past 1%, at most 1.01%: twelve GPUDirect Sends
    /// at 960 and 968 B). Without the head every one of 24 seeds found a mix sooner past the
    /// threshold by over 1% (host write_imm 2.514 us at 960 B, 2.486 at 961). A staged path's
    /// copies cross the threshold too and still come up to 0.1% sooner with several flows on
    /// one copy engine (8.188 against 8.179 us, two flows from one GPU), as before.
    #[test]
    fn latency_never_falls_past_the_bulk_threshold_for_many_flows(
        m in mix(),
        path in prop::sample::select(vec![PathKind::Host, PathKind::GpuDirect]),
        op in prop::sample::select(Op::ALL.to_vec()),
        coalesce in prop::sample::select(vec![512u64, 768, 960]),
        step in prop::sample::select(vec![1u64, 8, 64]),
    ) {
        let m = Mix { coalesce, ..m };
        never_sooner(&m, path, op, (coalesce, step), 20_000)?;
    }
}

/// Issue #27 item 1 over many flows: flows that send at once on one port must not finish
/// sooner one byte past the bulk threshold than at it. Host write_imm, the default machine,
/// flows on nic0 in both directions (the generator's case), one message each; the last
/// delivery. Before a NIC transfer had a head, with the default threshold (511 / 512 / 513 B): 1 flow 2.4001 /
/// 2.4002 / 2.4010 us; 4 flows 2.4423 / 2.4424 / 2.4333 (-0.4%); 8 flows 2.4701 / 2.4701 /
/// 2.4549 (-0.6%); 20 flows 2.6144 / 2.6144 / 2.5744 (-1.5%); with the threshold at 4 KiB
/// (4095 / 4096 / 4097 B) 2 flows -2.4%, 8 flows -9.7%, 20 flows 4.885 / 4.885 / 3.985 us
/// (-18.4%). TLP by TLP the NIC's reads of the flows' first packets interleave on PCIe, then
/// every packet queues on the wire: about N x P x (1/C_pcie + 1/C_wire); a bulk transfer
/// carried its first packet in its latency at idle rate and pipelined the rest, about
/// N x P / C. Now the first packet's wait to be whole on its completion links moves in the
/// sharing (the head, `Job::head` in `components::bulk`): 20 flows at 512 B 2.6140 / 2.6144 /
/// 2.7370 us, at 4 KiB 4.8841 / 4.8844 / 5.2451 us (bulk 5-7% above TLP by TLP here: the head
/// holds its share of the wire too while the packet is still on PCIe).
#[test]
fn many_flows_never_finish_sooner_past_the_bulk_threshold() {
    let flows = vec![
        (3, 0, false, true),
        (0, 0, false, true),
        (1, 0, false, true),
        (2, 0, false, false),
        (0, 0, true, false),
        (1, 0, false, false),
        (3, 0, false, true),
        (3, 0, true, false),
        (0, 0, true, true),
        (1, 0, true, true),
        (0, 0, true, false),
        (3, 0, true, true),
        (1, 0, true, true),
        (1, 0, false, false),
        (0, 0, false, true),
        (3, 0, true, false),
        (3, 0, true, false),
        (2, 0, true, true),
        (1, 0, true, true),
        (3, 0, true, false),
    ];
    let mut found = Vec::new();
    for coalesce in [512u64, 4096] {
        for n in [1usize, 2, 4, 8, 20] {
            let m = Mix {
                flows: flows[..n].to_vec(),
                nics: [(400, 4096), (200, 1024)],
                window: 16,
                messages: 5,
                coalesce,
            };
            let sizes = [coalesce - 1, coalesce, coalesce + 1, coalesce + 64];
            let t: Vec<u64> = sizes
                .iter()
                .map(|&s| completion(&m, PathKind::Host, Op::WriteImm, s).unwrap())
                .collect();
            if t.windows(2).any(|w| w[1] < w[0]) {
                found.push(format!(
                    "threshold {coalesce} B, {n} flows: {sizes:?} B -> {t:?} ps"
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "sooner past the threshold:\n{}",
        found.join("\n")
    );
}

/// `m`'s study text with every re-solve of the sharing batched (`exact_sharing_below = 2`),
/// waiting `ppm` millionths of the transfers' mean time left.
fn batched(text: &str, ppm: u32) -> String {
    batched_from(text, 2, ppm)
}

/// `text` with its re-solves batched from `below` transfers in flight at `ppm`.
fn batched_from(text: &str, below: u32, ppm: u32) -> String {
    let from = "\niterations = 3 ";
    assert!(text.contains(from), "the study's [sim] sets iterations");
    text.replacen(
        from,
        &format!("\nexact_sharing_below = {below}\nsharing_wait_ppm = {ppm}{from}"),
        1,
    )
}

/// The summary of `text`'s point (its one scenario) at `path`, write_imm, `size`.
fn run_point(text: &str, path: PathKind, size: u64) -> gdrsim::stats::Summary {
    let cfg = config::parse(text, "mix.toml").expect("parses");
    let p = Point::at(cfg.seed, 0, path, Op::WriteImm, size);
    scenario::simulate_point(&cfg, &scenario::topology(&cfg), &p).summary
}

/// Under batched re-solves a flow's next message takes over the rate of the one before it as
/// that one ends (same flow, same chain: the same demand, so the solve that would follow
/// gives every transfer the rate it has): a stream does not idle at each message. Two flows
/// of two GPUs share one 400G port, 24 messages of 1 MiB each, re-solves batched from one
/// transfer at 10% (`sharing_wait_ppm = 100000`, fifty times the default). What is left of
/// the batching is the start: the second flow's first message waits 10% of the first one's
/// time, about 10% / 24 of the stream, under 1%. Without the hand-over every next message
/// idles for a wait of that order and the stream loses several percent (measured 5.0%).
#[test]
fn a_batched_stream_hands_each_message_its_predecessors_rate() {
    let m = Mix {
        flows: vec![(0, 0, false, false), (1, 0, false, false)],
        nics: [(400, 4096), (400, 4096)],
        window: 4,
        messages: 24,
        coalesce: 4096,
    };
    let (path, size) = (PathKind::GpuDirect, 1 << 20);
    let exact_text = config_of(&m, &[path], Op::WriteImm, &[size]);
    let exact = run_point(&exact_text, path, size);
    let b = run_point(&batched_from(&exact_text, 1, 100_000), path, size);
    let diff = support::rel_diff(b.bw_gbps, exact.bw_gbps);
    assert!(
        diff < 0.01,
        "batched {} GB/s against exact {} ({:.2}%)",
        b.bw_gbps,
        exact.bw_gbps,
        diff * 100.0
    );
    for l in &b.links {
        assert!(l.busy <= 1.0 + 1e-9, "{} busy {}", l.channel, l.busy);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, max_shrink_iters: 16, failure_persistence: None, rng_seed: support::proptest_seed(), ..ProptestConfig::default() })]

    /// Batched re-solves (`[sim] sharing_wait_ppm`, here 2%, on from two transfers) only ever
    /// hold a rate back until the solve: no channel goes above its capacity, and the streaming
    /// bandwidth and the one-message completion stay within the wait's bound of the exact
    /// solve's. Derivation: a transfer waits at most `ppm` of the mean span of the transfers
    /// in flight (its own length where they run in step) before its first solve: `ppm` of its
    /// time; capacity that its end frees idles as long: `ppm` again; a next message refused
    /// for want of a receive waits again: `3 x ppm`. A short message among longer ones waits
    /// `ppm` of their longer span, and others' deferred starts can speed it up as much: `4 x
    /// ppm` bounds it (measured: at most 3.15 x ppm over these cases, 2.3 x when the wait was
    /// `ppm` of the mean time left; a solve that never came, or came for the wrong group,
    /// costs far more).
    #[test]
    fn batched_sharing_stays_within_capacity_and_near_the_exact_solve(
        m in mix(),
        path in prop::sample::select(vec![PathKind::Host, PathKind::GpuDirect, PathKind::Staged]),
        size_exp in 15u32..22,
    ) {
        let size = 1u64 << size_exp;
        let ppm = 20_000u32;
        let exact_text = config_of(&m, &[path], Op::WriteImm, &[size]);
        let batched_text = batched(&exact_text, ppm);
        let (exact, b) = (run_point(&exact_text, path, size), run_point(&batched_text, path, size));
        for l in &b.links {
            prop_assert!(l.busy <= 1.0 + 1e-9, "{} busy {}", l.channel, l.busy);
        }
        let bound = 4.0 * f64::from(ppm) / 1e6;
        prop_assert!(
            support::rel_diff(b.bw_gbps, exact.bw_gbps) <= bound,
            "streaming {} GB/s batched, {} exact ({} flows, {} {} B)",
            b.bw_gbps, exact.bw_gbps, m.flows.len(), path.name(), size
        );
        let (lb, le) = (b.lat_model_ps as f64, exact.lat_model_ps as f64);
        prop_assert!(
            support::rel_diff(lb, le) <= bound,
            "one message {} ps batched, {} exact ({} flows, {} {} B)",
            lb, le, m.flows.len(), path.name(), size
        );
    }
}

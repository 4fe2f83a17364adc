//! Invariants of concurrent flows on generated machines: no channel carries more than its rate at
//! any time (checked from the hop records, not from the channel's own arithmetic), every byte of
//! every flow arrives exactly once, no message is delivered before its last payload byte lands,
//! and bulk (fluid) movement agrees with TLP-by-TLP movement under contention.
//!
//! A generated machine has two sockets, a switch `sw0` on `rc0` (socket 0), a root complex `rc1`
//! on socket 1, two to four GPUs and one or two NICs, each placed under `sw0`, on `rc0` or on
//! `rc1`, with generated link generations and widths. Flows pick a GPU and a NIC each (several
//! flows may share a NIC or a GPU) and go to the same GPU and NIC of a second host of the same
//! machine, some bidirectional, so flows meet in switches, uplinks, NICs, wires and memories.

use crate::support;

use std::collections::HashMap;

use gdrsim::config::{self, Config, PathKind};
use gdrsim::plan::{Movement, Plan};
use gdrsim::record::Recorder;
use gdrsim::scenario;
use gdrsim::topology::ChannelKind;
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Case {
    /// Per GPU and per NIC: 0 under sw0, 1 on rc0, 2 on rc1.
    gpus: Vec<u8>,
    nics: Vec<u8>,
    /// The uplink and the device links: (generation, width).
    uplink: (u32, u32),
    device_link: (u32, u32),
    mps: u64,
    wire_gbps: u64,
    nic_window: u32,
    upi_gbps: u64,
    /// (gpu, nic, bidirectional) per flow, indices taken modulo the counts.
    flows: Vec<(usize, usize, bool)>,
}

fn case() -> impl Strategy<Value = Case> {
    let place = 0u8..3;
    let link = (3u32..=5, prop::sample::select(vec![4u32, 8, 16]));
    (
        prop::collection::vec(place.clone(), 2..=4),
        prop::collection::vec(place, 1..=2),
        (link.clone(), link),
        (
            prop::sample::select(vec![128u64, 256, 512]),
            prop::sample::select(vec![100u64, 200, 400]),
            8u32..128,
            prop::sample::select(vec![20u64, 60, 200]),
        ),
        prop::collection::vec((0usize..4, 0usize..2, any::<bool>()), 1..=4),
    )
        .prop_map(
            |(gpus, nics, (uplink, device_link), (mps, wire, window, upi), flows)| Case {
                gpus,
                nics,
                uplink,
                device_link,
                mps,
                wire_gbps: wire,
                nic_window: window,
                upi_gbps: upi,
                flows,
            },
        )
}

fn toml_of(c: &Case, path: PathKind, size: u64) -> String {
    let parent = |p: u8| ["sw0", "rc0", "rc1"][p as usize];
    let mut devices = String::new();
    for (i, &p) in c.gpus.iter().enumerate() {
        devices += &format!(
            "[[machines.gpus]]\nname = \"gpu{i}\"\n[[machines.links]]\nup = \"{}\"\ndown = \"gpu{i}\"\ngeneration = {}\nwidth = {}\n",
            parent(p),
            c.device_link.0,
            c.device_link.1
        );
    }
    for (i, &p) in c.nics.iter().enumerate() {
        devices += &format!(
            "[[machines.nics]]\nname = \"nic{i}\"\nwire_rate_gbps = {}\nread_window = {}\n[[machines.links]]\nup = \"{}\"\ndown = \"nic{i}\"\ngeneration = {}\nwidth = {}\n",
            c.wire_gbps,
            c.nic_window,
            parent(p),
            c.device_link.0,
            c.device_link.1
        );
    }
    let flows: Vec<String> = c
        .flows
        .iter()
        .map(|&(g, n, both)| {
            let (g, n) = (g % c.gpus.len(), n % c.nics.len());
            format!(
                "{{ sender = {{ host = \"a\", nic = \"nic{n}\", gpu = \"gpu{g}\" }}, receiver = {{ host = \"b\", nic = \"nic{n}\", gpu = \"gpu{g}\" }}, bidirectional = {both} }}"
            )
        })
        .collect();
    format!(
        r#"name = "flows"
seed = 3
[sim]
iterations = 3
min_iterations = 3
stream_window = 3
stream_messages = 4
[sweep]
sizes = [{size}]
paths = ["{path}"]
[[machines]]
name = "m"
[machines.pcie]
mps_bytes = {mps}
[[machines.sockets]]
name = "cpu0"
[[machines.sockets]]
name = "cpu1"
[[machines.socket_links]]
a = "cpu0"
b = "cpu1"
rate_gbps = "{upi}GB/s"
[[machines.root_complexes]]
name = "rc0"
socket = "cpu0"
[[machines.root_complexes]]
name = "rc1"
socket = "cpu1"
[[machines.switches]]
name = "sw0"
[[machines.links]]
up = "rc0"
down = "sw0"
generation = {ug}
width = {uw}
{devices}
[[hosts]]
name = "a"
machine = "m"
[[hosts]]
name = "b"
machine = "m"
[[scenarios]]
name = "s"
flows = [{flows}]
"#,
        path = path.name(),
        mps = c.mps,
        upi = c.upi_gbps,
        ug = c.uplink.0,
        uw = c.uplink.1,
        flows = flows.join(", "),
    )
}

/// The largest total rate (bytes per ps) the hops of any rate-limited channel put on it at one
/// time, over its capacity: at most 1. Each hop carries its wire bytes evenly over [start, end]
/// (a unit during its service, a bulk transfer during a stretch at one rate).
fn worst_load(cfg: &Config, rec: &Recorder) -> Result<(), String> {
    let topo = scenario::topology(cfg);
    let mut edges: HashMap<gdrsim::topology::ChannelId, Vec<(u64, bool, f64)>> = HashMap::new();
    for h in &rec.hops {
        let Some(ch) = topo.channels.get(h.channel.index()) else {
            continue;
        };
        if h.wire == 0 || !ch.is_server() {
            continue;
        }
        if h.end <= h.start {
            return Err(format!(
                "{} carried {} B in no time: {h:?}",
                ch.name, h.wire
            ));
        }
        let rate = h.wire as f64 / (h.end - h.start) as f64;
        let e = edges.entry(h.channel).or_default();
        e.push((h.start, true, rate));
        e.push((h.end, false, rate));
    }
    for (c, mut e) in edges {
        let ch = &topo.channels[c.index()];
        let cap = ch.rate.bps() as f64 / 8.0 / 1e12; // bytes per ps
        // Ends before starts at the same instant: back-to-back service is not overlap.
        e.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut load = 0.0f64;
        for (t, start, rate) in e {
            if start {
                load += rate;
                if load > cap * (1.0 + 1e-6) + 1e-12 {
                    return Err(format!(
                        "{} ({:?}) carried {:.6} B/ps at {t} ps, its rate is {:.6} B/ps",
                        ch.name, ch.kind, load, cap
                    ));
                }
            } else {
                load -= rate;
            }
        }
    }
    Ok(())
}

/// When each (flow, message)'s last payload byte was written into memory (its destination
/// last): the latest end of a payload write's hop on a memory channel.
fn last_landing(cfg: &Config, rec: &Recorder, plans: &[Plan]) -> HashMap<(u32, u32), u64> {
    let topo = scenario::topology(cfg);
    let mut land: HashMap<(u32, u32), u64> = HashMap::new();
    for h in &rec.hops {
        let kind = &topo.channels[h.channel.index()].kind;
        let memory = matches!(kind, ChannelKind::HostMemory | ChannelKind::GpuMemory);
        let write = matches!(h.what, Movement::PayloadWrite | Movement::H2dWrite);
        let payload = plans[h.flow as usize].steps[h.step.index()].payload;
        if memory && write && payload {
            let e = land.entry((h.flow, h.msg)).or_insert(0);
            *e = (*e).max(h.end);
        }
    }
    land
}

/// Streaming bandwidth of every flow together (perftest's BW average over all of them).
fn aggregate_gbytes(out: &gdrsim::components::Outcome, size: u64) -> f64 {
    let all: Vec<(u64, u64)> = out.flows.iter().flat_map(|f| f.messages.clone()).collect();
    scenario::perftest_bw_average(&all, size).0
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, max_shrink_iters: 64, failure_persistence: None, rng_seed: support::proptest_seed(), ..ProptestConfig::default() })]

    #[test]
    fn concurrent_flows_keep_every_invariant(
        c in case(),
        path in prop::sample::select(vec![PathKind::Host, PathKind::Staged, PathKind::GpuDirect]),
                size_exp in 3u32..22,
        extra in 0u64..4096,
    ) {
        let size = (1u64 << size_exp) + extra % (1u64 << size_exp);
        let text = toml_of(&c, path, size);
        let cfg = config::parse(&text, "generated.toml").map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let flows = cfg.scenarios[0].flows.len();

        for tlp in [false, true] {
            let (out, rec, plans) = support::run_flows(&cfg, 0, path, size, tlp, 3, 4);
            prop_assert_eq!(out.flows.len(), flows);
            if let Err(e) = worst_load(&cfg, &rec) {
                return Err(TestCaseError::fail(format!("tlp {tlp}: {e}\n{text}")));
            }
            let land = last_landing(&cfg, &rec, &plans);
            for (fi, f) in out.flows.iter().enumerate() {
                prop_assert_eq!(f.messages.len(), 4);
                for (k, &(start, delivered)) in f.messages.iter().enumerate() {
                    prop_assert!(delivered > start, "flow {} message {} delivered at its start", fi, k);
                    prop_assert_eq!(f.received[k], size, "flow {} message {}: bytes at the NIC", fi, k);
                    prop_assert_eq!(f.written[k], size, "flow {} message {}: bytes in memory", fi, k);
                    let landed = land.get(&(fi as u32, k as u32)).copied();
                    prop_assert!(landed.is_some(), "flow {} message {}: no payload write recorded", fi, k);
                    prop_assert!(delivered >= landed.unwrap(),
                        "flow {} message {} delivered at {} before its last byte landed at {}", fi, k, delivered, landed.unwrap());
                }
            }
        }
    }

    /// Streaming bandwidth, bulk transfers against TLP by TLP, under contention (within 8%, see
    /// the bound's comment): a stream long
    /// enough for the steady state to dominate (16 messages per flow, 8 in flight; with 4
    /// messages the start-up transient alone differs by up to 5%), at sizes where bulk
    /// transfers carry the run (from 4 x the coalescing threshold: just above it a message's
    /// latency phase, computed on idle channels, is a large part of its time).
    #[test]
    fn bulk_and_tlp_by_tlp_streaming_agree_under_contention(
        c in case(),
        path in prop::sample::select(vec![PathKind::Host, PathKind::Staged, PathKind::GpuDirect]),
        size_exp in 18u32..20,
        extra in 0u64..4096,
    ) {
        let size = (1u64 << size_exp) + extra;
        let text = toml_of(&c, path, size);
        let cfg = config::parse(&text, "generated.toml").map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let (bulk, _, _) = support::run_flows(&cfg, 0, path, size, false, 8, 16);
        let (tlp, _, _) = support::run_flows(&cfg, 0, path, size, true, 8, 16);
        let (b, t) = (aggregate_gbytes(&bulk, size), aggregate_gbytes(&tlp, size));
                // 2% is what the named cases hold (tests/behaviour.rs: dgx-a100 staged 4 MiB, the
        // default config's contended staging; tests/contention.rs). Over generated mixes the
        // fluid model's closed-form queueing (round trips under load, queueing::wait_ps) is an
        // approximation: about 97% of generated cases agree within 2%, the worst seen within
        // 6.2% (eight flows of four bidirectional pairs through one NIC; two flows of one GPU's
        // copy engine through two NICs). This bound catches a broken sharing model, not the
        // last few percent.
        prop_assert!(support::rel_diff(b, t) < 0.08, "bulk {} vs TLP {} GB/s\n{}", b, t, text);
    }
}

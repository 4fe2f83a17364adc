//! Invariants over generated machines and parameters (not just the default config): causality,
//! byte conservation, no bandwidth beyond the slowest link direction the payload crosses,
//! jitter only adding delay, and the host path's host-memory traffic.

use crate::support;

use gdrsim::config::{self, Config, Op, PathKind};
use gdrsim::scenario::{self, Point};
use gdrsim::topology::{ChannelKind, Flow, NodeKind, Place, pcie};
use gdrsim::units::PS_PER_US;
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Machine {
    generation: [u32; 3],
    width: [u32; 3],
    mps: u64,
    mrrs: u64,
    link_latency: u64,
    rc_latency: u64,
    switch_latency: u64,
    nic_under_switch: bool,
    /// 0: GPU under the NIC's switch (PIX), 1: on the root complex (PHB), 2: other socket (SYS).
    gpu_place: u8,
    wire_gbps: u64,
    mtu: u64,
    nic_window: u32,
    ce_window: u32,
    upi_gbps: u64,
    inline_max: u64,
    doorbell: bool,
    /// Receives kept posted (at or below the window of 4 the receive queue can run dry).
    recv_depth: u32,
}

fn machine() -> impl Strategy<Value = Machine> {
    (
        (
            prop::array::uniform3(3u32..=6),
            prop::array::uniform3(prop::sample::select(vec![4u32, 8, 16])),
        ),
        (
            prop::sample::select(vec![128u64, 256, 512, 1024, 4096]),
            prop::sample::select(vec![128u64, 512, 1024, 4096]),
        ),
        (0u64..60, 50u64..400, 80u64..200),
        (any::<bool>(), 0u8..3),
        (
            prop::sample::select(vec![100u64, 200, 400, 800]),
            prop::sample::select(vec![1024u64, 2048, 4096]),
        ),
        (4u32..256, 4u32..256, 50u64..400),
        (
            prop::sample::select(vec![0u64, 64, 220]),
            any::<bool>(),
            1u32..=6,
        ),
    )
        .prop_map(
            |(
                (generation, width),
                (mps, mrrs),
                (ll, rc, sw),
                (nus, gp),
                (wire, mtu),
                (nw, cw, upi),
                (inl, db, rd),
            )| Machine {
                generation,
                width,
                mps,
                mrrs,
                link_latency: ll,
                rc_latency: rc,
                switch_latency: sw,
                nic_under_switch: nus,
                gpu_place: gp,
                wire_gbps: wire,
                mtu,
                nic_window: nw,
                ce_window: cw,
                upi_gbps: upi,
                inline_max: inl,
                doorbell: db,
                recv_depth: rd,
            },
        )
}

fn toml_of(m: &Machine, path: PathKind, size: u64, seed: u64) -> String {
    let link = |up: &str, down: &str, i: usize| {
        format!(
            "[[machines.links]]\nup = \"{up}\"\ndown = \"{down}\"\ngeneration = {}\nwidth = {}\n",
            m.generation[i], m.width[i]
        )
    };
    let nic_up = if m.nic_under_switch { "sw0" } else { "rc0" };
    let gpu_up = ["sw0", "rc0", "rc1"][m.gpu_place as usize];
    format!(
        r#"name = "prop"
seed = {seed}
[sim]
iterations = 6
min_iterations = 3
stream_window = 4
stream_messages = 8
stream_budget_bytes = "16MiB"
recv_depth = {rd}
min_rnr_timer = 1
[sweep]
sizes = [{size}]
paths = ["{path}"]
[[machines]]
name = "m"
[machines.pcie]
link_latency_ns = {ll}
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
latency_ns = {rc}
[[machines.root_complexes]]
name = "rc1"
socket = "cpu1"
latency_ns = {rc}
[[machines.switches]]
name = "sw0"
latency_ns = {sw}
[[machines.gpus]]
name = "gpu0"
ce_read_window = {cw}
ce_mrrs_bytes = {mrrs}
[[machines.nics]]
name = "nic0"
wire_rate_gbps = {wire}
mtu_bytes = {mtu}
read_window = {nw}
mrrs_bytes = {mrrs}
inline_max_bytes = {inl}
wqe_delivery = "{db}"
{l0}{l1}{l2}
[[hosts]]
name = "a"
machine = "m"
[[hosts]]
name = "b"
machine = "m"
[[scenarios]]
name = "s"
sender = {{ host = "a", nic = "nic0", gpu = "gpu0" }}
receiver = {{ host = "b", nic = "nic0", gpu = "gpu0" }}
"#,
        path = path.name(),
        ll = m.link_latency,
        mps = m.mps,
        upi = m.upi_gbps,
        rc = m.rc_latency,
        sw = m.switch_latency,
        cw = m.ce_window,
        mrrs = m.mrrs.max(128),
        wire = m.wire_gbps,
        mtu = m.mtu,
        nw = m.nic_window,
        inl = m.inline_max,
        db = if m.doorbell { "doorbell" } else { "blueflame" },
        rd = m.recv_depth,
        l0 = link("rc0", "sw0", 0),
        l1 = link(nic_up, "nic0", 1),
        l2 = link(gpu_up, "gpu0", 2),
    )
}

/// The slowest payload rate over every link direction the payload crosses on the NIC's side of
/// both hosts (read completions at the sender, posted writes at the receiver), the socket link
/// where crossed, and the wire at full packets: an upper bound for any streaming bandwidth.
fn payload_bound_gbytes(cfg: &Config, path: PathKind) -> f64 {
    let topo = &scenario::topology(cfg);
    let mut bound = f64::INFINITY;
    let nic = &cfg.hosts[0].machine.nics[0];
    bound = bound.min(
        nic.wire_rate
            .scale(nic.mtu, nic.mtu + nic.packet_overhead)
            .gbytes_per_s(),
    );
    for (h, flow) in [(0usize, Flow::ReadCompletion), (1, Flow::Write)] {
        let host = &topo.hosts[h];
        let nic_p = Place::Device(host.node_index(NodeKind::Nic(0)));
        let buf = match path {
            PathKind::GpuDirect => Place::Device(host.node_index(NodeKind::Gpu(0))),
            _ => Place::Memory(host.nodes[host.node_index(NodeKind::Nic(0))].socket),
        };
        let route = match flow {
            Flow::ReadCompletion => host.route(buf, nic_p, flow),
            _ => host.route(nic_p, buf, flow),
        };
        let Ok(route) = route else { continue };
        for &c in &route.channels {
            let ch = &topo.channels[c.index()];
            let rate = match ch.kind {
                ChannelKind::PcieLink {
                    generation, width, ..
                } => {
                    let ovh = if flow == Flow::Write {
                        pcie::request_overhead(generation, false)
                    } else {
                        pcie::completion_overhead(generation, false)
                    };
                    pcie::tlp_rate(generation, width, cfg.hosts[0].machine.pcie.mps)
                        .scale(route.mps, route.mps + ovh)
                        .gbytes_per_s()
                }
                ChannelKind::SocketLink | ChannelKind::P2pCap => ch.rate.gbytes_per_s(),
                _ => f64::INFINITY,
            };
            bound = bound.min(rate);
        }
    }
    bound
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, rng_seed: support::proptest_seed(), ..ProptestConfig::default() })]

        #[test]
    fn invariants_hold_on_generated_machines(
        m in machine(),
        path in prop::sample::select(vec![PathKind::Host, PathKind::Staged, PathKind::GpuDirect, PathKind::Gdrcopy, PathKind::StagedPipelined]),
        size_exp in 0u32..23,
        extra in 0u64..1000,
        seed in any::<u64>(),
        op in prop::sample::select(Op::ALL.to_vec()),
    ) {
        let size = (1u64 << size_exp) + extra % (1u64 << size_exp);
        // A Read's source cannot be staged (the config refuses it): a Send stands in.
        let stages = matches!(path, PathKind::Staged | PathKind::Gdrcopy | PathKind::StagedPipelined);
        let op = if op == Op::Read && stages { Op::Send } else { op };
        invariants_hold_op(&m, path, op, size, seed)?;
    }
}

/// The machine of the cases the generator found: Gen3 x4 links, MPS = MRRS = 128, the NIC on
/// a root port and the GPU beside it, doorbell posts.
fn found_case() -> Machine {
    Machine {
        generation: [3, 3, 3],
        width: [4, 4, 4],
        mps: 128,
        mrrs: 128,
        link_latency: 0,
        rc_latency: 50,
        switch_latency: 80,
        nic_under_switch: false,
        gpu_place: 0,
        wire_gbps: 100,
        mtu: 1024,
        nic_window: 4,
        ce_window: 4,
        upi_gbps: 50,
        inline_max: 220,
        doorbell: true,
        recv_depth: 512,
    }
}

/// A case the generator found: MPS = MRRS = 128 on Gen3 x4, 128-byte host messages, doorbell
/// posts (a milestone was signalled twice).
#[test]
fn invariants_hold_with_mrrs_equal_to_mps_on_a_host_path() {
    invariants_hold(&found_case(), PathKind::Host, 128, 0).unwrap();
}

/// A case the generator found: a staged 4642-byte message with MPS = MRRS = 4096 (a jittered
/// message came out faster than the noise-free one).
#[test]
fn jitter_never_makes_a_staged_message_faster() {
    let m = Machine {
        generation: [4, 3, 3],
        mps: 4096,
        mrrs: 4096,
        inline_max: 0,
        doorbell: false,
        ..found_case()
    };
    invariants_hold(&m, PathKind::Staged, 4096 + 546, 555468341698235820).unwrap();
}

fn invariants_hold(m: &Machine, path: PathKind, size: u64, seed: u64) -> Result<(), TestCaseError> {
    invariants_hold_op(m, path, Op::WriteImm, size, seed)
}

fn invariants_hold_op(
    m: &Machine,
    path: PathKind,
    op: Op,
    size: u64,
    seed: u64,
) -> Result<(), TestCaseError> {
    {
        let text = toml_of(m, path, size, seed).replace(
            "paths = [",
            &format!("ops = [\"{}\"]\npaths = [", op.name()),
        );
        let cfg = config::parse(&text, "generated.toml")
            .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;

        // Causality and byte conservation in a recorded streaming run.
        let (out, rec) = support::run_fabric_op(&cfg, "s", path, op, size, (false, 3, 5));
        for (i, &(start, end)) in out.messages.iter().enumerate() {
            prop_assert!(end >= start, "message {} delivered before it started", i);
            prop_assert_eq!(
                out.received[i],
                size,
                "bytes received by the NIC, message {}",
                i
            );
            prop_assert_eq!(
                out.written[i],
                size,
                "bytes committed in memory, message {}",
                i
            );
        }
        for s in &rec.spans {
            prop_assert!(
                s.start <= s.first_out && s.first_out <= s.end && s.last_in <= s.end,
                "span {:?}",
                s
            );
        }
        let mut last_start = std::collections::HashMap::new();
        for h in &rec.hops {
            prop_assert!(h.start <= h.end, "hop ends before it starts: {:?}", h);
            let prev = last_start.insert(h.train, h.start).unwrap_or(0);
            prop_assert!(h.start >= prev, "a train went back in time: {:?}", h);
        }

        // The point as `gdrsim run` computes it.
        let p = Point {
            scenario: 0,
            path,
            op,
            size,
            seed,
            variant: 0,
        };
        let r = scenario::simulate_point(&cfg, &scenario::topology(&cfg), &p);
        let s = &r.summary;
        prop_assert!(
            s.lat.min_us * PS_PER_US as f64 >= s.lat_model_ps as f64 - 1e-3,
            "jitter made a message faster"
        );
        let bound = payload_bound_gbytes(&cfg, path);
        prop_assert!(
            s.bw_gbps <= bound * (1.0 + 1e-9),
            "bandwidth {} GB/s beyond the bound {} GB/s",
            s.bw_gbps,
            bound
        );
        prop_assert_eq!(
            s.stages.iter().map(|r| r.critical_ps).sum::<u64>(),
            s.lat_model_ps
        );
        if path == PathKind::Host {
            prop_assert_eq!(s.host_mem_bytes, 2 * size);
        }
    }
    Ok(())
}

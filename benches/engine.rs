//! Speed figures: raw engine events per second, one 1 GiB and one 16 GiB message per path, eight
//! concurrent 1 GiB flows (one per rail of a DGX H100-class node), 64 flows through one PCIe link,
//! a 1 GiB PXN message relayed over NVLink, one sweep point, the whole default sweep and
//! dgx-h100 study, the 8x8 p2p matrix of a DGX H100, and one flow among 2 and 128 hosts (the cost
//! of an event should not grow with the hosts defined), a ring all-reduce of 2 x DGX H100, and
//! an NCCL all-to-all of 4 and 16 DGX H100 nodes on a rail-optimized fabric.
//! Run with `cargo bench`.

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};
use gdrsim::components::Fabric;
use gdrsim::config::{self, Config, Op, PathKind};
use gdrsim::engine::{self, Handler, Queue};
use gdrsim::scenario::{self, Point};
use gdrsim::units::Ps;

fn main() {
    divan::main();
}

/// A synthetic load: 1024 timers, each rescheduling itself at a pseudo-random delay, until
/// `budget` events have been handled. Exercises the heap at a realistic depth.
struct Timers {
    left: u64,
    x: u64,
}

impl Handler for Timers {
    type Event = u32;
    fn handle(&mut self, now: Ps, ev: u32, q: &mut Queue<u32>) {
        if self.left == 0 {
            return;
        }
        self.left -= 1;
        self.x ^= self.x << 13;
        self.x ^= self.x >> 7;
        self.x ^= self.x << 17;
        q.schedule(now + 1 + (self.x % 10_000), ev);
    }
}

const EVENTS: u64 = 1_000_000;

#[divan::bench]
fn engine_events(b: Bencher) {
    b.counter(ItemsCount::new(EVENTS)).bench(|| {
        let mut q = Queue::new();
        for i in 0..1024 {
            q.schedule(i as Ps, i);
        }
        let mut h = Timers {
            left: EVENTS,
            x: 0x9E37_79B9_7F4A_7C15,
        };
        black_box(engine::run(&mut h, &mut q))
    });
}

const DGX_H100: &str = include_str!("../configs/dgx-h100.toml");

/// Every flow of scenario `si` of `cfg` sending `messages` messages of `size` at once (a window
/// of `window` per flow), noise-free, as the streaming run of a point does.
fn flows(
    cfg: &Config,
    si: usize,
    (path, op): (PathKind, Op),
    size: u64,
    window: u32,
    messages: u32,
    b: Bencher,
) {
    let topo = scenario::topology(cfg);
    let built: Vec<_> = cfg.scenarios[si]
        .flows
        .iter()
        .map(|f| scenario::paths::plan(cfg, f, &topo, path, op, size).unwrap())
        .collect();
    let plans: Vec<_> = built.iter().map(|b| &b.plan).collect();
    let opts = scenario::sim_options(cfg, 1).noise_free().tlp(false);
    b.bench(|| {
        let mut f = Fabric::new(&topo, &plans, opts);
        black_box(f.run(window, messages))
    });
}

fn message((path, op): (PathKind, Op), size: u64, b: Bencher) {
    let cfg = config::parse(config::DEFAULT_TOML, "default").unwrap();
    flows(&cfg, 0, (path, op), size, 1, 1, b);
}

/// One noise-free 1 GiB message on the default PIX placement (pipelined staging: 1024 chunks).
#[divan::bench(args = [PathKind::Host, PathKind::Staged, PathKind::GpuDirect, PathKind::StagedPipelined, PathKind::Gdrcopy])]
fn one_gib_message(b: Bencher, path: PathKind) {
    message((path, Op::WriteImm), 1 << 30, b);
}

/// One noise-free 1 GiB GPUDirect message of each operation.
#[divan::bench(args = [Op::Write, Op::Read, Op::Send])]
fn one_gib_message_by_op(b: Bencher, op: Op) {
    message((PathKind::GpuDirect, op), 1 << 30, b);
}

/// One noise-free 16 GiB message (the largest size a sweep accepts): the cost of a message
/// should not grow with its size.
#[divan::bench(args = [PathKind::Staged, PathKind::GpuDirect, PathKind::StagedPipelined])]
fn sixteen_gib_message(b: Bencher, path: PathKind) {
    message((path, Op::WriteImm), 16 << 30, b);
}

/// Eight 1 GiB messages at once, one per GPU and NIC of a DGX H100-class node ("8 GPUs").
#[divan::bench(args = [PathKind::Staged, PathKind::GpuDirect])]
fn eight_flows_of_one_gib(b: Bencher, path: PathKind) {
    let cfg = config::parse(DGX_H100, "dgx-h100.toml").unwrap();
    flows(&cfg, 0, (path, Op::WriteImm), 1 << 30, 1, 1, b);
}

/// 64 flows from one GPU and NIC pair streaming 16 messages of 1 MiB each (a window of 4):
/// every flow shares the GPU's and the NIC's PCIe links, the NIC's read window and the wire.
#[divan::bench(args = [PathKind::Staged, PathKind::GpuDirect])]
fn sixty_four_flows_through_one_link(b: Bencher, path: PathKind) {
    let flow = r#"{ sender = { host = "node-a", nic = "nic0", gpu = "gpu0" }, receiver = { host = "node-b", nic = "nic0", gpu = "gpu0" } }"#;
    let text = format!(
        "{}\n[[scenarios]]\nname = \"64 flows\"\nflows = [{}]\n",
        config::DEFAULT_TOML,
        vec![flow; 64].join(", ")
    );
    let cfg = config::parse(&text, "64-flows.toml").unwrap();
    let si = cfg.scenarios.len() - 1;
    flows(&cfg, si, (path, Op::WriteImm), 1 << 20, 4, 16, b);
}

/// One point of the default sweep as `gdrsim run` computes it (model, iterations, streaming).
#[divan::bench(args = [8u64, 1 << 20, 1 << 30])]
fn sweep_point_gpudirect(b: Bencher, size: u64) {
    let cfg = config::parse(config::DEFAULT_TOML, "default").unwrap();
    let topo = scenario::topology(&cfg);
    let p = Point {
        scenario: 0,
        path: PathKind::GpuDirect,
        op: Op::WriteImm,
        size,
        seed: 1,
        variant: 0,
    };
    b.bench(|| black_box(scenario::simulate_point(&cfg, &topo, &p).events));
}

/// The whole default sweep on all cores, without writing files.
#[divan::bench(sample_count = 3, sample_size = 1)]
fn default_sweep(b: Bencher) {
    let cfg = config::parse(config::DEFAULT_TOML, "default").unwrap();
    let (points, quiet) = (
        gdrsim::scenario::plan(&cfg),
        gdrsim::progress::Progress::new(0, true, ""),
    );
    b.bench(|| {
        black_box(
            gdrsim::study::simulate(&cfg, &points, 0, &quiet)
                .unwrap()
                .len(),
        )
    });
}

/// The whole dgx-h100 study (8 flows per point in one scenario) on all cores.
#[divan::bench(sample_count = 3, sample_size = 1)]
fn dgx_h100_study(b: Bencher) {
    let cfg = config::parse(DGX_H100, "dgx-h100.toml").unwrap();
    let (points, quiet) = (
        gdrsim::scenario::plan(&cfg),
        gdrsim::progress::Progress::new(0, true, ""),
    );
    b.bench(|| {
        black_box(
            gdrsim::study::simulate(&cfg, &points, 0, &quiet)
                .unwrap()
                .len(),
        )
    });
}

/// One noise-free 1 GiB PXN message on a DGX H100 pair: GPU0 sending through NIC4 (SYS),
/// relayed over NVLink by GPU4 in 1024 chunks.
#[divan::bench]
fn one_gib_pxn_message(b: Bencher) {
    let text = format!(
        "{DGX_H100}\n[[scenarios]]\nname = \"far\"\nsender = {{ host = \"dgx-a\", nic = \"nic4\", gpu = \"gpu0\" }}\nreceiver = {{ host = \"dgx-b\", nic = \"nic4\", gpu = \"gpu4\" }}\n"
    );
    let cfg = config::parse(&text, "far.toml").unwrap();
    let si = cfg.scenarios.len() - 1;
    flows(&cfg, si, (PathKind::Pxn, Op::WriteImm), 1 << 30, 1, 1, b);
}

/// `gdrsim p2p-matrix configs/dgx-h100.toml`: every matrix of the 8 GPUs (issue #10: under 2 s).
#[divan::bench(sample_count = 3, sample_size = 1)]
fn p2p_matrix_dgx_h100(b: Bencher) {
    let cfg = config::parse(DGX_H100, "dgx-h100.toml").unwrap();
    let args = gdrsim::p2p_matrix::Args {
        host: None,
        elems: 40_000_000,
        p2p_read: false,
        csv: None,
        chart: None,
    };
    b.bench(|| {
        black_box(
            gdrsim::p2p_matrix::measure(&cfg, &args)
                .unwrap()
                .matrices
                .len(),
        )
    });
}

/// A study of `hosts` DGX H100-class hosts (dgx-a, dgx-b, dgx-2, ...) whose one scenario is one
/// flow, dgx-a/gpu0 via nic0 to dgx-b/gpu0 via nic0.
fn hosts_config(hosts: usize) -> Config {
    let mut text = String::from(
        "name = \"scale\"\n[sweep]\nsizes = [\"1MiB\"]\npaths = [\"gpudirect\"]\nops = [\"write_imm\"]\n\
         [[machines]]\nname = \"dgx-h100\"\npreset = \"dgx-h100\"\n",
    );
    for h in 0..hosts {
        let name = match h {
            0 => "dgx-a".to_string(),
            1 => "dgx-b".to_string(),
            h => format!("dgx-{h}"),
        };
        text += &format!("[[hosts]]\nname = \"{name}\"\nmachine = \"dgx-h100\"\n");
    }
    text += "[[scenarios]]\nname = \"1 GPU\"\n";
    text += "sender = { host = \"dgx-a\", nic = \"nic0\", gpu = \"gpu0\" }\n";
    text += "receiver = { host = \"dgx-b\", nic = \"nic0\", gpu = \"gpu0\" }\n";
    config::parse(&text, "scale.toml").unwrap()
}

/// One GPUDirect flow streaming 16 messages of `size` (a window of 4), jittered, fabric set up
/// included, on a study of 2 and of 128 hosts, counted in events: the time per event should
/// not depend on how many hosts the study defines (issue #22: at most 1.5x from 2 to 128).
#[divan::bench(args = [2, 128], consts = [4096, 1048576])]
fn one_flow_per_event_among_hosts<const SIZE: u64>(b: Bencher, hosts: usize) {
    let cfg = hosts_config(hosts);
    let topo = scenario::topology(&cfg);
    let flow = &cfg.scenarios[0].flows[0];
    let built =
        scenario::paths::plan(&cfg, flow, &topo, PathKind::GpuDirect, Op::WriteImm, SIZE).unwrap();
    let plans = [&built.plan];
    let opts = scenario::sim_options(&cfg, 1);
    let events = Fabric::new(&topo, &plans, opts).run(4, 16).stats.events;
    b.counter(ItemsCount::new(events)).bench(|| {
        let mut f = Fabric::new(&topo, &plans, opts);
        black_box(f.run(4, 16))
    });
}

/// `hosts` DGX H100-class hosts n0, n1, ... and one scenario whose flows `flows` lists as TOML
/// inline tables (the `flows = [...]` form), 1 MiB GPUDirect writes, 3 iterations, a window of
/// `window` and `stream` streamed messages per flow.
fn cluster_config(hosts: usize, flows: &[String], window: u32, stream: u32) -> Config {
    let mut text = format!(
        "name = \"cluster\"\n[sim]\niterations = 3\nmin_iterations = 3\nstream_window = {window}\n\
         stream_messages = {stream}\n[sweep]\nsizes = [\"1MiB\"]\npaths = [\"gpudirect\"]\n\
         ops = [\"write_imm\"]\n[[machines]]\nname = \"dgx\"\npreset = \"dgx-h100\"\n"
    );
    for h in 0..hosts {
        text += &format!("[[hosts]]\nname = \"n{h}\"\nmachine = \"dgx\"\n");
    }
    text += "[[scenarios]]\nname = \"cluster\"\nflows = [\n";
    for f in flows {
        text += &format!("  {f},\n");
    }
    text += "]\n";
    config::parse(&text, "cluster.toml").unwrap()
}

/// Times one whole point (model, iterations, streaming; or a workload's runs) of `cfg`'s first
/// scenario, GPUDirect writes with immediate of `size` bytes.
fn bench_point(b: Bencher, cfg: &Config, size: u64) {
    let topo = scenario::topology(cfg);
    let p = Point {
        scenario: 0,
        path: PathKind::GpuDirect,
        op: Op::WriteImm,
        size,
        seed: 1,
        variant: 0,
    };
    b.bench(|| black_box(scenario::simulate_point(cfg, &topo, &p).events));
}

/// `{ host = "nH", nic = "nicG", gpu = "gpuG" }`.
fn end(h: usize, g: usize) -> String {
    format!("{{ host = \"n{h}\", nic = \"nic{g}\", gpu = \"gpu{g}\" }}")
}

/// A flow of the `flows = [...]` form from GPU (and NIC) `g` of host `from` to the same of
/// host `to`, with `keys` (TOML, each followed by ", ") before its ends.
fn flow(keys: &str, from: usize, to: usize, g: usize) -> String {
    format!(
        "{{ {keys}sender = {}, receiver = {} }}",
        end(from, g),
        end(to, g)
    )
}

/// One whole point (model, iterations, streaming) of 256 concurrent 1 MiB flows: every GPU of
/// each of 32 hosts to the same GPU of the next host (issue #22: < 2 s on 2 cores; 62 s before
/// the per-host lookups and the incremental sharing).
#[divan::bench(sample_count = 2, sample_size = 1)]
fn point_of_256_flows_over_32_hosts(b: Bencher) {
    let flows: Vec<String> = (0..32)
        .flat_map(|h| (0..8).map(move |g| flow("", h, (h + 1) % 32, g)))
        .collect();
    let cfg = cluster_config(32, &flows, 16, 16);
    bench_point(b, &cfg, 1 << 20);
}

/// A workload of 2,048 one-message 1 MiB flows: every GPU of 32 hosts to the same GPU of each
/// of the next 8 hosts, all at once (a quarter of issue #22's 8,192 flows over 128 hosts, which
/// `gdrsim run` simulates in about 2.5 s; with doorbell posts, whose WQE fetches couple each
/// rail's transfers into one sharing group re-solved at every start and end, 83 s).
#[divan::bench(sample_count = 2, sample_size = 1)]
fn workload_of_2048_flows_over_32_hosts(b: Bencher) {
    let flows: Vec<String> = (0..32)
        .flat_map(|h| {
            (0..8).flat_map(move |g| {
                (1..=8).map(move |d| {
                    let keys = format!("name = \"f{h}.{g}.{d}\", messages = 1, ");
                    flow(&keys, h, (h + d) % 32, g)
                })
            })
        })
        .collect();
    let cfg = cluster_config(32, &flows, 1, 3);
    bench_point(b, &cfg, 1 << 20);
}

/// A ring workload of 128 ranks over 128 hosts (rail 0), 8 slices of 512 KiB each, every rank
/// reducing what it received before sending it on: one point.
#[divan::bench(sample_count = 2, sample_size = 1)]
fn ring_workload_of_128_ranks(b: Bencher) {
    let flows: Vec<String> = (0..128)
        .map(|i| {
            let keys = format!(
                "name = \"r{i}\", messages = 8, reduce = true, after = [{{ flow = \"r{}\", lag = 1 }}], ",
                (i + 127) % 128
            );
            flow(&keys, i, (i + 1) % 128, 0)
        })
        .collect();
    let cfg = cluster_config(128, &flows, 8, 3);
    bench_point(b, &cfg, 512 << 10);
}

/// configs/collectives.toml's machine (2 x DGX H100), its all-reduce as a ring on path auto at
/// `size`: one point (16 ranks, 16 channels; the protocol NCCL's tuner picks: LL128 at 16 MiB,
/// Simple at 256 MiB). The max-min solves of the collective's sharing groups dominate.
#[divan::bench(args = [16u64 << 20, 256 << 20], sample_count = 2, sample_size = 1)]
fn all_reduce_of_two_dgx_h100(b: Bencher, size: u64) {
    // The ring as before `auto` became the default (which takes the tree at 16 MiB).
    let text = include_str!("../configs/collectives.toml").replace(
        "collective = { kind = \"all_reduce\" }",
        "collective = { kind = \"all_reduce\", algorithm = \"ring\" }",
    );
    let text = text.as_str();
    let cfg = config::parse(text, "collectives.toml").unwrap();
    let topo = scenario::topology(&cfg);
    let op = Op::WriteImm;
    let p = Point::at(cfg.seed, 0, PathKind::Auto, op, size);
    b.bench(|| black_box(scenario::simulate_point(&cfg, &topo, &p).events));
}

/// configs/cluster-rail-optimized.toml with `nodes` DGX H100 nodes in its one rail unit.
fn rail_unit_of(nodes: usize) -> String {
    include_str!("../configs/cluster-rail-optimized.toml")
        .replace("\ncount = 16\n", &format!("\ncount = {nodes}\n"))
        .replace(
            "\nhosts_per_unit = 16 ",
            &format!("\nhosts_per_unit = {nodes} "),
        )
}

/// configs/cluster-rail-optimized.toml's NCCL all-to-all at `nodes` DGX H100 nodes (one rail
/// unit), 1 MiB a pair of ranks (8 chunks of 128 KiB): one point, the noise-free run and its
/// jittered repeat. 16 nodes is the shipped study and issue #23's figure (16,256 flows in one
/// sharing group, re-solves batched).
#[divan::bench(args = [4usize, 16], sample_count = 1, sample_size = 1)]
fn all_to_all_on_the_rail_fabric(b: Bencher, nodes: usize) {
    let text = rail_unit_of(nodes);
    let cfg = config::parse(&text, "cluster-rail-optimized.toml").unwrap();
    let topo = scenario::topology(&cfg);
    let (path, op, size) = (PathKind::GpuDirect, Op::WriteImm, (nodes as u64 * 8) << 20);
    let p = Point::at(cfg.seed, 0, path, op, size);
    b.bench(|| black_box(scenario::simulate_point(&cfg, &topo, &p).events));
}

/// configs/cluster-rail-optimized.toml's all-reduce as NCCL's ring at 1 GiB on `nodes` DGX
/// H100 nodes (one rail unit, PXN off): one point, the noise-free run and its jittered repeat
/// (16 nodes: 128 ranks, 2,048 flows of 508 slices of 256 KiB). Issue #24's figure: under
/// 10 s a point. Each GPU's memory holds NVLink and NIC transfers together, but cannot
/// saturate: the solver keeps such a memory out of the sharing groups (without that, about 5
/// minutes of CPU). NCCL P2P's tail flag is a wait of its idle crossing, not a unit (as a
/// unit, nearly half of the run's events: 10.6 s wall, now 7.0 s).
#[divan::bench(args = [4usize, 16], sample_count = 1, sample_size = 1)]
fn ring_all_reduce_on_the_rail_fabric(b: Bencher, nodes: usize) {
    let text = rail_unit_of(nodes).replace(
        "collective = { kind = \"all_reduce\" }",
        "collective = { kind = \"all_reduce\", algorithm = \"ring\" }",
    );
    let cfg = config::parse(&text, "cluster-rail-optimized.toml").unwrap();
    let topo = scenario::topology(&cfg);
    let p = Point::at(cfg.seed, 1, PathKind::GpuDirect, Op::WriteImm, 1 << 30);
    b.bench(|| black_box(scenario::simulate_point(&cfg, &topo, &p).events));
}

/// configs/cluster-rail-optimized.toml's all-reduce scenario run as a broadcast (root 0: each
/// of the 16 channels a chain through the 128 ranks, 2,032 flows of 117 LL128 steps, NCCL's
/// tuner's choice at 1 GiB) or a sendrecv (each rank to the next, 4 p2p channels a pair at 1 GiB: 512 flows of
/// 2,048 chunks of 128 KiB), 1 GiB on 16 DGX H100 nodes, NCCL's default path (PXN on): one
/// point, the noise-free run and its jittered repeat.
#[divan::bench(args = ["broadcast", "sendrecv"], sample_count = 1, sample_size = 1)]
fn chain_and_p2p_collectives_on_the_rail_fabric(b: Bencher, kind: &str) {
    let text = rail_unit_of(16).replace(
        "collective = { kind = \"all_reduce\" }",
        &format!("collective = {{ kind = \"{kind}\" }}"),
    );
    let cfg = config::parse(&text, "cluster-rail-optimized.toml").unwrap();
    let topo = scenario::topology(&cfg);
    let p = Point::at(cfg.seed, 1, PathKind::Auto, Op::WriteImm, 1 << 30);
    b.bench(|| black_box(scenario::simulate_point(&cfg, &topo, &p).events));
}

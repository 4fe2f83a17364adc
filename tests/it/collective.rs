//! NCCL collectives generated as flows that wait on flows: a closed-form oracle of the
//! smallest ring all-reduce, the rings NCCL builds through a DGX H100 (one NIC per channel,
//! entering at that NIC's GPU), nccl-tests' busbw in results.csv, and the config checks.

use crate::support::{check_refuses, csv_rows, point, run_study, scratch};
use gdrsim::config::{self, Config, PathKind};

/// `hosts` DGX H100-class hosts on one non-blocking switch, with `scenarios` appended.
fn nodes(hosts: usize, sizes: &str, scenarios: &str) -> String {
    let mut t = format!(
        "name = \"coll\"\nseed = 7\n[sim]\niterations = 3\nmin_iterations = 2\n[sweep]\n\
         sizes = [{sizes}]\npaths = [\"gpudirect\"]\nops = [\"write_imm\"]\n[output]\n\
         charts = []\n[network]\nswitch_hops = 1\n[[machines]]\nname = \"dgx\"\n\
         preset = \"dgx-h100\"\n"
    );
    for h in 0..hosts {
        t.push_str(&format!("[[hosts]]\nname = \"n{h}\"\nmachine = \"dgx\"\n"));
    }
    t.push_str(scenarios);
    t
}

fn parse(text: &str) -> Config {
    config::parse(text, "coll.toml").unwrap_or_else(|e| panic!("{e}"))
}

/// The smallest ring all-reduce: 2 ranks (GPU0 of two hosts), one channel, a 32 KiB buffer.
/// Derivation: each rank's share is 16 KiB, one slice; the ring sends 2(n-1) = 2 chunks a
/// rank. Chunk 0 is each rank's own data: both leave at 0 and arrive after T, the one-way time
/// of 16 KiB over the pair. Chunk 1 is what the rank received, reduced into its own (16 KiB
/// at the GPU's reduce rate inside NCCL's running kernel, no launch: R), so it leaves at T + R
/// and arrives at 2T + R: the completion time. The two directions share no link direction's
/// data (each carries the other's acknowledgements only): the oracle holds to 0.1% (exactly,
/// today). In LL the same buffer moves as 32 KiB of lines (16 bytes per 8 of data, one step
/// of 32 KiB of data holds the share): 2 T(32 KiB) + R.
#[test]
fn the_smallest_ring_all_reduce_takes_two_one_way_times_and_a_reduction() {
    oracle("simple", 16 << 10);
    oracle("ll", 32 << 10);
}

/// The oracle above in `protocol`, whose messages carry `wire` bytes for 16 KiB of data.
fn oracle(protocol: &str, wire: u64) {
    let pair = "[[scenarios]]\nname = \"pair\"\n\
        sender = { host = \"n0\", nic = \"nic0\", gpu = \"gpu0\" }\n\
        receiver = { host = \"n1\", nic = \"nic0\", gpu = \"gpu0\" }\n\
        bidirectional = true\n";
    let text = nodes(
        2,
        "\"16KiB\", \"32KiB\"",
        &format!(
            "[[scenarios]]\nname = \"ar\"\ncollective = {{ kind = \"all_reduce\", \
             algorithm = \"ring\", gpus_per_host = 1, channels = 1, protocol = \"{protocol}\" }}\n{pair}"
        ),
    );
    let cfg = parse(&text);
    let t = point(&cfg, "pair", PathKind::GpuDirect, wire)
        .summary
        .lat_model_ps;
    let r = cfg.hosts[0].machine.gpus[0].reduce.rate.tx_time(16 << 10);
    let ar = point(&cfg, "ar", PathKind::GpuDirect, 32 << 10).summary;
    let expect = 2 * t + r;
    eprintln!(
        "all-reduce {} ps; 2 x {t} + {r} = {expect} ps",
        ar.lat_model_ps
    );
    let err = crate::support::rel_diff(ar.lat_model_ps as f64, expect as f64);
    assert!(
        err < 0.001,
        "{} against {expect} ({:.3}%)",
        ar.lat_model_ps,
        err * 100.0
    );
    assert_eq!(ar.flows, 2);
    // The critical chain crosses both flows and holds the reduction; its shares sum exactly.
    assert!(ar.chain.iter().any(|c| c.stage.name() == "reduce"));
    let sum: u64 = ar.chain.iter().map(|c| c.critical_ps).sum();
    assert_eq!(sum, ar.lat_model_ps);
    // busbw is algbw x 2(n-1)/n = algbw for two ranks; algbw is the buffer over the mean time.
    let busbw = ar.busbw_gbps.expect("a collective has a busbw");
    assert!(
        (busbw - ar.bw_gbps).abs() < 1e-9,
        "{busbw} vs {}",
        ar.bw_gbps
    );
    let algbw = (32u64 << 10) as f64 / (ar.lat.mean_us * 1e3);
    assert!(
        (ar.bw_gbps - algbw).abs() / algbw < 1e-9,
        "{} vs {algbw}",
        ar.bw_gbps
    );
}

/// The smallest tree all-reduce, closed form: 2 ranks (GPU0 of two hosts), one channel (tree
/// 0: host n0's GPU is the root, n1's its only child), Simple, a 2 MiB buffer: NCCL's tree
/// cuts the channel's 2 MiB into M = 4 chunks of one 512 KiB step. Derivation: the up edge
/// (n1 -> n0) has nothing to wait for, so its 4 chunks are posted at once (4 < NCCL_STEPS in
/// flight) and stream: the last lands at S4, the completion of a 4-message stream of 512 KiB
/// over the pair = fill (one chunk's one-way time T) + 3 x the per-chunk time at the
/// bottleneck. The root's down edge (n0 -> n1) sends chunk k once chunk k arrived and was
/// reduced into its own (512 KiB at the GPU's reduce rate, R); chunks come down no faster than
/// they went up over the same kind of path in the other direction, so none queues behind the
/// one before, and the last lands one one-way time after it left: completion = S4 + R + T
/// (pipeline depth 2 edges, 4 chunks). The two directions share no link direction's data:
/// the oracle holds to 0.5%.
#[test]
fn the_smallest_tree_all_reduce_is_a_pipelined_stream_up_a_reduction_and_one_chunk_down() {
    let chunk: u64 = 512 << 10;
    let gpu0 = |h: &str| format!("{{ host = \"{h}\", nic = \"nic0\", gpu = \"gpu0\" }}");
    let scenarios = format!(
        "[[scenarios]]\nname = \"tree\"\ncollective = {{ kind = \"all_reduce\", \
         algorithm = \"tree\", gpus_per_host = 1, channels = 1, protocol = \"simple\" }}\n\
         [[scenarios]]\nname = \"one\"\nsender = {a}\nreceiver = {b}\n\
         [[scenarios]]\nname = \"stream\"\nflows = [\n  {{ name = \"s\", sender = {a}, \
         receiver = {b}, messages = 4 }},\n]\n",
        a = gpu0("n1"),
        b = gpu0("n0"),
    );
    let text = nodes(2, "\"512KiB\", \"2MiB\"", &scenarios).replace(
        "min_iterations = 2\n",
        "min_iterations = 2\nstream_window = 8\n",
    );
    let cfg = parse(&text);
    let t = point(&cfg, "one", PathKind::GpuDirect, chunk)
        .summary
        .lat_model_ps;
    let s4 = point(&cfg, "stream", PathKind::GpuDirect, chunk)
        .summary
        .lat_model_ps;
    let r = cfg.hosts[0].machine.gpus[0].reduce.rate.tx_time(chunk);
    let tree = point(&cfg, "tree", PathKind::GpuDirect, 4 * chunk).summary;
    let expect = s4 + r + t;
    eprintln!(
        "tree all-reduce {} ps; S4 {s4} + R {r} + T {t} = {expect} ps",
        tree.lat_model_ps
    );
    let err = crate::support::rel_diff(tree.lat_model_ps as f64, expect as f64);
    assert!(
        err < 0.005,
        "{} against {expect} ({:.3}%)",
        tree.lat_model_ps,
        err * 100.0
    );
    // Two flows (one edge, both directions); the chain crosses both and holds the reduction.
    assert_eq!(tree.flows, 2);
    assert!(tree.chain.iter().any(|c| c.stage.name() == "reduce"));
    let sum: u64 = tree.chain.iter().map(|c| c.critical_ps).sum();
    assert_eq!(sum, tree.lat_model_ps);
    // busbw = algbw x 2(n-1)/n, as for the ring.
    let busbw = tree.busbw_gbps.expect("a collective has a busbw");
    assert!((busbw - tree.bw_gbps).abs() < 1e-9);
}

/// `algorithm = "auto"` on 2 x DGX H100 runs, per size, the flows of what NCCL's tuner picks:
/// the tree's at 1 MiB (16 channels x 15 edges x 2 directions = 480 flows), the ring's at 128
/// MiB (16 channels x 16 edges = 256); `"tree"` on another kind is refused with the key.
#[test]
fn auto_runs_the_tree_or_the_ring_per_size() {
    let text = nodes(
        2,
        "\"1MiB\", \"128MiB\"",
        "[[scenarios]]\nname = \"ar\"\ncollective = { kind = \"all_reduce\", algorithm = \"auto\" }\n",
    )
    .replace("paths = [\"gpudirect\"]", "paths = [\"auto\"]");
    let cfg = parse(&text);
    let small = point(&cfg, "ar", PathKind::Auto, 1 << 20).summary;
    assert_eq!(small.flows, 480);
    let large = point(&cfg, "ar", PathKind::Auto, 128 << 20).summary;
    assert_eq!(large.flows, 256);
    let dir = scratch("collective", "tree-refused");
    check_refuses(
        &dir,
        "tree-gather",
        &nodes(
            2,
            "\"1MiB\"",
            "[[scenarios]]\nname = \"x\"\ncollective = { kind = \"all_gather\", algorithm = \"tree\" }\n",
        ),
        "scenarios[0].collective.algorithm",
        "all_reduce only",
    );
}

/// Across DGX H100 nodes, channel c's ring uses NIC c mod 8 on both sides of every node
/// boundary and enters each node at that NIC's own GPU (GPU c), leaving it from GPU c - 1:
/// NCCL's rings (one rail per channel). 16 channels by default (NCCL's for 8 NICs), 16 ranks:
/// 256 flows. results.csv has busbw = algbw x 2(n-1)/n.
#[test]
fn rings_cross_nodes_on_one_rail_per_channel_and_report_busbw() {
    let text = nodes(
        2,
        "\"1MiB\"",
        "[[scenarios]]\nname = \"ar\"\ncollective = { kind = \"all_reduce\" }\n",
    );
    let (_, out) = run_study("collective", "rails", &text);
    let rows = csv_rows(&out.join("results.csv"));
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(r["flows"], "256");
    let bw: f64 = r["bw_GBps"].parse().unwrap();
    let busbw: f64 = r["busbw_GBps"].parse().unwrap();
    assert!(
        (busbw - bw * 30.0 / 16.0).abs() < 1e-4 * busbw,
        "{bw} {busbw}"
    );
    assert_eq!(r["workload_us"], r["lat_model_us"]);
    // report.md says what busbw is and what limits it, row by row.
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    let line = "| ar | gpudirect | 1 MiB |";
    assert!(report.contains("**Collectives**"), "{report}");
    let row = report
        .lines()
        .find(|l| l.starts_with(line))
        .expect("a row for the point");
    assert!(row.ends_with(&format!("| {} |", r["bottleneck"])), "{row}");
    let flows = csv_rows(&out.join("flows.csv"));
    assert_eq!(flows.len(), 256);
    // The edges that leave a node: 2 per channel, each from GPU c-1 to GPU c over NIC c.
    let crossing: Vec<_> = flows
        .iter()
        .filter(|f| f["sender"].contains(" via "))
        .collect();
    assert_eq!(crossing.len(), 32);
    for c in 0..16 {
        let nic = c % 8;
        let (from, to) = ((nic + 7) % 8, nic);
        for (a, b) in [(0, 1), (1, 0)] {
            let want = (
                format!("n{a}/gpu{from} via nic{nic}"),
                format!("n{b}/gpu{to} via nic{nic}"),
            );
            let n = crossing
                .iter()
                .filter(|f| (f["sender"].clone(), f["receiver"].clone()) == want)
                .count();
            // Channels c and c + 8 share the rail.
            assert_eq!(n, 2, "channel {c}: {want:?}");
        }
    }
}

/// An all-to-all of two ranks is two flows, one each way, each carrying its share (size / n)
/// in NCCL's p2p chunks with nothing gating them: exactly the workload of those two flows
/// written by hand (8 in flight). 1 MiB a rank: 512 KiB a pair, under eight chunks of 128 KiB,
/// so chunks of 64 KiB, 8 of them.
#[test]
fn an_all_to_all_is_every_pair_sending_its_share_in_p2p_chunks() {
    let a = "{ host = \"n0\", nic = \"nic0\", gpu = \"gpu0\" }";
    let b = "{ host = \"n1\", nic = \"nic0\", gpu = \"gpu0\" }";
    let text = nodes(
        2,
        "\"64KiB\", \"1MiB\"",
        &format!(
            "[[scenarios]]\nname = \"a2a\"\ncollective = {{ kind = \"all_to_all\", \
             gpus_per_host = 1 }}\n[[scenarios]]\nname = \"by hand\"\nflows = [\n\
             {{ name = \"x\", sender = {a}, receiver = {b}, messages = 8 }},\n\
             {{ name = \"y\", sender = {b}, receiver = {a}, messages = 8 }},\n]\n"
        ),
    )
    .replace("[sim]\n", "[sim]\nstream_window = 8\n");
    let cfg = parse(&text);
    let a2a = point(&cfg, "a2a", PathKind::GpuDirect, 1 << 20).summary;
    let hand = point(&cfg, "by hand", PathKind::GpuDirect, 64 << 10).summary;
    assert_eq!(a2a.flows, 2);
    assert_eq!(a2a.lat_model_ps, hand.lat_model_ps);
    // busbw = algbw x (n-1)/n = half of it.
    let busbw = a2a.busbw_gbps.unwrap();
    assert!((busbw - a2a.bw_gbps / 2.0).abs() < 1e-9 * busbw.max(1.0));
}

/// NCCL's kernel stores each peer's data in thread blocks of its own, so an all-to-all inside
/// one DGX H100 moves each GPU's data to its seven peers side by side, and every GPU's
/// NVLink (18 links x 25 GB/s = 450 GB/s each way through the NVSwitch) carries its share at
/// once. busbw (algbw x 7/8) is each GPU's payload rate out: at 8 MiB it must be within the
/// links' 450 GB/s and above 300 (the model's NVLink payload ceiling is about 89% of the
/// links, 400 GB/s, row N10). With each GPU's stores in one queue, peer after peer, every GPU
/// started with the same peer and waited on its one NVLink in: 97 GB/s.
#[test]
fn a_gpus_stores_to_different_peers_go_side_by_side() {
    let text = nodes(
        1,
        "\"8MiB\"",
        "[[scenarios]]\nname = \"a2a\"\ncollective = { kind = \"all_to_all\", gpus_per_host = 8 }\n",
    );
    let s = point(&parse(&text), "a2a", PathKind::GpuDirect, 8 << 20).summary;
    assert_eq!(s.flows, 56);
    let busbw = s.busbw_gbps.unwrap();
    assert!(busbw > 300.0 && busbw <= 450.0, "busbw {busbw} GB/s");
}

/// A collective's mistakes are refused by `check` with the key and what it expects.
#[test]
fn collective_mistakes_are_refused_with_the_key() {
    let dir = scratch("collective", "refused");
    let with = |c: &str| {
        nodes(
            2,
            "\"1MiB\"",
            &format!("[[scenarios]]\nname = \"x\"\ncollective = {c}\n"),
        )
    };
    check_refuses(
        &dir,
        "gpus",
        &with("{ kind = \"all_reduce\", gpus_per_host = 9 }"),
        "scenarios[0].collective.gpus_per_host",
        "1 to 8",
    );
    check_refuses(
        &dir,
        "host",
        &with("{ kind = \"all_gather\", hosts = [\"n0\", \"n7\"] }"),
        "scenarios[0].collective.hosts[1]",
        "one of the [[hosts]] (n0, n1)",
    );
    check_refuses(
        &dir,
        "channels",
        &with("{ kind = \"all_reduce\", channels = 0 }"),
        "scenarios[0].collective.channels",
        "\"auto\" or 1 to 64",
    );
    check_refuses(
        &dir,
        "one-rank",
        &with("{ kind = \"reduce_scatter\", hosts = [\"n0\"], gpus_per_host = 1 }"),
        "scenarios[0].collective.gpus_per_host",
        "at least two ranks",
    );
    check_refuses(
        &dir,
        "staged",
        &with("{ kind = \"all_reduce\" }")
            .replace("paths = [\"gpudirect\"]", "paths = [\"staged\"]"),
        "sweep.paths",
        "NCCL never stages through cudaMemcpy",
    );
    check_refuses(
        &dir,
        "kind",
        &with("{ kind = \"reduce\" }"),
        "scenarios[0].collective.kind",
        "all_reduce",
    );
    check_refuses(
        &dir,
        "root-range",
        &with("{ kind = \"broadcast\", root = 16 }"),
        "scenarios[0].collective.root",
        "a rank from 0 to 15",
    );
    check_refuses(
        &dir,
        "buffsize",
        &with("{ kind = \"all_reduce\", buffsize = \"1KiB\" }"),
        "scenarios[0].collective.buffsize",
        "a size from 65536 to 1073741824 bytes",
    );
    check_refuses(
        &dir,
        "root-kind",
        &with("{ kind = \"all_reduce\", root = 1 }"),
        "scenarios[0].collective.root",
        "only a broadcast has one",
    );
}

/// The smallest broadcast, closed form: 2 ranks (GPU0 of two hosts), one channel, Simple, a 2
/// MiB buffer from the root. The chain is one edge, root to the other rank (the ring's edge
/// into the root carries nothing: no flow), moving the channel's 2 MiB in chunks of one 512
/// KiB step (BROADCAST_CHUNKSTEPS 1), 8 in flight, nothing to wait for: exactly a flow of 4
/// messages of 512 KiB written by hand (window 8). With `root = 1` the one flow runs the other
/// way.
#[test]
fn the_smallest_broadcast_is_one_stream_from_the_root() {
    let a = "{ host = \"n0\", nic = \"nic0\", gpu = \"gpu0\" }";
    let b = "{ host = \"n1\", nic = \"nic0\", gpu = \"gpu0\" }";
    let text = nodes(
        2,
        "\"512KiB\", \"2MiB\"",
        &format!(
            "[[scenarios]]\nname = \"bcast\"\ncollective = {{ kind = \"broadcast\", \
             gpus_per_host = 1, channels = 1, protocol = \"simple\" }}\n\
             [[scenarios]]\nname = \"bcast1\"\ncollective = {{ kind = \"broadcast\", \
             gpus_per_host = 1, channels = 1, protocol = \"simple\", root = 1 }}\n\
             [[scenarios]]\nname = \"by hand\"\nflows = [\n\
             {{ name = \"x\", sender = {a}, receiver = {b}, messages = 4 }},\n]\n"
        ),
    )
    .replace("[sim]\n", "[sim]\nstream_window = 8\n");
    let cfg = parse(&text);
    let bcast = point(&cfg, "bcast", PathKind::GpuDirect, 2 << 20).summary;
    let hand = point(&cfg, "by hand", PathKind::GpuDirect, 512 << 10).summary;
    assert_eq!(bcast.flows, 1);
    assert_eq!(bcast.lat_model_ps, hand.lat_model_ps);
    assert!(
        bcast.flow_rows[0].sender.starts_with("n0/"),
        "{}",
        bcast.flow_rows[0].sender
    );
    // busbw = algbw (factor 1).
    assert_eq!(bcast.busbw_gbps, Some(bcast.bw_gbps));
    let other = point(&cfg, "bcast1", PathKind::GpuDirect, 2 << 20).summary;
    assert_eq!(other.flows, 1);
    assert!(
        other.flow_rows[0].sender.starts_with("n1/"),
        "{}",
        other.flow_rows[0].sender
    );
}

/// A broadcast over 2 x DGX H100 (16 ranks, 16 channels) is each channel's ring less the edge
/// into the root: 16 x 15 = 240 flows. Every byte of the buffer reaches the other node over
/// the network, whose 8 NICs carry at most 8 x 50 GB/s one way, and every GPU but the root
/// takes the whole buffer in over its NVLink (at most 450 GB/s): busbw (= algbw) stays under
/// both, and at 1 GiB on NCCL's default path (PXN relaying each ring's exit) above half of
/// the NICs' (the chain pipelines its 512 KiB steps).
#[test]
fn a_broadcast_chains_every_rank_and_stays_under_the_nics() {
    let text = nodes(
        2,
        "\"1GiB\"",
        "[[scenarios]]\nname = \"b\"\ncollective = { kind = \"broadcast\", root = 3 }\n",
    )
    .replace("paths = [\"gpudirect\"]", "paths = [\"auto\"]");
    let s = point(&parse(&text), "b", PathKind::Auto, 1 << 30).summary;
    assert_eq!(s.flows, 240);
    let busbw = s.busbw_gbps.unwrap();
    assert!(busbw > 200.0 && busbw <= 400.0, "busbw {busbw} GB/s");
}

/// A sendrecv of two ranks (GPU0 of two hosts: p2p channels per peer max(1 NIC, ceil(48 GB/s
/// / 14)) = 4) at 1 MiB stripes each direction over 4 channels of 256 KiB, each 2 chunks of
/// 128 KiB (1 MiB is not under 8 chunks): exactly the 8 flows written by hand, in the same
/// order (channel by channel, rank by rank), 2 messages each, 8 in flight. At 8 B: LL, one
/// channel a direction, 2 flows.
#[test]
fn a_sendrecv_stripes_each_pair_over_its_p2p_channels() {
    let a = "{ host = \"n0\", nic = \"nic0\", gpu = \"gpu0\" }";
    let b = "{ host = \"n1\", nic = \"nic0\", gpu = \"gpu0\" }";
    let mut hand = String::from("[[scenarios]]\nname = \"by hand\"\nflows = [\n");
    for c in 0..4 {
        hand.push_str(&format!(
            "{{ name = \"x{c}\", sender = {a}, receiver = {b}, messages = 2 }},\n\
             {{ name = \"y{c}\", sender = {b}, receiver = {a}, messages = 2 }},\n"
        ));
    }
    hand.push_str("]\n");
    let text = nodes(
        2,
        "\"8B\", \"128KiB\", \"1MiB\"",
        &format!(
            "[[scenarios]]\nname = \"sr\"\ncollective = {{ kind = \"sendrecv\", \
             gpus_per_host = 1 }}\n{hand}"
        ),
    )
    .replace("[sim]\n", "[sim]\nstream_window = 8\n");
    let cfg = parse(&text);
    let sr = point(&cfg, "sr", PathKind::GpuDirect, 1 << 20).summary;
    let by_hand = point(&cfg, "by hand", PathKind::GpuDirect, 128 << 10).summary;
    assert_eq!(sr.flows, 8);
    assert_eq!(sr.lat_model_ps, by_hand.lat_model_ps);
    assert_eq!(sr.busbw_gbps, Some(sr.bw_gbps));
    assert_eq!(point(&cfg, "sr", PathKind::GpuDirect, 8).summary.flows, 2);
}

/// A sendrecv over 2 x DGX H100: rank r sends to r + 1, so two pairs cross the network (GPU 7
/// to the other node's GPU 0, both ways), each through one NIC (PXN keeps it on the
/// receiver's rail): at 1 GiB busbw is that NIC's, under its 50 GB/s and above 45. Inside
/// one node each pair has up to 32 channels of NVLink: busbw above 300 GB/s and under the
/// 450 GB/s of a GPU's NVLinks.
#[test]
fn a_sendrecv_is_bound_by_its_slowest_pair() {
    let text = nodes(
        2,
        "\"1GiB\"",
        "[[scenarios]]\nname = \"sr\"\ncollective = { kind = \"sendrecv\" }\n\
         [[scenarios]]\nname = \"one\"\ncollective = { kind = \"sendrecv\", hosts = [\"n0\"] }\n",
    )
    .replace("paths = [\"gpudirect\"]", "paths = [\"auto\"]");
    let cfg = parse(&text);
    let s = point(&cfg, "sr", PathKind::Auto, 1 << 30).summary;
    let busbw = s.busbw_gbps.unwrap();
    assert!(busbw > 45.0 && busbw <= 50.0, "busbw {busbw} GB/s");
    let limit = s.bottleneck.to_string();
    assert!(limit.contains("nic"), "{limit}");
    let one = point(&cfg, "one", PathKind::Auto, 1 << 30).summary;
    assert_eq!(one.flows, 8 * 32);
    let busbw = one.busbw_gbps.unwrap();
    assert!(busbw > 300.0 && busbw <= 450.0, "busbw {busbw} GB/s");
}

/// Width and height of a PNG, decoded (so the file is a whole, valid image).
fn png_size(path: &std::path::Path) -> (u32, u32) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = png::Decoder::new(file).read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    (info.width, info.height)
}

/// A study with a collective writes the busbw chart beside the bandwidth chart it lists (SVG
/// and PNG, the run's 1600 x 1000, busbw against size with the collective's line), and
/// report.md lists it with the other charts; the same study without its collective (one
/// point-to-point scenario) writes no busbw chart.
#[test]
fn a_collective_study_writes_a_busbw_chart_and_others_do_not() {
    let pair = "[[scenarios]]\nname = \"pair\"\n\
        sender = { host = \"n0\", nic = \"nic0\", gpu = \"gpu0\" }\n\
        receiver = { host = \"n1\", nic = \"nic0\", gpu = \"gpu0\" }\n";
    let ar = "[[scenarios]]\nname = \"ar\"\ncollective = { kind = \"all_reduce\", \
        gpus_per_host = 2, channels = 2 }\n";
    let charts = |t: String| {
        t.replace(
            "charts = []",
            "charts = [\"latency\", \"bandwidth\"]\nformats = [\"svg\", \"png\"]",
        )
    };
    let (_, out) = run_study(
        "collective",
        "busbw-chart",
        &charts(nodes(2, "\"64KiB\", \"1MiB\"", &format!("{ar}{pair}"))),
    );
    let svg = std::fs::read_to_string(out.join("busbw.svg")).unwrap();
    let t = svg.trim();
    assert!(t.starts_with("<svg") || t.starts_with("<?xml"), "not SVG");
    assert!(t.ends_with("</svg>"), "busbw.svg is truncated");
    assert!(svg.contains("width=\"1600\"") && svg.contains("height=\"1000\""));
    for text in ["busbw (GB/s)", "64 KiB", "1 MiB", "ar", "gpudirect"] {
        assert!(svg.contains(text), "busbw.svg lacks {text:?}");
    }
    assert_eq!(png_size(&out.join("busbw.png")), (1600, 1000));
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains("### busbw") && report.contains("](busbw.png)"),
        "report.md lists the chart"
    );
    let (_, plain) = run_study(
        "collective",
        "no-busbw-chart",
        &charts(nodes(2, "\"64KiB\", \"1MiB\"", pair)),
    );
    assert!(plain.join("bandwidth.png").is_file());
    for f in ["busbw.svg", "busbw.png"] {
        assert!(!plain.join(f).exists(), "{f} without a collective");
    }
    let report = std::fs::read_to_string(plain.join("report.md")).unwrap();
    assert!(!report.contains("busbw."), "report.md of no collective");
}

/// On DGX A100 nodes (the `dgx-a100` preset: two GPUs and two NICs per switch complex, every
/// GPU PXB to both NICs of its complex) NCCL's ring leaves a node from the entry GPU's partner,
/// which the NIC reads by GPUDirect, so NCCL's default path (`auto`) needs no PXN relay: channel
/// c enters at GPU c (NIC c's own) and leaves from GPU c xor 1 through NIC c.
#[test]
fn dgx_a100_rings_leave_from_the_partner_gpu_without_pxn() {
    let text = format!(
        "name = \"a100\"\nseed = 7\n[sim]\niterations = 2\nmin_iterations = 2\n[sweep]\n\
         sizes = [\"1MiB\"]\npaths = [\"auto\"]\nops = [\"write_imm\"]\n[output]\ncharts = []\n\
         [network]\nswitch_hops = 1\n[[machines]]\nname = \"dgx\"\npreset = \"dgx-a100\"\n\
         [[hosts]]\nname = \"n0\"\nmachine = \"dgx\"\n[[hosts]]\nname = \"n1\"\nmachine = \"dgx\"\n\
         {}",
        "[[scenarios]]\nname = \"ar\"\ncollective = { kind = \"all_reduce\", algorithm = \"ring\", channels = 8 }\n"
    );
    let (_, out) = run_study("collective", "a100-rings", &text);
    let flows = csv_rows(&out.join("flows.csv"));
    assert_eq!(flows.len(), 8 * 16);
    let crossing: Vec<_> = flows
        .iter()
        .filter(|f| f["sender"].contains(" via "))
        .collect();
    assert_eq!(crossing.len(), 16);
    for c in 0..8 {
        for (a, b) in [(0, 1), (1, 0)] {
            let want = (
                format!("n{a}/gpu{} via mlx5_{c}", c ^ 1),
                format!("n{b}/gpu{c} via mlx5_{c}"),
            );
            let f = crossing
                .iter()
                .find(|f| (f["sender"].clone(), f["receiver"].clone()) == want)
                .unwrap_or_else(|| panic!("channel {c}: no flow {want:?}"));
            assert_eq!(f["class"], "PXB", "{f:?}");
            assert_eq!(f["effective_path"], "gpudirect", "{f:?}");
        }
    }
}

/// `gdrsim params` of a study with a collective lists NCCL's built-in channel defaults last
/// (2 rings per NIC across nodes, 3 per GPU in one node, both estimates with their sources),
/// `--estimates` keeps them, and a study without collectives lists none.
#[test]
fn params_lists_the_channel_defaults_of_a_study_with_collectives() {
    let root = env!("CARGO_MANIFEST_DIR");
    let coll = format!("{root}/configs/collectives.toml");
    for args in [
        vec!["params", coll.as_str()],
        vec!["params", coll.as_str(), "--estimates"],
    ] {
        let text = crate::support::ok(&crate::support::gdrsim(&args), "params");
        // The two rows come last, before the closing count of parameters.
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("nccl.")).collect();
        let last: Vec<&str> = text.lines().rev().skip(1).take(2).collect();
        assert_eq!(lines, [last[1], last[0]], "{text}");
        for (line, (key, value)) in lines.iter().zip([
            ("nccl.channels_per_nic", "2"),
            ("nccl.channels_per_gpu", "3"),
        ]) {
            let f: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(&f[..4], [key, value, "count", "estimate:"], "{line}");
            assert!(line.contains("NCCL 2.30"), "{line}");
        }
    }
    let plain = crate::support::ok(&crate::support::gdrsim(&["params"]), "params");
    assert!(!plain.contains("nccl.channels"), "{plain}");
}

/// NCCL flushes a GPUDirect receive for its Simple protocol only (`src/transport/net.cc`,
/// `recvProxyProgress`: `p == NCCL_PROTO_SIMPLE && needFlush`): on two DGX A100 (compute
/// capability 8.0, which needs the flush) a Simple ring all-reduce's cross-node receives flush
/// and an LL or LL128 one's do not, so LL runs without the flush's loopback read and is no
/// slower than it would be with it.
#[test]
fn a100_rings_flush_their_receives_in_simple_only() {
    let ring = |protocol: &str| {
        let text = nodes(2, "\"64KiB\"", "")
            .replace("preset = \"dgx-h100\"", "preset = \"dgx-a100\"")
            + &format!(
                "[[scenarios]]\nname = \"ar\"\ncollective = {{ kind = \"all_reduce\", \
                 algorithm = \"ring\", gpus_per_host = 1, channels = 1, protocol = \
                 \"{protocol}\" }}\n"
            );
        let cfg = parse(&text);
        let s = point(&cfg, "ar", PathKind::GpuDirect, 64 << 10).summary;
        let flushes = s.stages.iter().any(|r| r.stage.name() == "flush");
        (flushes, s.lat_model_ps)
    };
    let (simple_flushes, _) = ring("simple");
    assert!(simple_flushes, "Simple's receives into an A100 flush");
    for protocol in ["ll", "ll128"] {
        let (flushes, _) = ring(protocol);
        assert!(!flushes, "{protocol}'s receives do not flush");
    }
}

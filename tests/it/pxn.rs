//! Issue #10, NCCL's PXN as a path (`pxn`): on two DGX H100 nodes, GPU0 sending through NIC4
//! (SYS: across the sockets) hands each chunk over NVLink to GPU4, next to NIC4, whose proxy
//! posts the RDMA from there; driven as a user runs it:
//!
//! - the far placement relays (effective path `pxn`, the reason naming the relay and its
//!   classes) and beats GPUDirect across the sockets in bandwidth: it reaches the wire's
//!   ceiling, which the NIC's reads of a far GPU (under its read window over the longer round
//!   trip) do not;
//! - at 8 B the hand-over is the relay stage of stages.csv, and it is what it must be: the
//!   NVLink store's transit, the flag's transit into the proxy's host memory and one poll
//!   (jitter off, computed here from the topology's channels);
//! - where the GPU is the NIC's nearest, or no NVLink joins it to that GPU (a PCIe-only
//!   server), `pxn` sends by GPUDirect and says why.

use std::collections::BTreeMap;

use crate::support::{csv_rows, run_study};
use gdrsim::topology::{ChannelId, Flow, HostTopo, NodeKind, Place};

/// A study of two hosts of `preset`: one scenario per (name, sender NIC, sender GPU, receiver
/// NIC, receiver GPU), paths gpudirect and pxn, jitter off.
fn study(preset: &str, scenarios: &[(&str, &str, &str, &str, &str)], sizes: &str) -> String {
    let mut t = format!(
        "name = \"pxn\"\n[sim]\njitter = false\niterations = 3\nstream_messages = 24\n\
         [sweep]\nsizes = {sizes}\npaths = [\"gpudirect\", \"pxn\"]\n\
         [[hosts]]\nname = \"a\"\npreset = \"{preset}\"\n\
         [[hosts]]\nname = \"b\"\npreset = \"{preset}\"\n"
    );
    for (name, sn, sg, rn, rg) in scenarios {
        t.push_str(&format!(
            "[[scenarios]]\nname = \"{name}\"\nsender = {{ host = \"a\", nic = \"{sn}\", gpu = \
             \"{sg}\" }}\nreceiver = {{ host = \"b\", nic = \"{rn}\", gpu = \"{rg}\" }}\n"
        ));
    }
    t
}

/// Runs `text`; the results rows and the stages rows.
type Rows = Vec<BTreeMap<String, String>>;
fn run(name: &str, text: &str) -> (Rows, Rows, gdrsim::config::Config) {
    let (c, out) = run_study("pxn", name, text);
    let cfg = gdrsim::config::load(&c).unwrap();
    (
        csv_rows(&out.join("results.csv")),
        csv_rows(&out.join("stages.csv")),
        cfg,
    )
}

fn row<'a>(rows: &'a Rows, scenario: &str, path: &str, size: &str) -> &'a BTreeMap<String, String> {
    rows.iter()
        .find(|r| r["scenario"] == scenario && r["path"] == path && r["size_bytes"] == size)
        .unwrap_or_else(|| panic!("no row {scenario} {path} {size}"))
}

fn num(r: &BTreeMap<String, String>, col: &str) -> f64 {
    r[col]
        .parse()
        .unwrap_or_else(|_| panic!("{col}: {:?}", r[col]))
}

#[test]
fn a_far_gpu_relays_through_the_nics_gpu_and_reaches_the_wire_rate() {
    let text = study(
        "dgx-h100",
        &[("far", "nic4", "gpu0", "nic4", "gpu4")],
        "[\"8B\", \"64MiB\"]",
    );
    let (rows, stages, cfg) = run("far", &text);
    let pxn = row(&rows, "far", "pxn", "67108864");
    assert_eq!(pxn["effective_path"], "pxn");
    assert_eq!(pxn["class"], "SYS");
    assert_eq!(
        pxn["reason"],
        "sender: gpu0 -> NV18 -> gpu4, PIX to nic4 -> PXN"
    );
    let direct = row(&rows, "far", "gpudirect", "67108864");
    assert_eq!(direct["effective_path"], "gpudirect");
    // The wire's payload ceiling: NDR's data rate, MTU-sized packets with their headers.
    let nic = &cfg.hosts[0].machine.nics[4];
    let wire =
        nic.wire_rate.bps() as f64 / 8e9 * nic.mtu as f64 / (nic.mtu + nic.packet_overhead) as f64;
    let (bw_pxn, bw_direct) = (num(pxn, "bw_GBps"), num(direct, "bw_GBps"));
    assert!(
        bw_pxn <= wire && bw_pxn > 0.98 * wire,
        "pxn {bw_pxn} at the wire {wire}"
    );
    assert!(
        bw_direct < 0.8 * wire,
        "a far GPUDirect read {bw_direct} under {wire}"
    );
    // The socket link's P2P read cap of the preset's Sapphire Rapids (22 GB/s, row P11) binds
    // before the NIC's read window over the long round trip.
    assert!(direct["bottleneck"].contains("p2p-read"), "{direct:?}");

    // 8 B: the relay stage is the NVLink store, the flag into cpu1's DRAM and one poll.
    let topo = gdrsim::scenario::topology(&cfg);
    let h = &topo.hosts[0];
    let gpu = |g: usize| Place::Device(h.node_index(NodeKind::Gpu(g)));
    let latency =
        |chs: &[ChannelId]| -> u64 { chs.iter().map(|&c| topo.channels[c.index()].latency).sum() };
    let nv = h.route(gpu(0), gpu(4), Flow::Write).unwrap();
    let socket = h.nodes[h.node_index(NodeKind::Nic(4))].socket;
    let flag = h.route(gpu(0), Place::Memory(socket), Flow::Write).unwrap();
    let mem = |g: usize| topo.channels[h.gpu_memory[g].index()].latency;
    let dram = topo.channels[h.dram[socket].index()].latency;
    let expected = mem(0)
        + latency(&nv.channels)
        + mem(4)
        + latency(&flag.channels)
        + dram
        + cfg.hosts[0].machine.cpu.poll;
    let relay = stages
        .iter()
        .find(|r| r["path"] == "pxn" && r["size_bytes"] == "8" && r["stage"] == "relay")
        .expect("a relay stage");
    let got = num(relay, "critical_us") * 1e6;
    // Serialisation of an 8-byte store and a 16-byte flag adds a few ps per channel.
    assert!(
        got >= expected as f64 && got < expected as f64 + 5_000.0,
        "relay {got} ps against {expected} ps"
    );
    // The stages tile the latency.
    let small = row(&rows, "far", "pxn", "8");
    let sum: f64 = stages
        .iter()
        .filter(|r| r["path"] == "pxn" && r["size_bytes"] == "8")
        .map(|r| num(r, "critical_us"))
        .sum();
    assert!((sum - num(small, "lat_model_us")).abs() < 1e-5, "{sum}");
}

#[test]
fn without_a_relay_pxn_sends_by_gpudirect_and_says_why() {
    let text = study(
        "dgx-h100",
        &[("near", "nic0", "gpu0", "nic0", "gpu0")],
        "[\"4KiB\"]",
    );
    let (rows, _, _) = run("near", &text);
    let (pxn, direct) = (
        row(&rows, "near", "pxn", "4096"),
        row(&rows, "near", "gpudirect", "4096"),
    );
    assert_eq!(pxn["effective_path"], "gpudirect");
    assert_eq!(
        pxn["reason"],
        "sender: no PXN relay (gpu0 is nic0's nearest GPU (PIX)) -> GPUDirect"
    );
    assert_eq!(pxn["lat_model_us"], direct["lat_model_us"]);
    // A PCIe-only server: GPU0 (socket 0) sending through NIC2 (socket 1) has no NVLink to
    // NIC2's GPUs.
    let text = study(
        "pcie-gen5-2s",
        &[("far", "nic2", "gpu0", "nic2", "gpu4")],
        "[\"4KiB\"]",
    );
    let (rows, _, _) = run("pcie", &text);
    let pxn = row(&rows, "far", "pxn", "4096");
    assert_eq!(pxn["effective_path"], "gpudirect");
    assert!(
        pxn["reason"].starts_with("sender: no PXN relay (no NVLink from gpu0 to gpu4"),
        "{pxn:?}"
    );
}

/// `auto` is what NCCL does: PXN by default on the far placement, and without it
/// (`pxn = false`, as NCCL_PXN_DISABLE=1) host staging on the far sending side, GPUDirect on
/// the receiving one. `auto`'s GPUDirect receiver is NCCL's, which `pxn`'s is not: its kernel
/// sees each chunk at its load of the proxy's tail (stage `kernel_load`), the one difference.
#[test]
fn auto_relays_as_nccl_does_unless_pxn_is_off() {
    let text = study(
        "dgx-h100",
        &[("far", "nic4", "gpu0", "nic4", "gpu4")],
        "[\"4KiB\"]",
    )
    .replace("\"gpudirect\", \"pxn\"", "\"pxn\", \"auto\"");
    let (rows, stages, _) = run("auto-on", &text);
    let (auto, pxn) = (
        row(&rows, "far", "auto", "4096"),
        row(&rows, "far", "pxn", "4096"),
    );
    let load = |path: &str| {
        stages
            .iter()
            .find(|r| r["path"] == path && r["stage"] == "kernel_load")
            .map(|r| num(r, "critical_us"))
    };
    assert_eq!(load("pxn"), None);
    let tail = load("auto").expect("auto's receiver loads the proxy's tail");
    let extra = num(auto, "lat_model_us") - num(pxn, "lat_model_us");
    assert!((extra - tail).abs() < 1e-6, "{extra} us against {tail} us");
    assert_eq!(auto["effective_path"], "pxn");
    assert!(
        auto["reason"]
            .starts_with("sender: gpu0 -> NV18 -> gpu4, PIX to nic4 -> PXN; receiver: PIX within"),
        "{auto:?}"
    );
    let (rows, _, _) = run(
        "auto-off",
        &text.replace("jitter = false\n", "jitter = false\npxn = false\n"),
    );
    let auto = row(&rows, "far", "auto", "4096");
    assert_eq!(auto["effective_path"], "nccl_host_send_gpudirect_recv");
    assert!(
        auto["reason"].starts_with("sender: SYS beyond NET_GDR_LEVEL PXB -> nccl_host"),
        "{auto:?}"
    );
}

/// A relaying sender facing a receiver that stages (auto: the receiver's GPU is SYS to its NIC)
/// stages chunk by chunk through a ring, as pipelined staging does: its setup is the ring's,
/// `pipeline_depth` chunk buffers, not one message-sized buffer per message in flight.
#[test]
fn a_staging_receiver_of_a_relayed_message_stages_chunk_by_chunk() {
    let text = study(
        "dgx-h100",
        &[("both-far", "nic4", "gpu0", "nic4", "gpu0")],
        "[\"4MiB\"]",
    )
    .replace(
        "\"gpudirect\", \"pxn\"",
        "\"staged\", \"staged_pipelined\", \"auto\"",
    );
    let (rows, _, cfg) = run("staged-recv", &text);
    let auto = row(&rows, "both-far", "auto", "4194304");
    assert_eq!(auto["effective_path"], "pxn_send_nccl_host_recv");
    assert!(
        auto["reason"].contains("receiver: SYS beyond NET_GDR_LEVEL PXB -> nccl_host"),
        "{auto:?}"
    );
    let ring = num(
        row(&rows, "both-far", "staged_pipelined", "4194304"),
        "setup_us",
    );
    let whole = num(row(&rows, "both-far", "staged", "4194304"), "setup_us");
    let reg = &cfg.hosts[0].machine.registration;
    let relay_ring =
        (reg.gpu_base + (256u64 << 10).div_ceil(64 << 10) * 8 * reg.gpu_per_page) as f64 / 1e6;
    assert_eq!(num(auto, "setup_us"), ring.max(relay_ring));
    assert!(num(auto, "setup_us") < whole, "{auto:?}");
}

/// NCCL relays only through a GPU it may read by GPUDirect (`ncclTopoCheckGdr` on the relay):
/// on a DGX A100 the NIC's nearest GPUs are PXB to it, so with NET_GDR_LEVEL PIX no GPU relays.
#[test]
fn no_relay_beyond_the_gdr_level() {
    let text = study(
        "dgx-a100",
        &[("far", "mlx5_2", "gpu0", "mlx5_2", "gpu2")],
        "[\"4KiB\"]",
    );
    let (rows, _, _) = run("a100", &text);
    let pxn = row(&rows, "far", "pxn", "4096");
    assert_eq!(pxn["effective_path"], "pxn", "{pxn:?}");
    let (rows, _, _) = run(
        "a100-pix",
        &text.replace(
            "jitter = false\n",
            "jitter = false\nnet_gdr_level = \"PIX\"\n",
        ),
    );
    let pxn = row(&rows, "far", "pxn", "4096");
    assert_eq!(pxn["effective_path"], "gpudirect", "{pxn:?}");
    assert!(
        pxn["reason"].contains("has no GPUDirect reads to it (PXB, NET_GDR_LEVEL PIX)"),
        "{pxn:?}"
    );
}

/// The relaying kernel's stores do not queue behind the same GPU's copy engine: a PXN flow
/// from GPU0 keeps its rate beside a flow that stages out of GPU0 by cudaMemcpy (its NIC may
/// not read GPU0: ACS sends P2P up to a root complex that refuses reads).
#[test]
fn relay_stores_do_not_wait_for_the_copy_engine() {
    let far = "{ sender = { host = \"a\", nic = \"nic4\", gpu = \"gpu0\" }, receiver = { host = \
               \"b\", nic = \"nic4\", gpu = \"gpu4\" } }";
    let near = "{ sender = { host = \"a\", nic = \"nic0\", gpu = \"gpu0\" }, receiver = { host = \
                \"b\", nic = \"nic0\", gpu = \"gpu0\" } }";
    let text = format!(
        "name = \"ceq\"\n[sim]\njitter = false\niterations = 3\nstream_messages = 12\n\
         [sweep]\nsizes = [\"64MiB\"]\npaths = [\"auto\"]\n\
         [[machines]]\nname = \"m\"\npreset = \"dgx-h100\"\n\
         [[machines.switches]]\nname = \"sw0\"\nacs_redirect = true\n\
         [[machines.root_complexes]]\nname = \"rc0\"\np2p_read = false\n\
         [[hosts]]\nname = \"a\"\nmachine = \"m\"\n[[hosts]]\nname = \"b\"\nmachine = \"m\"\n\
         [[scenarios]]\nname = \"alone\"\nflows = [{far}]\n\
         [[scenarios]]\nname = \"beside\"\nflows = [{far}, {near}]\n"
    );
    let (_, out) = run_study("pxn", "ceq", &text);
    let flows = csv_rows(&out.join("flows.csv"));
    let flow = |sc: &str, f: &str| {
        flows
            .iter()
            .find(|r| r["scenario"] == sc && r["flow"] == f)
            .unwrap_or_else(|| panic!("{sc} flow {f}"))
    };
    assert_eq!(flow("alone", "0")["effective_path"], "pxn");
    assert_eq!(
        flow("beside", "1")["effective_path"],
        "nccl_host_send_gpudirect_recv"
    );
    let (alone, beside) = (
        num(flow("alone", "0"), "bw_GBps"),
        num(flow("beside", "0"), "bw_GBps"),
    );
    assert!(
        beside > 0.99 * alone,
        "PXN beside a staged flow {beside} against alone {alone}"
    );
}

/// Byte conservation on the payload's memories and links with chunks moved as bulk transfers
/// (64 MiB: 256 chunks of 256 KiB): the source GPU's memory, the relay's NVLink and the
/// destination GPU's memory each carry exactly the streamed messages' bytes, on pxn,
/// staged_pipelined and gpudirect alike. (A bulk transfer's first unit, which crosses during
/// its latency phase, once went uncounted: 1.5% of a relayed chunk.)
#[test]
fn chunked_bulk_transfers_conserve_bytes() {
    let text = study(
        "dgx-h100",
        &[("far", "nic4", "gpu0", "nic4", "gpu4")],
        "[\"64MiB\"]",
    )
    .replace("stream_messages = 24", "stream_messages = 16")
    .replace(
        "\"gpudirect\", \"pxn\"",
        "\"gpudirect\", \"pxn\", \"staged_pipelined\"",
    );
    let (_, out) = run_study("pxn", "bytes", &text);
    let links = csv_rows(&out.join("links.csv"));
    let payload = 16u64 * (64 << 20);
    // links.csv counts wire bytes: on NVLink a 32-byte header (two flits, the default) per
    // 256-byte packet beside the payload.
    let on_nvlink = payload / 256 * (256 + 32);
    for path in ["gpudirect", "pxn", "staged_pipelined"] {
        let mut channels = vec![("a/gpu0.mem", payload), ("b/gpu4.mem", payload)];
        if path == "pxn" {
            channels.push(("a/nvlink:gpu0>nvswitch", on_nvlink));
        }
        for (ch, expected) in channels {
            let row = links
                .iter()
                .find(|r| r["path"] == path && r["channel"] == ch)
                .unwrap_or_else(|| panic!("{path} {ch}"));
            assert_eq!(row["bytes"], expected.to_string(), "{path} {ch}");
        }
    }
}

/// Two relayed flows from one GPU through two NICs: each runs at its wire's rate, and the
/// bottleneck is a wire, not the NVLink their relays share (busy a fifth of the time).
#[test]
fn the_bottleneck_of_relayed_flows_is_the_wire_they_wait_on() {
    let far = |nic: &str, gpu: &str| {
        format!(
            "{{ sender = {{ host = \"a\", nic = \"{nic}\", gpu = \"gpu0\" }}, receiver = {{ \
             host = \"b\", nic = \"{nic}\", gpu = \"{gpu}\" }} }}"
        )
    };
    let text = study("dgx-h100", &[], "[\"64MiB\"]").replace("\"gpudirect\", \"pxn\"", "\"pxn\"")
        + &format!(
            "[[scenarios]]\nname = \"two\"\nflows = [{}, {}]\n",
            far("nic4", "gpu4"),
            far("nic1", "gpu1")
        );
    let (rows, _, _) = run("two", &text);
    let r = row(&rows, "two", "pxn", "67108864");
    assert!(num(r, "bw_GBps") > 95.0, "{r:?}");
    assert!(r["bottleneck"].starts_with("wire:"), "{r:?}");
}

/// NCCL's GPUDirect sender (`auto` on GPU4, PIX to NIC4) pays the hand-over PXN's relay pays
/// after its NVLink store: the kernel's 16-byte flag into the proxy's host memory and one poll
/// (row G7), stage `kernel_store`, exactly the flag's transit into DRAM and the poll. Its
/// receiver pays the proxy's hand-over back (`recvProxyProgress` stores the tail, the kernel
/// loads it over PCIe), stage `kernel_load`, exactly one read's round trip from the GPU to the
/// proxy's DRAM. perftest's (`gpudirect`) posts at once and has the data at its poll: the two
/// differ by exactly those two stages.
#[test]
fn nccls_gpudirect_sender_hands_each_chunk_to_its_proxy_and_perftests_does_not() {
    let text = study(
        "dgx-h100",
        &[("near", "nic4", "gpu4", "nic4", "gpu4")],
        "[\"8B\"]",
    )
    .replace("[\"gpudirect\", \"pxn\"]", "[\"gpudirect\", \"auto\"]");
    let (rows, stages, cfg) = run("near-auto", &text);
    let auto = row(&rows, "near", "auto", "8");
    assert_eq!(auto["effective_path"], "gpudirect", "{auto:?}");
    let direct = row(&rows, "near", "gpudirect", "8");
    let stage = |path: &str, name: &str| {
        stages
            .iter()
            .find(|r| r["path"] == path && r["size_bytes"] == "8" && r["stage"] == name)
            .map(|r| num(r, "critical_us"))
    };
    assert_eq!(stage("gpudirect", "kernel_store"), None);
    let topo = gdrsim::scenario::topology(&cfg);
    // The channels' latencies along a route of host `h`.
    let latency = |h: &HostTopo, f: Flow, from, to| -> u64 {
        (h.route(from, to, f).unwrap().channels.iter())
            .map(|&c| topo.channels[c.index()].latency)
            .sum()
    };
    let h = &topo.hosts[0];
    let socket = h.nodes[h.node_index(NodeKind::Nic(4))].socket;
    let gpu = Place::Device(h.node_index(NodeKind::Gpu(4)));
    let expected = latency(h, Flow::Write, gpu, Place::Memory(socket))
        + topo.channels[h.dram[socket].index()].latency
        + cfg.hosts[0].machine.cpu.poll;
    let got = stage("auto", "kernel_store").expect("a kernel_store stage") * 1e6;
    // Serialisation of a 16-byte flag adds a few ps per channel.
    assert!(
        got >= expected as f64 && got < expected as f64 + 5_000.0,
        "hand-over {got} ps against {expected} ps"
    );
    assert_eq!(stage("gpudirect", "kernel_load"), None);
    let rh = &topo.hosts[1];
    let rgpu = Place::Device(rh.node_index(NodeKind::Gpu(4)));
    let rsocket = rh.nodes[rh.node_index(NodeKind::Nic(4))].socket;
    let round_trip = latency(rh, Flow::ReadRequest, rgpu, Place::Memory(rsocket))
        + topo.channels[rh.dram[rsocket].index()].latency
        + latency(rh, Flow::ReadCompletion, Place::Memory(rsocket), rgpu);
    let load = stage("auto", "kernel_load").expect("a kernel_load stage") * 1e6;
    assert!(
        load >= round_trip as f64 && load < round_trip as f64 + 5_000.0,
        "tail load {load} ps against a round trip of {round_trip} ps"
    );
    let extra = (num(auto, "lat_model_us") - num(direct, "lat_model_us")) * 1e6;
    assert!(
        (extra - got - load).abs() < 1.0,
        "auto - gpudirect {extra} ps, stages {got} + {load} ps"
    );
}

/// `net_gdr_read = "off"` (NCCL_NET_GDR_READ=0): the `auto` path's senders may not read GPU
/// memory by GPUDirect, so a GPU next to its NIC sends by NCCL's host path while its receiver
/// keeps GPUDirect, and no GPU relays (PXN needs GPUDirect reads of the relay); NCCL's default
/// reads a Hopper GPU and relays. A GPU below compute capability 8.0 is read by default only
/// beside NVLink (a DGX's GPUs all have NVLink peers: read).
#[test]
fn gdr_read_off_sends_by_the_host_path_and_stops_the_relay() {
    let flow = |n: &str, g: &str, rn: &str, rg: &str| {
        format!(
            "sender = {{ host = \"a\", nic = \"{n}\", gpu = \"{g}\" }}\nreceiver = {{ host = \
             \"b\", nic = \"{rn}\", gpu = \"{rg}\" }}\n"
        )
    };
    let text = |sim: &str| {
        format!(
            "name = \"gdr-read\"\n[sim]\njitter = false\niterations = 2\n{sim}\
             [sweep]\nsizes = [\"64KiB\"]\npaths = [\"auto\"]\n\
             [[machines]]\nname = \"m\"\npreset = \"dgx-h100\"\n\
             [[hosts]]\nname = \"a\"\nmachine = \"m\"\n[[hosts]]\nname = \"b\"\nmachine = \"m\"\n\
             [[scenarios]]\nname = \"near\"\n{}[[scenarios]]\nname = \"far\"\n{}",
            flow("nic0", "gpu0", "nic0", "gpu0"),
            flow("nic4", "gpu0", "nic4", "gpu4")
        )
    };
    let (rows, _, _) = run("gdr-read-default", &text(""));
    assert_eq!(
        row(&rows, "near", "auto", "65536")["effective_path"],
        "gpudirect"
    );
    assert_eq!(row(&rows, "far", "auto", "65536")["effective_path"], "pxn");
    let (rows, _, _) = run("gdr-read-off", &text("net_gdr_read = \"off\"\n"));
    for name in ["near", "far"] {
        let r = row(&rows, name, "auto", "65536");
        assert_eq!(
            r["effective_path"], "nccl_host_send_gpudirect_recv",
            "{name}: {r:?}"
        );
        assert!(
            r["reason"].contains("sender: NET_GDR_READ 0 (no GPUDirect reads) -> nccl_host"),
            "{name}: {r:?}"
        );
    }
    // Volta on a DGX: NVLink peers, so NCCL's default still reads it.
    let volta = text("").replace(
        "[[hosts]]\nname = \"a\"",
        "[[machines.gpus]]\nname = \"gpu0\"\ncompute_capability = \"7.0\"\n[[hosts]]\nname = \"a\"",
    );
    let (rows, _, cfg) = run("gdr-read-volta", &volta);
    assert_eq!(cfg.hosts[0].machine.gpus[0].compute_capability, (7, 0));
    assert_eq!(
        row(&rows, "near", "auto", "65536")["effective_path"],
        "gpudirect"
    );
}

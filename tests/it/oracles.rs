//! Closed-form oracles: figures computed in the test from the config's parameters (or taken from
//! the reference rows) and compared with what the simulation produces.

use crate::support::*;
use gdrsim::config::{Op, PathKind};
use gdrsim::record::Stage;
use gdrsim::topology::pcie;
use gdrsim::units::{PS_PER_NS, Ps, Rate};

const NS: Ps = PS_PER_NS;

/// The default machine with the PIX GPU (gpu0) on a root port of its own instead of under the
/// switch, at the given generation and width, and a huge copy-engine read window unless given.
fn gpu0_on_root_port(generation: u32, width: u32, ce_window: u32) -> gdrsim::config::Config {
    cfg_with(&[
        (
            "[[machines.links]]\nup = \"sw0\"\ndown = \"gpu0\"\ngeneration = 5\nwidth = 16",
            &format!(
                "[[machines.links]]\nup = \"rc0\"\ndown = \"gpu0\"\ngeneration = {generation}\nwidth = {width}"
            ),
        ),
        (
            "ce_read_window = 128",
            &format!("ce_read_window = {ce_window}"),
        ),
    ])
}

/// DMA time of a cudaMemcpy stage: its span less the launch and sync overheads.
fn memcpy_rate_gbytes(cfg: &gdrsim::config::Config, stage: Stage, size: u64) -> f64 {
    let (_, rec) = run_fabric(cfg, "PIX", PathKind::Staged, size, false, 1, 1);
    let s = rec
        .spans
        .iter()
        .find(|s| s.stage == stage)
        .expect("memcpy stage recorded");
    let ce = &cfg.hosts[0].machine.gpus[0].copy_engine;
    let dma = s.end - s.start - ce.launch - ce.sync;
    size as f64 / (dma as f64 / 1e12) / 1e9
}

/// Row C5 by simulation: a large D2H is MPS-sized posted writes (TLP rate x 256/280), a large
/// H2D with a window covering the round trip is completion-bound (TLP rate x 256/276).
/// Gen3/4/5 x16: writes 12.99 / 25.99 / 51.98, reads 13.18 / 26.37 / 52.73 GB/s, within 1%.
#[test]
fn large_dma_write_and_read_bandwidth_match_row_c5() {
    for (generation, write, read) in [(3, 12.99, 13.18), (4, 25.99, 26.37), (5, 51.98, 52.73)] {
        let cfg = gpu0_on_root_port(generation, 16, 4096);
        let size = 64 << 20;
        let d2h = memcpy_rate_gbytes(&cfg, Stage::MemcpyD2h, size);
        let h2d = memcpy_rate_gbytes(&cfg, Stage::MemcpyH2d, size);
        assert!(
            rel_diff(d2h, write) < 0.01,
            "Gen{generation} D2H {d2h:.3} GB/s vs {write}"
        );
        assert!(
            rel_diff(h2d, read) < 0.01,
            "Gen{generation} H2D {h2d:.3} GB/s vs {read}"
        );
    }
}

/// Row D8: a 32 MB D2H on a Gen3 x16 GPU runs at 12.0-13.2 GB/s (P100 measured 12.89).
#[test]
fn gen3_d2h_of_32mb_is_in_the_measured_range_of_row_d8() {
    let cfg = gpu0_on_root_port(3, 16, 128);
    let d2h = memcpy_rate_gbytes(&cfg, Stage::MemcpyD2h, 32 << 20);
    assert!((12.0..=13.2).contains(&d2h), "D2H {d2h:.3} GB/s");
}

/// H2D is read-based, so it depends on the copy engine's window where D2H does not: with a
/// window of 16 requests (8 KiB over a ~0.56 µs round trip) H2D falls well below D2H; with 4096
/// it does not.
#[test]
fn h2d_and_d2h_differ_where_the_read_window_binds() {
    let narrow = gpu0_on_root_port(4, 16, 16);
    let wide = gpu0_on_root_port(4, 16, 4096);
    let size = 16 << 20;
    let (d2h_n, h2d_n) = (
        memcpy_rate_gbytes(&narrow, Stage::MemcpyD2h, size),
        memcpy_rate_gbytes(&narrow, Stage::MemcpyH2d, size),
    );
    let (d2h_w, h2d_w) = (
        memcpy_rate_gbytes(&wide, Stage::MemcpyD2h, size),
        memcpy_rate_gbytes(&wide, Stage::MemcpyH2d, size),
    );
    assert!(
        rel_diff(d2h_n, d2h_w) < 1e-9,
        "D2H does not depend on the read window"
    );
    assert!(
        h2d_n < 0.95 * d2h_n,
        "window-bound H2D {h2d_n:.2} should trail D2H {d2h_n:.2}"
    );
    assert!(
        h2d_w > d2h_w,
        "link-bound H2D {h2d_w:.2} beats D2H {d2h_w:.2} (completions carry 20 B, writes 24 B)"
    );
}

/// A read-window-bound transfer: N requests of MRRS bytes per round trip. With the GPU on a
/// root port (Gen3 x16), TLP by TLP, the round trip of one 512 B request is, from the config:
///   request TLP (24 B) on the link + link latency + root complex
///   + DRAM (first 256 B at the DRAM rate + access latency) + root complex
///   + both 276 B completions on the link + link latency.
///
/// (The second completion's DRAM time overlaps the first's link time.)
#[test]
fn read_window_bound_bandwidth_is_n_times_request_over_round_trip() {
    let n = 4u64;
    let cfg = gpu0_on_root_port(3, 16, n as u32);
    let cfg = gdrsim::config::Config {
        sim: gdrsim::config::SimConfig {
            granularity: gdrsim::config::Granularity::Tlp,
            ..cfg.sim.clone()
        },
        ..cfg
    };
    let m = &cfg.hosts[0].machine;
    let link = pcie::tlp_rate(3, 16, 256);
    let dram = m.sockets[0].dram;
    let rc = m.root_complexes[0].latency;
    let lat = m.pcie.link_latency;
    let rtt = link.tx_time(24)
        + lat
        + rc
        + dram.rate.tx_time(256)
        + dram.latency
        + rc
        + link.tx_time(2 * 276)
        + lat;
    let expected = (n * 512) as f64 / (rtt as f64 / 1e12) / 1e9;
    let size = 1 << 20;
    let (_, rec) = run_fabric(&cfg, "PIX", PathKind::Staged, size, true, 1, 1);
    let s = rec
        .spans
        .iter()
        .find(|s| s.stage == Stage::MemcpyH2d)
        .unwrap();
    let ce = &m.gpus[0].copy_engine;
    // The last completion is still written into GPU memory after the window drains.
    let dma = s.end - s.start - ce.launch - ce.sync - m.gpus[0].memory.latency;
    let got = size as f64 / (dma as f64 / 1e12) / 1e9;
    assert!(
        rel_diff(got, expected) < 0.01,
        "window-bound H2D {got:.4} GB/s vs N x MRRS / RTT = {expected:.4}"
    );
}

/// Rows C10/C11: a 64 B DMA read of local host memory from a device on a root port takes about
/// 0.55 µs; the payload read of a non-inline host message is exactly that read. Rows C13/C14:
/// memory on the other socket adds about 100 ns.
#[test]
fn dma_read_round_trip_emerges_from_the_parts() {
    let nic_on_rp = [
        (
            "[[machines.links]]\nup = \"sw0\"\ndown = \"nic0\"\ngeneration = 5\nwidth = 16",
            "[[machines.links]]\nup = \"rc0\"\ndown = \"nic0\"\ngeneration = 3\nwidth = 8",
        ),
        ("inline_max_bytes = 220", "inline_max_bytes = 0"),
    ];
    let read_of = |cfg: &gdrsim::config::Config| {
        let (_, rec) = run_fabric(cfg, "PIX", PathKind::Host, 64, true, 1, 1);
        let s = rec
            .spans
            .iter()
            .find(|s| s.stage == Stage::DmaRead)
            .unwrap();
        (s.end - s.start) as f64 / 1e6
    };
    let local = read_of(&cfg_with(&nic_on_rp));
    assert!(
        (0.55 * 0.85..=0.55 * 1.15).contains(&local),
        "local 64 B read {local:.3} us"
    );
    let mut remote_edits = nic_on_rp.to_vec();
    remote_edits.push((
        "sender = { host = \"node-a\", nic = \"nic0\", gpu = \"gpu0\" }",
        "sender = { host = \"node-a\", nic = \"nic0\", gpu = \"gpu0\", memory = \"cpu1\" }",
    ));
    let remote = read_of(&cfg_with(&remote_edits));
    let extra_ns = (remote - local) * 1000.0;
    assert!(
        (80.0..=130.0).contains(&extra_ns),
        "remote socket adds {extra_ns:.1} ns (rows C13/C14: ~106)"
    );
}

/// The timeline of the host path for a small inline message, computed hop by hop from the
/// config (default machine, NIC under the PCIe switch, BlueFlame, idle links):
///   post (CPU) -> BlueFlame MMIO write of the inline WQE (libmlx5 layout, whole 64 B basic
///   blocks): root complex, link, switch, link
///   -> send engine (one WQE interval) + WQE processing -> transmit pipeline
///   -> wire packet (payload + headers) + cable; the switch is cut-through: its egress starts
///      once the 8-byte LRH is in, so it adds the header's time + switch latency + cable
///   -> receive pipeline -> MTT lookup -> payload write TLP up two links, switch, root complex,
///      DRAM; the receive CQE follows on the same queue -> CQE in DRAM -> poll + repost.
struct HostTimes {
    total: Ps,
    /// When the payload is committed in the receiver's DRAM (before the CQE).
    data_commit: Ps,
}

fn host_path_oracle(cfg: &gdrsim::config::Config, size: u64) -> HostTimes {
    let m = &cfg.hosts[0].machine;
    let nic = &m.nics[0];
    let link = pcie::tlp_rate(5, 16, 256);
    let lat = m.pcie.link_latency;
    let (rc, sw) = (m.root_complexes[0].latency, m.switches[0].latency);
    let ser = |b: u64| link.tx_time(b);
    // MMIO: the inline WQE, one posted write TLP (+24 B).
    let mmio = ser(gdrsim::topology::spec::inline_wqe_bytes(size) + 24);
    let t_mmio = m.cpu.post + rc + (mmio + lat) + sw + (mmio + lat);
    let engine = Rate::from_bps(
        (nic.wqe_bytes as u128 * 8 * 1_000_000_000_000 / nic.wqe_interval as u128) as u64,
    );
    let t_wqe = t_mmio + engine.tx_time(nic.wqe_bytes) + nic.wqe_process;
    let wire = nic.wire_rate.tx_time(size + nic.packet_overhead);
    let cable = cfg.network.cable_m * cfg.network.propagation_per_m;
    let t_rx = t_wqe
        + nic.tx_pipeline
        + (wire + cable)
        + (nic.wire_rate.tx_time(8) + cfg.network.switch_latency + cable)
        + nic.rx_pipeline;
    let (data_commit, cqe_commit) = write_and_cqe(cfg, t_rx + nic.mtt_lookup, size);
    HostTimes {
        total: cqe_commit + m.cpu.poll + m.cpu.post_recv,
        data_commit,
    }
}

/// The receiving NIC's payload write (one TLP) and its CQE behind it, from `t0` (after the MTT
/// lookup): up link, switch, link, root complex into DRAM; the CQE queues behind the data TLP
/// on the first link (same source) and behind the data at DRAM. Returns when each is committed.
fn write_and_cqe(cfg: &gdrsim::config::Config, t0: Ps, size: u64) -> (Ps, Ps) {
    let m = &cfg.hosts[0].machine;
    let nic = &m.nics[0];
    let link = pcie::tlp_rate(5, 16, 256);
    let lat = m.pcie.link_latency;
    let (rc, sw) = (m.root_complexes[0].latency, m.switches[0].latency);
    let dram = m.sockets[0].dram;
    let (d, c) = (link.tx_time(size + 24), link.tx_time(nic.cqe_bytes + 24));
    let a1 = t0 + d + lat + sw;
    let a2 = (t0 + d + c + lat + sw).max(a1 + d);
    let data_at_dram = a1 + d + lat + rc;
    let cqe_at_dram = (a2 + c + lat + rc).max(data_at_dram + dram.rate.tx_time(size));
    (
        data_at_dram + dram.rate.tx_time(size) + dram.latency,
        cqe_at_dram + dram.rate.tx_time(nic.cqe_bytes) + dram.latency,
    )
}

#[test]
fn host_path_latency_equals_the_sum_of_its_parts() {
    let cfg = default_cfg();
    for size in [1, 8, 64, 200] {
        let want = host_path_oracle(&cfg, size).total;
        let got = model_latency(&cfg, "PIX", PathKind::Host, size, false);
        let diff = got.abs_diff(want);
        assert!(
            diff <= NS,
            "size {size}: simulated {got} ps, composed {want} ps"
        );
    }
}

/// Staged, nothing overlapping: memcpy D2H + the host path + memcpy H2D, each from the config.
///   D2H: launch + GPU memory read + posted write TLP (GPU -> switch -> root complex) + DRAM
///        commit + sync.
///   H2D: launch + read request TLP up + DRAM access + completion TLP down + GPU memory write
///        + sync.
#[test]
fn staged_latency_is_memcpy_d2h_plus_host_path_plus_memcpy_h2d() {
    let cfg = default_cfg();
    let m = &cfg.hosts[0].machine;
    let g = &m.gpus[0];
    let link = pcie::tlp_rate(5, 16, 256);
    let lat = m.pcie.link_latency;
    let (rc, sw) = (m.root_complexes[0].latency, m.switches[0].latency);
    let dram = m.sockets[0].dram;
    for size in [8u64, 128] {
        let d2h = g.copy_engine.launch
            + g.memory.rate.tx_time(size)
            + g.memory.latency
            + (link.tx_time(size + 24) + lat)
            + sw
            + (link.tx_time(size + 24) + lat)
            + rc
            + dram.rate.tx_time(size)
            + dram.latency
            + g.copy_engine.sync;
        let h2d = g.copy_engine.launch
            + (link.tx_time(24) + lat)
            + sw
            + (link.tx_time(24) + lat)
            + rc
            + dram.rate.tx_time(size)
            + dram.latency
            + rc
            + (link.tx_time(size + 20) + lat)
            + sw
            + (link.tx_time(size + 20) + lat)
            + g.memory.rate.tx_time(size)
            + g.memory.latency
            + g.copy_engine.sync;
        let want = d2h + host_path_oracle(&cfg, size).total + h2d;
        let got = model_latency(&cfg, "PIX", PathKind::Staged, size, false);
        assert!(
            got.abs_diff(want) <= NS,
            "size {size}: simulated {got} ps, composed {want} ps"
        );
    }
}

/// `auto` beyond NCCL_NET_GDR_LEVEL runs NCCL's host path (`src/transport/net.cc` without
/// GPUDirect): no cudaMemcpy, no launch, no sync. On the default machine's PHB scenario (the
/// GPU on a root port of the NIC's root complex, gpu1; one chunk at these sizes), nothing
/// overlapping, from the config:
///   kernel store: the sending kernel's posted write of the payload, GPU memory -> link -> root
///     complex -> DRAM (store(size)), then its 16-byte flag the same way (store(16), the kernel
///     fences between them), then the proxy's poll that finds the flag (`poll_ns`);
///   the host path: the proxy posts the chunk from host memory to host memory (the host-path
///     oracle: post, BlueFlame, NIC, wire, NIC, payload and CQE in DRAM, poll + repost);
///   kernel load: the receiving kernel's load of the proxy's 16-byte flag (read request up the
///     link, root complex, DRAM, completion down into the kernel's registers: seen(16)), then
///     its load of the payload, which it commits in GPU memory (load(size)).
/// The penalty against GPUDirect is then a few microseconds, not a cudaMemcpy pair's ~8.
#[test]
fn nccl_host_path_is_kernel_stores_plus_host_path_plus_kernel_loads() {
    let cfg = default_cfg();
    let m = &cfg.hosts[0].machine;
    let g = &m.gpus[1];
    let link = pcie::tlp_rate(5, 16, 256);
    let lat = m.pcie.link_latency;
    let rc = m.root_complexes[0].latency;
    let dram = m.sockets[0].dram;
    let store = |b: u64| {
        g.memory.rate.tx_time(b)
            + g.memory.latency
            + (link.tx_time(b + 24) + lat)
            + rc
            + dram.rate.tx_time(b)
            + dram.latency
    };
    let seen = |b: u64| {
        (link.tx_time(24) + lat)
            + rc
            + dram.rate.tx_time(b)
            + dram.latency
            + rc
            + (link.tx_time(b + 20) + lat)
    };
    let load = |b: u64| seen(b) + g.memory.rate.tx_time(b) + g.memory.latency;
    for size in [8u64, 128] {
        let s = summary(&cfg, "PHB", PathKind::Auto, size);
        assert_eq!(s.effective_path.name(), "nccl_host", "{}", s.reason);
        let want = store(size)
            + store(16)
            + m.cpu.poll
            + host_path_oracle(&cfg, size).total
            + seen(16)
            + load(size);
        let got = model_latency(&cfg, "PHB", PathKind::Auto, size, false);
        assert!(
            got.abs_diff(want) <= NS,
            "size {size}: simulated {got} ps, composed {want} ps"
        );
        let staged = model_latency(&cfg, "PHB", PathKind::Staged, size, false);
        let direct = model_latency(&cfg, "PHB", PathKind::GpuDirect, size, false);
        assert!(got < staged && got > direct, "{direct} < {got} < {staged}");
        // `nccl_host` asks for the same host path on both sides, whatever the class: here it
        // is exactly what `auto` chose.
        let forced = model_latency(&cfg, "PHB", PathKind::NcclHost, size, false);
        assert_eq!(forced, got, "size {size}");
        let s = summary(&cfg, "PIX", PathKind::NcclHost, size);
        assert_eq!(s.effective_path.name(), "nccl_host");
        assert!(s.lat_model_ps > summary(&cfg, "PIX", PathKind::GpuDirect, size).lat_model_ps);
    }
}

/// A plain RDMA Write (no immediate): the same timeline as Write with Immediate up to the
/// payload's commit in the receiver's DRAM; then the receiving thread's poll of the last byte
/// finds it (`poll_ns`), with no receive CQE and no receive WQE to repost.
#[test]
fn plain_write_latency_is_the_data_commit_plus_one_poll() {
    let cfg = default_cfg();
    let m = &cfg.hosts[0].machine;
    for size in [1, 8, 64, 200] {
        let want = host_path_oracle(&cfg, size).data_commit + m.cpu.poll;
        let got = model_latency_op(&cfg, "PIX", PathKind::Host, Op::Write, size, false);
        assert!(
            got.abs_diff(want) <= NS,
            "size {size}: simulated {got} ps, composed {want} ps"
        );
    }
}

/// An RDMA Read of a small host buffer, hop by hop from the config (default machine: the NIC
/// under its PCIe switch, the buffers and queues in socket 0's DRAM; a read is never inline,
/// but its one 64-byte WQE fits the BlueFlame buffer, so libmlx5 writes it by BlueFlame, row G5):
///   requester: post, the WQE's BlueFlame MMIO (one 64 + 24-byte TLP: root complex, link,
///     switch, link), then the send engine and WQE processing (no WQE fetch);
///   read request packet: transmit pipeline, wire (headers + 16-byte RETH), cut-through switch,
///     cable, the responder's receive pipeline;
///   responder: MTT lookup, DMA read of the payload (request up, DRAM, completion down),
///     transmit pipeline, the response packet on the wire back, receive pipeline;
///   requester: MTT lookup, the payload write up to DRAM with the read CQE behind it, one poll.
fn read_oracle(cfg: &gdrsim::config::Config, size: u64) -> Ps {
    let m = &cfg.hosts[0].machine;
    let nic = &m.nics[0];
    let link = pcie::tlp_rate(5, 16, 256);
    let lat = m.pcie.link_latency;
    let (rc, sw) = (m.root_complexes[0].latency, m.switches[0].latency);
    let dram = m.sockets[0].dram;
    let ser = |b: u64| link.tx_time(b);
    // A DMA read of `b` bytes from DRAM by the NIC: request up, memory, completion down.
    let dma_read = |b: u64| {
        (ser(24) + lat)
            + sw
            + (ser(24) + lat)
            + rc
            + dram.rate.tx_time(b)
            + dram.latency
            + rc
            + (ser(b + 20) + lat)
            + sw
            + (ser(b + 20) + lat)
    };
    let blueflame = ser(nic.wqe_bytes + 24);
    let t_bf = m.cpu.post + rc + (blueflame + lat) + sw + (blueflame + lat);
    let engine = Rate::from_bps(
        (nic.wqe_bytes as u128 * 8 * 1_000_000_000_000 / nic.wqe_interval as u128) as u64,
    );
    let t_wqe = t_bf + engine.tx_time(nic.wqe_bytes) + nic.wqe_process;
    let cable = cfg.network.cable_m * cfg.network.propagation_per_m;
    let hop = |bytes: u64| {
        nic.tx_pipeline
            + (nic.wire_rate.tx_time(bytes) + cable)
            + (nic.wire_rate.tx_time(8) + cfg.network.switch_latency + cable)
            + nic.rx_pipeline
    };
    let t_req = t_wqe + hop(nic.packet_overhead + 16);
    let t_resp = t_req + nic.mtt_lookup + dma_read(size) + hop(size + nic.packet_overhead);
    write_and_cqe(cfg, t_resp + nic.mtt_lookup, size).1 + m.cpu.poll
}

#[test]
fn rdma_read_latency_equals_the_sum_of_its_parts() {
    let cfg = default_cfg();
    for size in [1, 8, 64, 200] {
        let want = read_oracle(&cfg, size);
        let got = model_latency_op(&cfg, "PIX", PathKind::Host, Op::Read, size, false);
        assert!(
            got.abs_diff(want) <= NS,
            "size {size}: simulated {got} ps, composed {want} ps"
        );
    }
}

/// A small RDMA Read takes about a round trip where a Write takes a one-way trip: from the
/// model's own parameters (the two oracles above) the ratio at 8 B is
///   read / write = (post + BlueFlame WQE + request hop + payload DMA read + response hop +
///   write + CQE + poll) / (post + inline WQE + hop + write + poll),
/// 1.7 to 1.9 with the defaults (both posts by BlueFlame, row G5), and the simulation gives
/// exactly the composed figures.
#[test]
fn a_small_read_costs_about_a_round_trip_where_a_write_costs_one_way() {
    let cfg = default_cfg();
    let write = model_latency_op(&cfg, "PIX", PathKind::Host, Op::Write, 8, false);
    let read = model_latency_op(&cfg, "PIX", PathKind::Host, Op::Read, 8, false);
    let m = &cfg.hosts[0].machine;
    let one_way = host_path_oracle(&cfg, 8).data_commit + m.cpu.poll;
    let expected = read_oracle(&cfg, 8) as f64 / one_way as f64;
    let ratio = read as f64 / write as f64;
    assert!(
        (1.6..=2.0).contains(&ratio),
        "read/write at 8 B: {ratio:.2}"
    );
    assert!(
        (ratio - expected).abs() < 0.01,
        "ratio {ratio:.3} against {expected:.3} composed"
    );
}

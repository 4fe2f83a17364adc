//! `gdrsim walk`: golden files of the default walk in both languages, the seed's criteria, the
//! address map, and agreement with the simulation's own results.
//!
//! The golden files are the walk of a frozen config (tests/data/walk-frozen.toml); the live
//! default's walk is checked for the seed's addresses and criteria. Regenerate the golden files
//! with `GDRSIM_BLESS=1 cargo test --test it walk::`.

use std::path::PathBuf;

use crate::support::{gdrsim, ok, s, scratch};
use gdrsim::config::{self, Config, Op, PathKind};
use gdrsim::inspect;
use gdrsim::report::walkthrough::{self, Lang};
use gdrsim::scenario::{self, Point};
use gdrsim::study::load_config;

fn golden(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

/// Compares `text` with the golden file, or rewrites it when GDRSIM_BLESS is set.
fn check_golden(name: &str, text: &str) {
    let path = golden(name);
    if std::env::var_os("GDRSIM_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with GDRSIM_BLESS=1 to create it)",
            path.display()
        )
    });
    if want != text {
        let first = want
            .lines()
            .zip(text.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(want.lines().count().min(text.lines().count()));
        panic!(
            "{} differs at line {}:\n  golden: {:?}\n  now:    {:?}\n(run with GDRSIM_BLESS=1 to accept)",
            path.display(),
            first + 1,
            want.lines().nth(first),
            text.lines().nth(first)
        );
    }
}

/// The walk of the frozen config the golden files hold (tests/data/walk-frozen.toml, a copy of
/// the default config when they were made): recalibrating configs/default.toml does not
/// re-bless them; [`the_walk_meets_the_seed_criteria`] checks the live default.
fn frozen_walk(lang: Lang) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/walk-frozen.toml");
    let cfg = load_config(Some(&path)).unwrap();
    let w = inspect::walk(&cfg, 0, (PathKind::Staged, Op::WriteImm), 4096).unwrap();
    walkthrough::render(&w, lang)
}

fn default_walk(lang: Lang) -> String {
    let cfg = load_config(None).unwrap();
    let w = inspect::walk(&cfg, 0, (PathKind::Staged, Op::WriteImm), 4096).unwrap();
    walkthrough::render(&w, lang)
}

/// The part of the walk between two headings.
fn section<'a>(text: &'a str, from: &str, to: &str) -> &'a str {
    let a = text.find(from).unwrap_or_else(|| panic!("no {from:?}"));
    let b = text[a..].find(to).map_or(text.len(), |b| a + b);
    &text[a..b]
}

fn line_index(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in\n{text}"))
}

#[test]
fn default_walk_in_english_matches_the_golden_file() {
    check_golden("walk_default_en.txt", &frozen_walk(Lang::En));
}

#[test]
fn default_walk_in_chinese_matches_the_golden_file() {
    check_golden("walk_default_zh.txt", &frozen_walk(Lang::Zh));
}

/// The seed's acceptance criteria, read off the walk (English and Chinese).
#[test]
fn the_walk_meets_the_seed_criteria() {
    let en = default_walk(Lang::En);
    let staged = section(&en, "=== [1]", "=== [2]");
    let direct = section(&en, "=== [2]", "=== Contrast");
    // Traditional path: a cudaMemcpyDtoH line, then a descriptor with the host buffer.
    let memcpy = line_index(
        staged,
        "cudaMemcpyDtoH: GPU[0x2A00000000] -> Host[0x10000000] 4096 bytes",
    );
    let desc = line_index(staged, "src=0x10000000, len=4096, flags=0");
    assert!(memcpy < desc);
    // GPUDirect: a virtual -> bus line, then a descriptor with the bus address.
    let translate = line_index(direct, "[0x2A00000000] -> bus address [0x2A80000000]");
    let desc = line_index(direct, "src=0x2A80000000, len=4096, flags=1");
    assert!(translate < desc);
    assert!(!direct.contains("cudaMemcpy"));
    // Registration builds the table; the NIC looks it up per transfer.
    assert!(direct.contains("builds the NIC's translation table (MTT)"));
    assert!(direct.contains("MTT translation: GPU virtual address [0x2A00000000]"));
    // Receive side: bounce buffer vs GPU bus address.
    assert!(staged.contains("dst=0x10000000, len=4096, flags=0"));
    assert!(direct.contains("dst=0x2A80000000, len=4096, flags=1"));
    assert!(staged.contains("cudaMemcpyHtoD: Host[0x10000000] -> GPU[0x2A00000000] 4096 bytes"));
    // An H100 (compute capability 9.0) receive is not flushed (NCCL >= 2.19).
    assert!(!direct.contains("flush:"), "no flush into an H100");
    // The contrast.
    let c = section(&en, "=== Contrast", "\u{0}");
    assert!(c.contains("traditional DMA source: 0x10000000 (host memory"));
    assert!(c.contains("GPUDirect DMA source:   0x2A80000000 (GPU bus address"));
    assert!(c.contains("GPUDirect removed the GPU->host copy (cudaMemcpyDtoH)"));

    let zh = default_walk(Lang::Zh);
    let staged = section(&zh, "[传统路径]", "[GPUDirect路径]");
    let direct = section(&zh, "[GPUDirect路径]", "=== 对比结果");
    assert!(
        line_index(
            staged,
            "cudaMemcpyDtoH: GPU[0x2A00000000] -> Host[0x10000000]"
        ) < line_index(staged, "传统DMA描述符: src=0x10000000, len=4096, flags=0")
    );
    assert!(
        line_index(
            direct,
            "GPU虚拟地址[0x2A00000000] -> 总线地址[0x2A80000000]"
        ) < line_index(
            direct,
            "GPUDirect DMA描述符: src=0x2A80000000, len=4096, flags=1"
        )
    );
    let c = section(&zh, "=== 对比结果", "\u{0}");
    assert!(c.contains("传统路径DMA源地址: 0x10000000（主机内存"));
    assert!(c.contains("GPUDirect DMA源地址: 0x2A80000000（GPU总线地址"));
    assert!(c.contains("GPUDirect省去了"));
}

fn with_address_map(gpu_va: &str, bar: &str, host: &str) -> Config {
    let text = config::DEFAULT_TOML
        .replace("heap_base = 0x2A00000000", &format!("heap_base = {gpu_va}"))
        .replace("bar_offset = 0x80000000", &format!("bar_offset = {bar}"))
        .replace(
            "host_buffer_base = 0x10000000",
            &format!("host_buffer_base = {host}"),
        );
    config::parse(&text, "test config").unwrap()
}

/// Changing the address map changes the addresses, and only them (timing does not depend on
/// addresses).
#[test]
fn the_addresses_follow_the_address_map() {
    let cfg = with_address_map("0x5000000000", "0x400000000", "0x30000000");
    for lang in [Lang::En, Lang::Zh] {
        let text = walkthrough::render(
            &inspect::walk(&cfg, 0, (PathKind::Staged, Op::WriteImm), 4096).unwrap(),
            lang,
        );
        let (a, b) = match lang {
            Lang::En => ("=== [1]", "=== [2]"),
            Lang::Zh => ("[传统路径]", "[GPUDirect路径]"),
        };
        assert!(section(&text, a, b).contains("src=0x30000000, len=4096, flags=0"));
        assert!(text.contains("src=0x5400000000, len=4096, flags=1"));
        assert!(text.contains("dst=0x5400000000, len=4096, flags=1"));
        assert!(text.contains("GPU[0x5000000000] -> Host[0x30000000]"));
        assert!(!text.contains("0x2A"), "an old GPU address is left");
        assert!(!text.contains("0x10000000"), "the old host address is left");
        let back = text
            .replace("0x5400000000", "0x2A80000000")
            .replace("0x5000000000", "0x2A00000000")
            .replace("0x400000000", "0x80000000")
            .replace("0x30000000", "0x10000000");
        assert_eq!(back, default_walk(lang), "more than the addresses changed");
    }
}

/// Asserts that the walk `p` of `point` (scenario, path, op, size) has the simulation's
/// numbers: latency, host-memory bytes, CPU time, setup and effective path agree with the
/// sweep's result row of the same point, and the steps (and their parts) run in time order to
/// the delivery. Returns that row, with its stages (stages.csv).
fn agrees_with_its_point(
    cfg: &Config,
    topo: &gdrsim::topology::Topology,
    (si, path, op, size): (usize, PathKind, Op, u64),
    p: &walkthrough::PathWalk,
) -> gdrsim::stats::Summary {
    let point = Point::at(cfg.seed, si, path, op, size);
    let r = scenario::simulate_point(cfg, topo, &point).summary;
    assert_eq!(p.latency_ps, r.lat_model_ps, "{si} {path:?} {size}");
    assert_eq!(p.host_mem_bytes, r.host_mem_bytes);
    assert_eq!(p.cpu_busy_ps, r.cpu_busy_ps);
    assert_eq!(p.setup_ps, r.setup_ps);
    assert_eq!(p.effective_path, r.effective_path);
    let mut prev = 0;
    for s in &p.steps {
        assert!(
            s.start >= prev,
            "{:?} starts before the step before it",
            s.kind
        );
        prev = s.start;
        for part in &s.parts {
            assert!(part.start >= s.start && part.start + part.dur <= s.start + s.dur);
        }
    }
    let last = p.steps.last().unwrap();
    assert_eq!(last.start + last.dur, p.latency_ps);
    r
}

/// The walk's numbers are the simulation's: latency, host-memory bytes and CPU time agree with
/// the sweep's result row of the same point, and the steps run in time order to the delivery.
#[test]
fn the_walk_agrees_with_the_results_of_the_same_points() {
    let cfg = load_config(None).unwrap();
    let topo = scenario::topology(&cfg);
    use PathKind::{Gdrcopy, Staged, StagedPipelined};
    for (si, size, op, first) in [
        (0, 4096, Op::WriteImm, Staged),
        (1, 64 << 10, Op::WriteImm, Staged),
        (2, 100, Op::WriteImm, Staged),
        (0, 4096, Op::Write, Staged),
        (2, 64 << 10, Op::Send, Staged),
        (0, 4096, Op::Read, Staged),
        (1, 100, Op::Read, Staged),
        (0, 64, Op::WriteImm, Gdrcopy),
        (1, 1 << 20, Op::WriteImm, StagedPipelined),
        (0, 100 << 10, Op::Send, StagedPipelined),
    ] {
        let w = inspect::walk(&cfg, si, (first, op), size).unwrap();
        let kinds: &[PathKind] = if op == Op::Read {
            &[PathKind::GpuDirect]
        } else {
            &[first, PathKind::GpuDirect]
        };
        assert_eq!(w.paths.len(), kinds.len());
        for (p, &path) in w.paths.iter().zip(kinds) {
            agrees_with_its_point(&cfg, &topo, (si, path, op, size), p);
        }
        if op == Op::Read {
            continue;
        }
        let (st, gd) = (&w.paths[0], &w.paths[1]);
        let chunks = match first {
            StagedPipelined => size.div_ceil(cfg.sim.chunk_bytes) as usize,
            Gdrcopy => 0,
            _ => 1,
        };
        assert_eq!(st.copies.len(), 2 * chunks, "cudaMemcpy calls of {first:?}");
        assert_eq!(gd.copies.len(), 0);
        assert_eq!(st.host_mem_bytes, 4 * size);
        assert_eq!(gd.host_mem_bytes, 0);
        // Not fewer everywhere: in SYS the peer-to-peer payload still crosses both root
        // complexes' links and the socket link.
        assert!(
            st.pcie_link_bytes >= gd.pcie_link_bytes,
            "{first:?} {op:?} {size}: {} < {}",
            st.pcie_link_bytes,
            gd.pcie_link_bytes
        );
    }
    // PIX: the staged payload crosses 8 PCIe link directions (GPU->switch->RC twice, RC->switch
    // ->NIC, NIC->switch->RC, RC->switch->GPU), GPUDirect 4 (GPU->switch->NIC, NIC->switch->GPU).
    let w = inspect::walk(&cfg, 0, (PathKind::Staged, Op::WriteImm), 4096).unwrap();
    assert_eq!(w.paths[0].pcie_link_bytes, 8 * 4096);
    assert_eq!(w.paths[1].pcie_link_bytes, 4 * 4096);
    assert_eq!(w.paths[0].root_complex_bytes, 4 * 4096);
    assert_eq!(w.paths[1].root_complex_bytes, 0);
}

#[test]
fn the_cli_prints_the_walk_and_exits_2_on_bad_input() {
    let out = gdrsim(&["walk", "--lang", "zh"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        default_walk(Lang::Zh)
    );

    let dir = std::env::temp_dir().join(format!("gdrsim-walk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("map.toml");
    let text = config::DEFAULT_TOML.replace(
        "host_buffer_base = 0x10000000",
        "host_buffer_base = 0x40000000",
    );
    std::fs::write(&file, text).unwrap();
    let out = gdrsim(&[
        "walk",
        file.to_str().unwrap(),
        "--scenario",
        "SYS",
        "--size",
        "8KiB",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("scenario: SYS (GPU-NIC affinity SYS)"));
    assert!(text.contains("src=0x40000000, len=8192, flags=0"));
    std::fs::remove_dir_all(&dir).unwrap();

    for bad in [
        &["walk", "--scenario", "NOPE"][..],
        &["walk", "--size", "4 apples"],
        &["walk", "--lang", "fr"],
        &["walk", "/nonexistent/config.toml"],
    ] {
        let out = gdrsim(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("error:"));
    }
}

/// A GPU that needs the flush (compute capability below 9.0) gets NCCL's: a doorbell-posted
/// 1-byte RDMA Read on a loopback QP whose request and response pass the NIC's own pipelines,
/// the byte written into pinned host memory, then the flush CQE, in time order.
#[test]
fn the_walk_of_a_flushed_receive_shows_the_loopback_read() {
    let text = config::DEFAULT_TOML.replacen(
        "compute_capability = \"9.0\"",
        "compute_capability = \"8.0\"",
        1,
    );
    let cfg = config::parse(&text, "a100-like.toml").unwrap();
    let w = inspect::walk(&cfg, 0, (PathKind::Staged, Op::WriteImm), 4096).unwrap();
    let en = walkthrough::render(&w, Lang::En);
    let direct = section(&en, "[2] GPUDirect", "=== Contrast");
    let order = [
        "flush: 1-byte RDMA Read of GPU[0x2A80000000]",
        "CPU posts the flush read (not inline: by doorbell)",
        "the read request loops back through the NIC's send and receive pipelines",
        "read request nic0 > sw0 > gpu0",
        "the 1 B response loops back",
        "the byte written into pinned host memory, nic0 > sw0 > rc0 > cpu0.dram",
        "flush CQE written to host memory",
        "CQ poll finds the flush CQE",
    ];
    let mut at = 0;
    for want in order {
        let i = direct[at..]
            .find(want)
            .unwrap_or_else(|| panic!("{want:?} missing after offset {at}:\n{direct}"));
        at += i + want.len();
    }
    let zh = walkthrough::render(&w, Lang::Zh);
    assert!(zh.contains("经回环QP穿过网卡的发送与接收流水线"));
}

/// The steps of each operation, as its verbs define them: a plain Write ends with a poll of the
/// last byte (a GPU kernel's, into GPU memory) and has no receive CQE; a Send's receiver fetches
/// its posted receive WQE ahead of the data; an RDMA Read is posted by the receiver, its request
/// crosses the wire, and the sender's NIC looks the source up by rkey; a Write's target looks
/// its buffer up by rkey too.
#[test]
fn each_operation_walks_its_own_steps() {
    let cfg = load_config(None).unwrap();
    let text = |op| {
        walkthrough::render(
            &inspect::walk(&cfg, 0, (PathKind::Staged, op), 4096).unwrap(),
            Lang::En,
        )
    };

    let write = text(Op::Write);
    let direct = section(&write, "[2] GPUDirect", "=== Contrast");
    assert!(
        direct.contains("node-b/gpu0.sm   a GPU kernel polls the last byte"),
        "{direct}"
    );
    assert!(!direct.contains("receive CQE"), "{direct}");
    let staged = section(&write, "[1] Traditional", "[2] GPUDirect");
    assert!(
        staged.contains("the receiving CPU polls the last byte"),
        "{staged}"
    );
    assert!(staged.contains("MR lookup by rkey"), "{staged}");

    let send = text(Op::Send);
    let direct = section(&send, "[2] GPUDirect", "=== Contrast");
    let fetch = line_index(direct, "receive WQE fetch, ahead of the data");
    assert!(
        fetch > line_index(direct, "off the latency path"),
        "{direct}"
    );
    assert!(direct.contains("the Send consumed the posted receive WQE"));
    assert!(direct.contains("(Send): sge addr=0x2A00000000"));

    let read = text(Op::Read);
    assert!(read.contains("operation: RDMA Read (read)"));
    assert!(
        !read.contains("Traditional path"),
        "a Read's source cannot be staged"
    );
    let steps: Vec<&str> = read.lines().filter(|l| l.starts_with("   ")).collect();
    let find = |needle: &str| {
        steps
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no step `{needle}` in\n{read}"))
    };
    let post = find("node-b/cpu0.cpu  receiving CPU builds the read WQE");
    let request = find("read request: 1 packet (RETH");
    let lookup = find("node-a/nic0      MR lookup by rkey");
    let dma = find("node-a/nic0      DMA read of GPU memory");
    let cqe = find("CQE of the read");
    let poll = find("the requesting CPU finds the read's CQE");
    assert!(post < request && request < lookup && lookup < dma && dma < cqe && cqe < poll);
    assert!(
        steps[request].contains("node-b/nic0 > switch1 > node-a/nic0"),
        "{}",
        steps[request]
    );
    assert!(
        !read.contains("RC ACK"),
        "the response is the acknowledgement"
    );
    let zh = walkthrough::render(
        &inspect::walk(&cfg, 0, (PathKind::Staged, Op::Read), 4096).unwrap(),
        Lang::Zh,
    );
    assert!(zh.contains("读请求：1个数据包") && zh.contains("网卡按rkey查MR"));
}

/// `--op` is checked: an unknown operation, and a Read from a staged source in `trace`, are bad
/// input (exit 2) before any work.
#[test]
fn the_op_of_walk_and_trace_is_checked() {
    let never = std::env::temp_dir().join(format!("gdrsim-never-{}.json", std::process::id()));
    let never = never.to_str().unwrap();
    let out = gdrsim(&["walk", "--op", "read", "--scenario", "PHB"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for bad in [
        &["walk", "--op", "atomic"][..],
        &[
            "trace", "--path", "staged", "--op", "read", "--size", "4KiB", "--out", never,
        ],
        &[
            "trace",
            "--path",
            "gpudirect",
            "--op",
            "nope",
            "--size",
            "4KiB",
            "--out",
            never,
        ],
    ] {
        let out = gdrsim(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--op"), "{bad:?}: {err}");
    }
    assert!(!std::path::Path::new(never).exists());
}

/// `--path` picks the host-staging path the walk contrasts with GPUDirect: GDRCopy shows the
/// CPU's copies through BAR1 on both sides and its mapping in setup; pipelined staging walks
/// its first chunk with asynchronous copies and says how many chunks follow.
#[test]
fn the_walk_contrasts_gdrcopy_and_pipelined_staging_with_gpudirect() {
    let cfg = load_config(None).unwrap();
    let text = |path, size| {
        walkthrough::render(
            &inspect::walk(&cfg, 0, (path, Op::WriteImm), size).unwrap(),
            Lang::En,
        )
    };
    let gdr = text(PathKind::Gdrcopy, 64);
    let first = section(&gdr, "[1] GDRCopy path", "[2] GPUDirect");
    let read = line_index(
        first,
        "GDRCopy (gdr_copy_from_mapping): the CPU reads GPU[0x2A00000000]",
    );
    let post = line_index(first, "CPU builds the send WQE");
    let write = line_index(
        first,
        "GDRCopy (gdr_copy_to_mapping): the CPU writes Host[0x10000000]",
    );
    assert!(read < post && post < write, "{first}");
    assert!(first.contains("gdr_pin_buffer + gdr_map of GPU memory [0x2A00000000]"));
    assert!(first.contains("delivered: the data is visible in GPU memory on node-b"));

    let piped = text(PathKind::StagedPipelined, 1 << 20);
    let first = section(&piped, "[1] Pipelined staging", "[2] GPUDirect");
    assert!(
        first.contains("cudaMemcpyAsync DtoH: GPU[0x2A00000000] -> Host[0x10000000] 262144 bytes")
    );
    assert!(first.contains("completion event recorded"));
    assert!(
        first.contains("8 pinned bounce buffers"),
        "the ring: pipeline_depth buffers of a chunk"
    );
    assert!(first.contains("the other 3 chunks of 262144 bytes follow these steps"));
    assert!(first.contains("len=262144"));
    // The walked chunk's reads, packets and writes, not the message's.
    assert!(first.contains("DMA read of host memory: 512 read requests of up to 512 B"));
    assert!(first.contains("wire: 64 packets (MTU 4096 B)"));
    assert!(first.contains("DMA write into host memory: 1024 posted writes"));

    let out = gdrsim(&["walk", "--path", "host"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--path"));
}

/// Two DGX H100 nodes whose GPU 4 has an address map of its own (so that the relay's addresses
/// differ from the sender's): `far` sends from GPU0 through NIC4 (SYS; GPU4, NIC4's PIX GPU,
/// relays it over NVLink), `near` from GPU0 through its own NIC0.
const PXN_CONFIG: &str = r#"
name = "pxn-walk"
[sim]
iterations = 3
coalesce_above_bytes = "16KiB"   # the 4 KiB chunk TLP by TLP: the walk names its completions
stream_messages = 8
[sweep]
sizes = ["4KiB"]
paths = ["pxn"]
[[machines]]
name = "dgx"
preset = "dgx-h100"
[[machines.gpus]]
name = "gpu4"
heap_base = 0x4000000000
bar_offset = 0x100000000
[[hosts]]
name = "a"
machine = "dgx"
[[hosts]]
name = "b"
machine = "dgx"
[[scenarios]]
name = "far"
sender = { host = "a", nic = "nic4", gpu = "gpu0" }
receiver = { host = "b", nic = "nic4", gpu = "gpu4" }
[[scenarios]]
name = "near"
sender = { host = "a", nic = "nic0", gpu = "gpu0" }
receiver = { host = "b", nic = "nic0", gpu = "gpu0" }
"#;

fn pxn_config() -> Config {
    config::parse(PXN_CONFIG, "pxn-walk.toml").unwrap()
}

/// Asserts that each line of `text` holding one of `needles` has no English words left: its
/// runs of ASCII letters are names, units, verbs API words or terms the Chinese walk keeps.
fn no_english(text: &str, needles: &[&str]) {
    const KEPT: [&str; 30] = [
        "PXN",
        "NVLink",
        "GPU",
        "GPUDirect",
        "DMA",
        "MTT",
        "FIFO",
        "posted",
        "write",
        "gpu",
        "mem",
        "nvswitch",
        "cpu",
        "dram",
        "nic",
        "SYS",
        "PIX",
        "NV",
        "ibv",
        "reg",
        "peer",
        "memory",
        "gather",
        "src",
        "len",
        "flags",
        "KiB",
        "pxn",
        "CPU",
        "BAR",
    ];
    // Two letters or fewer: host names, hex digits, units, "sw"/"rc" of routes.
    let kept = |w: &str| w.len() <= 2 || KEPT.contains(&w);
    for needle in needles {
        let line = text
            .lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle:?} in\n{text}"));
        for word in line.split(|c: char| !c.is_ascii_alphabetic()) {
            assert!(kept(word), "English {word:?} left in {line:?}");
        }
    }
}

/// PXN (`--path pxn`, and `auto` where NCCL picks it): the far sender's kernel stores the chunk
/// over NVLink into the relay GPU (GPU4, next to NIC4), then a flag into the proxy's host
/// memory, which the proxy thread polls, all before the post; the NIC reads the relay's memory
/// (its bus address, not the sender's). The steps are the simulation's: the relay, post and
/// delivery agree with stages.csv (the summary's stage rows) and results.csv of the same
/// point, for one chunk and for several (the first walked, the others summed up).
#[test]
fn the_pxn_walk_hands_the_chunk_over_nvlink_to_the_relay_before_the_post() {
    let cfg = pxn_config();
    let topo = scenario::topology(&cfg);
    let m = &cfg.hosts[0].machine;
    let (gpu0, gpu4) = (&m.gpus[0], &m.gpus[4]);
    let relay_bus = gpu4.heap_base + gpu4.bar_offset;
    assert_ne!(relay_bus, gpu0.heap_base + gpu0.bar_offset);

    let w = inspect::walk(&cfg, 0, (PathKind::Pxn, Op::WriteImm), 4096).unwrap();
    let en = walkthrough::render(&w, Lang::En);
    let pxn = section(
        &en,
        "=== [1] PXN path (pxn): GPU -> NVLink -> relay GPU next to the NIC -> NIC",
        "=== [2] GPUDirect",
    );
    let store = line_index(
        pxn,
        "a/gpu0.sm   kernel stores over NVLink (PXN): gpu0[0x2A00000000] -> gpu4[0x4000000000] 4096 bytes",
    );
    let flag = line_index(
        pxn,
        "a/gpu0.sm   then the kernel stores the 16 B flag into the proxy's host memory, gpu0 > sw0 > rc0 > cpu0 > cpu1 > cpu1.dram",
    );
    let poll = line_index(
        pxn,
        "a/cpu1.cpu  the proxy thread, polling its FIFO, finds the flag: the chunk is in gpu4's memory",
    );
    let post = line_index(pxn, "a/cpu1.cpu  CPU builds the send WQE");
    assert!(store < flag && flag < poll && poll < post, "{pxn}");
    assert_eq!(
        store,
        line_index(pxn, "    1 "),
        "the hand-over is the first step"
    );
    assert!(
        pxn.lines()
            .nth(store)
            .unwrap()
            .contains("gpu0.mem > gpu0 > nvswitch > gpu4 > gpu4.mem"),
        "the stores' route over NVLink:\n{pxn}"
    );
    assert!(pxn.contains("ibv_reg_mr on gpu4's memory [0x4000000000], the PXN relay's ring"));
    assert!(pxn.contains(
        "DMA descriptor (gather, the NIC reads): src=0x4100000000, len=4096, flags=1 (GPUDirect: GPU memory of the relay gpu4)"
    ));
    assert!(pxn.contains("completions back gpu4.mem > gpu4 > sw4 > nic4"));
    assert!(pxn.contains(
        "PXN DMA descriptor (the NIC reads the relay gpu4's memory): src=0x4100000000, len=4096, flags=1"
    ));
    let p = &w.paths[0];
    assert_eq!(p.gather.as_ref().unwrap().addr, relay_bus);
    assert_eq!(
        w.paths[1].gather.as_ref().unwrap().addr,
        gpu0.heap_base + gpu0.bar_offset
    );
    let c = section(&en, "=== Contrast", "\u{0}");
    assert!(c.contains(
        "PXN DMA source:         0x4100000000 (bus address of the relay gpu4's buffer = virtual address 0x4000000000 + BAR offset 0x100000000)"
    ));
    assert!(c.contains("GPUDirect DMA source:   0x2A80000000 (GPU bus address"));
    assert!(c.contains("GPUDirect removed no copy here"));
    assert!(c.contains(
        "PXN makes no host copy on the sending side either: instead of the NIC reading gpu0 (SYS to nic4), it adds an NVLink hop (gpu0's kernel stores each chunk into gpu4's memory, NV18) and a proxy hand-over"
    ));
    assert!(c.contains("the NIC then reads gpu4 (PIX to nic4)."));

    // The same point's stages.csv rows and results.csv row, for one chunk and several.
    let chunk = cfg.sim.chunk_bytes;
    for size in [4096, 4 * chunk] {
        let w = inspect::walk(&cfg, 0, (PathKind::Pxn, Op::WriteImm), size).unwrap();
        let p = &w.paths[0];
        let r = agrees_with_its_point(&cfg, &topo, (0, PathKind::Pxn, Op::WriteImm, size), p);
        assert_eq!(r.effective_path.name(), "pxn");
        let stage = |name: &str| {
            r.stages
                .iter()
                .find(|s| s.stage.name() == name)
                .unwrap_or_else(|| panic!("no stage {name} at {size}"))
        };
        let is = |s: &walkthrough::Step, k: fn(&walkthrough::StepKind) -> bool| k(&s.kind);
        let find = |k: fn(&walkthrough::StepKind) -> bool| {
            p.steps
                .iter()
                .find(|s| is(s, k))
                .unwrap_or_else(|| panic!("a step missing at {size}"))
        };
        use walkthrough::StepKind as K;
        let (store, poll) = (
            find(|k| matches!(k, K::KernelStore { .. })),
            find(|k| matches!(k, K::ProxyPoll { .. })),
        );
        let build = find(|k| matches!(k, K::BuildWqe { .. }));
        let relay = stage("relay");
        assert_eq!(store.start, relay.start_ps, "{size}");
        assert_eq!(store.component, relay.component, "{size}");
        assert_eq!(build.start, stage("post").start_ps, "{size}");
        assert_eq!(
            build.start,
            poll.start + poll.dur,
            "the proxy posts once it finds the flag"
        );
        let K::KernelStore { bytes, .. } = store.kind else {
            unreachable!()
        };
        if size == 4096 {
            assert_eq!(bytes, 4096);
            // One chunk: the relay stage is its hand-over.
            assert_eq!(poll.start + poll.dur, relay.end_ps);
            assert_eq!(
                p.relay.as_ref().unwrap().hand_over_ps,
                relay.end_ps - relay.start_ps
            );
        } else {
            assert_eq!(bytes, chunk);
            assert!(poll.start + poll.dur < relay.end_ps, "more chunks follow");
            let last = p.steps.last().unwrap();
            assert_eq!(
                last.kind,
                K::Chunks {
                    more: 3,
                    bytes: chunk,
                    total: size,
                    relay: true,
                    copy_in: false,
                    kernel: false,
                    handover: false
                }
            );
            // The walked chunk's DMA read, packets and DMA write count its bytes, not the
            // message's.
            for s in &p.steps {
                match s.kind {
                    K::DmaRead {
                        requests,
                        request_bytes,
                        ..
                    } => assert_eq!(requests, chunk.div_ceil(request_bytes)),
                    K::Wire { packets, mtu, .. } => assert_eq!(packets, chunk.div_ceil(mtu)),
                    K::DmaWrite {
                        writes,
                        write_bytes,
                        ..
                    } => assert_eq!(writes, chunk.div_ceil(write_bytes)),
                    _ => {}
                }
            }
            assert!(walkthrough::render(&w, Lang::En).contains(&format!(
                "the other 3 chunks of {chunk} bytes follow these steps, overlapped through the ring of the relay GPU's chunk buffers; the last one's receive completes"
            )));
        }
        assert!(p.copies.is_empty(), "no cudaMemcpy");
    }

    // auto picks PXN here and walks the same steps, and then NCCL's receiving hand-over:
    // after the poll, the kernel's load of the proxy's tail (pxn's receiver is perftest's).
    let auto = walkthrough::render(
        &inspect::walk(&cfg, 0, (PathKind::Auto, Op::WriteImm), 4096).unwrap(),
        Lang::En,
    );
    let first = section(&auto, "=== [1] PXN path (auto)", "=== [2] GPUDirect");
    assert!(first.contains("note: auto runs what NCCL would choose here: pxn"));
    let table = |t: &str| t[t.find("    #").unwrap()..].to_string();
    let poll = "and reposts a receive WQE\n";
    let (auto_t, pxn_t) = (table(first), table(pxn));
    let (a, b) = (auto_t.find(poll).unwrap(), pxn_t.find(poll).unwrap());
    assert_eq!(
        auto_t[..a],
        pxn_t[..b],
        "the same steps up to the receiving poll"
    );
    let after = auto_t[a + poll.len()..].lines().next().unwrap_or_default();
    assert!(
        after.contains("the receiving kernel, spinning on it, loads it over PCIe"),
        "{after}"
    );

    // Chinese: the same steps, in Chinese.
    let zh = walkthrough::render(&w, Lang::Zh);
    assert!(zh.contains("=== [1] [PXN路径]（pxn）：GPU -> NVLink -> 网卡旁的中继GPU"));
    assert!(
        zh.contains("内核经NVLink写入（PXN）：gpu0[0x2A00000000] -> gpu4[0x4000000000] 4096 字节")
    );
    assert!(zh.contains("中继GPU gpu4 的显存"));
    no_english(
        &zh,
        &[
            "[PXN路径]",
            "PXN中继",
            "内核经NVLink写入",
            "标志写入代理线程",
            "代理线程轮询其FIFO",
            "中继GPU gpu4 的显存",
            "PXN DMA描述符",
            "PXN路径DMA源地址",
            "PXN在发送端",
        ],
    );
}

/// `--path pxn` where no GPU relays (the sender is its NIC's nearest GPU) walks GPUDirect and
/// says why, in the words of results.csv's `reason`.
#[test]
fn pxn_without_a_relay_walks_as_gpudirect_with_the_reason() {
    let cfg = pxn_config();
    let w = inspect::walk(&cfg, 1, (PathKind::Pxn, Op::WriteImm), 4096).unwrap();
    let (p, gd) = (&w.paths[0], &w.paths[1]);
    assert_eq!(p.effective_path.name(), "gpudirect");
    assert!(p.relay.is_none());
    assert_eq!(p.latency_ps, gd.latency_ps);
    assert_eq!(p.steps, gd.steps);
    let en = walkthrough::render(&w, Lang::En);
    let first = section(&en, "=== [1] GPUDirect path (pxn)", "=== [2] GPUDirect");
    assert!(first.contains(
        "note: PXN has no relay here, so the sender runs as GPUDirect; effective path: gpudirect (sender: no PXN relay (gpu0 is nic0's nearest GPU (PIX)) -> GPUDirect)"
    ));
    assert!(!en.contains("kernel stores over NVLink"));
    assert!(!en.contains("PXN DMA"));
    let zh = walkthrough::render(&w, Lang::Zh);
    assert!(zh.contains("注意：此处PXN没有可用的中继GPU，发送端按GPUDirect运行"));

    // On the command line too.
    let dir = scratch("walk", "pxn");
    let file = dir.join("pxn.toml");
    std::fs::write(&file, PXN_CONFIG).unwrap();
    let text = ok(
        &gdrsim(&["walk", s(&file), "--scenario", "far", "--path", "pxn"]),
        "walk pxn",
    );
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(text.contains("=== [1] PXN path (pxn)"));
    assert!(text.contains("the proxy thread, polling its FIFO, finds the flag"));
}

/// Issue #28 item 11: above `coalesce_above` a message moves in bulk, which records the
/// channels that serialise and not a root complex's own traversal, so the contrast counted
/// "root-complex passes 0" for a SYS route that crosses two root complexes on each side. The
/// count is the same whether the message moves in TLPs (4 KiB) or in bulk (1 MiB, 16 MiB).
#[test]
fn root_complex_passes_do_not_depend_on_how_the_message_moves() {
    let cfg = load_config(None).unwrap();
    let row = |scenario: usize, size: u64| -> Vec<String> {
        let text = walkthrough::render(
            &inspect::walk(&cfg, scenario, (PathKind::Staged, Op::WriteImm), size).unwrap(),
            Lang::En,
        );
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with("root-complex passes (payload)"))
            .unwrap_or_else(|| panic!("{text}"));
        line.split_whitespace().skip(3).map(String::from).collect()
    };
    // The default's scenarios: PIX, PHB, SYS. Staged, GPUDirect, removed.
    for (scenario, want) in [
        (0, ["4", "0", "4"]),
        (1, ["4", "2", "2"]),
        (2, ["4", "4", "0"]),
    ] {
        for size in [4096, 1 << 20, 16 << 20] {
            assert_eq!(
                row(scenario, size),
                want,
                "scenario {scenario} at {size} bytes"
            );
        }
    }
}

/// `auto` beyond NCCL_NET_GDR_LEVEL walks NCCL's host path: the sending kernel's stores into
/// mapped host memory, its flag and the proxy's poll before the post; after the receiving poll,
/// the kernel's load of the proxy's flag and of the chunk; no cudaMemcpy; a ring of
/// `pipeline_depth` chunk buffers per side. The walk's numbers are the simulation's, for one
/// chunk and several.
#[test]
fn the_auto_walk_beyond_the_gdr_level_is_nccl_s_host_path() {
    use walkthrough::StepKind as K;
    let cfg = load_config(None).unwrap();
    let topo = scenario::topology(&cfg);
    let si = cfg.scenarios.iter().position(|s| s.name == "PHB").unwrap();
    let chunk = cfg.sim.chunk_bytes;
    for size in [4096, 4 * chunk] {
        let w = inspect::walk(&cfg, si, (PathKind::Auto, Op::WriteImm), size).unwrap();
        let p = &w.paths[0];
        let r = agrees_with_its_point(&cfg, &topo, (si, PathKind::Auto, Op::WriteImm, size), p);
        assert_eq!(r.effective_path.name(), "nccl_host");
        assert!(p.copies.is_empty(), "no cudaMemcpy: {:?}", p.copies);
        let at = |k: fn(&K) -> bool| {
            p.steps
                .iter()
                .position(|s| k(&s.kind))
                .unwrap_or_else(|| panic!("a step missing at {size}"))
        };
        let store = at(|k| matches!(k, K::HostStore { .. }));
        let found = at(|k| matches!(k, K::ProxyFinds));
        let post = at(|k| matches!(k, K::BuildWqe { .. }));
        let flag = at(|k| matches!(k, K::FlagLoad { .. }));
        let load = at(|k| matches!(k, K::HostLoad { .. }));
        assert!(store < found && found < post && post < flag && flag < load);
        let bytes = |k: &K| match k {
            K::HostStore { bytes, .. } | K::HostLoad { bytes, .. } => *bytes,
            _ => 0,
        };
        assert_eq!(bytes(&p.steps[store].kind), size.min(chunk));
        assert_eq!(bytes(&p.steps[load].kind), size.min(chunk));
        let chunks = p
            .steps
            .iter()
            .filter(|s| matches!(s.kind, K::Chunks { kernel: true, .. }))
            .count();
        assert_eq!(chunks, usize::from(size > chunk));
        let text = walkthrough::render(&w, Lang::En);
        assert!(text.contains("NCCL's host path (auto)"), "{text}");
        assert!(!text.contains("cudaMemcpyHtoD"), "{text}");
    }
}

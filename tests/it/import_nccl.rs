//! `gdrsim import nccl-topo` driven as a user runs it, on the samples in tests/data/nccl-topo:
//!
//! - every sample imports, `gdrsim check` accepts the config, and `gdrsim topo` prints the
//!   classes the XML tree implies (PIX under one bridge, PXB under nested ones, PHB through a
//!   `<cpu>`, SYS across `<cpu>`s, NV# from the `<nvlink>` counts), cell by cell; the DGX
//!   A100-like dump gives back the matrix `nvidia-smi topo -m` prints on a DGX A100
//!   (tests/data/topo-m/dgx-a100.txt);
//! - the written links carry the dump's generations and widths, a Gen4 x8 one among them, and
//!   the GPUs' compute capabilities and the NICs' wire rates are the dump's;
//! - `--like` and `--preset` give the other parameters; the dump's facts still win;
//! - a GPU's `<c2c>` (the GH200-like sample) becomes a `[[machines.c2c_links]]` entry at
//!   `bw` x `count` MB/s, with no PCIe link above the GPU: NODE to the NIC on the Grace's root
//!   port (NCCL's P2C), nvbandwidth's copies far above what a PCIe Gen5 x16 link carries, and
//!   under `--preset gh200` the same figures as configs/gh200.toml; MLOPart partitions keep one
//!   GPU with the one shared link;
//! - bad input: exit 2, one `FILE:LINE:COLUMN: expected ..., found ...` line naming the
//!   element and attribute, nothing written.
//!
//! `gdrsim topo`'s output is read with a tab splitter of its own, not the importer's parsers.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::support::{gdrsim, ok, refused, s, scratch, text};

fn sample(name: &str) -> String {
    format!("tests/data/nccl-topo/{name}")
}

/// Imports `file` (with `extra` options) to `dir/NAME.toml`; returns the config's text, the
/// notes (stderr) and its path. `gdrsim check` must accept it.
fn import(dir: &Path, file: &str, extra: &[&str]) -> (String, String, PathBuf) {
    let stem = Path::new(file).file_stem().unwrap().to_str().unwrap();
    let out = dir.join(format!("{stem}.toml"));
    let mut args = vec!["import", "nccl-topo", file, "--out", s(&out)];
    args.extend_from_slice(extra);
    let o = gdrsim(&args);
    ok(&o, &format!("import {file}"));
    assert!(o.stdout.is_empty(), "the config goes to --out only");
    ok(
        &gdrsim(&["check", s(&out)]),
        &format!("check of {file}'s import"),
    );
    (fs::read_to_string(&out).unwrap(), text(&o.stderr), out)
}

/// The first host's matrix of `gdrsim topo CONFIG`: cells by (row label, column label).
fn topo(config: &Path) -> BTreeMap<(String, String), String> {
    matrix(&ok(&gdrsim(&["topo", s(config)]), "topo"))
}

/// The cells of a tab-separated matrix (after an optional `node-a (...)` line), by (row label,
/// column label), up to the first empty line.
fn matrix(out: &str) -> BTreeMap<(String, String), String> {
    let mut lines = out.lines().skip_while(|l| l.starts_with("node-a"));
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split('\t')
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .take_while(|c| c != "CPU Affinity")
        .collect();
    let mut cells = BTreeMap::new();
    for l in lines.take_while(|l| !l.trim().is_empty()) {
        let row: Vec<&str> = l.split('\t').map(str::trim).collect();
        for (c, label) in header.iter().enumerate() {
            cells.insert((row[0].to_string(), label.clone()), row[c + 1].to_string());
        }
    }
    cells
}

/// The cell of `row` and `column`.
fn cell<'a>(m: &'a BTreeMap<(String, String), String>, row: &str, column: &str) -> &'a str {
    m.get(&(row.to_string(), column.to_string()))
        .unwrap_or_else(|| panic!("no cell {row}-{column}"))
}

/// The SUM figure of nvbandwidth's `testcase` on `config`.
fn nvbandwidth(testcase: &str, config: &str) -> f64 {
    let out = ok(&gdrsim(&["nvbandwidth", testcase, config]), testcase);
    out.lines()
        .find_map(|l| l.strip_prefix(&format!("SUM {testcase} ")))
        .unwrap_or_else(|| panic!("no SUM line in\n{out}"))
        .trim()
        .parse()
        .expect("a figure")
}

/// Writes each case's XML (an edit of `good`) to `dir` and imports it: exit 2 with the file
/// and the case's message (`:LINE:COLUMN: expected ...`) on stderr, nothing written.
fn refuses(dir: &Path, good: &str, cases: Vec<(&str, String, String)>) {
    for (what, xml, message) in cases {
        assert_ne!(xml, good, "{what}: the edit applies");
        let src = dir.join(format!("{what}.xml"));
        fs::write(&src, &xml).unwrap();
        let out = dir.join(format!("{what}.toml"));
        let o = gdrsim(&["import", "nccl-topo", s(&src), "--out", s(&out)]);
        refused(&o, what, &src, &message, &out);
    }
}

/// The (generation, width) of the link down to `down` in a config's text.
fn link(config: &str, down: &str) -> (u32, u32) {
    let at = config
        .find(&format!("down = \"{down}\"\n"))
        .unwrap_or_else(|| panic!("no link down to {down}"));
    let mut values = config[at..].lines().skip(1).take(2).map(|l| {
        let v = l.split('=').nth(1).unwrap();
        v.split('#').next().unwrap().trim().parse::<u32>().unwrap()
    });
    (values.next().unwrap(), values.next().unwrap())
}

#[test]
fn every_sample_imports_and_checks() {
    let dir = scratch("import-nccl", "all");
    for f in fs::read_dir("tests/data/nccl-topo").unwrap() {
        let f = f.unwrap().path();
        let (config, notes, _) = import(&dir, s(&f), &[]);
        assert!(
            notes.starts_with("note: parameters: the built-in defaults"),
            "{notes}"
        );
        assert!(config.contains("[[scenarios]]"), "{}", f.display());
    }
}

#[test]
fn dgx_h100_classes_are_the_trees() {
    let dir = scratch("import-nccl", "h100");
    let (config, notes, out) = import(&dir, &sample("dgx-h100.xml"), &[]);
    let m = topo(&out);
    // GPU i and NIC i under one switch; the other NICs of the <cpu> through it; SYS across.
    for g in 0..8 {
        for n in 0..8 {
            let want = if g == n {
                "PIX"
            } else if g / 4 == n / 4 {
                "PHB"
            } else {
                "SYS"
            };
            assert_eq!(
                cell(&m, &format!("GPU{g}"), &format!("NIC{n}")),
                want,
                "GPU{g}-NIC{n}"
            );
        }
        for h in (0..8).filter(|&h| h != g) {
            // 4 + 5 + 5 + 4 links into the four NVSwitch chips: NV18, as nvidia-smi prints.
            assert_eq!(cell(&m, &format!("GPU{g}"), &format!("GPU{h}")), "NV18");
        }
    }
    assert_eq!(cell(&m, "NIC0", "NIC1"), "PHB");
    assert!(
        notes.contains("8 GPU(s) on NVSwitches, 18 links each (4 NVSwitch chip(s) in the dump"),
        "{notes}"
    );
    assert!(
        notes.contains("PCIe links as the dump gives them: 24 x Gen5 x16"),
        "{notes}"
    );
    assert!(
        notes.contains("nvidia-smi prints NODE between host bridges"),
        "{notes}"
    );
    assert_eq!(link(&config, "gpu0"), (5, 16));
    assert!(config.contains("compute_capability = \"9.0\"\nmodel = \"H100 SXM5 80GB\""));
    assert!(config.contains("name = \"mlx5_3\"  # NIC3: 0000:5e:00.0, speed 400000 Mb/s\nmodel = \"ConnectX-7\"\nwire_rate_gbps = 400"));
    assert!(config.contains("name = \"GPU0-NIC0\"") && config.contains("name = \"GPU7-NIC7\""));
}

#[test]
fn dgx_a100_gives_back_the_matrix_nvidia_smi_prints() {
    let dir = scratch("import-nccl", "a100");
    let (config, notes, out) = import(&dir, &sample("dgx-a100.xml"), &[]);
    let got = topo(&out);
    let want = matrix(&fs::read_to_string("tests/data/topo-m/dgx-a100.txt").unwrap());
    // nvidia-smi names the NICs mlx5_N; the import's NICn are mlx5_N in dev order. mlx5_9, the
    // storage card's second port, is left out (one port per NIC).
    let label = |l: &str| match l.strip_prefix("mlx5_") {
        Some(n) => format!("NIC{n}"),
        None => l.to_string(),
    };
    let mut compared = 0;
    for ((row, column), w) in &want {
        if row == "mlx5_9" || column == "mlx5_9" || row == column {
            continue;
        }
        assert_eq!(cell(&got, &label(row), &label(column)), w, "{row}-{column}");
        compared += 1;
    }
    assert_eq!(compared, 17 * 16);
    assert!(
        notes.contains("one switch each as NCCL flattens them: 0000:01:00.0 with 0000:03:00.0; "),
        "{notes}"
    );
    assert!(
        notes.contains("the others left out: mlx5_9 (port 2 of 0000:e1:00.0)"),
        "{notes}"
    );
    assert!(config.contains("compute_capability = \"8.0\"\nmodel = \"A100 SXM4 80GB\""));
    assert!(config.contains("wire_rate_gbps = 200"));
}

#[test]
fn links_are_the_dumps_generations_and_widths() {
    let dir = scratch("import-nccl", "links");
    let (config, notes, out) = import(&dir, &sample("workstation-2gpu.xml"), &[]);
    // GPU1's slot is wired x8: Gen4 x8; the NIC sits in a Gen3 x16 slot.
    assert_eq!(link(&config, "gpu0"), (4, 16));
    assert_eq!(link(&config, "gpu1"), (4, 8));
    assert_eq!(link(&config, "mlx5_0"), (3, 16));
    assert!(config.contains("width = 8  # 0000:21:00.0: 16.0 GT/s PCIe x8"));
    let m = topo(&out);
    assert_eq!(cell(&m, "GPU0", "GPU1"), "NV4");
    assert_eq!(cell(&m, "GPU0", "NIC0"), "PHB");
    assert_eq!(cell(&m, "GPU1", "NIC0"), "PHB");
    assert!(config.contains("compute_capability = \"8.6\""));
    assert!(config.contains("wire_rate_gbps = 100"));
    for note in [
        "PCIe links as the dump gives them: 1 x Gen4 x16, 1 x Gen4 x8, 1 x Gen3 x16",
        "models estimated from sm",
        "1 direct GPU-GPU bond(s)",
        "without GPUDirect RDMA (gdr=\"0\"",
        "neither GPU, NIC nor bridge, skipped: 0000:c1:00.0 (class 0x010802)",
    ] {
        assert!(notes.contains(note), "{note}: {notes}");
    }
    // EFA NICs on Gen4 x8 links under the GPU's switch: PIX to their GPU, PHB to the other.
    let (config, _, out) = import(&dir, &sample("p5-efa.xml"), &[]);
    assert_eq!(link(&config, "rdmap80s0"), (4, 8));
    assert_eq!(link(&config, "gpu0"), (5, 16));
    let m = topo(&out);
    for n in 0..4 {
        assert_eq!(cell(&m, "GPU0", &format!("NIC{n}")), "PIX");
        assert_eq!(cell(&m, "GPU1", &format!("NIC{n}")), "PHB");
    }
    assert_eq!(cell(&m, "GPU1", "NIC4"), "PIX");
}

#[test]
fn a_topology_file_without_gpu_and_nic_elements_imports() {
    let dir = scratch("import-nccl", "file");
    let (config, notes, out) = import(&dir, &sample("ndv4-topo-file.xml"), &[]);
    let m = topo(&out);
    assert_eq!(cell(&m, "GPU0", "NIC0"), "PIX");
    assert_eq!(cell(&m, "GPU0", "NIC1"), "PIX");
    assert_eq!(cell(&m, "GPU0", "NIC2"), "SYS");
    assert_eq!(
        link(&config, "nic3"),
        (4, 16),
        "\"16 GT/s\": the pre-5.7 kernel spelling"
    );
    assert!(
        notes.contains("GPUs given by their PCI class only"),
        "{notes}"
    );
    assert!(!config.contains("compute_capability"));
}

#[test]
fn like_and_preset_give_the_other_parameters_and_the_dump_wins() {
    let dir = scratch("import-nccl", "like");
    let (config, notes, _) = import(
        &dir,
        &sample("dgx-h100.xml"),
        &["--like", "configs/dgx-h100.toml"],
    );
    assert!(
        notes.contains("parameters: the first machine of configs/dgx-h100.toml"),
        "{notes}"
    );
    assert!(
        notes.contains("PCIe links as the dump gives them (Gen5 x16 to switches"),
        "{notes}"
    );
    assert!(
        config.contains("memory_rate_gbps = \"3350GB/s\""),
        "GPU parameters copied"
    );
    assert!(
        config.contains("dram_rate_gbps = \"300GB/s\""),
        "socket parameters copied"
    );
    // The workstation under the DGX A100 preset: sm 86 and 100 Gb/s stay the dump's, and the
    // preset's A100 model, whose compute capability is not 8.6, gives way to an estimate.
    let (config, _, _) = import(
        &dir,
        &sample("workstation-2gpu.xml"),
        &["--preset", "dgx-a100"],
    );
    assert!(config.contains("compute_capability = \"8.6\""));
    assert!(config.contains("model = \"A10/A40-class (Ampere), sm 86\""));
    assert!(config.contains("wire_rate_gbps = 100"));
    assert_eq!(link(&config, "gpu1"), (4, 8));
}

#[test]
fn a_gh200_gpu_hangs_from_grace_by_c2c_at_the_dumps_rate() {
    use gdrsim::config::defaults as d;
    let dir = scratch("import-nccl", "gh200");
    let (config, notes, out) = import(&dir, &sample("gh200.xml"), &[]);
    let cfg = gdrsim::config::load(&out).unwrap();
    let m = &cfg.hosts[0].machine;
    assert!(
        m.links.iter().all(|l| l.down != "gpu0"),
        "no PCIe link above gpu0"
    );
    assert_eq!(m.c2c_links.len(), 1);
    let c = &m.c2c_links[0];
    assert_eq!((c.socket.as_str(), c.gpu.as_str()), ("cpu0", "gpu0"));
    // <c2c bw="45000" count="10">: 10 links of 45000 MB/s, 450 GB/s each way.
    assert_eq!(c.rate.bps(), 10 * 45_000 * 8_000_000);
    assert!(
        config.contains("rate_gbps = \"450GB/s\"  # 0009:01:00.0: <c2c bw=\"45000\" count=\"10\">"),
        "{config}"
    );
    // Latency, packet size and header: the model's estimates.
    assert_eq!(
        (c.latency, c.mps, c.overhead),
        (d::C2C_LATENCY, d::C2C_MPS, d::C2C_OVERHEAD)
    );
    assert_eq!(cell(&topo(&out), "GPU0", "NIC0"), "NODE");
    for note in [
        "NVLink-C2C (<c2c>): GPUs that hang from the socket of their <cpu>",
        "gpu0 450 GB/s; latency, packet size and header the built-in estimates",
        "their PCIe links left out (a GPU of the model has C2C or PCIe; NCCL keeps both): 0009:01:00.0 (Gen5 x16)",
        "PCIe links as the dump gives them: 1 x Gen5 x16",
    ] {
        assert!(notes.contains(note), "{note}: {notes}");
    }
    assert!(!notes.contains("are PHB"), "{notes}");
    // Host copies cross C2C: more than twice what a Gen5 x16 link carries raw (64 GB/s).
    let h2d = nvbandwidth("host_to_device_memcpy_ce", s(&out));
    let d2h = nvbandwidth("device_to_host_memcpy_ce", s(&out));
    assert!(h2d > 128.0 && d2h > 128.0, "H2D {h2d}, D2H {d2h}");

    // Under the gh200 preset, the import copies as the preset's own machine does (but for
    // the jitter of another seed).
    let (config, notes, out) = import(&dir, &sample("gh200.xml"), &["--preset", "gh200"]);
    assert!(config.contains("ce_read_window = 307"), "{config}");
    assert!(
        notes.contains(
            "latency, packet size and header those of the first C2C link of preset gh200"
        ),
        "{notes}"
    );
    for t in ["host_to_device_memcpy_ce", "device_to_host_memcpy_ce"] {
        let (got, preset) = (
            nvbandwidth(t, s(&out)),
            nvbandwidth(t, "configs/gh200.toml"),
        );
        assert!(
            (got / preset - 1.0).abs() < 0.001,
            "{t}: {got} against {preset}"
        );
    }

    // --like a config whose C2C link sets its latency: taken; its rate gives way to the dump's.
    let like = dir.join("like.toml");
    fs::write(
        &like,
        config.replace(
            "rate_gbps = \"450GB/s\"",
            "rate_gbps = \"100GB/s\"\nlatency_ns = 200",
        ),
    )
    .unwrap();
    let (config, _, out) = import(&dir, &sample("gh200.xml"), &["--like", s(&like)]);
    assert!(config.contains("latency_ns = 200"), "{config}");
    let c = &gdrsim::config::load(&out).unwrap().hosts[0]
        .machine
        .c2c_links[0];
    assert_eq!(c.rate.bps(), 10 * 45_000 * 8_000_000);
    assert_eq!(c.latency, 200_000, "picoseconds");
}

#[test]
fn mlopart_partitions_keep_one_gpu_with_their_shared_c2c() {
    let dir = scratch("import-nccl", "mlopart");
    let gpu = "      <gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\">\n        <c2c bw=\"45000\" count=\"10\"/>\n      </gpu>\n";
    let good = fs::read_to_string(sample("gh200.xml")).unwrap();
    assert!(good.contains(gpu));
    let parts = format!(
        "{}{}",
        gpu.replace("rank=\"0\"", "mlopart=\"0\" rank=\"0\""),
        gpu.replace("rank=\"0\"", "mlopart=\"1\" rank=\"1\"")
    );
    let src = dir.join("mlopart.xml");
    fs::write(&src, good.replace(gpu, &parts)).unwrap();
    let (config, notes, _) = import(&dir, s(&src), &[]);
    assert_eq!(config.matches("[[machines.gpus]]").count(), 1);
    assert_eq!(config.matches("[[machines.c2c_links]]").count(), 1);
    assert!(
        config.contains("rate_gbps = \"450GB/s\""),
        "the whole C2C, shared"
    );
    assert!(
        notes.contains("partitions of one GPU sharing its NVLink-C2C (MLOPart: NCCL's nSibDevs > 1 joins them to the CPU through one C2C bridge at the C2C's rate): the one GPU kept has that one link: 0009:01:00.0"),
        "{notes}"
    );
}

#[test]
fn a_bad_c2c_exits_2_naming_its_attribute_and_writes_nothing() {
    let dir = scratch("import-nccl", "bad-c2c");
    let good = fs::read_to_string(sample("gh200.xml")).unwrap();
    let line = good[..good.find("<c2c bw=\"45000\"").unwrap()]
        .matches('\n')
        .count()
        + 1;
    let col = |needle: &str| good.lines().nth(line - 1).unwrap().find(needle).unwrap() + 1;
    let count = format!(
        ":{line}:{}: expected <c2c> count: the number of active NVLink-C2C links, from 1 to 64, found",
        col("count=")
    );
    let bw = |at: &str| {
        format!(
            ":{line}:{}: expected <c2c> bw: each link's bandwidth in MB/s as NVML gives it, from 1 to 1000000 (45000 for 45 GB/s), found",
            col(at)
        )
    };
    let cases = vec![
        (
            "count-0",
            good.replace("count=\"10\"", "count=\"0\""),
            format!("{count} count=\"0\""),
        ),
        (
            "count-text",
            good.replace("count=\"10\"", "count=\"ten\""),
            format!("{count} count=\"ten\""),
        ),
        (
            "bw-negative",
            good.replace("bw=\"45000\"", "bw=\"-45000\""),
            format!("{} bw=\"-45000\"", bw("bw=")),
        ),
        (
            "bw-unit",
            good.replace("bw=\"45000\"", "bw=\"45 GB/s\""),
            format!("{} bw=\"45 GB/s\"", bw("bw=")),
        ),
        (
            "bw-none",
            good.replace(" bw=\"45000\"", ""),
            format!("{} no bw attribute", bw("<c2c")),
        ),
    ];
    refuses(&dir, &good, cases);
}

#[test]
fn a_nic_with_no_pci_device_hangs_on_the_root_complex() {
    let dir = scratch("import-nccl", "cpu-nic");
    let xml = fs::read_to_string(sample("workstation-2gpu.xml")).unwrap().replace(
        "  </cpu>",
        "    <nic>\n      <net name=\"eth9\" dev=\"9\" speed=\"25000\" port=\"1\"/>\n    </nic>\n  </cpu>",
    );
    let src = dir.join("virtual-nic.xml");
    fs::write(&src, xml).unwrap();
    let (config, notes, out) = import(&dir, s(&src), &[]);
    assert!(notes.contains("NICs with no PCI device (NCCL hangs them on the CPU), on the root complex with the parameters' link: eth9"), "{notes}");
    assert!(config.contains("up = \"rc0\"\ndown = \"eth9\"\ngeneration = 5\nwidth = 16"));
    assert!(config.contains("wire_rate_gbps = 25"));
    assert_eq!(cell(&topo(&out), "GPU0", "NIC1"), "PHB");
}

#[test]
fn bad_input_exits_2_naming_line_and_column_and_writes_nothing() {
    let dir = scratch("import-nccl", "bad");
    let good = fs::read_to_string(sample("workstation-2gpu.xml")).unwrap();
    let line_of = |needle: &str| good[..good.find(needle).unwrap()].matches('\n').count() + 1;
    // The column (from 1) of `needle` in line `line` (from 1).
    let col =
        |line: usize, needle: &str| good.lines().nth(line - 1).unwrap().find(needle).unwrap() + 1;
    let nic = line_of("busid=\"0000:41:00.0\"");
    let gpu0 = line_of("<gpu dev=\"0\"");
    let gpu1 = line_of("busid=\"0000:21:00.0\"");
    let cases: Vec<(&str, String, String)> = vec![
        (
            "truncated",
            good[..good.find("<nvlink target=\"0000:21:00.0\"").unwrap()].to_string(),
            format!(
                ":{gpu0}:{}: expected the rest of <gpu> begun at line {gpu0} column 7 (the file ends inside it: truncated?), found end of file",
                good.lines().nth(gpu0 - 1).unwrap().len() + 1,
            ),
        ),
        (
            "unknown-speed",
            good.replace("8.0 GT/s PCIe", "12.0 GT/s PCIe"),
            format!(
                ":{nic}:{}: expected <pci busid=\"0000:41:00.0\"> link_speed: a PCIe link speed as sysfs writes it: 2.5, 5, 8, 16, 32 or 64 GT/s, as \"16.0 GT/s PCIe\" (Linux 5.7 on) or \"16 GT/s\" (before), or empty where NCCL read none, found link_speed=\"12.0 GT/s PCIe\"",
                col(nic, "link_speed=")
            ),
        ),
        (
            "width",
            good.replace("link_width=\"8\"", "link_width=\"6\""),
            format!(
                ":{gpu1}:{}: expected <pci busid=\"0000:21:00.0\"> link_width: a PCIe link width (1, 2, 4, 8, 12, 16 or 32 lanes), or 0 or empty where NCCL read none, found link_width=\"6\"",
                col(gpu1, "link_width=")
            ),
        ),
        (
            "no-sm",
            good.replacen(" sm=\"86\"", "", 1),
            format!(
                ":{gpu0}:{}: expected <gpu> sm: the compute capability as 10 x major + minor (sm=\"90\" for 9.0), found no sm attribute",
                col(gpu0, "<gpu")
            ),
        ),
        (
            "nvlink-target",
            good.replace("<nvlink target=\"0000:21:00.0\"", "<nvlink target=\"0000:22:00.0\""),
            format!(
                ":{}:{}: expected <nvlink> target: the bus ID of a GPU of this dump (tclass 0x03... says the target is a GPU; an NVSwitch is 0x068000), found target=\"0000:22:00.0\", which no <gpu> has",
                gpu0 + 1,
                col(gpu0 + 1, "<nvlink")
            ),
        ),
        (
            "same-busid",
            good.replace("busid=\"0000:41:00.0\"", "busid=\"0000:21:00.0\""),
            format!(
                ":{nic}:{}: expected <pci busid=\"0000:21:00.0\"> busid: a bus ID no other device has (0000:21:00.0 is at line {gpu1} column {}), found busid=\"0000:21:00.0\" again",
                col(nic, "busid="),
                col(gpu1, "<pci")
            ),
        ),
        (
            "hwloc",
            "<topology version=\"2.0\">\n</topology>\n".to_string(),
            ":1:1: expected an NCCL topology dump: a <system version=\"1\"> root element, as NCCL_TOPO_DUMP_FILE writes it, found <topology> (an hwloc XML from lstopo, not NCCL's)".to_string(),
        ),
    ];
    refuses(&dir, &good, cases);
    let o = gdrsim(&[
        "import",
        "nccl-topo",
        "tests/data/nccl-topo/no-such-file.xml",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

/// A dump whose GPU hangs below `bridges` nested PCIe bridges of one `<cpu>` (one per line,
/// from line 3), with a NIC on a root port of its own.
fn nested_bridges(bridges: usize) -> String {
    let mut x = String::new();
    for i in 1..=bridges {
        x.push_str(&format!(
            "<pci busid=\"{:04x}:{:02x}:00.0\" class=\"0x060400\" {LINK}>\n",
            i >> 8,
            i & 0xff
        ));
    }
    x.push_str(&format!(
        "<pci busid=\"ffff:ff:00.0\" class=\"0x030000\" {LINK}><gpu dev=\"0\" sm=\"90\"/></pci>\n"
    ));
    x.push_str(&"</pci>\n".repeat(bridges));
    one_cpu_and_a_nic(&x)
}

/// Gen4 x16, the link of every device of the generated dumps.
const LINK: &str = "link_speed=\"16.0 GT/s PCIe\" link_width=\"16\"";

/// A dump of one CPU holding `devices` (`<pci>` elements) and then a NIC.
fn one_cpu_and_a_nic(devices: &str) -> String {
    format!(
        "<system version=\"1\">\n<cpu numaid=\"0\" affinity=\"ff\" arch=\"x86_64\" \
         vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\">\n{devices}<pci \
         busid=\"ffff:fe:00.0\" class=\"0x020000\" {LINK}><nic><net name=\"mlx5_0\" dev=\"0\" \
         speed=\"400000\" port=\"1\" gdr=\"1\"/></nic></pci>\n</cpu>\n</system>\n"
    )
}

/// Issue #27 item 6: 10,000 nested PCIe bridges overflowed the stack (exit 134). A dump deeper
/// than 64 levels of `<pci>` is refused at the first element beyond the bound (line 67 here:
/// bridges from line 3); 64 levels (63 bridges and the GPU) still import.
#[test]
fn pci_nesting_beyond_64_levels_is_refused_by_line() {
    let dir = scratch("import-nccl", "deep");
    let (deep, out) = (dir.join("deep.xml"), dir.join("deep.toml"));
    fs::write(&deep, nested_bridges(10_000)).unwrap();
    let o = gdrsim(&["import", "nccl-topo", s(&deep), "--out", s(&out)]);
    let message = ":67:1: expected at most 64 levels of <pci> below a <cpu> (a real machine has \
                   fewer than 10), found <pci busid=\"0000:41:00.0\"> at level 65";
    refused(&o, "10,000 nested bridges", &deep, message, &out);
    let at_bound = dir.join("d64.xml");
    fs::write(&at_bound, nested_bridges(63)).unwrap();
    let (_, notes, _) = import(&dir, s(&at_bound), &[]);
    assert!(
        notes.contains("63 switch(es), 1 GPU(s), 1 NIC(s)"),
        "{notes}"
    );
}

/// A dump of `bridges` sibling PCIe bridges under one CPU, each with a GPU below it, then a NIC.
fn many_gpus(bridges: usize) -> String {
    let mut x = String::new();
    for i in 0..bridges {
        let bus = format!("{:04x}:{:02x}", (i >> 8) + 1, i & 0xff);
        x.push_str(&format!(
            "<pci busid=\"{bus}:00.0\" class=\"0x060400\" {LINK}><pci busid=\"{bus}:01.0\" \
             class=\"0x030000\" {LINK}><gpu dev=\"{i}\" sm=\"90\"/></pci></pci>\n"
        ));
    }
    one_cpu_and_a_nic(&x)
}

/// Issue #27 item 10: imports have a size bound, so a huge dump is refused at once instead of
/// running for minutes: at most 1,024 `<pci>` devices (here 600 bridges with a GPU each, the
/// 1,025th device on line 515).
#[test]
fn a_dump_of_more_than_1024_pci_devices_is_refused() {
    let dir = scratch("import-nccl", "many");
    let (big, out) = (dir.join("big.xml"), dir.join("big.toml"));
    fs::write(&big, many_gpus(600)).unwrap();
    let o = gdrsim(&["import", "nccl-topo", s(&big), "--out", s(&out)]);
    let message = ":515:1: expected at most 1024 <pci> devices (a real machine has a few \
                   hundred at most), found <pci busid=\"0003:00:00.0\"> as device 1025";
    refused(&o, "600 GPUs under bridges", &big, message, &out);
}

//! Machine presets (issue #10, "Presets"), driven as a user runs them:
//!
//! - every built-in preset loads (`gdrsim check` of a two-host, one-scenario config naming it,
//!   in both forms: `[[machines]] preset` and `[[hosts]] preset`), and `gdrsim topo` gives the
//!   classes its board has, cell by cell (for DGX H100 and DGX A100 also against the real
//!   `nvidia-smi topo -m` samples in tests/data/topo-m);
//! - an override changes exactly its key (`gdrsim params` with and without it), in a sub-table,
//!   in an entry by name, in a link by its ends, and a new entry is added;
//! - an unknown preset and a bad override are exit 2 naming the key;
//! - configs/dgx-h100.toml names the `dgx-h100` preset and loads to the machine the preset's file
//!   spells out; the resolved config has no preset in it and loads back the same;
//! - `gdrsim presets` lists them, `gdrsim presets NAME` prints the file, `import topo-m
//!   --preset` takes a preset's parameters.

use std::fs;
use std::path::PathBuf;

use crate::support::{dgx_h100_spelled_out, gdrsim, ok, s, scratch, text};

const PRESETS: [&str; 6] = [
    "dgx-h100",
    "dgx-a100",
    "hgx-b200",
    "gh200",
    "pcie-gen5-2s",
    "workstation",
];

/// A small study on two hosts of `preset`: the machine as `[[machines]] preset` with `extra`
/// keys after it, or (`by_host`) each host naming the preset.
fn study(preset: &str, by_host: bool, extra: &str) -> String {
    let nic = if preset == "dgx-a100" {
        "mlx5_0"
    } else {
        "nic0"
    };
    let (machines, hosts) = if by_host {
        (
            String::new(),
            format!(
                "[[hosts]]\nname = \"a\"\npreset = \"{preset}\"\n\n[[hosts]]\nname = \"b\"\n\
                 preset = \"{preset}\"\n"
            ),
        )
    } else {
        (
            format!("[[machines]]\nname = \"m\"\npreset = \"{preset}\"\n{extra}\n"),
            "[[hosts]]\nname = \"a\"\nmachine = \"m\"\n\n[[hosts]]\nname = \"b\"\nmachine = \"m\"\n"
                .to_string(),
        )
    };
    format!(
        "name = \"preset-{preset}\"\n\n[sweep]\nsizes = [\"4KiB\"]\npaths = [\"staged\", \
         \"gpudirect\"]\n\n{machines}{hosts}\n[[scenarios]]\nname = \"s\"\nsender = {{ host = \
         \"a\", nic = \"{nic}\", gpu = \"gpu0\" }}\nreceiver = {{ host = \"b\", nic = \"{nic}\", \
         gpu = \"gpu0\" }}\n"
    )
}

fn write(dir: &std::path::Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    fs::write(&p, body).unwrap();
    p
}

/// The first host's matrix of `gdrsim topo`: labels and cells by (row, column) label.
fn topo(config: &std::path::Path) -> Vec<(String, String, String)> {
    let out = ok(&gdrsim(&["topo", s(config)]), "gdrsim topo");
    let mut lines = out.lines().skip(1);
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split('\t')
        .skip(1)
        .take_while(|h| *h != "CPU Affinity")
        .map(String::from)
        .collect();
    let mut cells = Vec::new();
    for l in lines.take_while(|l| !l.is_empty()) {
        let f: Vec<&str> = l.split('\t').collect();
        for (c, h) in header.iter().enumerate() {
            cells.push((f[0].to_string(), h.clone(), f[1 + c].trim().to_string()));
        }
    }
    cells
}

/// A device label's kind and index: ("GPU", 3), ("NIC", 0).
fn dev(label: &str) -> (&str, usize) {
    let (k, i) = label.split_at(3);
    (k, i.parse().unwrap())
}

/// Where a device of a kind and index sits: its socket, or its switch.
type Place = fn(&str, usize) -> usize;

/// The class `preset`'s board has between two devices (as nvidia-smi prints it).
fn expected(preset: &str, a: &str, b: &str) -> String {
    let ((ka, ia), (kb, ib)) = (dev(a), dev(b));
    if a == b {
        return "X".into();
    }
    let gpus = ka == "GPU" && kb == "GPU";
    // The NUMA node (socket) of a device, and the PCIe switch it hangs under.
    let (socket, switch): (Place, Place) = match preset {
        // GPU i and NIC i under switch i, four switches per socket.
        "dgx-h100" | "hgx-b200" => (|_, i| i / 4, |_, i| i),
        // Two GPUs and two NICs per complex, one complex per NUMA node.
        "dgx-a100" => (|_, i| i / 2, |_, i| i / 2),
        // Two GPUs and one NIC per switch, two switches per socket.
        "pcie-gen5-2s" => (
            |k, i| if k == "GPU" { i / 4 } else { i / 2 },
            |k, i| if k == "GPU" { i / 2 } else { i },
        ),
        _ => (|_, _| 0, |_, _| 0),
    };
    match preset {
        "dgx-h100" | "hgx-b200" if gpus => "NV18".into(),
        "dgx-a100" if gpus => "NV12".into(),
        "gh200" => "NODE".into(),
        "workstation" => "PHB".into(),
        _ if socket(ka, ia) != socket(kb, ib) => "SYS".into(),
        // DGX A100: a GPU one switch level below its complex's NICs; NUMA nodes are SYS apart.
        "dgx-a100" if switch(ka, ia) == switch(kb, ib) => {
            if ka == kb { "PIX" } else { "PXB" }.into()
        }
        _ if switch(ka, ia) == switch(kb, ib) => "PIX".into(),
        _ => "NODE".into(),
    }
}

#[test]
fn every_preset_loads_and_gives_its_boards_classes_cell_by_cell() {
    let dir = scratch("presets", "classes");
    for p in PRESETS {
        for by_host in [false, true] {
            let c = write(&dir, &format!("{p}-{by_host}.toml"), &study(p, by_host, ""));
            let o = gdrsim(&["check", "--strict", s(&c)]);
            assert!(ok(&o, p).contains(": ok ("), "{p}");
            assert!(o.stderr.is_empty(), "{p}: {}", text(&o.stderr));
            let cells = topo(&c);
            let devices = match p {
                "gh200" | "workstation" => 2,
                "pcie-gen5-2s" => 12,
                _ => 16,
            };
            assert_eq!(cells.len(), devices * devices, "{p}");
            for (a, b, cell) in &cells {
                assert_eq!(*cell, expected(p, a, b), "{p}: {a}-{b}");
            }
        }
    }
}

/// The real matrices these boards print: every GPU-GPU and GPU-NIC cell of the modelled NICs.
#[test]
fn dgx_presets_reproduce_the_real_topo_m_samples() {
    let dir = scratch("presets", "samples");
    for (p, sample, nic_labels) in [
        ("dgx-h100", "dgx-h100.txt", "NIC"),
        ("dgx-a100", "dgx-a100.txt", "mlx5_"),
    ] {
        let c = write(&dir, &format!("{p}.toml"), &study(p, true, ""));
        let model = topo(&c);
        let real = fs::read_to_string(format!(
            "{}/tests/data/topo-m/{sample}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let mut lines = real.lines();
        let header: Vec<&str> = lines.next().unwrap().split('\t').skip(1).collect();
        let mut compared = 0;
        for l in lines.take_while(|l| l.starts_with("GPU")) {
            let f: Vec<&str> = l.split('\t').collect();
            for (c, h) in header.iter().enumerate() {
                // The model's NICs are the compute rails, NIC0..NIC7 (mlx5_0..mlx5_7).
                let col = match h.strip_prefix(nic_labels) {
                    Some(i) if i.parse::<usize>().is_ok_and(|i| i < 8) => format!("NIC{i}"),
                    _ if h
                        .strip_prefix("GPU")
                        .is_some_and(|i| i.parse::<usize>().is_ok()) =>
                    {
                        h.to_string()
                    }
                    _ => continue,
                };
                let cell = f[1 + c].trim();
                let m = model
                    .iter()
                    .find(|(a, b, _)| a == f[0] && *b == col)
                    .unwrap_or_else(|| panic!("{p}: no cell {}-{col}", f[0]));
                assert_eq!(m.2, cell, "{p}: {}-{h}", f[0]);
                compared += 1;
            }
        }
        assert_eq!(compared, 8 * 16, "{p}");
    }
}

/// `gdrsim params` lines of a config, without the closing count of estimates.
fn params(config: &std::path::Path) -> Vec<String> {
    let out = ok(&gdrsim(&["params", s(config)]), "gdrsim params");
    let mut lines: Vec<String> = out.lines().map(String::from).collect();
    assert!(lines.pop().unwrap().contains("estimates"));
    lines
}

#[test]
fn an_override_changes_exactly_its_key() {
    let dir = scratch("presets", "override");
    let base = params(&write(&dir, "base.toml", &study("dgx-h100", false, "")));
    let keys = |lines: &[String]| -> Vec<String> {
        lines
            .iter()
            .filter_map(|l| l.split_whitespace().next().map(String::from))
            .collect()
    };
    for (name, extra, changed) in [
        (
            "cpu",
            "[machines.cpu]\npost_ns = 120\n",
            vec!["machines[0].cpu.post_ns"],
        ),
        (
            "nic",
            "[[machines.nics]]\nname = \"nic3\"\nwire_rate_gbps = 200\n",
            vec!["machines[0].nics[3].wire_rate_gbps"],
        ),
        (
            "bond",
            "[[machines.nvlinks]]\na = \"nvswitch\"\nb = \"gpu6\"\nlatency_ns = 150\n",
            vec!["machines[0].nvlinks[6].latency_ns"],
        ),
        (
            "socket-link",
            "[[machines.socket_links]]\na = \"cpu1\"\nb = \"cpu0\"\nrate_gbps = \"64GB/s\"\n",
            vec!["machines[0].socket_links[0].rate_gbps"],
        ),
    ] {
        let got = params(&write(
            &dir,
            &format!("{name}.toml"),
            &study("dgx-h100", false, extra),
        ));
        assert_eq!(keys(&got), keys(&base), "{name}: the same parameters");
        let differ: Vec<String> = got
            .iter()
            .zip(&base)
            .filter(|(a, b)| a != b)
            .filter_map(|(a, _)| a.split_whitespace().next().map(String::from))
            .collect();
        assert_eq!(differ, changed, "{name}");
    }
    // A link by (up, down): its width only, seen in the route's ceiling; and a new GPU under a
    // switch of the preset's is added after its eight.
    let c = write(
        &dir,
        "added.toml",
        &study(
            "dgx-h100",
            false,
            "[[machines.gpus]]\nname = \"gpu8\"\nmodel = \"H100 SXM5 80GB\"\n\
             [[machines.links]]\nup = \"sw0\"\ndown = \"gpu8\"\ngeneration = 5\nwidth = 16\n\
             [[machines.links]]\nup = \"rc0\"\ndown = \"sw0\"\nwidth = 8\n",
        ),
    );
    let got = params(&c);
    let gpu8: Vec<&String> = got
        .iter()
        .filter(|l| l.starts_with("machines[0].gpus[8]."))
        .collect();
    assert!(!gpu8.is_empty(), "gpu8 is added as the ninth GPU");
    // ... and its link's generation and width (params lists every link's, issue #28).
    assert_eq!(got.len(), base.len() + gpu8.len() + 2);
    let cfg = gdrsim::config::load(&c).unwrap();
    let m = &cfg.hosts[0].machine;
    assert_eq!(m.gpus.len(), 9);
    let l = m
        .links
        .iter()
        .find(|l| l.up == "rc0" && l.down == "sw0")
        .unwrap();
    assert_eq!(
        (l.generation, l.width),
        (5, 8),
        "width changed, generation kept"
    );
    assert_eq!(m.links.len(), 25);
    // The machine keeps its own name; without one it takes the preset's.
    assert_eq!(m.name, "m");
    let cfg = gdrsim::config::parse(
        &study("gh200", false, "")
            .replace("name = \"m\"\n", "")
            .replace("machine = \"m\"", "machine = \"gh200\""),
        "t",
    )
    .unwrap();
    assert_eq!(cfg.hosts[0].machine.name, "gh200");
}

#[test]
fn unknown_presets_and_bad_overrides_are_exit_2_naming_the_key() {
    let dir = scratch("presets", "bad");
    for (name, body, needles) in [
        (
            "unknown",
            study("dgx-h200", false, ""),
            vec![
                "key `machines[0].preset`",
                "dgx-h100, dgx-a100, hgx-b200, gh200, pcie-gen5-2s, workstation",
                "found \"dgx-h200\"",
            ],
        ),
        (
            "unknown-host",
            study("nope", true, ""),
            vec!["key `hosts[0].preset`", "found \"nope\""],
        ),
        (
            "bad-value",
            study("dgx-h100", false, "[machines.cpu]\npost_ns = \"fast\"\n"),
            vec!["key `machines[0].cpu.post_ns`", "expected a duration"],
        ),
        (
            "unknown-key",
            study("dgx-h100", false, "[machines.cpu]\npostns = 5\n"),
            vec!["key `machines[0].cpu.postns`", "unknown key `postns`"],
        ),
        (
            "entry-without-name",
            study(
                "dgx-h100",
                false,
                "[[machines.nics]]\nwire_rate_gbps = 200\n",
            ),
            vec![
                "key `machines[0].nics[0].name`",
                "nothing (the key is missing)",
            ],
        ),
        (
            "bad-link",
            study(
                "dgx-h100",
                false,
                "[[machines.links]]\nup = \"sw3\"\ndown = \"gpu3\"\nwidth = 3\n",
            ),
            vec!["key `machines[0].links[10].width`", "found 3"],
        ),
        (
            "both",
            study("gh200", true, "").replace(
                "preset = \"gh200\"\n\n[[hosts]]\nname = \"b\"",
                "preset = \"gh200\"\nmachine = \"x\"\n\n[[hosts]]\nname = \"b\"",
            ),
            vec!["key `hosts[0].preset`", "not both"],
        ),
    ] {
        let c = write(&dir, &format!("{name}.toml"), &body);
        let o = gdrsim(&["check", s(&c)]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", text(&o.stderr));
        let err = text(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{name}: one line: {err}");
        for n in needles {
            assert!(err.contains(n), "{name}: {n:?} in {err}");
        }
    }
    let o = gdrsim(&["presets", "dgx-h200"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("found \"dgx-h200\""));
}

#[test]
fn dgx_h100_config_runs_on_the_preset_that_spells_its_machine_out() {
    let config = fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/configs/dgx-h100.toml"
    ))
    .unwrap();
    assert!(config.contains("\npreset = \"dgx-h100\""));
    // The same study with the preset's file pasted in place of the preset key.
    let spelled = dgx_h100_spelled_out();
    assert_ne!(spelled, config);
    // The pasted machine ends in [[machines.nvlinks]] tables: the hosts after it stay top-level.
    let a = gdrsim::config::parse(&config, "preset form").unwrap();
    let b = gdrsim::config::parse(&spelled, "spelled out").unwrap();
    assert_eq!(a, b);
    // The resolved config spells everything out and needs no preset to load back the same.
    let resolved = gdrsim::config::to_toml(&a);
    assert!(!resolved.contains("preset"));
    assert_eq!(gdrsim::config::parse(&resolved, "resolved").unwrap(), a);
}

#[test]
fn the_presets_command_lists_and_prints_them() {
    let list = ok(&gdrsim(&["presets"]), "gdrsim presets");
    for p in PRESETS {
        assert_eq!(
            list.lines()
                .filter(|l| l.starts_with(&format!("{p} ")))
                .count(),
            1,
            "{p}: one line in\n{list}"
        );
        let shown = ok(&gdrsim(&["presets", p]), p);
        let file = fs::read_to_string(format!(
            "{}/configs/presets/{p}.toml",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        assert_eq!(shown, file, "{p}");
    }
}

#[test]
fn import_takes_a_presets_parameters() {
    let dir = scratch("presets", "import");
    let out = dir.join("imported.toml");
    let o = gdrsim(&[
        "import",
        "topo-m",
        "tests/data/topo-m/workstation-2gpu.txt",
        "--preset",
        "hgx-b200",
        "--out",
        s(&out),
    ]);
    let stderr = text(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("the first machine of preset hgx-b200"),
        "{stderr}"
    );
    let t = fs::read_to_string(&out).unwrap();
    assert!(t.contains("model = \"B200\""), "{t}");
    assert!(t.contains("dram_rate_gbps = \"350GB/s\""), "{t}");
    assert!(gdrsim(&["check", s(&out)]).status.success());
    // --like a config whose machine is a preset's reads the preset's keys.
    let o = gdrsim(&[
        "import",
        "topo-m",
        "tests/data/topo-m/workstation-2gpu.txt",
        "--like",
        "configs/dgx-h100.toml",
    ]);
    assert!(ok(&o, "--like").contains("model = \"H100 SXM5 80GB\""));
    let o = gdrsim(&[
        "import",
        "topo-m",
        "tests/data/topo-m/workstation-2gpu.txt",
        "--preset",
        "nope",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("key `--preset`"));
}

/// Issue #28 item 10: GPU and NIC models in a config. `preset = "l40s"` on a GPU entry and
/// `preset = "connectx-6"` on a NIC entry of a machine preset change those devices (model,
/// compute capability, memory and wire rates) and fit their links to the models' Gen4, a key
/// written beside the model wins, the resolved config spells the figures out without the
/// models, a run takes them (GPUDirect bound by the HDR port's 200 Gb/s), and `gdrsim
/// presets ID` prints a model's figures with their sources.
#[test]
fn device_models_set_their_devices_in_a_config() {
    let text = "name = \"models\"\n[sim]\niterations = 5\nstream_budget_bytes = \"64MiB\"\n\
        [sweep]\nsizes = [\"4MiB\"]\npaths = [\"gpudirect\"]\n\
        [[machines]]\nname = \"box\"\npreset = \"pcie-gen5-2s\"\n\
        [[machines.gpus]]\nname = \"gpu0\"\npreset = \"l40s\"\nmemory_latency_ns = 400\n\
        [[machines.nics]]\nname = \"nic0\"\npreset = \"connectx-6\"\n\
        [[hosts]]\nname = \"a\"\nmachine = \"box\"\n[[hosts]]\nname = \"b\"\nmachine = \"box\"\n\
        [[scenarios]]\nname = \"L40S-CX6\"\nsender = { host = \"a\", nic = \"nic0\", gpu = \"gpu0\" }\n\
        receiver = { host = \"b\", nic = \"nic0\", gpu = \"gpu0\" }\n";
    let dir = scratch("presets", "device-models");
    let c = dir.join("c.toml");
    fs::write(&c, text).unwrap();
    let params = ok(&gdrsim(&["params", s(&c)]), "params");
    let value = |key: &str| {
        params
            .lines()
            .find(|l| l.starts_with(&format!("{key} ")))
            .unwrap_or_else(|| panic!("{key}"))
            .split_whitespace()
            .nth(1)
            .unwrap()
            .to_string()
    };
    assert_eq!(value("machines[0].gpus[0].model"), "L40S");
    assert_eq!(value("machines[0].gpus[0].compute_capability"), "8.9");
    assert_eq!(value("machines[0].gpus[0].memory_latency_ns"), "400");
    assert_eq!(value("machines[0].gpus[1].model"), "H100");
    assert_eq!(value("machines[0].nics[0].wire_rate_gbps"), "200");
    // The links down to gpu0 and nic0 train at Gen4, the others stay the preset's Gen5.
    let gens: Vec<(String, String)> = params
        .lines()
        .filter(|l| l.contains(".generation "))
        .map(|l| {
            let mut w = l.split_whitespace();
            (w.next().unwrap().to_string(), w.next().unwrap().to_string())
        })
        .collect();
    assert_eq!(gens.iter().filter(|(_, g)| g == "4").count(), 2, "{gens:?}");
    assert!(gens.len() > 2);

    let out = dir.join("out");
    ok(&gdrsim(&["run", s(&c), "--quiet", "--out", s(&out)]), "run");
    let resolved = fs::read_to_string(out.join("config.toml")).unwrap();
    assert!(
        resolved.contains("model = \"L40S\"") && resolved.contains("model = \"ConnectX-6 HDR\"")
    );
    assert!(!resolved.contains("preset"), "{resolved}");
    let results = fs::read_to_string(out.join("results.csv")).unwrap();
    let header: Vec<&str> = results.lines().next().unwrap().split(',').collect();
    let bw = header.iter().position(|h| *h == "bw_GBps").unwrap();
    let row: Vec<&str> = results.lines().nth(1).unwrap().split(',').collect();
    let gbs: f64 = row[bw].parse().unwrap();
    assert!(
        gbs > 15.0 && gbs < 25.0,
        "GPUDirect over an HDR port: {gbs} GB/s"
    );

    let show = ok(&gdrsim(&["presets", "l40s"]), "presets l40s");
    assert!(
        show.contains("864 GB/s") && show.contains("row D23"),
        "{show}"
    );
    let list = ok(&gdrsim(&["presets"]), "presets");
    assert!(
        list.contains("connectx-8") && list.contains("Gen6 x16"),
        "{list}"
    );
    // An unknown model is exit 2 naming the key and listing the models.
    let bad = dir.join("bad.toml");
    fs::write(&bad, text.replace("\"connectx-6\"", "\"connectx-9\"")).unwrap();
    let o = gdrsim(&["check", s(&bad)]);
    let e = crate::support::text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("machines[0].nics[0].preset") && e.contains("\"connectx-9\""),
        "{e}"
    );
    assert!(e.contains("connectx-7, connectx-8, bluefield-3"), "{e}");
}

/// Issue #28 item 10, the copy engine's read windows per GPU model: a GPU entry naming a model
/// takes its windows where a row or a documented estimate gives them. b200-sxm: 256 over PCIe
/// and 2048 over NVLink (estimates: twice the Gen5 and NVLink 4 parts' for twice the rate);
/// h200-sxm: 128 (row M2) and 1024 (row L4); an L40S keeps the defaults (rows D9 and D11
/// disagree on a window for Ada); a window written on the entry wins over the model's.
/// `presets b200-sxm` prints both windows with their sources.
#[test]
fn device_models_set_the_copy_engines_read_windows() {
    let text = "name = \"windows\"\n[sweep]\nsizes = [\"4MiB\"]\npaths = [\"gpudirect\"]\n\
        [[machines]]\nname = \"box\"\npreset = \"pcie-gen5-2s\"\n\
        [[machines.gpus]]\nname = \"gpu0\"\npreset = \"b200-sxm\"\n\
        [[machines.gpus]]\nname = \"gpu1\"\npreset = \"h200-sxm\"\n\
        [[machines.gpus]]\nname = \"gpu2\"\npreset = \"l40s\"\n\
        [[machines.gpus]]\nname = \"gpu3\"\npreset = \"b200-sxm\"\nce_read_window = 64\n\
        [[hosts]]\nname = \"a\"\nmachine = \"box\"\n[[hosts]]\nname = \"b\"\nmachine = \"box\"\n\
        [[scenarios]]\nname = \"B200\"\nsender = { host = \"a\", nic = \"nic0\", gpu = \"gpu0\" }\n\
        receiver = { host = \"b\", nic = \"nic0\", gpu = \"gpu0\" }\n";
    let dir = scratch("presets", "ce-windows");
    let c = dir.join("c.toml");
    fs::write(&c, text).unwrap();
    let params = ok(&gdrsim(&["params", s(&c)]), "params");
    let value = |gpu: usize, key: &str| {
        let key = format!("machines[0].gpus[{gpu}].{key} ");
        params
            .lines()
            .find(|l| l.starts_with(&key))
            .unwrap_or_else(|| panic!("{key}\n{params}"))
            .split_whitespace()
            .nth(1)
            .unwrap()
            .to_string()
    };
    let windows = |gpu| {
        (
            value(gpu, "ce_read_window"),
            value(gpu, "ce_nvlink_read_window"),
        )
    };
    assert_eq!(windows(0), ("256".into(), "2048".into()));
    assert_eq!(windows(1), ("128".into(), "1024".into()));
    assert_eq!(windows(2), ("128".into(), "1024".into()), "the defaults");
    assert_eq!(
        windows(3),
        ("64".into(), "2048".into()),
        "the entry's key wins"
    );
    let show = ok(&gdrsim(&["presets", "b200-sxm"]), "presets b200-sxm");
    assert!(
        show.contains("ce_read_window") && show.contains("ce_nvlink_read_window"),
        "{show}"
    );
    assert!(show.contains("estimate (no measurement"), "{show}");
    let show = ok(&gdrsim(&["presets", "h200-sxm"]), "presets h200-sxm");
    assert!(show.contains("row M2") && show.contains("row L4"), "{show}");
}

/// Network presets (`[network] preset = "NAME"`): `gdrsim presets` lists each, prints each as
/// a `[network]` table with every key's source; a config naming one gets its fabric (the
/// SuperPOD unit: 32 DGX H100, 8 rail leaves, 4 spines, 12 switches), a key written beside it
/// overrides the preset's (routing), the resolved config spells the keys out, and an unknown
/// name is exit 2 naming `network.preset`.
#[test]
fn network_presets_fill_the_fabrics_keys() {
    use gdrsim::config::network_preset::NETWORK_PRESETS;
    let list = ok(&gdrsim(&["presets"]), "gdrsim presets");
    for p in &NETWORK_PRESETS {
        assert!(
            list.lines().any(|l| l.starts_with(&format!("{} ", p.name))),
            "{list}"
        );
        let shown = ok(&gdrsim(&["presets", p.name]), p.name);
        assert!(shown.contains("[network]\n"), "{shown}");
        for k in p.keys {
            assert!(
                shown.contains(&format!("{} = {}", k.key, k.value)),
                "{shown}"
            );
            assert!(shown.contains(k.source), "{shown}");
        }
    }
    let dir = scratch("presets", "network");
    let body = |net: &str| {
        format!(
            "name = \"su\"\n[sweep]\nsizes = [\"1MiB\"]\npaths = [\"host\"]\nops = [\"write_imm\"]\n\
             [network]\n{net}\n[[hosts]]\nname = \"node\"\ncount = 32\npreset = \"dgx-h100\"\n\
             [[scenarios]]\nname = \"s\"\nflows = [{{ sender = {{ host = \"node0\", nic = \"nic0\", buffer = \"host\" }}, receiver = {{ host = \"node31\", nic = \"nic3\", buffer = \"host\" }} }}]\n"
        )
    };
    let cfg = write(
        &dir,
        "su.toml",
        &body("preset = \"superpod-h100-su\"\nrouting = \"adaptive\""),
    );
    let out = ok(&gdrsim(&["topo", s(&cfg), "--network"]), "topo --network");
    assert!(
        out.starts_with("fabric: rail-optimized (routing: adaptive)\n"),
        "{out}"
    );
    assert!(out.contains("switches: 12 (8 leaf, 4 spine)"), "{out}");
    let resolved = gdrsim::config::to_toml(&gdrsim::config::load(&cfg).unwrap());
    assert!(resolved.contains("hosts_per_unit = 32"), "{resolved}");
    assert!(!resolved.contains("preset = \"superpod"), "{resolved}");
    let bad = write(&dir, "bad.toml", &body("preset = \"superpod\""));
    let o = gdrsim(&["topo", s(&bad), "--network"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("network.preset") && err.contains("superpod-h100-su"),
        "{err}"
    );
}

//! Issue #10, NVLink in the machine graph: NVSwitches and NVLink bonds in a config, GPU pairs
//! classed `NV#` as `nvidia-smi topo -m` prints them, and bad NVLink tables refused.

use crate::support::{dgx_h100_spelled_out, gdrsim, ok, s, scratch, text};
use std::fs;

/// configs/dgx-h100.toml: every GPU pair NV18 through the NVSwitch, every GPU-NIC cell its
/// PCIe class (PIX to its own NIC, NODE on its socket, SYS across), as the HGX H100 matrix of
/// NVIDIA/nccl issue #1453.
#[test]
fn dgx_h100_gpu_pairs_are_nv18() {
    let out = ok(&gdrsim(&["topo", "configs/dgx-h100.toml"]), "topo");
    let rows: Vec<Vec<&str>> = out
        .lines()
        .filter(|l| l.starts_with("GPU"))
        .take(8)
        .map(|l| l.split('\t').map(str::trim).collect())
        .collect();
    assert_eq!(rows.len(), 8, "{out}");
    for (g, row) in rows.iter().enumerate() {
        for (c, cell) in row[1..9].iter().enumerate() {
            assert_eq!(*cell, if c == g { "X" } else { "NV18" }, "GPU{g} GPU{c}");
        }
        let own = row[9 + g];
        assert_eq!(own, "PIX", "GPU{g} to NIC{g}");
    }
}

/// Each bad NVLink table exits 2 naming its key, before any work.
#[test]
fn bad_nvlink_tables_are_refused_naming_the_key() {
    let dir = scratch("nvlink", "bad");
    // configs/dgx-h100.toml's machine is the dgx-h100 preset's: spelled out, to edit its tables.
    let dgx_h100 = dgx_h100_spelled_out();
    let first = "[[machines.nvlinks]]\na = \"gpu0\"\nb = \"nvswitch\"\nlinks = 18\n";
    assert!(dgx_h100.contains(first));
    let cases = [
        (
            "a = \"nic0\"\nb = \"nvswitch\"\nlinks = 18\n",
            "machines[0].nvlinks[0].a",
        ),
        (
            "a = \"gpu0\"\nb = \"gpu0\"\nlinks = 18\n",
            "machines[0].nvlinks[0].b",
        ),
        (
            "a = \"gpu0\"\nb = \"nvsw\"\nlinks = 18\n",
            "machines[0].nvlinks[0].b",
        ),
        (
            "a = \"gpu0\"\nb = \"nvswitch\"\nlinks = 0\n",
            "machines[0].nvlinks[0].links",
        ),
        (
            "a = \"gpu1\"\nb = \"nvswitch\"\nlinks = 18\n",
            "machines[0].nvlinks[1].b",
        ),
    ];
    for (i, (table, key)) in cases.iter().enumerate() {
        let text_in = dgx_h100.replacen(first, &format!("[[machines.nvlinks]]\n{table}"), 1);
        let p = dir.join(format!("bad{i}.toml"));
        fs::write(&p, text_in).unwrap();
        let o = gdrsim(&["check", s(&p)]);
        assert_eq!(o.status.code(), Some(2), "{table}: {}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains(&format!("key `{key}`")),
            "{table}: {}",
            text(&o.stderr)
        );
    }
    let _ = fs::remove_dir_all(&dir);
}

//! The NVLink fabric of a dump, from its GPUs' `<nvlink>` elements: one NVSwitch for every
//! NVSwitch target, and direct bonds between GPUs.
//!
//! A GPU lists its links by the device at the other end: `tclass="0x068000"` an NVSwitch chip
//! (an HGX H100 board has four, and each GPU has 4 or 5 links into each), `0x03...` another GPU
//! of the dump, `0x068001` the CPU (POWER9). NCCL makes one NVSwitch node of all the chips,
//! each GPU joined to it by the sum of its links (topo.cc `ncclTopoAddNvLinks`); so does this
//! import, which keeps the `NV#` that `nvidia-smi topo -m` prints (NV18 on H100). A GPU-GPU
//! bond is listed by both GPUs: where both list it, they must agree.

use super::super::nvlink::Fabric;
use super::values::{self, Class, Pos};
use super::xml::Gpu;
use crate::config::ConfigError;
use crate::topology::MAX_NVLINKS;

/// The fabric of `gpus` (GPUs by their index in `gpus`: on the NVSwitch with their links into
/// it, and direct bonds, each pair once), and what the notes say of it; `file` names the dump
/// in errors.
pub fn fabric(gpus: &[&Gpu], file: &str) -> Result<(Fabric, Vec<String>), ConfigError> {
    let busids: Vec<Option<u64>> = gpus.iter().map(|g| values::busid(&g.pci.busid)).collect();
    let mut f = Fabric::default();
    let mut notes = Vec::new();
    let mut chips: Vec<u64> = Vec::new();
    // Listed bonds: (from, to, links, where).
    let mut listed: Vec<(usize, usize, u32, Pos)> = Vec::new();
    let mut to_cpu = Vec::new();
    for (i, g) in gpus.iter().enumerate() {
        let mut into_switch = 0;
        for l in &g.nvlinks {
            let target = values::busid(&l.target);
            match l.class {
                Class::NvSwitch => {
                    into_switch += l.count;
                    if let Some(t) = target.filter(|t| !chips.contains(t)) {
                        chips.push(t);
                    }
                }
                Class::Cpu => to_cpu.push(g.pci.busid.clone()),
                _ => {
                    let Some(j) = busids.iter().position(|b| b.is_some() && *b == target) else {
                        return Err(l.at.err(
                            file,
                            "<nvlink> target: the bus ID of a GPU of this dump (tclass 0x03... says the target is a GPU; an NVSwitch is 0x068000)",
                            format!("target={:?}, which no <gpu> has", l.target),
                        ));
                    };
                    if j == i {
                        return Err(l.at.err(
                            file,
                            "<nvlink> target: another GPU than the one listing it",
                            format!("target={:?}, its own bus ID", l.target),
                        ));
                    }
                    match listed.iter_mut().find(|b| b.0 == i && b.1 == j) {
                        Some(b) => b.2 += l.count,
                        None => listed.push((i, j, l.count, l.at)),
                    }
                }
            }
        }
        if into_switch > MAX_NVLINKS {
            return Err(g.at.err(
                file,
                format!("<gpu>: at most {MAX_NVLINKS} NVLinks into NVSwitches in all"),
                format!("{into_switch} (the sum of its <nvlink> counts)"),
            ));
        }
        if into_switch > 0 {
            f.switched.push((i, into_switch));
        }
    }
    for &(i, j, n, at) in &listed {
        match listed.iter().find(|b| b.0 == j && b.1 == i) {
            Some(&(_, _, m, other)) if m != n && i > j => {
                return Err(at.err(
                    file,
                    format!(
                        "<nvlink> count: {m}, as the other GPU lists this bond (line {} column {})",
                        other.line, other.col
                    ),
                    format!("count=\"{n}\""),
                ));
            }
            Some(_) if i > j => {}
            _ => f.direct.push((i.min(j), i.max(j), n)),
        }
    }
    if !f.switched.is_empty() {
        let mut counts: Vec<u32> = f.switched.iter().map(|s| s.1).collect();
        counts.dedup();
        let each = if counts.len() == 1 {
            format!("{} links each", counts[0])
        } else {
            format!(
                "links: {}",
                f.switched
                    .iter()
                    .map(|&(g, n)| format!("{} {n}", gpus[g].pci.busid))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        notes.push(format!(
            "NVLink: {} GPU(s) on NVSwitches, {each} ({} NVSwitch chip(s) in the dump; one NVSwitch here, as NCCL makes one node of them all)",
            f.switched.len(),
            chips.len()
        ));
    }
    if !f.direct.is_empty() {
        notes.push(format!(
            "NVLink: {} direct GPU-GPU bond(s), as the GPUs' <nvlink> elements list them",
            f.direct.len()
        ));
    }
    if !to_cpu.is_empty() {
        notes.push(format!(
            "NVLinks to the CPU (tclass 0x068001, POWER9), not modelled: {}",
            to_cpu.join(", ")
        ));
    }
    Ok((f, notes))
}

#[cfg(test)]
mod tests {
    use super::super::xml::{Lanes, NvLink, Pci};
    use super::*;

    fn gpu(busid: &str, links: &[(&str, &str, u32)]) -> Gpu {
        let at = Pos { line: 1, col: 1 };
        Gpu {
            pci: Pci {
                busid: busid.to_string(),
                class: "0x030200".to_string(),
                id: 0,
                lanes: Lanes::default(),
                at,
            },
            sm: Some(90),
            dev: None,
            nvlinks: links
                .iter()
                .enumerate()
                .map(|(k, &(target, tclass, count))| NvLink {
                    target: target.to_string(),
                    class: values::class(tclass),
                    count,
                    at: Pos {
                        line: 10 + k,
                        col: 3,
                    },
                })
                .collect(),
            c2c: None,
            at,
        }
    }

    #[test]
    fn nvswitch_chips_become_one_switch_with_the_sum_of_the_links() {
        let chips = [
            ("0000:05:00.0", "0x068000", 4),
            ("0000:06:00.0", "0x068000", 5),
            ("0000:07:00.0", "0x068000", 5),
            ("0000:08:00.0", "0x068000", 4),
        ];
        let (a, b) = (gpu("0000:18:00.0", &chips), gpu("0000:2a:00.0", &chips));
        let (f, notes) = fabric(&[&a, &b], "d.xml").unwrap();
        assert_eq!(f.switched, vec![(0, 18), (1, 18)]);
        assert!(f.direct.is_empty());
        assert!(notes[0].contains("2 GPU(s) on NVSwitches, 18 links each (4 NVSwitch chip(s)"));
    }

    #[test]
    fn direct_bonds_are_one_per_pair_and_must_agree() {
        let a = gpu("0000:01:00.0", &[("0000:02:00.0", "0x030200", 4)]);
        let b = gpu("0000:02:00.0", &[("0000:01:00.0", "0x030200", 4)]);
        let (f, _) = fabric(&[&a, &b], "d.xml").unwrap();
        assert_eq!(f.direct, vec![(0, 1, 4)]);
        let b3 = gpu("0000:02:00.0", &[("0000:01:00.0", "0x030200", 3)]);
        assert_eq!(
            fabric(&[&a, &b3], "d.xml").unwrap_err().to_string(),
            "d.xml:10:3: expected <nvlink> count: 4, as the other GPU lists this bond (line 10 column 3), found count=\"3\""
        );
        // Listed by one side only: still a bond.
        let lone = gpu("0000:02:00.0", &[]);
        assert_eq!(
            fabric(&[&a, &lone], "d.xml").unwrap().0.direct,
            vec![(0, 1, 4)]
        );
    }

    #[test]
    fn a_target_that_is_no_gpu_of_the_dump_is_refused() {
        let a = gpu("0000:01:00.0", &[("0000:09:00.0", "0x030200", 2)]);
        let e = fabric(&[&a], "d.xml").unwrap_err().to_string();
        assert!(
            e.starts_with("d.xml:10:3: expected <nvlink> target: the bus ID of a GPU of this dump"),
            "{e}"
        );
        assert!(
            e.ends_with("found target=\"0000:09:00.0\", which no <gpu> has"),
            "{e}"
        );
        let own = gpu("0000:01:00.0", &[("0000:01:00.0", "0x030200", 2)]);
        assert!(
            fabric(&[&own], "d.xml")
                .unwrap_err()
                .to_string()
                .contains("its own bus ID")
        );
        let many = gpu(
            "0000:01:00.0",
            &[
                ("0000:05:00.0", "0x068000", 20),
                ("0000:06:00.0", "0x068000", 20),
            ],
        );
        assert!(
            fabric(&[&many], "d.xml")
                .unwrap_err()
                .to_string()
                .contains("at most 36 NVLinks into NVSwitches in all, found 40")
        );
    }
}

//! The NVLink fabric of an imported matrix, from its GPU-GPU `NV#` cells: an NVSwitch where the
//! bonds cannot be direct, else one bond per GPU pair.
//!
//! A matrix says how many links join two GPUs, not how: NV12 between all eight GPUs of a DGX
//! A100 comes through NVSwitches (no GPU has 7 x 12 links), NV4 between the four GPUs of an
//! HGX A100 4-GPU board are direct bonds (3 x 4 = 12 links, what an A100 has). So where every
//! pair of a group of three or more GPUs has the same NV#, and a GPU could not have that many
//! links to each of the others (more than [`MAX_LINKS_PER_GPU`] in all), the group hangs off one
//! NVSwitch with that many links per GPU; every other `NV#` cell is a direct bond.

use std::fmt::Write as _;

use super::emit::quoted;
use super::matrix::{Cell, DeviceKind, Matrix};

/// The most NVLinks one GPU has (H100 and B200 SXM: 18).
pub const MAX_LINKS_PER_GPU: u32 = 18;

/// The NVLink fabric: the GPUs (device indices; for `nccl-topo`, GPU indices) under one
/// NVSwitch with their links each, and the direct bonds (device, device, links).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fabric {
    /// GPUs on the NVSwitch and the links each has into it (empty: no NVSwitch).
    pub switched: Vec<(usize, u32)>,
    /// Direct bonds between two GPUs.
    pub direct: Vec<(usize, usize, u32)>,
}

/// The fabric the matrix's `NV#` cells describe.
pub fn fabric(m: &Matrix) -> Fabric {
    let gpus: Vec<usize> = m.of(DeviceKind::Gpu).map(|(i, _)| i).collect();
    let nv = |a: usize, b: usize| match m.cells[a][b] {
        Cell::NvLink(n) => Some(n),
        _ => None,
    };
    let mut pairs = Vec::new();
    for (x, &a) in gpus.iter().enumerate() {
        for &b in &gpus[x + 1..] {
            if let Some(n) = nv(a, b) {
                pairs.push((a, b, n));
            }
        }
    }
    let all = gpus.len() * gpus.len().saturating_sub(1) / 2;
    let same = pairs.first().map(|p| p.2);
    let uniform = gpus.len() >= 3 && pairs.len() == all && pairs.iter().all(|p| Some(p.2) == same);
    match same {
        Some(n) if uniform && n * (gpus.len() as u32 - 1) > MAX_LINKS_PER_GPU => Fabric {
            switched: gpus.iter().map(|&g| (g, n)).collect(),
            direct: Vec::new(),
        },
        _ => Fabric {
            switched: Vec::new(),
            direct: pairs,
        },
    }
}

impl Fabric {
    /// The fabric's tables ([`tables`]), each GPU named by `name` of its index.
    pub fn tables<'a>(&self, name: impl Fn(usize) -> &'a str) -> String {
        let switched: Vec<(&str, u32)> = self.switched.iter().map(|&(g, n)| (name(g), n)).collect();
        let direct: Vec<(&str, &str, u32)> = self
            .direct
            .iter()
            .map(|&(a, b, n)| (name(a), name(b), n))
            .collect();
        tables(&switched, &direct)
    }
}

/// The `[[machines.nvswitches]]` and `[[machines.nvlinks]]` tables of a fabric (empty text
/// without NVLink): `switched` GPUs (names) with their links into one NVSwitch named
/// `nvswitch`, and `direct` bonds between two GPUs.
pub fn tables(switched: &[(&str, u32)], direct: &[(&str, &str, u32)]) -> String {
    let mut out = String::new();
    if !switched.is_empty() {
        out.push_str("\n[[machines.nvswitches]]\nname = \"nvswitch\"\n");
    }
    let bond = |out: &mut String, a: &str, b: &str, links: u32| {
        let _ = write!(
            out,
            "\n[[machines.nvlinks]]\na = {}\nb = {}\nlinks = {links}\n",
            quoted(a),
            quoted(b)
        );
    };
    for &(g, n) in switched {
        bond(&mut out, g, "nvswitch", n);
    }
    for &(a, b, n) in direct {
        bond(&mut out, a, b, n);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(gpus: usize, cell: impl Fn(usize, usize) -> Cell) -> Matrix {
        let mut text = String::from("\t");
        for g in 0..gpus {
            text.push_str(&format!("GPU{g}\t"));
        }
        text.push_str("mlx5_0\tCPU Affinity\tNUMA Affinity\n");
        for a in 0..gpus {
            text.push_str(&format!("GPU{a}\t"));
            for b in 0..gpus {
                text.push_str(&if a == b {
                    " X ".into()
                } else {
                    cell(a, b).text()
                });
                text.push('\t');
            }
            text.push_str("PIX\t0-7\t0\n");
        }
        text.push_str("mlx5_0\t");
        for _ in 0..gpus {
            text.push_str("PIX\t");
        }
        text.push_str(" X \n");
        super::super::matrix::parse(&text, "m.txt").expect("a matrix")
    }

    #[test]
    fn nvswitch_boards_and_direct_bonds_are_told_apart() {
        // DGX A100: NV12 between all eight: 7 x 12 links is more than a GPU has.
        let m8 = matrix(8, |_, _| Cell::NvLink(12));
        let f = fabric(&m8);
        assert_eq!(f.switched.len(), 8);
        assert!(f.direct.is_empty() && f.switched.iter().all(|s| s.1 == 12));
        // HGX A100 4-GPU: NV4 between all four, 3 x 4 = 12 links: direct.
        let f = fabric(&matrix(4, |_, _| Cell::NvLink(4)));
        assert!(f.switched.is_empty());
        assert_eq!(f.direct.len(), 6);
        // DGX-1 style: some pairs NV1, NV2, others PCIe only: direct where NV.
        let f = fabric(&matrix(4, |a, b| match (a + b) % 3 {
            0 => Cell::Pcie(crate::topology::Affinity::Sys),
            1 => Cell::NvLink(1),
            _ => Cell::NvLink(2),
        }));
        assert!(f.switched.is_empty());
        assert!(f.direct.iter().all(|d| d.2 == 1 || d.2 == 2));
        let text = tables(&[], &[("gpu0", "gpu1", 4)]);
        assert_eq!(
            text,
            "\n[[machines.nvlinks]]\na = \"gpu0\"\nb = \"gpu1\"\nlinks = 4\n"
        );
    }
}

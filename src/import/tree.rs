//! From a matrix's classes to a PCIe tree: sockets, root complexes, switches, devices.
//!
//! Top down, each group of devices is split into the groups whose members are at most one class
//! apart: a socket holds the devices NODE or closer (and the GPUs of one NUMA node), a root
//! complex those PHB or closer, a switch tree those PXB or closer, and a leaf switch those PIX.
//! A PXB group of several PIX groups becomes an upper switch with a leaf switch per PIX group
//! (so every pair in it crosses two or three switches: PXB); a PXB group of one PIX group is one
//! switch; a lone device hangs on its root complex's root port.
//!
//! The groups are joined by the GPU-NIC cells first: two devices are in one group where a chain
//! of GPU-NIC cells at most the level joins them. A GPU-GPU (or NIC-NIC) cell, or a shared NUMA
//! node, joins two groups only where both hold GPUs only (or NICs only), since joining a GPU to a
//! NIC the GPU-NIC cells keep apart would change a GPU-NIC cell. So the GPU-NIC cells are kept
//! whenever they fit one tree at all, NV# cells (which say nothing about PCIe) are passed over,
//! and a matrix no tree reproduces loses its GPU-GPU or NIC-NIC cells first. For a matrix some
//! tree reproduces (an ultrametric), this is that tree's single-linkage clustering.

use super::matrix::{Cell, DeviceKind, Matrix};
use crate::topology::Affinity;

/// A switch and what hangs under it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Switch {
    /// The devices on its downstream ports (indices into the matrix's devices).
    pub devices: Vec<usize>,
    /// The switches on its downstream ports.
    pub switches: Vec<Switch>,
}

/// What hangs on a root port of a root complex.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attach {
    /// A device (index into the matrix's devices).
    Device(usize),
    /// A switch tree.
    Switch(Switch),
}

/// One socket (NUMA node) and its root complexes, each a list of what hangs on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Socket {
    /// The NUMA node its GPUs print, where they agree.
    pub numa: Option<u32>,
    /// The CPU affinity its GPUs print, where they agree.
    pub cpu_affinity: Option<String>,
    /// Its root complexes.
    pub root_complexes: Vec<Vec<Attach>>,
}

/// The tree of a matrix: sockets in NUMA order (those without a known node last).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tree {
    /// The sockets.
    pub sockets: Vec<Socket>,
}

/// The PCIe class of a cell (None: the diagonal or NVLink).
fn pcie(m: &Matrix, a: usize, b: usize) -> Option<Affinity> {
    match m.cells[a][b] {
        Cell::Pcie(x) => Some(x),
        _ => None,
    }
}

/// Splits `members` into the groups at most `level` apart (see the module doc); `also` joins
/// same-kind devices beyond their cells (a shared NUMA node). Groups in order of their first
/// member.
fn partition(
    m: &Matrix,
    members: &[usize],
    level: Affinity,
    also: &dyn Fn(usize, usize) -> bool,
) -> Vec<Vec<usize>> {
    let k = members.len();
    let mut parent: Vec<usize> = (0..k).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let kind = |i: usize| m.devices[members[i]].kind;
    let near = |i: usize, j: usize| pcie(m, members[i], members[j]).is_some_and(|c| c <= level);
    for i in 0..k {
        for j in i + 1..k {
            if kind(i) != kind(j) && near(i, j) {
                let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    // Which kinds each group holds: (GPUs, NICs).
    let mut holds = vec![(false, false); k];
    for i in 0..k {
        let r = find(&mut parent, i);
        let g = kind(i) == DeviceKind::Gpu;
        holds[r].0 |= g;
        holds[r].1 |= !g;
    }
    for i in 0..k {
        for j in i + 1..k {
            if kind(i) == kind(j) && (near(i, j) || also(members[i], members[j])) {
                let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                let pure = |h: (bool, bool)| h.0 != h.1;
                if a != b && pure(holds[a]) && pure(holds[b]) {
                    let (lo, hi) = (a.min(b), a.max(b));
                    parent[hi] = lo;
                    holds[lo] = holds[a];
                }
            }
        }
    }
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    for (i, &member) in members.iter().enumerate() {
        let r = find(&mut parent, i);
        match groups.iter_mut().find(|g| g.0 == r) {
            Some(g) => g.1.push(member),
            None => groups.push((r, vec![member])),
        }
    }
    groups.into_iter().map(|g| g.1).collect()
}

/// The one value every member has, if they agree and have one.
fn agreed<T: Clone + PartialEq>(values: impl Iterator<Item = Option<T>>) -> Option<T> {
    let mut out: Option<T> = None;
    for v in values.flatten() {
        match &out {
            Some(o) if *o != v => return None,
            _ => out = Some(v),
        }
    }
    out
}

/// Builds the tree of a matrix.
pub fn build(m: &Matrix) -> Tree {
    let all: Vec<usize> = (0..m.devices.len()).collect();
    let none = |_: usize, _: usize| false;
    let same_numa = |a: usize, b: usize| {
        let (x, y) = (&m.devices[a], &m.devices[b]);
        x.kind == DeviceKind::Gpu && x.numa.is_some() && x.numa == y.numa
    };
    let mut sockets: Vec<(Vec<usize>, Socket)> = partition(m, &all, Affinity::Node, &same_numa)
        .into_iter()
        .map(|socket| {
            let gpus = || {
                socket
                    .iter()
                    .map(|&d| &m.devices[d])
                    .filter(|d| d.kind == DeviceKind::Gpu)
            };
            let root_complexes = partition(m, &socket, Affinity::Phb, &none)
                .into_iter()
                .map(|rc| {
                    partition(m, &rc, Affinity::Pxb, &none)
                        .into_iter()
                        .map(|top| {
                            if top.len() == 1 {
                                return Attach::Device(top[0]);
                            }
                            let leaves = partition(m, &top, Affinity::Pix, &none);
                            Attach::Switch(if leaves.len() == 1 {
                                Switch {
                                    devices: top,
                                    switches: Vec::new(),
                                }
                            } else {
                                Switch {
                                    devices: Vec::new(),
                                    switches: leaves
                                        .into_iter()
                                        .map(|devices| Switch {
                                            devices,
                                            switches: Vec::new(),
                                        })
                                        .collect(),
                                }
                            })
                        })
                        .collect()
                })
                .collect();
            let s = Socket {
                numa: agreed(gpus().map(|d| d.numa)),
                cpu_affinity: agreed(gpus().map(|d| d.cpu_affinity.clone())),
                root_complexes,
            };
            (socket, s)
        })
        .collect();
    sockets.sort_by_key(|(members, s)| (s.numa.unwrap_or(u32::MAX), members[0]));
    Tree {
        sockets: sockets.into_iter().map(|s| s.1).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::matrix::parse;

    fn tree(text: &str) -> Tree {
        build(&parse(text, "t").unwrap())
    }

    /// Every device of a socket, in tree order.
    fn devices(s: &Socket) -> Vec<usize> {
        fn walk(sw: &Switch, out: &mut Vec<usize>) {
            out.extend(&sw.devices);
            sw.switches.iter().for_each(|c| walk(c, out));
        }
        let mut out = Vec::new();
        for rc in &s.root_complexes {
            for a in rc {
                match a {
                    Attach::Device(d) => out.push(*d),
                    Attach::Switch(sw) => walk(sw, &mut out),
                }
            }
        }
        out
    }

    const TWO_SOCKETS: &str = "\tGPU0\tGPU1\tGPU2\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity
GPU0\t X \tPXB\tSYS\tPIX\tSYS\t0-15\t0
GPU1\tPXB\t X \tSYS\tPXB\tSYS\t0-15\t0
GPU2\tSYS\tSYS\t X \tSYS\tNODE\t16-31\t1
NIC0\tPIX\tPXB\tSYS\t X \tSYS
NIC1\tSYS\tSYS\tNODE\tSYS\t X
";

    #[test]
    fn sockets_root_complexes_and_switches_follow_the_classes() {
        let t = tree(TWO_SOCKETS);
        assert_eq!(t.sockets.len(), 2);
        let s0 = &t.sockets[0];
        assert_eq!(
            (s0.numa, s0.cpu_affinity.as_deref()),
            (Some(0), Some("0-15"))
        );
        // GPU0 and NIC0 PIX under a leaf, GPU1 under another leaf, one upper switch.
        assert_eq!(
            s0.root_complexes,
            vec![vec![Attach::Switch(Switch {
                devices: vec![],
                switches: vec![
                    Switch {
                        devices: vec![0, 3],
                        switches: vec![]
                    },
                    Switch {
                        devices: vec![1],
                        switches: vec![]
                    },
                ],
            })]]
        );
        // GPU2 and NIC1 NODE: two root complexes of socket 1, each device on a root port.
        let s1 = &t.sockets[1];
        assert_eq!(s1.numa, Some(1));
        assert_eq!(
            s1.root_complexes,
            vec![vec![Attach::Device(2)], vec![Attach::Device(4)]]
        );
    }

    #[test]
    fn nvlink_cells_are_passed_over_and_numa_joins_nicless_gpus() {
        // GPU0-GPU1 NV4 and no NIC near either: the shared NUMA node puts them on one socket,
        // and on two root complexes there (NODE is the most that can be said: no cell joins
        // them closer).
        let t = tree(
            "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity
GPU0\t X \tNV4\tSYS\t0-7\t0
GPU1\tNV4\t X \tSYS\t0-7\t0
NIC0\tSYS\tSYS\t X \t\t
",
        );
        assert_eq!(t.sockets.len(), 2);
        assert_eq!(devices(&t.sockets[0]), vec![0, 1]);
        assert_eq!(t.sockets[0].root_complexes.len(), 2);
        assert_eq!(devices(&t.sockets[1]), vec![2]);
    }

    #[test]
    fn gpu_nic_cells_win_over_gpu_gpu_cells() {
        // No tree gives all three: GPU0-GPU1 NODE, GPU1-NIC0 NODE, GPU0-NIC0 SYS. The GPU-NIC
        // cells keep GPU0 off NIC0's socket (GPU0-GPU1 becomes SYS).
        let t = tree(
            "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity
GPU0\t X \tNODE\tSYS\t0-7\t0
GPU1\tNODE\t X \tNODE\t0-7\t0
NIC0\tSYS\tNODE\t X 
",
        );
        assert_eq!(t.sockets.len(), 2);
        // Both sockets are NUMA node 0's; the first member orders them.
        assert_eq!(devices(&t.sockets[0]), vec![0]);
        assert_eq!(devices(&t.sockets[1]), vec![1, 2]);
        assert_eq!((t.sockets[0].numa, t.sockets[1].numa), (Some(0), Some(0)));
    }

    #[test]
    fn a_pix_group_alone_is_one_switch() {
        let t = tree(
            "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity
GPU0\t X \tPIX\tPIX\t0-7\t0
GPU1\tPIX\t X \tPIX\t0-7\t0
NIC0\tPIX\tPIX\t X 
",
        );
        assert_eq!(
            t.sockets[0].root_complexes,
            vec![vec![Attach::Switch(Switch {
                devices: vec![0, 1, 2],
                switches: vec![]
            })]]
        );
    }
}

//! The `nvidia-smi topo -m` class of the path between two devices of one host, nearest first:
//! what NCCL's `NET_GDR_LEVEL` compares against and what every report row calls `class`.

/// How far apart two devices of one host are, from the structure of the PCIe path between
/// them. Ordered nearest first, so `class <= level` reads as NCCL's "within NET_GDR_LEVEL".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Affinity {
    /// Over a bond of this many NVLinks (directly or through NVSwitches): GPU pairs only.
    Nv(u32),
    /// Behind one PCIe switch.
    Pix,
    /// Behind several switches, not the root complex.
    #[default]
    Pxb,
    /// Through the root complex.
    Phb,
    /// Through the socket's interconnect between root complexes.
    Node,
    /// Across sockets.
    Sys,
}

/// `NV#` for every bond a config may have (1 to [`MAX_NVLINKS`] links; index 0 unused), so
/// that a class's name is static text like the PCIe classes'.
const NV_NAMES: [&str; MAX_NVLINKS as usize + 1] = [
    "NV0", "NV1", "NV2", "NV3", "NV4", "NV5", "NV6", "NV7", "NV8", "NV9", "NV10", "NV11", "NV12",
    "NV13", "NV14", "NV15", "NV16", "NV17", "NV18", "NV19", "NV20", "NV21", "NV22", "NV23", "NV24",
    "NV25", "NV26", "NV27", "NV28", "NV29", "NV30", "NV31", "NV32", "NV33", "NV34", "NV35", "NV36",
];

/// The most NVLinks one bond may have.
pub const MAX_NVLINKS: u32 = 36;

impl Affinity {
    /// Every PCIe class, nearest first (what a GPU-NIC path can be).
    pub const ALL: [Affinity; 5] = [
        Affinity::Pix,
        Affinity::Pxb,
        Affinity::Phb,
        Affinity::Node,
        Affinity::Sys,
    ];

    /// The class as `nvidia-smi topo -m` and NCCL write it: "NV18", "PIX", "PXB", "PHB",
    /// "NODE", "SYS".
    pub fn name(self) -> &'static str {
        match self {
            Affinity::Nv(n) => NV_NAMES.get(n as usize).copied().unwrap_or("NV?"),
            Affinity::Pix => "PIX",
            Affinity::Pxb => "PXB",
            Affinity::Phb => "PHB",
            Affinity::Node => "NODE",
            Affinity::Sys => "SYS",
        }
    }

    /// The class of a name `Affinity::name` writes.
    pub fn from_name(name: &str) -> Option<Affinity> {
        if let Some(i) = NV_NAMES.iter().skip(1).position(|n| *n == name) {
            return Some(Affinity::Nv(i as u32 + 1));
        }
        Affinity::ALL.into_iter().find(|a| a.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::Affinity;

    #[test]
    fn classes_order_nearest_first_and_read_back() {
        assert!(Affinity::Pix < Affinity::Pxb && Affinity::Node < Affinity::Sys);
        for a in Affinity::ALL {
            assert_eq!(Affinity::from_name(a.name()), Some(a));
        }
        assert_eq!(Affinity::from_name("NV4"), Some(Affinity::Nv(4)));
        assert_eq!(Affinity::Nv(18).name(), "NV18");
        assert!(
            Affinity::Nv(4) < Affinity::Pix,
            "NVLink is nearer than any PCIe class"
        );
        for bad in ["NV", "NV0", "NV+4", "NV04", "nv4"] {
            assert_eq!(Affinity::from_name(bad), None, "{bad}");
        }
    }
}

//! The `nvidia-smi topo -m` class of the path between two devices of one host, nearest first:
//! what NCCL's `NET_GDR_LEVEL` compares against and what every report row calls `class`.

/// How far apart two devices of one host are, from the structure of the PCIe path between
/// them. Ordered nearest first, so `class <= level` reads as NCCL's "within NET_GDR_LEVEL".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Affinity {
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

impl Affinity {
    /// Every class, nearest first.
    pub const ALL: [Affinity; 5] = [
        Affinity::Pix,
        Affinity::Pxb,
        Affinity::Phb,
        Affinity::Node,
        Affinity::Sys,
    ];

    /// The class as `nvidia-smi topo -m` and NCCL write it: "PIX", "PXB", "PHB", "NODE", "SYS".
    pub fn name(self) -> &'static str {
        match self {
            Affinity::Pix => "PIX",
            Affinity::Pxb => "PXB",
            Affinity::Phb => "PHB",
            Affinity::Node => "NODE",
            Affinity::Sys => "SYS",
        }
    }

    /// The class of a name `Affinity::name` writes.
    pub fn from_name(name: &str) -> Option<Affinity> {
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
        assert_eq!(Affinity::from_name("NV4"), None);
    }
}

//! CPU families: what a socket's processor sets by default for the traffic that crosses it.
//!
//! A socket may name its family (`cpu_family = "sapphire-rapids"`); the family then gives, as
//! defaults that any key of the config overrides, the socket link's rate, the peer-to-peer
//! forwarding of its root complexes and of its socket links (allowed or refused, and the
//! rate it is capped at, separately for reads and writes) and the DRAM rate. Every value
//! carries its source: a row of docs/references.md, a datasheet, or "estimate".
//!
//! Where the values come from:
//! - Across sockets, P2P traffic is capped at NCCL's per-CPU inter-socket bandwidth (row P11,
//!   NVIDIA/nccl `src/graph/topo.h`: BDW_QPI_BW 6, SKL_QPI_BW 10, SRP_QPI_BW 22, ERP_QPI_BW
//!   40, AMD_BW 16, P9_BW 32, ARM_BW 6 GB/s), the figure NCCL itself plans P2P traffic across
//!   the socket link with (NCCL classes every Intel model below Skylake as Broadwell and Ice
//!   Lake, model 0x6A, with Skylake). Row P10 (perftest #241: GPUDirect at SYS ~11,000 MB/s
//!   against ~23,000 from host memory) is of that order.
//! - Through an Intel root complex, P2P traffic is carried in 64-byte TLPs (row P11:
//!   `INTEL_P2P_OVERHEAD`, "Intel CPU convert GPU P2P traffic into 64B PCI TLPs"), so it is
//!   capped at row C5's 64-byte write rate of a x16 link of the family's PCIe generation
//!   (Gen3 10.34, Gen4 20.67, Gen5 41.35 GB/s). AMD Zen root complexes forward P2P between
//!   root ports (row B8) and NCCL charges them no overhead: no cap.
//! - Sandy Bridge and Ivy Bridge read GPU memory through the root complex far more slowly
//!   than they write it (row B1: "peer-to-peer read bandwidth has been shown to be severely
//!   limited on some processor architectures"), and P2P across their QPI is refused (row B1's
//!   third case, a path across QPI): the figures are estimates.
//! - Socket link rates and DRAM rates are datasheet figures: links x lanes' transfer rate
//!   (QPI and UPI carry 2 bytes per transfer each way), channels x DDR transfer rate x 8 bytes.
//!   The model has one socket link between two sockets, so the family's rate is all its links
//!   together.

use crate::units::Rate;

/// A socket's processor family, or none (the built-in defaults, as before families existed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CpuFamily {
    /// No family: the built-in defaults (no P2P caps, P2P allowed everywhere).
    #[default]
    None,
    /// Intel Xeon E5-2600 (Sandy Bridge-EP).
    SandyBridge,
    /// Intel Xeon E5-2600 v2 (Ivy Bridge-EP).
    IvyBridge,
    /// Intel Xeon E5-2600 v3 (Haswell-EP).
    Haswell,
    /// Intel Xeon E5-2600 v4 (Broadwell-EP).
    Broadwell,
    /// Intel Xeon Scalable 1st and 2nd generation (Skylake-SP, Cascade Lake).
    SkylakeSp,
    /// Intel Xeon Scalable 3rd generation (Ice Lake-SP).
    IcelakeSp,
    /// Intel Xeon Scalable 4th generation (Sapphire Rapids).
    SapphireRapids,
    /// Intel Xeon Scalable 5th generation (Emerald Rapids).
    EmeraldRapids,
    /// AMD EPYC 7002 (Rome).
    EpycRome,
    /// AMD EPYC 7003 (Milan).
    EpycMilan,
    /// AMD EPYC 9004 (Genoa).
    EpycGenoa,
    /// NVIDIA Grace.
    Grace,
    /// IBM POWER9.
    Power9,
}

/// A default value with where it comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cited<T> {
    /// The value.
    pub value: T,
    /// Its source: a reference row, a datasheet, or "estimate".
    pub source: &'static str,
}

const fn cite<T>(value: T, source: &'static str) -> Cited<T> {
    Cited { value, source }
}

/// What a family sets by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FamilyDefaults {
    /// The socket link's rate each way (all its links together).
    pub socket_link_rate: Cited<Rate>,
    /// Whether P2P reads and writes may cross the socket link at all.
    pub socket_p2p: Cited<bool>,
    /// The rate P2P traffic (reads and writes alike) crosses the socket link at, at most.
    pub socket_p2p_rate: Cited<Rate>,
    /// The rate a root complex forwards P2P reads (their completions) at, at most (None: link
    /// rate).
    pub rc_p2p_read_rate: Cited<Option<Rate>>,
    /// The rate a root complex forwards P2P writes (and read requests) at, at most.
    pub rc_p2p_write_rate: Cited<Option<Rate>>,
    /// The socket's DRAM rate (the datasheet peak).
    pub dram_rate: Cited<Rate>,
    /// The share of that peak sustained DMA reaches, in percent.
    pub dram_efficiency_pct: Cited<u32>,
}

const fn gbs(millis: u64) -> Rate {
    // GB/s given in thousandths (10_340 = 10.34 GB/s).
    Rate::from_bytes_per_s(millis * 1_000_000)
}

/// Row C5's 64-byte-TLP write rates of a x16 link, Gen3, Gen4 and Gen5.
const RC_GEN3: Cited<Option<Rate>> = cite(
    Some(gbs(10_340)),
    "rows P11, C5 (Intel carries P2P in 64 B TLPs: Gen3 x16 64 B writes)",
);
const RC_GEN4: Cited<Option<Rate>> = cite(
    Some(gbs(20_670)),
    "rows P11, C5 (Intel carries P2P in 64 B TLPs: Gen4 x16 64 B writes)",
);
const RC_GEN5: Cited<Option<Rate>> = cite(
    Some(gbs(41_350)),
    "rows P11, C5 (Intel carries P2P in 64 B TLPs: Gen5 x16 64 B writes)",
);
const RC_AMD: Cited<Option<Rate>> = cite(
    None,
    "row B8 (AMD Zen root complexes forward P2P; NCCL charges no overhead, row P11)",
);
const RC_NONE_EST: Cited<Option<Rate>> = cite(None, "estimate (no P2P limit published)");
const ALLOWED: Cited<bool> = cite(true, "row P11 (NCCL plans P2P across this CPU's link)");
const REFUSED: Cited<bool> = cite(
    false,
    "estimate (row B1: P2P across QPI; CUDA refuses peer access across Sandy/Ivy Bridge QPI)",
);
const BDW: Cited<Rate> = cite(
    gbs(6_000),
    "row P11 (NCCL BDW_QPI_BW: Intel before Skylake)",
);
const SKL: Cited<Rate> = cite(gbs(10_000), "row P11 (NCCL SKL_QPI_BW)");
const AMD: Cited<Rate> = cite(gbs(16_000), "row P11 (NCCL AMD_BW)");

impl CpuFamily {
    /// Every value, in the order messages list their words.
    pub const ALL: [CpuFamily; 14] = [
        CpuFamily::None,
        CpuFamily::SkylakeSp,
        CpuFamily::IcelakeSp,
        CpuFamily::SapphireRapids,
        CpuFamily::EmeraldRapids,
        CpuFamily::Broadwell,
        CpuFamily::Haswell,
        CpuFamily::IvyBridge,
        CpuFamily::SandyBridge,
        CpuFamily::EpycRome,
        CpuFamily::EpycMilan,
        CpuFamily::EpycGenoa,
        CpuFamily::Grace,
        CpuFamily::Power9,
    ];

    /// The word a config writes for the value.
    pub fn name(self) -> &'static str {
        match self {
            CpuFamily::None => "none",
            CpuFamily::SandyBridge => "sandybridge",
            CpuFamily::IvyBridge => "ivybridge",
            CpuFamily::Haswell => "haswell",
            CpuFamily::Broadwell => "broadwell",
            CpuFamily::SkylakeSp => "skylake-sp",
            CpuFamily::IcelakeSp => "icelake-sp",
            CpuFamily::SapphireRapids => "sapphire-rapids",
            CpuFamily::EmeraldRapids => "emerald-rapids",
            CpuFamily::EpycRome => "epyc-rome",
            CpuFamily::EpycMilan => "epyc-milan",
            CpuFamily::EpycGenoa => "epyc-genoa",
            CpuFamily::Grace => "grace",
            CpuFamily::Power9 => "power9",
        }
    }

    /// The family's defaults (None for [`CpuFamily::None`]: the built-in defaults apply).
    pub fn defaults(self) -> Option<FamilyDefaults> {
        use CpuFamily as F;
        let d = |link: Cited<Rate>,
                 p2p: Cited<bool>,
                 cap: Cited<Rate>,
                 rc_read: Cited<Option<Rate>>,
                 rc_write: Cited<Option<Rate>>,
                 (dram, efficiency): (Cited<Rate>, Cited<u32>)| FamilyDefaults {
            socket_link_rate: link,
            socket_p2p: p2p,
            socket_p2p_rate: cap,
            rc_p2p_read_rate: rc_read,
            rc_p2p_write_rate: rc_write,
            dram_rate: dram,
            dram_efficiency_pct: efficiency,
        };
        // DRAM efficiency: sustained DMA against the datasheet peak, from each family's published
        // STREAM-class figure (rows C21-C27) counted as DRAM traffic (a triad's write-allocate
        // reads included where the benchmark leaves them out); DMA streams one way, so a triad's
        // mix of reads and writes is the cautious side of what it reaches. Grace alone keeps an
        // estimate (row C20's 70-85%).
        Some(match self {
            F::None => return None,
            F::SandyBridge => d(
                cite(
                    gbs(32_000),
                    "datasheet (Xeon E5-2600: 2 QPI links, 8.0 GT/s)",
                ),
                REFUSED,
                BDW,
                cite(
                    Some(gbs(1_000)),
                    "estimate (row B1: P2P reads severely limited)",
                ),
                RC_GEN3,
                (
                    cite(gbs(51_200), "datasheet (4 x DDR3-1600)"),
                    cite(
                        75,
                        "row C26 (likwid-bench triad on a Sandy Bridge-EP socket: 30.73 GB/s, \
                         38.4 with its write-allocate reads, of 51.2)",
                    ),
                ),
            ),
            F::IvyBridge => d(
                cite(
                    gbs(32_000),
                    "datasheet (Xeon E5-2600 v2: 2 QPI links, 8.0 GT/s)",
                ),
                REFUSED,
                BDW,
                cite(
                    Some(gbs(3_500)),
                    "estimate (row B1: P2P reads severely limited)",
                ),
                RC_GEN3,
                (
                    cite(gbs(59_700), "datasheet (4 x DDR3-1866)"),
                    cite(
                        81,
                        "row C26 (likwid-bench triad on an Ivy Bridge-EP socket: 38.56 GB/s, \
                         48.2 with its write-allocate reads, of 59.7)",
                    ),
                ),
            ),
            F::Haswell => d(
                cite(
                    gbs(38_400),
                    "datasheet (Xeon E5-2600 v3: 2 QPI links, 9.6 GT/s)",
                ),
                ALLOWED,
                BDW,
                RC_GEN3,
                RC_GEN3,
                (
                    cite(gbs(68_200), "datasheet (4 x DDR4-2133)"),
                    cite(
                        81,
                        "row C26 (likwid-bench triad on a Haswell-EP socket: 44.19 GB/s, \
                         55.2 with its write-allocate reads, of 68.2)",
                    ),
                ),
            ),
            F::Broadwell => d(
                cite(
                    gbs(38_400),
                    "datasheet (Xeon E5-2600 v4: 2 QPI links, 9.6 GT/s)",
                ),
                ALLOWED,
                BDW,
                RC_GEN3,
                RC_GEN3,
                (
                    cite(gbs(76_800), "datasheet (4 x DDR4-2400)"),
                    cite(
                        84,
                        "row C21 (STREAM: 65 of 76.8 GB/s on a Broadwell-EP socket, 84.6%)",
                    ),
                ),
            ),
            F::SkylakeSp => d(
                cite(
                    gbs(62_400),
                    "datasheet (Xeon Scalable: 3 UPI links, 10.4 GT/s)",
                ),
                ALLOWED,
                SKL,
                RC_GEN3,
                RC_GEN3,
                (
                    cite(gbs(128_000), "datasheet (6 x DDR4-2666)"),
                    cite(
                        76,
                        "row C22 (STREAM Triad 190-199 of 256 GB/s on two Xeon Scalable, 74-78%)",
                    ),
                ),
            ),
            F::IcelakeSp => d(
                cite(
                    gbs(67_200),
                    "datasheet (3rd gen Xeon Scalable: 3 UPI links, 11.2 GT/s)",
                ),
                ALLOWED,
                cite(
                    gbs(10_000),
                    "row P11 (NCCL SKL_QPI_BW: NCCL classes Ice Lake, model 0x6A, with Skylake)",
                ),
                RC_GEN4,
                RC_GEN4,
                (
                    cite(gbs(204_800), "datasheet (8 x DDR4-3200)"),
                    cite(
                        83,
                        "row C23 (likwid-bench triad 169.5 of 204.8 GB/s on a Xeon 8360Y socket)",
                    ),
                ),
            ),
            F::SapphireRapids => d(
                cite(
                    gbs(128_000),
                    "datasheet (4th gen Xeon Scalable: 4 UPI 2.0 links, 16 GT/s)",
                ),
                ALLOWED,
                cite(gbs(22_000), "row P11 (NCCL SRP_QPI_BW)"),
                RC_GEN5,
                RC_GEN5,
                (
                    cite(
                        gbs(300_000),
                        "datasheet (8 x DDR5-4800 = 307 GB/s), rounded down as the built-in default",
                    ),
                    cite(
                        80,
                        "row C23 (likwid-bench triad 247.2 of 307.2 GB/s on a Xeon 8470 socket)",
                    ),
                ),
            ),
            F::EmeraldRapids => d(
                cite(
                    gbs(160_000),
                    "datasheet (5th gen Xeon Scalable: 4 UPI 2.0 links, 20 GT/s)",
                ),
                ALLOWED,
                cite(gbs(40_000), "row P11 (NCCL ERP_QPI_BW)"),
                RC_GEN5,
                RC_GEN5,
                (
                    cite(gbs(358_400), "datasheet (8 x DDR5-5600)"),
                    cite(
                        80,
                        "estimate (as sapphire-rapids, row C23: its memory controller at DDR5-5600)",
                    ),
                ),
            ),
            F::EpycRome => d(
                cite(
                    gbs(144_000),
                    "estimate (EPYC 7002: 4 xGMI-2 x16 links at up to 18 GT/s)",
                ),
                ALLOWED,
                AMD,
                RC_AMD,
                RC_AMD,
                (
                    cite(gbs(204_800), "datasheet (8 x DDR4-3200)"),
                    cite(
                        85,
                        "row C24 (STREAM Triad 350 of 409.6 GB/s on two EPYC 7V12, 85.4%)",
                    ),
                ),
            ),
            F::EpycMilan => d(
                cite(
                    gbs(144_000),
                    "estimate (EPYC 7003: 4 xGMI-2 x16 links at up to 18 GT/s)",
                ),
                ALLOWED,
                AMD,
                RC_AMD,
                RC_AMD,
                (
                    cite(gbs(204_800), "datasheet (8 x DDR4-3200)"),
                    cite(
                        83,
                        "row C24 (STREAM Triad 330-350 of 409.6 GB/s on two EPYC 7V73X, 81-85%)",
                    ),
                ),
            ),
            F::EpycGenoa => d(
                cite(
                    gbs(256_000),
                    "estimate (EPYC 9004: 4 xGMI-3 x16 links at up to 32 GT/s)",
                ),
                ALLOWED,
                AMD,
                RC_AMD,
                RC_AMD,
                (
                    cite(gbs(460_800), "datasheet (12 x DDR5-4800)"),
                    cite(
                        83,
                        "row C24 (STREAM Triad 750-780 of 921.6 GB/s on two EPYC 9V33X, 81-85%)",
                    ),
                ),
            ),
            F::Grace => d(
                cite(
                    gbs(450_000),
                    "datasheet (Grace CPU Superchip: NVLink-C2C 900 GB/s both ways)",
                ),
                ALLOWED,
                cite(gbs(6_000), "row P11 (NCCL ARM_BW)"),
                RC_NONE_EST,
                RC_NONE_EST,
                (
                    cite(gbs(500_000), "datasheet (GH200: LPDDR5X up to ~500 GB/s)"),
                    cite(
                        75,
                        "estimate (row C20; row C25: STREAM Triad 80-95% of peak on a GH200 120 GB, \
                         288-342 GB/s on a GH200 480 GB: no one share of 500 GB/s fits both)",
                    ),
                ),
            ),
            F::Power9 => d(
                cite(gbs(64_000), "estimate (POWER9 X-bus between two sockets)"),
                ALLOWED,
                cite(gbs(32_000), "row P11 (NCCL P9_BW)"),
                RC_NONE_EST,
                RC_NONE_EST,
                (
                    cite(gbs(170_600), "datasheet (8 x DDR4-2666)"),
                    cite(
                        80,
                        "row C27 (OpenPOWER's STREAM recipe: triad 80-85% of peak on POWER9)",
                    ),
                ),
            ),
        })
    }

    /// The family of an x86 or Arm CPU from what NCCL's topology XML carries about it
    /// (`<cpu arch= vendor= familyid= modelid=>`), as NCCL's `ncclTopoGetCpuType` classes it
    /// (NVIDIA/nccl `src/graph/topo.cc`; Intel family 6 models: 0xCF and up Emerald Rapids,
    /// 0x8F Sapphire Rapids, 0x6A/0x6C Ice Lake-SP, 0x55 Skylake-SP and Cascade Lake, 0x4F
    /// Broadwell-EP, 0x3F Haswell-EP, 0x3E Ivy Bridge-EP, 0x2D Sandy Bridge-EP; AMD family 0x17
    /// model 0x31 Rome, family 0x19 models below 0x10 Milan, 0x10-0x1F Genoa). None where it
    /// cannot tell.
    pub fn from_nccl(arch: &str, vendor: &str, family: Option<u32>, model: Option<u32>) -> Self {
        let arch = arch.to_ascii_lowercase();
        if arch == "ppc64" || arch == "power" {
            return CpuFamily::Power9;
        }
        if arch == "arm64" || arch == "aarch64" || arch == "arm" {
            // NCCL knows Arm CPUs only as Arm; the Arm CPUs beside NVIDIA GPUs are Grace.
            return if vendor.is_empty() || vendor.to_ascii_lowercase().contains("nvidia") {
                CpuFamily::Grace
            } else {
                CpuFamily::None
            };
        }
        let (Some(f), Some(m)) = (family, model) else {
            return CpuFamily::None;
        };
        match vendor {
            "GenuineIntel" if f == 6 => match m {
                0xCF.. => CpuFamily::EmeraldRapids,
                0x8F..=0xCE => CpuFamily::SapphireRapids,
                0x6A | 0x6C => CpuFamily::IcelakeSp,
                0x55 => CpuFamily::SkylakeSp,
                0x4F | 0x56 => CpuFamily::Broadwell,
                0x3F => CpuFamily::Haswell,
                0x3E => CpuFamily::IvyBridge,
                0x2D => CpuFamily::SandyBridge,
                _ => CpuFamily::None,
            },
            "AuthenticAMD" => match (f, m) {
                (0x17, 0x31) => CpuFamily::EpycRome,
                (0x19, 0x00..=0x0F) => CpuFamily::EpycMilan,
                (0x19, 0x10..=0x1F) => CpuFamily::EpycGenoa,
                _ => CpuFamily::None,
            },
            _ => CpuFamily::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_but_none_has_cited_defaults() {
        for f in CpuFamily::ALL {
            let Some(d) = f.defaults() else {
                assert_eq!(f, CpuFamily::None);
                continue;
            };
            for s in [
                d.socket_link_rate.source,
                d.socket_p2p.source,
                d.socket_p2p_rate.source,
                d.rc_p2p_read_rate.source,
                d.rc_p2p_write_rate.source,
                d.dram_rate.source,
                d.dram_efficiency_pct.source,
            ] {
                assert!(
                    s.starts_with("row") || s.starts_with("datasheet") || s.starts_with("estimate"),
                    "{}: {s}",
                    f.name()
                );
            }
            // P2P across the socket link never runs faster than the link.
            assert!(
                d.socket_p2p_rate.value <= d.socket_link_rate.value,
                "{}",
                f.name()
            );
        }
    }

    /// NCCL's inter-socket bandwidths (row P11) per family, in GB/s.
    #[test]
    fn socket_caps_are_nccls() {
        let cap = |f: CpuFamily| f.defaults().unwrap().socket_p2p_rate.value.bps() / 8_000_000_000;
        assert_eq!(cap(CpuFamily::Broadwell), 6);
        assert_eq!(cap(CpuFamily::SkylakeSp), 10);
        assert_eq!(cap(CpuFamily::IcelakeSp), 10);
        assert_eq!(cap(CpuFamily::SapphireRapids), 22);
        assert_eq!(cap(CpuFamily::EmeraldRapids), 40);
        assert_eq!(cap(CpuFamily::EpycRome), 16);
        assert_eq!(cap(CpuFamily::Power9), 32);
        assert_eq!(cap(CpuFamily::Grace), 6);
        assert!(!CpuFamily::IvyBridge.defaults().unwrap().socket_p2p.value);
    }

    #[test]
    fn nccl_cpu_attributes_map_to_families() {
        let x = |v: &str, f: u32, m: u32| CpuFamily::from_nccl("x86_64", v, Some(f), Some(m));
        assert_eq!(x("GenuineIntel", 6, 0x8F), CpuFamily::SapphireRapids);
        assert_eq!(x("GenuineIntel", 6, 0xCF), CpuFamily::EmeraldRapids);
        assert_eq!(x("GenuineIntel", 6, 0x6A), CpuFamily::IcelakeSp);
        assert_eq!(x("GenuineIntel", 6, 0x55), CpuFamily::SkylakeSp);
        assert_eq!(x("GenuineIntel", 6, 0x4F), CpuFamily::Broadwell);
        assert_eq!(x("AuthenticAMD", 0x17, 0x31), CpuFamily::EpycRome);
        assert_eq!(x("AuthenticAMD", 0x19, 0x01), CpuFamily::EpycMilan);
        assert_eq!(x("AuthenticAMD", 0x19, 0x11), CpuFamily::EpycGenoa);
        assert_eq!(x("GenuineIntel", 6, 0x97), CpuFamily::SapphireRapids);
        assert_eq!(x("CentaurHauls", 7, 0x5B), CpuFamily::None);
        assert_eq!(
            CpuFamily::from_nccl("arm64", "", None, None),
            CpuFamily::Grace
        );
        assert_eq!(
            CpuFamily::from_nccl("x86_64", "GenuineIntel", None, None),
            CpuFamily::None
        );
    }
}

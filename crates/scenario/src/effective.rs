//! The words a result uses for how the data actually moved: each side's [`SideMode`] and the
//! [`EffectivePath`] they make (results.csv `effective_path`). The path planner
//! ([`crate::scenario::paths`]) decides them; the stats, the report and the shard files only
//! read and write them, so they live here, below all of those, rather than in the planner.

use crate::config::PathKind;

/// How each side ends up moving the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SideMode {
    /// The NIC reads or writes a host buffer: the data lives in host memory.
    Host,
    /// Staged through a pinned host bounce buffer by cudaMemcpy.
    Staged,
    /// GPUDirect RDMA: the NIC reads or writes GPU memory through the PCIe fabric.
    Direct,
    /// Staged through a host buffer by CPU copies through BAR1.
    Gdrcopy,
    /// Staged in chunks, pipelined.
    Pipelined,
    /// PXN: relayed in chunks over NVLink through the GPU next to the NIC, which the NIC reads
    /// by GPUDirect.
    Relay,
    /// NCCL's net transport without GPUDirect: a GPU kernel stores each chunk into pinned,
    /// mapped host memory (sender) or loads it from there (receiver); the proxy thread posts
    /// the RDMA from host memory. No cudaMemcpy.
    Mapped,
}

impl SideMode {
    /// Every mode.
    pub const ALL: [SideMode; 7] = [
        SideMode::Host,
        SideMode::Staged,
        SideMode::Direct,
        SideMode::Gdrcopy,
        SideMode::Pipelined,
        SideMode::Relay,
        SideMode::Mapped,
    ];
}

/// The path that actually ran (results.csv `effective_path`): how each side moved the data.
/// It differs from the path asked where `auto` chose, or GPUDirect fell back to staging.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EffectivePath {
    /// How the sending side read the data.
    pub sender: SideMode,
    /// How the receiving side delivered it.
    pub receiver: SideMode,
}

impl EffectivePath {
    /// Both sides moving the data the same way `path` asks (`auto` has no such meaning: None).
    pub fn of(path: PathKind) -> Option<EffectivePath> {
        let mode = match path {
            PathKind::Host => SideMode::Host,
            PathKind::Staged => SideMode::Staged,
            PathKind::GpuDirect => SideMode::Direct,
            PathKind::Gdrcopy => SideMode::Gdrcopy,
            PathKind::StagedPipelined => SideMode::Pipelined,
            PathKind::NcclHost => SideMode::Mapped,
            // PXN relays the sending side only; the receiver receives by GPUDirect.
            PathKind::Pxn => {
                return Some(EffectivePath {
                    sender: SideMode::Relay,
                    receiver: SideMode::Direct,
                });
            }
            PathKind::Auto => return None,
        };
        Some(EffectivePath {
            sender: mode,
            receiver: mode,
        })
    }

    /// Whether this is what `path` asks of both sides.
    pub fn is(self, path: PathKind) -> bool {
        EffectivePath::of(path) == Some(self)
    }

    /// The name results.csv writes: the path's word where both sides agree ("gpudirect"),
    /// else "SENDER_send_RECEIVER_recv" (with the exceptions below, as NCCL users read them).
    pub fn name(self) -> &'static str {
        effective_name(self.sender, self.receiver)
    }

    /// The named path this amounts to, where its name is a path's word ("gdrcopy" also for a
    /// GDRCopy side facing a staged one); None for the mixed names.
    pub fn as_path(self) -> Option<PathKind> {
        PathKind::ALL.into_iter().find(|p| p.name() == self.name())
    }

    /// The effective path of a name [`EffectivePath::name`] writes. Names are many-to-one only
    /// where a GDRCopy or pipelined side meets a staged or GPUDirect one ("gdrcopy",
    /// "staged_pipelined"); those read back as both sides alike. A receiver never relays.
    pub fn from_name(name: &str) -> Option<EffectivePath> {
        let receives = || SideMode::ALL.into_iter().filter(|m| *m != SideMode::Relay);
        let alike = receives().map(|m| (m, m));
        let all = SideMode::ALL
            .into_iter()
            .flat_map(|s| receives().map(move |r| (s, r)));
        alike
            .chain(all)
            .map(|(sender, receiver)| EffectivePath { sender, receiver })
            .find(|e| e.name() == name)
    }
}

impl std::fmt::Display for EffectivePath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

impl serde::Serialize for EffectivePath {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for EffectivePath {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        EffectivePath::from_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("{name:?} is not an effective path")))
    }
}

/// The path that actually runs, as reported in `effective_path`.
fn effective_name(sender: SideMode, receiver: SideMode) -> &'static str {
    match (sender, receiver) {
        (SideMode::Relay, SideMode::Direct) => "pxn",
        (SideMode::Relay, SideMode::Host) => "pxn_send_host_recv",
        (SideMode::Relay, SideMode::Mapped) => "pxn_send_nccl_host_recv",
        (SideMode::Relay, _) => "pxn_send_staged_recv",
        (_, SideMode::Relay) => unreachable!("PXN relays the sending side only"),
        (SideMode::Host, SideMode::Host) => "host",
        (SideMode::Mapped, SideMode::Mapped) => "nccl_host",
        (SideMode::Direct, SideMode::Mapped) => "gpudirect_send_nccl_host_recv",
        (SideMode::Mapped, SideMode::Direct) => "nccl_host_send_gpudirect_recv",
        (SideMode::Host, SideMode::Mapped) => "host_send_nccl_host_recv",
        (SideMode::Mapped, SideMode::Host) => "nccl_host_send_host_recv",
        // Not a pair auto makes (it maps both of its host-memory sides alike): read as NCCL's.
        (SideMode::Mapped, _) | (_, SideMode::Mapped) => "nccl_host",
        (SideMode::Host, SideMode::Direct) => "host_send_gpudirect_recv",
        (SideMode::Direct, SideMode::Host) => "gpudirect_send_host_recv",
        (SideMode::Host, SideMode::Gdrcopy) => "host_send_gdrcopy_recv",
        (SideMode::Gdrcopy, SideMode::Host) => "gdrcopy_send_host_recv",
        (SideMode::Host, _) => "host_send_staged_recv",
        (_, SideMode::Host) => "staged_send_host_recv",
        (SideMode::Gdrcopy, _) | (_, SideMode::Gdrcopy) => "gdrcopy",
        (SideMode::Pipelined, _) | (_, SideMode::Pipelined) => "staged_pipelined",
        (SideMode::Staged, SideMode::Staged) => "staged",
        (SideMode::Direct, SideMode::Direct) => "gpudirect",
        (SideMode::Direct, SideMode::Staged) => "gpudirect_send_staged_recv",
        (SideMode::Staged, SideMode::Direct) => "staged_send_gpudirect_recv",
    }
}

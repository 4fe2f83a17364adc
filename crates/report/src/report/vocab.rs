//! How the report and the charts name and explain the typed vocabulary: paths, placement
//! classes and scenarios. The words a config writes are the types' own (`PathKind::name`,
//! `Affinity::name`); what a reader sees in prose, and what each means, is decided here, once.

use crate::config::PathKind;
use crate::topology::Affinity;

/// A path's name in prose: "GPUDirect" for gpudirect, the config's word for the others.
pub fn display(path: PathKind) -> &'static str {
    match path {
        PathKind::GpuDirect => "GPUDirect",
        p => p.name(),
    }
}

/// What a path does, for readers who do not know the names.
pub fn path_meaning(path: PathKind) -> &'static str {
    match path {
        PathKind::Host => "host memory on both ends, the RDMA baseline without a GPU",
        PathKind::Staged => {
            "cudaMemcpy to a host bounce buffer, RDMA between host buffers, cudaMemcpy to the GPU"
        }
        PathKind::GpuDirect => {
            "the NIC reads and writes GPU memory directly over PCIe peer-to-peer"
        }
        PathKind::StagedPipelined => {
            "the message in chunks through a ring of host bounce buffers, cudaMemcpyAsync overlapped with the RDMA of earlier chunks"
        }
        PathKind::Gdrcopy => {
            "the CPU copies between GPU memory (through its BAR1 mapping) and a host buffer, RDMA between host buffers"
        }
        PathKind::Auto => {
            "what NCCL would choose per side: PXN where it applies, GPUDirect up to `net_gdr_level`, else host staging"
        }
        PathKind::NcclHost => {
            "NCCL's host path (GPUDirect off): GPU kernels store into and load from pinned, mapped host memory; the proxy posts the RDMA"
        }
        PathKind::Pxn => {
            "NCCL's PXN: the sending GPU stores the data over NVLink into the GPU next to the NIC, which sends it by GPUDirect; GPUDirect receive"
        }
    }
}

/// What an `nvidia-smi topo -m` class means for the GPU-NIC pair.
pub fn class_meaning(class: Affinity) -> &'static str {
    match class {
        Affinity::Nv(_) => "GPUs joined by bonded NVLinks (directly or through NVSwitches)",
        Affinity::Pix => "GPU and NIC behind a single PCIe switch (at most one PCIe bridge)",
        Affinity::Pxb => "GPU and NIC across several PCIe bridges, without the CPU's host bridge",
        Affinity::Phb => "GPU and NIC meet at the CPU's PCIe host bridge",
        Affinity::Node => "GPU and NIC on different host bridges of the same NUMA node",
        Affinity::Sys => {
            "GPU and NIC on different NUMA nodes: traffic crosses the inter-socket link"
        }
    }
}

/// A scenario with its class, "SYS-far (SYS)"; the name alone where the class is unknown or
/// the name already says it as a word of its own ("H100 GPU0 -> NIC0 PIX", "GPU0 (PIX)"), so
/// a legend never reads "GPU0 (PIX) (PIX)".
pub fn scenario_label(name: &str, class: Option<Affinity>) -> String {
    match class {
        Some(c) if !says_class(name, c) => format!("{name} ({c})"),
        _ => name.to_string(),
    }
}

/// Whether `name` holds the class's name as a word (letters and digits between other
/// characters), as written: "SYS-far" does, "sysfs" and "NV18" (for NV1) do not.
fn says_class(name: &str, c: Affinity) -> bool {
    name.split(|ch: char| !ch.is_alphanumeric())
        .any(|w| w == c.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_and_class_is_explained() {
        for p in PathKind::ALL {
            assert!(!path_meaning(p).is_empty());
        }
        for c in Affinity::ALL {
            assert!(!class_meaning(c).is_empty());
        }
        assert_eq!(display(PathKind::GpuDirect), "GPUDirect");
        assert_eq!(display(PathKind::StagedPipelined), "staged_pipelined");
    }

    #[test]
    fn a_class_is_named_only_when_it_adds_something() {
        assert_eq!(scenario_label("SYS", Some(Affinity::Sys)), "SYS");
        assert_eq!(scenario_label("far", Some(Affinity::Sys)), "far (SYS)");
        assert_eq!(scenario_label("far", None), "far");
        // Issue #28 item 3: a name that already says its class is not given it twice.
        for named in [
            "GPU0 (PIX)",
            "H100 GPU0 -> NIC0 PIX",
            "PIX-near",
            "rail0/PIX",
        ] {
            assert_eq!(scenario_label(named, Some(Affinity::Pix)), named);
        }
        assert_eq!(scenario_label("pix", Some(Affinity::Pix)), "pix (PIX)");
        assert_eq!(scenario_label("PIXEL", Some(Affinity::Pix)), "PIXEL (PIX)");
        assert_eq!(
            scenario_label("GPU0-GPU1 NV18", Some(Affinity::Nv(1))),
            "GPU0-GPU1 NV18 (NV1)"
        );
        assert_eq!(
            scenario_label("GPU0-GPU1 NV4", Some(Affinity::Nv(4))),
            "GPU0-GPU1 NV4"
        );
    }
}

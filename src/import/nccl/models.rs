//! Model names for the GPUs and NICs of a dump: from the PCI device ID where a short table
//! knows it (pci.ids, 2023-04-11 release), else for GPUs an estimate from the compute
//! capability (`sm`), said as such. They are labels: what the model does with a GPU follows
//! its `compute_capability`, which always comes from `sm`.

/// GPUs by PCI device (vendor 0x10de), from pci.ids.
const GPUS: [(u64, &str); 11] = [
    (0x1db1, "V100 SXM2 16GB"),
    (0x1db5, "V100 SXM2 32GB"),
    (0x1eb8, "T4"),
    (0x20b0, "A100 SXM4 40GB"),
    (0x20b2, "A100 SXM4 80GB"),
    (0x20b5, "A100 PCIe 80GB"),
    (0x20f1, "A100 PCIe 40GB"),
    (0x2236, "A10"),
    (0x2330, "H100 SXM5 80GB"),
    (0x2331, "H100 PCIe"),
    (0x26b5, "L40"),
];

/// NICs by PCI vendor and device, from pci.ids.
const NICS: [(u64, u64, &str); 12] = [
    (0x15b3, 0x1017, "ConnectX-5"),
    (0x15b3, 0x1019, "ConnectX-5 Ex"),
    (0x15b3, 0x101b, "ConnectX-6"),
    (0x15b3, 0x101d, "ConnectX-6 Dx"),
    (0x15b3, 0x101f, "ConnectX-6 Lx"),
    (0x15b3, 0x1021, "ConnectX-7"),
    (0x15b3, 0x1023, "ConnectX-8"),
    (0x15b3, 0xa2d6, "BlueField-2"),
    (0x15b3, 0xa2dc, "BlueField-3"),
    (0x1d0f, 0xefa0, "Elastic Fabric Adapter (EFA)"),
    (0x1d0f, 0xefa1, "Elastic Fabric Adapter (EFA)"),
    (0x1d0f, 0xefa2, "Elastic Fabric Adapter (EFA)"),
];

/// GPU families by compute capability, for the estimate.
const FAMILIES: [(i64, &str); 13] = [
    (60, "P100-class (Pascal)"),
    (61, "Pascal"),
    (70, "V100-class (Volta)"),
    (75, "T4-class (Turing)"),
    (80, "A100-class (Ampere)"),
    (86, "A10/A40-class (Ampere)"),
    (87, "Orin-class (Ampere)"),
    (89, "L40-class (Ada)"),
    (90, "H100-class (Hopper)"),
    (100, "B200-class (Blackwell)"),
    (103, "B300-class (Blackwell Ultra)"),
    (120, "RTX PRO 6000-class (Blackwell)"),
    (121, "GB10-class (Blackwell)"),
];

/// Vendor and device of a packed PCI identity (see [`super::values::device_id`]).
fn vendor_device(id: u64) -> (u64, u64) {
    (id >> 48, (id >> 32) & 0xffff)
}

/// How a GPU's model was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// From its PCI device ID.
    DeviceId,
    /// Estimated from its compute capability.
    Sm,
}

/// A GPU's model from its PCI identity, where the table knows it and its compute capability
/// agrees with `sm`, else an estimate from `sm`.
pub fn gpu(id: u64, sm: i64) -> (String, Source) {
    let (vendor, device) = vendor_device(id);
    let cc = |name: &str| {
        let (major, minor) = crate::config::defaults::compute_capability(name);
        i64::from(major * 10 + minor)
    };
    if vendor == 0x10de
        && let Some(&(_, name)) = GPUS.iter().find(|g| g.0 == device)
        && cc(name) == sm
    {
        return (name.to_string(), Source::DeviceId);
    }
    let family = FAMILIES.iter().find(|f| f.0 == sm).map_or("GPU", |f| f.1);
    (format!("{family}, sm {sm}"), Source::Sm)
}

/// A NIC's model from its PCI identity, where the table knows it.
pub fn nic(id: u64) -> Option<&'static str> {
    let (vendor, device) = vendor_device(id);
    NICS.iter()
        .find(|n| n.0 == vendor && n.1 == device)
        .map(|n| n.2)
}

#[cfg(test)]
mod tests {
    use super::super::values::device_id;
    use super::*;

    #[test]
    fn models_come_from_the_device_id_or_the_compute_capability() {
        let h100 = device_id(Some("0x10de"), Some("0x2330"), None, None);
        assert_eq!(
            gpu(h100, 90),
            ("H100 SXM5 80GB".to_string(), Source::DeviceId)
        );
        // An ID whose model disagrees with sm is not trusted.
        assert_eq!(gpu(h100, 80).1, Source::Sm);
        let unknown = device_id(Some("0x10de"), Some("0x2335"), None, None);
        assert_eq!(
            gpu(unknown, 90),
            ("H100-class (Hopper), sm 90".to_string(), Source::Sm)
        );
        assert_eq!(gpu(0, 52).0, "GPU, sm 52");
        assert_eq!(
            nic(device_id(Some("0x15b3"), Some("0x1021"), None, None)),
            Some("ConnectX-7")
        );
        assert_eq!(
            nic(device_id(Some("0x8086"), Some("0x1021"), None, None)),
            None
        );
    }

    #[test]
    fn estimated_names_keep_the_compute_capability_the_config_derives() {
        // The estimate names a model whose compute capability the config's default table
        // gives back, where that table knows the family.
        for (sm, _) in FAMILIES
            .iter()
            .filter(|f| [70, 75, 80, 86, 89, 90, 100].contains(&f.0))
        {
            let (name, _) = gpu(0, *sm);
            let (major, minor) = crate::config::defaults::compute_capability(&name);
            assert_eq!(i64::from(major * 10 + minor), *sm, "{name}");
        }
    }
}

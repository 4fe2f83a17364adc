//! The config entries of a dump's GPUs and NICs: names, the facts the dump gives (a GPU's
//! compute capability from `sm`, a NIC's wire rate from its first port's `speed`) and models
//! ([`models`]), and notes on what is estimated or left out.

use super::super::emit::{Device as Out, Item, Params};
use super::models::{self, Source};
use super::values;
use super::xml::{Gpu, Nic};

/// What the notes say of the devices, gathered as they are described.
#[derive(Clone, Debug, Default)]
pub struct Remarks {
    /// GPU models from device IDs, and estimated from `sm`.
    models: (usize, usize),
    /// Ports left out: "mlx5_9 (port 2 of 0000:e1:00.0)".
    extra_ports: Vec<String>,
    /// Ports NCCL found without GPUDirect RDMA.
    no_gdr: Vec<String>,
    /// Ports with no speed.
    no_speed: Vec<String>,
    /// NICs with no PCI device.
    no_pci: Vec<String>,
}

impl Remarks {
    /// The notes, one per kind of remark.
    pub fn notes(self) -> Vec<String> {
        let mut notes = Vec::new();
        match self.models {
            (0, 0) => {}
            (_, 0) => notes.push(
                "GPU compute capabilities from sm; models from their PCI device IDs".to_string(),
            ),
            (0, _) => notes.push("GPU compute capabilities from sm; models estimated from sm (the dump names no model and the device IDs are not in the table): labels only".to_string()),
            _ => notes.push("GPU compute capabilities from sm; models from PCI device IDs where known, else estimated from sm (labels only)".to_string()),
        }
        let lists = [
            (
                self.extra_ports,
                "NICs with more than one port: the first port is the NIC (a NIC of the model has one port), the others left out",
            ),
            (
                self.no_speed,
                "ports with no speed in the dump (NCCL then assumes 10 Gb/s), the parameters' wire rate instead",
            ),
            (
                self.no_gdr,
                "ports NCCL found without GPUDirect RDMA (gdr=\"0\": no nvidia-peermem or DMA-BUF when it ran); the model lets them do GPUDirect",
            ),
            (
                self.no_pci,
                "NICs with no PCI device (NCCL hangs them on the CPU), on the root complex with the parameters' link",
            ),
        ];
        for (list, what) in lists {
            if !list.is_empty() {
                notes.push(format!("{what}: {}", list.join(", ")));
            }
        }
        notes
    }
}

/// The entry of GPU `i` (`gpu{i}`): the compute capability of its `sm`, and a model from its
/// PCI device ID, else estimated from `sm` where `params`' model has another compute
/// capability (or none).
pub fn gpu(i: usize, gpu: &Gpu, params: &Params, r: &mut Remarks) -> Out {
    let mut keys = toml::Table::new();
    let mut comment = format!("GPU{i}: {}", gpu.pci.busid);
    if let Some(sm) = gpu.sm {
        let cc = values::compute_capability(sm).unwrap_or_default();
        keys.insert("compute_capability".into(), toml::Value::String(cc));
        comment.push_str(&format!(", sm={sm}"));
        let (model, source) = models::gpu(gpu.pci.id, sm);
        let params_fit = params
            .gpu
            .get("model")
            .and_then(|m| m.as_str())
            .is_some_and(|m| {
                let (major, minor) = crate::config::defaults::compute_capability(m);
                i64::from(major * 10 + minor) == sm
            });
        if source == Source::DeviceId || !params_fit {
            keys.insert("model".into(), toml::Value::String(model));
            if source == Source::DeviceId {
                r.models.0 += 1;
                comment.push_str(", model from its PCI device ID");
            } else {
                r.models.1 += 1;
                comment.push_str(", model estimated from sm");
            }
        }
    }
    Out {
        item: Item::new(format!("gpu{i}"), comment),
        keys,
    }
}

/// The entry of NIC `i`, named after its first port (`nic{i}` without one): the wire rate of
/// the port's speed, a model from its PCI ID.
pub fn nic(i: usize, nic: &Nic, r: &mut Remarks) -> Out {
    let port = nic.ports.first();
    let name = port.map_or(format!("nic{i}"), |p| p.name.clone());
    let place = nic
        .pci
        .as_ref()
        .map_or("no PCI device", |p| p.busid.as_str());
    let mut keys = toml::Table::new();
    let mut comment = format!("NIC{i}: {place}");
    if let Some(p) = port {
        match p.speed_mbps {
            Some(mbps) => {
                let rate = if mbps % 1000 == 0 {
                    toml::Value::Integer(mbps / 1000)
                } else {
                    toml::Value::String(format!("{mbps}Mb/s"))
                };
                keys.insert("wire_rate_gbps".into(), rate);
                comment.push_str(&format!(", speed {mbps} Mb/s"));
            }
            None => r.no_speed.push(p.name.clone()),
        }
        if p.gdr == Some(false) {
            r.no_gdr.push(p.name.clone());
        }
        for other in &nic.ports[1..] {
            let number = other.port.map_or("?".to_string(), |x| x.to_string());
            r.extra_ports
                .push(format!("{} (port {number} of {place})", other.name));
        }
    }
    match &nic.pci {
        Some(pci) => {
            if let Some(model) = models::nic(pci.id) {
                keys.insert("model".into(), toml::Value::String(model.to_string()));
            }
        }
        None => r.no_pci.push(name.clone()),
    }
    Out {
        item: Item::new(name, comment),
        keys,
    }
}

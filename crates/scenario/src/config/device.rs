//! Device models: GPUs and NICs as data, each figure with its source, that a config names on a
//! GPU or NIC entry instead of writing the figures out (issue #28 item 10).
//!
//! ```toml
//! [[machines.gpus]]
//! name = "gpu0"
//! preset = "h200-sxm"        # model, compute capability, memory and reduction rates
//! memory_rate_gbps = "4000GB/s"   # a key written here wins over the model's
//!
//! [[machines.nics]]
//! name = "nic0"
//! preset = "connectx-7"      # model name, wire rate (and message rate where cited)
//!
//! [[machines.links]]
//! up = "rc0"
//! down = "gpu0"              # generation and width may be left out: the model's (Gen5 x16)
//! ```
//!
//! A device's `preset` is applied on the TOML value tree before deserialisation, as a machine's
//! is ([`super::preset`]): every key the model sets that the entry does not write is added,
//! and the `preset` key is removed, so the loader after it is the one every config goes
//! through and the resolved `config.toml` spells the figures out. A PCIe link down to such a
//! device takes the model's generation and width where the link leaves them out; an NVLink
//! bond from such a GPU takes the model's per-link rate where the bond leaves it out. Within a
//! machine `preset`, a device entry that names a model changes the machine preset's device:
//! the model's keys over the machine preset's, the user's keys over the model's.

use toml::{Table, Value};

use super::ConfigError;

/// A figure of a model and where it comes from: a row of docs/references.md, a datasheet or
/// specification, or "estimate".
#[derive(Clone, Copy, Debug)]
pub struct Cited<T> {
    /// The figure.
    pub value: T,
    /// Its source.
    pub source: &'static str,
}

const fn cited<T>(value: T, source: &'static str) -> Cited<T> {
    Cited { value, source }
}

/// A GPU model.
#[derive(Clone, Copy, Debug)]
pub struct GpuModel {
    /// What a config names (`preset = "h200-sxm"`).
    pub id: &'static str,
    /// The GPU's `model` key (the name `nvidia-smi` prints, or near it).
    pub name: &'static str,
    /// HBM or GDDR bandwidth, GB/s (`memory_rate_gbps`).
    pub memory_gbs: Cited<u32>,
    /// A reduction kernel's rate in output bytes per second, GB/s (`reduce_gbps`).
    pub reduce_gbs: Cited<u32>,
    /// A reduction kernel's launch, ns (`reduce_launch_ns`); None: the default (estimate).
    pub reduce_launch_ns: Option<Cited<u32>>,
    /// The PCIe link it trains at with a slot that allows it: (generation, width).
    pub pcie: Cited<(u32, u32)>,
    /// NVLink: (links, GB/s per link each way), SXM parts and NVLink bridges; None without.
    pub nvlink: Option<Cited<(u32, u32)>>,
    /// The copy engine's outstanding PCIe reads (`ce_read_window`); None: the default (128,
    /// row D15).
    pub ce_read_window: Option<Cited<u32>>,
    /// The copy engine's outstanding reads of a peer GPU over NVLink
    /// (`ce_nvlink_read_window`); None: the default (1024, an estimate from row L4).
    pub ce_nvlink_read_window: Option<Cited<u32>>,
    /// What is measured of its copy engine over PCIe (host to device, device to host), as a
    /// reader checks the model against; "none" where nothing is.
    pub copy_engine: Cited<&'static str>,
}

/// A NIC model.
#[derive(Clone, Copy, Debug)]
pub struct NicModel {
    /// What a config names (`preset = "connectx-7"`).
    pub id: &'static str,
    /// The NIC's `model` key.
    pub name: &'static str,
    /// The port's net data rate, Gb/s (`wire_rate_gbps`).
    pub wire_gbps: Cited<u32>,
    /// The PCIe link (generation, width) of one port's card.
    pub pcie: Cited<(u32, u32)>,
    /// WQE spacing in the send engine, ns (`wqe_interval_ns`: the message rate); None: the
    /// default (3 ns, row F9).
    pub wqe_interval_ns: Option<Cited<u32>>,
}

/// The CUDA GPUs table, every GPU's compute-capability source.
pub const CC_SOURCE: &str = "NVIDIA CUDA GPUs table (developer.nvidia.com/cuda-gpus)";

/// Every GPU model, in the order `gdrsim presets` lists them.
pub const GPUS: [GpuModel; 9] = [
    GpuModel {
        id: "h100-pcie",
        name: "H100 PCIe",
        memory_gbs: cited(2000, "row D19 (NVIDIA H100 datasheet: H100 PCIe 2.0 TB/s)"),
        reduce_gbs: cited(666, "estimate (a third of the memory rate, as the default)"),
        reduce_launch_ns: None,
        pcie: cited((5, 16), "row D19 (H100 PCIe: PCIe Gen5 x16)"),
        nvlink: Some(cited(
            (12, 25),
            "row D19 (H100 PCIe: NVLink bridge, 600 GB/s both ways)",
        )),
        ce_read_window: Some(cited(
            128,
            "row D15 (H100: host to device >= 52 GB/s on Gen5, as device to host: the reads keep \
             pace with the link)",
        )),
        ce_nvlink_read_window: None,
        copy_engine: cited("at least 52 GB/s each way on Gen5", "row D15"),
    },
    GpuModel {
        id: "h100-sxm",
        name: "H100 SXM5 80GB",
        memory_gbs: cited(3350, "row D19 (NVIDIA H100 datasheet: H100 SXM 3.35 TB/s)"),
        reduce_gbs: cited(1116, "estimate (a third of the memory rate)"),
        reduce_launch_ns: None,
        pcie: cited((5, 16), "row D19 (H100 SXM: PCIe Gen5 x16)"),
        nvlink: Some(cited(
            (18, 25),
            "row D19 (H100 SXM: 18 NVLink 4 links, 900 GB/s both ways)",
        )),
        ce_read_window: Some(cited(
            128,
            "row D15 (H100: host to device >= 52 GB/s on Gen5, as device to host: the reads keep \
             pace with the link)",
        )),
        ce_nvlink_read_window: Some(cited(
            1024,
            "row L4 (HGX H100: copy-engine reads of a peer 370-373 GB/s, the writes' rate of \
             row L5; 1024 x 512 B cover the round trip through the NVSwitch)",
        )),
        copy_engine: cited("at least 52 GB/s each way on Gen5", "row D15"),
    },
    GpuModel {
        id: "h200-sxm",
        name: "H200 SXM 141GB",
        memory_gbs: cited(4800, "row D20 (NVIDIA H200 datasheet: 4.8 TB/s HBM3e)"),
        reduce_gbs: cited(
            1366,
            "row M4 (reduce dst += src at 1 GiB: 1366 GB/s of output)",
        ),
        reduce_launch_ns: Some(cited(
            3700,
            "row M3 (empty kernels queued back to back: 3.69 us each)",
        )),
        pcie: cited((5, 16), "rows D20, M1 (PCIe Gen5 x16)"),
        nvlink: Some(cited(
            (18, 25),
            "row D20 (H200 SXM: 18 NVLink 4 links, 900 GB/s both ways)",
        )),
        ce_read_window: Some(cited(
            128,
            "row M2 (H200 SXM, Gen5 x16: host to device 55.48 GB/s, device to host 55.29: the \
             reads keep pace with the link)",
        )),
        ce_nvlink_read_window: Some(cited(
            1024,
            "row L4 (measured on HGX H100: the same NVLink 4 and NVSwitch generation)",
        )),
        copy_engine: cited(
            "55.48 GB/s host to device, 55.29 device to host at 1 GiB, Gen5 x16",
            "row M2",
        ),
    },
    GpuModel {
        id: "h200-nvl",
        name: "H200 NVL",
        memory_gbs: cited(4800, "row D20 (NVIDIA H200 datasheet: H200 NVL 4.8 TB/s)"),
        reduce_gbs: cited(1366, "row M4 (measured on the H200 SXM: same memory)"),
        reduce_launch_ns: Some(cited(3700, "row M3 (measured on the H200 SXM)")),
        pcie: cited((5, 16), "row D20 (H200 NVL: PCIe Gen5 x16)"),
        nvlink: Some(cited(
            (18, 25),
            "row D20 (H200 NVL: 2- or 4-way NVLink bridge, 900 GB/s both ways)",
        )),
        ce_read_window: Some(cited(
            128,
            "row M2 (measured on the H200 SXM: host to device at the device-to-host rate on \
             Gen5 x16)",
        )),
        ce_nvlink_read_window: None,
        copy_engine: cited(
            "none of its own (the H200 SXM's row M2: 55.5 GB/s at Gen5 x16)",
            "row M2",
        ),
    },
    GpuModel {
        id: "b200-sxm",
        name: "B200",
        memory_gbs: cited(
            8000,
            "row D21 (NVIDIA DGX B200 datasheet: 64 TB/s for 8 GPUs)",
        ),
        reduce_gbs: cited(2666, "estimate (a third of the memory rate)"),
        reduce_launch_ns: None,
        pcie: cited((6, 16), "row D21 (B200: PCIe Gen6 x16 host interface)"),
        nvlink: Some(cited(
            (18, 50),
            "row D21 (B200: 18 NVLink 5 links, 1.8 TB/s both ways)",
        )),
        ce_read_window: Some(cited(
            256,
            "estimate (no measurement: twice the Gen5 parts' 128 of rows D15 and M2 for Gen6's \
             twice the rate; at 128 a Gen6 x16 GPU behind a PCIe switch reads at 78.5 GB/s of \
             the link's 112.6, gdrsim nvbandwidth on the default machine with its links at \
             Gen6)",
        )),
        ce_nvlink_read_window: Some(cited(
            2048,
            "estimate (no measurement: twice row L4's 1024 for NVLink 5's twice the rate, so \
             peer reads keep pace with peer writes as on HGX H100, rows L4 and L5; at 1024 the \
             hgx-b200 preset's reads run at 549.6 GB/s against its writes' 796.9)",
        )),
        copy_engine: cited("none", "estimate (no measurement of its own)"),
    },
    GpuModel {
        id: "a100-pcie",
        name: "A100 PCIe 80GB",
        memory_gbs: cited(
            1935,
            "row D22 (NVIDIA A100 datasheet: A100 80GB PCIe 1,935 GB/s)",
        ),
        reduce_gbs: cited(645, "estimate (a third of the memory rate)"),
        reduce_launch_ns: None,
        pcie: cited((4, 16), "row D22 (A100: PCIe Gen4 x16)"),
        nvlink: Some(cited(
            (12, 25),
            "row D22 (A100 PCIe: NVLink bridge for 2 GPUs, 600 GB/s both ways)",
        )),
        ce_read_window: Some(cited(
            128,
            "row D25 (A100: host to device and device to host both about 25-26 GB/s on Gen4: \
             the reads keep pace with the link)",
        )),
        ce_nvlink_read_window: None,
        copy_engine: cited("at least 23 GB/s each way on Gen4", "row D15"),
    },
    GpuModel {
        id: "a100-sxm",
        name: "A100-SXM4-80GB",
        memory_gbs: cited(
            2039,
            "row D22 (NVIDIA A100 datasheet: A100 80GB SXM 2,039 GB/s)",
        ),
        reduce_gbs: cited(679, "estimate (a third of the memory rate)"),
        reduce_launch_ns: None,
        pcie: cited((4, 16), "row D22 (A100: PCIe Gen4 x16)"),
        nvlink: Some(cited(
            (12, 25),
            "row D22 (A100 SXM: 12 NVLink 3 links, 600 GB/s both ways)",
        )),
        ce_read_window: Some(cited(
            128,
            "row D25 (A100: host to device and device to host both about 25-26 GB/s on Gen4: \
             the reads keep pace with the link)",
        )),
        ce_nvlink_read_window: None,
        copy_engine: cited("at least 23 GB/s each way on Gen4", "row D15"),
    },
    GpuModel {
        id: "l40s",
        name: "L40S",
        memory_gbs: cited(864, "row D23 (NVIDIA L40S datasheet: 864 GB/s GDDR6)"),
        reduce_gbs: cited(288, "estimate (a third of the memory rate)"),
        reduce_launch_ns: None,
        pcie: cited((4, 16), "row D23 (L40S: PCIe Gen4 x16)"),
        nvlink: None,
        ce_read_window: None,
        ce_nvlink_read_window: None,
        copy_engine: cited(
            "none of its own (row D9, an RTX 4090 of the same AD102 chip on Gen4 x16: pinned \
             23.85 GB/s host to device, 26.55 device to host)",
            "row D9",
        ),
    },
    GpuModel {
        id: "l4",
        name: "L4",
        memory_gbs: cited(300, "row D24 (NVIDIA L4 datasheet: 300 GB/s GDDR6)"),
        reduce_gbs: cited(100, "estimate (a third of the memory rate)"),
        reduce_launch_ns: None,
        pcie: cited((4, 16), "row D24 (L4: PCIe Gen4 x16)"),
        nvlink: None,
        ce_read_window: None,
        ce_nvlink_read_window: None,
        copy_engine: cited("none", "estimate (the default window)"),
    },
];

/// Every NIC model, in the order `gdrsim presets` lists them.
pub const NICS: [NicModel; 5] = [
    NicModel {
        id: "connectx-5",
        name: "ConnectX-5 Ex EDR",
        wire_gbps: cited(100, "row F10 (EDR 4x = 100 Gb/s net data rate)"),
        pcie: cited((4, 16), "row F13 (ConnectX-5 Ex: PCIe Gen4 x16)"),
        wqe_interval_ns: Some(cited(5, "row F13 (up to 200 M msg/s)")),
    },
    NicModel {
        id: "connectx-6",
        name: "ConnectX-6 HDR",
        wire_gbps: cited(200, "row F10 (HDR 4x = 200 Gb/s net data rate)"),
        pcie: cited((4, 16), "row F14 (ConnectX-6 VPI: PCIe Gen4 x16)"),
        wqe_interval_ns: Some(cited(5, "row F7 (215 M msg/s = 4.65 ns per message)")),
    },
    NicModel {
        id: "connectx-7",
        name: "ConnectX-7 NDR",
        wire_gbps: cited(400, "rows F9/F10 (NDR 4x = 400 Gb/s net data rate)"),
        pcie: cited(
            (5, 16),
            "row F9 (PCIe Gen5, up to x32; x16 per port's card)",
        ),
        wqe_interval_ns: Some(cited(3, "row F9 (330-370 M msg/s)")),
    },
    NicModel {
        id: "connectx-8",
        name: "ConnectX-8 SuperNIC XDR",
        wire_gbps: cited(800, "row F15 (ConnectX-8 SuperNIC: 800 Gb/s XDR)"),
        pcie: cited((6, 16), "row F15 (PCIe Gen6 x16, up to 48 lanes)"),
        wqe_interval_ns: None,
    },
    NicModel {
        id: "bluefield-3",
        name: "BlueField-3 NDR",
        wire_gbps: cited(400, "row F16 (BlueField-3 DPU: 400 Gb/s NDR or Ethernet)"),
        pcie: cited((5, 16), "row F16 (PCIe Gen5 x16, up to 32 lanes)"),
        wqe_interval_ns: None,
    },
];

/// The GPU model `id` names.
pub fn gpu(id: &str) -> Option<&'static GpuModel> {
    GPUS.iter().find(|g| g.id == id)
}

/// The NIC model `id` names.
pub fn nic(id: &str) -> Option<&'static NicModel> {
    NICS.iter().find(|n| n.id == id)
}

/// The GPU models' ids, comma-separated, as messages list them.
pub fn gpu_ids() -> String {
    GPUS.map(|g| g.id).join(", ")
}

/// The NIC models' ids, comma-separated, as messages list them.
pub fn nic_ids() -> String {
    NICS.map(|n| n.id).join(", ")
}

fn gbs(v: u32) -> Value {
    Value::String(format!("{v}GB/s"))
}

impl GpuModel {
    /// Compute capability, by the name's family as every GPU's model key gets it
    /// ([`super::defaults::compute_capability`]: NVIDIA's CUDA GPUs table).
    pub fn compute_capability(&self) -> (u32, u32) {
        super::defaults::compute_capability(self.name)
    }

    /// The keys of a `[[machines.gpus]]` entry the model sets.
    pub fn keys(&self) -> Table {
        let mut t = Table::new();
        t.insert("model".into(), Value::String(self.name.into()));
        let (major, minor) = self.compute_capability();
        t.insert(
            "compute_capability".into(),
            Value::String(format!("{major}.{minor}")),
        );
        t.insert("memory_rate_gbps".into(), gbs(self.memory_gbs.value));
        t.insert("reduce_gbps".into(), gbs(self.reduce_gbs.value));
        if let Some(l) = self.reduce_launch_ns {
            t.insert("reduce_launch_ns".into(), Value::Integer(l.value.into()));
        }
        if let Some(w) = self.ce_read_window {
            t.insert("ce_read_window".into(), Value::Integer(w.value.into()));
        }
        if let Some(w) = self.ce_nvlink_read_window {
            t.insert(
                "ce_nvlink_read_window".into(),
                Value::Integer(w.value.into()),
            );
        }
        t
    }

    /// Each figure of the model with its source, as `gdrsim presets ID` prints them.
    pub fn describe(&self) -> String {
        let (major, minor) = self.compute_capability();
        let mut rows = vec![
            ("model".to_string(), self.name.to_string(), ""),
            (
                "compute_capability".into(),
                format!("{major}.{minor}"),
                CC_SOURCE,
            ),
            (
                "memory_rate_gbps".into(),
                format!("{} GB/s", self.memory_gbs.value),
                self.memory_gbs.source,
            ),
            (
                "reduce_gbps".into(),
                format!("{} GB/s", self.reduce_gbs.value),
                self.reduce_gbs.source,
            ),
        ];
        if let Some(l) = self.reduce_launch_ns {
            rows.push((
                "reduce_launch_ns".into(),
                format!("{} ns", l.value),
                l.source,
            ));
        }
        if let Some(w) = self.ce_read_window {
            rows.push(("ce_read_window".into(), w.value.to_string(), w.source));
        }
        if let Some(w) = self.ce_nvlink_read_window {
            rows.push((
                "ce_nvlink_read_window".into(),
                w.value.to_string(),
                w.source,
            ));
        }
        let (g, w) = self.pcie.value;
        rows.push(("PCIe link".into(), format!("Gen{g} x{w}"), self.pcie.source));
        match self.nvlink {
            Some(n) => rows.push((
                "NVLink".into(),
                format!(
                    "{} links x {} GB/s each way (link_rate_gbps of its bonds)",
                    n.value.0, n.value.1
                ),
                n.source,
            )),
            None => rows.push(("NVLink".into(), "none".into(), "")),
        }
        rows.push((
            "copy engine measured".into(),
            self.copy_engine.value.to_string(),
            self.copy_engine.source,
        ));
        table(&format!("GPU model {}", self.id), &rows)
    }
}

impl NicModel {
    /// The keys of a `[[machines.nics]]` entry the model sets.
    pub fn keys(&self) -> Table {
        let mut t = Table::new();
        t.insert("model".into(), Value::String(self.name.into()));
        t.insert(
            "wire_rate_gbps".into(),
            Value::Integer(self.wire_gbps.value.into()),
        );
        if let Some(w) = self.wqe_interval_ns {
            t.insert("wqe_interval_ns".into(), Value::Integer(w.value.into()));
        }
        t
    }

    /// Each figure of the model with its source, as `gdrsim presets ID` prints them.
    pub fn describe(&self) -> String {
        let mut rows = vec![
            ("model".to_string(), self.name.to_string(), ""),
            (
                "wire_rate_gbps".into(),
                format!("{} Gb/s", self.wire_gbps.value),
                self.wire_gbps.source,
            ),
        ];
        if let Some(w) = self.wqe_interval_ns {
            rows.push((
                "wqe_interval_ns".into(),
                format!("{} ns", w.value),
                w.source,
            ));
        }
        let (g, w) = self.pcie.value;
        rows.push(("PCIe link".into(), format!("Gen{g} x{w}"), self.pcie.source));
        table(&format!("NIC model {}", self.id), &rows)
    }
}

/// A title and aligned `key  value  source` rows.
fn table(title: &str, rows: &[(String, String, &str)]) -> String {
    let wk = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let wv = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
    let mut s = format!("{title}\n");
    for (k, v, src) in rows {
        s.push_str(format!("  {k:<wk$}  {v:<wv$}  {src}").trim_end());
        s.push('\n');
    }
    s
}

/// `gdrsim presets`' lines for the device models.
pub fn list() -> String {
    let w = GPUS
        .iter()
        .map(|g| g.id.len())
        .chain(NICS.iter().map(|n| n.id.len()))
        .max()
        .unwrap_or(0);
    let mut s = String::from("GPU models ([[machines.gpus]] preset = \"ID\"):\n");
    for g in &GPUS {
        let (major, minor) = g.compute_capability();
        let (pg, pw) = g.pcie.value;
        s.push_str(&format!(
            "{:<w$}  {}, compute capability {major}.{minor}, {} GB/s memory, PCIe Gen{pg} x{pw}{}\n",
            g.id,
            g.name,
            g.memory_gbs.value,
            g.nvlink
                .map(|n| format!(", NVLink {} x {} GB/s", n.value.0, n.value.1))
                .unwrap_or_default()
        ));
    }
    s.push_str("\nNIC models ([[machines.nics]] preset = \"ID\"):\n");
    for n in &NICS {
        let (pg, pw) = n.pcie.value;
        s.push_str(&format!(
            "{:<w$}  {}, {} Gb/s, PCIe Gen{pg} x{pw}\n",
            n.id, n.name, n.wire_gbps.value
        ));
    }
    s
}

/// `gdrsim presets ID` for a device model: its figures and sources; None for no model.
pub fn show(id: &str) -> Option<String> {
    gpu(id)
        .map(GpuModel::describe)
        .or_else(|| nic(id).map(NicModel::describe))
}

/// What a device's `preset` names: a GPU or a NIC model.
#[derive(Clone, Copy, Debug)]
enum Model {
    Gpu(&'static GpuModel),
    Nic(&'static NicModel),
}

impl Model {
    fn pcie(self) -> (u32, u32) {
        match self {
            Model::Gpu(g) => g.pcie.value,
            Model::Nic(n) => n.pcie.value,
        }
    }
}

/// The model a device entry's `preset` names (`list`: "gpus" or "nics"), or the error naming
/// `key` and listing the models of that kind.
fn named(list: &str, v: &Value, key: &str, file: &str) -> Result<Model, ConfigError> {
    let (ids, kind) = if list == "gpus" {
        (gpu_ids(), "GPU")
    } else {
        (nic_ids(), "NIC")
    };
    let expected = format!(
        "the name of a built-in {kind} model ({ids}; `gdrsim presets` lists them with their \
         figures)"
    );
    let found = match v {
        Value::String(s) => {
            let m = if list == "gpus" {
                gpu(s).map(Model::Gpu)
            } else {
                nic(s).map(Model::Nic)
            };
            if let Some(m) = m {
                return Ok(m);
            }
            format!("{s:?}")
        }
        other => super::describe(other),
    };
    Err(ConfigError::new(file, key, expected, found))
}

/// The devices of a machine table that a user's keys named a model for: (name, model).
pub type Named = Vec<(String, ModelRef)>;

/// A model a device entry named (opaque outside this module).
#[derive(Clone, Copy, Debug)]
pub struct ModelRef(Model);

/// Applies the `preset` of every GPU and NIC entry of the machine table `t` (as the user wrote
/// it; `at` is its key path): the model's keys the entry does not write are added, the links
/// down to the device and the NVLink bonds from it get the model's figures they leave out.
/// Returns the devices that named a model, for [`fit_preset_links`]. `base` is the machine
/// preset the table overrides, if any: an error counts entries in the merged machine, the
/// preset's first, as every override's does.
pub fn apply(
    t: &mut Table,
    at: &str,
    file: &str,
    base: Option<&Table>,
) -> Result<Named, ConfigError> {
    let mut named_devices = Vec::new();
    for list in ["gpus", "nics"] {
        let base_names: Vec<&str> = base
            .and_then(|b| b.get(list)?.as_array())
            .map(|a| a.iter().filter_map(|e| e.get("name")?.as_str()).collect())
            .unwrap_or_default();
        let Some(Value::Array(entries)) = t.get_mut(list) else {
            continue;
        };
        let mut added = 0;
        for (j, e) in entries.iter_mut().enumerate() {
            let Value::Table(e) = e else { continue };
            let name = e.get("name").and_then(Value::as_str);
            // Its index in the merged machine: the preset's entry of that name, or after them.
            let index = match (
                base,
                name.and_then(|n| base_names.iter().position(|b| *b == n)),
            ) {
                (None, _) => j,
                (Some(_), Some(k)) => k,
                (Some(_), None) => {
                    added += 1;
                    base_names.len() + added - 1
                }
            };
            let Some(p) = e.remove("preset") else {
                continue;
            };
            let model = named(list, &p, &format!("{at}.{list}[{index}].preset"), file)?;
            let keys = match model {
                Model::Gpu(g) => g.keys(),
                Model::Nic(n) => n.keys(),
            };
            for (k, v) in keys {
                e.entry(k).or_insert(v);
            }
            if let Some(name) = e.get("name").and_then(Value::as_str) {
                named_devices.push((name.to_string(), ModelRef(model)));
            }
        }
    }
    if named_devices.is_empty() {
        return Ok(named_devices);
    }
    let model_of = |name: Option<&str>| {
        named_devices
            .iter()
            .find(|(n, _)| Some(n.as_str()) == name)
            .map(|(_, m)| m.0)
    };
    if let Some(Value::Array(links)) = t.get_mut("links") {
        for l in links.iter_mut().filter_map(Value::as_table_mut) {
            if let Some(m) = model_of(l.get("down").and_then(Value::as_str)) {
                let (g, w) = m.pcie();
                l.entry("generation").or_insert(Value::Integer(g.into()));
                l.entry("width").or_insert(Value::Integer(w.into()));
            }
        }
    }
    if let Some(Value::Array(bonds)) = t.get_mut("nvlinks") {
        for b in bonds.iter_mut().filter_map(Value::as_table_mut) {
            let m = model_of(b.get("a").and_then(Value::as_str))
                .or_else(|| model_of(b.get("b").and_then(Value::as_str)));
            if let Some(Model::Gpu(GpuModel {
                nvlink: Some(n), ..
            })) = m
            {
                b.entry("link_rate_gbps").or_insert(gbs(n.value.1));
            }
        }
    }
    Ok(named_devices)
}

/// After a machine preset's merge: a link of the machine preset down to a device the user
/// named a model for, which the user's table did not write (`user_links`: the (up, down) of
/// the links it wrote), trains at the lower generation and width of the preset's slot and
/// the model.
pub fn fit_preset_links(machine: &mut Table, named: &Named, user_links: &[(String, String)]) {
    let Some(Value::Array(links)) = machine.get_mut("links") else {
        return;
    };
    for l in links.iter_mut().filter_map(Value::as_table_mut) {
        let up = l.get("up").and_then(Value::as_str).unwrap_or_default();
        let down = l.get("down").and_then(Value::as_str).unwrap_or_default();
        if user_links.iter().any(|(u, d)| u == up && d == down) {
            continue;
        }
        let Some((_, m)) = named.iter().find(|(n, _)| n == down) else {
            continue;
        };
        let (g, w) = m.0.pcie();
        for (k, v) in [("generation", g), ("width", w)] {
            if let Some(Value::Integer(cur)) = l.get(k)
                && *cur > i64::from(v)
            {
                l.insert(k.into(), Value::Integer(v.into()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse;
    use crate::units::Rate;

    /// A one-machine config: `gpu` and `nic` are the lines of gpu0's and nic0's entries after
    /// their names, `links` those of both links after `up` and `down`.
    fn machine(gpu: &str, nic: &str, links: &str) -> String {
        format!(
            "name = \"m\"\n[sweep]\nsizes = [\"4KiB\"]\npaths = [\"gpudirect\"]\n\
             [[machines]]\nname = \"m\"\n[[machines.sockets]]\nname = \"s0\"\n\
             [[machines.root_complexes]]\nname = \"rc0\"\nsocket = \"s0\"\n\
             [[machines.gpus]]\nname = \"gpu0\"\n{gpu}\n\
             [[machines.nics]]\nname = \"nic0\"\n{nic}\n\
             [[machines.links]]\nup = \"rc0\"\ndown = \"gpu0\"\n{links}\n\
             [[machines.links]]\nup = \"rc0\"\ndown = \"nic0\"\n{links}\n\
             [[hosts]]\nname = \"a\"\nmachine = \"m\"\n[[hosts]]\nname = \"b\"\nmachine = \"m\"\n\
             [[scenarios]]\nname = \"s\"\nsender = {{ host = \"a\", nic = \"nic0\", gpu = \"gpu0\" }}\n\
             receiver = {{ host = \"b\", nic = \"nic0\", gpu = \"gpu0\" }}\n"
        )
    }

    fn gbs(v: u32) -> Rate {
        Rate::from_bytes_per_s(u64::from(v) * 1_000_000_000)
    }

    /// Each model's name puts it in its family of NVIDIA's CUDA GPUs table
    /// (developer.nvidia.com/cuda-gpus), from which its compute capability comes.
    #[test]
    fn every_model_name_gives_its_compute_capability() {
        let expected = [
            ("h100-pcie", (9, 0)),
            ("h100-sxm", (9, 0)),
            ("h200-sxm", (9, 0)),
            ("h200-nvl", (9, 0)),
            ("b200-sxm", (10, 0)),
            ("a100-pcie", (8, 0)),
            ("a100-sxm", (8, 0)),
            ("l40s", (8, 9)),
            ("l4", (8, 9)),
        ];
        assert_eq!(expected.len(), GPUS.len());
        for (id, cc) in expected {
            assert_eq!(gpu(id).unwrap().compute_capability(), cc, "{id}");
        }
    }

    #[test]
    fn every_model_loads_and_sets_its_figures() {
        for g in &GPUS {
            for n in &NICS {
                let text = machine(
                    &format!("preset = \"{}\"", g.id),
                    &format!("preset = \"{}\"", n.id),
                    "",
                );
                let cfg =
                    parse(&text, "models").unwrap_or_else(|e| panic!("{} {}: {e}", g.id, n.id));
                let m = &cfg.hosts[0].machine;
                let gpu = &m.gpus[0];
                assert_eq!(gpu.model, g.name);
                assert_eq!(gpu.compute_capability, g.compute_capability(), "{}", g.id);
                assert_eq!(gpu.memory.rate, gbs(g.memory_gbs.value));
                assert_eq!(gpu.reduce.rate, gbs(g.reduce_gbs.value));
                assert_eq!(m.nics[0].model, n.name);
                assert_eq!(
                    m.nics[0].wire_rate,
                    Rate::from_bps(u64::from(n.wire_gbps.value) * 1_000_000_000)
                );
                let lanes = |d: &str| {
                    m.links
                        .iter()
                        .find(|l| l.down == d)
                        .map(|l| (l.generation, l.width))
                        .unwrap()
                };
                assert_eq!(lanes("gpu0"), g.pcie.value, "{}", g.id);
                assert_eq!(lanes("nic0"), n.pcie.value, "{}", n.id);
            }
            assert!(show(g.id).unwrap().contains(g.memory_gbs.source));
        }
        assert!(show("connectx-8").unwrap().contains("Gen6 x16"));
        assert!(show("dgx-h100").is_none());
    }

    #[test]
    fn a_key_written_beside_the_model_wins() {
        let text = machine(
            "preset = \"h200-sxm\"\nmemory_rate_gbps = \"4000GB/s\"\ncompute_capability = \"8.0\"",
            "preset = \"connectx-6\"\nwire_rate_gbps = 100",
            "generation = 3\nwidth = 8",
        );
        let cfg = parse(&text, "over").unwrap();
        let m = &cfg.hosts[0].machine;
        assert_eq!(m.gpus[0].memory.rate, gbs(4000));
        assert_eq!(m.gpus[0].compute_capability, (8, 0));
        assert_eq!(m.nics[0].wire_rate, Rate::from_bps(100_000_000_000));
        assert!(m.links.iter().all(|l| (l.generation, l.width) == (3, 8)));
        // Keys it does not write come from the models.
        assert_eq!(m.gpus[0].model, "H200 SXM 141GB");
        assert_eq!(m.gpus[0].reduce.rate, gbs(1366));
        assert_eq!(m.nics[0].model, "ConnectX-6 HDR");
        assert_eq!(m.nics[0].wqe_interval, crate::units::ns(5));
    }

    #[test]
    fn an_unknown_model_is_refused_naming_the_key_and_the_models() {
        let gen5 = "generation = 5\nwidth = 16";
        let e = parse(&machine("preset = \"h300\"", "", gen5), "bad.toml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("bad.toml"), "{e}");
        assert!(e.contains("machines[0].gpus[0].preset"), "{e}");
        assert!(e.contains("\"h300\""), "{e}");
        assert!(e.contains("h200-sxm") && e.contains("l40s"), "{e}");
        // A GPU model on a NIC is no NIC model: the NIC models are listed.
        let e = parse(&machine("", "preset = \"h100-pcie\"", gen5), "bad.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("machines[0].nics[0].preset"), "{e}");
        assert!(e.contains("connectx-7") && !e.contains("l40s"), "{e}");
        let e = parse(&machine("preset = 7", "", gen5), "bad.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("machines[0].gpus[0].preset"), "{e}");
        // Without a model, a link still needs its generation.
        assert!(parse(&machine("", "", ""), "bad.toml").is_err());
    }

    #[test]
    fn a_model_in_a_machine_preset_changes_its_device_and_fits_its_link() {
        let text = "name = \"x\"\n[sweep]\nsizes = [\"4KiB\"]\npaths = [\"gpudirect\"]\n\
            [[machines]]\nname = \"p\"\npreset = \"pcie-gen5-2s\"\n\
            [[machines.gpus]]\nname = \"gpu0\"\npreset = \"l40s\"\n\
            [[machines.gpus]]\nname = \"gpu1\"\npreset = \"h200-nvl\"\nmemory_rate_gbps = \"1TB/s\"\n\
            [[hosts]]\nname = \"a\"\nmachine = \"p\"\n[[hosts]]\nname = \"b\"\nmachine = \"p\"\n\
            [[scenarios]]\nname = \"s\"\nsender = { host = \"a\", nic = \"nic0\", gpu = \"gpu0\" }\n\
            receiver = { host = \"b\", nic = \"nic0\", gpu = \"gpu1\" }\n";
        let cfg = parse(text, "p").unwrap();
        let m = &cfg.hosts[0].machine;
        let gpu = |n: &str| m.gpus.iter().find(|g| g.name == n).unwrap();
        assert_eq!(gpu("gpu0").model, "L40S");
        assert_eq!(gpu("gpu0").compute_capability, (8, 9));
        assert_eq!(gpu("gpu0").memory.rate, gbs(864));
        assert_eq!(gpu("gpu1").model, "H200 NVL");
        assert_eq!(gpu("gpu1").memory.rate, gbs(1000));
        assert_eq!(gpu("gpu2").model, "H100 PCIe");
        let lanes = |d: &str| {
            m.links
                .iter()
                .find(|l| l.down == d)
                .map(|l| (l.generation, l.width))
                .unwrap()
        };
        // The preset's Gen5 slot trains at the L40S's Gen4; the H200 NVL keeps Gen5.
        assert_eq!(lanes("gpu0"), (4, 16));
        assert_eq!(lanes("gpu1"), (5, 16));
        assert_eq!(lanes("gpu2"), (5, 16));
        // An unknown model in an override names the entry as the merged machine counts it.
        let e = parse(&text.replace("\"h200-nvl\"", "\"h9\""), "p")
            .unwrap_err()
            .to_string();
        assert!(e.contains("machines[0].gpus[1].preset"), "{e}");
        let e = parse(
            &text.replace(
                "name = \"gpu1\"\npreset = \"h200-nvl\"",
                "name = \"gpu9\"\npreset = \"h9\"",
            ),
            "p",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("machines[0].gpus[8].preset"), "{e}");
    }

    #[test]
    fn every_source_is_a_row_or_an_estimate() {
        let sources = GPUS
            .iter()
            .flat_map(|g| {
                [
                    Some(g.memory_gbs.source),
                    Some(g.reduce_gbs.source),
                    g.reduce_launch_ns.map(|c| c.source),
                    Some(g.pcie.source),
                    g.nvlink.map(|c| c.source),
                    g.ce_read_window.map(|c| c.source),
                    g.ce_nvlink_read_window.map(|c| c.source),
                    Some(g.copy_engine.source),
                ]
            })
            .chain(NICS.iter().flat_map(|n| {
                [
                    Some(n.wire_gbps.source),
                    Some(n.pcie.source),
                    n.wqe_interval_ns.map(|c| c.source),
                ]
            }))
            .flatten();
        for s in sources {
            assert!(
                s.starts_with("row ") || s.starts_with("rows ") || s.starts_with("estimate"),
                "{s}"
            );
        }
        // One `presets ID` namespace: ids unique across GPUs, NICs and machine presets.
        let mut ids: Vec<&str> = GPUS
            .iter()
            .map(|g| g.id)
            .chain(NICS.iter().map(|n| n.id))
            .collect();
        ids.sort_unstable();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n);
        for id in ids {
            assert!(
                super::super::preset::find(id).is_none(),
                "{id} is a machine preset too"
            );
        }
    }
}

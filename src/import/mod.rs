//! `gdrsim import`: configs from what real machines print. `topo-m` reads an
//! `nvidia-smi topo -m` matrix ([`matrix`]), builds the PCIe tree that gives its classes
//! ([`tree`], named and linked in [`tree_machine`]) and the NVLink fabric that gives its `NV#`
//! cells ([`nvlink`]); `nccl-topo` reads the PCI tree NCCL dumps with `NCCL_TOPO_DUMP_FILE`
//! ([`nccl`]), link generations and widths included. Both write a config of one machine of
//! that tree, two hosts of it and a scenario per GPU with its nearest NIC ([`emit`]), which
//! `gdrsim check`, `topo` and `run` take as it is.
//!
//! The config is checked before it is written: it is loaded, its machine built, and every class
//! of the model compared with the source's. What the model cannot reproduce (cells of a
//! matrix no PCIe tree gives) is said in notes, each cell with the class the config gives
//! instead.

pub mod emit;
pub mod matrix;
pub mod nccl;
pub mod nvlink;
pub mod tree;
pub mod tree_machine;

use std::path::Path;

use crate::config::choice::Choice;
use crate::config::{self, Config, ConfigError};
use crate::topology::{self, Affinity, CpuFamily, NodeKind, Place};
use matrix::{Cell, DeviceKind, Matrix};

/// An imported config and what the import has to say about it.
#[derive(Clone, Debug)]
pub struct Imported {
    /// The config's text.
    pub toml: String,
    /// Notes for the user (stderr): the parameters chosen, the cells not reproduced and why.
    pub notes: Vec<String>,
    /// The cells the config's machine does not reproduce: (row label, column label, the
    /// matrix's cell, the model's class), each pair once.
    pub differences: Vec<(String, String, String, Affinity)>,
}

/// A config name from a file name: lower case letters, digits and dashes.
fn config_name(file: &Path) -> String {
    let stem = file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("imported");
    let name: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let name = name.trim_matches('-').to_string();
    if name.is_empty() {
        "imported".to_string()
    } else {
        name
    }
}

/// The parameters of `like` (a config's text and where it comes from), or the built-in
/// defaults.
fn params_of(
    like: Option<(&str, &str)>,
    cpu: Option<CpuFamily>,
) -> Result<emit::Params, ConfigError> {
    let params = match like {
        Some((t, src)) => {
            // A config whose first machine is a preset's: its keys as the preset spells them.
            let t = config::preset::expand(t, src)?.unwrap_or_else(|| t.to_string());
            emit::Params::like(&t, src)
                .map_err(|e| ConfigError::new(src, "machines", "a config with a machine", e))
        }
        None => Ok(emit::Params::defaults()),
    };
    params.map(|p| emit::Params {
        cpu_family: cpu,
        ..p
    })
}

/// The GPU and NIC models an import gives its devices (`--gpu`, `--nic`); None: the
/// parameters' (`--like`, `--preset`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Models {
    /// The GPUs' model.
    pub gpu: Option<&'static config::device::GpuModel>,
    /// The NICs' model.
    pub nic: Option<&'static config::device::NicModel>,
}

impl Models {
    /// The models `--gpu` and `--nic` name. A source that names no model (an `nvidia-smi
    /// topo -m` matrix) needs both, unless another machine's devices are taken (`from_like`:
    /// `--like` or `--preset`); an unknown name is refused with the models listed.
    pub fn named(
        gpu: Option<&str>,
        nic: Option<&str>,
        from_like: bool,
    ) -> Result<Models, ConfigError> {
        use config::device;
        let unknown = |flag: &str, kind: &str, ids: String, found: &str| {
            ConfigError::new(
                "command line",
                flag,
                format!("the name of a {kind} model ({ids})"),
                format!("{found:?}"),
            )
        };
        let models = Models {
            gpu: gpu
                .map(|g| {
                    device::gpu(g).ok_or_else(|| unknown("--gpu", "GPU", device::gpu_ids(), g))
                })
                .transpose()?,
            nic: nic
                .map(|n| {
                    device::nic(n).ok_or_else(|| unknown("--nic", "NIC", device::nic_ids(), n))
                })
                .transpose()?,
        };
        if !from_like {
            let missing = match (models.gpu, models.nic) {
                (None, _) => Some(("--gpu", "GPU")),
                (_, None) => Some(("--nic", "NIC")),
                _ => None,
            };
            if let Some((flag, kind)) = missing {
                return Err(ConfigError::new(
                    "command line",
                    flag,
                    format!(
                        "the {kind} model of the imported machine (the matrix names none, and \
                         gdrsim does not guess): `--gpu MODEL --nic MODEL` (GPU models: {}; NIC \
                         models: {}), or --like CONFIG / --preset NAME to take another \
                         machine's devices; for the former default, `--gpu h100-pcie --nic \
                         connectx-7`",
                        device::gpu_ids(),
                        device::nic_ids()
                    ),
                    format!("no {flag} (no {kind} model)"),
                ));
            }
        }
        Ok(models)
    }
}

/// Loads a config an import wrote; one it refuses makes the source (`shown`, `what` it is)
/// one the importer cannot build a machine of.
fn load(toml: &str, shown: &str, what: &str) -> Result<Config, ConfigError> {
    config::parse(toml, "<imported config>").map_err(|e| {
        ConfigError::new(
            shown,
            "",
            format!("{what} the importer can build a machine of"),
            format!("a config it refuses ({e})"),
        )
    })
}

/// Imports the matrix `text` (`file` names it in errors and gives the config its name), with
/// the parameters of `like` (the text of another config, and its name) or the defaults.
pub fn topo_m(
    text: &str,
    file: &Path,
    like: Option<(&str, &str)>,
    cpu: Option<CpuFamily>,
    models: Models,
) -> Result<Imported, ConfigError> {
    let shown = file.display().to_string();
    let m = matrix::parse(text, &shown)?;
    let params = params_of(like, cpu)?.with_models(models);
    let tree = tree::build(&m);
    let name = config_name(file);
    let gpus: Vec<usize> = m.of(DeviceKind::Gpu).map(|(i, _)| i).collect();
    let nics: Vec<usize> = m.of(DeviceKind::Nic).map(|(i, _)| i).collect();
    // First pass with a placeholder scenario, to build the machine and find the nearest NICs.
    let draft = tree_machine::config(&m, &tree, &params, &name, &[(gpus[0], nics[0])], &[]);
    let cfg = load(&draft, &shown, "a matrix")?;
    let host = topology::host_graph(&cfg.hosts[0]);
    let place = |d: usize| {
        let kind = match m.devices[d].kind {
            DeviceKind::Gpu => NodeKind::Gpu(gpus.iter().position(|&g| g == d).unwrap_or(0)),
            DeviceKind::Nic => NodeKind::Nic(nics.iter().position(|&n| n == d).unwrap_or(0)),
        };
        Place::Device(host.node_index(kind))
    };
    let scenarios: Vec<(usize, usize)> = host
        .nearest_nics()
        .into_iter()
        .enumerate()
        .map(|(g, n)| (gpus[g], nics[n]))
        .collect();

    let mut differences = Vec::new();
    for a in 0..m.devices.len() {
        for b in a + 1..m.devices.len() {
            let model = host.class(place(a), place(b));
            let (la, lb) = (&m.devices[a].label, &m.devices[b].label);
            let cell = match m.cells[a][b] {
                Cell::Pcie(c) => c,
                Cell::NvLink(n) => Affinity::Nv(n),
                Cell::Itself => continue,
            };
            if cell != model {
                differences.push((la.clone(), lb.clone(), cell.name().to_string(), model));
            }
        }
    }
    let mut notes = vec![format!("parameters: {}", params.describe())];
    let sockets = tree.sockets.len();
    let rcs: usize = tree.sockets.iter().map(|s| s.root_complexes.len()).sum();
    notes.push(format!(
        "machine {name}: {sockets} socket(s), {rcs} root complex(es), {} GPU(s), {} NIC(s); hosts node-a and node-b; scenarios {}",
        gpus.len(),
        nics.len(),
        scenarios
            .iter()
            .map(|&(g, n)| format!("{}-NIC{}", m.devices[g].label, nics.iter().position(|&x| x == n).unwrap_or(0)))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let fabric = nvlink::fabric(&m);
    if !fabric.switched.is_empty() {
        notes.push(format!(
            "NVLink: {} GPUs on one NVSwitch (NV{} between every pair: more links than a GPU has for direct bonds to all)",
            fabric.switched.len(),
            fabric.switched[0].1
        ));
    } else if !fabric.direct.is_empty() {
        notes.push(format!(
            "NVLink: {} direct GPU-GPU bond(s), as the NV# cells give them",
            fabric.direct.len()
        ));
    }
    if !differences.is_empty() {
        let gpu_nic = differences
            .iter()
            .any(|(a, b, _, _)| kind_of(&m, a) != kind_of(&m, b));
        notes.push(format!(
            "{} cell(s) differ: no PCIe tree gives every cell of this matrix (a tree's classes are an ultrametric: for any three devices, the two farthest pairs have the same class), so the GPU-NIC cells {} and the others give way: {}",
            differences.len(),
            if gpu_nic { "were kept where they fit one tree (some do not)" } else { "are kept" },
            differences
                .iter()
                .map(|(a, b, c, x)| format!("{a}-{b} {c} -> {}{}", x.name(), why(&m, a, b)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    for s in &tree.sockets {
        let numas: Vec<u32> = {
            let mut v: Vec<u32> = socket_gpus(&m, s)
                .filter_map(|d| m.devices[d].numa)
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        if numas.len() > 1 {
            notes.push(format!(
                "GPUs of NUMA nodes {numas:?} share a socket: the matrix's cells join them (NODE or closer)"
            ));
        }
    }
    let mut numa_sockets: Vec<(u32, usize)> = Vec::new();
    for (k, s) in tree.sockets.iter().enumerate() {
        if let Some(n) = s.numa {
            if numa_sockets.iter().any(|x| x.0 == n && x.1 != k) {
                notes.push(format!(
                    "the GPUs of NUMA node {n} are on more than one socket: SYS cells between them or to every NIC near the others keep them apart"
                ));
            }
            numa_sockets.push((n, k));
        }
    }
    let header = vec![
        format!("Imported by `gdrsim import topo-m {shown}` from an `nvidia-smi topo -m` matrix."),
        "Sockets are NUMA nodes (SYS between them); root complexes group the devices PHB or closer;".to_string(),
        "a switch holds a PIX group, an upper switch the PIX groups of a PXB group.".to_string(),
        format!("Parameters: {}.", params.describe()),
    ];
    let toml = tree_machine::config(&m, &tree, &params, &name, &scenarios, &header);
    load(&toml, &shown, "a matrix")?;
    Ok(Imported {
        toml,
        notes,
        differences,
    })
}

/// Why no tree gives the cell `a`-`b`: a third device the two see at classes that, with the
/// cell, break the ultrametric rule (NICs looked at first), as " (with W: A-W x, B-W y)".
fn why(m: &Matrix, a: &str, b: &str) -> String {
    let index = |l: &str| m.devices.iter().position(|d| d.label == l);
    let (Some(a), Some(b)) = (index(a), index(b)) else {
        return String::new();
    };
    let class = |x: usize, y: usize| match m.cells[x][y] {
        Cell::Pcie(c) => Some(c),
        _ => None,
    };
    let Some(c) = class(a, b) else {
        return String::new();
    };
    let mut order: Vec<usize> = (0..m.devices.len()).filter(|&w| w != a && w != b).collect();
    order.sort_by_key(|&w| m.devices[w].kind != DeviceKind::Nic);
    order
        .into_iter()
        .find_map(|w| {
            let (x, y) = (class(a, w)?, class(b, w)?);
            let mut v = [c, x, y];
            v.sort();
            (v[1] != v[2]).then(|| {
                let (la, lb, lw) = (
                    &m.devices[a].label,
                    &m.devices[b].label,
                    &m.devices[w].label,
                );
                format!(
                    " (with {lw}: {la}-{lw} {}, {lb}-{lw} {})",
                    x.name(),
                    y.name()
                )
            })
        })
        .unwrap_or_default()
}

/// The kind of the device labelled `label`.
fn kind_of(m: &Matrix, label: &str) -> Option<DeviceKind> {
    m.devices.iter().find(|d| d.label == label).map(|d| d.kind)
}

/// The GPUs of a socket of the tree.
fn socket_gpus<'a>(m: &'a Matrix, s: &'a tree::Socket) -> impl Iterator<Item = usize> + 'a {
    fn walk(sw: &tree::Switch, out: &mut Vec<usize>) {
        out.extend(&sw.devices);
        sw.switches.iter().for_each(|c| walk(c, out));
    }
    let mut all = Vec::new();
    for rc in &s.root_complexes {
        for a in rc {
            match a {
                tree::Attach::Device(d) => all.push(*d),
                tree::Attach::Switch(sw) => walk(sw, &mut all),
            }
        }
    }
    all.into_iter()
        .filter(move |&d| m.devices[d].kind == DeviceKind::Gpu)
}

/// What `gdrsim import` reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `topo-m`: an `nvidia-smi topo -m` matrix ([`topo_m`]), with the GPU and NIC models
    /// `--gpu` and `--nic` name (the matrix names none).
    TopoM {
        /// `--gpu MODEL`.
        gpu: Option<String>,
        /// `--nic MODEL`.
        nic: Option<String>,
    },
    /// `nccl-topo`: an NCCL topology dump ([`nccl::import`]).
    NcclTopo,
}

/// `gdrsim import topo-m|nccl-topo FILE [--out OUT] [--like CONFIG | --preset NAME]`: reads
/// FILE, takes the parameters of CONFIG or NAME, imports, prints the notes on stderr, and
/// writes the config to OUT atomically (stdout without one). Nothing is written when FILE (or
/// CONFIG) is refused.
pub fn command(
    kind: Kind,
    file: &Path,
    out: Option<&Path>,
    like: Option<&Path>,
    preset: Option<&str>,
    cpu: Option<&str>,
) -> anyhow::Result<()> {
    let cpu = cpu
        .map(|w| {
            CpuFamily::from_word(w).ok_or_else(|| {
                ConfigError::new(
                    "command line",
                    "--cpu",
                    CpuFamily::expected(),
                    format!("{w:?}"),
                )
            })
        })
        .transpose()?;
    let shown = file.display().to_string();
    let what = match kind {
        Kind::TopoM { .. } => "a readable `nvidia-smi topo -m` text file",
        Kind::NcclTopo => "a readable NCCL topology XML file",
    };
    let text = std::fs::read_to_string(file)
        .map_err(|e| ConfigError::new(&shown, "", what, e.to_string()))?;
    let like_text = like_text(like, preset)?;
    let like = like_text.as_ref().map(|(t, s)| (t.as_str(), s.as_str()));
    let imported = match &kind {
        Kind::TopoM { gpu, nic } => {
            let models = Models::named(gpu.as_deref(), nic.as_deref(), like.is_some())?;
            topo_m(&text, file, like, cpu, models)?
        }
        Kind::NcclTopo => nccl::import(&text, file, like, cpu)?,
    };
    for n in &imported.notes {
        eprintln!("note: {n}");
    }
    match out {
        Some(p) => {
            crate::report::atomic::write(p, imported.toml.as_bytes())?;
            eprintln!("wrote {}", p.display());
            Ok(())
        }
        None => crate::report::emit(&imported.toml),
    }
}

/// The text and name of the config whose parameters an import takes: `like` (validated as a
/// config first, so that its parameters are known good) or the preset named `preset`.
fn like_text(
    like: Option<&Path>,
    preset: Option<&str>,
) -> anyhow::Result<Option<(String, String)>> {
    if let Some(p) = like {
        config::load(p)?;
        return Ok(Some((std::fs::read_to_string(p)?, p.display().to_string())));
    }
    let Some(n) = preset else {
        return Ok(None);
    };
    let p = config::preset::find(n).ok_or_else(|| {
        ConfigError::new(
            "command line",
            "--preset",
            format!(
                "the name of a built-in preset ({})",
                config::preset::names()
            ),
            format!("{n:?}"),
        )
    })?;
    Ok(Some((p.toml.to_string(), format!("preset {}", p.name))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_names_come_from_the_file_name() {
        assert_eq!(
            config_name(Path::new("dir/DGX A100_topo.txt")),
            "dgx-a100-topo"
        );
        assert_eq!(config_name(Path::new("__.txt")), "imported");
    }

    #[test]
    fn gpu_nic_cells_no_tree_gives_are_said() {
        // GPU0 PIX to both NICs, GPU1 PIX to NIC0 but SYS to NIC1: no tree has all four GPU-NIC
        // cells. The import still succeeds and names what it gave up.
        let text = "\tGPU0\tGPU1\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity
GPU0\t X \tPIX\tPIX\tPIX\t0-7\t0
GPU1\tPIX\t X \tPIX\tSYS\t0-7\t0
NIC0\tPIX\tPIX\t X \tPIX
NIC1\tPIX\tSYS\tPIX\t X
";
        let imp = topo_m(text, Path::new("odd.txt"), None, None, Models::default()).unwrap();
        assert_eq!(
            imp.differences,
            vec![(
                "GPU1".to_string(),
                "NIC1".to_string(),
                "SYS".to_string(),
                Affinity::Pix
            )]
        );
        let note = imp.notes.iter().find(|n| n.contains("differ")).unwrap();
        assert!(
            note.contains("were kept where they fit one tree (some do not)"),
            "{note}"
        );
        assert!(
            note.contains("GPU1-NIC1 SYS -> PIX (with NIC0: GPU1-NIC0 PIX, NIC1-NIC0 PIX)"),
            "{note}"
        );
        // A consistent matrix differs nowhere and says nothing about it.
        let ok = topo_m(
            &text.replace("SYS", "PIX"),
            Path::new("ok.txt"),
            None,
            None,
            Models::default(),
        )
        .unwrap();
        assert!(ok.differences.is_empty());
        assert!(!ok.notes.iter().any(|n| n.contains("differ")));
        assert!(
            ok.toml.contains("name = \"GPU0-NIC0\"") && ok.toml.contains("name = \"GPU1-NIC1\"")
        );
    }
}

//! The machine of a [`Dump`]: a socket with one root complex per `<cpu>`, a PCIe switch per
//! bridge, the GPUs and NICs, every link at the generation and width the dump gives it; and the
//! classes the dump's tree implies, which the written config must give back.
//!
//! **Bridges and switches.** In NCCL's XML a bridge `<pci>` is already a whole switch: when it
//! builds the tree from sysfs (xml.cc `ncclTopoGetXmlFromSys`), it climbs from a device two
//! path components at a time, from the device to its switch's upstream port, passing over the
//! downstream port it hangs on, and stops at the host bridge, passing over the root port. So
//! downstream ports and root ports never appear: a bridge is a switch's upstream port, two
//! nested bridges are two cascaded switches (PXB), and devices directly under a `<cpu>` sit on
//! root ports. The one exception is a Broadcom PEX switch in base mode, whose single chip shows
//! as two bridge levels; NCCL folds the lower level into the upper
//! (topo.cc `ncclTopoFlattenBcmSwitches`), and so does this import ([`values::bcm_gen`]),
//! so that its devices stay PIX to each other as NCCL and `nvidia-smi` see them. A file that
//! spells out downstream ports by hand cannot be told apart from cascaded switches, and is read
//! as NCCL reads it.
//!
//! **Root complexes.** The dump says which NUMA node a root port belongs to, not which PCIe
//! host bridge: every `<cpu>` gets one root complex, and devices on different root ports of it
//! are PHB, as NCCL classes them (`nvidia-smi` prints NODE between host bridges).
//!
//! **NVLink-C2C.** A GPU with a `<c2c>` (Grace Hopper) hangs from the socket of its `<cpu>` by
//! a `[[machines.c2c_links]]` entry at the rate NCCL reads from it ([`values::c2c_rate`]), and
//! its PCIe link is left out: NCCL keeps both and routes over the faster, the model gives a GPU
//! one or the other. C2C counts as the GPU's host bridge, so it is NODE to the other devices
//! of its socket (NCCL's P2C path to a NIC there) and SYS across sockets.

use super::super::emit::{C2cLink, Item, Link, Machine, Params};
use super::devices;
use super::values;
use super::xml::{Bridge, Device, Dump, Gpu, Lanes, Nic};
use crate::topology::Affinity;

/// A GPU or NIC placed in the machine: its label, name and place in the tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// `GPU0`, `NIC3`.
    pub label: String,
    /// Its name in the config (`gpu0`, `mlx5_3`).
    pub name: String,
    /// Its socket (index).
    pub cpu: usize,
    /// The switches above it, nearest first (indices into the machine's switches).
    pub switches: Vec<usize>,
    /// Whether it hangs from its socket by NVLink-C2C (a GPU with a `<c2c>`).
    pub c2c: bool,
}

/// The class two placed devices have over PCIe, as the dump's tree implies it (NCCL's
/// reading): across sockets SYS, through the root complex PHB, one switch PIX, more PXB; and
/// NODE on one socket where either hangs from it by NVLink-C2C (the model's class of NCCL's
/// P2C: C2C is that GPU's host bridge).
pub fn pcie_class(a: &Placed, b: &Placed) -> Affinity {
    if a.cpu != b.cpu {
        return Affinity::Sys;
    }
    if a.c2c || b.c2c {
        return Affinity::Node;
    }
    match a
        .switches
        .iter()
        .enumerate()
        .find_map(|(i, s)| b.switches.iter().position(|t| t == s).map(|j| i + j + 1))
    {
        None => Affinity::Phb,
        Some(1) => Affinity::Pix,
        Some(_) => Affinity::Pxb,
    }
}

/// The machine of a dump, without its NVLink fabric (see [`super::fabric`]).
#[derive(Clone, Debug, Default)]
pub struct Built<'d> {
    /// The machine.
    pub machine: Machine,
    /// The GPUs, in the machine's order, with their dump elements.
    pub gpus: Vec<(Placed, &'d Gpu)>,
    /// The NICs, in the machine's order, with their dump elements.
    pub nics: Vec<(Placed, &'d Nic)>,
    /// What the notes say of the machine.
    pub notes: Vec<String>,
}

/// Folds the lower level of a two-level Broadcom switch into the upper, as NCCL does: the
/// children of `b` that are its chip's lower level give `b` their own children.
pub fn fold(b: &mut Bridge) {
    let generation = values::bcm_gen(b.pci.id, 0);
    if generation > 0 {
        let children = std::mem::take(&mut b.children);
        for c in children {
            match c {
                Device::Bridge(lower) if values::bcm_gen(lower.pci.id, 1) == generation => {
                    b.folded.push(lower.pci.busid);
                    b.children.extend(lower.children);
                }
                other => b.children.push(other),
            }
        }
    }
    for c in &mut b.children {
        if let Device::Bridge(lower) = c {
            fold(lower);
        }
    }
}

/// Walks the tree, naming and linking.
struct Walk<'d, 'p> {
    params: &'p Params,
    machine: Machine,
    gpus: Vec<(Vec<usize>, usize, &'d Gpu)>,
    nics: Vec<(Vec<usize>, usize, &'d Nic)>,
    gpu_links: Vec<(usize, usize)>,
    nic_links: Vec<(usize, usize)>,
    /// The PCIe links left out for NVLink-C2C: bus ID, generation and width.
    c2c_pcie: Vec<String>,
    folded: Vec<String>,
    unknown_lanes: Vec<String>,
}

impl<'d> Walk<'d, '_> {
    /// A link from `up` to a placeholder name, fixed when the devices are named; returns its
    /// index.
    fn link(
        &mut self,
        up: &str,
        down: &str,
        lanes: Option<&Lanes>,
        busid: &str,
        fallback: (u32, u32),
    ) -> usize {
        let (generation, width, comment) = match lanes {
            Some(l) => {
                let g = l.generation.unwrap_or(fallback.0);
                let w = l.width.unwrap_or(fallback.1);
                let mut missing = Vec::new();
                if l.generation.is_none() {
                    missing.push("speed");
                }
                if l.width.is_none() {
                    missing.push("width");
                }
                let comment = if missing.is_empty() {
                    format!("{busid}: {} x{w}", l.speed_text.trim())
                } else {
                    self.unknown_lanes
                        .push(format!("{busid} ({})", missing.join(" and ")));
                    format!(
                        "{busid}: no {} in the dump, the parameters'",
                        missing.join(" or ")
                    )
                };
                (g, w, comment)
            }
            None => (
                fallback.0,
                fallback.1,
                format!("{busid}: no PCI device in the dump, the parameters' link"),
            ),
        };
        self.machine.links.push(Link {
            up: up.to_string(),
            down: down.to_string(),
            lanes: (generation, width),
            comment,
        });
        self.machine.links.len() - 1
    }

    fn device(&mut self, up: &str, cpu: usize, above: &[usize], d: &'d Device) {
        match d {
            Device::Bridge(b) => {
                let k = self.machine.switches.len();
                let name = format!("sw{k}");
                let (vendor, device) = (b.pci.id >> 48, (b.pci.id >> 32) & 0xffff);
                let mut comment = format!("{} (PCI {vendor:04x}:{device:04x})", b.pci.busid);
                if !b.folded.is_empty() {
                    comment.push_str(&format!(
                        " with {}, the same Broadcom chip's lower level",
                        b.folded.join(", ")
                    ));
                    self.folded
                        .push(format!("{} with {}", b.pci.busid, b.folded.join(", ")));
                }
                self.machine.switches.push(Item::new(&name, comment));
                self.link(
                    up,
                    &name,
                    Some(&b.pci.lanes),
                    &b.pci.busid,
                    self.params.links[0],
                );
                let mut chain = vec![k];
                chain.extend_from_slice(above);
                for c in &b.children {
                    self.device(&name, cpu, &chain, c);
                }
            }
            Device::Gpu(g) if g.c2c.is_some() => {
                let lanes = &g.pci.lanes;
                let mut pcie = g.pci.busid.clone();
                if let (Some(generation), Some(width)) = (lanes.generation, lanes.width) {
                    pcie.push_str(&format!(" (Gen{generation} x{width})"));
                }
                self.c2c_pcie.push(pcie);
                self.gpus.push((above.to_vec(), cpu, g));
            }
            Device::Gpu(g) => {
                let l = self.link(
                    up,
                    "",
                    Some(&g.pci.lanes),
                    &g.pci.busid,
                    self.params.links[1],
                );
                self.gpu_links.push((self.gpus.len(), l));
                self.gpus.push((above.to_vec(), cpu, g));
            }
            Device::Nic(n) => {
                let busid = match (&n.pci, n.ports.first()) {
                    (Some(p), _) => p.busid.as_str(),
                    (None, Some(port)) => port.name.as_str(),
                    (None, None) => "",
                };
                let l = self.link(
                    up,
                    "",
                    n.pci.as_ref().map(|p| &p.lanes),
                    busid,
                    self.params.links[2],
                );
                self.nic_links.push((self.nics.len(), l));
                self.nics.push((above.to_vec(), cpu, n));
            }
        }
    }
}

/// The order of devices by their `dev` indices where every one has a distinct one, else as
/// listed.
fn order(devs: &[Option<i64>]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..devs.len()).collect();
    let mut seen: Vec<i64> = devs.iter().flatten().copied().collect();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() == devs.len() {
        idx.sort_by_key(|&i| devs[i]);
    }
    idx
}

/// Names the link down to device `k` of the walk (`index`: device, link) and places the
/// device, with its (label, name).
fn placed(
    links: &mut [Link],
    index: &[(usize, usize)],
    k: usize,
    (label, name): (String, String),
    cpu: usize,
    above: &[usize],
) -> Placed {
    if let Some(&(_, l)) = index.iter().find(|x| x.0 == k) {
        links[l].down = name.clone();
    }
    Placed {
        label,
        name,
        cpu,
        switches: above.to_vec(),
        c2c: false,
    }
}

/// The machine of `dump` with `params` (their links stand in where the dump gives none).
pub fn build<'d>(dump: &'d Dump, params: &Params) -> Built<'d> {
    let mut w = Walk {
        params,
        machine: Machine::default(),
        gpus: Vec::new(),
        nics: Vec::new(),
        gpu_links: Vec::new(),
        nic_links: Vec::new(),
        c2c_pcie: Vec::new(),
        folded: Vec::new(),
        unknown_lanes: Vec::new(),
    };
    let mut notes = Vec::new();
    let mut phb = Vec::new();
    for (k, cpu) in dump.cpus.iter().enumerate() {
        let socket = format!("cpu{k}");
        let affinity = cpu
            .affinity
            .as_ref()
            .map_or(String::new(), |a| format!(", CPU mask {a}"));
        let kind = if cpu.kind.is_empty() {
            String::new()
        } else {
            format!(", {}", cpu.kind)
        };
        let mut keys = toml::Table::new();
        if cpu.family != crate::topology::CpuFamily::None {
            keys.insert(
                "cpu_family".into(),
                toml::Value::String(cpu.family.name().into()),
            );
        }
        w.machine.sockets.push(super::super::emit::Device {
            item: Item::new(
                &socket,
                format!("<cpu numaid=\"{}\">{kind}{affinity}", cpu.numaid),
            ),
            keys,
        });
        let rc = format!("rc{k}");
        w.machine.root_complexes.push((
            Item::new(&rc, format!("the root ports of {socket}")),
            socket,
        ));
        for d in &cpu.children {
            w.device(&rc, k, &[], d);
        }
        let on_root_ports = cpu
            .children
            .iter()
            .filter(|d| !matches!(d, Device::Gpu(g) if g.c2c.is_some()))
            .count();
        if on_root_ports > 1 {
            phb.push(format!("numaid {}", cpu.numaid));
        }
    }
    // GPUs and NICs in index order, named.
    let gpu_order = order(&w.gpus.iter().map(|g| g.2.dev).collect::<Vec<_>>());
    let nic_order = order(
        &w.nics
            .iter()
            .map(|n| n.2.ports.first().and_then(|p| p.dev))
            .collect::<Vec<_>>(),
    );
    let mut built = Built::default();
    let mut remarks = devices::Remarks::default();
    let mut c2c = Vec::new();
    for (i, &g) in gpu_order.iter().enumerate() {
        let (above, cpu, gpu) = &w.gpus[g];
        let out = devices::gpu(i, gpu, params, &mut remarks);
        let names = (format!("GPU{i}"), out.item.name.clone());
        let mut at = placed(&mut w.machine.links, &w.gpu_links, g, names, *cpu, above);
        if let Some(c) = &gpu.c2c {
            let (_, rate) = values::c2c_rate(c.bw_mbps, c.count);
            built.machine.c2c_links.push(C2cLink {
                socket: format!("cpu{cpu}"),
                gpu: at.name.clone(),
                rate: rate.clone(),
                comment: format!(
                    "{}: <c2c bw=\"{}\" count=\"{}\">, {} x {} MB/s each way",
                    gpu.pci.busid, c.bw_mbps, c.count, c.count, c.bw_mbps
                ),
            });
            c2c.push(format!("{} {}", at.name, rate.replace("GB/s", " GB/s")));
            at.c2c = true;
        }
        built.machine.gpus.push(out);
        built.gpus.push((at, *gpu));
    }
    for (i, &n) in nic_order.iter().enumerate() {
        let (above, cpu, nic) = &w.nics[n];
        let out = devices::nic(i, nic, &mut remarks);
        let names = (format!("NIC{i}"), out.item.name.clone());
        let at = placed(&mut w.machine.links, &w.nic_links, n, names, *cpu, above);
        built.machine.nics.push(out);
        built.nics.push((at, *nic));
    }
    // Links summary: how many of each generation and width.
    let mut lanes: Vec<((u32, u32), usize)> = Vec::new();
    for l in &w.machine.links {
        match lanes.iter_mut().find(|x| x.0 == l.lanes) {
            Some(x) => x.1 += 1,
            None => lanes.push((l.lanes, 1)),
        }
    }
    lanes.sort_by_key(|l| std::cmp::Reverse(l.0));
    notes.push(format!(
        "PCIe links as the dump gives them: {}",
        lanes
            .iter()
            .map(|((g, wd), n)| format!("{n} x Gen{g} x{wd}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    if !w.unknown_lanes.is_empty() {
        notes.push(format!(
            "links the dump gives no speed or width for (NCCL read none in sysfs), the parameters' instead: {}",
            w.unknown_lanes.join(", ")
        ));
    }
    if !c2c.is_empty() {
        let estimates = match &params.c2c_link {
            Some(_) => format!(
                "those of the first C2C link of {}",
                params.source.as_deref().unwrap_or("the parameters")
            ),
            None => "the built-in estimates (crates/scenario/src/config/defaults.rs)".to_string(),
        };
        notes.push(format!(
            "NVLink-C2C (<c2c>): GPUs that hang from the socket of their <cpu>, at bw x count / 1000 GB/s each way as NCCL reads it (bw: NVML's link speed in MB/s): {}; latency, packet size and header {estimates}; their PCIe links left out (a GPU of the model has C2C or PCIe; NCCL keeps both): {}",
            c2c.join(", "),
            w.c2c_pcie.join(", ")
        ));
    }
    if !w.folded.is_empty() {
        notes.push(format!(
            "Broadcom PEX switches that show as two bridge levels, one switch each as NCCL flattens them: {}",
            w.folded.join("; ")
        ));
    }
    if !phb.is_empty() {
        notes.push(format!(
            "devices on different root ports of one <cpu> ({}) are PHB, as NCCL classes them: the dump does not say which PCIe host bridge a root port is on (nvidia-smi prints NODE between host bridges)",
            phb.join(", ")
        ));
    }
    notes.extend(remarks.notes());
    built.machine.sockets = w.machine.sockets;
    built.machine.root_complexes = w.machine.root_complexes;
    built.machine.switches = w.machine.switches;
    built.machine.links = w.machine.links;
    built.notes = notes;
    built
}

#[cfg(test)]
mod tests {
    use super::super::xml::read;
    use super::*;

    fn placed(cpu: usize, switches: &[usize]) -> Placed {
        Placed {
            label: String::new(),
            name: String::new(),
            cpu,
            switches: switches.to_vec(),
            c2c: false,
        }
    }

    #[test]
    fn classes_follow_the_tree_as_nccl_reads_it() {
        assert_eq!(
            pcie_class(&placed(0, &[0]), &placed(0, &[0])),
            Affinity::Pix
        );
        assert_eq!(
            pcie_class(&placed(0, &[1, 0]), &placed(0, &[0])),
            Affinity::Pxb
        );
        assert_eq!(
            pcie_class(&placed(0, &[1, 0]), &placed(0, &[2, 0])),
            Affinity::Pxb
        );
        assert_eq!(
            pcie_class(&placed(0, &[0]), &placed(0, &[1])),
            Affinity::Phb
        );
        assert_eq!(pcie_class(&placed(0, &[]), &placed(0, &[1])), Affinity::Phb);
        assert_eq!(
            pcie_class(&placed(0, &[0]), &placed(1, &[0])),
            Affinity::Sys
        );
    }

    /// A DGX A100 switch complex as NCCL dumps it: a PEX88096 whose chip shows as two levels
    /// (0000:01 over 0000:03, both 1000:a096), a GPU behind its own switch, a NIC on each
    /// level.
    const A100: &str = r#"<system version="1">
  <cpu numaid="3" arch="x86_64" vendor="AuthenticAMD" familyid="23" modelid="49">
    <pci busid="0000:01:00.0" class="0x060400" vendor="0x1000" device="0xc010" subsystem_vendor="0x1000" subsystem_device="0xa096" link_speed="16.0 GT/s PCIe" link_width="16">
      <pci busid="0000:03:00.0" class="0x060400" vendor="0x1000" device="0xc010" subsystem_vendor="0x1000" subsystem_device="0xa096" link_speed="16.0 GT/s PCIe" link_width="16">
        <pci busid="0000:05:00.0" class="0x060400" vendor="0x1000" device="0xc010" subsystem_vendor="0x10de" subsystem_device="0x13b8" link_speed="16.0 GT/s PCIe" link_width="16">
          <pci busid="0000:07:00.0" class="0x030200" vendor="0x10de" device="0x20b0" link_speed="16.0 GT/s PCIe" link_width="16">
            <gpu dev="0" sm="80" rank="0" gdr="1"/>
          </pci>
        </pci>
        <pci busid="0000:0c:00.0" class="0x020700" vendor="0x15b3" device="0x101b" link_speed="16.0 GT/s PCIe" link_width="16">
          <nic><net name="mlx5_0" dev="0" speed="200000" port="1" gdr="1"/></nic>
        </pci>
      </pci>
      <pci busid="0000:0d:00.0" class="0x020700" vendor="0x15b3" device="0x101b" link_speed="16.0 GT/s PCIe" link_width="8">
        <nic><net name="mlx5_1" dev="1" speed="200000" port="1" gdr="1"/></nic>
      </pci>
    </pci>
  </cpu>
</system>
"#;

    #[test]
    fn a_broadcom_chip_shown_as_two_levels_is_one_switch() {
        let mut dump = read(A100, "a.xml").unwrap();
        for d in &mut dump.cpus[0].children {
            if let Device::Bridge(b) = d {
                fold(b);
            }
        }
        let built = build(&dump, &Params::defaults());
        let names: Vec<&str> = built
            .machine
            .switches
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(
            names,
            ["sw0", "sw1"],
            "0000:03:00.0 folded into 0000:01:00.0"
        );
        assert!(
            built.machine.switches[0]
                .comment
                .contains("with 0000:03:00.0")
        );
        let (gpu, nic0, nic1) = (&built.gpus[0].0, &built.nics[0].0, &built.nics[1].0);
        assert_eq!(gpu.switches, [1, 0]);
        assert_eq!(pcie_class(gpu, nic0), Affinity::Pxb);
        assert_eq!(
            pcie_class(nic0, nic1),
            Affinity::Pix,
            "as nvidia-smi prints DGX A100's NIC pairs"
        );
        // Every link as the dump gives it, the x8 one included.
        let lanes: Vec<(&str, (u32, u32))> = built
            .machine
            .links
            .iter()
            .map(|l| (l.down.as_str(), l.lanes))
            .collect();
        assert_eq!(
            lanes,
            [
                ("sw0", (4, 16)),
                ("sw1", (4, 16)),
                ("gpu0", (4, 16)),
                ("mlx5_0", (4, 16)),
                ("mlx5_1", (4, 8))
            ]
        );
        let gpu_keys = &built.machine.gpus[0].keys;
        assert_eq!(gpu_keys["compute_capability"].as_str(), Some("8.0"));
        assert_eq!(gpu_keys["model"].as_str(), Some("A100 SXM4 40GB"));
        assert_eq!(
            built.machine.nics[0].keys["wire_rate_gbps"].as_integer(),
            Some(200)
        );
        assert_eq!(
            built.machine.nics[0].keys["model"].as_str(),
            Some("ConnectX-6")
        );
        // Without the fold, the two levels are two switches and the NICs PXB.
        let unfolded = read(A100, "a.xml").unwrap();
        let b = build(&unfolded, &Params::defaults());
        assert_eq!(pcie_class(&b.nics[0].0, &b.nics[1].0), Affinity::Pxb);
        assert_eq!(b.machine.switches.len(), 3);
    }

    #[test]
    fn a_gpu_with_a_c2c_hangs_from_its_socket_without_a_pcie_link() {
        let text = r#"<system version="1">
  <cpu numaid="0" arch="arm64">
    <pci busid="0000:01:00.0" class="0x020700" vendor="0x15b3" device="0x1021" link_speed="32.0 GT/s PCIe" link_width="16">
      <nic><net name="mlx5_0" dev="0" speed="400000" port="1" gdr="1"/></nic>
    </pci>
    <pci busid="0009:01:00.0" class="0x030200" vendor="0x10de" device="0x2342" link_speed="32.0 GT/s PCIe" link_width="16">
      <gpu dev="0" sm="90" rank="0" gdr="1"><c2c bw="44712" count="5"/></gpu>
    </pci>
  </cpu>
</system>
"#;
        let dump = read(text, "gh.xml").unwrap();
        let built = build(&dump, &Params::defaults());
        let downs: Vec<&str> = built
            .machine
            .links
            .iter()
            .map(|l| l.down.as_str())
            .collect();
        assert_eq!(downs, ["mlx5_0"], "no PCIe link above the GPU");
        assert_eq!(
            built.machine.c2c_links,
            [C2cLink {
                socket: "cpu0".to_string(),
                gpu: "gpu0".to_string(),
                rate: "223.56GB/s".to_string(),
                comment: "0009:01:00.0: <c2c bw=\"44712\" count=\"5\">, 5 x 44712 MB/s each way"
                    .to_string(),
            }]
        );
        let (gpu, nic) = (&built.gpus[0].0, &built.nics[0].0);
        assert!(gpu.c2c && !nic.c2c);
        assert_eq!(pcie_class(gpu, nic), Affinity::Node, "NCCL's P2C");
        let mut far = nic.clone();
        far.cpu = 1;
        assert_eq!(pcie_class(gpu, &far), Affinity::Sys);
        let notes = built.notes.join("\n");
        assert!(
            notes.contains(
                "gpu0 223.56 GB/s; latency, packet size and header the built-in estimates"
            ),
            "{notes}"
        );
        assert!(notes.contains("left out (a GPU of the model has C2C or PCIe; NCCL keeps both): 0009:01:00.0 (Gen5 x16)"), "{notes}");
        assert!(
            !notes.contains("are PHB"),
            "one device on a root port: {notes}"
        );
    }

    #[test]
    fn devices_are_ordered_by_their_dev_indices_where_all_have_one() {
        assert_eq!(order(&[Some(1), Some(0), Some(2)]), [1, 0, 2]);
        assert_eq!(order(&[Some(1), None]), [0, 1]);
        assert_eq!(order(&[Some(1), Some(1)]), [0, 1]);
    }
}

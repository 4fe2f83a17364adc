//! NCCL's topology XML read into a [`Dump`]: the CPUs (NUMA nodes), the PCI tree under each,
//! its GPUs with their NVLinks and NVLink-C2C links and its NICs with their ports, every
//! element with its place in the file.
//!
//! The format is what `ncclTopoDumpXmlToFile` writes (src/graph/xml.cc): a `<system
//! version="1">` root, `<cpu numaid=...>` children, `<pci busid= class= link_speed=
//! link_width=>` elements nested as the PCI tree, a `<gpu sm= dev=>` (with `<nvlink target=
//! count= tclass=>` and `<c2c bw= count=>` children) or a `<nic>` (with `<net name= speed=
//! ...>` ports) inside a device's `<pci>`, and `<nic>` directly under a `<cpu>` for a NIC
//! without a PCI device. A topology file (`NCCL_TOPO_FILE`, as cloud images ship them) may
//! give GPUs and NICs as bare `<pci>` elements of their class: they are read too, and said in
//! the notes.
//!
//! What NCCL ignores is ignored with a note (elements it does not know, `<pcilink>`);
//! `<pci>` elements that are neither bridges, GPUs nor NICs (NVMe drives) are skipped with a
//! note, as are bridges with no GPU or NIC below them. What cannot be read is refused as
//! `FILE:LINE:COLUMN: expected ..., found ...`, naming the element and attribute, and so is
//! a `<pci>` nested deeper than [`MAX_PCI_DEPTH`] levels.

use roxmltree::{Document, Node};

use super::values::{self, Class, Pos, Read};
use crate::config::ConfigError;

/// The deepest `<pci>` nesting read. A real machine has fewer than 10 levels (root port,
/// one or two switches of up to two levels each, the device); the bound is generous, and it
/// keeps a hostile dump of thousands of nested bridges from overflowing the stack of the
/// readers, which recurse down the tree.
pub const MAX_PCI_DEPTH: usize = 64;
/// Most `<pci>` devices a dump may hold: a real machine has a few dozen to a few hundred
/// (bridges, GPUs, NICs, NVSwitches), and the import's work grows faster than their number.
pub const MAX_PCI_DEVICES: usize = 1024;

/// A PCIe link as the dump gives it: the generation and width, each `None` where the dump
/// has none, and the attribute text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lanes {
    /// The PCIe generation of `link_speed`.
    pub generation: Option<u32>,
    /// The width of `link_width`.
    pub width: Option<u32>,
    /// `link_speed` as written (empty where absent).
    pub speed_text: String,
}

/// A `<pci>` element: a device or bridge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pci {
    /// Its `busid`, as written.
    pub busid: String,
    /// Its `class`, as written.
    pub class: String,
    /// vendor, device, subsystem vendor and subsystem device (16 bits each).
    pub id: u64,
    /// Its link to its parent.
    pub lanes: Lanes,
    /// Where it is.
    pub at: Pos,
}

/// An `<nvlink>` of a GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NvLink {
    /// The target's bus ID, as written.
    pub target: String,
    /// What the target is (`tclass`): a GPU, an NVSwitch or a CPU.
    pub class: Class,
    /// The links.
    pub count: u32,
    /// Where it is.
    pub at: Pos,
}

/// A GPU's `<c2c>`: its NVLink-C2C link to the CPU (Grace Hopper and later).
///
/// NCCL writes it from NVML (xml.cc `ncclTopoGetXmlFromGpu`): `count` the active C2C links,
/// `bw` each one's `NVML_FI_DEV_C2C_LINK_GET_MAX_BW`, "C2C Link Speed in MBps" (nvmlwrap.h);
/// topo.cc `ncclTopoAddC2c` joins the GPU to its CPU at `bw * count / 1000.0` GB/s each way
/// ([`values::c2c_rate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct C2c {
    /// `count`: the active links.
    pub count: u32,
    /// `bw`: each link's bandwidth in MB/s.
    pub bw_mbps: u32,
    /// Where it is.
    pub at: Pos,
}

/// A GPU: a `<pci>` with a `<gpu>`, or a bare `<pci>` of a display class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gpu {
    /// Its `<pci>`.
    pub pci: Pci,
    /// The `sm` attribute (None: a bare `<pci>` of a topology file).
    pub sm: Option<i64>,
    /// The `dev` attribute (the CUDA device index).
    pub dev: Option<i64>,
    /// Its NVLinks.
    pub nvlinks: Vec<NvLink>,
    /// Its NVLink-C2C link to the CPU, where it has a `<c2c>`.
    pub c2c: Option<C2c>,
    /// Where its `<gpu>` is (its `<pci>` for a bare one).
    pub at: Pos,
}

/// A port of a NIC: a `<net>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Net {
    /// `name` (the device, `mlx5_0`).
    pub name: String,
    /// `dev` (NCCL's net device index).
    pub dev: Option<i64>,
    /// `speed` in Mb/s (None where absent or not positive).
    pub speed_mbps: Option<i64>,
    /// `port`.
    pub port: Option<i64>,
    /// `gdr`: whether NCCL found GPUDirect RDMA usable.
    pub gdr: Option<bool>,
    /// Where it is.
    pub at: Pos,
}

/// A NIC: a `<nic>` (in a `<pci>`, or directly under a `<cpu>`), or a bare `<pci>` of a
/// network class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nic {
    /// Its `<pci>` (None for a `<nic>` directly under a `<cpu>`).
    pub pci: Option<Pci>,
    /// Its ports (empty for a bare `<pci>`).
    pub ports: Vec<Net>,
    /// Where it is.
    pub at: Pos,
}

/// A bridge: a switch (as NCCL sees one), and what hangs below it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bridge {
    /// Its `<pci>`.
    pub pci: Pci,
    /// Bridges of the same Broadcom chip folded into it (see [`super::machine`]).
    pub folded: Vec<String>,
    /// What hangs below it.
    pub children: Vec<Device>,
}

/// What hangs below a CPU or bridge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Device {
    /// A bridge and its subtree.
    Bridge(Bridge),
    /// A GPU.
    Gpu(Gpu),
    /// A NIC.
    Nic(Nic),
}

/// A `<cpu>`: a NUMA node and its PCI tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cpu {
    /// `numaid`.
    pub numaid: i64,
    /// `affinity` (a CPU mask), as written.
    pub affinity: Option<String>,
    /// `arch`, `vendor`, `familyid` and `modelid`, as "x86_64 GenuineIntel family 6 model 143".
    pub kind: String,
    /// The CPU family those attributes name, as NCCL classes them (none where they do not).
    pub family: crate::topology::CpuFamily,
    /// What hangs below it.
    pub children: Vec<Device>,
    /// Where it is.
    pub at: Pos,
}

/// A dump as read: its CPUs (of one host) and notes on what was ignored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dump {
    /// The CPUs, in file order.
    pub cpus: Vec<Cpu>,
    /// What was ignored or skipped, one line per kind of thing.
    pub notes: Vec<String>,
}

/// Notes gathered by kind: each kind once, with the things it applies to.
#[derive(Default)]
struct Notes(Vec<(&'static str, Vec<String>)>);

impl Notes {
    fn add(&mut self, kind: &'static str, what: String) {
        match self.0.iter_mut().find(|k| k.0 == kind) {
            Some(k) => k.1.push(what),
            None => self.0.push((kind, vec![what])),
        }
    }

    fn lines(self) -> Vec<String> {
        self.0
            .into_iter()
            .map(|(kind, what)| format!("{kind}: {}", what.join(", ")))
            .collect()
    }
}

/// Reads one document.
struct Reader<'a, 'input> {
    file: &'a str,
    doc: &'a Document<'input>,
    notes: Notes,
    /// Every `<pci>` read: bus ID (as a number) and place.
    busids: Vec<(u64, Pos)>,
    /// Every `<net>` read: name and place.
    nets: Vec<(String, Pos)>,
}

impl<'input> Reader<'_, 'input> {
    fn pos(&self, byte: usize) -> Pos {
        let p = self.doc.text_pos_at(byte);
        Pos {
            line: p.row as usize,
            col: p.col as usize,
        }
    }

    fn at(&self, n: Node<'_, 'input>) -> Pos {
        self.pos(n.range().start)
    }

    /// The place of attribute `name` of `n` (the element's where it has none).
    fn attr_at(&self, n: Node<'_, 'input>, name: &str) -> Pos {
        n.attribute_node(name)
            .map_or_else(|| self.at(n), |a| self.pos(a.range().start))
    }

    /// A refusal of attribute `name` of `n`: "`<elem> name`: what", found its value quoted
    /// (or "no `name` attribute").
    fn bad(&self, n: Node<'_, 'input>, name: &str, what: &str) -> ConfigError {
        let found = n
            .attribute(name)
            .map_or(format!("no {name} attribute"), |v| format!("{name}={v:?}"));
        self.attr_at(n, name)
            .err(self.file, format!("{} {name}: {what}", tag(n)), found)
    }

    /// A required integer attribute.
    fn int(&self, n: Node<'_, 'input>, name: &str, what: &str) -> Result<i64, ConfigError> {
        n.attribute(name)
            .and_then(values::int)
            .ok_or_else(|| self.bad(n, name, what))
    }

    fn cpu(&mut self, n: Node<'_, 'input>) -> Result<Cpu, ConfigError> {
        let numaid = self.int(n, "numaid", "the NUMA node, a number (-1 where unknown)")?;
        let kind = ["arch", "vendor"]
            .iter()
            .filter_map(|k| n.attribute(*k))
            .map(String::from)
            .chain(n.attribute("familyid").map(|f| format!("family {f}")))
            .chain(n.attribute("modelid").map(|m| format!("model {m}")))
            .collect::<Vec<_>>()
            .join(" ");
        let mut children = Vec::new();
        for c in n.children().filter(Node::is_element) {
            match c.tag_name().name() {
                "pci" => children.extend(self.pci(c, 1)?),
                "nic" => children.extend(self.nic(c, None)?.map(Device::Nic)),
                other => self.ignore(c, other),
            }
        }
        let number = |k: &str| {
            n.attribute(k)
                .and_then(values::int)
                .and_then(|v| u32::try_from(v).ok())
        };
        let family = crate::topology::CpuFamily::from_nccl(
            n.attribute("arch").unwrap_or(""),
            n.attribute("vendor").unwrap_or(""),
            number("familyid"),
            number("modelid"),
        );
        Ok(Cpu {
            numaid,
            affinity: n.attribute("affinity").map(String::from),
            kind,
            family,
            children,
            at: self.at(n),
        })
    }

    fn ignore(&mut self, n: Node<'_, 'input>, name: &str) {
        let p = self.at(n);
        self.notes.add(
            "elements NCCL does not read either, ignored",
            format!("<{name}> at line {}", p.line),
        );
    }

    /// A `<pci>` `depth` levels below its `<cpu>` (1 for a root port's device) and its subtree.
    fn pci(&mut self, n: Node<'_, 'input>, depth: usize) -> Result<Option<Device>, ConfigError> {
        if depth > MAX_PCI_DEPTH {
            return Err(self.at(n).err(
                self.file,
                format!(
                    "at most {MAX_PCI_DEPTH} levels of <pci> below a <cpu> (a real machine has \
                     fewer than 10)"
                ),
                format!("{} at level {depth}", tag(n)),
            ));
        }
        if self.busids.len() >= MAX_PCI_DEVICES {
            return Err(self.at(n).err(
                self.file,
                format!(
                    "at most {MAX_PCI_DEVICES} <pci> devices (a real machine has a few hundred \
                     at most)"
                ),
                format!("{} as device {}", tag(n), self.busids.len() + 1),
            ));
        }
        let busid = n.attribute("busid").unwrap_or_default();
        let Some(number) = values::busid(busid) else {
            return Err(self.bad(n, "busid", "a PCI bus ID such as 0000:17:00.0"));
        };
        let here = self.at(n);
        if let Some((_, first)) = self.busids.iter().find(|b| b.0 == number) {
            return Err(self.attr_at(n, "busid").err(
                self.file,
                format!(
                    "{} busid: a bus ID no other device has ({busid} is at line {} column {})",
                    tag(n),
                    first.line,
                    first.col
                ),
                format!("busid={busid:?} again"),
            ));
        }
        self.busids.push((number, here));
        let Some(class_text) = n.attribute("class") else {
            return Err(self.bad(n, "class", "a PCI class such as 0x060400 (a bridge)"));
        };
        let speed_text = n.attribute("link_speed").unwrap_or_default();
        let generation = match values::generation(speed_text) {
            Read::Value(g) => Some(g),
            Read::Unknown => None,
            Read::Invalid => return Err(self.bad(n, "link_speed", values::SPEEDS)),
        };
        let width = match values::width(n.attribute("link_width").unwrap_or_default()) {
            Read::Value(w) => Some(w),
            Read::Unknown => None,
            Read::Invalid => return Err(self.bad(n, "link_width", values::WIDTHS)),
        };
        let pci = Pci {
            busid: busid.to_string(),
            class: class_text.to_string(),
            id: values::device_id(
                n.attribute("vendor"),
                n.attribute("device"),
                n.attribute("subsystem_vendor"),
                n.attribute("subsystem_device"),
            ),
            lanes: Lanes {
                generation,
                width,
                speed_text: speed_text.to_string(),
            },
            at: here,
        };
        let elements: Vec<Node<'_, 'input>> = n.children().filter(Node::is_element).collect();
        let named = |name: &'static str| {
            elements
                .iter()
                .copied()
                .filter(move |c| c.tag_name().name() == name)
        };
        if let Some(g) = named("gpu").next() {
            let gpu = self.gpu(g, pci)?;
            for extra in named("gpu").skip(1) {
                let p = self.at(extra);
                self.notes.add(
                    "a <pci> with more than one <gpu> (partitions of one GPU): the first is kept",
                    format!("{busid} (line {})", p.line),
                );
            }
            if gpu.c2c.is_some() && named("gpu").nth(1).is_some() {
                self.notes.add(
                    "partitions of one GPU sharing its NVLink-C2C (MLOPart: NCCL's nSibDevs > 1 joins them to the CPU through one C2C bridge at the C2C's rate): the one GPU kept has that one link",
                    busid.to_string(),
                );
            }
            return Ok(Some(Device::Gpu(gpu)));
        }
        if let Some(c) = named("nic").next() {
            return Ok(self.nic(c, Some(pci))?.map(Device::Nic));
        }
        let class = values::class(class_text);
        let has_children = elements.iter().any(|c| c.tag_name().name() == "pci");
        match class {
            Class::Gpu => {
                self.notes.add(
                    "GPUs given by their PCI class only, with no <gpu> (a topology file, not a dump): their compute capability is the parameters'",
                    busid.to_string(),
                );
                return Ok(Some(Device::Gpu(Gpu {
                    at: pci.at,
                    pci,
                    sm: None,
                    dev: None,
                    nvlinks: Vec::new(),
                    c2c: None,
                })));
            }
            Class::Nic => {
                self.notes.add(
                    "NICs given by their PCI class only, with no <nic> (a topology file, not a dump): named by their place, wire rate the parameters'",
                    busid.to_string(),
                );
                return Ok(Some(Device::Nic(Nic {
                    at: pci.at,
                    pci: Some(pci),
                    ports: Vec::new(),
                })));
            }
            _ if !has_children => {
                self.notes.add(
                    "devices that are neither GPU, NIC nor bridge, skipped",
                    format!("{busid} (class {class_text})"),
                );
                return Ok(None);
            }
            _ => {}
        }
        if class != Class::Bridge {
            self.notes.add(
                "devices of other classes with devices below them, read as switches as NCCL reads them",
                format!("{busid} (class {class_text})"),
            );
        }
        let mut children = Vec::new();
        for c in elements {
            match c.tag_name().name() {
                "pci" => children.extend(self.pci(c, depth + 1)?),
                "pcilink" => {
                    self.notes.add(
                        "<pcilink> (Broadcom switch-to-switch links), not modelled",
                        busid.to_string(),
                    );
                }
                other => self.ignore(c, other),
            }
        }
        if children.is_empty() {
            self.notes.add(
                "bridges with no GPU or NIC below them, left out",
                busid.to_string(),
            );
            return Ok(None);
        }
        Ok(Some(Device::Bridge(Bridge {
            pci,
            folded: Vec::new(),
            children,
        })))
    }

    fn gpu(&mut self, n: Node<'_, 'input>, pci: Pci) -> Result<Gpu, ConfigError> {
        let sm = self.int(
            n,
            "sm",
            "the compute capability as 10 x major + minor (sm=\"90\" for 9.0)",
        )?;
        if values::compute_capability(sm).is_none() {
            return Err(self.bad(
                n,
                "sm",
                "a compute capability from 1.0 to 20.9 as 10 x major + minor (sm=\"90\" for 9.0)",
            ));
        }
        let mut nvlinks = Vec::new();
        let mut c2c: Option<C2c> = None;
        for c in n.children().filter(Node::is_element) {
            match c.tag_name().name() {
                "nvlink" => nvlinks.push(self.nvlink(c)?),
                "c2c" => {
                    if let Some(first) = c2c {
                        return Err(self.at(c).err(
                            self.file,
                            format!(
                                "at most one <c2c> in a <gpu>, as NCCL writes it (one is at line {} column {})",
                                first.at.line, first.at.col
                            ),
                            "another",
                        ));
                    }
                    c2c = Some(self.c2c(c)?);
                }
                other => self.ignore(c, other),
            }
        }
        Ok(Gpu {
            sm: Some(sm),
            dev: n.attribute("dev").and_then(values::int),
            nvlinks,
            c2c,
            at: self.at(n),
            pci,
        })
    }

    fn c2c(&self, n: Node<'_, 'input>) -> Result<C2c, ConfigError> {
        let bounded = |name: &str, what: &str, max: i64| -> Result<u32, ConfigError> {
            let v = self.int(n, name, what)?;
            if !(1..=max).contains(&v) {
                return Err(self.bad(n, name, what));
            }
            Ok(v as u32)
        };
        Ok(C2c {
            count: bounded("count", values::C2C_COUNT, 64)?,
            bw_mbps: bounded("bw", values::C2C_BW, 1_000_000)?,
            at: self.at(n),
        })
    }

    fn nvlink(&mut self, n: Node<'_, 'input>) -> Result<NvLink, ConfigError> {
        let target = n.attribute("target").unwrap_or_default();
        if values::busid(target).is_none() {
            return Err(self.bad(
                n,
                "target",
                "the bus ID of the GPU or NVSwitch at the other end",
            ));
        }
        let count = self.int(n, "count", "a number of links from 1 to 36")?;
        if !(1..=i64::from(crate::topology::MAX_NVLINKS)).contains(&count) {
            return Err(self.bad(n, "count", "a number of links from 1 to 36"));
        }
        let class = values::class(n.attribute("tclass").unwrap_or_default());
        if !matches!(class, Class::Gpu | Class::NvSwitch | Class::Cpu) {
            return Err(self.bad(
                n,
                "tclass",
                "the target's PCI class: 0x068000 (an NVSwitch), 0x03... (a GPU) or 0x068001 (a CPU)",
            ));
        }
        Ok(NvLink {
            target: target.to_string(),
            class,
            count: count as u32,
            at: self.at(n),
        })
    }

    fn nic(&mut self, n: Node<'_, 'input>, pci: Option<Pci>) -> Result<Option<Nic>, ConfigError> {
        let mut ports = Vec::new();
        for c in n.children().filter(Node::is_element) {
            if c.tag_name().name() != "net" {
                self.ignore(c, c.tag_name().name());
                continue;
            }
            let name = c.attribute("name").unwrap_or_default().trim();
            if name.is_empty() {
                return Err(self.bad(c, "name", "the port's device name, such as mlx5_0"));
            }
            let here = self.at(c);
            if let Some((_, first)) = self.nets.iter().find(|x| x.0 == name) {
                return Err(self.attr_at(c, "name").err(
                    self.file,
                    format!(
                        "<net> name: a name no other port has ({name} is at line {} column {})",
                        first.line, first.col
                    ),
                    format!("name={name:?} again"),
                ));
            }
            self.nets.push((name.to_string(), here));
            let speed = match c.attribute("speed") {
                None => None,
                Some(s) => {
                    let v = values::int(s).ok_or_else(|| {
                        self.bad(c, "speed", "the port's speed in Mb/s (400000 for 400 Gb/s)")
                    })?;
                    (v > 0).then_some(v)
                }
            };
            ports.push(Net {
                name: name.to_string(),
                dev: c.attribute("dev").and_then(values::int),
                speed_mbps: speed,
                port: c.attribute("port").and_then(values::int),
                gdr: c.attribute("gdr").and_then(values::int).map(|g| g != 0),
                at: here,
            });
        }
        if ports.is_empty() {
            let p = self.at(n);
            self.notes.add(
                "<nic> elements with no <net>, skipped",
                format!("line {}", p.line),
            );
            return Ok(None);
        }
        Ok(Some(Nic {
            pci,
            ports,
            at: self.at(n),
        }))
    }
}

/// `<name busid="...">` of an element, for messages.
fn tag(n: Node<'_, '_>) -> String {
    match n.attribute("busid") {
        Some(b) => format!("<{} busid={b:?}>", n.tag_name().name()),
        None => format!("<{}>", n.tag_name().name()),
    }
}

/// Where a truncated document stops: the innermost element still open at the end (its name,
/// line and column), or the tag cut short, found by a scan of the tags.
fn unclosed(text: &str) -> Option<(String, Pos)> {
    let pos = |byte: usize| {
        let before = &text[..byte];
        Pos {
            line: before.matches('\n').count() + 1,
            col: before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1,
        }
    };
    let mut open: Vec<(String, usize)> = Vec::new();
    let mut i = 0;
    while let Some(k) = text[i..].find('<') {
        let start = i + k;
        let rest = &text[start..];
        let end_marker = if rest.starts_with("<!--") { "-->" } else { ">" };
        let Some(e) = rest.find(end_marker) else {
            let what = if end_marker == ">" {
                "a tag"
            } else {
                "a comment"
            };
            return Some((what.to_string(), pos(start)));
        };
        let body = &rest[1..e];
        if let Some(name) = body.strip_prefix('/') {
            let name = name.trim();
            if let Some(at) = open.iter().rposition(|o| o.0 == name) {
                open.truncate(at);
            }
        } else if !body.starts_with('!') && !body.starts_with('?') && !body.ends_with('/') {
            let name: String = body.chars().take_while(|c| !c.is_whitespace()).collect();
            open.push((name, start));
        }
        i = start + e + end_marker.len();
    }
    open.pop().map(|(name, at)| (format!("<{name}>"), pos(at)))
}

/// The end of `text`: the line and column after its last character.
fn end(text: &str) -> Pos {
    let trimmed = text.trim_end();
    Pos {
        line: trimmed.matches('\n').count() + 1,
        col: trimmed.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1,
    }
}

/// Reads a dump; `file` names it in errors.
pub fn read(text: &str, file: &str) -> Result<Dump, ConfigError> {
    let doc = Document::parse(text).map_err(|e| {
        use roxmltree::Error as E;
        match e {
            E::UnclosedRootNode | E::UnexpectedEndOfStream | E::NoRootNode => {
                let at = end(text);
                match unclosed(text) {
                    Some((what, open)) => at.err(
                        file,
                        format!(
                            "the rest of {what} begun at line {} column {} (the file ends inside it: truncated?)",
                            open.line, open.col
                        ),
                        "end of file",
                    ),
                    None => at.err(
                        file,
                        "an NCCL topology dump: a <system version=\"1\"> element",
                        if text.trim().is_empty() {
                            "an empty file"
                        } else {
                            "no element"
                        },
                    ),
                }
            }
            other => {
                let p = other.pos();
                let message = other.to_string();
                let message = message
                    .strip_suffix(&format!(" at {p}"))
                    .unwrap_or(&message)
                    .to_string();
                Pos {
                    line: p.row as usize,
                    col: p.col as usize,
                }
                .err(file, "well-formed XML", message)
            }
        }
    })?;
    let mut r = Reader {
        file,
        doc: &doc,
        notes: Notes::default(),
        busids: Vec::new(),
        nets: Vec::new(),
    };
    let root = doc.root_element();
    if root.tag_name().name() != "system" {
        let hint = if root.tag_name().name() == "topology" {
            " (an hwloc XML from lstopo, not NCCL's)"
        } else {
            ""
        };
        return Err(r.at(root).err(
            file,
            "an NCCL topology dump: a <system version=\"1\"> root element, as NCCL_TOPO_DUMP_FILE writes it",
            format!("<{}>{hint}", root.tag_name().name()),
        ));
    }
    if root.attribute("version").and_then(values::int) != Some(1) {
        return Err(r.bad(
            root,
            "version",
            "1, NCCL's topology format (RCCL's dumps say 2 and are not read)",
        ));
    }
    let mut cpus: Vec<Cpu> = Vec::new();
    let mut host: Option<Option<&str>> = None;
    for c in root.children().filter(Node::is_element) {
        if c.tag_name().name() != "cpu" {
            r.ignore(c, c.tag_name().name());
            continue;
        }
        let hash = c.attribute("host_hash");
        match host {
            None => host = Some(hash),
            Some(h) if h != hash => {
                let p = r.at(c);
                r.notes.add(
                    "<cpu> elements of other hosts (another host_hash: a multi-node NVLink dump), left out: the first host is imported",
                    format!("line {} (host_hash {})", p.line, hash.unwrap_or("none")),
                );
                continue;
            }
            _ => {}
        }
        let cpu = r.cpu(c)?;
        if let Some(first) = cpus.iter().find(|x| x.numaid == cpu.numaid) {
            return Err(r.attr_at(c, "numaid").err(
                file,
                format!(
                    "<cpu> numaid: a NUMA node no other <cpu> has ({} is at line {} column {})",
                    cpu.numaid, first.at.line, first.at.col
                ),
                format!("numaid=\"{}\" again", cpu.numaid),
            ));
        }
        cpus.push(cpu);
    }
    if cpus.is_empty() {
        return Err(r
            .at(root)
            .err(file, "at least one <cpu> element in <system>", "none"));
    }
    Ok(Dump {
        cpus,
        notes: r.notes.lines(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = r#"<system version="1">
  <cpu numaid="0" affinity="0000ffff" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">
    <pci busid="0000:17:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">
      <pci busid="0000:18:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">
        <gpu dev="0" sm="90" rank="0" gdr="1">
          <nvlink target="0000:05:00.0" count="18" tclass="0x068000"/>
        </gpu>
      </pci>
      <pci busid="0000:19:00.0" class="0x020700" link_speed="16.0 GT/s PCIe" link_width="8">
        <nic>
          <net name="mlx5_0" dev="0" speed="400000" port="1" gdr="1"/>
        </nic>
      </pci>
      <pci busid="0000:1a:00.0" class="0x010802" link_speed="16.0 GT/s PCIe" link_width="4"/>
    </pci>
  </cpu>
</system>
"#;

    fn err(text: &str) -> String {
        read(text, "t.xml").unwrap_err().to_string()
    }

    #[test]
    fn a_dump_reads_into_its_tree() {
        let d = read(TWO, "t.xml").unwrap();
        assert_eq!(d.cpus.len(), 1);
        let cpu = &d.cpus[0];
        assert_eq!(cpu.kind, "x86_64 GenuineIntel family 6 model 143");
        let Device::Bridge(b) = &cpu.children[0] else {
            panic!("a bridge")
        };
        assert_eq!(b.pci.lanes.generation, Some(5));
        assert_eq!(b.children.len(), 2, "the NVMe drive is skipped");
        let Device::Gpu(g) = &b.children[0] else {
            panic!("a GPU")
        };
        assert_eq!((g.sm, g.dev), (Some(90), Some(0)));
        assert_eq!(g.nvlinks[0].class, Class::NvSwitch);
        assert_eq!(g.at, Pos { line: 5, col: 9 });
        let Device::Nic(n) = &b.children[1] else {
            panic!("a NIC")
        };
        let lanes = &n.pci.as_ref().unwrap().lanes;
        assert_eq!((lanes.generation, lanes.width), (Some(4), Some(8)));
        assert_eq!(n.ports[0].speed_mbps, Some(400_000));
        assert_eq!(
            d.notes,
            [
                "devices that are neither GPU, NIC nor bridge, skipped: 0000:1a:00.0 (class 0x010802)"
            ]
        );
    }

    #[test]
    fn bad_values_are_refused_at_their_attribute() {
        assert_eq!(
            err(&TWO.replace(
                "16.0 GT/s PCIe\" link_width=\"8",
                "12 GT/s\" link_width=\"8"
            )),
            format!(
                "t.xml:9:50: expected <pci busid=\"0000:19:00.0\"> link_speed: {}, found link_speed=\"12 GT/s\"",
                values::SPEEDS
            )
        );
        assert_eq!(
            err(&TWO.replace("link_width=\"8\"", "link_width=\"3\"")),
            format!(
                "t.xml:9:78: expected <pci busid=\"0000:19:00.0\"> link_width: {}, found link_width=\"3\"",
                values::WIDTHS
            )
        );
        assert_eq!(
            err(&TWO.replace(" sm=\"90\"", "")),
            "t.xml:5:9: expected <gpu> sm: the compute capability as 10 x major + minor (sm=\"90\" for 9.0), found no sm attribute"
        );
        assert!(
            err(&TWO.replace("0000:19:00.0", "0000:18:00.0"))
                .starts_with("t.xml:9:12: expected <pci busid=\"0000:18:00.0\"> busid: a bus ID no other device has (0000:18:00.0 is at line 4 column 7), found busid=\"0000:18:00.0\" again"),
        );
        assert!(
            err(&TWO.replace("tclass=\"0x068000\"", "tclass=\"0x010802\""))
                .starts_with("t.xml:6:52: expected <nvlink> tclass: ")
        );
        assert!(err(&TWO.replace("count=\"18\"", "count=\"0\"")).starts_with("t.xml:6:41: expected <nvlink> count: a number of links from 1 to 36, found count=\"0\""));
        assert!(
            err(&TWO.replace("version=\"1\"", "version=\"2\""))
                .starts_with("t.xml:1:9: expected <system> version: 1")
        );
    }

    #[test]
    fn a_c2c_is_read_and_bad_ones_are_refused_at_their_attribute() {
        let gh = TWO.replace(
            "<nvlink target=\"0000:05:00.0\" count=\"18\" tclass=\"0x068000\"/>",
            "<c2c bw=\"45000\" count=\"10\"/>",
        );
        let d = read(&gh, "t.xml").unwrap();
        let Device::Bridge(b) = &d.cpus[0].children[0] else {
            panic!("a bridge")
        };
        let Device::Gpu(g) = &b.children[0] else {
            panic!("a GPU")
        };
        assert_eq!(
            g.c2c,
            Some(C2c {
                count: 10,
                bw_mbps: 45000,
                at: Pos { line: 6, col: 11 }
            })
        );
        assert!(g.nvlinks.is_empty());
        assert!(!d.notes.iter().any(|n| n.contains("c2c")), "{:?}", d.notes);
        assert_eq!(
            err(&gh.replace("count=\"10\"", "count=\"65\"")),
            format!(
                "t.xml:6:27: expected <c2c> count: {}, found count=\"65\"",
                values::C2C_COUNT
            )
        );
        assert_eq!(
            err(&gh.replace("bw=\"45000\"", "bw=\"0\"")),
            format!(
                "t.xml:6:16: expected <c2c> bw: {}, found bw=\"0\"",
                values::C2C_BW
            )
        );
        assert!(
            err(&gh.replace(" count=\"10\"", "")).starts_with("t.xml:6:11: expected <c2c> count: ")
        );
        assert!(
            err(&gh.replace("/>\n        </gpu>", "/><c2c bw=\"1\" count=\"1\"/>\n        </gpu>"))
                .starts_with("t.xml:6:39: expected at most one <c2c> in a <gpu>, as NCCL writes it (one is at line 6 column 11), found another")
        );
    }

    #[test]
    fn truncated_and_foreign_files_say_where_they_stop() {
        let cut = &TWO[..TWO.find("<nic>").unwrap()];
        assert_eq!(
            err(cut),
            "t.xml:9:93: expected the rest of <pci> begun at line 9 column 7 (the file ends inside it: truncated?), found end of file"
        );
        let mid_tag = &TWO[..TWO.find("count=").unwrap()];
        assert!(
            err(mid_tag)
                .starts_with("t.xml:6:40: expected the rest of a tag begun at line 6 column 11"),
            "{}",
            err(mid_tag)
        );
        assert!(err("").contains("found an empty file"));
        assert_eq!(
            err("<topology version=\"2.0\"/>"),
            "t.xml:1:1: expected an NCCL topology dump: a <system version=\"1\"> root element, as NCCL_TOPO_DUMP_FILE writes it, found <topology> (an hwloc XML from lstopo, not NCCL's)"
        );
        assert!(
            err("<system version=\"1\"><cpu numaid=\"0\"></pci></system>").starts_with("t.xml:1:")
        );
    }
}

//! The imported config as TOML text, whatever it was imported from: one [`Machine`] (its
//! items named and linked by the importer), two hosts of it, and a scenario per GPU with its
//! nearest NIC; and the [`Params`] its items take (the built-in defaults, `--like CONFIG` or
//! `--preset NAME`).

use std::fmt::Write as _;

/// The parameters the imported machine's items take: the built-in defaults, or those of the
/// first machine of another config (`--like`).
#[derive(Clone, Debug, Default)]
pub struct Params {
    /// The config they come from (None: the built-in defaults).
    pub source: Option<String>,
    /// Whole machine tables copied as they are: `cpu`, `registration`, `pcie`.
    pub machine_tables: Vec<(String, toml::Table)>,
    /// The machine's `host_buffer_base`, where set.
    pub host_buffer_base: Option<toml::Value>,
    /// Keys of every socket (but `name`).
    pub socket: toml::Table,
    /// Keys of every socket link (but `a`, `b`).
    pub socket_link: toml::Table,
    /// Keys of every root complex (but `name`, `socket`).
    pub root_complex: toml::Table,
    /// Keys of every switch (but `name`).
    pub switch: toml::Table,
    /// Keys of every GPU (but `name`).
    pub gpu: toml::Table,
    /// Keys of every NIC (but `name`).
    pub nic: toml::Table,
    /// Keys of every NVLink-C2C link (but `socket`, `gpu` and `rate_gbps`, which the source
    /// gives): None where the parameters' machine has no C2C link (the built-in estimates).
    pub c2c_link: Option<toml::Table>,
    /// (generation, width) of the links down to a switch, a GPU and a NIC.
    pub links: [(u32, u32); 3],
    /// Every socket's CPU family (`--cpu FAMILY`), over what the source or `like` says.
    pub cpu_family: Option<crate::topology::CpuFamily>,
    /// The GPU and NIC models (`--gpu`, `--nic`) every GPU and NIC takes, over `like`'s.
    pub models: super::Models,
}

/// Generation and width of every link by default: PCIe Gen5 x16, as configs/default.toml.
pub const DEFAULT_LINK: (u32, u32) = (5, 16);

/// What the built-in defaults are, in a few words.
const DEFAULTS: &str = "the built-in defaults (crates/scenario/src/config/defaults.rs: H100 PCIe GPUs, ConnectX-7 NDR NICs, a 105 ns switch latency)";

impl Params {
    /// The built-in defaults: every parameter unset (crates/scenario/src/config/defaults.rs), links Gen5 x16.
    pub fn defaults() -> Params {
        Params {
            links: [DEFAULT_LINK; 3],
            ..Params::default()
        }
    }

    /// The first machine's parameters of a config's text (already validated by the caller).
    pub fn like(text: &str, source: &str) -> Result<Params, String> {
        let doc: toml::Table = text.parse().map_err(|e| format!("{e}"))?;
        let machine = doc
            .get("machines")
            .and_then(|m| m.as_array())
            .and_then(|m| m.first())
            .and_then(|m| m.as_table())
            .ok_or("a [[machines]] entry")?;
        let first_of = |key: &str, skip: &[&str]| -> Option<toml::Table> {
            machine
                .get(key)
                .and_then(|v| v.as_array())
                .and_then(|v| v.first())
                .and_then(|v| v.as_table())
                .map(|t| {
                    t.iter()
                        .filter(|(k, _)| !skip.contains(&k.as_str()))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect()
                })
        };
        let first = |key: &str, skip: &[&str]| first_of(key, skip).unwrap_or_default();
        let names = |key: &str| -> Vec<String> {
            machine
                .get(key)
                .and_then(|v| v.as_array())
                .map(|v| {
                    v.iter()
                        .filter_map(|t| t.get("name").and_then(|n| n.as_str()).map(String::from))
                        .collect()
                })
                .unwrap_or_default()
        };
        let links: Vec<&toml::Table> = machine
            .get("links")
            .and_then(|v| v.as_array())
            .map(|v| v.iter().filter_map(|t| t.as_table()).collect())
            .unwrap_or_default();
        let gen_width = |t: &toml::Table| -> Option<(u32, u32)> {
            let g = t.get("generation")?.as_integer()?;
            let w = t.get("width")?.as_integer()?;
            Some((u32::try_from(g).ok()?, u32::try_from(w).ok()?))
        };
        let any = links
            .first()
            .and_then(|t| gen_width(t))
            .unwrap_or(DEFAULT_LINK);
        let down_to = |kind: &str| -> (u32, u32) {
            let to = names(kind);
            links
                .iter()
                .find(|l| {
                    l.get("down")
                        .and_then(|d| d.as_str())
                        .is_some_and(|d| to.iter().any(|n| n == d))
                })
                .and_then(|t| gen_width(t))
                .unwrap_or(any)
        };
        let machine_tables = ["cpu", "registration", "pcie"]
            .into_iter()
            .filter_map(|k| Some((k.to_string(), machine.get(k)?.as_table()?.clone())))
            .collect();
        Ok(Params {
            source: Some(source.to_string()),
            machine_tables,
            host_buffer_base: machine.get("host_buffer_base").cloned(),
            socket: first("sockets", &["name"]),
            socket_link: first("socket_links", &["a", "b"]),
            root_complex: first("root_complexes", &["name", "socket"]),
            switch: first("switches", &["name"]),
            gpu: first("gpus", &["name"]),
            nic: first("nics", &["name"]),
            c2c_link: first_of("c2c_links", &["socket", "gpu", "rate_gbps"]),
            links: [down_to("switches"), down_to("gpus"), down_to("nics")],
            cpu_family: None,
            models: super::Models::default(),
        })
    }

    /// The parameters with every GPU and NIC of `models`' model (`preset = "ID"` in its
    /// entry, no other key of the parameters') and its PCIe link's generation and width.
    pub fn with_models(mut self, models: super::Models) -> Params {
        let preset = |id: &str| {
            let mut t = toml::Table::new();
            t.insert("preset".into(), toml::Value::String(id.into()));
            t
        };
        if let Some(g) = models.gpu {
            self.gpu = preset(g.id);
            self.links[1] = g.pcie.value;
        }
        if let Some(n) = models.nic {
            self.nic = preset(n.id);
            self.links[2] = n.pcie.value;
        }
        self.models = models;
        self
    }

    /// One line saying where the parameters come from.
    pub fn describe(&self) -> String {
        let models = self.describe_models();
        if models.is_empty() {
            return self.describe_source();
        }
        match &self.source {
            Some(_) => format!("{}; {models} in their place", self.describe_source()),
            None => format!(
                "{models}; every other key the built-in defaults (crates/scenario/src/config/defaults.rs); links {}",
                self.link_list()
            ),
        }
    }

    /// "GPUs h200-sxm (H200 SXM 141GB, PCIe Gen5 x16), NICs connectx-7 (...)", or nothing.
    fn describe_models(&self) -> String {
        let mut parts = Vec::new();
        if let Some(g) = self.models.gpu {
            let (pg, w) = g.pcie.value;
            parts.push(format!("GPUs {} ({}, PCIe Gen{pg} x{w})", g.id, g.name));
        }
        if let Some(n) = self.models.nic {
            let (pg, w) = n.pcie.value;
            parts.push(format!("NICs {} ({}, PCIe Gen{pg} x{w})", n.id, n.name));
        }
        parts.join(", ")
    }

    /// Where the parameters come from, models aside.
    fn describe_source(&self) -> String {
        match &self.source {
            Some(s) => format!(
                "the first machine of {s} (its CPU, registration and PCIe tables, its first socket, socket link, root complex, switch, GPU and NIC for every one; links {})",
                self.link_list()
            ),
            None => format!(
                "{}, every PCIe link Gen{} x{} as configs/default.toml",
                DEFAULTS, DEFAULT_LINK.0, DEFAULT_LINK.1
            ),
        }
    }

    /// [`Params::describe`] for an import whose source gives the links (`source`: what gives
    /// them); the parameters' links stand in where it gives none.
    pub fn describe_links_from(&self, source: &str) -> String {
        match &self.source {
            Some(s) => format!(
                "the first machine of {s} (its CPU, registration and PCIe tables, its first socket, socket link, root complex, switch, GPU and NIC for every one); PCIe links as {source} gives them ({} where it gives none)",
                self.link_list()
            ),
            None => format!(
                "{}; PCIe links as {source} gives them (Gen{} x{} where it gives none)",
                DEFAULTS, DEFAULT_LINK.0, DEFAULT_LINK.1
            ),
        }
    }

    /// "Gen5 x16 to switches, Gen5 x16 to GPUs, Gen5 x16 to NICs".
    fn link_list(&self) -> String {
        let [s, g, n] = self.links;
        format!(
            "Gen{} x{} to switches, Gen{} x{} to GPUs, Gen{} x{} to NICs",
            s.0, s.1, g.0, g.1, n.0, n.1
        )
    }
}

/// `key = value` lines of a table.
fn keys(out: &mut String, t: &toml::Table) {
    for (k, v) in t {
        let _ = writeln!(out, "{k} = {v}");
    }
}

/// Ends a line with `  # comment` (nothing where `comment` is empty).
fn end_line(out: &mut String, comment: &str) {
    if !comment.is_empty() {
        let _ = write!(out, "  # {comment}");
    }
    out.push('\n');
}

/// A TOML basic string.
pub fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// An item of the machine: its name and a comment for its name line (empty: none).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Item {
    /// Its name in the config.
    pub name: String,
    /// What the config says about it after its name (`# ...`); empty for nothing.
    pub comment: String,
}

impl Item {
    /// An item named `name` with `comment`.
    pub fn new(name: impl Into<String>, comment: impl Into<String>) -> Item {
        Item {
            name: name.into(),
            comment: comment.into(),
        }
    }
}

/// A socket, GPU or NIC of the machine: the item, and keys of its own on top of the
/// parameters' (a socket's `cpu_affinity`, a GPU's `compute_capability`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Device {
    /// Its name and comment.
    pub item: Item,
    /// Keys that replace or add to the parameters' for this item (`compute_capability`).
    pub keys: toml::Table,
}

/// A PCIe link from `up` (a root complex or switch) down to `down`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// The upstream end.
    pub up: String,
    /// The downstream end (a switch, GPU or NIC).
    pub down: String,
    /// (PCIe generation, width).
    pub lanes: (u32, u32),
    /// A comment after its width (empty: none).
    pub comment: String,
}

/// An NVLink-C2C link from a socket to its GPU, in place of the GPU's PCIe link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct C2cLink {
    /// The socket.
    pub socket: String,
    /// The GPU.
    pub gpu: String,
    /// Its rate each way as the config spells it (`"450GB/s"`).
    pub rate: String,
    /// A comment after its rate (empty: none).
    pub comment: String,
}

/// A machine as an importer builds it, every item named; [`write()`] spells it out.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Machine {
    /// The sockets, in order (every pair gets a socket link).
    pub sockets: Vec<Device>,
    /// The root complexes and the names of their sockets.
    pub root_complexes: Vec<(Item, String)>,
    /// The PCIe switches.
    pub switches: Vec<Item>,
    /// The GPUs, in index order.
    pub gpus: Vec<Device>,
    /// The NICs, in index order.
    pub nics: Vec<Device>,
    /// The PCIe links.
    pub links: Vec<Link>,
    /// The NVLink-C2C links (their GPUs have no PCIe link).
    pub c2c_links: Vec<C2cLink>,
    /// The NVLink fabric's tables, as [`super::nvlink::tables`] writes them.
    pub nvlinks: String,
}

/// A scenario of the config: its name and the GPU and NIC (names) on both hosts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scenario {
    /// Its name (`GPU0-NIC2`).
    pub name: String,
    /// The GPU's name in the machine.
    pub gpu: String,
    /// The NIC's name in the machine.
    pub nic: String,
}

/// What the config is: its name, description and header, and the machine's parameters.
#[derive(Clone, Copy, Debug)]
pub struct Doc<'a> {
    /// The config's (and its machine's) name.
    pub name: &'a str,
    /// Its `description`.
    pub description: &'a str,
    /// Lines for the top, as comments.
    pub header: &'a [String],
    /// The parameters every item takes.
    pub params: &'a Params,
}

/// The config's text: `doc`'s header and name, `machine` with the parameters, two hosts of it
/// (`node-a`, `node-b`) and `scenarios` between them.
pub fn write(doc: Doc<'_>, machine: &Machine, scenarios: &[Scenario]) -> String {
    let params = doc.params;
    let mut out = String::new();
    for h in doc.header {
        let _ = writeln!(out, "# {h}");
    }
    let _ = writeln!(out, "\nname = {}", quoted(doc.name));
    let _ = writeln!(out, "description = {}", quoted(doc.description));
    out.push_str("seed = 1\n\n[sim]\niterations = 20\nmin_iterations = 3\nstream_budget_bytes = \"1GiB\"\n\n");
    out.push_str("[sweep]\nsizes = { from = \"8B\", to = \"64MiB\", factor = 8 }\npaths = [\"staged\", \"gpudirect\"]\nops = [\"write_imm\"]\n\n");
    let _ = writeln!(out, "[[machines]]\nname = {}", quoted(doc.name));
    if let Some(v) = &params.host_buffer_base {
        let _ = writeln!(out, "host_buffer_base = {v}");
    }
    for (k, t) in &params.machine_tables {
        let _ = writeln!(out, "\n[machines.{k}]");
        keys(&mut out, t);
    }
    let named = |out: &mut String, table: &str, item: &Item| {
        let _ = write!(out, "\n[[machines.{table}]]\nname = {}", quoted(&item.name));
        end_line(out, &item.comment);
    };
    // A socket, GPU or NIC: its name, then the parameters' keys with its own on top.
    let keyed = |out: &mut String, table: &str, d: &Device, base: &toml::Table| {
        named(out, table, &d.item);
        let mut t = base.clone();
        t.extend(d.keys.clone());
        keys(out, &t);
    };
    for s in &machine.sockets {
        let mut s = s.clone();
        if let Some(f) = params.cpu_family {
            s.keys
                .insert("cpu_family".into(), toml::Value::String(f.name().into()));
        }
        keyed(&mut out, "sockets", &s, &params.socket);
    }
    for (i, a) in machine.sockets.iter().enumerate() {
        for b in &machine.sockets[i + 1..] {
            let _ = writeln!(
                out,
                "\n[[machines.socket_links]]\na = {}\nb = {}",
                quoted(&a.item.name),
                quoted(&b.item.name)
            );
            keys(&mut out, &params.socket_link);
        }
    }
    for (rc, socket) in &machine.root_complexes {
        named(&mut out, "root_complexes", rc);
        let _ = writeln!(out, "socket = {}", quoted(socket));
        keys(&mut out, &params.root_complex);
    }
    for s in &machine.switches {
        named(&mut out, "switches", s);
        keys(&mut out, &params.switch);
    }
    for (table, devices, base) in [
        ("gpus", &machine.gpus, &params.gpu),
        ("nics", &machine.nics, &params.nic),
    ] {
        for d in devices {
            keyed(&mut out, table, d, base);
        }
    }
    for l in &machine.links {
        let _ = write!(
            out,
            "\n[[machines.links]]\nup = {}\ndown = {}\ngeneration = {}\nwidth = {}",
            quoted(&l.up),
            quoted(&l.down),
            l.lanes.0,
            l.lanes.1
        );
        end_line(&mut out, &l.comment);
    }
    for c in &machine.c2c_links {
        let _ = write!(
            out,
            "\n[[machines.c2c_links]]\nsocket = {}\ngpu = {}\nrate_gbps = {}",
            quoted(&c.socket),
            quoted(&c.gpu),
            quoted(&c.rate)
        );
        end_line(&mut out, &c.comment);
        keys(
            &mut out,
            params.c2c_link.as_ref().unwrap_or(&toml::Table::new()),
        );
    }
    out.push_str(&machine.nvlinks);
    for h in ["node-a", "node-b"] {
        let _ = writeln!(
            out,
            "\n[[hosts]]\nname = \"{h}\"\nmachine = {}",
            quoted(doc.name)
        );
    }
    for s in scenarios {
        let (nic, gpu) = (quoted(&s.nic), quoted(&s.gpu));
        let _ = writeln!(
            out,
            "\n[[scenarios]]\nname = {}\nsender = {{ host = \"node-a\", nic = {nic}, gpu = {gpu} }}\nreceiver = {{ host = \"node-b\", nic = {nic}, gpu = {gpu} }}",
            quoted(&s.name)
        );
    }
    out
}

//! The imported config as TOML text: one machine built from a [`Tree`], two hosts of it, and a
//! scenario per GPU with its nearest NIC.

use std::fmt::Write as _;

use super::matrix::{DeviceKind, Matrix};
use super::tree::{Attach, Switch, Tree};

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
    /// (generation, width) of the links down to a switch, a GPU and a NIC.
    pub links: [(u32, u32); 3],
}

/// Generation and width of every link by default: PCIe Gen5 x16, as configs/default.toml.
pub const DEFAULT_LINK: (u32, u32) = (5, 16);

impl Params {
    /// The built-in defaults: every parameter unset (src/config/defaults.rs), links Gen5 x16.
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
        let first = |key: &str, skip: &[&str]| -> toml::Table {
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
                .unwrap_or_default()
        };
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
            links: [down_to("switches"), down_to("gpus"), down_to("nics")],
        })
    }

    /// One line saying where the parameters come from.
    pub fn describe(&self) -> String {
        match &self.source {
            Some(s) => format!(
                "the first machine of {s} (its CPU, registration and PCIe tables, its first socket, socket link, root complex, switch, GPU and NIC for every one; links Gen{} x{} to switches, Gen{} x{} to GPUs, Gen{} x{} to NICs)",
                self.links[0].0,
                self.links[0].1,
                self.links[1].0,
                self.links[1].1,
                self.links[2].0,
                self.links[2].1
            ),
            None => format!(
                "the built-in defaults (src/config/defaults.rs: H100 PCIe GPUs, ConnectX-7 NDR NICs, a 105 ns switch latency), every PCIe link Gen{} x{} as configs/default.toml",
                DEFAULT_LINK.0, DEFAULT_LINK.1
            ),
        }
    }
}

/// `key = value` lines of a table.
fn keys(out: &mut String, t: &toml::Table) {
    for (k, v) in t {
        let _ = writeln!(out, "{k} = {v}");
    }
}

/// A TOML basic string.
fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// What the machine is made of, named: the text of its sockets, root complexes, switches and
/// links.
struct Names<'a> {
    m: &'a Matrix,
    params: &'a Params,
    rcs: String,
    switches: String,
    links: String,
    rc_count: usize,
    switch_count: usize,
}

impl Names<'_> {
    fn link(&mut self, up: &str, down: &str, (generation, width): (u32, u32)) {
        let _ = write!(
            self.links,
            "\n[[machines.links]]\nup = {}\ndown = {}\ngeneration = {generation}\nwidth = {width}\n",
            quoted(up),
            quoted(down)
        );
    }

    fn device_link(&mut self, up: &str, d: usize) {
        let dev = &self.m.devices[d];
        let lw = match dev.kind {
            DeviceKind::Gpu => self.params.links[1],
            DeviceKind::Nic => self.params.links[2],
        };
        let name = dev.name.clone();
        self.link(up, &name, lw);
    }

    fn switch(&mut self, up: &str, sw: &Switch) {
        let name = format!("sw{}", self.switch_count);
        self.switch_count += 1;
        let under: Vec<&str> = sw
            .devices
            .iter()
            .map(|&d| self.m.devices[d].label.as_str())
            .collect();
        let what = if sw.switches.is_empty() && under.len() == 1 {
            format!(
                "{} alone under an upper switch (PXB to its other devices)",
                under[0]
            )
        } else if sw.switches.is_empty() {
            format!("the switch of {} (PIX between them)", under.join(", "))
        } else {
            format!(
                "an upper switch over {} switches (PXB between them)",
                sw.switches.len()
            )
        };
        let _ = write!(
            self.switches,
            "\n[[machines.switches]]\nname = {}  # {what}\n",
            quoted(&name)
        );
        keys(&mut self.switches, &self.params.switch);
        self.link(up, &name, self.params.links[0]);
        for &d in &sw.devices {
            self.device_link(&name, d);
        }
        for c in &sw.switches {
            self.switch(&name, c);
        }
    }
}

/// The config's text. `scenarios` are (GPU device index, NIC device index) pairs, one per
/// GPU; `header` lines go at the top as comments.
pub fn config(
    m: &Matrix,
    tree: &Tree,
    params: &Params,
    name: &str,
    scenarios: &[(usize, usize)],
    header: &[String],
) -> String {
    let mut out = String::new();
    for h in header {
        let _ = writeln!(out, "# {h}");
    }
    let _ = writeln!(out, "\nname = {}", quoted(name));
    let _ = writeln!(
        out,
        "description = {}",
        quoted(&format!(
            "Imported from nvidia-smi topo -m: {} GPUs, {} NICs; each GPU with its nearest NIC, staged vs GPUDirect",
            m.of(DeviceKind::Gpu).count(),
            m.of(DeviceKind::Nic).count()
        ))
    );
    out.push_str("seed = 1\n\n[sim]\niterations = 20\nmin_iterations = 3\nstream_budget_bytes = \"1GiB\"\n\n");
    out.push_str("[sweep]\nsizes = { from = \"8B\", to = \"64MiB\", factor = 8 }\npaths = [\"staged\", \"gpudirect\"]\nops = [\"write_imm\"]\n\n");
    let _ = writeln!(out, "[[machines]]\nname = {}", quoted(name));
    if let Some(v) = &params.host_buffer_base {
        let _ = writeln!(out, "host_buffer_base = {v}");
    }
    for (k, t) in &params.machine_tables {
        let _ = writeln!(out, "\n[machines.{k}]");
        keys(&mut out, t);
    }
    let socket_names: Vec<String> = (0..tree.sockets.len()).map(|k| format!("cpu{k}")).collect();
    for (s, sname) in tree.sockets.iter().zip(&socket_names) {
        let numa = s.numa.map_or("NUMA node unknown".to_string(), |n| {
            format!("NUMA node {n}")
        });
        let cpus = s
            .cpu_affinity
            .as_ref()
            .map_or(String::new(), |c| format!(", CPU affinity {c}"));
        let _ = writeln!(
            out,
            "\n[[machines.sockets]]\nname = {}  # {numa}{cpus}",
            quoted(sname)
        );
        keys(&mut out, &params.socket);
    }
    for (i, a) in socket_names.iter().enumerate() {
        for b in &socket_names[i + 1..] {
            let _ = writeln!(
                out,
                "\n[[machines.socket_links]]\na = {}\nb = {}",
                quoted(a),
                quoted(b)
            );
            keys(&mut out, &params.socket_link);
        }
    }
    let mut names = Names {
        m,
        params,
        rcs: String::new(),
        switches: String::new(),
        links: String::new(),
        rc_count: 0,
        switch_count: 0,
    };
    for (s, sname) in tree.sockets.iter().zip(&socket_names) {
        for rc in &s.root_complexes {
            let rname = format!("rc{}", names.rc_count);
            names.rc_count += 1;
            let _ = write!(
                names.rcs,
                "\n[[machines.root_complexes]]\nname = {}\nsocket = {}\n",
                quoted(&rname),
                quoted(sname)
            );
            keys(&mut names.rcs, &params.root_complex);
            for a in rc {
                match a {
                    Attach::Device(d) => names.device_link(&rname, *d),
                    Attach::Switch(sw) => names.switch(&rname, sw),
                }
            }
        }
    }
    let (rcs, switches, links) = (names.rcs, names.switches, names.links);
    out.push_str(&rcs);
    out.push_str(&switches);
    for (_, d) in m.of(DeviceKind::Gpu) {
        let _ = writeln!(
            out,
            "\n[[machines.gpus]]\nname = {}  # {}",
            quoted(&d.name),
            d.label
        );
        keys(&mut out, &params.gpu);
    }
    for (_, d) in m.of(DeviceKind::Nic) {
        let _ = writeln!(
            out,
            "\n[[machines.nics]]\nname = {}  # {}",
            quoted(&d.name),
            d.label
        );
        keys(&mut out, &params.nic);
    }
    out.push_str(&links);
    out.push_str(&super::nvlink::tables(m, &super::nvlink::fabric(m)));
    for h in ["node-a", "node-b"] {
        let _ = writeln!(
            out,
            "\n[[hosts]]\nname = \"{h}\"\nmachine = {}",
            quoted(name)
        );
    }
    let nic_index = |d: usize| m.of(DeviceKind::Nic).position(|(i, _)| i == d).unwrap_or(0);
    for &(g, n) in scenarios {
        let (gpu, nic) = (&m.devices[g], &m.devices[n]);
        let _ = writeln!(
            out,
            "\n[[scenarios]]\nname = \"{}-NIC{}\"\nsender = {{ host = \"node-a\", nic = {}, gpu = {} }}\nreceiver = {{ host = \"node-b\", nic = {}, gpu = {} }}",
            gpu.label,
            nic_index(n),
            quoted(&nic.name),
            quoted(&gpu.name),
            quoted(&nic.name),
            quoted(&gpu.name)
        );
    }
    out
}

//! The machine a matrix's [`Tree`] describes, every item named and linked for
//! [`emit::write`]: a socket per tree socket, a root complex per group, a switch per switch of
//! the tree (commented with what it holds), the links at the parameters' generations and widths,
//! and the NVLink fabric of the `NV#` cells.

use super::emit::{self, Device, Item, Link, Machine, Params, Scenario};
use super::matrix::{DeviceKind, Matrix};
use super::nvlink;
use super::tree::{Attach, Switch, Tree};

/// Builds the machine: names, comments and links.
struct Builder<'a> {
    m: &'a Matrix,
    params: &'a Params,
    out: Machine,
}

impl Builder<'_> {
    fn link(&mut self, up: &str, down: &str, lanes: (u32, u32)) {
        self.out.links.push(Link {
            up: up.to_string(),
            down: down.to_string(),
            lanes,
            comment: String::new(),
        });
    }

    fn device_link(&mut self, up: &str, d: usize) {
        let dev = &self.m.devices[d];
        let lanes = match dev.kind {
            DeviceKind::Gpu => self.params.links[1],
            DeviceKind::Nic => self.params.links[2],
        };
        self.link(up, &dev.name, lanes);
    }

    fn switch(&mut self, up: &str, sw: &Switch) {
        let name = format!("sw{}", self.out.switches.len());
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
        self.out.switches.push(Item::new(&name, what));
        self.link(up, &name, self.params.links[0]);
        for &d in &sw.devices {
            self.device_link(&name, d);
        }
        for c in &sw.switches {
            self.switch(&name, c);
        }
    }
}

/// The machine of `tree` (built from `m`) with `params`' links.
pub fn machine(m: &Matrix, tree: &Tree, params: &Params) -> Machine {
    let mut b = Builder {
        m,
        params,
        out: Machine::default(),
    };
    for (k, s) in tree.sockets.iter().enumerate() {
        let numa = s.numa.map_or("NUMA node unknown".to_string(), |n| {
            format!("NUMA node {n}")
        });
        let cpus = s
            .cpu_affinity
            .as_ref()
            .map_or(String::new(), |c| format!(", CPU affinity {c}"));
        let socket = format!("cpu{k}");
        // The matrix's affinity cells, kept so that `gdrsim topo` prints them back.
        let mut keys = toml::Table::new();
        // A CPU list (not N/A, nor the socket name gdrsim's own `topo` prints there).
        let listed = |c: &&String| crate::topology::spec::is_cpu_list(c);
        if let Some(c) = s.cpu_affinity.as_ref().filter(listed) {
            keys.insert("cpu_affinity".into(), toml::Value::String(c.clone()));
        }
        if let Some(n) = s.numa {
            keys.insert("numa_node".into(), toml::Value::Integer(i64::from(n)));
        }
        b.out.sockets.push(Device {
            item: Item::new(&socket, format!("{numa}{cpus}")),
            keys,
        });
        for rc in &s.root_complexes {
            let rname = format!("rc{}", b.out.root_complexes.len());
            b.out
                .root_complexes
                .push((Item::new(&rname, ""), socket.clone()));
            for a in rc {
                match a {
                    Attach::Device(d) => b.device_link(&rname, *d),
                    Attach::Switch(sw) => b.switch(&rname, sw),
                }
            }
        }
    }
    let device = |d: &super::matrix::Device| Device {
        item: Item::new(&d.name, &d.label),
        keys: toml::Table::new(),
    };
    b.out.gpus = m.of(DeviceKind::Gpu).map(|(_, d)| device(d)).collect();
    b.out.nics = m.of(DeviceKind::Nic).map(|(_, d)| device(d)).collect();
    b.out.nvlinks = nvlink::fabric(m).tables(|d| m.devices[d].name.as_str());
    b.out
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
    let description = format!(
        "Imported from nvidia-smi topo -m: {} GPUs, {} NICs; each GPU with its nearest NIC, staged vs GPUDirect",
        m.of(DeviceKind::Gpu).count(),
        m.of(DeviceKind::Nic).count()
    );
    let nic_index = |d: usize| m.of(DeviceKind::Nic).position(|(i, _)| i == d).unwrap_or(0);
    let scenarios: Vec<Scenario> = scenarios
        .iter()
        .map(|&(g, n)| Scenario {
            name: format!("{}-NIC{}", m.devices[g].label, nic_index(n)),
            gpu: m.devices[g].name.clone(),
            nic: m.devices[n].name.clone(),
        })
        .collect();
    let doc = emit::Doc {
        name,
        description: &description,
        header,
        params,
    };
    emit::write(doc, &machine(m, tree, params), &scenarios)
}

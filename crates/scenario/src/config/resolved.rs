//! The fully resolved config (every default filled in) as TOML, written next to each run's
//! results so that any run can be reproduced from its own output folder. Each parameter
//! section writes itself from its declaration (`raw.rs`, [`super::section`]); only names,
//! references and composite values are written here.

use toml::{Table, Value};

use super::raw::{
    RawC2cLink, RawCpu, RawGpu, RawNetwork, RawNic, RawNvLink, RawNvSwitch, RawOutput, RawPcie,
    RawRegistration, RawRootComplex, RawSim, RawSocket, RawSocketLink, RawSwitch,
};
use super::section::{int_value as int, rate_value as rate};
use super::{Config, Endpoint};
use crate::topology::spec::{Fabric, MachineSpec, NetworkSpec, P2p};

fn s(v: &str) -> Value {
    Value::String(v.to_string())
}

fn table(pairs: Vec<(&str, Value)>) -> Value {
    Value::Table(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// A table holding `names` and then the section's declared keys.
fn section_table<S>(names: Vec<(&str, Value)>, spec: &S, resolved: fn(&S, &mut Table)) -> Value {
    let mut t: Table = names.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    resolved(spec, &mut t);
    Value::Table(t)
}

/// `[network]`: the single-switch fabric writes exactly its four keys (as before fabrics
/// existed, so its resolved configs are unchanged and read back the same); a tiered fabric
/// writes its own keys instead of `switch_hops`, which it refuses, and not the other
/// generators' (so a leaf-spine config resolves as before rail-optimized and fat-tree fabrics
/// existed).
fn network(n: &NetworkSpec) -> Value {
    const LEAF_SPINE: [&str; 2] = ["hosts_per_leaf", "spines"];
    const RAIL: [&str; 3] = ["hosts_per_unit", "units", "spines_per_unit"];
    const FAT: [&str; 3] = ["pods", "spines_per_pod", "cores"];
    const SHARED: [&str; 3] = ["leaf_radix", "routing", "qps_per_connection"];
    let mut t = Table::new();
    RawNetwork::resolved(n, &mut t);
    let drop: Vec<&str> = match n.fabric {
        Fabric::SingleSwitch => [&["fabric"][..], &LEAF_SPINE, &RAIL, &FAT, &SHARED].concat(),
        Fabric::LeafSpine => [&["switch_hops"][..], &RAIL, &FAT].concat(),
        Fabric::RailOptimized => [&["switch_hops"][..], &LEAF_SPINE, &FAT].concat(),
        Fabric::FatTree => [&["switch_hops", "spines"][..], &RAIL].concat(),
    };
    for k in drop {
        t.remove(k);
    }
    // One QP per connection (NCCL's default) is written only when set otherwise, so configs
    // from before the key resolve as they did.
    if n.qps() == 1 {
        t.remove("qps_per_connection");
    }
    if n.fabric.tiered() {
        let (num, den) = n.leaf_spine.oversubscription;
        t.insert("oversubscription".into(), s(&format!("{num}:{den}")));
        if let Some(r) = n.leaf_spine.spine_port {
            t.insert("spine_port_gbps".into(), rate(r));
        }
        // Written only where set, so configs from before the key resolve as they did.
        if let Some(r) = n.leaf_spine.spine_radix {
            t.insert("spine_radix".into(), int(u64::from(r)));
        }
    }
    if n.fabric == Fabric::FatTree {
        let (num, den) = n.fat_tree.core_oversubscription;
        t.insert("core_oversubscription".into(), s(&format!("{num}:{den}")));
        if let Some(r) = n.fat_tree.core_radix {
            t.insert("core_radix".into(), int(u64::from(r)));
        }
    }
    Value::Table(t)
}

fn p2p(t: &mut Table, key: &str, p: P2p) {
    t.insert(key.into(), Value::Boolean(p != P2p::Refused));
    if let P2p::Allowed(Some(cap)) = p {
        t.insert(format!("{key}_rate_gbps"), rate(cap));
    }
}

fn machine(m: &MachineSpec) -> Value {
    let mut t = Table::new();
    t.insert("name".into(), s(&m.name));
    t.insert("host_buffer_base".into(), int(m.host_buffer_base));
    t.insert(
        "cpu".into(),
        section_table(vec![], &m.cpu, RawCpu::resolved),
    );
    t.insert(
        "registration".into(),
        section_table(vec![], &m.registration, RawRegistration::resolved),
    );
    t.insert(
        "pcie".into(),
        section_table(vec![], &m.pcie, RawPcie::resolved),
    );
    let sockets = m
        .sockets
        .iter()
        .map(|x| {
            let mut keys = vec![("name", s(&x.name))];
            if let Some(c) = &x.cpu_affinity {
                keys.push(("cpu_affinity", s(c)));
            }
            if let Some(n) = x.numa_node {
                keys.push(("numa_node", int(u64::from(n))));
            }
            let mut t = section_table(keys, x, RawSocket::resolved);
            // A socket without a family is written as before families existed.
            if x.cpu_family == crate::topology::CpuFamily::None
                && let Value::Table(t) = &mut t
            {
                t.remove("cpu_family");
            }
            t
        })
        .collect();
    t.insert("sockets".into(), Value::Array(sockets));
    let links = m
        .socket_links
        .iter()
        .map(|l| {
            let mut x = Table::new();
            x.insert("a".into(), s(&l.a));
            x.insert("b".into(), s(&l.b));
            RawSocketLink::resolved(l, &mut x);
            p2p(&mut x, "p2p_read", l.p2p_read);
            p2p(&mut x, "p2p_write", l.p2p_write);
            Value::Table(x)
        })
        .collect();
    t.insert("socket_links".into(), Value::Array(links));
    let rcs = m
        .root_complexes
        .iter()
        .map(|r| {
            let mut x = Table::new();
            x.insert("name".into(), s(&r.name));
            x.insert("socket".into(), s(&r.socket));
            RawRootComplex::resolved(r, &mut x);
            p2p(&mut x, "p2p_read", r.p2p_read);
            p2p(&mut x, "p2p_write", r.p2p_write);
            Value::Table(x)
        })
        .collect();
    t.insert("root_complexes".into(), Value::Array(rcs));
    let sws = m
        .switches
        .iter()
        .map(|x| section_table(vec![("name", s(&x.name))], x, RawSwitch::resolved))
        .collect();
    t.insert("switches".into(), Value::Array(sws));
    let gpus = m
        .gpus
        .iter()
        .map(|g| {
            let (major, minor) = g.compute_capability;
            let names = vec![
                ("name", s(&g.name)),
                ("compute_capability", s(&format!("{major}.{minor}"))),
            ];
            section_table(names, g, RawGpu::resolved)
        })
        .collect();
    t.insert("gpus".into(), Value::Array(gpus));
    let nics = m
        .nics
        .iter()
        .map(|n| section_table(vec![("name", s(&n.name))], n, RawNic::resolved))
        .collect();
    t.insert("nics".into(), Value::Array(nics));
    let links = m
        .links
        .iter()
        .map(|l| {
            table(vec![
                ("up", s(&l.up)),
                ("down", s(&l.down)),
                ("generation", int(l.generation as u64)),
                ("width", int(l.width as u64)),
                ("mps_bytes", int(l.mps)),
                ("latency_ns", super::section::dur_value(l.latency)),
            ])
        })
        .collect();
    t.insert("links".into(), Value::Array(links));
    // Only where the machine has NVLink, so machines without it resolve as they always did.
    if !m.nvswitches.is_empty() {
        let sws = m
            .nvswitches
            .iter()
            .map(|x| section_table(vec![("name", s(&x.name))], x, RawNvSwitch::resolved))
            .collect();
        t.insert("nvswitches".into(), Value::Array(sws));
    }
    if !m.nvlinks.is_empty() {
        let links = m
            .nvlinks
            .iter()
            .map(|l| {
                let names = vec![
                    ("a", s(&l.a)),
                    ("b", s(&l.b)),
                    ("links", int(l.links as u64)),
                ];
                section_table(names, l, RawNvLink::resolved)
            })
            .collect();
        t.insert("nvlinks".into(), Value::Array(links));
    }
    if !m.c2c_links.is_empty() {
        let links = m
            .c2c_links
            .iter()
            .map(|l| {
                let names = vec![("socket", s(&l.socket)), ("gpu", s(&l.gpu))];
                section_table(names, l, RawC2cLink::resolved)
            })
            .collect();
        t.insert("c2c_links".into(), Value::Array(links));
    }
    Value::Table(t)
}

/// The resolved config as TOML text (loads back to an equal [`Config`]).
pub fn to_toml(c: &Config) -> String {
    let mut t = Table::new();
    t.insert("name".into(), s(&c.name));
    t.insert("description".into(), s(&c.description));
    t.insert("seed".into(), int(c.seed));
    t.insert(
        "sim".into(),
        section_table(vec![], &c.sim, RawSim::resolved),
    );
    t.insert(
        "sweep".into(),
        table(vec![
            (
                "sizes",
                Value::Array(c.sizes.iter().map(|&v| int(v)).collect()),
            ),
            (
                "paths",
                Value::Array(c.paths.iter().map(|p| s(p.name())).collect()),
            ),
            (
                "ops",
                Value::Array(c.ops.iter().map(|o| s(o.name())).collect()),
            ),
        ]),
    );
    if let (Some(sw), Some(Value::Table(t))) = (&c.sweep, t.get_mut("sweep")) {
        let vary: Table = sw
            .vary
            .iter()
            .map(|(k, v)| (k.clone(), Value::Array(v.clone())))
            .collect();
        t.insert("vary".into(), Value::Table(vary));
    }
    t.insert(
        "output".into(),
        section_table(vec![], &c.output, RawOutput::resolved),
    );
    t.insert("network".into(), network(&c.network));
    // One machine entry per distinct machine, in host order.
    let mut machines: Vec<&MachineSpec> = Vec::new();
    for h in &c.hosts {
        if !machines.iter().any(|m| m.name == h.machine.name) {
            machines.push(&h.machine);
        }
    }
    t.insert(
        "machines".into(),
        Value::Array(machines.into_iter().map(machine).collect()),
    );
    t.insert(
        "hosts".into(),
        Value::Array(
            c.hosts
                .iter()
                .map(|h| table(vec![("name", s(&h.name)), ("machine", s(&h.machine.name))]))
                .collect(),
        ),
    );
    let ep = |e: &Endpoint| {
        let m = &c.hosts[e.host].machine;
        let mut x = Table::new();
        x.insert("host".into(), s(&c.hosts[e.host].name));
        x.insert("nic".into(), s(&m.nics[e.nic].name));
        // Both the buffer's place and the bounce kind are written out: a host-buffer side
        // without `buffer = "host"` would be refused where the sweep has a GPU path, and a
        // pageable bounce buffer dropped would change the results on reload.
        match e.gpu {
            Some(g) => {
                x.insert("gpu".into(), s(&m.gpus[g].name));
                x.insert("buffer".into(), s("gpu"));
                let bounce = if e.pageable_bounce {
                    "pageable"
                } else {
                    "pinned"
                };
                x.insert("bounce".into(), s(bounce));
            }
            None => {
                x.insert("buffer".into(), s("host"));
            }
        }

        x.insert("memory".into(), s(&m.sockets[e.memory_socket].name));
        Value::Table(x)
    };
    t.insert(
        "scenarios".into(),
        Value::Array(
            c.scenarios
                .iter()
                .map(|sc| match (sc.flows.as_slice(), &sc.workload) {
                    // A collective: its own form (its flows are generated from it).
                    (_, Some(w)) if let Some(col) = &w.collective => table(vec![
                        ("name", s(&sc.name)),
                        ("collective", collective_table(c, col)),
                    ]),
                    // One flow: the one-pair form, as the user most likely wrote it.
                    ([f], None) => table(vec![
                        ("name", s(&sc.name)),
                        ("sender", ep(&f.sender)),
                        ("receiver", ep(&f.receiver)),
                    ]),
                    (flows, workload) => {
                        let list = flows
                            .iter()
                            .enumerate()
                            .map(|(i, f)| {
                                let mut keys =
                                    vec![("sender", ep(&f.sender)), ("receiver", ep(&f.receiver))];
                                if let Some(w) = workload {
                                    keys.extend(workload_keys(&w.flows, i));
                                }
                                table(keys)
                            })
                            .collect();
                        table(vec![("name", s(&sc.name)), ("flows", Value::Array(list))])
                    }
                })
                .collect(),
        ),
    );
    format!(
        "# Fully resolved gdrsim config: every default filled in. Durations in ns, rates in Gb/s, sizes in bytes.\n{}",
        toml::to_string(&Value::Table(t)).unwrap_or_default()
    )
}

/// `collective = { kind, algorithm, protocol, hosts, gpus_per_host, channels, buffsize }`,
/// every key filled in, and a broadcast's `root`.
fn collective_table(c: &Config, col: &crate::config::collective::Collective) -> Value {
    let mut x = Table::new();
    x.insert("kind".into(), Value::String(col.kind.name().into()));
    x.insert(
        "algorithm".into(),
        Value::String(col.algorithm.name().into()),
    );
    x.insert("protocol".into(), Value::String(col.protocol.name().into()));
    let hosts = col
        .hosts
        .iter()
        .map(|&h| Value::String(c.hosts[h].name.clone()))
        .collect();
    x.insert("hosts".into(), Value::Array(hosts));
    x.insert(
        "gpus_per_host".into(),
        Value::Integer(i64::from(col.gpus_per_host)),
    );
    x.insert("channels".into(), Value::Integer(i64::from(col.channels)));
    x.insert("buffsize".into(), Value::Integer(col.buff_bytes as i64));
    if col.kind == crate::config::collective::CollectiveKind::Broadcast {
        x.insert("root".into(), Value::Integer(i64::from(col.root)));
    }
    Value::Table(x)
}

/// A workload flow's own keys: its name, what gates it, its reduction and message count.
fn workload_keys(deps: &[crate::config::FlowDeps], i: usize) -> Vec<(&'static str, Value)> {
    let d = &deps[i];
    let mut keys = vec![("name", Value::String(d.name.clone()))];
    if !d.after.is_empty() {
        let after = d
            .after
            .iter()
            .map(|&(f, lag)| {
                let mut x = Table::new();
                x.insert("flow".into(), Value::String(deps[f].name.clone()));
                x.insert("lag".into(), Value::Integer(lag as i64));
                Value::Table(x)
            })
            .collect();
        keys.push(("after", Value::Array(after)));
    }
    if d.reduce {
        keys.push(("reduce", Value::Boolean(true)));
    }
    if let Some(k) = d.messages {
        keys.push(("messages", Value::Integer(k as i64)));
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::to_toml;
    use crate::config::parse;

    /// A broadcast's root, a collective's buffsize and a sendrecv come back from the resolved
    /// form (no shipped config has any of them).
    #[test]
    fn a_broadcasts_root_round_trips() {
        let text = "name = \"b\"\n[sweep]\nsizes = [1024]\npaths = [\"auto\"]\n\
                    [[machines]]\nname = \"dgx\"\npreset = \"dgx-h100\"\n\
                    [[hosts]]\nname = \"a\"\nmachine = \"dgx\"\n\
                    [[hosts]]\nname = \"b\"\nmachine = \"dgx\"\n\
                    [[scenarios]]\nname = \"bc\"\ncollective = { kind = \"broadcast\", root = 3, buffsize = \"1MiB\" }\n\
                    [[scenarios]]\nname = \"sr\"\ncollective = { kind = \"sendrecv\" }\n";
        let cfg = parse(text, "b.toml").unwrap_or_else(|e| panic!("{e}"));
        let again = parse(&to_toml(&cfg), "resolved").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cfg, again);
        let root = |c: &crate::config::Config| {
            c.scenarios[0]
                .workload
                .as_ref()
                .and_then(|w| w.collective.as_ref())
                .map(|c| c.root)
        };
        assert_eq!(root(&again), Some(3));
        let buff = again.scenarios[0]
            .workload
            .as_ref()
            .and_then(|w| w.collective.as_ref());
        assert_eq!(buff.map(|c| c.buff_bytes), Some(1 << 20));
    }

    /// The resolved config of every shipped config loads back to the same [`Config`]: a run
    /// reproduced from its output folder simulates the same hardware and workload.
    #[test]
    fn every_config_round_trips_through_its_resolved_form() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).expect("configs/ is readable") {
            let path = entry.expect("a directory entry").path();
            if path.extension().is_none_or(|e| e != "toml") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("a config is readable");
            let name = path.display().to_string();
            let cfg = parse(&text, &name).unwrap_or_else(|e| panic!("{e}"));
            let resolved = to_toml(&cfg);
            let again = parse(&resolved, "resolved").unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(
                cfg, again,
                "{name}: the resolved config loads back differently"
            );
            assert_eq!(
                resolved,
                to_toml(&again),
                "{name}: resolving is not idempotent"
            );
            seen += 1;
        }
        assert!(seen >= 5, "only {seen} configs found in {dir}");
    }
}

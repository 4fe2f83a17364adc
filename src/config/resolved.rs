//! The fully resolved config (every default filled in) as TOML, written next to each run's
//! results so that any run can be reproduced from its own output folder.

use toml::{Table, Value};

use super::{Config, Endpoint, Registration};
use crate::topology::spec::{MachineSpec, P2p};
use crate::units::{PS_PER_NS, Ps, Rate};

fn dur(ps: Ps) -> Value {
    if ps.is_multiple_of(PS_PER_NS) {
        Value::Integer((ps / PS_PER_NS) as i64)
    } else {
        Value::String(format!("{ps}ps"))
    }
}

fn rate(r: Rate) -> Value {
    if r.bps().is_multiple_of(1_000_000_000) {
        Value::Integer((r.bps() / 1_000_000_000) as i64)
    } else {
        Value::String(format!("{}b/s", r.bps()))
    }
}

fn int(v: u64) -> Value {
    Value::Integer(v as i64)
}

fn s(v: &str) -> Value {
    Value::String(v.to_string())
}

fn table(pairs: Vec<(&str, Value)>) -> Value {
    Value::Table(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
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
        table(vec![
            ("post_ns", dur(m.cpu.post)),
            ("post_recv_ns", dur(m.cpu.post_recv)),
            ("poll_ns", dur(m.cpu.poll)),
            ("pageable_d2h_latency_ns", dur(m.cpu.pageable.d2h_latency)),
            ("pageable_d2h_gbps", rate(m.cpu.pageable.d2h_rate)),
            ("pageable_h2d_latency_ns", dur(m.cpu.pageable.h2d_latency)),
            ("pageable_h2d_gbps", rate(m.cpu.pageable.h2d_rate)),
        ]),
    );
    let r = &m.registration;
    t.insert(
        "registration".into(),
        table(vec![
            ("host_base_ns", dur(r.host_base)),
            ("host_per_page_ns", dur(r.host_per_page)),
            ("gpu_base_ns", dur(r.gpu_base)),
            ("gpu_per_page_ns", dur(r.gpu_per_page)),
            ("bounce_alloc_ns", dur(r.bounce_alloc)),
            ("host_dereg_base_ns", dur(r.host_dereg_base)),
            ("host_dereg_per_page_ns", dur(r.host_dereg_per_page)),
            ("gpu_dereg_base_ns", dur(r.gpu_dereg_base)),
            ("gpu_dereg_per_page_ns", dur(r.gpu_dereg_per_page)),
        ]),
    );
    t.insert(
        "pcie".into(),
        table(vec![
            ("link_latency_ns", dur(m.pcie.link_latency)),
            ("mps_bytes", int(m.pcie.mps)),
            ("ecrc", Value::Boolean(m.pcie.ecrc)),
        ]),
    );
    let sockets = m
        .sockets
        .iter()
        .map(|x| {
            table(vec![
                ("name", s(&x.name)),
                ("dram_latency_ns", dur(x.dram.latency)),
                ("dram_rate_gbps", rate(x.dram.rate)),
                ("dram_jitter_ns", dur(x.dram.jitter_median)),
            ])
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
            x.insert("rate_gbps".into(), rate(l.rate));
            x.insert("latency_ns".into(), dur(l.latency));
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
            x.insert("latency_ns".into(), dur(r.latency));
            p2p(&mut x, "p2p_read", r.p2p_read);
            p2p(&mut x, "p2p_write", r.p2p_write);
            Value::Table(x)
        })
        .collect();
    t.insert("root_complexes".into(), Value::Array(rcs));
    let sws = m
        .switches
        .iter()
        .map(|x| {
            table(vec![
                ("name", s(&x.name)),
                ("latency_ns", dur(x.latency)),
                ("acs_redirect", Value::Boolean(x.acs_redirect)),
            ])
        })
        .collect();
    t.insert("switches".into(), Value::Array(sws));
    let gpus = m
        .gpus
        .iter()
        .map(|g| {
            table(vec![
                ("name", s(&g.name)),
                ("model", s(&g.model)),
                (
                    "compute_capability",
                    s(&format!(
                        "{}.{}",
                        g.compute_capability.0, g.compute_capability.1
                    )),
                ),
                ("memory_latency_ns", dur(g.memory.latency)),
                ("memory_rate_gbps", rate(g.memory.rate)),
                ("memory_jitter_ns", dur(g.memory.jitter_median)),
                ("heap_base", int(g.heap_base)),
                ("bar_offset", int(g.bar_offset)),
                ("memcpy_launch_ns", dur(g.copy_engine.launch)),
                ("memcpy_sync_ns", dur(g.copy_engine.sync)),
                ("ce_read_window", int(g.copy_engine.read_window as u64)),
                ("ce_mrrs_bytes", int(g.copy_engine.mrrs)),
                ("gdrcopy_read_latency_ns", dur(g.gdrcopy.read_latency)),
                ("gdrcopy_read_gbps", rate(g.gdrcopy.read_rate)),
                ("gdrcopy_write_latency_ns", dur(g.gdrcopy.write_latency)),
                ("gdrcopy_write_gbps", rate(g.gdrcopy.write_rate)),
            ])
        })
        .collect();
    t.insert("gpus".into(), Value::Array(gpus));
    let nics = m
        .nics
        .iter()
        .map(|n| {
            table(vec![
                ("name", s(&n.name)),
                ("model", s(&n.model)),
                ("wire_rate_gbps", rate(n.wire_rate)),
                ("mtu_bytes", int(n.mtu)),
                ("packet_overhead_bytes", int(n.packet_overhead)),
                ("ack_bytes", int(n.ack_bytes)),
                ("wqe_delivery", s(n.wqe_delivery.name())),
                ("wqe_bytes", int(n.wqe_bytes)),
                ("cqe_bytes", int(n.cqe_bytes)),
                ("inline_max_bytes", int(n.inline_max)),
                ("wqe_process_ns", dur(n.wqe_process)),
                ("wqe_interval_ns", dur(n.wqe_interval)),
                ("mtt_lookup_ns", dur(n.mtt_lookup)),
                ("tx_pipeline_ns", dur(n.tx_pipeline)),
                ("rx_pipeline_ns", dur(n.rx_pipeline)),
                ("read_window", int(n.read_window as u64)),
                ("mrrs_bytes", int(n.mrrs)),
                ("max_rd_atomic", int(n.max_rd_atomic as u64)),
                ("recv_wqe_bytes", int(n.recv_wqe_bytes)),
            ])
        })
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
                ("latency_ns", dur(l.latency)),
            ])
        })
        .collect();
    t.insert("links".into(), Value::Array(links));
    Value::Table(t)
}

/// The resolved config as TOML text (loads back to an equal [`Config`]).
pub fn to_toml(c: &Config) -> String {
    let mut t = Table::new();
    t.insert("name".into(), s(&c.name));
    t.insert("description".into(), s(&c.description));
    t.insert("seed".into(), int(c.seed));
    let sim = &c.sim;
    t.insert(
        "sim".into(),
        table(vec![
            ("iterations", int(sim.iterations as u64)),
            ("min_iterations", int(sim.min_iterations as u64)),
            ("iteration_budget_bytes", int(sim.iteration_budget_bytes)),
            ("stream_window", int(sim.stream_window as u64)),
            ("stream_messages", int(sim.stream_messages as u64)),
            ("stream_budget_bytes", int(sim.stream_budget_bytes)),
            (
                "granularity",
                s(if sim.tlp_granularity { "tlp" } else { "auto" }),
            ),
            ("coalesce_above_bytes", int(sim.coalesce_above)),
            (
                "registration",
                s(match sim.registration {
                    Registration::Cached => "cached",
                    Registration::PerTransfer => "per_transfer",
                    Registration::Lru => "lru",
                }),
            ),
            ("jitter", Value::Boolean(sim.jitter)),
            ("flush", s(sim.flush.name())),
            ("net_gdr_level", s(super::GDR_LEVELS[sim.net_gdr_level])),
            (
                "registration_cache_entries",
                int(sim.registration_cache_entries as u64),
            ),
            ("buffers", int(sim.buffers as u64)),
            ("chunk_bytes", int(sim.chunk_bytes)),
            ("pipeline_depth", int(sim.pipeline_depth as u64)),
            ("recv_depth", int(sim.recv_depth as u64)),
            ("min_rnr_timer", int(sim.min_rnr_timer as u64)),
        ]),
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
    let o = &c.output;
    t.insert(
        "output".into(),
        table(vec![
            (
                "charts",
                Value::Array(o.charts.iter().map(|v| s(v)).collect()),
            ),
            (
                "formats",
                Value::Array(o.formats.iter().map(|v| s(v)).collect()),
            ),
            ("width_px", int(o.width_px as u64)),
            ("height_px", int(o.height_px as u64)),
            (
                "breakdown_sizes",
                Value::Array(o.breakdown_sizes.iter().map(|&v| int(v)).collect()),
            ),
            ("compare_size", int(o.compare_size)),
        ]),
    );
    t.insert(
        "network".into(),
        table(vec![
            ("switch_hops", int(c.network.switch_hops as u64)),
            ("switch_latency_ns", dur(c.network.switch_latency)),
            ("cable_m", int(c.network.cable_m)),
            ("propagation_ns_per_m", dur(c.network.propagation_per_m)),
        ]),
    );
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
                .map(|sc| match sc.flows.as_slice() {
                    // One flow: the one-pair form, as the user most likely wrote it.
                    [f] => table(vec![
                        ("name", s(&sc.name)),
                        ("sender", ep(&f.sender)),
                        ("receiver", ep(&f.receiver)),
                    ]),
                    flows => {
                        let list = flows
                            .iter()
                            .map(|f| {
                                table(vec![
                                    ("sender", ep(&f.sender)),
                                    ("receiver", ep(&f.receiver)),
                                ])
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

#[cfg(test)]
mod tests {
    use super::to_toml;
    use crate::config::parse;

    /// The resolved config of every shipped config loads back to the same [`Config`]: a run
    /// reproduced from its output folder simulates the same hardware and workload.
    #[test]
    fn every_config_round_trips_through_its_resolved_form() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/configs");
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

//! Tests of the model layer (`gdrsim_model`) that need a shipped config to build their machines
//! and plans: the model crate reads no config, so they live here, beside `scenario::topology`
//! and `scenario::paths::plan`, which build both.

/// Routes through shipped machines (were `topology::route`'s own tests).
mod routes {
    use crate::topology::{Affinity, Flow, NodeKind, Place, Route, Unit};

    /// DGX H100 (configs/dgx-h100.toml): the whole topology, and the channel names of a route
    /// from device `a` to device `b` of host 0 without the host prefix.
    fn route_names(a: NodeKind, b: NodeKind) -> (Vec<String>, Affinity) {
        let cfg = crate::config::parse(
            include_str!("../../../../configs/dgx-h100.toml"),
            "dgx-h100.toml",
        )
        .expect("the shipped config loads");
        let topo = super::super::topology(&cfg);
        let h = &topo.hosts[0];
        let (a, b) = (
            Place::Device(h.node_index(a)),
            Place::Device(h.node_index(b)),
        );
        let r = h.route(a, b, Flow::Write).expect("a route");
        let names = r
            .channels
            .iter()
            .map(|&c| {
                let n = &topo.channels[c.index()].name;
                n.split_once('/').map_or(n.clone(), |x| x.1.to_string())
            })
            .collect();
        (names, r.class)
    }

    /// configs/gh200.toml: the GPU hangs from Grace by NVLink-C2C. Its copies to host memory
    /// cross C2C only; the NIC reaches it through its root port, Grace and C2C (NCCL's P2C),
    /// classed NODE; C2C's packets cap a route's MPS.
    #[test]
    fn a_grace_hopper_gpu_routes_over_c2c() {
        let cfg =
            crate::config::parse(include_str!("../../../../configs/gh200.toml"), "gh200.toml")
                .expect("the shipped config loads");
        let topo = super::super::topology(&cfg);
        let h = &topo.hosts[0];
        let names = |r: &Route| -> Vec<String> {
            r.channels
                .iter()
                .map(|&c| topo.channels[c.index()].name.clone())
                .collect()
        };
        let gpu = Place::Device(h.node_index(NodeKind::Gpu(0)));
        let nic = Place::Device(h.node_index(NodeKind::Nic(0)));
        let r = h.route(gpu, Place::Memory(0), Flow::Write).unwrap();
        assert_eq!(names(&r), ["gh-a/c2c:gpu0>grace"]);
        // C2C packetises on its own: it does not cap the route's MPS (no PCIe link here).
        assert_eq!(r.mps, 4096);
        let c2c = &topo.channels[r.channels[0].index()];
        assert_eq!(c2c.wire_bytes(Unit::Write, 4096, 1), 4096 + 16 * 16);
        assert_eq!(c2c.wire_bytes(Unit::Write, 64, 1), 64 + 16);
        let r = h.route(nic, gpu, Flow::Write).unwrap();
        assert_eq!(
            names(&r),
            ["gh-a/pcie:nic0>rc0", "gh-a/rc0", "gh-a/c2c:grace>gpu0"]
        );
        assert_eq!(r.class, Affinity::Node);
        // The NIC's TLPs keep the PCIe link's MPS.
        assert_eq!(r.mps, cfg.hosts[0].machine.links[0].mps);
        assert!(h.over_c2c(gpu, nic) && h.over_c2c(nic, gpu));
        // A PCIe machine has no C2C path.
        let cfg = crate::config::parse(include_str!("../../../../configs/dgx-h100.toml"), "d")
            .expect("loads");
        let topo = super::super::topology(&cfg);
        let h = &topo.hosts[0];
        let gpu = Place::Device(h.node_index(NodeKind::Gpu(0)));
        let nic = Place::Device(h.node_index(NodeKind::Nic(4)));
        assert!(!h.over_c2c(gpu, nic));
    }

    /// Between GPUs the route takes NVLink (the NVSwitch fabric) as the CUDA driver does, and
    /// the class is NV18; GPU to NIC stays on PCIe (PIX under the shared switch).
    #[test]
    fn gpus_route_over_nvlink_and_nics_over_pcie() {
        let (names, class) = route_names(NodeKind::Gpu(0), NodeKind::Gpu(5));
        assert_eq!(
            names,
            ["nvlink:gpu0>nvswitch", "nvswitch", "nvlink:nvswitch>gpu5"]
        );
        assert_eq!(class, Affinity::Nv(18));
        let (names, class) = route_names(NodeKind::Gpu(0), NodeKind::Nic(0));
        assert!(names.iter().all(|n| !n.contains("nvlink")), "{names:?}");
        assert!(names.iter().any(|n| n.starts_with("pcie:")), "{names:?}");
        assert_eq!(class, Affinity::Pix);
    }
}

/// Stream memory (was `components::run`'s own test).
mod streams {
    use crate::components::{Fabric, Sharing, SimOptions};
    use crate::config::{DEFAULT_TOML, Op, PathKind, parse};

    /// A stream's step states are reused once its messages are delivered and finished, so its
    /// memory is bounded by the messages in flight, not by the messages sent: on every path and
    /// op of the default config (registration per transfer too, whose deregistration comes
    /// after the message), TLP by TLP and in bulk, 32 and 128 messages through a window of 4
    /// allocate as many vectors, at most twice the window, and report every byte; a recording
    /// run too (a retired message keeps its spans, not its step states).
    #[test]
    fn a_stream_reuses_the_state_of_its_ended_messages() {
        let text = DEFAULT_TOML.replace(
            "registration = \"cached\"",
            "registration = \"per_transfer\"",
        );
        assert_ne!(text, DEFAULT_TOML);
        for (toml, name) in [(DEFAULT_TOML, "default"), (text.as_str(), "per_transfer")] {
            let cfg = parse(toml, name).unwrap();
            let topo = super::super::topology(&cfg);
            let flow = &cfg.scenarios[0].flows[0];
            for path in [PathKind::Host, PathKind::Staged, PathKind::GpuDirect] {
                for op in [Op::Write, Op::WriteImm, Op::Send, Op::Read] {
                    if op == Op::Read && path == PathKind::Staged {
                        continue; // refused by the config check
                    }
                    for size in [64, 1 << 20] {
                        let b =
                            super::super::paths::plan(&cfg, flow, &topo, path, op, size).unwrap();
                        let case = format!("{name} {path:?} {op:?} {size} B");
                        for record in [false, true] {
                            let opts = SimOptions {
                                tlp_granularity: false,
                                coalesce_above: 16 << 10,
                                jitter: false,
                                seed: 1,
                                record,
                                traffic: false,
                                sharing: Sharing::EXACT,
                            };
                            // Step-state vectors a run of `n` messages made (kept or pooled).
                            let made = |n: u32| {
                                let mut f = Fabric::new(&topo, &[&b.plan], opts);
                                let out = f.run(4, n);
                                assert!(out.written.iter().all(|&w| w == size), "{case}");
                                assert!(out.received.iter().all(|&r| r == size), "{case}");
                                f.step_state_vectors(0)
                            };
                            let (short, long) = (made(32), made(128));
                            let (a, b) = (short.0 + short.1, long.0 + long.1);
                            assert!(a == b && b <= 2 * 4, "{case} ({record}): {a} then {b}");
                        }
                    }
                }
            }
        }
    }
}

/// A stream's bulk transfers take the slots of those done: on every path of the default
/// config (a staged message has three transfers, GPUDirect one), 32 and 128 messages of 1 MiB
/// through a window of 4 make as many slots, at most a few per message in flight.
#[test]
fn a_stream_reuses_the_slots_of_its_done_transfers() {
    use crate::components::{Fabric, Sharing, SimOptions};
    use crate::config::{DEFAULT_TOML, Op, PathKind, parse};
    let cfg = parse(DEFAULT_TOML, "default").unwrap();
    let topo = super::topology(&cfg);
    let flow = &cfg.scenarios[0].flows[0];
    for path in [PathKind::Host, PathKind::Staged, PathKind::GpuDirect] {
        let b = super::paths::plan(&cfg, flow, &topo, path, Op::WriteImm, 1 << 20).unwrap();
        let opts = SimOptions {
            tlp_granularity: false,
            coalesce_above: 16 << 10,
            jitter: false,
            seed: 1,
            record: false,
            traffic: false,
            sharing: Sharing::EXACT,
        };
        let slots = |n: u32| {
            let mut f = Fabric::new(&topo, &[&b.plan], opts);
            let out = f.run(4, n);
            assert!(out.written.iter().all(|&w| w == 1 << 20), "{path:?}");
            f.bulk_slots()
        };
        let (short, long) = (slots(32), slots(128));
        assert!(short > 0, "{path:?} moves in bulk");
        assert!(
            short == long && long <= 3 * 2 * 4,
            "{path:?}: {short} then {long} slots"
        );
    }
}

/// Bulk sharing (`components::bulk`, solved by `components::fluid`) on a plan the model runs:
/// two identical transfers over one route each get half of what one gets alone, bound by the
/// same channel.
mod bulk_shares {
    use crate::components::{Fabric, Limit, Sharing, SimOptions};
    use crate::config::{DEFAULT_TOML, Op, PathKind, parse};

    /// Derivation: a transfer alone moves at its route's narrowest rate r (the fluid solve's
    /// bottleneck); two transfers of the same plan cross the same channels with the same
    /// weights, so max-min fairness gives each r / 2 on the same bottleneck (to a byte per
    /// second of rounding).
    #[test]
    fn two_transfers_on_one_route_get_half_each_on_the_same_bottleneck() {
        let cfg = parse(DEFAULT_TOML, "default").unwrap();
        let topo = super::super::topology(&cfg);
        let flow = &cfg.scenarios[0].flows[0];
        let opts = SimOptions {
            tlp_granularity: false,
            coalesce_above: 512,
            jitter: false,
            seed: 1,
            record: false,
            traffic: false,
            sharing: Sharing::EXACT,
        };
        for path in [PathKind::Host, PathKind::GpuDirect] {
            let b =
                super::super::paths::plan(&cfg, flow, &topo, path, Op::WriteImm, 1 << 20).unwrap();
            let alone = Fabric::new(&topo, &[&b.plan], opts).steady_state();
            let both = Fabric::new(&topo, &[&b.plan, &b.plan], opts).steady_state();
            assert_eq!((alone.len(), both.len()), (1, 2), "{path:?}");
            let (rate, limit) = alone[0];
            assert!(matches!(limit, Limit::Channel(_)), "{path:?}: {limit:?}");
            // 400 Gb/s NDR: a transfer alone moves between 40 and 50 GB/s of payload.
            assert!(
                (40e9..50e9).contains(&(rate as f64)),
                "{path:?}: {rate} B/s"
            );
            for &(r, l) in &both {
                assert!(
                    r.abs_diff(rate / 2) <= 1,
                    "{path:?}: {r} against {rate} / 2"
                );
                assert_eq!(l, limit, "{path:?}");
            }
        }
    }
}

/// The read engines' numbering (`topology::read_engines`) on a machine with many of each
/// device: every window has one owner, each device's windows come back to it, and every name
/// is distinct, so the fabric's NICs and copy engines hold exactly the topology's windows.
mod read_engines {
    use crate::topology::{ReadEngineId, ReadEngineOwner};

    #[test]
    fn every_window_belongs_to_one_nic_or_copy_engine() {
        let cfg = crate::config::parse(
            include_str!("../../../../configs/dgx-h100.toml"),
            "dgx-h100.toml",
        )
        .expect("the shipped config loads");
        let topo = super::super::topology(&cfg);
        let (nics, gpus) = (topo.nic_count(), topo.gpu_count());
        assert!(
            topo.hosts.len() == 2 && nics >= 16 && gpus == 16,
            "{nics} {gpus}"
        );
        let windows = topo.read_windows().len();
        assert_eq!(windows, 2 * (nics + gpus));
        let mut names = std::collections::BTreeSet::new();
        for e in 0..windows as u32 {
            let e = ReadEngineId(e);
            let back = match topo.owner_of(e) {
                ReadEngineOwner::NicData(n) => topo.nic_engines(n).0,
                ReadEngineOwner::NicWqe(n) => topo.nic_engines(n).1,
                ReadEngineOwner::CopyEngine(g) => topo.copy_engines(g).0,
                ReadEngineOwner::CopyEngineNvlink(g) => topo.copy_engines(g).1,
            };
            assert_eq!(back, e);
            assert!(names.insert(topo.engine_name(e)), "{}", topo.engine_name(e));
        }
        for (h, host) in topo.hosts.iter().enumerate() {
            for n in 0..host.spec.nics.len() {
                let i = topo.nic_index(h, n);
                assert_eq!(
                    topo.owner_of(topo.nic_engine(h, n)),
                    ReadEngineOwner::NicData(i)
                );
                assert_eq!(
                    topo.owner_of(topo.wqe_engine(h, n)),
                    ReadEngineOwner::NicWqe(i)
                );
            }
            for g in 0..host.spec.gpus.len() {
                let i = topo.gpu_index(h, g);
                assert_eq!(
                    topo.owner_of(topo.gpu_engine(h, g)),
                    ReadEngineOwner::CopyEngine(i)
                );
                let nvlink = topo.gpu_nvlink_engine(h, g);
                assert_eq!(topo.owner_of(nvlink), ReadEngineOwner::CopyEngineNvlink(i));
            }
        }
        let last = topo.engine_name(ReadEngineId(windows as u32 - 1));
        assert_eq!(last, "dgx-b/gpu7 copy engine NVLink read window");
    }
}

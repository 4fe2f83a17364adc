//! `[[machines]]`: one machine's CPU, registration, PCIe defaults, sockets, root complexes,
//! switches, GPUs and links, checked to form a tree under its root complexes.

use super::super::defaults as d;
use super::super::raw::*;
use super::quantity::{Cx, MAX_PER_PAGE, MAX_WINDOW, R};
use crate::topology::pcie;
use crate::topology::spec::*;
use crate::units::{Ps, Rate};

fn memory(
    cx: &Cx,
    key: &str,
    lat: &Option<Q>,
    rate: &Option<Q>,
    jitter: &Option<Q>,
    defaults: (Ps, Rate, Ps),
) -> R<MemorySpec> {
    Ok(MemorySpec {
        latency: cx.dur(lat, &format!("{key}_latency_ns"), defaults.0)?,
        rate: cx.rate(rate, &format!("{key}_rate_gbps"), defaults.1)?,
        jitter_median: cx.dur(jitter, &format!("{key}_jitter_ns"), defaults.2)?,
    })
}

pub(super) fn convert(cx: &Cx, i: usize, m: &RawMachine) -> R<MachineSpec> {
    let k = |rest: &str| format!("machines[{i}].{rest}");
    // Names are one namespace per machine: links and scenarios refer to them.
    let mut named: Vec<(String, &str)> = Vec::new();
    for (list, names) in [
        (
            "sockets",
            m.sockets
                .iter()
                .map(|x| x.name.as_str())
                .collect::<Vec<_>>(),
        ),
        (
            "root_complexes",
            m.root_complexes.iter().map(|x| x.name.as_str()).collect(),
        ),
        (
            "switches",
            m.switches.iter().map(|x| x.name.as_str()).collect(),
        ),
        ("gpus", m.gpus.iter().map(|x| x.name.as_str()).collect()),
        ("nics", m.nics.iter().map(|x| x.name.as_str()).collect()),
    ] {
        for (j, n) in names.into_iter().enumerate() {
            named.push((k(&format!("{list}[{j}].name")), n));
        }
    }
    cx.unique(named.into_iter())?;
    let cpu = CpuSpec {
        post: cx.dur(&m.cpu.post_ns, &k("cpu.post_ns"), d::CPU_POST)?,
        post_recv: cx.dur(
            &m.cpu.post_recv_ns,
            &k("cpu.post_recv_ns"),
            d::CPU_POST_RECV,
        )?,
        poll: cx.dur(&m.cpu.poll_ns, &k("cpu.poll_ns"), d::CPU_POLL)?,
        pageable: PageableSpec {
            d2h_latency: cx.dur(
                &m.cpu.pageable_d2h_latency_ns,
                &k("cpu.pageable_d2h_latency_ns"),
                d::PAGEABLE_D2H_LATENCY,
            )?,
            d2h_rate: cx.rate(
                &m.cpu.pageable_d2h_gbps,
                &k("cpu.pageable_d2h_gbps"),
                d::PAGEABLE_D2H_RATE,
            )?,
            h2d_latency: cx.dur(
                &m.cpu.pageable_h2d_latency_ns,
                &k("cpu.pageable_h2d_latency_ns"),
                d::PAGEABLE_H2D_LATENCY,
            )?,
            h2d_rate: cx.rate(
                &m.cpu.pageable_h2d_gbps,
                &k("cpu.pageable_h2d_gbps"),
                d::PAGEABLE_H2D_RATE,
            )?,
        },
    };
    let r = &m.registration;
    let registration = RegistrationSpec {
        host_base: cx.dur(
            &r.host_base_ns,
            &k("registration.host_base_ns"),
            d::REG_HOST_BASE,
        )?,
        host_per_page: cx.dur_at_most(
            &r.host_per_page_ns,
            &k("registration.host_per_page_ns"),
            d::REG_HOST_PER_PAGE,
            MAX_PER_PAGE,
        )?,
        gpu_base: cx.dur(
            &r.gpu_base_ns,
            &k("registration.gpu_base_ns"),
            d::REG_GPU_BASE,
        )?,
        gpu_per_page: cx.dur_at_most(
            &r.gpu_per_page_ns,
            &k("registration.gpu_per_page_ns"),
            d::REG_GPU_PER_PAGE,
            MAX_PER_PAGE,
        )?,
        bounce_alloc: cx.dur(
            &r.bounce_alloc_ns,
            &k("registration.bounce_alloc_ns"),
            d::BOUNCE_ALLOC,
        )?,
        host_dereg_base: cx.dur(
            &r.host_dereg_base_ns,
            &k("registration.host_dereg_base_ns"),
            d::DEREG_HOST_BASE,
        )?,
        host_dereg_per_page: cx.dur_at_most(
            &r.host_dereg_per_page_ns,
            &k("registration.host_dereg_per_page_ns"),
            d::DEREG_HOST_PER_PAGE,
            MAX_PER_PAGE,
        )?,
        gpu_dereg_base: cx.dur(
            &r.gpu_dereg_base_ns,
            &k("registration.gpu_dereg_base_ns"),
            d::DEREG_GPU_BASE,
        )?,
        gpu_dereg_per_page: cx.dur_at_most(
            &r.gpu_dereg_per_page_ns,
            &k("registration.gpu_dereg_per_page_ns"),
            d::DEREG_GPU_PER_PAGE,
            MAX_PER_PAGE,
        )?,
    };
    if m.pcie.rcb_bytes.is_some() {
        // Removed: every buffer is page-aligned and every read request MRRS-aligned, so
        // completions split at MPS only, which is already a multiple of the boundary.
        return Err(cx.err(
            &k("pcie.rcb_bytes"),
            "no rcb_bytes key (removed: buffers are page-aligned, so completions split at MPS \
             and the read completion boundary never changes a TLP count)",
            "rcb_bytes",
        ));
    }
    let pcie_spec = PcieSpec {
        link_latency: cx.dur(
            &m.pcie.link_latency_ns,
            &k("pcie.link_latency_ns"),
            d::PCIE_LINK_LATENCY,
        )?,
        mps: cx.payload_size(&m.pcie.mps_bytes, &k("pcie.mps_bytes"), d::PCIE_MPS)?,
        ecrc: m.pcie.ecrc.unwrap_or(false),
    };
    if m.sockets.is_empty() {
        return Err(cx.err(&k("sockets"), "at least one socket", "none"));
    }
    let sockets = m
        .sockets
        .iter()
        .enumerate()
        .map(|(j, s)| {
            Ok(SocketSpec {
                name: s.name.clone(),
                dram: memory(
                    cx,
                    &k(&format!("sockets[{j}].dram")),
                    &s.dram_latency_ns,
                    &s.dram_rate_gbps,
                    &s.dram_jitter_ns,
                    (d::DRAM_LATENCY, d::DRAM_RATE, d::DRAM_JITTER),
                )?,
            })
        })
        .collect::<R<Vec<_>>>()?;
    let socket_names: Vec<&str> = sockets.iter().map(|s| s.name.as_str()).collect();
    let socket_ref = |name: &str, key: String| -> R<()> {
        if socket_names.contains(&name) {
            Ok(())
        } else {
            Err(cx.err(
                &key,
                format!("one of the machine's sockets ({})", socket_names.join(", ")),
                format!("{name:?}"),
            ))
        }
    };
    let mut socket_links = Vec::new();
    for (j, l) in m.socket_links.iter().enumerate() {
        let kk = |f: &str| k(&format!("socket_links[{j}].{f}"));
        socket_ref(&l.a, kk("a"))?;
        socket_ref(&l.b, kk("b"))?;
        socket_links.push(SocketLinkSpec {
            a: l.a.clone(),
            b: l.b.clone(),
            rate: cx.rate(&l.rate_gbps, &kk("rate_gbps"), d::SOCKET_LINK_RATE)?,
            latency: cx.dur(&l.latency_ns, &kk("latency_ns"), d::SOCKET_LINK_LATENCY)?,
            p2p_read: cx.p2p(l.p2p_read, &l.p2p_read_rate_gbps, &kk("p2p_read_rate_gbps"))?,
            p2p_write: cx.p2p(
                l.p2p_write,
                &l.p2p_write_rate_gbps,
                &kk("p2p_write_rate_gbps"),
            )?,
        });
    }
    for (x, a) in socket_names.iter().enumerate() {
        for b in &socket_names[x + 1..] {
            if !socket_links
                .iter()
                .any(|l| (l.a == *a && l.b == *b) || (l.a == *b && l.b == *a))
            {
                return Err(cx.err(
                    &k("socket_links"),
                    format!("a link between sockets {a:?} and {b:?}"),
                    "none",
                ));
            }
        }
    }
    let mut root_complexes = Vec::new();
    for (j, rc) in m.root_complexes.iter().enumerate() {
        let kk = |f: &str| k(&format!("root_complexes[{j}].{f}"));
        socket_ref(&rc.socket, kk("socket"))?;
        root_complexes.push(RootComplexSpec {
            name: rc.name.clone(),
            socket: rc.socket.clone(),
            latency: cx.dur(&rc.latency_ns, &kk("latency_ns"), d::ROOT_COMPLEX_LATENCY)?,
            p2p_read: cx.p2p(
                rc.p2p_read,
                &rc.p2p_read_rate_gbps,
                &kk("p2p_read_rate_gbps"),
            )?,
            p2p_write: cx.p2p(
                rc.p2p_write,
                &rc.p2p_write_rate_gbps,
                &kk("p2p_write_rate_gbps"),
            )?,
        });
    }
    let switches = m
        .switches
        .iter()
        .enumerate()
        .map(|(j, s)| {
            Ok(SwitchSpec {
                name: s.name.clone(),
                latency: cx.dur(
                    &s.latency_ns,
                    &k(&format!("switches[{j}].latency_ns")),
                    d::SWITCH_LATENCY,
                )?,
                acs_redirect: s.acs_redirect.unwrap_or(false),
            })
        })
        .collect::<R<Vec<_>>>()?;
    let gpus = m
        .gpus
        .iter()
        .enumerate()
        .map(|(j, g)| {
            let kk = |f: &str| k(&format!("gpus[{j}].{f}"));
            let window = g.ce_read_window.unwrap_or(d::CE_READ_WINDOW);
            if window == 0 || window > MAX_WINDOW {
                return Err(cx.err(
                    &kk("ce_read_window"),
                    "a number of outstanding reads from 1 to 65536",
                    window.to_string(),
                ));
            }
            let model = g.model.clone().unwrap_or_else(|| d::GPU_MODEL.into());
            let compute_capability = match &g.compute_capability {
                Some(s) => parse_compute_capability(s).ok_or_else(|| {
                    cx.err(
                        &kk("compute_capability"),
                        "a compute capability \"major.minor\" such as \"8.0\" or \"9.0\"",
                        format!("{s:?}"),
                    )
                })?,
                None => d::compute_capability(&model),
            };
            Ok(GpuSpec {
                name: g.name.clone(),
                model,
                compute_capability,
                memory: memory(
                    cx,
                    &k(&format!("gpus[{j}].memory")),
                    &g.memory_latency_ns,
                    &g.memory_rate_gbps,
                    &g.memory_jitter_ns,
                    (d::GPU_MEMORY_LATENCY, d::GPU_MEMORY_RATE, 0),
                )?,
                heap_base: {
                    let base = g.heap_base.unwrap_or(d::GPU_HEAP_BASE);
                    let offset = g.bar_offset.unwrap_or(d::GPU_BAR_OFFSET);
                    if base.checked_add(offset).and_then(|a| a.checked_add(16 << 30)).is_none() {
                        return Err(cx.err(
                            &kk("heap_base"),
                            "a heap base that leaves room for the BAR offset and the buffers below 2^64",
                            format!("{base:#x} (+ bar_offset {offset:#x})"),
                        ));
                    }
                    base
                },
                bar_offset: g.bar_offset.unwrap_or(d::GPU_BAR_OFFSET),
                copy_engine: CopyEngineSpec {
                    launch: cx.dur(
                        &g.memcpy_launch_ns,
                        &kk("memcpy_launch_ns"),
                        d::MEMCPY_LAUNCH,
                    )?,
                    sync: cx.dur(&g.memcpy_sync_ns, &kk("memcpy_sync_ns"), d::MEMCPY_SYNC)?,
                    read_window: window,
                                        mrrs: cx.payload_size(&g.ce_mrrs_bytes, &kk("ce_mrrs_bytes"), d::CE_MRRS)?,
                },
                gdrcopy: GdrcopySpec {
                    read_latency: cx.dur(
                        &g.gdrcopy_read_latency_ns,
                        &kk("gdrcopy_read_latency_ns"),
                        d::GDRCOPY_READ_LATENCY,
                    )?,
                    read_rate: cx.rate(
                        &g.gdrcopy_read_gbps,
                        &kk("gdrcopy_read_gbps"),
                        d::GDRCOPY_READ_RATE,
                    )?,
                    write_latency: cx.dur(
                        &g.gdrcopy_write_latency_ns,
                        &kk("gdrcopy_write_latency_ns"),
                        d::GDRCOPY_WRITE_LATENCY,
                    )?,
                    write_rate: cx.rate(
                        &g.gdrcopy_write_gbps,
                        &kk("gdrcopy_write_gbps"),
                        d::GDRCOPY_WRITE_RATE,
                    )?,
                },
            })
        })
        .collect::<R<Vec<_>>>()?;
    let nics = m
        .nics
        .iter()
        .enumerate()
        .map(|(j, n)| super::nic::convert(cx, &k(&format!("nics[{j}]")), n))
        .collect::<R<Vec<_>>>()?;
    let is = |name: &str, v: &[&str]| v.contains(&name);
    let uppers: Vec<&str> = root_complexes
        .iter()
        .map(|x| x.name.as_str())
        .chain(switches.iter().map(|x| x.name.as_str()))
        .collect();
    let downs: Vec<&str> = switches
        .iter()
        .map(|x| x.name.as_str())
        .chain(gpus.iter().map(|x| x.name.as_str()))
        .chain(nics.iter().map(|x| x.name.as_str()))
        .collect();
    let mut links = Vec::new();
    for (j, l) in m.links.iter().enumerate() {
        let kk = |f: &str| k(&format!("links[{j}].{f}"));
        if !is(&l.up, &uppers) {
            return Err(cx.err(
                &kk("up"),
                format!(
                    "a root complex or switch of this machine ({})",
                    uppers.join(", ")
                ),
                format!("{:?}", l.up),
            ));
        }
        if !is(&l.down, &downs) {
            return Err(cx.err(
                &kk("down"),
                format!(
                    "a switch, GPU or NIC of this machine ({})",
                    downs.join(", ")
                ),
                format!("{:?}", l.down),
            ));
        }
        if !pcie::valid_generation(l.generation) {
            return Err(cx.err(
                &kk("generation"),
                "a PCIe generation from 1 to 6",
                l.generation.to_string(),
            ));
        }
        if !pcie::valid_width(l.width) {
            return Err(cx.err(
                &kk("width"),
                "a link width of 1, 2, 4, 8, 12, 16 or 32 lanes",
                l.width.to_string(),
            ));
        }
        links.push(LinkSpec {
            up: l.up.clone(),
            down: l.down.clone(),
            generation: l.generation,
            width: l.width,
            mps: cx.payload_size(&l.mps_bytes, &kk("mps_bytes"), pcie_spec.mps)?,
            latency: cx.dur(&l.latency_ns, &kk("latency_ns"), pcie_spec.link_latency)?,
        });
    }
    // Each downstream node hangs from exactly one link, and every chain reaches a root complex.
    for name in &downs {
        let n = links.iter().filter(|l| l.down == *name).count();
        if n != 1 {
            return Err(cx.err(
                &k("links"),
                format!("exactly one upstream link for {name:?}"),
                format!("{n}"),
            ));
        }
    }
    for name in &downs {
        let mut cur = *name;
        let mut steps = 0;
        while let Some(l) = links.iter().find(|l| l.down == cur) {
            cur = &l.up;
            steps += 1;
            if steps > downs.len() {
                return Err(cx.err(
                    &k("links"),
                    "a tree of links (no cycles)",
                    format!("a cycle through {name:?}"),
                ));
            }
        }
        if !root_complexes.iter().any(|r| r.name == cur) {
            return Err(cx.err(
                &k("links"),
                format!("a chain of links from {name:?} up to a root complex"),
                format!("it ends at {cur:?}"),
            ));
        }
    }
    if nics.is_empty() {
        return Err(cx.err(&k("nics"), "at least one NIC", "none"));
    }
    let host_buffer_base = m.host_buffer_base.unwrap_or(d::HOST_BUFFER_BASE);
    // The buffers (up to 16 GiB) and the walk's and trace's addresses stay below 2^64.
    if host_buffer_base.checked_add(32 << 30).is_none() {
        return Err(cx.err(
            &k("host_buffer_base"),
            "an address that leaves room for 32 GiB of buffers below 2^64",
            format!("{host_buffer_base:#x}"),
        ));
    }
    Ok(MachineSpec {
        name: m.name.clone(),
        cpu,
        registration,
        pcie: pcie_spec,
        host_buffer_base,
        sockets,
        socket_links,
        root_complexes,
        switches,
        gpus,
        nics,
        links,
    })
}

/// "9.0" -> (9, 0).
fn parse_compute_capability(s: &str) -> Option<(u32, u32)> {
    let (major, minor) = s.trim().split_once('.')?;
    let major: u32 = major.parse().ok()?;
    let minor: u32 = minor.parse().ok()?;
    ((1..=20).contains(&major) && minor < 10).then_some((major, minor))
}

//! `[[machines]]`: one machine's CPU, registration, PCIe defaults, sockets, root complexes,
//! switches, GPUs and links, checked to form a tree under its root complexes.

use super::super::defaults as d;
use super::super::raw::*;
use super::quantity::{Cx, R};
use crate::topology::cpu_family::FamilyDefaults;
use crate::topology::pcie;
use crate::topology::spec::*;
use crate::units::Rate;

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
        (
            "nvswitches",
            m.nvswitches.iter().map(|x| x.name.as_str()).collect(),
        ),
    ] {
        for (j, n) in names.into_iter().enumerate() {
            named.push((k(&format!("{list}[{j}].name")), n));
        }
    }
    cx.unique(named.into_iter())?;
    let mut cpu = CpuSpec::default();
    m.cpu.apply(cx, &|f| k(&format!("cpu.{f}")), &mut cpu)?;
    let mut registration = RegistrationSpec::default();
    m.registration
        .apply(cx, &|f| k(&format!("registration.{f}")), &mut registration)?;
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
    let mut pcie_spec = PcieSpec::default();
    m.pcie
        .apply(cx, &|f| k(&format!("pcie.{f}")), &mut pcie_spec)?;
    if m.sockets.is_empty() {
        return Err(cx.err(&k("sockets"), "at least one socket", "none"));
    }
    let sockets = m
        .sockets
        .iter()
        .enumerate()
        .map(|(j, s)| {
            if let Some(c) = &s.cpu_affinity
                && !crate::topology::spec::is_cpu_list(c)
            {
                return Err(cx.err(
                    &k(&format!("sockets[{j}].cpu_affinity")),
                    "a CPU list such as \"0-55,112-167\"",
                    format!("{c:?}"),
                ));
            }
            let mut socket = SocketSpec {
                name: s.name.clone(),
                cpu_affinity: s.cpu_affinity.clone(),
                numa_node: s.numa_node,
                ..SocketSpec::default()
            };
            s.apply(cx, &|f| k(&format!("sockets[{j}].{f}")), &mut socket)?;
            // The family's DRAM rate, unless the socket gives one.
            if let Some(fam) = socket.cpu_family.defaults()
                && s.dram_rate_gbps.is_none()
            {
                socket.dram.rate = fam.dram_rate.value;
            }
            // The family's sustained share of it, unless the socket gives one.
            if let Some(fam) = socket.cpu_family.defaults()
                && s.dram_efficiency_pct.is_none()
            {
                socket.dram_efficiency_pct = fam.dram_efficiency_pct.value;
            }
            Ok(socket)
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
    // A CPU family's defaults by socket name.
    let family = |name: &str| {
        sockets
            .iter()
            .find(|s| s.name == name)
            .and_then(|s| s.cpu_family.defaults())
    };
    let mut socket_links = Vec::new();
    for (j, l) in m.socket_links.iter().enumerate() {
        let kk = |f: &str| k(&format!("socket_links[{j}].{f}"));
        socket_ref(&l.a, kk("a"))?;
        socket_ref(&l.b, kk("b"))?;
        // The family of socket `a` (of `b` where `a` names none) sets what the link's keys
        // leave out: its rate, whether P2P crosses it and at what rate.
        let fam = family(&l.a).or_else(|| family(&l.b));
        let p2p = |allowed: Option<bool>, cap: &Option<Q>, key: &str| -> R<P2p> {
            let given = cx.p2p(allowed, cap, key)?;
            Ok(match fam {
                Some(f) if cap.is_none() && given != P2p::Refused => {
                    if allowed.is_none() && !f.socket_p2p.value {
                        P2p::Refused
                    } else {
                        P2p::Allowed(Some(f.socket_p2p_rate.value))
                    }
                }
                _ => given,
            })
        };
        let mut link = SocketLinkSpec {
            a: l.a.clone(),
            b: l.b.clone(),
            p2p_read: p2p(l.p2p_read, &l.p2p_read_rate_gbps, &kk("p2p_read_rate_gbps"))?,
            p2p_write: p2p(
                l.p2p_write,
                &l.p2p_write_rate_gbps,
                &kk("p2p_write_rate_gbps"),
            )?,
            ..SocketLinkSpec::default()
        };
        l.apply(cx, &kk, &mut link)?;
        if let Some(f) = fam
            && l.rate_gbps.is_none()
        {
            link.rate = f.socket_link_rate.value;
        }
        socket_links.push(link);
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
        // Its socket's family caps the P2P forwarding the keys leave uncapped.
        let fam = family(&rc.socket);
        let p2p = |allowed: Option<bool>,
                   cap: &Option<Q>,
                   key: &str,
                   fam_cap: fn(&FamilyDefaults) -> Option<Rate>|
         -> R<P2p> {
            let given = cx.p2p(allowed, cap, key)?;
            Ok(match (given, fam) {
                (P2p::Allowed(None), Some(f)) => P2p::Allowed(fam_cap(&f)),
                _ => given,
            })
        };
        let mut root = RootComplexSpec {
            name: rc.name.clone(),
            socket: rc.socket.clone(),
            p2p_read: p2p(
                rc.p2p_read,
                &rc.p2p_read_rate_gbps,
                &kk("p2p_read_rate_gbps"),
                |f| f.rc_p2p_read_rate.value,
            )?,
            p2p_write: p2p(
                rc.p2p_write,
                &rc.p2p_write_rate_gbps,
                &kk("p2p_write_rate_gbps"),
                |f| f.rc_p2p_write_rate.value,
            )?,
            ..RootComplexSpec::default()
        };
        rc.apply(cx, &kk, &mut root)?;
        root_complexes.push(root);
    }
    let switches = m
        .switches
        .iter()
        .enumerate()
        .map(|(j, s)| {
            let mut switch = SwitchSpec {
                name: s.name.clone(),
                ..SwitchSpec::default()
            };
            s.apply(cx, &|f| k(&format!("switches[{j}].{f}")), &mut switch)?;
            Ok(switch)
        })
        .collect::<R<Vec<_>>>()?;
    let gpus = m
        .gpus
        .iter()
        .enumerate()
        .map(|(j, g)| gpu(cx, &k(&format!("gpus[{j}]")), g))
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
    let c2c_links = c2c_links(cx, &k, m, &socket_names, &gpus)?;
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
            mps: cx.pow2(&l.mps_bytes, &kk("mps_bytes"), pcie_spec.mps, 128, 4096)?,
            latency: cx.dur(&l.latency_ns, &kk("latency_ns"), pcie_spec.link_latency)?,
        });
    }
    // Each downstream node hangs from exactly one link, and every chain reaches a root complex;
    // a GPU on NVLink-C2C hangs from its socket instead.
    let on_c2c = |name: &str| c2c_links.iter().position(|c| c.gpu == name);
    for (j, l) in links.iter().enumerate() {
        if let Some(c) = on_c2c(&l.down) {
            return Err(cx.err(
                &k(&format!("links[{j}].down")),
                format!(
                    "a device without an NVLink-C2C link ({:?} hangs from its socket by \
                     c2c_links[{c}])",
                    l.down
                ),
                format!("{:?}", l.down),
            ));
        }
    }
    let downs: Vec<&str> = downs.into_iter().filter(|n| on_c2c(n).is_none()).collect();
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
    let nvswitches = m
        .nvswitches
        .iter()
        .enumerate()
        .map(|(j, s)| {
            let mut sw = NvSwitchSpec {
                name: s.name.clone(),
                ..NvSwitchSpec::default()
            };
            s.apply(cx, &|f| k(&format!("nvswitches[{j}].{f}")), &mut sw)?;
            Ok(sw)
        })
        .collect::<R<Vec<_>>>()?;
    let nvlinks = nvlinks(cx, &k, m, &gpus, &nvswitches)?;
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
        nvswitches,
        nvlinks,
        c2c_links,
    })
}

/// The NVLink-C2C links: each from a socket to a GPU, at most one per GPU.
fn c2c_links(
    cx: &Cx,
    k: &dyn Fn(&str) -> String,
    m: &RawMachine,
    socket_names: &[&str],
    gpus: &[GpuSpec],
) -> R<Vec<C2cLinkSpec>> {
    let gpu_names: Vec<&str> = gpus.iter().map(|g| g.name.as_str()).collect();
    let mut out: Vec<C2cLinkSpec> = Vec::new();
    for (j, l) in m.c2c_links.iter().enumerate() {
        let kk = |f: &str| k(&format!("c2c_links[{j}].{f}"));
        if !socket_names.contains(&l.socket.as_str()) {
            return Err(cx.err(
                &kk("socket"),
                format!("one of the machine's sockets ({})", socket_names.join(", ")),
                format!("{:?}", l.socket),
            ));
        }
        if !gpu_names.contains(&l.gpu.as_str()) {
            return Err(cx.err(
                &kk("gpu"),
                format!("a GPU of this machine ({})", gpu_names.join(", ")),
                format!("{:?}", l.gpu),
            ));
        }
        if let Some(first) = out.iter().position(|o| o.gpu == l.gpu) {
            return Err(cx.err(
                &kk("gpu"),
                format!(
                    "one NVLink-C2C link per GPU (c2c_links[{first}] already joins {:?})",
                    l.gpu
                ),
                "a second one",
            ));
        }
        let mut link = C2cLinkSpec {
            socket: l.socket.clone(),
            gpu: l.gpu.clone(),
            ..C2cLinkSpec::default()
        };
        l.apply(cx, &kk, &mut link)?;
        out.push(link);
    }
    Ok(out)
}

/// The NVLink bonds: each from a GPU to another GPU or an NVSwitch, once per pair.
fn nvlinks(
    cx: &Cx,
    k: &dyn Fn(&str) -> String,
    m: &RawMachine,
    gpus: &[GpuSpec],
    nvswitches: &[NvSwitchSpec],
) -> R<Vec<NvLinkSpec>> {
    let gpu_names: Vec<&str> = gpus.iter().map(|g| g.name.as_str()).collect();
    let ends: Vec<&str> = gpu_names
        .iter()
        .copied()
        .chain(nvswitches.iter().map(|s| s.name.as_str()))
        .collect();
    let mut out: Vec<NvLinkSpec> = Vec::new();
    for (j, l) in m.nvlinks.iter().enumerate() {
        let kk = |f: &str| k(&format!("nvlinks[{j}].{f}"));
        if !gpu_names.contains(&l.a.as_str()) {
            return Err(cx.err(
                &kk("a"),
                format!("a GPU of this machine ({})", gpu_names.join(", ")),
                format!("{:?}", l.a),
            ));
        }
        if !ends.contains(&l.b.as_str()) || l.b == l.a {
            return Err(cx.err(
                &kk("b"),
                format!(
                    "another GPU or an NVSwitch of this machine ({})",
                    ends.join(", ")
                ),
                format!("{:?}", l.b),
            ));
        }
        if !(1..=crate::topology::MAX_NVLINKS).contains(&l.links) {
            return Err(cx.err(
                &kk("links"),
                "from 1 to 36 bonded NVLinks (H100 SXM: 18 into the NVSwitch fabric)",
                l.links.to_string(),
            ));
        }
        if out
            .iter()
            .any(|o| (o.a == l.a && o.b == l.b) || (o.a == l.b && o.b == l.a))
        {
            return Err(cx.err(
                &kk("b"),
                format!(
                    "one bond between {:?} and {:?} (give its link count)",
                    l.a, l.b
                ),
                "a second one",
            ));
        }
        let mut link = NvLinkSpec {
            a: l.a.clone(),
            b: l.b.clone(),
            links: l.links,
            ..NvLinkSpec::default()
        };
        l.apply(cx, &kk, &mut link)?;
        out.push(link);
    }
    Ok(out)
}

/// One GPU: its declared parameters, then the compute capability (by default from the model's
/// name), the cudaMemcpy overheads its generation has by default, and the check that its BAR
/// addresses stay below 2^64.
fn gpu(cx: &Cx, key: &str, g: &RawGpu) -> R<GpuSpec> {
    let kk = |f: &str| format!("{key}.{f}");
    let mut gpu = GpuSpec {
        name: g.name.clone(),
        ..GpuSpec::default()
    };
    g.apply(cx, &kk, &mut gpu)?;
    gpu.compute_capability = match &g.compute_capability {
        Some(s) => parse_compute_capability(s).ok_or_else(|| {
            cx.err(
                &kk("compute_capability"),
                "a compute capability \"major.minor\" such as \"8.0\" or \"9.0\"",
                format!("{s:?}"),
            )
        })?,
        None => d::compute_capability(&gpu.model),
    };
    // cudaMemcpy's overheads by default follow the GPU's generation.
    let (launch, sync) = d::memcpy_costs(gpu.compute_capability);
    if g.memcpy_launch_ns.is_none() {
        gpu.copy_engine.launch = launch;
    }
    if g.memcpy_sync_ns.is_none() {
        gpu.copy_engine.sync = sync;
    }
    let (base, offset) = (gpu.heap_base, gpu.bar_offset);
    if base
        .checked_add(offset)
        .and_then(|a| a.checked_add(16 << 30))
        .is_none()
    {
        return Err(cx.err(
            &kk("heap_base"),
            "a heap base that leaves room for the BAR offset and the buffers below 2^64",
            format!("{base:#x} (+ bar_offset {offset:#x})"),
        ));
    }
    Ok(gpu)
}

/// "9.0" -> (9, 0).
fn parse_compute_capability(s: &str) -> Option<(u32, u32)> {
    let (major, minor) = s.trim().split_once('.')?;
    let major: u32 = major.parse().ok()?;
    let minor: u32 = minor.parse().ok()?;
    ((1..=20).contains(&major) && minor < 10).then_some((major, minor))
}

//! A socket's CPU family: its P2P caps change what GPUDirect reaches across the socket link, an
//! explicit key of the config overrides the family's default, and an unknown family is refused
//! naming the key.

use crate::support::*;
use gdrsim::config::PathKind;
use gdrsim::topology::spec::P2p;
use gdrsim::units::Rate;

/// The default config with both sockets of its machine naming `family` (the default names
/// sapphire-rapids), and `link` in place of its socket link's P2P keys.
fn with_family(family: &str, link: &str) -> gdrsim::config::Config {
    let text = gdrsim::config::DEFAULT_TOML.replace(
        "cpu_family = \"sapphire-rapids\"",
        &format!("cpu_family = \"{family}\""),
    );
    let (head, tail) = text
        .split_once("[[machines.socket_links]]")
        .expect("a socket link");
    let (link_table, rest) = tail.split_once("[[machines.root_complexes]]").unwrap();
    let kept: Vec<&str> = link_table
        .lines()
        .filter(|l| !l.starts_with("p2p_"))
        .collect();
    let text = format!(
        "{head}[[machines.socket_links]]{}\n{link}\n\n[[machines.root_complexes]]{rest}",
        kept.join("\n")
    );
    gdrsim::config::parse(&text, "family.toml").unwrap_or_else(|e| panic!("{e}"))
}

const BIG: u64 = 16 << 20;

fn sys_gpudirect_gbps(cfg: &gdrsim::config::Config) -> f64 {
    summary(cfg, "SYS", PathKind::GpuDirect, BIG).bw_gbps
}

/// Sapphire Rapids caps P2P across its UPI at NCCL's 22 GB/s (row P11): the SYS GPUDirect
/// point, at link rate without a family, falls to that cap; a `p2p_*_rate_gbps` on the socket
/// link overrides it.
#[test]
fn a_familys_socket_cap_bounds_sys_gpudirect_and_an_explicit_key_overrides_it() {
    let none = sys_gpudirect_gbps(&with_family("none", "p2p_read = true\np2p_write = true"));
    let spr = with_family("sapphire-rapids", "p2p_read = true\np2p_write = true");
    let link = &spr.hosts[0].machine.socket_links[0];
    let gbs = |g: u64| Rate::from_bytes_per_s(g * 1_000_000_000);
    assert_eq!(link.p2p_read, P2p::Allowed(Some(gbs(22))));
    assert_eq!(link.p2p_write, P2p::Allowed(Some(gbs(22))));
    // The config's explicit link rate (the family's own, 4 UPI links) stays.
    assert_eq!(link.rate, gbs(128));
    let capped = sys_gpudirect_gbps(&spr);
    assert!(
        none > 30.0,
        "without a family SYS runs near link rate: {none}"
    );
    assert!(
        capped <= 22.0 * 1.001 && capped > 18.0,
        "SYS GPUDirect at the 22 GB/s cap: {capped} (no family {none})"
    );
    let over = with_family(
        "sapphire-rapids",
        "p2p_read = true\np2p_write = true\np2p_read_rate_gbps = \"30GB/s\"\n\
         p2p_write_rate_gbps = \"30GB/s\"",
    );
    assert_eq!(
        over.hosts[0].machine.socket_links[0].p2p_read,
        P2p::Allowed(Some(gbs(30)))
    );
    let raised = sys_gpudirect_gbps(&over);
    assert!(
        raised > capped * 1.2 && raised <= 30.0 * 1.001,
        "the explicit 30 GB/s cap: {raised} (family {capped})"
    );
}

/// Ivy Bridge refuses P2P across QPI: without its keys the socket link refuses both
/// directions and GPUDirect at SYS falls back to staging; `p2p_read = true` on the link
/// allows reads again (at the family's cap), and root complexes keep forwarding.
#[test]
fn ivybridge_refuses_p2p_across_sockets_unless_the_config_allows_it() {
    let ivb = with_family("ivybridge", "");
    let m = &ivb.hosts[0].machine;
    assert_eq!(m.socket_links[0].p2p_read, P2p::Refused);
    assert_eq!(m.socket_links[0].p2p_write, P2p::Refused);
    assert!(matches!(
        m.root_complexes[0].p2p_read,
        P2p::Allowed(Some(_))
    ));
    let sys = summary(&ivb, "SYS", PathKind::GpuDirect, 1 << 20);
    assert_ne!(
        Some(sys.effective_path),
        gdrsim::effective::EffectivePath::of(PathKind::GpuDirect),
        "SYS falls back"
    );
    let allowed = with_family("ivybridge", "p2p_read = true");
    let m = &allowed.hosts[0].machine;
    assert_eq!(
        m.socket_links[0].p2p_read,
        P2p::Allowed(Some(Rate::from_bytes_per_s(6_000_000_000)))
    );
    assert_eq!(m.socket_links[0].p2p_write, P2p::Refused);
}

/// The default machine as a platform of 2014 (NVIDIA's GPUDirect RDMA platform study of that
/// year: Kepler GPUs, FDR InfiniBand, PCIe Gen3, Xeon E5): both sockets of `family`, every link
/// Gen3, every GPU of compute capability 3.5 (cudaMemcpy at its Kepler-era 4.5 + 2.0 us, rows
/// D1, D2; receives flushed), the NIC at FDR's 54.54 Gb/s data rate (row S1: 4 x 14.0625 Gb/s,
/// 64/66), and the family's DRAM rate and socket link.
fn platform_2014(family: &str) -> gdrsim::config::Config {
    let text = gdrsim::config::DEFAULT_TOML
        .replace(
            "cpu_family = \"sapphire-rapids\"",
            &format!("cpu_family = \"{family}\""),
        )
        .replace("generation = 5", "generation = 3")
        .replace(
            "compute_capability = \"9.0\"",
            "compute_capability = \"3.5\"",
        )
        .replace(
            "model = \"H100 PCIe\"\n\n",
            "model = \"H100 PCIe\"\ncompute_capability = \"3.5\"\n\n",
        )
        .replace("wire_rate_gbps = 400", "wire_rate_gbps = 54.54");
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| {
            ![
                "memcpy_launch_ns",
                "memcpy_sync_ns",
                "dram_rate_gbps",
                "rate_gbps = \"128GB/s\"",
            ]
            .iter()
            .any(|k| l.starts_with(k))
        })
        .collect();
    let cfg =
        gdrsim::config::parse(&kept.join("\n"), "2014.toml").unwrap_or_else(|e| panic!("{e}"));
    let m = &cfg.hosts[0].machine;
    assert!(m.gpus.iter().all(|g| g.compute_capability == (3, 5)));
    cfg
}

/// The crossover of GPUDirect and staging comes out of the platform. On Ivy Bridge, whose root
/// complex caps P2P reads at 3.5 GB/s (row B1, estimate), GPUDirect through it (PHB) is faster
/// than MVAPICH2-style pipelined staging (256 KiB chunks, row B6) up to 256 KiB and slower from
/// 512 KiB: the study's "GDR faster up to a few hundred KB" (81.3 against 96.4 us at 256 KiB,
/// 156.2 against 135.1 at 512 KiB; GPUDirect streams at the 3.5 GB/s cap, staging at FDR's
/// 6.7). On Haswell, whose root complex forwards P2P reads at 10.34 GB/s (row P11), more than
/// FDR carries, the same machine keeps GPUDirect ahead at every size to 16 MiB.
#[test]
fn an_old_platforms_p2p_read_cap_makes_staging_overtake_gpudirect_past_a_few_hundred_kib() {
    let lat =
        |cfg: &gdrsim::config::Config, path, size| model_latency(cfg, "PHB", path, size, false);
    let (direct, piped) = (PathKind::GpuDirect, PathKind::StagedPipelined);
    let ivb = platform_2014("ivybridge");
    for size in [4u64 << 10, 64 << 10, 256 << 10] {
        assert!(
            lat(&ivb, direct, size) < lat(&ivb, piped, size),
            "Ivy Bridge, {size} B: GPUDirect {} ps, pipelined staging {} ps",
            lat(&ivb, direct, size),
            lat(&ivb, piped, size)
        );
    }
    for size in [512u64 << 10, 16 << 20] {
        assert!(
            lat(&ivb, piped, size) < lat(&ivb, direct, size),
            "Ivy Bridge, {size} B: pipelined staging {} ps, GPUDirect {} ps",
            lat(&ivb, piped, size),
            lat(&ivb, direct, size)
        );
    }
    let big = 16u64 << 20;
    let gdr_bw = summary(&ivb, "PHB", direct, big).bw_gbps;
    assert!(
        gdr_bw <= 3.5 * 1.001 && gdr_bw > 3.3,
        "GPUDirect at the read cap: {gdr_bw}"
    );
    let hsw = platform_2014("haswell");
    for size in [256u64 << 10, 512 << 10, big] {
        assert!(
            lat(&hsw, direct, size) < lat(&hsw, piped, size),
            "Haswell, {size} B: GPUDirect {} ps, pipelined staging {} ps",
            lat(&hsw, direct, size),
            lat(&hsw, piped, size)
        );
    }
}

/// An unknown family is bad input: exit 2, the key named, the accepted words listed.
#[test]
fn an_unknown_family_is_refused_naming_the_key() {
    let dir = scratch("cpu_family", "unknown");
    let second = "cpu_family = \"sapphire-rapids\"    # source: as above";
    assert!(gdrsim::config::DEFAULT_TOML.contains(second));
    let body = gdrsim::config::DEFAULT_TOML.replacen(second, "cpu_family = \"zen9\"", 1);
    check_refuses(
        &dir,
        "zen9",
        &body,
        "machines[0].sockets[1].cpu_family",
        "sapphire-rapids",
    );
}

/// `gdrsim import topo-m --cpu FAMILY` names the family on every socket it writes, and the
/// family's caps show in `gdrsim params` with their sources.
#[test]
fn import_names_the_family_and_params_lists_its_caps() {
    let dir = scratch("cpu_family", "import");
    let out = dir.join("a100.toml");
    let o = gdrsim(&[
        "import",
        "topo-m",
        "tests/data/topo-m/dgx-a100.txt",
        "--gpu",
        "h100-pcie",
        "--nic",
        "connectx-7",
        "--cpu",
        "epyc-rome",
        "--out",
        s(&out),
    ]);
    ok(&o, "import --cpu");
    let text = std::fs::read_to_string(&out).unwrap();
    let sockets = text.matches("[[machines.sockets]]").count();
    assert!(sockets >= 2);
    assert_eq!(text.matches("cpu_family = \"epyc-rome\"").count(), sockets);
    let params = ok(&gdrsim(&["params", s(&out)]), "params");
    let line = params
        .lines()
        .find(|l| l.contains("socket_links[0].p2p_read_rate_gbps"))
        .expect("the socket link's P2P read cap is listed");
    assert!(line.contains("128") && line.contains("row P11"), "{line}");
    let bad = gdrsim(&[
        "import",
        "topo-m",
        "tests/data/topo-m/dgx-a100.txt",
        "--cpu",
        "zen9",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(text_of(&bad.stderr).contains("--cpu"));
}

fn text_of(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Host DRAM runs at the share of its datasheet peak that sustained DMA reaches: a family's
/// `dram_efficiency_pct` (Sapphire Rapids 80, a measured STREAM triad, row C23; Grace 75, an
/// estimate, row C20, the one family whose measurements no share fits) scales the socket's DRAM
/// channel; an explicit key overrides it; a socket with no family runs at the rate it is
/// given.
#[test]
fn dram_runs_at_the_familys_sustained_share_of_its_peak() {
    let rate_of = |cfg: &gdrsim::config::Config| {
        let topo = gdrsim::scenario::topology(cfg);
        topo.channels[(topo.hosts[0].dram[0]).index()].rate
    };
    let gbs = |g: u64| Rate::from_bytes_per_s(g * 1_000_000_000);
    let spr = default_cfg();
    assert_eq!(spr.hosts[0].machine.sockets[0].dram.rate, gbs(300));
    assert_eq!(spr.hosts[0].machine.sockets[0].dram_efficiency_pct, 80);
    assert_eq!(rate_of(&spr), gbs(240));
    let given = cfg_with(&[(
        "dram_jitter_ns = 27               # C10",
        "dram_efficiency_pct = 90\ndram_jitter_ns = 27               # C10",
    )]);
    assert_eq!(rate_of(&given), gbs(270));
    let none = with_family("none", "p2p_read = true\np2p_write = true");
    assert_eq!(rate_of(&none), gbs(300));
    let out = gdrsim(&["params"]);
    let text = ok(&out, "params");
    assert!(
        text.lines()
            .any(|l| l.contains("dram_efficiency_pct") && l.contains("row C23")),
        "params lists the family's source"
    );
    // Every family's share is a measurement (rows C21-C27) but Grace's, the estimate of row
    // C20; and within what STREAM-class measurements reach.
    for f in gdrsim::topology::CpuFamily::ALL {
        let Some(d) = f.defaults() else { continue };
        let e = d.dram_efficiency_pct;
        assert!((70..=95).contains(&e.value), "{}: {}", f.name(), e.value);
        let cited = [
            "row C21", "row C22", "row C23", "row C24", "row C26", "row C27",
        ];
        let estimate = e.source.starts_with("estimate (row C20");
        assert_eq!(
            estimate,
            f == gdrsim::topology::CpuFamily::Grace,
            "{}",
            f.name()
        );
        assert!(
            estimate || cited.iter().any(|r| e.source.contains(r)),
            "{}: {}",
            f.name(),
            e.source
        );
    }
}

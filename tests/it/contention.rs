//! Contention oracles: flows sharing one link get the shares max-min fairness gives them, in
//! closed form.
//!
//! The machine of every case: on the sending host, `n` GPUs under one PCIe switch whose uplink to
//! the root complex is the narrowest link (Gen4 x8); each GPU's flow has its own NIC on its own
//! root port, so the GPUDirect payload (the NICs' read completions) goes GPU -> switch -> uplink
//! -> root complex -> NIC and the uplink is the one link all flows share. The receiving host is
//! the same machine with a wide uplink (Gen5 x16) so that it binds nothing. Wires (800 Gb/s),
//! NIC read windows (256 x 4 KiB) and host memory are far from binding.
//!
//! Derivation of the shares. The uplink carries read completions of MPS (256 B) payload each, so
//! its payload rate is `R = pcie::effective_read_rate(4, 8, 256)` (the link's TLP rate after
//! ACK/FC DLLPs, times 256 / (256 + completion overhead)), about 13.4 GB/s. Max-min fairness
//! (progressive filling): every flow's rate rises together until a link saturates; flows through
//! a saturated link freeze. With `n` identical backlogged flows the uplink saturates first, each
//! at `R / n`. With one flow limited to `r < R / 2` by its own narrow GPU link (Gen3 x4) and one
//! unlimited, the narrow link saturates first at `r`, freezing that flow; the other rises until
//! the uplink saturates: `R - r`. Each flow's bandwidth is perftest's BW average over its own
//! run (first post to last delivery), whose pipeline fill at 4 MiB x 32 messages is below 0.1%.

use crate::support::rel_diff;
use gdrsim::config::{self, Config, PathKind};
use gdrsim::stats::Summary;
use gdrsim::topology::pcie;

const MIB: u64 = 1 << 20;

/// A machine named `name` with `n` GPUs under `sw0` (uplink Gen `up.0` x `up.1`) and `n` NICs on
/// root ports of `rc0`; GPU `i`'s link is `gpu_links[i]` (generation, width), Gen5 x16 by default.
fn machine(name: &str, n: usize, up: (u32, u32), gpu_links: &[(u32, u32)]) -> String {
    let mut t = format!(
        r#"
[[machines]]
name = "{name}"
[machines.pcie]
mps_bytes = 256
[[machines.sockets]]
name = "cpu0"
dram_rate_gbps = "2000GB/s"
[[machines.root_complexes]]
name = "rc0"
socket = "cpu0"
[[machines.switches]]
name = "sw0"
[[machines.links]]
up = "rc0"
down = "sw0"
generation = {}
width = {}
"#,
        up.0, up.1
    );
    for i in 0..n {
        let (g, w) = gpu_links.get(i).copied().unwrap_or((5, 16));
        t += &format!(
            r#"
[[machines.gpus]]
name = "gpu{i}"
[[machines.nics]]
name = "nic{i}"
wire_rate_gbps = 800
read_window = 256
mrrs_bytes = 4096
[[machines.links]]
up = "sw0"
down = "gpu{i}"
generation = {g}
width = {w}
[[machines.links]]
up = "rc0"
down = "nic{i}"
generation = 5
width = 16
"#
        );
    }
    t
}

/// The study: `n` flows a/gpu_i via nic_i -> b/gpu_i via nic_i, GPUDirect, 4 MiB messages.
fn config(n: usize, gpu_links: &[(u32, u32)]) -> Config {
    let flows: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{ sender = {{ host = "a", nic = "nic{i}", gpu = "gpu{i}" }}, receiver = {{ host = "b", nic = "nic{i}", gpu = "gpu{i}" }} }}"#
            )
        })
        .collect();
    let text = format!(
        r#"name = "contention"
seed = 1
[sim]
iterations = 3
min_iterations = 3
stream_window = 16
stream_messages = 32
stream_budget_bytes = "128MiB"
jitter = false
[sweep]
sizes = ["4MiB"]
paths = ["gpudirect"]
{narrow}{wide}
[[hosts]]
name = "a"
machine = "narrow"
[[hosts]]
name = "b"
machine = "wide"
[[scenarios]]
name = "shared uplink"
flows = [{flows}]
"#,
        narrow = machine("narrow", n, (4, 8), gpu_links),
        wide = machine("wide", n, (5, 16), &[]),
        flows = flows.join(", "),
    );
    config::parse(&text, "contention.toml").unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn run(cfg: &Config) -> Summary {
    crate::support::first_summary(cfg, PathKind::GpuDirect, 4 * MIB)
}

/// The uplink's payload rate for read completions, GB/s.
fn uplink_gbytes() -> f64 {
    pcie::effective_read_rate(4, 8, 256, false).gbytes_per_s()
}

#[test]
fn one_flow_alone_gets_the_uplink() {
    let s = run(&config(1, &[]));
    let r = uplink_gbytes();
    assert!(
        rel_diff(s.bw_gbps, r) < 0.01,
        "one flow {:.3} vs uplink {r:.3} GB/s",
        s.bw_gbps
    );
    assert_eq!(s.bottleneck.channel(), Some("a/pcie:sw0>rc0"));
}

#[test]
fn two_backlogged_flows_through_one_link_get_half_each() {
    let s = run(&config(2, &[]));
    let r = uplink_gbytes();
    assert_eq!(s.flow_rows.len(), 2);
    for f in &s.flow_rows {
        assert!(
            rel_diff(f.bw_gbps, r / 2.0) < 0.01,
            "flow {} got {:.3} GB/s, half the uplink is {:.3}",
            f.flow,
            f.bw_gbps,
            r / 2.0
        );
    }
    assert!(
        rel_diff(s.bw_gbps, r) < 0.01,
        "aggregate {:.3} vs {r:.3}",
        s.bw_gbps
    );
}

#[test]
fn flows_of_unequal_demand_get_their_max_min_fair_shares() {
    // Flow 0's own GPU link (Gen3 x4) holds it to r < R/2; flow 1 takes the rest of the uplink.
    let s = run(&config(2, &[(3, 4)]));
    let big = uplink_gbytes();
    let small = pcie::effective_read_rate(3, 4, 256, false).gbytes_per_s();
    assert!(
        small < big / 2.0,
        "the case needs r < R/2: {small} vs {big}"
    );
    let bw = |i: u32| s.flow_rows.iter().find(|f| f.flow == i).unwrap().bw_gbps;
    assert!(
        rel_diff(bw(0), small) < 0.01,
        "narrow flow {:.3} vs its link {small:.3} GB/s",
        bw(0)
    );
    assert!(
        rel_diff(bw(1), big - small) < 0.01,
        "wide flow {:.3} vs the uplink's rest {:.3} GB/s",
        bw(1),
        big - small
    );
}

#[test]
fn eight_flows_through_one_switch_uplink_sum_to_its_rate() {
    let s = run(&config(8, &[]));
    let r = uplink_gbytes();
    assert_eq!(s.flows, 8);
    let sum: f64 = s.flow_rows.iter().map(|f| f.bw_gbps).sum();
    assert!(
        rel_diff(sum, r) < 0.01,
        "8 flows sum {sum:.3} vs uplink {r:.3} GB/s"
    );
    assert!(rel_diff(s.bw_gbps, r) < 0.01, "aggregate {:.3}", s.bw_gbps);
    for f in &s.flow_rows {
        assert!(
            rel_diff(f.bw_gbps, r / 8.0) < 0.01,
            "flow {} got {:.3}, a fair eighth is {:.3}",
            f.flow,
            f.bw_gbps,
            r / 8.0
        );
    }
    // links.csv's row for the uplink: busy all but the pipeline fill, at most its capacity.
    let up = s
        .links
        .iter()
        .find(|l| l.channel == "a/pcie:sw0>rc0")
        .expect("the uplink is in links");
    assert!(
        up.busy > 0.99 && up.busy <= 1.0 + 1e-9,
        "uplink busy {}",
        up.busy
    );
    assert!(up.rate_gbps <= up.capacity_gbps * (1.0 + 1e-9));
}

//! Plausibility: values that are legal but unusual for what they name (a 400 GB/s wire for a
//! NIC, a 0.1 ns switch) draw a warning naming the key and the usual range; `--strict` makes
//! them errors. The ranges are wide on purpose (they span the hardware of the last decade and
//! the next announced generation); a value outside is more likely a unit slip than a design.

use std::fmt;

use super::{Config, ConfigError};
use crate::units::{PS_PER_NS, Ps, Rate};

/// A value outside its usual range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// The key path of the value (`network.switch_latency_ns`).
    pub key: String,
    /// The value with its unit ("5000 ns").
    pub found: String,
    /// The usual range and why, for the message.
    pub usual: &'static str,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "key `{}`: {} is outside the usual range ({})",
            self.key, self.found, self.usual
        )
    }
}

impl Warning {
    /// The warning as the error `--strict` makes of it.
    pub fn into_error(self, file: &str) -> ConfigError {
        ConfigError::new(
            file,
            self.key,
            format!("a plausible value ({}; --strict)", self.usual),
            self.found,
        )
    }
}

const NS: Ps = PS_PER_NS;

/// How many times the raw rate of its PCIe link a NIC port may run before it is implausible:
/// real single-port NICs run up to about 1.6 times it (a ConnectX-6 HDR 200 Gb/s port on Gen3
/// x16, 126 Gb/s, without Socket Direct). Estimate.
const NIC_OVER_PCIE: f64 = 2.0;

/// Every warning of `cfg`, in a stable order (network, then each machine once, by name).
pub fn warnings(cfg: &Config) -> Vec<Warning> {
    let mut w = Vec::new();
    let dur = |w: &mut Vec<Warning>, key: String, v: Ps, (lo, hi): (Ps, Ps), usual| {
        let ns = |p: Ps| p as f64 / NS as f64;
        flag(w, key, (ns(v), "ns"), (ns(lo), ns(hi)), usual);
    };
    let n = &cfg.network;
    if n.switch_hops > 0 {
        dur(
            &mut w,
            "network.switch_latency_ns".into(),
            n.switch_latency,
            (50 * NS, 2_000 * NS),
            "50 ns to 2 us: InfiniBand switches ~100-230 ns, Ethernet ~0.3-1 us",
        );
    }
    dur(
        &mut w,
        "network.propagation_ns_per_m".into(),
        n.propagation_per_m,
        (3 * NS, 7 * NS),
        "3 to 7 ns/m: light in fibre or a signal in copper, ~5 ns/m",
    );
    let mut seen: Vec<&str> = Vec::new();
    for h in &cfg.hosts {
        let m = &h.machine;
        if seen.contains(&m.name.as_str()) {
            continue;
        }
        seen.push(&m.name);
        let k = |rest: &str| format!("machines.{}.{rest}", m.name);
        dur(
            &mut w,
            k("pcie.link_latency_ns"),
            m.pcie.link_latency,
            (NS, 500 * NS),
            "1 to 500 ns per link traversal (PHY and data link)",
        );
        for s in &m.sockets {
            dur(
                &mut w,
                k(&format!("sockets.{}.dram_latency_ns", s.name)),
                s.dram.latency,
                (30 * NS, 500 * NS),
                "30 to 500 ns",
            );
        }
        for r in &m.root_complexes {
            dur(
                &mut w,
                k(&format!("root_complexes.{}.latency_ns", r.name)),
                r.latency,
                (20 * NS, 2_000 * NS),
                "20 ns to 2 us per traversal",
            );
        }
        for s in &m.switches {
            dur(
                &mut w,
                k(&format!("switches.{}.latency_ns", s.name)),
                s.latency,
                (20 * NS, 1_000 * NS),
                "20 ns to 1 us port to port (PCIe switches ~100-150 ns)",
            );
        }
        for g in &m.gpus {
            dur(
                &mut w,
                k(&format!("gpus.{}.memcpy_launch_ns", g.name)),
                g.copy_engine.launch,
                (500 * NS, 50_000 * NS),
                "0.5 to 50 us for a cudaMemcpy call",
            );
        }
        for (key, c) in [("cpu.post_ns", m.cpu.post), ("cpu.poll_ns", m.cpu.poll)] {
            dur(
                &mut w,
                k(key),
                c,
                (5 * NS, 10_000 * NS),
                "5 ns to 10 us for a post or a poll",
            );
        }
        for nic in &m.nics {
            flag(
                &mut w,
                k(&format!("nics.{}.wire_rate_gbps", nic.name)),
                (gbits(nic.wire_rate), "Gb/s"),
                (1.0, 1_600.0),
                "1 to 1600 Gb/s per port (NDR 400, XDR 800; bits, not bytes)",
            );
            // A port far faster than the PCIe link that feeds it: no host could drive it (a
            // calibration that fitted the wire rate where something else binds).
            if let Some(l) = m.links.iter().find(|l| l.down == nic.name) {
                let pcie = gbits(crate::topology::pcie::raw_rate(l.generation, l.width));
                let wire = gbits(nic.wire_rate);
                if wire > NIC_OVER_PCIE * pcie {
                    w.push(Warning {
                        key: k(&format!("nics.{}.wire_rate_gbps", nic.name)),
                        found: format!(
                            "{wire} Gb/s on a PCIe Gen{} x{} link of {} Gb/s",
                            l.generation,
                            l.width,
                            pcie.round()
                        ),
                        usual: "at most twice the raw rate of the NIC's PCIe link: a port the \
                                host cannot feed (HDR 200 on Gen3 x16 is 1.6 times it)",
                    });
                }
            }
        }
        for s in &m.sockets {
            flag(
                &mut w,
                k(&format!("sockets.{}.dram_rate_gbps", s.name)),
                (gbits(s.dram.rate) / 8.0, "GB/s"),
                (5.0, 2_000.0),
                "5 to 2000 GB/s per socket",
            );
        }
    }
    w
}

/// Pushes a warning when `v` (in `unit`) lies outside `lo..=hi`.
fn flag(
    w: &mut Vec<Warning>,
    key: String,
    (v, unit): (f64, &str),
    (lo, hi): (f64, f64),
    usual: &'static str,
) {
    if !(lo..=hi).contains(&v) {
        w.push(Warning {
            key,
            found: format!("{v} {unit}"),
            usual,
        });
    }
}

fn gbits(r: Rate) -> f64 {
    r.bps() as f64 / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_configs_are_plausible_and_a_unit_slip_is_named() {
        let cfg = crate::config::parse(crate::config::DEFAULT_TOML, "default.toml").unwrap();
        assert_eq!(warnings(&cfg), vec![]);
        let slip = crate::config::DEFAULT_TOML.replacen(
            "switch_latency_ns = 130",
            "switch_latency_ns = 0.1",
            1,
        );
        assert_ne!(slip, crate::config::DEFAULT_TOML);
        let cfg = crate::config::parse(&slip, "slip.toml").unwrap();
        let w = warnings(&cfg);
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].key, "network.switch_latency_ns");
        assert!(
            w[0].to_string()
                .contains("0.1 ns is outside the usual range (50 ns to 2 us")
        );
        // A 1.6 Tb/s port (within the per-port range) on the NIC's Gen5 x16 link (504 Gb/s):
        // the host cannot feed it (issue #28: a calibration wrote one).
        let fast = crate::config::DEFAULT_TOML.replacen(
            "wire_rate_gbps = 400 ",
            "wire_rate_gbps = 1600 ",
            1,
        );
        assert_ne!(fast, crate::config::DEFAULT_TOML);
        let w = warnings(&crate::config::parse(&fast, "fast.toml").unwrap());
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].key.ends_with("nics.nic0.wire_rate_gbps"), "{w:?}");
        assert!(
            w[0].found.contains("PCIe Gen5 x16 link of 504 Gb/s"),
            "{w:?}"
        );
    }
}

//! `gdrsim nvbandwidth TESTCASE`: NVIDIA nvbandwidth's copy-engine testcases run on the
//! simulated machine and printed in nvbandwidth's layout, so a user can diff a simulated run
//! with a real one.
//!
//! nvbandwidth's command line (v0.8 nvbandwidth.cpp): `-b`/`--bufferSize` MiB (default 512),
//! `-i`/`--testSamples` (default 3: samples, of which the median is reported), the hidden
//! `--loopCount` (default 16: copies per sample), `-m`/`--useMean`, `-l`/`--list`; a testcase
//! is named by its key or its index. The testcases here are nvbandwidth's first six, with its
//! indices; the device-to-device ones copy between every GPU pair with peer access
//! ([`crate::scenario::peer`]: NVLink or PCIe peer-to-peer), `N/A` for the others.
//! The method is in [`measure`], the text in [`layout`]. The machine is one host of the config
//! (`--host`, default the first): its GPUs are the matrix columns.

pub mod layout;
pub mod measure;

use anyhow::Result;

use crate::config::{Config, ConfigError};
use crate::scenario;
use crate::study;

const CLI: &str = "command line";

/// The most copies per sample a run may ask for (`--loopCount`).
pub const MAX_LOOPS: u32 = 10_000;
/// The most samples a run may ask for (`-i`).
pub const MAX_SAMPLES: u32 = 1_000;
/// The largest buffer (MiB): 16 GiB, as the other commands' sizes.
pub const MAX_BUFFER_MIB: u64 = 16 << 10;

/// One of nvbandwidth's copy-engine testcases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Testcase {
    /// `host_to_device_memcpy_ce` (0): copies from pinned host memory into each GPU.
    HostToDevice,
    /// `device_to_host_memcpy_ce` (1): copies from each GPU into pinned host memory.
    DeviceToHost,
    /// `host_to_device_bidirectional_memcpy_ce` (2): the host-to-device copy, measured while a
    /// device-to-host copy runs on the same GPU.
    HostToDeviceBidir,
    /// `device_to_host_bidirectional_memcpy_ce` (3): the device-to-host copy, measured while a
    /// host-to-device copy runs on the same GPU.
    DeviceToHostBidir,
    /// `device_to_device_memcpy_read_ce` (4): for each GPU pair with peer access, the row GPU's
    /// copy engine reads the column GPU's buffer into its own (testcases_ce.cpp: the copy's
    /// destination context).
    DeviceToDeviceRead,
    /// `device_to_device_memcpy_write_ce` (5): for each GPU pair with peer access, the row GPU's
    /// copy engine writes its buffer into the column GPU's.
    DeviceToDeviceWrite,
    /// `device_to_device_bidirectional_memcpy_read_ce` (6): for each GPU pair with peer access,
    /// the row GPU reads the column GPU's buffer while the column GPU reads the row's, each by
    /// its own copy engine; both copies and their sum are reported.
    DeviceToDeviceBidirRead,
    /// `device_to_device_bidirectional_memcpy_write_ce` (7): as the read form, each GPU's copy
    /// engine writing into the other.
    DeviceToDeviceBidirWrite,
}

impl Testcase {
    /// In nvbandwidth's order (`createTestcases`): the position is its index.
    pub const ALL: [Testcase; 8] = [
        Testcase::HostToDevice,
        Testcase::DeviceToHost,
        Testcase::HostToDeviceBidir,
        Testcase::DeviceToHostBidir,
        Testcase::DeviceToDeviceRead,
        Testcase::DeviceToDeviceWrite,
        Testcase::DeviceToDeviceBidirRead,
        Testcase::DeviceToDeviceBidirWrite,
    ];

    /// nvbandwidth's key (testcase.h).
    pub fn key(self) -> &'static str {
        match self {
            Testcase::HostToDevice => "host_to_device_memcpy_ce",
            Testcase::DeviceToHost => "device_to_host_memcpy_ce",
            Testcase::HostToDeviceBidir => "host_to_device_bidirectional_memcpy_ce",
            Testcase::DeviceToHostBidir => "device_to_host_bidirectional_memcpy_ce",
            Testcase::DeviceToDeviceRead => "device_to_device_memcpy_read_ce",
            Testcase::DeviceToDeviceWrite => "device_to_device_memcpy_write_ce",
            Testcase::DeviceToDeviceBidirRead => "device_to_device_bidirectional_memcpy_read_ce",
            Testcase::DeviceToDeviceBidirWrite => "device_to_device_bidirectional_memcpy_write_ce",
        }
    }

    /// nvbandwidth's description (testcase.h), as `-l` prints it.
    pub fn description(self) -> &'static str {
        match self {
            Testcase::HostToDevice => "\tHost to device CE memcpy using cuMemcpyAsync",
            Testcase::DeviceToHost => "\tDevice to host CE memcpy using cuMemcpyAsync",
            Testcase::HostToDeviceBidir => {
                "\tA host to device copy is measured while a device to host copy is run simultaneously.\n\
                 \tOnly the host to device copy bandwidth is reported."
            }
            Testcase::DeviceToHostBidir => {
                "\tA device to host copy is measured while a host to device copy is run simultaneously.\n\
                 \tOnly the device to host copy bandwidth is reported."
            }
            Testcase::DeviceToDeviceRead => {
                "\tMeasures bandwidth of cuMemcpyAsync between each pair of accessible peers.\n\
                 \tRead tests launch a copy from the peer device to the target using the target's context."
            }
            Testcase::DeviceToDeviceWrite => {
                "\tMeasures bandwidth of cuMemcpyAsync between each pair of accessible peers.\n\
                 \tWrite tests launch a copy from the target device to the peer using the target's context."
            }
            Testcase::DeviceToDeviceBidirRead => {
                "\tMeasures bandwidth of cuMemcpyAsync between each pair of accessible peers.\n\
                 \tA copy in the opposite direction of the measured copy is run simultaneously but not measured.\n\
                 \tRead tests launch a copy from the peer device to the target using the target's context."
            }
            Testcase::DeviceToDeviceBidirWrite => {
                "\tMeasures bandwidth of cuMemcpyAsync between each pair of accessible peers.\n\
                 \tA copy in the opposite direction of the measured copy is run simultaneously but not measured.\n\
                 \tWrite tests launch a copy from the target device to the peer using the target's context."
            }
        }
    }

    /// The matrices the testcase prints, as (key suffix, title) (testcases_ce.cpp): one, under
    /// the key as it is, for all but the bidirectional device-to-device testcases, which print
    /// each copy's and then their sum.
    pub fn matrices(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Testcase::HostToDevice => &[("", "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)")],
            Testcase::DeviceToHost => &[("", "memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)")],
            Testcase::HostToDeviceBidir | Testcase::DeviceToHostBidir => {
                &[("", "memcpy CE CPU(row) <-> GPU(column) bandwidth (GB/s)")]
            }
            Testcase::DeviceToDeviceRead => {
                &[("", "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)")]
            }
            Testcase::DeviceToDeviceWrite => {
                &[("", "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)")]
            }
            Testcase::DeviceToDeviceBidirRead => &[
                (
                    "_read1",
                    "memcpy CE GPU(row) <-> GPU(column) Read1 bandwidth (GB/s)",
                ),
                (
                    "_read2",
                    "memcpy CE GPU(row) <-> GPU(column) Read2 bandwidth (GB/s)",
                ),
                (
                    "_total",
                    "memcpy CE GPU(row) <-> GPU(column) Total bandwidth (GB/s)",
                ),
            ],
            Testcase::DeviceToDeviceBidirWrite => &[
                (
                    "_write1",
                    "memcpy CE GPU(row) <-> GPU(column) Write1 bandwidth (GB/s)",
                ),
                (
                    "_write2",
                    "memcpy CE GPU(row) <-> GPU(column) Write2 bandwidth (GB/s)",
                ),
                (
                    "_total",
                    "memcpy CE GPU(row) <-> GPU(column) Total bandwidth (GB/s)",
                ),
            ],
        }
    }

    /// The measured copy's direction (true: host to device) and whether a copy the other way
    /// interferes; None for the device-to-device testcases.
    fn host_copies(self) -> Option<(bool, bool)> {
        match self {
            Testcase::HostToDevice => Some((true, false)),
            Testcase::DeviceToHost => Some((false, false)),
            Testcase::HostToDeviceBidir => Some((true, true)),
            Testcase::DeviceToHostBidir => Some((false, true)),
            _ => None,
        }
    }

    /// Whether it copies between GPUs (the device-to-device testcases).
    pub fn is_peer(self) -> bool {
        self.peer_copy().is_some()
    }

    /// How the device-to-device testcases copy; None for the host testcases.
    fn peer_copy(self) -> Option<scenario::peer::PeerCopy> {
        match self {
            Testcase::DeviceToDeviceRead | Testcase::DeviceToDeviceBidirRead => {
                Some(scenario::peer::PeerCopy::Read)
            }
            Testcase::DeviceToDeviceWrite | Testcase::DeviceToDeviceBidirWrite => {
                Some(scenario::peer::PeerCopy::Write)
            }
            _ => None,
        }
    }

    /// By key or by index, as nvbandwidth's `findTestcase`.
    pub fn parse(s: &str) -> Result<Testcase, ConfigError> {
        let by_index = s.parse::<usize>().ok().and_then(|i| Testcase::ALL.get(i));
        by_index
            .or_else(|| Testcase::ALL.iter().find(|t| t.key() == s))
            .copied()
            .ok_or_else(|| {
                let keys: Vec<&str> = Testcase::ALL.iter().map(|t| t.key()).collect();
                ConfigError::new(
                    CLI,
                    "TESTCASE",
                    format!(
                        "one of {} (or its index, 0 to {}; `--list` lists them)",
                        keys.join(", "),
                        Testcase::ALL.len() - 1
                    ),
                    format!("{s:?}"),
                )
            })
    }
}

/// What the command line asks.
#[derive(Clone, Debug)]
pub struct Args {
    /// The testcase to run (the positional TESTCASE, by key or index).
    pub testcase: Testcase,
    /// `-b`: the buffer of each copy, MiB.
    pub buffer_mib: u64,
    /// `-i`: samples.
    pub samples: u32,
    /// `--loopCount`: copies per sample.
    pub loops: u32,
    /// `-m`: the mean of the samples instead of the median.
    pub use_mean: bool,
    /// The host whose GPUs are measured (default: the config's first).
    pub host: Option<String>,
}

impl Args {
    /// nvbandwidth's defaults for `testcase`.
    pub fn new(testcase: Testcase) -> Args {
        Args {
            testcase,
            buffer_mib: layout::DEFAULT_BUFFER_MIB,
            samples: 3,
            loops: 16,
            use_mean: false,
            host: None,
        }
    }

    /// Refuses, before any work, what this mode cannot run.
    pub fn check(&self) -> Result<(), ConfigError> {
        let range = |key: &str, lo: u64, hi: u64, v: u64, what: &str| {
            if (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(ConfigError::new(
                    CLI,
                    key,
                    format!("{what} from {lo} to {hi}"),
                    v.to_string(),
                ))
            }
        };
        range(
            "-b",
            1,
            MAX_BUFFER_MIB,
            self.buffer_mib,
            "a buffer size in MiB",
        )?;
        range("-i", 1, MAX_SAMPLES.into(), self.samples.into(), "samples")?;
        range(
            "--loopCount",
            1,
            MAX_LOOPS.into(),
            self.loops.into(),
            "copies per sample",
        )
    }
}

/// `-l`: nvbandwidth's list of the testcases this mode knows, with their indices.
pub fn list() -> String {
    let cases: Vec<(usize, &str, &str)> = Testcase::ALL
        .iter()
        .enumerate()
        .map(|(i, t)| (i, t.key(), t.description()))
        .collect();
    format!("{}{}", layout::version(), layout::list(&cases))
}

/// The host a run measures.
fn host_index(cfg: &Config, name: Option<&str>) -> Result<usize, ConfigError> {
    let names: Vec<&str> = cfg.hosts.iter().map(|h| h.name.as_str()).collect();
    let found = match name {
        None => (!names.is_empty()).then_some(0),
        Some(n) => names.iter().position(|h| *h == n),
    };
    found.ok_or_else(|| {
        ConfigError::new(
            CLI,
            "--host",
            format!("one of the config's hosts ({})", names.join(", ")),
            name.unwrap_or("none").to_string(),
        )
    })
}

/// TLP by TLP, every TLP is an event: the config's own bound on that mode holds for copies of
/// `largest` bytes too.
fn tlp_bound(cfg: &Config, largest: u64) -> Result<(), ConfigError> {
    let tlp_max = crate::config::limits::MAX_TLP_GRANULAR;
    if cfg.sim.granularity.tlp() && largest > tlp_max {
        return Err(ConfigError::new(
            CLI,
            "-b",
            format!(
                "copies up to {} with sim.granularity = \"tlp\" (every TLP simulated), or \
                 granularity \"auto\"",
                crate::units::fmt_bytes(tlp_max)
            ),
            format!("copies of {}", crate::units::fmt_bytes(largest)),
        ));
    }
    Ok(())
}

/// The seed of one sample: the config's, mixed with the testcase and where the sample is.
fn sample_seed(cfg: &Config, a: &Args, at: &[u64]) -> u64 {
    let mut parts = vec![scenario::stable_hash(a.testcase.key())];
    parts.extend_from_slice(at);
    scenario::mix(cfg.seed, &parts)
}

/// The GB/s of every GPU of the host (one matrix row), as nvbandwidth reports them.
pub fn figures(cfg: &Config, a: &Args) -> Result<Vec<f64>> {
    a.check()?;
    let host = host_index(cfg, a.host.as_deref())?;
    let Some((h2d, bidir)) = a.testcase.host_copies() else {
        return Err(ConfigError::new(
            CLI,
            "TESTCASE",
            "a testcase between host and device memory (one row per GPU)",
            a.testcase.key(),
        )
        .into());
    };
    let size = a.buffer_mib << 20;
    // The interfering copy of a bidirectional testcase is twice the buffer.
    tlp_bound(cfg, if bidir { 2 * size } else { size })?;
    let cfg = measure::gpu_timeline(cfg);
    let topo = scenario::topology(&cfg);
    let gpus = cfg.hosts[host].machine.gpus.len();
    let mut row = Vec::with_capacity(gpus);
    for gpu in 0..gpus {
        let streams = host_streams(gpu, (h2d, bidir), size);
        let mut samples = Vec::with_capacity(a.samples as usize);
        for n in 0..a.samples {
            let seed = sample_seed(&cfg, a, &[host as u64, gpu as u64, n as u64]);
            let t = measure::sample(&cfg, &topo, host, &streams, a.loops, seed)?;
            samples.push(measure::bandwidth(size, a.loops, t)?);
        }
        row.push(measure::statistic(&samples, a.use_mean) * 1e-9);
    }
    Ok(row)
}

/// The streams of one GPU's sample of a host testcase: its copy `h2d` or back, and with
/// `bidir` the interfering copy the other way, twice the buffer.
fn host_streams(gpu: usize, (h2d, bidir): (bool, bool), size: u64) -> Vec<measure::Stream> {
    let mut streams = vec![measure::Stream { gpu, h2d, size }];
    if bidir {
        streams.push(measure::Stream {
            gpu,
            h2d: !h2d,
            size: 2 * size,
        });
    }
    streams
}

/// The copies of one GPU pair's sample of a device-to-device testcase (`both`: the
/// bidirectional ones). One way: read, the row GPU `i` pulls the column `j`'s buffer; write, it
/// pushes into the column's. Both ways: the column's buffer into the row's, and the row's into
/// the column's, each copy by its destination's engine (read) or its source's (write).
fn peer_copies(
    (i, j): (usize, usize),
    both: bool,
    how: scenario::peer::PeerCopy,
    size: u64,
) -> Vec<crate::gpu_copies::peer::Stream> {
    let copy = |src, dst| crate::gpu_copies::peer::Stream {
        src,
        dst,
        how,
        size,
    };
    match (both, how) {
        (true, _) => vec![copy(j, i), copy(i, j)],
        (false, scenario::peer::PeerCopy::Read) => vec![copy(j, i)],
        (false, _) => vec![copy(i, j)],
    }
}

/// The GB/s of every GPU pair of the host for a device-to-device testcase, `None` on the
/// diagonal and where the pair has no peer access (nvbandwidth skips them: `N/A`). A cell is
/// nvbandwidth's statistic over `-i` samples of one stream of copies. For the bidirectional
/// testcases, the first copy's matrix (the row GPU's side: the copy into it).
pub fn peer_figures(cfg: &Config, a: &Args) -> Result<Vec<Vec<Option<f64>>>> {
    Ok(peer_matrices(cfg, a)?.swap_remove(0))
}

/// Every matrix a device-to-device testcase prints: one, or for the bidirectional testcases
/// three (nvbandwidth's `doMemcpyVector` of a copy from the column GPU into the row GPU and
/// one from the row GPU into the column GPU, run at once: each copy's statistic, then their
/// sum).
pub fn peer_matrices(cfg: &Config, a: &Args) -> Result<Vec<Vec<Vec<Option<f64>>>>> {
    a.check()?;
    let host = host_index(cfg, a.host.as_deref())?;
    let Some(how) = a.testcase.peer_copy() else {
        return Err(ConfigError::new(
            CLI,
            "TESTCASE",
            "a device-to-device testcase",
            a.testcase.key(),
        )
        .into());
    };
    let size = a.buffer_mib << 20;
    tlp_bound(cfg, size)?;
    let cfg = measure::gpu_timeline(cfg);
    let topo = scenario::topology(&cfg);
    let gpus = cfg.hosts[host].machine.gpus.len();
    let h = &topo.hosts[host];
    // The bidirectional testcases print each copy's matrix and their sum.
    let both = a.testcase.matrices().len() == 3;
    let mut out = vec![vec![vec![None; gpus]; gpus]; if both { 3 } else { 1 }];
    let pairs: Vec<(usize, usize)> = (0..gpus)
        .flat_map(|i| (0..gpus).map(move |j| (i, j)))
        .filter(|&(i, j)| i != j && scenario::peer::peer_access(h, i, j))
        .collect();
    for (i, j) in pairs {
        let copies = peer_copies((i, j), both, how, size);
        let mut samples = vec![Vec::with_capacity(a.samples as usize); copies.len()];
        for n in 0..a.samples {
            let seed = sample_seed(&cfg, a, &[host as u64, i as u64, j as u64, n as u64]);
            let t = measure::peer_samples(&cfg, &topo, host, &copies, a.loops, seed)?;
            for (k, t) in t.into_iter().enumerate() {
                samples[k].push(measure::bandwidth(size, a.loops, t)?);
            }
        }
        let stats: Vec<f64> = samples
            .iter()
            .map(|s| measure::statistic(s, a.use_mean) * 1e-9)
            .collect();
        for (k, v) in stats.iter().enumerate() {
            out[k][i][j] = Some(*v);
        }
        if both {
            out[2][i][j] = Some(stats.iter().sum());
        }
    }
    Ok(out)
}

/// The runs the testcase makes: per GPU (or GPU pair) `-i` samples, each a run of its
/// streams' `WARMUP_COUNT + --loopCount` copies, named with their estimated events (all
/// samples') and memory (one sample's).
pub fn runs(cfg: &Config, a: &Args) -> Result<Vec<(String, u64, u64)>> {
    a.check()?;
    let host = host_index(cfg, a.host.as_deref())?;
    let size = a.buffer_mib << 20;
    let cfg = measure::gpu_timeline(cfg);
    let topo = scenario::topology(&cfg);
    let gpus = cfg.hosts[host].machine.gpus.len();
    let copies = u64::from(measure::WARMUP_COUNT) + u64::from(a.loops);
    let run = |label: String, plans: Vec<crate::plan::Plan>| {
        let flows: Vec<(&crate::plan::Plan, u64)> = plans.iter().map(|p| (p, copies)).collect();
        // One copy in flight per stream (measure's `run(1, ..)`).
        let (events, memory) = scenario::cost::fabric_run(&cfg, &flows, 1);
        (label, events.saturating_mul(u64::from(a.samples)), memory)
    };
    Ok(match (a.testcase.host_copies(), a.testcase.peer_copy()) {
        (Some((h2d, bidir)), _) => (0..gpus)
            .map(|gpu| {
                let streams = host_streams(gpu, (h2d, bidir), size);
                Ok(run(
                    format!("GPU {gpu}"),
                    measure::plans(&topo, host, &streams)?,
                ))
            })
            .collect::<Result<Vec<_>>>()?,
        (None, Some(how)) => {
            let both = a.testcase.matrices().len() == 3;
            let h = &topo.hosts[host];
            let pairs = (0..gpus).flat_map(|i| (0..gpus).map(move |j| (i, j)));
            pairs
                .filter(|&(i, j)| i != j && scenario::peer::peer_access(h, i, j))
                .map(|(i, j)| {
                    let copies = peer_copies((i, j), both, how, size);
                    let plans = crate::gpu_copies::peer::plans(&topo, host, &copies)?;
                    Ok(run(format!("GPUs {i} and {j}"), plans))
                })
                .collect::<Result<Vec<_>>>()?
        }
        (None, None) => Vec::new(),
    })
}

/// What the testcase is about to simulate, for the cost gate: its [`runs`], one after another.
pub fn work(cfg: &Config, a: &Args) -> Result<study::Work> {
    let runs = runs(cfg, a)?;
    let copies = u64::from(measure::WARMUP_COUNT) + u64::from(a.loops);
    let over = format!(
        "{} sample{} of {copies} copies of {} MiB",
        runs.len() as u64 * u64::from(a.samples),
        if runs.len() as u64 * u64::from(a.samples) == 1 {
            ""
        } else {
            "s"
        },
        a.buffer_mib
    );
    let cut = "fewer samples (-i), copies (--loopCount) or a smaller buffer (-b)";
    Ok(study::runs_work(
        &format!("a {} testcase", a.testcase.key()),
        over,
        &runs,
        cut,
        1,
    ))
}

/// Runs the testcase on the config's host and returns nvbandwidth's text.
pub fn run(cfg: &Config, a: &Args) -> Result<String> {
    let matrices: Vec<Vec<Vec<Option<f64>>>> = if a.testcase.is_peer() {
        peer_matrices(cfg, a)?
    } else {
        vec![vec![figures(cfg, a)?.into_iter().map(Some).collect()]]
    };
    let host = &cfg.hosts[host_index(cfg, a.host.as_deref())?];
    let mut out = layout::version();
    if a.buffer_mib < layout::DEFAULT_BUFFER_MIB {
        out.push_str(layout::SMALL_BUFFER_NOTE);
        out.push_str("\n\n");
    }
    let gpus: Vec<(&str, &str)> = host
        .machine
        .gpus
        .iter()
        .map(|g| (g.model.as_str(), g.name.as_str()))
        .collect();
    out.push_str(&layout::devices(&host.name, &gpus));
    out.push_str(&layout::running(a.testcase.key()));
    for ((suffix, title), rows) in a.testcase.matrices().iter().zip(&matrices) {
        let key = format!("{}{suffix}", a.testcase.key());
        out.push_str(&layout::matrix(&key, title, rows));
    }
    out.push_str(layout::closing());
    Ok(out)
}

/// `gdrsim nvbandwidth`: checks the arguments, loads the config and runs the testcase,
/// refused before any work where it costs more than `limits`.
pub fn command(
    config: Option<&std::path::Path>,
    a: &Args,
    limits: &study::Limits,
) -> Result<String> {
    a.check()?;
    let cfg = study::load_config(config)?;
    study::admit(&study::source_name(config), &work(&cfg, a)?, limits)?;
    run(&cfg, a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn testcases_by_key_or_index_as_nvbandwidth() {
        assert_eq!(Testcase::parse("0").unwrap(), Testcase::HostToDevice);
        assert_eq!(
            Testcase::parse("device_to_host_bidirectional_memcpy_ce").unwrap(),
            Testcase::DeviceToHostBidir
        );
        assert_eq!(Testcase::parse("5").unwrap(), Testcase::DeviceToDeviceWrite);
        let e = Testcase::parse("host_to_device_memcpy_sm").unwrap_err();
        assert!(e.to_string().contains("TESTCASE"), "{e}");
        assert_eq!(
            Testcase::parse("7").unwrap(),
            Testcase::DeviceToDeviceBidirWrite
        );
        assert!(Testcase::parse("8").is_err());
        assert!(Testcase::parse("-1").is_err());
    }

    #[test]
    fn refusals_name_the_option() {
        let a = Args {
            buffer_mib: 0,
            ..Args::new(Testcase::HostToDevice)
        };
        assert!(a.check().unwrap_err().to_string().contains("-b"));
        let a = Args {
            samples: 0,
            ..Args::new(Testcase::HostToDevice)
        };
        assert!(a.check().unwrap_err().to_string().contains("-i"));
    }

    /// `-l` lists the six testcases with nvbandwidth's indices and descriptions.
    #[test]
    fn list_has_nvbandwidths_indices() {
        let l = list();
        assert!(l.contains(
            "0, host_to_device_memcpy_ce:\n\tHost to device CE memcpy using cuMemcpyAsync\n\n"
        ));
        assert!(l.contains("3, device_to_host_bidirectional_memcpy_ce:\n\tA device to host copy is measured while a host to device copy is run simultaneously.\n\tOnly the device to host copy bandwidth is reported.\n\n"));
        assert!(l.contains("5, device_to_device_memcpy_write_ce:\n"));
    }

    /// The default machine (four H100 PCIe on Gen5 x16): one column per GPU, every H2D figure
    /// under the Gen5 x16 link's completion ceiling; bidirectional below unidirectional.
    #[test]
    fn default_machine_row() {
        let cfg = crate::config::parse(crate::config::DEFAULT_TOML, "default").unwrap();
        let quick = |t| Args {
            buffer_mib: 64,
            samples: 1,
            loops: 4,
            ..Args::new(t)
        };
        let h2d = figures(&cfg, &quick(Testcase::HostToDevice)).unwrap();
        assert_eq!(h2d.len(), 4);
        let ceiling = crate::topology::pcie::effective_read_rate(5, 16, 256, false).gbytes_per_s();
        for v in &h2d {
            assert!(
                *v < ceiling && *v > 0.5 * ceiling,
                "{v} GB/s, ceiling {ceiling}"
            );
        }
        let bidir = figures(&cfg, &quick(Testcase::HostToDeviceBidir)).unwrap();
        assert!(bidir[0] <= h2d[0], "bidir {} uni {}", bidir[0], h2d[0]);
    }
}

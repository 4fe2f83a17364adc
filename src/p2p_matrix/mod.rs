//! `gdrsim p2p-matrix`: every GPU pair of one host measured as CUDA's p2pBandwidthLatencyTest
//! measures it (NVIDIA/cuda-samples, Samples/5_Domain_Specific/p2pBandwidthLatencyTest), in its
//! output layout, so a simulated machine can be put beside a real run; with a CSV of every cell
//! and a heatmap.
//!
//! What is the sample's:
//! - Bandwidth: `repeat` (5) cudaMemcpyPeerAsync of `numElems` ints (40,000,000: 160 MB) on one
//!   stream, timed by events; GB/s = bytes x repeat / 1e9 / seconds. The diagonal is a copy
//!   within one GPU and counts its bytes twice (read and write). P2P=Disabled copies go through
//!   host memory; P2P=Enabled ones by peer writes (the source GPU's copy engine), or with
//!   `--p2p_read` also by peer reads (the destination's).
//! - Bidirectional: a copy each way at once, on two streams; GB/s counts both (on the diagonal,
//!   two copies within one GPU, each counted twice as above).
//! - Latency: 100 copies of one int4 (16 B); the GPU figure is the events' time per copy, the
//!   CPU figure the host's time per enqueue.
//! - A spin kernel holds each stream while its copies are enqueued, so the host's launch cost
//!   is off the GPU's timeline.
//!
//! What is the model's: the GPU timeline runs with the copy engines' launch and sync costs at
//! zero (as `gdrsim nvbandwidth` does), a stream's copies one after another; the CPU latency is
//! the simulated thread's busy time per copy with the config's launch cost. Both directions of
//! a bidirectional pair run in one fabric and share its links. Peer access is what the graph
//! allows (NVLink, or PCIe forwarding peer-to-peer both ways); pairs without it fall back to
//! staging, as the CUDA driver does, so their P2P=Enabled cells equal the Disabled ones.

mod cost;
pub mod heatmap;
pub mod layout;

use anyhow::Result;

use crate::config::{Config, ConfigError};
use crate::gpu_copies::peer::{self as measure, Stream};
use crate::scenario::{self, peer::PeerCopy};
use crate::study;
pub use cost::{first_pair_run, work};

/// The sample's default `numElems` (ints per bandwidth copy).
pub const DEFAULT_ELEMS: u64 = 40_000_000;
/// Copies per bandwidth cell (the sample's `repeat`).
pub const BW_REPEAT: u32 = 5;
/// Copies per latency cell.
pub const LAT_REPEAT: u32 = 100;
/// Bytes of a latency copy (one int4).
pub const LAT_BYTES: u64 = 16;

/// What the command line asks.
#[derive(Clone, Debug, Default)]
pub struct Args {
    /// The host whose GPUs are measured (by name; the config's first when absent).
    pub host: Option<String>,
    /// Ints per bandwidth copy (`--numElems`).
    pub elems: u64,
    /// Also the P2P-read matrices (`--p2p_read`).
    pub p2p_read: bool,
    /// Where to write the CSV of every cell.
    pub csv: Option<std::path::PathBuf>,
    /// Where to write the heatmap (SVG).
    pub chart: Option<std::path::PathBuf>,
}

/// A matrix's cells: `cells[i][j]` from GPU i (row) to GPU j (column).
pub type Cells = Vec<Vec<f64>>;

/// One matrix of the report.
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix {
    /// Its title as the sample prints it ("Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)").
    pub title: String,
    /// Short key for the CSV ("unidirectional_p2p_disabled").
    pub key: &'static str,
    /// The unit of its cells.
    pub unit: &'static str,
    /// `cells[i][j]`: from GPU i (row) to GPU j (column).
    pub cells: Vec<Vec<f64>>,
}

/// Everything the sample prints: the devices, peer access, and the matrices in its order
/// (latency matrices as GPU and CPU pairs).
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The host's name.
    pub host: String,
    /// Each GPU's model.
    pub gpus: Vec<String>,
    /// `access[i][j]`: whether GPU i can access GPU j as a peer.
    pub access: Vec<Vec<bool>>,
    /// Bandwidth matrices, then latency matrices (GPU, CPU per kind).
    pub matrices: Vec<Matrix>,
}

fn host_index(cfg: &Config, name: Option<&str>) -> Result<usize, ConfigError> {
    match name {
        None => Ok(0),
        Some(n) => cfg.hosts.iter().position(|h| h.name == n).ok_or_else(|| {
            let names: Vec<&str> = cfg.hosts.iter().map(|h| h.name.as_str()).collect();
            ConfigError::new(
                "command line",
                "--host",
                format!("one of the config's hosts ({})", names.join(", ")),
                format!("{n:?}"),
            )
        }),
    }
}

/// GB/s of `n` bytes in `t` picoseconds.
fn gbs(bytes: f64, t: crate::units::Ps) -> f64 {
    bytes / 1e9 / (t.max(1) as f64 / 1e12)
}

/// One cell of a unidirectional bandwidth matrix: [`BW_REPEAT`] copies of the stream on the
/// GPU timeline (`timeline`, `topo`: the config with the copy engines' host costs at zero, as
/// [`crate::gpu_copies::gpu_timeline`] makes it), in the sample's GB/s (a copy within
/// one GPU counts its bytes twice, read and write).
pub fn unidirectional(
    timeline: &Config,
    topo: &crate::topology::Topology,
    host: usize,
    s: Stream,
    seed: u64,
) -> Result<f64> {
    let (t, _) = measure::run(timeline, topo, host, &[s], BW_REPEAT, seed)?;
    let twice = if s.src == s.dst { 2.0 } else { 1.0 };
    Ok(gbs(twice * s.size as f64 * f64::from(BW_REPEAT), t[0]))
}

/// One cell of a bidirectional bandwidth matrix: the two streams at once, both copies' bytes
/// over the longer one's time (within one GPU each copy's read and write again, as the sample's
/// `gb *= 2` on the diagonal of its bidirectional matrix does).
pub fn bidirectional(
    timeline: &Config,
    topo: &crate::topology::Topology,
    host: usize,
    there: Stream,
    back: Stream,
    seed: u64,
) -> Result<f64> {
    let (t, _) = measure::run(timeline, topo, host, &[there, back], BW_REPEAT, seed)?;
    let longest = t.iter().copied().max().unwrap_or(0);
    let counted = if there.src == there.dst { 4.0 } else { 2.0 };
    Ok(gbs(
        counted * there.size as f64 * f64::from(BW_REPEAT),
        longest,
    ))
}

/// The seed of matrix `k`'s cell from GPU `i` to GPU `j` (each matrix has its own `k`).
fn cell_seed(cfg: &Config, k: u64, i: usize, j: usize) -> u64 {
    scenario::mix(cfg.seed, &[k, i as u64, j as u64])
}

/// The seed key of the Unidirectional P2P=Enabled (P2P Writes) matrix.
const UNI_WRITES: u64 = 2;
/// The seed key of the Bidirectional P2P=Enabled matrix.
const BIDIR_ENABLED: u64 = 5;

/// The P2P=Enabled bandwidth from GPU 0 to GPU 1 of the config's first host, one way or both
/// ways at once, with copies of `size` bytes: the cell a validation row compares (peer writes
/// where the pair has peer access, else staged, as the sample falls back).
pub fn first_pair(cfg: &Config, both_ways: bool, size: u64) -> Result<f64> {
    let (timeline, topo, there, back) = first_pair_streams(cfg, size)?;
    // The seeds `measure` gives those cells, so the figure is the one p2p-matrix prints.
    let seed = cell_seed(
        cfg,
        if both_ways { BIDIR_ENABLED } else { UNI_WRITES },
        0,
        1,
    );
    if both_ways {
        bidirectional(&timeline, &topo, 0, there, back, seed)
    } else {
        unidirectional(&timeline, &topo, 0, there, seed)
    }
}

/// What [`first_pair`] measures: the copy-engine timeline of `cfg`, its topology, and the
/// copies of `size` bytes from GPU 0 to GPU 1 of the first host and back, as its
/// P2P=Enabled cells copy them.
fn first_pair_streams(
    cfg: &Config,
    size: u64,
) -> Result<(Config, crate::topology::Topology, Stream, Stream)> {
    let timeline = crate::gpu_copies::gpu_timeline(cfg);
    let topo = scenario::topology(&timeline);
    if topo.hosts.first().map_or(0, |h| h.spec.gpus.len()) < 2 {
        anyhow::bail!("the config's first host has fewer than two GPUs");
    }
    let how = |a, b| match scenario::peer::peer_access(&topo.hosts[0], a, b) {
        true => PeerCopy::Write,
        false => PeerCopy::Staged,
    };
    let stream = |src, dst| Stream {
        src,
        dst,
        how: how(src, dst),
        size,
    };
    let (there, back) = (stream(0, 1), stream(1, 0));
    Ok((timeline, topo, there, back))
}

/// How a cell's copy moves: peer writes (or, with `read`, peer reads) where P2P is on and the
/// pair has peer access, else staged through host memory, as the sample falls back.
fn copy_kind(peer: bool, read: bool) -> PeerCopy {
    match (peer, read) {
        (false, _) => PeerCopy::Staged,
        (true, false) => PeerCopy::Write,
        (true, true) => PeerCopy::Read,
    }
}

/// The host `a` measures and its GPUs, refused where `--numElems` or the host cannot be run.
fn checked(cfg: &Config, a: &Args) -> Result<(usize, usize)> {
    let host = host_index(cfg, a.host.as_deref())?;
    if !(1..=1_000_000_000).contains(&a.elems) {
        return Err(ConfigError::new(
            "command line",
            "--numElems",
            "from 1 to 1000000000 ints per copy",
            a.elems.to_string(),
        )
        .into());
    }
    let gpus = cfg.hosts[host].machine.gpus.len();
    if gpus == 0 {
        return Err(ConfigError::new(
            "command line",
            "--host",
            "a host with GPUs",
            format!("{} has none", cfg.hosts[host].name),
        )
        .into());
    }
    Ok((host, gpus))
}

/// Measures every matrix on the config's host.
pub fn measure(cfg: &Config, a: &Args) -> Result<Report> {
    let (host, gpus) = checked(cfg, a)?;
    let timeline = crate::gpu_copies::gpu_timeline(cfg);
    let gpu_topo = scenario::topology(&timeline);
    let cpu_topo = scenario::topology(cfg);
    let h = &gpu_topo.hosts[host];
    let access: Vec<Vec<bool>> = (0..gpus)
        .map(|i| {
            (0..gpus)
                .map(|j| scenario::peer::peer_access(h, i, j))
                .collect()
        })
        .collect();
    let how = |i: usize, j: usize, p2p: bool, read: bool| copy_kind(p2p && access[i][j], read);
    let size = a.elems * 4;
    let seed = |k: u64, i: usize, j: usize| cell_seed(cfg, k, i, j);
    let cell = |f: &dyn Fn(usize, usize) -> Result<f64>| -> Result<Vec<Vec<f64>>> {
        (0..gpus)
            .map(|i| (0..gpus).map(|j| f(i, j)).collect())
            .collect()
    };
    let uni = |k: u64, p2p: bool, read: bool| {
        cell(&|i, j| {
            let s = Stream {
                src: i,
                dst: j,
                how: how(i, j, p2p, read),
                size,
            };
            unidirectional(&timeline, &gpu_topo, host, s, seed(k, i, j))
        })
    };
    let bidir = |k: u64, p2p: bool| {
        cell(&|i, j| {
            let there = Stream {
                src: i,
                dst: j,
                how: how(i, j, p2p, false),
                size,
            };
            let back = Stream {
                src: j,
                dst: i,
                how: how(j, i, p2p, false),
                size,
            };
            bidirectional(&timeline, &gpu_topo, host, there, back, seed(k, i, j))
        })
    };
    let latency = |k: u64, p2p: bool, read: bool| -> Result<(Cells, Cells)> {
        let mut gpu = vec![vec![0.0; gpus]; gpus];
        let mut cpu = vec![vec![0.0; gpus]; gpus];
        for i in 0..gpus {
            for j in 0..gpus {
                let s = Stream {
                    src: i,
                    dst: j,
                    how: how(i, j, p2p, read),
                    size: LAT_BYTES,
                };
                let (t, _) =
                    measure::run(&timeline, &gpu_topo, host, &[s], LAT_REPEAT, seed(k, i, j))?;
                let (_, busy) =
                    measure::run(cfg, &cpu_topo, host, &[s], LAT_REPEAT, seed(k + 1, i, j))?;
                gpu[i][j] = t[0] as f64 / 1e6 / f64::from(LAT_REPEAT);
                cpu[i][j] = busy as f64 / 1e6;
            }
        }
        Ok((gpu, cpu))
    };
    let m = |title: &str, key: &'static str, unit: &'static str, cells| Matrix {
        title: title.to_string(),
        key,
        unit,
        cells,
    };
    let mut matrices = vec![
        m(
            "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)",
            "unidirectional_p2p_disabled",
            "GB/s",
            uni(1, false, false)?,
        ),
        m(
            "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)",
            "unidirectional_p2p_writes",
            "GB/s",
            uni(UNI_WRITES, true, false)?,
        ),
    ];
    if a.p2p_read {
        matrices.push(m(
            "Unidirectional P2P=Enabled Bandwidth (P2P Reads) Matrix (GB/s)",
            "unidirectional_p2p_reads",
            "GB/s",
            uni(3, true, true)?,
        ));
    }
    matrices.push(m(
        "Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)",
        "bidirectional_p2p_disabled",
        "GB/s",
        bidir(4, false)?,
    ));
    matrices.push(m(
        "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)",
        "bidirectional_p2p_enabled",
        "GB/s",
        bidir(BIDIR_ENABLED, true)?,
    ));
    let mut lats = vec![(
        "P2P=Disabled Latency Matrix (us)",
        ("latency_p2p_disabled_gpu", "latency_p2p_disabled_cpu"),
        latency(6, false, false)?,
    )];
    lats.push((
        "P2P=Enabled Latency (P2P Writes) Matrix (us)",
        ("latency_p2p_writes_gpu", "latency_p2p_writes_cpu"),
        latency(8, true, false)?,
    ));
    if a.p2p_read {
        lats.push((
            "P2P=Enabled Latency (P2P Reads) Matrix (us)",
            ("latency_p2p_reads_gpu", "latency_p2p_reads_cpu"),
            latency(10, true, true)?,
        ));
    }
    for (title, (kg, kc), (g, c)) in lats {
        matrices.push(m(title, kg, "us", g));
        matrices.push(m(title, kc, "us", c));
    }
    Ok(Report {
        host: cfg.hosts[host].name.clone(),
        gpus: cfg.hosts[host]
            .machine
            .gpus
            .iter()
            .map(|g| g.model.clone())
            .collect(),
        access,
        matrices,
    })
}

/// `gdrsim p2p-matrix`: measures, writes the CSV and chart where asked, returns the text;
/// refused before any work where it costs more than `limits`.
pub fn command(
    config: Option<&std::path::Path>,
    a: &Args,
    limits: &study::Limits,
) -> Result<String> {
    let cfg = study::load_config(config)?;
    for (p, ext, key) in [(&a.csv, "csv", "--csv"), (&a.chart, "svg", "--chart")] {
        if let Some(p) = p
            && p.extension().and_then(|e| e.to_str()) != Some(ext)
        {
            return Err(ConfigError::new(
                "command line",
                key,
                format!("a .{ext} file"),
                p.display().to_string(),
            )
            .into());
        }
    }
    study::admit(&study::source_name(config), &work(&cfg, a)?, limits)?;
    let r = measure(&cfg, a)?;
    if let Some(p) = &a.csv {
        crate::report::atomic::write(p, layout::csv(&r).as_bytes())?;
    }
    if let Some(p) = &a.chart {
        crate::report::atomic::write(p, heatmap::svg(&r).as_bytes())?;
    }
    Ok(layout::text(&r))
}

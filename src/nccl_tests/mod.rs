//! `gdrsim nccl-tests all_reduce_perf [CONFIG] -b 8 -e 8G -f 2 -g 8`: NVIDIA nccl-tests'
//! collectives (all-reduce, all-gather, reduce-scatter, all-to-all, broadcast, sendrecv) run on
//! the simulated machine and printed in nccl-tests' layout (2.19.6), so a
//! simulated sweep and a measured one can be put side by side or read by the same scripts.
//!
//! What is nccl-tests' (`src/common.cu`, `src/*.cu`):
//! - Flags: `-b`/`-e` (sizes with an optional K, M or G suffix, binary units; default 32M
//!   each), `-f` (step factor: sizes multiply while it is above 1) or `-i` (step bytes, added;
//!   default 1M), `-g` (GPUs per process, default 1), `-n` iterations (20), `-w` warm-up
//!   iterations (1), `-d` type (float), `-o` reduction (sum), `-c` validation (1: `#wrong` is
//!   printed, 0: `N/A`; sendrecv's in-place is never checked: `N/A`), `-r` a broadcast's root
//!   (0; -1: every rank in turn, a whole sweep each; the other tests print root -1).
//! - Sizes: from `-b` while at most `-e`; per size, count = size / type size; all-reduce,
//!   broadcast and sendrecv print count x type size; all-gather, reduce-scatter and all-to-all
//!   a per-rank count rounded down to a multiple of 16 bytes' worth of elements, (count /
//!   ranks) & ~(16 / type size - 1), and the whole buffer, that count x ranks x type size.
//! - Figures: time in µs per collective, algbw = bytes / time / 1e9 (the size printed),
//!   busbw = algbw x 2(n-1)/n (all-reduce), (n-1)/n (all-gather, reduce-scatter, all-to-all)
//!   or 1 (broadcast, sendrecv); the average bus bandwidth is the mean busbw over every row
//!   and both placements.
//!
//! What is the model's: one process per host of the config, `-g` GPUs each (GPUs 0..g-1), every
//! host taking part; each size is one point of a generated study whose scenario is the
//! collective (`collective = { kind, hosts = "all", gpus_per_host, channels, protocol }`,
//! NCCL's ring or tree, in the protocol NCCL_PROTO names or else NCCL's tuner picks per size;
//! NCCL's p2p for all-to-all and sendrecv; a broadcast's `-r -1` one scenario a root), on path
//! `auto` (NCCL's choice per GPU-NIC pair, PXN as
//! `NCCL_PXN_DISABLE` says, GPUDirect up to `NCCL_NET_GDR_LEVEL`). The time printed is the
//! point's mean completion time over its jittered repeats (`[sim]` of the config), which are
//! all that runs (no noise-free run: nothing printed comes from it); out-of-place
//! and in-place print the same figures (the model moves the same bytes); `-n` and `-w` are
//! printed, not simulated; a size of 0 bytes (all-gather and reduce-scatter below 16 bytes a
//! rank) is not simulated and prints zeros. Sizes 1 B and above are simulated, up to 16 GiB.

mod env;
pub mod layout;

pub use env::{NCCL_VARS, Nccl};

use anyhow::{Context, Result};

use crate::config::collective::{Algorithm, CollectiveKind, Protocol};
use crate::config::{Config, ConfigError};
use crate::scenario;
use crate::study;

const CLI: &str = "command line";

/// The built-in machine: configs/collectives.toml (two DGX H100-class nodes), whose `[sim]`,
/// network, machines and hosts a run takes (its sweep and scenarios are replaced).
pub const DEFAULT_TOML: &str = include_str!("../../configs/collectives.toml");
/// How errors and the header name the built-in machine.
pub const DEFAULT_NAME: &str = "<built-in 2 x DGX H100>";

/// The most sizes one run may sweep.
pub const MAX_SIZES: usize = 1024;

/// The nccl-tests programs this command runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Test {
    /// all_reduce_perf.
    AllReduce,
    /// all_gather_perf.
    AllGather,
    /// reduce_scatter_perf.
    ReduceScatter,
    /// alltoall_perf.
    AllToAll,
    /// broadcast_perf.
    Broadcast,
    /// sendrecv_perf.
    SendRecv,
}

impl Test {
    /// Every test with its program name.
    pub const ALL: [(&'static str, Test); 6] = [
        ("all_reduce_perf", Test::AllReduce),
        ("all_gather_perf", Test::AllGather),
        ("reduce_scatter_perf", Test::ReduceScatter),
        ("alltoall_perf", Test::AllToAll),
        ("broadcast_perf", Test::Broadcast),
        ("sendrecv_perf", Test::SendRecv),
    ];

    /// nccl-tests programs the model has no collective for yet.
    pub const NOT_YET: [&'static str; 5] = [
        "alltoallv_perf",
        "reduce_perf",
        "gather_perf",
        "scatter_perf",
        "hypercube_perf",
    ];

    /// The test of program name `s`, or an error: "not modelled yet" for nccl-tests' other
    /// programs, the list of programs for anything else.
    pub fn parse(s: &str) -> Result<Test, ConfigError> {
        if let Some(&(_, t)) = Test::ALL.iter().find(|(n, _)| *n == s) {
            return Ok(t);
        }
        let names: Vec<&str> = Test::ALL.iter().map(|(n, _)| *n).collect();
        let expected = format!("one of {}", names.join(", "));
        let found = if Test::NOT_YET.contains(&s) {
            format!(
                "{s}, which is not modelled yet (NCCL's ring and tree collectives, all-to-all \
                 and sendrecv are)"
            )
        } else {
            format!("{s:?}")
        };
        Err(ConfigError::new(CLI, "TEST", expected, found))
    }

    /// The program's name.
    pub fn program(self) -> &'static str {
        Test::ALL.iter().find(|t| t.1 == self).map_or("", |t| t.0)
    }

    /// The collective it runs.
    pub fn kind(self) -> CollectiveKind {
        match self {
            Test::AllReduce => CollectiveKind::AllReduce,
            Test::AllGather => CollectiveKind::AllGather,
            Test::ReduceScatter => CollectiveKind::ReduceScatter,
            Test::AllToAll => CollectiveKind::AllToAll,
            Test::Broadcast => CollectiveKind::Broadcast,
            Test::SendRecv => CollectiveKind::SendRecv,
        }
    }
}

/// nccl-tests' types (`test_typenames`) and their sizes.
pub const TYPES: [(&str, u64); 12] = [
    ("int8", 1),
    ("uint8", 1),
    ("int32", 4),
    ("uint32", 4),
    ("int64", 8),
    ("uint64", 8),
    ("half", 2),
    ("float", 4),
    ("double", 8),
    ("bfloat16", 2),
    ("f8e4m3", 1),
    ("f8e5m2", 1),
];

/// nccl-tests' reductions (`test_opnames`).
pub const OPS: [&str; 6] = ["sum", "prod", "max", "min", "avg", "mulsum"];

/// The command line as typed: every figure as text, parsed (and refused, naming its flag) by
/// [`Args::resolve`].
#[derive(Clone, Debug, Default)]
pub struct Args {
    /// The program ("all_reduce_perf").
    pub test: String,
    /// `-b`.
    pub min_bytes: Option<String>,
    /// `-e`.
    pub max_bytes: Option<String>,
    /// `-i`.
    pub step_bytes: Option<String>,
    /// `-f`.
    pub step_factor: Option<String>,
    /// `-g`.
    pub gpus: Option<String>,
    /// `-n`.
    pub iters: Option<String>,
    /// `-w`.
    pub warmup: Option<String>,
    /// `-d`.
    pub dtype: Option<String>,
    /// `-o`.
    pub op: Option<String>,
    /// `-c`.
    pub check: Option<String>,
    /// `-r`.
    pub root: Option<String>,
    /// NCCL variables: the environment's `NCCL_*` ones, then `--env NAME=VALUE` (later wins).
    pub env: Vec<(String, String)>,
}

/// One size of the sweep as nccl-tests prints it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    /// The size column: the bytes the collective moves (its buffer, the simulated size).
    pub bytes: u64,
    /// The count column (elements per rank's call).
    pub count: u64,
}

/// The run, resolved from the command line before any work.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The program.
    pub test: Test,
    /// The header's figures.
    pub header: layout::Header,
    /// `-d` and its size.
    pub dtype: (&'static str, u64),
    /// `-o` (all-gather, all-to-all and broadcast print `none`).
    pub op: &'static str,
    /// `-r`: a broadcast's root rank, or -1 for every rank in turn (nccl-tests' default 0);
    /// checked against the ranks with the machine.
    pub root: i64,
    /// `-b` to `-e` by `-f` or `-i`, before the per-collective rounding.
    pub raw_sizes: Vec<u64>,
    /// NCCL's settings.
    pub nccl: Nccl,
}

/// nccl-tests' `parsesize`: a number (decimals allowed) and an optional K, M or G (binary units;
/// only the first letter after the number counts), in bytes rounded down.
pub fn parse_size(flag: &str, s: &str) -> Result<u64, ConfigError> {
    let bad = || {
        ConfigError::new(
            CLI,
            flag,
            "a size in bytes, with an optional K, M or G suffix (binary units: 1M = 1048576)",
            format!("{s:?}"),
        )
    };
    let t = s.trim();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, rest) = t.split_at(end);
    let value: f64 = num.parse().map_err(|_| bad())?;
    let unit = match rest.trim_start().chars().next() {
        None => 1u64,
        Some('K' | 'k') => 1 << 10,
        Some('M' | 'm') => 1 << 20,
        Some('G' | 'g') => 1 << 30,
        Some(_) => return Err(bad()),
    };
    let bytes = value * unit as f64;
    if !bytes.is_finite() || bytes > u64::MAX as f64 {
        return Err(bad());
    }
    Ok(bytes as u64)
}

/// An integer flag (decimal, or hexadecimal after 0x) within `lo..=hi`.
fn parse_int(flag: &str, s: &str, lo: i64, hi: i64, what: &str) -> Result<i64, ConfigError> {
    let t = s.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => i64::from_str_radix(h, 16).ok(),
        None => t.parse::<i64>().ok(),
    };
    match parsed {
        Some(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => Err(ConfigError::new(
            CLI,
            flag,
            format!("{what} from {lo} to {hi}"),
            format!("{s:?}"),
        )),
    }
}

/// nccl-tests' sweep: from `min` while at most `max`, times `factor` where it is above 1, else
/// plus `step`.
pub fn sizes(min: u64, max: u64, factor: u64, step: u64) -> Result<Vec<u64>, ConfigError> {
    if factor > 1 && min == 0 {
        return Err(ConfigError::new(
            CLI,
            "-b",
            "a first size above 0 with -f (0 times the factor stays 0)",
            "0",
        ));
    }
    if factor <= 1 && step == 0 {
        return Err(ConfigError::new(
            CLI,
            "-i",
            "a step above 0 bytes (or -f above 1)",
            "0",
        ));
    }
    let mut out = Vec::new();
    let mut size = min;
    while size <= max {
        if out.len() == MAX_SIZES {
            return Err(ConfigError::new(
                CLI,
                "-b/-e/-f/-i",
                format!("at most {MAX_SIZES} sizes"),
                format!("more from {min} to {max}"),
            ));
        }
        out.push(size);
        let next = if factor > 1 {
            size.checked_mul(factor)
        } else {
            size.checked_add(step)
        };
        match next {
            Some(n) => size = n,
            None => break,
        }
    }
    Ok(out)
}

/// Per size of the sweep, what nccl-tests prints for `test` over `ranks` ranks of `dtype`
/// bytes an element (`setupArgs` and the collectives' `GetCollByteCount`).
pub fn row_sizes(test: Test, raw: &[u64], dtype: u64, ranks: u64) -> Vec<Size> {
    raw.iter()
        .map(|&size| {
            let count = size / dtype;
            match test {
                Test::AllReduce | Test::Broadcast | Test::SendRecv => Size {
                    bytes: count * dtype,
                    count,
                },
                // All-to-all's per-peer count is rounded as all-gather's per-rank one
                // (`AlltoAllGetCollByteCount`).
                Test::AllGather | Test::ReduceScatter | Test::AllToAll => {
                    let base = (count / ranks) & !(16 / dtype - 1);
                    Size {
                        bytes: base * ranks * dtype,
                        count: base,
                    }
                }
            }
        })
        .collect()
}

impl Args {
    /// Parses and checks every flag, refusing (naming the flag) what nccl-tests or the model
    /// cannot run; the machine's own bounds (`-g`) are checked with the config.
    pub fn resolve(&self) -> Result<Plan, ConfigError> {
        let test = Test::parse(&self.test)?;
        let size = |flag: &str, v: &Option<String>, default: u64| {
            v.as_deref().map_or(Ok(default), |s| parse_size(flag, s))
        };
        let min = size("-b", &self.min_bytes, 32 << 20)?;
        let max = size("-e", &self.max_bytes, 32 << 20)?;
        let step = size("-i", &self.step_bytes, 1 << 20)?;
        if min > max {
            return Err(ConfigError::new(
                CLI,
                "-b/-e",
                "-b at most -e (nccl-tests: invalid sizes for 'minbytes' and 'maxbytes')",
                format!("{min} > {max}"),
            ));
        }
        let largest = crate::config::limits::MAX_MESSAGE;
        if max > largest {
            return Err(ConfigError::new(
                CLI,
                "-e",
                format!("at most {largest} bytes (16G, the largest size gdrsim simulates)"),
                max.to_string(),
            ));
        }
        let int = |flag: &str, v: &Option<String>, default: i64, lo: i64, hi: i64, what: &str| {
            v.as_deref()
                .map_or(Ok(default), |s| parse_int(flag, s, lo, hi, what))
        };
        let factor = int("-f", &self.step_factor, 1, 0, 1 << 20, "a step factor")? as u64;
        let gpus = int("-g", &self.gpus, 1, 1, 1024, "GPUs per host")? as u32;
        let iters = int("-n", &self.iters, 20, 1, 1 << 30, "iterations")?;
        let warmup = int("-w", &self.warmup, 1, 0, 1 << 30, "warm-up iterations")?;
        let check = int("-c", &self.check, 1, 0, 1 << 30, "validation rounds")?;
        let root = int(
            "-r",
            &self.root,
            0,
            -1,
            1 << 20,
            "a root rank (-1: every rank)",
        )?;
        let dtype = match self.dtype.as_deref().map(str::trim) {
            None => ("float", 4),
            Some(d) => *TYPES.iter().find(|t| t.0 == d).ok_or_else(|| {
                let names: Vec<&str> = TYPES.iter().map(|t| t.0).collect();
                ConfigError::new(
                    CLI,
                    "-d",
                    format!("one of nccl-tests' types ({})", names.join(", ")),
                    format!("{d:?}"),
                )
            })?,
        };
        let op = match self.op.as_deref().map(str::trim) {
            None => "sum",
            Some(o) => *OPS.iter().find(|&&n| n == o).ok_or_else(|| {
                ConfigError::new(
                    CLI,
                    "-o",
                    format!("one of nccl-tests' reductions ({})", OPS.join(", ")),
                    format!("{o:?}"),
                )
            })?,
        };
        let raw_sizes = sizes(min, max, factor, step)?;
        let nccl = Nccl::from_vars(&self.env)?;
        Ok(Plan {
            test,
            header: layout::Header {
                program: test.program().to_string(),
                gpus,
                min_bytes: min,
                max_bytes: max,
                step: if factor > 1 {
                    (factor, true)
                } else {
                    (step, false)
                },
                warmup,
                iters,
                validation: check,
            },
            dtype,
            op: if matches!(test, Test::AllGather | Test::AllToAll | Test::Broadcast) {
                "none"
            } else {
                op
            },
            root,
            raw_sizes,
            nccl,
        })
    }
}

/// The config the run simulates: `source`'s `[sim]`, `[network]`, machines and hosts, with
/// NCCL's settings in `[sim]`, the sizes in `[sweep]` on path `auto`, and the collective over
/// every host (`channels`: a count, or NCCL's default where None) as its scenarios, one per
/// root of `roots` (None: no root, a kind without one).
fn study_config(
    (text, file): (&str, &str),
    plan: &Plan,
    sizes: &[u64],
    (gpus, channels): (Option<u32>, Option<u32>),
    roots: &[Option<u32>],
) -> Result<Config, ConfigError> {
    let mut doc: toml::Table = match toml::from_str(text) {
        Ok(d) => d,
        // The config's own parser words the syntax error.
        Err(_) => {
            return Err(crate::config::parse(text, file).err().unwrap_or_else(|| {
                ConfigError::new(file, "", "a TOML document", "one toml could not read")
            }));
        }
    };
    for k in ["sweep", "output", "scenarios"] {
        doc.remove(k);
    }
    let sim = doc
        .entry("sim")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    if let toml::Value::Table(sim) = sim {
        if let Some(pxn) = plan.nccl.pxn {
            sim.insert("pxn".into(), pxn.into());
        }
        if let Some((_, Some(level), c2c)) = &plan.nccl.gdr_level {
            sim.insert("net_gdr_level".into(), level.name().into());
            sim.insert("net_gdr_c2c".into(), (*c2c).into());
        }
        if let Some(read) = plan.nccl.gdr_read {
            sim.insert("net_gdr_read".into(), read.name().into());
        }
    }
    // NCCL_IB_QPS_PER_CONNECTION: read where the fabric has shared spines (the single-switch
    // fabric refuses the key: its paths are private, so QPs change nothing there).
    if let (Some(q), Some(toml::Value::Table(net))) =
        (plan.nccl.qps_per_connection, doc.get_mut("network"))
    {
        let two_tier = net
            .get("fabric")
            .and_then(|f| f.as_str())
            .is_some_and(|f| f != "single-switch");
        if two_tier {
            net.insert("qps_per_connection".into(), i64::from(q).into());
        }
    }
    let mut sweep = toml::Table::new();
    sweep.insert(
        "sizes".into(),
        toml::Value::Array(sizes.iter().map(|&s| (s as i64).into()).collect()),
    );
    sweep.insert(
        "paths".into(),
        toml::Value::Array(vec![plan.nccl.path().into()]),
    );
    sweep.insert("ops".into(), toml::Value::Array(vec!["write_imm".into()]));
    doc.insert("sweep".into(), sweep.into());
    let mut output = toml::Table::new();
    output.insert("charts".into(), toml::Value::Array(Vec::new()));
    doc.insert("output".into(), output.into());
    let mut coll = toml::Table::new();
    coll.insert("kind".into(), plan.test.kind().name().into());
    coll.insert("hosts".into(), "all".into());
    coll.insert(
        "protocol".into(),
        plan.nccl.protocol.unwrap_or(Protocol::Auto).name().into(),
    );
    if let Some(a) = plan.nccl.algorithm {
        coll.insert("algorithm".into(), a.name().into());
    }
    if let Some(b) = plan.nccl.buffsize {
        coll.insert("buffsize".into(), (b as i64).into());
    }
    if let Some(g) = gpus {
        coll.insert("gpus_per_host".into(), i64::from(g).into());
    }
    coll.insert(
        "channels".into(),
        channels.map_or_else(|| "auto".into(), |c| i64::from(c).into()),
    );
    let scenarios = roots
        .iter()
        .map(|root| {
            let mut coll = coll.clone();
            let mut name = plan.test.program().to_string();
            if let Some(r) = root {
                coll.insert("root".into(), i64::from(*r).into());
                if roots.len() > 1 {
                    name = format!("{name} root {r}");
                }
            }
            let mut sc = toml::Table::new();
            sc.insert("name".into(), name.into());
            sc.insert("collective".into(), coll.into());
            toml::Value::Table(sc)
        })
        .collect();
    doc.insert("scenarios".into(), toml::Value::Array(scenarios));
    let text = toml::to_string(&doc)
        .map_err(|e| ConfigError::new(file, "", "a config gdrsim can rewrite", format!("{e}")))?;
    let cfg = crate::config::parse(&text, file)?;
    let topo = scenario::topology(&cfg);
    scenario::check_plans(&cfg, &topo)
        .and_then(|()| scenario::horizon::check(&cfg, &topo))
        .map_err(|(key, expected, found)| ConfigError::new(file, &key, expected, found))?;
    Ok(cfg)
}

/// The machine's checks of `-g`: at most the smallest host's GPUs, at least two ranks.
fn check_gpus(cfg: &Config, gpus: u32) -> Result<(), ConfigError> {
    let fewest = cfg
        .hosts
        .iter()
        .map(|h| h.machine.gpus.len())
        .min()
        .unwrap_or(0) as u32;
    if gpus > fewest {
        return Err(ConfigError::new(
            CLI,
            "-g",
            format!("1 to {fewest} (the GPUs of the config's smallest host)"),
            gpus.to_string(),
        ));
    }
    if cfg.hosts.len() as u32 * gpus < 2 {
        return Err(ConfigError::new(
            CLI,
            "-g",
            format!(
                "at least two ranks in all ({} host{} x -g)",
                cfg.hosts.len(),
                if cfg.hosts.len() == 1 { "" } else { "s" }
            ),
            gpus.to_string(),
        ));
    }
    Ok(())
}

/// A run ready to simulate: the study, its points, and what the output says of them.
pub struct Prepared {
    /// The plan from the command line.
    pub plan: Plan,
    /// The generated study.
    pub cfg: Config,
    /// Per size of the sweep, the row's size and count.
    pub rows: Vec<Size>,
    /// Per scenario of the study, the root column of its rows: a broadcast's root (each rank
    /// in turn for `-r -1`, a sweep each), -1 for the other kinds.
    pub roots: Vec<i32>,
    /// The channels the rings run (and whether NCCL's default).
    pub channels: (u32, bool),
    /// Where the machine came from.
    pub source: String,
}

/// Checks the command line and the machine and builds the study, before any simulation.
pub fn prepare(config: Option<&std::path::Path>, a: &Args) -> Result<Prepared> {
    // The command line first: a bad flag is named before the config is read.
    a.resolve()?;
    // Read as every command reads a config (size limit, UTF-8, stdin once).
    let (text, source) = match config {
        None => (DEFAULT_TOML.to_string(), DEFAULT_NAME.to_string()),
        Some(p) => crate::config::read_text(p)?,
    };
    prepare_text((&text, &source), a)
}

/// [`prepare`] of a config given as its text (and the name its errors give it).
pub fn prepare_text((text, source): (&str, &str), a: &Args) -> Result<Prepared> {
    let mut plan = a.resolve()?;
    match (plan.nccl.algorithm, plan.test.kind()) {
        // NCCL's all-to-all and sendrecv are its p2p: NCCL_ALGO does not apply.
        (_, CollectiveKind::AllToAll | CollectiveKind::SendRecv) => plan.nccl.algorithm = None,
        (Some(Algorithm::Tree), k) if k != CollectiveKind::AllReduce => {
            return Err(ConfigError::new(
                CLI,
                "NCCL_ALGO",
                format!(
                    "Ring, Ring,Tree or unset for {} (NCCL's tree runs all_reduce only)",
                    plan.test.program()
                ),
                "\"Tree\"",
            )
            .into());
        }
        _ => {}
    }
    let (text, source) = (text.to_string(), source.to_string());
    // The hosts and their GPUs come from the machine: read them from a first study at the
    // smallest size (every GPU of the smallest host, its channels NCCL's default), then
    // check -g and build the real one.
    let root0 = [(plan.test == Test::Broadcast).then_some(0)];
    let probe = study_config((&text, &source), &plan, &[1], (None, None), &root0)?;
    check_gpus(&probe, plan.header.gpus)?;
    let probe = study_config(
        (&text, &source),
        &plan,
        &[1],
        (Some(plan.header.gpus), None),
        &root0,
    )?;
    let Some(coll) = probe.scenarios[0]
        .workload
        .as_ref()
        .and_then(|w| w.collective.clone())
    else {
        anyhow::bail!("the generated scenario is not a collective");
    };
    let ranks = u64::from(coll.ranks());
    let roots: Vec<Option<u32>> = match (plan.test, plan.root) {
        (Test::Broadcast, -1) => (0..coll.ranks()).map(Some).collect(),
        (Test::Broadcast, r) if (0..ranks as i64).contains(&r) => vec![Some(r as u32)],
        (Test::Broadcast, r) => {
            return Err(ConfigError::new(
                CLI,
                "-r",
                format!(
                    "a rank from 0 to {} ({} ranks), or -1 for every rank in turn",
                    ranks - 1,
                    ranks
                ),
                r.to_string(),
            )
            .into());
        }
        _ => vec![None],
    };
    let rows = row_sizes(plan.test, &plan.raw_sizes, plan.dtype.1, ranks);
    let mut simulated: Vec<u64> = rows.iter().map(|r| r.bytes).filter(|&b| b > 0).collect();
    simulated.sort_unstable();
    simulated.dedup();
    if simulated.is_empty() {
        simulated.push(1);
    }
    let channels = plan.nccl.channels(coll.channels);
    let explicit = plan.nccl.min_channels.is_some() || plan.nccl.max_channels.is_some();
    let cfg = study_config(
        (&text, &source),
        &plan,
        &simulated,
        (Some(plan.header.gpus), explicit.then_some(channels)),
        &roots,
    )?;
    Ok(Prepared {
        plan,
        cfg,
        rows,
        roots: roots.iter().map(|r| r.map_or(-1, |r| r as i32)).collect(),
        channels: (channels, !explicit),
        source,
    })
}

/// What the run is about to simulate, for the cost gate: the study's points (as `run` would
/// simulate them, their noise-free runs included: an upper bound, as only their repeats run).
pub fn work(p: &Prepared) -> study::Work {
    let ids: Vec<usize> = (0..scenario::plan(&p.cfg).len()).collect();
    study::study_work(&p.cfg, &ids, study::threads(0))
}

/// One row of the output: its size, its root column and what nccl-tests prints for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    /// The size and count columns.
    pub size: Size,
    /// The root column.
    pub root: i32,
    /// Time, algbw and busbw.
    pub figures: layout::Figures,
}

/// The rows in nccl-tests' order: every size, for each root in turn.
pub type Rows = Vec<Row>;

/// One simulated size: its point and its jittered repeats (nccl-tests' time is their mean).
pub type Simulated = (scenario::Point, scenario::workload::Repeats);

/// Simulates every size: the points with their repeats, and the [`Rows`] (a 0-byte row, not
/// simulated, zeros). Only the repeats run: nothing printed comes from a point's noise-free
/// run ([`study::simulate_repeats`]).
pub fn simulate(p: &Prepared, quiet: bool) -> Result<(Vec<Simulated>, Rows)> {
    let points = scenario::plan(&p.cfg);
    let progress = crate::progress::Progress::new(points.len() as u64, quiet, "nccl-tests");
    let repeats = study::simulate_repeats(&p.cfg, &points, 0, &progress)?;
    progress.finish();
    let results: Vec<Simulated> = points.into_iter().zip(repeats).collect();
    let coll = p.cfg.scenarios[0]
        .workload
        .as_ref()
        .and_then(|w| w.collective.clone())
        .context("the generated scenario is not a collective")?;
    let ranks = coll.ranks();
    let (num, den) = scenario::collective::busbw_factor(coll.kind, ranks);
    let factor = num as f64 / den as f64;
    let figures = |scenario: usize, bytes: u64| -> layout::Figures {
        let found = results
            .iter()
            .find(|(pt, _)| pt.scenario == scenario && pt.size == bytes);
        let Some((_, s)) = found else {
            return layout::Figures {
                time_us: 0.0,
                algbw: 0.0,
                busbw: 0.0,
            };
        };
        let time_us = s.lat.mean_us;
        let algbw = if time_us > 0.0 {
            bytes as f64 / 1e9 / (time_us * 1e-6)
        } else {
            0.0
        };
        layout::Figures {
            time_us,
            algbw,
            busbw: algbw * factor,
        }
    };
    let rows = (p.roots.iter().enumerate())
        .flat_map(|(sc, &root)| {
            p.rows.iter().map(move |&size| Row {
                size,
                root,
                figures: figures(sc, size.bytes),
            })
        })
        .collect();
    Ok((results, rows))
}

/// The workload of the generated study's one scenario, the collective.
fn coll_workload(p: &Prepared) -> Option<&crate::config::Workload> {
    p.cfg.scenarios.first().and_then(|s| s.workload.as_ref())
}

/// Simulates every size and returns nccl-tests' text.
pub fn run(p: &Prepared, quiet: bool) -> Result<String> {
    let (results, rows) = simulate(p, quiet)?;
    let coll = p.cfg.scenarios[0]
        .workload
        .as_ref()
        .and_then(|w| w.collective.clone())
        .context("the generated scenario is not a collective")?;

    let plan = &p.plan;
    let mut devices = Vec::new();
    for (i, &h) in coll.hosts.iter().enumerate() {
        let host = &p.cfg.hosts[h];
        for g in 0..coll.gpus_per_host as usize {
            let model = &host.machine.gpus[g].model;
            devices.push(layout::Device {
                host: host.name.clone(),
                pid: 1000 + i as u32,
                device: g as u32,
                name: if model.starts_with("NVIDIA") {
                    model.clone()
                } else {
                    format!("NVIDIA {model}")
                },
            });
        }
    }
    let mut out = layout::header(&plan.header, &devices);
    out.push_str(&notes(p, &results));
    out.push_str(&layout::column_header());
    let mut sum = 0.0;
    // nccl-tests does not check sendrecv in place (`SendRecvInitData`).
    let checked = plan.header.validation != 0;
    let validated = [checked, checked && plan.test != Test::SendRecv];
    for r in &rows {
        let f = r.figures;
        sum += 2.0 * f.busbw;
        out.push_str(&layout::row(
            (r.size.bytes, r.size.count),
            (plan.dtype.0, plan.op, r.root),
            [f, f],
            validated,
        ));
    }
    let avg = sum / (2 * rows.len()).max(1) as f64;
    out.push_str(&layout::footer(plan.test.program(), avg));
    Ok(out)
}

/// The protocol of each run of sizes, "LL 8 B-512 KiB, LL128 1 MiB-64 MiB, Simple 128 MiB";
/// where NCCL's tuner also picks the algorithm, "Tree/LL 8 B-128 KiB, ..., Ring/Simple 1 GiB".
fn protocol_ranges(
    cfg: &crate::config::Config,
    c: &crate::config::collective::Collective,
    results: &[Simulated],
) -> String {
    let mut runs: Vec<((Algorithm, Protocol), u64, u64)> = Vec::new();
    // The first scenario's (a broadcast of every root runs one a root, alike).
    for (r, _) in results.iter().filter(|(r, _)| r.scenario == 0) {
        let net = scenario::tuner::Net::of(cfg, r.path);
        let s = scenario::collective::schedule(c, r.size, net);
        let p = (s.algorithm, s.protocol);
        match runs.last_mut() {
            Some(last) if last.0 == p => last.2 = r.size,
            _ => runs.push((p, r.size, r.size)),
        }
    }
    let both = c.algorithm == Algorithm::Auto && c.kind == CollectiveKind::AllReduce;
    runs.iter()
        .map(|&((al, p), a, b)| {
            let (a, b) = (crate::units::fmt_bytes(a), crate::units::fmt_bytes(b));
            let name = if both {
                format!("{}/{}", al.nccl_name(), p.nccl_name())
            } else {
                p.nccl_name().to_string()
            };
            if a == b {
                format!("{name} {a}")
            } else {
                format!("{name} {a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// gdrsim's `#` lines: what was simulated, NCCL's settings and the path the edges between
/// hosts took.
fn notes(p: &Prepared, results: &[Simulated]) -> String {
    let coll = p.cfg.scenarios[0]
        .workload
        .as_ref()
        .and_then(|w| w.collective.as_ref());
    let names: Vec<&str> = coll
        .map(|c| {
            c.hosts
                .iter()
                .map(|&h| p.cfg.hosts[h].name.as_str())
                .collect()
        })
        .unwrap_or_default();
    let n = &p.plan.nccl;
    let mut s = format!(
        "# gdrsim: simulated, not measured: {}, hosts {} x {} GPU{} = {} ranks\n",
        p.source,
        names.join(", "),
        p.plan.header.gpus,
        if p.plan.header.gpus == 1 { "" } else { "s" },
        names.len() as u32 * p.plan.header.gpus
    );
    let algorithm = coll.map_or(Algorithm::Ring, |c| c.algorithm);
    let auto =
        algorithm == Algorithm::Auto && coll.is_some_and(|c| c.kind == CollectiveKind::AllReduce);
    let p2p =
        coll.filter(|c| matches!(c.kind, CollectiveKind::AllToAll | CollectiveKind::SendRecv));
    let protocols = match (n.protocol, coll) {
        (_, Some(c)) if p2p.is_some() => format!(
            "protocol by size as NCCL's p2p picks it{}: {}",
            if n.protocol.is_some() {
                " (NCCL_PROTO not applied)"
            } else {
                ""
            },
            protocol_ranges(&p.cfg, c, results)
        ),
        (_, Some(c)) if auto => format!(
            "algorithm{} by size as NCCL's tuner picks {}: {}",
            if n.protocol.is_some() {
                ""
            } else {
                " and protocol"
            },
            if n.protocol.is_some() { "it" } else { "them" },
            protocol_ranges(&p.cfg, c, results)
        ),
        (Some(p), _) => format!("NCCL_PROTO {}", p.nccl_name()),
        (None, Some(c)) => format!(
            "protocol by size as NCCL's tuner picks it for the {}: {}",
            if algorithm == Algorithm::Tree {
                "tree"
            } else {
                "ring"
            },
            protocol_ranges(&p.cfg, c, results)
        ),
        (None, None) => "NCCL's tuner".into(),
    };
    let algo = match (algorithm, n.algorithm.is_some()) {
        _ if p2p.is_some() => "NCCL's p2p (ncclSend/ncclRecv: NCCL_ALGO does not apply)",
        (Algorithm::Tree, _) => "NCCL_ALGO Tree",
        (Algorithm::Auto, true) if auto => "NCCL_ALGO Ring,Tree",
        (Algorithm::Auto, false) if auto => "NCCL_ALGO unset (NCCL's tuner: Ring or Tree)",
        (_, true) => "NCCL_ALGO Ring",
        (_, false) => "NCCL_ALGO unset (the ring, NCCL's only algorithm here)",
    };
    let sendrecv = coll
        .filter(|c| c.kind == CollectiveKind::SendRecv)
        .map_or(String::new(), |c| {
            format!(
                ", a pair's bytes striped over up to {} of its {} p2p channels",
                c.p2p.per_peer, c.p2p.channels
            )
        });
    let buffsize = n.buffsize.map_or(String::new(), |b| {
        let steps = u64::from(scenario::collective::STEPS);
        format!(", NCCL_BUFFSIZE {b} (Simple steps of {} bytes)", b / steps)
    });
    s.push_str(&format!(
        "# gdrsim: {algo}, {protocols}; {} channels ({}){sendrecv}{buffsize}\n",
        p.channels.0,
        if p.channels.1 {
            "NCCL's default for this machine, an estimate"
        } else {
            "NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS"
        }
    ));
    let mut level = match &n.gdr_level {
        Some((v, _, _)) => format!("NCCL_NET_GDR_LEVEL {v}"),
        None => format!(
            "GPUDirect up to {} (NCCL_NET_GDR_LEVEL default)",
            p.cfg.sim.net_gdr_level.name()
        ),
    };
    if n.gdr_read.is_some() {
        level.push_str(&format!(
            ", GPUDirect reads {} (NCCL_NET_GDR_READ)",
            p.cfg.sim.net_gdr_read.name()
        ));
    }
    // The paths of the flows between hosts at the largest size (results.csv's
    // `effective_path` of those rows).
    let crossing: Vec<String> = match (results.last(), coll_workload(p)) {
        (Some((largest, _)), Some(w)) => {
            let topo = scenario::topology(&p.cfg);
            scenario::workload::crossing_paths(&p.cfg, &topo, largest, w)
        }
        _ => Vec::new(),
    };
    let path = match n.path() {
        "auto" => "path auto (NCCL's choice per GPU-NIC pair)",
        _ => "path nccl_host (GPUDirect off: NCCL's host path for every GPU)",
    };
    s.push_str(&format!(
        "# gdrsim: {path}: PXN {} ({}), {level}{}\n",
        if p.cfg.sim.pxn { "on" } else { "off" },
        match n.pxn {
            Some(on) => format!("NCCL_PXN_DISABLE {}", if on { 0 } else { 1 }),
            None if p.cfg.sim.pxn => "NCCL_PXN_DISABLE default".into(),
            None => "the config's [sim] pxn".into(),
        },
        if crossing.is_empty() {
            String::new()
        } else {
            format!("; edges between hosts ran as {}", crossing.join(", "))
        }
    ));
    if !n.ignored.is_empty() {
        s.push_str(&format!(
            "# gdrsim: not modelled, ignored: {}\n",
            n.ignored.join(" ")
        ));
    }
    s
}

/// `gdrsim nccl-tests`: checks the command line and the machine, builds the study, refuses it
/// before any work where it costs more than `limits`, and runs it.
pub fn command(
    config: Option<&std::path::Path>,
    a: &Args,
    limits: &study::Limits,
    quiet: bool,
) -> Result<String> {
    let p = prepare(config, a)?;
    study::admit(&p.source, &work(&p), limits)?;
    run(&p, quiet)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the command prints comes from the repeats alone, and they are the full points'
    /// repeats: on two DGX H100 (4 GPUs each, PXN's relays and the P2P transport both in the
    /// collective) the time of every size (1 KiB, 64 KiB and 4 MiB) is, bit for bit, the mean
    /// latency the full simulation of the same point reports, and the edges between hosts
    /// are named as its rows name them.
    #[test]
    fn the_repeats_alone_give_the_full_points_figures() {
        let text = "name = \"nt\"\nseed = 3\n[sim]\niterations = 2\nmin_iterations = 1\n\
                    [network]\nswitch_hops = 1\n[[machines]]\nname = \"dgx\"\n\
                    preset = \"dgx-h100\"\n[[hosts]]\nname = \"a\"\nmachine = \"dgx\"\n\
                    [[hosts]]\nname = \"b\"\nmachine = \"dgx\"\n";
        let args = Args {
            test: "all_reduce_perf".into(),
            min_bytes: Some("1K".into()),
            max_bytes: Some("64M".into()),
            step_factor: Some("64".into()),
            gpus: Some("4".into()),
            ..Default::default()
        };
        let p = prepare_text((text, "nt.toml"), &args).unwrap();
        let (lean, rows) = simulate(&p, true).unwrap();
        assert_eq!(lean.len(), 3);
        let points = scenario::plan(&p.cfg);
        let progress = crate::progress::Progress::new(points.len() as u64, true, "test");
        let full = study::simulate(&p.cfg, &points, 0, &progress).unwrap();
        for (((pt, r), s), row) in lean.iter().zip(&full).zip(&rows) {
            let f = &row.figures;
            assert_eq!((pt.size, row.size.bytes), (s.size_bytes, s.size_bytes));
            assert_eq!(
                r.lat.mean_us.to_bits(),
                s.lat.mean_us.to_bits(),
                "{}",
                s.size_bytes
            );
            assert_eq!(f.time_us.to_bits(), s.lat.mean_us.to_bits());
            assert!(r.events > 0 && !r.past_horizon);
        }
        let topo = scenario::topology(&p.cfg);
        let (largest, _) = lean.last().unwrap();
        let w = coll_workload(&p).unwrap();
        let named = scenario::workload::crossing_paths(&p.cfg, &topo, largest, w);
        let last = full.last().unwrap();
        let mut want: Vec<String> = Vec::new();
        for f in last.flow_rows.iter().filter(|f| f.sender.contains(" via ")) {
            let name = f.effective_path.name().to_string();
            if !want.contains(&name) {
                want.push(name);
            }
        }
        assert!(!want.is_empty());
        assert_eq!(named, want);
    }

    #[test]
    fn sizes_follow_parsesize_and_the_sweep() {
        assert_eq!(parse_size("-b", "8").unwrap(), 8);
        assert_eq!(parse_size("-b", "1M").unwrap(), 1 << 20);
        assert_eq!(parse_size("-b", "8G").unwrap(), 8 << 30);
        assert_eq!(parse_size("-b", "1.5k").unwrap(), 1536);
        assert_eq!(parse_size("-b", "4MB").unwrap(), 4 << 20);
        assert!(
            parse_size("-e", "x")
                .unwrap_err()
                .to_string()
                .contains("-e")
        );
        assert!(parse_size("-e", "-1").is_err());
        assert!(parse_size("-e", "3T").is_err());
        assert_eq!(sizes(8, 64, 2, 0).unwrap(), vec![8, 16, 32, 64]);
        assert_eq!(sizes(8, 70, 2, 0).unwrap(), vec![8, 16, 32, 64]);
        assert_eq!(sizes(10, 30, 1, 10).unwrap(), vec![10, 20, 30]);
        assert!(sizes(0, 30, 2, 0).is_err());
        assert!(sizes(1, 30, 1, 0).is_err());
    }

    /// setupArgs and GetCollByteCount: all-reduce keeps count x type size; all-gather and
    /// reduce-scatter round the per-rank count down to 16 bytes' worth.
    #[test]
    fn row_sizes_round_as_nccl_tests() {
        let ar = row_sizes(Test::AllReduce, &[8, 1 << 20, 7], 4, 16);
        assert_eq!(ar[0], Size { bytes: 8, count: 2 });
        assert_eq!(
            ar[1],
            Size {
                bytes: 1 << 20,
                count: 1 << 18
            }
        );
        assert_eq!(ar[2], Size { bytes: 4, count: 1 });
        let ag = row_sizes(Test::AllGather, &[8, 1024, 1 << 20], 4, 16);
        assert_eq!(ag[0], Size { bytes: 0, count: 0 });
        // 256 floats / 16 ranks = 16 a rank, a multiple of 4 floats (16 bytes).
        assert_eq!(
            ag[1],
            Size {
                bytes: 1024,
                count: 16
            }
        );
        let rs = row_sizes(Test::ReduceScatter, &[1000], 4, 3);
        // 250 / 3 = 83, rounded down to 80 (a multiple of 4).
        assert_eq!(
            rs[0],
            Size {
                bytes: 960,
                count: 80
            }
        );
    }

    #[test]
    fn nccl_variables_are_honoured_or_refused() {
        let v = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        let n = Nccl::from_vars(&v(&[("NCCL_ALGO", "ring"), ("NCCL_PROTO", "Simple")])).unwrap();
        assert!(n.pxn.is_none() && n.gdr_level.is_none());
        assert_eq!(n.algorithm, Some(Algorithm::Ring));
        let n = Nccl::from_vars(&v(&[("NCCL_ALGO", "Tree")])).unwrap();
        assert_eq!(n.algorithm, Some(Algorithm::Tree));
        let n = Nccl::from_vars(&v(&[("NCCL_ALGO", "Ring, tree")])).unwrap();
        assert_eq!(n.algorithm, Some(Algorithm::Auto));
        for bad in ["NVLS", "Tree,PAT", "^Ring", "allreduce:tree", ""] {
            let e = Nccl::from_vars(&v(&[("NCCL_ALGO", bad)])).unwrap_err();
            assert!(e.to_string().contains("NCCL_ALGO") && e.to_string().contains("Ring,Tree"));
        }
        let n = Nccl::from_vars(&v(&[("NCCL_PROTO", "ll128")])).unwrap();
        assert_eq!(n.protocol, Some(Protocol::Ll128));
        let e = Nccl::from_vars(&v(&[("NCCL_PROTO", "LL,LL128")])).unwrap_err();
        assert!(e.to_string().contains("NCCL_PROTO") && e.to_string().contains("single"));
        let n = Nccl::from_vars(&v(&[
            ("NCCL_PXN_DISABLE", "1"),
            ("NCCL_NET_GDR_LEVEL", "SYS"),
            ("NCCL_MAX_NCHANNELS", "4"),
            ("NCCL_DEBUG", "INFO"),
        ]))
        .unwrap();
        assert_eq!(n.pxn, Some(false));
        assert_eq!(
            n.gdr_level.as_ref().unwrap().1,
            Some(crate::topology::Affinity::Sys)
        );
        assert_eq!(n.channels(16), 4);
        assert_eq!(n.ignored, vec!["NCCL_DEBUG=INFO".to_string()]);
        let n = Nccl::from_vars(&v(&[("NCCL_MIN_NCHANNELS", "32")])).unwrap();
        assert_eq!(n.channels(16), 32);
        for (value, read) in [
            ("0", crate::config::GdrRead::Off),
            ("1", crate::config::GdrRead::On),
            ("-2", crate::config::GdrRead::Auto),
        ] {
            let n = Nccl::from_vars(&v(&[("NCCL_NET_GDR_READ", value)])).unwrap();
            assert_eq!(n.gdr_read, Some(read));
        }
        let n = Nccl::from_vars(&v(&[("NCCL_BUFFSIZE", "1048576")])).unwrap();
        assert_eq!(n.buffsize, Some(1 << 20));
        let e = Nccl::from_vars(&v(&[("NCCL_BUFFSIZE", "4096")])).unwrap_err();
        assert!(e.to_string().contains("NCCL_BUFFSIZE"), "{e}");
        let e = Nccl::from_vars(&v(&[("NCCL_NET_GDR_READ", "yes")])).unwrap_err();
        assert!(e.to_string().contains("NCCL_NET_GDR_READ"), "{e}");
        let off = Nccl::from_vars(&v(&[("NCCL_NET_GDR_LEVEL", "LOC")])).unwrap();
        assert_eq!(off.path(), "nccl_host");
        assert_eq!(n.path(), "auto");
        assert!(Nccl::from_vars(&v(&[("NCCL_NET_GDR_LEVEL", "NVL")])).is_err());
        assert!(Nccl::from_vars(&v(&[("NCCL_MAX_NCHANNELS", "0")])).is_err());
        // The later setting wins (--env after the environment).
        let n =
            Nccl::from_vars(&v(&[("NCCL_PXN_DISABLE", "1"), ("NCCL_PXN_DISABLE", "0")])).unwrap();
        assert_eq!(n.pxn, Some(true));
    }

    #[test]
    fn other_programs_are_refused_as_not_modelled_yet() {
        assert_eq!(Test::parse("alltoall_perf").unwrap(), Test::AllToAll);
        let e = Test::parse("reduce_perf").unwrap_err().to_string();
        assert!(e.contains("not modelled yet"), "{e}");
        assert_eq!(Test::parse("broadcast_perf").unwrap(), Test::Broadcast);
        assert_eq!(Test::parse("sendrecv_perf").unwrap(), Test::SendRecv);
        let e = Test::parse("foo").unwrap_err().to_string();
        assert!(e.contains("all_reduce_perf"), "{e}");
        assert_eq!(
            Test::parse("reduce_scatter_perf").unwrap(),
            Test::ReduceScatter
        );
    }
}

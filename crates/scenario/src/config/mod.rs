//! Loading a study: TOML text -> validated, typed [`Config`] (units parsed, names resolved,
//! defaults filled in). Nothing downstream sees TOML.
//!
//! Every machine parameter may be omitted; its default (and the measurement or datasheet it
//! comes from) is in [`defaults`]. configs/default.toml spells all of them out.

pub mod choice;
pub mod collective;
mod convert;
pub mod defaults;
pub mod device;
mod error;
pub mod limits;
pub mod network_preset;
mod options;
pub mod p2p_channels;
pub mod params;
pub mod plausible;
pub mod preset;
pub(crate) mod raw;
mod resolved;
mod scenarios;
pub use scenarios::{INTRA_OPS, INTRA_PATHS, intra_path_words};
pub mod section;
pub mod sweep;

use std::path::Path;

pub use error::ConfigError;
pub use options::*;
pub use raw::{SECTIONS, Section};
pub use resolved::to_toml;
pub use section::{Domain, ParamDoc};
pub use sweep::{Sweep, Variant};

use crate::topology::spec::{HostSpec, NetworkSpec};

/// The embedded default study (identical to configs/default.toml).
pub const DEFAULT_TOML: &str = include_str!("../../../../configs/default.toml");
/// The file name errors and reports give the embedded default study.
pub const DEFAULT_NAME: &str = "configs/default.toml (embedded)";

/// Chart options from the config's `[output]` table.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputOptions {
    /// Which charts to draw (`links` only where asked for).
    pub charts: Vec<ChartKind>,
    /// The image formats each chart is written in.
    pub formats: Vec<ImageFormat>,
    /// Chart width, in pixels.
    pub width_px: u32,
    /// Chart height, in pixels.
    pub height_px: u32,
    /// Message sizes for the stage-breakdown chart (small, medium, large). Sizes not in the
    /// sweep are replaced by the nearest swept size.
    pub breakdown_sizes: Vec<u64>,
    /// Message size for the scenario-comparison chart.
    pub compare_size: u64,
}

impl Default for OutputOptions {
    /// What a config without `[output]` gets.
    fn default() -> Self {
        OutputOptions {
            charts: defaults::CHARTS.to_vec(),
            formats: defaults::FORMATS.to_vec(),
            width_px: defaults::WIDTH_PX,
            height_px: defaults::HEIGHT_PX,
            breakdown_sizes: defaults::BREAKDOWN_SIZES.to_vec(),
            compare_size: defaults::COMPARE_SIZE,
        }
    }
}

/// How points are simulated: the config's `[sim]` table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SimConfig {
    /// Jittered iterations per point (latency statistics).
    pub iterations: u32,
    /// Iterations per point at least, whatever the size.
    pub min_iterations: u32,
    /// Payload bytes of a point's iterations at most (fewer iterations for large messages).
    pub iteration_budget_bytes: u64,
    /// Messages in flight in the bandwidth run (perftest's `-t`).
    pub stream_window: u32,
    /// Messages in the bandwidth run.
    pub stream_messages: u32,
    /// Payload bytes of the bandwidth run at most (at least 3 messages).
    pub stream_budget_bytes: u64,
    /// TLP by TLP up to `coalesce_above`, bulk transfers above (`auto`), or always (`tlp`).
    pub granularity: Granularity,
    /// Messages above this size, in bytes, move as bulk transfers (with `auto` granularity).
    pub coalesce_above: u64,
    /// When memory registration is paid: once in setup, per transfer, or through an LRU cache.
    pub registration: Registration,
    /// Draw the random delays (DRAM access jitter, CQ poll phases).
    pub jitter: bool,
    /// The GPUDirect receive flush: as NCCL decides (`auto`), always an RDMA Read, or none.
    pub flush: FlushMode,
    /// The farthest GPU-NIC class at which the `auto` path uses GPUDirect, as NCCL's
    /// `NCCL_NET_GDR_LEVEL`.
    pub net_gdr_level: Affinity,
    /// Whether the `auto` path also uses GPUDirect where the GPU reaches its NIC over
    /// NVLink-C2C and then PCIe on its own socket (NCCL's P2C path, `NCCL_NET_GDR_C2C`).
    pub net_gdr_c2c: bool,
    /// Whether the `auto` path's sending side reads GPU memory by GPUDirect (NCCL's
    /// `NCCL_NET_GDR_READ`).
    pub net_gdr_read: GdrRead,
    /// Whether the `auto` path relays a sending GPU's data through the NIC's nearest GPU over
    /// NVLink where NCCL's PXN would (`NCCL_PXN_DISABLE=0`, NCCL's default).
    pub pxn: bool,
    /// `registration = "lru"`: cache capacity and the buffers the workload cycles over.
    pub registration_cache_entries: u32,
    /// Buffers the workload cycles over (with the LRU cache).
    pub buffers: u32,
    /// `staged_pipelined`: chunk size and bounce buffers per side.
    pub chunk_bytes: u64,
    /// `staged_pipelined`: bounce buffers per side.
    pub pipeline_depth: u32,
    /// Op `send`: receive WQEs the receiving thread keeps posted (perftest's `rx_depth`), and
    /// the responder's RNR timer as the verbs encode it (`min_rnr_timer`, 0 to 31).
    pub recv_depth: u32,
    /// Op `send`: the RNR timer code (see [`rnr_timer_ps`]).
    pub min_rnr_timer: u32,
    /// Bulk transfers in flight at once from which, to the end of the run, a re-solve of their
    /// rates may wait (`sharing_wait_ppm`) to batch the starts and ends that follow; until
    /// then, every one is exact.
    pub exact_sharing_below: u32,
    /// How long such a re-solve waits: millionths of the transfers' mean span.
    pub sharing_wait_ppm: u32,
}

/// The RNR NAK timer of the verbs' `min_rnr_timer` code, in picoseconds (IBTA Architecture
/// Specification vol. 1, table 45 "Encoding for RNR NAK Timer Field": 1 is 0.01 ms, 12 is
/// 0.64 ms, 31 is 491.52 ms, and 0 means 655.36 ms).
pub fn rnr_timer_ps(code: u32) -> crate::units::Ps {
    const MS_X100: [u64; 32] = [
        65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024,
        1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
    ];
    // Hundredths of a millisecond = 10 µs each.
    MS_X100[(code & 31) as usize] * 10 * crate::units::PS_PER_US
}

#[cfg(test)]
mod tests {
    use super::rnr_timer_ps;
    use crate::units::PS_PER_US;

    #[test]
    fn rnr_timer_codes_follow_the_ibta_table() {
        assert_eq!(rnr_timer_ps(1), 10 * PS_PER_US);
        assert_eq!(rnr_timer_ps(12), 640 * PS_PER_US);
        assert_eq!(rnr_timer_ps(22), 20_480 * PS_PER_US);
        assert_eq!(rnr_timer_ps(31), 491_520 * PS_PER_US);
        assert_eq!(rnr_timer_ps(0), 655_360 * PS_PER_US);
    }
}

/// One end of a scenario, resolved to indices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// Index into the config's hosts.
    pub host: usize,
    /// Index into that host's machine's NICs.
    pub nic: usize,
    /// Index into that machine's GPUs: the GPU buffer (None: a host-only endpoint).
    pub gpu: Option<usize>,
    /// Socket of host buffers (bounce buffers, host-path buffers, queues).
    pub memory_socket: usize,
    /// A staged side's bounce buffer is pageable (malloc + ibv_reg_mr), not cudaMallocHost'd.
    pub pageable_bounce: bool,
}

/// One flow: a sender and a receiver with their own message stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    /// Where the data comes from.
    pub sender: Endpoint,
    /// Where the data goes.
    pub receiver: Endpoint,
    /// Its QP number: its index in its scenario. A leaf-spine fabric's ECMP hashes on it
    /// with the two ports, so each flow's route is fixed and reproducible.
    pub qp: u32,
}

impl FlowSpec {
    /// Whether both ends are on one host: a copy between two of its GPUs, no NIC taking part.
    pub fn is_intra(&self) -> bool {
        self.sender.host == self.receiver.host
    }
}

/// Flows that run together, started at the same time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioSpec {
    /// The scenario's name, as results.csv and the report show it ("PIX").
    pub name: String,
    /// At least one; a bidirectional flow is two, one each way.
    pub flows: Vec<FlowSpec>,
    /// The flows' names and the dependencies between their messages, where any flow waits
    /// for another; None where the flows are independent (all start at time 0).
    pub workload: Option<Workload>,
}

/// A scenario whose flows wait on flows: what gates each flow's messages (see
/// [`crate::scenario::workload`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    /// Per flow of the scenario, in flow order.
    pub flows: Vec<FlowDeps>,
    /// The collective the flows were generated from (`collective = {...}`): its schedule
    /// sets each size's message bytes, message counts, lags and reductions.
    pub collective: Option<collective::Collective>,
}

/// What gates one flow's messages in a [`Workload`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowDeps {
    /// Its name ("r0"), as `after` and the critical chain name it.
    pub name: String,
    /// Message k starts only when message k - lag of each of these flows (index into the
    /// scenario's flows, lag) has been delivered; no wait where k < lag.
    pub after: Vec<(usize, u32)>,
    /// A reduction on the sending GPU (at its `reduce_gbps`) between the gating deliveries and
    /// the post: the data received is combined with the local data before it is sent on.
    pub reduce: bool,
    /// Messages it carries; None: the sweep's iteration rules for the size.
    pub messages: Option<u32>,
    /// Where NCCL's PXN is on (path `auto` with `sim.pxn`, or `pxn`), the sender it would
    /// send from instead: an all-to-all's send to another node goes out through the NIC of the
    /// sender's node that is local to the GPU of the receiver's index (NCCL's
    /// `ncclTopoGetNetDev`, `NCCL_P2P_PXN_LEVEL` 2), relayed over NVLink by that NIC's GPU,
    /// so that it stays on the receiver's rail. None: it sends through its own NIC.
    pub pxn_sender: Option<Endpoint>,
}

impl ScenarioSpec {
    /// The first flow, whose message gives the point's latency breakdown.
    pub fn first(&self) -> &FlowSpec {
        &self.flows[0]
    }
}

/// A validated study: what to simulate (scenarios, paths, ops, sizes), on which hardware, how,
/// and what to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// The study's name (the default output folder is `output/<name>`).
    pub name: String,
    /// One line about the study, for the report.
    pub description: String,
    /// The seed every point's seed derives from.
    pub seed: u64,
    /// How points are simulated.
    pub sim: SimConfig,
    /// Message sizes of the sweep, in bytes.
    pub sizes: Vec<u64>,
    /// Data paths of the sweep.
    pub paths: Vec<PathKind>,
    /// RDMA operations of the sweep.
    pub ops: Vec<Op>,
    /// Chart options.
    pub output: OutputOptions,
    /// The network between the hosts.
    pub network: NetworkSpec,
    /// Every host, with its machine.
    pub hosts: Vec<HostSpec>,
    /// The scenarios, in config order.
    pub scenarios: Vec<ScenarioSpec>,
    /// `[sweep] vary`: the study once per combination of parameter values; None without.
    pub sweep: Option<Sweep>,
}

/// Reads and validates a config file; `-` reads standard input (named `<stdin>` in errors).
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let (text, file) = read_text(path)?;
    parse(&text, &file)
}

/// A config file's text and the name errors give it: `-` reads standard input (once per
/// process, `<stdin>`); at most [`MAX_CONFIG_BYTES`], UTF-8, else an error naming the file.
pub fn read_text(path: &Path) -> Result<(String, String), ConfigError> {
    use std::io::Read as _;
    let stdin = path.as_os_str() == "-";
    let file = if stdin {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    };
    let io = |e: std::io::Error| {
        ConfigError::new(
            &file,
            "",
            "a readable TOML file",
            format!("an I/O error: {e}"),
        )
    };
    // Read at most one byte past the limit: a config is text of kilobytes, and /dev/zero or a
    // wrong file must not be read until memory runs out.
    let mut bytes = Vec::new();
    if stdin {
        // Read once per process: a command may load its config twice (checks, then the run).
        static STDIN: std::sync::OnceLock<Result<Vec<u8>, String>> = std::sync::OnceLock::new();
        let read = STDIN.get_or_init(|| {
            let mut b = Vec::new();
            std::io::stdin()
                .lock()
                .take(MAX_CONFIG_BYTES + 1)
                .read_to_end(&mut b)
                .map(|_| b)
                .map_err(|e| e.to_string())
        });
        bytes = read.clone().map_err(|e| {
            ConfigError::new(
                &file,
                "",
                "a readable TOML file",
                format!("an I/O error: {e}"),
            )
        })?;
    } else {
        std::fs::File::open(path)
            .map_err(io)?
            .take(MAX_CONFIG_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(io)?;
    }
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(ConfigError::new(
            &file,
            "",
            format!("a config of at most {} MiB", MAX_CONFIG_BYTES >> 20),
            "a larger file",
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        ConfigError::new(
            &file,
            "",
            "a UTF-8 text file",
            format!("invalid UTF-8 at byte {}", e.utf8_error().valid_up_to()),
        )
    })?;
    Ok((text, file))
}

/// The largest config file read.
const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// Validates config text, its machine presets applied first ([`preset`]); `file` names it in
/// errors.
pub fn parse(text: &str, file: &str) -> Result<Config, ConfigError> {
    let de = toml::Deserializer::parse(text).map_err(|e| {
        let at = e
            .span()
            .map(|s| {
                let (line, col) = line_col(text, s.start);
                format!(" at line {line}, column {col}")
            })
            .unwrap_or_default();
        // "duplicate key" says not which: name the key written where the error points.
        let mut what = e.message().trim().to_string();
        if what == "duplicate key"
            && let Some(s) = e.span()
            && let Some(k) = text
                .get(s.start..)
                .and_then(|t| t.split(['=', '\n']).next())
                .map(str::trim)
                .filter(|k| !k.is_empty())
        {
            what = format!("duplicate key `{k}`");
        }
        ConfigError::new(
            file,
            "",
            "a TOML document",
            format!("a syntax error{at}: {what}"),
        )
    })?;
    match preset::expand(text, file)? {
        Some(merged) => {
            let de = toml::Deserializer::parse(&merged).map_err(|e| {
                ConfigError::new(
                    file,
                    "",
                    "a config whose presets can be applied",
                    format!(
                        "a document that does not read back ({})",
                        e.message().trim()
                    ),
                )
            })?;
            deserialize(de, &merged, file)
        }
        None => deserialize(de, text, file),
    }
    .and_then(|cfg| with_sweep(cfg, text, file))
}

/// `cfg` with its `[sweep] vary` (read from `text`, the file as written) expanded.
fn with_sweep(mut cfg: Config, text: &str, file: &str) -> Result<Config, ConfigError> {
    let vary = text
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut d| d.remove("sweep"))
        .and_then(|s| match s {
            toml::Value::Table(mut t) => t.remove("vary"),
            _ => None,
        });
    if let Some(toml::Value::Table(vary)) = vary {
        cfg.sweep = Some(sweep::expand(&cfg, &vary, file)?);
    }
    Ok(cfg)
}

/// The document `text` (parsed as `de`) as a validated config.
fn deserialize(de: toml::Deserializer<'_>, text: &str, file: &str) -> Result<Config, ConfigError> {
    let raw: raw::RawConfig = serde_path_to_error::deserialize(de).map_err(|e| {
        let key = e.path().to_string();
        let key = if key == "." { String::new() } else { key };
        let msg = e.inner().message().trim().to_string();
        serde_error(text, file, key, &msg)
    })?;
    convert::convert(raw, file)
}

/// 1-based line and column (in characters) of byte offset `at` in `text`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let before = text.get(..at).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// What `sweep.sizes` accepts.
const SWEEP_SIZES: &str = "a list of sizes (such as [\"1B\", \"4KiB\"]) or a range table \
     { from = \"1B\", to = \"1GiB\", factor = 2 } (keys from, to and optional factor)";

/// What the key at serde path `key` (`machines[0].nics[1].mtu_bytes`, `sweep.sizes[3]`)
/// accepts: its declared domain where a section declares it (range included), else what its
/// name says.
fn expected_at(key: &str) -> String {
    use convert::{DUR_FORMS, RATE_FORMS, SIZE_FORMS as SIZE, fmt_ps};
    if key == "sweep.sizes" {
        return SWEEP_SIZES.to_string();
    }
    if key.starts_with("sweep.sizes") {
        return format!(
            "a message size from 1 byte to {} bytes (16 GiB) {SIZE}",
            limits::MAX_MESSAGE
        );
    }
    // `machines[0].nics[1].mtu_bytes` -> section `machines[].nics[]`, key `mtu_bytes`.
    let mut path = String::new();
    let mut rest = key;
    while let Some(i) = rest.find('[') {
        path.push_str(&rest[..=i]);
        rest = rest[i..].find(']').map_or("", |j| &rest[i + j..]);
    }
    path.push_str(rest);
    let (path, element) = match path.strip_suffix("[]") {
        Some(p) => (p, true),
        None => (path.as_str(), false),
    };
    let (section, name) = path.rsplit_once('.').unwrap_or(("", path));
    let Some(param) = SECTIONS
        .iter()
        .filter(|s| s.path == section)
        .flat_map(|s| s.params)
        .find(|p| p.key == name)
    else {
        return expected_for_key(key).to_string();
    };
    let words = |f: fn() -> Vec<&'static str>| f().join(", ");
    match param.domain {
        Domain::Duration { max } => format!("a duration of at most {} {DUR_FORMS}", fmt_ps(max)),
        Domain::Rate { min } => format!("a rate of at least {} Mb/s {RATE_FORMS}", min / 1_000_000),
        Domain::Sizes if !element => format!("a list of positive sizes in bytes {SIZE}"),
        Domain::Sizes
        | Domain::Bytes {
            lo: 1,
            hi: u64::MAX,
        } => {
            format!("a positive size in bytes {SIZE}")
        }
        Domain::Bytes { lo, hi } => format!("a size in bytes from {lo} to {hi} {SIZE}"),
        Domain::Pow2 { lo, hi } => {
            format!("a size in bytes, a power of two from {lo} to {hi} {SIZE}")
        }
        Domain::Count { lo, hi } => format!("an integer from {lo} to {hi}"),
        Domain::Flag => "true or false".to_string(),
        Domain::Address => "an address (an integer from 0 to 2^64 - 1)".to_string(),
        Domain::Text => "a string".to_string(),
        Domain::Word(f) => format!("one of {}", words(f)),
        Domain::Words(f) if element => format!("one of {}", words(f)),
        Domain::Words(f) => format!("a list of words from {}", words(f)),
    }
}

/// The last part of a dotted key (`read_window` of `machines[0].nics[0].read_window`).
pub(crate) fn last_part(key: &str) -> &str {
    key.rsplit('.').next().unwrap_or(key)
}

/// What a key's name says it holds, from its unit suffix.
fn expected_for_key(key: &str) -> &'static str {
    let last = last_part(key);
    if last.ends_with("_ns") {
        "a duration (a number of nanoseconds, or a string such as \"120ns\" or \"1.5us\")"
    } else if last.ends_with("_gbps") {
        "a rate (a number of Gb/s, or a string such as \"200Gb/s\" or \"26GB/s\")"
    } else if last.ends_with("_bytes")
        || last.starts_with("sizes")
        || last.starts_with("breakdown_sizes")
        || last == "compare_size"
        || last == "from"
        || last == "to"
    {
        "a size in bytes (a number, or a string such as \"4KiB\" or \"1MiB\")"
    } else {
        "a number or a string with a unit"
    }
}

/// The value at a serde path such as `machines[0].nics[1].mtu_bytes` in the document.
fn lookup(text: &str, path: &str) -> Option<toml::Value> {
    let mut cur = toml::Value::Table(text.parse::<toml::Table>().ok()?);
    for seg in path.split('.') {
        let (name, mut rest) = match seg.find('[') {
            Some(i) => (&seg[..i], &seg[i..]),
            None => (seg, ""),
        };
        if !name.is_empty() {
            cur = cur.as_table()?.get(name)?.clone();
        }
        while let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            let i: usize = r[..end].parse().ok()?;
            cur = cur.as_array()?.get(i)?.clone();
            rest = &r[end + 1..];
        }
    }
    Some(cur)
}

/// A TOML value as an error message shows what was found.
fn describe(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("string {s:?}"),
        toml::Value::Integer(i) => format!("integer {i}"),
        toml::Value::Float(f) => format!("float {f}"),
        toml::Value::Boolean(b) => format!("boolean {b}"),
        toml::Value::Datetime(d) => format!("date-time {d}"),
        toml::Value::Array(a) => format!("an array of {} values", a.len()),
        toml::Value::Table(t) => {
            let keys: Vec<&str> = t.keys().map(String::as_str).collect();
            format!("a table with keys {}", keys.join(", "))
        }
    }
}

/// Turns a serde message into a [`ConfigError`]: "unknown field `x`, expected one of ...",
/// "missing field `x`", "invalid type: A, expected B", and untagged-enum mismatches (where
/// serde says nothing about the value, so it is looked up in the document).
fn serde_error(text: &str, file: &str, key: String, msg: &str) -> ConfigError {
    let join = |field: &str| {
        if key.is_empty() {
            field.to_string()
        } else {
            format!("{key}.{field}")
        }
    };
    if let Some(rest) = msg.strip_prefix("unknown field ") {
        let (field, exp) = rest
            .split_once(", expected ")
            .unwrap_or((rest, "no other key here"));
        let exp = exp.replace(", there are no fields", "");
        return ConfigError::new(
            file,
            key.clone(),
            format!("a known key ({exp})"),
            format!("unknown key {field}"),
        );
    }
    if let Some(rest) = msg.strip_prefix("missing field ") {
        let field = rest.trim_matches('`');
        return ConfigError::new(
            file,
            join(field),
            "a value (the key is required)",
            "nothing (the key is missing)",
        );
    }
    if msg.contains("did not match any variant of untagged enum") {
        let found = lookup(text, &key)
            .map(|v| describe(&v))
            .unwrap_or_else(|| "a value of another type".into());
        let expected = if msg.ends_with("RawSizes") {
            SWEEP_SIZES.to_string()
        } else {
            expected_at(&key)
        };
        return ConfigError::new(file, key, expected, found);
    }
    if let Some((found, exp)) = msg.split_once(", expected ") {
        let exp = match exp {
            // serde's buffer for an untagged enum (a quantity, the sweep's sizes) takes any
            // TOML value but a 128-bit integer, and then says only "any value".
            "any value" => expected_at(&key),
            "u8" | "u16" | "u32" | "u64" | "usize" => {
                format!("a non-negative integer ({exp})")
            }
            "i8" | "i16" | "i32" | "i64" | "isize" => format!("an integer ({exp})"),
            "a sequence" => "an array".to_string(),
            "a map" | "struct" => "a table".to_string(),
            e if e.starts_with("struct ") => "a table".to_string(),
            e => e.to_string(),
        };
        let found = found
            .trim_start_matches("invalid type: ")
            .trim_start_matches("invalid value: ")
            .replace('`', "")
            // TOML integers beyond 64 bits come through serde as i128.
            .replace(" as i128", " (beyond 64 bits)");
        // "invalid length 0" says nothing a reader recognises: show the value written.
        let found = if found.starts_with("invalid length") {
            lookup(text, &key).map_or(found, |v| describe(&v))
        } else {
            found
        };
        return ConfigError::new(file, key, exp, found);
    }
    if msg.contains("overflowed") {
        return ConfigError::new(
            file,
            key.clone(),
            expected_for_key(&key),
            "a number beyond the range of a 64-bit float (such as 1e9999)",
        );
    }
    ConfigError::new(file, key, "a valid value", msg.to_string())
}

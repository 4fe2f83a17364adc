//! Loading a study: TOML text -> validated, typed [`Config`] (units parsed, names resolved,
//! defaults filled in). Nothing downstream sees TOML.
//!
//! Every machine parameter may be omitted; its default (and the measurement or datasheet it
//! comes from) is in [`defaults`]. configs/default.toml spells all of them out.

mod convert;
pub mod defaults;
mod error;
mod raw;
mod resolved;

use std::path::Path;

pub use error::ConfigError;
pub use resolved::to_toml;

use crate::report::OutputOptions;
use crate::topology::spec::{HostSpec, NetworkSpec};

/// The embedded default study (identical to configs/default.toml).
pub const DEFAULT_TOML: &str = include_str!("../../configs/default.toml");
pub const DEFAULT_NAME: &str = "configs/default.toml (embedded)";

/// How registration cost is paid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Registration {
    /// Once, at first use, through a registration cache (goes to setup_us).
    Cached,
    /// On every transfer (in the latency).
    PerTransfer,
}

/// Data paths a sweep can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathKind {
    /// Pinned host memory to pinned host memory.
    Host,
    /// cudaMemcpy to a pinned bounce buffer, the host path, cudaMemcpy back.
    Staged,
    /// The NIC reads and writes GPU memory directly.
    GpuDirect,
}

impl PathKind {
    pub fn name(self) -> &'static str {
        match self {
            PathKind::Host => "host",
            PathKind::Staged => "staged",
            PathKind::GpuDirect => "gpudirect",
        }
    }
    pub fn parse(s: &str) -> Option<PathKind> {
        [PathKind::Host, PathKind::Staged, PathKind::GpuDirect]
            .into_iter()
            .find(|p| p.name() == s)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    pub iterations: u32,
    pub min_iterations: u32,
    pub iteration_budget_bytes: u64,
    pub stream_window: u32,
    pub stream_messages: u32,
    pub stream_budget_bytes: u64,
    pub tlp_granularity: bool,
    pub coalesce_above: u64,
    pub burst_bytes: u64,
    pub registration: Registration,
    pub jitter: bool,
    pub flush: bool,
}

/// One end of a scenario, resolved to indices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub host: usize,
    pub nic: usize,
    pub gpu: Option<usize>,
    /// Socket of host buffers (bounce buffers, host-path buffers, queues).
    pub memory_socket: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioSpec {
    pub name: String,
    pub sender: Endpoint,
    pub receiver: Endpoint,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub name: String,
    pub description: String,
    pub seed: u64,
    pub sim: SimConfig,
    pub sizes: Vec<u64>,
    pub paths: Vec<PathKind>,
    pub ops: Vec<String>,
    pub output: OutputOptions,
    pub network: NetworkSpec,
    pub hosts: Vec<HostSpec>,
    pub scenarios: Vec<ScenarioSpec>,
}

/// Reads and validates a config file.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        ConfigError::new(
            &file,
            "",
            "a readable TOML file",
            format!("an I/O error: {e}"),
        )
    })?;
    parse(&text, &file)
}

/// Validates config text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Config, ConfigError> {
    let de = toml::Deserializer::parse(text).map_err(|e| {
        ConfigError::new(
            file,
            "",
            "a TOML document",
            format!("a syntax error: {}", e.message().trim()),
        )
    })?;
    let raw: raw::RawConfig = serde_path_to_error::deserialize(de).map_err(|e| {
        let key = e.path().to_string();
        let key = if key == "." { String::new() } else { key };
        let msg = e.inner().message().trim().to_string();
        let (expected, found) = split_serde_message(&msg);
        ConfigError::new(file, key, expected, found)
    })?;
    convert::convert(raw, file)
}

/// Turns serde's "unknown field `x`, expected one of ..." / "invalid type: A, expected B" into
/// (expected, found).
fn split_serde_message(msg: &str) -> (String, String) {
    if let Some(rest) = msg.strip_prefix("unknown field ") {
        let (field, exp) = rest
            .split_once(", expected ")
            .unwrap_or((rest, "a known key"));
        return (
            format!("a known key ({exp})"),
            format!("unknown key {field}"),
        );
    }
    if let Some(rest) = msg.strip_prefix("missing field ") {
        return (format!("key {rest} to be present"), "it missing".into());
    }
    if let Some((found, exp)) = msg.split_once(", expected ") {
        return (
            exp.to_string(),
            found
                .trim_start_matches("invalid type: ")
                .trim_start_matches("invalid value: ")
                .to_string(),
        );
    }
    ("a valid value".into(), msg.to_string())
}

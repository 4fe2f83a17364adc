//! `gdrsim measured LOG... [--out FILE]`: real benchmark logs (perftest's ib_*_lat / ib_*_bw
//! text output, nvbandwidth's matrices, nccl-tests' tables) read into one measured-data CSV,
//! one row per measured figure, so a measurement can be compared with the model or used to
//! calibrate it (`gdrsim calibrate`).
//!
//! A bad or truncated log is bad input: the error names the file, the line, what was expected
//! there and what was found (exit 2), and nothing is written.

pub mod csv;
pub mod nccl_tests_log;
pub mod nvbandwidth_log;
pub mod overlay;
pub mod perftest_log;

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::config::ConfigError;

/// One measured figure: a row of the measured-data CSV (its columns, in order).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// The log the figure was read from, as given on the command line.
    pub source_file: String,
    /// The line of the log it was read from (1-based).
    pub line: usize,
    /// `perftest`, `nvbandwidth` or `nccl-tests`.
    pub tool: String,
    /// perftest: the binary (`ib_write_bw`); nvbandwidth: the testcase
    /// (`host_to_device_memcpy_ce`).
    pub test: String,
    /// perftest: what the banner says beyond the plain test, `;`-separated (`bidirectional`,
    /// `write_imm`, `send_imm`, `post_list`, `duration`, `atomic FETCH_AND_ADD`, ...), empty for
    /// the plain test; nvbandwidth: the matrix's title line; nccl-tests: the placement, type
    /// and reduction (`out-of-place;float;sum`).
    pub detail: String,
    /// perftest: the RDMA device (`mlx5_0`); empty where the log does not say.
    pub device: String,
    /// Where the buffers were: `host`, `gpu`, or for nvbandwidth `host+gpu` (a matrix between
    /// CPUs and GPUs).
    pub memory: String,
    /// The message size in bytes (perftest); empty for nvbandwidth, which does not print its
    /// buffer size.
    pub size_bytes: Option<u64>,
    /// perftest's #iterations; empty for nvbandwidth.
    pub iterations: Option<u64>,
    /// `latency`, `bandwidth`, `msg_rate`, `cpu_util`, `transaction_rate`.
    pub metric: String,
    /// `min`, `max`, `typical`, `avg`, `stdev`, `p99`, `p99.9` (latency); `peak`, `average`
    /// (bandwidth, message rate); `median` (an nvbandwidth cell), `sum` (its SUM line);
    /// nccl-tests: `avg` (a row's time), `algbw`, `busbw`, `avg_busbw` (its footer).
    pub statistic: String,
    /// The figure as the log prints it, in `unit`.
    pub value: f64,
    /// `us`, `ns`, `MiB/s` (perftest's MiB/sec and older MB/sec, both 2^20 bytes), `Gb/s`
    /// (1e9 bit/s), `GB/s` (1e9 bytes/s), `Mpps`, `%`, `tps`.
    pub unit: String,
    /// nvbandwidth: the matrix row label (a CPU or GPU index); empty for perftest.
    pub row: String,
    /// nvbandwidth: the matrix column label; empty for perftest.
    pub column: String,
}

/// Where the buffers were, when the log does not say (`--memory`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Memory {
    /// From the log: perftest prints CUDA's (or ROCm's) set-up lines when it allocates device
    /// memory; without them the buffers were in host memory.
    Auto,
    /// Every log's buffers were in host memory.
    Host,
    /// Every log's buffers were in GPU memory (GPUDirect).
    Gpu,
}

impl Memory {
    /// The `--memory` word: auto, host or gpu.
    pub fn parse(s: &str) -> Result<Memory, ConfigError> {
        match s {
            "auto" => Ok(Memory::Auto),
            "host" => Ok(Memory::Host),
            "gpu" => Ok(Memory::Gpu),
            _ => Err(ConfigError::new(
                "command line",
                "--memory",
                "auto, host or gpu",
                format!("{s:?}"),
            )),
        }
    }
}

/// A bad log: `file:line: expected E, found F` (bad input, exit 2).
pub(crate) fn bad(
    file: &str,
    line: usize,
    expected: impl Into<String>,
    found: impl Into<String>,
) -> ConfigError {
    ConfigError::new(&format!("{file}:{line}"), "", expected, found)
}

/// A figure of a log: a finite number of 0 or more, else None. perftest's figures are ratios
/// of non-negative counts (bytes, cycles as unsigned cycles_t, /proc/stat ticks) and
/// nvbandwidth prints bandwidths and latencies, so a negative one is a corrupt or edited log.
pub(crate) fn non_negative(v: &str) -> Option<f64> {
    v.parse().ok().filter(|x: &f64| x.is_finite() && *x >= 0.0)
}

/// `found` for an error message: the line quoted (shortened), or the end of the file.
pub(crate) fn quoted(line: Option<&str>) -> String {
    match line {
        None => "the end of the file".to_string(),
        Some(l) => {
            let t: String = l.trim().chars().take(100).collect();
            format!("{t:?}")
        }
    }
}

/// Which tool wrote a log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tool {
    Perftest,
    Nvbandwidth,
    NcclTests,
}

fn sniff(text: &str) -> Option<Tool> {
    for l in text.lines() {
        let t = l.trim();
        if nccl_tests_log::is_nccl_tests_line(t) {
            return Some(Tool::NcclTests);
        }
        if perftest_log::is_result_line(l) || perftest_log::title(t).is_some() {
            return Some(Tool::Perftest);
        }
        if t.starts_with("nvbandwidth Version")
            || (t.starts_with("Running ") && t.ends_with('.'))
            || nvbandwidth_log::unit_of_title(t).is_some()
        {
            return Some(Tool::Nvbandwidth);
        }
    }
    None
}

/// The measurements of the log text `text` (named `name` in rows and errors).
pub fn parse_text(name: &str, text: &str, memory: Memory) -> Result<Vec<Measurement>, ConfigError> {
    match sniff(text) {
        Some(Tool::Perftest) => perftest_log::parse(name, text, memory),
        Some(Tool::Nvbandwidth) => nvbandwidth_log::parse(name, text),
        Some(Tool::NcclTests) => nccl_tests_log::parse(name, text),
        None => Err(bad(
            name,
            1,
            "a perftest log (its dashed banner line and a title such as \"RDMA_Write BW Test\"), \
             an nvbandwidth log (\"Running <testcase>.\" and a matrix) or an nccl-tests log \
             (its \"out-of-place ... in-place\" column header and rows)",
            "neither in the whole file",
        )),
    }
}

/// Reads and parses one log file.
pub fn parse_file(path: &Path, memory: Memory) -> Result<Vec<Measurement>, ConfigError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path)
        .map_err(|e| ConfigError::new(&name, "", "a readable log file", e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = 1 + e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count();
        bad(&name, line, "text (UTF-8)", "bytes that are not UTF-8")
    })?;
    parse_text(&name, &text, memory)
}

/// `gdrsim measured`: every log parsed (all before anything is written), then the CSV
/// written to `out` atomically, or returned for stdout.
pub fn command(logs: &[PathBuf], memory: Memory, out: Option<&Path>) -> Result<Option<String>> {
    let mut rows = Vec::new();
    for l in logs {
        rows.extend(parse_file(l, memory)?);
    }
    let bytes = csv::to_bytes(&rows)?;
    match out {
        Some(p) => {
            crate::report::atomic::write(p, &bytes)?;
            Ok(None)
        }
        None => Ok(Some(String::from_utf8(bytes)?)),
    }
}

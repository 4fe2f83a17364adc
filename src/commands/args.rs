//! Options several commands share: the cost gate's limits.

use clap::Args;

use gdrsim::config::ConfigError;
use gdrsim::study;

/// The cost gate's limits, on every command that simulates (`check` prints a study's
/// estimate).
#[derive(Args)]
pub struct LimitArgs {
    /// Refuse, before any work, what is estimated above this many events [default: 2.5e11,
    /// about two days of one core].
    #[arg(long, value_name = "E")]
    pub max_events: Option<u64>,
    /// Refuse, before any work, what is estimated to hold more memory than this at its peak
    /// (8GiB, 512MB) [default: this machine's memory, or its cgroup's limit where lower].
    #[arg(long, value_name = "SIZE")]
    pub max_memory: Option<String>,
}

impl LimitArgs {
    pub fn limits(&self) -> Result<study::Limits, ConfigError> {
        let memory = self
            .max_memory
            .as_deref()
            .map(study::Limits::parse_memory)
            .transpose()?;
        Ok(study::Limits::new(self.max_events, memory))
    }
}

//! Configuration errors: every one names the file, the key path, what was expected and what
//! was found, so a user can fix the config without reading code.

use std::fmt;

/// A config that cannot be used, said as "FILE: key `KEY`: expected WHAT, found WHAT".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file ("configs/x.toml", `<stdin>`, "command line" for options).
    pub file: String,
    /// Dotted key path, e.g. `machines[0].links[2].width`; empty for whole-file problems.
    pub key: String,
    /// What the key accepts ("a PCIe generation from 1 to 6").
    pub expected: String,
    /// What the config had.
    pub found: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(
                f,
                "{}: expected {}, found {}",
                self.file, self.expected, self.found
            )
        } else {
            write!(
                f,
                "{}: key `{}`: expected {}, found {}",
                self.file, self.key, self.expected, self.found
            )
        }
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    /// An error of `file` at `key` (empty: the whole file).
    pub fn new(
        file: &str,
        key: impl Into<String>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Self {
        ConfigError {
            file: file.to_string(),
            key: key.into(),
            expected: expected.into(),
            found: found.into(),
        }
    }
}

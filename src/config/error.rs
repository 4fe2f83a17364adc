//! Configuration errors: every one names the file, the key path, what was expected and what
//! was found, so a user can fix the config without reading code.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub file: String,
    /// Dotted key path, e.g. `machines[0].links[2].width`; empty for whole-file problems.
    pub key: String,
    pub expected: String,
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

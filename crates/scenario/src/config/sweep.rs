//! `[sweep] vary`: one study over several values of any parameters.
//!
//! ```toml
//! [sweep]
//! vary = { "machines[0].nics[*].read_window" = [64, 128], "sim.registration" = ["cached", "per_transfer"] }
//! ```
//!
//! Each key is a parameter as `gdrsim params` lists it (`machines[0].nics[0].read_window`,
//! `sim.registration`, `network.switch_latency_ns`), where `[*]` stands for every index
//! (every NIC of machine 0 above, so identical devices keep one value); each value is a
//! non-empty list of values as the key itself accepts them. A study with `vary` is one
//! *variant* per combination of the lists (their cartesian product; the first key in
//! sorted order varies slowest), each the whole study (every scenario, path, op and size)
//! on the config with those values set. Every key and every value is checked here, before
//! any work: a key that names no parameter, a value its parameter refuses, an empty list or
//! more than [`MAX_VARIANTS`] variants is a [`ConfigError`] naming the key.

use toml::{Table, Value};

use super::{Config, ConfigError, params};

/// The most variants a sweep may have (the product of its lists' lengths).
pub const MAX_VARIANTS: usize = 256;

/// The key path errors give the sweep's table.
const VARY: &str = "sweep.vary";

/// A config's `[sweep] vary`, expanded.
#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    /// The keys as written (wildcards kept) with their values, in sorted key order: what the
    /// resolved config writes back.
    pub vary: Vec<(String, Vec<Value>)>,
    /// One per combination, the first key varying slowest.
    pub variants: Vec<Variant>,
}

/// One combination of a sweep's values.
#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    /// Its name in results (`variant` column) and charts: `read_window=64, registration=cached`
    /// (each key by its last part, or whole where two keys share it).
    pub label: String,
    /// (key as written, value as shown) of each key.
    pub values: Vec<(String, String)>,
    /// The study with these values set (no sweep of its own).
    pub cfg: Config,
}

use super::params::show;

/// Whether the concrete key `key` (`machines[0].nics[3].read_window`) is one `pattern`
/// names, where `[*]` in the pattern stands for any index.
pub fn matches(pattern: &str, key: &str) -> bool {
    let mut rest = key;
    let mut parts = pattern.split("[*]").peekable();
    while let Some(part) = parts.next() {
        let Some(r) = rest.strip_prefix(part) else {
            return false;
        };
        rest = r;
        if parts.peek().is_some() {
            // An index: `[` digits `]`.
            let Some(r) = rest.strip_prefix('[') else {
                return false;
            };
            let digits = r.chars().take_while(char::is_ascii_digit).count();
            let Some(r) = r[digits..].strip_prefix(']').filter(|_| digits > 0) else {
                return false;
            };
            rest = r;
        }
    }
    rest.is_empty()
}

/// The parameters a sweep may vary: every parameter `gdrsim params` lists but the chart
/// options of `[output]` (drawn once for the whole study).
fn variable(cfg: &Config) -> Vec<String> {
    params::list(cfg)
        .into_iter()
        .map(|p| p.key)
        .filter(|k| !k.starts_with("output."))
        .collect()
}

/// What a sweep key must be, with an example.
const KEY_EXPECTED: &str = "a parameter key as `gdrsim params` lists it, `[*]` standing for \
     every index (such as \"machines[0].nics[*].read_window\" or \"sim.registration\"; \
     [output] keys cannot vary)";

/// Expands `vary` (the `[sweep] vary` table of `file`) over `base`, the study without it.
pub fn expand(base: &Config, vary: &Table, file: &str) -> Result<Sweep, ConfigError> {
    let err = |key: String, expected: &str, found: String| {
        ConfigError::new(file, key, expected.to_string(), found)
    };
    if vary.is_empty() {
        return Err(err(
            VARY.into(),
            "at least one parameter key with a list of values",
            "an empty table".into(),
        ));
    }
    let known = variable(base);
    let doc: Table = super::to_toml(base).parse().map_err(|e| {
        err(
            VARY.into(),
            "a config whose resolved form reads back",
            format!("{e}"),
        )
    })?;
    // Keys and list shapes first, the product's size next, each value last (it parses a
    // config per value).
    let mut keys: Vec<(String, Vec<String>, Vec<Value>)> = Vec::new();
    for (pattern, v) in vary {
        let at = format!("{VARY}.\"{pattern}\"");
        let concrete: Vec<String> = known
            .iter()
            .filter(|k| matches(pattern, k))
            .cloned()
            .collect();
        if concrete.is_empty() {
            // Name the parameters the last part of the key matches, if any.
            let last = super::last_part(pattern);
            let near: Vec<&str> = known
                .iter()
                .filter(|k| super::last_part(k) == last)
                .take(3)
                .map(String::as_str)
                .collect();
            let hint = if near.is_empty() {
                String::new()
            } else {
                format!(" (parameters of that name: {})", near.join(", "))
            };
            return Err(err(
                at,
                KEY_EXPECTED,
                format!("{pattern:?}, which names no parameter of this config{hint}"),
            ));
        }
        if let Some((other, _, _)) = keys
            .iter()
            .find(|(_, c, _)| c.iter().any(|k| concrete.contains(k)))
        {
            return Err(err(
                at,
                "keys that each name their own parameters",
                format!("a parameter {other:?} names too"),
            ));
        }
        let values = match v {
            Value::Array(a) if !a.is_empty() => a.clone(),
            Value::Array(_) => {
                return Err(err(
                    at,
                    "a non-empty list of values",
                    "an empty list".into(),
                ));
            }
            other => {
                return Err(err(
                    at,
                    "a non-empty list of values (such as [64, 128])",
                    format!("{} (one value: write it in a list)", super::describe(other)),
                ));
            }
        };
        for (i, a) in values.iter().enumerate() {
            if values[..i].contains(a) {
                return Err(err(
                    format!("{at}[{i}]"),
                    "values that differ from each other",
                    format!("{} again", show(a)),
                ));
            }
        }
        keys.push((pattern.clone(), concrete, values));
    }
    let count = keys
        .iter()
        .try_fold(1usize, |n, (_, _, v)| n.checked_mul(v.len()))
        .filter(|&n| n <= MAX_VARIANTS);
    let Some(count) = count else {
        let lens: Vec<String> = keys.iter().map(|(_, _, v)| v.len().to_string()).collect();
        return Err(err(
            VARY.into(),
            &format!(
                "at most {MAX_VARIANTS} variants (the product of the lists' lengths; cut a \
                 list, or run the sweep as several studies)"
            ),
            format!("{} variants", lens.join(" x ")),
        ));
    };
    let apply = |d: &mut Table, concrete: &[String], v: &Value| {
        for k in concrete {
            params::set(d, k, v.clone());
        }
    };
    let load = |d: &Table| -> Result<Config, ConfigError> {
        let text = toml::to_string(d)
            .map_err(|e| err(VARY.into(), "values TOML can write", format!("{e}")))?;
        super::parse(&text, file)
    };
    // Each value on its own: an error names its key and place in the list.
    for (pattern, concrete, values) in &keys {
        for (i, v) in values.iter().enumerate() {
            let mut d = doc.clone();
            apply(&mut d, concrete, v);
            load(&d).map_err(|e| {
                let expected = if e.key.is_empty() {
                    e.expected.clone()
                } else {
                    format!("{} (as `{}` takes)", e.expected, e.key)
                };
                ConfigError::new(
                    file,
                    format!("{VARY}.\"{pattern}\"[{i}]"),
                    expected,
                    e.found,
                )
            })?;
        }
    }
    // Labels: each key by its last part, whole where two keys share the last part.
    let last = |k: &str| super::last_part(k).to_string();
    let names: Vec<String> = keys
        .iter()
        .map(|(k, _, _)| {
            let shared = keys.iter().filter(|(o, _, _)| last(o) == last(k)).count() > 1;
            if shared { k.clone() } else { last(k) }
        })
        .collect();
    let mut variants = Vec::with_capacity(count);
    for n in 0..count {
        // Mixed radix, the first key the most significant digit.
        let mut pick = vec![0usize; keys.len()];
        let mut rest = n;
        for (j, (_, _, values)) in keys.iter().enumerate().rev() {
            pick[j] = rest % values.len();
            rest /= values.len();
        }
        let mut d = doc.clone();
        let mut shown = Vec::new();
        for (j, (pattern, concrete, values)) in keys.iter().enumerate() {
            let v = &values[pick[j]];
            apply(&mut d, concrete, v);
            shown.push((pattern.clone(), show(v)));
        }
        let label = names
            .iter()
            .zip(&shown)
            .map(|(name, (_, v))| format!("{name}={v}"))
            .collect::<Vec<_>>()
            .join(", ");
        let cfg = load(&d).map_err(|e| {
            ConfigError::new(
                file,
                VARY,
                format!("values that together make a valid config ({})", e.expected),
                format!("variant {label}: {} at `{}`", e.found, e.key),
            )
        })?;
        variants.push(Variant {
            label,
            values: shown,
            cfg,
        });
    }
    Ok(Sweep {
        vary: keys.into_iter().map(|(k, _, v)| (k, v)).collect(),
        variants,
    })
}

impl Config {
    /// The study of variant `v` (`self` where there is no sweep).
    pub fn variant(&self, v: usize) -> &Config {
        match &self.sweep {
            Some(s) => &s.variants[v].cfg,
            None => self,
        }
    }

    /// How many variants the study runs (1 without a sweep).
    pub fn variant_count(&self) -> usize {
        self.sweep.as_ref().map_or(1, |s| s.variants.len())
    }

    /// The label of variant `v` (empty without a sweep).
    pub fn variant_label(&self, v: usize) -> &str {
        self.sweep
            .as_ref()
            .map_or("", |s| s.variants[v].label.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{DEFAULT_TOML, parse};

    fn with_vary(vary: &str) -> Result<Config, ConfigError> {
        let text =
            DEFAULT_TOML.replacen("[sweep]\n", &format!("[sweep]\nvary = {{ {vary} }}\n"), 1);
        parse(&text, "sweep.toml")
    }

    #[test]
    fn wildcards_match_any_index_only() {
        assert!(matches(
            "machines[0].nics[*].read_window",
            "machines[0].nics[3].read_window"
        ));
        assert!(matches(
            "machines[*].nics[*].mtu",
            "machines[1].nics[10].mtu"
        ));
        assert!(!matches(
            "machines[0].nics[*].read_window",
            "machines[1].nics[0].read_window"
        ));
        assert!(!matches(
            "machines[0].nics[*].read",
            "machines[0].nics[0].read_window"
        ));
        assert!(!matches("machines[0].nics[*].x", "machines[0].nics[].x"));
        assert!(matches("sim.registration", "sim.registration"));
        assert!(!matches(
            "sim.registration",
            "sim.registration_cache_entries"
        ));
    }

    #[test]
    fn the_product_of_the_lists_is_the_variants() {
        let cfg = with_vary(
            "\"machines[0].nics[*].read_window\" = [64, 256], \"sim.registration\" = \
             [\"cached\", \"per_transfer\", \"lru\"]",
        )
        .unwrap();
        assert_eq!(cfg.variant_count(), 6);
        let s = cfg.sweep.as_ref().unwrap();
        let labels: Vec<&str> = s.variants.iter().map(|v| v.label.as_str()).collect();
        // Sorted keys: the NIC's window varies slowest.
        assert_eq!(labels[0], "read_window=64, registration=cached");
        assert_eq!(labels[1], "read_window=64, registration=per_transfer");
        assert_eq!(labels[5], "read_window=256, registration=lru");
        let v5 = cfg.variant(5);
        assert!(v5.sweep.is_none());
        assert!(
            v5.hosts
                .iter()
                .all(|h| h.machine.nics.iter().all(|n| n.read_window == 256))
        );
        assert_eq!(v5.sim.registration, crate::config::Registration::Lru);
        assert_eq!(
            cfg.variant(0).sim.registration,
            crate::config::Registration::Cached
        );
        // The plan: every point once per variant, the variant outermost.
        let points = crate::scenario::plan(&cfg);
        let one = crate::scenario::plan(cfg.variant(0)).len();
        assert_eq!(points.len(), 6 * one);
        assert_eq!(points[one].variant, 1);
        assert_eq!(points[one].seed, points[0].seed);
    }

    #[test]
    fn the_resolved_config_keeps_the_sweep() {
        let cfg = with_vary("\"sim.registration\" = [\"cached\", \"per_transfer\"]").unwrap();
        let text = crate::config::to_toml(&cfg);
        assert!(text.contains("[sweep.vary]"), "{text}");
        assert_eq!(parse(&text, "resolved").unwrap(), cfg);
        // Without a sweep, no trace of one.
        let plain = parse(DEFAULT_TOML, "d").unwrap();
        assert!(!crate::config::to_toml(&plain).contains("vary"));
        assert_eq!(plain.variant_count(), 1);
        assert_eq!(plain.variant_label(0), "");
    }

    #[test]
    fn bad_sweeps_name_the_key() {
        let e = with_vary("\"machines[0].nics[*].read_windw\" = [64]").unwrap_err();
        assert_eq!(e.key, "sweep.vary.\"machines[0].nics[*].read_windw\"");
        assert!(e.found.contains("names no parameter"), "{e}");
        let e = with_vary("\"sim.registration\" = []").unwrap_err();
        assert!(e.expected.contains("non-empty"), "{e}");
        let e = with_vary("\"sim.registration\" = \"cached\"").unwrap_err();
        assert!(e.expected.contains("list"), "{e}");
        let e = with_vary("\"machines[0].nics[*].read_window\" = [64, \"lots\"]").unwrap_err();
        assert_eq!(e.key, "sweep.vary.\"machines[0].nics[*].read_window\"[1]");
        assert!(e.found.contains("lots"), "{e}");
        let e = with_vary("\"sim.registration\" = [\"cached\", \"sometimes\"]").unwrap_err();
        assert_eq!(e.key, "sweep.vary.\"sim.registration\"[1]");
        let e = with_vary("\"output.width_px\" = [800]").unwrap_err();
        assert!(e.found.contains("names no parameter"), "{e}");
        let e = with_vary("\"sim.iterations\" = [5, 5]").unwrap_err();
        assert!(e.expected.contains("differ"), "{e}");
        let e = with_vary(
            "\"machines[0].nics[*].read_window\" = [1, 2], \"machines[0].nics[0].read_window\" \
             = [3]",
        )
        .unwrap_err();
        assert!(e.expected.contains("their own"), "{e}");
        let many: Vec<String> = (1..=20).map(|i| i.to_string()).collect();
        let list = format!("[{}]", many.join(", "));
        let e = with_vary(&format!(
            "\"sim.iterations\" = {list}, \"sim.stream_window\" = {list}"
        ))
        .unwrap_err();
        assert_eq!(e.key, "sweep.vary");
        assert!(e.found.contains("20 x 20"), "{e}");
        let e = with_vary("").unwrap_err();
        assert_eq!(e.key, "sweep.vary");
    }
}

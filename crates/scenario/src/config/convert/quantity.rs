//! Quantities as written -> typed values: durations, sizes, rates, counts and options, each
//! checked against its range with the key path in hand, and the name-uniqueness check.

use super::super::ConfigError;
use super::super::limits::{MAX_DURATION, MIN_RATE_BPS};
use super::super::raw::Q;
use crate::topology::spec::P2p;
use crate::units::{self, Ps, Rate};

pub(in crate::config) type R<T> = Result<T, ConfigError>;

/// How a duration, a size and a rate may be written, for the messages that say what a key
/// expects (here and in [`crate::config`]'s serde errors).
pub(in crate::config) const DUR_FORMS: &str =
    "(a number of nanoseconds, or a string such as \"120ns\" or \"1.5us\")";
pub(in crate::config) const SIZE_FORMS: &str =
    "(a number, or a string such as \"4KiB\" or \"1MiB\")";
pub(in crate::config) const RATE_FORMS: &str =
    "(a number of Gb/s, or a string such as \"200Gb/s\" or \"26GB/s\")";

/// A duration bound as a message gives it (every bound is whole seconds or milliseconds).
pub(in crate::config) fn fmt_ps(ps: Ps) -> String {
    if ps >= units::PS_PER_S {
        format!("{} s", ps / units::PS_PER_S)
    } else {
        format!("{} ms", ps / 1_000_000_000)
    }
}

/// Durations are held in u64 picoseconds, rates in u64 bit/s.
const DUR_RANGE: &str = "a duration of at most 2^64 ps (about 213 days)";
const RATE_RANGE: &str = "a rate of at most 2^64 bit/s";

pub(in crate::config) struct Cx<'a> {
    pub(in crate::config) file: &'a str,
}

fn show(q: &Q) -> String {
    match q {
        Q::Int(v) => v.to_string(),
        Q::Float(v) => format!("{v:?}"),
        Q::Str(s) => format!("{s:?}"),
    }
}

impl Cx<'_> {
    pub(in crate::config) fn err(
        &self,
        key: &str,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> ConfigError {
        ConfigError::new(self.file, key, expected, found)
    }

    /// A duration: a bare number is nanoseconds; a string carries its unit.
    pub(in crate::config) fn dur(&self, q: &Option<Q>, key: &str, default: Ps) -> R<Ps> {
        self.dur_at_most(q, key, default, MAX_DURATION)
    }

    /// A duration of at most `max`: every duration is bounded so that sums over routes, pages
    /// and messages stay far inside u64 picoseconds (no overflow, whatever the config says).
    pub(in crate::config) fn dur_at_most(
        &self,
        q: &Option<Q>,
        key: &str,
        default: Ps,
        max: Ps,
    ) -> R<Ps> {
        let v = self.dur_raw(q, key, default)?;
        if v > max {
            return Err(self.err(
                key,
                format!("a duration of at most {}", fmt_ps(max)),
                show(q.as_ref().expect("a default is within range")),
            ));
        }
        Ok(v)
    }

    fn dur_raw(&self, q: &Option<Q>, key: &str, default: Ps) -> R<Ps> {
        let expected = format!("a duration {DUR_FORMS}");
        match q {
            None => Ok(default),
            Some(Q::Int(v)) if *v >= 0 => (*v as u64)
                .checked_mul(units::PS_PER_NS)
                .ok_or_else(|| self.err(key, DUR_RANGE, show(q.as_ref().unwrap()))),
            Some(Q::Float(v)) if *v >= 0.0 && v.is_finite() => {
                let ps = (v * 1000.0).round();
                if ps < u64::MAX as f64 {
                    Ok(ps as u64)
                } else {
                    Err(self.err(key, DUR_RANGE, show(q.as_ref().unwrap())))
                }
            }
            Some(Q::Str(s)) => units::parse_duration(s)
                .map_err(|_| self.err(key, &expected, show(q.as_ref().unwrap()))),
            Some(other) => Err(self.err(key, &expected, show(other))),
        }
    }

    /// A size in bytes (> 0): a bare number is bytes; a string carries its unit.
    pub(in crate::config) fn bytes(&self, q: &Option<Q>, key: &str, default: u64) -> R<u64> {
        let expected = format!("a positive size in bytes {SIZE_FORMS}");
        let v = match q {
            None => return Ok(default),
            Some(Q::Int(v)) if *v > 0 => *v as u64,
            Some(Q::Str(s)) => units::parse_bytes(s)
                .map_err(|_| self.err(key, &expected, show(q.as_ref().unwrap())))?,
            Some(other) => return Err(self.err(key, &expected, show(other))),
        };
        if v == 0 {
            return Err(self.err(key, &expected, show(q.as_ref().unwrap())));
        }
        Ok(v)
    }

    /// A size within `lo..=hi` bytes (a NIC structure, a header): the range is part of the check.
    pub(in crate::config) fn bytes_in(
        &self,
        q: &Option<Q>,
        key: &str,
        default: u64,
        lo: u64,
        hi: u64,
    ) -> R<u64> {
        let v = match q {
            Some(Q::Int(0)) if lo == 0 => 0,
            _ => self.bytes(q, key, default)?,
        };
        if !(lo..=hi).contains(&v) {
            return Err(self.err(
                key,
                format!("a size from {lo} to {hi} bytes"),
                v.to_string(),
            ));
        }
        Ok(v)
    }

    pub(in crate::config) fn size(&self, q: &Q, key: &str) -> R<u64> {
        self.bytes(&Some(q.clone()), key, 0)
    }

    /// A rate: a bare number is Gb/s (bits); a string carries its unit ("26GB/s", "200Gb/s").
    pub(in crate::config) fn rate(&self, q: &Option<Q>, key: &str, default: Rate) -> R<Rate> {
        let expected = format!("a positive rate {RATE_FORMS}");
        let r = match q {
            None => return Ok(default),
            Some(Q::Int(v)) if *v > 0 => Rate::from_bps(
                (*v as u64)
                    .checked_mul(1_000_000_000)
                    .ok_or_else(|| self.err(key, RATE_RANGE, show(q.as_ref().unwrap())))?,
            ),
            Some(Q::Float(v)) if *v > 0.0 && v.is_finite() => {
                let bps = (v * 1e9).round();
                if bps >= u64::MAX as f64 {
                    return Err(self.err(key, RATE_RANGE, show(q.as_ref().unwrap())));
                }
                Rate::from_bps(bps as u64)
            }
            Some(Q::Str(s)) => units::parse_rate(s)
                .map_err(|_| self.err(key, &expected, show(q.as_ref().unwrap())))?,
            Some(other) => return Err(self.err(key, &expected, show(other))),
        };
        if r.bps() < MIN_RATE_BPS {
            // Slower rates would make a 16 GiB message outlast u64 picoseconds.
            return Err(self.err(
                key,
                "a rate of at least 1 Mb/s",
                show(q.as_ref().expect("defaults are in range")),
            ));
        }
        Ok(r)
    }

    fn opt_rate(&self, q: &Option<Q>, key: &str) -> R<Option<Rate>> {
        match q {
            None => Ok(None),
            Some(_) => self.rate(q, key, Rate::from_bps(0)).map(Some),
        }
    }

    /// A power of two within `lo..=hi` bytes (MPS and MRRS: 128 to 4096; an MTU: 256 to 4096).
    pub(in crate::config) fn pow2(
        &self,
        q: &Option<Q>,
        key: &str,
        default: u64,
        lo: u64,
        hi: u64,
    ) -> R<u64> {
        let v = self.bytes(q, key, default)?;
        if !v.is_power_of_two() || !(lo..=hi).contains(&v) {
            return Err(self.err(
                key,
                format!("a power of two from {lo} to {hi} bytes"),
                v.to_string(),
            ));
        }
        Ok(v)
    }

    /// A list of positive sizes, each checked with its index in the key.
    pub(in crate::config) fn sizes(
        &self,
        q: &Option<Vec<Q>>,
        key: &str,
        default: &[u64],
    ) -> R<Vec<u64>> {
        match q {
            None => Ok(default.to_vec()),
            Some(list) => list
                .iter()
                .enumerate()
                .map(|(i, q)| self.size(q, &format!("{key}[{i}]")))
                .collect(),
        }
    }

    pub(super) fn p2p(&self, allowed: Option<bool>, cap: &Option<Q>, key: &str) -> R<P2p> {
        Ok(match allowed.unwrap_or(true) {
            false => P2p::Refused,
            true => P2p::Allowed(self.opt_rate(cap, key)?),
        })
    }

    /// A count `v` (or `default`) within `range`; out of it, refused as "`what` from LO to HI".
    pub(in crate::config) fn count_in<T: Copy + PartialOrd + std::fmt::Display>(
        &self,
        v: Option<T>,
        key: &str,
        default: T,
        range: std::ops::RangeInclusive<T>,
        what: &str,
    ) -> R<T> {
        let n = v.unwrap_or(default);
        if range.contains(&n) {
            return Ok(n);
        }
        Err(self.err(
            key,
            format!("{what} from {} to {}", range.start(), range.end()),
            n.to_string(),
        ))
    }

    /// Names must be unique; `names` gives each with the key that defines it, and an error
    /// points at the second definition and says where the first one is.
    /// Refuses the first name used twice, naming both keys. A hash map keeps it linear: a
    /// config of 100,000 scenarios is checked in well under a second.
    pub(super) fn unique<'s>(&self, names: impl Iterator<Item = (String, &'s str)>) -> R<()> {
        let mut seen: std::collections::HashMap<&str, String> = std::collections::HashMap::new();
        for (key, n) in names {
            if let Some(first) = seen.get(n) {
                return Err(self.err(
                    &key,
                    format!("a name not used before (names are unique; {first} is already {n:?})"),
                    format!("{n:?} again"),
                ));
            }
            seen.insert(n, key);
        }
        Ok(())
    }
}

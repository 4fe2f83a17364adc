//! Physical units as integers: time in picoseconds, sizes in bytes, rates in bits per second.
//!
//! Integers keep every run bit-reproducible: no float rounding reaches the event order. The one
//! place where a rate turns into a duration, [`Rate::tx_time`], computes in `u128` and rounds up,
//! so a transfer never takes less than its physical minimum.
//!
//! The parsers accept what users write in configs: `"4KiB"`, `"1.5MB"`, `"120ns"`, `"2us"`,
//! `"200Gb/s"`, `"26GB/s"`. Binary prefixes (KiB, MiB, GiB) are powers of 1024, decimal ones
//! (KB, MB, GB) powers of 1000; `B` is bytes and `b` bits.

use std::fmt;

/// Picoseconds since the start of a simulation (or a duration in picoseconds).
pub type Ps = u64;

/// Picoseconds in a nanosecond.
pub const PS_PER_NS: u64 = 1_000;
/// Picoseconds in a microsecond.
pub const PS_PER_US: u64 = 1_000_000;
/// Picoseconds in a second.
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// Nanoseconds to picoseconds.
pub const fn ns(v: u64) -> Ps {
    v * PS_PER_NS
}

/// A data rate in bits per second. Integer bits/s is exact enough for every link we model
/// (a 1 bit/s rounding is 1e-11 of a PCIe Gen3 x16 link) and keeps arithmetic exact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Rate {
    bits_per_s: u64,
    /// Picoseconds per byte in 32.32 fixed point, rounded up: turns the hot-path division of
    /// [`Rate::tx_time`] into a multiplication (derived from `bits_per_s`, never set alone).
    ps_per_byte_q32: u128,
}

impl Rate {
    /// A rate of `bits_per_s` bits per second (0: unlimited, see [`Rate::tx_time`]).
    pub const fn from_bps(bits_per_s: u64) -> Self {
        let ps_per_byte_q32 = if bits_per_s == 0 {
            0
        } else {
            ((8 * PS_PER_S as u128) << 32).div_ceil(bits_per_s as u128)
        };
        Rate {
            bits_per_s,
            ps_per_byte_q32,
        }
    }
    /// Bytes per second, as users of GB/s figures think of it.
    pub const fn from_bytes_per_s(bytes_per_s: u64) -> Self {
        Rate::from_bps(bytes_per_s * 8)
    }
    /// The rate in bits per second.
    pub const fn bps(self) -> u64 {
        self.bits_per_s
    }
    /// Gigabytes (1e9 B) per second, for reporting only.
    pub fn gbytes_per_s(self) -> f64 {
        self.bits_per_s as f64 / 8e9
    }
    /// Time to move `bytes` at this rate, rounded up to the next picosecond.
    /// A zero rate means "unlimited" and costs nothing (used for ideal components).
    pub fn tx_time(self, bytes: u64) -> Ps {
        if self.bits_per_s == 0 || bytes == 0 {
            return 0;
        }
        // Fixed-point product, rounded up; within one picosecond of the exact quotient for any
        // transfer below 2^32 bytes (the reciprocal's rounding error is below 2^-32 ps/byte).
        // Saturates rather than wraps: a time this long is past the engine's horizon anyway.
        ((bytes as u128 * self.ps_per_byte_q32).div_ceil(1 << 32)).min(Ps::MAX as u128) as Ps
    }
    /// Scales the rate by `num/den` (exact in u128, truncated to whole bits/s).
    pub fn scale(self, num: u64, den: u64) -> Rate {
        Rate::from_bps((self.bits_per_s as u128 * num as u128 / den as u128) as u64)
    }
    /// The slower of the two rates (a zero, unlimited, rate counts as the slowest).
    pub fn min(self, other: Rate) -> Rate {
        if self.bits_per_s <= other.bits_per_s {
            self
        } else {
            other
        }
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.2} GB/s", self.gbytes_per_s())
    }
}

/// Formats picoseconds as microseconds with all six decimals, exactly (no float).
/// Used wherever sums must add up digit for digit (stages.csv `critical_us`).
pub fn ps_to_us_exact(ps: Ps) -> String {
    format!("{}.{:06}", ps / PS_PER_US, ps % PS_PER_US)
}

/// Picoseconds as f64 microseconds (reporting only).
pub fn ps_to_us(ps: Ps) -> f64 {
    ps as f64 / PS_PER_US as f64
}

/// A duration for people, to three significant digits: "3.42 us", "25.0 ms", "1.20 s",
/// "53.4 days".
pub fn fmt_duration(ps: Ps) -> String {
    let s = ps as f64 / PS_PER_S as f64;
    let (v, unit) = if s >= 86_400.0 {
        (s / 86_400.0, "days")
    } else if s >= 1.0 {
        (s, "s")
    } else if s >= 1e-3 {
        (s * 1e3, "ms")
    } else if s >= 1e-6 {
        (s * 1e6, "us")
    } else {
        (s * 1e9, "ns")
    };
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {unit}")
}

/// A share in percent as a reader wants it: whole percents from 1% up ("24%"), two
/// significant digits below ("0.17%", "0.0031%"), so a small share never reads "0%"; exactly
/// zero is "0%".
pub fn fmt_percent(p: f64) -> String {
    if !p.is_finite() || p == 0.0 || p.abs() >= 1.0 {
        return format!("{p:.0}%");
    }
    let digits = (1 - p.abs().log10().floor() as i32).max(0) as usize;
    format!("{p:.digits$}%")
}

/// Human-readable byte size: 1 KiB, 4 MiB, 1 GiB (one decimal when not a whole multiple);
/// plain bytes below 1 KiB.
pub fn fmt_bytes(b: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (name, unit) in UNITS {
        if b >= unit {
            return if b.is_multiple_of(unit) {
                format!("{} {name}", b / unit)
            } else {
                format!("{:.1} {name}", b as f64 / unit as f64)
            };
        }
    }
    format!("{b} B")
}

/// Why a quantity failed to parse; the config layer adds file and key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// What the parser wanted, as a phrase for the message: "a duration such as \"120ns\" ...".
    pub expected: &'static str,
    /// The text it was given.
    pub found: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "expected {}, found {:?}", self.expected, self.found)
    }
}

/// Splits `"12.5 KiB"` into (12.5 as an exact decimal, "KiB").
fn split_number(s: &str) -> Option<(Decimal, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .map_or(s.len(), |(i, _)| i);
    let (num, unit) = s.split_at(end);
    Some((Decimal::parse(num)?, unit.trim()))
}

/// A non-negative decimal number kept as mantissa / 10^scale, so "1.5" x 2^30 stays exact.
#[derive(Clone, Copy, Debug)]
struct Decimal {
    mantissa: u128,
    scale: u32,
}

impl Decimal {
    fn parse(s: &str) -> Option<Decimal> {
        let s: String = s.chars().filter(|&c| c != '_').collect();
        if s.is_empty() || s.starts_with('.') || s.ends_with('.') {
            return None;
        }
        let (int, frac) = s.split_once('.').unwrap_or((&s, ""));
        if frac.contains('.') || frac.len() > 12 {
            return None;
        }
        let digits = format!("{int}{frac}");
        let mantissa = digits.parse::<u128>().ok()?;
        Some(Decimal {
            mantissa,
            scale: frac.len() as u32,
        })
    }
    /// value x multiplier, exactly when the product is a whole number.
    fn times(self, multiplier: u128) -> Option<u64> {
        let p = self.mantissa.checked_mul(multiplier)?;
        let d = 10u128.pow(self.scale);
        if p % d != 0 {
            return None;
        }
        u64::try_from(p / d).ok()
    }
    /// value x multiplier rounded to nearest (for rates, where sub-unit precision is irrelevant).
    fn times_rounded(self, multiplier: u128) -> Option<u64> {
        let p = self.mantissa.checked_mul(multiplier)?;
        let d = 10u128.pow(self.scale);
        u64::try_from((p + d / 2) / d).ok()
    }
}

/// Parses a byte size: "4096", "4096B", "4KiB", "1.5MiB", "2GB". Must be a whole number of bytes.
///
/// ```
/// use gdrsim_model::units::parse_bytes;
/// assert_eq!(parse_bytes("4KiB"), Ok(4096));
/// assert_eq!(parse_bytes("1.5MiB"), Ok(3 << 19));
/// assert!(parse_bytes("4KB/s").is_err()); // a rate is not a size
/// ```
pub fn parse_bytes(s: &str) -> Result<u64, ParseError> {
    let err = || ParseError {
        expected: "a size in bytes such as \"4096\", \"4KiB\", \"1MiB\" or \"1GB\"",
        found: s.to_string(),
    };
    let (num, unit) = split_number(s).ok_or_else(err)?;
    let mult: u128 = match unit {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        _ => return Err(err()),
    };
    num.times(mult).ok_or_else(err)
}

/// Parses a duration into picoseconds: "120ns", "1.5us", "2µs", "3ms", "500ps", "1s".
pub fn parse_duration(s: &str) -> Result<Ps, ParseError> {
    let err = || ParseError {
        expected: "a duration such as \"120ns\", \"1.5us\", \"3ms\" or \"500ps\"",
        found: s.to_string(),
    };
    let (num, unit) = split_number(s).ok_or_else(err)?;
    let mult: u128 = match unit {
        "ps" => 1,
        "ns" => PS_PER_NS as u128,
        "us" | "µs" | "μs" => PS_PER_US as u128,
        "ms" => 1_000_000_000,
        "s" => PS_PER_S as u128,
        _ => return Err(err()),
    };
    num.times_rounded(mult).ok_or_else(err)
}

/// Parses a data rate: "200Gb/s", "100Gbps", "26GB/s", "12.5 GB/s", "1000MB/s".
/// Lower-case `b` is bits, upper-case `B` bytes; prefixes are decimal (network and PCIe convention).
pub fn parse_rate(s: &str) -> Result<Rate, ParseError> {
    let err = || ParseError {
        expected: "a rate such as \"200Gb/s\" (bits) or \"26GB/s\" (bytes)",
        found: s.to_string(),
    };
    let (num, unit) = split_number(s).ok_or_else(err)?;
    let unit = unit
        .strip_suffix("ps")
        .map(|u| format!("{u}/s"))
        .unwrap_or(unit.to_string());
    let (prefix, per) = unit.split_once('/').ok_or_else(err)?;
    if per != "s" || prefix.is_empty() {
        return Err(err());
    }
    let (p, last) = prefix.split_at(prefix.len() - 1);
    let bits: u128 = match last {
        "b" => 1,
        "B" => 8,
        _ => return Err(err()),
    };
    let scale: u128 = match p {
        "" => 1,
        "K" | "k" => 1_000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        "T" => 1_000_000_000_000,
        _ => return Err(err()),
    };
    let bps = num.times_rounded(bits * scale).ok_or_else(err)?;
    Ok(Rate::from_bps(bps))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue #28 item 11: `check` printed "(0% of the events)" for the costliest of
    /// thousands of points.
    #[test]
    fn a_small_share_keeps_its_digits() {
        assert_eq!(fmt_percent(24.31), "24%");
        assert_eq!(fmt_percent(1.0), "1%");
        assert_eq!(fmt_percent(0.171), "0.17%");
        assert_eq!(fmt_percent(0.0031), "0.0031%");
        assert_eq!(fmt_percent(0.5), "0.50%");
        assert_eq!(fmt_percent(0.0), "0%");
    }

    #[test]
    fn sizes_parse_with_binary_and_decimal_prefixes() {
        assert_eq!(parse_bytes("4KiB").unwrap(), 4096);
        assert_eq!(parse_bytes("4096").unwrap(), 4096);
        assert_eq!(parse_bytes("1 GiB").unwrap(), 1 << 30);
        assert_eq!(parse_bytes("1.5MiB").unwrap(), 3 << 19);
        assert_eq!(parse_bytes("2GB").unwrap(), 2_000_000_000);
        assert!(parse_bytes("4KB/s").is_err());
        assert!(parse_bytes("-4KiB").is_err());
        assert!(parse_bytes("0.3B").is_err());
        assert!(parse_bytes("").is_err());
    }

    #[test]
    fn durations_parse_to_picoseconds() {
        assert_eq!(parse_duration("120ns").unwrap(), 120_000);
        assert_eq!(parse_duration("1.5us").unwrap(), 1_500_000);
        assert_eq!(parse_duration("2µs").unwrap(), 2_000_000);
        assert_eq!(parse_duration("500ps").unwrap(), 500);
        assert!(parse_duration("120").is_err());
        assert!(parse_duration("4KiB").is_err());
    }

    #[test]
    fn rates_distinguish_bits_and_bytes() {
        assert_eq!(parse_rate("200Gb/s").unwrap().bps(), 200_000_000_000);
        assert_eq!(parse_rate("200Gbps").unwrap().bps(), 200_000_000_000);
        assert_eq!(parse_rate("26GB/s").unwrap().bps(), 208_000_000_000);
        assert_eq!(parse_rate("12.5 GB/s").unwrap().bps(), 100_000_000_000);
        assert!(parse_rate("4KiB").is_err());
        assert!(parse_rate("4KB/h").is_err());
    }

    #[test]
    fn tx_time_rounds_up_and_is_exact_for_whole_results() {
        // 1 byte at 8 Gb/s is exactly 1 ns.
        assert_eq!(Rate::from_bps(8_000_000_000).tx_time(1), 1000);
        // 1 byte at 3 b/s: 8/3 s, rounded up to the next picosecond.
        assert_eq!(Rate::from_bps(3).tx_time(1), 2_666_666_666_667);
        assert_eq!(Rate::from_bps(0).tx_time(1 << 30), 0);
    }

    #[test]
    fn exact_microsecond_formatting() {
        assert_eq!(ps_to_us_exact(1_234_567), "1.234567");
        assert_eq!(ps_to_us_exact(5), "0.000005");
        assert_eq!(fmt_bytes(4096), "4 KiB");
        assert_eq!(fmt_bytes(1 << 30), "1 GiB");
        assert_eq!(fmt_bytes(8), "8 B");
    }
}

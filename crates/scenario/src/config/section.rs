//! One declaration per config section: `section!` takes each key once, with its kind, its
//! default, the spec field it sets and the source of its default, and generates from it
//!
//! - the serde struct of the section as written (every key optional, unknown keys refused),
//! - `apply`: the conversion onto the typed spec (parsed, range-checked, default filled in),
//! - `resolved`: the section of the resolved `config.toml` (every value written out),
//! - `PARAMS`: the keys with their units and sources, as data tools can read.
//!
//! A key is therefore named in one place; adding one is one line.
//!
//! Kinds (the raw type, the check, the unit):
//! - `dur`: a duration (bare number = ns), at most 10 s; `dur_max[MAX]`: at most `MAX`.
//! - `rate`: a rate (bare number = Gb/s), at least 1 Mb/s.
//! - `bytes`: a positive size; `bytes_in[LO, HI]`: a size within LO..=HI; `pow2[LO, HI]`: a
//!   power of two within LO..=HI; `sizes`: a list of positive sizes.
//! - `count[LO, HI, WHAT]` (u32) and `count64[LO, HI, WHAT]` (u64): an integer within LO..=HI.
//! - `flag`: a boolean; `addr`: a 64-bit address; `text`: a string.
//! - `pick<T>`: one word of a [`super::choice::Choice`]; `picks<T>`: a list of them.

use toml::Value;

use crate::units::{PS_PER_NS, Ps, Rate};

/// One parameter as data: the key, the unit a bare number is read in, the values it accepts,
/// and where its default comes from (a reference row, a datasheet or specification, or
/// "estimate").
#[derive(Clone, Copy, Debug)]
pub struct ParamDoc {
    /// The key within its section (`read_window`).
    pub key: &'static str,
    /// The unit a bare number is read in ("ns", "Gb/s", "B", "count", "bool", ...).
    pub unit: &'static str,
    /// The values it accepts.
    pub domain: Domain,
    /// Where the default comes from: a reference row, a datasheet or specification, "estimate".
    pub source: &'static str,
}

/// The values a parameter accepts (what its conversion checks), for tools that generate or
/// vary configs.
#[derive(Clone, Copy, Debug)]
pub enum Domain {
    /// Picoseconds from 0 to `max`.
    Duration {
        /// The largest duration, in picoseconds.
        max: Ps,
    },
    /// Bits per second from `min` up.
    Rate {
        /// The smallest rate, in bits per second.
        min: u64,
    },
    /// Bytes within `lo..=hi`.
    Bytes {
        /// The smallest size, in bytes.
        lo: u64,
        /// The largest size, in bytes.
        hi: u64,
    },
    /// Powers of two within `lo..=hi` bytes.
    Pow2 {
        /// The smallest power of two, in bytes.
        lo: u64,
        /// The largest power of two, in bytes.
        hi: u64,
    },
    /// An integer within `lo..=hi`.
    Count {
        /// The smallest value.
        lo: u64,
        /// The largest value.
        hi: u64,
    },
    /// true or false.
    Flag,
    /// A 64-bit address.
    Address,
    /// Free text (a name, a model).
    Text,
    /// One of these words.
    Word(fn() -> Vec<&'static str>),
    /// A list of these words.
    Words(fn() -> Vec<&'static str>),
    /// A list of positive sizes.
    Sizes,
}

/// A duration as the resolved config writes it: whole nanoseconds bare, otherwise picoseconds.
pub(super) fn dur_value(ps: Ps) -> Value {
    if ps.is_multiple_of(PS_PER_NS) {
        Value::Integer((ps / PS_PER_NS) as i64)
    } else {
        Value::String(format!("{ps}ps"))
    }
}

/// A rate as the resolved config writes it: whole Gb/s bare, otherwise bit/s.
pub(super) fn rate_value(r: Rate) -> Value {
    if r.bps().is_multiple_of(1_000_000_000) {
        Value::Integer((r.bps() / 1_000_000_000) as i64)
    } else {
        Value::String(format!("{}b/s", r.bps()))
    }
}

/// An integer; every one the config holds is bounded far below 2^63 by its check.
pub(super) fn int_value(v: u64) -> Value {
    Value::Integer(v as i64)
}

macro_rules! raw_ty {
    (dur) => { $crate::config::raw::Q };
    (dur_max) => { $crate::config::raw::Q };
    (rate) => { $crate::config::raw::Q };
    (bytes) => { $crate::config::raw::Q };
    (bytes_in) => { $crate::config::raw::Q };
    (pow2) => { $crate::config::raw::Q };
    (sizes) => { Vec<$crate::config::raw::Q> };
    (count) => { u32 };
    (count64) => { u64 };
    (flag) => { bool };
    (addr) => { u64 };
    (text) => { String };
    (pick <$t:ty>) => { $t };
    (picks <$t:ty>) => { Vec<$t> };
}
pub(crate) use raw_ty;

macro_rules! domain_of {
    (dur) => {
        $crate::config::section::Domain::Duration {
            max: $crate::config::limits::MAX_DURATION,
        }
    };
    (dur_max [$max:expr]) => {
        $crate::config::section::Domain::Duration { max: $max }
    };
    (rate) => {
        $crate::config::section::Domain::Rate {
            min: $crate::config::limits::MIN_RATE_BPS,
        }
    };
    (bytes) => {
        $crate::config::section::Domain::Bytes {
            lo: 1,
            hi: u64::MAX,
        }
    };
    (bytes_in [$lo:expr, $hi:expr]) => {
        $crate::config::section::Domain::Bytes { lo: $lo, hi: $hi }
    };
    (pow2 [$lo:expr, $hi:expr]) => {
        $crate::config::section::Domain::Pow2 { lo: $lo, hi: $hi }
    };
    (sizes) => {
        $crate::config::section::Domain::Sizes
    };
    (count [$lo:expr, $hi:expr, $what:expr]) => {
        $crate::config::section::Domain::Count {
            lo: $lo as u64,
            hi: $hi as u64,
        }
    };
    (count64 [$lo:expr, $hi:expr, $what:expr]) => {
        $crate::config::section::Domain::Count { lo: $lo, hi: $hi }
    };
    (flag) => {
        $crate::config::section::Domain::Flag
    };
    (addr) => {
        $crate::config::section::Domain::Address
    };
    (text) => {
        $crate::config::section::Domain::Text
    };
    (pick <$t:ty>) => {
        $crate::config::section::Domain::Word(<$t as $crate::config::choice::Choice>::words)
    };
    (picks <$t:ty>) => {
        $crate::config::section::Domain::Words(<$t as $crate::config::choice::Choice>::words)
    };
}
pub(crate) use domain_of;

macro_rules! unit_of {
    (dur) => {
        "ns"
    };
    (dur_max) => {
        "ns"
    };
    (rate) => {
        "Gb/s"
    };
    (bytes) => {
        "B"
    };
    (bytes_in) => {
        "B"
    };
    (pow2) => {
        "B"
    };
    (sizes) => {
        "B"
    };
    (count) => {
        "count"
    };
    (count64) => {
        "count"
    };
    (flag) => {
        "bool"
    };
    (addr) => {
        "address"
    };
    (text) => {
        "text"
    };
    (pick) => {
        "word"
    };
    (picks) => {
        "words"
    };
}
pub(crate) use unit_of;

/// The typed value of one key: `$q` is the raw `&Option<_>`, `$k` the key path.
macro_rules! param_value {
    ($cx:ident, dur, $q:expr, $k:expr, $d:expr) => {
        $cx.dur($q, $k, $d)
    };
    ($cx:ident, dur_max, $q:expr, $k:expr, $d:expr, $max:expr) => {
        $cx.dur_at_most($q, $k, $d, $max)
    };
    ($cx:ident, rate, $q:expr, $k:expr, $d:expr) => {
        $cx.rate($q, $k, $d)
    };
    ($cx:ident, bytes, $q:expr, $k:expr, $d:expr) => {
        $cx.bytes($q, $k, $d)
    };
    ($cx:ident, bytes_in, $q:expr, $k:expr, $d:expr, $lo:expr, $hi:expr) => {
        $cx.bytes_in($q, $k, $d, $lo, $hi)
    };
    ($cx:ident, pow2, $q:expr, $k:expr, $d:expr, $lo:expr, $hi:expr) => {
        $cx.pow2($q, $k, $d, $lo, $hi)
    };
    ($cx:ident, sizes, $q:expr, $k:expr, $d:expr) => {
        $cx.sizes($q, $k, $d)
    };
    ($cx:ident, count, $q:expr, $k:expr, $d:expr, $lo:expr, $hi:expr, $what:expr) => {
        $cx.count_in(*$q, $k, $d, $lo..=$hi, $what)
    };
    ($cx:ident, count64, $q:expr, $k:expr, $d:expr, $lo:expr, $hi:expr, $what:expr) => {
        $cx.count_in(*$q, $k, $d, $lo..=$hi, $what)
    };
    ($cx:ident, flag, $q:expr, $k:expr, $d:expr) => {
        $crate::config::section::given($q, $d)
    };
    ($cx:ident, addr, $q:expr, $k:expr, $d:expr) => {
        $crate::config::section::given($q, $d)
    };
    ($cx:ident, text, $q:expr, $k:expr, $d:expr) => {
        $crate::config::section::given($q, String::from($d))
    };
    ($cx:ident, pick, $q:expr, $k:expr, $d:expr) => {
        $crate::config::section::given($q, $d)
    };
    ($cx:ident, picks, $q:expr, $k:expr, $d:expr) => {
        $crate::config::section::given($q, $d.to_vec())
    };
}
pub(crate) use param_value;

/// The value written, or the default: for kinds that serde has already checked.
pub(super) fn given<T: Clone>(q: &Option<T>, default: T) -> super::convert::R<T> {
    Ok(q.clone().unwrap_or(default))
}

/// The resolved config's value of one spec field.
macro_rules! param_toml {
    (dur, $v:expr) => {
        $crate::config::section::dur_value($v)
    };
    (dur_max, $v:expr) => {
        $crate::config::section::dur_value($v)
    };
    (rate, $v:expr) => {
        $crate::config::section::rate_value($v)
    };
    (bytes, $v:expr) => {
        $crate::config::section::int_value($v)
    };
    (bytes_in, $v:expr) => {
        $crate::config::section::int_value($v)
    };
    (pow2, $v:expr) => {
        $crate::config::section::int_value($v)
    };
    (sizes, $v:expr) => {
        toml::Value::Array(
            $v.iter()
                .map(|&b| $crate::config::section::int_value(b))
                .collect(),
        )
    };
    (count, $v:expr) => {
        $crate::config::section::int_value(u64::from($v))
    };
    (count64, $v:expr) => {
        $crate::config::section::int_value($v)
    };
    (flag, $v:expr) => {
        toml::Value::Boolean($v)
    };
    (addr, $v:expr) => {
        $crate::config::section::int_value($v)
    };
    (text, $v:expr) => {
        toml::Value::String($v.clone())
    };
    (pick, $v:expr) => {
        toml::Value::String($v.name().to_string())
    };
    (picks, $v:expr) => {
        toml::Value::Array(
            $v.iter()
                .map(|c| toml::Value::String(c.name().to_string()))
                .collect(),
        )
    };
}
pub(crate) use param_toml;

/// Declares a section; see the module documentation. Keys listed under `also` are read by
/// serde but converted by hand (names, references, removed keys, composite values).
macro_rules! section {
    (
        $(#[$meta:meta])*
        pub struct $raw:ident => $spec:ty {
            $(
                $(#[$pmeta:meta])*
                $key:ident: $kind:ident $(<$pty:ty>)? $([$($arg:expr),* $(,)?])? = $default:expr
                    => $($field:ident).+ ; $source:literal
            ),* $(,)?
        }
        $(also {
            $( $(#[$xmeta:meta])* $xkey:ident: $xty:ty ),* $(,)?
        })?
    ) => {
        $(#[$meta])*
        #[derive(Debug, Default, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $raw {
            $( $(#[$pmeta])* pub $key: Option<$crate::config::section::raw_ty!($kind $(<$pty>)?)>, )*
            $($( $(#[$xmeta])* pub $xkey: $xty, )*)?
        }

        #[allow(dead_code)]
        impl $raw {
            /// The section's parameters: key, unit and source of the default.
            pub const PARAMS: &'static [$crate::config::section::ParamDoc] = &[$(
                $crate::config::section::ParamDoc {
                    key: stringify!($key),
                                        unit: $crate::config::section::unit_of!($kind),
                    domain: $crate::config::section::domain_of!(
                        $kind $(<$pty>)? $([$($arg),*])?
                    ),

                    source: $source,
                },
            )*];

            /// Sets every declared field of `spec` from the config or its default; `at` makes
            /// a key's path for messages.
            pub(in crate::config) fn apply(
                &self,
                cx: &$crate::config::convert::Cx,
                at: &dyn Fn(&str) -> String,
                spec: &mut $spec,
            ) -> $crate::config::convert::R<()> {
                $(
                    spec.$($field).+ = $crate::config::section::param_value!(
                        cx, $kind, &self.$key, &at(stringify!($key)), $default $(, $($arg),*)?
                    )?;
                )*
                Ok(())
            }

            /// Writes every declared field of `spec` into `t`, as the resolved config has it.
            pub(in crate::config) fn resolved(spec: &$spec, t: &mut toml::Table) {
                $(
                    t.insert(
                        stringify!($key).to_string(),
                        $crate::config::section::param_toml!($kind, spec.$($field).+),
                    );
                )*
            }
        }
    };
}
pub(crate) use section;

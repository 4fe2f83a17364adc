//! Number, address and route formats every language of the walk shares.

use super::model::Op;
use crate::units::{PS_PER_NS, Ps};

/// Microseconds rounded to the nanosecond: "7.380".
pub fn us(ps: Ps) -> String {
    let ns = (ps + PS_PER_NS / 2) / PS_PER_NS;
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

/// `0x` + upper-case hex, as the issue and DESIGN.md write addresses.
pub fn hex(a: u64) -> String {
    format!("0x{a:X}")
}

/// A route of nodes and channels: "gpu0.mem > gpu0 > sw0".
pub(crate) fn route(r: &[String]) -> String {
    r.join(" > ")
}

/// "1 packet", "3 packets".
pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// `a / size`, exact when it divides, else to two decimals ("0" for an empty message).
pub(crate) fn ratio(a: u64, size: u64) -> String {
    if size == 0 {
        return "0".into();
    }
    if a.is_multiple_of(size) {
        (a / size).to_string()
    } else {
        format!("{:.2}", a as f64 / size as f64)
    }
}

/// The verb's name as the verbs API and perftest write it, in every language.
pub(crate) fn op_title(op: Op) -> &'static str {
    match op {
        Op::WriteImm => "RDMA Write with Immediate",
        Op::Write => "RDMA Write",
        Op::Read => "RDMA Read",
        Op::Send => "Send",
    }
}

/// Terminal columns of a text: two per CJK character, one per ASCII character.
pub(crate) fn columns(t: &str) -> usize {
    t.chars().map(|c| if c.is_ascii() { 1 } else { 2 }).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_round_to_the_nanosecond() {
        assert_eq!(us(0), "0.000");
        assert_eq!(us(7_379_724), "7.380");
        assert_eq!(us(499), "0.000");
        assert_eq!(us(500), "0.001");
        assert_eq!(us(17_795_603), "17.796");
    }

    #[test]
    fn addresses_are_upper_case_hex() {
        assert_eq!(hex(0x2A_8000_0000), "0x2A80000000");
        assert_eq!(hex(0x1000_0000), "0x10000000");
    }

    #[test]
    fn chinese_characters_take_two_columns() {
        assert_eq!(columns("dur"), 3);
        assert_eq!(columns("耗时"), 4);
        assert_eq!(columns("CPU时间"), 7);
    }
}

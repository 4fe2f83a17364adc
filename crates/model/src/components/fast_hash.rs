//! A fast, deterministic hasher for the solver's small integer keys.
//!
//! Why: the standard library's SipHash resists collision attacks, which a simulator's own keys
//! (channel and engine ids, a demand's digest) never mount, and costs a sixth of a large
//! group's solve ([`super::bulk`]'s loaded round trips look a wait up per read use). This is
//! the multiply-rotate hash of rustc's `FxHasher` (public domain, as in the `rustc-hash`
//! crate). Nothing iterates a map built with it, so results never depend on the hash.

use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` hasher for integer keys ([`FastHasher`]).
pub type FastHash = BuildHasherDefault<FastHasher>;

/// rustc's `FxHasher`: each word is folded in by a rotate, xor and multiply.
#[derive(Clone, Copy, Debug, Default)]
pub struct FastHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FastHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_u16(&mut self, i: u16) {
        self.add(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

/// `x` as `f64`, exactly as `x as f64` rounds it, without the software conversion of a full
/// `u128` where the value fits a `u64` (the weights and rates of a solve always do).
pub fn u128_to_f64(x: u128) -> f64 {
    match u64::try_from(x) {
        Ok(small) => small as f64,
        Err(_) => x as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn equal_keys_hash_equal_and_different_keys_differ() {
        let h = |k: (u32, u8, Option<u32>)| {
            use std::hash::BuildHasher;
            FastHash::default().hash_one(k)
        };
        assert_eq!(h((7, 1, Some(3))), h((7, 1, Some(3))));
        assert_ne!(h((7, 1, Some(3))), h((7, 1, None)));
        assert_ne!(h((7, 1, Some(3))), h((3, 1, Some(7))));
        let mut m: HashMap<(u32, u8), u32, FastHash> = HashMap::default();
        for i in 0..1000u32 {
            m.insert((i, (i % 7) as u8), i);
        }
        assert!((0..1000u32).all(|i| m[&(i, (i % 7) as u8)] == i));
    }

    #[test]
    fn the_short_conversion_rounds_as_the_long_one() {
        for x in [
            0u128,
            1,
            (1 << 53) + 1,
            (1 << 60) + 12_345,
            u64::MAX as u128,
            u64::MAX as u128 + 1,
            u128::MAX,
        ] {
            assert_eq!(u128_to_f64(x).to_bits(), (x as f64).to_bits(), "{x}");
        }
    }
}

//! Where randomness comes from: every random stream is seeded from the config seed and a stable
//! identity (a point, a channel's name, a thread's name), never from an index that another part
//! of the machine could shift, and never from a hasher that changes between runs.

/// FNV-1a of a name: a hash that is the same on every run, machine and Rust version (names seed
/// random streams, so `std`'s randomised hasher will not do).
pub fn stable_hash(name: &str) -> u64 {
    fnv1a(name.as_bytes())
}

/// 64-bit FNV-1a of `bytes`: stable across runs, platforms and versions.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// SplitMix64-style mixing: a stable seed from a base and a few integers.
pub fn mix(base: u64, parts: &[u64]) -> u64 {
    let mut x = base ^ 0x9E37_79B9_7F4A_7C15;
    for &p in parts {
        x = x.wrapping_add(p).wrapping_add(0x9E37_79B9_7F4A_7C15);
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^= x >> 31;
    }
    x
}

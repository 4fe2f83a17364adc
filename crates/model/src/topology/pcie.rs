//! PCIe rate arithmetic: pure functions of generation, width and payload sizes.
//!
//! The method is the one of pcie-bench's published model (Neugebauer et al., SIGCOMM 2018;
//! reference rows C1-C5): raw rate = GT/s x lanes x encoding; the TLP layer loses a share to
//! ACK and flow-control DLLPs (8 B each, at the spec's recommended intervals) and to SKIP
//! ordered sets (4 of every 1538 symbols); every TLP then carries its own header and framing.

use crate::units::Rate;

/// Bytes a memory write or read request TLP adds to its payload: 4 B generic header + 12 B
/// 64-bit-address header + 8 B data-link framing (sequence number, LCRC, STP/END). Row C3.
pub const MEM_REQUEST_OVERHEAD: u64 = 24;
/// Bytes a completion-with-data TLP adds: 4 + 8 header + 8 framing. Row C3.
pub const COMPLETION_OVERHEAD: u64 = 20;
/// Optional end-to-end CRC digest per TLP. Row C3.
pub const ECRC_BYTES: u64 = 4;
/// In FLIT mode (Gen6+) a TLP carries its header (4 + 12, or 4 + 8 for a completion) but no
/// per-TLP framing or LCRC; the flit pays for those (row C2).
const FLIT_MEM_REQUEST_OVERHEAD: u64 = 16;
const FLIT_COMPLETION_OVERHEAD: u64 = 12;

/// Supported link generations.
pub fn valid_generation(generation: u32) -> bool {
    (1..=6).contains(&generation)
}

/// Supported widths (lanes).
pub fn valid_width(width: u32) -> bool {
    matches!(width, 1 | 2 | 4 | 8 | 12 | 16 | 32)
}

/// MPS and MRRS: a power of two from 128 to 4096 bytes (PCIe base spec, Device Control register).
pub fn valid_payload_size(bytes: u64) -> bool {
    bytes.is_power_of_two() && (128..=4096).contains(&bytes)
}

/// Raw data rate after line encoding: 8b/10b for Gen1-2, 128b/130b for Gen3-5 (row C1); Gen6
/// PAM4 FLIT mode has no line code (its overhead is in the flit, see [`tlp_rate`]).
pub fn raw_rate(generation: u32, width: u32) -> Rate {
    let gt_per_s: u64 = match generation {
        1 => 2_500_000_000,
        2 => 5_000_000_000,
        3 => 8_000_000_000,
        4 => 16_000_000_000,
        5 => 32_000_000_000,
        _ => 64_000_000_000,
    };
    let per_lane = Rate::from_bps(gt_per_s);
    let per_lane = match generation {
        1 | 2 => per_lane.scale(8, 10),
        3..=5 => per_lane.scale(128, 130),
        _ => per_lane,
    };
    Rate::from_bps(per_lane.bps() * width as u64)
}

/// The PCIe 5.0 base spec's recommended ACK and UpdateFC intervals, in symbol times (bytes per
/// lane), Tables 2-46..48 and 3-7..9, as used by pcie-bench's model. Gen3-5 share one table.
/// Returns (ack interval, fc interval).
fn dllp_intervals(generation: u32, width: u32, mps: u64) -> (u64, u64) {
    let col = match mps {
        128 => 0,
        256 => 1,
        512 => 2,
        1024 => 3,
        2048 => 4,
        _ => 5,
    };
    // Rows: x1, x2, x4, x8, x16, x32 (x12 uses the x16 row, a conservative choice).
    const GEN1: [[u64; 6]; 6] = [
        [237, 416, 559, 1071, 2095, 4143],
        [128, 217, 289, 545, 1057, 2081],
        [73, 118, 154, 282, 538, 1050],
        [67, 107, 86, 150, 278, 534],
        [48, 72, 86, 150, 278, 534],
        [33, 45, 52, 84, 148, 276],
    ];
    const GEN2: [[u64; 6]; 6] = [
        [288, 467, 610, 1122, 2146, 4194],
        [179, 268, 340, 596, 1108, 2132],
        [124, 169, 205, 333, 589, 1101],
        [118, 158, 137, 201, 329, 585],
        [99, 123, 137, 201, 329, 585],
        [84, 96, 103, 135, 199, 237],
    ];
    const GEN3: [[u64; 6]; 6] = [
        [333, 512, 655, 1167, 2191, 4239],
        [224, 313, 385, 641, 1153, 2177],
        [169, 214, 250, 378, 634, 1146],
        [163, 203, 182, 246, 374, 630],
        [144, 168, 182, 246, 374, 630],
        [129, 141, 148, 180, 244, 372],
    ];
    let row = match width {
        1 => 0,
        2 => 1,
        4 => 2,
        8 => 3,
        12 | 16 => 4,
        _ => 5,
    };
    let v = match generation {
        1 => GEN1[row][col],
        2 => GEN2[row][col],
        _ => GEN3[row][col],
    };
    (v, v)
}

/// Rate available to TLPs after ACK/FC DLLPs and SKIP ordered sets (row C4: Gen3 x16 at MPS 256
/// gives 113.70 Gb/s from 126.03 raw). In FLIT mode (Gen6) 236 of every 256 flit bytes carry
/// TLPs (row C2) and DLLPs ride inside the flit.
pub fn tlp_rate(generation: u32, width: u32, mps: u64) -> Rate {
    let raw = raw_rate(generation, width);
    if generation >= 6 {
        return raw.scale(236, 256);
    }
    let (ack, fc) = dllp_intervals(generation, width, mps);
    // overhead = 8/ack + 8/fc + 4/1538, as one exact fraction.
    let den = ack as u128 * fc as u128 * 1538;
    let over = 8 * fc as u128 * 1538 + 8 * ack as u128 * 1538 + 4 * ack as u128 * fc as u128;
    let bps = raw.bps() as u128 * (den - over) / den;
    Rate::from_bps(bps as u64)
}

/// Per-TLP overhead bytes of a memory write or read request.
pub fn request_overhead(generation: u32, ecrc: bool) -> u64 {
    let base = if generation >= 6 {
        FLIT_MEM_REQUEST_OVERHEAD
    } else {
        MEM_REQUEST_OVERHEAD
    };
    base + if ecrc { ECRC_BYTES } else { 0 }
}

/// Per-TLP overhead bytes of a completion with data.
pub fn completion_overhead(generation: u32, ecrc: bool) -> u64 {
    let base = if generation >= 6 {
        FLIT_COMPLETION_OVERHEAD
    } else {
        COMPLETION_OVERHEAD
    };
    base + if ecrc { ECRC_BYTES } else { 0 }
}

/// Large-transfer DMA write bandwidth: MPS-sized posted writes at the TLP rate (row C5 method).
pub fn effective_write_rate(generation: u32, width: u32, mps: u64, ecrc: bool) -> Rate {
    tlp_rate(generation, width, mps).scale(mps, mps + request_overhead(generation, ecrc))
}

/// Large-transfer DMA read bandwidth: completions of MPS payload each, limited by the completion
/// direction (requests are header-only and go the other way). Row C5 method.
pub fn effective_read_rate(generation: u32, width: u32, mps: u64, ecrc: bool) -> Rate {
    tlp_rate(generation, width, mps).scale(mps, mps + completion_overhead(generation, ecrc))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gbps(r: Rate) -> f64 {
        r.bps() as f64 / 1e9
    }
    fn gbytes(r: Rate) -> f64 {
        r.gbytes_per_s()
    }
    fn within(v: f64, want: f64, rel: f64) -> bool {
        (v - want).abs() <= want * rel
    }

    /// Row C4: Gen3 x16 raw 126.03 Gb/s (8 GT/s x 16 x 128/130); after ACK (8 B per 168),
    /// FC (8 B per 168) and SKIP (4 per 1538): 126.03 x (1 - 0.0476 - 0.0476 - 0.0026) = 113.70.
    #[test]
    fn gen3_x16_tlp_layer_rate_matches_row_c4() {
        assert!(within(gbps(raw_rate(3, 16)), 126.03, 0.0005));
        assert!(
            within(gbps(tlp_rate(3, 16, 256)), 113.70, 0.001),
            "{}",
            gbps(tlp_rate(3, 16, 256))
        );
        assert!(within(gbps(tlp_rate(3, 8, 256)), 57.88, 0.001));
        assert!(within(gbps(tlp_rate(4, 16, 256)), 227.40, 0.001));
        assert!(within(gbps(tlp_rate(5, 16, 256)), 454.80, 0.001));
    }

    /// Row C5: x16, MPS 256, MRRS 512. Writes: TLP rate x 256/(256+24); reads: x 256/(256+20).
    #[test]
    fn effective_dma_rates_match_row_c5() {
        for (generation, w, r) in [(3, 12.99, 13.18), (4, 25.99, 26.37), (5, 51.98, 52.73)] {
            let wr = gbytes(effective_write_rate(generation, 16, 256, false));
            let rd = gbytes(effective_read_rate(generation, 16, 256, false));
            assert!(within(wr, w, 0.01), "gen{generation} write {wr}");
            assert!(within(rd, r, 0.01), "gen{generation} read {rd}");
        }
        // MPS 512 and 128 (row C5): writes 13.69 and 11.76 GB/s on Gen3.
        assert!(within(
            gbytes(effective_write_rate(3, 16, 512, false)),
            13.69,
            0.01
        ));
        assert!(within(
            gbytes(effective_write_rate(3, 16, 128, false)),
            11.76,
            0.01
        ));
    }

    #[test]
    fn payload_size_rules() {
        assert!(valid_payload_size(128) && valid_payload_size(4096));
        assert!(!valid_payload_size(64) && !valid_payload_size(8192) && !valid_payload_size(384));
        assert!(!valid_width(3) && valid_width(16));
    }
}

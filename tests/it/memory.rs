//! Memory: what a run keeps while it simulates.

use crate::support::*;
use gdrsim::config::PathKind;

/// Issue #27 item 9: a point's noise-free run keeps the spans its stages are made of, not the
/// traffic (every unit's hop, the NICs' descriptors), which only walks and traces draw: the
/// hops of bulk transfers sharing links grow with the square of the flows (1024 flows of 1 MiB
/// held 1 GB of them for nine messages each).
#[test]
fn a_points_noise_free_run_keeps_its_spans_not_its_traffic() {
    let cfg = default_cfg();
    for size in [4096, 1 << 20] {
        let r = point(&cfg, "PIX", PathKind::GpuDirect, size);
        assert!(!r.recorder.spans.is_empty(), "{size} B: spans");
        assert!(r.recorder.hops.is_empty(), "{size} B: hops");
        assert!(r.recorder.descriptors.is_empty(), "{size} B: descriptors");
    }
}

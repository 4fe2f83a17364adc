//! How the fabric moves data and what it records: the execution options of one run.

/// How the engine should move data and what it should record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimOptions {
    /// Force TLP-by-TLP and packet-by-packet movement for every size.
    pub tlp_granularity: bool,
    /// Messages above this size move as bulk (fluid) transfers.
    pub coalesce_above: u64,
    /// Draw the random delays (memory access jitter, CPU poll phases); off: the noise-free model.
    pub jitter: bool,
    /// The point's seed (see gdrsim's `scenario::point_seed`): every server and CPU thread derives
    /// its random stream from it and its own name.
    pub seed: u64,
    /// Keep spans (the noise-free message's stages); off for iterations and streaming.
    pub record: bool,
    /// With `record`, also keep the traffic: every unit's hop across every channel and the
    /// NICs' descriptors, which walks and traces draw. A point's stages need only the spans,
    /// and a bulk transfer's hops grow with the square of the transfers it shares links with
    /// (a stretch per transfer at each rate change): 1024 flows of 1 MiB held 1 GB of them.
    pub traffic: bool,
    /// When a start or an end of a bulk transfer re-solves the sharing: at once, or batched
    /// with those that follow shortly when very many transfers are in flight.
    pub sharing: Sharing,
}

/// When the bulk transfers' rates are re-solved after a start or an end.
///
/// Exactly (at once, after every event of the instant) until `exact_below` transfers are
/// active at once. From then on, to the end of the run, a re-solve waits `defer_ppm`
/// millionths of the active transfers' mean span (from joining the sharing to their end at
/// their rate now), so that the starts and ends of that wait are shared out in one solve: a
/// solve costs the whole sharing group, and an all-to-all of 16 nodes (16,256 flows, one
/// group) starts or ends a transfer every few nanoseconds. What the wait costs: a transfer
/// that starts idles until the solve, capacity an ended transfer frees idles until it, and
/// nothing else changes (no rate is raised without a solve, so no resource ever exceeds its
/// capacity). A flow's next message that joins as the one before it ends takes over its
/// rate without a solve (the demands are the same). The lost throughput is at most about
/// four waits per transfer: `4 x defer_ppm` millionths of its time. In this mode the loaded round trips of a solve
/// start from those of the last one and stop within `defer_ppm` millionths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sharing {
    /// Re-solve at once until this many transfers are active at once.
    pub exact_below: u32,
    /// Otherwise wait this many millionths of the active transfers' mean span.
    pub defer_ppm: u32,
}

impl Sharing {
    /// Every re-solve at once, however many transfers (the tests' and checks' reference).
    pub const EXACT: Sharing = Sharing {
        exact_below: u32::MAX,
        defer_ppm: 0,
    };
}

impl SimOptions {
    /// Without jitter: the noise-free message, a steady state, a walk.
    pub fn noise_free(self) -> Self {
        SimOptions {
            jitter: false,
            ..self
        }
    }

    /// Keeping spans, hops and descriptors (walks, traces, tests of the traffic).
    pub fn recording(self) -> Self {
        SimOptions {
            record: true,
            traffic: true,
            ..self
        }
    }

    /// Keeping spans only (a point's noise-free run: its stages and critical path).
    pub fn recording_spans(self) -> Self {
        SimOptions {
            record: true,
            traffic: false,
            ..self
        }
    }

    /// TLP by TLP for every size (`true`) or bulk transfers above `coalesce_above` (`false`).
    pub fn tlp(self, tlp: bool) -> Self {
        SimOptions {
            tlp_granularity: tlp,
            ..self
        }
    }
}

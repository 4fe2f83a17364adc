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

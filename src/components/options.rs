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
    /// The point's seed (see [`crate::scenario::point_seed`]): every server and CPU thread derives
    /// its random stream from it and its own name.
    pub seed: u64,
    /// Keep spans and descriptors (the noise-free message); off for iterations and streaming.
    pub record: bool,
}

impl SimOptions {
    /// Without jitter: the noise-free message, a steady state, a walk.
    pub fn noise_free(self) -> Self {
        SimOptions {
            jitter: false,
            ..self
        }
    }

    /// Keeping spans and descriptors.
    pub fn recording(self) -> Self {
        SimOptions {
            record: true,
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

//! Streams of copies on a GPU's timeline, which the copy benchmarks (`nvbandwidth`,
//! `p2p_matrix`, and `validate` through them) measure alike: the config as that timeline sees
//! it ([`gpu_timeline`]) and copies between the GPUs of one host ([`peer`]).

pub mod peer;

use crate::config::Config;

/// The config as a copy benchmark's GPU timeline sees it (nvbandwidth's, CUDA's p2p sample's):
/// the copies were enqueued before the timed interval and a stream's next copy needs no host signalling, so of each copy's launch only
/// the copy engine's own cost on the GPU (`ce_copy_ns`) remains, and no sync.
pub fn gpu_timeline(cfg: &Config) -> Config {
    let mut c = cfg.clone();
    for h in &mut c.hosts {
        for g in &mut h.machine.gpus {
            g.copy_engine.launch = g.copy_engine.copy;
            g.copy_engine.sync = 0;
        }
    }
    c
}

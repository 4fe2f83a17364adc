//! Re-running one point with recording on and jitter off: the recorder, plan and fabric a walk
//! or a trace is made from.

use super::*;

/// One recorded run of a point.
pub struct Recorded {
    /// What the path asked of each side.
    pub plan: paths::Sides,
    /// The plan of steps that ran.
    pub steps: crate::plan::Plan,
    /// The path that ran.
    pub effective_path: crate::effective::EffectivePath,
    /// Why it ran as `effective_path` where the path chose or fell back (results.csv `reason`).
    pub reason: String,
    /// One-time costs kept out of the latency (results.csv `setup_us`), picoseconds.
    pub setup_ps: Ps,
    /// Everything the run recorded: hops, spans of message 0, descriptors, component names.
    pub recorder: Recorder,
    /// The fabric's outcome: each message's (post, delivery) times, host-memory bytes, CPU time.
    pub outcome: Outcome,
    /// Stage spans of every message, in pipeline order per message. The recorder keeps message
    /// 0's only; the others are rebuilt from the fabric's per-message stage times.
    pub spans: Vec<Span>,
    /// Whether the sender's payload rides inside the WQE.
    pub inline: bool,
    /// Pinned bounce buffers per staged side (as `setup_us` counts them).
    pub bounce_buffers: u32,
    /// Effective MPS of the payload read's completions, bytes.
    pub mps_read: u64,
    /// Effective MPS of the payload write route, bytes.
    pub mps_write: u64,
    /// Effective MPS of the cudaMemcpy D2H route, bytes.
    pub mps_d2h: u64,
}

/// The noise-free run of (scenario `si`, `path`, `size`) with `messages` messages, at most
/// `window` in flight, recording on.
pub fn record(
    cfg: &Config,
    topo: &Topology,
    si: usize,
    (path, op): (PathKind, Op),
    size: u64,
    window: u32,
    messages: u32,
) -> Result<Recorded> {
    let sc = &cfg.scenarios[si];
    let built = paths::plan(cfg, sc.first(), topo, path, op, size)
        .with_context(|| format!("scenario {}: building the {} path", sc.name, path.name()))?;
    // The seed of the point in a sweep (it does not matter with jitter off).
    let seed = scenario::point_seed(cfg.seed, si, path, op, size);
    let opts = scenario::sim_options(cfg, seed).noise_free().recording();
    let mut f = Fabric::new(topo, &[&built.plan], opts);
    let outcome = f.run(window, messages);
    let spans: Vec<Span> = f.recorder.spans.clone();
    let recorder = std::mem::take(&mut f.recorder);
    let steps = &built.plan.steps;
    let mps_read = steps
        .iter()
        .find_map(|s| match s.kind {
            plan::StepKind::DmaRead { read, .. } if s.payload => Some(read.mps),
            _ => None,
        })
        .unwrap_or(0);
    let mps_write = steps
        .iter()
        .find_map(|s| match s.kind {
            plan::StepKind::DmaWrite { mps, .. } => Some(mps),
            _ => None,
        })
        .unwrap_or(0);
    let mps_d2h = steps
        .iter()
        .find_map(|s| match s.kind {
            plan::StepKind::Memcpy {
                copy: Copy::D2h { mps, .. },
                ..
            } => Some(mps),
            _ => None,
        })
        .unwrap_or(0);
    Ok(Recorded {
        plan: built.sides,
        effective_path: built.effective(),
        reason: built.reason.clone(),
        setup_ps: built.setup,
        inline: built.inline,
        bounce_buffers: built.bounce_buffers,
        mps_read,
        mps_write,
        mps_d2h,
        recorder,
        outcome,
        spans,
        steps: built.plan,
    })
}

// ---- reading the recorder --------------------------------------------------------------------

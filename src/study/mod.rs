//! A study: a config loaded and checked, its points simulated, its scenarios described and its
//! cost estimated. Every command and tool that loads or simulates goes through here (`run` in
//! `app`, `sensitivity`, `calibrate`, `perftest`, `nvbandwidth`, `p2p-matrix`, `walk`, `trace`,
//! `check`, `params`, `topo`), so none of them reaches up into another's command glue.

mod ceiling;
mod cost;
pub mod gate;
mod info;
mod load;
mod machine;
mod simulate;

pub use ceiling::ceiling;
pub use cost::{cost_line, point_name, runs_work, study_work, threads};
pub use gate::{DEFAULT_MAX_EVENTS, Limits, Work, admit};
pub use info::run_info;
pub use load::{load_config, plausibility, source_name};
pub(crate) use simulate::past_horizon;
pub use simulate::{simulate, simulate_repeats};

//! A study: a config loaded and checked, its points simulated, its scenarios described and its
//! cost estimated. Every command and tool that loads or simulates goes through here (`run` in
//! `app`, `sensitivity`, `calibrate`, `perftest`, `nvbandwidth`, `p2p-matrix`, `walk`, `trace`,
//! `check`, `params`, `topo`), so none of them reaches up into another's command glue.

mod ceiling;
mod cost;
mod info;
mod load;
mod simulate;

pub use ceiling::ceiling;
pub use cost::{DEFAULT_MAX_EVENTS, check_cost, cost_line};
pub use info::run_info;
pub use load::{load_config, plausibility, source_name};
pub(crate) use simulate::past_horizon;
pub use simulate::simulate;

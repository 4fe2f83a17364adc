//! Orchestration for `gdrsim walk` and `gdrsim trace`: runs one point with recording on and
//! jitter off (the noise-free run that gives `lat_model_us`), then turns the recorder, the plan
//! and the config into the plain data that [`crate::report::walkthrough`] and
//! [`crate::report::trace`] render. The report modules never see the engine or the components.
//!
//! What is counted here, precisely:
//! - *PCIe link traversals*: payload bytes of the message's payload-carrying trains (payload DMA
//!   read completions, payload DMA writes, cudaMemcpy data; for an inline send, the payload inside
//!   the MMIO write) summed over the PCIe link-direction channels they crossed, divided by the
//!   message size. Read requests, WQEs, doorbells, CQEs, ACKs and the 1-byte flush read are
//!   control traffic and are not counted. *Root-complex passes* count the same way over
//!   root-complex channels.
//! - *copies*: cudaMemcpy stages present in the message.
//! - *bytes through host memory*: the fabric's own host-DRAM byte records (results.csv
//!   `host_mem_bytes`).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};

use crate::components::{Fabric, Outcome};
use crate::config::choice::Choice;
use crate::config::{Config, ConfigError, Op, PathKind, Registration};
use crate::plan::{self, Copy, CqeKind, Movement, PacketKind};
use crate::record::{DescriptorDir, Hop, Recorder, Span, Stage};
use crate::report::trace::{Arg, LinkBusy, Slice, TraceData, TraceStats, Track};
use crate::report::walkthrough::{
    self, Desc, Endpoint, Key, Lang, MrWhen, PathWalk, PollKind, Setup, Step, StepKind, Walk,
};
use crate::scenario::{self, paths};
use crate::topology::spec::{GPU_PAGE, HOST_PAGE};
use crate::topology::{ChannelKind, Topology, Unit};
use crate::units::{Ps, ps_to_us_exact};

mod args;
mod cost;
mod hops;
mod rerun;
mod trace;
mod walk;

pub use self::args::{
    network_scenario, parse_lang, parse_op, parse_path, parse_size, scenario_index,
};
pub use self::rerun::{Recorded, record};
pub use self::trace::{TraceRun, run_trace, trace};
pub use self::walk::{run_walk, walk};
// The children share their parent's imports and each other's helpers through `use super::*`.
use self::{args::*, hops::*};

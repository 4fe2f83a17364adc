//! gdrsim: a discrete-event performance model of GPU memory <-> remote machine transfers over RDMA.
pub mod app;
pub mod components;
pub mod config;
pub mod engine;
pub mod inspect;
pub mod record;
pub mod report;
pub mod scenario;
pub mod stats;
pub mod topology;
pub mod units;

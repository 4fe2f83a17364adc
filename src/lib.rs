//! gdrsim: a discrete-event performance model of GPU memory <-> remote machine transfers over RDMA.
pub mod components;
pub mod engine;
pub mod record;
pub mod report;
pub mod stats;
pub mod topology;
pub mod units;
pub mod config;
pub mod scenario;
pub mod app;

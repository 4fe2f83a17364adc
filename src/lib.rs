//! gdrsim: a discrete-event performance model of GPU memory <-> remote machine transfers over RDMA,
//! comparing the host-staged path with GPUDirect RDMA.
//!
//! # The pipeline
//!
//! ```text
//! configs/x.toml --study::load_config (config::load, route and horizon checks)--> Config
//!   --scenario::topology--> Topology: every host and the network (channels, routes; plain data)
//!   --scenario::plan--> Vec<Point> (scenario x path x op x size, a seed per point)
//!   study::simulate, per point (rayon, results in point order):
//!     components::Fabric --engine::run--> Recorder (spans, descriptors, hops)
//!     stats --> Summary (one results.csv row with its stages.csv rows)
//!   study::run_info --> RunInfo (classes, routes, ceilings)
//!   report --> CSVs, charts, report.md, resolved config (atomic writes)
//! ```
//!
//! # The layers
//!
//! From the bottom up: the model crate, `gdrsim_model` (`crates/model`: `units`, `seed`,
//! `engine`, `topology`, `plan`, `record`, `components`, re-exported here under the same
//! paths), which the compiler keeps from importing anything above it; then, in this crate,
//! `progress`; the machines as a config describes them (`config`); `effective`, the words a
//! result uses for how the data moved; `stats` and `report`, result rows and every file and
//! text written from them (no engine, no scenario); `scenario`, a point to a plan simulated
//! into a row; `study`, a config loaded and checked, its points simulated in parallel, its
//! scenarios described and its cost estimated; the tools (`perftest`, `nvbandwidth`,
//! `nccl_tests`, `p2p_matrix`, `measured`, `calibrate`, `sensitivity`, `validate`, `scale`,
//! `inspect`, `import`), which load and simulate only through `study`; and `app`, the `run`, `merge`,
//! `sensitivity` and `slurm` commands, which only the binary's command line (and its tests)
//! calls.
//!
//! # The two paths
//!
//! ```text
//! staged:    GPU mem -cudaMemcpy D2H-> host bounce -NIC DMA read-> wire -NIC DMA write-> host bounce -cudaMemcpy H2D-> GPU mem
//! gpudirect: GPU mem -NIC P2P DMA read-> wire -NIC P2P DMA write-> GPU mem (+ flush: 1-byte RDMA Read)
//! ```
//!
//! # Determinism
//!
//! Times are integer picoseconds and sizes integer bytes; every random stream is seeded from the
//! config seed and the point; no hash-map order and no wall-clock time reach an output. The same
//! config and seed give the same bytes on any number of threads.
//!
//! ```
//! // One point of the embedded default study: an 8-byte GPUDirect write on the PIX placement.
//! let cfg = gdrsim::config::parse(gdrsim::config::DEFAULT_TOML, "default").unwrap();
//! let topo = &gdrsim::scenario::topology(&cfg);
//! let point = gdrsim::scenario::Point {
//!     scenario: 0,
//!     path: gdrsim::config::PathKind::GpuDirect,
//!     op: gdrsim::config::Op::WriteImm,
//!     size: 8,
//!     seed: 1,
//!     variant: 0,
//! };
//! let row = gdrsim::scenario::simulate_point(&cfg, topo, &point).summary;
//! assert_eq!(row.effective_path.name(), "gpudirect");
//! let critical: u64 = row.stages.iter().map(|s| s.critical_ps).sum();
//! assert_eq!(critical, row.lat_model_ps);
//! ```
// Every public item says what it holds or does (clippy runs with -D warnings).
#![warn(missing_docs)]

pub use gdrsim_model::{components, engine, plan, record, seed, topology, units};
pub use gdrsim_report::report;
pub use gdrsim_scenario::{bottleneck, config, effective, fabric_load, progress, scenario, stats};

pub mod app;
pub mod calibrate;
pub mod compare;
pub mod gpu_copies;
pub mod import;
pub mod inspect;
pub mod measured;
pub mod nccl_tests;
pub mod nvbandwidth;
pub mod p2p_matrix;
pub mod perftest;
pub mod scale;
pub mod sensitivity;
pub mod study;
pub mod validate;

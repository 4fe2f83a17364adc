//! The integration tests, one crate so that the binary links once (they were fourteen crates,
//! each linking the library again: most of a clean `cargo test`'s time). Each module is what
//! one file of tests/ was; `cargo test --test it MODULE::` runs one of them.

mod support;

mod behaviour;
mod c2c;
mod capacity;
mod cli;
mod collective;
mod compare;
mod contention;
mod cpu_family;
mod fabric;
mod fabric_report;
mod fat_tree;
mod flow_properties;
mod fuzz_configs;
mod gate;
mod hostile_configs;
mod import;
mod import_nccl;
mod intra;
mod layers;
mod measured;
mod memory;
mod merge;
mod nccl_tests;
mod nvbandwidth;
mod nvlink;
mod oracles;
mod overlay;
mod p2p_matrix;
mod presets;
mod properties;
mod pxn;
mod rail;
mod references;
mod report;
mod slurm;
mod sweep;
mod trace;
mod walk;
mod workload;

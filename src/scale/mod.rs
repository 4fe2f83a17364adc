//! Studies larger than one machine, as Slurm job arrays: a run split into deterministic shards
//! balanced by estimated cost ([`shard`]), shard folders merged back into the whole study,
//! byte-identical to a single run ([`merge`]), and the sbatch scripts that do both
//! ([`slurm`]). The scheduler is Slurm's; gdrsim only cuts the work and puts it together.

pub mod merge;
pub mod shard;
pub mod slurm;

//! The one-time setup a walk lists per side: bounce buffers (allocated and registered),
//! GDRCopy's mapping, and the GPU memory registration with the first entries of its MTT.

use super::context::PathCtx;
use super::*;

/// Each side's one-time setup, sender first.
pub(super) fn setup(cfg: &Config, c: &PathCtx) -> Vec<Setup> {
    let per_transfer = cfg.sim.registration == Registration::PerTransfer;
    let size = c.size;
    let mut out = Vec::new();
    for (side, sp) in [c.plan.sender, c.plan.receiver].iter().enumerate() {
        let host = c.hosts[side];
        let reg = &host.spec.registration;
        if let Some(st) = sp.staging {
            // Pipelined staging and NCCL's host path keep a ring of `pipeline_depth`
            // chunk-sized buffers.
            let pipelined =
                st.kernel || c.run.effective_path.as_path() == Some(PathKind::StagedPipelined);
            let (count, bytes) = if pipelined {
                (cfg.sim.pipeline_depth, cfg.sim.chunk_bytes.min(size))
            } else {
                (c.run.bounce_buffers, size)
            };
            out.push(Setup::Bounce {
                host: host.name.clone(),
                pageable: st.pageable,
                count,
                addr: st.bounce_addr,
                alloc_ps: if st.pageable { 0 } else { reg.bounce_alloc },
                register_ps: reg.host_cost(bytes),
                pages: bytes.div_ceil(HOST_PAGE).max(1),
                page_bytes: HOST_PAGE,
            });
            if st.by_cpu {
                out.push(Setup::GdrMap {
                    host: host.name.clone(),
                    va: st.gpu_va,
                    cost_ps: reg.gpu_cost(size),
                });
            }
        }
        if let crate::plan::Buffer::Gpu { gpu, va, bus } = sp.nic_buffer {
            // A PXN relay's ring of `pipeline_depth` chunk buffers, registered once at
            // connection setup (as the path's setup counts it), else the message's buffer.
            let depth = cfg.sim.pipeline_depth;
            let ring = sp.relay.map(|_| (host.spec.gpus[gpu].name.clone(), depth));
            let bytes = match ring {
                Some(_) => cfg.sim.chunk_bytes.min(size) * u64::from(depth),
                None => size,
            };
            let pages = bytes.div_ceil(GPU_PAGE).max(1);
            out.push(Setup::GpuMr {
                host: host.name.clone(),
                va,
                bytes,
                pages,
                page_bytes: GPU_PAGE,
                cost_ps: reg.gpu_cost(bytes),
                mtt: (0..pages.min(4))
                    .map(|i| (va + i * GPU_PAGE, bus + i * GPU_PAGE))
                    .collect(),
                // The posting side pays it as a step before its post; the other side pays it
                // on its CPU while the poster works.
                when: match (per_transfer, (side == 1) == c.read()) {
                    _ if ring.is_some() => MrWhen::Cached,
                    (false, _) => MrWhen::Cached,
                    (true, true) => MrWhen::PerTransferStep,
                    (true, false) => MrWhen::PerTransferReceiver,
                },
                ring,
            });
        }
    }
    out
}

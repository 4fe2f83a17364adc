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
            // Pipelined staging keeps a ring of `pipeline_depth` chunk-sized buffers.
            let pipelined = c.run.effective_path.as_path() == Some(PathKind::StagedPipelined);
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
        if let crate::plan::Buffer::Gpu { va, bus, .. } = sp.nic_buffer {
            let pages = size.div_ceil(GPU_PAGE).max(1);
            out.push(Setup::GpuMr {
                host: host.name.clone(),
                va,
                bytes: size,
                pages,
                page_bytes: GPU_PAGE,
                cost_ps: reg.gpu_cost(size),
                mtt: (0..pages.min(4))
                    .map(|i| (va + i * GPU_PAGE, bus + i * GPU_PAGE))
                    .collect(),
                // The posting side pays it as a step before its post; the other side pays it
                // on its CPU while the poster works.
                when: match (per_transfer, (side == 1) == c.read()) {
                    (false, _) => MrWhen::Cached,
                    (true, true) => MrWhen::PerTransferStep,
                    (true, false) => MrWhen::PerTransferReceiver,
                },
            });
        }
    }
    out
}

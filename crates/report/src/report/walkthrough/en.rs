//! The walk in English.

use super::format::{hex, op_title, plural, route, us};
use super::model::{
    Affinity, Desc, EffectivePath, Endpoint, MrWhen, Op, PathKind, PollKind, RelayWalk, Setup,
    StepKind, Walk,
};
use super::phrases::{PathStyle, Phrases};
use crate::units::{Ps, fmt_bytes};

/// English.
pub struct English;

fn mem(gpu: bool) -> &'static str {
    if gpu { "GPU memory" } else { "host memory" }
}

fn flags(d: &Desc) -> String {
    match &d.relay {
        Some(via) => format!("GPUDirect: GPU memory of the relay {via}"),
        None if d.flags & 1 == 1 => "GPUDirect: GPU memory".into(),
        None => "host memory".into(),
    }
}

/// How a contrast line names the path walked in `style`, and the spaces that align it with
/// the other path's line.
fn label(style: PathStyle) -> (&'static str, &'static str) {
    match style {
        PathStyle::GpuDirect => ("GPUDirect", "  "),
        PathStyle::Pxn { .. } => ("PXN", "        "),
        PathStyle::NcclHost => ("NCCL host", "  "),
        _ => ("traditional", ""),
    }
}

/// What GPUDirect's latency is compared with.
fn than(style: PathStyle) -> &'static str {
    match style {
        PathStyle::Pxn { .. } => "PXN",
        PathStyle::NcclHost => "NCCL's host path",
        PathStyle::GpuDirect => "the path above (GPUDirect too)",
        _ => "staged",
    }
}

fn desc(d: &Desc) -> String {
    if d.gather {
        format!(
            "DMA descriptor (gather, the NIC reads): src={}, len={}, flags={} ({})",
            hex(d.addr),
            d.len,
            d.flags,
            flags(d)
        )
    } else {
        format!(
            "DMA descriptor (scatter, the NIC writes): dst={}, len={}, flags={} ({})",
            hex(d.addr),
            d.len,
            d.flags,
            flags(d)
        )
    }
}

impl Phrases for English {
    fn title(&self, w: &Walk) -> String {
        format!(
            "gdrsim walk: {} bytes ({}) from GPU memory on {} to GPU memory on {}, step by step on the simulated machine",
            w.size,
            fmt_bytes(w.size),
            w.ends[0].host,
            w.ends[1].host
        )
    }

    fn config_line(&self, w: &Walk) -> String {
        format!(
            "config: {}; scenario: {} (GPU-NIC affinity {})",
            w.config_name, w.scenario, w.class
        )
    }

    fn sender(&self, e: &Endpoint) -> String {
        format!(
            "sender:   {}  {} ({}) -> {} ({})",
            e.host, e.gpu, e.gpu_model, e.nic, e.nic_model
        )
    }

    fn receiver(&self, e: &Endpoint) -> String {
        format!(
            "receiver: {}  {} ({}) -> {} ({})",
            e.host, e.nic, e.nic_model, e.gpu, e.gpu_model
        )
    }

    fn operation(&self, op: Op) -> String {
        if op == Op::Read {
            format!(
                "operation: {} ({}): the receiver's NIC reads the sender's buffer; the sender's CPU takes no part",
                op_title(op),
                op.name()
            )
        } else {
            format!("operation: {} ({})", op_title(op), op.name())
        }
    }

    fn staged_cannot_carry(&self) -> &'static str {
        "the staged path cannot carry this operation (the source's CPU would have to copy it into a bounce buffer first), so only GPUDirect is walked"
    }

    fn address_map(&self, who: &str, e: &Endpoint) -> String {
        format!(
            "{who}address map (config): GPU buffer virtual address {} ({}.heap_base) + BAR offset {} ({}.bar_offset) = GPU bus address {}",
            hex(e.gpu_va),
            e.gpu,
            hex(e.bar_offset),
            e.gpu,
            hex(e.gpu_bus())
        )
    }

    fn bounce_buffer(&self, who: &str, e: &Endpoint) -> String {
        format!(
            "{who}pinned host bounce buffer {} (host_buffer_base)",
            hex(e.host_buffer)
        )
    }

    fn times_note(&self) -> &'static str {
        "times: simulated, noise-free (jitter off), in microseconds; t = 0 when the data is ready in the sender's GPU buffer"
    }

    fn path_heading(&self, n: usize, style: PathStyle, path: PathKind) -> String {
        match style {
            PathStyle::Gdrcopy => format!(
                "=== [{n}] GDRCopy path ({path}): GPU -(CPU through BAR1)-> host memory -> NIC -> wire -> NIC -> host memory -(CPU through BAR1)-> GPU ==="
            ),
            PathStyle::Pipelined => format!(
                "=== [{n}] Pipelined staging ({path}): GPU -> host memory -> NIC -> wire -> NIC -> host memory -> GPU, chunk by chunk, overlapped ==="
            ),
            PathStyle::Traditional => format!(
                "=== [{n}] Traditional path ({path}): GPU -> host memory -> NIC -> wire -> NIC -> host memory -> GPU ==="
            ),
            PathStyle::NcclHost => format!(
                "=== [{n}] NCCL's host path ({path}): GPU -(kernel stores)-> mapped host memory -> NIC -> wire -> NIC -> mapped host memory -(kernel loads)-> GPU, chunk by chunk, no cudaMemcpy ==="
            ),
            PathStyle::GpuDirect => format!(
                "=== [{n}] GPUDirect path ({path}): the NIC reads and writes GPU memory directly ==="
            ),
            PathStyle::Pxn { staged_recv } => format!(
                "=== [{n}] PXN path ({path}): GPU -> NVLink -> relay GPU next to the NIC -> NIC -> wire -> NIC -> {}GPU ===",
                if staged_recv { "host memory -> " } else { "" }
            ),
        }
    }

    fn auto_note(&self, effective: EffectivePath) -> String {
        format!("note: auto runs what NCCL would choose here: {effective}")
    }

    fn no_p2p_note(&self, effective: EffectivePath) -> String {
        format!("note: peer-to-peer is not available in this scenario; effective path: {effective}")
    }

    fn no_relay_note(&self, effective: EffectivePath, reason: &str) -> String {
        format!(
            "note: PXN has no relay here, so the sender runs as GPUDirect; effective path: {effective} ({reason})"
        )
    }

    fn setup_heading(&self, bounce: bool, setup_ps: Ps) -> String {
        format!(
            "{} (setup_us = {}: the one-time part, before t = 0, not in the latency):",
            if bounce {
                "memory registration and bounce buffers"
            } else {
                "memory registration"
            },
            us(setup_ps)
        )
    }

    fn setup(&self, s: &Setup) -> String {
        match s {
            Setup::Bounce {
                host,
                pageable: true,
                count,
                addr,
                register_ps,
                pages,
                page_bytes,
                ..
            } => format!(
                "{host}: {} at {}: malloc + ibv_reg_mr {} us each (pinned for the NIC by its registration; CUDA copies it as pageable memory; host MR: {} of {})",
                plural(
                    u64::from(*count),
                    "pageable bounce buffer",
                    "pageable bounce buffers"
                ),
                hex(*addr),
                us(*register_ps),
                plural(*pages, "page", "pages"),
                fmt_bytes(*page_bytes)
            ),
            Setup::Bounce {
                host,
                count,
                addr,
                alloc_ps,
                register_ps,
                pages,
                page_bytes,
                ..
            } => format!(
                "{host}: {} at {}: cudaMallocHost {} us + ibv_reg_mr {} us each (host MR: {} of {}, bus address = virtual address)",
                plural(
                    u64::from(*count),
                    "pinned bounce buffer",
                    "pinned bounce buffers"
                ),
                hex(*addr),
                us(*alloc_ps),
                us(*register_ps),
                plural(*pages, "page", "pages"),
                fmt_bytes(*page_bytes)
            ),
            Setup::GdrMap { host, va, cost_ps } => format!(
                "{host}: gdr_pin_buffer + gdr_map of GPU memory [{}] into the CPU's address space through BAR1, {} us, once",
                hex(*va),
                us(*cost_ps)
            ),
            Setup::GpuMr {
                host,
                va,
                bytes,
                pages,
                page_bytes,
                cost_ps,
                when,
                ring,
                ..
            } => format!(
                "{host}: ibv_reg_mr on {}, through peer memory: pins {} of {} and builds the NIC's translation table (MTT), {} us{}",
                match ring {
                    Some((gpu, buffers)) => format!(
                        "{gpu}'s memory [{}], the PXN relay's ring of {} ({bytes} bytes)",
                        hex(*va),
                        plural(u64::from(*buffers), "chunk buffer", "chunk buffers")
                    ),
                    None => format!("GPU memory [{}], {bytes} bytes", hex(*va)),
                },
                plural(*pages, "GPU page", "GPU pages"),
                fmt_bytes(*page_bytes),
                us(*cost_ps),
                match (ring, when) {
                    (Some(_), _) => ", once (at connection setup)",
                    (None, MrWhen::Cached) => ", once (registration cache)",
                    (None, MrWhen::PerTransferStep) => " (per transfer: a timed step below)",
                    (None, MrWhen::PerTransferReceiver) =>
                        " (per transfer, on this host's CPU from t = 0 while the sender works)",
                }
            ),
        }
    }

    fn mtt_entry(&self, i: usize, va: u64, bus: u64) -> String {
        format!(
            "MTT[{i}]: GPU virtual address [{}] -> bus address [{}]",
            hex(va),
            hex(bus)
        )
    }

    fn mtt_more(&self, pages: u64) -> String {
        format!("... {pages} entries in all")
    }

    fn columns(&self) -> [&'static str; 4] {
        ["start", "dur", "component", "step"]
    }

    fn delivered(&self, dst_gpu: bool, host: &str, latency_ps: Ps) -> String {
        format!(
            "delivered: the data is visible in {} on {host}; one-way latency {} us",
            mem(dst_gpu),
            us(latency_ps)
        )
    }

    fn descriptor_summary(&self, gpudirect: bool, d: &Desc) -> String {
        format!(
            "{} DMA descriptor{}: src={}, len={}, flags={}",
            match (&d.relay, gpudirect) {
                (Some(_), _) => "PXN",
                (None, true) => "GPUDirect",
                (None, false) => "traditional",
            },
            match &d.relay {
                Some(via) => format!(" (the NIC reads the relay {via}'s memory)"),
                None => String::new(),
            },
            hex(d.addr),
            d.len,
            d.flags
        )
    }

    fn off_latency(&self) -> &'static str {
        "off the latency path:"
    }

    fn contrast_heading(&self) -> &'static str {
        "=== Contrast (counted from the simulation) ==="
    }

    fn address_kind(&self, d: &Desc, e: &Endpoint) -> String {
        if let Some(via) = &d.relay {
            format!(
                "bus address of the relay {via}'s buffer = virtual address {} + BAR offset {}",
                hex(d.virt_addr),
                hex(d.bar_offset())
            )
        } else if d.flags & 1 == 1 {
            format!(
                "GPU bus address = virtual address {} + BAR offset {}",
                hex(d.virt_addr),
                hex(e.bar_offset)
            )
        } else {
            "host memory: pinned bounce buffer".into()
        }
    }

    fn source(&self, style: PathStyle, addr: u64, kind: &str) -> String {
        let (name, pad) = label(style);
        format!("{name} DMA source: {pad}{} ({kind})", hex(addr))
    }

    fn destination(&self, style: PathStyle, host: &str, addr: u64, kind: &str) -> String {
        let (name, pad) = label(style);
        format!(
            "{name} DMA destination on {host}: {pad}{} ({kind})",
            hex(addr)
        )
    }

    fn counted(&self) -> [&'static str; 6] {
        [
            "cudaMemcpy copies",
            "PCIe link traversals (payload)",
            "root-complex passes (payload)",
            "bytes through host memory",
            "CPU time per message (us)",
            "one-way latency (us)",
        ]
    }

    fn removed_column(&self) -> &'static str {
        "removed"
    }

    fn lower_latency(&self, x: f64, first: PathStyle) -> String {
        format!(
            "GPUDirect one-way latency is {x:.2}x lower than {}.",
            than(first)
        )
    }

    fn higher_latency(&self, x: f64, first: PathStyle) -> String {
        format!(
            "GPUDirect one-way latency is {x:.2}x higher than {} here.",
            than(first)
        )
    }

    fn definitions(&self) -> &'static [&'static str] {
        &[
            "definitions: a PCIe link traversal is one crossing of one PCIe link direction by the whole message payload: payload bytes summed over the",
            "  PCIe link directions they crossed (payload DMA read completions, payload DMA writes, cudaMemcpy data), divided by the message size;",
            "  read requests, WQEs, doorbells, CQEs, ACKs and the flush read are not counted. Root-complex passes count the same way over root",
            "  complexes. Bytes through host memory: payload bytes written to plus read from host DRAM on both hosts (results.csv host_mem_bytes).",
        ]
    }

    fn removed_none(&self, effective: EffectivePath) -> String {
        format!("GPUDirect removed no copy here (effective path: {effective}).")
    }

    fn removed_copy(&self, host: &str, d2h: bool) -> String {
        if d2h {
            format!("the GPU->host copy (cudaMemcpyDtoH) on {host}")
        } else {
            format!("the host->GPU copy (cudaMemcpyHtoD) on {host}")
        }
    }

    fn removed_copies(&self, list: &[String]) -> String {
        format!(
            "GPUDirect removed {}: the NIC reads and writes GPU memory directly.",
            list.join(" and ")
        )
    }

    fn relay_contrast(&self, r: &RelayWalk, class: Affinity) -> String {
        format!(
            "PXN makes no host copy on the sending side either: instead of the NIC reading {} ({class} to {}), it adds an NVLink hop ({}'s kernel stores each chunk into {}'s memory, {}) and a proxy hand-over (a flag in host memory, which the proxy thread polls): {} us for the first chunk; the NIC then reads {} ({} to {}).",
            r.from,
            r.nic,
            r.from,
            r.via,
            r.link,
            us(r.hand_over_ps),
            r.via,
            r.via_class,
            r.nic
        )
    }

    fn step(&self, k: &StepKind) -> String {
        match k {
            StepKind::MemcpyD2h {
                src_gpu,
                dst_host,
                bytes,
            } => format!(
                "cudaMemcpyDtoH: GPU[{}] -> Host[{}] {bytes} bytes",
                hex(*src_gpu),
                hex(*dst_host)
            ),
            StepKind::MemcpyH2d {
                src_host,
                dst_gpu,
                bytes,
            } => format!(
                "cudaMemcpyHtoD: Host[{}] -> GPU[{}] {bytes} bytes",
                hex(*src_host),
                hex(*dst_gpu)
            ),
            StepKind::CopyLaunch => "launch: the cudaMemcpy call until the copy engine starts".into(),
            StepKind::MemcpyAsync {
                d2h: true,
                gpu,
                host,
                bytes,
            } => format!(
                "cudaMemcpyAsync DtoH: GPU[{}] -> Host[{}] {bytes} bytes, on a copy-engine stream",
                hex(*gpu),
                hex(*host)
            ),
            StepKind::MemcpyAsync {
                d2h: false,
                gpu,
                host,
                bytes,
            } => format!(
                "cudaMemcpyAsync HtoD: Host[{}] -> GPU[{}] {bytes} bytes, on a copy-engine stream",
                hex(*host),
                hex(*gpu)
            ),
            StepKind::CopyEvent => {
                "completion event recorded; the thread, free since the launch, sees it at its next poll".into()
            }

            StepKind::CopyDma {
                d2h: true,
                tlps,
                tlp_bytes,
                route: r,
            } => format!(
                "copy engine DMA: {} of up to {tlp_bytes} B into host memory, {}",
                plural(*tlps, "posted write", "posted writes"),
                route(r)
            ),
            StepKind::CopyDma {
                d2h: false,
                tlps,
                tlp_bytes,
                route: r,
            } => format!(
                "copy engine DMA: {} of up to {tlp_bytes} B to host memory, completions {}",
                plural(*tlps, "read request", "read requests"),
                route(r)
            ),
                    StepKind::CopySync => {
                "completion signalled, the calling thread returns (it spin-waited throughout)".into()
            }
            StepKind::Gdrcopy {
                to_host: true,
                gpu,
                host,
                bytes,
            } => format!(
                "GDRCopy (gdr_copy_from_mapping): the CPU reads GPU[{}] through its BAR1 mapping into Host[{}], {bytes} bytes (uncached loads)",
                hex(*gpu),
                hex(*host)
            ),
            StepKind::Gdrcopy {
                to_host: false,
                gpu,
                host,
                bytes,
            } => format!(
                "GDRCopy (gdr_copy_to_mapping): the CPU writes Host[{}] into GPU[{}] through its BAR1 mapping, {bytes} bytes (write-combined stores; done when the last of them has crossed PCIe into GPU memory)",
                hex(*host),
                hex(*gpu)
            ),
            StepKind::Chunks {
                more,
                bytes,
                total,
                relay,
                copy_in,
                kernel,
                handover,
            } => format!(
                "the other {} of {bytes} bytes follow these steps, overlapped through the ring of {}; the last one's {} completes the {total} bytes",
                plural(*more, "chunk", "chunks"),
                if *relay { "the relay GPU's chunk buffers" } else if *kernel { "mapped host buffers" } else if *handover { "NCCL's chunk buffers in GPU memory" } else { "bounce buffers" },
                match (*kernel, *copy_in) {
                    (true, true) => "kernel load",
                    (false, true) => "cudaMemcpyHtoD",
                    _ => "receive",
                }
            ),
            StepKind::KernelStore {
                from,
                to,
                bytes,
                writes,
                write_bytes,
                route: r,
            } => format!(
                "kernel stores over NVLink (PXN): {}[{}] -> {}[{}] {bytes} bytes, {} of up to {write_bytes} B, {} (the running kernel's own stores: no launch, no CPU thread)",
                from.0,
                hex(from.1),
                to.0,
                hex(to.1),
                plural(*writes, "posted write", "posted writes"),
                route(r)
            ),
            StepKind::RelayFlag { bytes, route: r } => format!(
                "then the kernel stores the {bytes} B flag into the proxy's host memory, {}",
                route(r)
            ),
            StepKind::ProxyPoll { via } => format!(
                "the proxy thread, polling its FIFO, finds the flag: the chunk is in {via}'s memory, ready to post"
            ),
            StepKind::HostStore {
                from,
                to,
                bytes,
                writes,
                write_bytes,
                route: r,
            } => format!(
                "kernel stores into mapped host memory (NCCL's host path): {}[{}] -> host [{}] {bytes} bytes, {} of up to {write_bytes} B, {} (the running kernel's own stores: no cudaMemcpy, no launch)",
                from.0,
                hex(from.1),
                hex(*to),
                plural(*writes, "posted write", "posted writes"),
                route(r)
            ),
            StepKind::ProxyFinds => "the proxy thread, polling its FIFO, finds the flag: the chunk is in host memory, ready to post".into(),
            StepKind::FlagLoad { bytes, route: r } => format!(
                "the proxy stores the chunk's {bytes} B flag into mapped host memory; the receiving kernel, spinning on it, loads it over PCIe, {}",
                route(r)
            ),
            StepKind::HostLoad {
                from,
                to,
                bytes,
                reads,
                route: r,
            } => format!(
                "kernel loads from mapped host memory (NCCL's host path): host [{}] -> {}[{}] {bytes} bytes, {}, {} (no cudaMemcpy, no launch)",
                hex(*from),
                to.0,
                hex(to.1),
                plural(*reads, "read request", "read requests"),
                route(r)
            ),
            StepKind::DriverCopy { d2h: true } => "the driver's CPU copy from its pinned buffer into the pageable bounce buffer (bounce = \"pageable\")".into(),
            StepKind::DriverCopy { d2h: false } => "the driver's CPU copy from the pageable bounce buffer into its pinned buffer (bounce = \"pageable\")".into(),
            StepKind::Register { gpu, addr, bytes } => format!(
                "ibv_reg_mr on {} [{}], {bytes} bytes (per transfer): builds the NIC's translation table",
                mem(*gpu),
                hex(*addr)
            ),
                    StepKind::BuildWqe {
                op,
                addr,
                len,
                gpu,
                inline,
                remote,
            } => {
                let who = if *op == Op::Read { "receiving CPU" } else { "CPU" };
                let mut s = format!(
                    "{who} builds the {} WQE ({}): sge addr={} ({} virtual address), len={len}, lkey of its MR",
                    if *op == Op::Read { "read" } else { "send" },
                    op_title(*op),
                    hex(*addr),
                    if *gpu { "GPU" } else { "host" }
                );
                match (op, remote) {
                    (Op::Read, Some(r)) => s.push_str(&format!(
                        "; remote addr={} (the source), rkey of the sender's MR",
                        hex(*r)
                    )),
                    (_, Some(r)) => {
                        s.push_str(&format!("; remote addr={}, rkey of the receiver's MR", hex(*r)))
                    }
                    (_, None) => s.push_str("; the receiver's posted receive WQE names the destination"),
                }
                if *inline {
                    s.push_str("; the payload is copied into the WQE (inline)");
                }
                s
            }
            StepKind::Mmio {
                bytes,
                blueflame: true,
                route: r,
            } => format!(
                "BlueFlame MMIO write: the {bytes} B WQE and the doorbell, CPU > {}",
                route(r)
            ),
            StepKind::Mmio {
                bytes,
                blueflame: false,
                route: r,
            } => format!("doorbell: {bytes} B MMIO write, CPU > {}", route(r)),
            StepKind::WqeFetch { fetched: false, .. } => {
                "NIC send engine parses the WQE (BlueFlame: no fetch from host memory)".into()
            }
            StepKind::WqeFetch {
                fetched: true,
                route: r,
            } => format!(
                "WQE fetch: the NIC reads the WQE from host memory by DMA ({}) and parses it",
                route(r)
            ),
                    StepKind::MttLookup {
                va,
                bus,
                gpu: true,
                key,
            } => format!(
                "MR lookup by {}, MTT translation: GPU virtual address [{}] -> bus address [{}] (table built at registration)",
                key.name(),
                hex(*va),
                hex(*bus)
            ),
            StepKind::MttLookup { va, bus, key, .. } => format!(
                "MR lookup by {}, MTT translation: host virtual address [{}] -> [{}] (pinned host memory, address unchanged)",
                key.name(),
                hex(*va),
                hex(*bus)
            ),
            StepKind::ReadRequest { route: r } => format!(
                "read request: 1 packet (RETH: remote address, rkey, length) to the data's owner, {}",
                route(r)
            ),
            StepKind::RecvWqeFetch { bytes, route: r } => format!(
                "receive WQE fetch, ahead of the data: the NIC reads the posted {bytes} B receive WQE by DMA ({}); its sge gives the destination",
                route(r)
            ),
            StepKind::Descriptor(d) => desc(d),
            StepKind::Inline { bytes } => {
                format!("no DMA read: the {bytes} B payload arrived inside the WQE")
            }
            StepKind::DmaRead {
                requests,
                request_bytes,
                completions,
                gpu,
                route: r,
                first_data,
            } => format!(
                "DMA read of {}: {} of up to {request_bytes} B, {} back {} (first data at {})",
                mem(*gpu),
                plural(*requests, "read request", "read requests"),
                plural(*completions, "completion", "completions"),
                route(r),
                us(*first_data)
            ),
            StepKind::NicTx => "NIC transmit pipeline (packetise, headers)".into(),
            StepKind::Wire {
                packets,
                mtu,
                route: r,
            } => format!(
                "wire: {} (MTU {mtu} B), {}",
                plural(*packets, "packet", "packets"),
                route(r)
            ),
            StepKind::NicRx => "remote NIC receive pipeline".into(),
            StepKind::DmaWrite {
                writes,
                write_bytes,
                gpu,
                route: r,
            } => format!(
                "DMA write into {}: {} of up to {write_bytes} B, {}",
                mem(*gpu),
                plural(*writes, "posted write", "posted writes"),
                route(r)
            ),
                    StepKind::Cqe {
                op: Op::Read,
                bytes,
                route: r,
            } => format!(
                "CQE of the read ({bytes} B) written to the requester's host memory after the last response, {}",
                route(r)
            ),
            StepKind::Cqe {
                op: Op::Send,
                bytes,
                route: r,
            } => format!(
                "receive CQE ({bytes} B) written to host memory (the Send consumed the posted receive WQE), {}",
                route(r)
            ),
            StepKind::Cqe { bytes, route: r, .. } => format!(
                "receive CQE ({bytes} B) written to host memory (the Write with Immediate consumed a posted receive WQE), {}",
                route(r)
            ),
            StepKind::Poll {
                what: PollKind::RecvCqe,
            } => "CQ poll: the receiving CPU finds the CQE and reposts a receive WQE".into(),
            StepKind::Poll {
                what: PollKind::ReadCqe,
            } => "CQ poll: the requesting CPU finds the read's CQE: the data is in its buffer".into(),
            StepKind::Poll {
                what: PollKind::LastByteCpu,
            } => "the receiving CPU polls the last byte of the buffer and sees it change (a plain Write has no CQE)".into(),
            StepKind::Poll {
                what: PollKind::LastByteGpu,
            } => "a GPU kernel polls the last byte of the buffer in GPU memory and sees it change (a plain Write has no CQE)".into(),
            StepKind::Flush { addr } => format!(
                "flush: 1-byte RDMA Read of GPU[{}] through a loopback QP, so the earlier posted writes are visible to the GPU",
                hex(*addr)
            ),
            StepKind::FlushPost => "CPU posts the flush read (not inline: by doorbell)".into(),
            StepKind::FlushMmio { route: r } => format!("MMIO: the WQE to the NIC, CPU > {}", route(r)),
            StepKind::FlushEngine => "NIC send engine parses it".into(),
            StepKind::FlushLoopback { response: false } => {
                "the read request loops back through the NIC's send and receive pipelines".into()
            }
            StepKind::FlushLoopback { response: true } => {
                "the 1 B response loops back through the NIC's send and receive pipelines".into()
            }
            StepKind::FlushRead {
                request,
                completion,
            } => format!(
                "read request {} (behind the payload writes), 1 B completion {}",
                route(request),
                route(completion)
            ),
            StepKind::FlushWrite { route: r } => {
                format!("the byte written into pinned host memory, {}", route(r))
            }
            StepKind::FlushCqe { route: r } => {
                format!("flush CQE written to host memory, {}", route(r))
            }
            StepKind::FlushPoll => "CQ poll finds the flush CQE".into(),
            StepKind::DataLands { gpu, route: r } => format!(
                "the last payload write lands in {} memory, {}: the data is visible from here (the CQE, on another route, was polled before it)",
                if *gpu { "GPU" } else { "host" },
                route(r)
            ),
            StepKind::Ack { route: r } => format!(
                "RC ACK back to the sender, {} (paces streaming, not on the one-way latency)",
                route(r)
            ),
            StepKind::SendCqe { route: r } => format!(
                "send CQE written to the sender's host memory, {}: the work request (and its buffer) is complete",
                route(r)
            ),
        }
    }
}

//! The walk in Chinese, the seed program's language.

use super::format::{hex, op_title, route, us};
use super::model::{
    Affinity, Desc, EffectivePath, Endpoint, MrWhen, Op, PathKind, PollKind, RelayWalk, Setup,
    StepKind, Walk,
};
use super::phrases::{PathStyle, Phrases};
use crate::units::{Ps, fmt_bytes};

/// Chinese (简体中文).
pub struct Chinese;

fn mem(gpu: bool) -> &'static str {
    if gpu { "GPU显存" } else { "主机内存" }
}

fn flags(d: &Desc) -> String {
    match &d.relay {
        Some(via) => format!("GPUDirect路径：中继GPU {via} 的显存"),
        None if d.flags & 1 == 1 => "GPUDirect路径：GPU显存".into(),
        None => "传统路径：主机内存".into(),
    }
}

/// 对比中对所演示路径的称呼。
fn label(style: PathStyle) -> &'static str {
    match style {
        PathStyle::GpuDirect => "GPUDirect ",
        PathStyle::Pxn { .. } => "PXN路径",
        PathStyle::NcclHost => "NCCL主机路径",
        _ => "传统路径",
    }
}

/// GPUDirect的延迟与之相比的路径。
fn than(style: PathStyle) -> &'static str {
    match style {
        PathStyle::Pxn { .. } => "PXN路径",
        PathStyle::NcclHost => "NCCL主机路径",
        PathStyle::GpuDirect => "上面的路径（此处同为GPUDirect）",
        _ => "传统路径",
    }
}

fn desc(d: &Desc) -> String {
    if d.gather {
        format!(
            "网卡构建DMA描述符（gather，网卡读取）：src={}, len={}, flags={}（{}）",
            hex(d.addr),
            d.len,
            d.flags,
            flags(d)
        )
    } else {
        format!(
            "接收端网卡构建DMA描述符（scatter，网卡写入）：dst={}, len={}, flags={}（{}）",
            hex(d.addr),
            d.len,
            d.flags,
            flags(d)
        )
    }
}

impl Phrases for Chinese {
    fn title(&self, w: &Walk) -> String {
        format!(
            "gdrsim walk：在模拟机器上逐步演示 {} 字节（{}）从 {} 的GPU显存传到 {} 的GPU显存",
            w.size,
            fmt_bytes(w.size),
            w.ends[0].host,
            w.ends[1].host
        )
    }

    fn config_line(&self, w: &Walk) -> String {
        format!(
            "配置：{}；场景：{}（GPU与网卡的亲和关系 {}）",
            w.config_name, w.scenario, w.class
        )
    }

    fn sender(&self, e: &Endpoint) -> String {
        format!(
            "发送端：{}  {} ({}) -> {} ({})",
            e.host, e.gpu, e.gpu_model, e.nic, e.nic_model
        )
    }

    fn receiver(&self, e: &Endpoint) -> String {
        format!(
            "接收端：{}  {} ({}) -> {} ({})",
            e.host, e.nic, e.nic_model, e.gpu, e.gpu_model
        )
    }

    fn operation(&self, op: Op) -> String {
        if op == Op::Read {
            format!(
                "操作：{}（{}）：接收端网卡读取发送端缓冲区，发送端CPU不参与",
                op_title(op),
                op.name()
            )
        } else {
            format!("操作：{}（{}）", op_title(op), op.name())
        }
    }

    fn staged_cannot_carry(&self) -> &'static str {
        "传统（中转）路径无法承载此操作（数据源端的CPU须先将其拷入中转缓冲区），因此只演示GPUDirect路径"
    }

    fn address_map(&self, who: &str, e: &Endpoint) -> String {
        format!(
            "{who}地址映射（来自配置）：GPU显存虚拟地址 {}（{}.heap_base）+ BAR偏移 {}（{}.bar_offset）= GPU总线地址 {}",
            hex(e.gpu_va),
            e.gpu,
            hex(e.bar_offset),
            e.gpu,
            hex(e.gpu_bus())
        )
    }

    fn bounce_buffer(&self, who: &str, e: &Endpoint) -> String {
        format!(
            "{who}固定（pinned）主机中转缓冲区 {}（host_buffer_base）",
            hex(e.host_buffer)
        )
    }

    fn times_note(&self) -> &'static str {
        "时间：模拟所得，无噪声（关闭抖动），单位微秒；t = 0 为数据在发送端GPU缓冲区就绪的时刻"
    }

    fn path_heading(&self, n: usize, style: PathStyle, path: PathKind) -> String {
        match style {
            PathStyle::Gdrcopy => format!(
                "=== [{n}] [GDRCopy路径]（{path}）：GPU -（CPU经BAR1）-> 主机内存 -> 网卡 -> 线路 -> 网卡 -> 主机内存 -（CPU经BAR1）-> GPU ==="
            ),
            PathStyle::Pipelined => format!(
                "=== [{n}] [流水线中转路径]（{path}）：GPU -> 主机内存 -> 网卡 -> 线路 -> 网卡 -> 主机内存 -> GPU，分块重叠进行 ==="
            ),
            PathStyle::Traditional => format!(
                "=== [{n}] [传统路径]（{path}）：GPU -> 主机内存 -> 网卡 -> 线路 -> 网卡 -> 主机内存 -> GPU ==="
            ),
            PathStyle::NcclHost => format!(
                "=== [{n}] [NCCL主机路径]（{path}）：GPU -（内核存储）-> 映射的主机内存 -> 网卡 -> 线路 -> 网卡 -> 映射的主机内存 -（内核加载）-> GPU，分块进行，无cudaMemcpy ==="
            ),
            PathStyle::GpuDirect => {
                format!("=== [{n}] [GPUDirect路径]（{path}）：网卡直接读写GPU显存 ===")
            }
            PathStyle::Pxn { staged_recv } => format!(
                "=== [{n}] [PXN路径]（{path}）：GPU -> NVLink -> 网卡旁的中继GPU -> 网卡 -> 线路 -> 网卡 -> {}GPU ===",
                if staged_recv { "主机内存 -> " } else { "" }
            ),
        }
    }

    fn auto_note(&self, effective: EffectivePath) -> String {
        format!("注意：auto 按NCCL在此处的选择运行：{effective}")
    }

    fn no_p2p_note(&self, effective: EffectivePath) -> String {
        format!("注意：此场景不支持点对点（P2P）访问，实际路径：{effective}")
    }

    fn no_relay_note(&self, effective: EffectivePath, reason: &str) -> String {
        format!(
            "注意：此处PXN没有可用的中继GPU，发送端按GPUDirect运行；实际路径：{effective}（{reason}）"
        )
    }

    fn setup_heading(&self, bounce: bool, setup_ps: Ps) -> String {
        format!(
            "{}（setup_us = {}：一次性开销，在 t = 0 之前完成，不计入延迟）：",
            if bounce {
                "内存注册与中转缓冲区"
            } else {
                "内存注册"
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
                "{host}：在 {} 分配并注册 {count} 个可分页中转缓冲区：每个 malloc + ibv_reg_mr {} us（注册使其对网卡固定；CUDA按可分页内存拷贝；主机MR：{pages} 页 × {}）",
                hex(*addr),
                us(*register_ps),
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
                "{host}：在 {} 分配并注册 {count} 个固定（pinned）中转缓冲区：每个 cudaMallocHost {} us + ibv_reg_mr {} us（主机MR：{pages} 页 × {}，总线地址 = 虚拟地址）",
                hex(*addr),
                us(*alloc_ps),
                us(*register_ps),
                fmt_bytes(*page_bytes)
            ),
            Setup::GdrMap { host, va, cost_ps } => format!(
                "{host}：gdr_pin_buffer + gdr_map 将GPU显存 [{}] 经BAR1映射到CPU地址空间，{} us，一次性",
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
                "{host}：ibv_reg_mr 经 peer memory 注册{}，{bytes} 字节：锁定 {pages} 个GPU页（每页 {}）并构建网卡地址转换表（MTT），{} us{}",
                match ring {
                    Some((gpu, buffers)) => format!(
                        " {gpu} 的显存[{}]，即PXN中继的 {buffers} 个分块缓冲区环",
                        hex(*va)
                    ),
                    None => format!("GPU显存[{}]", hex(*va)),
                },
                fmt_bytes(*page_bytes),
                us(*cost_ps),
                match (ring, when) {
                    (Some(_), _) => "，只在建立连接时做一次",
                    (None, MrWhen::Cached) => "，只做一次（注册缓存）",
                    (None, MrWhen::PerTransferStep) => "（每次传输都注册：见下方计时步骤）",
                    (None, MrWhen::PerTransferReceiver) =>
                        "（每次传输都注册：在发送端工作的同时，由本机CPU从 t = 0 开始执行）",
                }
            ),
        }
    }

    fn mtt_entry(&self, i: usize, va: u64, bus: u64) -> String {
        format!(
            "MTT[{i}]：GPU虚拟地址[{}] -> 总线地址[{}]",
            hex(va),
            hex(bus)
        )
    }

    fn mtt_more(&self, pages: u64) -> String {
        format!("……共 {pages} 项")
    }

    fn columns(&self) -> [&'static str; 4] {
        ["开始", "耗时", "部件", "步骤"]
    }

    fn delivered(&self, dst_gpu: bool, host: &str, latency_ps: Ps) -> String {
        format!(
            "送达：数据在 {host} 的{}中可见；单向延迟 {} us",
            mem(dst_gpu),
            us(latency_ps)
        )
    }

    fn descriptor_summary(&self, gpudirect: bool, d: &Desc) -> String {
        format!(
            "{}DMA描述符{}: src={}, len={}, flags={}",
            match (&d.relay, gpudirect) {
                (Some(_), _) => "PXN ",
                (None, true) => "GPUDirect ",
                (None, false) => "传统",
            },
            match &d.relay {
                Some(via) => format!("（网卡读取中继 {via} 的显存）"),
                None => String::new(),
            },
            hex(d.addr),
            d.len,
            d.flags
        )
    }

    fn off_latency(&self) -> &'static str {
        "不在延迟路径上："
    }

    fn contrast_heading(&self) -> &'static str {
        "=== 对比结果（由模拟统计得出） ==="
    }

    fn address_kind(&self, d: &Desc, e: &Endpoint) -> String {
        if let Some(via) = &d.relay {
            format!(
                "中继 {via} 缓冲区的总线地址 = 虚拟地址 {} + BAR偏移 {}",
                hex(d.virt_addr),
                hex(d.bar_offset())
            )
        } else if d.flags & 1 == 1 {
            format!(
                "GPU总线地址 = 虚拟地址 {} + BAR偏移 {}",
                hex(d.virt_addr),
                hex(e.bar_offset)
            )
        } else {
            "主机内存：固定中转缓冲区".into()
        }
    }

    fn source(&self, style: PathStyle, addr: u64, kind: &str) -> String {
        format!("{}DMA源地址: {}（{kind}）", label(style), hex(addr))
    }

    fn destination(&self, style: PathStyle, host: &str, addr: u64, kind: &str) -> String {
        format!(
            "{}在 {host} 的DMA目的地址: {}（{kind}）",
            label(style).trim_end(),
            hex(addr)
        )
    }

    fn counted(&self) -> [&'static str; 6] {
        [
            "cudaMemcpy拷贝次数",
            "PCIe链路穿越次数（数据）",
            "经过根复合体次数（数据）",
            "经过主机内存的字节数",
            "每条消息的CPU时间（us）",
            "单向延迟（us）",
        ]
    }

    fn removed_column(&self) -> &'static str {
        "减少"
    }

    fn lower_latency(&self, x: f64, first: PathStyle) -> String {
        format!("GPUDirect的单向延迟是{}的 1/{x:.2}。", than(first))
    }

    fn higher_latency(&self, x: f64, first: PathStyle) -> String {
        format!("此场景中GPUDirect的单向延迟是{}的 {x:.2} 倍。", than(first))
    }

    fn definitions(&self) -> &'static [&'static str] {
        &[
            "定义：PCIe链路穿越次数 = 数据载荷经过的每个PCIe链路方向上的字节数之和（网卡DMA读的完成包、网卡DMA写、cudaMemcpy的数据）除以消息大小；",
            "  读请求、WQE、门铃、CQE、ACK与flush读不计。经过根复合体次数按同样方法统计。经过主机内存的字节数：两台主机DRAM中写入与读出的",
            "  载荷字节数之和（即results.csv的host_mem_bytes）。",
        ]
    }

    fn removed_none(&self, effective: EffectivePath) -> String {
        format!("此场景中GPUDirect没有省去任何拷贝（实际路径：{effective}）。")
    }

    fn removed_copy(&self, host: &str, d2h: bool) -> String {
        if d2h {
            format!("{host} 上GPU->主机的拷贝（cudaMemcpyDtoH）")
        } else {
            format!("{host} 上主机->GPU的拷贝（cudaMemcpyHtoD）")
        }
    }

    fn removed_copies(&self, list: &[String]) -> String {
        format!("GPUDirect省去了 {}，网卡直接读写显存。", list.join(" 和 "))
    }

    fn relay_contrast(&self, r: &RelayWalk, class: Affinity) -> String {
        format!(
            "PXN在发送端同样没有经主机内存的拷贝：网卡不再读取 {}（到 {} 为 {class}），代之以一次NVLink中转（{} 的内核将每个分块写入 {} 的显存，{}）和一次代理线程交接（内核在主机内存中写入标志，代理线程轮询发现）：首个分块耗时 {} us；随后网卡读取 {}（到 {} 为 {}）。",
            r.from,
            r.nic,
            r.from,
            r.via,
            r.link,
            us(r.hand_over_ps),
            r.via,
            r.nic,
            r.via_class
        )
    }

    fn step(&self, k: &StepKind) -> String {
        match k {
            StepKind::MemcpyD2h {
                src_gpu,
                dst_host,
                bytes,
            } => format!(
                "cudaMemcpyDtoH: GPU[{}] -> Host[{}] {bytes} bytes（GPU到主机拷贝）",
                hex(*src_gpu),
                hex(*dst_host)
            ),
            StepKind::MemcpyH2d {
                src_host,
                dst_gpu,
                bytes,
            } => format!(
                "cudaMemcpyHtoD: Host[{}] -> GPU[{}] {bytes} bytes（主机到GPU拷贝）",
                hex(*src_host),
                hex(*dst_gpu)
            ),
            StepKind::CopyLaunch => "启动：从调用cudaMemcpy到拷贝引擎开始工作".into(),
            StepKind::MemcpyAsync {
                d2h: true,
                gpu,
                host,
                bytes,
            } => format!(
                "cudaMemcpyAsync DtoH: GPU[{}] -> Host[{}] {bytes} bytes（拷贝引擎流上的异步拷贝）",
                hex(*gpu),
                hex(*host)
            ),
            StepKind::MemcpyAsync {
                d2h: false,
                gpu,
                host,
                bytes,
            } => format!(
                "cudaMemcpyAsync HtoD: Host[{}] -> GPU[{}] {bytes} bytes（拷贝引擎流上的异步拷贝）",
                hex(*host),
                hex(*gpu)
            ),
            StepKind::CopyEvent => "完成事件已记录；线程自启动后即空闲，在下次轮询时发现它".into(),

            StepKind::CopyDma {
                d2h: true,
                tlps,
                tlp_bytes,
                route: r,
            } => format!(
                "拷贝引擎DMA：{tlps}个写事务（posted write，每个至多{tlp_bytes} B）写入主机内存，{}",
                route(r)
            ),
            StepKind::CopyDma {
                d2h: false,
                tlps,
                tlp_bytes,
                route: r,
            } => format!(
                "拷贝引擎DMA：{tlps}个读请求（每个至多{tlp_bytes} B）读取主机内存，完成包经 {}",
                route(r)
            ),
            StepKind::CopySync => "完成通知，调用线程返回（其间一直忙等）".into(),
            StepKind::Gdrcopy {
                to_host: true,
                gpu,
                host,
                bytes,
            } => format!(
                "GDRCopy（gdr_copy_from_mapping）：CPU经BAR1映射读取GPU[{}]写入Host[{}]，{bytes} 字节（非缓存读）",
                hex(*gpu),
                hex(*host)
            ),
            StepKind::Gdrcopy {
                to_host: false,
                gpu,
                host,
                bytes,
            } => format!(
                "GDRCopy（gdr_copy_to_mapping）：CPU将Host[{}]经BAR1映射写入GPU[{}]，{bytes} 字节（写合并；最后一批写入经PCIe到达GPU内存时完成）",
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
                "其余 {more} 个 {bytes} 字节的分块重复上述步骤，经{}环重叠进行；最后一块的{}完成全部 {total} 字节",
                if *relay {
                    "中继GPU的分块缓冲区"
                } else if *kernel {
                    "映射的主机缓冲区"
                } else if *handover {
                    "GPU显存中的NCCL分块缓冲区"
                } else {
                    "中转缓冲区"
                },
                match (*kernel, *copy_in) {
                    (true, true) => "内核加载",
                    (false, true) => " cudaMemcpyHtoD ",
                    _ => "接收",
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
                "内核经NVLink写入（PXN）：{}[{}] -> {}[{}] {bytes} 字节，{writes}个写事务（posted write，每个至多{write_bytes} B），{}（正在运行的内核自己的存储指令：无需启动，不占CPU线程）",
                from.0,
                hex(from.1),
                to.0,
                hex(to.1),
                route(r)
            ),
            StepKind::RelayFlag { bytes, route: r } => format!(
                "随后内核将 {bytes} B 标志写入代理线程的主机内存，{}",
                route(r)
            ),
            StepKind::ProxyPoll { via } => {
                format!("代理线程轮询其FIFO，发现该标志：分块已在 {via} 的显存中，可以提交")
            }
            StepKind::HostStore {
                from,
                to,
                bytes,
                writes,
                write_bytes,
                route: r,
            } => format!(
                "内核写入映射的主机内存（NCCL主机路径）：{}[{}] -> 主机[{}] {bytes} 字节，{writes}个写事务（posted write，每个至多{write_bytes} B），{}（正在运行的内核自己的存储指令：无cudaMemcpy，无需启动）",
                from.0,
                hex(from.1),
                hex(*to),
                route(r)
            ),
            StepKind::ProxyFinds => {
                "代理线程轮询其FIFO，发现该标志：分块已在主机内存中，可以提交".into()
            }
            StepKind::FlagLoad { bytes, route: r } => format!(
                "代理线程将该分块的 {bytes} B 标志写入映射的主机内存；接收端内核自旋等待，经PCIe读到它，{}",
                route(r)
            ),
            StepKind::HostLoad {
                from,
                to,
                bytes,
                reads,
                route: r,
            } => format!(
                "内核从映射的主机内存加载（NCCL主机路径）：主机[{}] -> {}[{}] {bytes} 字节，{reads}个读请求，{}（无cudaMemcpy，无需启动）",
                hex(*from),
                to.0,
                hex(to.1),
                route(r)
            ),
            StepKind::DriverCopy { d2h: true } => {
                "驱动程序的CPU拷贝：从其固定缓冲区拷入可分页中转缓冲区（bounce = \"pageable\"）"
                    .into()
            }
            StepKind::DriverCopy { d2h: false } => {
                "驱动程序的CPU拷贝：从可分页中转缓冲区拷入其固定缓冲区（bounce = \"pageable\"）"
                    .into()
            }
            StepKind::Register { gpu, addr, bytes } => format!(
                "ibv_reg_mr 注册{}[{}]，{bytes} 字节（每次传输都注册）：构建网卡的地址转换表",
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
                let mut s = format!(
                    "{}构建{}WQE（{}）：sge addr={}（{}虚拟地址），len={len}，lkey指向其MR",
                    if *op == Op::Read {
                        "接收端CPU"
                    } else {
                        "CPU"
                    },
                    if *op == Op::Read { "读" } else { "发送" },
                    op_title(*op),
                    hex(*addr),
                    if *gpu { "GPU" } else { "主机" }
                );
                match (op, remote) {
                    (Op::Read, Some(r)) => s.push_str(&format!(
                        "；远端地址={}（数据源），rkey指向发送端的MR",
                        hex(*r)
                    )),
                    (_, Some(r)) => {
                        s.push_str(&format!("；远端地址={}，rkey指向接收端的MR", hex(*r)))
                    }
                    (_, None) => s.push_str("；目的地址由接收端预先提交的接收WQE给出"),
                }
                if *inline {
                    s.push_str("；数据直接拷入WQE（inline）");
                }
                s
            }
            StepKind::Mmio {
                bytes,
                blueflame: true,
                route: r,
            } => format!(
                "BlueFlame MMIO写：{bytes} B的WQE连同门铃（doorbell），CPU > {}",
                route(r)
            ),
            StepKind::Mmio {
                bytes,
                blueflame: false,
                route: r,
            } => format!("门铃（doorbell）：{bytes} B MMIO写，CPU > {}", route(r)),
            StepKind::WqeFetch { fetched: false, .. } => {
                "网卡发送引擎解析WQE（BlueFlame：无需从主机内存取WQE）".into()
            }
            StepKind::WqeFetch {
                fetched: true,
                route: r,
            } => format!("取WQE：网卡通过DMA从主机内存读取WQE（{}）并解析", route(r)),
            StepKind::MttLookup {
                va,
                bus,
                gpu: true,
                key,
            } => format!(
                "网卡按{}查MR并经MTT转换：GPU虚拟地址[{}] -> 总线地址[{}]（转换表在注册时建立）",
                key.name(),
                hex(*va),
                hex(*bus)
            ),
            StepKind::MttLookup { va, bus, key, .. } => format!(
                "网卡按{}查MR并经MTT转换：主机虚拟地址[{}] -> [{}]（固定主机内存，地址不变）",
                key.name(),
                hex(*va),
                hex(*bus)
            ),
            StepKind::ReadRequest { route: r } => format!(
                "读请求：1个数据包（RETH：远端地址、rkey、长度）发往数据所在端，{}",
                route(r)
            ),
            StepKind::RecvWqeFetch { bytes, route: r } => format!(
                "取接收WQE（在数据到达之前预取）：网卡通过DMA读取预先提交的{bytes} B接收WQE（{}），其sge给出目的地址",
                route(r)
            ),
            StepKind::Descriptor(d) => desc(d),
            StepKind::Inline { bytes } => {
                format!("无需DMA读取：{bytes} B数据已随WQE送达网卡")
            }
            StepKind::DmaRead {
                requests,
                request_bytes,
                completions,
                gpu,
                route: r,
                first_data,
            } => format!(
                "网卡DMA读取{}：{requests}个读请求（每个至多{request_bytes} B），{completions}个完成包经 {} 返回（首批数据于 {}）",
                mem(*gpu),
                route(r),
                us(*first_data)
            ),
            StepKind::NicTx => "网卡发送流水线（分包、加包头）".into(),
            StepKind::Wire {
                packets,
                mtu,
                route: r,
            } => format!("线路传输：{packets}个数据包（MTU {mtu} B），{}", route(r)),
            StepKind::NicRx => "远端网卡接收流水线".into(),
            StepKind::DmaWrite {
                writes,
                write_bytes,
                gpu,
                route: r,
            } => format!(
                "网卡DMA写入{}：{writes}个写事务（posted write，每个至多{write_bytes} B），{}",
                mem(*gpu),
                route(r)
            ),
            StepKind::Cqe {
                op: Op::Read,
                bytes,
                route: r,
            } => format!(
                "读操作的完成项CQE（{bytes} B）在最后一个响应写入后写入请求端主机内存，{}",
                route(r)
            ),
            StepKind::Cqe {
                op: Op::Send,
                bytes,
                route: r,
            } => format!(
                "接收完成项CQE（{bytes} B）写入主机内存（Send消耗预先提交的接收WQE），{}",
                route(r)
            ),
            StepKind::Cqe {
                bytes, route: r, ..
            } => format!(
                "接收完成项CQE（{bytes} B）写入主机内存（Write with Immediate消耗一个预先提交的接收WQE），{}",
                route(r)
            ),
            StepKind::Poll {
                what: PollKind::RecvCqe,
            } => "轮询CQ：接收端CPU发现CQE，并重新提交接收WQE".into(),
            StepKind::Poll {
                what: PollKind::ReadCqe,
            } => "轮询CQ：请求端CPU发现读操作的CQE：数据已在其缓冲区中".into(),
            StepKind::Poll {
                what: PollKind::LastByteCpu,
            } => "接收端CPU轮询缓冲区最后一个字节，发现其变化（普通Write没有CQE）".into(),
            StepKind::Poll {
                what: PollKind::LastByteGpu,
            } => "GPU内核轮询GPU显存中缓冲区的最后一个字节，发现其变化（普通Write没有CQE）".into(),
            StepKind::Flush { addr } => format!(
                "刷新（flush）：经回环QP对GPU[{}]做1字节RDMA Read，确保此前的写入对GPU可见",
                hex(*addr)
            ),
            StepKind::FlushPost => "CPU提交flush读请求（非内联：经门铃）".into(),
            StepKind::FlushMmio { route: r } => format!("MMIO：WQE送往网卡，CPU > {}", route(r)),
            StepKind::FlushEngine => "网卡发送引擎解析WQE".into(),
            StepKind::FlushLoopback { response: false } => {
                "读请求经回环QP穿过网卡的发送与接收流水线".into()
            }
            StepKind::FlushLoopback { response: true } => {
                "1 B响应经回环QP穿过网卡的发送与接收流水线".into()
            }
            StepKind::FlushRead {
                request,
                completion,
            } => format!(
                "读请求 {}（排在数据写入之后），1 B完成包 {}",
                route(request),
                route(completion)
            ),
            StepKind::FlushWrite { route: r } => format!("该字节写入锁页主机内存，{}", route(r)),
            StepKind::FlushCqe { route: r } => format!("flush的CQE写入主机内存，{}", route(r)),
            StepKind::FlushPoll => "轮询CQ发现flush的CQE".into(),
            StepKind::DataLands { gpu, route: r } => format!(
                "最后一次数据写入落入{}内存，{}：数据自此可见（走另一条路径的CQE已先被轮询到）",
                if *gpu { "GPU" } else { "主机" },
                route(r)
            ),
            StepKind::Ack { route: r } => format!(
                "RC确认（ACK）返回发送端，{}（影响流水吞吐，不在单向延迟路径上）",
                route(r)
            ),
            StepKind::SendCqe { route: r } => format!(
                "发送完成项CQE写入发送端主机内存，{}：该工作请求（及其缓冲区）完成",
                route(r)
            ),
        }
    }
}

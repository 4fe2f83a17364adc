//! `[[machines.nics]]`: one NIC's wire, packet, WQE, pipeline and DMA parameters.

use super::super::defaults as d;
use super::super::raw::RawNic;
use super::quantity::{Cx, MAX_WINDOW, R};
use crate::topology::spec::*;

pub(super) fn convert(cx: &Cx, key: &str, n: &RawNic) -> R<NicSpec> {
    let k = |f: &str| format!("{key}.{f}");
    let delivery = cx.one_of(
        &n.wqe_delivery,
        &k("wqe_delivery"),
        &["auto", "blueflame", "doorbell"],
        "auto",
    )?;
    let window = n.read_window.unwrap_or(d::NIC_READ_WINDOW);
    if window == 0 || window > MAX_WINDOW {
        return Err(cx.err(
            &k("read_window"),
            "a number of outstanding reads from 1 to 65536",
            window.to_string(),
        ));
    }
    let max_rd_atomic = n.max_rd_atomic.unwrap_or(d::MAX_RD_ATOMIC);
    if !(1..=255).contains(&max_rd_atomic) {
        return Err(cx.err(
            &k("max_rd_atomic"),
            "a number of outstanding RDMA Reads per queue pair from 1 to 255 (8 bits in the QP context)",
            max_rd_atomic.to_string(),
        ));
    }
    let mtu = cx.bytes(&n.mtu_bytes, &k("mtu_bytes"), d::MTU)?;
    if !mtu.is_power_of_two() || !(256..=4096).contains(&mtu) {
        return Err(cx.err(
            &k("mtu_bytes"),
            "a power of two from 256 to 4096 bytes",
            mtu.to_string(),
        ));
    }
    Ok(NicSpec {
        name: n.name.clone(),
        model: n.model.clone().unwrap_or_else(|| "ConnectX-7".into()),
        wire_rate: cx.rate(&n.wire_rate_gbps, &k("wire_rate_gbps"), d::WIRE_RATE)?,
        mtu,
        packet_overhead: cx.bytes_in(
            &n.packet_overhead_bytes,
            &k("packet_overhead_bytes"),
            d::PACKET_OVERHEAD,
            0,
            512,
        )?,
        ack_bytes: cx.bytes_in(&n.ack_bytes, &k("ack_bytes"), d::ACK_BYTES, 1, 512)?,
        wqe_delivery: match delivery.as_str() {
            "auto" => WqeDelivery::Auto,
            "blueflame" => WqeDelivery::BlueFlame,
            _ => WqeDelivery::Doorbell,
        },
        wqe_bytes: cx.bytes_in(&n.wqe_bytes, &k("wqe_bytes"), d::WQE_BYTES, 16, 4096)?,
        cqe_bytes: cx.bytes_in(&n.cqe_bytes, &k("cqe_bytes"), d::CQE_BYTES, 16, 512)?,
        inline_max: cx.bytes_in(
            &n.inline_max_bytes,
            &k("inline_max_bytes"),
            d::INLINE_MAX,
            0,
            4096,
        )?,
        wqe_process: cx.dur(&n.wqe_process_ns, &k("wqe_process_ns"), d::WQE_PROCESS)?,
        wqe_interval: cx.dur(&n.wqe_interval_ns, &k("wqe_interval_ns"), d::WQE_INTERVAL)?,
        mtt_lookup: cx.dur(&n.mtt_lookup_ns, &k("mtt_lookup_ns"), d::MTT_LOOKUP)?,
        tx_pipeline: cx.dur(&n.tx_pipeline_ns, &k("tx_pipeline_ns"), d::TX_PIPELINE)?,
        rx_pipeline: cx.dur(&n.rx_pipeline_ns, &k("rx_pipeline_ns"), d::RX_PIPELINE)?,
        read_window: window,
        mrrs: cx.payload_size(&n.mrrs_bytes, &k("mrrs_bytes"), d::NIC_MRRS)?,
        max_rd_atomic,
        recv_wqe_bytes: cx.bytes_in(
            &n.recv_wqe_bytes,
            &k("recv_wqe_bytes"),
            d::RECV_WQE_BYTES,
            16,
            4096,
        )?,
    })
}

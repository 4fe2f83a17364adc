//! `[[machines.nics]]`: one NIC's wire, packet, WQE, pipeline and DMA parameters. The keys,
//! defaults and ranges are declared in `raw.rs`.

use super::super::raw::RawNic;
use super::quantity::{Cx, R};
use crate::topology::spec::NicSpec;

pub(super) fn convert(cx: &Cx, key: &str, n: &RawNic) -> R<NicSpec> {
    let mut nic = NicSpec {
        name: n.name.clone(),
        ..NicSpec::default()
    };
    n.apply(cx, &|f| format!("{key}.{f}"), &mut nic)?;
    Ok(nic)
}

//! `[sweep]`: the message sizes, paths and operations of the study.

use super::super::limits::{MAX_MESSAGE, MAX_TLP_GRANULAR};
use super::super::raw::{RawSizes, RawSweep};
use super::super::{Op, PathKind};
use super::quantity::{Cx, R};
use crate::units;

/// The sweep's sizes, paths (deduplicated, in order) and ops.
pub(super) fn convert(
    cx: &Cx,
    s: &RawSweep,
    tlp_granularity: bool,
) -> R<(Vec<u64>, Vec<PathKind>, Vec<Op>)> {
    let sizes = sizes(cx, &s.sizes)?;
    // TLP by TLP, every TLP and packet is an event with its records: memory and time grow
    // with the message (a 256 MiB point took 4 GB and minutes), so the mode is bounded.
    if tlp_granularity && let Some(&big) = sizes.iter().find(|&&s| s > MAX_TLP_GRANULAR) {
        return Err(cx.err(
            "sim.granularity",
            format!(
                "\"auto\" for messages above {} (\"tlp\" simulates every TLP and packet: its \
                 memory and time grow with the message)",
                units::fmt_bytes(MAX_TLP_GRANULAR)
            ),
            format!(
                "\"tlp\" with a {} message in sweep.sizes",
                units::fmt_bytes(big)
            ),
        ));
    }
    let mut paths = Vec::new();
    for &kind in &s.paths {
        if !paths.contains(&kind) {
            paths.push(kind);
        }
    }
    if paths.is_empty() {
        return Err(cx.err("sweep.paths", "at least one path", "an empty list"));
    }
    let written = s.ops.clone().unwrap_or_else(|| vec![Op::WriteImm]);
    let mut ops = Vec::new();
    for (i, &o) in written.iter().enumerate() {
        if let Some(p) = paths.iter().find(|p| !o.carried_by(**p)) {
            return Err(cx.err(
                &format!("sweep.ops[{i}]"),
                                "no `read` with a path that stages (`staged`, `gdrcopy`, or `auto`, which may): an RDMA \
                 Read's source side takes no part with its CPU, so nothing copies its GPU data \
                 to a bounce buffer (use host or gpudirect, or another op)",
                format!("\"read\" with paths containing {:?}", p.name()),
            ));
        }
        if !ops.contains(&o) {
            ops.push(o);
        }
    }
    if ops.is_empty() {
        return Err(cx.err("sweep.ops", "at least one op", "an empty list"));
    }
    Ok((sizes, paths, ops))
}

pub(super) fn sizes(cx: &Cx, s: &RawSizes) -> R<Vec<u64>> {
    let mut sizes = match s {
        RawSizes::List(list) => {
            let v = list
                .iter()
                .enumerate()
                .map(|(i, q)| cx.size(q, &format!("sweep.sizes[{i}]")))
                .collect::<R<Vec<_>>>()?;
            // A size listed twice would give two identical rows.
            if let Some(i) = (1..v.len()).find(|&i| v[..i].contains(&v[i])) {
                return Err(cx.err(
                    &format!("sweep.sizes[{i}]"),
                    "sizes listed once each",
                    format!(
                        "{} bytes, already at sweep.sizes[{}]",
                        v[i],
                        v[..i].iter().position(|&x| x == v[i]).unwrap_or(0)
                    ),
                ));
            }
            v
        }
        RawSizes::Range(r) => {
            let from = cx.size(&r.from, "sweep.sizes.from")?;
            let to = cx.size(&r.to, "sweep.sizes.to")?;
            let factor = r.factor.unwrap_or(2);
            if factor < 2 {
                return Err(cx.err(
                    "sweep.sizes.factor",
                    "an integer factor of at least 2",
                    factor.to_string(),
                ));
            }
            if to > MAX_MESSAGE {
                return Err(cx.err("sweep.sizes.to", "a size up to 16 GiB", to.to_string()));
            }
            if to < from {
                return Err(cx.err(
                    "sweep.sizes.to",
                    format!("a size of at least `from` ({from} bytes)"),
                    to.to_string(),
                ));
            }
            let mut v = vec![];
            let mut x = from;
            while x <= to {
                v.push(x);
                x = match x.checked_mul(factor) {
                    Some(n) => n,
                    None => break,
                };
            }
            v
        }
    };
    if sizes.is_empty() {
        return Err(cx.err("sweep.sizes", "at least one size", "an empty list"));
    }
    if let Some(&big) = sizes.iter().find(|&&s| s > MAX_MESSAGE) {
        return Err(cx.err(
            "sweep.sizes",
            "sizes up to 16 GiB",
            format!("{} ({big} bytes)", units::fmt_bytes(big)),
        ));
    }
    sizes.dedup();
    Ok(sizes)
}

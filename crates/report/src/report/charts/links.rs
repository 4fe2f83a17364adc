//! `links`: where the streaming run saturates. At the comparison size, for each path (one panel
//! each) and each scenario of several flows (all scenarios when none has several), the busiest
//! channel directions of the streaming run as horizontal bars of their busy fraction, with the
//! achieved rate at the bar end.
//!
//! Why a chart of its own: with many flows the aggregate bandwidth says how much moved but not
//! where it queued; the links that sit at 90-100% are the answer to "what would I have to widen".
//! The bars come from `links.csv` (the same rows), so the chart and the CSV never disagree. With
//! many scenarios each keeps fewer bars, so the chart stays readable at 8 or more.
//!
//! Each bar's channel is named on a line of its own just above the bar, with its busy share and
//! rate at the right end of that line, both within the panel: a channel name is long
//! ("dgx-2/pcie:mlx5_0>plx0 (+1 alike)"), and set left of the axis, beside three to five
//! panels, the names ran into the panel before and the rates into the panel after.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::data::sig3;
use super::style::{self, ChartSpec, Legend, PlotResult, text_size};
use super::{Ctx, Kind};
use crate::stats::LinkRow;
use crate::units::fmt_bytes;

/// Bars over all groups of a panel, at most.
const BARS_PER_PANEL: usize = 24;

/// One bar: its slot from the top, the scenario (colour), the channel and its label (channels
/// loaded alike, the eight rails of an 8-GPU node, share one bar: "name (+7 alike)").
struct Bar<'a> {
    slot: usize,
    scenario: usize,
    link: &'a LinkRow,
    label: String,
}

/// The busiest channels (busy at least 0.5%), those loaded alike (busy within half a percent point, rate within
/// 0.5%) merged into one entry with their count, at most `keep` entries. An entry is named by
/// its busiest channel, or by its busiest switch fabric leaf-spine cable (`spine`) where it
/// merged one: where the spine cables are as busy as the NIC ports, the bar names a spine
/// cable (a study without a switch fabric has none, and keeps its bars).
fn busiest<'a>(
    links: &'a [LinkRow],
    keep: usize,
    spine: &dyn Fn(&str) -> bool,
) -> Vec<(&'a LinkRow, usize)> {
    let mut sorted: Vec<&LinkRow> = links.iter().filter(|l| l.busy >= 0.005).collect();
    sorted.sort_by(|a, b| b.busy.total_cmp(&a.busy).then(a.channel.cmp(&b.channel)));
    let mut out: Vec<(&LinkRow, usize)> = Vec::new();
    for l in sorted {
        let full = out.len() == keep;
        match out.last_mut() {
            Some((first, n))
                if (first.busy - l.busy).abs() < 0.005
                    && (first.rate_gbps - l.rate_gbps).abs() <= 0.005 * first.rate_gbps =>
            {
                *n += 1;
                if spine(&l.channel) && !spine(&first.channel) {
                    *first = l;
                }
            }
            _ if full => break,
            _ => out.push((l, 1)),
        }
    }
    out
}

/// A scenario's group of bars in one panel, under a header slot with its name.
struct Group {
    name: String,
    header: usize,
}

pub fn draw<DB: DrawingBackend>(root: &style::Area<DB>, ctx: &Ctx) -> Result<()> {
    let (m, th) = (ctx.model, &ctx.th);
    let size = m.nearest_size(ctx.info.output.compare_size);

    let multi: Vec<usize> = (0..m.scenarios.len())
        .filter(|&i| {
            m.series
                .iter()
                .filter(|s| s.scenario == i)
                .filter_map(|s| row_at(s, size))
                .any(|r| r.flows > 1)
        })
        .collect();
    let chosen: Vec<usize> = if multi.is_empty() {
        (0..m.scenarios.len()).collect()
    } else {
        multi
    };
    let per_group = (BARS_PER_PANEL / chosen.len().max(1)).clamp(2, 6);

    // Per path: its bars and groups.
    let mut panels: Vec<(String, Vec<Bar>, Vec<Group>, usize)> = Vec::new();
    for (pi, path) in m.paths.iter().enumerate() {
        let (mut bars, mut groups, mut slot) = (Vec::new(), Vec::new(), 0);
        for &sc in &chosen {
            let Some(row) = m
                .series
                .iter()
                .find(|s| s.path == pi && s.scenario == sc)
                .and_then(|s| row_at(s, size))
            else {
                continue;
            };
            let fabric = row.fabric.as_ref();
            let cable = |name: &str| fabric.and_then(|f| f.cable(name));
            let spine = |name: &str| cable(name).is_some_and(|c| c.cable.is_spine());
            let links = busiest(&row.links, per_group, &spine);
            if links.is_empty() {
                continue;
            }
            groups.push(Group {
                name: m.scenarios[sc].name.clone(),
                header: slot,
            });
            slot += 1;
            for (link, n) in links {
                let label = match (n, cable(&link.channel)) {
                    (1, Some(c)) if c.cable.is_spine() => {
                        let flows = c.flows.len();
                        let s = if flows == 1 { "" } else { "s" };
                        format!("{}: {flows} flow{s}", link.channel)
                    }
                    (1, _) => link.channel.clone(),
                    (n, _) => format!("{} (+{} alike)", link.channel, n - 1),
                };
                bars.push(Bar {
                    slot,
                    scenario: sc,
                    link,
                    label,
                });
                slot += 1;
            }
        }
        if !bars.is_empty() {
            panels.push((path.to_string(), bars, groups, slot.max(6)));
        }
    }

    let mut legend = style::series_legend(m, false);
    legend.push(Legend::Gap);
    legend.push(Legend::Note(format!(
        "Busy: the fraction of the streaming run each channel direction spent serialising (wire \
         bytes: payload and headers), its {per_group} busiest per scenario (channels loaded \
         alike share a bar); the rate is what each achieved. Every row is in links.csv."
    )));
    let what = match size {
        Some(z) => format!("{} at {}", super::title(Kind::Links), fmt_bytes(z)),
        None => super::title(Kind::Links).to_string(),
    };
    let subtitle = if chosen.len() < m.scenarios.len() {
        "Streaming run of the scenarios with several flows, one panel per path."
    } else {
        "Streaming run of every scenario, one panel per path."
    };
    let plot = super::frame(root, ctx, &ctx.title(&what), subtitle, &legend)?;
    if panels.is_empty() {
        return style::message(&plot, th, "No channel was busy in the streaming runs.");
    }
    let areas = plot.split_evenly((1, panels.len()));
    for ((path, bars, groups, nslots), area) in panels.iter().zip(&areas) {
        draw_panel(area, root, ctx, path, bars, groups, *nslots)?;
    }
    Ok(())
}

fn row_at<'a>(s: &'a super::data::Series, size: Option<u64>) -> Option<&'a crate::stats::Summary> {
    size.and_then(|z| s.at(z))
}

fn draw_panel<DB: DrawingBackend>(
    area: &style::Area<DB>,
    root: &style::Area<DB>,
    ctx: &Ctx,
    path: &str,
    bars: &[Bar],
    groups: &[Group],
    nslots: usize,
) -> Result<()> {
    let th = &ctx.th;
    let (pw, ph) = area.dim_in_pixel();
    let spec = ChartSpec {
        x: style::linear_axis(100.0, ((pw as i32) / th.px(90.0)).clamp(2, 5) as usize, 0.0),
        y: style::Axis {
            range: -0.6..(nslots as f64 - 0.4),
            bold: vec![],
            light: vec![],
        },
        x_desc: "busy (% of capacity)",
        y_desc: "",
        x_fmt: &|v: &f64| format!("{v:.0}%"),
        y_fmt: &|_| String::new(),
        caption: Some(path),
        y_label_space: Some(th.px(10.0)),
    };
    let chart = style::build_chart(area, th, &spec)?;
    let pa = chart.plotting_area();
    let yc = |slot: usize| (nslots - 1 - slot) as f64;
    let (x0, _) = chart.backend_coord(&(0.0, 0.0));
    let (x1, _) = chart.backend_coord(&(100.0, 0.0));
    // Text clear of the axis line.
    let x0 = x0 + th.px(5.0);
    let width = x1 - x0;
    // Text a little under half the slot, smaller where the widest line would not fit.
    let pitch = (ph as f64 * 0.75) / nslots as f64;
    let value = |b: &Bar| {
        format!(
            "{:.0}%, {} GB/s",
            (b.link.busy * 100.0).clamp(0.0, 100.0),
            sig3(b.link.rate_gbps)
        )
    };
    let widest = |base: f64| {
        let f = th.font(base);
        bars.iter()
            .map(|b| text_size(&f, &b.label).0 + text_size(&f, &value(b)).0)
            .max()
            .unwrap_or(0)
            + th.px(12.0)
    };
    let mut base = (pitch * 0.42 / th.s).clamp(7.0, style::fs::TICK);
    while base > 7.0 && widest(base) > width {
        base -= 0.5;
    }
    let (font, gfont) = (th.font(base), th.bold(base));
    let left = Pos::new(HPos::Left, VPos::Center);
    for b in bars {
        let y = yc(b.slot);
        let v = (b.link.busy * 100.0).clamp(0.0, 100.0);
        let c = style::scenario_color(b.scenario);
        pa.draw(&Rectangle::new(
            [(0.0, y - 0.42), (v, y + 0.02)],
            c.filled(),
        ))
        .plot()?;
        // The line of text just above the bar, however tall the slot.
        let (_, top) = chart.backend_coord(&(0.0, y + 0.02));
        let ty = top - (th.fs(base) * 0.75) as i32;
        let text = value(b);
        let tw = text_size(&font, &text).0;
        root.draw_text(
            &text,
            &font
                .color(&style::INK)
                .pos(Pos::new(HPos::Right, VPos::Center)),
            (x1, ty),
        )
        .plot()?;
        let label = style::fit(&font, &b.label, width - tw - th.px(12.0));
        root.draw_text(&label, &font.color(&style::INK).pos(left), (x0, ty))
            .plot()?;
    }
    // Scenario names on their header slot, in bold, from the axis.
    for g in groups {
        let (_, y0) = chart.backend_coord(&(0.0, yc(g.header)));
        let name = style::fit(&gfont, &g.name, width);
        root.draw_text(&name, &gfont.color(&style::INK).pos(left), (x0, y0))
            .plot()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(channel: &str, busy: f64) -> LinkRow {
        LinkRow {
            channel: channel.into(),
            bytes: 1,
            busy,
            rate_gbps: busy * 12.5,
            capacity_gbps: 12.5,
        }
    }

    /// Loaded alike with the NIC ports (within half a percent point), a spine cable names
    /// their bar; a busier channel still leads, and without a fabric the busiest names it.
    #[test]
    fn spine_cables_lead_their_busy_share() {
        let links = [
            link("a0/pcie:nic0>rc0", 1.0),
            link("wire:a0/nic0>leaf0", 0.999),
            link("leaf0>spine1", 0.998),
            link("spine1>leaf1", 0.5),
            link("a0/cpu0.dram", 0.2),
        ];
        let spine = |n: &str| n.contains("spine");
        let names = |v: Vec<(&LinkRow, usize)>| -> Vec<String> {
            v.iter()
                .map(|(l, n)| format!("{} x{n}", l.channel))
                .collect()
        };
        assert_eq!(
            names(busiest(&links, 3, &spine)),
            ["leaf0>spine1 x3", "spine1>leaf1 x1", "a0/cpu0.dram x1"]
        );
        assert_eq!(
            names(busiest(&links, 3, &|_| false)),
            ["a0/pcie:nic0>rc0 x3", "spine1>leaf1 x1", "a0/cpu0.dram x1"]
        );
    }
}

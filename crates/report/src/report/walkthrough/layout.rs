//! Where the walk's lines go: the heading, each path's setup and step table, then the contrast.
//! Every word comes from the language's [`Phrases`]; this file holds only order and alignment.

use super::contrast::contrast;
use super::format::{columns, us};
use super::model::{Endpoint, PathKind, PathWalk, Setup, Step, Walk};
use super::phrases::{PathStyle, Phrases};
use crate::effective::SideMode;

/// The walk as text lines, ending in a newline.
pub(crate) fn render(w: &Walk, words: &dyn Phrases) -> String {
    let mut out: Vec<String> = Vec::new();
    heading(w, words, &mut out);
    for (i, p) in w.paths.iter().enumerate() {
        out.push(String::new());
        path(i + 1, p, &w.ends[1], words, &mut out);
    }
    out.push(String::new());
    contrast(w, words, &mut out);
    let mut text = out.join("\n");
    text.push('\n');
    text
}

fn heading(w: &Walk, words: &dyn Phrases, out: &mut Vec<String>) {
    let [s, r] = &w.ends;
    out.push(words.title(w));
    out.push(words.config_line(w));
    out.push(words.sender(s));
    out.push(words.receiver(r));
    out.push(words.operation(w.op));
    if !w.paths.iter().any(|p| p.path != PathKind::GpuDirect) {
        out.push(words.staged_cannot_carry().into());
    }
    let same_map =
        s.gpu_va == r.gpu_va && s.bar_offset == r.bar_offset && s.host_buffer == r.host_buffer;
    let maps: Vec<&Endpoint> = if same_map { vec![s] } else { vec![s, r] };
    for e in maps {
        let who = if same_map {
            String::new()
        } else {
            format!("{} ", e.host)
        };
        out.push(words.address_map(&who, e));
        out.push(words.bounce_buffer(&who, e));
    }
    out.push(words.times_note().into());
}

/// How a path's heading describes it: by what ran (`auto` as what it chose, `pxn` without a
/// relay as GPUDirect).
pub(super) fn style(p: &PathWalk) -> PathStyle {
    let e = p.effective_path;
    match (p.path, e.as_path()) {
        (PathKind::GpuDirect, _) | (_, Some(PathKind::GpuDirect)) => PathStyle::GpuDirect,
        _ if e.sender == SideMode::Relay => PathStyle::Pxn {
            staged_recv: e.receiver != SideMode::Direct,
        },
        _ if e.sender == SideMode::Mapped || e.receiver == SideMode::Mapped => PathStyle::NcclHost,
        (_, Some(PathKind::Gdrcopy)) => PathStyle::Gdrcopy,
        (_, Some(PathKind::StagedPipelined)) => PathStyle::Pipelined,
        (
            _,
            Some(
                PathKind::Host
                | PathKind::Staged
                | PathKind::Auto
                | PathKind::Pxn
                | PathKind::NcclHost,
            )
            | None,
        ) => PathStyle::Traditional,
    }
}

/// One path: heading, notes, setup, the step table, the delivery row, the gather descriptor
/// and the steps off the latency path. `receiver` is where the data is delivered.
fn path(n: usize, p: &PathWalk, receiver: &Endpoint, words: &dyn Phrases, out: &mut Vec<String>) {
    let style = style(p);
    let gpudirect = style == PathStyle::GpuDirect;
    out.push(words.path_heading(n, style, p.path));
    if p.path == PathKind::Auto {
        out.push(words.auto_note(p.effective_path));
    } else if p.path == PathKind::Pxn && p.relay.is_none() {
        out.push(words.no_relay_note(p.effective_path, &p.reason));
    } else if p.effective_path.as_path() != Some(p.path) {
        out.push(words.no_p2p_note(p.effective_path));
    }
    let bounce = p.setup.iter().any(|x| matches!(x, Setup::Bounce { .. }));
    out.push(words.setup_heading(bounce, p.setup_ps));
    for item in &p.setup {
        setup(item, words, out);
    }
    let mut t = Table {
        lines: Vec::new(),
        comp_width: comp_width(p),
        words,
    };
    t.header();
    for (n, s) in p.steps.iter().enumerate() {
        t.step(Some(n + 1), s, 0);
    }
    out.append(&mut t.lines);
    out.push(format!(
        "  {:>3} {:>9} {:>9}  {:<w$}  {}",
        "",
        us(p.latency_ps),
        "",
        "",
        words.delivered(p.dst_gpu, &receiver.host, p.latency_ps),
        w = t.comp_width
    ));
    if let Some(g) = &p.gather {
        out.push(format!("  {}", words.descriptor_summary(gpudirect, g)));
    }
    if !p.side_steps.is_empty() {
        out.push(format!("  {}", words.off_latency()));
        for s in &p.side_steps {
            t.step(None, s, 0);
        }
        out.append(&mut t.lines);
    }
}

/// One setup item, and a GPU MR's first translation-table entries.
fn setup(item: &Setup, words: &dyn Phrases, out: &mut Vec<String>) {
    out.push(format!("  {}", words.setup(item)));
    if let Setup::GpuMr { pages, mtt, .. } = item {
        for (i, (v, b)) in mtt.iter().enumerate() {
            out.push(format!("      {}", words.mtt_entry(i, *v, *b)));
        }
        if (mtt.len() as u64) < *pages {
            out.push(format!("      {}", words.mtt_more(*pages)));
        }
    }
}

/// The step table: number, start, duration, component, and the step's text indented by depth.
struct Table<'a> {
    lines: Vec<String>,
    comp_width: usize,
    words: &'a dyn Phrases,
}

impl Table<'_> {
    fn header(&mut self) {
        let [s, d, c, w] = self.words.columns();
        let pad = |t: &str, width: usize| " ".repeat(width.saturating_sub(columns(t))) + t;
        let padr =
            |t: &str, width: usize| t.to_string() + &" ".repeat(width.saturating_sub(columns(t)));
        self.lines.push(format!(
            "  {:>3} {} {}  {}  {}",
            "#",
            pad(s, 9),
            pad(d, 9),
            padr(c, self.comp_width),
            w
        ));
    }

    fn step(&mut self, n: Option<usize>, s: &Step, depth: usize) {
        let num = n.map(|n| n.to_string()).unwrap_or_default();
        let comp = if depth == 0 { s.component.as_str() } else { "" };
        self.lines.push(format!(
            "  {:>3} {:>9} {:>9}  {:<w$}  {}{}",
            num,
            us(s.start),
            us(s.dur),
            comp,
            "  ".repeat(depth),
            self.words.step(&s.kind),
            w = self.comp_width
        ));
        for p in &s.parts {
            self.step(None, p, depth + 1);
        }
    }
}

/// The component column's width: the longest component name of the path, at least 9.
fn comp_width(p: &PathWalk) -> usize {
    fn walk(s: &Step, w: &mut usize) {
        *w = (*w).max(s.component.len());
        for p in &s.parts {
            walk(p, w);
        }
    }
    let mut w = 9;
    for s in p.steps.iter().chain(&p.side_steps) {
        walk(s, &mut w);
    }
    w
}

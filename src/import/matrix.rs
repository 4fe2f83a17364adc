//! The `nvidia-smi topo -m` matrix as text: a header of device columns and affinity columns,
//! one row per device, then the legends (layout: reference/formats.md).
//!
//! Accepted: tab-separated (as the driver prints it) or space-separated (as a terminal copy or
//! a mail turns it), ANSI colour codes (the driver underlines the header on a terminal), GPU
//! columns `GPU0..`, NIC columns as new drivers name them (`NIC0..`, with a `NIC Legend:` section
//! naming each port) or as old ones did (`mlx5_0..`), cells `X`, `PIX`, `PXB`, `PHB`, `NODE`,
//! `SYS` (old drivers' `SOC` read as `SYS`) and `NV#`, and the `CPU Affinity`, `NUMA Affinity`
//! and `GPU NUMA ID` columns. Anything else is refused as `FILE:LINE:COLUMN: expected ...,
//! found ...`, lines and columns counted from 1 (columns in characters, ANSI codes removed).

use crate::config::ConfigError;
use crate::topology::{Affinity, MAX_NVLINKS};

/// One cell of the matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    /// `X`: the diagonal.
    Itself,
    /// A PCIe class.
    Pcie(Affinity),
    /// `NV#`: a bonded set of # NVLinks.
    NvLink(u32),
}

impl Cell {
    /// The cell as the driver writes it.
    pub fn text(self) -> String {
        match self {
            Cell::Itself => "X".to_string(),
            Cell::Pcie(a) => a.name().to_string(),
            Cell::NvLink(n) => format!("NV{n}"),
        }
    }
}

/// What a row and column of the matrix is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    /// A GPU (`GPU0`).
    Gpu,
    /// A NIC port (`NIC0` or `mlx5_0`).
    Nic,
}

/// One device of the matrix, in column order (GPUs first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    /// Its column heading (`GPU0`, `NIC1`, `mlx5_2`).
    pub label: String,
    /// GPU or NIC.
    pub kind: DeviceKind,
    /// Its name in the imported config: `gpu0`, or the NIC's device name (`mlx5_0`, from the
    /// NIC Legend or the old column name; `nic0` where neither names it).
    pub name: String,
    /// The `CPU Affinity` cell (GPU rows), as written.
    pub cpu_affinity: Option<String>,
    /// The `NUMA Affinity` cell where it is a single node number.
    pub numa: Option<u32>,
    /// The line of its row.
    pub line: usize,
}

/// A parsed matrix: the devices and the cells, `cells[row][column]`, symmetric, `X` on the
/// diagonal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matrix {
    /// The devices, GPUs first, in column order.
    pub devices: Vec<Device>,
    /// The cells, indexed like `devices` both ways.
    pub cells: Vec<Vec<Cell>>,
    /// Whether the NIC columns used the new `NICn` names.
    pub nic_legend: bool,
}

impl Matrix {
    /// The devices of one kind, as (index into `devices`, device).
    pub fn of(&self, kind: DeviceKind) -> impl Iterator<Item = (usize, &Device)> {
        self.devices
            .iter()
            .enumerate()
            .filter(move |(_, d)| d.kind == kind)
    }
}

/// The affinity columns the driver prints after the device columns.
const AFFINITY_HEADERS: [&str; 3] = ["CPU Affinity", "NUMA Affinity", "GPU NUMA ID"];

/// Most device columns (GPUs and NICs) a matrix may have: a real host has a few dozen, and the
/// import costs about the cube of their number (288 columns: 0.3 s, 1,152: 27 s on this
/// project's machine).
pub const MAX_DEVICES: usize = 256;

/// A cell of a line: its first character's column (from 1) and its text, trimmed.
#[derive(Clone, Copy, Debug)]
struct Tok<'a> {
    col: usize,
    text: &'a str,
}

/// A line without its ANSI escape sequences (`ESC [ ... letter`).
fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// The cells of a line: split at tabs where it has any (empty cells kept), else at runs of
/// spaces (no empty cells).
fn tokens(line: &str) -> Vec<Tok<'_>> {
    let mut out = Vec::new();
    if line.contains('\t') {
        let mut col = 1;
        for piece in line.split('\t') {
            let lead = piece.chars().take_while(|c| c.is_whitespace()).count();
            let text = piece.trim();
            out.push(Tok {
                col: if text.is_empty() { col } else { col + lead },
                text,
            });
            col += piece.chars().count() + 1;
        }
    } else {
        let mut start = None;
        for (k, (byte, c)) in line.char_indices().enumerate() {
            match (c.is_whitespace(), start) {
                (false, None) => start = Some((k, byte)),
                (true, Some((col, b))) => {
                    out.push(Tok {
                        col: col + 1,
                        text: &line[b..byte],
                    });
                    start = None;
                }
                _ => {}
            }
        }
        if let Some((col, b)) = start {
            out.push(Tok {
                col: col + 1,
                text: &line[b..],
            });
        }
    }
    out
}

/// Reads `topo -m` text; `file` names it in errors.
struct Parser<'a> {
    file: &'a str,
    lines: Vec<String>,
}

impl<'a> Parser<'a> {
    fn err(
        &self,
        line: usize,
        col: usize,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> ConfigError {
        ConfigError::new(&format!("{}:{line}:{col}", self.file), "", expected, found)
    }

    /// What sits at line `l` (from 1), for "found ...".
    fn line_found(&self, l: usize) -> String {
        match self.lines.get(l - 1) {
            None => "end of file".to_string(),
            Some(s) if s.trim().is_empty() => "an empty line".to_string(),
            Some(s) => format!("`{}`", s.trim()),
        }
    }

    /// The end column of line `l` (one past its last character).
    fn end_col(&self, l: usize) -> usize {
        self.lines.get(l - 1).map_or(1, |s| s.chars().count() + 1)
    }
}

/// Parses a matrix; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Matrix, ConfigError> {
    let p = Parser {
        file,
        lines: text.lines().map(strip_ansi).collect(),
    };
    let Some(h) = p.lines.iter().position(|l| !l.trim().is_empty()) else {
        return Err(p.err(
            1,
            1,
            "an `nvidia-smi topo -m` matrix (a header of GPU0, ... columns)",
            "an empty file",
        ));
    };
    let header_line = h + 1;
    let (mut devices, affinity, nic_legend) = header(&p, header_line)?;
    let n = devices.len();
    let mut cells: Vec<Vec<Cell>> = Vec::with_capacity(n);
    // Where each cell was, for the symmetry message.
    let mut at: Vec<Vec<(usize, usize)>> = Vec::with_capacity(n);
    for r in 0..n {
        let l = header_line + 1 + r;
        let label = devices[r].label.clone();
        let Some(line) = p.lines.get(l - 1) else {
            return Err(p.err(
                l,
                1,
                format!("the row of {label} ({n} rows in all: the matrix is truncated)"),
                "end of file",
            ));
        };
        let toks = tokens(line);
        let Some(start) = toks.iter().position(|t| !t.text.is_empty()) else {
            return Err(p.err(
                l,
                1,
                format!("the row of {label} ({n} rows in all: the matrix is truncated)"),
                p.line_found(l),
            ));
        };
        if toks[start].text != label {
            return Err(p.err(
                l,
                toks[start].col,
                format!("the row of {label} ({n} rows in all)"),
                format!("`{}`", toks[start].text),
            ));
        }
        let toks = &toks[start..];
        let mut row = Vec::with_capacity(n);
        let mut row_at = Vec::with_capacity(n);
        for c in 0..n {
            let column = &devices[c].label;
            let Some(t) = toks.get(1 + c) else {
                return Err(p.err(
                    l,
                    p.end_col(l),
                    format!("{n} cells in the row of {label} (one for column {column})"),
                    "end of line",
                ));
            };
            let cell = parse_cell(t.text).ok_or_else(|| {
                let found = if t.text.is_empty() {
                    "an empty cell".to_string()
                } else {
                    format!("`{}`", t.text)
                };
                p.err(
                    l,
                    t.col,
                    format!(
                        "a cell for column {column} (X, PIX, PXB, PHB, NODE, SYS or NV# with # \
                         from 1 to {MAX_NVLINKS})"
                    ),
                    found,
                )
            })?;
            let (kr, kc) = (devices[r].kind, devices[c].kind);
            match cell {
                Cell::Itself if r != c => {
                    return Err(p.err(l, t.col, format!("PIX, PXB, PHB, NODE, SYS or NV# (X only on the diagonal; this is {label} to {column})"), "`X`"));
                }
                _ if r == c && cell != Cell::Itself => {
                    return Err(p.err(
                        l,
                        t.col,
                        format!("X (the diagonal: {label} to itself)"),
                        format!("`{}`", t.text),
                    ));
                }
                Cell::NvLink(_) if kr != DeviceKind::Gpu || kc != DeviceKind::Gpu => {
                    return Err(p.err(l, t.col, format!("PIX, PXB, PHB, NODE or SYS (NVLink joins GPUs only; this is {label} to {column})"), format!("`{}`", t.text)));
                }
                _ => {}
            }
            if c < r && cells[c][r] != cell {
                let (ml, mc) = at[c][r];
                return Err(p.err(l, t.col, format!("{} (the matrix is symmetric: {} to {label} is {} at line {ml} column {mc})", cells[c][r].text(), column, cells[c][r].text()), format!("`{}`", t.text)));
            }
            row.push(cell);
            row_at.push((l, t.col));
        }
        let rest = &toks[1 + n..];
        match devices[r].kind {
            DeviceKind::Nic => {
                if let Some(t) = rest.iter().find(|t| !t.text.is_empty()) {
                    return Err(p.err(
                        l,
                        t.col,
                        format!(
                            "the end of the row after its {n} cells (NIC rows have no affinity)"
                        ),
                        format!("`{}`", t.text),
                    ));
                }
            }
            DeviceKind::Gpu => {
                // In order, empty cells passed over: drivers that print `GPU NUMA ID` put an
                // empty cell before it (`0-55,112-167\t0\t\tN/A`).
                let values = rest.iter().filter(|t| !t.text.is_empty()).copied();
                for (k, t) in values.enumerate() {
                    let Some(&head) = affinity.get(k) else {
                        return Err(p.err(
                            l,
                            t.col,
                            format!(
                                "the end of the row after its {n} cells and {} affinity columns",
                                affinity.len()
                            ),
                            format!("`{}`", t.text),
                        ));
                    };
                    affinity_value(&p, &mut devices[r], head, t, l)?;
                }
            }
        }
        devices[r].line = l;
        cells.push(row);
        at.push(row_at);
    }
    legends(&p, header_line + 1 + n, &mut devices, nic_legend)?;
    Ok(Matrix {
        devices,
        cells,
        nic_legend,
    })
}

/// The header: the device columns (GPUs, then NICs) and the affinity columns after them.
fn header(p: &Parser, l: usize) -> Result<(Vec<Device>, Vec<&'static str>, bool), ConfigError> {
    let line = &p.lines[l - 1];
    let toks: Vec<Tok> = tokens(line)
        .into_iter()
        .filter(|t| !t.text.is_empty())
        .collect();
    let mut devices: Vec<Device> = Vec::new();
    let mut affinity: Vec<&'static str> = Vec::new();
    let mut new_names: Option<bool> = None;
    let mut k = 0;
    while k < toks.len() {
        let t = toks[k];
        // An affinity heading, whole (tab-separated) or word by word (space-separated).
        let heading = AFFINITY_HEADERS.iter().find_map(|h| {
            if t.text == *h {
                return Some((*h, 1));
            }
            let words: Vec<&str> = h.split(' ').collect();
            let fits = words.len() <= toks.len() - k
                && words.iter().zip(&toks[k..]).all(|(w, t)| *w == t.text);
            fits.then_some((*h, words.len()))
        });
        if let Some((h, len)) = heading {
            if affinity.contains(&h) {
                return Err(p.err(
                    l,
                    t.col,
                    "each affinity column once",
                    format!("`{h}` again"),
                ));
            }
            affinity.push(h);
            k += len;
            continue;
        }
        if !affinity.is_empty() {
            return Err(p.err(l, t.col, "an affinity column (`CPU Affinity`, `NUMA Affinity` or `GPU NUMA ID`) after the first one", format!("`{}`", t.text)));
        }
        if devices.len() == MAX_DEVICES {
            return Err(p.err(
                l,
                t.col,
                format!("at most {MAX_DEVICES} device columns (a real host has a few dozen)"),
                format!("`{}` as column {}", t.text, MAX_DEVICES + 1),
            ));
        }
        let gpus = devices.iter().filter(|d| d.kind == DeviceKind::Gpu).count();
        let nics = devices.len() - gpus;
        if let Some(i) = numbered(t.text, "GPU") {
            if nics > 0 {
                return Err(p.err(
                    l,
                    t.col,
                    "a NIC column (GPU columns come first), or `CPU Affinity`",
                    format!("`{}`", t.text),
                ));
            }
            if i != gpus {
                return Err(p.err(
                    l,
                    t.col,
                    format!("GPU{gpus} (GPU columns in order from GPU0)"),
                    format!("`{}`", t.text),
                ));
            }
            devices.push(Device {
                label: t.text.to_string(),
                kind: DeviceKind::Gpu,
                name: format!("gpu{i}"),
                cpu_affinity: None,
                numa: None,
                line: 0,
            });
        } else if valid_name(t.text) {
            let new = numbered(t.text, "NIC").is_some();
            if let Some(was) = new_names
                && was != new
            {
                return Err(p.err(
                    l,
                    t.col,
                    if was {
                        format!("NIC{nics} (the other NIC columns use the new NICn names)")
                    } else {
                        "a device name such as mlx5_0 (the other NIC columns use them)".to_string()
                    },
                    format!("`{}`", t.text),
                ));
            }
            new_names = Some(new);
            if new && numbered(t.text, "NIC") != Some(nics) {
                return Err(p.err(
                    l,
                    t.col,
                    format!("NIC{nics} (NIC columns in order from NIC0)"),
                    format!("`{}`", t.text),
                ));
            }
            if devices.iter().any(|d| d.label == t.text) {
                return Err(p.err(l, t.col, "a new column name", format!("`{}` again", t.text)));
            }
            devices.push(Device {
                label: t.text.to_string(),
                kind: DeviceKind::Nic,
                name: if new {
                    format!("nic{nics}")
                } else {
                    t.text.to_string()
                },
                cpu_affinity: None,
                numa: None,
                line: 0,
            });
        } else {
            return Err(p.err(
                l,
                t.col,
                "a device column (GPU0, NIC0, mlx5_0) or an affinity column",
                format!("`{}`", t.text),
            ));
        }
        k += 1;
    }
    let end = p.end_col(l);
    if !devices.iter().any(|d| d.kind == DeviceKind::Gpu) {
        let found = toks
            .first()
            .map_or("nothing".to_string(), |t| format!("`{}`", t.text));
        let col = toks.first().map_or(1, |t| t.col);
        return Err(p.err(
            l,
            col,
            "a header starting with the GPU columns (GPU0 ...)",
            found,
        ));
    }
    if !devices.iter().any(|d| d.kind == DeviceKind::Nic) {
        return Err(p.err(
            l,
            end,
            "at least one NIC column after the GPU columns (a simulated host needs a NIC)",
            "none",
        ));
    }
    Ok((devices, affinity, new_names == Some(true)))
}

/// `PREFIXn` read as n.
fn numbered(text: &str, prefix: &str) -> Option<usize> {
    let digits = text.strip_prefix(prefix)?;
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// A device name as the kernel spells one (`mlx5_0`, `mlx5_bond_0`, `bnxt_re0`).
fn valid_name(text: &str) -> bool {
    text.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// A cell's text read as a cell.
fn parse_cell(text: &str) -> Option<Cell> {
    match text {
        "X" => Some(Cell::Itself),
        "SOC" => Some(Cell::Pcie(Affinity::Sys)),
        _ => Affinity::from_name(text)
            .filter(|a| !matches!(a, Affinity::Nv(_)))
            .map(Cell::Pcie)
            .or_else(|| {
                let n = numbered(text, "NV")?;
                (1..=MAX_NVLINKS as usize)
                    .contains(&n)
                    .then_some(Cell::NvLink(n as u32))
            }),
    }
}

/// A CPU or node list such as `0-63`, `0-31,64-95` (the form a socket's `cpu_affinity`
/// takes), or `N/A`.
fn cpu_list(text: &str) -> bool {
    text == "N/A" || crate::topology::spec::is_cpu_list(text)
}

/// Records one affinity cell of a GPU row.
fn affinity_value(
    p: &Parser,
    dev: &mut Device,
    head: &str,
    t: Tok,
    l: usize,
) -> Result<(), ConfigError> {
    if parse_cell(t.text).is_some() {
        return Err(p.err(
            l,
            t.col,
            format!("the {head} column after the row's cells (the row has a cell too many)"),
            format!("`{}`", t.text),
        ));
    }
    // The CPU list is kept as written (gdrsim's own `topo` prints a socket name there).
    let cpus = head == "CPU Affinity";
    if !(cpu_list(t.text) || (cpus && valid_name(t.text))) {
        let what = match cpus {
            true => {
                "a CPU list such as 0-55,112-167, N/A, or a socket's name (as gdrsim topo prints)"
            }
            false => "a NUMA node number or N/A",
        };
        return Err(p.err(
            l,
            t.col,
            format!("{what} (column {head})"),
            format!("`{}`", t.text),
        ));
    }
    match head {
        "CPU Affinity" => dev.cpu_affinity = Some(t.text.to_string()),
        "NUMA Affinity" => dev.numa = t.text.parse().ok(),
        _ => {}
    }
    Ok(())
}

/// After the rows: blank lines, the `Legend:` block (read over), the `NIC Legend:` block
/// (`NICn: name`, which names the NICs of new-style columns).
fn legends(
    p: &Parser,
    from: usize,
    devices: &mut [Device],
    nic_legend: bool,
) -> Result<(), ConfigError> {
    #[derive(PartialEq)]
    enum State {
        After,
        Legend,
        Nics,
    }
    let mut state = State::After;
    let mut named: Vec<bool> = vec![false; devices.len()];
    for l in from..=p.lines.len() {
        let line = p.lines[l - 1].trim();
        if line.is_empty() {
            continue;
        }
        let col = p.lines[l - 1]
            .chars()
            .take_while(|c| c.is_whitespace())
            .count()
            + 1;
        if line == "Legend:" && state == State::After {
            state = State::Legend;
            continue;
        }
        if line == "NIC Legend:" && state != State::Nics {
            state = State::Nics;
            continue;
        }
        match state {
            State::After => {
                return Err(p.err(
                    l,
                    col,
                    format!(
                        "`Legend:` or the end of the file after the {} rows of the matrix",
                        devices.len()
                    ),
                    format!("`{line}`"),
                ));
            }
            State::Legend => {}
            State::Nics => {
                let entry = line.split_once(':').map(|(k, v)| (k.trim(), v.trim()));
                let Some((key, name)) = entry.filter(|(_, v)| valid_name(v)) else {
                    return Err(p.err(
                        l,
                        col,
                        "a NIC Legend line `NICn: name`",
                        format!("`{line}`"),
                    ));
                };
                let Some(d) = devices
                    .iter()
                    .position(|d| d.kind == DeviceKind::Nic && d.label == key)
                else {
                    return Err(p.err(
                        l,
                        col,
                        if nic_legend {
                            "a NIC column of the matrix (NIC0 ...)"
                        } else {
                            "no NIC Legend (the NIC columns already name their devices)"
                        },
                        format!("`{key}`"),
                    ));
                };
                if !nic_legend {
                    return Err(p.err(
                        l,
                        col,
                        "no NIC Legend (the NIC columns already name their devices)",
                        format!("`{key}`"),
                    ));
                }
                if named[d] {
                    return Err(p.err(
                        l,
                        col,
                        format!("each of {key}'s names once"),
                        format!("`{key}` again"),
                    ));
                }
                if devices.iter().any(|o| o.name == name && o.label != key) {
                    return Err(p.err(
                        l,
                        col + line.find(name).unwrap_or(0),
                        "a name no other device has",
                        format!("`{name}`"),
                    ));
                }
                named[d] = true;
                devices[d].name = name.to_string();
            }
        }
    }
    // A NIC Legend that stops before the last NIC column: a cut file, not a choice.
    if state == State::Nics
        && let Some(d) =
            (0..devices.len()).find(|&d| devices[d].kind == DeviceKind::Nic && !named[d])
    {
        let l = p.lines.len() + 1;
        return Err(p.err(
            l,
            1,
            format!(
                "a NIC Legend line `{}: name` (the matrix has that NIC column)",
                devices[d].label
            ),
            p.line_found(l),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const H100: &str = include_str!("../../tests/data/topo-m/dgx-h100.txt");
    const H100_SPACES: &str = include_str!("../../tests/data/topo-m/dgx-h100-spaces.txt");
    const A100: &str = include_str!("../../tests/data/topo-m/dgx-a100.txt");

    const SMALL: &str = "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity
GPU0\t X \tPIX\tPXB\t0-7\t0
GPU1\tPIX\t X \tPXB\t0-7\t0
NIC0\tPXB\tPXB\t X \t\t

NIC Legend:

  NIC0: mlx5_4
";

    /// Issue #27 item 10: a matrix of more than 256 device columns is refused at the header,
    /// naming the first column past the bound (a 1,024-GPU matrix took 27 s: the import grows
    /// about with the cube of the columns); 256 columns still parse.
    #[test]
    fn more_than_256_device_columns_are_refused() {
        let matrix = |gpus: usize| {
            let names: Vec<String> = (0..gpus).map(|i| format!("GPU{i}")).collect();
            let mut t = format!(
                "\t{}\tNIC0\tCPU Affinity\tNUMA Affinity\n",
                names.join("\t")
            );
            for (r, n) in names.iter().enumerate() {
                let cells: Vec<&str> = (0..gpus)
                    .map(|c| if c == r { " X " } else { "PIX" })
                    .collect();
                t.push_str(&format!("{n}\t{}\tPIX\t0-7\t0\n", cells.join("\t")));
            }
            let all: Vec<&str> = vec!["PIX"; gpus];
            t.push_str(&format!(
                "NIC0\t{}\t X \t\t\n\nNIC Legend:\n\n  NIC0: mlx5_0\n",
                all.join("\t")
            ));
            t
        };
        let e = refused(&matrix(256));
        assert!(
            e.contains("expected at most 256 device columns") && e.contains("`NIC0` as column 257"),
            "{e}"
        );
        assert_eq!(
            parse(&matrix(255), "m.txt")
                .expect("255 GPUs and a NIC")
                .devices
                .len(),
            256
        );
    }

    /// The error message of a text that must be refused.
    fn refused(text: &str) -> String {
        parse(text, "m.txt").expect_err("refused").to_string()
    }

    #[test]
    fn new_style_matrix_with_legend_and_gpu_numa_id() {
        let m = parse(H100, "h100").unwrap();
        assert_eq!(m.devices.len(), 18);
        assert!(m.nic_legend);
        assert_eq!(m.of(DeviceKind::Gpu).count(), 8);
        let nic1 = &m.devices[9];
        assert_eq!(
            (nic1.label.as_str(), nic1.name.as_str()),
            ("NIC1", "mlx5_3")
        );
        assert_eq!(m.devices[0].cpu_affinity.as_deref(), Some("0-55,112-167"));
        assert_eq!((m.devices[0].numa, m.devices[7].numa), (Some(0), Some(1)));
        assert_eq!(m.cells[0][1], Cell::NvLink(18));
        assert_eq!(m.cells[0][8], Cell::Pcie(Affinity::Pix));
        assert_eq!(m.cells[0][12], Cell::Pcie(Affinity::Sys));
        assert_eq!(m.cells[3][3], Cell::Itself);
    }

    #[test]
    fn spaces_read_as_tabs() {
        assert!(!H100_SPACES.contains('\t'));
        assert_eq!(parse(H100_SPACES, "s").unwrap(), parse(H100, "t").unwrap());
    }

    #[test]
    fn old_style_names_name_the_nics() {
        let m = parse(A100, "a100").unwrap();
        assert!(!m.nic_legend);
        let nics: Vec<&str> = m
            .of(DeviceKind::Nic)
            .map(|(_, d)| d.name.as_str())
            .collect();
        assert_eq!(nics[0], "mlx5_0");
        assert_eq!(nics.len(), 10);
        assert_eq!(m.devices[0].numa, Some(3));
    }

    #[test]
    fn colour_codes_and_soc_are_read() {
        let text = "\u{1b}[4m\tGPU0\tmlx5_0\tCPU Affinity\u{1b}[0m\nGPU0\t X \tSOC\t0-3\nmlx5_0\tSOC\t X \t\n";
        let m = parse(text, "c").unwrap();
        assert_eq!(m.cells[0][1], Cell::Pcie(Affinity::Sys));
        assert_eq!(m.devices[1].name, "mlx5_0");
    }

    #[test]
    fn the_legend_names_nics_and_defaults_stand_without_one() {
        let m = parse(SMALL, "s").unwrap();
        assert_eq!(m.devices[2].name, "mlx5_4");
        let bare = SMALL.split("\n\n").next().unwrap();
        assert_eq!(parse(bare, "s").unwrap().devices[2].name, "nic0");
    }

    #[test]
    fn bad_input_names_line_and_column() {
        // Truncated: the NIC0 row is missing.
        let truncated: String = SMALL.lines().take(3).map(|l| format!("{l}\n")).collect();
        assert_eq!(
            refused(&truncated),
            "m.txt:4:1: expected the row of NIC0 (3 rows in all: the matrix is truncated), found end of file"
        );
        // An unknown cell.
        let e = refused(&SMALL.replace("GPU1\tPIX\t X \tPXB", "GPU1\tPIX\t X \tPXQ"));
        assert_eq!(
            e,
            "m.txt:3:14: expected a cell for column NIC0 (X, PIX, PXB, PHB, NODE, SYS or NV# with # from 1 to 36), found `PXQ`"
        );
        // Not symmetric.
        let e = refused(&SMALL.replace("NIC0\tPXB\tPXB", "NIC0\tPXB\tPIX"));
        assert!(
            e.starts_with("m.txt:4:10: expected PXB (the matrix is symmetric: GPU1 to NIC0 is PXB at line 3 column 14)"),
            "{e}"
        );
        // A row one cell short, and one cell long.
        let e = refused(&SMALL.replace("NIC0\tPXB\tPXB\t X \t\t", "NIC0\tPXB\tPXB"));
        assert_eq!(
            e,
            "m.txt:4:13: expected 3 cells in the row of NIC0 (one for column NIC0), found end of line"
        );
        let e = refused(&SMALL.replace("NIC0\tPXB\tPXB\t X \t\t", "NIC0\tPXB\tPXB\t X \tSYS"));
        assert!(
            e.starts_with("m.txt:4:18: expected the end of the row after its 3 cells"),
            "{e}"
        );
        // A GPU row with a cell too many: the extra cell lands in CPU Affinity.
        let e = refused(&SMALL.replace("GPU0\t X \tPIX\tPXB\t", "GPU0\t X \tPIX\tPXB\tSYS\t"));
        assert!(e.starts_with("m.txt:2:18: expected the CPU Affinity column after the row's cells (the row has a cell too many), found `SYS`"), "{e}");
        // A cell the config's own check of a socket's cpu_affinity would refuse is refused
        // here, with its place, not later as a config error.
        assert!(
            refused(&SMALL.replace("0-7\t0\nGPU1", "0--7\t0\nGPU1")).starts_with("m.txt:2:18:")
        );
        let e = refused(&SMALL.replace("0-7\t0\nGPU1", "0-7;9\t0\nGPU1"));
        assert_eq!(
            e,
            "m.txt:2:18: expected a CPU list such as 0-55,112-167, N/A, or a socket's name (as gdrsim topo prints) (column CPU Affinity), found `0-7;9`"
        );
        // A bond wider than any config may have (NV# from 1 to 36).
        let e = refused(&SMALL.replace("GPU0\t X \tPIX", "GPU0\t X \tNV99"));
        assert!(
            e.starts_with("m.txt:2:10: expected a cell for column GPU1"),
            "{e}"
        );
        // A NIC Legend cut before its last NIC: the line after the file's last names it.
        let e = refused(&SMALL.replace("  NIC0: mlx5_4\n", ""));
        assert_eq!(
            e,
            "m.txt:8:1: expected a NIC Legend line `NIC0: name` (the matrix has that NIC column), found end of file"
        );
        let e = refused(&SMALL.replace("0-7\t0\nGPU1", "0-7\tzero\nGPU1"));
        assert_eq!(
            e,
            "m.txt:2:22: expected a NUMA node number or N/A (column NUMA Affinity), found `zero`"
        );
        // No X on the diagonal, and an X off it.
        let e = refused(&SMALL.replace("GPU1\tPIX\t X ", "GPU1\tPIX\tPIX"));
        assert_eq!(
            e,
            "m.txt:3:10: expected X (the diagonal: GPU1 to itself), found `PIX`"
        );
        let e = refused(&SMALL.replace("GPU0\t X \tPIX", "GPU0\t X \t X "));
        assert!(
            e.starts_with(
                "m.txt:2:11: expected PIX, PXB, PHB, NODE, SYS or NV# (X only on the diagonal"
            ),
            "{e}"
        );
        // NVLink to a NIC.
        let e = refused(&SMALL.replace("GPU0\t X \tPIX\tPXB", "GPU0\t X \tPIX\tNV4"));
        assert!(
            e.starts_with(
                "m.txt:2:14: expected PIX, PXB, PHB, NODE or SYS (NVLink joins GPUs only"
            ),
            "{e}"
        );
        // GPUs out of order, an extra row, a bad legend line, an empty file.
        let e = refused(&SMALL.replacen("GPU1", "GPU2", 1));
        assert_eq!(
            e,
            "m.txt:1:7: expected GPU1 (GPU columns in order from GPU0), found `GPU2`"
        );
        let e = refused(&SMALL.replace("\n\nNIC Legend", "\nNIC1\tPXB\tPXB\tPIX\n\nNIC Legend"));
        assert!(
            e.starts_with("m.txt:5:1: expected `Legend:` or the end of the file after the 3 rows"),
            "{e}"
        );
        let e = refused(&SMALL.replace("NIC0: mlx5_4", "NIC7: mlx5_4"));
        assert_eq!(
            e,
            "m.txt:8:3: expected a NIC column of the matrix (NIC0 ...), found `NIC7`"
        );
        assert_eq!(
            refused("\n \n"),
            "m.txt:1:1: expected an `nvidia-smi topo -m` matrix (a header of GPU0, ... columns), found an empty file"
        );
        // Spaces: the column is the cell's own.
        let spaces = "   GPU0  NIC0  CPU Affinity\nGPU0  X    PIX   0-3\nNIC0  PIX   PHB\n";
        assert_eq!(
            refused(spaces),
            "m.txt:3:13: expected X (the diagonal: NIC0 to itself), found `PHB`"
        );
    }
}

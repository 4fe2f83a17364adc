//! perftest's text output (linux-rdma/perftest, src/perftest_parameters.c): the banner that
//! ctx_print_test_info prints (a dashed RESULT_LINE, the title such as `RDMA_Write BW Test`,
//! `key : value` rows with the device), then a result header (RESULT_FMT, RESULT_FMT_G,
//! RESULT_FMT_LAT, RESULT_FMT_LAT_DUR, optionally with CPU_Util), one row per size
//! (REPORT_FMT...) and a closing dashed line. A log may hold several tests one after another.
//!
//! Whether the buffers were in GPU memory: with `--use_cuda` perftest sets up CUDA while it
//! creates its resources, before the banner, and prints `initializing CUDA`, `Picking device
//! No. N`, `allocated GPU buffer address at ...` (cuda_memory.c); ROCm and MUSA builds print
//! `Use ROCm memory : ON` / `Use MUSA memory : ON` in the banner. A block with none of these
//! was in host memory.

use super::{Measurement, Memory, bad, non_negative, quoted};
use crate::config::ConfigError;
use crate::config::limits::MAX_MESSAGE;

/// perftest's RESULT_LINE (87 dashes; RESULT_LINE_PER_PORT is longer).
pub fn is_result_line(l: &str) -> bool {
    let t = l.trim();
    t.len() >= 40 && t.bytes().all(|b| b == b'-')
}

/// A banner title, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct Title {
    /// The perftest binary: `ib_write_bw`.
    pub test: String,
    /// Whether it is a latency test (`_lat`), else a bandwidth test.
    pub latency: bool,
    /// What the title adds to the plain test (`bidirectional`, `write_imm`, ...).
    pub detail: Vec<String>,
}

/// The banner title (`RDMA_Write BW Test`, `Send Bidirectional BW Test`, `Atomic
/// FETCH_AND_ADD Latency Test`), from the words ctx_print_test_info prints: `testsStr[verb]`,
/// the atomic type, `Bidirectional`, `Post List`, `BW` or `Latency`, `forwarding`,
/// `Multicast`, `Test`.
pub fn title(t: &str) -> Option<Title> {
    let words: Vec<&str> = t.split_whitespace().collect();
    if words.len() < 3 || words.last() != Some(&"Test") {
        return None;
    }
    let mut detail = Vec::new();
    let base = match words[0] {
        "Send" => "send",
        "Send_imm" => {
            detail.push("send_imm".to_string());
            "send"
        }
        "RDMA_Write" => "write",
        "RDMA_Write_imm" => {
            detail.push("write_imm".to_string());
            "write"
        }
        "RDMA_Read" => "read",
        "Atomic" => "atomic",
        _ => return None,
    };
    let mut rest = &words[1..words.len() - 1];
    if base == "atomic" {
        let (ty, r) = rest.split_first()?;
        detail.push(format!("atomic {ty}"));
        rest = r;
    }
    let mut latency = None;
    let mut i = 0;
    while i < rest.len() {
        match rest[i] {
            "Bidirectional" => detail.push("bidirectional".into()),
            "Post" if rest.get(i + 1) == Some(&"List") => {
                detail.push("post_list".into());
                i += 1;
            }
            "BW" if latency.is_none() => latency = Some(false),
            "Latency" if latency.is_none() => latency = Some(true),
            "forwarding" => detail.push("forwarding".into()),
            "Multicast" => detail.push("multicast".into()),
            _ => return None,
        }
        i += 1;
    }
    let latency = latency?;
    Some(Title {
        test: format!("ib_{base}_{}", if latency { "lat" } else { "bw" }),
        latency,
        detail,
    })
}

/// Whether a line is one of those perftest prints when it puts the buffers in GPU memory.
fn gpu_line(t: &str) -> bool {
    [
        "initializing CUDA",
        "Picking device No.",
        "Picking GPU number",
        "allocated GPU buffer",
        "using DMA-BUF for GPU buffer",
        "cuMemAlloc",
    ]
    .iter()
    .any(|p| t.starts_with(p))
        || ["Use ROCm memory", "Use MUSA memory"]
            .iter()
            .any(|p| t.starts_with(p) && t.ends_with(": ON"))
}

/// The `KEY : VALUE` field of a banner row (fields are tab-separated), if the row has one.
fn field(l: &str, key: &str) -> Option<String> {
    l.split('\t')
        .filter_map(|f| f.split_once(':'))
        .find(|(k, _)| k.trim() == key)
        .map(|(_, v)| v.trim().to_string())
}

/// One column of a result header.
#[derive(Clone, Debug, PartialEq)]
enum Col {
    Size,
    Iters,
    /// `#sl` (QoS tests).
    Sl,
    /// metric, statistic, unit.
    Fig(&'static str, &'static str, &'static str),
}

/// perftest's unit in brackets, as the CSV writes it.
fn unit(u: &str) -> Option<&'static str> {
    Some(match u {
        // Older releases printed MB/sec with the same 2^20 divisor.
        "MiB/sec" | "MB/sec" => "MiB/s",
        "Gb/sec" => "Gb/s",
        "usec" => "us",
        "Mpps" => "Mpps",
        "%" => "%",
        _ => return None,
    })
}

fn column(name: &str) -> Option<Col> {
    match name {
        "#bytes" => return Some(Col::Size),
        "#iterations" => return Some(Col::Iters),
        "#sl" => return Some(Col::Sl),
        "tps average" => return Some(Col::Fig("transaction_rate", "average", "tps")),
        _ => {}
    }
    let (what, u) = name.strip_suffix(']')?.split_once('[')?;
    let u = unit(u)?;
    let (metric, stat) = match what {
        "BW peak" => ("bandwidth", "peak"),
        "BW average" => ("bandwidth", "average"),
        "MsgRate" => ("msg_rate", "average"),
        "CPU_Util" => ("cpu_util", "average"),
        "BW Port1" => ("bandwidth", "average_port1"),
        "BW Port2" => ("bandwidth", "average_port2"),
        "MsgRate Port1" => ("msg_rate", "average_port1"),
        "MsgRate Port2" => ("msg_rate", "average_port2"),
        "t_min" => ("latency", "min"),
        "t_max" => ("latency", "max"),
        "t_typical" => ("latency", "typical"),
        "t_avg" => ("latency", "avg"),
        "t_stdev" => ("latency", "stdev"),
        "99% percentile" => ("latency", "p99"),
        "99.9% percentile" => ("latency", "p99.9"),
        _ => return None,
    };
    Some(Col::Fig(metric, stat, u))
}

/// A header's column names: perftest separates them by two or more spaces or a tab, and a name
/// has single spaces at most (`BW peak[MiB/sec]`, `99% percentile[usec]`).
fn header_names(t: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut gap = 0usize;
    let mut tab = false;
    for c in t.trim().chars() {
        if c.is_whitespace() {
            gap += 1;
            tab |= c == '\t';
            continue;
        }
        if gap > 0 {
            if gap >= 2 || tab {
                out.push(std::mem::take(&mut cur));
            } else {
                cur.push(' ');
            }
        }
        gap = 0;
        tab = false;
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    // RESULT_FMT_LAT has a single space in " #bytes #iterations".
    out.into_iter()
        .flat_map(|n| {
            if n.starts_with('#') && n.split(' ').all(|w| w.starts_with('#')) {
                n.split(' ').map(String::from).collect()
            } else {
                vec![n]
            }
        })
        .collect()
}

/// The block being read: its banner, then its table.
struct Block {
    title: Title,
    device: String,
    gpu: bool,
    /// The header's columns, once it was read.
    cols: Option<Vec<Col>>,
    detail: Vec<String>,
}

/// The measurements of a perftest log.
pub fn parse(name: &str, text: &str, memory: Memory) -> Result<Vec<Measurement>, ConfigError> {
    let mut out = Vec::new();
    let mut block: Option<Block> = None;
    let mut gpu_before = false;
    let mut tables = 0usize;
    let lines: Vec<&str> = text.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        let n = i + 1;
        let t = l.trim();
        let in_table = block.as_ref().is_some_and(|b| b.cols.is_some());
        if in_table {
            if is_result_line(l) {
                block = None;
                gpu_before = false;
                continue;
            }
            if t.is_empty() {
                continue;
            }
            let Some(b) = block.as_ref() else { continue };
            out.extend(row(name, n, t, b, memory)?);
            continue;
        }
        if let Some(tt) = title(t) {
            block = Some(Block {
                title: tt,
                device: String::new(),
                gpu: gpu_before,
                cols: None,
                detail: Vec::new(),
            });
            continue;
        }
        if gpu_line(t) {
            gpu_before = true;
            if let Some(b) = block.as_mut() {
                b.gpu = true;
            }
            continue;
        }
        if let Some(b) = block.as_mut() {
            // `Number of qps` shares its row with `Transport type`, `Device` with `Dual-port`.
            if let Some(q) = field(l, "Number of qps")
                && q != "1"
            {
                b.detail.push(format!("qps={q}"));
            }
            if let Some(d) = field(l, "Device") {
                b.device = d;
                continue;
            }
        }
        if t.starts_with("#bytes") {
            let Some(b) = block.as_mut() else {
                return Err(bad(
                    name,
                    n,
                    "perftest's banner title (such as \"RDMA_Write BW Test\") before the result \
                     header",
                    quoted(Some(t)),
                ));
            };
            let names = header_names(t);
            let mut cols = Vec::new();
            for c in &names {
                cols.push(column(c).ok_or_else(|| {
                    bad(
                        name,
                        n,
                        "a perftest result column (#bytes, #iterations, BW peak[MiB/sec|Gb/sec], \
                         BW average[..], MsgRate[Mpps], CPU_Util[%], t_min[usec] .. 99.9% \
                         percentile[usec], tps average)",
                        format!("{c:?}"),
                    )
                })?);
            }
            let is_lat = cols.iter().any(|c| matches!(c, Col::Fig("latency", ..)));
            let is_bw = cols.iter().any(|c| matches!(c, Col::Fig("bandwidth", ..)));
            if !cols.contains(&Col::Size) || is_lat == is_bw || is_lat != b.title.latency {
                return Err(bad(
                    name,
                    n,
                    format!(
                        "the {} result header of the {} test the banner names",
                        if b.title.latency {
                            "latency"
                        } else {
                            "bandwidth"
                        },
                        b.title.test
                    ),
                    quoted(Some(t)),
                ));
            }
            if names.iter().any(|c| c == "tps average") {
                b.detail.push("duration".into());
            }
            b.cols = Some(cols);
            tables += 1;
            continue;
        }
        if t.starts_with("#flows") {
            return Err(bad(
                name,
                n,
                "a #bytes result header (flow-steering rate tests are not read)",
                quoted(Some(t)),
            ));
        }
    }
    if block.as_ref().is_some_and(|b| b.cols.is_some()) {
        return Err(bad(
            name,
            lines.len() + 1,
            "a result row or perftest's closing dashed line (the log is cut short)",
            quoted(None),
        ));
    }
    if tables == 0 {
        return Err(bad(
            name,
            lines.len() + 1,
            "perftest's result header (\" #bytes     #iterations ...\") after its banner",
            quoted(None),
        ));
    }
    if out.is_empty() {
        return Err(bad(
            name,
            lines.len() + 1,
            "at least one result row (the server side of a bandwidth test prints none: give \
             the client's log)",
            quoted(None),
        ));
    }
    Ok(out)
}

/// A row's `#bytes`, refused beyond the largest message the model simulates: a size near
/// 2^64 would overflow the emulation's arithmetic when `calibrate` reruns the row.
fn message_size(size: u64, name: &str, n: usize) -> Result<u64, ConfigError> {
    if size > MAX_MESSAGE {
        return Err(bad(
            name,
            n,
            "#bytes (a message size up to 16 GiB, the model's largest)",
            size.to_string(),
        ));
    }
    Ok(size)
}

/// The measurements of one result row.
fn row(
    name: &str,
    n: usize,
    t: &str,
    b: &Block,
    memory: Memory,
) -> Result<Vec<Measurement>, ConfigError> {
    let cols = b.cols.as_deref().unwrap_or(&[]);
    let cells: Vec<&str> = t.split_whitespace().collect();
    if cells.len() != cols.len() {
        return Err(bad(
            name,
            n,
            format!(
                "a result row of {} numbers under the header, or the closing dashed line",
                cols.len()
            ),
            format!("{} fields: {}", cells.len(), quoted(Some(t))),
        ));
    }
    let int = |c: &str, what: &str| {
        c.parse::<u64>().map_err(|_| {
            bad(
                name,
                n,
                format!("{what} (a whole number)"),
                format!("{c:?}"),
            )
        })
    };
    let mut size = None;
    let mut iters = None;
    let mut detail = b.title.detail.clone();
    detail.extend(b.detail.iter().cloned());
    let mut figs = Vec::new();
    for (c, cell) in cols.iter().zip(&cells) {
        match c {
            Col::Size => size = Some(message_size(int(cell, "#bytes")?, name, n)?),
            Col::Iters => iters = Some(int(cell, "#iterations")?),
            Col::Sl => detail.push(format!("sl={}", int(cell, "#sl")?)),
            Col::Fig(metric, stat, unit) => {
                let v = non_negative(cell).ok_or_else(|| {
                    bad(
                        name,
                        n,
                        format!(
                            "{metric} {stat} (a finite number, 0 or more: perftest prints no \
                                 negative figure)"
                        ),
                        format!("{cell:?}"),
                    )
                })?;
                figs.push((*metric, *stat, *unit, v));
            }
        }
    }
    let memory = match memory {
        Memory::Host => "host",
        Memory::Gpu => "gpu",
        Memory::Auto if b.gpu => "gpu",
        Memory::Auto => "host",
    };
    let detail = detail.join(";");
    Ok(figs
        .into_iter()
        .map(|(metric, stat, unit, value)| Measurement {
            source_file: name.to_string(),
            line: n,
            tool: "perftest".into(),
            test: b.title.test.clone(),
            detail: detail.clone(),
            device: b.device.clone(),
            memory: memory.into(),
            size_bytes: size,
            iterations: iters,
            metric: metric.into(),
            statistic: stat.into(),
            value,
            unit: unit.into(),
            row: String::new(),
            column: String::new(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ib_write_bw --use_cuda=0 -a --report_gbits, the client, as perftest prints it
    /// (cuda_memory.c's set-up lines, ctx_print_test_info's banner, RESULT_FMT_G, REPORT_FMT).
    const WRITE_BW_CUDA: &str = "initializing CUDA
Listing all CUDA devices in system:
CUDA device 0: PCIe address is 19:00

Picking device No. 0
[pid = 4242, dev = 0] device name = [NVIDIA H100 80GB HBM3]
creating CUDA Ctx
making it the current CUDA Ctx
CUDA device integrated: 0
cuMemAlloc() of a 16777216 bytes GPU buffer
allocated GPU buffer address at 00007f2a40000000 pointer=0x7f2a40000000
---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF\t\tDevice         : mlx5_0
 Number of qps   : 1\t\tTransport type : IB
 Connection type : RC\t\tUsing SRQ      : OFF
 PCIe relax order: ON\t\tLock-free      : OFF
 ibv_wr* API     : ON\t\tUsing Enhanced Reorder      : OFF
 TX depth        : 128
 CQ Moderation   : 100
 CQE Poll Batch  : 16
 Mtu             : 4096[B]
 Link type       : IB
 Max inline data : 0[B]
 rdma_cm QPs\t : OFF
 Data ex. method : Ethernet
---------------------------------------------------------------------------------------
 local address: LID 0x01 QPN 0x0123 PSN 0x4b6d1c RKey 0x1fff00 VAddr 0x007f2a40800000
 remote address: LID 0x02 QPN 0x0456 PSN 0x9a8e21 RKey 0x2fff00 VAddr 0x007f1b60800000
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 2          5000           0.065721            0.065389\t\t     4.086828
 4          5000           0.13               0.13\t\t     4.080532
 8388608    5000           392.95             392.81\t\t     0.005853
---------------------------------------------------------------------------------------
deallocating GPU buffer 00007f2a40000000
destroying current CUDA Ctx
";

    /// ib_send_lat -a -n 1000 on host memory (RESULT_FMT_LAT, REPORT_FMT_LAT).
    const SEND_LAT: &str = "---------------------------------------------------------------------------------------
                    Send Latency Test
 Dual-port       : OFF\t\tDevice         : mlx5_1
 Number of qps   : 1\t\tTransport type : IB
 Connection type : RC\t\tUsing SRQ      : OFF
 TX depth        : 1
 RX depth        : 512
 Mtu             : 4096[B]
 Link type       : IB
 Max inline data : 236[B]
 rdma_cm QPs\t : OFF
 Data ex. method : Ethernet
---------------------------------------------------------------------------------------
 #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] 
 2       1000          1.04           3.47         1.07     \t       1.08        \t0.06   \t\t1.25    \t\t3.47   
 4       1000          1.05           2.38         1.08     \t       1.09        \t0.05   \t\t1.23    \t\t2.38   
---------------------------------------------------------------------------------------
";

    #[test]
    fn a_cuda_bandwidth_sweep_is_read() {
        let rows = parse("bw.log", WRITE_BW_CUDA, Memory::Auto).unwrap();
        assert_eq!(rows.len(), 9);
        let r = &rows[7];
        assert_eq!(
            (r.test.as_str(), r.device.as_str(), r.memory.as_str()),
            ("ib_write_bw", "mlx5_0", "gpu")
        );
        assert_eq!(
            (r.size_bytes, r.iterations, r.line),
            (Some(8388608), Some(5000), 34)
        );
        assert_eq!(
            (r.metric.as_str(), r.statistic.as_str(), r.unit.as_str()),
            ("bandwidth", "average", "Gb/s")
        );
        assert_eq!(r.value, 392.81);
        assert_eq!(
            (rows[8].metric.as_str(), rows[8].value),
            ("msg_rate", 0.005853)
        );
        assert!(rows.iter().all(|r| r.detail.is_empty()));
        // -q 4 -b: both variants in the detail, the title's first.
        let multi = WRITE_BW_CUDA
            .replace("Number of qps   : 1", "Number of qps   : 4")
            .replace("RDMA_Write BW Test", "RDMA_Write Bidirectional BW Test");
        let rows = parse("multi.log", &multi, Memory::Auto).unwrap();
        assert!(rows.iter().all(|r| r.detail == "bidirectional;qps=4"));
        let host = parse("bw.log", WRITE_BW_CUDA, Memory::Host).unwrap();
        assert_eq!(host[0].memory, "host", "--memory overrides the log");
        // Older releases: MB/sec (the same 2^20 divisor), and a CPU_Util column.
        let old = WRITE_BW_CUDA
            .replace("Gb/sec", "MB/sec")
            .replace("MsgRate[Mpps]", "MsgRate[Mpps]    CPU_Util[%]")
            .replace("4.086828\n", "4.086828\t    12.50\n")
            .replace("4.080532\n", "4.080532\t    12.50\n")
            .replace("0.005853\n", "0.005853\t    3.10\n");
        let rows = parse("old.log", &old, Memory::Auto).unwrap();
        assert_eq!(rows.len(), 12);
        assert_eq!(rows[0].unit, "MiB/s");
        assert_eq!(
            (rows[11].metric.as_str(), rows[11].value),
            ("cpu_util", 3.10)
        );
    }

    #[test]
    fn a_latency_sweep_and_titles_are_read() {
        let rows = parse("lat.log", SEND_LAT, Memory::Auto).unwrap();
        assert_eq!(rows.len(), 14);
        let stats: Vec<&str> = rows[..7].iter().map(|r| r.statistic.as_str()).collect();
        assert_eq!(
            stats,
            ["min", "max", "typical", "avg", "stdev", "p99", "p99.9"]
        );
        assert_eq!((rows[2].value, rows[2].unit.as_str()), (1.07, "us"));
        assert_eq!(
            (rows[0].memory.as_str(), rows[0].test.as_str()),
            ("host", "ib_send_lat")
        );
        let t = title("RDMA_Write_imm Bidirectional BW Test").unwrap();
        assert_eq!(
            (t.test.as_str(), t.latency, t.detail.join(";")),
            ("ib_write_bw", false, "write_imm;bidirectional".to_string())
        );
        let t = title("Atomic FETCH_AND_ADD Latency Test").unwrap();
        assert_eq!(t.test, "ib_atomic_lat");
        assert_eq!(title("RDMA_Read Latency Test").unwrap().test, "ib_read_lat");
        assert!(title("Speed Test").is_none());
        // Duration mode (-D) prints t_avg and tps only.
        let dur = format!(
            "{}{}{}",
            &SEND_LAT[..SEND_LAT.find(" #bytes").unwrap()],
            " #bytes        #iterations       t_avg[usec]    tps average\n 2       512345            1.08        925925.93\n",
            "-".repeat(87)
        );
        let rows = parse("dur.log", &dur, Memory::Auto).unwrap();
        assert_eq!(rows.len(), 2, "{dur}");
        assert_eq!(rows[1].metric, "transaction_rate");
        assert_eq!(rows[1].detail, "duration");
    }

    #[test]
    fn several_tests_in_one_log_keep_their_own_memory() {
        let two = format!("{SEND_LAT}{WRITE_BW_CUDA}");
        let rows = parse("two.log", &two, Memory::Auto).unwrap();
        assert_eq!(rows.len(), 14 + 9);
        assert_eq!(rows[0].memory, "host");
        assert_eq!(rows[14].memory, "gpu");
        let two = format!("{WRITE_BW_CUDA}{SEND_LAT}");
        let rows = parse("two.log", &two, Memory::Auto).unwrap();
        assert_eq!(
            rows[9].memory, "host",
            "CUDA lines belong to the test after them"
        );
    }

    #[test]
    fn bad_and_cut_logs_name_the_line() {
        // Cut in the middle of the table.
        let cut = &WRITE_BW_CUDA[..WRITE_BW_CUDA.find(" 8388608").unwrap()];
        let e = parse("cut.log", cut, Memory::Auto).unwrap_err();
        assert_eq!(e.file, "cut.log:34", "{e}");
        assert!(e.expected.contains("cut short"), "{e}");
        // Cut in the middle of a row.
        let cut = &WRITE_BW_CUDA[..WRITE_BW_CUDA.find("392.81").unwrap()];
        let e = parse("row.log", cut, Memory::Auto).unwrap_err();
        assert_eq!(e.file, "row.log:34", "{e}");
        assert!(e.found.contains("3 fields"), "{e}");
        // A word where a number belongs.
        let e = parse(
            "word.log",
            &WRITE_BW_CUDA.replace("392.95", "n/a"),
            Memory::Auto,
        )
        .unwrap_err();
        assert_eq!(e.file, "word.log:34", "{e}");
        assert!(e.expected.contains("bandwidth peak"), "{e}");
        // A header without its banner; a banner without a table; a server log (no rows).
        let headless = &WRITE_BW_CUDA[WRITE_BW_CUDA.find(" #bytes").unwrap()..];
        let e = parse("h.log", headless, Memory::Auto).unwrap_err();
        assert_eq!(e.file, "h.log:1", "{e}");
        let banner = &SEND_LAT[..SEND_LAT.find(" #bytes").unwrap()];
        let e = parse("b.log", banner, Memory::Auto).unwrap_err();
        assert!(e.expected.contains("result header"), "{e}");
        let server = SEND_LAT
            .lines()
            .filter(|l| !l.starts_with(" 2 ") && !l.starts_with(" 4 "))
            .collect::<Vec<_>>()
            .join("\n");
        let e = parse("s.log", &server, Memory::Auto).unwrap_err();
        assert!(e.expected.contains("at least one result row"), "{e}");
        // A latency header under a bandwidth banner.
        let mixed = WRITE_BW_CUDA.replace("RDMA_Write BW Test", "RDMA_Write Latency Test");
        let e = parse("m.log", &mixed, Memory::Auto).unwrap_err();
        assert_eq!(e.file, "m.log:31", "{e}");
        // An unknown column.
        let e = parse(
            "c.log",
            &WRITE_BW_CUDA.replace("MsgRate[Mpps]", "Speed[furlongs]"),
            Memory::Auto,
        )
        .unwrap_err();
        assert!(e.found.contains("Speed[furlongs]"), "{e}");
    }

    #[test]
    fn header_names_split_on_wide_gaps_only() {
        assert_eq!(
            header_names(" #bytes #iterations    t_min[usec]   99% percentile[usec] "),
            [
                "#bytes",
                "#iterations",
                "t_min[usec]",
                "99% percentile[usec]"
            ]
        );
    }
}

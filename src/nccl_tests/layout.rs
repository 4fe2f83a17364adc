//! nccl-tests' text, as its `src/util.cu` prints it (NVIDIA/nccl-tests 2.19.6): the header
//! (`writeDeviceReport`), the column header (`writeResultHeader`), one row per size
//! (`writeBenchmarkLinePreamble`, `writeBenchmarkLineBody` twice, out-of-place then in-place)
//! and the footer (`writeResultFooter`, `finalizeFooter`, `writeErrors`). Numbers are C's
//! printf conversions, rendered here: `getFloatStr`'s fitting of a figure into its column
//! (`%.2f`, else `%.1f`, else `%.0f`, else `%.1e`/`%.0e`) and `%g`.

/// The nccl-tests release whose layout this is.
pub const NCCL_TESTS_VERSION: &str = "2.19.6";
/// NCCL_VERSION_CODE of the NCCL release the model follows (2.30.7: 2 x 10000 + 30 x 100 + 7).
pub const NCCL_VERSION_CODE: u32 = 23007;

/// What the header says of the run (`writeDeviceReport`'s first lines).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The program emulated ("all_reduce_perf").
    pub program: String,
    /// `-g`: GPUs per process (one process per host).
    pub gpus: u32,
    /// `-b`, as parsed.
    pub min_bytes: u64,
    /// `-e`, as parsed.
    pub max_bytes: u64,
    /// `-f` where above 1, else `-i`, and which.
    pub step: (u64, bool),
    /// `-w`.
    pub warmup: i64,
    /// `-n`.
    pub iters: i64,
    /// `-c`.
    pub validation: i64,
}

/// One rank's device line: its host, its device index on the host and the device's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Device {
    /// The host's name (nccl-tests prints the hostname).
    pub host: String,
    /// The process id printed (the model has none: one number per host).
    pub pid: u32,
    /// The CUDA device index on the host.
    pub device: u32,
    /// The device's name (`cudaDeviceProp::name`).
    pub name: String,
}

/// The header through the device lines.
pub fn header(h: &Header, devices: &[Device]) -> String {
    let mut s = format!(
        "# nccl-tests version {NCCL_TESTS_VERSION} nccl-headers={NCCL_VERSION_CODE} \
         nccl-library={NCCL_VERSION_CODE}\n"
    );
    s.push_str(&format!("# Collective test starting: {}\n", h.program));
    s.push_str(&format!(
        "# nThread 1 nGpus {} minBytes {} maxBytes {} step: {}({}) warmup iters: {} iters: {} \
         agg iters: 1 validation: {} graph: 0 unalign: 0\n",
        h.gpus,
        h.min_bytes,
        h.max_bytes,
        h.step.0,
        if h.step.1 { "factor" } else { "bytes" },
        h.warmup,
        h.iters,
        h.validation
    ));
    s.push_str("#\n# Using devices\n");
    for (rank, d) in devices.iter().enumerate() {
        // The model has no PCI addresses: the bus id is printed as zeros.
        s.push_str(&format!(
            "#  Rank {rank:>2} Group {:>2} Pid {:>6} on {:>10} device {:>2} [{:04x}:{:02x}:{:02x}] {}\n",
            0, d.pid, d.host, d.device, 0, 0, 0, d.name
        ));
    }
    s
}

/// `writeResultHeader` without per-iteration timing or timestamps: `#`, then three lines.
pub fn column_header() -> String {
    let mut s = String::from("#\n");
    s.push_str(&format!(
        "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}           out-of-place                       in-place          \n",
        "", "", "", "", ""
    ));
    s.push_str(&format!(
        "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6} \n",
        "size",
        "count",
        "type",
        "redop",
        "root",
        "time",
        "algbw",
        "busbw",
        "#wrong",
        "time",
        "algbw",
        "busbw",
        "#wrong"
    ));
    s.push_str(&format!(
        "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6} \n",
        "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""
    ));
    s
}

/// One placement's figures: time (µs), algbw and busbw (GB/s).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figures {
    /// Time per collective, µs.
    pub time_us: f64,
    /// Algorithm bandwidth, GB/s.
    pub algbw: f64,
    /// Bus bandwidth, GB/s.
    pub busbw: f64,
}

/// One size's row: size, count, type, redop, root, then out-of-place and in-place figures;
/// `#wrong` 0 where that placement is validated, `N/A` where not (`-c 0`; sendrecv's
/// in-place, which nccl-tests does not check).
pub fn row(
    (size, count): (u64, u64),
    (dtype, redop, root): (&str, &str, i32),
    placements: [Figures; 2],
    validated: [bool; 2],
) -> String {
    let mut s = format!(
        "{size:>12}  {count:>12}  {dtype:>8}  {redop:>6}  {:>6}",
        root.to_string()
    );
    for (f, validated) in placements.into_iter().zip(validated) {
        s.push_str(&format!(
            "  {:>7}  {:>6}  {:>6}",
            float_str(f.time_us, 7),
            float_str(f.algbw, 6),
            float_str(f.busbw, 6)
        ));
        if validated {
            s.push_str(&format!("  {:>6}", c_g(0.0)));
        } else {
            s.push_str("    N/A");
        }
    }
    s.push('\n');
    s
}

/// The footer: out-of-bounds values (none: every #wrong is 0), the average bus bandwidth,
/// the test's end, `finalizeFooter`'s `#` and `writeErrors`' empty line.
pub fn footer(program: &str, avg_busbw: f64) -> String {
    format!(
        "# {:<20} : 0 OK\n# {:<20} : {} \n#\n# Collective test concluded: {program}\n#\n\n",
        "Out of bounds values",
        "Avg bus bandwidth",
        c_g(avg_busbw)
    )
}

/// nccl-tests' `getFloatStr`: the value in `width` columns with two decimals, else one, else
/// none, else in C's exponent form (`%.1e` for 7 columns and more, `%.0e` below).
pub fn float_str(value: f64, width: usize) -> String {
    for p in [2, 1, 0] {
        let s = format!("{value:>width$.p$}");
        if s.len() <= width {
            return s;
        }
    }
    let e = c_e(value, if width >= 7 { 1 } else { 0 });
    // snprintf truncates to the buffer; C's exponent form of a finite double fits.
    format!("{e:>width$}")
}

/// C's `%.{p}e`: mantissa with `p` decimals, `e`, the exponent's sign and at least two digits.
pub fn c_e(value: f64, p: usize) -> String {
    let s = format!("{value:.p$e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exp.abs())
}

/// C's `%g`: six significant digits, fixed where the exponent is from -4 to 5, else the
/// exponent form, trailing zeros (and a trailing point) removed.
pub fn c_g(value: f64) -> String {
    const P: i32 = 6;
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.into();
    }
    if !value.is_finite() {
        return if value.is_nan() {
            "nan".into()
        } else if value > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    // The exponent after rounding to P significant digits.
    let e = format!("{value:.*e}", (P - 1) as usize);
    let x: i32 = e
        .split_once('e')
        .and_then(|(_, x)| x.parse().ok())
        .unwrap_or(0);
    let strip = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if (-4..P).contains(&x) {
        strip(format!("{value:.*}", (P - 1 - x) as usize))
    } else {
        let m = c_e(value, (P - 1) as usize);
        let (mantissa, exp) = m.split_once('e').unwrap_or((&m, ""));
        format!("{}e{exp}", strip(mantissa.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// getFloatStr: two decimals while they fit, then fewer, then C's exponent form.
    #[test]
    fn float_str_fits_the_column_as_nccl_tests() {
        assert_eq!(float_str(12.345, 7), "  12.35");
        assert_eq!(float_str(12345.678, 7), "12345.7");
        assert_eq!(float_str(1234567.8, 7), "1234568");
        assert_eq!(float_str(12345678.9, 7), "1.2e+07");
        assert_eq!(float_str(0.0, 6), "  0.00");
        assert_eq!(float_str(370.123, 6), "370.12");
        assert_eq!(float_str(1234.5, 6), "1234.5");
        assert_eq!(float_str(123456.7, 6), "123457");
        assert_eq!(float_str(1234567.0, 6), " 1e+06");
    }

    /// printf's %g: six significant digits, no trailing zeros, exponent outside -4..6.
    #[test]
    fn c_g_is_printfs() {
        assert_eq!(c_g(0.0), "0");
        assert_eq!(c_g(45.123456789), "45.1235");
        assert_eq!(c_g(100.0), "100");
        assert_eq!(c_g(0.5), "0.5");
        assert_eq!(c_g(0.0001234567), "0.000123457");
        assert_eq!(c_g(0.00001234567), "1.23457e-05");
        assert_eq!(c_g(1234567.0), "1.23457e+06");
        assert_eq!(c_g(999999.5), "1e+06");
        assert_eq!(c_g(123456.0), "123456");
    }

    /// The column header as nccl-tests 2.19.6 prints it (util.cu writeResultHeader).
    #[test]
    fn column_header_is_verbatim() {
        let h = column_header();
        let lines: Vec<&str> = h.lines().collect();
        assert_eq!(lines[0], "#");
        assert_eq!(
            lines[1],
            "#                                                              out-of-place                       in-place          "
        );
        assert_eq!(
            lines[2],
            "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong "
        );
        assert_eq!(
            lines[3],
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         "
        );
    }

    #[test]
    fn row_and_footer() {
        let f = Figures {
            time_us: 45.5,
            algbw: 23.05,
            busbw: 43.22,
        };
        assert_eq!(
            row((1048576, 262144), ("float", "sum", -1), [f, f], [true; 2]),
            "     1048576        262144     float     sum      -1    45.50   23.05   43.22       0    45.50   23.05   43.22       0\n"
        );
        assert!(row((8, 2), ("float", "sum", -1), [f, f], [false; 2]).ends_with("    N/A\n"));
        let sendrecv = row((8, 2), ("float", "sum", -1), [f, f], [true, false]);
        assert!(
            sendrecv.ends_with("       0    45.50   23.05   43.22    N/A\n"),
            "{sendrecv}"
        );
        assert_eq!(
            footer("all_reduce_perf", 43.2156789),
            "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 43.2157 \n#\n# Collective test concluded: all_reduce_perf\n#\n\n"
        );
    }
}

//! nvbandwidth's plain-text output, line for line as its source prints it (v0.8: output.cpp,
//! inline_common.h's `operator<<` of `PeerValueMatrix`, nvbandwidth.cpp's `main`).
//!
//! - Version block (`Output::addVersionInfo`): `nvbandwidth Version: v0.8`, `Built from Git
//!   version: ...`, a blank line. Here the git line names gdrsim, so a simulated run is never
//!   taken for a measured one.
//! - The buffer-size warning when `-b` is below the default (printed verbatim, its "64MB"
//!   included, although the default is 512 MiB).
//! - The CUDA runtime, driver and NVIDIA driver lines are left out: the model has no values.
//! - Devices (`printGPUs`): the host name, `Device N: NAME (PCI)`, a blank line; the simulated
//!   GPU's model stands for the name and its config name for the PCI address.
//! - Per testcase: `Running KEY.`, then per matrix its title, the matrix (`operator<<`: a
//!   corner of two spaces, column indices `setw(10)`, each row its index `setw(2)` and its values
//!   `setw(10)` in `fixed`/`setprecision(2)`, `N/A` for a pair with no value), a blank line,
//!   `SUM KEY total` (the flags still `fixed`, 2 decimals), and `addTestcaseResults`' blank line.
//! - The closing note (`Output::printInfo`) and a blank line.
//! - `-l` (`listTestcases`): `Index, Name:`, a tab and `Description`, a rule of 23 `=`, then
//!   per testcase `INDEX, KEY:`, its description (lines begin with a tab) and a blank line.

/// The nvbandwidth release whose layout this follows.
pub const VERSION: &str = "v0.8";

/// nvbandwidth's default buffer size (MiB); below it, it prints [`SMALL_BUFFER_NOTE`].
pub const DEFAULT_BUFFER_MIB: u64 = 512;

/// nvbandwidth's warning for a buffer below the default, verbatim.
pub const SMALL_BUFFER_NOTE: &str = "NOTE: You have chosen a buffer size that is smaller than the default buffer size. It is suggested to use the default buffer size (64MB) to achieve maximal peak bandwidth.";

/// The version block.
pub fn version() -> String {
    format!(
        "nvbandwidth Version: {VERSION}\nBuilt from Git version: gdrsim {} (simulated)\n\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// The device block: the host's name, then each GPU as (model, name).
pub fn devices(host: &str, gpus: &[(&str, &str)]) -> String {
    let mut s = format!("{host}\n");
    for (i, (model, name)) in gpus.iter().enumerate() {
        s.push_str(&format!("Device {i}: {model} ({name})\n"));
    }
    s.push('\n');
    s
}

/// `Running KEY.`, the line that opens a testcase's output.
pub fn running(key: &str) -> String {
    format!("Running {key}.\n")
}

/// One matrix of a testcase (`addTestcaseResults`): its title, the matrix of GB/s (None
/// printed `N/A`), the SUM line under `key` and the blank lines around it.
pub fn matrix(key: &str, title: &str, rows: &[Vec<Option<f64>>]) -> String {
    let mut s = format!("{title}\n");
    let columns = rows.first().map_or(0, Vec::len);
    s.push_str("  ");
    for c in 0..columns {
        s.push_str(&format!("{c:>10}"));
    }
    s.push('\n');
    let mut sum = 0.0;
    for (r, row) in rows.iter().enumerate() {
        s.push_str(&format!("{r:>2}"));
        for v in row {
            match v {
                Some(v) => s.push_str(&format!("{v:>10.2}")),
                None => s.push_str(&format!("{:>10}", "N/A")),
            }
            sum += v.unwrap_or(0.0);
        }
        s.push('\n');
    }
    s.push('\n');
    s.push_str(&format!("SUM {key} {sum:.2}\n\n"));
    s
}

/// The closing note.
pub fn closing() -> &'static str {
    "NOTE: The reported results may not reflect the full capabilities of the platform.\n\
     Performance can vary with software drivers, hardware clocks, and system topology.\n\n"
}

/// `-l`: the testcases as (index, key, description).
pub fn list(cases: &[(usize, &str, &str)]) -> String {
    let mut s = String::from("Index, Name:\n\tDescription\n=======================\n");
    for (i, key, desc) in cases {
        s.push_str(&format!("{i}, {key}:\n{desc}\n\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The matrix block against one written by hand from inline_common.h's `operator<<` and
    /// output.cpp's `addTestcaseResults`: corner "  ", `setw(10)` columns, `setw(2)` row index,
    /// `fixed` two decimals, a blank line, the SUM line, a blank line.
    #[test]
    fn matrix_block_is_nvbandwidths() {
        let rows = vec![vec![Some(26.03), Some(25.944), None, Some(123.456)]];
        let want = concat!(
            "Running host_to_device_memcpy_ce.\n",
            "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n",
            "           0         1         2         3\n",
            " 0     26.03     25.94       N/A    123.46\n",
            "\n",
            "SUM host_to_device_memcpy_ce 175.43\n",
            "\n",
        );
        let key = "host_to_device_memcpy_ce";
        let got = running(key)
            + &matrix(
                key,
                "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)",
                &rows,
            );
        assert_eq!(got, want);
    }

    /// A square matrix (the device-to-device layout) with its N/A diagonal and a row index of
    /// two digits.
    #[test]
    fn square_matrix_rows_and_columns() {
        let n = 11;
        let rows: Vec<Vec<Option<f64>>> = (0..n)
            .map(|r| (0..n).map(|c| (r != c).then_some(1.0)).collect())
            .collect();
        let got = running("k") + &matrix("k", "t", &rows);
        let lines: Vec<&str> = got.lines().collect();
        assert_eq!(lines[2].len(), 2 + 10 * n);
        assert!(lines[2].ends_with("        10"));
        assert!(lines[13].starts_with("10      1.00"), "{}", lines[13]);
        assert!(
            lines[3].starts_with(" 0       N/A      1.00"),
            "{}",
            lines[3]
        );
        assert_eq!(lines[15], "SUM k 110.00");
    }

    #[test]
    fn list_and_header_lines() {
        let l = list(&[(0, "host_to_device_memcpy_ce", "\tHost to device CE memcpy")]);
        assert_eq!(
            l,
            "Index, Name:\n\tDescription\n=======================\n\
             0, host_to_device_memcpy_ce:\n\tHost to device CE memcpy\n\n"
        );
        assert!(version().starts_with("nvbandwidth Version: v0.8\nBuilt from Git version: "));
        assert_eq!(
            devices("node-a", &[("H100 PCIe", "gpu0")]),
            "node-a\nDevice 0: H100 PCIe (gpu0)\n\n"
        );
    }
}

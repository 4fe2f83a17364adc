//! The attribute values of NCCL's topology XML, as NCCL writes them (src/graph/xml.cc,
//! topo.cc): PCIe link speeds and widths, PCI classes and IDs, bus IDs, compute capabilities.
//! Pure functions: `None` or `Err(())` where a value is not one NCCL writes, and the callers
//! say where and what was expected.

use crate::config::ConfigError;

/// A place in the file: line and column, from 1 (columns in characters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pos {
    /// The line.
    pub line: usize,
    /// The column.
    pub col: usize,
}

impl Pos {
    /// A refusal at this place of `file`: `FILE:LINE:COLUMN: expected ..., found ...`.
    pub fn err(
        self,
        file: &str,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> ConfigError {
        ConfigError::new(
            &format!("{file}:{}:{}", self.line, self.col),
            "",
            expected,
            found,
        )
    }
}

/// What a link attribute says: a value, nothing (NCCL read none), or not one NCCL writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// A value.
    Value(u32),
    /// Nothing: NCCL found none.
    Unknown,
    /// Not a value NCCL writes.
    Invalid,
}

/// The `link_speed` values accepted, for messages.
pub const SPEEDS: &str = "a PCIe link speed as sysfs writes it: 2.5, 5, 8, 16, 32 or 64 GT/s, \
    as \"16.0 GT/s PCIe\" (Linux 5.7 on) or \"16 GT/s\" (before), or empty where NCCL read none";

/// The PCIe generation of a `link_speed` value: [`Read::Unknown`] where NCCL found none (empty,
/// or the kernel's "Unknown"), [`Read::Invalid`] for anything that is not a PCIe speed.
///
/// NCCL writes what sysfs' `max_link_speed` says (the smaller of the device's and its port's),
/// or for GPUs a string from NVML's generation ("32.0 GT/s PCIe"), or "16.0 GT/s" where NVML
/// gave none. Its own table (topo.cc `kvDictPciGen`, prefix-matched) knows "16 GT/s" and
/// "16.0 GT/s PCIe" but neither "16.0 GT/s" nor "32.0 GT/s", which it reads as its fallback,
/// 8 GT/s; here every spelling of a speed counts.
pub fn generation(speed: &str) -> Read {
    let s = speed.trim();
    if s.is_empty() || s.eq_ignore_ascii_case("unknown") || s.eq_ignore_ascii_case("unknown speed")
    {
        return Read::Unknown;
    }
    let s = s.strip_suffix("PCIe").unwrap_or(s).trim_end();
    let gts: Option<f64> = s
        .strip_suffix("GT/s")
        .and_then(|n| n.trim_end().parse().ok());
    let table = [
        (2.5, 1),
        (5.0, 2),
        (8.0, 3),
        (16.0, 4),
        (32.0, 5),
        (64.0, 6),
    ];
    gts.and_then(|v| table.iter().find(|(t, _)| *t == v))
        .map_or(Read::Invalid, |&(_, g)| Read::Value(g))
}

/// The `link_width` values accepted, for messages.
pub const WIDTHS: &str =
    "a PCIe link width (1, 2, 4, 8, 12, 16 or 32 lanes), or 0 or empty where NCCL read none";

/// The lanes of a `link_width` value: [`Read::Unknown`] where NCCL read none (empty or 0:
/// NCCL then takes 16), [`Read::Invalid`] for anything that is not a PCIe width.
pub fn width(text: &str) -> Read {
    let t = text.trim();
    if t.is_empty() {
        return Read::Unknown;
    }
    match t.parse::<u32>() {
        Ok(0) => Read::Unknown,
        Ok(w) if crate::topology::pcie::valid_width(w) => Read::Value(w),
        _ => Read::Invalid,
    }
}

/// What a PCI `class` makes a `<pci>` element, as NCCL reads it (topo.cc `kvDictPciClass`,
/// prefix-matched).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// 0x060400: a PCI bridge (a switch's upstream port).
    Bridge,
    /// 0x03...: a display controller (a GPU).
    Gpu,
    /// 0x02...: a network controller (a NIC).
    Nic,
    /// 0x068000: an NVSwitch.
    NvSwitch,
    /// 0x068001: a CPU (an NVLink target on POWER9).
    Cpu,
    /// Anything else (NVMe 0x0108..., a CX-8's data-direct 0x080100): NCCL's plain PCI node.
    Other,
}

/// The class of a `class` attribute.
pub fn class(text: &str) -> Class {
    let t = text.trim().to_ascii_lowercase();
    if t.starts_with("0x060400") {
        Class::Bridge
    } else if t.starts_with("0x068000") {
        Class::NvSwitch
    } else if t.starts_with("0x068001") {
        Class::Cpu
    } else if t.starts_with("0x03") {
        Class::Gpu
    } else if t.starts_with("0x02") {
        Class::Nic
    } else {
        Class::Other
    }
}

/// What a `<c2c>`'s `count` must be, for messages.
pub const C2C_COUNT: &str = "the number of active NVLink-C2C links, from 1 to 64";

/// What a `<c2c>`'s `bw` must be, for messages.
pub const C2C_BW: &str =
    "each link's bandwidth in MB/s as NVML gives it, from 1 to 1000000 (45000 for 45 GB/s)";

/// The rate in each direction of an NVLink-C2C link of `count` links of `bw` MB/s each: in
/// MB/s, and as a config rate in GB/s (`"450GB/s"`, `"223.56GB/s"`).
///
/// NCCL writes `<c2c bw= count=>` from NVML (xml.cc `ncclTopoGetXmlFromGpu`, for `sm` 90 on):
/// `count` the GPU's active C2C links (`NVML_FI_DEV_C2C_LINK_GET_STATUS` 1) and `bw` their
/// `NVML_FI_DEV_C2C_LINK_GET_MAX_BW`, "C2C Link Speed in MBps for active links" (nvmlwrap.h).
/// It reads them back (topo.cc `ncclTopoAddC2c`) as one link between the GPU and its CPU of
/// `bw * count / 1000.0` GB/s, the unit of all its link bandwidths, in each direction: a
/// VR200's `bw="56376" count="7"` is its `C2C[394.6]`.
pub fn c2c_rate(bw: u32, count: u32) -> (u64, String) {
    let mbps = u64::from(bw) * u64::from(count);
    let (whole, frac) = (mbps / 1000, mbps % 1000);
    let text = if frac == 0 {
        format!("{whole}GB/s")
    } else {
        let f = format!("{frac:03}");
        format!("{whole}.{}GB/s", f.trim_end_matches('0'))
    };
    (mbps, text)
}

/// An integer as C's `strtol(s, NULL, 0)` reads a whole attribute: decimal, `0x` hex or a
/// leading `0` octal, with a sign; `None` where the text is not all a number.
pub fn int(text: &str) -> Option<i64> {
    let t = text.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()?
    } else if t.len() > 1 && t.starts_with('0') {
        i64::from_str_radix(&t[1..], 8).ok()?
    } else {
        t.parse().ok()?
    };
    Some(if neg { -v } else { v })
}

/// A bus ID as a number, as NCCL compares them (utils.cc `busIdToInt64`: its hex digits, `:`
/// and `.` skipped), so that "0000:07:00.0" and NVML's "00000000:07:00.0" are one device.
/// `None` unless it is hex digits, colons and dots with at most 16 digits.
pub fn busid(text: &str) -> Option<u64> {
    let t = text.trim();
    if t.is_empty()
        || !t
            .chars()
            .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
    {
        return None;
    }
    let digits: String = t.chars().filter(char::is_ascii_hexdigit).collect();
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    u64::from_str_radix(&digits, 16).ok()
}

/// The compute capability of an `sm` value (10 x major + minor): "9.0" for 90, "10.0" for 100;
/// `None` outside 1.0 to 20.9.
pub fn compute_capability(sm: i64) -> Option<String> {
    (10..=209)
        .contains(&sm)
        .then(|| format!("{}.{}", sm / 10, sm % 10))
}

/// A PCI device's identity as NCCL packs it (topo.cc `ncclTopoGetIntDevice`): vendor, device,
/// subsystem vendor and subsystem device, 16 bits each, from the attributes' values (a missing
/// or unreadable one counts 0, as `strtol` gives).
pub fn device_id(
    vendor: Option<&str>,
    device: Option<&str>,
    sub_vendor: Option<&str>,
    sub_device: Option<&str>,
) -> u64 {
    let part = |v: Option<&str>| v.and_then(int).map_or(0, |x| (x as u64) & 0xffff);
    (part(vendor) << 48) | (part(device) << 32) | (part(sub_vendor) << 16) | part(sub_device)
}

/// The PCIe generation of a Broadcom PEX switch that shows as two bridge levels, at `level`
/// (0: the upper, 1: the lower), or 0 for any other bridge: NCCL's `getBcmGen` (topo.cc). A
/// PEX88000 (Gen4, device 0xc010, subsystem 0x1000:0xa0xx) looks the same at both levels; a
/// PEX89000 (Gen5, 0xc030, subsystem 0x1000) has subsystem device 0x0xxx above and 0x1xxx below.
pub fn bcm_gen(id: u64, level: u64) -> u32 {
    if id & 0xffff_ffff_ffff_f000 == 0x1000_c010_1000_a000 {
        4
    } else if id & 0xffff_ffff_ffff_f000 == (0x1000_c030_1000_0000 | (level * 0x1000)) {
        5
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_speeds_map_to_generations_in_every_spelling() {
        for (text, g) in [
            ("2.5 GT/s", 1),
            ("2.5 GT/s PCIe", 1),
            ("5 GT/s", 2),
            ("5.0 GT/s PCIe", 2),
            ("8 GT/s", 3),
            ("8.0 GT/s PCIe", 3),
            ("16 GT/s", 4),
            ("16.0 GT/s PCIe", 4),
            ("16.0 GT/s", 4),
            ("32 GT/s", 5),
            ("32.0 GT/s", 5),
            ("32.0 GT/s PCIe", 5),
            ("64.0 GT/s PCIe", 6),
        ] {
            assert_eq!(generation(text), Read::Value(g), "{text}");
        }
        for none in ["", "  ", "Unknown", "Unknown speed"] {
            assert_eq!(generation(none), Read::Unknown, "{none:?}");
        }
        for bad in [
            "12 GT/s",
            "16",
            "16 Gb/s",
            "128.0 GT/s PCIe",
            "fast",
            "GT/s",
        ] {
            assert_eq!(generation(bad), Read::Invalid, "{bad}");
        }
    }

    #[test]
    fn widths_are_pcie_widths_or_unknown() {
        for w in [1, 2, 4, 8, 12, 16, 32] {
            assert_eq!(width(&w.to_string()), Read::Value(w));
        }
        assert_eq!(width(""), Read::Unknown);
        assert_eq!(
            width("0"),
            Read::Unknown,
            "NCCL writes 0 where sysfs gave none"
        );
        for bad in ["3", "64", "x16", "-1", "16.0"] {
            assert_eq!(width(bad), Read::Invalid, "{bad}");
        }
    }

    #[test]
    fn classes_are_prefix_matched_as_nccl_does() {
        assert_eq!(class("0x060400"), Class::Bridge);
        assert_eq!(class("0x030200"), Class::Gpu);
        assert_eq!(class("0x030000"), Class::Gpu);
        assert_eq!(class("0x03"), Class::Gpu);
        assert_eq!(class("0x020700"), Class::Nic);
        assert_eq!(class("0x020000"), Class::Nic);
        assert_eq!(class("0x068000"), Class::NvSwitch);
        assert_eq!(class("0x068001"), Class::Cpu);
        assert_eq!(class("0x010802"), Class::Other);
        assert_eq!(class("0x080100"), Class::Other);
    }

    #[test]
    fn numbers_bus_ids_and_compute_capabilities() {
        assert_eq!(int("90"), Some(90));
        assert_eq!(int("-1"), Some(-1));
        assert_eq!(int("0x10de"), Some(0x10de));
        assert_eq!(int("ninety"), None);
        assert_eq!(busid("0000:07:00.0"), busid("00000000:07:00.0"));
        assert_eq!(busid("0000:A0:00.0"), busid("0000:a0:00.0"));
        assert_ne!(busid("0000:07:00.0"), busid("0000:07:00.1"));
        assert_eq!(busid("0000:07:00.0 "), Some(0x07000));
        assert_eq!(busid("07:00.0/x"), None);
        assert_eq!(busid(""), None);
        assert_eq!(compute_capability(90).as_deref(), Some("9.0"));
        assert_eq!(compute_capability(86).as_deref(), Some("8.6"));
        assert_eq!(compute_capability(100).as_deref(), Some("10.0"));
        assert_eq!(compute_capability(9), None);
        assert_eq!(compute_capability(0), None);
    }

    #[test]
    fn c2c_rates_are_bw_times_count_in_mb_per_s() {
        // NCCL's own figures: VR200 C2C[394.6], GB10 C2C[345.0].
        assert_eq!(c2c_rate(56376, 7), (394_632, "394.632GB/s".to_string()));
        assert_eq!(c2c_rate(43125, 8), (345_000, "345GB/s".to_string()));
        assert_eq!(c2c_rate(44712, 5).1, "223.56GB/s");
        assert_eq!(c2c_rate(45000, 10).1, "450GB/s");
        assert_eq!(c2c_rate(1, 1).1, "0.001GB/s");
        for (bw, count) in [(56376, 7), (44712, 5), (1, 1)] {
            let (mbps, text) = c2c_rate(bw, count);
            assert_eq!(
                crate::units::parse_rate(&text).unwrap().bps(),
                mbps * 8_000_000,
                "{text} reads back exactly"
            );
        }
    }

    #[test]
    fn broadcom_two_level_switches_are_recognised_as_nccl_does() {
        let id = |v, d, sv, sd| device_id(Some(v), Some(d), Some(sv), Some(sd));
        // PEX88096 (DGX A100): the same identity at both levels.
        let gen4 = id("0x1000", "0xc010", "0x1000", "0xa096");
        assert_eq!((bcm_gen(gen4, 0), bcm_gen(gen4, 1)), (4, 4));
        // The GPU's own switch below it has NVIDIA's subsystem: not the same chip.
        assert_eq!(bcm_gen(id("0x1000", "0xc010", "0x10de", "0x13b8"), 1), 0);
        // PEX89000: subsystem device 0x0xxx above, 0x1xxx below.
        let upper = id("0x1000", "0xc030", "0x1000", "0x0100");
        let lower = id("0x1000", "0xc030", "0x1000", "0x100b");
        assert_eq!((bcm_gen(upper, 0), bcm_gen(lower, 1)), (5, 5));
        assert_eq!(
            bcm_gen(lower, 0),
            0,
            "a lower level does not flatten what is below it"
        );
        assert_eq!(bcm_gen(id("0x8086", "0x347a", "", ""), 0), 0);
    }
}

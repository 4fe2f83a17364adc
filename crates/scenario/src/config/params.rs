//! Every parameter of a loaded config with its value, unit and the source of its default, as
//! `gdrsim params` prints it: what a reviewer reads to see which figures rest on a measurement
//! and which on an estimate.

use toml::{Table, Value};

use super::{Config, SECTIONS, to_toml};

/// One parameter of one section instance.
#[derive(Clone, Debug)]
pub struct ParamValue {
    /// The key path, e.g. `machines[0].nics[0].read_window`.
    pub key: String,
    /// The value as the resolved config writes it.
    pub value: String,
    /// The unit a bare number is read in ("ns", "Gb/s", "B", "count", ...).
    pub unit: &'static str,
    /// The values it accepts.
    pub domain: super::Domain,
    /// Where the default comes from.
    pub source: &'static str,
    /// The default, where the config sets another value (then the config is the source).
    pub default: Option<String>,
}

impl ParamValue {
    /// Whether the value is the default and no measurement, datasheet or specification pins
    /// it.
    pub fn is_estimate(&self) -> bool {
        self.default.is_none() && self.source.starts_with("estimate")
    }
}

/// The tables at a section path (`machines[].gpus[]`) with their concrete key paths.
fn instances<'a>(doc: &'a Table, path: &str) -> Vec<(String, &'a Table)> {
    let mut cur: Vec<(String, &Table)> = vec![(String::new(), doc)];
    for seg in path.split('.') {
        let (name, many) = match seg.strip_suffix("[]") {
            Some(n) => (n, true),
            None => (seg, false),
        };
        let mut next = Vec::new();
        for (at, t) in cur {
            let join = |s: String| {
                if at.is_empty() {
                    s
                } else {
                    format!("{at}.{s}")
                }
            };
            match t.get(name) {
                Some(Value::Array(a)) if many => next.extend(
                    a.iter()
                        .enumerate()
                        .filter_map(|(i, v)| Some((join(format!("{name}[{i}]")), v.as_table()?))),
                ),
                Some(Value::Table(t)) if !many => next.push((join(name.to_string()), t)),
                _ => {}
            }
        }
        cur = next;
    }
    cur
}

/// A value as a list or label shows it: strings without quotes.
pub(super) fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => format!("[{}]", a.iter().map(show).collect::<Vec<_>>().join(", ")),
        other => other.to_string(),
    }
}

/// `key = value` of every declared parameter of the resolved config `doc`.
fn values(doc: &Table) -> Vec<(String, String, &'static super::ParamDoc)> {
    let mut out = Vec::new();
    for s in &SECTIONS {
        for (at, t) in instances(doc, s.path) {
            for p in s.params {
                if let Some(v) = t.get(p.key) {
                    out.push((format!("{at}.{}", p.key), show(v), p));
                }
            }
        }
    }
    out
}

/// The resolved config with every declared parameter removed: what loads to the defaults
/// (a socket's CPU family, which chooses them, is kept).
fn bare(doc: &Table) -> Table {
    let mut out = doc.clone();
    for (key, _, _) in values(doc) {
        if key.ends_with(".cpu_family") {
            continue;
        }
        if let Some((at, last)) = key.rsplit_once('.')
            && let Some(t) = table_at_mut(&mut out, at)
        {
            t.remove(last);
        }
    }
    out
}

/// The table at a concrete path such as `machines[0].nics[0]` in `doc`.
pub fn table_at_mut<'a>(doc: &'a mut Table, path: &str) -> Option<&'a mut Table> {
    let mut t = doc;
    for seg in path.split('.') {
        let (name, idx) = match seg.split_once('[') {
            Some((n, i)) => (n, Some(i.trim_end_matches(']').parse::<usize>().ok()?)),
            None => (seg, None),
        };
        let next = t.get_mut(name)?;
        t = match idx {
            Some(i) => next.as_array_mut()?.get_mut(i)?.as_table_mut()?,
            None => next.as_table_mut()?,
        };
    }
    Some(t)
}

/// Sets the parameter at `key` (`machines[0].nics[0].read_window`, as [`list`] names it) in
/// `doc`; None where the path is not there.
pub fn set(doc: &mut Table, key: &str, v: Value) -> Option<()> {
    let (at, last) = key.rsplit_once('.')?;
    table_at_mut(doc, at)?.insert(last.to_string(), v);
    Some(())
}

/// Every declared parameter of `cfg` (each machine once, in config order), with the default
/// beside each value the config changes.
pub fn list(cfg: &Config) -> Vec<ParamValue> {
    let doc: Table = to_toml(cfg).parse().unwrap_or_default();
    let defaults: Vec<(String, String)> = super::parse(
        &toml::to_string(&bare(&doc)).unwrap_or_default(),
        "defaults",
    )
    .map(|d| {
        let t: Table = to_toml(&d).parse().unwrap_or_default();
        values(&t).into_iter().map(|(k, v, _)| (k, v)).collect()
    })
    .unwrap_or_default();
    let mut listed: Vec<ParamValue> = values(&doc)
        .into_iter()
        .map(|(key, value, p)| {
            let default = defaults
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.clone())
                .filter(|d| *d != value);
            let source = match default {
                None => family_source(&doc, &key).unwrap_or(p.source),
                Some(_) => p.source,
            };
            ParamValue {
                key,
                value,
                unit: p.unit,
                domain: p.domain,
                source,
                default,
            }
        })
        .collect();
    device_rows(&doc, &mut listed);
    listed
}

/// The built-in defaults of NCCL's channel counts ([`super::collective::CHANNEL_DEFAULTS`]),
/// as rows to list after the config's parameters, where a scenario of `cfg` is a collective
/// (none otherwise). They are no config keys: a collective's `channels` overrides the count
/// they give, and the tools that vary a config's keys (`sensitivity`, `calibrate`) read
/// [`list`], which leaves them out.
pub fn collective_rows(cfg: &Config) -> Vec<ParamValue> {
    let collectives = cfg
        .scenarios
        .iter()
        .any(|s| s.workload.as_ref().is_some_and(|w| w.collective.is_some()));
    if !collectives {
        return Vec::new();
    }
    super::collective::CHANNEL_DEFAULTS
        .iter()
        .map(|d| ParamValue {
            key: d.key.to_string(),
            value: d.value.to_string(),
            unit: d.unit,
            domain: super::Domain::Count {
                lo: 1,
                hi: u64::from(super::collective::MAX_CHANNELS),
            },
            source: d.source,
            default: None,
        })
        .collect()
}

/// Source of a GPU's compute capability.
const CC_SOURCE: &str = "NVIDIA CUDA GPUs table (by the model name where the config gives none)";
/// Source of a PCIe link's generation and width.
const LANES_SOURCE: &str =
    "the config (required: the slot and device; a device model's where the link leaves it out)";

/// The keys a config must or may give that no section declares but a reader looks for in the
/// list: each GPU's compute capability (after its model) and each PCIe link's generation and
/// width (at the end, link by link). Issue #28 item 10.
fn device_rows(doc: &Table, listed: &mut Vec<ParamValue>) {
    use super::Domain;
    for (at, gpu) in instances(doc, "machines[].gpus[]") {
        let (Some(cc), Some(model)) = (
            gpu.get("compute_capability").map(show),
            gpu.get("model").and_then(Value::as_str),
        ) else {
            continue;
        };
        let (major, minor) = super::defaults::compute_capability(model);
        let derived = format!("{major}.{minor}");
        let row = ParamValue {
            key: format!("{at}.compute_capability"),
            default: (derived != cc).then_some(derived),
            value: cc,
            unit: "x.y",
            domain: Domain::Text,
            source: CC_SOURCE,
        };
        let after = listed
            .iter()
            .position(|p| p.key == format!("{at}.model"))
            .map_or(listed.len(), |i| i + 1);
        listed.insert(after, row);
    }
    // A link's width is one of the PCIe widths, not any count up to 32.
    let widths = || vec!["1", "2", "4", "8", "12", "16", "32"];
    for (at, link) in instances(doc, "machines[].links[]") {
        for (key, unit) in [("generation", "gen"), ("width", "lanes")] {
            if let Some(v) = link.get(key) {
                listed.push(ParamValue {
                    key: format!("{at}.{key}"),
                    value: show(v),
                    unit,
                    domain: match key {
                        "width" => Domain::Words(widths),
                        _ => Domain::Count { lo: 1, hi: 6 },
                    },
                    source: LANES_SOURCE,
                    default: None,
                });
            }
        }
    }
}

/// `value` (as the resolved config writes it) in the column's `unit`: a rate the config keeps
/// in bit/s because it is no whole number of Gb/s ("4632000000b/s") is shown in Gb/s
/// ("4.632"), a duration kept in picoseconds ("1500ps") in ns ("1.5"), exactly; anything
/// else as it is.
fn in_unit(value: &str, unit: &str) -> String {
    let exact = |n: &str, places: usize| -> Option<String> {
        let n: u128 = n.parse().ok()?;
        let scale = 10u128.pow(places as u32);
        let frac = format!("{:0places$}", n % scale);
        let frac = frac.trim_end_matches('0');
        Some(if frac.is_empty() {
            format!("{}", n / scale)
        } else {
            format!("{}.{frac}", n / scale)
        })
    };
    let converted = match unit {
        "Gb/s" => value.strip_suffix("b/s").and_then(|n| exact(n, 9)),
        "ns" => value.strip_suffix("ps").and_then(|n| exact(n, 3)),
        _ => None,
    };
    converted.unwrap_or_else(|| value.to_string())
}

/// The source of a value that its socket's CPU family set (`machines[0].socket_links[0].
/// rate_gbps` on a machine whose socket names one), from the family's table; None for a key
/// no family sets or a socket without a family.
fn family_source(doc: &Table, key: &str) -> Option<&'static str> {
    use crate::config::choice::Choice;
    use crate::topology::CpuFamily;
    let (at, last) = key.rsplit_once('.')?;
    let (machine, part) = at.split_once('.')?;
    let m = table_at(doc, machine)?;
    let t = table_at(m, part)?;
    let of_socket = |name: &str| {
        m.get("sockets")?
            .as_array()?
            .iter()
            .filter_map(|s| s.as_table())
            .find(|s| s.get("name").and_then(|n| n.as_str()) == Some(name))
            .and_then(|s| s.get("cpu_family")?.as_str())
            .and_then(CpuFamily::from_word)
            .and_then(CpuFamily::defaults)
    };
    let name = |k: &str| t.get(k).and_then(|v| v.as_str());
    let f = if part.starts_with("sockets[") {
        of_socket(name("name")?)?
    } else if part.starts_with("socket_links[") {
        of_socket(name("a")?).or_else(|| of_socket(name("b")?))?
    } else if part.starts_with("root_complexes[") {
        of_socket(name("socket")?)?
    } else {
        return None;
    };
    Some(match (part.split('[').next()?, last) {
        ("sockets", "dram_rate_gbps") => f.dram_rate.source,
        ("sockets", "dram_efficiency_pct") => f.dram_efficiency_pct.source,
        ("socket_links", "rate_gbps") => f.socket_link_rate.source,
        ("socket_links", "p2p_read" | "p2p_write") => f.socket_p2p.source,
        ("socket_links", "p2p_read_rate_gbps" | "p2p_write_rate_gbps") => f.socket_p2p_rate.source,
        ("root_complexes", "p2p_read_rate_gbps") => f.rc_p2p_read_rate.source,
        ("root_complexes", "p2p_write_rate_gbps") => f.rc_p2p_write_rate.source,
        _ => return None,
    })
}

/// The table at a concrete path such as `machines[0]` or `sockets[1]` in `doc`.
fn table_at<'a>(doc: &'a Table, path: &str) -> Option<&'a Table> {
    let mut t = doc;
    for seg in path.split('.') {
        let (name, idx) = match seg.split_once('[') {
            Some((n, i)) => (n, Some(i.trim_end_matches(']').parse::<usize>().ok()?)),
            None => (seg, None),
        };
        let next = t.get(name)?;
        t = match idx {
            Some(i) => next.as_array()?.get(i)?.as_table()?,
            None => next.as_table()?,
        };
    }
    Some(t)
}

/// The list as aligned text, with a count of the estimates at the end. Values and defaults
/// are shown in the unit column's unit.
pub fn render(params: &[ParamValue]) -> String {
    let shown: Vec<String> = params.iter().map(|p| in_unit(&p.value, p.unit)).collect();
    let w = |f: fn(&ParamValue) -> usize| params.iter().map(f).max().unwrap_or(0);
    let (wk, wv, wu) = (
        w(|p| p.key.len()),
        shown.iter().map(|v| v.len()).max().unwrap_or(0),
        w(|p| p.unit.len()),
    );
    let mut s = format!(
        "{:<wk$}  {:<wv$}  {:<wu$}  source\n",
        "parameter", "value", "unit"
    );
    for (p, value) in params.iter().zip(&shown) {
        let source = match &p.default {
            Some(d) => format!("the config (default {}: {})", in_unit(d, p.unit), p.source),
            None => p.source.to_string(),
        };
        s.push_str(&format!(
            "{:<wk$}  {:<wv$}  {:<wu$}  {source}\n",
            p.key, value, p.unit
        ));
    }
    let est = params.iter().filter(|p| p.is_estimate()).count();
    s.push_str(&format!(
        "{} parameters, {est} of them estimates (no measurement pins them: the ones to vary \
         before trusting a conclusion)\n",
        params.len()
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{DEFAULT_TOML, parse};

    #[test]
    fn every_parameter_of_the_default_machine_is_listed_with_its_source() {
        let cfg = parse(DEFAULT_TOML, "default").unwrap();
        let l = list(&cfg);
        let nic = l
            .iter()
            .find(|p| p.key == "machines[0].nics[0].read_window")
            .expect("the NIC's read window");
        assert_eq!((nic.value.as_str(), nic.unit), ("128", "count"));
        assert!(nic.is_estimate());
        let d9 = l
            .iter()
            .find(|p| p.key == "machines[0].cpu.pageable_d2h_latency_ns")
            .unwrap();
        assert_eq!(d9.source, "row D9");
        let it = l.iter().find(|p| p.key == "sim.iterations").unwrap();
        assert_eq!(
            (it.value.as_str(), it.default.as_deref()),
            ("60", Some("100"))
        );
        // Four GPUs, each with every GPU parameter and its compute capability.
        let gpu_keys = l
            .iter()
            .filter(|p| p.key.starts_with("machines[0].gpus[3]."))
            .count();
        assert_eq!(gpu_keys, crate::config::raw::RawGpu::PARAMS.len() + 1);
        let cc = l
            .iter()
            .position(|p| p.key == "machines[0].gpus[3].compute_capability")
            .unwrap();
        assert_eq!(l[cc - 1].key, "machines[0].gpus[3].model");
        assert_eq!(
            (l[cc].value.as_str(), l[cc].default.as_deref()),
            ("9.0", None)
        );
        // Every PCIe link's generation and width, at the end.
        let last = &l[l.len() - 2..];
        assert!(last[0].key.ends_with(".generation") && last[1].key.ends_with(".width"));
        assert_eq!((last[0].unit, last[1].unit), ("gen", "lanes"));
        assert!(render(&l).lines().last().unwrap().contains("estimates"));
    }

    /// Issue #28 item 11: `params` printed `4632000000b/s` in a Gb/s column. Every value and
    /// default of the default config reads as a number in its column's unit.
    #[test]
    fn values_are_shown_in_their_column_unit() {
        let cfg = parse(DEFAULT_TOML, "default").unwrap();
        let text = render(&list(&cfg));
        let row = |key: &str| {
            text.lines()
                .find(|l| l.starts_with(&format!("{key} ")))
                .unwrap_or_else(|| panic!("{key}"))
                .split_whitespace()
                .take(3)
                .map(String::from)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            row("machines[0].gpus[0].gdrcopy_read_gbps")[1..],
            ["4.632", "Gb/s"]
        );
        assert_eq!(
            row("machines[0].cpu.pageable_h2d_gbps")[1..],
            ["708.8", "Gb/s"]
        );
        for l in text
            .lines()
            .filter(|l| l.contains(" Gb/s ") || l.contains(" ns "))
        {
            let value = l.split_whitespace().nth(1).unwrap();
            assert!(value.parse::<f64>().is_ok(), "{l}");
            assert!(
                !l.contains("b/s:") && !l.contains("ps:"),
                "default in another unit: {l}"
            );
        }
        assert_eq!(in_unit("1500ps", "ns"), "1.5");
        assert_eq!(in_unit("7ps", "ns"), "0.007");
        assert_eq!(in_unit("200", "Gb/s"), "200");
        assert_eq!(in_unit("auto", "word"), "auto");
    }

    /// A socket's CPU family sets the caps its keys leave out, and the list gives each the
    /// family's source; a value the config sets keeps the key's own.
    #[test]
    fn a_familys_values_carry_the_familys_sources() {
        let text = DEFAULT_TOML
            .replace("\"sapphire-rapids\"", "\"icelake-sp\"")
            .replacen("rate_gbps = \"128GB/s\"", "", 1);
        let l = list(&parse(&text, "icx").unwrap());
        let get = |k: &str| {
            l.iter()
                .find(|p| p.key == k)
                .unwrap_or_else(|| panic!("{k}"))
        };
        let cap = get("machines[0].socket_links[0].p2p_write_rate_gbps");
        assert_eq!(cap.value, "80");
        assert!(cap.source.starts_with("row P11"), "{}", cap.source);
        let rate = get("machines[0].socket_links[0].rate_gbps");
        assert_eq!(rate.value, "537600000000b/s"); // 67.2 GB/s
        assert!(rate.source.starts_with("datasheet"), "{}", rate.source);
        let rc = get("machines[0].root_complexes[0].p2p_read_rate_gbps");
        assert!(rc.source.contains("C5"), "{}", rc.source);
        assert_eq!(get("machines[0].sockets[0].cpu_family").value, "icelake-sp");
        // The config's own DRAM rate (300 GB/s, not the family's 204.8) keeps its key's source.
        let dram = get("machines[0].sockets[0].dram_rate_gbps");
        assert_eq!(dram.value, "2400");
        assert!(dram.default.is_some());
    }
}

//! Machine presets: whole machines with cited parameters, built into the binary
//! (`configs/presets/*.toml`), that a config names instead of spelling a machine out.
//!
//! ```toml
//! [[machines]]
//! name = "my-dgx"            # optional: the preset's own name otherwise
//! preset = "dgx-h100"
//!
//! [machines.cpu]
//! post_ns = 120              # one key of a sub-table: the others stay the preset's
//!
//! [[machines.nics]]
//! name = "nic3"              # an entry of the preset's, by name: only wire_rate_gbps changes
//! wire_rate_gbps = 200
//! ```
//!
//! The machine starts as the preset's and every key the user writes in that machine table
//! overrides it: scalars replace, sub-tables (`cpu`, `registration`, `pcie`) merge key by key,
//! arrays of tables merge entry by entry ([`ENTRIES`]: by `name`; `links` by `up` and `down`;
//! `socket_links` and `nvlinks` by `a` and `b` in either order), an entry naming none of the
//! preset's is added after them. A `[[hosts]]` entry may say `preset = "NAME"` instead of
//! `machine`: a machine of that preset, named after it, added once.
//!
//! The merge runs on the TOML value tree before deserialisation ([`expand`]), so the loader
//! after it is the one every config goes through: an override's error names its key as any
//! other (`machines[0].cpu.post_ns`, entries counted in the merged machine, the preset's first,
//! as `gdrsim params` counts them), and the resolved `config.toml` of a run spells the whole
//! machine out, reproducible without the presets.

use toml::{Table, Value};

use super::ConfigError;

/// One built-in preset.
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    /// The name a config gives (`preset = "dgx-h100"`); also its machine's name.
    pub name: &'static str,
    /// One line: what the machine is.
    pub about: &'static str,
    /// The preset's file: one `[[machines]]` table and nothing else, with its sources.
    pub toml: &'static str,
}

/// Every built-in preset, in the order `gdrsim presets` lists them.
pub const PRESETS: [Preset; 6] = [
    Preset {
        name: "dgx-h100",
        about: "DGX H100: 2 x Xeon 8480C, 8 H100 SXM5 (NV18, NVSwitch), 8 ConnectX-7 NDR, \
                GPU_i PIX NIC_i under its own Gen5 switch",
        toml: include_str!("../../../../configs/presets/dgx-h100.toml"),
    },
    Preset {
        name: "dgx-a100",
        about: "DGX A100: 2 x EPYC 7742 (NPS4), 8 A100 SXM4 (NV12, NVSwitch), 8 ConnectX-6 \
                HDR, two GPUs PXB two NICs per Gen4 switch complex",
        toml: include_str!("../../../../configs/presets/dgx-a100.toml"),
    },
    Preset {
        name: "hgx-b200",
        about: "HGX B200 board: 2 x Xeon 8570, 8 B200 (NVLink 5, NV18, NVSwitch), 8 \
                ConnectX-7 400G, GPU_i PIX NIC_i under its own Gen5 switch",
        toml: include_str!("../../../../configs/presets/hgx-b200.toml"),
    },
    Preset {
        name: "gh200",
        about: "Grace Hopper GH200 node: Grace (LPDDR5X) and its Hopper GPU joined by \
                NVLink-C2C (450 GB/s each way), 1 ConnectX-7 NDR on a Gen5 x16 root port, \
                GPU-NIC NODE",
        toml: include_str!("../../../../configs/presets/gh200.toml"),
    },
    Preset {
        name: "pcie-gen5-2s",
        about: "2-socket PCIe Gen5 server: 8 H100 PCIe + 4 ConnectX-7 NDR, two GPUs and a \
                NIC per Gen5 switch, two switches per socket (PIX, NODE, SYS)",
        toml: include_str!("../../../../configs/presets/pcie-gen5-2s.toml"),
    },
    Preset {
        name: "workstation",
        about: "Client-CPU workstation: RTX 6000 Ada + ConnectX-5 on CPU root ports, P2P \
                writes only (row B7): GPUDirect falls back to staging",
        toml: include_str!("../../../../configs/presets/workstation.toml"),
    },
];

/// The preset of that name.
pub fn find(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// The presets' names, comma-separated, as error messages list them.
pub fn names() -> String {
    PRESETS.map(|p| p.name).join(", ")
}

impl Preset {
    /// The file name errors in the preset itself give (none do: a test loads every preset).
    fn file(&self) -> String {
        format!("configs/presets/{}.toml (embedded)", self.name)
    }

    /// The preset's machine table.
    pub fn machine(&self) -> Result<Table, ConfigError> {
        let bad = |found: String| {
            ConfigError::new(
                &self.file(),
                "machines",
                "exactly one [[machines]] table and nothing else",
                found,
            )
        };
        let mut doc: Table = self
            .toml
            .parse()
            .map_err(|e: toml::de::Error| bad(format!("a syntax error: {}", e.message())))?;
        match (doc.remove("machines"), doc.is_empty()) {
            (Some(Value::Array(mut a)), true) if a.len() == 1 => match a.pop() {
                Some(Value::Table(t)) => Ok(t),
                _ => Err(bad("an entry that is not a table".into())),
            },
            _ => Err(bad("another document".into())),
        }
    }
}

/// `gdrsim presets`: one line per preset (name, what it is), then how to use one.
pub fn list() -> String {
    let w = PRESETS.iter().map(|p| p.name.len()).max().unwrap_or(0);
    let mut s = String::new();
    for p in &PRESETS {
        s.push_str(&format!("{:<w$}  {}\n", p.name, p.about));
    }
    s.push_str(
        "\nIn a config: [[machines]] preset = \"NAME\" (then override any key of it), or \
         [[hosts]] preset = \"NAME\" instead of machine = ...; `gdrsim presets NAME` prints one.\n\n",
    );
    s.push_str(&super::device::list());
    s.push_str(
        "\nA model sets its device's keys that the entry does not write, and the generation and \
         width of the link down to it where the link leaves them out; `gdrsim presets ID` \
         prints its figures with their sources.\n\n",
    );
    s.push_str(&super::network_preset::list());
    s
}

/// `gdrsim presets NAME`: the preset's file as it is built in, or a device model's figures
/// with their sources.
pub fn show(name: &str) -> Result<String, ConfigError> {
    find(name)
        .map(|p| p.toml.to_string())
        .or_else(|| super::device::show(name))
        .or_else(|| super::network_preset::show(name))
        .ok_or_else(|| {
            ConfigError::new(
                "command line",
                "NAME",
                format!(
                    "the name of a built-in preset ({}), device model ({}, {}) or network \
                     preset ({})",
                    names(),
                    super::device::gpu_ids(),
                    super::device::nic_ids(),
                    super::network_preset::names()
                ),
                format!("{name:?}"),
            )
        })
}

/// The arrays of tables of a machine, each with the keys that say which entry is which.
pub const ENTRIES: [(&str, &[&str]); 10] = [
    ("sockets", &["name"]),
    ("socket_links", &["a", "b"]),
    ("root_complexes", &["name"]),
    ("switches", &["name"]),
    ("gpus", &["name"]),
    ("nics", &["name"]),
    ("links", &["up", "down"]),
    ("nvswitches", &["name"]),
    ("nvlinks", &["a", "b"]),
    ("c2c_links", &["gpu"]),
];

/// Whether an entry's `a` and `b` name an unordered pair (a socket link or an NVLink bond joins
/// its two ends whichever is written first; a PCIe link's `up` and `down` are roles).
fn unordered(ids: &[&str]) -> bool {
    ids == ["a", "b"]
}

/// The config text with its presets applied, or None where it names none (then the text is
/// used as it is). `text` is known to be TOML; `file` names it in errors.
pub fn expand(text: &str, file: &str) -> Result<Option<String>, ConfigError> {
    let Ok(mut doc) = text.parse::<Table>() else {
        return Ok(None);
    };
    if !expand_doc(&mut doc, file)? {
        return Ok(None);
    }
    toml::to_string(&doc).map(Some).map_err(|e| {
        ConfigError::new(
            file,
            "",
            "a config whose presets can be applied",
            format!("a document that cannot be written back ({e})"),
        )
    })
}

/// The preset a `preset` key names, or the error naming `key`.
fn named(v: &Value, key: &str, file: &str) -> Result<&'static Preset, ConfigError> {
    let expected = || {
        format!(
            "the name of a built-in preset ({}; `gdrsim presets` lists them)",
            names()
        )
    };
    match v {
        Value::String(s) => {
            find(s).ok_or_else(|| ConfigError::new(file, key, expected(), format!("{s:?}")))
        }
        other => Err(ConfigError::new(
            file,
            key,
            expected(),
            super::describe(other),
        )),
    }
}

/// Applies every `preset` key of `doc` in place; whether there was one.
fn expand_doc(doc: &mut Table, file: &str) -> Result<bool, ConfigError> {
    // [network] preset = "NAME": the fabric's keys the user leaves out.
    let mut used = super::network_preset::apply(doc, file)?;
    if let Some(Value::Array(machines)) = doc.get_mut("machines") {
        for (i, m) in machines.iter_mut().enumerate() {
            let Value::Table(t) = m else { continue };
            let preset = t
                .remove("preset")
                .map(|p| named(&p, &format!("machines[{i}].preset"), file))
                .transpose()?;
            let base = preset.map(Preset::machine).transpose()?;
            // GPU and NIC models first, on the user's entries: the model's keys then change
            // a machine preset's device, the user's own over them.
            let models = super::device::apply(t, &format!("machines[{i}]"), file, base.as_ref())?;
            used |= !models.is_empty();
            let Some(mut machine) = base else {
                continue;
            };
            used = true;
            let user_links = link_ends(t);
            merge_machine(
                &mut machine,
                std::mem::take(t),
                &format!("machines[{i}]"),
                file,
            )?;
            super::device::fit_preset_links(&mut machine, &models, &user_links);
            *t = machine;
        }
    }
    // [[hosts]] preset = "NAME": the machine NAME of that preset, added once.
    let mut added: Vec<&'static Preset> = Vec::new();
    let taken: Vec<String> = match doc.get("machines") {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|m| m.get("name")?.as_str().map(String::from))
            .collect(),
        _ => Vec::new(),
    };
    if let Some(Value::Array(hosts)) = doc.get_mut("hosts") {
        for (i, h) in hosts.iter_mut().enumerate() {
            let Value::Table(t) = h else { continue };
            let Some(p) = t.remove("preset") else {
                continue;
            };
            used = true;
            let key = format!("hosts[{i}].preset");
            let preset = named(&p, &key, file)?;
            if let Some(m) = t.get("machine") {
                return Err(ConfigError::new(
                    file,
                    key,
                    "either `machine` (a [[machines]] entry) or `preset` (a built-in machine), \
                     not both",
                    format!("both (machine = {})", super::describe(m)),
                ));
            }
            if taken.iter().any(|n| n == preset.name) {
                return Err(ConfigError::new(
                    file,
                    key,
                    format!(
                        "a preset no [[machines]] entry is named after (or machine = {:?} for \
                         that entry)",
                        preset.name
                    ),
                    format!("{:?}, the name of a [[machines]] entry", preset.name),
                ));
            }
            t.insert("machine".into(), Value::String(preset.name.into()));
            if !added.iter().any(|a| a.name == preset.name) {
                added.push(preset);
            }
        }
    }
    if !added.is_empty() {
        let machines = doc
            .entry("machines")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(a) = machines {
            for p in added {
                a.push(Value::Table(p.machine()?));
            }
        }
    }
    if let Some(Value::Array(hosts)) = doc.get_mut("hosts") {
        used |= expand_host_arrays(hosts, file)?;
    }
    Ok(used)
}

/// Host arrays: a `[[hosts]]` entry with `count = N` stands for N hosts named `name0` ..
/// `name{N-1}`, each with the entry's other keys, in its place (so a 128-node study is a few
/// lines). Expanded after presets, so a preset error names the entry as written; later errors
/// index the expanded list. Whether there was one.
fn expand_host_arrays(hosts: &mut Vec<Value>, file: &str) -> Result<bool, ConfigError> {
    if !hosts.iter().any(|h| h.get("count").is_some()) {
        return Ok(false);
    }
    let mut out = Vec::with_capacity(hosts.len());
    for (i, h) in std::mem::take(hosts).into_iter().enumerate() {
        let Value::Table(mut t) = h else {
            out.push(h);
            continue;
        };
        let Some(count) = t.remove("count") else {
            out.push(Value::Table(t));
            continue;
        };
        let max = i64::from(super::limits::MAX_COUNT);
        let n = match count {
            Value::Integer(n) if (1..=max).contains(&n) => n,
            other => {
                return Err(ConfigError::new(
                    file,
                    format!("hosts[{i}].count"),
                    format!("a number of hosts from 1 to {max}"),
                    super::describe(&other),
                ));
            }
        };
        let Some(Value::String(name)) = t.get("name").cloned() else {
            // The host's own checks name the missing or mistyped name.
            out.push(Value::Table(t));
            continue;
        };
        for k in 0..n {
            let mut one = t.clone();
            one.insert("name".into(), Value::String(format!("{name}{k}")));
            out.push(Value::Table(one));
        }
    }
    *hosts = out;
    Ok(true)
}

/// The (up, down) of every link a machine table writes.
fn link_ends(t: &Table) -> Vec<(String, String)> {
    let Some(Value::Array(links)) = t.get("links") else {
        return Vec::new();
    };
    links
        .iter()
        .filter_map(|l| {
            let end = |k: &str| l.get(k).and_then(Value::as_str).map(String::from);
            Some((end("up")?, end("down")?))
        })
        .collect()
}

/// Writes every key of `over` into the machine `base` ([`ENTRIES`] merged entry by entry,
/// sub-tables key by key, anything else replaced); `at` is the machine's key path.
fn merge_machine(base: &mut Table, over: Table, at: &str, file: &str) -> Result<(), ConfigError> {
    for (k, v) in over {
        let ids = ENTRIES.iter().find(|(name, _)| *name == k).map(|e| e.1);
        match (base.get_mut(&k), v, ids) {
            (Some(Value::Array(b)), Value::Array(o), Some(ids))
                if b.iter().all(Value::is_table) && o.iter().all(Value::is_table) =>
            {
                merge_entries(b, o, ids, &format!("{at}.{k}"), file)?;
            }
            (Some(Value::Table(b)), Value::Table(o), _) => merge_table(b, o),
            (_, v, _) => {
                base.insert(k, v);
            }
        }
    }
    Ok(())
}

/// Key by key, tables within tables the same way.
fn merge_table(base: &mut Table, over: Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(Value::Table(b)), Value::Table(o)) => merge_table(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// The identity of an entry: the values of its `ids`, sorted where they are an unordered pair.
fn identity(t: &Table, ids: &[&str]) -> Option<Vec<String>> {
    let mut id = ids
        .iter()
        .map(|k| t.get(*k)?.as_str().map(String::from))
        .collect::<Option<Vec<_>>>()?;
    if unordered(ids) {
        id.sort();
    }
    Some(id)
}

/// Merges the entries `over` (the user's array at `key`) into the preset's `base`.
fn merge_entries(
    base: &mut Vec<Value>,
    over: Vec<Value>,
    ids: &[&str],
    key: &str,
    file: &str,
) -> Result<(), ConfigError> {
    let mut seen: Vec<(Vec<String>, usize)> = Vec::new();
    for (j, e) in over.into_iter().enumerate() {
        let Value::Table(e) = e else { continue };
        let at = format!("{key}[{j}]");
        let Some(id) = identity(&e, ids) else {
            let (k, v) = ids
                .iter()
                .map(|k| (*k, e.get(*k)))
                .find(|(_, v)| v.is_none_or(|v| !v.is_str()))
                .unwrap_or((ids[0], None));
            let what = ids
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(" and ");
            return Err(ConfigError::new(
                file,
                format!("{at}.{k}"),
                format!(
                    "a string (with a preset, {what} say which of its entries to change, or \
                     name a new one)"
                ),
                v.map_or("nothing (the key is missing)".into(), super::describe),
            ));
        };
        let shown = id.join(if ids == ["up", "down"] { " -> " } else { ", " });
        if let Some((_, first)) = seen.iter().find(|(s, _)| *s == id) {
            return Err(ConfigError::new(
                file,
                format!("{at}.{}", ids[0]),
                format!("an entry not given before ({key}[{first}] already changes {shown:?})"),
                format!("{shown:?} again"),
            ));
        }
        seen.push((id.clone(), j));
        match base
            .iter_mut()
            .filter_map(Value::as_table_mut)
            .find(|b| identity(b, ids).as_ref() == Some(&id))
        {
            // The preset's entry keeps its own `a` and `b` (an NVLink bond's `a` is its GPU).
            Some(b) => merge_table(
                b,
                e.into_iter()
                    .filter(|(k, _)| !ids.contains(&k.as_str()))
                    .collect(),
            ),
            None => base.push(Value::Table(e)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Table {
        text.parse().expect("TOML")
    }

    fn machine0(d: &Table) -> &Table {
        d["machines"].as_array().unwrap()[0].as_table().unwrap()
    }

    fn entry<'a>(m: &'a Table, list: &str, name: &str) -> &'a Table {
        m[list]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_table)
            .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
            .unwrap_or_else(|| panic!("{list} {name}"))
    }

    #[test]
    fn every_preset_is_one_machine_named_after_it() {
        for p in &PRESETS {
            let m = p.machine().unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert_eq!(m["name"].as_str(), Some(p.name), "{}", p.name);
            assert!(!p.about.is_empty() && !p.about.contains('\n'));
        }
        // Names are unique and the listing has a line each.
        let l = list();
        for p in &PRESETS {
            assert_eq!(PRESETS.iter().filter(|q| q.name == p.name).count(), 1);
            assert!(l.lines().any(|x| x.starts_with(p.name)), "{l}");
        }
    }

    #[test]
    fn every_file_in_configs_presets_is_built_in() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/presets");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .expect("configs/presets/")
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        files.sort();
        let mut names: Vec<String> = PRESETS.iter().map(|p| p.name.to_string()).collect();
        names.sort();
        assert_eq!(files, names);
    }

    #[test]
    fn overrides_merge_key_by_key_and_entry_by_entry() {
        let mut d = doc(r#"
            [[machines]]
            name = "mine"
            preset = "dgx-h100"
            host_buffer_base = 0x20000000
            [machines.cpu]
            post_ns = 120
            [[machines.gpus]]
            name = "gpu3"
            memory_rate_gbps = "2TB/s"
            [[machines.gpus]]
            name = "gpu8"
            model = "H100 SXM5 80GB"
            [[machines.links]]
            up = "sw3"
            down = "gpu3"
            width = 8
            [[machines.nvlinks]]
            a = "nvswitch"
            b = "gpu5"
            links = 9
            [[machines.socket_links]]
            b = "cpu0"
            a = "cpu1"
            latency_ns = 70
        "#);
        assert!(expand_doc(&mut d, "t.toml").unwrap());
        let m = machine0(&d);
        let preset = find("dgx-h100").unwrap().machine().unwrap();
        assert_eq!(m["name"].as_str(), Some("mine"));
        assert!(m.get("preset").is_none());
        assert_eq!(m["host_buffer_base"].as_integer(), Some(0x2000_0000));
        assert_eq!(m["cpu"]["post_ns"].as_integer(), Some(120));
        // gpu3 keeps its other keys and its place; gpu8 comes after the preset's eight.
        let gpus = m["gpus"].as_array().unwrap();
        assert_eq!(gpus.len(), 9);
        assert_eq!(gpus[3]["name"].as_str(), Some("gpu3"));
        assert_eq!(gpus[3]["memory_rate_gbps"].as_str(), Some("2TB/s"));
        assert_eq!(gpus[3]["model"], preset["gpus"][3]["model"]);
        assert_eq!(gpus[8]["name"].as_str(), Some("gpu8"));
        assert_eq!(entry(m, "gpus", "gpu2"), entry(&preset, "gpus", "gpu2"));
        // The link by (up, down), the bond and the socket link by their ends in either order.
        let links = m["links"].as_array().unwrap();
        assert_eq!(links.len(), preset["links"].as_array().unwrap().len());
        let l = links
            .iter()
            .find(|l| l["up"].as_str() == Some("sw3") && l["down"].as_str() == Some("gpu3"))
            .unwrap();
        assert_eq!(
            (l["width"].as_integer(), l["generation"].as_integer()),
            (Some(8), Some(5))
        );
        let nv = m["nvlinks"].as_array().unwrap();
        assert_eq!(nv.len(), 8);
        assert_eq!(nv[5]["a"].as_str(), Some("gpu5"));
        assert_eq!(nv[5]["links"].as_integer(), Some(9));
        let sl = m["socket_links"].as_array().unwrap();
        assert_eq!(sl.len(), 1);
        assert_eq!(sl[0]["latency_ns"].as_integer(), Some(70));
        assert_eq!(
            sl[0]["a"].as_str(),
            Some("cpu0"),
            "the preset's entry, changed"
        );
        // Everything not written is the preset's.
        for k in [
            "sockets",
            "root_complexes",
            "switches",
            "nics",
            "nvswitches",
            "pcie",
        ] {
            assert_eq!(m.get(k), preset.get(k), "{k}");
        }
    }

    #[test]
    fn a_machine_without_a_name_takes_the_presets() {
        let mut d = doc("[[machines]]\npreset = \"gh200\"\n");
        expand_doc(&mut d, "t.toml").unwrap();
        assert_eq!(machine0(&d), &find("gh200").unwrap().machine().unwrap());
    }

    /// `count = N` stands for N hosts name0..name{N-1} in the entry's place, each with its
    /// other keys (its preset's machine included); a count outside 1..=MAX_COUNT is refused
    /// naming the entry as written.
    #[test]
    fn host_arrays_expand_in_place_with_numbered_names() {
        let mut d = doc(
            "[[hosts]]\nname = \"x\"\nmachine = \"m\"\n[[hosts]]\nname = \"node\"\ncount = \
             3\npreset = \"gh200\"\n[[hosts]]\nname = \"y\"\nmachine = \"m\"\n",
        );
        assert!(expand_doc(&mut d, "t.toml").unwrap());
        let hosts = d["hosts"].as_array().unwrap();
        let names: Vec<&str> = hosts.iter().map(|h| h["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["x", "node0", "node1", "node2", "y"]);
        for h in &hosts[1..4] {
            assert_eq!(h["machine"].as_str(), Some("gh200"));
            assert!(h.get("count").is_none());
        }
        for bad in ["0", "-1", "\"8\"", "100001"] {
            let mut d = doc(&format!(
                "[[hosts]]\nname = \"x\"\nmachine = \"m\"\n[[hosts]]\nname = \"n\"\n\
                 machine = \"m\"\ncount = {bad}\n"
            ));
            let e = expand_doc(&mut d, "t.toml").unwrap_err();
            assert_eq!(e.key, "hosts[1].count", "{bad}");
        }
    }

    #[test]
    fn hosts_may_name_a_preset_and_get_its_machine_once() {
        let mut d = doc(
            "[[hosts]]\nname = \"a\"\npreset = \"gh200\"\n[[hosts]]\nname = \"b\"\npreset = \
             \"gh200\"\n[[hosts]]\nname = \"c\"\npreset = \"workstation\"\n",
        );
        assert!(expand_doc(&mut d, "t.toml").unwrap());
        let machines = d["machines"].as_array().unwrap();
        assert_eq!(machines.len(), 2);
        assert_eq!(machines[0]["name"].as_str(), Some("gh200"));
        assert_eq!(machines[1]["name"].as_str(), Some("workstation"));
        for (h, m) in d["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .zip(["gh200", "gh200", "workstation"])
        {
            assert_eq!(h["machine"].as_str(), Some(m));
            assert!(h.get("preset").is_none());
        }
    }

    #[test]
    fn bad_presets_and_overrides_name_their_key() {
        let err = |text: &str| expand_doc(&mut doc(text), "t.toml").unwrap_err();
        let e = err("[[machines]]\nname = \"m\"\npreset = \"dgx-h200\"\n");
        assert_eq!(e.key, "machines[0].preset");
        assert!(e.expected.contains("dgx-h100, dgx-a100"), "{e}");
        assert_eq!(e.found, "\"dgx-h200\"");
        let e = err("[[machines]]\npreset = 5\n");
        assert_eq!(
            (e.key.as_str(), e.found.as_str()),
            ("machines[0].preset", "integer 5")
        );
        let e = err("[[machines]]\npreset = \"gh200\"\n[[machines.gpus]]\nmodel = \"x\"\n");
        assert_eq!(e.key, "machines[0].gpus[0].name");
        assert_eq!(e.found, "nothing (the key is missing)");
        let e =
            err("[[machines]]\npreset = \"gh200\"\n[[machines.links]]\nup = \"rc0\"\ndown = 3\n");
        assert_eq!(
            (e.key.as_str(), e.found.as_str()),
            ("machines[0].links[0].down", "integer 3")
        );
        let e = err(
            "[[machines]]\npreset = \"gh200\"\n[[machines.nics]]\nname = \"nic0\"\n\
             [[machines.nics]]\nname = \"nic0\"\n",
        );
        assert_eq!(e.key, "machines[0].nics[1].name");
        assert!(e.expected.contains("machines[0].nics[0] already"), "{e}");
        let e = err("[[hosts]]\nname = \"a\"\nmachine = \"m\"\npreset = \"gh200\"\n");
        assert_eq!(e.key, "hosts[0].preset");
        let e =
            err("[[machines]]\nname = \"gh200\"\n[[hosts]]\nname = \"a\"\npreset = \"gh200\"\n");
        assert_eq!(e.key, "hosts[0].preset");
        assert!(show("nope").is_err());
        assert_eq!(show("gh200").unwrap(), find("gh200").unwrap().toml);
    }

    #[test]
    fn a_config_without_presets_is_left_as_it_is() {
        assert_eq!(expand(super::super::DEFAULT_TOML, "d").unwrap(), None);
    }
}

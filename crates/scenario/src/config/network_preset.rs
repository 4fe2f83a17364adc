//! Network presets: whole fabrics with cited numbers, built into the binary, that a config's
//! `[network]` names instead of spelling the generator's keys out.
//!
//! ```toml
//! [network]
//! preset = "superpod-h100-4su"   # fills fabric, hosts_per_unit, units, spines_per_unit, ...
//! routing = "adaptive"           # a key the user writes overrides the preset's
//! ```
//!
//! The preset's keys are inserted into `[network]` where the user's table does not have them,
//! before the table is read (as machine presets are, [`super::preset`]), so a preset's key is
//! checked, refused or reported as any other, and the resolved `config.toml` of a run spells
//! the whole fabric out, reproducible without the presets. Every key carries its source, as the
//! parameters' defaults do; `estimate` marks a number chosen for the study, not documented.

use toml::{Table, Value};

use super::ConfigError;

/// One key of a network preset: its name, its value as TOML, and where the value comes from.
#[derive(Clone, Copy, Debug)]
pub struct PresetKey {
    /// The `[network]` key.
    pub key: &'static str,
    /// Its value, a TOML literal (`"rail-optimized"`, `32`).
    pub value: &'static str,
    /// The source of the value.
    pub source: &'static str,
}

/// One built-in network preset.
#[derive(Clone, Copy, Debug)]
pub struct NetworkPreset {
    /// The name a config gives (`[network] preset = "superpod-h100-su"`).
    pub name: &'static str,
    /// One line: what the fabric is, and the hosts it expects.
    pub about: &'static str,
    /// The keys it fills, in order.
    pub keys: &'static [PresetKey],
}

/// A figure of NVIDIA's DGX SuperPOD H100 reference architecture (RA-11333-001), its compute
/// fabric.
macro_rules! ra {
    ($what:literal) => {
        concat!(
            "NVIDIA DGX SuperPOD H100 reference architecture (RA-11333-001): ",
            $what
        )
    };
}
const QM9700: &str = "NVIDIA QM9700 datasheet (64 NDR 400 Gb/s ports)";

const fn k(key: &'static str, value: &'static str, source: &'static str) -> PresetKey {
    PresetKey { key, value, source }
}

/// The rail-optimized compute fabric of `units` DGX SuperPOD H100 scalable units.
macro_rules! superpod {
    ($units:literal) => {
        &[
            k(
                "fabric",
                "\"rail-optimized\"",
                ra!("rail-optimized compute fabric"),
            ),
            k("hosts_per_unit", "32", ra!("32 DGX H100 a scalable unit")),
            k("units", $units, "setting (the preset's name)"),
            k(
                "spines_per_unit",
                "4",
                ra!("16 spines for 4 units (32 rail leaves + 16 spines)"),
            ),
            k("leaf_radix", "64", QM9700),
            k("spine_radix", "64", QM9700),
            k(
                "oversubscription",
                "1",
                ra!("non-blocking (full bisection)"),
            ),
            k("spine_port_gbps", "400", QM9700),
        ]
    };
}

/// Every built-in network preset, in the order `gdrsim presets` lists them.
pub const NETWORK_PRESETS: [NetworkPreset; 4] = [
    NetworkPreset {
        name: "superpod-h100-su",
        about: "one DGX SuperPOD H100 scalable unit: 32 DGX H100 (8 rails), 8 QM9700 rail \
                leaves, 4 spines, non-blocking (32 hosts of 8 NICs)",
        keys: superpod!("1"),
    },
    NetworkPreset {
        name: "superpod-h100-4su",
        about: "four DGX SuperPOD H100 scalable units: 128 DGX H100, 32 QM9700 rail leaves, \
                16 spines (48 switches), non-blocking (128 hosts of 8 NICs)",
        keys: superpod!("4"),
    },
    NetworkPreset {
        name: "leaf-spine-64-hgx-2to1",
        about: "a 2:1 oversubscribed leaf-spine of 64 HGX H100 nodes: 4 nodes (32 NDR ports) \
                a 64-port leaf, 16 uplinks each over 4 spines (64 hosts of 8 NICs)",
        keys: &[
            k(
                "fabric",
                "\"leaf-spine\"",
                "issue #23's study (a 2:1 leaf-spine)",
            ),
            k(
                "hosts_per_leaf",
                "4",
                "estimate (a rack of 4 HGX H100, 32 ports)",
            ),
            k(
                "spines",
                "4",
                "estimate (each leaf's 16 uplinks, 4 to a spine)",
            ),
            k("oversubscription", "2", "issue #23's study (2:1)"),
            k("leaf_radix", "64", QM9700),
            k("spine_port_gbps", "400", QM9700),
        ],
    },
    NetworkPreset {
        name: "roce-2tier",
        about: "a generic non-blocking 2-tier RoCE fabric of 64 x 400GbE switches: 4 servers \
                of 8 NICs a leaf, 32 uplinks over 8 spines, ECMP",
        keys: &[
            k(
                "fabric",
                "\"leaf-spine\"",
                "estimate (a 2-tier Clos, as RoCE clusters build)",
            ),
            k(
                "hosts_per_leaf",
                "4",
                "estimate (4 servers of 8 NICs: 32 host ports)",
            ),
            k("spines", "8", "estimate (32 uplinks a leaf, 4 to a spine)"),
            k("oversubscription", "1", "estimate (non-blocking)"),
            k(
                "leaf_radix",
                "64",
                "Broadcom Tomahawk 4 (BCM56990): 25.6 Tb/s, 64 x 400GbE",
            ),
            k(
                "spine_radix",
                "64",
                "Broadcom Tomahawk 4 (BCM56990): 25.6 Tb/s, 64 x 400GbE",
            ),
            k("spine_port_gbps", "400", "400GbE"),
            k(
                "routing",
                "\"ecmp\"",
                "setting (static ECMP, RoCE's default)",
            ),
        ],
    },
];

/// The network preset called `name`.
pub fn find(name: &str) -> Option<&'static NetworkPreset> {
    NETWORK_PRESETS.iter().find(|p| p.name == name)
}

/// The presets' names, comma-separated, as error messages list them.
pub fn names() -> String {
    NETWORK_PRESETS.map(|p| p.name).join(", ")
}

impl PresetKey {
    /// The value as TOML (every value of every preset parses: a test reads them all).
    pub fn toml(&self) -> Value {
        format!("v = {}", self.value)
            .parse::<Table>()
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| Value::String(self.value.to_string()))
    }
}

/// Fills `[network]` from the preset its `preset` key names, where the user's table leaves a
/// key out; whether there was one. The error names `network.preset` and the presets.
pub(super) fn apply(doc: &mut Table, file: &str) -> Result<bool, ConfigError> {
    let Some(Value::Table(net)) = doc.get_mut("network") else {
        return Ok(false);
    };
    let Some(v) = net.remove("preset") else {
        return Ok(false);
    };
    let expected = || {
        format!(
            "the name of a built-in network preset ({}; `gdrsim presets` lists them)",
            names()
        )
    };
    let preset = match &v {
        Value::String(s) => find(s)
            .ok_or_else(|| ConfigError::new(file, "network.preset", expected(), format!("{s:?}"))),
        other => Err(ConfigError::new(
            file,
            "network.preset",
            expected(),
            super::describe(other),
        )),
    }?;
    for key in preset.keys {
        if !net.contains_key(key.key) {
            net.insert(key.key.to_string(), key.toml());
        }
    }
    Ok(true)
}

/// The presets, one line each, for `gdrsim presets`.
pub fn list() -> String {
    let w = NETWORK_PRESETS
        .iter()
        .map(|p| p.name.len())
        .max()
        .unwrap_or(0);
    let mut s = String::new();
    for p in &NETWORK_PRESETS {
        s.push_str(&format!("{:<w$}  {}\n", p.name, p.about));
    }
    s.push_str(
        "\nIn a config: [network] preset = \"NAME\" fills the fabric's keys (any key written \
         beside it overrides the preset's); `gdrsim presets NAME` prints one with its sources.\n",
    );
    s
}

/// `gdrsim presets NAME` for a network preset: its keys as a `[network]` table, each with its
/// source.
pub fn show(name: &str) -> Option<String> {
    let p = find(name)?;
    let mut s = format!("# {}: {}\n[network]\n", p.name, p.about);
    let w = p
        .keys
        .iter()
        .map(|k| k.key.len() + k.value.len())
        .max()
        .unwrap_or(0)
        + 3;
    for k in p.keys {
        let line = format!("{} = {}", k.key, k.value);
        s.push_str(&format!("{line:<w$}  # {}\n", k.source));
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value is TOML, every key has a source, no key twice, names unique.
    #[test]
    fn every_preset_key_parses_and_names_its_source() {
        for (i, p) in NETWORK_PRESETS.iter().enumerate() {
            assert!(NETWORK_PRESETS[..i].iter().all(|q| q.name != p.name));
            for (j, k) in p.keys.iter().enumerate() {
                assert!(!k.source.trim().is_empty(), "{}.{}", p.name, k.key);
                let parsed = format!("v = {}", k.value).parse::<Table>();
                assert!(parsed.is_ok(), "{}.{} = {}", p.name, k.key, k.value);
                assert!(p.keys[..j].iter().all(|q| q.key != k.key), "{}", k.key);
            }
        }
    }

    /// The user's keys stay; the preset fills the rest; an unknown name is refused naming
    /// the key.
    #[test]
    fn the_preset_fills_what_the_user_leaves_out() {
        let mut doc: Table = "[network]\npreset = \"superpod-h100-su\"\nunits = 2\n"
            .parse()
            .unwrap();
        assert!(apply(&mut doc, "t.toml").unwrap());
        let net = doc["network"].as_table().unwrap();
        assert_eq!(net["units"].as_integer(), Some(2));
        assert_eq!(net["hosts_per_unit"].as_integer(), Some(32));
        assert_eq!(net["fabric"].as_str(), Some("rail-optimized"));
        assert!(!net.contains_key("preset"));
        let mut bad: Table = "[network]\npreset = \"nope\"\n".parse().unwrap();
        let e = apply(&mut bad, "t.toml").unwrap_err();
        assert_eq!(e.key, "network.preset");
        assert!(e.expected.contains("superpod-h100-4su"), "{e}");
    }
}

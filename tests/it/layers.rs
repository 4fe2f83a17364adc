//! The layers the crate split cannot express. The workspace's crates keep the lower layers
//! (`crates/model` < `crates/scenario` < `crates/report`: the compiler refuses an upward import
//! there, and this test checks their manifests name no crate above them). Inside the `gdrsim`
//! crate, the studies, the tools and the commands are modules side by side, so this test reads
//! their sources: `study` and `gpu_copies` import no tool; no module but the binary's
//! `commands` imports `app`; and the modules' imports form no cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// Every `.rs` file under `dir` (recursively), read.
fn sources(dir: &Path, out: &mut String) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push_str(&fs::read_to_string(&p).unwrap());
        }
    }
}

/// The top-level modules of the gdrsim crate (`src/X.rs` or `src/X/`), the binary's `commands`
/// among them, with the source text of each.
fn modules(root: &Path) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for e in fs::read_dir(root.join("src")).unwrap().flatten() {
        let p = e.path();
        let name = p.file_stem().unwrap().to_str().unwrap().to_string();
        if name == "lib" || name == "main" {
            continue;
        }
        let mut text = String::new();
        if p.is_dir() {
            sources(&p, &mut text);
        } else {
            text = fs::read_to_string(&p).unwrap();
        }
        m.insert(name, text);
    }
    m
}

/// The modules of `names` that `text` names by path (`crate::X` or, from the binary,
/// `gdrsim::X`), comments included: a doc link is an edge a reader follows too.
fn imports(text: &str, names: &BTreeSet<String>, own: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for prefix in ["crate::", "gdrsim::"] {
        for (i, _) in text.match_indices(prefix) {
            let rest = &text[i + prefix.len()..];
            let word: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if names.contains(&word) && word != own {
                found.insert(word);
            }
        }
    }
    found
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mods = modules(root);
    let names: BTreeSet<String> = mods.keys().cloned().collect();
    assert!(
        ["app", "study", "commands", "perftest", "gpu_copies"]
            .iter()
            .all(|m| names.contains(*m)),
        "the modules this test names moved: {names:?}"
    );
    mods.iter()
        .map(|(m, text)| (m.clone(), imports(text, &names, m)))
        .collect()
}

/// A cycle in `g`, if any, as the modules along it.
fn cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(m) {
            Some(2) => return None,
            Some(1) => {
                let at = path.iter().position(|p| p == m).unwrap();
                let mut c = path[at..].to_vec();
                c.push(m.to_string());
                return Some(c);
            }
            _ => {}
        }
        state.insert(m.to_string(), 1);
        path.push(m.to_string());
        for n in g.get(m).into_iter().flatten() {
            if let Some(c) = visit(n, g, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(m.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    g.keys()
        .find_map(|m| visit(m, g, &mut state, &mut Vec::new()))
}

#[test]
fn studies_import_no_tool_and_only_the_commands_import_app() {
    let g = graph();
    for base in ["study", "gpu_copies"] {
        assert!(
            g[base].is_empty(),
            "{base} is below every tool and command but imports {:?}",
            g[base]
        );
    }
    let up: Vec<&String> = g
        .iter()
        .filter(|(m, deps)| *m != "commands" && deps.contains("app"))
        .map(|(m, _)| m)
        .collect();
    assert!(up.is_empty(), "only the commands may import app: {up:?}");
}

#[test]
fn the_modules_of_the_gdrsim_crate_import_each_other_in_no_cycle() {
    let g = graph();
    assert_eq!(cycle(&g), None, "an import cycle");
    // The check finds one where there is one.
    let mut looped = g.clone();
    looped.get_mut("study").unwrap().insert("perftest".into());
    assert!(cycle(&looped).is_some());
}

#[test]
fn the_lower_crates_depend_on_no_crate_above_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let order = ["gdrsim-model", "gdrsim-scenario", "gdrsim-report"];
    for (i, dir) in ["model", "scenario", "report"].iter().enumerate() {
        let manifest =
            fs::read_to_string(root.join("crates").join(dir).join("Cargo.toml")).unwrap();
        let deps = manifest.split("[dependencies]").nth(1).unwrap();
        for above in &order[i..] {
            let line = format!("\n{above} ");
            assert!(
                !deps.contains(&line),
                "crates/{dir} depends on {above}, a crate at or above it"
            );
        }
        assert!(
            !deps.contains("\ngdrsim "),
            "crates/{dir} depends on gdrsim"
        );
        for below in &order[..i] {
            assert!(
                deps.contains(&format!("\n{below} ")),
                "crates/{dir} no longer names {below}: update this test"
            );
        }
    }
}

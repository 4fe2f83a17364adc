//! Issue #11: the project keeps its own copy of every reference row it cites. Every row id cited
//! anywhere in the repository (code, configs, parameter sources, README) has its row in
//! docs/references.md, and every parameter's declared source that names a row names one there.
//!
//! A citation is an id (an area letter and a number: C10, D9, F12) after "row", "rows",
//! "source:" or a config comment's `#`, or in parentheses, alone or in a list ("rows C10/C11",
//! "(C9, B14)"). GPU names such as T4 or A100 are not ids: T is no area, and ids have at most
//! two digits.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The areas of the reference table (A-G: measurement areas, L: lead rows, S: software).
const AREAS: &str = "ABCDEFGLPS";

/// The id starting at `s`, if one does (not followed by more letters or digits).
fn id_at(s: &str) -> Option<&str> {
    let b = s.as_bytes();
    if b.is_empty() || !AREAS.as_bytes().contains(&b[0]) {
        return None;
    }
    let digits = b[1..].iter().take_while(|c| c.is_ascii_digit()).count();
    let end = 1 + digits;
    let next_ok = b.get(end).is_none_or(|c| !c.is_ascii_alphanumeric());
    ((1..=2).contains(&digits) && next_ok).then(|| &s[..end])
}

/// The ids of a list starting at `s`: "C10/C11", "F9, F10", "E4 and E5".
fn id_list(mut s: &str) -> Vec<String> {
    let mut ids = Vec::new();
    while let Some(id) = id_at(s) {
        ids.push(id.to_string());
        s = &s[id.len()..];
        let rest = s.trim_start();
        let sep = ["/", ",", "and ", "-", "–"]
            .iter()
            .find(|p| rest.starts_with(**p));
        match sep {
            Some(p) => s = rest[p.len()..].trim_start(),
            None => break,
        }
    }
    ids
}

/// Every id `text` cites, sorted, each once.
fn cited(text: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for key in ["row ", "rows ", "Row ", "Rows ", "source: ", "sources: "] {
        for (i, _) in text.match_indices(key) {
            let before = text[..i].chars().next_back();
            if before.is_none_or(|c| !c.is_alphanumeric()) {
                ids.extend(id_list(text[i + key.len()..].trim_start()));
            }
        }
    }
    for (i, _) in text.match_indices('#') {
        let rest = text[i + 1..].trim_start();
        let list = id_list(rest);
        if !list.is_empty() {
            ids.extend(list);
        }
    }
    for (i, _) in text.match_indices('(') {
        let rest = &text[i + 1..];
        let list = id_list(rest);
        // A parenthesised citation is the whole content up to the closing ), ; or ,.
        let joined_len = rest.find([')', ';']).unwrap_or(0);
        if !list.is_empty() && joined_len > 0 && joined_len <= 40 {
            ids.extend(list);
        }
    }
    ids.sort();
    ids.dedup();
    ids
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p
            .extension()
            .is_some_and(|x| ["rs", "toml", "md", "sh"].contains(&x.to_str().unwrap_or("")))
        {
            out.push(p);
        }
    }
}

/// The row ids of docs/references.md (first cell of a table row).
fn reference_rows(root: &Path) -> Vec<String> {
    fs::read_to_string(root.join("docs/references.md"))
        .expect("docs/references.md")
        .lines()
        .filter_map(|l| l.strip_prefix("| "))
        .filter_map(|l| id_at(l).map(String::from))
        .collect()
}

#[test]
fn every_cited_row_is_in_the_projects_references() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rows = reference_rows(root);
    assert!(
        rows.len() >= 40,
        "only {} rows in docs/references.md",
        rows.len()
    );
    let mut paths = vec![root.join("README.md")];
    for d in ["src", "crates", "configs", "benches", "scripts"] {
        files(&root.join(d), &mut paths);
    }
    let mut missing: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut cited_ids = 0;
    for p in &paths {
        let text = fs::read_to_string(p).unwrap();
        for id in cited(&text) {
            cited_ids += 1;
            if !rows.contains(&id) {
                let at = p.strip_prefix(root).unwrap().display().to_string();
                missing.entry(id).or_default().push(at);
            }
        }
    }
    assert!(
        cited_ids > 100,
        "only {cited_ids} citations found: is the scanner broken?"
    );
    assert!(
        missing.is_empty(),
        "cited but not in docs/references.md: {missing:?}"
    );
    // Every parameter's source that cites rows cites ones that are there.
    for s in gdrsim::config::SECTIONS {
        for p in s.params {
            for id in cited(p.source) {
                assert!(
                    rows.contains(&id),
                    "{}.{}: source {id} not in references",
                    s.path,
                    p.key
                );
            }
        }
    }
}

#[test]
fn the_scanner_reads_the_citation_forms() {
    assert_eq!(cited("see rows C10/C11 and row D9."), ["C10", "C11", "D9"]);
    assert_eq!(cited("gpu_base_ns = 40500  # E2: 41.6 us (T4)"), ["E2"]);
    assert_eq!(cited("more (C9, B14); an A100"), ["B14", "C9"]);
    assert_eq!(cited("source: F9, F10"), ["F10", "F9"]);
    assert!(cited("an H100 and a T4, throw 3").is_empty());
}

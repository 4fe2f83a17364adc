//! What a switch fabric's run writes about its network (issue #23, outputs): report.md names
//! the spine cable that bound a point and the flows the routes put on it, flows.csv gives each
//! flow's switch path, and the two agree: the report's count is checked against an
//! independent count of the flows whose path crosses that cable.

use std::collections::BTreeMap;

use crate::support::{csv_rows, gdrsim, ok, s, scratch};

/// The channels a flows.csv `switch_path` crosses between switches: each two neighbours, the
/// first less its parallel-cable tag (`leaf0>spine2#1>leaf1#0` crosses `leaf0>spine2#1` and
/// `spine2>leaf1#0`); a flow's QPs' paths are joined by `;`.
fn cables_of(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    for qp in path.split(';').filter(|p| !p.is_empty()) {
        let nodes: Vec<&str> = qp.split('>').collect();
        for w in nodes.windows(2) {
            let from = w[0].split('#').next().unwrap();
            let c = format!("{from}>{}", w[1]);
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    out
}

#[test]
fn switch_paths_name_the_cables_between_their_switches() {
    assert_eq!(
        cables_of("leaf0>spine2#1>leaf1#0"),
        ["leaf0>spine2#1", "spine2>leaf1#0"]
    );
    assert_eq!(
        cables_of("su0.rail0>spine3>su0.rail5"),
        ["su0.rail0>spine3", "spine3>su0.rail5"]
    );
    assert!(cables_of("leaf0").is_empty());
}

/// configs/leaf-spine.toml: 8 hosts of leaf 0 write to 8 of leaf 1, 1:1 and 2:1, ECMP and
/// adaptive. Every flow crosses three switches (leaf 0, a spine, leaf 1). Wherever a point's
/// bottleneck is a leaf-spine cable, report.md's network section names that cable in words
/// (`spine2>leaf1` as "spine2 -> leaf1 downlink") with how busy it was and the flows on it,
/// and those flows are exactly the ones whose flows.csv `switch_path` crosses it. The ECMP
/// variants are bound by such a cable (the hash puts 3 flows on one: README's 33.1 GB/s),
/// and the report says the hash did it.
#[test]
fn report_names_the_spine_cable_that_binds_and_its_flows_from_the_routes() {
    let dir = scratch("fabric_report", "leaf_spine");
    let out = dir.join("out");
    ok(
        &gdrsim(&[
            "run",
            "configs/leaf-spine.toml",
            "--quiet",
            "--out",
            s(&out),
        ]),
        "run leaf-spine.toml",
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let section = md
        .split("\n## Network\n")
        .nth(1)
        .unwrap_or_else(|| panic!("report.md has a network section:\n{md}"));
    let section = section.split("\n## ").next().unwrap();
    let flows = csv_rows(&out.join("flows.csv"));
    let size = "16777216"; // the compare size the section reports
    let mut by_variant: BTreeMap<&str, Vec<&BTreeMap<String, String>>> = BTreeMap::new();
    for f in flows.iter().filter(|f| f["size_bytes"] == size) {
        assert_eq!(
            f["switch_path"].split('>').count(),
            3,
            "a cross-leaf flow crosses its leaf, a spine and the other leaf: {f:?}"
        );
        by_variant.entry(f["variant"].as_str()).or_default().push(f);
    }
    assert_eq!(by_variant.len(), 4, "four variants");
    let mut named = 0;
    for (variant, rows) in &by_variant {
        let line = section
            .lines()
            .find(|l| l.starts_with(&format!("- **cross-leaf [{variant}]** (host): ")))
            .unwrap_or_else(|| panic!("a line for {variant}:\n{section}"));
        let bottleneck = &rows[0]["bottleneck"];
        let spine = bottleneck.starts_with("spine") || bottleneck.starts_with("leaf");
        if !spine {
            assert!(
                line.contains("the network did not bind it"),
                "{variant}: bound by {bottleneck}, not a spine cable: {line}"
            );
            continue;
        }
        named += 1;
        // The independent count: flows whose switch path crosses the cable.
        let on: Vec<String> = rows
            .iter()
            .filter(|f| cables_of(&f["switch_path"]).contains(bottleneck))
            .map(|f| f["flow"].clone())
            .collect();
        assert!(!on.is_empty(), "{variant}: a flow crosses {bottleneck}");
        let (from, to) = bottleneck.split_once('>').unwrap();
        let (to, _) = to.split_once('#').unwrap_or((to, ""));
        let kind = if from.starts_with("spine") {
            "downlink"
        } else {
            "uplink"
        };
        assert!(
            line.contains(&format!("`{bottleneck}` ({from} -> {to} {kind}")),
            "{variant}: names the cable in words: {line}"
        );
        assert!(line.contains("% busy: "), "{variant}: {line}");
        let count = format!("{} flows ({})", on.len(), on.join(", "));
        assert!(
            line.contains(&count),
            "{variant}: the flows on {bottleneck} are {count} by flows.csv: {line}"
        );
        if variant.contains("routing=ecmp") {
            assert!(
                line.contains(&format!("{count} hashed onto it by ECMP")),
                "{variant}: {line}"
            );
        }
    }
    assert!(
        named >= 2,
        "both ECMP variants are bound by a spine cable:\n{section}"
    );
}

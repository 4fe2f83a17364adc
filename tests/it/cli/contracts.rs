//! Output contracts of `gdrsim run` and `gdrsim topo` on real configs: every config passes
//! `check`; the default run writes results.csv (its 20 columns in order), stages.csv and
//! config.toml, whose resolved config reproduces it byte for byte; two runs, `--jobs 1` and
//! `--jobs 2`, and the one-pair shorthand against a one-flow list give identical bytes; `--seed`
//! moves the jitter only; output folders stay whole under concurrency, kills and a full disk;
//! `topo` prints the `nvidia-smi topo -m` matrix; client-cpu falls back to staging.

use super::*;

#[test]
fn every_config_in_configs_passes_check() {
    let mut configs: Vec<PathBuf> = fs::read_dir(root().join("configs"))
        .expect("configs/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    configs.sort();
    let names: Vec<String> = configs
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for must in [
        "default.toml",
        "topologies.toml",
        "client-cpu.toml",
        "dgx-a100.toml",
        "registration.toml",
        "dgx-h100.toml",
    ] {
        assert!(names.iter().any(|n| n == must), "configs/{must} missing");
    }
    for c in &configs {
        let o = gdrsim(&["check", s(c)]);
        assert_ok(&o, &format!("gdrsim check {}", c.display()));
        let stdout = text(&o.stdout);
        assert!(stdout.contains(": ok ("), "{}: {stdout}", c.display());
        assert!(o.stderr.is_empty(), "{}: {}", c.display(), text(&o.stderr));
    }
}

// ---- the default run ----------------------------------------------------------------------------

#[test]
fn default_run_writes_the_contract_outputs() {
    let dir = default_run();
    for f in ["results.csv", "stages.csv", "config.toml", "report.md"] {
        assert!(dir.join(f).is_file(), "{f} not written");
    }
    // No temp files left behind by the atomic writes.
    for e in fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            !name.starts_with('.') && !name.ends_with(".tmp"),
            "left over: {name}"
        );
    }

    let (header, rows) = csv_table(&dir.join("results.csv"));
    assert!(header.len() >= 20, "results.csv header: {header:?}");
    assert_eq!(
        header[..20],
        RESULTS_COLUMNS,
        "results.csv contract columns"
    );
    assert!(!rows.is_empty());
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let mut points = BTreeMap::new();
    for r in &rows {
        assert_eq!(r.len(), header.len(), "row {r:?}");
        // Jitter only ever adds delay.
        assert!(
            ps(&r[col("lat_min_us")]) >= ps(&r[col("lat_model_us")]),
            "lat_min_us < lat_model_us: {r:?}"
        );
        let key = (
            r[col("scenario")].clone(),
            r[col("path")].clone(),
            r[col("op")].clone(),
            r[col("size_bytes")].clone(),
        );
        assert!(
            points.insert(key, ps(&r[col("lat_model_us")])).is_none(),
            "duplicate point {r:?}"
        );
    }

    let (sheader, srows) = csv_table(&dir.join("stages.csv"));
    assert_eq!(sheader, STAGES_COLUMNS, "stages.csv columns");
    // The critical_us of a point sum exactly to its lat_model_us.
    let mut sums: BTreeMap<(String, String, String, String), i128> = BTreeMap::new();
    for r in &srows {
        assert_eq!(r.len(), 9, "row {r:?}");
        *sums
            .entry((r[0].clone(), r[1].clone(), r[2].clone(), r[3].clone()))
            .or_default() += ps(&r[8]);
    }
    assert_eq!(
        sums.keys().collect::<Vec<_>>(),
        points.keys().collect::<Vec<_>>(),
        "stages.csv covers the points of results.csv"
    );
    for (k, model) in &points {
        assert_eq!(sums[k], *model, "critical_us sum of {k:?}");
    }

    // The resolved config loads back.
    let cfg = dir.join("config.toml");
    let o = gdrsim(&["check", s(&cfg)]);
    assert_ok(&o, "gdrsim check <out>/config.toml");
}

/// Issue #27 item 2: jitter only ever adds delay, in the staging study too (seed 16 gave a
/// one-flow point lat_min_us 38.80 under its lat_model_us 38.84). Every row of
/// configs/staging.toml under seeds 16 and 17 has lat_min_us >= lat_model_us.
#[test]
fn jitter_only_adds_delay_in_the_staging_study() {
    let config = root().join("configs/staging.toml");
    for seed in ["16", "17"] {
        let out = run_config(&config, &format!("staging-seed{seed}"), &["--seed", seed]);
        let (header, rows) = csv_table(&out.join("results.csv"));
        let col = |name: &str| header.iter().position(|h| h == name).unwrap();
        assert!(rows.len() > 100, "{} rows", rows.len());
        for r in &rows {
            assert!(
                ps(&r[col("lat_min_us")]) >= ps(&r[col("lat_model_us")]),
                "seed {seed}: lat_min_us < lat_model_us: {r:?}"
            );
        }
    }
}

/// Issue #27 item 5, the contract as README states it: with several independent flows,
/// results.csv's `lat_model_us` is the first flow's noise-free latency (flows.csv's row 0) and
/// `lat_min_us` is over every flow's messages, so it may be below it (here the faster PIX
/// flow's messages); with one flow, jitter only adds delay (see the tests above).
#[test]
fn with_several_flows_lat_model_is_the_first_flows() {
    let mut text = default_toml();
    let first = text.find("[[scenarios]]").unwrap();
    text.truncate(first);
    text.push_str(
        "[[scenarios]]\nname = \"SYS and PIX\"\nflows = [\n  { sender = { host = \"node-a\", \
         nic = \"nic0\", gpu = \"gpu3\" }, receiver = { host = \"node-b\", nic = \"nic0\", gpu \
         = \"gpu3\" } },\n  { sender = { host = \"node-a\", nic = \"nic0\", gpu = \"gpu0\" }, \
         receiver = { host = \"node-b\", nic = \"nic0\", gpu = \"gpu0\" } },\n]\n",
    );
    let text = with_sizes(&text, "sizes = [\"4KiB\"]");
    let text: String = (text.lines())
        .map(|l| match l.starts_with("paths =") {
            true => "paths = [\"gpudirect\"]\n".to_string(),
            false => format!("{l}\n"),
        })
        .collect();
    let config = write_config("two-flows.toml", &text);
    let out = run_config(&config, "two-flows", &[]);
    let (header, rows) = csv_table(&out.join("results.csv"));
    let (fheader, flows) = csv_table(&out.join("flows.csv"));
    let col = |h: &[String], name: &str| h.iter().position(|x| x == name).unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(flows.len(), 2, "{flows:?}");
    let model = ps(&rows[0][col(&header, "lat_model_us")]);
    let min = ps(&rows[0][col(&header, "lat_min_us")]);
    let per_flow: Vec<i128> = (flows.iter())
        .map(|f| ps(&f[col(&fheader, "lat_model_us")]))
        .collect();
    assert_eq!(model, per_flow[0], "lat_model_us is flow 0's");
    assert!(
        per_flow[1] < per_flow[0],
        "PIX is faster than SYS: {per_flow:?}"
    );
    assert!(
        min < model,
        "lat_min_us {min} ps over both flows, lat_model_us {model}"
    );
}

#[test]
fn the_resolved_config_reproduces_the_run() {
    let a = default_run();
    let c = run_config(&a.join("config.toml"), "default-from-resolved", &[]);
    for f in ["results.csv", "stages.csv", "config.toml"] {
        assert!(
            read(&a.join(f)) == read(&c.join(f)),
            "{f} differs when re-run from the resolved config.toml"
        );
    }
}

#[test]
fn running_the_default_config_twice_gives_identical_bytes() {
    let a = default_run();
    let b = scratch("default-b");
    let o = gdrsim(&["run", "--quiet", "--out", s(&b)]);
    assert_ok(&o, "second default run");
    let mut files: Vec<String> = fs::read_dir(a)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut compared = 0;
    // The report and manifest record the command that reproduces the results, which does not
    // name the output folder: every file is identical, those two included.
    for f in &files {
        assert!(
            read(&a.join(f)) == read(&b.join(f)),
            "{f} differs between two identical runs"
        );
        compared += 1;
    }
    assert!(compared >= 4, "compared only {files:?}");
}

/// The one-pair shorthand and the explicit one-flow list (`flows = [{ sender, receiver }]`) are
/// one scenario: every CSV byte-identical.
#[test]
fn the_one_pair_shorthand_and_a_one_flow_list_give_identical_bytes() {
    let pair = "sender = { host = \"node-a\", nic = \"nic0\", gpu = \"gpu0\" }\nreceiver = { host = \"node-b\", nic = \"nic0\", gpu = \"gpu0\" }";
    let list = "flows = [{ sender = { host = \"node-a\", nic = \"nic0\", gpu = \"gpu0\" }, receiver = { host = \"node-b\", nic = \"nic0\", gpu = \"gpu0\" } }]";
    let sizes = "sizes = [\"8B\", \"64KiB\", \"4MiB\"]";
    let a = write_config("shorthand", &with_sizes(&default_with(&[]), sizes));
    let b = write_config(
        "one-flow-list",
        &with_sizes(&default_with(&[(pair, list)]), sizes),
    );
    let (a, b) = (
        run_config(&a, "shorthand", &[]),
        run_config(&b, "one-flow-list", &[]),
    );
    for f in ["results.csv", "stages.csv", "flows.csv", "links.csv"] {
        assert!(read(&a.join(f)) == read(&b.join(f)), "{f} differs");
        assert!(!read(&a.join(f)).is_empty(), "{f} empty");
    }
}

/// Issue #28 item 4: the first table of report.md is the decision table, one line per scenario
/// of results.csv, in config order, each naming a winner or a tie in every band. (The embedded
/// default run is configs/default.toml: `include_str!`.)
#[test]
fn default_report_opens_with_the_decision_table_one_line_per_scenario() {
    let dir = default_run();
    let (header, rows) = csv_table(&dir.join("results.csv"));
    let col = header.iter().position(|h| h == "scenario").unwrap();
    let mut scenarios: Vec<String> = Vec::new();
    for r in &rows {
        if !scenarios.contains(&r[col]) {
            scenarios.push(r[col].clone());
        }
    }
    let md = String::from_utf8(read(&dir.join("report.md"))).unwrap();
    let table: Vec<&str> = md
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert!(
        table[0].starts_with("| Scenario | Latency, small ≤ 4 KiB |"),
        "the first table is not the decision table:\n{}",
        table.join("\n")
    );
    let first_table = md.find("\n|").unwrap();
    assert!(md.find("## Decision").unwrap() < first_table);
    assert!(first_table < md.find("## What was simulated").unwrap());
    assert_eq!(table.len(), 2 + scenarios.len(), "{}", table.join("\n"));
    let columns = table[0].matches(" | ").count();
    for (line, name) in table[2..].iter().zip(&scenarios) {
        assert!(line.starts_with(&format!("| {name} |")), "{line}");
        assert_eq!(line.matches(" | ").count(), columns, "{line}");
        for cell in line.trim_matches('|').split(" | ").skip(1) {
            let cell = cell.trim();
            assert!(
                cell.starts_with("GPUDirect")
                    || cell.starts_with("staged")
                    || cell.starts_with("tie"),
                "{line}"
            );
        }
    }
}

// ---- threads and seeds --------------------------------------------------------------------------

#[test]
fn jobs_1_and_jobs_2_give_identical_bytes_and_seed_moves_only_the_jitter() {
    let cfg = write_config("small", &with_sizes(&default_toml(), SMALL_SWEEP));
    let one = run_config(&cfg, "small-jobs1", &["--jobs", "1"]);
    let two = run_config(&cfg, "small-jobs2", &["--jobs", "2"]);
    for f in ["results.csv", "stages.csv", "config.toml"] {
        assert!(
            read(&one.join(f)) == read(&two.join(f)),
            "{f} differs between --jobs 1 and --jobs 2"
        );
    }

    // Another seed: the noise-free model and its stages stay, the jittered statistics move.
    let seeded = run_config(&cfg, "small-seed", &["--jobs", "2", "--seed", "7"]);
    assert!(read(&one.join("stages.csv")) == read(&seeded.join("stages.csv")));
    let (h, a) = csv_table(&one.join("results.csv"));
    let (_, b) = csv_table(&seeded.join("results.csv"));
    let col = |name: &str| h.iter().position(|x| x == name).unwrap();
    assert_eq!(a.len(), b.len());
    let mut moved = 0;
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x[col("lat_model_us")], y[col("lat_model_us")]);
        if x[col("lat_p50_us")] != y[col("lat_p50_us")] {
            moved += 1;
        }
    }
    assert!(moved > 0, "--seed 7 changed no jittered statistic");
    assert!(
        text(&read(&seeded.join("config.toml"))).contains("seed = 7"),
        "the resolved config records the overriding seed"
    );
}

// ---- topo and the examples ----------------------------------------------------------------------

#[test]
fn topo_prints_the_matrix_and_its_legend() {
    let o = gdrsim(&["topo"]);
    assert_ok(&o, "gdrsim topo");
    let out = text(&o.stdout);
    for needle in [
        "GPU0",
        "NIC0",
        "CPU Affinity",
        "PIX",
        "PHB",
        "SYS",
        "Legend:",
        "X    = Self",
        "PXB  = Connection traversing multiple PCIe bridges",
        "NIC Legend:",
    ] {
        assert!(out.contains(needle), "{needle:?} missing from:\n{out}");
    }
    // The matrix is symmetric in classes: the GPU0 row's NIC0 cell is the NIC0 row's GPU0 cell.
    let row = |name: &str| -> Vec<String> {
        out.lines()
            .find(|l| l.starts_with(&format!("{name}\t")))
            .unwrap_or_else(|| panic!("no {name} row"))
            .split('\t')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let header: Vec<String> = out
        .lines()
        .find(|l| l.starts_with('\t'))
        .expect("a header row")
        .split('\t')
        .map(|c| c.trim().to_string())
        .collect();
    let nic = header.iter().position(|c| c == "NIC0").unwrap();
    let gpu = header.iter().position(|c| c == "GPU0").unwrap();
    assert_eq!(row("GPU0")[nic], row("NIC0")[gpu]);
}

/// The first host's `topo -m` matrix of `gdrsim topo [config]`: (column names, rows by name).
fn topo_matrix(config: Option<&Path>) -> (Vec<String>, Vec<(String, Vec<String>)>) {
    let o = match config {
        Some(c) => gdrsim(&["topo", s(c)]),
        None => gdrsim(&["topo"]),
    };
    assert_ok(&o, "gdrsim topo");
    let out = text(&o.stdout);
    let mut lines = out.lines().skip_while(|l| !l.starts_with('\t'));
    let header: Vec<String> = lines
        .next()
        .expect("a header row")
        .split('\t')
        .skip(1)
        .map(|c| c.trim().to_string())
        .collect();
    let rows = lines
        .take_while(|l| !l.trim().is_empty())
        .map(|l| {
            let mut cells = l.split('\t').map(|c| c.trim().to_string());
            let name = cells.next().unwrap();
            (name, cells.collect())
        })
        .collect();
    (header, rows)
}

/// Asserts every GPU and NIC cell of a matrix against `want(row, column)`, and its symmetry.
fn assert_matrix(
    config: Option<&Path>,
    devices: &[&str],
    want: impl Fn(&str, &str) -> &'static str,
) {
    let (header, rows) = topo_matrix(config);
    for (name, cells) in &rows {
        assert!(devices.contains(&name.as_str()), "unexpected row {name}");
        for col in devices {
            let i = header
                .iter()
                .position(|h| h == col)
                .unwrap_or_else(|| panic!("no column {col}"));
            let expected = if name == col { "X" } else { want(name, col) };
            assert_eq!(cells[i], expected, "cell {name} x {col}");
        }
    }
    assert_eq!(rows.len(), devices.len(), "one row per device");
}

#[test]
fn topo_matrices_of_the_examples_cell_by_cell() {
    // The default config: GPU0 under the NIC's switch, GPU1 on a root port of the same root
    // complex, GPU2 on another root complex of socket 0, GPU3 on socket 1.
    let class = |a: &str, b: &str| -> &'static str {
        let place = |d: &str| match d {
            "GPU0" | "NIC0" => 0,
            "GPU1" => 1,
            "GPU2" => 2,
            _ => 3,
        };
        let (x, y) = (place(a).min(place(b)), place(a).max(place(b)));
        match (x, y) {
            (0, 0) => "PIX",
            (_, 3) => "SYS",
            (_, 2) => "NODE",
            _ => "PHB",
        }
    };
    assert_matrix(None, &["GPU0", "GPU1", "GPU2", "GPU3", "NIC0"], class);

    // topologies.toml: PIX, PXB (cascaded switches), PHB, NODE, SYS, one GPU each.
    let topologies = root().join("configs/topologies.toml");
    let rank = |d: &str| match d {
        "GPU0" | "NIC0" => 0,
        "GPU1" => 1,
        "GPU2" => 2,
        "GPU3" => 3,
        _ => 4,
    };
    assert_matrix(
        Some(&topologies),
        &["GPU0", "GPU1", "GPU2", "GPU3", "GPU4", "NIC0"],
        |a, b| match rank(a).max(rank(b)) {
            0 => "PIX",
            1 => "PXB",
            2 => "PHB",
            3 => "NODE",
            _ => "SYS",
        },
    );

    // DGX H100: GPU i and NIC i share a switch (PIX); pairs 0-3 on socket 0 and 4-7 on socket 1,
    // each switch on its own root port: NODE within a socket, SYS across.
    let dgx = root().join("configs/dgx-h100.toml");
    let names: Vec<String> = (0..8)
        .map(|i| format!("GPU{i}"))
        .chain((0..8).map(|i| format!("NIC{i}")))
        .collect();
    let devices: Vec<&str> = names.iter().map(String::as_str).collect();
    let index = |d: &str| d[3..].parse::<u32>().unwrap();
    assert_matrix(Some(&dgx), &devices, |a, b| {
        let (i, j) = (index(a), index(b));
        // Its GPUs are joined by the NVSwitch fabric, 18 links each.
        if a.starts_with("GPU") && b.starts_with("GPU") {
            "NV18"
        } else if i == j {
            "PIX"
        } else if i / 4 == j / 4 {
            "NODE"
        } else {
            "SYS"
        }
    });
}

#[test]
fn client_cpu_gpudirect_falls_back_to_staging() {
    let text = fs::read_to_string(root().join("configs/client-cpu.toml")).unwrap();
    let cfg = write_config(
        "client-small",
        &with_sizes(&text, r#"sizes = ["8B", "64KiB"]"#),
    );
    let out = run_config(&cfg, "client-small", &[]);
    let (h, rows) = csv_table(&out.join("results.csv"));
    let col = |name: &str| h.iter().position(|x| x == name).unwrap();
    let direct: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r[col("path")] == "gpudirect")
        .collect();
    assert!(!direct.is_empty());
    for r in direct {
        assert_eq!(r[col("effective_path")], "staged", "{r:?}");
    }
}

/// Waits up to 60 s for `path` to exist.
fn wait_for(path: &Path) -> bool {
    for _ in 0..600 {
        if path.exists() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    false
}

/// Issue #13, item 4: a run's folder is one unit. A second run into a folder another run is
/// writing is refused (exit 2) before any work; a run killed with SIGKILL leaves the previous
/// folder whole (its manifest matches every file) and no stale lock: the next run goes ahead
/// and replaces it whole, charts no longer asked for included.
#[test]
fn output_folders_are_whole_under_concurrency_and_kill() {
    let base = scratch("whole");
    fs::create_dir_all(&base).unwrap();
    let dir = base.join("out");
    let lock = base.join(".out.gdrsim.lock");
    // A first complete run, with every chart.
    let o = gdrsim(&["run", "--quiet", "--out", s(&dir)]);
    assert_ok(&o, "first run");
    assert_whole(&dir);
    assert!(dir.join("speedup.svg").exists());

    // A run in progress holds the folder: a second one is refused at once.
    let mut first = Command::new(BIN)
        .args(["run", "--quiet", "--out", s(&dir)])
        .current_dir(root())
        .spawn()
        .unwrap();
    assert!(wait_for(&lock), "the running gdrsim takes its lock");
    let second = gdrsim(&["run", "--quiet", "--out", s(&dir)]);
    assert_eq!(second.status.code(), Some(2));
    assert!(
        text(&second.stderr).contains("another gdrsim run"),
        "{}",
        text(&second.stderr)
    );
    // Killed mid-run: the old folder stays whole, the lock is left behind but stale.
    first.kill().unwrap();
    first.wait().unwrap();
    assert_whole(&dir);

    // The next run (only the latency chart this time) clears the stale lock and replaces the
    // folder whole: no chart of the earlier run is left.
    let cfg = write_config(
        "whole-cfg",
        &default_with(&[(
            "charts = [\"latency\", \"bandwidth\", \"speedup\", \"breakdown\", \"scenarios\"]",
            "charts = [\"latency\"]",
        )]),
    );
    let o = gdrsim(&["run", s(&cfg), "--quiet", "--out", s(&dir)]);
    assert_ok(&o, "run after a kill");
    assert_whole(&dir);
    assert!(
        !dir.join("speedup.svg").exists(),
        "a chart no longer asked for is gone"
    );
    let left: Vec<String> = fs::read_dir(&base)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        left,
        vec!["out".to_string()],
        "no lock or temporary folder left"
    );
    fs::remove_dir_all(&base).unwrap();
}

/// Issue #13: a full disk. A run that cannot write its folder fails (exit 1, the OS error
/// named) and leaves the previous folder whole, with no temporary folder or lock beside it.
/// Needs a small tmpfs, so it mounts one where it may (as root) and says it skipped otherwise.
#[test]
fn a_full_disk_fails_cleanly_and_keeps_the_previous_folder() {
    let base = scratch("full-disk");
    fs::create_dir_all(&base).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=512k", "tmpfs", s(&base)])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|st| st.success());
    if !mounted {
        eprintln!(
            "skipped: no tmpfs could be mounted at {} (not root)",
            base.display()
        );
        return;
    }
    /// Unmounts when the test ends, passed or failed.
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).status();
        }
    }
    let _unmount = Unmount(&base);
    let dir = base.join("out");
    let small = write_config(
        "full-disk-small",
        &default_with(&[
            (
                "sizes = { from = \"1B\", to = \"1GiB\", factor = 2 }",
                "sizes = [\"1B\", \"4KiB\"]",
            ),
            (
                "charts = [\"latency\", \"bandwidth\", \"speedup\", \"breakdown\", \"scenarios\"]",
                "charts = [\"latency\"]",
            ),
            ("formats = [\"svg\", \"png\"]", "formats = [\"svg\"]"),
        ]),
    );
    let o = gdrsim(&["run", s(&small), "--quiet", "--out", s(&dir)]);
    assert_ok(&o, "a small run that fits");
    assert_whole(&dir);
    let before = read(&dir.join("manifest.json"));
    // The whole default study (charts of megabytes) does not fit.
    let o = gdrsim(&["run", "--quiet", "--out", s(&dir)]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("No space left on device"),
        "{}",
        text(&o.stderr)
    );
    assert_whole(&dir);
    assert_eq!(
        read(&dir.join("manifest.json")),
        before,
        "the earlier run is kept"
    );
    let left: Vec<String> = fs::read_dir(&base)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        left,
        vec!["out".to_string()],
        "no temporary folder or lock left"
    );
}

/// Issue #28 item 11: bare `gdrsim` is `gdrsim run`, but `gdrsim --quiet` (run's options
/// without the word `run`) was refused. Run's options come first as they would after `run`; a
/// mistyped command is still named as one, and `--help` and `--version` are gdrsim's own.
#[test]
fn run_options_without_the_word_run_run_the_study() {
    let dir = scratch("bare-options");
    let o = gdrsim(&[
        "--quiet",
        "--seed",
        "7",
        "--out",
        s(&dir),
        "configs/ring.toml",
    ]);
    assert_ok(&o, "gdrsim --quiet --seed 7 --out DIR configs/ring.toml");
    assert!(o.stdout.is_empty(), "--quiet: {}", text(&o.stdout));
    assert!(dir.join("results.csv").exists());
    let report = fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        report.contains("gdrsim run configs/ring.toml --seed 7"),
        "{report}"
    );
    let o = gdrsim(&["chekc"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("unrecognized subcommand 'chekc'"));
    let o = gdrsim(&["--version"]);
    assert_ok(&o, "--version");
    assert!(text(&o.stdout).starts_with("gdrsim "));
    let o = gdrsim(&["--help"]);
    assert_ok(&o, "--help");
    assert!(text(&o.stdout).contains("With no command, gdrsim is gdrsim run"));
}

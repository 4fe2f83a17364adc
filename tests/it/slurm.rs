//! Issue #12 against a real Slurm: `gdrsim slurm --submit` runs a study as an array job and a
//! merge job, and the merged folder equals a local run byte for byte; a failing task gets the
//! merge cancelled (by the merge script's own `--kill-on-invalid-dep`, on a cluster left at
//! Slurm's default dependency handling), its log says how to rerun the shard alone, and doing
//! so completes the study.
//!
//! Needs a running cluster (`scripts/slurm-loopback.sh start`; `.ci/run` starts one) and the
//! switch `GDRSIM_SLURM=1`; without the switch the test says it skipped, so `cargo test` on a
//! machine without Slurm passes.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_gdrsim");

fn scratch(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("slurm-{name}"));
    let _ = fs::remove_dir_all(&p);
    fs::create_dir_all(&p).unwrap();
    p
}

fn run(cmd: &mut Command) -> String {
    let o = cmd.output().expect("the command starts");
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{cmd:?} failed: {}{}",
        text,
        String::from_utf8_lossy(&o.stderr)
    );
    text
}

fn gdrsim(args: &[&str]) -> String {
    run(Command::new(BIN).args(args))
}

/// Waits until Slurm reports job `id` finished; returns its state (COMPLETED, FAILED,
/// CANCELLED, ...).
fn wait_job(id: &str) -> String {
    let start = Instant::now();
    loop {
        let o = Command::new("scontrol")
            .args(["-o", "show", "job", id])
            .output()
            .expect("scontrol runs");
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        let states: Vec<&str> = text
            .split_whitespace()
            .filter_map(|w| w.strip_prefix("JobState="))
            .collect();
        // An array job has one line per task: done when every task is.
        if !states.is_empty()
            && states
                .iter()
                .all(|s| !matches!(*s, "PENDING" | "RUNNING" | "CONFIGURING" | "COMPLETING"))
        {
            let bad = states.iter().find(|s| **s != "COMPLETED");
            return bad.unwrap_or(&states[0]).to_string();
        }
        assert!(
            start.elapsed() < Duration::from_secs(180),
            "job {id} still not done after 180 s: {text}"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// Every file of `a` and `b`, byte for byte.
fn assert_same_folder(a: &Path, b: &Path) {
    let names = |d: &Path| {
        let mut v: Vec<String> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        names(a),
        names(b),
        "{} and {} hold different files",
        a.display(),
        b.display()
    );
    for n in names(a) {
        assert!(
            fs::read(a.join(&n)).unwrap() == fs::read(b.join(&n)).unwrap(),
            "{n} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}

fn sbatch(args: &[&str]) -> String {
    run(Command::new("sbatch").arg("--parsable").args(args))
        .trim()
        .split(';')
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn studies_run_as_slurm_arrays_and_merge_to_the_local_run() {
    if std::env::var_os("GDRSIM_SLURM").is_none() {
        eprintln!(
            "skipped: set GDRSIM_SLURM=1 with a Slurm cluster running (scripts/slurm-loopback.sh)"
        );
        return;
    }
    let base = scratch("study");
    let cfg = base.join("study.toml");
    let text = gdrsim_default().replace(
        "sizes = { from = \"1B\", to = \"1GiB\", factor = 2 }",
        "sizes = { from = \"1B\", to = \"16MiB\", factor = 4 }",
    );
    fs::write(&cfg, text).unwrap();
    let cfg_s = cfg.to_str().unwrap();
    let local = base.join("local");
    gdrsim(&["run", cfg_s, "--quiet", "--out", local.to_str().unwrap()]);

    // The whole study as an array of 4 tasks and a merge.
    let sl = base.join("array");
    let out = gdrsim(&[
        "slurm",
        cfg_s,
        "--tasks",
        "4",
        "--out",
        sl.to_str().unwrap(),
        "--submit",
    ]);
    let ids: Vec<&str> = out.split_whitespace().skip_while(|w| *w != "job").collect();
    let array_id = ids[1];
    let merge_id = out
        .split("merge job ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no merge job id in: {out}"));
    assert_eq!(wait_job(array_id), "COMPLETED", "array job");
    assert_eq!(wait_job(merge_id), "COMPLETED", "merge job");
    assert_same_folder(&local, &sl.join("result"));

    // Task 1 fails (its output folder is taken by a file): the merge is cancelled, not left
    // pending, and the task's log says how to recover.
    let sf = base.join("failing");
    let sf_s = sf.to_str().unwrap();
    gdrsim(&["slurm", cfg_s, "--tasks", "3", "--out", sf_s]);
    let blocker = sf.join("shards").join("shard-1");
    fs::write(&blocker, "not a folder").unwrap();
    let out = gdrsim(&["slurm", cfg_s, "--tasks", "3", "--out", sf_s, "--submit"]);
    let merge_id = out
        .split("merge job ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap();
    assert_eq!(
        wait_job(merge_id),
        "CANCELLED",
        "the merge after a failed task"
    );
    let log = fs::read_to_string(sf.join("logs").join("shard-1.out")).unwrap();
    let array = sf.join("gdrsim-array.sbatch");
    let rerun = format!("sbatch --array=1 {}", array.display());
    assert!(log.contains(&rerun), "the failed task's log: {log}");
    assert!(!sf.join("result").exists());

    // Doing what the log says completes the study.
    fs::remove_file(&blocker).unwrap();
    let a = sbatch(&["--array=1", array.to_str().unwrap()]);
    assert_eq!(wait_job(&a), "COMPLETED", "the rerun shard");
    let m = sbatch(&[sf.join("gdrsim-merge.sbatch").to_str().unwrap()]);
    assert_eq!(wait_job(&m), "COMPLETED", "the merge after the rerun");
    assert_same_folder(&local, &sf.join("result"));
}

fn gdrsim_default() -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/default.toml")).unwrap()
}

/// Issue #28 item 12 (no Slurm needed): `gdrsim slurm` prints each shard's estimated time and
/// writes it, with every `--sbatch-option`, into the scripts; a bad option is refused with
/// exit 2, one error line naming the flag and what to do, and nothing written.
#[test]
fn slurm_scripts_carry_the_shard_estimate_and_extra_sbatch_options() {
    let dir = scratch("options");
    let cfg = dir.join("small.toml");
    let text = gdrsim_default().replace(
        "sizes = { from = \"1B\", to = \"1GiB\", factor = 2 }",
        "sizes = [\"8B\", \"64KiB\"]",
    );
    assert_ne!(
        text,
        gdrsim_default(),
        "the sizes anchor moved: update this test"
    );
    fs::write(&cfg, text).unwrap();
    let out = dir.join("run");
    let printed = gdrsim(&[
        "slurm",
        cfg.to_str().unwrap(),
        "--tasks",
        "3",
        "--out",
        out.to_str().unwrap(),
        "--sbatch-option=--account=proj",
        "--sbatch-option",
        "--qos=high",
    ]);
    assert!(
        printed.contains("estimated time per shard (gdrsim check's cost estimate): about "),
        "{printed}"
    );
    let array = fs::read_to_string(out.join("gdrsim-array.sbatch")).unwrap();
    let merge = fs::read_to_string(out.join("gdrsim-merge.sbatch")).unwrap();
    assert!(array.contains("# Estimated time per shard"), "{array}");
    assert!(array.contains("for the longest (shard "), "{array}");
    for s in [&array, &merge] {
        assert!(
            s.contains("#SBATCH --account=proj\n#SBATCH --qos=high\n"),
            "{s}"
        );
    }

    for (bad, says) in [
        ("--sbatch-option=--array=0-9", "use --tasks"),
        ("--sbatch-option=--account proj", "one word"),
        ("--sbatch-option=account=proj", "one word"),
    ] {
        let out = dir.join("bad");
        let o = Command::new(BIN)
            .args(["slurm", cfg.to_str().unwrap(), "--tasks", "2", "--out"])
            .arg(&out)
            .arg(bad)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{bad}: {err}");
        assert!(
            err.contains("--sbatch-option") && err.contains(says),
            "{bad}: {err}"
        );
        assert!(!out.exists(), "{bad} wrote {}", out.display());
    }
}

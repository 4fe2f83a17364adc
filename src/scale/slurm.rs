//! `gdrsim slurm CONFIG --tasks N`: the sbatch scripts that run a study as a Slurm job array
//! (task K runs `gdrsim run CONFIG --shard K/N`) and a merge job that depends on it. With
//! `--submit` it submits both (`sbatch --parsable`, the merge with
//! `--dependency=afterok:<array id>`) and prints the job ids.
//!
//! A failed task must not leave the merge pending forever (Slurm's default for an `afterok`
//! that can no longer be met): the merge script asks for `--kill-on-invalid-dep=yes`, so Slurm
//! cancels it, and the failed task's log says how to rerun that shard alone and then merge.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::shard::MAX_SHARDS;
use crate::config::ConfigError;
use crate::report::atomic;
use crate::study::gate::fmt_seconds;

/// What the scripts ask of Slurm.
pub struct Request<'a> {
    /// The config, as the tasks will read it (absolute); None: the embedded default.
    pub config: Option<&'a Path>,
    /// The study's name (job names).
    pub name: &'a str,
    /// Array tasks: one shard each.
    pub tasks: u32,
    /// The Slurm partition (`#SBATCH --partition`); none: the cluster's default.
    pub partition: Option<&'a str>,
    /// Time limit per task, as sbatch takes it ("01:00:00"); none: the partition's default.
    pub time: Option<&'a str>,
    /// CPUs per task: the worker threads of each shard's run.
    pub cpus_per_task: u32,
    /// The folder that holds the scripts, logs, shards and the merged study.
    pub dir: &'a Path,
    /// The gdrsim binary the tasks run (absolute).
    pub bin: &'a Path,
    /// Replaces the config's seed in every task's run (`--seed`).
    pub seed: Option<u64>,
    /// Further sbatch options, one word each ("--account=proj", "--qos=high"), written as
    /// `#SBATCH` lines of both scripts.
    pub sbatch_options: &'a [String],
    /// The estimated time of the shards (see [`estimate`]); None: not estimated.
    pub estimate: Option<&'a Estimate>,
}

/// The sbatch options a script sets itself, or that have their own flag of `gdrsim slurm`:
/// (long, short, what to do instead).
const RESERVED: [(&str, &str, &str); 10] = [
    ("--array", "-a", "use --tasks"),
    ("--output", "-o", "the scripts write their logs under --out"),
    ("--error", "-e", "the scripts write their logs under --out"),
    (
        "--job-name",
        "-J",
        "the scripts name their jobs after the study",
    ),
    ("--cpus-per-task", "-c", "use --cpus-per-task"),
    (
        "--dependency",
        "-d",
        "the merge's dependency is set on submission",
    ),
    ("--kill-on-invalid-dep", "", "the merge script sets it"),
    ("--partition", "-p", "use --partition"),
    ("--time", "-t", "use --time"),
    ("--wrap", "", "the scripts are the jobs"),
];

/// The estimated cost of a study's shards, from the same estimate `gdrsim check` prints.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// Per shard, in shard order: (points, events, wall-clock seconds on its CPUs).
    pub shards: Vec<(usize, u64, f64)>,
    /// CPUs per task the seconds assume.
    pub cpus: u32,
}

impl Estimate {
    /// The index of the longest shard.
    pub fn longest(&self) -> usize {
        (0..self.shards.len())
            .max_by(|&a, &b| {
                self.shards[a]
                    .2
                    .total_cmp(&self.shards[b].2)
                    .then(b.cmp(&a))
            })
            .unwrap_or(0)
    }

    /// "about 3 min (shard 2: 40 points, 2.7e8 events on 2 CPUs); the shortest about 1.2 min".
    pub fn line(&self) -> String {
        if self.shards.is_empty() {
            return "no points".into();
        }
        let k = self.longest();
        let (points, events, secs) = self.shards[k];
        let shortest = self
            .shards
            .iter()
            .map(|s| s.2)
            .fold(f64::INFINITY, f64::min);
        let rest = if self.shards.len() > 1 {
            format!("; the shortest about {}", fmt_seconds(shortest))
        } else {
            String::new()
        };
        format!(
            "about {} for the longest (shard {k}: {points} point{}, {:.1e} events on {} CPU{}){rest}",
            fmt_seconds(secs),
            if points == 1 { "" } else { "s" },
            events as f64,
            self.cpus,
            if self.cpus == 1 { "" } else { "s" },
        )
    }
}

/// The estimated time of every shard of `cfg` cut into `tasks`, each run on `cpus` worker
/// threads: the points [`super::shard::assign`] gives it, costed as `gdrsim check` costs a
/// study ([`crate::scenario::cost`], at its events per core-second).
pub fn estimate(cfg: &crate::config::Config, tasks: u32, cpus: u32) -> Estimate {
    let points = crate::scenario::plan(cfg);
    let of = super::shard::assign(cfg, &points, tasks);
    let shards = (0..tasks)
        .map(|k| {
            let ids: Vec<usize> = (0..points.len()).filter(|&i| of[i] == k).collect();
            let threads = (cpus as usize).min(ids.len()).max(1);
            let c = crate::scenario::cost::study_of(cfg, &ids, threads);
            (ids.len(), c.events, c.seconds(threads))
        })
        .collect();
    Estimate { shards, cpus }
}

/// `s` as one word of a POSIX shell (single-quoted where it needs to be): the scripts' paths
/// and the reproducing command's config path.
pub fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn path(p: &Path) -> String {
    quote(&p.display().to_string())
}

/// Checks the request before anything is written.
pub fn check(r: &Request) -> Result<(), ConfigError> {
    let cli = |key: &str, expected: &str, found: String| {
        ConfigError::new("command line", key, expected, found)
    };
    if r.tasks == 0 || r.tasks > MAX_SHARDS {
        return Err(cli(
            "--tasks",
            &format!("a number of array tasks from 1 to {MAX_SHARDS}"),
            r.tasks.to_string(),
        ));
    }
    if r.cpus_per_task == 0 || r.cpus_per_task > 1024 {
        return Err(cli(
            "--cpus-per-task",
            "a number of CPUs from 1 to 1024",
            r.cpus_per_task.to_string(),
        ));
    }
    for o in r.sbatch_options {
        sbatch_option(o)?;
    }
    for (key, v) in [("--partition", r.partition), ("--time", r.time)] {
        if let Some(v) = v
            && (v.is_empty() || v.chars().any(|c| c.is_whitespace() || c.is_control()))
        {
            return Err(cli(key, "a Slurm value without spaces", format!("{v:?}")));
        }
    }
    Ok(())
}

/// Checks one `--sbatch-option`: a single word that starts with a dash and is none of the
/// options the scripts set themselves.
fn sbatch_option(o: &str) -> Result<(), ConfigError> {
    let bad = |expected: String| {
        Err(ConfigError::new(
            "command line",
            "--sbatch-option",
            &expected,
            format!("{o:?}"),
        ))
    };
    let word = "an sbatch option as one word with its value after '=', e.g. \
                --sbatch-option=--account=proj (or --qos=high, --constraint=h100)";
    if !o.starts_with('-')
        || o.trim_start_matches('-').is_empty()
        || o.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return bad(word.into());
    }
    let name = o.split('=').next().unwrap_or(o);
    for (long, short, instead) in RESERVED {
        let short_hit =
            !short.is_empty() && (name == short || o.starts_with(short) && !o.starts_with("--"));
        if name == long || short_hit {
            return bad(format!("an sbatch option other than {long} ({instead})"));
        }
    }
    Ok(())
}

/// The folder of shard K.
pub fn shard_dir(dir: &Path, k: u32) -> PathBuf {
    dir.join("shards").join(format!("shard-{k}"))
}

/// The array script and the merge script, as text.
pub fn scripts(r: &Request) -> (String, String) {
    let n = r.tasks;
    let dir = r.dir;
    let mut head = String::new();
    if let Some(p) = r.partition {
        head.push_str(&format!("#SBATCH --partition={p}\n"));
    }
    if let Some(t) = r.time {
        head.push_str(&format!("#SBATCH --time={t}\n"));
    }
    for o in r.sbatch_options {
        head.push_str(&format!("#SBATCH {o}\n"));
    }
    let estimate = r
        .estimate
        .map(|e| {
            format!(
                "# Estimated time per shard (gdrsim check's cost estimate): {}.\n",
                e.line()
            )
        })
        .unwrap_or_default();
    let config = r
        .config
        .map(|c| format!(" {}", path(c)))
        .unwrap_or_default();
    let seed = r.seed.map(|s| format!(" --seed {s}")).unwrap_or_default();
    let array_script = dir.join("gdrsim-array.sbatch");
    let merge_script = dir.join("gdrsim-merge.sbatch");
    let array = format!(
        "#!/bin/bash\n\
         # gdrsim study {name:?} as a Slurm job array of {n} tasks: task K runs shard K/{n}.\n\
         # Written by: gdrsim slurm. Submit with sbatch, then the merge with\n\
         #   sbatch --dependency=afterok:<array job id> {merge}\n\
         {estimate}\
         #SBATCH --job-name=gdrsim-{name}\n\
         #SBATCH --array=0-{last}\n\
         #SBATCH --cpus-per-task={cpus}\n\
         #SBATCH --output={logs}/shard-%a.out\n\
         {head}\
         set -uo pipefail\n\
         k=${{SLURM_ARRAY_TASK_ID:?run this script with sbatch: it reads SLURM_ARRAY_TASK_ID}}\n\
         if ! {bin} run{config}{seed} --shard \"$k/{n}\" --jobs {cpus} --quiet --out {shards}/shard-\"$k\"; then\n\
         \x20   echo \"gdrsim: shard $k/{n} failed; the merge job is cancelled. Rerun this shard alone:\" >&2\n\
         \x20   echo \"  sbatch --array=$k {array_q}\" >&2\n\
         \x20   echo \"then, when it has finished, the merge:\" >&2\n\
         \x20   echo \"  sbatch {merge}\" >&2\n\
         \x20   exit 1\n\
         fi\n",
        name = r.name,
        last = n - 1,
        cpus = r.cpus_per_task,
        logs = path(&dir.join("logs")),
        bin = path(r.bin),
        shards = path(&dir.join("shards")),
        array_q = path(&array_script),
        merge = path(&merge_script),
    );
    let all: Vec<String> = (0..n).map(|k| path(&shard_dir(dir, k))).collect();
    let merge = format!(
        "#!/bin/bash\n\
         # Merges the {n} shards of gdrsim study {name:?} into {result}.\n\
         # Submitted after the array with --dependency=afterok:<array job id>; cancelled, not\n\
         # left pending, when a task failed.\n\
         #SBATCH --job-name=gdrsim-{name}-merge\n\
         #SBATCH --kill-on-invalid-dep=yes\n\
         #SBATCH --output={logs}/merge.out\n\
         {head}\
         set -euo pipefail\n\
         exec {bin} merge --quiet {result} {all}\n",
        name = r.name,
        result = path(&dir.join("result")),
        logs = path(&dir.join("logs")),
        bin = path(r.bin),
        all = all.join(" "),
    );
    (array, merge)
}

/// Writes the scripts (and the folders their jobs write into); returns the two script paths.
pub fn write(r: &Request) -> Result<(PathBuf, PathBuf)> {
    for d in [
        r.dir.to_path_buf(),
        r.dir.join("logs"),
        r.dir.join("shards"),
    ] {
        std::fs::create_dir_all(&d).with_context(|| format!("creating folder {}", d.display()))?;
    }
    let (array, merge) = scripts(r);
    let a = r.dir.join("gdrsim-array.sbatch");
    let m = r.dir.join("gdrsim-merge.sbatch");
    atomic::write(&a, array.as_bytes())?;
    atomic::write(&m, merge.as_bytes())?;
    Ok((a, m))
}

/// Runs `sbatch --parsable ARGS` and returns the job id it prints ("123" or "123;cluster").
fn sbatch(args: &[&str]) -> Result<String> {
    let o = Command::new("sbatch")
        .arg("--parsable")
        .args(args)
        .output()
        .context("running sbatch (is Slurm installed and on PATH?)")?;
    if !o.status.success() {
        bail!(
            "sbatch {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        );
    }
    let out = String::from_utf8_lossy(&o.stdout);
    let id = out.trim().split(';').next().unwrap_or("").to_string();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
        bail!("sbatch printed no job id: {:?}", out.trim());
    }
    Ok(id)
}

/// Submits the array, then the merge depending on it; returns (array id, merge id).
pub fn submit(array: &Path, merge: &Path) -> Result<(String, String)> {
    let a = sbatch(&[&array.display().to_string()])?;
    let m = sbatch(&[
        &format!("--dependency=afterok:{a}"),
        &merge.display().to_string(),
    ])?;
    Ok((a, m))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(dir: &Path) -> Request<'_> {
        Request {
            config: Some(Path::new("/data/my study.toml")),
            name: "study",
            tasks: 4,
            partition: Some("gpu"),
            time: Some("01:00:00"),
            cpus_per_task: 2,
            dir,
            bin: Path::new("/opt/gdrsim"),
            seed: None,
            sbatch_options: &[],
            estimate: None,
        }
    }

    #[test]
    fn extra_sbatch_options_and_the_estimate_go_into_the_scripts() {
        let dir = Path::new("/scratch/run");
        let opts = ["--account=proj".to_string(), "--qos=high".to_string()];
        let est = Estimate {
            shards: vec![(3, 2_000_000, 90.0), (2, 1_000_000, 30.0)],
            cpus: 2,
        };
        let mut r = request(dir);
        r.sbatch_options = &opts;
        r.estimate = Some(&est);
        assert!(check(&r).is_ok());
        let (array, merge) = scripts(&r);
        for s in [&array, &merge] {
            assert!(
                s.contains("#SBATCH --account=proj\n#SBATCH --qos=high\n"),
                "{s}"
            );
        }
        assert!(
            array.contains(
                "# Estimated time per shard (gdrsim check's cost estimate): about 2 min for the \
                 longest (shard 0: 3 points, 2.0e6 events on 2 CPUs); the shortest about 30.0 s.\n"
            ),
            "{array}"
        );
        // The comment sits above the #SBATCH lines, which sbatch reads up to the first command.
        assert!(array.find("# Estimated").unwrap() < array.find("#SBATCH").unwrap());
        assert_eq!(est.longest(), 0);
    }

    #[test]
    fn bad_sbatch_options_are_refused_with_what_to_do() {
        let dir = Path::new("/x");
        for (bad, says) in [
            ("account=proj", "one word"),
            ("--account proj", "one word"),
            ("-", "one word"),
            ("--array=0-9", "use --tasks"),
            ("--time=01:00:00", "use --time"),
            ("-pgpu", "use --partition"),
            ("--output=x.log", "logs under --out"),
        ] {
            let opts = [bad.to_string()];
            let mut r = request(dir);
            r.sbatch_options = &opts;
            let e = check(&r).unwrap_err().to_string();
            assert!(
                e.contains("--sbatch-option") && e.contains(says),
                "{bad}: {e}"
            );
        }
        for good in [
            "--account=proj",
            "--qos=high",
            "--constraint=h100&ib",
            "-Aproj",
        ] {
            let opts = [good.to_string()];
            let mut r = request(dir);
            r.sbatch_options = &opts;
            assert!(check(&r).is_ok(), "{good}");
        }
    }

    #[test]
    fn the_array_runs_one_shard_per_task_and_the_merge_cannot_hang() {
        let dir = Path::new("/scratch/run");
        let (array, merge) = scripts(&request(dir));
        assert!(array.contains("#SBATCH --array=0-3\n"));
        assert!(array.contains("#SBATCH --partition=gpu\n#SBATCH --time=01:00:00\n"));
        assert!(array.contains(
            "/opt/gdrsim run '/data/my study.toml' --shard \"$k/4\" --jobs 2 --quiet --out /scratch/run/shards/shard-\"$k\""
        ));
        assert!(array.contains("sbatch --array=$k /scratch/run/gdrsim-array.sbatch"));
        assert!(merge.contains("#SBATCH --kill-on-invalid-dep=yes\n"));
        assert!(merge.contains(
            "merge --quiet /scratch/run/result /scratch/run/shards/shard-0 /scratch/run/shards/shard-1 \
             /scratch/run/shards/shard-2 /scratch/run/shards/shard-3\n"
        ));
    }

    #[test]
    fn bad_requests_are_refused() {
        let dir = Path::new("/x");
        let mut r = request(dir);
        r.tasks = 0;
        assert!(check(&r).unwrap_err().to_string().contains("--tasks"));
        let mut r = request(dir);
        r.partition = Some("a b");
        assert!(check(&r).is_err());
        assert!(check(&request(dir)).is_ok());
        assert_eq!(quote("it's"), "'it'\\''s'");
    }
}

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
    for (key, v) in [("--partition", r.partition), ("--time", r.time)] {
        if let Some(v) = v
            && (v.is_empty() || v.chars().any(|c| c.is_whitespace() || c.is_control()))
        {
            return Err(cli(key, "a Slurm value without spaces", format!("{v:?}")));
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

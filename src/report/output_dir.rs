//! A run's output folder as one unit. The run writes into a fresh hidden sibling
//! (`.NAME.gdrsim-tmp-PID-N`), adds a manifest of what it wrote, then swaps it into place, so a
//! reader, a crash or a `kill -9` finds the old folder or the new one whole, never a mix and
//! never a file of an earlier run that this one did not ask for. A lock file beside the folder
//! (`.NAME.gdrsim.lock`, holding the writer's pid) refuses a second concurrent run into it; a
//! lock or temporary folder left by a process that no longer exists is cleared.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::config::ConfigError;

/// The manifest's file name inside an output folder.
pub const MANIFEST: &str = "manifest.json";

/// A folder being written: held by its lock until committed or dropped.
pub struct OutputDir {
    dir: PathBuf,
    tmp: PathBuf,
    lock: PathBuf,
    done: bool,
}

/// What the manifest records of the run.
pub struct RunRecord<'a> {
    /// The config's `name`.
    pub config_name: &'a str,
    /// The config's seed, from which every random stream of the run is drawn.
    pub seed: u64,
    /// The command line that reproduces the run.
    pub command: &'a str,
}

impl OutputDir {
    /// Takes `dir` for this run before any work: refuses a folder another live gdrsim run is
    /// writing, and a folder that holds files but is not a gdrsim output (it would be replaced).
    pub fn claim(dir: &Path) -> Result<OutputDir> {
        usable_output(dir)?;
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| !n.is_empty() && *n != "." && *n != "..")
            .ok_or_else(|| refuse(dir, "a folder with a name of its own".into()))?
            .to_string();
        let parent = match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&parent)
            .with_context(|| format!("creating folder {}", parent.display()))?;
        if dir.is_dir() && !is_gdrsim_output(dir)? {
            return Err(refuse(
                dir,
                "holds files that are not a gdrsim run's output (it would be replaced)".into(),
            )
            .into());
        }
        let lock = parent.join(format!(".{name}.gdrsim.lock"));
        take_lock(&lock, dir)?;
        clear_stale(&parent, &name);
        let tmp = parent.join(format!(
            ".{name}.gdrsim-tmp-{}-{}",
            std::process::id(),
            unique()
        ));
        let out = OutputDir {
            dir: dir.to_path_buf(),
            tmp,
            lock,
            done: false,
        };
        fs::create_dir(&out.tmp)
            .with_context(|| format!("creating folder {}", out.tmp.display()))?;
        Ok(out)
    }

    /// Where the run writes its files.
    pub fn path(&self) -> &Path {
        &self.tmp
    }

    /// Writes the manifest of `files` (paths inside [`Self::path`]) and puts the folder in place.
    pub fn commit(mut self, run: &RunRecord, files: &[PathBuf]) -> Result<PathBuf> {
        let mut entries = Vec::new();
        for f in files {
            let bytes = fs::read(f).with_context(|| format!("reading {}", f.display()))?;
            let name = f
                .strip_prefix(&self.tmp)
                .unwrap_or(f)
                .to_string_lossy()
                .into_owned();
            entries.push(serde_json::json!({
                "name": name,
                "bytes": bytes.len(),
                "fnv1a64": format!("{:016x}", crate::seed::fnv1a(&bytes)),
            }));
        }
        let config = fs::read(self.tmp.join("config.toml")).unwrap_or_default();
        let manifest = serde_json::json!({
            "gdrsim": env!("CARGO_PKG_VERSION"),
            "config": run.config_name,
            "config_fnv1a64": format!("{:016x}", crate::seed::fnv1a(&config)),
            "seed": run.seed,
            "command": run.command,
            "files": entries,
        });
        let text = serde_json::to_string_pretty(&manifest)? + "\n";
        let mut f = fs::File::create(self.tmp.join(MANIFEST))?;
        f.write_all(text.as_bytes())?;
        f.sync_all().ok();
        // Swap: the old folder aside, the new one in, the old one removed.
        let old = self.tmp.with_file_name(format!(
            "{}-old",
            self.tmp
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("out")
        ));
        let had_old = self.dir.exists();
        if had_old {
            fs::rename(&self.dir, &old)
                .with_context(|| format!("moving the previous {} aside", self.dir.display()))?;
        }
        fs::rename(&self.tmp, &self.dir).with_context(|| {
            format!("renaming {} to {}", self.tmp.display(), self.dir.display())
        })?;
        if had_old {
            let _ = fs::remove_dir_all(&old);
        }
        self.done = true;
        Ok(self.dir.clone())
    }
}

impl Drop for OutputDir {
    fn drop(&mut self) {
        if !self.done {
            let _ = fs::remove_dir_all(&self.tmp);
        }
        let _ = fs::remove_file(&self.lock);
    }
}

/// Bad input before any work: the output folder must be one gdrsim can create and write into
/// (the run writes it only at the end, after simulating everything).
fn usable_output(dir: &Path) -> Result<(), ConfigError> {
    let bad = |why: String| refuse(dir, why);
    if dir.exists() && !dir.is_dir() {
        return Err(bad("exists and is not a folder".into()));
    }
    // The nearest existing ancestor must be a writable folder.
    let mut at = dir.to_path_buf();
    while !at.exists() {
        match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => at = p.to_path_buf(),
            _ => {
                at = PathBuf::from(".");
                break;
            }
        }
    }
    if !at.is_dir() {
        return Err(bad(format!("{} is not a folder", at.display())));
    }
    let probe = at.join(format!(".gdrsim-probe-{}", std::process::id()));
    match std::fs::write(&probe, b"") {
        Ok(()) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(bad(format!("cannot write in {}: {e}", at.display()))),
    }
}

/// Bad input before any work: an output file (`--out`, `--csv`: named by `key`) goes into an
/// existing folder; a mistyped path is not silently created; and it is not a folder itself,
/// which the write would fail on only after the work.
pub fn usable_file(file: &Path, key: &str) -> Result<(), ConfigError> {
    if file.is_dir() {
        return Err(ConfigError::new(
            "command line",
            key,
            "a file to write, not a folder",
            format!("{}: an existing folder", file.display()),
        ));
    }
    let parent = file.parent().filter(|p| !p.as_os_str().is_empty());
    match parent.filter(|p| !p.is_dir()) {
        Some(p) => Err(ConfigError::new(
            "command line",
            key,
            "a file in an existing folder",
            format!("{}: no folder {}", file.display(), p.display()),
        )),
        None => Ok(()),
    }
}

fn refuse(dir: &Path, why: String) -> ConfigError {
    ConfigError::new(
        "--out",
        "",
        "an output folder gdrsim can create and write",
        format!("{}: {why}", dir.display()),
    )
}

/// An empty folder, or one a gdrsim run wrote (its manifest, or an earlier version's
/// results.csv and config.toml).
fn is_gdrsim_output(dir: &Path) -> Result<bool> {
    let mut entries = fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    if entries.next().is_none() {
        return Ok(true);
    }
    Ok(dir.join(MANIFEST).is_file()
        || (dir.join("results.csv").is_file() && dir.join("config.toml").is_file()))
}

/// Creates the lock file, or clears one whose process is gone; refuses a live one.
fn take_lock(lock: &Path, dir: &Path) -> Result<()> {
    for _ in 0..2 {
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(lock)
        {
            Ok(mut f) => {
                write!(f, "{}", std::process::id())?;
                return Ok(());
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let holder = fs::read_to_string(lock).unwrap_or_default();
                match holder.trim().parse::<u32>() {
                    Ok(pid) if alive(pid) => {
                        return Err(refuse(
                            dir,
                            format!(
                                "another gdrsim run (pid {pid}) is writing it; wait for it to \
                                 finish or choose another --out"
                            ),
                        )
                        .into());
                    }
                    // Its writer is gone (killed): the lock is stale.
                    _ => {
                        let _ = fs::remove_file(lock);
                    }
                }
            }
            Err(e) => {
                return Err(anyhow::Error::new(e).context(format!("creating {}", lock.display())));
            }
        }
    }
    Err(refuse(
        dir,
        format!("its lock {} could not be taken", lock.display()),
    )
    .into())
}

/// Removes temporary folders of `name` left by runs whose process is gone.
fn clear_stale(parent: &Path, name: &str) {
    let prefix = format!(".{name}.gdrsim-tmp-");
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(rest) = file.to_str().and_then(|f| f.strip_prefix(&prefix)) else {
            continue;
        };
        let pid = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|p| !alive(p)) {
            let _ = fs::remove_dir_all(e.path());
        }
    }
}

/// Whether process `pid` exists (Linux: /proc; elsewhere a lock is never taken as stale).
fn alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    if Path::new("/proc/self").exists() {
        Path::new(&format!("/proc/{pid}")).exists()
    } else {
        true
    }
}

/// A number unique within this process.
fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("gdrsim-outdir-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_committed_folder_replaces_the_old_one_whole() {
        let base = scratch("commit");
        let dir = base.join("out");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("results.csv"), "old").unwrap();
        fs::write(dir.join("config.toml"), "old").unwrap();
        fs::write(dir.join("links.svg"), "a chart no longer asked for").unwrap();
        let out = OutputDir::claim(&dir).unwrap();
        // A second claim while the first holds the folder is refused.
        let again = OutputDir::claim(&dir).err().expect("refused").to_string();
        assert!(again.contains("another gdrsim run"), "{again}");
        let f = out.path().join("results.csv");
        fs::write(&f, "new").unwrap();
        fs::write(out.path().join("config.toml"), "cfg").unwrap();
        let run = RunRecord {
            config_name: "t",
            seed: 7,
            command: "test",
        };
        out.commit(&run, &[f]).unwrap();
        assert_eq!(fs::read_to_string(dir.join("results.csv")).unwrap(), "new");
        assert!(
            !dir.join("links.svg").exists(),
            "stale files of the old run are gone"
        );
        let m: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(dir.join(MANIFEST)).unwrap()).unwrap();
        assert_eq!(m["seed"], 7);
        assert_eq!(m["files"][0]["name"], "results.csv");
        assert_eq!(m["files"][0]["bytes"], 3);
        // Nothing else is left beside it: no lock, no temporary folder.
        let left: Vec<_> = fs::read_dir(&base)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("out")]);
        fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_dropped_run_leaves_the_old_folder_and_a_dead_writers_lock_is_cleared() {
        let base = scratch("drop");
        let dir = base.join("out");
        // A lock and a temporary folder of a process that does not exist (pid 0 is never one).
        fs::write(base.join(".out.gdrsim.lock"), "4000000000").unwrap();
        fs::create_dir_all(base.join(".out.gdrsim-tmp-4000000000-0")).unwrap();
        let out = OutputDir::claim(&dir).unwrap();
        assert!(!base.join(".out.gdrsim-tmp-4000000000-0").exists());
        drop(out);
        assert!(!dir.exists());
        assert_eq!(fs::read_dir(&base).unwrap().count(), 0);
        // A folder of someone else's files is not replaced.
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("thesis.tex"), "precious").unwrap();
        let e = OutputDir::claim(&dir).err().expect("refused").to_string();
        assert!(e.contains("not a gdrsim run's output"), "{e}");
        fs::remove_dir_all(&base).unwrap();
    }
}

//! A run's output folder as one unit. The run writes into a fresh hidden sibling
//! (`.NAME.gdrsim-tmp-PID-N`), adds a manifest of what it wrote, then swaps it into place, so a
//! reader, a crash or a `kill -9` finds the old folder or the new one whole, never a mix and
//! never a file of an earlier run that this one did not ask for. An OS lock (flock) on a file
//! beside the folder (`.NAME.gdrsim.lock`, naming the writer's pid, host and boot for the
//! message) refuses a second concurrent run into it, on this machine or another sharing the file
//! system (NFS and Lustre honour it); the OS drops the lock of a process that dies, so under it
//! any temporary folder of the name is a dead run's and is cleared.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::config::ConfigError;

/// The manifest's file name inside an output folder.
pub const MANIFEST: &str = "manifest.json";

/// Longest output folder name, in bytes: its temporary sibling `.NAME.gdrsim-tmp-PID-N-old`
/// adds at most 48 (a 10-digit pid, a 20-digit counter) and file systems allow 255.
const MAX_NAME_BYTES: usize = 200;

/// A folder being written: held by its lock until committed or dropped.
pub struct OutputDir {
    dir: PathBuf,
    tmp: PathBuf,
    lock: PathBuf,
    /// The open lock file: the OS lock lasts as long as it is open.
    _held: fs::File,
    done: bool,
}

/// What the manifest records of the run.
pub struct RunRecord<'a> {
    /// The config's `name`.
    pub config_name: &'a str,
    /// The config's seed, from which every random stream of the run is drawn; None for a
    /// folder no simulation wrote (`gdrsim compare`'s), recorded as null.
    pub seed: Option<u64>,
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
        if name.len() > MAX_NAME_BYTES {
            return Err(refuse(
                dir,
                format!(
                    "a name of {} bytes, where at most {MAX_NAME_BYTES} leave room for the \
                     temporary sibling and lock gdrsim names after it within a file system's \
                     255",
                    name.len()
                ),
            )
            .into());
        }
        let parent = parent_of(dir);
        fs::create_dir_all(&parent)
            .with_context(|| format!("creating folder {}", parent.display()))?;
        if dir.is_dir()
            && let Some(why) = not_replaceable(dir)?
        {
            return Err(refuse(dir, format!("{why}; it would be replaced")).into());
        }
        let lock = parent.join(format!(".{name}.gdrsim.lock"));
        let held = take_lock(&lock, dir)?;
        restore_interrupted(&parent, &name, dir);
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
            _held: held,
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
        // Swap: the old folder aside, the new one in, the old one removed. A kill between
        // the two renames leaves no folder and the old one aside, which the next claim puts
        // back (restore_interrupted).
        let old = aside(&self.tmp);
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
    // The run writes a sibling folder and renames it into place: the nearest existing
    // ancestor of the folder's parent must be a writable folder. The probe goes there, never
    // into the folder itself, which may be another run's output not yet locked.
    let mut at = parent_of(dir);
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

/// The folder a run into `dir` creates its temporary sibling and lock in: `dir`'s parent.
fn parent_of(dir: &Path) -> PathBuf {
    match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
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

/// Why `dir` may not be replaced by a run's output, or None where it may: it is empty, or a
/// gdrsim run wrote it and nothing was added since, so replacing it loses none of the user's
/// files. A folder with no manifest (another program's, or one from before manifests), a
/// manifest gdrsim did not write, or a file its manifest does not list (a file the user put
/// there) is kept. Files the manifest lists but the folder lacks lose nothing and are allowed.
fn not_replaceable(dir: &Path) -> Result<Option<String>> {
    let mut files = Vec::new();
    list_files(dir, Path::new(""), &mut files)?;
    if files.is_empty() {
        return Ok(None);
    }
    let manifest = dir.join(MANIFEST);
    if !manifest.is_file() {
        return Ok(Some(format!(
            "holds files but no {MANIFEST} of a gdrsim run (e.g. {})",
            files[0]
        )));
    }
    let text = fs::read_to_string(&manifest).unwrap_or_default();
    let listed: Option<Vec<String>> = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .filter(|m| m["gdrsim"].is_string())
        .and_then(|m| {
            let names = m["files"].as_array()?.iter();
            names
                .map(|f| f["name"].as_str().map(String::from))
                .collect()
        });
    let Some(listed) = listed else {
        return Ok(Some(format!(
            "its {MANIFEST} is not one a gdrsim run wrote"
        )));
    };
    Ok(files
        .iter()
        .find(|f| **f != MANIFEST && !listed.contains(f))
        .map(|f| format!("holds {f}, which its {MANIFEST} does not list")))
}

/// The files under `dir` (recursively; a link counts as a file), as paths relative to it with
/// `/` between folders, sorted.
fn list_files(dir: &Path, rel: &Path, out: &mut Vec<String>) -> Result<()> {
    let here = dir.join(rel);
    let entries = fs::read_dir(&here).with_context(|| format!("reading {}", here.display()))?;
    let mut names: Vec<_> = entries.flatten().collect();
    names.sort_by_key(|e| e.file_name());
    for e in names {
        let path = rel.join(e.file_name());
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            list_files(dir, &path, out)?;
        } else {
            let parts: Vec<_> = path.iter().map(|p| p.to_string_lossy()).collect();
            out.push(parts.join("/"));
        }
    }
    Ok(())
}

/// Takes the OS lock on `lock` (created if missing) and writes who holds it; refuses where
/// another process holds it. A lock file left by a run that died is not locked, whatever pid
/// it names, so it neither blocks a later run nor is taken for a live one when its pid is
/// reused. The file is checked to still be the one at `lock` after locking: a run that ends
/// removes it while it holds it, and a lock on a removed file would guard nothing.
fn take_lock(lock: &Path, dir: &Path) -> Result<fs::File> {
    use std::os::unix::fs::MetadataExt as _;
    for _ in 0..3 {
        let mut f = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(lock)
            .with_context(|| format!("creating {}", lock.display()))?;
        match f.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                let holder = fs::read_to_string(lock).unwrap_or_default();
                let holder = holder.trim();
                let who = if holder.is_empty() {
                    "another gdrsim run"
                } else {
                    holder
                };
                return Err(refuse(
                    dir,
                    format!(
                        "{who} is writing it (lock {}); wait for it to finish or choose \
                         another --out",
                        lock.display()
                    ),
                )
                .into());
            }
            Err(fs::TryLockError::Error(e)) => {
                return Err(anyhow::Error::new(e).context(format!("locking {}", lock.display())));
            }
        }
        let same = match (f.metadata(), fs::metadata(lock)) {
            (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
            _ => false,
        };
        if !same {
            continue;
        }
        f.set_len(0)?;
        write!(f, "{}", holder_line())?;
        return Ok(f);
    }
    Err(refuse(
        dir,
        format!("its lock {} could not be taken", lock.display()),
    )
    .into())
}

/// Who holds a lock, for the message a second run gets: `gdrsim run (pid P on HOST, boot B)`.
fn holder_line() -> String {
    let read = |p: &str| fs::read_to_string(p).map(|s| s.trim().to_string()).ok();
    let host = read("/proc/sys/kernel/hostname").unwrap_or_else(|| "this host".into());
    let boot = read("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    format!(
        "another gdrsim run (pid {} on {host}, boot {boot})",
        std::process::id()
    )
}

/// Where a commit from temporary folder `tmp` moves the previous folder while it swaps.
fn aside(tmp: &Path) -> PathBuf {
    let name = tmp.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    tmp.with_file_name(format!("{name}-old"))
}

/// Puts back the previous folder `dir` where a run was killed between its commit's two
/// renames: the folder is missing and its old contents wait aside (`aside`). Called under the
/// lock, so the run that left them is gone. Without this the next run cleared them with the
/// other stale folders, and a second interrupted run lost both the old and the new results.
fn restore_interrupted(parent: &Path, name: &str, dir: &Path) {
    if dir.exists() {
        return;
    }
    let mut aside: Vec<PathBuf> = temporaries(parent, name)
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with("-old"))
        .collect();
    aside.sort();
    if let Some(old) = aside.first() {
        let _ = fs::rename(old, dir);
    }
}

/// Removes the temporary folders of `name`. Called under the lock: every one is a dead run's
/// (a live run holds the lock from before it makes its temporary folder until it is done).
fn clear_stale(parent: &Path, name: &str) {
    for t in temporaries(parent, name) {
        let _ = fs::remove_dir_all(t);
    }
}

/// The temporary folders of runs into `parent/name` (`.NAME.gdrsim-tmp-...`).
fn temporaries(parent: &Path, name: &str) -> Vec<PathBuf> {
    let prefix = format!(".{name}.gdrsim-tmp-");
    let Ok(entries) = fs::read_dir(parent) else {
        return Vec::new();
    };
    (entries.flatten())
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|f| f.starts_with(&prefix))
        })
        .map(|e| e.path())
        .collect()
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

    /// Nothing but the folder `out` is left in `base`: no lock, no temporary folder.
    fn only_out_left(base: &Path) {
        let left: Vec<_> = (fs::read_dir(base).unwrap().flatten())
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("out")]);
    }

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
        let listed = r#"{"gdrsim": "0.1.0", "files": [{"name": "results.csv"},
            {"name": "config.toml"}, {"name": "links.svg"}]}"#;
        fs::write(dir.join(MANIFEST), listed).unwrap();
        let out = OutputDir::claim(&dir).unwrap();
        // A second claim while the first holds the folder is refused.
        let again = OutputDir::claim(&dir).err().expect("refused").to_string();
        assert!(again.contains("another gdrsim run"), "{again}");
        let f = out.path().join("results.csv");
        fs::write(&f, "new").unwrap();
        fs::write(out.path().join("config.toml"), "cfg").unwrap();
        let run = RunRecord {
            config_name: "t",
            seed: Some(7),
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
        only_out_left(&base);
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
        assert!(e.contains("no manifest.json of a gdrsim run"), "{e}");
        fs::remove_dir_all(&base).unwrap();
    }

    /// Issue #27 item 11: a folder is replaced only where its manifest, one gdrsim wrote,
    /// lists every file it holds. A manifest.json alone, or results.csv and config.toml
    /// alone, used to pass, and the run deleted the user's other files with the folder.
    #[test]
    fn only_a_folder_whose_manifest_lists_its_files_is_replaced() {
        let base = scratch("replace");
        let dir = base.join("out");
        let manifest = r#"{"gdrsim": "0.1.0", "files": [{"name": "results.csv"}]}"#;
        // (the folder's files and their contents, why a claim of it is refused)
        type Case<'a> = (&'a [(&'a str, &'a str)], Option<&'a str>);
        let cases: [Case; 6] = [
            (&[], None),
            (&[("results.csv", "r"), ("manifest.json", manifest)], None),
            // A listed file the user deleted loses nothing.
            (&[("manifest.json", manifest)], None),
            (
                &[
                    ("results.csv", "r"),
                    ("manifest.json", manifest),
                    ("notes/thesis.tex", "x"),
                ],
                Some("holds notes/thesis.tex, which its manifest.json does not list"),
            ),
            (
                &[("thesis.tex", "x"), ("manifest.json", "{}")],
                Some("not one a gdrsim run wrote"),
            ),
            (
                &[("results.csv", "r"), ("config.toml", "c")],
                Some("no manifest.json of a gdrsim run (e.g. config.toml)"),
            ),
        ];
        for (files, refused) in cases {
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            for (name, body) in files {
                let f = dir.join(name);
                fs::create_dir_all(f.parent().unwrap()).unwrap();
                fs::write(f, body).unwrap();
            }
            match (OutputDir::claim(&dir), refused) {
                (Ok(out), None) => drop(out),
                (Err(e), Some(why)) => {
                    let e = e.to_string();
                    assert!(e.contains(why) && e.contains("it would be replaced"), "{e}");
                    for (name, body) in files {
                        assert_eq!(fs::read_to_string(dir.join(name)).unwrap(), *body);
                    }
                }
                (r, why) => panic!("{files:?}: {:?}, expected {why:?}", r.err()),
            }
        }
        fs::remove_dir_all(&base).unwrap();
    }

    /// Issue #27 item 13: a run killed between its commit's two renames (the old folder
    /// moved aside, the new one not yet in place) leaves no folder; the next run into it puts
    /// the old one back before it clears stale folders, so a second interruption loses nothing
    /// (it used to delete both). The window is forced by leaving exactly what the kill leaves:
    /// the complete new temporary folder and the old folder aside, under a dead process.
    #[test]
    fn a_run_killed_between_the_renames_gets_its_old_folder_back() {
        let base = scratch("killed-swap");
        let dir = base.join("out");
        let tmp = base.join(".out.gdrsim-tmp-4000000000-0");
        let old = aside(&tmp);
        for (d, body) in [(&tmp, "new"), (&old, "old")] {
            fs::create_dir_all(d).unwrap();
            fs::write(d.join("results.csv"), body).unwrap();
            let m = r#"{"gdrsim": "0.1.0", "files": [{"name": "results.csv"}]}"#;
            fs::write(d.join(MANIFEST), m).unwrap();
        }
        // A second run into it, itself interrupted before its commit.
        let out = OutputDir::claim(&dir).unwrap();
        assert_eq!(fs::read_to_string(dir.join("results.csv")).unwrap(), "old");
        drop(out);
        assert_eq!(fs::read_to_string(dir.join("results.csv")).unwrap(), "old");
        only_out_left(&base);
        fs::remove_dir_all(&base).unwrap();
    }

    /// Issue #27 item 12: the lock is the OS's, not a pid in a file. A lock file whose process
    /// died (here: one naming a live pid, as a reused pid would, but locked by nobody) does
    /// not block the next run, where the pid check refused every run until that process ended;
    /// a lock held through another open file (as a run on another host holds it over NFS) is
    /// refused whatever pid its file names.
    #[test]
    fn the_lock_is_the_operating_systems_not_a_pid() {
        let base = scratch("flock");
        let dir = base.join("out");
        let lock = base.join(".out.gdrsim.lock");
        fs::write(&lock, "1").unwrap();
        let out = OutputDir::claim(&dir).expect("a lock nobody holds does not block");
        drop(out);
        assert!(!lock.exists());
        let other = fs::File::create(&lock).unwrap();
        other.try_lock().unwrap();
        fs::write(&lock, "a run on another host").unwrap();
        let e = OutputDir::claim(&dir).err().expect("refused").to_string();
        assert!(e.contains("a run on another host is writing it"), "{e}");
        drop(other);
        drop(OutputDir::claim(&dir).expect("free once the holder is gone"));
        fs::remove_dir_all(&base).unwrap();
    }

    /// Issue #27 item 15: an output folder whose name leaves no room for the temporary
    /// sibling's suffix is refused as bad input, exit 2 (it failed with "File name too long",
    /// exit 1); 200 bytes still work, commit included.
    #[test]
    fn an_output_name_too_long_for_its_temporary_sibling_is_refused() {
        let base = scratch("long-name");
        // 240 bytes: its temporary sibling's name is over 255 (exit 1, "File name too long").
        let e = OutputDir::claim(&base.join("é".repeat(120)))
            .err()
            .expect("refused")
            .to_string();
        assert!(e.contains("a name of 240 bytes, where at most 200"), "{e}");
        let dir = base.join("x".repeat(200));
        let out = OutputDir::claim(&dir).unwrap();
        let f = out.path().join("results.csv");
        fs::write(&f, "r").unwrap();
        let run = RunRecord {
            config_name: "t",
            seed: Some(1),
            command: "test",
        };
        out.commit(&run, &[f]).unwrap();
        drop(OutputDir::claim(&dir).unwrap());
        assert_eq!(fs::read_to_string(dir.join("results.csv")).unwrap(), "r");
        fs::remove_dir_all(&base).unwrap();
    }

    /// Issue #27 item 14: the writability probe goes into the folder's parent, where the run
    /// writes, never into an existing output folder before its lock is taken.
    #[test]
    fn the_probe_goes_beside_the_folder_not_into_it() {
        assert_eq!(parent_of(Path::new("a/b/out")), PathBuf::from("a/b"));
        assert_eq!(parent_of(Path::new("out")), PathBuf::from("."));
        let base = scratch("probe");
        let dir = base.join("out");
        fs::create_dir_all(&dir).unwrap();
        usable_output(&dir).unwrap();
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
        fs::remove_dir_all(&base).unwrap();
    }
}

//! Atomic file output: write to a temporary sibling, then rename over the target.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Writes `bytes` to `path` atomically (temporary file in the same folder, then rename).
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).with_context(|| format!("creating folder {}", dir.display()))?;
    let tmp = temp_name(path);
    let result = (|| -> Result<()> {
        let mut f =
            fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        f.write_all(bytes)
            .with_context(|| format!("writing {}", tmp.display()))?;
        f.sync_all().ok();
        fs::rename(&tmp, path)
            .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Creates a file through `fill` (which writes to the given temporary path, e.g. a plotting
/// backend that insists on a path of its own), then renames it into place.
pub fn write_with(path: &Path, fill: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).with_context(|| format!("creating folder {}", dir.display()))?;
    let tmp = temp_name(path);
    let result = fill(&tmp).and_then(|()| {
        fs::rename(&tmp, path)
            .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
    });
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// `dir/.name.tmp.ext`: hidden, and keeps the extension so format-sniffing writers still work.
fn temp_name(path: &Path) -> PathBuf {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("out");
    let ext = path.extension().and_then(|s| s.to_str()).unwrap_or("tmp");
    path.with_file_name(format!(".{stem}.tmp.{ext}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_fill_leaves_nothing_behind() {
        let dir = std::env::temp_dir().join(format!("gdrsim-atomic-{}", std::process::id()));
        let target = dir.join("x.csv");
        let r = write_with(&target, |tmp| {
            fs::write(tmp, b"partial")?;
            anyhow::bail!("boom")
        });
        assert!(r.is_err());
        assert!(!target.exists());
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
        write(&target, b"ok").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"ok");
        fs::remove_dir_all(&dir).unwrap();
    }
}

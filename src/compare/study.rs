//! One study folder as `compare` takes it: its results.csv rows and the name it goes by.

use std::path::{Path, PathBuf};

use crate::config::ConfigError;
use crate::report::RunInfo;
use crate::report::output_dir::MANIFEST;
use crate::stats::Summary;

/// A study folder, read.
#[derive(Clone, Debug)]
pub struct Study {
    /// The folder, as given on the command line.
    pub dir: PathBuf,
    /// The study's name: the config name its manifest.json (or config.toml) records, else the
    /// folder's name.
    pub name: String,
    /// What tables, columns and legends call it: its name, its folder where two studies share
    /// a name, or the user's `--label`.
    pub label: String,
    /// Its results.csv rows; a sweep variant's rows have the variant in their scenario name
    /// (`PIX [registration=cached]`), as the study's own charts show them.
    pub rows: Vec<Summary>,
    /// What its config.toml says of it (hardware, scenarios with their route ceilings), or
    /// None where that does not load (a folder of another gdrsim version): the charts then
    /// draw no ceilings for it.
    pub info: Option<RunInfo>,
}

/// Reads `dir`'s results.csv (bad input, naming the file, where it is missing or unreadable)
/// and its name.
pub fn read(dir: &Path) -> Result<Study, ConfigError> {
    if !dir.is_dir() {
        return Err(ConfigError::new(
            &dir.display().to_string(),
            "",
            "a study folder written by `gdrsim run` (with its results.csv)",
            if dir.exists() {
                "something that is not a folder"
            } else {
                "no such folder"
            },
        ));
    }
    let rows = crate::report::csv_in::read_results(&dir.join("results.csv"))?;
    if rows.is_empty() {
        return Err(ConfigError::new(
            &dir.join("results.csv").display().to_string(),
            "",
            "a study's results, one row per point",
            "no rows",
        ));
    }
    let rows = crate::report::display_rows(&rows).into_owned();
    let name = name_of(dir);
    let info = crate::config::load(&dir.join("config.toml"))
        .ok()
        .map(|cfg| crate::study::run_info(&cfg, ""));
    Ok(Study {
        dir: dir.to_path_buf(),
        label: name.clone(),
        name,
        rows,
        info,
    })
}

/// The config name a run recorded (manifest.json's `config`, else config.toml's `name`), or
/// the folder's own name.
fn name_of(dir: &Path) -> String {
    let manifest = std::fs::read_to_string(dir.join(MANIFEST))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|m| m["config"].as_str().map(String::from));
    let config = || {
        std::fs::read_to_string(dir.join("config.toml"))
            .ok()
            .and_then(|t| t.parse::<toml::Table>().ok())
            .and_then(|t| t.get("name")?.as_str().map(String::from))
    };
    let folder = || {
        let canon = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        canon
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| dir.display().to_string())
    };
    manifest
        .or_else(config)
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(folder)
}

/// Gives every study its label: `labels[i]` where the user gave one, else its name, or its
/// folder where two studies share a name. Labels must be distinct and not empty (they name
/// compare.csv's columns), and one folder may not be given twice.
pub fn label(studies: &mut [Study], labels: &[String]) -> Result<(), ConfigError> {
    let cli = |expected: &str, found: String| {
        ConfigError::new("command line", "--label", expected, found)
    };
    if labels.len() > studies.len() {
        return Err(cli(
            "at most one --label per study folder, in the folders' order",
            format!("{} labels for {} folders", labels.len(), studies.len()),
        ));
    }
    for (i, s) in studies.iter().enumerate() {
        let canon = |d: &Path| d.canonicalize().unwrap_or_else(|_| d.to_path_buf());
        if let Some(j) = studies[..i]
            .iter()
            .position(|o| canon(&o.dir) == canon(&s.dir))
        {
            return Err(ConfigError::new(
                &s.dir.display().to_string(),
                "",
                "each study folder once",
                format!("the folder of study {} given again", j + 1),
            ));
        }
    }
    let names: Vec<String> = studies.iter().map(|s| s.name.clone()).collect();
    for (i, s) in studies.iter_mut().enumerate() {
        s.label = match labels.get(i) {
            Some(l) => l.trim().to_string(),
            None if names.iter().filter(|n| **n == s.name).count() > 1 => {
                s.dir.display().to_string()
            }
            None => s.name.clone(),
        };
    }
    for (i, s) in studies.iter().enumerate() {
        if s.label.is_empty() {
            return Err(cli(
                "a label with a character other than spaces",
                "\"\"".into(),
            ));
        }
        if let Some(o) = studies[..i].iter().find(|o| o.label == s.label) {
            return Err(cli(
                "a different label for each study",
                format!(
                    "{:?} for both {} and {}",
                    s.label,
                    o.dir.display(),
                    s.dir.display()
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn study(dir: &str, name: &str) -> Study {
        Study {
            dir: PathBuf::from(dir),
            name: name.into(),
            label: name.into(),
            rows: Vec::new(),
            info: None,
        }
    }

    #[test]
    fn labels_are_names_folders_where_names_repeat_or_the_users() {
        let mut s = vec![
            study("out/a", "default"),
            study("out/b", "default"),
            study("out/c", "reg"),
        ];
        label(&mut s, &[]).unwrap();
        let got: Vec<&str> = s.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(got, ["out/a", "out/b", "reg"]);
        label(&mut s, &["machine A".into()]).unwrap();
        assert_eq!(s[0].label, "machine A");
        let e = label(&mut s, &["x".into(), "x".into()]).unwrap_err();
        assert!(
            e.to_string().contains("a different label for each study"),
            "{e}"
        );
        let e = label(&mut s, &[" ".into()]).unwrap_err();
        assert_eq!(e.key, "--label");
        let mut twice = vec![study("out/a", "a"), study("out/a", "a")];
        let e = label(&mut twice, &[]).unwrap_err();
        assert!(
            e.to_string()
                .contains("out/a: expected each study folder once"),
            "{e}"
        );
    }
}

//! Progress of a run's points: on a terminal, a bar with points done, rate and ETA; elsewhere
//! (a batch job's log), one plain line at most every few seconds with the same figures, so a
//! Slurm log shows that a task is alive without filling up. `--quiet` turns both off.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The least time between two plain lines.
const LINE_EVERY: Duration = Duration::from_secs(5);

/// Counts points done and shows it.
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    plain: Option<Plain>,
}

struct Plain {
    total: u64,
    done: AtomicU64,
    start: Instant,
    last: Mutex<Instant>,
    what: String,
    unit: &'static str,
}

impl Progress {
    /// Progress of `total` points; `what` names the run in plain lines ("shard 2/8").
    pub fn new(total: u64, quiet: bool, what: &str) -> Progress {
        Progress::counting(total, quiet, what, "points")
    }

    /// Progress of `total` things called `unit`.
    pub fn counting(total: u64, quiet: bool, what: &str, unit: &'static str) -> Progress {
        if quiet {
            return Progress {
                bar: None,
                plain: None,
            };
        }
        if std::io::stderr().is_terminal() {
            let b = indicatif::ProgressBar::new(total);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                                        &format!("{{spinner}} {{pos}}/{{len}} {unit} {{wide_bar}} {{per_sec}} ETA {{eta}} ({{elapsed}})"),
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            return Progress {
                bar: Some(b),
                plain: None,
            };
        }
        let now = Instant::now();
        Progress {
            bar: None,
            plain: Some(Plain {
                total,
                done: AtomicU64::new(0),
                start: now,
                last: Mutex::new(now),
                what: what.to_string(),
                unit,
            }),
        }
    }

    /// One more point done.
    pub fn inc(&self) {
        if let Some(b) = &self.bar {
            b.inc(1);
        }
        if let Some(p) = &self.plain {
            let done = p.done.fetch_add(1, Ordering::Relaxed) + 1;
            let now = Instant::now();
            let Ok(mut last) = p.last.try_lock() else {
                return;
            };
            if now.duration_since(*last) >= LINE_EVERY && done < p.total {
                *last = now;
                eprintln!("{}", p.line(done, now));
            }
        }
    }

    /// Ends the display: clears the terminal bar (plain lines need no closing line).
    pub fn finish(self) {
        if let Some(b) = self.bar {
            b.finish_and_clear();
        }
    }
}

impl Plain {
    /// "gdrsim: shard 2/8: 120/4000 points, 35.2 points/s, ETA 1m50s".
    fn line(&self, done: u64, now: Instant) -> String {
        let secs = now.duration_since(self.start).as_secs_f64().max(1e-9);
        let rate = done as f64 / secs;
        let eta = if rate > 0.0 {
            fmt_secs((self.total - done) as f64 / rate)
        } else {
            "?".into()
        };
        format!(
            "gdrsim: {}{done}/{} {unit}, {rate:.1} {unit}/s, ETA {eta}",
            if self.what.is_empty() {
                String::new()
            } else {
                format!("{}: ", self.what)
            },
            self.total,
            unit = self.unit
        )
    }
}

/// "45s", "3m05s", "2h10m".
fn fmt_secs(s: f64) -> String {
    let s = s.round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lines_give_points_rate_and_eta() {
        let start = Instant::now();
        let p = Plain {
            total: 100,
            done: AtomicU64::new(0),
            start,
            last: Mutex::new(start),
            what: "shard 1/4".into(),
            unit: "points",
        };
        let line = p.line(25, start + Duration::from_secs(10));
        assert_eq!(
            line,
            "gdrsim: shard 1/4: 25/100 points, 2.5 points/s, ETA 30s"
        );
        assert_eq!(fmt_secs(185.0), "3m05s");
        assert_eq!(fmt_secs(7800.0), "2h10m");
    }
}

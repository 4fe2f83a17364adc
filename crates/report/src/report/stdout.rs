//! Text for stdout, written as every command prints: a closed pipe is the reader's choice, not
//! an error.

use anyhow::Result;

/// Writes `text` to stdout. A closed pipe (`gdrsim topo | head`) ends the output quietly, as it
/// does for every Unix tool, instead of panicking as `print!` would.
pub fn emit(text: &str) -> Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(e).context("writing to stdout"))
        }
        _ => Ok(()),
    }
}

//! `gdrsim walk`: the seed program's walk-through of the traditional (staged) and GPUDirect
//! paths, step by step, on the simulated machine.
//!
//! The seed (a mock C++ program, in Chinese) prints, for each path, the steps and the DMA
//! descriptor the NIC builds, then contrasts the two descriptors' sources. This module renders the
//! same walk from plain data ([`model`]) that gdrsim's `inspect` extracts from one noise-free
//! simulation of each path, so every step carries its simulated start time, duration and
//! component, and the contrast is counted rather than asserted.
//!
//! One layout (`layout`, `contrast`) prints the walk in any language; each language is one
//! implementation of [`phrases::Phrases`] (`en`, `zh`).
//!
//! Times are integer picoseconds in the data and are printed in microseconds rounded to the
//! nanosecond. Addresses are printed as `0x` followed by upper-case hex digits.

mod contrast;
mod en;
mod format;
mod layout;
pub mod model;
pub mod phrases;
mod zh;

pub use format::{hex, us};
pub use model::*;

/// Output language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    /// English.
    En,
    /// Chinese, the seed program's language.
    Zh,
}

impl Lang {
    /// The language of a `--lang` word: "en" or "zh".
    pub fn parse(s: &str) -> Option<Lang> {
        match s {
            "en" => Some(Lang::En),
            "zh" => Some(Lang::Zh),
            _ => None,
        }
    }

    /// The language's words.
    pub fn phrases(self) -> &'static dyn phrases::Phrases {
        match self {
            Lang::En => &en::English,
            Lang::Zh => &zh::Chinese,
        }
    }
}

/// The walk as text in `lang`.
pub fn render(w: &Walk, lang: Lang) -> String {
    layout::render(w, lang.phrases())
}

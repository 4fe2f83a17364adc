//! A table with an entry per channel of the whole topology, whose memory is only the pages a
//! point touches.
//!
//! A fabric keeps per-channel state (who uses a channel, how much of it units hold, the bytes
//! it carried) for every channel of the topology, so that a channel id indexes it directly. A
//! point uses the channels of its routes only: on 128 DGX H100-class hosts that is a few
//! hundred of tens of thousands. `vec![0; n]` for each such table zeroed every entry for every
//! point (the allocator reuses freed heap memory, which it must clear), a setup cost that grew
//! with the topology: 22% of a one-flow study on 128 hosts. A [`Paged`] table allocates a page
//! of [`PAGE`] entries when one of them is first written; reads of an untouched entry see the
//! default. Same values as a plain `Vec`, so outputs do not change.

use std::ops::{Index, IndexMut};

/// Entries per page (a channel's neighbours in id are its host's other channels).
pub const PAGE: usize = 256;

/// A fixed-length table of `T` whose pages are allocated on first write.
#[derive(Clone, Debug)]
pub struct Paged<T> {
    pages: Vec<Option<Box<[T]>>>,
    len: usize,
    /// What an untouched entry reads as.
    default: T,
}

impl<T: Clone + Default> Paged<T> {
    /// `len` entries, each `T::default()`.
    pub fn new(len: usize) -> Self {
        Paged {
            pages: vec![None; len.div_ceil(PAGE)],
            len,
            default: T::default(),
        }
    }

    /// Entries in the table.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the table has no entry.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends `value` (the fluid solver's tests build their resources one by one).
    #[cfg(test)]
    pub fn push(&mut self, value: T) {
        if self.len == self.pages.len() * PAGE {
            self.pages.push(None);
        }
        self.len += 1;
        let i = self.len - 1;
        self[i] = value;
    }
}

impl<T: Clone + Default> Default for Paged<T> {
    fn default() -> Self {
        Paged::new(0)
    }
}

impl<T: Clone + Default> Index<usize> for Paged<T> {
    type Output = T;

    #[inline]
    fn index(&self, i: usize) -> &T {
        assert!(i < self.len, "index {i} beyond a table of {}", self.len);
        match &self.pages[i / PAGE] {
            Some(page) => &page[i % PAGE],
            None => &self.default,
        }
    }
}

impl<T: Clone + Default> IndexMut<usize> for Paged<T> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        assert!(i < self.len, "index {i} beyond a table of {}", self.len);
        let page = self.pages[i / PAGE].get_or_insert_with(|| vec![T::default(); PAGE].into());
        &mut page[i % PAGE]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untouched_entries_read_as_default_and_writes_stay() {
        let mut t: Paged<u64> = Paged::new(3 * PAGE + 5);
        assert_eq!(t.len(), 3 * PAGE + 5);
        t.push(4);
        assert_eq!((t.len(), t[3 * PAGE + 5]), (3 * PAGE + 6, 4));
        assert!(!t.is_empty());
        assert_eq!(t[3 * PAGE + 4], 0);
        t[PAGE + 7] += 9;
        t[PAGE + 7] += 1;
        assert_eq!(t[PAGE + 7], 10);
        assert_eq!(t[PAGE + 8], 0);
        assert_eq!(t[0], 0);
        // Two pages written: the pushed entry's (the last) and entry PAGE + 7's; reads
        // allocate none.
        assert_eq!(t.pages.iter().filter(|p| p.is_some()).count(), 2);
        assert!(t.pages[0].is_none() && t.pages[2].is_none());
    }

    #[test]
    #[should_panic(expected = "beyond a table")]
    fn an_index_past_the_end_is_refused() {
        let t: Paged<u32> = Paged::new(PAGE);
        let _ = t[PAGE];
    }
}

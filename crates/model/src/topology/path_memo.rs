//! The paths a host's breadth-first search found, kept: a cluster's plans ask the same few
//! questions (GPU i to its NIC, GPU i to socket memory) for every one of thousands of flows,
//! and each search costs a walk of the host's graph (16,256 flows of an all-to-all on NCCL's
//! host path spent a seventh of their run in it). A path is a function of the host's graph
//! alone, so what is kept is what a new search would find.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A node of the host's graph, and the edge it was entered by (none for the first).
pub(super) type Hop = (usize, Option<usize>);

/// What a path is asked by: from node, to node, whether ACS redirect applies (peer-to-peer).
/// (Whether NVLink is tried first follows from the nodes: both GPUs.)
pub(super) type PathKey = (usize, usize, bool);

/// The paths found so far (shared by the threads that plan points side by side).
#[derive(Default)]
pub struct PathMemo(Mutex<HashMap<PathKey, Arc<Vec<Hop>>>>);

impl PathMemo {
    /// The path of `key`, found by `search` the first time it is asked.
    pub(super) fn get_or(&self, key: PathKey, search: impl FnOnce() -> Vec<Hop>) -> Arc<Vec<Hop>> {
        if let Some(p) = self.lock().get(&key) {
            return Arc::clone(p);
        }
        // Searched outside the lock; two threads asking at once find the same path.
        let path = Arc::new(search());
        Arc::clone(self.lock().entry(key).or_insert(path))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathKey, Arc<Vec<Hop>>>> {
        // A panic while the map was held leaves it whole (an insert is all it does).
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Clone for PathMemo {
    fn clone(&self) -> Self {
        PathMemo(Mutex::new(self.lock().clone()))
    }
}

impl std::fmt::Debug for PathMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PathMemo({} paths)", self.lock().len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_searched_once_and_kept() {
        let memo = PathMemo::default();
        let mut searches = 0;
        let a = memo.get_or((0, 3, false), || {
            searches += 1;
            vec![(0, None), (3, Some(1))]
        });
        let b = memo.get_or((0, 3, false), || {
            searches += 1;
            Vec::new()
        });
        assert_eq!(
            (searches, &*a, &*b),
            (1, &vec![(0, None), (3, Some(1))], &*a)
        );
        // Another question is searched on its own.
        let c = memo.get_or((0, 3, true), || vec![(0, None)]);
        assert_eq!(c.len(), 1);
        assert_eq!(format!("{memo:?}"), "PathMemo(2 paths)");
        assert_eq!(memo.clone().get_or((0, 3, true), Vec::new).len(), 1);
    }
}

//! One solve's transfers as classes of identical demands, and the resources they touch, in
//! flat tables read by every pass of a solve (progressive filling, the byte-fair rounds, the
//! final fit), so that a pass costs the classes' uses and nothing is allocated per resource or
//! per round.
//!
//! The tables are kept between solves ([`super::Fluid`] holds them) and rebuilt in place: a
//! fabric solves at every transfer's start and end, so a solve that allocated its tables anew
//! spent as much in the allocator as in the arithmetic.

use std::collections::HashMap;

use super::{Demand, Res};
use crate::components::fast_hash::{FastHash, u128_to_f64};
use crate::components::paged::Paged;

/// The classes of one solve and the resources they use (see the module documentation).
#[derive(Clone, Debug, Default)]
pub(super) struct Problem {
    /// Per class: the index (in the solve's demands) of its first transfer, and how many
    /// transfers have its demand.
    classes: Vec<(usize, u128)>,
    /// Per demand of the solve, its class.
    pub class_of: Vec<usize>,
    /// The resources used, ascending (a pass over resources goes in resource order).
    pub touched: Vec<Res>,
    /// Class j's uses `uses[first[j]..first[j + 1]]` (its demand's, in their order), and the
    /// place in `touched` of each.
    first: Vec<usize>,
    uses: Vec<(Res, u128)>,
    places: Vec<usize>,
    /// Per place, its users (class, weight), weight > 0, in class order:
    /// `users[user_at[i]..user_at[i + 1]]`.
    user_at: Vec<usize>,
    users: Vec<(usize, u128)>,
    /// Per user (parallel to `users`), its weight, its class's count and their product as
    /// floating point, and per place its capacity and the sum of its users' weights x counts:
    /// the byte-fair rounds' inputs, converted once per solve rather than once per round.
    pub users_f: Vec<UserF>,
    pub capacity_f: Vec<f64>,
    pub weights_f: Vec<f64>,
    /// Scratch: classes by the digest of their demand, each resource's place while it is
    /// touched, the next free slot of each place's users.
    index: HashMap<u64, usize, FastHash>,
    place_of: Paged<u32>,
    /// Per resource, the build that last met it (a mark without clearing), and the builds.
    seen: Paged<u64>,
    builds: u64,
    next: Vec<usize>,
}

/// A user's weight (`w`), its class's count (`m`) and the weight x count in integers, each as
/// `f64`.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct UserF {
    pub w: f64,
    pub m: f64,
    pub wm: f64,
}

impl Problem {
    /// Rebuilds the tables for `demands` over resources of capacities `capacity`.
    pub fn build(&mut self, demands: &[&Demand], capacity: &Paged<u128>) {
        // Classes in order of first appearance (the map only finds them: deterministic).
        self.classes.clear();
        self.class_of.clear();
        self.index.clear();
        for (k, &d) in demands.iter().enumerate() {
            let key = d.key();
            let classes = &self.classes;
            let found = match self.index.get(&key) {
                // A digest met before: that class, or (a collision) any later equal one.
                Some(&c) => (c..classes.len()).find(|&c| demands[classes[c].0] == d),
                None => None,
            };
            let c = found.unwrap_or_else(|| {
                self.index.entry(key).or_insert(self.classes.len());
                self.classes.push((k, 0));
                self.classes.len() - 1
            });
            self.classes[c].1 += 1;
            self.class_of.push(c);
        }
        // The distinct resources, marked as first met, then sorted: a few thousand where the
        // uses of a large group number hundreds of thousands (sorting those was a solve's
        // largest cost).
        if self.place_of.len() < capacity.len() {
            self.place_of = Paged::new(capacity.len());
            self.seen = Paged::new(capacity.len());
        }
        self.builds += 1;
        self.touched.clear();
        for &(k, _) in &self.classes {
            for &(r, _) in &demands[k].uses {
                if self.seen[r as usize] != self.builds {
                    self.seen[r as usize] = self.builds;
                    self.touched.push(r);
                }
            }
        }
        self.touched.sort_unstable();
        for (i, &r) in self.touched.iter().enumerate() {
            self.place_of[r as usize] = i as u32;
        }
        let n = self.touched.len();
        self.first.clear();
        self.uses.clear();
        self.places.clear();
        self.user_at.clear();
        self.user_at.resize(n + 1, 0);
        for &(k, _) in &self.classes {
            self.first.push(self.places.len());
            for &(r, w) in &demands[k].uses {
                let i = self.place_of[r as usize] as usize;
                self.uses.push((r, w));
                self.places.push(i);
                if w > 0 {
                    self.user_at[i + 1] += 1;
                }
            }
        }
        self.first.push(self.places.len());
        for i in 1..self.user_at.len() {
            self.user_at[i] += self.user_at[i - 1];
        }
        self.users.clear();
        self.users.resize(self.user_at[n], (0, 0));
        self.next.clear();
        self.next.extend_from_slice(&self.user_at);
        for j in 0..self.classes.len() {
            for x in self.first[j]..self.first[j + 1] {
                let (w, i) = (self.uses[x].1, self.places[x]);
                if w > 0 {
                    self.users[self.next[i]] = (j, w);
                    self.next[i] += 1;
                }
            }
        }
        self.users_f.clear();
        for &(j, w) in &self.users {
            let m = self.classes[j].1;
            self.users_f.push(UserF {
                w: u128_to_f64(w),
                m: u128_to_f64(m),
                wm: u128_to_f64(w * m),
            });
        }
        self.capacity_f.clear();
        self.weights_f.clear();
        for i in 0..n {
            self.capacity_f
                .push(u128_to_f64(capacity[self.touched[i] as usize]));
            let at = self.user_at[i]..self.user_at[i + 1];
            self.weights_f
                .push(self.users_f[at].iter().map(|u| u.wm).sum::<f64>());
        }
    }

    /// How many classes there are.
    pub fn class_count(&self) -> usize {
        self.classes.len()
    }

    /// How many transfers in all.
    pub fn transfers(&self) -> u128 {
        self.classes.iter().map(|c| c.1).sum()
    }

    /// Class j's uses with their places.
    pub fn uses(&self, j: usize) -> impl Iterator<Item = (&(Res, u128), usize)> {
        let at = self.first[j]..self.first[j + 1];
        self.uses[at.clone()]
            .iter()
            .zip(self.places[at].iter().copied())
    }

    /// The users (class, weight) of the resource at place i.
    pub fn users_of(&self, i: usize) -> &[(usize, u128)] {
        &self.users[self.user_at[i]..self.user_at[i + 1]]
    }

    /// The users of the resource at place i as floating point (parallel to [`Self::users_of`]).
    pub fn users_f_of(&self, i: usize) -> &[UserF] {
        &self.users_f[self.user_at[i]..self.user_at[i + 1]]
    }

    /// How many transfers class j holds.
    pub fn count(&self, j: usize) -> u128 {
        self.classes[j].1
    }
}

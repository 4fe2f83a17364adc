//! Typed indices into the model's tables.
//!
//! Every table of the model (the topology's channels, a plan's steps and routes, the fabric's
//! route table and its trains) is a `Vec` indexed by a small integer. Each kind of index is its
//! own type, so a step number cannot be passed where a channel is expected and a plan's own
//! route number cannot be mistaken for the fabric's (two tables that both used to be `u32`s or
//! `u16`s). The integer inside is public: the tables are plain `Vec`s and an id is read with
//! [`ChannelId::index`] (or the same method of each type) where it indexes one.
//!
//! Picoseconds ([`crate::units::Ps`]) stay a plain `u64`: they are a quantity with arithmetic
//! (sums, differences, products with rates), not an index, and every operation on them is
//! already checked or bounded where it is done.

use std::fmt;

/// Declares an index type: a `Copy` newtype over `$int` with `index()` and `from_index()`.
macro_rules! index_type {
    ($(#[$doc:meta])* $name:ident($int:ty)) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub $int);

        impl $name {
            /// This id as an index into its table.
            #[inline]
            pub const fn index(self) -> usize {
                self.0 as usize
            }

            /// The id of entry `i` of its table. Tables are bounded far below the integer's
            /// range by the config's limits (checked in debug builds).
            #[inline]
            pub fn from_index(i: usize) -> Self {
                debug_assert!(i <= <$int>::MAX as usize, "{} {} out of range", stringify!($name), i);
                $name(i as $int)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

index_type! {
    /// A channel: an entry of [`crate::topology::Topology::channels`] (a link direction, an
    /// engine, a memory, a cap or a network cable), the unit of sharing and serving.
    ChannelId(u32)
}

index_type! {
    /// A step of a plan: an entry of [`crate::plan::Plan::steps`].
    StepId(u16)
}

impl StepId {
    /// This step's id in a plan that holds its plan's steps from `off` on (a chunk's plan
    /// appended to a pipelined one).
    #[inline]
    pub fn shifted(self, off: StepId) -> StepId {
        StepId(self.0 + off.0)
    }
}

index_type! {
    /// A route of one plan: an entry of [`crate::plan::Plan::routes`]; the fabric maps it to
    /// its own [`RouteId`] per flow (and QP).
    PlanRoute(u16)
}

index_type! {
    /// A route of the fabric's route table, which holds every flow's routes one after another.
    RouteId(u32)
}

index_type! {
    /// A train (a packet or a group of packets crossing a route) in the fabric's train pool.
    TrainId(u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_its_index_and_prints_as_it() {
        let c = ChannelId::from_index(41);
        assert_eq!(c.index(), 41);
        assert_eq!(c, ChannelId(41));
        assert_eq!(c.to_string(), "41");
        assert!(StepId(2) < StepId(3));
    }
}

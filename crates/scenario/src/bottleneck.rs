//! What bound a streaming run (results.csv and flows.csv `bottleneck`): a typed value the
//! simulation finds ([`crate::scenario`]) and every reader matches on, rather than a name to
//! compare as text. Its text form is the column's: a channel's, read window's or thread's own
//! name, "nothing (unbounded)", or "latency (N messages in flight per flow)"; the text reads
//! back to the same value, so a merged or compared study keeps the kind.

use std::fmt;

use crate::components::Limit;
use crate::topology::Topology;

/// What bound a streaming run, or one flow's transfers.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Bottleneck {
    /// A channel (a link direction, a memory, a switch, a P2P cap), by its name: the bulk
    /// transfers' tightest resource, or the busiest channel of a run of small messages.
    Channel(String),
    /// A DMA requester's outstanding-read window, by its name ("node-a/nic0 read window").
    Window(String),
    /// A CPU thread busy at least half of a run of small messages, by its name.
    Thread(String),
    /// Bulk transfers that nothing bound: they moved at the unbounded rate.
    Unbounded,
    /// No resource busy half the run: the latency of this many messages in flight per flow.
    Latency {
        /// Messages in flight per flow (the stream window).
        window: u32,
    },
}

/// The text of [`Bottleneck::Unbounded`].
const UNBOUNDED: &str = "nothing (unbounded)";
/// How a thread's name goes on after its host and socket ("node-a/cpu0.cpu thread of flow 0";
/// a shared process's thread: "... thread of process 2").
const THREAD: &str = ".cpu thread of ";
/// How every read window's name ends ("read window", "WQE fetch window").
const WINDOW: &str = " window";

impl Bottleneck {
    /// The limit a bulk transfer was bound by, named on `topo`.
    pub fn of_limit(topo: &Topology, limit: Limit) -> Bottleneck {
        match limit {
            Limit::Channel(c) => Bottleneck::Channel(topo.channels[c.index()].name.clone()),
            Limit::Window(e) => Bottleneck::Window(topo.engine_name(e)),
            Limit::None => Bottleneck::Unbounded,
        }
    }

    /// The channel, read window or thread it names, if it names one.
    pub fn name(&self) -> Option<&str> {
        match self {
            Bottleneck::Channel(name) | Bottleneck::Window(name) | Bottleneck::Thread(name) => {
                Some(name)
            }
            Bottleneck::Unbounded | Bottleneck::Latency { .. } => None,
        }
    }

    /// The channel it names, if it is one (to find among a run's links).
    pub fn channel(&self) -> Option<&str> {
        match self {
            Bottleneck::Channel(name) => Some(name),
            _ => None,
        }
    }

    /// The value its text form (results.csv's column) stands for. Names are the simulation's:
    /// a thread's carries [`THREAD`], a window's ends in [`WINDOW`], no channel's does either.
    pub fn parse(text: &str) -> Bottleneck {
        let latency = text
            .strip_prefix("latency (")
            .and_then(|t| t.strip_suffix(" messages in flight per flow)"))
            .and_then(|n| n.parse().ok());
        match text {
            UNBOUNDED => Bottleneck::Unbounded,
            _ if latency.is_some() => Bottleneck::Latency {
                window: latency.unwrap_or_default(),
            },
            _ if text.contains(THREAD) => Bottleneck::Thread(text.to_string()),
            _ if text.ends_with(WINDOW) => Bottleneck::Window(text.to_string()),
            _ => Bottleneck::Channel(text.to_string()),
        }
    }
}

impl fmt::Display for Bottleneck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bottleneck::Channel(name) | Bottleneck::Window(name) | Bottleneck::Thread(name) => {
                f.write_str(name)
            }
            Bottleneck::Unbounded => f.write_str(UNBOUNDED),
            Bottleneck::Latency { window } => {
                write!(f, "latency ({window} messages in flight per flow)")
            }
        }
    }
}

impl serde::Serialize for Bottleneck {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Bottleneck {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Ok(Bottleneck::parse(&text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind the simulation names comes back from its text as itself: the names are those
    /// of shipped studies' results (a thread of a flow and of a shared process, NIC and copy
    /// engine windows, links, memories, P2P caps).
    #[test]
    fn every_kind_reads_back_from_its_text() {
        let cases = [
            Bottleneck::Channel("dgx-a/pcie:gpu0>sw0".into()),
            Bottleneck::Channel("node-a/wire:nic0>switch1".into()),
            Bottleneck::Channel("dgx-a/upi:cpu1>cpu0.p2p-read".into()),
            Bottleneck::Channel("node-a/cpu0.dram".into()),
            Bottleneck::Window("node-a/nic0 read window".into()),
            Bottleneck::Window("node-a/nic0 WQE fetch window".into()),
            Bottleneck::Window("dgx-b/gpu7 copy engine NVLink read window".into()),
            Bottleneck::Thread("node-a/cpu0.cpu thread of flow 3".into()),
            Bottleneck::Thread("node-a/cpu0.cpu thread of process 2".into()),
            Bottleneck::Unbounded,
            Bottleneck::Latency { window: 16 },
        ];
        for b in cases {
            let text = b.to_string();
            assert_eq!(Bottleneck::parse(&text), b, "{text}");
            let json = serde_json::to_string(&b).unwrap();
            assert_eq!(json, format!("{text:?}"));
            assert_eq!(serde_json::from_str::<Bottleneck>(&json).unwrap(), b);
        }
        assert_eq!(Bottleneck::Latency { window: 4 }.channel(), None);
        assert_eq!(
            Bottleneck::Channel("a/x".into()).channel(),
            Some("a/x"),
            "a channel is found among links by its name"
        );
    }
}

//! Charts (being written).

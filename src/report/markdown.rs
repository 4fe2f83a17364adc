//! report.md (being written).

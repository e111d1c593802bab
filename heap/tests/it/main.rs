//! The crate's integration tests, one binary: a module per topic.

mod format_doc;
mod generators;
mod oracle_contract;
mod roundtrip_prop;
mod snapshot;

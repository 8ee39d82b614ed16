//! The Kafka contract (F-BUS-1): every topic, key, header and payload of the
//! fleet is defined here and nowhere else.
//!
//! Payloads are JSON objects carrying `schema_version`. Decoding ignores
//! unknown fields (a newer producer may add some) but rejects a missing or
//! newer `schema_version` with an error that names the problem, so a worker
//! can dead-letter it instead of guessing.

pub mod headers;
pub mod payloads;
pub mod topics;

pub use payloads::{
    AgentResult, AggregatedReview, CompletedReview, DecodeError, DraftDecided, DraftDecision, IMPACT_MAX_CHARS,
    IMPACT_SHOWN_TOKENS, IndexRequested, JudgedFinding, Payload, ReviewRequested, SCHEMA_VERSION, bounded_impact,
};
pub use topics::{ConsumerGroup, Topic};

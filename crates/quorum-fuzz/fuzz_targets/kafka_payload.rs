//! Every Kafka payload type's decoder: a payload or a decode error (which
//! the runtime dead-letters), never a panic; what decodes re-encodes and
//! decodes to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quorum_events::{
    AgentResult, AggregatedReview, CompletedReview, DraftDecided, IndexRequested, Payload, ReviewRequested,
};

fn round_trip<P: Payload + PartialEq + std::fmt::Debug>(data: &[u8]) {
    if let Ok(p) = P::decode(data) {
        let again = P::decode(&serde_json::to_vec(&p).expect("a decoded payload encodes"))
            .unwrap_or_else(|e| panic!("{} re-decodes: {e}", P::NAME));
        assert_eq!(p, again);
    }
}

fuzz_target!(|data: &[u8]| {
    round_trip::<ReviewRequested>(data);
    round_trip::<AgentResult>(data);
    round_trip::<AggregatedReview>(data);
    round_trip::<CompletedReview>(data);
    round_trip::<IndexRequested>(data);
    round_trip::<DraftDecided>(data);
});

//! A GitLab webhook body under each event name the gateway reads.
#![no_main]

use libfuzzer_sys::fuzz_target;

const EVENTS: &[&str] = &["Merge Request Hook", "Note Hook", "Push Hook", "System Hook"];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else { return };
    let _ = quorum_gateway::gitlab::parse(EVENTS[pick as usize % EVENTS.len()], body);
});

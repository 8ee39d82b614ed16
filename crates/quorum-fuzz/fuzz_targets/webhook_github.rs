//! A GitHub webhook body under each event name the gateway reads: parsed
//! or refused with a reason, never a panic; a `/quorum` command in any
//! comment body likewise.
#![no_main]

use libfuzzer_sys::fuzz_target;

const EVENTS: &[&str] = &[
    "pull_request",
    "issue_comment",
    "pull_request_review_comment",
    "pull_request_review_thread",
    "installation",
    "ping",
    "push",
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else { return };
    let event = EVENTS[pick as usize % EVENTS.len()];
    let _ = quorum_gateway::github::parse(event, body);
    if let Ok(text) = std::str::from_utf8(body) {
        let _ = quorum_gateway::github::parse_command(text);
    }
});

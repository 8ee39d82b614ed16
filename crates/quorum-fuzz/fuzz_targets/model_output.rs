//! What a model answers: findings, the critic's decisions, tool calls and
//! the explain verdict are parsed or refused, never a panic, and a finding
//! that parses is one the pipeline can carry (a file, a line from 1).
#![no_main]

use libfuzzer_sys::fuzz_target;
use quorum_core::AgentRole;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(findings) = quorum_llm::schema::parse_findings(text, AgentRole::Reviewer, "fuzz") {
        for f in findings {
            assert!(!f.file.is_empty(), "a finding names its file: {f:?}");
            assert!(f.line >= 1, "lines count from 1: {f:?}");
            assert!(
                !f.file.starts_with('/') && !f.file.split('/').any(|c| c == ".."),
                "a finding stays in the repository: {f:?}"
            );
        }
    }
    let n = text.len() % 8;
    if let Ok(decisions) = quorum_llm::judge::parse_decisions(text, n) {
        assert_eq!(decisions.len(), n, "one decision per finding asked about");
    }
    for tool in ["get_callers", "find_tests", "read_snippet", "search_code", "search_docs", "past_reviews"] {
        let _ = quorum_llm::tools::parse_call_text(tool, text);
    }
    let _ = quorum_llm::explain::parse_verdict(text);
});

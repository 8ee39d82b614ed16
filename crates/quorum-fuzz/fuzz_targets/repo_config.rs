//! A repository's `.quorum.yml`: a config or the reason it is invalid.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = quorum_core::repo_config::RepoConfig::parse(text);
    }
});

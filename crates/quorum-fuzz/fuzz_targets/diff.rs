//! Unified diffs (`git diff`) and GitHub's per-file patches: never a panic,
//! and what is parsed keeps its line numbers in order (comments are placed
//! by them).
#![no_main]

use libfuzzer_sys::fuzz_target;
use quorum_core::diff::{parse_file_patch, parse_unified};
use quorum_core::{FileDiff, FileStatus};

fn check(file: &FileDiff) {
    for hunk in &file.hunks {
        let mut last_new = None;
        let mut last_old = None;
        for line in &hunk.lines {
            if let Some(n) = line.new_line {
                assert!(last_new.is_none_or(|l| n > l), "new-side lines go forward: {hunk:?}");
                last_new = Some(n);
            }
            if let Some(o) = line.old_line {
                assert!(last_old.is_none_or(|l| o > l), "old-side lines go forward: {hunk:?}");
                last_old = Some(o);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (files, _errors) = parse_unified(text);
    files.iter().for_each(check);
    let (file, _errors) = parse_file_patch("a.py", None, FileStatus::Modified, text);
    check(&file);
});

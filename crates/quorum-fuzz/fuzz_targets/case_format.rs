//! An eval case file: a case or a reason; and a path the case format calls
//! safe never leaves the fixture it is joined to.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(case) = serde_json::from_slice::<quorum_eval::Case>(data) {
        for edit in &case.edits {
            if quorum_eval::case::safe_relative(&edit.file) {
                let root = std::path::Path::new("/fixture");
                let joined = root.join(&edit.file);
                assert!(joined.starts_with(root) && joined != root, "{:?} leaves the fixture", edit.file);
                assert!(!edit.file.split(['/', '\\']).any(|c| c == ".."), "{:?}", edit.file);
            }
        }
    }
});

//! Staleness by source: the line of code a piece of evidence was given on.
//!
//! A team that dismissed a finding dismissed it about some code. When that
//! code is gone from the default branch — the file deleted, or the line the
//! comment was anchored to no longer anywhere in it — the item learned from
//! it rests on nothing anyone can see, and it returns to `suggested` until
//! someone approves it again. The line, not the file: the pull request the
//! evidence came from usually changes the file itself when it merges, and so
//! does every unrelated edit, while the rejected line typically survives
//! both ("not a bug here" leaves it as it was).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The code a piece of evidence was given on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Source {
    pub path: String,
    /// The anchored line's text, trimmed.
    pub line: String,
}

/// Lines with fewer letters and digits than this (`}`, `else:`, `)`) occur
/// everywhere: finding one again says nothing about the code.
const MIN_WORD_CHARS: usize = 4;

impl Source {
    /// The source of a review comment on `path` from its diff hunk (GitHub
    /// ends it at the commented line). `None` when there is no hunk
    /// (GitLab sends none), the comment is on a removed line (that code is
    /// gone by design), or the line is too common to recognise.
    pub fn of_comment(path: &str, diff_hunk: &str) -> Option<Source> {
        let last = diff_hunk.lines().rev().find(|l| !l.starts_with('\\'))?;
        let text = match last.chars().next()? {
            '-' => return None,
            '+' | ' ' => &last[1..],
            _ => last,
        };
        let text = text.trim();
        if text.starts_with("@@") || text.chars().filter(|c| c.is_alphanumeric()).count() < MIN_WORD_CHARS {
            return None;
        }
        Some(Source {
            path: path.to_string(),
            line: text.to_string(),
        })
    }

    /// The key of [`Gone`] records (a JSON object key).
    pub fn key(&self) -> String {
        format!("{}:{}", self.path, self.line)
    }

    /// Whether `file` (the path's content at some commit) still holds the
    /// line, wherever it moved to.
    pub fn present_in(&self, file: &str) -> bool {
        file.lines().any(|l| l.trim() == self.line)
    }
}

/// A source the default branch no longer holds, and since when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gone {
    pub path: String,
    /// The first commit checked without it.
    pub commit: String,
    /// RFC 3339: when that was found.
    pub at: String,
    /// The whole file is gone (else only the line).
    pub file_deleted: bool,
}

/// What one check of the sources against a commit changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceCheck {
    pub checked: usize,
    pub newly_gone: usize,
    /// Sources found again (a revert, a file restored).
    pub back: usize,
}

/// Checks `sources` against the files of `commit` (`files`: path → content,
/// every text file of the commit) and updates `gone`: a source missing now
/// is recorded once, with the first commit it was missing at; one present
/// again is forgotten.
pub fn check(
    gone: &mut BTreeMap<String, Gone>,
    sources: impl IntoIterator<Item = Source>,
    files: &BTreeMap<&str, &str>,
    commit: &str,
    now: &str,
) -> SourceCheck {
    let mut out = SourceCheck::default();
    for s in sources {
        out.checked += 1;
        let key = s.key();
        let file = files.get(s.path.as_str());
        if file.is_some_and(|text| s.present_in(text)) {
            if gone.remove(&key).is_some() {
                out.back += 1;
            }
        } else if let std::collections::btree_map::Entry::Vacant(slot) = gone.entry(key) {
            slot.insert(Gone {
                path: s.path.clone(),
                commit: commit.to_string(),
                at: now.to_string(),
                file_deleted: file.is_none(),
            });
            out.newly_gone += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const HUNK: &str = "@@ -10,6 +10,8 @@ def run(db, name):\n     rows = []\n+    q = f\"SELECT * FROM t WHERE name = '{name}'\"\n+    return db.execute(q)\n\\ No newline at end of file";

    #[test]
    fn a_comment_is_anchored_to_the_last_line_of_its_hunk() {
        let s = Source::of_comment("app/db.py", HUNK).unwrap();
        assert_eq!(s.line, "return db.execute(q)");
        assert_eq!(s.path, "app/db.py");
        let context = Source::of_comment("a.py", "@@ -1,2 +1,2 @@\n x = compute(y)\n retry_count += 1").unwrap();
        assert_eq!(context.line, "retry_count += 1", "a context line counts");
        assert_eq!(Source::of_comment("a.py", ""), None, "no hunk (GitLab)");
        assert_eq!(
            Source::of_comment("a.py", "@@ -1 +1 @@\n-old_call(x)"),
            None,
            "a removed line"
        );
        assert_eq!(
            Source::of_comment("a.py", "@@ -1 +1 @@\n+    }"),
            None,
            "too common to recognise"
        );
        assert_eq!(Source::of_comment("a.py", "@@ -1 +1 @@"), None, "a bare header");
    }

    #[test]
    fn a_check_records_what_is_gone_once_and_forgets_what_came_back() {
        let s = Source::of_comment("app/db.py", HUNK).unwrap();
        let deleted = Source {
            path: "old.py".into(),
            line: "def legacy_path():".into(),
        };
        let mut gone = BTreeMap::new();
        // Moved within the file and re-indented: still there.
        let moved = "import x\n\ndef run(db):\n        return db.execute(q)\n";
        let files = BTreeMap::from([("app/db.py", moved)]);
        let c = check(
            &mut gone,
            [s.clone(), deleted.clone()],
            &files,
            "c1",
            "2026-12-01T00:00:00Z",
        );
        assert_eq!((c.checked, c.newly_gone, c.back), (2, 1, 0));
        assert!(gone[&deleted.key()].file_deleted);
        // Rewritten: the line is gone; a second check keeps the first commit.
        let rewritten = BTreeMap::from([("app/db.py", "def run(db):\n    return db.run(q)\n")]);
        check(&mut gone, [s.clone()], &rewritten, "c2", "2026-12-02T00:00:00Z");
        check(&mut gone, [s.clone()], &rewritten, "c3", "2026-12-03T00:00:00Z");
        let g = &gone[&s.key()];
        assert_eq!((g.commit.as_str(), g.file_deleted), ("c2", false));
        // Reverted: back.
        let c = check(&mut gone, [s.clone()], &files, "c4", "2026-12-04T00:00:00Z");
        assert_eq!(c.back, 1);
        assert!(!gone.contains_key(&s.key()));
    }
}

//! Review threads rebuilt from flat comments. GitHub and GitLab hand out
//! review comments as a flat list where a reply names its parent
//! (`in_reply_to_id`); pages, sweeps and retries can deliver a reply before
//! its parent, twice, or (a deleted parent) never.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::association::Association;

/// The reaction roll-up a comment carries (`reactions.+1`, `reactions.-1`).
/// Other emoji teach nothing and are not kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reactions {
    pub plus_one: u32,
    pub minus_one: u32,
}

/// One review comment as an SCM reports it, in SCM-neutral form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PastComment {
    pub id: u64,
    /// The comment this one answers; `None` for the first of a thread.
    pub in_reply_to: Option<u64>,
    pub pr: u64,
    pub author: String,
    /// A bot account (GitHub `user.type == "Bot"`, GitLab `bot: true`).
    pub is_bot: bool,
    pub association: Association,
    pub body: String,
    pub path: String,
    /// The current new-side line; `None` once the branch moved under the
    /// comment (GitHub nulls it: the thread is outdated there).
    pub line: Option<u32>,
    pub original_line: Option<u32>,
    #[serde(default)]
    pub diff_hunk: String,
    /// RFC 3339.
    pub created_at: String,
    pub updated_at: String,
    pub url: String,
    #[serde(default)]
    pub reactions: Reactions,
}

/// A thread: the first comment and its replies, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Thread {
    pub root: PastComment,
    pub replies: Vec<PastComment>,
    /// From GraphQL `reviewThreads.isResolved` (GitHub) or the discussion's
    /// `resolved` (GitLab); `None` when the SCM did not say.
    pub resolved: Option<bool>,
    /// The code under the thread changed since it was written.
    pub outdated: Option<bool>,
}

impl Thread {
    pub fn comments(&self) -> impl Iterator<Item = &PastComment> {
        std::iter::once(&self.root).chain(self.replies.iter())
    }
}

/// What [`assemble`] could not place.
#[derive(Debug, Clone, PartialEq)]
pub struct Orphan {
    pub comment: PastComment,
    pub reason: String,
}

/// Rebuilds threads from comments in any order. A comment seen twice keeps
/// its latest version (by `updated_at`, then position); a reply whose
/// parent is itself a reply joins the parent's thread; a reply whose
/// parent never arrived is returned as an orphan with the reason, never
/// dropped silently and never guessed into another thread.
pub fn assemble(comments: impl IntoIterator<Item = PastComment>) -> (Vec<Thread>, Vec<Orphan>) {
    let mut by_id: BTreeMap<u64, PastComment> = BTreeMap::new();
    for c in comments {
        match by_id.get(&c.id) {
            Some(old) if old.updated_at > c.updated_at => {}
            _ => {
                by_id.insert(c.id, c);
            }
        }
    }
    let mut threads: BTreeMap<u64, Thread> = BTreeMap::new();
    let mut orphans = vec![];
    let mut replies: Vec<(u64, PastComment)> = vec![];
    for c in by_id.values() {
        match root_of(&by_id, c) {
            Ok(root) if root == c.id => {
                threads.insert(
                    root,
                    Thread {
                        root: c.clone(),
                        replies: vec![],
                        resolved: None,
                        outdated: None,
                    },
                );
            }
            Ok(root) => replies.push((root, c.clone())),
            Err(reason) => orphans.push(Orphan {
                comment: c.clone(),
                reason,
            }),
        }
    }
    for (root, c) in replies {
        if let Some(t) = threads.get_mut(&root) {
            t.replies.push(c);
        }
    }
    for t in threads.values_mut() {
        t.replies
            .sort_by(|a, b| (&a.created_at, a.id).cmp(&(&b.created_at, b.id)));
    }
    (threads.into_values().collect(), orphans)
}

/// Follows `in_reply_to` to the first comment of the thread.
fn root_of(by_id: &BTreeMap<u64, PastComment>, c: &PastComment) -> Result<u64, String> {
    let mut at = c;
    for _ in 0..=by_id.len() {
        let Some(parent) = at.in_reply_to else {
            return Ok(at.id);
        };
        match by_id.get(&parent) {
            Some(p) => at = p,
            None => {
                return Err(format!(
                    "reply {} answers comment {parent}, which never arrived (deleted, or on a page not fetched)",
                    c.id
                ));
            }
        }
    }
    Err(format!("reply {} is part of a reply cycle", c.id))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn comment(id: u64, reply_to: Option<u64>, author: &str, body: &str) -> PastComment {
        PastComment {
            id,
            in_reply_to: reply_to,
            pr: 7,
            author: author.into(),
            is_bot: author.ends_with("[bot]"),
            association: Association::Member,
            body: body.into(),
            path: "shop/db.py".into(),
            line: Some(10),
            original_line: Some(10),
            diff_hunk: String::new(),
            created_at: format!("2026-01-01T00:00:{:02}Z", id % 60),
            updated_at: format!("2026-01-01T00:00:{:02}Z", id % 60),
            url: format!("https://github.com/o/r/pull/7#discussion_r{id}"),
            reactions: Reactions::default(),
        }
    }

    #[test]
    fn replies_before_parents_still_join_their_thread() {
        let (threads, orphans) = assemble([
            comment(3, Some(1), "bob", "second reply"),
            comment(2, Some(1), "carol", "first reply"),
            comment(1, None, "alice", "root"),
            comment(5, None, "dave", "another root"),
        ]);
        assert!(orphans.is_empty());
        assert_eq!(threads.len(), 2);
        let t = &threads[0];
        assert_eq!(t.root.id, 1);
        let ids: Vec<u64> = t.replies.iter().map(|c| c.id).collect();
        assert_eq!(ids, [2, 3]);
        assert!(threads[1].replies.is_empty());
    }

    #[test]
    fn a_reply_to_a_reply_joins_the_root_and_duplicates_keep_the_latest() {
        let mut edited = comment(2, Some(1), "carol", "edited text");
        edited.updated_at = "2026-02-01T00:00:00Z".into();
        let (threads, _) = assemble([
            comment(1, None, "alice", "root"),
            edited.clone(),
            comment(2, Some(1), "carol", "original text"),
            comment(4, Some(2), "alice", "answer to carol"),
        ]);
        assert_eq!(threads.len(), 1);
        let bodies: Vec<&str> = threads[0].replies.iter().map(|c| c.body.as_str()).collect();
        assert_eq!(bodies, ["edited text", "answer to carol"]);
    }

    #[test]
    fn a_reply_whose_parent_never_arrives_is_an_orphan_with_a_reason() {
        let (threads, orphans) = assemble([comment(1, None, "alice", "root"), comment(9, Some(8), "bob", "lost")]);
        assert_eq!(threads.len(), 1);
        assert_eq!(orphans.len(), 1);
        assert_eq!(orphans[0].comment.id, 9);
        assert!(
            orphans[0].reason.contains("comment 8, which never arrived"),
            "{}",
            orphans[0].reason
        );
    }

    #[test]
    fn a_cycle_is_reported_not_looped_on() {
        let (threads, orphans) = assemble([comment(1, Some(2), "a", "x"), comment(2, Some(1), "b", "y")]);
        assert!(threads.is_empty());
        assert_eq!(orphans.len(), 2);
        assert!(orphans[0].reason.contains("cycle"));
    }
}

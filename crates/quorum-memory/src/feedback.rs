//! What the team answered to Quorum's own comments, read deterministically:
//! every comment Quorum posts carries its fingerprint (and rule) in hidden
//! markers, so a thread rooted at one is recognised without guessing, and
//! each answer becomes an [`Observation`] — a piece of evidence for or
//! against that kind of finding in that part of the code.
//!
//! Signals, strongest first (research notes §1.4):
//! - the thread was resolved while the code under it was unchanged
//!   (GitHub: not `isOutdated`): rejected;
//! - a 👎 on the comment: rejected; a 👍: accepted;
//! - a human reply that dismisses it ("not a bug here", "intended",
//!   "false positive", …): rejected; one that takes it ("fixed", "good
//!   catch", …): accepted; a reply that says both, or neither, is neutral;
//! - resolved after the code under it changed: accepted (addressed).

use serde::{Deserialize, Serialize};

use crate::association::Association;
use crate::item::ItemKey;
use crate::thread::{PastComment, Thread};

/// Someone who answered.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Person {
    pub login: String,
    pub association: Association,
}

/// What a piece of evidence says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The team dismissed one of Quorum's findings.
    Rejected,
    /// The team took one of Quorum's findings.
    Accepted,
    /// A reviewer asked a change not to do something (an `avoid` item).
    Asked,
}

/// One piece of evidence about a kind of finding in a scope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    pub key: ItemKey,
    pub verdict: Verdict,
    /// How it was said: "👎", "replied: not a bug here", "resolved with no change".
    pub how: String,
    pub who: Person,
    pub pr: u64,
    pub url: String,
    /// RFC 3339, when it was said (or the comment's time when the SCM
    /// does not date the signal).
    pub at: String,
    /// Read from what someone did (resolved a thread), not from what they
    /// said: explicit words outweigh it in the same pull request.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub inferred: bool,
    /// The line of code it was given on, when the SCM says (GitHub's diff
    /// hunk): an item whose every source is gone from the default branch
    /// is stale. Absent in state saved before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<crate::sources::Source>,
}

/// A reaction whose author is known (GitHub lists them per comment).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reaction {
    pub who: Person,
    /// `+1` or `-1`; other emoji are not kept.
    pub content: String,
}

/// What Quorum's markers say about one of its comments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuorumMarkers {
    pub fingerprint: String,
    pub rule: Option<String>,
    pub title: String,
}

/// Reads the markers of a comment Quorum posted; `None` for anyone else's.
pub fn quorum_markers(body: &str) -> Option<QuorumMarkers> {
    let fingerprint = quorum_core::parse_fingerprints(body).into_iter().next()?;
    let rule = quorum_core::parse_rule_marker(body);
    // The body starts `**Title** (severity, …)`.
    let title = body
        .trim_start()
        .strip_prefix("**")
        .and_then(|rest| rest.split_once("**"))
        .map(|(t, _)| t.trim().to_string())
        .unwrap_or_default();
    Some(QuorumMarkers {
        fingerprint,
        rule,
        title,
    })
}

/// The evidence one thread rooted at a Quorum comment gives. `reactions`
/// lists who reacted to the root (when the SCM says); `resolved_by` who
/// resolved the thread. Threads rooted at anyone else give none.
pub fn observe(thread: &Thread, reactions: &[Reaction], resolved_by: Option<&Person>) -> Vec<Observation> {
    let Some(m) = quorum_markers(&thread.root.body) else {
        return vec![];
    };
    let key = ItemKey::suppress_for(m.rule.as_deref(), &m.title, &thread.root.path);
    let root = &thread.root;
    let source = crate::sources::Source::of_comment(&root.path, &root.diff_hunk);
    let mut out = vec![];
    let mut push = |verdict, how: String, who: Person, c: &PastComment, inferred: bool| {
        out.push(Observation {
            key: key.clone(),
            verdict,
            how,
            who,
            pr: root.pr,
            url: c.url.clone(),
            at: c.created_at.clone(),
            inferred,
            source: source.clone(),
        })
    };
    for r in reactions {
        match r.content.as_str() {
            "-1" => push(Verdict::Rejected, "👎".into(), r.who.clone(), root, false),
            "+1" => push(Verdict::Accepted, "👍".into(), r.who.clone(), root, false),
            _ => {}
        }
    }
    // Roll-up counts nobody could be named for still say something, but
    // from an unknown person: never enough to make an item active.
    let named = |content: &str| reactions.iter().filter(|r| r.content == content).count() as u32;
    let unknown = Person {
        login: "unknown".into(),
        association: Association::None,
    };
    for _ in named("-1")..root.reactions.minus_one {
        push(Verdict::Rejected, "👎".into(), unknown.clone(), root, false);
    }
    for _ in named("+1")..root.reactions.plus_one {
        push(Verdict::Accepted, "👍".into(), unknown.clone(), root, false);
    }
    for reply in &thread.replies {
        if reply.is_bot {
            continue;
        }
        if let Some(v) = classify_reply(&reply.body) {
            let who = Person {
                login: reply.author.clone(),
                association: reply.association,
            };
            push(v, format!("replied: {}", excerpt(&reply.body)), who, reply, false);
        }
    }
    if thread.resolved == Some(true) {
        let who = resolved_by.cloned().unwrap_or(Person {
            login: "unknown".into(),
            association: Association::None,
        });
        match thread.outdated {
            Some(false) => push(
                Verdict::Rejected,
                "resolved with no change under it".into(),
                who,
                root,
                true,
            ),
            Some(true) => push(
                Verdict::Accepted,
                "resolved after the code changed".into(),
                who,
                root,
                true,
            ),
            None => {}
        }
    }
    out
}

const DISMISSING: &[&str] = &[
    "false positive",
    "not a bug",
    "not an issue",
    "not a problem",
    "not relevant",
    "not applicable",
    "does not apply",
    "doesn't apply",
    "intended",
    "intentional",
    "on purpose",
    "by design",
    "as designed",
    "won't fix",
    "wont fix",
    "wontfix",
    "this is fine",
    "is fine here",
    "is safe here",
    "ignore this",
    "please ignore",
    "noise",
    "wrong",
    "incorrect",
];

const TAKING: &[&str] = &[
    "fixed",
    "done",
    "good catch",
    "nice catch",
    "great catch",
    "thanks",
    "thank you",
    "addressed",
    "will fix",
    "updated",
    "good point",
];

/// How many opening words an accepting phrase must fall within.
const TAKING_WITHIN: usize = 5;

/// Words that turn a dismissing phrase around ("not intended").
const NEGATORS: &[&str] = &["not", "isn't", "wasn't", "never"];

/// Whether a reply dismisses or takes the comment; `None` when it says
/// neither or both (a question, "fixed, but this is wrong elsewhere").
pub fn classify_reply(body: &str) -> Option<Verdict> {
    let text = normalise(&quorum_core::strip_markers(body));
    // Taking it is said up front ("Good catch, fixed in 3f2a"); further on,
    // the same words are usually something else ("fixed admin queries").
    let opening: String = text.split(' ').take(TAKING_WITHIN).collect::<Vec<_>>().join(" ");
    let dismisses = DISMISSING.iter().any(|p| contains_phrase(&text, p));
    let takes = TAKING.iter().any(|p| contains_phrase(&opening, p));
    match (dismisses, takes) {
        (true, false) => Some(Verdict::Rejected),
        (false, true) => Some(Verdict::Accepted),
        _ => None,
    }
}

fn normalise(s: &str) -> String {
    let lowered = s.to_lowercase().replace(['’', '‘'], "'");
    let spaced: String = lowered
        .chars()
        .map(|c| if c.is_alphanumeric() || c == '\'' { c } else { ' ' })
        .collect();
    spaced.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The phrase as whole words, not negated by the word before it.
fn contains_phrase(text: &str, phrase: &str) -> bool {
    let padded = format!(" {text} ");
    let needle = format!(" {phrase} ");
    let mut from = 0;
    while let Some(i) = padded[from..].find(&needle) {
        let at = from + i;
        let before = padded[..at].split_whitespace().last().unwrap_or("");
        let negated = NEGATORS.contains(&before) && !phrase.starts_with("not ");
        if !negated {
            return true;
        }
        from = at + 1;
    }
    false
}

pub(crate) fn excerpt(body: &str) -> String {
    let text = quorum_core::strip_markers(body);
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    let mut s: String = line.chars().take(80).collect();
    if line.chars().count() > 80 {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thread::tests::comment;

    fn quorum_root() -> PastComment {
        let mut c = comment(
            1,
            None,
            "quorum[bot]",
            "**SQL built from a string** (critical, security, confidence 0.95) — from static\n\nUse parameters.\n<!-- quorum:fp:00aa11bb22cc33dd -->\n<!-- quorum:rule:sql-string-building -->",
        );
        c.path = "scripts/migrate.py".into();
        c
    }

    fn thread(root: PastComment, replies: Vec<PastComment>) -> Thread {
        Thread {
            root,
            replies,
            resolved: None,
            outdated: None,
        }
    }

    #[test]
    fn markers_give_fingerprint_rule_and_title() {
        let m = quorum_markers(&quorum_root().body).unwrap();
        assert_eq!(m.fingerprint, "00aa11bb22cc33dd");
        assert_eq!(m.rule.as_deref(), Some("sql-string-building"));
        assert_eq!(m.title, "SQL built from a string");
        assert_eq!(quorum_markers("**A human** said this"), None);
    }

    #[test]
    fn replies_are_read_for_dismissal_and_acceptance() {
        assert_eq!(
            classify_reply("Not a bug here: the table name is a constant."),
            Some(Verdict::Rejected)
        );
        assert_eq!(classify_reply("This is intended."), Some(Verdict::Rejected));
        assert_eq!(classify_reply("False-positive, ignore"), Some(Verdict::Rejected));
        assert_eq!(classify_reply("Good catch, fixed in 3f2a"), Some(Verdict::Accepted));
        assert_eq!(classify_reply("Thanks!"), Some(Verdict::Accepted));
        // "fixed" further on is an adjective, not an answer.
        assert_eq!(
            classify_reply("Not a bug here: app/ only runs fixed admin queries."),
            Some(Verdict::Rejected)
        );
        // Negated, mixed and neutral replies teach nothing.
        assert_eq!(classify_reply("This was not intended, will look"), None);
        assert_eq!(classify_reply("Fixed, but the other one is wrong"), None);
        assert_eq!(
            classify_reply("I think we should keep it; this pattern is documented and fixed"),
            None
        );
        assert_eq!(classify_reply("Why would this be a problem?"), None);
    }

    #[test]
    fn a_thread_gives_one_observation_per_signal_with_who_said_it() {
        let mut reply = comment(2, Some(1), "alice", "not a bug here, the name is a constant");
        reply.association = Association::Member;
        let mut bot_reply = comment(3, Some(1), "other[bot]", "false positive");
        bot_reply.is_bot = true;
        let mut root = quorum_root();
        root.reactions.minus_one = 2;
        let mut t = thread(root, vec![reply, bot_reply]);
        t.resolved = Some(true);
        t.outdated = Some(false);
        let bob = Person {
            login: "bob".into(),
            association: Association::Owner,
        };
        let obs = observe(
            &t,
            &[Reaction {
                who: bob.clone(),
                content: "-1".into(),
            }],
            Some(&bob),
        );
        let hows: Vec<(&str, &str, Verdict)> = obs
            .iter()
            .map(|o| (o.how.as_str(), o.who.login.as_str(), o.verdict))
            .collect();
        assert_eq!(
            hows,
            [
                ("👎", "bob", Verdict::Rejected),
                ("👎", "unknown", Verdict::Rejected),
                (
                    "replied: not a bug here, the name is a constant",
                    "alice",
                    Verdict::Rejected
                ),
                ("resolved with no change under it", "bob", Verdict::Rejected),
            ]
        );
        assert!(
            obs.iter()
                .all(|o| o.key.rule.as_deref() == Some("sql-string-building") && o.pr == 7)
        );
        assert_eq!(obs[0].key.scope, "scripts/**");
    }

    #[test]
    fn a_resolved_thread_whose_code_changed_was_addressed() {
        let mut t = thread(quorum_root(), vec![]);
        t.resolved = Some(true);
        t.outdated = Some(true);
        let obs = observe(&t, &[], None);
        assert_eq!(obs.len(), 1);
        assert_eq!(obs[0].verdict, Verdict::Accepted);
        assert_eq!(obs[0].who.association, Association::None);
    }

    #[test]
    fn threads_of_humans_are_not_feedback() {
        let t = thread(comment(1, None, "alice", "please use a parameter here"), vec![]);
        assert!(observe(&t, &[], None).is_empty());
    }
}

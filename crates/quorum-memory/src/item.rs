//! Memory items: what Quorum has learned, as a visible, versioned artifact
//! (`.quorum/memory.yaml`), never hidden state.

use std::fmt;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::association::Association;

/// What an item does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A kind of finding the team does not want in this scope: the critic
    /// drops matching findings, with the item named as the reason.
    Suppress,
    /// Something the team asks changes not to do: a convention the agents
    /// check (a pattern over added lines) and the model roles are told.
    Avoid,
    /// Something the team asks for: told to the model roles.
    Prefer,
}

/// Where an item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Shown, not applied: waiting for a trusted voice, the approval delay,
    /// an operator, or re-validation after going stale.
    Suggested,
    /// Applied to every review in its scope.
    Active,
    /// Kept for the record; never applied and never re-learned.
    Retired,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Suggested => "suggested",
            Status::Active => "active",
            Status::Retired => "retired",
        })
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Suppress => "suppress",
            Kind::Avoid => "avoid",
            Kind::Prefer => "prefer",
        })
    }
}

/// What an item is about: the identity learning groups evidence under.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ItemKey {
    pub kind: Kind,
    /// A path glob; `**` for the whole repository.
    pub scope: String,
    /// The rule a finding came from (suppress items of rule findings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// A free-form finding's title, lower-cased (suppress items of model
    /// findings, which have no rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A regex over added lines (avoid items the engine can check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
}

impl ItemKey {
    /// The key of "this kind of finding in this part of the code": the rule
    /// (or, without one, the title) in the directory of `path`, so a
    /// dismissal in `scripts/migrate.py` speaks for `scripts/**` and not
    /// for the whole repository. A file at the root is its own scope.
    pub fn suppress_for(rule: Option<&str>, title: &str, path: &str) -> ItemKey {
        let scope = match path.rsplit_once('/') {
            Some((dir, _)) => format!("{dir}/**"),
            None => path.to_string(),
        };
        ItemKey {
            kind: Kind::Suppress,
            scope,
            rule: rule.map(str::to_string),
            title: rule.is_none().then(|| normalise_title(title)),
            pattern: None,
        }
    }

    /// A stable id: the same key gives the same id on every machine, so an
    /// exported file and learned state name items alike.
    pub fn id(&self) -> String {
        let mut h = Sha256::new();
        for part in [
            self.kind.to_string().as_str(),
            &self.scope,
            self.rule.as_deref().unwrap_or(""),
            self.title.as_deref().unwrap_or(""),
            self.pattern.as_deref().unwrap_or(""),
        ] {
            h.update(part.as_bytes());
            h.update([0]);
        }
        format!("M-{}", &hex::encode(h.finalize())[..6])
    }
}

/// Titles compared as memory compares them: case and spacing ignored.
pub fn normalise_title(title: &str) -> String {
    title.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// A link to what an item rests on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidenceLink {
    pub pr: u64,
    pub url: String,
    pub who: String,
    pub association: Association,
    /// "👎", "replied: …", "resolved with no change under it".
    pub how: String,
    pub at: String,
}

/// Where an item came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// Learned from answers to Quorum's comments or from past reviews.
    Learned,
    /// Written in the repository's `.quorum/memory.yaml`.
    Committed,
}

/// One memory item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryItem {
    pub id: String,
    #[serde(flatten)]
    pub key: ItemKey,
    pub status: Status,
    /// What the item says, for people and for model prompts.
    pub text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<EvidenceLink>,
    pub origin: Origin,
    /// Why the item has its status when that is not obvious (waiting for a
    /// trusted voice, stale, approved by an operator).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// RFC 3339: when a review last matched it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_matched: Option<String>,
}

impl MemoryItem {
    /// "rejected ×3 by @a, @b": the rejections behind an item, by person.
    pub fn rejections_summary(&self) -> String {
        let mut who: Vec<&str> = self.evidence.iter().map(|e| e.who.as_str()).collect();
        who.sort_unstable();
        who.dedup();
        let people: Vec<String> = who.iter().map(|w| format!("@{w}")).collect();
        format!("rejected ×{} by {}", self.evidence.len(), people.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suppress_keys_scope_to_the_directory_and_ids_are_stable() {
        let a = ItemKey::suppress_for(Some("sql-string-building"), "SQL", "scripts/db/migrate.py");
        assert_eq!(a.scope, "scripts/db/**");
        assert_eq!(a.title, None);
        let b = ItemKey::suppress_for(None, "  Possible   NULL deref ", "main.py");
        assert_eq!(b.scope, "main.py");
        assert_eq!(b.title.as_deref(), Some("possible null deref"));
        assert_eq!(
            a.id(),
            ItemKey::suppress_for(Some("sql-string-building"), "other", "scripts/db/x.py").id()
        );
        assert_ne!(a.id(), b.id());
        assert!(a.id().starts_with("M-") && a.id().len() == 8);
    }
}

//! Applying memory to a review, deterministically (F-MEM-3): the critic
//! drops findings an active `suppress` item covers — with the item as the
//! reason, kept in the rejected list — and `avoid` items with a pattern
//! become conventions the engine checks, like `.quorum.yml`'s.

use globset::{Glob, GlobMatcher};
use quorum_core::repo_config::ConventionSpec;
use quorum_core::{Category, Finding, Severity};

use crate::MemoryError;
use crate::file::validate_key;
use crate::item::{Kind, MemoryItem, Status, normalise_title};

/// Why a finding was dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suppression {
    pub item_id: String,
    /// "memory M-1a2b3c: rejected ×3 by @a, @b".
    pub reason: String,
}

/// A repository's memory, compiled for matching.
#[derive(Debug, Default)]
pub struct MemorySet {
    items: Vec<MemoryItem>,
    scopes: Vec<GlobMatcher>,
}

impl MemorySet {
    /// Compiles every item; an invalid one is an error naming it (items
    /// come from learned state or a validated file, so this is a bug or a
    /// hand-edited store).
    pub fn new(items: Vec<MemoryItem>) -> Result<MemorySet, MemoryError> {
        let mut scopes = Vec::with_capacity(items.len());
        for m in &items {
            validate_key(&m.key).map_err(|e| MemoryError::Invalid(format!("memory item {}: {e}", m.id)))?;
            let glob =
                Glob::new(&m.key.scope).map_err(|e| MemoryError::Invalid(format!("memory item {}: {e}", m.id)))?;
            scopes.push(glob.compile_matcher());
        }
        Ok(MemorySet { items, scopes })
    }

    pub fn items(&self) -> &[MemoryItem] {
        &self.items
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    fn active(&self, kind: Kind) -> impl Iterator<Item = (&MemoryItem, &GlobMatcher)> {
        self.items
            .iter()
            .zip(&self.scopes)
            .filter(move |(m, _)| m.status == Status::Active && m.key.kind == kind)
    }

    /// The active suppress item covering `f`, if any: same rule (or, for a
    /// finding without one, the same title) in the item's scope.
    pub fn suppression(&self, f: &Finding) -> Option<Suppression> {
        let title = normalise_title(&f.title);
        let (m, _) = self.active(Kind::Suppress).find(|(m, scope)| {
            let same = match (&m.key.rule, &f.rule) {
                (Some(r), Some(fr)) => r == fr,
                (Some(_), None) => false,
                (None, _) => m.key.title.as_deref() == Some(title.as_str()),
            };
            same && scope.is_match(&f.file)
        })?;
        let why = if m.evidence.is_empty() {
            m.text.clone()
        } else {
            m.rejections_summary()
        };
        Some(Suppression {
            item_id: m.id.clone(),
            reason: format!("memory {}: {why}", m.id),
        })
    }

    /// Active `avoid` items with a pattern, as conventions for the engine.
    pub fn conventions(&self) -> Vec<ConventionSpec> {
        self.active(Kind::Avoid)
            .filter_map(|(m, _)| {
                let pattern = m.key.pattern.clone()?;
                Some(ConventionSpec {
                    id: format!("memory:{}", m.id),
                    message: m.text.clone(),
                    paths: if m.key.scope == "**" {
                        vec![]
                    } else {
                        vec![m.key.scope.clone()]
                    },
                    exclude: vec![],
                    pattern: Some(pattern),
                    query: None,
                    language: None,
                    severity: Severity::Minor,
                    category: Category::Convention,
                    confidence: 0.8,
                })
            })
            .collect()
    }

    /// Active `prefer`/`avoid` items whose scope holds `path`: what a model
    /// role is told about that file.
    pub fn guidance_for<'a>(&'a self, path: &'a str) -> impl Iterator<Item = &'a MemoryItem> + 'a {
        self.items
            .iter()
            .zip(&self.scopes)
            .filter(move |(m, scope)| {
                m.status == Status::Active && m.key.kind != Kind::Suppress && scope.is_match(path)
            })
            .map(|(m, _)| m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Association;
    use crate::item::{EvidenceLink, ItemKey, Origin};
    use quorum_core::AgentRole;

    fn item(key: ItemKey, status: Status) -> MemoryItem {
        MemoryItem {
            id: key.id(),
            key,
            status,
            text: "not wanted here".into(),
            evidence: vec![
                EvidenceLink {
                    pr: 1,
                    url: "u1".into(),
                    who: "bob".into(),
                    association: Association::Owner,
                    how: "👎".into(),
                    at: "2026-01-01T00:00:00Z".into(),
                },
                EvidenceLink {
                    pr: 2,
                    url: "u2".into(),
                    who: "alice".into(),
                    association: Association::Member,
                    how: "👎".into(),
                    at: "2026-01-02T00:00:00Z".into(),
                },
            ],
            origin: Origin::Learned,
            note: None,
            last_matched: None,
        }
    }

    fn finding(file: &str, rule: Option<&str>, title: &str) -> Finding {
        let mut f = quorum_core::Finding {
            file: file.into(),
            line: 3,
            start_line: None,
            category: Category::Security,
            severity: Severity::Critical,
            confidence: 0.9,
            title: title.into(),
            explanation: String::new(),
            suggestion: None,
            rule: None,
            agent: AgentRole::Static,
            evidence: vec![],
            agreed_by: vec![],
        };
        f.rule = rule.map(str::to_string);
        f
    }

    #[test]
    fn an_active_item_suppresses_its_rule_in_its_scope_only() {
        let key = ItemKey::suppress_for(Some("sql-string-building"), "", "scripts/migrate.py");
        let set = MemorySet::new(vec![item(key, Status::Active)]).unwrap();
        let s = set
            .suppression(&finding("scripts/seed.py", Some("sql-string-building"), "SQL"))
            .unwrap();
        assert!(
            s.reason
                .starts_with(&format!("memory {}: rejected ×2 by @alice, @bob", s.item_id)),
            "{}",
            s.reason
        );
        assert_eq!(
            set.suppression(&finding("shop/db.py", Some("sql-string-building"), "SQL")),
            None
        );
        assert_eq!(
            set.suppression(&finding("scripts/seed.py", Some("other-rule"), "SQL")),
            None
        );
        assert_eq!(set.suppression(&finding("scripts/seed.py", None, "SQL")), None);
    }

    #[test]
    fn suggested_and_retired_items_change_nothing() {
        for status in [Status::Suggested, Status::Retired] {
            let key = ItemKey::suppress_for(Some("r"), "", "a/b.py");
            let set = MemorySet::new(vec![item(key, status)]).unwrap();
            assert_eq!(set.suppression(&finding("a/c.py", Some("r"), "t")), None);
        }
    }

    #[test]
    fn model_findings_match_by_title() {
        let key = ItemKey::suppress_for(None, "Possible N+1 query", "shop/views.py");
        let set = MemorySet::new(vec![item(key, Status::Active)]).unwrap();
        assert!(
            set.suppression(&finding("shop/api.py", None, "possible  n+1 QUERY"))
                .is_some()
        );
        assert!(
            set.suppression(&finding("shop/api.py", None, "Unbounded query"))
                .is_none()
        );
    }

    #[test]
    fn avoid_items_become_conventions_and_guidance() {
        let key = ItemKey {
            kind: Kind::Avoid,
            scope: "shop/**".into(),
            rule: None,
            title: None,
            pattern: Some(r"\bprint\(".into()),
        };
        let set = MemorySet::new(vec![item(key, Status::Active)]).unwrap();
        let c = set.conventions();
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].paths, ["shop/**"]);
        assert!(c[0].id.starts_with("memory:M-"));
        assert_eq!(set.guidance_for("shop/x.py").count(), 1);
        assert_eq!(set.guidance_for("docs/x.md").count(), 0);
    }
}

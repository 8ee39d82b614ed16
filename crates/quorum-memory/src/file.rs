//! `.quorum/memory.yaml`: memory as a reviewable file. `quorum memory
//! export` writes it, a team reviews and commits it, and a committed file
//! wins over learned state (answering "unversioned rules anyone who replies
//! can change"): its items override learned items of the same id, and
//! `learned: ignore` makes the file the only memory.
//!
//! ```yaml
//! version: 1
//! learned: apply          # or `ignore`: only the items below apply
//! items:
//!   - kind: suppress
//!     status: active
//!     scope: "scripts/**"
//!     rule: sql-string-building
//!     text: Migration scripts build SQL from constants; not a finding here.
//!   - kind: avoid
//!     status: active
//!     scope: "shop/**/*.py"
//!     pattern: '\bprint\('
//!     text: Log with the module's logger, never print().
//! ```

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::MemoryError;
use crate::item::{EvidenceLink, ItemKey, Kind, MemoryItem, Origin, Status};

/// The file's path in a repository.
pub const MEMORY_PATH: &str = ".quorum/memory.yaml";
/// A larger file is refused, not truncated.
pub const MAX_MEMORY_BYTES: usize = 256 * 1024;
const MAX_ITEMS: usize = 500;

/// Whether learned state applies beside the file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Learned {
    #[default]
    Apply,
    Ignore,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDoc {
    version: u32,
    #[serde(default)]
    learned: Learned,
    #[serde(default)]
    items: Vec<FileItem>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileItem {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    kind: Kind,
    status: Status,
    #[serde(default = "everywhere")]
    scope: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rule: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pattern: Option<String>,
    text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    evidence: Vec<EvidenceLink>,
}

fn everywhere() -> String {
    "**".into()
}

/// A parsed, validated memory file.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryFile {
    pub learned: Learned,
    pub items: Vec<MemoryItem>,
}

impl MemoryFile {
    /// Parses and validates; every error names the item and the field.
    pub fn parse(text: &str) -> Result<MemoryFile, MemoryError> {
        let bad = |m: String| MemoryError::Invalid(format!("{MEMORY_PATH}: {m}"));
        if text.len() > MAX_MEMORY_BYTES {
            return Err(bad(format!("{} bytes; at most {MAX_MEMORY_BYTES}", text.len())));
        }
        let doc: FileDoc = serde_norway::from_str(text).map_err(|e| bad(e.to_string()))?;
        if doc.version != 1 {
            return Err(bad(format!("`version: {}` is not supported (1 is)", doc.version)));
        }
        if doc.items.len() > MAX_ITEMS {
            return Err(bad(format!("{} items; at most {MAX_ITEMS}", doc.items.len())));
        }
        let mut seen = BTreeSet::new();
        let mut items = vec![];
        for (i, it) in doc.items.into_iter().enumerate() {
            let key = ItemKey {
                kind: it.kind,
                scope: it.scope,
                rule: it.rule,
                title: it.title.map(|t| crate::item::normalise_title(&t)),
                pattern: it.pattern,
            };
            let id = it.id.unwrap_or_else(|| key.id());
            let at = |m: &str| bad(format!("item {} (`{id}`): {m}", i + 1));
            validate_key(&key).map_err(|m| at(&m))?;
            if it.text.trim().is_empty() {
                return Err(at("`text` is empty"));
            }
            if !seen.insert(id.clone()) {
                return Err(at("duplicate id"));
            }
            items.push(MemoryItem {
                id,
                key,
                status: it.status,
                text: it.text,
                evidence: it.evidence,
                origin: Origin::Committed,
                note: None,
                last_matched: None,
            });
        }
        Ok(MemoryFile {
            learned: doc.learned,
            items,
        })
    }

    /// Writes items as a file a team can review and commit.
    pub fn render(items: &[MemoryItem], learned: Learned) -> String {
        let doc = FileDoc {
            version: 1,
            learned,
            items: items
                .iter()
                .map(|m| FileItem {
                    id: Some(m.id.clone()),
                    kind: m.key.kind,
                    status: m.status,
                    scope: m.key.scope.clone(),
                    rule: m.key.rule.clone(),
                    title: m.key.title.clone(),
                    pattern: m.key.pattern.clone(),
                    text: m.text.clone(),
                    evidence: m.evidence.clone(),
                })
                .collect(),
        };
        let yaml = serde_norway::to_string(&doc).expect("memory items serialise");
        format!("# Quorum review memory: review it, edit it, commit it. Committed items win over learned ones.\n{yaml}")
    }
}

/// What a key must hold to be applied.
pub(crate) fn validate_key(key: &ItemKey) -> Result<(), String> {
    globset::Glob::new(&key.scope).map_err(|e| format!("`scope`: {e}"))?;
    if let Some(p) = &key.pattern {
        regex::Regex::new(p).map_err(|e| format!("`pattern`: {e}"))?;
    }
    match key.kind {
        Kind::Suppress if key.rule.is_none() && key.title.is_none() => {
            Err("a suppress item needs a `rule` or a `title` to match findings by".into())
        }
        Kind::Suppress if key.pattern.is_some() => Err("a suppress item matches findings, not a `pattern`".into()),
        _ => Ok(()),
    }
}

/// Everything that applies to a repository: learned items (gated),
/// imported ones over them, the committed file over both.
pub fn items_for(
    state: &crate::MemoryState,
    policy: &crate::Policy,
    now: chrono::DateTime<chrono::Utc>,
    committed: Option<&MemoryFile>,
) -> Vec<MemoryItem> {
    // Operator decisions (`approve`, `retire`) apply to imported items as
    // to learned ones; a committed file is above them all.
    let mut items = state.imported.clone();
    for m in &mut items {
        if let Some(d) = state.decisions.get(&m.id) {
            m.status = d.status;
            m.note = Some(format!(
                "{} by {} on {}",
                d.status,
                d.by,
                d.at.get(..10).unwrap_or(&d.at)
            ));
        }
    }
    let imported = MemoryFile {
        learned: Learned::Apply,
        items,
    };
    let base = merge(crate::derive_items(state, policy, now), Some(&imported));
    merge(base, committed)
}

/// Learned items with committed ones laid over them: a committed item
/// replaces the learned item of the same id; with `learned: ignore` only
/// committed items remain.
pub fn merge(learned: Vec<MemoryItem>, committed: Option<&MemoryFile>) -> Vec<MemoryItem> {
    let Some(file) = committed else {
        return learned;
    };
    let ids: BTreeSet<&str> = file.items.iter().map(|m| m.id.as_str()).collect();
    let mut out: Vec<MemoryItem> = match file.learned {
        Learned::Apply => learned.into_iter().filter(|m| !ids.contains(m.id.as_str())).collect(),
        Learned::Ignore => vec![],
    };
    out.extend(file.items.iter().cloned());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"
version: 1
items:
  - kind: suppress
    status: active
    scope: "scripts/**"
    rule: sql-string-building
    text: Migration scripts build SQL from constants.
  - kind: avoid
    status: suggested
    scope: "shop/**/*.py"
    pattern: '\bprint\('
    text: Log with the module's logger, never print().
"#;

    #[test]
    fn a_file_round_trips_through_render() {
        let f = MemoryFile::parse(FILE).unwrap();
        assert_eq!(f.items.len(), 2);
        assert_eq!(f.items[0].id, f.items[0].key.id());
        assert!(f.items.iter().all(|m| m.origin == Origin::Committed));
        let again = MemoryFile::parse(&MemoryFile::render(&f.items, Learned::Apply)).unwrap();
        assert_eq!(again, f);
    }

    #[test]
    fn bad_files_say_which_item_and_field() {
        let cases = [
            ("version: 2\nitems: []\n", "`version: 2`"),
            (
                "version: 1\nitems:\n  - {kind: suppress, status: active, text: x}\n",
                "item 1",
            ),
            (
                "version: 1\nitems:\n  - {kind: avoid, status: active, pattern: '(', text: x}\n",
                "`pattern`",
            ),
            (
                "version: 1\nitems:\n  - {kind: suppress, status: active, rule: r, scope: '[', text: x}\n",
                "`scope`",
            ),
            (
                "version: 1\nitems:\n  - {kind: suppress, status: sure, rule: r, text: x}\n",
                "unknown variant `sure`",
            ),
            (
                "version: 1\nitems:\n  - {kind: suppress, status: active, rule: r, text: ' '}\n",
                "`text` is empty",
            ),
            ("version: 1\nbogus: 1\n", "unknown field `bogus`"),
        ];
        for (text, want) in cases {
            let e = MemoryFile::parse(text).unwrap_err().to_string();
            assert!(e.contains(want) && e.contains(MEMORY_PATH), "{text:?}: {e}");
        }
        let dup = "version: 1\nitems:\n  - {id: M-1, kind: suppress, status: active, rule: r, text: x}\n  - {id: M-1, kind: suppress, status: active, rule: s, text: y}\n";
        assert!(MemoryFile::parse(dup).unwrap_err().to_string().contains("duplicate id"));
    }

    #[test]
    fn committed_items_win_and_can_shut_learning_out() {
        let f = MemoryFile::parse(FILE).unwrap();
        let mut learned = f.items[0].clone();
        learned.origin = Origin::Learned;
        learned.status = Status::Suggested;
        let other = MemoryItem {
            id: "M-other".into(),
            ..learned.clone()
        };
        let merged = merge(vec![learned, other.clone()], Some(&f));
        assert_eq!(merged.len(), 3);
        let same = merged.iter().find(|m| m.id == f.items[0].id).unwrap();
        assert_eq!((same.status, same.origin), (Status::Active, Origin::Committed));
        let only = MemoryFile {
            learned: Learned::Ignore,
            ..f.clone()
        };
        assert_eq!(merge(vec![other], Some(&only)).len(), 2);
    }
}

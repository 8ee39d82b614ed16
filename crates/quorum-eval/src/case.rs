//! The case format: one JSON file per case. Unknown fields are ignored.

use std::path::{Path, PathBuf};

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Edit {
    pub file: String,
    pub find: String,
    pub replace: String,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Location {
    pub file: String,
    pub anchor: String,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Expected {
    pub file: String,
    pub anchor: String,
    #[serde(default)]
    pub category: Option<String>,
    /// What is wrong, in one line: what "explained" scoring judges a
    /// finding's text against.
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub alternatives: Vec<Location>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Case {
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub body: String,
    pub edits: Vec<Edit>,
    #[serde(default)]
    pub expected: Vec<Expected>,
    /// Where the case was loaded from.
    #[serde(skip)]
    pub path: PathBuf,
}

/// Why a case cannot run. The run reports it by name and goes on.
#[derive(Debug, thiserror::Error)]
pub enum CaseError {
    #[error("{path}: cannot read: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a valid case: {source}")]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("case {case}: edit {index} of {file}: `find` occurs {count} times (must be exactly once)")]
    FindNotUnique {
        case: String,
        index: usize,
        file: String,
        count: usize,
    },
    #[error("case {case}: edit {index}: file {file} does not exist in the fixture")]
    MissingFile { case: String, index: usize, file: String },
    #[error("case {case}: edit {index}: path {file} leaves the fixture")]
    UnsafePath { case: String, index: usize, file: String },
}

/// Loads every `*.json` case in `dir`, sorted by file name. Each entry is a
/// case or the reason it is invalid.
pub fn load_cases(dir: &Path) -> std::io::Result<Vec<Result<Case, CaseError>>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    Ok(paths.into_iter().map(|p| load_case(&p)).collect())
}

pub fn load_case(path: &Path) -> Result<Case, CaseError> {
    let text = std::fs::read_to_string(path).map_err(|source| CaseError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut case: Case = serde_json::from_str(&text).map_err(|source| CaseError::Json {
        path: path.to_path_buf(),
        source,
    })?;
    case.path = path.to_path_buf();
    Ok(case)
}

/// Whether a case-relative path stays inside the fixture.
pub fn safe_relative(p: &str) -> bool {
    let path = Path::new(p);
    !p.is_empty() && path.is_relative() && path.components().all(|c| matches!(c, std::path::Component::Normal(_)))
}

impl Case {
    /// Applies the edits in order to the tree at `root`.
    pub fn apply(&self, root: &Path) -> Result<(), CaseError> {
        for (index, e) in self.edits.iter().enumerate() {
            if !safe_relative(&e.file) {
                return Err(CaseError::UnsafePath {
                    case: self.id.clone(),
                    index,
                    file: e.file.clone(),
                });
            }
            let path = root.join(&e.file);
            let text = std::fs::read_to_string(&path).map_err(|_| CaseError::MissingFile {
                case: self.id.clone(),
                index,
                file: e.file.clone(),
            })?;
            let count = text.matches(&e.find).count();
            if count != 1 {
                return Err(CaseError::FindNotUnique {
                    case: self.id.clone(),
                    index,
                    file: e.file.clone(),
                    count,
                });
            }
            std::fs::write(&path, text.replacen(&e.find, &e.replace, 1)).map_err(|source| CaseError::Io {
                path: path.clone(),
                source,
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(edits: Vec<Edit>) -> Case {
        Case {
            id: "c".into(),
            title: "t".into(),
            body: String::new(),
            edits,
            expected: vec![],
            path: PathBuf::new(),
        }
    }

    #[test]
    fn applies_edits_in_order_and_rejects_ambiguous_finds() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "x = 1\ny = 1\n").unwrap();
        let ok = case(vec![
            Edit {
                file: "a.py".into(),
                find: "x = 1".into(),
                replace: "x = 2".into(),
            },
            Edit {
                file: "a.py".into(),
                find: "x = 2".into(),
                replace: "x = 3".into(),
            },
        ]);
        ok.apply(dir.path()).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.py")).unwrap(),
            "x = 3\ny = 1\n"
        );
        let twice = case(vec![Edit {
            file: "a.py".into(),
            find: " = ".into(),
            replace: "=".into(),
        }]);
        assert!(matches!(
            twice.apply(dir.path()),
            Err(CaseError::FindNotUnique { count: 2, .. })
        ));
        let escape = case(vec![Edit {
            file: "../a.py".into(),
            find: "x".into(),
            replace: "y".into(),
        }]);
        assert!(matches!(escape.apply(dir.path()), Err(CaseError::UnsafePath { .. })));
    }

    #[test]
    fn the_storefront_cases_load() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../storefront-fixture/cases");
        let cases = load_cases(&dir).unwrap();
        assert!(cases.len() >= 11);
        for c in &cases {
            assert!(c.is_ok(), "{c:?}");
        }
        assert!(
            cases.iter().any(|c| c.as_ref().unwrap().expected.is_empty()),
            "a clean control"
        );
    }

    #[test]
    fn unknown_fields_are_ignored() {
        let c: Case =
            serde_json::from_str(r#"{"id":"x","title":"t","edits":[],"expected":[],"note":"extra"}"#).unwrap();
        assert_eq!(c.id, "x");
    }
}

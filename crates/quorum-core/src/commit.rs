//! Commit ids: the one definition every intake path, the clone cache and the
//! indexer share.
//!
//! A commit id here is a *full* object name: 40 hex digits in a SHA-1
//! repository, 64 in a SHA-256 one. Abbreviations are refused at the edge:
//! a webhook always carries the full id, and an abbreviation accepted at the
//! gateway would be ambiguous (or refused) by every later hop.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Hex digits in a SHA-1 object name.
pub const SHA1_HEX_LEN: usize = 40;
/// Hex digits in a SHA-256 object name.
pub const SHA256_HEX_LEN: usize = 64;

/// A validated full commit id, lower-cased.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CommitId(String);

/// Why a string is not a full commit id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommitIdError {
    #[error("`{0}` is not a commit id: it has {1} characters, a full id has 40 (SHA-1) or 64 (SHA-256)")]
    Length(String, usize),
    #[error("`{0}` is not a commit id: only hex digits 0-9 and a-f may appear")]
    NotHex(String),
}

impl CommitId {
    /// Parses a full 40- or 64-hex commit id (either case; stored lower-case).
    pub fn parse(s: &str) -> Result<Self, CommitIdError> {
        if !s.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(CommitIdError::NotHex(s.into()));
        }
        if s.len() != SHA1_HEX_LEN && s.len() != SHA256_HEX_LEN {
            return Err(CommitIdError::Length(s.into(), s.len()));
        }
        Ok(CommitId(s.to_ascii_lowercase()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Whether `s` is a full commit id (as opposed to a branch, tag or
/// abbreviation): the test the clone cache and the indexer use to decide
/// whether a ref can move.
pub fn is_commit_id(s: &str) -> bool {
    CommitId::parse(s).is_ok()
}

impl fmt::Display for CommitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for CommitId {
    type Err = CommitIdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CommitId::parse(s)
    }
}

impl TryFrom<String> for CommitId {
    type Error = CommitIdError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        CommitId::parse(&s)
    }
}

impl From<CommitId> for String {
    fn from(c: CommitId) -> String {
        c.0
    }
}

impl AsRef<str> for CommitId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1_and_sha256_ids_are_commit_ids() {
        let sha1 = "a".repeat(40);
        let sha256 = "0123456789abcdef".repeat(4);
        assert_eq!(CommitId::parse(&sha1).unwrap().as_str(), sha1);
        assert_eq!(CommitId::parse(&sha256).unwrap().as_str(), sha256);
        assert!(is_commit_id(&sha256));
    }

    #[test]
    fn upper_case_is_accepted_and_normalised() {
        let id = CommitId::parse(&"ABCDEF0123".repeat(4)).unwrap();
        assert_eq!(id.as_str(), "abcdef0123".repeat(4));
    }

    #[test]
    fn abbreviations_branches_and_odd_lengths_are_refused_with_the_reason() {
        for (s, needle) in [
            ("abc1234", "7 characters"),
            (&"a".repeat(41), "41 characters"),
            (&"a".repeat(63), "63 characters"),
            ("", "0 characters"),
            ("main", "hex digits"),
            (&format!("{}g", "a".repeat(39)), "hex digits"),
        ] {
            let err = CommitId::parse(s).unwrap_err().to_string();
            assert!(err.contains(needle), "{s:?}: {err}");
            assert!(!is_commit_id(s));
        }
    }

    #[test]
    fn serde_round_trips_and_refuses_a_bad_id() {
        let id = CommitId::parse(&"b".repeat(64)).unwrap();
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(serde_json::from_str::<CommitId>(&json).unwrap(), id);
        let err = serde_json::from_str::<CommitId>("\"abc\"").unwrap_err().to_string();
        assert!(err.contains("not a commit id"), "{err}");
    }
}

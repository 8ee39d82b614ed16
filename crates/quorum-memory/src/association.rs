//! Who a commenter is to the repository: GitHub's `author_association`, the
//! one field every comment carries that says whether its author speaks for
//! the team. The trust gates of memory items rest on it.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::MemoryError;

/// GitHub's `author_association` values (REST `author-association` schema).
/// GitLab access levels map onto the same scale ([`Association::from_gitlab_access`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Association {
    Owner,
    Member,
    Collaborator,
    Contributor,
    FirstTimeContributor,
    FirstTimer,
    Mannequin,
    None,
}

impl Association {
    pub const ALL: [Association; 8] = [
        Association::Owner,
        Association::Member,
        Association::Collaborator,
        Association::Contributor,
        Association::FirstTimeContributor,
        Association::FirstTimer,
        Association::Mannequin,
        Association::None,
    ];

    /// Reads GitHub's spelling; anything else is an error naming the value.
    pub fn parse(s: &str) -> Result<Association, MemoryError> {
        Association::ALL
            .into_iter()
            .find(|a| a.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| MemoryError::Invalid(format!("unknown author_association `{s}`")))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Association::Owner => "OWNER",
            Association::Member => "MEMBER",
            Association::Collaborator => "COLLABORATOR",
            Association::Contributor => "CONTRIBUTOR",
            Association::FirstTimeContributor => "FIRST_TIME_CONTRIBUTOR",
            Association::FirstTimer => "FIRST_TIMER",
            Association::Mannequin => "MANNEQUIN",
            Association::None => "NONE",
        }
    }

    /// Whether this person speaks for the team: only they can make a memory
    /// item active. Everyone else's evidence makes items `suggested` at most.
    pub fn is_trusted(self) -> bool {
        matches!(
            self,
            Association::Owner | Association::Member | Association::Collaborator
        )
    }

    /// GitLab's access level (10 guest … 50 owner) on the same scale:
    /// developers and up can push, so they count as collaborators.
    pub fn from_gitlab_access(level: u32) -> Association {
        match level {
            50.. => Association::Owner,
            40..=49 => Association::Member,
            30..=39 => Association::Collaborator,
            1..=29 => Association::Contributor,
            0 => Association::None,
        }
    }

    /// GitHub's repository permission (`admin`, `maintain`, `write`, …), for
    /// people known only from a reaction, which carries no association.
    pub fn from_permission(permission: &str) -> Association {
        match permission {
            "admin" => Association::Owner,
            "maintain" => Association::Member,
            "write" => Association::Collaborator,
            "triage" | "read" => Association::Contributor,
            _ => Association::None,
        }
    }
}

impl fmt::Display for Association {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_github_value_and_refuses_others() {
        for a in Association::ALL {
            assert_eq!(Association::parse(a.as_str()).unwrap(), a);
        }
        let e = Association::parse("MAINTAINER").unwrap_err().to_string();
        assert!(e.contains("`MAINTAINER`"), "{e}");
    }

    #[test]
    fn only_owners_members_and_collaborators_are_trusted() {
        let trusted: Vec<_> = Association::ALL.into_iter().filter(|a| a.is_trusted()).collect();
        assert_eq!(
            trusted,
            [Association::Owner, Association::Member, Association::Collaborator]
        );
        assert!(Association::from_permission("write").is_trusted());
        assert!(!Association::from_permission("triage").is_trusted());
        assert!(Association::from_gitlab_access(30).is_trusted());
        assert!(!Association::from_gitlab_access(20).is_trusted());
    }
}

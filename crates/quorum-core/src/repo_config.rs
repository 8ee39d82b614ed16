//! `.quorum.yml`: the one schema of a repository's own configuration, with
//! both of its sections. The gateway compiles `review:` into its admission
//! policy (`quorum_gateway::policy`), the rule engine compiles
//! `conventions:` into team rules (`quorum_engine::conventions`); both read
//! the file through [`RepoConfig::parse`], so a key one of them does not
//! know is an error for both, with the same message.
//!
//! ```yaml
//! review:                 # when and how reviews happen (the gateway)
//!   mode: auto            # auto | manual (slash commands only) | off
//!   agents: [static, reviewer, security, tests]
//! conventions:            # the team's rules (the engine)
//!   - id: money-is-never-float
//!     message: Amounts are integer cents or Decimal, never float.
//!     pattern: '\bfloat\('
//! ```

use serde::Deserialize;

use crate::job::{ContextMode, PublishMode};
use crate::review::LowSeverity;
use crate::{AgentRole, Category, Severity};

/// Where the file lives in a repository (its default branch).
pub const CONFIG_PATH: &str = ".quorum.yml";
/// Larger files are not read as configuration.
pub const MAX_CONFIG_BYTES: usize = 256 * 1024;

/// The whole file. Both sections are optional; an empty file is the defaults.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepoConfig {
    #[serde(default)]
    pub review: Option<ReviewSection>,
    #[serde(default)]
    pub conventions: Vec<ConventionSpec>,
}

/// When reviews happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ReviewMode {
    /// On every opened, pushed, reopened or ready PR.
    #[default]
    Auto,
    /// Only when someone with write access comments `/review`.
    Manual,
    /// Never.
    Off,
}

/// Labels that force or skip a review.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelRules {
    #[serde(default)]
    pub force: Vec<String>,
    #[serde(default)]
    pub skip: Vec<String>,
}

/// `review:`: every key optional, merged over the server's defaults.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewSection {
    pub mode: Option<ReviewMode>,
    pub drafts: Option<bool>,
    pub bots: Option<bool>,
    pub paths: Option<Vec<String>>,
    pub exclude: Option<Vec<String>>,
    pub labels: Option<LabelRules>,
    pub max_files: Option<usize>,
    pub max_changed_lines: Option<usize>,
    pub agents: Option<Vec<AgentRole>>,
    pub publish: Option<PublishMode>,
    pub context: Option<ContextMode>,
    pub inline_min_severity: Option<Severity>,
    pub low_severity: Option<LowSeverity>,
}

/// One entry of `conventions:`, as written (the engine validates and
/// compiles it).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConventionSpec {
    pub id: String,
    pub message: String,
    #[serde(default)]
    pub paths: Vec<String>,
    #[serde(default)]
    pub exclude: Vec<String>,
    #[serde(default)]
    pub pattern: Option<String>,
    #[serde(default)]
    pub query: Option<String>,
    #[serde(default)]
    pub language: Option<String>,
    #[serde(default = "default_severity")]
    pub severity: Severity,
    #[serde(default = "default_category")]
    pub category: Category,
    #[serde(default = "default_confidence")]
    pub confidence: f64,
}

fn default_severity() -> Severity {
    Severity::Major
}
fn default_category() -> Category {
    Category::Convention
}
fn default_confidence() -> f64 {
    0.9
}

impl RepoConfig {
    /// Reads the file's text. The error says what is wrong (with the YAML
    /// parser's line and column) but not which file: callers prefix it.
    pub fn parse(text: &str) -> Result<RepoConfig, String> {
        if text.len() > MAX_CONFIG_BYTES {
            return Err(format!("the file is over {} KiB", MAX_CONFIG_BYTES / 1024));
        }
        if text.trim().is_empty() {
            return Ok(RepoConfig::default());
        }
        serde_norway::from_str(text).map_err(|e| crate::error::chain(&e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_sections_are_read_from_one_file() {
        let cfg = RepoConfig::parse(
            "review:\n  mode: manual\n  agents: [static]\nconventions:\n  - id: a\n    message: m\n    pattern: x\n",
        )
        .unwrap();
        let review = cfg.review.unwrap();
        assert_eq!(review.mode, Some(ReviewMode::Manual));
        assert_eq!(review.agents, Some(vec![AgentRole::Static]));
        assert_eq!(cfg.conventions.len(), 1);
        assert_eq!(cfg.conventions[0].severity, Severity::Major);
    }

    #[test]
    fn an_empty_file_is_the_defaults() {
        let cfg = RepoConfig::parse(" \n").unwrap();
        assert!(cfg.review.is_none() && cfg.conventions.is_empty());
    }

    #[test]
    fn an_unknown_key_in_either_section_or_at_the_top_is_named() {
        for (yaml, key) in [
            ("reveiw:\n  mode: off\n", "reveiw"),
            ("review:\n  mod: off\n", "mod"),
            ("conventions:\n  - id: a\n    message: m\n    patern: x\n", "patern"),
        ] {
            let err = RepoConfig::parse(yaml).unwrap_err();
            assert!(err.contains(key), "{yaml}: {err}");
        }
    }

    #[test]
    fn an_oversized_file_is_refused_before_parsing() {
        let err = RepoConfig::parse(&"#".repeat(MAX_CONFIG_BYTES + 1)).unwrap_err();
        assert!(err.contains("256 KiB"), "{err}");
    }
}

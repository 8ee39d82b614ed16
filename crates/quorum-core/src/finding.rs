//! Findings: what an agent claims about a change, with the evidence it rests on.

use serde::{Deserialize, Serialize};
use std::fmt;

use crate::job::AgentRole;

/// What kind of problem a finding describes (SPEC §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    Bug,
    Security,
    Convention,
    ErrorHandling,
    Performance,
    Testing,
    Style,
}

impl Category {
    pub const ALL: [Category; 7] = [
        Category::Bug,
        Category::Security,
        Category::Convention,
        Category::ErrorHandling,
        Category::Performance,
        Category::Testing,
        Category::Style,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Category::Bug => "bug",
            Category::Security => "security",
            Category::Convention => "convention",
            Category::ErrorHandling => "error-handling",
            Category::Performance => "performance",
            Category::Testing => "testing",
            Category::Style => "style",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How much a finding matters. Ordered: `Critical` is the greatest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Nitpick,
    Minor,
    Major,
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Nitpick => "nitpick",
            Severity::Minor => "minor",
            Severity::Major => "major",
            Severity::Critical => "critical",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Something a finding rests on: a rule that matched, a line, a graph path, a
/// tool result. Shown to the critic and to humans so they can check the claim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// Where the evidence came from, e.g. `rule:sql-string-building` or `tool:get_callers`.
    pub source: String,
    /// The evidence itself (a matched line, a call path, ...).
    pub detail: String,
}

/// One claim about a change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub file: String,
    /// New-side line (the last line of the range when `start_line` is set).
    pub line: u32,
    /// First line of a multi-line range, new side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_line: Option<u32>,
    pub category: Category,
    pub severity: Severity,
    /// 0.0 ..= 1.0.
    pub confidence: f64,
    pub title: String,
    pub explanation: String,
    /// Replacement text for the line range, rendered as a suggestion block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
    /// Stable rule id for deterministic findings (`None` for free-form ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    pub agent: AgentRole,
    #[serde(default)]
    pub evidence: Vec<Evidence>,
    /// Agents whose findings were merged into this one (filled by the aggregator).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agreed_by: Vec<AgentRole>,
}

impl Finding {
    /// The inclusive line range the finding covers.
    pub fn line_range(&self) -> (u32, u32) {
        let start = self.start_line.unwrap_or(self.line).min(self.line);
        (start, self.line)
    }

    /// Whether the finding was produced by deterministic rules (and therefore
    /// skips the critic's judgement).
    pub fn is_deterministic(&self) -> bool {
        self.agent == AgentRole::Static
    }

    /// Checks the invariants a finding must satisfy whatever produced it; model
    /// output is validated with this before it enters the pipeline.
    pub fn validate(&self) -> Result<(), String> {
        if self.file.trim().is_empty() {
            return Err("finding has an empty file".into());
        }
        if self.line == 0 {
            return Err(format!("finding in {} has line 0 (lines start at 1)", self.file));
        }
        if let Some(s) = self.start_line
            && (s == 0 || s > self.line)
        {
            return Err(format!(
                "finding in {}: start_line {s} must be between 1 and line {}",
                self.file, self.line
            ));
        }
        if !(0.0..=1.0).contains(&self.confidence) || self.confidence.is_nan() {
            return Err(format!(
                "finding in {}:{} has confidence {} outside 0..=1",
                self.file, self.line, self.confidence
            ));
        }
        if self.title.trim().is_empty() {
            return Err(format!("finding in {}:{} has no title", self.file, self.line));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn finding(file: &str, line: u32) -> Finding {
        Finding {
            file: file.into(),
            line,
            start_line: None,
            category: Category::Bug,
            severity: Severity::Major,
            confidence: 0.9,
            title: "t".into(),
            explanation: "e".into(),
            suggestion: None,
            rule: None,
            agent: AgentRole::Reviewer,
            evidence: vec![],
            agreed_by: vec![],
        }
    }

    #[test]
    fn severity_orders_critical_highest() {
        assert!(Severity::Critical > Severity::Major);
        assert!(Severity::Minor > Severity::Nitpick);
    }

    #[test]
    fn category_serialises_kebab_case() {
        let s = serde_json::to_string(&Category::ErrorHandling).unwrap();
        assert_eq!(s, "\"error-handling\"");
    }

    #[test]
    fn validate_rejects_bad_values() {
        assert!(finding("a.py", 3).validate().is_ok());
        assert!(finding("a.py", 0).validate().unwrap_err().contains("line 0"));
        let mut f = finding("a.py", 3);
        f.confidence = 1.5;
        assert!(f.validate().unwrap_err().contains("confidence"));
        let mut f = finding("a.py", 3);
        f.start_line = Some(5);
        assert!(f.validate().unwrap_err().contains("start_line"));
        assert!(finding(" ", 3).validate().is_err());
    }
}

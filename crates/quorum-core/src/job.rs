//! A review job: the SCM-neutral request every intake path (GitHub webhook,
//! GitLab webhook, a local git range) is normalised into, and the run state
//! that follows it through the fleet.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

use crate::diff::{FileDiff, FileStatus, parse_file_patch};
use crate::review::InlinePolicy;

/// The four agent roles. Each is its own consumer group (fan-out).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentRole {
    Static,
    Reviewer,
    Security,
    Tests,
}

impl AgentRole {
    pub const ALL: [AgentRole; 4] = [
        AgentRole::Static,
        AgentRole::Reviewer,
        AgentRole::Security,
        AgentRole::Tests,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AgentRole::Static => "static",
            AgentRole::Reviewer => "reviewer",
            AgentRole::Security => "security",
            AgentRole::Tests => "tests",
        }
    }
}

impl fmt::Display for AgentRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for AgentRole {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        AgentRole::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| format!("unknown agent role `{s}` (expected static, reviewer, security or tests)"))
    }
}

/// Where a change lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    Github,
    Gitlab,
    /// A local git repository (`quorum review`, the demo, the eval).
    Local,
}

/// A repository, named the way its provider names it (`owner/name`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoRef {
    pub provider: Provider,
    pub full_name: String,
}

impl RepoRef {
    /// Validates the name the way its provider names repositories: GitLab
    /// projects may sit in nested groups (`group/sub/project`).
    pub fn validate(&self) -> Result<(), String> {
        match self.provider {
            Provider::Gitlab => validate_project_path(&self.full_name),
            Provider::Github | Provider::Local => validate_repo_name(&self.full_name),
        }
    }
}

/// Validates a GitLab project path (`group[/subgroup…]/project`, 2 to 20
/// parts) with the same per-part rules as [`validate_repo_name`].
pub fn validate_project_path(path: &str) -> Result<(), String> {
    let parts: Vec<&str> = path.split('/').collect();
    if !(2..=20).contains(&parts.len()) {
        return Err(format!(
            "project `{path}` must be `group/project` or `group/subgroup/…/project`"
        ));
    }
    parts.iter().try_for_each(|p| validate_part("project", path, p))
}

/// Validates an `owner/name` repository name before it is used in a key, a
/// path or a clone URL: no option injection, no path escape.
pub fn validate_repo_name(name: &str) -> Result<(), String> {
    let mut parts = name.split('/');
    let (Some(owner), Some(repo), None) = (parts.next(), parts.next(), parts.next()) else {
        return Err(format!("repository `{name}` must be `owner/name`"));
    };
    [owner, repo]
        .iter()
        .try_for_each(|p| validate_part("repository", name, p))
}

fn validate_part(kind: &str, name: &str, part: &str) -> Result<(), String> {
    let ok_chars = part
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if part.is_empty() || !ok_chars || part.starts_with(['-', '.']) || part.len() > 100 {
        return Err(format!(
            "{kind} `{name}`: `{part}` may only use letters, digits, `-`, `_`, `.` and may not start with `-` or `.`"
        ));
    }
    Ok(())
}

/// One changed file as the SCM reports it. `patch` is `None` for binary or
/// too-large files (GitHub omits it); such files are listed but not reviewed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    pub status: FileStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// Why the patch was left out of the review (over the size budget), so
    /// the review can say which files nobody read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub omitted: Option<String>,
}

impl FileChange {
    /// The parsed diff of this file, with any parse problems.
    pub fn diff(&self) -> (FileDiff, Vec<crate::diff::DiffError>) {
        let (mut diff, errors) = parse_file_patch(
            &self.path,
            self.old_path.as_deref(),
            self.status,
            self.patch.as_deref().unwrap_or(""),
        );
        diff.binary = self.patch.is_none();
        (diff, errors)
    }
}

/// Where the publisher sends the review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum PublishMode {
    /// Post as soon as the critic has judged it.
    #[default]
    Direct,
    /// Store as a draft; post only after an operator approves (F-PUB-4).
    Draft,
}

impl FromStr for PublishMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "direct" => Ok(PublishMode::Direct),
            "draft" => Ok(PublishMode::Draft),
            other => Err(format!("publish mode `{other}` must be `direct` or `draft`")),
        }
    }
}

/// What agents see beyond the diff (F-EVAL-2's ablation axis).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ContextMode {
    /// The diff alone.
    DiffOnly,
    /// The diff and the full head content of the changed files.
    FullFiles,
    /// The diff, the impact report from the code graph, and graph tools.
    #[default]
    GraphRag,
}

impl ContextMode {
    pub const ALL: [ContextMode; 3] = [ContextMode::DiffOnly, ContextMode::FullFiles, ContextMode::GraphRag];

    pub fn as_str(self) -> &'static str {
        match self {
            ContextMode::DiffOnly => "diff_only",
            ContextMode::FullFiles => "full_files",
            ContextMode::GraphRag => "graph_rag",
        }
    }
}

impl FromStr for ContextMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ContextMode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| format!("context mode `{s}` must be one of diff_only, full_files, graph_rag"))
    }
}

/// The parts of the repository policy that travel with a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobPolicy {
    /// Agents expected to report; the aggregator flushes when all of them did.
    pub agents: Vec<AgentRole>,
    #[serde(default)]
    pub publish_mode: PublishMode,
    #[serde(default)]
    pub context_mode: ContextMode,
    /// Which findings are posted inline and where low-severity notes go
    /// (absent from older messages: the default, notes grouped in the body).
    #[serde(default)]
    pub inline: InlinePolicy,
    /// What was wrong with the repository's policy file (its defaults were
    /// used instead); the review says so at the top.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Default for JobPolicy {
    fn default() -> Self {
        JobPolicy {
            agents: AgentRole::ALL.to_vec(),
            publish_mode: PublishMode::Direct,
            context_mode: ContextMode::GraphRag,
            inline: InlinePolicy::default(),
            warnings: vec![],
        }
    }
}

/// The normalised review request (SCM-neutral).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewRequest {
    pub job_id: String,
    pub repo: RepoRef,
    /// PR / MR number; 0 for a local range.
    pub number: u64,
    pub title: String,
    #[serde(default)]
    pub body: String,
    #[serde(default)]
    pub author: String,
    pub base_sha: String,
    pub head_sha: String,
    pub files: Vec<FileChange>,
    #[serde(default)]
    pub policy: JobPolicy,
    /// When the intake accepted the request (Unix ms); used for the
    /// webhook-to-review latency.
    pub requested_at_ms: u64,
}

impl ReviewRequest {
    /// Parsed diffs of every file that has a patch.
    pub fn diffs(&self) -> Vec<FileDiff> {
        self.files
            .iter()
            .filter(|f| f.patch.is_some())
            .map(|f| f.diff().0)
            .collect()
    }

    /// The dedupe key of F-GW-3: one job per repo + PR + head SHA.
    pub fn dedupe_key(&self) -> String {
        dedupe_key(&self.repo.full_name, self.number, &self.head_sha)
    }
}

/// The dedupe key of F-GW-3, shared by every intake path.
pub fn dedupe_key(repo: &str, number: u64, head_sha: &str) -> String {
    format!("{repo}#{number}@{head_sha}")
}

/// Where a run is (SPEC §5 "Run state").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunState {
    Queued,
    Running,
    Aggregated,
    Judged,
    Published,
    Draft,
    Approved,
    Discarded,
    Failed,
}

impl RunState {
    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Queued => "queued",
            RunState::Running => "running",
            RunState::Aggregated => "aggregated",
            RunState::Judged => "judged",
            RunState::Published => "published",
            RunState::Draft => "draft",
            RunState::Approved => "approved",
            RunState::Discarded => "discarded",
            RunState::Failed => "failed",
        }
    }

    /// Whether the run has reached an end state.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            RunState::Published | RunState::Approved | RunState::Discarded | RunState::Failed
        )
    }
}

impl FromStr for RunState {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        serde_json::from_value(serde_json::Value::String(s.to_string())).map_err(|_| format!("unknown run state `{s}`"))
    }
}

/// Per-agent status within a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentStatus {
    Pending,
    Running,
    Done,
    Error,
    Timeout,
}

impl AgentStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentStatus::Pending => "pending",
            AgentStatus::Running => "running",
            AgentStatus::Done => "done",
            AgentStatus::Error => "error",
            AgentStatus::Timeout => "timeout",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_names_are_validated() {
        assert!(validate_repo_name("octo-org/hello.world").is_ok());
        for bad in ["", "a", "a/b/c", "-rf/x", "a/..", "a/b c", "a/$(x)", "../etc", "a/.git"] {
            assert!(validate_repo_name(bad).is_err(), "{bad} accepted");
        }
        // GitLab's nested groups, with the same rules per part.
        assert!(validate_project_path("gitlab-org/security/gitlab").is_ok());
        assert!(validate_project_path("a/b").is_ok());
        for bad in ["a", "a/b/", "a//b", "a/../b", "a/-b/c", "a/b c/d"] {
            assert!(validate_project_path(bad).is_err(), "{bad} accepted");
        }
        let nested = |provider| RepoRef {
            provider,
            full_name: "group/sub/project".into(),
        };
        assert!(nested(Provider::Gitlab).validate().is_ok());
        assert!(
            nested(Provider::Github).validate().is_err(),
            "GitHub has no nested owners"
        );
    }

    #[test]
    fn a_policy_from_an_older_message_groups_low_severity_notes() {
        let old = r#"{"agents":["static"],"publish_mode":"direct","context_mode":"diff_only"}"#;
        let p: JobPolicy = serde_json::from_str(old).unwrap();
        assert_eq!(p.inline, InlinePolicy::default());
        assert_eq!(p.inline.low_severity, crate::review::LowSeverity::Grouped);
        let partial: JobPolicy =
            serde_json::from_str(r#"{"agents":["static"],"inline":{"low_severity":"off"}}"#).unwrap();
        assert_eq!(partial.inline.min_severity, crate::Severity::Minor);
        let json = serde_json::to_string(&JobPolicy::default()).unwrap();
        assert_eq!(serde_json::from_str::<JobPolicy>(&json).unwrap(), JobPolicy::default());
    }

    #[test]
    fn role_round_trips() {
        for r in AgentRole::ALL {
            assert_eq!(r.as_str().parse::<AgentRole>().unwrap(), r);
        }
        assert!("nope".parse::<AgentRole>().unwrap_err().contains("unknown agent role"));
    }

    #[test]
    fn run_state_parses() {
        assert_eq!("published".parse::<RunState>().unwrap(), RunState::Published);
        assert!("x".parse::<RunState>().is_err());
        assert!(RunState::Failed.is_terminal() && !RunState::Judged.is_terminal());
    }

    #[test]
    fn file_without_patch_is_binary() {
        let f = FileChange {
            path: "a.png".into(),
            old_path: None,
            status: FileStatus::Added,
            patch: None,
            omitted: None,
        };
        assert!(f.diff().0.binary);
    }
}

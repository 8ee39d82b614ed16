//! Versioned payloads, one per topic, and their codec.

use quorum_core::review::AgentReport;
use quorum_core::{AgentRole, AgentStatus, Finding, RepoRef, ReviewRequest, Verdict};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::topics::Topic;

/// The payload schema version this build writes and the newest it reads.
pub const SCHEMA_VERSION: u32 = 1;

/// Why a message could not be decoded. Always an *invalid* message: retrying
/// cannot fix it, so workers dead-letter it.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("payload is not valid JSON for {payload}: {source}")]
    Json {
        payload: &'static str,
        #[source]
        source: serde_json::Error,
    },
    #[error("{payload} has no `schema_version`")]
    MissingVersion { payload: &'static str },
    #[error("{payload} has schema_version {found}; this build reads up to {SCHEMA_VERSION}")]
    UnsupportedVersion { payload: &'static str, found: u64 },
    #[error("{payload} is invalid: {reason}")]
    Invalid { payload: &'static str, reason: String },
}

/// A message body on one topic.
pub trait Payload: Serialize + DeserializeOwned {
    /// The topic this payload is published on.
    const TOPIC: Topic;
    /// A short type name for errors and the `quorum-payload` header.
    const NAME: &'static str;

    /// The message key (SPEC §1).
    fn key(&self) -> String;

    /// Semantic checks beyond the JSON shape.
    fn validate(&self) -> Result<(), String> {
        Ok(())
    }

    fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("payload types always serialise")
    }

    fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|source| DecodeError::Json {
            payload: Self::NAME,
            source,
        })?;
        match value.get("schema_version").and_then(|v| v.as_u64()) {
            None => return Err(DecodeError::MissingVersion { payload: Self::NAME }),
            Some(v) if v > SCHEMA_VERSION as u64 || v == 0 => {
                return Err(DecodeError::UnsupportedVersion {
                    payload: Self::NAME,
                    found: v,
                });
            }
            Some(_) => {}
        }
        let payload: Self = serde_json::from_value(value).map_err(|source| DecodeError::Json {
            payload: Self::NAME,
            source,
        })?;
        payload.validate().map_err(|reason| DecodeError::Invalid {
            payload: Self::NAME,
            reason,
        })?;
        Ok(payload)
    }
}

fn v1() -> u32 {
    SCHEMA_VERSION
}

/// `pr.review.requested`: a normalised review request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewRequested {
    #[serde(default = "v1")]
    pub schema_version: u32,
    pub request: ReviewRequest,
}

impl Payload for ReviewRequested {
    const TOPIC: Topic = Topic::ReviewRequested;
    const NAME: &'static str = "ReviewRequested";
    fn key(&self) -> String {
        self.request.job_id.clone()
    }
    fn validate(&self) -> Result<(), String> {
        let r = &self.request;
        if r.job_id.is_empty() {
            return Err("request.job_id is empty".into());
        }
        if r.policy.agents.is_empty() {
            return Err("request.policy.agents is empty: no agent would review it".into());
        }
        r.repo.validate()
    }
}

/// `review.agent.results`: what one agent found on one job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentResult {
    #[serde(default = "v1")]
    pub schema_version: u32,
    pub job_id: String,
    pub agent: AgentRole,
    /// `done` or `error`.
    pub status: AgentStatus,
    pub findings: Vec<Finding>,
    pub duration_ms: u64,
    /// Why the agent failed, or, with `done`, a note on a partial result
    /// (findings withheld over the per-agent cap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Model tokens spent (0 for the offline engine).
    #[serde(default)]
    pub tokens: TokenUsage,
    /// Model calls made, live and replayed from a response cache (0 for
    /// the offline engine).
    #[serde(default)]
    pub model_calls: ModelCalls,
    /// Tool calls the model made, answered or failed (0 for the offline
    /// engine).
    #[serde(default)]
    pub tool_calls: u32,
    /// The impact report the agent was given, rendered as in its prompt
    /// (within [`IMPACT_SHOWN_TOKENS`]): what the operator's console shows as
    /// "what the agents saw". Absent outside `graph_rag` or when the graph
    /// could not be read (added without a schema bump: absent means none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impact: Option<String>,
}

/// The token budget of the impact report an agent result carries: enough
/// for what changed, what breaks and the nearest callers, bounded so four
/// results stay small in the store and on the bus.
pub const IMPACT_SHOWN_TOKENS: usize = 1_500;

/// The most characters an impact report may carry on the bus: a budget's
/// worth with room for long paths. The rendering keeps every changed symbol
/// and broken call whatever the budget, so [`bounded_impact`] cuts a report
/// of a very large change here; a longer one on the bus is a producer's bug.
pub const IMPACT_MAX_CHARS: usize = 4 * IMPACT_SHOWN_TOKENS * 2;

/// `report` cut at a line boundary to [`IMPACT_MAX_CHARS`], saying how many
/// lines were left out.
pub fn bounded_impact(report: &str) -> String {
    if report.chars().count() <= IMPACT_MAX_CHARS {
        return report.to_string();
    }
    let lines: Vec<&str> = report.lines().collect();
    // Room for the closing note.
    let room = IMPACT_MAX_CHARS - 64;
    let (mut out, mut used, mut kept) = (String::new(), 0, 0);
    for line in &lines {
        let n = line.chars().count() + 1;
        if used + n > room {
            break;
        }
        out.push_str(line);
        out.push('\n');
        used += n;
        kept += 1;
    }
    out.push_str(&format!("… {} more lines not shown", lines.len() - kept));
    out
}

/// Token accounting by kind (F-AG-4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TokenUsage {
    pub prompt: u64,
    pub cached_prompt: u64,
    pub completion: u64,
}

/// Model calls of one review by where the answer came from: an eval
/// reports both, since replayed answers cost nothing now but were paid for
/// once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ModelCalls {
    /// Answered (or failed) by the model server.
    pub live: u32,
    /// Replayed from the response cache (`QUORUM_LLM_CACHE`).
    pub replayed: u32,
}

impl Payload for AgentResult {
    const TOPIC: Topic = Topic::AgentResults;
    const NAME: &'static str = "AgentResult";
    fn key(&self) -> String {
        self.job_id.clone()
    }
    fn validate(&self) -> Result<(), String> {
        if self.job_id.is_empty() {
            return Err("job_id is empty".into());
        }
        if !matches!(self.status, AgentStatus::Done | AgentStatus::Error) {
            return Err(format!("status `{}` is not a result status", self.status.as_str()));
        }
        for f in &self.findings {
            f.validate()?;
        }
        if let Some(text) = &self.impact
            && text.chars().count() > IMPACT_MAX_CHARS
        {
            return Err(format!(
                "impact report of {} characters, over the {IMPACT_MAX_CHARS} an agent result may carry",
                text.chars().count()
            ));
        }
        Ok(())
    }
}

/// `review.aggregated`: the merged findings of a job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AggregatedReview {
    #[serde(default = "v1")]
    pub schema_version: u32,
    pub request: ReviewRequest,
    pub findings: Vec<Finding>,
    pub agents: Vec<AgentReport>,
}

impl Payload for AggregatedReview {
    const TOPIC: Topic = Topic::Aggregated;
    const NAME: &'static str = "AggregatedReview";
    fn key(&self) -> String {
        self.request.job_id.clone()
    }
}

/// A finding with the critic's judgement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgedFinding {
    pub finding: Finding,
    pub keep: bool,
    pub reason: String,
    /// The review-memory item that dropped the finding, when one did
    /// (added without a schema bump: absent means none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suppressed_by: Option<String>,
}

/// `review.completed`: the judged review, ready to publish.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompletedReview {
    #[serde(default = "v1")]
    pub schema_version: u32,
    pub request: ReviewRequest,
    pub judged: Vec<JudgedFinding>,
    pub verdict: Verdict,
    pub summary: String,
    pub agents: Vec<AgentReport>,
}

impl CompletedReview {
    pub fn kept(&self) -> Vec<Finding> {
        self.judged
            .iter()
            .filter(|j| j.keep)
            .map(|j| j.finding.clone())
            .collect()
    }
}

impl Payload for CompletedReview {
    const TOPIC: Topic = Topic::Completed;
    const NAME: &'static str = "CompletedReview";
    fn key(&self) -> String {
        self.request.job_id.clone()
    }
}

/// `repo.index.requested`: (re)build the code graph of a repo at a ref.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexRequested {
    #[serde(default = "v1")]
    pub schema_version: u32,
    pub repo: RepoRef,
    /// A branch name or a commit id. A branch also moves the branch's graph
    /// pointer, so the next build of that branch is incremental.
    pub git_ref: String,
    /// Pull requests whose review threads were resolved or reopened (a
    /// `pull_request_review_thread` webhook): review memory re-reads them
    /// on this request's refresh, whatever its cursor says. Absent in
    /// older messages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory_pull_requests: Vec<u64>,
}

/// Most pull requests one index request may ask memory to re-read.
pub const MAX_MEMORY_PULL_REQUESTS: usize = 100;

impl Payload for IndexRequested {
    const TOPIC: Topic = Topic::IndexRequested;
    const NAME: &'static str = "IndexRequested";
    fn key(&self) -> String {
        self.repo.full_name.clone()
    }
    fn validate(&self) -> Result<(), String> {
        self.repo.validate()?;
        if self.git_ref.is_empty() || self.git_ref.starts_with('-') {
            return Err(format!("git_ref `{}` is empty or looks like an option", self.git_ref));
        }
        if self.memory_pull_requests.len() > MAX_MEMORY_PULL_REQUESTS {
            return Err(format!(
                "memory_pull_requests holds {} pull requests; at most {MAX_MEMORY_PULL_REQUESTS}",
                self.memory_pull_requests.len()
            ));
        }
        if self.memory_pull_requests.contains(&0) {
            return Err("memory_pull_requests holds pull request 0".into());
        }
        Ok(())
    }
}

/// An operator's decision on a draft review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DraftDecision {
    Approve,
    Discard,
}

/// `review.draft.decided`: publish or drop a draft (F-PUB-4). Applied by the
/// publisher, the only service that writes to the SCM.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DraftDecided {
    #[serde(default = "v1")]
    pub schema_version: u32,
    pub job_id: String,
    pub decision: DraftDecision,
    /// Who decided (for the audit log).
    pub operator: String,
}

impl Payload for DraftDecided {
    const TOPIC: Topic = Topic::DraftDecided;
    const NAME: &'static str = "DraftDecided";
    fn key(&self) -> String {
        self.job_id.clone()
    }
    fn validate(&self) -> Result<(), String> {
        if self.job_id.trim().is_empty() {
            return Err("job_id is empty".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quorum_core::Provider;

    fn index() -> IndexRequested {
        IndexRequested {
            schema_version: SCHEMA_VERSION,
            repo: RepoRef {
                provider: Provider::Github,
                full_name: "o/r".into(),
            },
            git_ref: "main".into(),
            memory_pull_requests: vec![],
        }
    }

    #[test]
    fn round_trips_and_ignores_unknown_fields() {
        let bytes = index().encode();
        assert_eq!(IndexRequested::decode(&bytes).unwrap(), index());
        let mut v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        v["added_by_a_newer_producer"] = serde_json::json!(true);
        let decoded = IndexRequested::decode(&serde_json::to_vec(&v).unwrap()).unwrap();
        assert_eq!(decoded, index());
    }

    #[test]
    fn rejects_missing_or_future_versions_and_garbage() {
        let err =
            IndexRequested::decode(br#"{"repo":{"provider":"github","full_name":"o/r"},"git_ref":"m"}"#).unwrap_err();
        assert!(matches!(err, DecodeError::MissingVersion { .. }), "{err}");
        let err = IndexRequested::decode(
            br#"{"schema_version":9,"repo":{"provider":"github","full_name":"o/r"},"git_ref":"m"}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("schema_version 9"), "{err}");
        let err = IndexRequested::decode(b"not json").unwrap_err();
        assert!(err.to_string().contains("not valid JSON for IndexRequested"), "{err}");
    }

    /// Results from agents built before the response cache have no
    /// `model_calls`: they decode as zero calls, and new ones round-trip.
    #[test]
    fn an_impact_report_is_bounded_and_checked() {
        let long: String = (0..2_000)
            .map(|i| format!("- function `f{i}` (added) a.py:{i}-{i}\n"))
            .collect();
        let cut = bounded_impact(&long);
        assert!(cut.chars().count() <= IMPACT_MAX_CHARS, "{}", cut.len());
        assert!(cut.ends_with("more lines not shown"), "{}", &cut[cut.len() - 60..]);
        assert!(cut.starts_with("- function `f0`"));
        assert_eq!(bounded_impact("short\n"), "short\n", "a short report is kept whole");
        let old =
            br#"{"schema_version":1,"job_id":"j","agent":"static","status":"done","findings":[],"duration_ms":5}"#;
        let mut r = AgentResult::decode(old).unwrap();
        assert_eq!(r.impact, None, "a result from before the field has none");
        r.impact = Some(cut);
        assert_eq!(AgentResult::decode(&r.encode()).unwrap(), r);
        r.impact = Some(long);
        let err = AgentResult::decode(&r.encode()).unwrap_err();
        assert!(err.to_string().contains("impact report of"), "{err}");
    }

    #[test]
    fn model_calls_default_to_zero_and_round_trip() {
        let old = br#"{"schema_version":1,"job_id":"j","agent":"security","status":"done","findings":[],"duration_ms":5,"tokens":{"prompt":10,"cached_prompt":0,"completion":2}}"#;
        let r = AgentResult::decode(old).unwrap();
        assert_eq!(r.model_calls, ModelCalls::default());
        assert_eq!(r.tokens.prompt, 10);
        let counted = AgentResult {
            model_calls: ModelCalls { live: 2, replayed: 3 },
            ..r
        };
        assert_eq!(AgentResult::decode(&counted.encode()).unwrap(), counted);
    }

    #[test]
    fn semantic_validation_runs_on_decode() {
        let mut bad = index();
        bad.git_ref = "--upload-pack=x".into();
        let err = IndexRequested::decode(&bad.encode()).unwrap_err();
        assert!(err.to_string().contains("looks like an option"), "{err}");
        let mut bad = index();
        bad.repo.full_name = "../../etc".into();
        assert!(IndexRequested::decode(&bad.encode()).is_err());
    }
}

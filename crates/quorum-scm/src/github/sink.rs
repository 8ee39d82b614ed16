//! Posting to GitHub: one review per job with inline comments on the new
//! side (ranges with `start_line`, suggestion blocks as written), the
//! fingerprints of Quorum comments already on the PR, and the review's
//! status as a Check Run (an App) or a commit status (a token).

use async_trait::async_trait;
use http::Method;
use quorum_core::review::parse_fingerprints;
use quorum_core::{Review, ReviewRequest, Verdict};
use serde::Deserialize;
use serde_json::json;

use super::GitHub;
use super::client::ApiError;
use crate::{CheckStatus, Posted, ReviewSink, SinkError};

/// GitHub refuses review bodies over 65,536 characters.
const MAX_BODY_CHARS: usize = 60_000;
/// Marks the reviews Quorum posted, so a re-review with nothing new is not
/// posted again (the check run still reports it).
const REVIEW_MARKER: &str = "<!-- quorum:review -->";

#[derive(Deserialize)]
struct Commented {
    #[serde(default)]
    body: Option<String>,
}

/// The 422 texts GitHub uses when a comment's place is not in the diff
/// (see tests/fixtures/github/rest/observed-422-errors.md).
fn is_placement_error(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    [
        "could not be resolved",
        "must be part of the diff",
        "path is invalid",
        "same hunk",
        "diff hunk can't be blank",
        "must precede the end line",
    ]
    .iter()
    .any(|p| m.contains(p))
}

fn sink_error(e: ApiError) -> SinkError {
    match e {
        ApiError::Unavailable { .. } => SinkError::Failed(e.to_string()),
        other => SinkError::Refused(crate::ScmError::from(other).to_string()),
    }
}

fn truncate(body: &str) -> String {
    if body.chars().count() <= MAX_BODY_CHARS {
        return body.to_string();
    }
    let cut: String = body.chars().take(MAX_BODY_CHARS).collect();
    format!("{cut}\n\n… (truncated: GitHub limits a review body to 65,536 characters)")
}

impl GitHub {
    /// Every body of `path`'s pages (review comments, reviews).
    async fn bodies(&self, repo: &str, path: &str) -> Result<Vec<String>, ApiError> {
        let mut out = Vec::new();
        for page in 1..=100 {
            let resp = self
                .call(repo, Method::GET, &format!("{path}?per_page=100&page={page}"), None)
                .await?;
            let items: Vec<Commented> = resp.json()?;
            let n = items.len();
            out.extend(items.into_iter().filter_map(|c| c.body));
            if !resp.has_next_page() || n == 0 {
                break;
            }
        }
        Ok(out)
    }

    /// This job's check runs on the head commit (normally one).
    async fn find_check_runs(&self, request: &ReviewRequest) -> Result<Vec<u64>, ApiError> {
        #[derive(Deserialize)]
        struct Runs {
            check_runs: Vec<Run>,
        }
        #[derive(Deserialize)]
        struct Run {
            id: u64,
            #[serde(default)]
            external_id: Option<String>,
        }
        let repo = &request.repo.full_name;
        let name = super::tree::encode_path(&self.config().check_name);
        let runs: Runs = self
            .call(
                repo,
                Method::GET,
                &format!(
                    "/repos/{repo}/commits/{}/check-runs?check_name={name}",
                    request.head_sha
                ),
                None,
            )
            .await?
            .json()?;
        Ok(runs
            .check_runs
            .into_iter()
            .filter(|r| r.external_id.as_deref() == Some(request.job_id.as_str()))
            .map(|r| r.id)
            .collect())
    }

    async fn check_run(&self, request: &ReviewRequest, status: &CheckStatus) -> Result<(), ApiError> {
        let repo = &request.repo.full_name;
        let existing = self.find_check_runs(request).await?;
        let body = match status {
            CheckStatus::InProgress => {
                if !existing.is_empty() {
                    // A redelivery, or the review already finished: never go back.
                    return Ok(());
                }
                json!({
                    "name": self.config().check_name,
                    "head_sha": request.head_sha,
                    "external_id": request.job_id,
                    "status": "in_progress",
                    "output": {"title": "Reviewing", "summary": "Quorum's agents are reviewing this change."},
                })
            }
            CheckStatus::Completed {
                verdict,
                summary,
                findings,
            } => {
                let conclusion = match verdict {
                    Verdict::Approve => "success",
                    Verdict::Comment => "neutral",
                    Verdict::RequestChanges => "failure",
                };
                json!({
                    "name": self.config().check_name,
                    "head_sha": request.head_sha,
                    "external_id": request.job_id,
                    "status": "completed",
                    "conclusion": conclusion,
                    "output": {
                        "title": format!("{} — {findings} finding(s)", verdict.as_str()),
                        "summary": truncate(summary),
                    },
                })
            }
        };
        if existing.is_empty() {
            return self
                .call(repo, Method::POST, &format!("/repos/{repo}/check-runs"), Some(&body))
                .await
                .map(|_| ());
        }
        // Every run of this job completes: an "in progress" created in a race
        // with the completion must not be left spinning.
        for id in existing {
            self.call(
                repo,
                Method::PATCH,
                &format!("/repos/{repo}/check-runs/{id}"),
                Some(&body),
            )
            .await?;
        }
        Ok(())
    }

    async fn commit_status(&self, request: &ReviewRequest, status: &CheckStatus) -> Result<(), ApiError> {
        let repo = &request.repo.full_name;
        let (state, description) = match status {
            CheckStatus::InProgress => ("pending", "Quorum is reviewing".to_string()),
            CheckStatus::Completed { verdict, findings, .. } => (
                if *verdict == Verdict::RequestChanges {
                    "failure"
                } else {
                    "success"
                },
                format!("{} — {findings} finding(s)", verdict.as_str()),
            ),
        };
        let body = json!({
            "state": state,
            "context": self.config().check_name,
            "description": description.chars().take(140).collect::<String>(),
        });
        self.call(
            repo,
            Method::POST,
            &format!("/repos/{repo}/statuses/{}", request.head_sha),
            Some(&body),
        )
        .await
        .map(|_| ())
    }
}

#[async_trait]
impl ReviewSink for GitHub {
    async fn existing_fingerprints(&self, request: &ReviewRequest) -> Result<Vec<String>, SinkError> {
        let repo = &request.repo.full_name;
        let n = request.number;
        let mut fps = Vec::new();
        for path in [
            format!("/repos/{repo}/pulls/{n}/comments"),
            format!("/repos/{repo}/pulls/{n}/reviews"),
        ] {
            for body in self.bodies(repo, &path).await.map_err(sink_error)? {
                fps.extend(parse_fingerprints(&body));
            }
        }
        fps.sort();
        fps.dedup();
        Ok(fps)
    }

    async fn post(&self, request: &ReviewRequest, review: &Review) -> Result<Posted, SinkError> {
        let repo = &request.repo.full_name;
        let n = request.number;
        let pr_url = format!("{repo}#{n}");
        if !review.has_comments() {
            let earlier = self
                .bodies(repo, &format!("/repos/{repo}/pulls/{n}/reviews"))
                .await
                .map_err(sink_error)?;
            if earlier.iter().any(|b| b.contains(REVIEW_MARKER)) {
                return Ok(Posted {
                    location: format!("{pr_url} (nothing new since Quorum's last review; status updated)"),
                });
            }
        }
        let comments: Vec<serde_json::Value> = review
            .inline
            .iter()
            .map(|c| {
                let mut v = json!({
                    "path": c.path,
                    "line": c.line,
                    "side": "RIGHT",
                    "body": c.body,
                });
                if let Some(start) = c.start_line {
                    v["start_line"] = json!(start);
                    v["start_side"] = json!("RIGHT");
                }
                v
            })
            .collect();
        let body = json!({
            "commit_id": request.head_sha,
            "body": truncate(&format!("{}\n{REVIEW_MARKER}", review.render_body())),
            // The verdict goes to the check run, which branch protection can
            // require; a bot's "request changes" review would block merging
            // until someone dismisses it.
            "event": "COMMENT",
            "comments": comments,
        });
        match self
            .call(
                repo,
                Method::POST,
                &format!("/repos/{repo}/pulls/{n}/reviews"),
                Some(&body),
            )
            .await
        {
            Ok(resp) => {
                #[derive(Deserialize)]
                struct Created {
                    #[serde(default)]
                    html_url: Option<String>,
                    id: u64,
                }
                let created: Created = resp.json().map_err(sink_error)?;
                Ok(Posted {
                    location: created
                        .html_url
                        .unwrap_or_else(|| format!("{pr_url} review {}", created.id)),
                })
            }
            Err(ApiError::Status {
                status: 422, message, ..
            }) if is_placement_error(&message) && !review.inline.is_empty() => Err(SinkError::InlineRejected {
                index: (review.inline.len() == 1).then_some(0),
                reason: message,
            }),
            Err(e) => Err(sink_error(e)),
        }
    }

    async fn report_status(&self, request: &ReviewRequest, status: &CheckStatus) -> Result<(), SinkError> {
        let done = if self.is_app() {
            self.check_run(request, status).await
        } else {
            self.commit_status(request, status).await
        };
        done.map_err(sink_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_observed_placement_error_is_recognised() {
        for m in [
            "Unprocessable Entity: Line could not be resolved",
            "Unprocessable Entity: Path could not be resolved",
            "Unprocessable Entity: Pull request review thread line must be part of the diff and Pull request review thread diff hunk can't be blank",
            "Unprocessable Entity: Pull request review thread path is invalid and Pull request review thread diff hunk can't be blank",
            "Unprocessable Entity: Pull request review thread start line must precede the end line.",
            "Validation Failed: pull_request_review_thread.start_line must be part of the same hunk as the line.",
        ] {
            assert!(is_placement_error(m), "{m}");
        }
        assert!(!is_placement_error(
            "Unprocessable Entity: User can only have one pending review per pull request"
        ));
    }

    #[test]
    fn long_bodies_are_cut_below_githubs_limit() {
        let long = "x".repeat(70_000);
        let t = truncate(&long);
        assert!(t.chars().count() < 65_536);
        assert!(t.ends_with("characters)"));
        assert_eq!(truncate("short"), "short");
    }
}

//! Posting to GitLab. GitLab has no one-call review: each inline comment is
//! a discussion with a position (`base_sha` / `start_sha` / `head_sha` of
//! the reviewed version, `new_line` for an added line, `old_line` for a
//! removed one, both for a context line), then one note carries the summary
//! and whatever could not be placed. The verdict is a commit status.
//!
//! A retry after a crash part-way re-posts nothing: the publisher drops
//! findings whose fingerprints are already on the MR (every note is read).

use async_trait::async_trait;
use quorum_core::review::{InlineComment, Side, parse_fingerprints};
use quorum_core::{FileDiff, LineKind, Review, ReviewRequest, Verdict};
use reqwest::Method;
use serde::Deserialize;
use serde_json::{Value, json};

use super::client::{GitLabError, project_id};
use super::{DiffRefs, GitLab};
use crate::{CheckStatus, Posted, ReviewSink, SinkError};

/// GitLab limits a note to 1,000,000 characters.
const MAX_NOTE_CHARS: usize = 900_000;
/// Marks the summary notes Quorum posted.
const REVIEW_MARKER: &str = "<!-- quorum:review -->";
/// Notes read for fingerprints: 100 pages of 100.
const MAX_NOTE_PAGES: u32 = 100;

#[derive(Deserialize)]
struct Note {
    #[serde(default)]
    body: String,
}

#[derive(Deserialize)]
struct Version {
    head_commit_sha: String,
    base_commit_sha: String,
    start_commit_sha: String,
}

fn sink_error(e: GitLabError) -> SinkError {
    match e {
        GitLabError::Unavailable { .. } => SinkError::Failed(e.to_string()),
        other => SinkError::Refused(crate::ScmError::from(other).to_string()),
    }
}

/// The old and new line numbers a position names, per GitLab's rules: an
/// added line has only `new_line`, a removed one only `old_line`, a context
/// line both. `None`: the line is not in the diff.
fn position_lines(diff: &FileDiff, side: Side, line: u32) -> Option<(Option<u32>, Option<u32>)> {
    diff.hunks.iter().flat_map(|h| &h.lines).find_map(|l| {
        let hit = match side {
            Side::Right => l.new_line == Some(line),
            Side::Left => l.old_line == Some(line),
        };
        hit.then_some(match l.kind {
            LineKind::Added => (None, l.new_line),
            LineKind::Removed => (l.old_line, None),
            LineKind::Context => (l.old_line, l.new_line),
        })
    })
}

/// GitHub's ranged suggestion replaces lines `start_line..=line`; GitLab's
/// plain one replaces only the anchored line, so say how many lines above.
fn ranged_suggestion(body: &str, start: Option<u32>, line: u32) -> String {
    match start.filter(|s| *s < line) {
        Some(s) => body.replace("```suggestion\n", &format!("```suggestion:-{}+0\n", line - s)),
        None => body.to_string(),
    }
}

fn truncate(body: &str) -> String {
    if body.chars().count() <= MAX_NOTE_CHARS {
        return body.to_string();
    }
    let cut: String = body.chars().take(MAX_NOTE_CHARS).collect();
    format!("{cut}\n\n… (truncated: GitLab limits a note to 1,000,000 characters)")
}

/// A refusal that is about the comment's place, not the request: the
/// comment goes to the summary instead.
fn is_placement_error(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    ["line_code", "position", "line code", "not part of the diff"]
        .iter()
        .any(|p| m.contains(p))
}

impl GitLab {
    fn mr_path(request: &ReviewRequest) -> String {
        format!(
            "/projects/{}/merge_requests/{}",
            project_id(&request.repo.full_name),
            request.number
        )
    }

    async fn note_bodies(&self, request: &ReviewRequest) -> Result<Vec<String>, GitLabError> {
        let notes: Vec<Note> = self
            .all_pages(&format!("{}/notes", Self::mr_path(request)), MAX_NOTE_PAGES)
            .await?;
        Ok(notes.into_iter().map(|n| n.body).collect())
    }

    /// The SHAs of the MR version whose head is the reviewed commit.
    async fn version_of(&self, request: &ReviewRequest) -> Result<Option<DiffRefs>, GitLabError> {
        let versions: Vec<Version> = self
            .all_pages(&format!("{}/versions", Self::mr_path(request)), 10)
            .await?;
        Ok(versions
            .into_iter()
            .find(|v| v.head_commit_sha == request.head_sha)
            .map(|v| DiffRefs {
                base_sha: v.base_commit_sha,
                head_sha: v.head_commit_sha,
                start_sha: v.start_commit_sha,
            }))
    }

    /// One inline comment as a discussion. `Ok(false)`: GitLab cannot place
    /// it (it goes to the summary).
    async fn post_discussion(
        &self,
        request: &ReviewRequest,
        refs: &DiffRefs,
        diff: Option<&FileDiff>,
        c: &InlineComment,
    ) -> Result<bool, SinkError> {
        let Some((old_line, new_line)) = diff.and_then(|d| position_lines(d, c.side, c.line)) else {
            return Ok(false);
        };
        let old_path = diff.and_then(|d| d.old_path.clone()).unwrap_or_else(|| c.path.clone());
        let mut position = json!({
            "position_type": "text",
            "base_sha": refs.base_sha,
            "start_sha": refs.start_sha,
            "head_sha": refs.head_sha,
            "old_path": old_path,
            "new_path": c.path,
        });
        if let Some(n) = new_line {
            position["new_line"] = json!(n);
        }
        if let Some(o) = old_line {
            position["old_line"] = json!(o);
        }
        let body = json!({
            "body": ranged_suggestion(&c.body, c.start_line, c.line),
            "position": position,
        });
        match self
            .call(
                Method::POST,
                &format!("{}/discussions", Self::mr_path(request)),
                Some(&body),
            )
            .await
        {
            Ok(resp) => {
                let created: Value = resp.json().map_err(sink_error)?;
                if created["notes"][0]["type"] != "DiffNote" {
                    // GitLab took the comment but not its place (a stale SHA):
                    // it is on the MR as a plain note, fingerprint and all.
                    tracing::warn!(path = %c.path, line = c.line, "GitLab stored an inline comment as a plain note");
                }
                Ok(true)
            }
            Err(GitLabError::Status {
                status: 400 | 422,
                message,
                ..
            }) if is_placement_error(&message) => {
                tracing::info!(path = %c.path, line = c.line, %message, "GitLab refused an inline comment's position; moving it to the summary");
                Ok(false)
            }
            Err(e) => Err(sink_error(e)),
        }
    }

    async fn commit_status(&self, request: &ReviewRequest, status: &CheckStatus) -> Result<(), GitLabError> {
        let (state, description) = match status {
            CheckStatus::InProgress => ("running", "Quorum is reviewing".to_string()),
            CheckStatus::Completed { verdict, findings, .. } => (
                if *verdict == Verdict::RequestChanges {
                    "failed"
                } else {
                    "success"
                },
                format!("{} — {findings} finding(s)", verdict.as_str()),
            ),
        };
        let body = json!({
            "state": state,
            "name": self.config().status_name,
            "description": description.chars().take(255).collect::<String>(),
        });
        let path = format!(
            "/projects/{}/statuses/{}",
            project_id(&request.repo.full_name),
            request.head_sha
        );
        match self.call(Method::POST, &path, Some(&body)).await {
            // A redelivered "running", or a status already final: GitLab
            // refuses the transition, and the status stands as it is.
            Err(GitLabError::Status {
                status: 400, message, ..
            }) if message.contains("Cannot transition") => Ok(()),
            other => other.map(|_| ()),
        }
    }
}

#[async_trait]
impl ReviewSink for GitLab {
    async fn existing_fingerprints(&self, request: &ReviewRequest) -> Result<Vec<String>, SinkError> {
        let mut fps: Vec<String> = self
            .note_bodies(request)
            .await
            .map_err(sink_error)?
            .iter()
            .flat_map(|b| parse_fingerprints(b))
            .collect();
        fps.sort();
        fps.dedup();
        Ok(fps)
    }

    async fn post(&self, request: &ReviewRequest, review: &Review) -> Result<Posted, SinkError> {
        let mr = format!("{}!{}", request.repo.full_name, request.number);
        if !review.has_comments() {
            let earlier = self.note_bodies(request).await.map_err(sink_error)?;
            if earlier.iter().any(|b| b.contains(REVIEW_MARKER)) {
                return Ok(Posted {
                    location: format!("{mr} (nothing new since Quorum's last review; status updated)"),
                });
            }
        }
        let mut review = review.clone();
        if !review.inline.is_empty() {
            let refs = self.version_of(request).await.map_err(sink_error)?;
            let diffs = request.diffs();
            let mut i = 0;
            while i < review.inline.len() {
                let c = &review.inline[i];
                let placed = match &refs {
                    Some(refs) => {
                        let diff = diffs.iter().find(|d| d.path == c.path);
                        self.post_discussion(request, refs, diff, c).await?
                    }
                    // The reviewed commit is no longer a version of the MR
                    // (a force-push): no position can name it.
                    None => false,
                };
                if placed {
                    i += 1;
                } else {
                    review.move_inline_to_body(i);
                }
            }
        }
        let body = truncate(&format!("{}\n{REVIEW_MARKER}", review.render_body()));
        #[derive(Deserialize)]
        struct Created {
            id: u64,
        }
        let created: Created = self
            .call(
                Method::POST,
                &format!("{}/notes", Self::mr_path(request)),
                Some(&json!({ "body": body })),
            )
            .await
            .map_err(sink_error)?
            .json()
            .map_err(sink_error)?;
        Ok(Posted {
            location: format!(
                "{}/{}/-/merge_requests/{}#note_{}",
                self.config().url,
                request.repo.full_name,
                request.number,
                created.id
            ),
        })
    }

    async fn report_status(&self, request: &ReviewRequest, status: &CheckStatus) -> Result<(), SinkError> {
        self.commit_status(request, status).await.map_err(sink_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quorum_core::FileStatus;

    #[test]
    fn positions_follow_gitlabs_line_rules() {
        let (d, _) = quorum_core::diff::parse_file_patch(
            "a.py",
            None,
            FileStatus::Modified,
            "@@ -1,3 +1,3 @@\n keep\n-old\n+new\n tail\n",
        );
        assert_eq!(
            position_lines(&d, Side::Right, 2),
            Some((None, Some(2))),
            "added: new_line only"
        );
        assert_eq!(
            position_lines(&d, Side::Right, 3),
            Some((Some(3), Some(3))),
            "context: both"
        );
        assert_eq!(
            position_lines(&d, Side::Left, 2),
            Some((Some(2), None)),
            "removed: old_line only"
        );
        assert_eq!(position_lines(&d, Side::Right, 9), None, "outside the diff");
    }

    #[test]
    fn ranged_suggestions_name_the_lines_above() {
        let body = "Use a parameter.\n```suggestion\nx = 1\ny = 2\n```\n";
        assert!(ranged_suggestion(body, Some(4), 5).contains("```suggestion:-1+0\n"));
        assert_eq!(ranged_suggestion(body, None, 5), body);
    }

    #[test]
    fn placement_refusals_are_told_apart() {
        assert!(is_placement_error(
            "Note {:line_code=>[\"can't be blank\", \"must be a valid line code\"]}"
        ));
        assert!(!is_placement_error("403 Forbidden"));
    }
}

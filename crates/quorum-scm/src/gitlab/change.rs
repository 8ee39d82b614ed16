//! Reading a merge request: its metadata (with `diff_refs`), its diffs
//! (every page, up to GitLab's default limit of 1,000 files), and who may ask
//! for a review (the Developer role or above).

use async_trait::async_trait;
use quorum_core::{FileChange, FileStatus};
use reqwest::Method;
use serde::Deserialize;

use super::GitLab;
use super::client::project_id;
use crate::{Change, ChangeSource, PullRequestInfo, ScmError};

/// GitLab's default "maximum diff files"; the diffs API lists no more.
pub const MAX_MR_FILES: usize = 1000;
/// GitLab's Developer access level: may push, so may ask for a review.
const DEVELOPER: u32 = 30;

#[derive(Deserialize)]
pub(super) struct Mr {
    pub iid: u64,
    pub title: String,
    #[serde(default)]
    pub description: Option<String>,
    pub state: String,
    #[serde(default)]
    pub draft: bool,
    #[serde(default)]
    pub work_in_progress: bool,
    pub author: Author,
    #[serde(default)]
    pub labels: Vec<String>,
    /// `null` while GitLab is still computing the MR's first diff.
    #[serde(default)]
    pub diff_refs: Option<DiffRefs>,
}

#[derive(Deserialize)]
pub(super) struct Author {
    pub username: String,
}

#[derive(Debug, Clone, Deserialize)]
pub(super) struct DiffRefs {
    pub base_sha: String,
    pub head_sha: String,
    pub start_sha: String,
}

#[derive(Deserialize)]
struct MrDiff {
    old_path: String,
    new_path: String,
    #[serde(default)]
    diff: String,
    #[serde(default)]
    new_file: bool,
    #[serde(default)]
    renamed_file: bool,
    #[serde(default)]
    deleted_file: bool,
    /// GitLab 18.4+: over the instance's diff limits.
    #[serde(default)]
    too_large: Option<bool>,
    #[serde(default)]
    collapsed: Option<bool>,
}

/// GitLab's marks of a bot account: project and group access tokens act as
/// `project_<id>_bot_<hash>` / `group_<id>_bot_<hash>`; service accounts and
/// integrations conventionally end in `-bot` / `_bot`. (GitLab's webhook and
/// merge-request payloads carry no bot flag.)
pub fn is_bot(username: &str) -> bool {
    let token_bot = |prefix: &str| {
        username
            .strip_prefix(prefix)
            .and_then(|rest| rest.split_once("_bot"))
            .is_some_and(|(id, _)| !id.is_empty() && id.chars().all(|c| c.is_ascii_digit()))
    };
    token_bot("project_") || token_bot("group_") || username.ends_with("-bot") || username.ends_with("_bot")
}

fn to_change(d: MrDiff) -> Option<FileChange> {
    let status = if d.new_file {
        FileStatus::Added
    } else if d.deleted_file {
        FileStatus::Removed
    } else if d.renamed_file {
        FileStatus::Renamed
    } else {
        FileStatus::Modified
    };
    let diff = d.diff;
    let omitted = if d.too_large == Some(true) {
        Some("GitLab sent no diff (over the instance's diff limits)".to_string())
    } else if diff.starts_with("Binary files") {
        Some("GitLab sent no diff (binary file)".to_string())
    } else if diff.is_empty() && d.collapsed == Some(true) {
        Some("GitLab sent no diff (collapsed: a large diff)".to_string())
    } else if diff.is_empty() {
        // A pure rename, a mode change or an empty file: nothing to review.
        return None;
    } else {
        None
    };
    Some(FileChange {
        old_path: (d.renamed_file && d.old_path != d.new_path).then_some(d.old_path),
        path: d.new_path,
        status,
        patch: omitted.is_none().then_some(diff),
        omitted,
    })
}

impl GitLab {
    pub(super) async fn merge_request(&self, repo: &str, iid: u64) -> Result<Mr, ScmError> {
        quorum_core::job::validate_project_path(repo).map_err(ScmError::Invalid)?;
        let mr: Mr = self
            .call(
                Method::GET,
                &format!("/projects/{}/merge_requests/{iid}", project_id(repo)),
                None,
            )
            .await?
            .json()?;
        if let Some(r) = &mr.diff_refs {
            for (name, sha) in [("base", &r.base_sha), ("head", &r.head_sha), ("start", &r.start_sha)] {
                if !crate::is_commit_id(sha) {
                    return Err(ScmError::Invalid(format!(
                        "GitLab's {repo}!{iid} diff_refs.{name}_sha `{sha}` is not a commit id"
                    )));
                }
            }
        }
        Ok(mr)
    }

    /// Every changed file of merge request `iid`, page by page.
    pub async fn merge_request_files(&self, repo: &str, iid: u64) -> Result<Vec<FileChange>, ScmError> {
        let path = format!("/projects/{}/merge_requests/{iid}/diffs", project_id(repo));
        let diffs: Vec<MrDiff> = self.all_pages(&path, (MAX_MR_FILES / 100) as u32).await?;
        Ok(diffs.into_iter().filter_map(to_change).collect())
    }
}

#[async_trait]
impl ChangeSource for GitLab {
    async fn fetch_change(&self, repo: &str, number: u64, base: &str, head: &str) -> Result<Change, ScmError> {
        let mr = self.merge_request(repo, number).await?;
        let Some(refs) = mr.diff_refs else {
            return Err(ScmError::Unavailable(format!(
                "GitLab has not computed the diff of {repo}!{number} yet"
            )));
        };
        if refs.head_sha != head {
            // As on GitHub: the diffs are the MR's current ones; the newer
            // push has its own hook on the way.
            tracing::info!(repo, number, requested = head, current = %refs.head_sha, "the MR moved on; reviewing its current head");
        }
        let _ = base;
        let files = self.merge_request_files(repo, number).await?;
        Ok(Change {
            base_sha: refs.base_sha,
            head_sha: refs.head_sha,
            files,
        })
    }

    async fn pull_request(&self, repo: &str, number: u64) -> Result<PullRequestInfo, ScmError> {
        let mr = self.merge_request(repo, number).await?;
        let Some(refs) = mr.diff_refs else {
            return Err(ScmError::Unavailable(format!(
                "GitLab has not computed the diff of {repo}!{number} yet"
            )));
        };
        Ok(PullRequestInfo {
            number: mr.iid,
            title: mr.title,
            body: mr.description.unwrap_or_default(),
            author_is_bot: is_bot(&mr.author.username),
            author: mr.author.username,
            draft: mr.draft || mr.work_in_progress,
            open: mr.state == "opened",
            base_sha: refs.base_sha,
            head_sha: refs.head_sha,
            labels: mr.labels,
        })
    }

    /// `user` is a username; the Developer role (30) or above may push.
    async fn can_write(&self, repo: &str, user: &str) -> Result<bool, ScmError> {
        quorum_core::job::validate_project_path(repo).map_err(ScmError::Invalid)?;
        if user.is_empty()
            || !user
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            return Ok(false);
        }
        #[derive(Deserialize)]
        struct User {
            id: u64,
        }
        #[derive(Deserialize)]
        struct Member {
            access_level: u32,
        }
        let users: Vec<User> = self
            .call(Method::GET, &format!("/users?username={user}"), None)
            .await?
            .json()?;
        let Some(u) = users.first() else {
            return Ok(false);
        };
        match self
            .call(
                Method::GET,
                &format!("/projects/{}/members/all/{}", project_id(repo), u.id),
                None,
            )
            .await
        {
            Ok(r) => Ok(r.json::<Member>()?.access_level >= DEVELOPER),
            Err(super::GitLabError::Status { status: 404, .. }) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(json: serde_json::Value) -> Option<FileChange> {
        to_change(serde_json::from_value(json).unwrap())
    }

    #[test]
    fn diffs_become_file_changes() {
        let m = diff(
            serde_json::json!({"old_path": "VERSION", "new_path": "VERSION", "a_mode": "100644", "b_mode": "100644",
            "diff": "@@ -1 +1 @@\n-1.9.7\n+1.9.8\n", "new_file": false, "renamed_file": false, "deleted_file": false}),
        )
        .unwrap();
        assert_eq!(
            (m.status, m.patch.as_deref()),
            (FileStatus::Modified, Some("@@ -1 +1 @@\n-1.9.7\n+1.9.8\n"))
        );
        let r = diff(serde_json::json!({"old_path": "a.py", "new_path": "b.py", "diff": "@@ -1 +1 @@\n-x\n+y\n", "renamed_file": true}))
            .unwrap();
        assert_eq!((r.status, r.old_path.as_deref()), (FileStatus::Renamed, Some("a.py")));
        assert!(
            diff(serde_json::json!({"old_path": "a.py", "new_path": "b.py", "diff": "", "renamed_file": true}))
                .is_none(),
            "a pure rename has nothing to review"
        );
        for (json, says) in [
            (
                serde_json::json!({"old_path": "x", "new_path": "x", "diff": "", "too_large": true}),
                "limits",
            ),
            (
                serde_json::json!({"old_path": "x", "new_path": "x", "diff": "", "collapsed": true}),
                "collapsed",
            ),
            (
                serde_json::json!({"old_path": "i.png", "new_path": "i.png", "diff": "Binary files a/i.png and b/i.png differ\n"}),
                "binary",
            ),
        ] {
            let f = diff(json).unwrap();
            assert!(f.patch.is_none());
            assert!(f.omitted.as_deref().unwrap().contains(says), "{:?}", f.omitted);
        }
    }

    #[test]
    fn bot_accounts() {
        for bot in ["project_42_bot_1a2b3c", "group_7_bot", "review-bot", "renovate_bot"] {
            assert!(is_bot(bot), "{bot}");
        }
        for user in ["root", "project_manager", "bottle", "bot_builder"] {
            assert!(!is_bot(user), "{user}");
        }
    }
}

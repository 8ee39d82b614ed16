//! GitHub's pull request object. The REST API (`GET /repos/{o}/{r}/pulls/{n}`)
//! and the `pull_request` webhooks carry the same schema (`pull-request` in
//! GitHub's REST description), so both read it through this one model: the
//! gateway for a delivery, the change source for a slash command's PR.

use serde::Deserialize;

use crate::PullRequestInfo;

/// The fields Quorum reads of a pull request; the rest is ignored.
#[derive(Debug, Deserialize)]
pub struct PullRequest {
    pub number: u64,
    pub title: String,
    pub body: Option<String>,
    #[serde(default)]
    pub draft: bool,
    /// `open` or `closed` (a merged PR is closed).
    #[serde(default)]
    pub state: String,
    pub user: User,
    pub head: Ref,
    pub base: Ref,
    #[serde(default)]
    pub labels: Vec<Label>,
}

#[derive(Debug, Deserialize)]
pub struct User {
    pub login: String,
    /// `User`, `Bot` or `Organization`.
    #[serde(rename = "type", default)]
    pub kind: String,
}

#[derive(Debug, Deserialize)]
pub struct Ref {
    pub sha: String,
}

#[derive(Debug, Deserialize)]
pub struct Label {
    pub name: String,
}

impl PullRequest {
    /// What Quorum keeps of it, with both commit ids checked (SHA-1 or
    /// SHA-256); the error names the field (`head.sha: …`).
    pub fn into_info(self) -> Result<PullRequestInfo, String> {
        for (name, sha) in [("head", &self.head.sha), ("base", &self.base.sha)] {
            quorum_core::CommitId::parse(sha).map_err(|e| format!("{name}.sha: {e}"))?;
        }
        Ok(PullRequestInfo {
            number: self.number,
            title: self.title,
            body: self.body.unwrap_or_default(),
            author_is_bot: crate::is_bot(&self.user.login, &self.user.kind),
            author: self.user.login,
            draft: self.draft,
            open: self.state == "open",
            base_sha: self.base.sha,
            head_sha: self.head.sha,
            labels: self.labels.into_iter().map(|l| l.name).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pr(head: &str, state: &str, kind: &str) -> serde_json::Value {
        serde_json::json!({
            "number": 7, "title": "t", "body": null, "state": state,
            "user": {"login": "dependabot[bot]", "type": kind},
            "head": {"sha": head}, "base": {"sha": "b".repeat(40)},
            "labels": [{"name": "deps"}], "unknown": 1
        })
    }

    #[test]
    fn reads_the_fields_quorum_keeps() {
        let info: PullRequestInfo = serde_json::from_value::<PullRequest>(pr(&"a".repeat(64), "open", "Bot"))
            .unwrap()
            .into_info()
            .unwrap();
        assert_eq!(info.head_sha, "a".repeat(64), "a SHA-256 head is a commit id");
        assert!(info.open && info.author_is_bot && !info.draft);
        assert_eq!(info.body, "");
        assert_eq!(info.labels, ["deps"]);
        let closed = serde_json::from_value::<PullRequest>(pr(&"a".repeat(40), "closed", "User")).unwrap();
        assert!(!closed.into_info().unwrap().open);
    }

    #[test]
    fn a_short_or_non_hex_sha_is_named() {
        for bad in ["abc1234", &"g".repeat(40)] {
            let err = serde_json::from_value::<PullRequest>(pr(bad, "open", "User"))
                .unwrap()
                .into_info()
                .unwrap_err();
            assert!(err.starts_with("head.sha: "), "{err}");
        }
    }
}

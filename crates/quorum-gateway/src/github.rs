//! GitHub webhook payloads: the few fields intake needs, validated.

use quorum_scm::github::pull::{PullRequest, User};
use serde::Deserialize;

/// What a delivery asks of us.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Ping,
    /// A pull-request change that should be reviewed (subject to policy).
    PullRequest(PullRequestEvent),
    /// A push to the repository's default branch: re-index it, so PR bases
    /// have a graph before any review needs one.
    Push {
        repo: String,
        branch: String,
    },
    /// A `/review` slash command on a pull request.
    Command(CommandEvent),
    /// A review thread of a pull request was resolved or reopened: review
    /// memory re-reads that pull request (thread state is evidence, and it
    /// moves no comment, so the incremental sweep would not see it).
    ReviewThread {
        repo: String,
        number: u64,
        /// Where memory is refreshed from (the indexer's branch request).
        branch: String,
    },
    /// The App was installed on repositories (or they were added to it):
    /// index them before their first review.
    Installed {
        repos: Vec<String>,
    },
    /// An event or action we do not act on; counted and acknowledged.
    Ignored {
        event: String,
        action: Option<String>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct PullRequestEvent {
    pub action: String,
    pub repo: String,
    pub number: u64,
    pub title: String,
    pub body: String,
    pub author: String,
    pub author_is_bot: bool,
    pub draft: bool,
    pub base_sha: String,
    pub head_sha: String,
    pub labels: Vec<String>,
    /// Where the repository's `.quorum.yml` is read.
    pub default_branch: Option<String>,
}

/// What a slash command asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `/review`: review the PR's head again, now.
    Review,
    /// `/review full`: every agent, with the full changed files as context.
    Full,
    /// `/review security`: the security agent only.
    Security,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CommandEvent {
    pub repo: String,
    pub number: u64,
    pub command: Command,
    /// Who asked; the gateway checks their write access.
    pub user: String,
    /// The comment's id: a redelivery of the same comment is one review.
    pub comment_id: u64,
    pub default_branch: Option<String>,
}

/// Reads a slash command from a comment's first non-empty line.
/// `Err` for `/review <something unknown>`; `Ok(None)` for other comments.
pub fn parse_command(body: &str) -> Result<Option<Command>, String> {
    let Some(first) = body.lines().map(str::trim).find(|l| !l.is_empty()) else {
        return Ok(None);
    };
    let mut words = first.split_whitespace();
    if words.next() != Some("/review") {
        return Ok(None);
    }
    match (words.next(), words.next()) {
        (None, _) => Ok(Some(Command::Review)),
        (Some("full"), None) => Ok(Some(Command::Full)),
        (Some("security"), None) => Ok(Some(Command::Security)),
        _ => Err(format!(
            "`{first}` is not a Quorum command: use `/review`, `/review full` or `/review security`"
        )),
    }
}

/// Actions that (re)start a review (F-GW-2).
pub const REVIEW_ACTIONS: [&str; 4] = ["opened", "synchronize", "reopened", "ready_for_review"];

#[derive(Deserialize)]
struct Payload {
    action: Option<String>,
    repository: Option<Repo>,
    pull_request: Option<PullRequest>,
    /// `push`: the updated ref (`refs/heads/main`).
    #[serde(rename = "ref")]
    git_ref: Option<String>,
    #[serde(default)]
    deleted: bool,
    /// `issue_comment`.
    issue: Option<Issue>,
    comment: Option<Comment>,
    /// `installation` (created) and `installation_repositories` (added).
    #[serde(default)]
    repositories: Vec<NamedRepo>,
    #[serde(default)]
    repositories_added: Vec<NamedRepo>,
}

#[derive(Deserialize)]
struct Issue {
    number: u64,
    /// Set when the issue is a pull request.
    pull_request: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct Comment {
    id: u64,
    #[serde(default)]
    body: String,
    user: User,
}

#[derive(Deserialize)]
struct NamedRepo {
    full_name: String,
}

#[derive(Deserialize)]
struct Repo {
    full_name: String,
    #[serde(default)]
    default_branch: Option<String>,
}

/// Parses a delivery of `event` (the `X-GitHub-Event` header).
pub fn parse(event: &str, body: &[u8]) -> Result<Event, String> {
    let payload: Payload = serde_json::from_slice(body).map_err(|e| format!("malformed {event} payload: {e}"))?;
    match event {
        "ping" => Ok(Event::Ping),
        "pull_request" => {
            let action = payload.action.clone().unwrap_or_default();
            if !REVIEW_ACTIONS.contains(&action.as_str()) {
                return Ok(Event::Ignored {
                    event: event.into(),
                    action: payload.action,
                });
            }
            let repo = payload.repository.ok_or("pull_request payload has no `repository`")?;
            let pr = payload
                .pull_request
                .ok_or("pull_request payload has no `pull_request`")?;
            quorum_core::job::validate_repo_name(&repo.full_name)?;
            let pr = pr.into_info().map_err(|e| format!("pull_request.{e}"))?;
            Ok(Event::PullRequest(PullRequestEvent {
                action,
                repo: repo.full_name,
                number: pr.number,
                title: pr.title,
                body: pr.body,
                author: pr.author,
                author_is_bot: pr.author_is_bot,
                draft: pr.draft,
                base_sha: pr.base_sha,
                head_sha: pr.head_sha,
                labels: pr.labels,
                default_branch: repo.default_branch,
            }))
        }
        "issue_comment" => {
            let action = payload.action.clone().unwrap_or_default();
            let ignored = |why: &str| Event::Ignored {
                event: event.into(),
                action: Some(format!("{action} ({why})")),
            };
            if action != "created" {
                return Ok(ignored("only new comments are read"));
            }
            let repo = payload.repository.ok_or("issue_comment payload has no `repository`")?;
            let issue = payload.issue.ok_or("issue_comment payload has no `issue`")?;
            let comment = payload.comment.ok_or("issue_comment payload has no `comment`")?;
            quorum_core::job::validate_repo_name(&repo.full_name)?;
            if issue.pull_request.is_none() {
                return Ok(ignored("a comment on an issue, not a pull request"));
            }
            // Bots (Quorum among them) never trigger reviews; nor do comments
            // that carry Quorum's own markers.
            if quorum_scm::is_bot(&comment.user.login, &comment.user.kind) || comment.body.contains("<!-- quorum:") {
                return Ok(ignored("comment by a bot"));
            }
            match parse_command(&comment.body)? {
                None => Ok(ignored("not a command")),
                Some(command) => Ok(Event::Command(CommandEvent {
                    repo: repo.full_name,
                    number: issue.number,
                    command,
                    user: comment.user.login,
                    comment_id: comment.id,
                    default_branch: repo.default_branch,
                })),
            }
        }
        "installation" | "installation_repositories" => {
            let action = payload.action.clone().unwrap_or_default();
            let repos = match (event, action.as_str()) {
                ("installation", "created") => payload.repositories,
                ("installation_repositories", "added") => payload.repositories_added,
                _ => vec![],
            };
            if repos.is_empty() {
                return Ok(Event::Ignored {
                    event: event.into(),
                    action: payload.action,
                });
            }
            let repos: Vec<String> = repos.into_iter().map(|r| r.full_name).collect();
            for r in &repos {
                quorum_core::job::validate_repo_name(r)?;
            }
            Ok(Event::Installed { repos })
        }
        "pull_request_review_thread" => {
            let action = payload.action.clone().unwrap_or_default();
            if action != "resolved" && action != "unresolved" {
                return Ok(Event::Ignored {
                    event: event.into(),
                    action: Some(format!("{action} (only resolved and unresolved are read)")),
                });
            }
            let repo = payload
                .repository
                .ok_or("pull_request_review_thread payload has no `repository`")?;
            quorum_core::job::validate_repo_name(&repo.full_name)?;
            let pr = payload
                .pull_request
                .ok_or("pull_request_review_thread payload has no `pull_request`")?;
            if pr.number == 0 {
                return Err("pull_request_review_thread: pull request number 0".into());
            }
            let Some(branch) = repo.default_branch else {
                return Ok(Event::Ignored {
                    event: event.into(),
                    action: Some(format!("{action} (the repository names no default branch)")),
                });
            };
            quorum_scm::validate_ref(&branch).map_err(|e| quorum_core::error::chain(&e))?;
            Ok(Event::ReviewThread {
                repo: repo.full_name,
                number: pr.number,
                branch,
            })
        }
        "push" => {
            let repo = payload.repository.ok_or("push payload has no `repository`")?;
            quorum_core::job::validate_repo_name(&repo.full_name)?;
            let git_ref = payload.git_ref.ok_or("push payload has no `ref`")?;
            let branch = git_ref.strip_prefix("refs/heads/");
            let default = repo.default_branch.as_deref();
            match (branch, default) {
                (Some(b), Some(d)) if b == d && !payload.deleted => {
                    quorum_scm::validate_ref(b).map_err(|e| quorum_core::error::chain(&e))?;
                    Ok(Event::Push {
                        repo: repo.full_name,
                        branch: b.to_string(),
                    })
                }
                _ => Ok(Event::Ignored {
                    event: "push".into(),
                    action: Some(format!("{git_ref} (only the default branch is indexed)")),
                }),
            }
        }
        other => Ok(Event::Ignored {
            event: other.into(),
            action: payload.action,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/tests/fixtures/github/octokit-webhooks/payload-examples/api.github.com/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    /// A `pull_request_review_thread` delivery as GitHub documents it: the
    /// pull request, repository and sender of a real review-comment example
    /// (octokit's; no thread example is among the fixtures), the thread
    /// holding that comment.
    fn thread_event(action: &str) -> Vec<u8> {
        let c: serde_json::Value =
            serde_json::from_slice(&fixture("pull_request_review_comment/created.payload.json")).unwrap();
        serde_json::to_vec(&serde_json::json!({
            "action": action,
            "pull_request": c["pull_request"],
            "repository": c["repository"],
            "sender": c["sender"],
            "thread": {"node_id": "PRRT_kwDOexample", "comments": [c["comment"]]},
        }))
        .unwrap()
    }

    #[test]
    fn a_resolved_or_reopened_review_thread_asks_memory_to_reread_its_pull_request() {
        for action in ["resolved", "unresolved"] {
            let e = parse("pull_request_review_thread", &thread_event(action)).unwrap();
            assert_eq!(
                e,
                Event::ReviewThread {
                    repo: "Codertocat/Hello-World".into(),
                    number: 2,
                    branch: "master".into(),
                },
                "{action}"
            );
        }
        assert!(matches!(
            parse("pull_request_review_thread", &thread_event("created")).unwrap(),
            Event::Ignored { .. }
        ));
        let mut v: serde_json::Value = serde_json::from_slice(&thread_event("resolved")).unwrap();
        v.as_object_mut().unwrap().remove("pull_request");
        let err = parse("pull_request_review_thread", &serde_json::to_vec(&v).unwrap()).unwrap_err();
        assert!(err.contains("has no `pull_request`"), "{err}");
    }

    #[test]
    fn parses_real_pull_request_payloads() {
        let Event::PullRequest(pr) = parse("pull_request", &fixture("pull_request/opened.payload.json")).unwrap()
        else {
            panic!("not a PR event")
        };
        assert_eq!(pr.repo, "Codertocat/Hello-World");
        assert_eq!(pr.number, 2);
        assert_eq!(pr.head_sha, "ec26c3e57ca3a959ca5aad62de7213c562f8c821");
        assert!(!pr.author_is_bot);
        for f in [
            "synchronize.payload.json",
            "reopened.payload.json",
            "ready_for_review.payload.json",
            "opened.with-null-body.json",
        ] {
            assert!(
                matches!(
                    parse("pull_request", &fixture(&format!("pull_request/{f}"))).unwrap(),
                    Event::PullRequest(_)
                ),
                "{f}"
            );
        }
    }

    #[test]
    fn other_actions_and_events_are_ignored() {
        assert!(matches!(
            parse("pull_request", &fixture("pull_request/closed.payload.json")).unwrap(),
            Event::Ignored { .. }
        ));
        assert!(matches!(
            parse("pull_request", &fixture("pull_request/labeled.payload.json")).unwrap(),
            Event::Ignored { .. }
        ));
        assert_eq!(parse("ping", &fixture("ping/payload.json")).unwrap(), Event::Ping);
        assert!(matches!(parse("star", b"{}").unwrap(), Event::Ignored { .. }));
    }

    /// No push example ships with the fixtures; this payload has the fields
    /// GitHub documents for `push` (and the rest is ignored).
    fn push(git_ref: &str, default: &str, deleted: bool) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "ref": git_ref, "before": "0".repeat(40), "after": "a".repeat(40), "deleted": deleted,
            "repository": {"full_name": "Codertocat/Hello-World", "default_branch": default},
            "pusher": {"name": "Codertocat"}
        }))
        .unwrap()
    }

    #[test]
    fn pushes_to_the_default_branch_ask_for_a_reindex() {
        assert_eq!(
            parse("push", &push("refs/heads/main", "main", false)).unwrap(),
            Event::Push {
                repo: "Codertocat/Hello-World".into(),
                branch: "main".into()
            }
        );
        for (r, deleted) in [
            ("refs/heads/feature", false),
            ("refs/tags/v1", false),
            ("refs/heads/main", true),
        ] {
            assert!(
                matches!(parse("push", &push(r, "main", deleted)).unwrap(), Event::Ignored { .. }),
                "{r}"
            );
        }
        assert!(
            parse("push", br#"{"ref": "refs/heads/main"}"#)
                .unwrap_err()
                .contains("repository")
        );
    }

    /// octokit's `issue_comment` examples are on plain issues; a PR comment
    /// is the same payload with `issue.pull_request` set.
    fn pr_comment(body: &str, login: &str, kind: &str) -> Vec<u8> {
        let mut v: serde_json::Value = serde_json::from_slice(&fixture("issue_comment/created.payload.json")).unwrap();
        v["issue"]["pull_request"] =
            serde_json::json!({"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/1"});
        v["comment"]["body"] = body.into();
        v["comment"]["user"]["login"] = login.into();
        v["comment"]["user"]["type"] = kind.into();
        serde_json::to_vec(&v).unwrap()
    }

    #[test]
    fn slash_commands_on_pull_requests() {
        let Event::Command(c) = parse(
            "issue_comment",
            &pr_comment("/review full\nthanks", "Codertocat", "User"),
        )
        .unwrap() else {
            panic!("not a command")
        };
        assert_eq!(c.command, Command::Full);
        assert_eq!(
            (c.repo.as_str(), c.user.as_str()),
            ("Codertocat/Hello-World", "Codertocat")
        );
        assert!(c.comment_id > 0);
        assert_eq!(parse_command("  /review  ").unwrap(), Some(Command::Review));
        assert_eq!(parse_command("/review security").unwrap(), Some(Command::Security));
        assert_eq!(parse_command("looks good /review").unwrap(), None);
        assert!(
            parse_command("/review everything")
                .unwrap_err()
                .contains("/review full")
        );

        for (body, login, kind) in [
            ("/review", "quorum-app[bot]", "Bot"),
            ("/review", "ci", "Bot"),
            ("nice!", "Codertocat", "User"),
            ("/review\n<!-- quorum:review -->", "Codertocat", "User"),
        ] {
            assert!(
                matches!(
                    parse("issue_comment", &pr_comment(body, login, kind)).unwrap(),
                    Event::Ignored { .. }
                ),
                "{body} by {login}"
            );
        }
        // The fixtures as they are: comments on issues, and edits.
        assert!(matches!(
            parse("issue_comment", &fixture("issue_comment/created.payload.json")).unwrap(),
            Event::Ignored { .. }
        ));
        assert!(matches!(
            parse("issue_comment", &fixture("issue_comment/edited.payload.json")).unwrap(),
            Event::Ignored { .. }
        ));
    }

    #[test]
    fn installations_name_the_repositories_to_index() {
        let Event::Installed { repos } = parse("installation", &fixture("installation/created.payload.json")).unwrap()
        else {
            panic!("not an installation")
        };
        assert!(!repos.is_empty(), "{repos:?}");
        assert!(matches!(
            parse("installation", &fixture("installation/deleted.payload.json")).unwrap(),
            Event::Ignored { .. }
        ));
        let added = serde_json::json!({"action": "added", "repositories_added": [{"full_name": "acme/new"}],
                                       "repositories_removed": []});
        assert_eq!(
            parse("installation_repositories", &serde_json::to_vec(&added).unwrap()).unwrap(),
            Event::Installed {
                repos: vec!["acme/new".into()]
            }
        );
    }

    #[test]
    fn a_sha256_repository_is_accepted_and_an_abbreviated_id_is_refused() {
        let mut v: serde_json::Value = serde_json::from_slice(&fixture("pull_request/opened.payload.json")).unwrap();
        let head = "0123456789abcdef".repeat(4);
        v["pull_request"]["head"]["sha"] = head.clone().into();
        v["pull_request"]["base"]["sha"] = "fedcba9876543210".repeat(4).into();
        let Event::PullRequest(pr) = parse("pull_request", &serde_json::to_vec(&v).unwrap()).unwrap() else {
            panic!("not a PR event")
        };
        assert_eq!(pr.head_sha, head);
        // What the clone cache and the indexer will make of it: a commit, not a branch.
        assert!(quorum_core::is_commit_id(&pr.head_sha));
        v["pull_request"]["head"]["sha"] = "ec26c3e".into();
        let err = parse("pull_request", &serde_json::to_vec(&v).unwrap()).unwrap_err();
        assert!(err.contains("head.sha") && err.contains("7 characters"), "{err}");
    }

    #[test]
    fn bad_payloads_say_what_is_wrong() {
        assert!(
            parse("pull_request", b"{not json")
                .unwrap_err()
                .contains("malformed pull_request payload")
        );
        let mut v: serde_json::Value = serde_json::from_slice(&fixture("pull_request/opened.payload.json")).unwrap();
        v["pull_request"]["head"]["sha"] = "--upload-pack=x".into();
        let err = parse("pull_request", &serde_json::to_vec(&v).unwrap()).unwrap_err();
        assert!(err.contains("head.sha"), "{err}");
        v["repository"]["full_name"] = "../etc".into();
        assert!(parse("pull_request", &serde_json::to_vec(&v).unwrap()).is_err());
    }
}

//! GitHub webhook payloads: the few fields intake needs, validated.

use serde::Deserialize;

/// What a delivery asks of us.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Ping,
    /// A pull-request change that should be reviewed (subject to policy).
    PullRequest(PullRequestEvent),
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
}

/// Actions that (re)start a review (F-GW-2).
pub const REVIEW_ACTIONS: [&str; 4] = ["opened", "synchronize", "reopened", "ready_for_review"];

#[derive(Deserialize)]
struct Payload {
    action: Option<String>,
    repository: Option<Repo>,
    pull_request: Option<Pr>,
}

#[derive(Deserialize)]
struct Repo {
    full_name: String,
}

#[derive(Deserialize)]
struct Pr {
    number: u64,
    title: String,
    body: Option<String>,
    #[serde(default)]
    draft: bool,
    user: User,
    head: Ref,
    base: Ref,
}

#[derive(Deserialize)]
struct User {
    login: String,
    #[serde(rename = "type", default)]
    kind: String,
}

#[derive(Deserialize)]
struct Ref {
    sha: String,
}

fn is_sha(s: &str) -> bool {
    (7..=64).contains(&s.len()) && s.chars().all(|c| c.is_ascii_hexdigit())
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
            for (name, sha) in [("head", &pr.head.sha), ("base", &pr.base.sha)] {
                if !is_sha(sha) {
                    return Err(format!("pull_request.{name}.sha `{sha}` is not a commit id"));
                }
            }
            Ok(Event::PullRequest(PullRequestEvent {
                action,
                repo: repo.full_name,
                number: pr.number,
                title: pr.title,
                body: pr.body.unwrap_or_default(),
                author_is_bot: pr.user.kind == "Bot" || pr.user.login.ends_with("[bot]"),
                author: pr.user.login,
                draft: pr.draft,
                base_sha: pr.base.sha,
                head_sha: pr.head.sha,
            }))
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
            "{}/../../../shared/fixtures/github/octokit-webhooks/payload-examples/api.github.com/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
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

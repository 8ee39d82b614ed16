//! GitLab webhook payloads (`X-Gitlab-Event`): merge-request hooks, notes
//! with `/review` commands, pushes to the default branch — read into the
//! same [`Event`]s as GitHub's, so the rest of the gateway is SCM-neutral.

use serde::Deserialize;

use crate::github::{CommandEvent, Event, PullRequestEvent, parse_command};

#[derive(Deserialize)]
struct Payload {
    object_kind: Option<String>,
    project: Option<Project>,
    object_attributes: Option<Attributes>,
    user: Option<User>,
    #[serde(default)]
    labels: Vec<Label>,
    #[serde(default)]
    changes: serde_json::Value,
    /// Note hooks: the merge request the note is on.
    merge_request: Option<NotedMr>,
    /// Push hooks.
    #[serde(rename = "ref")]
    git_ref: Option<String>,
    after: Option<String>,
}

#[derive(Deserialize)]
struct Project {
    path_with_namespace: String,
    #[serde(default)]
    default_branch: Option<String>,
}

#[derive(Deserialize)]
struct Attributes {
    #[serde(default)]
    id: u64,
    #[serde(default)]
    iid: u64,
    #[serde(default)]
    title: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    action: Option<String>,
    #[serde(default)]
    draft: bool,
    #[serde(default)]
    work_in_progress: bool,
    #[serde(default)]
    target_branch: Option<String>,
    #[serde(default)]
    last_commit: Option<Commit>,
    /// Set on `update` only when new code was pushed.
    #[serde(default)]
    oldrev: Option<String>,
    /// Note hooks.
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    noteable_type: Option<String>,
}

#[derive(Deserialize)]
struct Commit {
    id: String,
}

#[derive(Deserialize)]
struct User {
    username: String,
}

#[derive(Deserialize)]
struct Label {
    title: String,
}

#[derive(Deserialize)]
struct NotedMr {
    iid: u64,
}

fn ignored(event: &str, action: impl Into<String>) -> Event {
    Event::Ignored {
        event: event.into(),
        action: Some(action.into()),
    }
}

/// Parses a delivery of `event` (the `X-Gitlab-Event` header).
pub fn parse(event: &str, body: &[u8]) -> Result<Event, String> {
    let payload: Payload = serde_json::from_slice(body).map_err(|e| format!("malformed {event} payload: {e}"))?;
    let project = || -> Result<&Project, String> {
        let p = payload
            .project
            .as_ref()
            .ok_or_else(|| format!("{event} payload has no `project`"))?;
        quorum_core::job::validate_project_path(&p.path_with_namespace)?;
        Ok(p)
    };
    match event {
        "Merge Request Hook" => {
            let project = project()?;
            let mr = payload
                .object_attributes
                .as_ref()
                .ok_or("Merge Request Hook payload has no `object_attributes`")?;
            let action = mr.action.clone().unwrap_or_default();
            // `changes.draft` from true to false: marked ready.
            let ready = payload.changes["draft"]["previous"] == true && payload.changes["draft"]["current"] == false;
            let reviews = match action.as_str() {
                "open" | "reopen" => true,
                "update" => mr.oldrev.is_some() || ready,
                _ => false,
            };
            if !reviews {
                return Ok(ignored(event, format!("{action} (no new code)")));
            }
            let head = mr
                .last_commit
                .as_ref()
                .map(|c| c.id.clone())
                .ok_or("Merge Request Hook payload has no `object_attributes.last_commit`")?;
            quorum_core::CommitId::parse(&head).map_err(|e| format!("object_attributes.last_commit.id: {e}"))?;
            let target = mr
                .target_branch
                .clone()
                .ok_or("Merge Request Hook payload has no `object_attributes.target_branch`")?;
            quorum_scm::validate_ref(&target).map_err(|e| quorum_core::error::chain(&e))?;
            let author = payload.user.as_ref().map(|u| u.username.clone()).unwrap_or_default();
            Ok(Event::PullRequest(PullRequestEvent {
                action,
                repo: project.path_with_namespace.clone(),
                number: mr.iid,
                title: mr.title.clone(),
                body: mr.description.clone().unwrap_or_default(),
                author_is_bot: quorum_scm::gitlab::is_bot(&author),
                author,
                draft: mr.draft || mr.work_in_progress,
                // The hook names no base commit: the target branch stands in
                // (GitLab's API gives the merge base; local git resolves it).
                base_sha: target,
                head_sha: head,
                labels: payload.labels.iter().map(|l| l.title.clone()).collect(),
                default_branch: project.default_branch.clone(),
            }))
        }
        "Note Hook" => {
            let project = project()?;
            let note = payload
                .object_attributes
                .as_ref()
                .ok_or("Note Hook payload has no `object_attributes`")?;
            if note.noteable_type.as_deref() != Some("MergeRequest") {
                return Ok(ignored(event, "a note on something other than a merge request"));
            }
            if note.action.as_deref().is_some_and(|a| a != "create") {
                return Ok(ignored(event, "only new notes are read"));
            }
            let user = payload
                .user
                .as_ref()
                .ok_or("Note Hook payload has no `user`")?
                .username
                .clone();
            let text = note.note.clone().unwrap_or_default();
            if quorum_scm::gitlab::is_bot(&user) || text.contains("<!-- quorum:") {
                return Ok(ignored(event, "note by a bot"));
            }
            let mr = payload
                .merge_request
                .as_ref()
                .ok_or("Note Hook payload on a merge request has no `merge_request`")?;
            match parse_command(&text)? {
                None => Ok(ignored(event, "not a command")),
                Some(command) => Ok(Event::Command(CommandEvent {
                    repo: project.path_with_namespace.clone(),
                    number: mr.iid,
                    command,
                    user,
                    comment_id: note.id,
                    default_branch: project.default_branch.clone(),
                })),
            }
        }
        "Push Hook" => {
            let project = project()?;
            let git_ref = payload.git_ref.clone().ok_or("Push Hook payload has no `ref`")?;
            let deleted = payload.after.as_deref().is_some_and(|a| a.chars().all(|c| c == '0'));
            match (git_ref.strip_prefix("refs/heads/"), project.default_branch.as_deref()) {
                (Some(b), Some(d)) if b == d && !deleted => {
                    quorum_scm::validate_ref(b).map_err(|e| quorum_core::error::chain(&e))?;
                    Ok(Event::Push {
                        repo: project.path_with_namespace.clone(),
                        branch: b.to_string(),
                    })
                }
                _ => Ok(ignored(
                    event,
                    format!("{git_ref} (only the default branch is indexed)"),
                )),
            }
        }
        other => Ok(Event::Ignored {
            event: other.into(),
            action: payload.object_kind,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::github::Command;

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!("{}/tests/fixtures/gitlab/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    fn with(name: &str, edit: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
        let mut v: serde_json::Value = serde_json::from_slice(&fixture(name)).unwrap();
        edit(&mut v);
        serde_json::to_vec(&v).unwrap()
    }

    #[test]
    fn merge_request_hooks_from_gitlabs_docs() {
        let Event::PullRequest(mr) = parse("Merge Request Hook", &fixture("merge_request.open.json")).unwrap() else {
            panic!("not a merge request event")
        };
        assert_eq!(mr.repo, "gitlabhq/gitlab-test");
        assert_eq!(
            (mr.number, mr.head_sha.as_str()),
            (1, "da1560886d4f094c3e6c9ef40349f7d38b5d27d7")
        );
        assert_eq!((mr.base_sha.as_str(), mr.author.as_str()), ("master", "root"));
        assert_eq!(mr.labels, ["API"]);
        assert_eq!(mr.default_branch.as_deref(), Some("master"));

        // An update without new code (a title edit) is not a review; with
        // `oldrev` (a push), or marked ready, it is.
        let title_edit = with("merge_request.open.json", |v| {
            v["object_attributes"]["action"] = "update".into()
        });
        assert!(matches!(
            parse("Merge Request Hook", &title_edit).unwrap(),
            Event::Ignored { .. }
        ));
        let pushed = with("merge_request.open.json", |v| {
            v["object_attributes"]["action"] = "update".into();
            v["object_attributes"]["oldrev"] = "a".repeat(40).into();
        });
        assert!(matches!(
            parse("Merge Request Hook", &pushed).unwrap(),
            Event::PullRequest(_)
        ));
        let ready = with("merge_request.open.json", |v| {
            v["object_attributes"]["action"] = "update".into();
            v["changes"] = serde_json::json!({"draft": {"previous": true, "current": false}});
        });
        assert!(matches!(
            parse("Merge Request Hook", &ready).unwrap(),
            Event::PullRequest(_)
        ));
        for action in ["close", "merge", "approved"] {
            let v = with("merge_request.open.json", |v| {
                v["object_attributes"]["action"] = action.into()
            });
            assert!(
                matches!(parse("Merge Request Hook", &v).unwrap(), Event::Ignored { .. }),
                "{action}"
            );
        }
    }

    #[test]
    fn bad_merge_request_hooks_say_what_is_wrong() {
        let nested = with("merge_request.open.json", |v| {
            v["project"]["path_with_namespace"] = "group/sub/project".into()
        });
        assert!(matches!(
            parse("Merge Request Hook", &nested).unwrap(),
            Event::PullRequest(_)
        ));
        for (edit, says) in [
            (
                Box::new(|v: &mut serde_json::Value| v["project"]["path_with_namespace"] = "../etc".into())
                    as Box<dyn Fn(&mut serde_json::Value)>,
                "project",
            ),
            (
                Box::new(|v| v["object_attributes"]["last_commit"]["id"] = "HEAD".into()),
                "not a commit id",
            ),
            (
                Box::new(|v| v["object_attributes"]["target_branch"] = "--upload-pack=x".into()),
                "ref",
            ),
            (
                Box::new(|v| v.as_object_mut().unwrap().remove("project").map(drop).unwrap_or(())),
                "no `project`",
            ),
        ] {
            let body = with("merge_request.open.json", |v| edit(v));
            let err = parse("Merge Request Hook", &body).unwrap_err();
            assert!(err.contains(says), "{err} should say {says}");
        }
        assert!(
            parse("Merge Request Hook", b"not json")
                .unwrap_err()
                .contains("malformed")
        );
    }

    #[test]
    fn notes_with_commands() {
        let Event::Command(c) = parse(
            "Note Hook",
            &with("note.merge_request.json", |v| {
                v["object_attributes"]["note"] = "/review security".into()
            }),
        )
        .unwrap() else {
            panic!("not a command")
        };
        assert_eq!((c.number, c.command, c.user.as_str()), (1, Command::Security, "root"));
        assert_eq!(c.comment_id, 1244);
        // The fixture's own note is not a command.
        assert!(matches!(
            parse("Note Hook", &fixture("note.merge_request.json")).unwrap(),
            Event::Ignored { .. }
        ));
        for edit in [
            Box::new(|v: &mut serde_json::Value| v["user"]["username"] = "project_12_bot_3f2a".into())
                as Box<dyn Fn(&mut serde_json::Value)>,
            Box::new(|v| v["object_attributes"]["note"] = "/review\n<!-- quorum:review -->".into()),
            Box::new(|v| v["object_attributes"]["noteable_type"] = "Issue".into()),
            Box::new(|v| v["object_attributes"]["action"] = "update".into()),
        ] {
            let body = with("note.merge_request.json", |v| {
                v["object_attributes"]["note"] = "/review".into();
                edit(v)
            });
            assert!(matches!(parse("Note Hook", &body).unwrap(), Event::Ignored { .. }));
        }
        let unknown = with("note.merge_request.json", |v| {
            v["object_attributes"]["note"] = "/review everything".into()
        });
        assert!(
            parse("Note Hook", &unknown)
                .unwrap_err()
                .contains("not a Quorum command")
        );
    }

    #[test]
    fn pushes_to_the_default_branch_ask_for_a_reindex() {
        let push = |git_ref: &str, after: &str| {
            serde_json::to_vec(&serde_json::json!({
                "object_kind": "push", "ref": git_ref, "before": "0".repeat(40), "after": after,
                "project": {"path_with_namespace": "group/sub/project", "default_branch": "main"}
            }))
            .unwrap()
        };
        assert_eq!(
            parse("Push Hook", &push("refs/heads/main", &"a".repeat(40))).unwrap(),
            Event::Push {
                repo: "group/sub/project".into(),
                branch: "main".into()
            }
        );
        for (r, after) in [
            ("refs/heads/feature", "a".repeat(40)),
            ("refs/heads/main", "0".repeat(40)),
        ] {
            assert!(
                matches!(parse("Push Hook", &push(r, &after)).unwrap(), Event::Ignored { .. }),
                "{r}"
            );
        }
        assert!(matches!(parse("Pipeline Hook", b"{}").unwrap(), Event::Ignored { .. }));
    }
}

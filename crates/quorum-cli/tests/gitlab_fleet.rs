//! The whole fleet against an emulated GitLab (quorum-testkit, which checks
//! GitLab's documented rules for every call): a merge-request hook becomes
//! one summary note, an inline discussion on the right line and a commit
//! status; a redelivery changes nothing; a push with the same problem does
//! not repeat the discussion; `/review` in a note asks again; a project
//! whose `.quorum.yml` says `mode: off` gets nothing.

use std::sync::Arc;
use std::time::Duration;

use quorum_cli::fleet::{Fleet, FleetOptions, wait_for_review};
use quorum_runtime::{CancellationToken, ServiceContext};
use quorum_scm::gitlab::{GitLab, GitLabConfig};
use quorum_scm::{LocalRepos, ScmApi, Trees};
use quorum_store::{MemoryStore, StateStore};
use quorum_testkit::gitlab::{EmulatedDiff, EmulatedMr, GitLabEmulator, PostedNote};
use serde_json::{Value, json};

/// A project in a subgroup: GitLab's paths nest.
const PROJECT: &str = "acme/backend/shop";
const BASE: &str = "1111111111111111111111111111111111111111";
const HEAD: &str = "2222222222222222222222222222222222222222";
const HEAD2: &str = "3333333333333333333333333333333333333333";
const API_TOKEN: &str = "glpat-fleet";
const HOOK_TOKEN: &str = "gitlab-fleet-hook-token";

const OLD: &str =
    "def find_user(db, email):\n    return db.execute(\"SELECT * FROM users WHERE email = ?\", (email,))\n";
const NEW: &str = "def find_user(db, email):\n    query = f\"SELECT * FROM users WHERE email = '{email}'\"\n    return db.execute(query)\n";
const DIFF: &str = "@@ -1,2 +1,3 @@\n def find_user(db, email):\n-    return db.execute(\"SELECT * FROM users WHERE email = ?\", (email,))\n+    query = f\"SELECT * FROM users WHERE email = '{email}'\"\n+    return db.execute(query)\n";

fn mr(head: &str) -> EmulatedMr {
    EmulatedMr {
        iid: 7,
        title: "Look users up by email".into(),
        description: "Adds a lookup.".into(),
        author: "alice".into(),
        draft: false,
        state: "opened".into(),
        labels: vec![],
        base_sha: BASE.into(),
        start_sha: BASE.into(),
        head_sha: head.into(),
        diffs: vec![EmulatedDiff::modified("app/users.py", DIFF)],
    }
}

fn project() -> Value {
    json!({"id": 1, "name": "shop", "path_with_namespace": PROJECT, "default_branch": "main",
           "web_url": format!("http://gitlab.example/{PROJECT}")})
}

/// The documented merge-request hook's fields.
fn mr_hook(action: &str, head: &str, oldrev: Option<&str>) -> Vec<u8> {
    let mut attrs = json!({
        "id": 99, "iid": 7, "target_branch": "main", "source_branch": "feature",
        "title": "Look users up by email", "description": "Adds a lookup.",
        "state": "opened", "draft": false, "work_in_progress": false,
        "last_commit": {"id": head, "message": "lookup"}, "action": action
    });
    if let Some(o) = oldrev {
        attrs["oldrev"] = o.into();
    }
    serde_json::to_vec(&json!({
        "object_kind": "merge_request", "event_type": "merge_request",
        "user": {"id": 5, "name": "Alice", "username": "alice"},
        "project": project(), "object_attributes": attrs, "labels": [], "changes": {}
    }))
    .unwrap()
}

/// The documented note-on-a-merge-request hook's fields.
fn note_hook(id: u64, user: &str, note: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "object_kind": "note", "event_type": "note",
        "user": {"id": 6, "name": user, "username": user},
        "project": project(),
        "object_attributes": {"id": id, "note": note, "noteable_type": "MergeRequest", "action": "create"},
        "merge_request": {"id": 1007, "iid": 7, "source_branch": "feature", "target_branch": "main",
                          "last_commit": {"id": HEAD2}, "draft": false}
    }))
    .unwrap()
}

async fn deliver(http: &reqwest::Client, gateway: std::net::SocketAddr, event: &str, body: Vec<u8>) -> (u16, Value) {
    let resp = http
        .post(format!("http://{gateway}/webhooks/gitlab"))
        .header("content-type", "application/json")
        .header("x-gitlab-event", event)
        .header("x-gitlab-token", HOOK_TOKEN)
        .body(body)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

fn job((status, body): (u16, Value), want: u16) -> String {
    assert_eq!(status, want, "{body}");
    body["job_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no job in {body}"))
        .to_string()
}

fn sql_discussions(emu: &GitLabEmulator) -> Vec<PostedNote> {
    emu.notes()
        .into_iter()
        .filter(|n| n.position.is_some() && n.body.contains("SQL"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merge_request_on_gitlab_gets_one_review_and_a_commit_status() {
    let emu = GitLabEmulator::with_token(API_TOKEN).await;
    emu.set_mr(PROJECT, mr(HEAD));
    emu.set_ref(PROJECT, "main", BASE);
    emu.add_file(PROJECT, BASE, "app/users.py", OLD);
    for head in [HEAD, HEAD2] {
        emu.add_file(PROJECT, head, "app/users.py", NEW);
    }
    emu.set_member(PROJECT, "maintainer", 40);
    emu.set_member(PROJECT, "visitor", 20);
    let mut config = GitLabConfig::new(emu.url(), quorum_core::Secret::new(API_TOKEN));
    config.backoff = Duration::from_millis(5);
    let gitlab = Arc::new(GitLab::new(config).unwrap());

    let ctx = ServiceContext::embedded(|_| {}).unwrap();
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let api = ScmApi::GitLab(gitlab.clone());
    let trees = Arc::new(Trees {
        api: Some(api.clone()),
        ..Trees::default()
    });
    let fleet = Fleet::start(
        FleetOptions {
            webhook_secret: Vec::new(),
            gitlab_webhook_token: Some(HOOK_TOKEN.into()),
            source: api.source(),
            trees,
            sink: Some(api.sink()),
            policy_source: Some(api.trees()),
            scm: Some(api.provider()),
            ..FleetOptions::local(ctx, store.clone(), Arc::new(LocalRepos::new()))
        },
        CancellationToken::new(),
    )
    .await
    .unwrap();
    let http = reqwest::Client::new();
    let send = |event: &'static str, body: Vec<u8>| {
        let http = http.clone();
        let gw = fleet.gateway;
        async move { deliver(&http, gw, event, body).await }
    };
    let wait = Duration::from_secs(60);

    // Opened: one discussion on new line 2 (an added line: new_line only),
    // one summary note, a failed commit status on the head.
    let first = job(send("Merge Request Hook", mr_hook("open", HEAD, None)).await, 202);
    let review = wait_for_review(store.as_ref(), &first, wait).await.unwrap();
    assert_eq!(review.verdict, quorum_core::Verdict::RequestChanges, "{review:#?}");
    let sql = sql_discussions(&emu);
    assert_eq!(sql.len(), 1, "{:#?}", emu.notes());
    let p = sql[0].position.as_ref().unwrap();
    assert_eq!(
        (p["new_path"].as_str(), p["new_line"].as_u64()),
        (Some("app/users.py"), Some(2))
    );
    assert!(p.get("old_line").is_none());
    assert_eq!(
        (p["base_sha"].as_str(), p["head_sha"].as_str()),
        (Some(BASE), Some(HEAD))
    );
    assert_eq!(sql[0].kind.as_deref(), Some("DiffNote"), "placed inline");
    let summaries = emu.notes().iter().filter(|n| n.body.contains("Quorum review")).count();
    assert_eq!(summaries, 1);
    let statuses = emu.statuses();
    let last = statuses.iter().rev().find(|(_, sha, _)| sha == HEAD).unwrap();
    assert_eq!(
        (last.2["state"].as_str(), last.2["name"].as_str()),
        (Some("failed"), Some("Quorum"))
    );

    // A redelivery: the same job, nothing new on GitLab.
    let notes = emu.notes().len();
    let again = job(send("Merge Request Hook", mr_hook("open", HEAD, None)).await, 200);
    assert_eq!(again, first);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(emu.notes().len(), notes);
    // A title edit (an update without new code) is not a review.
    let (status, body) = send("Merge Request Hook", mr_hook("update", HEAD, None)).await;
    assert_eq!(status, 202);
    assert!(body["ignored"].is_string(), "{body}");

    // A push that keeps the problem: reviewed, the discussion not repeated.
    emu.set_mr(PROJECT, mr(HEAD2));
    let pushed = job(
        send("Merge Request Hook", mr_hook("update", HEAD2, Some(HEAD))).await,
        202,
    );
    assert_ne!(pushed, first);
    wait_for_review(store.as_ref(), &pushed, wait).await.unwrap();
    assert_eq!(sql_discussions(&emu).len(), 1, "the SQL discussion was posted twice");
    assert!(
        emu.statuses()
            .iter()
            .any(|(_, sha, v)| sha == HEAD2 && v["state"] != "running"),
        "{:#?}",
        emu.statuses()
    );

    // `/review` from a Developer or above: a new run; the same note again is the same run.
    let asked = job(send("Note Hook", note_hook(901, "maintainer", "/review")).await, 202);
    assert_ne!(asked, pushed);
    wait_for_review(store.as_ref(), &asked, wait).await.unwrap();
    let redelivered = job(send("Note Hook", note_hook(901, "maintainer", "/review")).await, 200);
    assert_eq!(redelivered, asked);
    let (status, body) = send("Note Hook", note_hook(902, "visitor", "/review")).await;
    assert_eq!(status, 202);
    assert!(body["reason"].as_str().unwrap().contains("no write access"), "{body}");

    // `mode: off` on the default branch: nothing is reviewed or posted.
    emu.add_file(PROJECT, BASE, ".quorum.yml", "review:\n  mode: off\n");
    let (notes, statuses) = (emu.notes().len(), emu.statuses().len());
    let (status, body) = send("Merge Request Hook", mr_hook("reopen", HEAD2, None)).await;
    assert_eq!(status, 202);
    assert!(body["reason"].as_str().unwrap().contains("off"), "{body}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!((emu.notes().len(), emu.statuses().len()), (notes, statuses));

    // This fleet has no GitHub webhook secret: GitHub's route is off.
    let resp = http
        .post(format!("http://{}/webhooks/github", fleet.gateway))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 404);

    // Agents and the indexer read the project through GitLab's API.
    let reads: Vec<String> = emu
        .requests()
        .into_iter()
        .map(|(_, uri, _)| uri)
        .filter(|u| u.contains("/repository/"))
        .collect();
    assert!(
        reads.iter().any(|u| u.contains("/repository/files/app%2Fusers.py/raw")),
        "{reads:#?}"
    );
    assert_eq!(emu.violations(), Vec::<String>::new());
    fleet.stop().await.unwrap();
}

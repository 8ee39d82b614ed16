//! `quorum memory` as a user runs it, against the emulated GitHub: ingest
//! prints the summary and exits non-zero when something failed; list,
//! approve, retire, export, import and search work on the state it left.

use std::process::{Command, Output};

use quorum_testkit::github::{Fault, GitHubEmulator, PastReviewComment, ThreadState};

const REPO: &str = "acme/shop";
const TOKEN: &str = "ghp_memoryCli";
const QUORUM_SQL: &str = "**SQL built by string interpolation** (critical, security, confidence 0.90) — from static\n\nUse parameters.\n<!-- quorum:fp:00aa11bb22cc33dd --><!-- quorum:rule:sql-string-building -->";

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

async fn seeded() -> GitHubEmulator {
    let emu = GitHubEmulator::with_token(TOKEN).await;
    let c = PastReviewComment::new;
    emu.add_past_comment(
        REPO,
        c(
            101,
            1,
            "alice",
            "MEMBER",
            "shop/payments.py",
            "Amounts are integer cents, never float.",
            "2026-01-02T10:00:00Z",
        ),
    );
    emu.add_past_comment(
        REPO,
        c(
            102,
            1,
            "bob",
            "CONTRIBUTOR",
            "shop/payments.py",
            "Done.",
            "2026-01-02T11:00:00Z",
        )
        .reply_to(101),
    );
    emu.add_past_comment(
        REPO,
        c(
            201,
            2,
            "quorum[bot]",
            "NONE",
            "scripts/a.py",
            QUORUM_SQL,
            "2026-01-05T10:00:00Z",
        )
        .reacted("maint", "-1"),
    );
    emu.add_past_comment(
        REPO,
        c(
            301,
            3,
            "quorum[bot]",
            "NONE",
            "scripts/b.py",
            QUORUM_SQL,
            "2026-01-06T10:00:00Z",
        )
        .reacted("outsider", "-1"),
    );
    emu.set_thread(
        REPO,
        301,
        ThreadState {
            resolved: true,
            outdated: false,
            resolved_by: Some("maint".into()),
        },
    );
    for pr in [1, 2, 3] {
        emu.set_merged(REPO, pr);
    }
    emu.set_permission(REPO, "maint", "maintain");
    emu
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ingest_list_decide_export_import_and_search() {
    let emu = seeded().await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();

    let out = tokio::task::spawn_blocking({
        let url = emu.url();
        let d = d.to_path_buf();
        move || {
            Command::new(env!("CARGO_BIN_EXE_quorum"))
                .args(["memory", "ingest", "--repo", REPO, "--state-dir"])
                .arg(&d)
                .env("GITHUB_API_URL", url)
                .env("GITHUB_TOKEN", TOKEN)
                .env("QUORUM_SEARCH", "off")
                .env_remove("REDIS_URL")
                .env_remove("GITLAB_TOKEN")
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains("indexed 1 threads / skipped 0 / failed 0 (3 pull requests read, 3 pieces of feedback"),
        "{t}"
    );
    assert!(t.contains("1 memory items (1 active)"), "{t}");

    let run = |args: &'static [&'static str]| {
        let url = emu.url();
        let d = d.to_path_buf();
        tokio::task::spawn_blocking(move || {
            let e = GitHubEmulatorUrl(url);
            e.run(&d, args)
        })
    };
    let out = run(&["list", "--json"]).await.unwrap();
    let items: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(items.as_array().unwrap().len(), 1, "{items}");
    let item = &items[0];
    assert_eq!(item["status"], "active");
    assert_eq!(item["scope"], "scripts/**");
    let id = item["id"].as_str().unwrap().to_string();
    // maint's 👎 and resolve count as trusted; the outsider's 👎 does not
    // make it any more active, but is shown as evidence.
    let whos: Vec<&str> = item["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["who"].as_str().unwrap())
        .collect();
    assert_eq!(whos, ["maint", "outsider", "maint"], "{item}");

    // Retire, then see it retired; approve brings it back.
    let d2 = d.to_path_buf();
    let url = emu.url();
    let id2 = id.clone();
    let (retired, listed, unknown, exported) = tokio::task::spawn_blocking(move || {
        let e = GitHubEmulatorUrl(url);
        let retired = e.run_owned(&d2, vec!["retire".into(), id2.clone()]);
        let listed = e.run_owned(&d2, vec!["list".into()]);
        let unknown = e.run_owned(&d2, vec!["approve".into(), "M-nope".into()]);
        let file = d2.join("memory.yaml");
        let exported = e.run_owned(&d2, vec!["export".into(), "--out".into(), file.display().to_string()]);
        (retired, listed, unknown, exported)
    })
    .await
    .unwrap();
    assert!(retired.status.success(), "{}", text(&retired));
    assert!(text(&listed).contains(&format!("{id}  retired")), "{}", text(&listed));
    assert!(!unknown.status.success());
    assert!(
        text(&unknown).contains("no memory item `M-nope`") && text(&unknown).contains(&id),
        "{}",
        text(&unknown)
    );
    assert!(exported.status.success(), "{}", text(&exported));
    let yaml = std::fs::read_to_string(d.join("memory.yaml")).unwrap();
    let file = quorum_memory::MemoryFile::parse(&yaml).unwrap();
    assert_eq!(file.items[0].status, quorum_memory::Status::Retired);

    // Import an edited file: its status wins over the learned one.
    std::fs::write(d.join("memory.yaml"), yaml.replace("status: retired", "status: active")).unwrap();
    let d3 = d.to_path_buf();
    let url = emu.url();
    let (imported, listed, searched, bad) = tokio::task::spawn_blocking(move || {
        let e = GitHubEmulatorUrl(url);
        let f = d3.join("memory.yaml").display().to_string();
        let imported = e.run_owned(&d3, vec!["import".into(), f]);
        let listed = e.run_owned(&d3, vec!["list".into()]);
        let searched = e.run_owned(
            &d3,
            vec![
                "search".into(),
                "--as".into(),
                "alice".into(),
                "float".into(),
                "price".into(),
            ],
        );
        std::fs::write(
            d3.join("bad.yaml"),
            "version: 1\nitems:\n  - {kind: suppress, status: active, text: x}\n",
        )
        .unwrap();
        let bad = e.run_owned(&d3, vec!["import".into(), d3.join("bad.yaml").display().to_string()]);
        (imported, listed, searched, bad)
    })
    .await
    .unwrap();
    assert!(imported.status.success(), "{}", text(&imported));
    assert!(text(&listed).contains(&format!("{id}  active")), "{}", text(&listed));
    assert!(
        text(&searched).contains("@alice (MEMBER) on shop/payments.py in #1"),
        "{}",
        text(&searched)
    );
    assert!(text(&searched).contains("bob: Done."), "{}", text(&searched));
    assert!(!bad.status.success());
    assert!(
        text(&bad).contains("item 1") && text(&bad).contains("needs a `rule` or a `title`"),
        "{}",
        text(&bad)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_pull_request_makes_ingest_exit_non_zero_and_a_rerun_finishes() {
    let emu = seeded().await;
    let dir = tempfile::tempdir().unwrap();
    emu.fail_next("GET", "/pulls/2/comments", Fault::Status(404));
    let d = dir.path().to_path_buf();
    let url = emu.url();
    let (first, second) = tokio::task::spawn_blocking(move || {
        let e = GitHubEmulatorUrl(url);
        (
            e.run_owned(&d, vec!["ingest".into()]),
            e.run_owned(&d, vec!["ingest".into()]),
        )
    })
    .await
    .unwrap();
    assert!(!first.status.success(), "{}", text(&first));
    assert!(text(&first).contains("failed: pull request #2"), "{}", text(&first));
    assert!(text(&first).contains("failed 1"), "{}", text(&first));
    assert!(second.status.success(), "{}", text(&second));
    assert!(text(&second).contains("1 memory items (1 active)"), "{}", text(&second));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the embedding model (make deps)"]
async fn with_the_reviews_collection_past_threads_answer_by_meaning() {
    let emu = GitHubEmulator::with_token(TOKEN).await;
    let c = PastReviewComment::new;
    let threads = [
        (
            501,
            1,
            "alice",
            "MEMBER",
            "shop/payments.py",
            "Amounts are integer cents, never float.",
        ),
        (
            502,
            2,
            "carol",
            "OWNER",
            "shop/refunds.py",
            "Log every refund through the audit logger, not print().",
        ),
        (
            503,
            3,
            "erin",
            "COLLABORATOR",
            "shop/config.py",
            "Settings should be a dataclass, not a bare dict.",
        ),
        (504, 4, "dave", "MEMBER", "docs/index.md", "Typo in the heading."),
    ];
    for (id, pr, who, assoc, path, body) in threads {
        emu.add_past_comment(REPO, c(id, pr, who, assoc, path, body, "2026-02-01T10:00:00Z"));
        emu.set_merged(REPO, pr);
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let url = emu.url();
    let ask = |who: &str| -> Vec<String> {
        let mut a = vec!["search".to_string(), "--json".into()];
        if !who.is_empty() {
            a.extend(["--as".into(), who.into()]);
        }
        a.extend(
            "storing money as floating point loses precision"
                .split(' ')
                .map(String::from),
        );
        a
    };
    let (ingest, words, meaning, as_carol, again) = tokio::task::spawn_blocking(move || {
        let e = GitHubEmulatorUrl(url);
        let ingest = e.run_with(&d, vec!["ingest".into()], "on");
        let words = e.run_with(&d, ask(""), "off");
        let meaning = e.run_with(&d, ask(""), "on");
        let as_carol = e.run_with(&d, ask("Carol"), "on");
        let again = e.run_with(&d, vec!["ingest".into()], "on");
        (ingest, words, meaning, as_carol, again)
    })
    .await
    .unwrap();
    assert!(ingest.status.success(), "{}", text(&ingest));
    assert!(
        text(&ingest).contains("reviews collection (embedded): 4 threads, 4 embedded, 0 unchanged, 0 removed"),
        "{}",
        text(&ingest)
    );
    let hits = |o: &Output| -> Vec<String> {
        assert!(o.status.success(), "{}", text(o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .map(|h| h["thread"]["reviewer"].as_str().unwrap().to_string())
            .collect()
    };
    // The question shares no word with alice's thread: word matching finds
    // nothing, the reviews collection finds her first.
    assert!(hits(&words).is_empty(), "{}", text(&words));
    assert!(text(&words).contains("ranked by words"), "{}", text(&words));
    assert_eq!(
        hits(&meaning).first().map(String::as_str),
        Some("alice"),
        "{}",
        text(&meaning)
    );
    assert!(
        text(&meaning).contains("ranked by meaning and words"),
        "{}",
        text(&meaning)
    );
    // As a person: only their threads, whatever the question.
    assert_eq!(hits(&as_carol), ["carol"], "{}", text(&as_carol));
    // A second ingest with nothing new embeds nothing.
    assert!(
        text(&again).contains("4 threads, 0 embedded, 4 unchanged, 0 removed"),
        "{}",
        text(&again)
    );
}

/// Runs `quorum memory …` against an emulator by URL (from blocking threads).
struct GitHubEmulatorUrl(String);

impl GitHubEmulatorUrl {
    fn run(&self, dir: &std::path::Path, args: &[&str]) -> Output {
        self.run_owned(dir, args.iter().map(|s| s.to_string()).collect())
    }

    fn run_owned(&self, dir: &std::path::Path, args: Vec<String>) -> Output {
        self.run_with(dir, args, "off")
    }

    /// With hybrid search `on` (the reviews collection under `dir/index`) or `off`.
    fn run_with(&self, dir: &std::path::Path, args: Vec<String>, search: &str) -> Output {
        Command::new(env!("CARGO_BIN_EXE_quorum"))
            .arg("memory")
            .args(&args)
            .args(["--repo", REPO, "--state-dir"])
            .arg(dir)
            .env("QUORUM_SEARCH", search)
            .env("QUORUM_INDEX_DIR", dir.join("index"))
            .env_remove("QDRANT_URL")
            .env_remove("QUORUM_EMBED_URL")
            .env("GITHUB_API_URL", &self.0)
            .env("GITHUB_TOKEN", TOKEN)
            .env_remove("REDIS_URL")
            .env_remove("GITHUB_APP_ID")
            .env_remove("GITLAB_TOKEN")
            .env_remove("GITLAB_URL")
            .output()
            .expect("run quorum")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ingest_reads_gitlab_when_gitlab_is_configured() {
    use quorum_testkit::gitlab::{GitLabEmulator, PastDiscussion, PastMr, PastNote};
    let emu = GitLabEmulator::with_token("glpat-memoryCli").await;
    emu.set_member("acme/backend/shop", "maint", 40);
    for iid in [1, 2] {
        let d = PastDiscussion {
            id: format!("d{iid}"),
            path: format!("scripts/s{iid}.py"),
            line: 3,
            head_sha: "2be7ddb704c7b6b83732fdd5b9f09d5a397b5f8f".into(),
            notes: vec![
                PastNote::new(iid * 100, "quorum-bot", QUORUM_SQL, "2026-01-05T10:00:00Z")
                    .awarded("maint", "thumbsdown"),
            ],
            resolved_by: None,
        };
        emu.add_past_mr(
            "acme/backend/shop",
            PastMr {
                iid,
                state: "merged".into(),
                updated_at: format!("2026-01-0{iid}T12:00:00Z"),
                head_sha: "2be7ddb704c7b6b83732fdd5b9f09d5a397b5f8f".into(),
                discussions: vec![d],
            },
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let url = emu.url();
    let (out, listed, both) = tokio::task::spawn_blocking(move || {
        let cmd = |args: &[&str]| {
            Command::new(env!("CARGO_BIN_EXE_quorum"))
                .arg("memory")
                .args(args)
                .args(["--repo", "acme/backend/shop", "--state-dir"])
                .arg(&d)
                .env("GITLAB_URL", &url)
                .env("GITLAB_TOKEN", "glpat-memoryCli")
                .env_remove("GITHUB_TOKEN")
                .env_remove("GITHUB_APP_ID")
                .env_remove("REDIS_URL")
                .output()
                .unwrap()
        };
        let out = cmd(&["ingest"]);
        let listed = cmd(&["list"]);
        let both = Command::new(env!("CARGO_BIN_EXE_quorum"))
            .args(["memory", "ingest", "--repo", "acme/backend/shop", "--state-dir"])
            .arg(&d)
            .env("GITLAB_URL", &url)
            .env("GITLAB_TOKEN", "glpat-memoryCli")
            .env("GITHUB_TOKEN", "ghp_x")
            .env_remove("REDIS_URL")
            .output()
            .unwrap();
        (out, listed, both)
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("1 memory items (1 active)"), "{}", text(&out));
    assert!(
        text(&listed).contains("rule sql-string-building  in scripts/**"),
        "{}",
        text(&listed)
    );
    assert!(!both.status.success());
    assert!(
        text(&both).contains("both GitHub and GitLab are configured"),
        "{}",
        text(&both)
    );
}

/// `--checkout`: the lines a learned item was given on are looked up in a
/// checkout of the default branch; when all are gone the item is stale.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ingest_checks_the_evidences_lines_against_a_checkout() {
    let emu = GitHubEmulator::with_token(TOKEN).await;
    for (id, pr, path, line) in [
        (201, 2, "scripts/a.py", "cur.execute(f\"DROP TABLE {name}\")"),
        (301, 3, "scripts/b.py", "cur.execute(f\"TRUNCATE {table}\")"),
    ] {
        emu.add_past_comment(
            REPO,
            PastReviewComment::new(id, pr, "quorum[bot]", "NONE", path, QUORUM_SQL, "2026-01-05T10:00:00Z")
                .reacted("maint", "-1")
                .on_hunk(&format!("@@ -0,0 +1,2 @@\n+def drop(cur, name):\n+    {line}")),
        );
        emu.set_merged(REPO, pr);
    }
    emu.set_permission(REPO, "maint", "maintain");
    let state = tempfile::tempdir().unwrap();
    let checkout = tempfile::tempdir().unwrap();
    let co = checkout.path();
    std::fs::create_dir_all(co.join("scripts")).unwrap();
    std::fs::write(
        co.join("scripts/a.py"),
        "def drop(cur, name):\n    cur.execute(f\"DROP TABLE {name}\")\n",
    )
    .unwrap();
    std::fs::write(
        co.join("scripts/b.py"),
        "def drop(cur, table):\n    cur.execute(f\"TRUNCATE {table}\")\n",
    )
    .unwrap();

    let url = emu.url();
    let (d, c) = (state.path().to_path_buf(), co.to_path_buf());
    let (not_git, first, list1, second, list2) = tokio::task::spawn_blocking(move || {
        let e = GitHubEmulatorUrl(url);
        let ingest = |commit: Option<&str>| {
            let mut args = vec!["ingest".to_string(), "--checkout".into(), c.display().to_string()];
            if let Some(commit) = commit {
                args.extend(["--commit".to_string(), commit.to_string()]);
            }
            e.run_owned(&d, args)
        };
        let not_git = ingest(None);
        let first = ingest(Some("c1c1c1c1c1c1"));
        let list1 = e.run(&d, &["list", "--json"]);
        // Both lines rewritten on the default branch.
        std::fs::write(
            c.join("scripts/a.py"),
            "def drop(cur, name):\n    cur.execute(sql.drop(name))\n",
        )
        .unwrap();
        std::fs::remove_file(c.join("scripts/b.py")).unwrap();
        let second = ingest(Some("c2c2c2c2c2c2"));
        let list2 = e.run(&d, &["list", "--json"]);
        (not_git, first, list1, second, list2)
    })
    .await
    .unwrap();
    assert!(!not_git.status.success());
    assert!(text(&not_git).contains("pass --commit"), "{}", text(&not_git));
    assert!(first.status.success(), "{}", text(&first));
    assert!(
        text(&first).contains("2 lines, 0 newly gone, 0 back"),
        "{}",
        text(&first)
    );
    let items: serde_json::Value = serde_json::from_slice(&list1.stdout).unwrap();
    assert_eq!(items[0]["status"], "active", "{items}");
    assert!(second.status.success(), "{}", text(&second));
    assert!(text(&second).contains("2 lines, 2 newly gone"), "{}", text(&second));
    let items: serde_json::Value = serde_json::from_slice(&list2.stdout).unwrap();
    assert_eq!(items[0]["status"], "suggested", "{items}");
    assert!(items.to_string().contains("stale"), "{items}");
}

//! The MCP server and the SDK's own client in one process, over an
//! in-memory duplex pipe: the protocol end to end without a subprocess
//! (the Python suite drives the binary with PyPI's client).

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use quorum_core::Review;
use quorum_mcp::{QuorumMcp, Repo, Reviewer};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, GetPromptRequestParams};
use rmcp::service::{RoleClient, RunningService};

fn storefront() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../storefront-fixture")
}

async fn connect(server: QuorumMcp) -> RunningService<RoleClient, ()> {
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let (sr, sw) = tokio::io::split(server_end);
    tokio::spawn(async move {
        let _ = quorum_mcp::serve_io(server, sr, sw).await;
    });
    let (cr, cw) = tokio::io::split(client_end);
    ().serve((cr, cw)).await.expect("the client initialises")
}

fn args(v: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    v.as_object().expect("an object").clone()
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

#[tokio::test]
async fn tools_and_prompts_over_a_duplex_pipe() {
    let repo = Repo::load("storefront", &storefront()).await.unwrap();
    let client = connect(QuorumMcp::new(repo)).await;

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for want in [
        "get_callers",
        "find_tests",
        "read_snippet",
        "search_code",
        "search_docs",
        "impact",
        "review_diff",
        "past_reviews",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    for t in &tools {
        let props = t.input_schema.get("properties").and_then(|p| p.as_object());
        assert!(
            props.is_some_and(|p| p.contains_key("repo")),
            "{} takes no repo",
            t.name
        );
    }
    let listed = serde_json::to_string(&tools).unwrap();
    assert!(listed.len() < 8 * 1024, "tools/list is {} bytes", listed.len());

    let callers = client
        .call_tool(
            CallToolRequestParams::new("get_callers").with_arguments(args(serde_json::json!({
                "repo": "storefront", "symbol": "shop.pricing.compute_tax", "hops": 1
            }))),
        )
        .await
        .unwrap();
    assert_eq!(callers.is_error, Some(false), "{}", text(&callers));
    for caller in ["shop.checkout.checkout", "shop.pricing.order_total"] {
        assert!(text(&callers).contains(caller), "{caller}: {}", text(&callers));
    }

    let escape = client
        .call_tool(
            CallToolRequestParams::new("read_snippet").with_arguments(args(serde_json::json!({
                "repo": "storefront", "path": "../../etc/passwd", "start": 1, "end": 3
            }))),
        )
        .await
        .unwrap();
    assert_eq!(escape.is_error, Some(true));
    assert!(!text(&escape).contains("root:"), "{}", text(&escape));

    // A plain directory has no history: the change tools say so.
    let impact = client
        .call_tool(CallToolRequestParams::new("impact").with_arguments(args(serde_json::json!({"repo": "storefront"}))))
        .await
        .unwrap();
    assert_eq!(impact.is_error, Some(true));
    assert!(text(&impact).contains("not a git repository"), "{}", text(&impact));
    let search = client
        .call_tool(
            CallToolRequestParams::new("search_code")
                .with_arguments(args(serde_json::json!({"repo": "storefront", "query": "refund"}))),
        )
        .await
        .unwrap();
    assert!(text(&search).contains("hybrid search is off"), "{}", text(&search));

    let prompt = client
        .get_prompt(
            GetPromptRequestParams::new("what-breaks")
                .with_arguments(args(serde_json::json!({"symbol": "shop.pricing.compute_tax"}))),
        )
        .await
        .unwrap();
    let body = serde_json::to_string(&prompt.messages).unwrap();
    assert!(
        body.contains("get_callers") && body.contains("shop.pricing.compute_tax"),
        "{body}"
    );
    client.cancel().await.unwrap();
}

/// A review that never finishes, and says when it started and when it was
/// dropped.
struct Hanging {
    started: Arc<tokio::sync::Notify>,
    dropped: Arc<AtomicBool>,
}

struct SetOnDrop(Arc<AtomicBool>);
impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[async_trait::async_trait]
impl Reviewer for Hanging {
    async fn review(&self, _: &Path, _: &str, _: &str, _: &str) -> Result<Review, String> {
        let _guard = SetOnDrop(self.dropped.clone());
        self.started.notify_one();
        std::future::pending().await
    }
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

#[tokio::test]
async fn a_review_the_client_abandons_is_cancelled_on_the_server() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "def f():\n    return 1\n").unwrap();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "base"]);
    std::fs::write(dir.path().join("a.py"), "def f():\n    return 2\n").unwrap();

    let started = Arc::new(tokio::sync::Notify::new());
    let dropped = Arc::new(AtomicBool::new(false));
    let server = QuorumMcp::new(Repo::load("r", dir.path()).await.unwrap()).with_reviewer(Arc::new(Hanging {
        started: started.clone(),
        dropped: dropped.clone(),
    }));
    let client = connect(server).await;
    let call = client
        .call_tool(CallToolRequestParams::new("review_diff").with_arguments(args(serde_json::json!({"repo": "r"}))));
    tokio::select! {
        r = call => panic!("the hanging review answered: {r:?}"),
        () = started.notified() => {}
    }
    // The call future is dropped: the SDK sends notifications/cancelled.
    for _ in 0..100 {
        if dropped.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        dropped.load(Ordering::SeqCst),
        "the server kept reviewing after the client gave up"
    );
    // The session still answers.
    let after = client
        .call_tool(
            CallToolRequestParams::new("get_callers")
                .with_arguments(args(serde_json::json!({"repo": "r", "symbol": "a.f"}))),
        )
        .await
        .unwrap();
    assert_eq!(after.is_error, Some(false), "{}", text(&after));
    client.cancel().await.unwrap();
}

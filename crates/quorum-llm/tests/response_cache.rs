//! The response cache against a scripted OpenAI-compatible server (real
//! HTTP; every request the server received is counted): a second identical
//! review makes no call and gives the same result, a changed prompt is a
//! live call, and a corrupt entry is a live call that rewrites it.

use std::path::Path;
use std::time::Duration;

use async_trait::async_trait;
use quorum_core::diff::parse_file_patch;
use quorum_core::{AgentRole, ContextMode, FileDiff, FileStatus};
use quorum_engine::{ReviewContext, ReviewInput};
use quorum_llm::cache::Lookup;
use quorum_llm::retry::RetryPolicy;
use quorum_llm::{ChatClient, LlmConfig, LoopReport, ModelReviewer, ResponseCache, ToolBox, ToolCall};
use quorum_testkit::scripted_model::{Scripted, ScriptedModel};
use serde_json::json;

const FINDING: &str = r#"{"findings":[{"file":"shop/cart.py","line":3,"start_line":null,"category":"bug",
  "severity":"major","confidence":0.8,"title":"Total subtracts the discount twice","explanation":"e",
  "suggestion":null,"evidence":["+    return total - discount - discount"]}]}"#;

fn diffs() -> Vec<FileDiff> {
    let patch = "@@ -1,3 +1,3 @@\n def total(items, discount):\n     total = sum(items)\n-    return total - discount\n+    return total - discount - discount\n";
    vec![parse_file_patch("shop/cart.py", None, FileStatus::Modified, patch).0]
}

/// A reviewer on `model` recording into / replaying from `cache`; a new
/// client each time, as a new process would have.
fn reviewer(model: &ScriptedModel, cache: &Path) -> ModelReviewer {
    let mut cfg = LlmConfig::new(&model.url, "primary");
    cfg.timeout = Duration::from_secs(10);
    cfg.seed = Some(42);
    cfg.cache_dir = Some(cache.to_path_buf());
    cfg.turns.insert(AgentRole::Reviewer, 3);
    let policy = RetryPolicy {
        retries: 0,
        base: Duration::from_millis(5),
        max_wait: Duration::from_secs(1),
    };
    let client = ChatClient::with_policy(&cfg, policy).unwrap();
    ModelReviewer::with_client(cfg, client)
}

/// Deterministic tools, so a replayed conversation is the recorded one.
struct Fixed;

#[async_trait]
impl ToolBox for Fixed {
    async fn call(&self, call: &ToolCall) -> Result<String, String> {
        match call {
            ToolCall::GetCallers { symbol, .. } => Ok(format!("{symbol} is called by shop/checkout.py:9")),
            ToolCall::FindTests { .. } => Ok("tests/test_cart.py::test_total".into()),
            _ => Err("not indexed".into()),
        }
    }
}

async fn review(r: &ModelReviewer, title: &str, mode: ContextMode) -> LoopReport {
    let d = diffs();
    let ctx = ReviewContext {
        mode,
        ..Default::default()
    };
    let input = ReviewInput {
        title,
        body: "Discounts for members.",
        diffs: &d,
        context: &ctx,
    };
    r.review(AgentRole::Reviewer, &input, Some(&Fixed)).await.unwrap()
}

fn entries(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    v.sort();
    v
}

#[tokio::test]
async fn a_second_identical_review_is_replayed_without_calling_the_server() {
    // Three answers and no more: a fourth request would get a 500.
    let model = ScriptedModel::queue(vec![
        Scripted::tool_calls(&[("c1", "get_callers", json!({"symbol": "total", "hops": 1}))]).with_usage(400, 0, 30),
        Scripted::tool_calls(&[("c2", "find_tests", json!({"symbol": "total"}))]).with_usage(500, 400, 20),
        Scripted::content(FINDING).with_usage(600, 500, 60),
    ])
    .await;
    let cache = tempfile::tempdir().unwrap();

    let first = review(
        &reviewer(&model, cache.path()),
        "Apply discounts",
        ContextMode::GraphRag,
    )
    .await;
    assert_eq!(model.requests().len(), 3);
    assert_eq!((first.stats.live_calls, first.stats.replayed_calls), (3, 0));
    assert_eq!(first.findings.len(), 1);
    assert_eq!(entries(cache.path()).len(), 3, "one file per request");
    // The seed is sent, and so part of what is cached.
    assert_eq!(model.requests()[0]["seed"], 42);

    let second = review(
        &reviewer(&model, cache.path()),
        "Apply discounts",
        ContextMode::GraphRag,
    )
    .await;
    assert_eq!(model.requests().len(), 3, "no request reached the server");
    assert_eq!((second.stats.live_calls, second.stats.replayed_calls), (0, 3));
    assert_eq!(second.findings, first.findings);
    assert_eq!(
        second.stats.tokens, first.stats.tokens,
        "replayed answers carry their tokens"
    );
    assert_eq!(second.stats.turns, first.stats.turns);
    assert_eq!(second.stats.tools, first.stats.tools);
}

#[tokio::test]
async fn a_changed_prompt_is_a_live_call() {
    let model = ScriptedModel::respond(|_, _| Scripted::content(FINDING)).await;
    let cache = tempfile::tempdir().unwrap();
    let r = reviewer(&model, cache.path());
    review(&r, "Apply discounts", ContextMode::DiffOnly).await;
    let again = review(&r, "Apply discounts", ContextMode::DiffOnly).await;
    assert_eq!((again.stats.live_calls, again.stats.replayed_calls), (0, 1));
    assert_eq!(model.requests().len(), 1);

    let changed = review(&r, "Apply member discounts", ContextMode::DiffOnly).await;
    assert_eq!((changed.stats.live_calls, changed.stats.replayed_calls), (1, 0));
    assert_eq!(model.requests().len(), 2);
    assert_eq!(entries(cache.path()).len(), 2);
}

#[tokio::test]
async fn a_corrupt_entry_is_a_live_call_and_is_rewritten() {
    let model = ScriptedModel::respond(|_, _| Scripted::content(FINDING)).await;
    let cache = tempfile::tempdir().unwrap();
    let first = review(
        &reviewer(&model, cache.path()),
        "Apply discounts",
        ContextMode::DiffOnly,
    )
    .await;
    let [entry] = entries(cache.path()).try_into().unwrap();
    let recorded_request = model.requests()[0].clone();
    assert_eq!(
        entry,
        ResponseCache::open(cache.path()).unwrap().path_of(&recorded_request)
    );

    // A torn write from a crashed writer, say.
    let text = std::fs::read_to_string(&entry).unwrap();
    std::fs::write(&entry, &text[..text.len() / 3]).unwrap();
    let second = review(
        &reviewer(&model, cache.path()),
        "Apply discounts",
        ContextMode::DiffOnly,
    )
    .await;
    assert_eq!((second.stats.live_calls, second.stats.replayed_calls), (1, 0));
    assert_eq!(model.requests().len(), 2, "the corrupt entry was not replayed");
    assert_eq!(second.findings, first.findings);
    let cache_now = ResponseCache::open(cache.path()).unwrap();
    assert!(
        matches!(cache_now.lookup(&recorded_request), Lookup::Hit(_)),
        "the live answer replaced the corrupt entry"
    );

    let third = review(
        &reviewer(&model, cache.path()),
        "Apply discounts",
        ContextMode::DiffOnly,
    )
    .await;
    assert_eq!((third.stats.live_calls, third.stats.replayed_calls), (0, 1));
    assert_eq!(model.requests().len(), 2);
}

#[tokio::test]
async fn failures_are_live_and_never_cached() {
    let model = ScriptedModel::queue(vec![Scripted::status(400, "bad request"), Scripted::content(FINDING)]).await;
    let cache = tempfile::tempdir().unwrap();
    let r = reviewer(&model, cache.path());
    let d = diffs();
    let ctx = ReviewContext::default();
    let input = ReviewInput {
        title: "Apply discounts",
        body: "",
        diffs: &d,
        context: &ctx,
    };
    let failed = r.review(AgentRole::Reviewer, &input, None).await.unwrap_err();
    assert_eq!((failed.stats.live_calls, failed.stats.replayed_calls), (1, 0));
    assert!(entries(cache.path()).is_empty(), "an error is not an answer to replay");
    let ok = r.review(AgentRole::Reviewer, &input, None).await.unwrap();
    assert_eq!((ok.stats.live_calls, ok.stats.replayed_calls), (1, 0));
    assert_eq!(entries(cache.path()).len(), 1);
}

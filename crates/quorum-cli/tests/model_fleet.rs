//! The whole fleet with a model configured, against a scripted
//! OpenAI-compatible endpoint: the three LLM roles run the tool loop, the
//! critic makes its judgement call, and a failing model falls back to the
//! offline engine with the review saying so.

mod support;

use std::time::Duration;

use quorum_llm::{LlmConfig, ToolMode};
use quorum_testkit::scripted_model::{Scripted, ScriptedModel};
use serde_json::{Value, json};

fn system(req: &Value) -> String {
    req["messages"][0]["content"].as_str().unwrap_or_default().to_string()
}

fn finding(file: &str, line: u32, title: &str) -> String {
    json!({"findings": [{"file": file, "line": line, "start_line": null, "category": "security",
        "severity": "critical", "confidence": 0.9, "title": title,
        "explanation": "The email is interpolated into the SQL text.", "suggestion": null,
        "evidence": ["f-string passed to execute"]}]})
    .to_string()
}

fn config(model: &ScriptedModel) -> LlmConfig {
    let mut c = LlmConfig::new(&model.url, "scripted-model");
    c.timeout = Duration::from_secs(20);
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_roles_review_with_tools_and_the_critic_judges() {
    let (file, line) = support::anchor_line("01-sql-fstring-email-lookup");
    let (f, l) = (file.clone(), line);
    let model = ScriptedModel::respond(move |req, _| {
        let sys = system(req);
        let turns = req["messages"].as_array().map(Vec::len).unwrap_or(0);
        if sys.contains("critic of a code review bot") {
            let user = req["messages"][1]["content"].as_str().unwrap_or_default();
            let n = user.matches("\"index\":").count();
            // Keeps the security finding, drops the reviewer's guess.
            let decisions: Vec<Value> = (0..n)
                .map(|i| {
                    let keep = !user.contains("Variable name is unclear");
                    json!({"index": i, "keep": keep, "reason": "a naming opinion, not a defect", "confidence": 0.9, "severity": "minor"})
                })
                .collect();
            return Scripted::content(&json!({"decisions": decisions}).to_string());
        }
        if sys.contains("security reviewer") && turns == 2 {
            return Scripted::tool_calls(&[
                ("s1", "find_tests", json!({"symbol": "find_by_email"})),
                ("s2", "read_snippet", json!({"path": f, "start": l.saturating_sub(2).max(1), "end": l + 2})),
            ]);
        }
        if sys.contains("security reviewer") {
            return Scripted::content(&finding(&f, l, "SQL injection through the email lookup"));
        }
        if sys.contains("correctness reviewer") {
            let mut v: Value = serde_json::from_str(&finding(&f, l, "Variable name is unclear")).unwrap();
            v["findings"][0]["category"] = json!("style");
            v["findings"][0]["severity"] = json!("minor");
            v["findings"][0]["confidence"] = json!(0.7);
            return Scripted::content(&v.to_string());
        }
        Scripted::content(r#"{"findings":[]}"#)
    })
    .await;
    let (review, metrics) = support::review_case("01-sql-fstring-email-lookup", config(&model)).await;

    let security = review
        .agents
        .iter()
        .find(|a| a.agent == quorum_core::AgentRole::Security)
        .unwrap();
    assert_eq!(security.error, None, "{:?}", review.agents);
    // What it spent travels with the review (the console's agents table):
    // two tool calls and the turns around them, the tokens the metrics count.
    assert_eq!(security.usage.tool_calls, 2, "{:?}", security.usage);
    assert!(security.usage.model_calls >= 2, "{:?}", security.usage);
    assert!(security.usage.prompt_tokens >= 200, "{:?}", security.usage);
    let static_agent = review
        .agents
        .iter()
        .find(|a| a.agent == quorum_core::AgentRole::Static)
        .unwrap();
    assert!(static_agent.usage.is_zero(), "the offline engine spends nothing");
    let hit = review
        .kept
        .iter()
        .find(|k| {
            k.file == file && k.line.abs_diff(line) <= 3 && k.agreed_by.contains(&quorum_core::AgentRole::Security)
        })
        .unwrap_or_else(|| panic!("the model's finding was not kept: {review:#?}"));
    assert!(hit.agreed_by.len() >= 2, "static and security agree: {hit:?}");
    // A model adds to the rules and never replaces them: the rule's finding
    // represents the cluster, so the critic's model never judges it.
    assert!(hit.rule.is_some(), "{hit:?}");
    for tool in ["find_tests", "read_snippet"] {
        assert_eq!(
            metrics.tool_calls.with_label_values(&["security", tool]).get(),
            1,
            "{tool}"
        );
    }
    assert!(
        metrics
            .llm_tokens
            .with_label_values(&["security", "scripted-model", "prompt"])
            .get()
            >= 200
    );
    assert_eq!(
        metrics
            .llm_calls
            .with_label_values(&["critic", "scripted-model", "ok"])
            .get(),
        1
    );
    let (dropped, why) = review
        .rejected
        .iter()
        .find(|(f, _)| f.title == "Variable name is unclear")
        .unwrap_or_else(|| panic!("the critic's model judgement did not drop the guess: {review:#?}"));
    assert_eq!(dropped.agent, quorum_core::AgentRole::Reviewer);
    assert!(why.starts_with("model critic: a naming opinion"), "{why}");

    let reqs = model.requests();
    let sec: Vec<&Value> = reqs
        .iter()
        .filter(|r| system(r).contains("security reviewer"))
        .collect();
    assert_eq!(sec.len(), 2);
    let offered: Vec<&str> = sec[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(offered, ["get_callers", "find_tests", "read_snippet"]);
    let results = sec[1]["messages"].as_array().unwrap();
    let snippet = results.iter().find(|m| m["tool_call_id"] == "s2").unwrap();
    assert!(snippet["content"].as_str().unwrap().contains("UNTRUSTED tool-result"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_model_falls_back_to_the_offline_engine_and_says_so() {
    let model = ScriptedModel::respond(|_, _| Scripted::status(500, "Failed to parse grammar")).await;
    let mut cfg = config(&model);
    cfg.tool_mode = ToolMode::Json;
    let (review, metrics) = support::review_case("01-sql-fstring-email-lookup", cfg).await;
    let (file, line) = support::anchor_line("01-sql-fstring-email-lookup");
    assert!(
        review
            .inline
            .iter()
            .any(|c| c.path == file && c.line.abs_diff(line) <= 3),
        "the offline findings still make the review: {review:#?}"
    );
    for a in review
        .agents
        .iter()
        .filter(|a| a.agent != quorum_core::AgentRole::Static)
    {
        let note = a.error.as_deref().unwrap_or_default();
        assert!(note.contains("model failed") && note.contains("offline rules"), "{a:?}");
    }
    // Every finding left is a rule's, which the critic never sends to the
    // model: it makes no call at all (the failing model cannot fail it).
    assert!(review.kept.iter().all(|f| f.rule.is_some()), "{review:#?}");
    for outcome in ["ok", "error"] {
        assert_eq!(
            metrics
                .llm_calls
                .with_label_values(&["critic", "scripted-model", outcome])
                .get(),
            0
        );
    }
    let body = review.render_body();
    assert!(body.contains("model failed"), "{body}");
    assert!(
        metrics
            .llm_calls
            .with_label_values(&["reviewer", "scripted-model", "error"])
            .get()
            >= 1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_critic_call_leaves_the_offline_verdict_standing() {
    let (file, line) = support::anchor_line("01-sql-fstring-email-lookup");
    let f = file.clone();
    let model = ScriptedModel::respond(move |req, _| {
        let sys = system(req);
        if sys.contains("critic of a code review bot") {
            return Scripted::status(500, "critic down");
        }
        if sys.contains("security reviewer") {
            let mut v: Value = serde_json::from_str(&finding(&f, line, "Login lookup is injectable")).unwrap();
            v["findings"][0]["category"] = json!("bug");
            return Scripted::content(&v.to_string());
        }
        Scripted::content(r#"{"findings":[]}"#)
    })
    .await;
    let mut cfg = config(&model);
    cfg.retries = 0;
    let (review, metrics) = support::review_case("01-sql-fstring-email-lookup", cfg).await;
    assert!(
        review.summary.contains("model judgement unavailable"),
        "{}",
        review.summary
    );
    assert!(
        metrics
            .llm_calls
            .with_label_values(&["critic", "scripted-model", "error"])
            .get()
            >= 1
    );
    assert!(
        review
            .kept
            .iter()
            .chain(review.rejected.iter().map(|(f, _)| f))
            .any(|k| k.rule.is_none() && k.file == file),
        "the model's finding went through the critic's offline checks: {review:#?}"
    );
}

/// With a response cache, the same review run again replays every model
/// answer: no request reaches the server, the review is the same, and each
/// agent's result counts its calls as replayed (what `quorum-lab eval` sums).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rerun_with_a_response_cache_replays_every_model_answer() {
    let (file, line) = support::anchor_line("01-sql-fstring-email-lookup");
    let model = ScriptedModel::respond(move |req, _| {
        let sys = system(req);
        if sys.contains("critic of a code review bot") {
            let user = req["messages"][1]["content"].as_str().unwrap_or_default();
            let decisions: Vec<Value> = (0..user.matches("\"index\":").count())
                .map(|i| json!({"index": i, "keep": true, "reason": "shown by the diff", "confidence": 0.9, "severity": "critical"}))
                .collect();
            return Scripted::content(&json!({"decisions": decisions}).to_string());
        }
        if sys.contains("security reviewer") {
            return Scripted::content(&finding(&file, line, "SQL injection through the email lookup"));
        }
        Scripted::content(r#"{"findings":[]}"#)
    })
    .await;
    let cache = tempfile::tempdir().unwrap();
    let mut cfg = config(&model);
    cfg.cache_dir = Some(cache.path().to_path_buf());

    let (first, _, results) = support::review_case_with_results("01-sql-fstring-email-lookup", cfg.clone()).await;
    let live_requests = model.requests().len();
    let calls = |results: &std::collections::BTreeMap<quorum_core::AgentRole, quorum_events::AgentResult>| {
        results
            .values()
            .fold((0, 0), |(l, r), a| (l + a.model_calls.live, r + a.model_calls.replayed))
    };
    // One call per model role; the critic's calls, if any, are not agent results.
    let (live, replayed) = calls(&results);
    assert_eq!((live, replayed), (3, 0));
    assert!(live as usize <= live_requests);

    let (second, _, results) = support::review_case_with_results("01-sql-fstring-email-lookup", cfg).await;
    assert_eq!(model.requests().len(), live_requests, "no request reached the server");
    assert_eq!(calls(&results), (0, live));
    let kept = |r: &quorum_core::Review| {
        r.kept
            .iter()
            .map(|k| (k.file.clone(), k.line, k.title.clone(), k.agreed_by.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(kept(&second), kept(&first));
    assert!(
        first
            .kept
            .iter()
            .any(|k| k.agreed_by.contains(&quorum_core::AgentRole::Security)),
        "the model's finding is in the review: {first:#?}"
    );
}

/// Review memory in the model's prompt: the team's past thread on the file
/// the change touches reaches the model roles, fenced, with where to cite it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_review_threads_on_the_changed_file_reach_the_model_roles() {
    let (file, _) = support::anchor_line("01-sql-fstring-email-lookup");
    let model = ScriptedModel::respond(|req, _| {
        if system(req).contains("critic of a code review bot") {
            return Scripted::content(&json!({"decisions": []}).to_string());
        }
        Scripted::content(&json!({"findings": []}).to_string())
    })
    .await;
    let thread = |id: u64, path: &str, text: &str| {
        json!({"id": id, "pr": id, "path": path, "reviewer": "alice", "association": "MEMBER", "text": text,
               "plus_one": 1, "minus_one": 0, "merged": true, "created_at": "2026-01-02T10:00:00Z", "url": "u"})
    };
    let state = json!({"threads": {
        "12": thread(12, &file, "alice: always pass query values as parameters, never format them into SQL"),
        "13": thread(13, "docs/unrelated.md", "alice: typo in the heading"),
    }});
    let (_review, _, _) =
        support::review_case_with_memory("01-sql-fstring-email-lookup", config(&model), Some(state.to_string())).await;
    let reqs = model.requests();
    let reviewer = reqs
        .iter()
        .find(|r| system(r).contains("correctness reviewer"))
        .expect("the reviewer role called the model");
    let user = reviewer["messages"][1]["content"].as_str().unwrap_or_default();
    assert!(user.contains(&format!("@alice (MEMBER) on {file} in #12")), "{user}");
    assert!(
        user.contains("never format them into SQL") && user.contains("as @login asked in #PR"),
        "{user}"
    );
    assert!(user.contains("<<<UNTRUSTED past-reviews "), "{user}");
    assert!(
        !user.contains("typo in the heading"),
        "a thread unrelated to the change is not shown"
    );
}

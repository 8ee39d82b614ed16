//! One storefront case through the whole fleet against a real model server
//! (llama.cpp's `llama-server` with Qwen2.5-Coder-1.5B-Instruct), offline.
//! Built only with `--features real-model`: `make test-llm` builds and
//! caches the server and the weights and passes their paths in
//! `QUORUM_LLAMA_SERVER` and `QUORUM_LLAMA_MODEL`.

#![cfg(feature = "real-model")]

mod support;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use quorum_core::AgentRole;
use quorum_llm::{LlmConfig, ToolMode};

struct LlamaServer {
    child: Child,
    port: u16,
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_llama() -> LlamaServer {
    let bin = std::env::var("QUORUM_LLAMA_SERVER").expect("QUORUM_LLAMA_SERVER: run this through `make test-llm`");
    let model = std::env::var("QUORUM_LLAMA_MODEL").expect("QUORUM_LLAMA_MODEL: run this through `make test-llm`");
    let port = quorum_testkit::free_port();
    let log = std::fs::File::create(std::env::temp_dir().join("quorum-llama-server.log")).unwrap();
    let child = Command::new(bin)
        .args(["-m", &model, "--host", "127.0.0.1", "--port", &port.to_string()])
        // Three review roles and the critic share the slots; 2 cores.
        .args(["-c", "32768", "-np", "4", "-t", "2", "--no-webui"])
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("llama-server starts");
    let server = LlamaServer { child, port };
    let started = Instant::now();
    loop {
        let ok = std::process::Command::new("curl")
            .args(["-sf", &format!("http://127.0.0.1:{port}/health")])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        if ok {
            return server;
        }
        assert!(
            started.elapsed() < Duration::from_secs(180),
            "llama-server not healthy after 180 s"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_model_reviews_a_case_through_the_fleet() {
    let server = start_llama();
    let mut cfg = LlmConfig::new(
        format!("http://127.0.0.1:{}/v1", server.port),
        "qwen2.5-coder-1.5b-instruct",
    );
    cfg.tool_mode = ToolMode::Json;
    cfg.first_turn_tools = true;
    cfg.timeout = Duration::from_secs(600);
    cfg.max_tokens = 768;
    cfg.turns = [
        (AgentRole::Reviewer, 3),
        (AgentRole::Security, 3),
        (AgentRole::Tests, 2),
    ]
    .into();
    let started = Instant::now();
    let (review, metrics) = support::review_case("01-sql-fstring-email-lookup", cfg).await;
    let elapsed = started.elapsed();

    println!("{}", review.render_markdown());
    println!("review published after {:.1} s", elapsed.as_secs_f64());
    let model = "qwen2.5-coder-1.5b-instruct";
    let mut tool_calls = 0;
    for role in ["reviewer", "security", "tests", "critic"] {
        let t = |k| metrics.llm_tokens.with_label_values(&[role, model, k]).get();
        let calls = metrics.llm_calls.with_label_values(&[role, model, "ok"]).get();
        let tools: u64 = quorum_runtime::metrics::TOOLS
            .iter()
            .map(|tool| metrics.tool_calls.with_label_values(&[role, tool]).get())
            .sum();
        tool_calls += tools;
        println!(
            "{role}: {calls} calls, {tools} tool calls, tokens prompt {} (cached {}), completion {}",
            t("prompt"),
            t("cached_prompt"),
            t("completion")
        );
    }
    for a in &review.agents {
        println!(
            "{}: {} ms, {} findings, {:?}",
            a.agent, a.duration_ms, a.findings, a.error
        );
    }

    for a in review.agents.iter().filter(|a| a.agent != AgentRole::Static) {
        let note = a.error.as_deref().unwrap_or_default();
        assert!(
            !note.contains("model failed"),
            "{}: the loop did not finish: {note}",
            a.agent
        );
        assert!(
            !note.contains("invalid"),
            "{}: a reply was not schema-valid: {note}",
            a.agent
        );
        let calls = metrics
            .llm_calls
            .with_label_values(&[a.agent.as_str(), model, "ok"])
            .get();
        assert!(calls >= 2, "{}: the loop ran {calls} call(s)", a.agent);
    }
    assert!(tool_calls >= 3, "tools were called ({tool_calls})");
    assert!(!review.job_id.is_empty(), "a review was published");
}

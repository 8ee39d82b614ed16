//! A scripted OpenAI-compatible endpoint: an axum app that answers
//! `POST /v1/chat/completions` from a script and records every request, so
//! tests can drive the model loop, the critic and the whole fleet without a
//! model, and check exactly what was sent.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Scripted {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// How long the server "thinks" before answering.
    pub delay: Duration,
}

impl Scripted {
    /// A 200 with a chat completion whose message is `message`.
    pub fn message(message: Value, usage: (u64, u64, u64)) -> Scripted {
        let (prompt, cached, completion) = usage;
        let finish = if message.get("tool_calls").is_some() {
            "tool_calls"
        } else {
            "stop"
        };
        let body = json!({
            "id": "chatcmpl-scripted", "object": "chat.completion", "created": 0, "model": "scripted",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion,
                      "prompt_tokens_details": {"cached_tokens": cached}}
        });
        Scripted {
            status: 200,
            headers: vec![],
            body: body.to_string(),
            delay: Duration::ZERO,
        }
    }

    /// An assistant message with `content`.
    pub fn content(text: &str) -> Scripted {
        Scripted::message(json!({"role": "assistant", "content": text}), (100, 0, 20))
    }

    /// An assistant message asking for tool calls `(id, name, arguments)`.
    pub fn tool_calls(calls: &[(&str, &str, Value)]) -> Scripted {
        let calls: Vec<Value> = calls
            .iter()
            .map(|(id, name, args)| {
                json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}})
            })
            .collect();
        Scripted::message(
            json!({"role": "assistant", "content": null, "tool_calls": calls}),
            (100, 0, 20),
        )
    }

    /// A refusal.
    pub fn refusal(why: &str) -> Scripted {
        Scripted::message(
            json!({"role": "assistant", "content": null, "refusal": why}),
            (100, 0, 5),
        )
    }

    /// An error status with an OpenAI-style error body.
    pub fn status(status: u16, message: &str) -> Scripted {
        Scripted {
            status,
            headers: vec![],
            body: json!({"error": {"message": message, "type": "scripted", "param": null, "code": null}}).to_string(),
            delay: Duration::ZERO,
        }
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Scripted {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn with_usage(self, prompt: u64, cached: u64, completion: u64) -> Scripted {
        let mut v: Value = serde_json::from_str(&self.body).expect("scripted body is JSON");
        v["usage"] = json!({"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion, "prompt_tokens_details": {"cached_tokens": cached}});
        Scripted {
            body: v.to_string(),
            ..self
        }
    }

    pub fn after(mut self, delay: Duration) -> Scripted {
        self.delay = delay;
        self
    }
}

type Responder = dyn Fn(&Value, usize) -> Scripted + Send + Sync;

struct Shared {
    requests: Mutex<Vec<Value>>,
    queue: Mutex<VecDeque<Scripted>>,
    responder: Option<Box<Responder>>,
}

/// A running scripted endpoint; stops when dropped.
pub struct ScriptedModel {
    /// Base URL including `/v1`.
    pub url: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl ScriptedModel {
    /// Answers in order from `script`; once it is spent, every call gets a
    /// 500 naming that (a test that makes more calls than it scripted fails
    /// loudly).
    pub async fn queue(script: Vec<Scripted>) -> ScriptedModel {
        Self::serve(Shared {
            requests: Mutex::new(vec![]),
            queue: Mutex::new(script.into()),
            responder: None,
        })
        .await
    }

    /// Answers each request with `f(request, index)`.
    pub async fn respond(f: impl Fn(&Value, usize) -> Scripted + Send + Sync + 'static) -> ScriptedModel {
        Self::serve(Shared {
            requests: Mutex::new(vec![]),
            queue: Mutex::new(VecDeque::new()),
            responder: Some(Box::new(f)),
        })
        .await
    }

    async fn serve(shared: Shared) -> ScriptedModel {
        let shared = Arc::new(shared);
        let app = Router::new()
            .route("/v1/chat/completions", post(chat))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        ScriptedModel {
            url: format!("http://{addr}/v1"),
            shared,
            task,
        }
    }

    /// Every request body received, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.shared.requests.lock().expect("lock").clone()
    }

    /// Scripted answers not yet given.
    pub fn remaining(&self) -> usize {
        self.shared.queue.lock().expect("lock").len()
    }
}

impl Drop for ScriptedModel {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn chat(State(shared): State<Arc<Shared>>, _headers: HeaderMap, body: String) -> Response {
    let request: Value = match serde_json::from_str(&body) {
        Ok(v) => v,
        Err(e) => return (StatusCode::BAD_REQUEST, format!("request is not JSON: {e}")).into_response(),
    };
    let index = {
        let mut r = shared.requests.lock().expect("lock");
        r.push(request.clone());
        r.len() - 1
    };
    let answer = match &shared.responder {
        Some(f) => f(&request, index),
        None => shared
            .queue
            .lock()
            .expect("lock")
            .pop_front()
            .unwrap_or_else(|| Scripted::status(500, &format!("script exhausted at request {index}"))),
    };
    if !answer.delay.is_zero() {
        tokio::time::sleep(answer.delay).await;
    }
    let mut resp = (StatusCode::from_u16(answer.status).expect("valid status"), answer.body).into_response();
    resp.headers_mut()
        .insert("content-type", "application/json".parse().expect("header value"));
    for (k, v) in answer.headers {
        resp.headers_mut().insert(
            axum::http::HeaderName::from_bytes(k.as_bytes()).expect("header name"),
            v.parse().expect("header value"),
        );
    }
    resp
}

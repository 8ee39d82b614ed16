//! One chat-completions call through async-openai (F-AG-4).
//!
//! Requests and replies are our own serde types sent through async-openai's
//! "bring your own types" methods: OpenAI, vLLM, Ollama and llama.cpp differ
//! in what they add to a reply (llama.cpp's `timings`, cached-token fields
//! in different places), and the loop needs the exact bytes of every earlier
//! message to replay them verbatim. The HTTP path is async-openai's, with
//! [`RetryingHttp`] as its only retry layer.

use std::time::Duration;

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use reqwest13 as reqwest;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::cache::{Lookup, ResponseCache};
use crate::config::LlmConfig;
use crate::retry::{RetryLog, RetryPolicy, RetryingHttp, is_validation_error};

/// Tokens by kind (F-AG-4).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    pub prompt: u64,
    pub cached_prompt: u64,
    pub completion: u64,
}

impl std::ops::AddAssign for Tokens {
    fn add_assign(&mut self, o: Tokens) {
        self.prompt += o.prompt;
        self.cached_prompt += o.cached_prompt;
        self.completion += o.completion;
    }
}

/// One chat-completions request. `messages` are JSON values so earlier
/// turns are replayed exactly as they were first sent.
#[derive(Debug, Clone, Serialize)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_format: Option<Value>,
}

impl ChatRequest {
    /// One system prompt and one user message, no tools: the judges' shape.
    pub fn system_user(model: &str, system: &str, user: String, response_format: Option<Value>) -> ChatRequest {
        ChatRequest {
            model: model.to_string(),
            messages: vec![
                serde_json::json!({"role": "system", "content": system}),
                serde_json::json!({"role": "user", "content": user}),
            ],
            tools: None,
            tool_choice: None,
            response_format,
        }
    }
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallRequest {
    pub id: String,
    pub name: String,
    /// The arguments as the model wrote them (a JSON object, usually).
    pub arguments: String,
}

/// What came back from one call.
#[derive(Debug, Clone)]
pub struct ChatReply {
    pub content: Option<String>,
    pub refusal: Option<String>,
    pub tool_calls: Vec<ToolCallRequest>,
    pub finish_reason: Option<String>,
    pub tokens: Tokens,
    /// The model that answered (as the request named it).
    pub model: String,
    /// Replayed from the response cache rather than answered by the
    /// server (the tokens are what the recorded call spent).
    pub replayed: bool,
}

/// Why a call produced no usable reply.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LlmError {
    /// An HTTP error status after the retries allowed.
    #[error("model endpoint answered {status}: {message}")]
    Api {
        status: u16,
        message: String,
        transient: bool,
    },
    /// No answer at all (timeout, refused connection) after the retries.
    #[error("model endpoint unreachable: {0}")]
    Transport(String),
    /// An answer that is not a chat completion.
    #[error("model reply unusable: {0}")]
    Reply(String),
    /// The model declined.
    #[error("model refused: {0}")]
    Refusal(String),
    #[error("model client: {0}")]
    Setup(String),
}

impl LlmError {
    /// Worth trying the fallback model: the primary refused or kept
    /// failing. A 4xx other than 429 is our request's fault and would fail
    /// on any model, except a 404 (the model name is unknown there).
    pub fn warrants_fallback(&self) -> bool {
        match self {
            LlmError::Api { status, transient, .. } => *transient || *status == 404 || *status >= 500,
            LlmError::Transport(_) | LlmError::Refusal(_) | LlmError::Reply(_) => true,
            LlmError::Setup(_) => false,
        }
    }
}

/// What calls through [`ChatClient::complete_with_fallback`] did.
#[derive(Debug, Clone, Default)]
pub struct CallLog {
    /// Requests made (each may have been retried by the HTTP layer).
    pub calls: u32,
    /// Of `calls`, those that went to the server (failures included).
    pub live: u32,
    /// Of `calls`, those answered from the response cache.
    pub replayed: u32,
    /// Requests that failed after retries (refusals are not failures).
    pub failed: u32,
    /// Tokens of every reply, refusals included.
    pub tokens: Tokens,
    pub fell_back: bool,
}

/// A client for one endpoint.
pub struct ChatClient {
    client: Client<OpenAIConfig>,
    temperature: f32,
    max_tokens: u32,
    seed: Option<u64>,
    retry_log: RetryLog,
    cache: Option<ResponseCache>,
}

impl ChatClient {
    pub fn new(cfg: &LlmConfig) -> Result<ChatClient, LlmError> {
        Self::with_policy(
            cfg,
            RetryPolicy {
                retries: cfg.retries,
                ..RetryPolicy::default()
            },
        )
    }

    /// With an explicit retry policy (tests shorten the backoff).
    pub fn with_policy(cfg: &LlmConfig, policy: RetryPolicy) -> Result<ChatClient, LlmError> {
        let http = reqwest::Client::builder()
            .timeout(cfg.timeout)
            .connect_timeout(Duration::from_secs(10).min(cfg.timeout))
            .build()
            .map_err(|e| LlmError::Setup(e.to_string()))?;
        let mut oc = OpenAIConfig::new().with_api_base(cfg.base_url.clone());
        // async-openai reads OPENAI_API_KEY from the environment by default;
        // an endpoint gets only the key configured for it.
        oc = oc.with_api_key(cfg.api_key.as_ref().map(|k| k.expose().to_string()).unwrap_or_default());
        let retry_log = RetryLog::default();
        let client = Client::with_config(oc).with_http_service(RetryingHttp::new(http, policy, retry_log.clone()));
        let cache = cfg
            .cache_dir
            .as_ref()
            .map(ResponseCache::open)
            .transpose()
            .map_err(|e| LlmError::Setup(e.to_string()))?;
        Ok(ChatClient {
            client,
            temperature: cfg.temperature,
            max_tokens: cfg.max_tokens,
            seed: cfg.seed,
            retry_log,
            cache,
        })
    }

    /// Every wait the retry layer made, in order.
    pub fn retry_log(&self) -> &RetryLog {
        &self.retry_log
    }

    /// One call (retried by the HTTP layer as the policy allows), replayed
    /// from the response cache when it recorded exactly this request.
    pub async fn complete(&self, req: &ChatRequest) -> Result<ChatReply, LlmError> {
        let body = self.body(req)?;
        if let Some(cache) = &self.cache {
            match cache.lookup(&body) {
                Lookup::Hit(raw) => match parse_reply(raw, &req.model) {
                    Ok(reply) => {
                        return Ok(ChatReply {
                            replayed: true,
                            ..reply
                        });
                    }
                    Err(e) => tracing::warn!(
                        file = %cache.path_of(&body).display(),
                        error = %e,
                        "cached model response unusable; calling the model"
                    ),
                },
                Lookup::Miss => {}
                Lookup::Unusable(why) => {
                    tracing::warn!(problem = %why, "model response cache entry unusable; calling the model")
                }
            }
        }
        let raw: Value = self.client.chat().create_byot(body.clone()).await.map_err(map_error)?;
        let reply = parse_reply(raw.clone(), &req.model)?;
        // Only answers that parsed are recorded; a failed write costs the
        // next run a live call, never this one its answer.
        if let Some(Err(e)) = self.cache.as_ref().map(|c| c.store(&body, &raw)) {
            tracing::warn!(error = %e, "model response not cached");
        }
        Ok(reply)
    }

    /// The body sent for `req`: the request plus the client's sampling
    /// settings (all of it is the cache key).
    fn body(&self, req: &ChatRequest) -> Result<Value, LlmError> {
        let mut body = serde_json::to_value(req).map_err(|e| LlmError::Setup(e.to_string()))?;
        let obj = body.as_object_mut().expect("a request serialises to an object");
        obj.insert("temperature".into(), json!(self.temperature));
        obj.insert("max_tokens".into(), json!(self.max_tokens));
        if let Some(seed) = self.seed {
            obj.insert("seed".into(), json!(seed));
        }
        obj.insert("stream".into(), json!(false));
        Ok(body)
    }
}

impl ChatClient {
    /// One call as `req.model`. A refusal (the `refusal` field or a
    /// content filter) is an error; on a refusal or a failure worth it,
    /// `req.model` switches to `fallback` once and the call is repeated. The
    /// caller keeps the switched model for what follows.
    pub async fn complete_with_fallback(
        &self,
        req: &mut ChatRequest,
        fallback: Option<&str>,
        log: &mut CallLog,
    ) -> Result<ChatReply, LlmError> {
        loop {
            log.calls += 1;
            let outcome = self.complete(req).await;
            match &outcome {
                Ok(r) if r.replayed => log.replayed += 1,
                // A failure is never replayed: it was the server's.
                _ => log.live += 1,
            }
            let outcome = outcome.and_then(|r| {
                log.tokens += r.tokens;
                let refused = r.refusal.clone().or_else(|| {
                    (r.finish_reason.as_deref() == Some("content_filter")).then(|| "content filter".to_string())
                });
                match refused {
                    Some(why) => Err(LlmError::Refusal(why)),
                    None => Ok(r),
                }
            });
            let e = match outcome {
                Ok(reply) => return Ok(reply),
                Err(e) => e,
            };
            if !matches!(e, LlmError::Refusal(_)) {
                log.failed += 1;
            }
            match fallback {
                Some(fb) if !log.fell_back && e.warrants_fallback() && fb != req.model => {
                    tracing::warn!(error = %e, fallback = %fb, "switching to the fallback model");
                    req.model = fb.to_string();
                    log.fell_back = true;
                }
                _ => return Err(e),
            }
        }
    }
}

fn map_error(e: OpenAIError) -> LlmError {
    match e {
        OpenAIError::ApiError(api) => {
            let status = api.status_code.as_u16();
            let message = api.api_error.message.clone();
            let transient = status == 429 || (status >= 500 && !is_validation_error(&message));
            LlmError::Api {
                status,
                message: truncate(&message, 500),
                transient,
            }
        }
        OpenAIError::Reqwest(e) => LlmError::Transport(e.to_string()),
        OpenAIError::JSONDeserialize(e, body) => {
            LlmError::Reply(format!("{e}; body starts {:?}", truncate(&body, 200)))
        }
        other => LlmError::Transport(other.to_string()),
    }
}

#[derive(Deserialize)]
struct WireResponse {
    #[serde(default)]
    choices: Vec<WireChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    /// llama.cpp: `cache_n` is the prompt tokens served from its KV cache.
    #[serde(default)]
    timings: Option<Value>,
}

#[derive(Deserialize)]
struct WireChoice {
    message: WireMessage,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    id: Option<String>,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    /// A JSON string per the API; some servers send the object itself.
    #[serde(default)]
    arguments: Value,
}

#[derive(Deserialize, Default)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<WireDetails>,
}

#[derive(Deserialize, Default)]
struct WireDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

fn parse_reply(raw: Value, model: &str) -> Result<ChatReply, LlmError> {
    let wire: WireResponse = serde_json::from_value(raw.clone()).map_err(|e| {
        LlmError::Reply(format!(
            "not a chat completion ({e}): {}",
            truncate(&raw.to_string(), 200)
        ))
    })?;
    let usage = wire.usage.unwrap_or_default();
    let cached = usage
        .prompt_tokens_details
        .and_then(|d| d.cached_tokens)
        .or_else(|| {
            wire.timings
                .as_ref()
                .and_then(|t| t.get("cache_n"))
                .and_then(Value::as_u64)
        })
        .unwrap_or(0)
        .min(usage.prompt_tokens);
    let tokens = Tokens {
        prompt: usage.prompt_tokens,
        cached_prompt: cached,
        completion: usage.completion_tokens,
    };
    let choice = wire
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| LlmError::Reply("the reply has no choices".into()))?;
    let tool_calls = choice
        .message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, c)| ToolCallRequest {
            id: c.id.filter(|s| !s.is_empty()).unwrap_or_else(|| format!("call_{i}")),
            name: c.function.name,
            arguments: match c.function.arguments {
                Value::String(s) => s,
                Value::Null => "{}".into(),
                other => other.to_string(),
            },
        })
        .collect();
    Ok(ChatReply {
        content: choice.message.content,
        refusal: choice.message.refusal.filter(|r| !r.trim().is_empty()),
        tool_calls,
        finish_reason: choice.finish_reason,
        tokens,
        model: model.to_string(),
        replayed: false,
    })
}

pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tokens_from_openai_and_llama_cpp_replies() {
        let openai = json!({"choices":[{"message":{"content":"x"},"finish_reason":"stop"}],
            "usage":{"prompt_tokens":100,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":64}}});
        let r = parse_reply(openai, "m").unwrap();
        assert_eq!(
            r.tokens,
            Tokens {
                prompt: 100,
                cached_prompt: 64,
                completion: 7
            }
        );
        let llama = json!({"choices":[{"message":{"content":null,"tool_calls":[
            {"function":{"name":"find_tests","arguments":{"symbol":"a"}}}]}}],
            "usage":{"prompt_tokens":50,"completion_tokens":3},"timings":{"cache_n":20}});
        let r = parse_reply(llama, "m").unwrap();
        assert_eq!(r.tokens.cached_prompt, 20);
        assert_eq!(r.tool_calls[0].id, "call_0");
        assert_eq!(r.tool_calls[0].arguments, r#"{"symbol":"a"}"#);
    }

    #[test]
    fn a_reply_without_choices_is_named() {
        let e = parse_reply(json!({"choices": []}), "m").unwrap_err();
        assert!(e.to_string().contains("no choices"));
        let e = parse_reply(json!({"choices": "nope"}), "m").unwrap_err();
        assert!(e.to_string().contains("not a chat completion"), "{e}");
    }
}

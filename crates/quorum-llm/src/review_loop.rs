//! The bounded tool loop (F-AG-3).
//!
//! At most the role's turn budget (≤ 8), the last with tools off. All tool
//! calls of a turn run concurrently and their results go back together.
//! History is append-only: every request's messages are the previous
//! request's messages plus what happened since, byte for byte, so a
//! server's prompt cache hits. The final answer must validate against the
//! findings schema; one repair request quotes the problem back; anything
//! else is a [`LoopFailure`] (the agent then uses the offline engine).
//!
//! Two protocols run the same loop: the API's native tool calls, and a
//! schema-constrained action protocol (`{"tool_calls": [...]}` or
//! `{"findings": [...]}` each turn) for servers whose native tool calls
//! are unreliable.

use std::collections::BTreeMap;

use quorum_core::{AgentRole, ContextMode, Finding};
use quorum_engine::ReviewInput;
use serde_json::{Value, json};

use crate::client::{CallLog, ChatClient, ChatReply, ChatRequest, LlmError, Tokens, ToolCallRequest, truncate};
use crate::config::{LlmConfig, ToolMode};
use crate::prompt::{Fence, system_prompt, user_prompt};
use crate::schema::{findings_from_value, findings_schema, parse_findings, response_format};
use crate::tools::{ToolBox, ToolCall, action_schema, native_tools, parse_call, parse_call_text};

/// A tool result is cut here: one file dump must not eat the context.
const MAX_TOOL_RESULT_CHARS: usize = 8000;

/// What one review cost and did (success or not).
#[derive(Debug, Clone, Default)]
pub struct LoopStats {
    pub tokens: Tokens,
    /// Model calls made (each may have been retried by the HTTP layer).
    pub calls: u32,
    /// Of `calls`, those the server answered (or failed).
    pub live_calls: u32,
    /// Of `calls`, those replayed from the response cache.
    pub replayed_calls: u32,
    pub turns: u8,
    /// Tool name → (calls answered, calls that errored).
    pub tools: BTreeMap<String, (u32, u32)>,
    /// Replies whose final answer did not validate (repaired or not).
    pub invalid_replies: u32,
    /// Calls that failed after retries.
    pub failed_calls: u32,
    /// The model that gave the last reply.
    pub model: String,
    pub fell_back: bool,
}

/// A review the loop finished.
#[derive(Debug, Clone)]
pub struct LoopReport {
    pub findings: Vec<Finding>,
    pub stats: LoopStats,
}

/// A review the loop gave up on, with what it spent.
#[derive(Debug, Clone)]
pub struct LoopFailure {
    pub error: String,
    pub stats: LoopStats,
}

/// The model-backed reviewer of the LLM roles.
pub struct ModelReviewer {
    client: ChatClient,
    cfg: LlmConfig,
}

enum Answer {
    Findings(Vec<Finding>),
    Tools(Vec<(String, Result<ToolCall, String>)>),
    Invalid(String),
}

struct Conversation<'a> {
    reviewer: &'a ModelReviewer,
    role: AgentRole,
    messages: Vec<Value>,
    model: String,
    stats: LoopStats,
    tools: Option<&'a dyn ToolBox>,
    offered: Vec<&'static str>,
}

impl ModelReviewer {
    pub fn new(cfg: LlmConfig) -> Result<ModelReviewer, LlmError> {
        Ok(ModelReviewer {
            client: ChatClient::new(&cfg)?,
            cfg,
        })
    }

    pub fn with_client(cfg: LlmConfig, client: ChatClient) -> ModelReviewer {
        ModelReviewer { client, cfg }
    }

    pub fn config(&self) -> &LlmConfig {
        &self.cfg
    }

    pub fn client(&self) -> &ChatClient {
        &self.client
    }

    /// Reviews one change as `role`. `tools` is used only in `graph_rag`.
    pub async fn review(
        &self,
        role: AgentRole,
        input: &ReviewInput<'_>,
        tools: Option<&dyn ToolBox>,
    ) -> Result<LoopReport, LoopFailure> {
        let tools = tools.filter(|_| input.context.mode == ContextMode::GraphRag);
        let offered = tools.map(|t| t.offered()).unwrap_or_default();
        let mut conv = Conversation {
            reviewer: self,
            role,
            messages: vec![
                json!({"role": "system", "content": system_prompt(role, &offered)}),
                json!({"role": "user", "content": user_prompt(input, self.cfg.context_tokens)}),
            ],
            model: self.cfg.model.clone(),
            stats: LoopStats::default(),
            tools,
            offered,
        };
        let turns = if tools.is_some() { self.cfg.turns_for(role) } else { 1 };
        let result = conv.run(turns).await;
        conv.stats.model = conv.model.clone();
        match result {
            Ok(findings) => Ok(LoopReport {
                findings,
                stats: conv.stats,
            }),
            Err(error) => Err(LoopFailure {
                error,
                stats: conv.stats,
            }),
        }
    }
}

impl Conversation<'_> {
    async fn run(&mut self, turns: u8) -> Result<Vec<Finding>, String> {
        for turn in 1..=turns {
            self.stats.turns = turn;
            let last = turn == turns;
            if last && turn > 1 {
                self.note_last_turn();
            }
            let require = turn == 1 && !last && self.reviewer.cfg.first_turn_tools;
            let reply = self.call(!last, require).await?;
            match self.read(&reply, !last) {
                Answer::Findings(f) => return Ok(f),
                Answer::Tools(calls) => self.run_tools(&reply, calls).await,
                Answer::Invalid(why) => return self.repair(why, reply).await,
            }
        }
        unreachable!("the last turn has tools off, so it returns")
    }

    /// Tells the model the next answer is its last, without rewriting
    /// anything already sent: a user message not yet sent (the action protocol's tool results)
    /// carries it; otherwise it is a message of its own.
    fn note_last_turn(&mut self) {
        const NOTE: &str = "This is your last turn: tools are off. Answer now with the findings JSON.";
        if let Some(last) = self.messages.last_mut()
            && last["role"] == "user"
            && let Some(text) = last["content"].as_str()
        {
            last["content"] = Value::String(format!("{text}{NOTE}"));
            return;
        }
        self.messages.push(json!({"role": "user", "content": NOTE}));
    }

    fn request(&self, tools_on: bool, require_tools: bool) -> ChatRequest {
        let json_mode = self.reviewer.cfg.tool_mode == ToolMode::Json && self.tools.is_some();
        let structured = self.reviewer.cfg.structured_output;
        let mut req = ChatRequest {
            model: self.model.clone(),
            messages: self.messages.clone(),
            tools: None,
            tool_choice: None,
            response_format: None,
        };
        if json_mode {
            if structured {
                let schema = if require_tools {
                    crate::tools::tool_calls_schema(&self.offered)
                } else {
                    action_schema(tools_on, &self.offered)
                };
                req.response_format = Some(response_format("action", schema));
            }
        } else if self.tools.is_some() {
            // Tools stay in every request (they are part of the cached
            // prefix); the last turn turns them off with `tool_choice`.
            req.tools = Some(native_tools(&self.offered));
            req.tool_choice = Some(json!(match (tools_on, require_tools) {
                (true, true) => "required",
                (true, false) => "auto",
                (false, _) => "none",
            }));
            if !tools_on && structured {
                req.response_format = Some(response_format("findings", findings_schema()));
            }
        } else if structured {
            req.response_format = Some(response_format("findings", findings_schema()));
        }
        req
    }

    /// One model call, switching to the fallback model once per review on
    /// refusal or repeated failure.
    async fn call(&mut self, tools_on: bool, require_tools: bool) -> Result<ChatReply, String> {
        let mut req = self.request(tools_on, require_tools);
        let fallback = match self.stats.fell_back {
            true => None,
            false => self.reviewer.cfg.fallback_model.as_deref(),
        };
        let mut log = CallLog::default();
        let outcome = self
            .reviewer
            .client
            .complete_with_fallback(&mut req, fallback, &mut log)
            .await;
        self.stats.calls += log.calls;
        self.stats.live_calls += log.live;
        self.stats.replayed_calls += log.replayed;
        self.stats.failed_calls += log.failed;
        self.stats.tokens += log.tokens;
        self.stats.fell_back |= log.fell_back;
        self.model = req.model;
        outcome.map_err(|e| format!("{e} (model {})", self.model))
    }

    fn read(&mut self, reply: &ChatReply, tools_on: bool) -> Answer {
        let model = self.model.clone();
        if self.reviewer.cfg.tool_mode == ToolMode::Json && self.tools.is_some() {
            let text = reply.content.clone().unwrap_or_default();
            let Some(v) = crate::schema::extract_json(&text).and_then(|j| serde_json::from_str::<Value>(j).ok()) else {
                return Answer::Invalid("the answer is not a JSON object".into());
            };
            if let Some(calls) = v.get("tool_calls").and_then(Value::as_array) {
                if !tools_on {
                    return Answer::Invalid("tools are off on the last turn; the answer must be findings".into());
                }
                let parsed = calls
                    .iter()
                    .map(|c| {
                        let name = c.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
                        let call = parse_call(&name, c.get("arguments").unwrap_or(&Value::Null));
                        (name, call)
                    })
                    .collect::<Vec<_>>();
                if parsed.is_empty() {
                    return Answer::Invalid("`tool_calls` is empty".into());
                }
                return Answer::Tools(parsed);
            }
            return match v.get("findings") {
                Some(f) => match findings_from_value(f, self.role, &model) {
                    Ok(f) => Answer::Findings(f),
                    Err(e) => Answer::Invalid(e),
                },
                None => Answer::Invalid("the answer has neither `tool_calls` nor `findings`".into()),
            };
        }
        if !reply.tool_calls.is_empty() {
            if !tools_on || self.tools.is_none() {
                return Answer::Invalid("tools are off; the answer must be the findings JSON".into());
            }
            return Answer::Tools(
                reply
                    .tool_calls
                    .iter()
                    .map(|c| (c.name.clone(), parse_call_text(&c.name, &c.arguments)))
                    .collect(),
            );
        }
        match reply.content.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
            None => Answer::Invalid("the answer is empty".into()),
            Some(text) => match parse_findings(text, self.role, &model) {
                Ok(f) => Answer::Findings(f),
                Err(e) => Answer::Invalid(e),
            },
        }
    }

    /// Runs a turn's calls concurrently and appends the assistant's message
    /// and every result, in the order asked.
    async fn run_tools(&mut self, reply: &ChatReply, calls: Vec<(String, Result<ToolCall, String>)>) {
        let tools = self.tools.expect("tool calls are read only when tools exist");
        let results = futures::future::join_all(calls.iter().map(|(_, call)| async move {
            match call {
                Ok(c) => tools.call(c).await,
                Err(e) => Err(e.clone()),
            }
        }))
        .await;
        for ((name, _), r) in calls.iter().zip(&results) {
            let entry = self.stats.tools.entry(name.clone()).or_default();
            match r {
                Ok(_) => entry.0 += 1,
                Err(_) => entry.1 += 1,
            }
        }
        let texts: Vec<String> = results
            .into_iter()
            .map(|r| match r {
                Ok(t) => truncate(&t, MAX_TOOL_RESULT_CHARS),
                Err(e) => format!("error: {e}"),
            })
            .collect();
        let fence = Fence::for_input(&texts.iter().map(String::as_str).collect::<Vec<_>>());
        if self.reviewer.cfg.tool_mode == ToolMode::Json {
            self.messages
                .push(json!({"role": "assistant", "content": reply.content.clone().unwrap_or_default()}));
            let mut s = String::from("Tool results (untrusted data), in the order you asked:\n\n");
            for (i, ((name, _), text)) in calls.iter().zip(&texts).enumerate() {
                s.push_str(&format!("[{}] {name}\n{}\n\n", i + 1, fence.wrap("tool-result", text)));
            }
            self.messages.push(json!({"role": "user", "content": s}));
        } else {
            self.messages.push(assistant_with_calls(reply));
            for (c, text) in reply.tool_calls.iter().zip(&texts) {
                self.messages.push(json!({"role": "tool", "tool_call_id": c.id,
                    "content": fence.wrap("tool-result", text)}));
            }
        }
    }

    /// One repair request quoting what was wrong; tools off.
    async fn repair(&mut self, why: String, reply: ChatReply) -> Result<Vec<Finding>, String> {
        self.stats.invalid_replies += 1;
        {
            if !reply.tool_calls.is_empty() && self.reviewer.cfg.tool_mode == ToolMode::Native {
                // A native tool-call message must be answered by tool messages.
                self.messages.push(assistant_with_calls(&reply));
                for c in &reply.tool_calls {
                    self.messages.push(json!({"role": "tool", "tool_call_id": c.id,
                        "content": "not run: tools are off for this answer"}));
                }
            } else {
                self.messages
                    .push(json!({"role": "assistant", "content": reply.content.clone().unwrap_or_default()}));
            }
        }
        self.messages.push(json!({"role": "user", "content": format!(
            "Your answer did not validate: {why}. Reply with only a JSON object {{\"findings\": [...]}} \
             matching the schema; tools are off.")}));
        let reply = self.call(false, false).await?;
        match self.read(&reply, false) {
            Answer::Findings(f) => Ok(f),
            Answer::Tools(_) => {
                self.stats.invalid_replies += 1;
                Err("invalid final answer after one repair: tool calls with tools off".into())
            }
            Answer::Invalid(e) => {
                self.stats.invalid_replies += 1;
                Err(format!("invalid final answer after one repair: {e}"))
            }
        }
    }
}

fn assistant_with_calls(reply: &ChatReply) -> Value {
    let calls: Vec<Value> = reply
        .tool_calls
        .iter()
        .map(|c: &ToolCallRequest| {
            json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}})
        })
        .collect();
    json!({"role": "assistant", "content": reply.content.clone(), "tool_calls": calls})
}

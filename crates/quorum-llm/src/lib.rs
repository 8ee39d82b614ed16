//! The model-backed side of Quorum (F-AG-1..5, F-CRIT-1): a chat client for
//! any OpenAI-compatible endpoint (async-openai, one retry layer, a fallback
//! model, token accounting), the prompts that frame pull-request text as
//! untrusted data, the bounded tool loop of the reviewer, security and tests
//! roles, and the critic's one judgement call per job.
//!
//! Depends on no service crate: the agent and the critic call it, and
//! implement [`tools::ToolBox`] over their own back-ends.

pub mod cache;
pub mod client;
pub mod config;
pub mod explain;
pub mod judge;
pub mod prompt;
/// The retry layer, shared with the embedding client (`quorum-openai`).
pub use quorum_openai as retry;
pub mod review_loop;
pub mod schema;
pub mod tools;

pub use cache::ResponseCache;
pub use client::{CallLog, ChatClient, LlmError, Tokens};
pub use config::{LlmArgs, LlmConfig, Secret, ToolMode};
pub use judge::{Judgement, ModelJudge};
pub use review_loop::{LoopFailure, LoopReport, LoopStats, ModelReviewer};
pub use tools::{NotIndexed, SearchIndex, ToolBox, ToolCall};

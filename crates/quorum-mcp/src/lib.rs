//! Quorum over MCP (F-UI-2): the code graph of a local checkout, for any
//! editor's agent (Claude Code, Cursor, VS Code, the MCP inspector), on the
//! official Rust SDK (`rmcp`). Every tool is read-only and answers about the
//! one repository the server was started on; every result is bounded; every
//! refusal (an unknown repository or symbol, a path outside the repository,
//! a bad range) is a *tool* error with a message the agent can act on,
//! never a protocol error or a crash.
//!
//! Built today: stdio, `get_callers`, `find_tests`, `read_snippet`, and
//! `past_reviews` over the repository's review memory when the server is
//! given one. Not yet (see the README's status): the streamable-HTTP mount
//! on the gateway, `impact`, `search_code`/`search_docs`, `review_diff` and
//! the prompts.

mod repo;

use std::sync::Arc;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ServerCapabilities, ServerConfig};
use rmcp::schemars::{self, JsonSchema};
use rmcp::{ErrorData, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use serde::Deserialize;

pub use repo::{LoadError, Repo};

/// Most bytes of one tool answer; a longer one is cut and says so.
pub const MAX_ANSWER_BYTES: usize = 32 * 1024;

/// Where the server reads review memory (the CLI's Redis or state file).
#[async_trait::async_trait]
pub trait MemorySource: Send + Sync {
    async fn state(&self) -> Result<quorum_memory::MemoryState, String>;
}

/// The MCP server over one loaded repository.
#[derive(Clone)]
pub struct QuorumMcp {
    repo: Arc<Repo>,
    memory: Option<Arc<dyn MemorySource>>,
}

/// Most past threads one `past_reviews` call returns.
const MAX_PAST: usize = 10;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct PastReviewsArgs {
    pub repo: String,
    /// What to ask: a diff, code, or a question.
    pub query: String,
    /// The file the question is about (ranks its own and its directory's threads higher).
    #[serde(default)]
    pub file: Option<String>,
    /// Answer as this reviewer (GitHub login / GitLab username).
    #[serde(default)]
    pub as_person: Option<String>,
    /// Answer as people of these associations: OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, …
    #[serde(default)]
    pub group: Vec<String>,
    /// Answer as a panel of the N reviewers with most threads near `file` (1-5).
    #[serde(default)]
    pub panel: Option<u8>,
    /// At most this many threads (1-10, default 5).
    #[serde(default)]
    pub limit: Option<u8>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SymbolArgs {
    /// The repository, as the server names it (see the server instructions).
    pub repo: String,
    /// A qualified name (`pkg.module.func`, `Class.method`) or a unique bare name.
    pub symbol: String,
    /// Reverse call-graph depth, 1-3 (get_callers only; default 2).
    #[serde(default)]
    pub hops: Option<u8>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SnippetArgs {
    pub repo: String,
    /// A relative path inside the repository.
    pub path: String,
    /// First line, 1-based.
    pub start: u32,
    /// Last line, inclusive (at most 400 lines per call).
    pub end: u32,
}

#[tool_router]
impl QuorumMcp {
    pub fn new(repo: Repo) -> Self {
        // `#[tool_handler]` builds the router from `Self::tool_router()`.
        QuorumMcp {
            repo: Arc::new(repo),
            memory: None,
        }
    }

    /// Answers `past_reviews` from this review memory.
    pub fn with_memory(mut self, memory: Arc<dyn MemorySource>) -> Self {
        self.memory = Some(memory);
        self
    }

    #[tool(
        description = "Past human review threads of this repository that bear on a change: as a person, a group (OWNER, MEMBER, ...) or a panel of the top reviewers of a file, ranked by relevance and by the team's reactions."
    )]
    async fn past_reviews(&self, Parameters(a): Parameters<PastReviewsArgs>) -> Result<CallToolResult, ErrorData> {
        let result = self.past(a).await;
        Ok(match result {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(bounded(text))]),
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        })
    }

    #[tool(
        description = "Who calls a symbol (reverse call graph, 1-3 hops) and what it calls. Use before changing a function's signature or behaviour."
    )]
    fn get_callers(&self, Parameters(a): Parameters<SymbolArgs>) -> Result<CallToolResult, ErrorData> {
        Ok(self.answer(&a.repo, |r| {
            let symbol = nonempty(&a.symbol)?;
            let found =
                quorum_graph::tools::get_callers(&r.graph, symbol, a.hops.unwrap_or(2)).map_err(|e| e.to_string())?;
            serde_json::to_string_pretty(&found).map_err(|e| e.to_string())
        }))
    }

    #[tool(description = "The tests that reach a symbol through the call graph (up to 3 hops).")]
    fn find_tests(&self, Parameters(a): Parameters<SymbolArgs>) -> Result<CallToolResult, ErrorData> {
        Ok(self.answer(&a.repo, |r| {
            let symbol = nonempty(&a.symbol)?;
            let tests = quorum_graph::tools::find_tests(&r.graph, symbol).map_err(|e| e.to_string())?;
            serde_json::to_string_pretty(&tests).map_err(|e| e.to_string())
        }))
    }

    #[tool(description = "Lines start..end of a file in the repository, numbered (at most 400 lines).")]
    fn read_snippet(&self, Parameters(a): Parameters<SnippetArgs>) -> Result<CallToolResult, ErrorData> {
        Ok(self.answer(&a.repo, |r| {
            quorum_graph::tools::read_snippet(r, &a.path, a.start, a.end).map_err(|e| e.to_string())
        }))
    }
}

impl QuorumMcp {
    async fn past(&self, a: PastReviewsArgs) -> Result<String, String> {
        if a.repo != self.repo.name {
            return Err(format!(
                "unknown repo `{}`: this server answers about `{}` only",
                a.repo, self.repo.name
            ));
        }
        let Some(memory) = &self.memory else {
            return Err(
                "no review memory: start `quorum mcp` with `--memory OWNER/NAME` after `quorum memory ingest`".into(),
            );
        };
        let asker = match (a.as_person.as_deref().map(str::trim), a.group.is_empty(), a.panel) {
            (Some(p), true, None) if !p.is_empty() => quorum_memory::Asker::Person(p.to_string()),
            (None, false, None) => quorum_memory::Asker::Group(
                a.group
                    .iter()
                    .map(|g| quorum_memory::Association::parse(g.trim()).map_err(|e| e.to_string()))
                    .collect::<Result<_, _>>()?,
            ),
            (None, true, Some(n)) if (1..=5).contains(&n) => quorum_memory::Asker::Panel(n.into()),
            (None, true, Some(n)) => return Err(format!("`panel` {n} must be 1-5")),
            (None, true, None) => quorum_memory::Asker::Anyone,
            _ => return Err("give at most one of `as_person` (non-empty), `group`, `panel`".into()),
        };
        if a.query.trim().is_empty() && a.file.is_none() {
            return Err("`query` is empty: give a diff, code or a question (or a `file`)".into());
        }
        let limit = usize::from(a.limit.unwrap_or(5)).clamp(1, MAX_PAST);
        let state = memory.state().await?;
        let mut query = a.query.clone();
        if let Some(f) = &a.file {
            query.push(' ');
            query.push_str(f);
        }
        let hits = quorum_memory::search(state.threads.values(), &asker, &query, a.file.as_deref(), limit);
        if hits.is_empty() {
            return Ok(format!(
                "no past review thread answers that ({} threads in memory)",
                state.threads.len()
            ));
        }
        serde_json::to_string_pretty(&hits).map_err(|e| e.to_string())
    }

    /// Runs `f` on the repository named `repo`, as a tool result: its text,
    /// cut to [`MAX_ANSWER_BYTES`], or its refusal as a tool error.
    fn answer(&self, repo: &str, f: impl FnOnce(&Repo) -> Result<String, String>) -> CallToolResult {
        let result = if repo != self.repo.name {
            Err(format!(
                "unknown repo `{repo}`: this server answers about `{}` only",
                self.repo.name
            ))
        } else {
            f(&self.repo)
        };
        match result {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(bounded(text))]),
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        }
    }
}

fn nonempty(symbol: &str) -> Result<&str, String> {
    let s = symbol.trim();
    if s.is_empty() {
        return Err("`symbol` is empty: give a qualified name such as `pkg.module.func`".into());
    }
    Ok(s)
}

/// `text` cut at a character boundary under the cap, with how much was cut.
fn bounded(mut text: String) -> String {
    if text.len() <= MAX_ANSWER_BYTES {
        return text;
    }
    let total = text.len();
    let mut cut = MAX_ANSWER_BYTES;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    text.push_str(&format!("\n… truncated: {} of {total} bytes not shown", total - cut));
    text
}

#[tool_handler]
impl ServerHandler for QuorumMcp {
    fn get_info(&self) -> ServerConfig {
        let commit = self
            .repo
            .commit
            .as_deref()
            .map(|c| format!(", commit {}", &c[..c.len().min(12)]));
        let memory = if self.memory.is_some() {
            " past_reviews asks the team's past review threads."
        } else {
            ""
        };
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_instructions(format!(
            "Quorum's code graph of `{}` ({} files{}). Pass repo=\"{}\" to every tool. Read-only.{memory}",
            self.repo.name,
            self.repo.file_count(),
            commit.unwrap_or_default(),
            self.repo.name,
        ))
    }
}

/// Why the server stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("the MCP session could not start: {0}")]
    Start(String),
    #[error("the MCP session ended with an error: {0}")]
    Session(String),
}

/// Serves on stdin/stdout until the client disconnects. Logs must go to
/// stderr: stdout is the protocol.
pub async fn serve_stdio(server: QuorumMcp) -> Result<(), ServeError> {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| ServeError::Start(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| ServeError::Session(e.to_string()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_answer_is_cut_at_a_character_boundary_and_says_how_much() {
        let text = "é".repeat(MAX_ANSWER_BYTES); // two bytes each
        let cut = bounded(text);
        assert!(cut.len() < MAX_ANSWER_BYTES + 80);
        assert!(
            cut.contains(&format!(
                "truncated: {} of {} bytes",
                MAX_ANSWER_BYTES,
                2 * MAX_ANSWER_BYTES
            )),
            "{}",
            &cut[cut.len() - 60..]
        );
        assert_eq!(bounded("short".into()), "short");
    }

    struct Fixed(quorum_memory::MemoryState);

    #[async_trait::async_trait]
    impl MemorySource for Fixed {
        async fn state(&self) -> Result<quorum_memory::MemoryState, String> {
            Ok(self.0.clone())
        }
    }

    #[tokio::test]
    async fn past_reviews_answer_as_a_person_and_refuse_what_they_cannot() {
        let repo = Repo::from_files("acme/shop", None, vec![("shop/a.py".into(), "x = 1\n".into())])
            .await
            .unwrap();
        let mut state = quorum_memory::MemoryState::default();
        for (id, who, text) in [
            (1, "alice", "alice: amounts are integer cents, never float"),
            (2, "bob", "bob: cents"),
        ] {
            state.threads.insert(
                id,
                quorum_memory::PastThread {
                    id,
                    pr: id,
                    path: "shop/payments.py".into(),
                    reviewer: who.into(),
                    association: quorum_memory::Association::Member,
                    text: text.into(),
                    plus_one: 0,
                    minus_one: 0,
                    resolved: None,
                    merged: true,
                    created_at: "2026-01-01T00:00:00Z".into(),
                    url: format!("u{id}"),
                },
            );
        }
        let bare = QuorumMcp::new(repo);
        let server = bare.clone().with_memory(Arc::new(Fixed(state)));
        let args = |person: Option<&str>, panel: Option<u8>| PastReviewsArgs {
            repo: "acme/shop".into(),
            query: "price as a float in cents".into(),
            file: Some("shop/orders.py".into()),
            as_person: person.map(str::to_string),
            group: vec![],
            panel,
            limit: None,
        };
        let answer = server.past(args(Some("alice"), None)).await.unwrap();
        assert!(
            answer.contains("never float") && !answer.contains("bob: cents"),
            "{answer}"
        );
        let both = server.past(args(Some("alice"), Some(2))).await.unwrap_err();
        assert!(both.contains("at most one of"), "{both}");
        assert!(server.past(args(None, Some(9))).await.unwrap_err().contains("1-5"));
        let none = bare.past(args(Some("alice"), None)).await.unwrap_err();
        assert!(none.contains("--memory OWNER/NAME"), "{none}");
    }

    #[tokio::test]
    async fn refusals_are_tool_errors_that_say_what_to_do() {
        let repo = Repo::from_files(
            "acme/shop",
            None,
            vec![(
                "shop/tax.py".into(),
                "def rate():\n    return 1\n\ndef total():\n    return rate()\n".into(),
            )],
        )
        .await
        .unwrap();
        let server = QuorumMcp::new(repo);
        let text = |r: &CallToolResult| serde_json::to_string(&r.content).unwrap();
        let ok = server.answer("acme/shop", |r| {
            let answer = quorum_graph::tools::get_callers(&r.graph, "rate", 1).map_err(|e| e.to_string())?;
            Ok(answer
                .callers
                .iter()
                .map(|c| c.qname.as_str())
                .collect::<Vec<_>>()
                .join(","))
        });
        assert_eq!(ok.is_error, Some(false), "{}", text(&ok));
        let answer = ok.content[0].as_text().map(|t| t.text.as_str());
        assert_eq!(answer, Some("shop.tax.total"), "the one caller: {}", text(&ok));
        let other = server.answer("acme/other", |_| Ok(String::new()));
        assert_eq!(other.is_error, Some(true));
        assert!(
            text(&other).contains("answers about `acme/shop` only"),
            "{}",
            text(&other)
        );
        assert!(nonempty("  ").unwrap_err().contains("`symbol` is empty"));
    }
}

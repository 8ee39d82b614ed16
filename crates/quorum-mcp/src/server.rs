//! The server: one loaded repository, its tools and prompts. Every tool is
//! read-only and bounded; every refusal is a *tool* error (the session
//! goes on), never a protocol error or a crash.

use std::sync::Arc;

use rmcp::handler::server::router::prompt::PromptRouter;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ServerCapabilities, ServerConfig};
use rmcp::schemars::{self, JsonSchema};
use rmcp::{ErrorData, ServerHandler, prompt_handler, tool, tool_handler, tool_router};
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::changes::{self, ChangeArgs};
use crate::review::Reviewer;
use crate::search::Search;
use crate::{MemorySource, Repo, bounded};

/// The MCP server over one loaded repository.
#[derive(Clone)]
pub struct QuorumMcp {
    pub(crate) repo: Arc<Repo>,
    memory: Option<Arc<dyn MemorySource>>,
    search: Arc<Search>,
    reviewer: Option<Arc<dyn Reviewer>>,
    tool_router: ToolRouter<QuorumMcp>,
    prompt_router: PromptRouter<QuorumMcp>,
}

/// Most past threads one `past_reviews` call returns.
const MAX_PAST: usize = 10;
/// Most chunks one search returns.
const MAX_HITS: usize = 20;
/// The impact report's default and largest token budget.
const IMPACT_BUDGET: usize = 1500;
const MAX_IMPACT_BUDGET: usize = 6000;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct PastReviewsArgs {
    pub repo: String,
    /// A diff, code, or a question.
    pub query: String,
    /// The file asked about (its own and its directory's threads rank higher).
    #[serde(default)]
    pub file: Option<String>,
    /// Answer as this reviewer (login).
    #[serde(default)]
    pub as_person: Option<String>,
    /// Answer as these associations: OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, ...
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
    pub repo: String,
    /// A qualified name (`pkg.module.func`, `Class.method`) or a unique bare name.
    pub symbol: String,
    /// Reverse call-graph depth, 1-3 (get_callers; default 2).
    #[serde(default)]
    pub hops: Option<u8>,
    /// A commit or branch to answer at (default: the checkout's HEAD).
    #[serde(default, rename = "ref")]
    pub git_ref: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SnippetArgs {
    pub repo: String,
    /// A relative path inside the repository.
    pub path: String,
    /// First line, 1-based.
    pub start: u32,
    /// Last line, inclusive (at most 400 lines).
    pub end: u32,
    /// A commit or branch to read at (default: HEAD).
    #[serde(default, rename = "ref")]
    pub git_ref: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchArgs {
    pub repo: String,
    /// What to find, in words or identifiers.
    pub query: String,
    /// Only paths matching this glob (e.g. `shop/**`).
    #[serde(default)]
    pub path: Option<String>,
    /// At most this many chunks (1-20, default 5).
    #[serde(default)]
    pub limit: Option<u8>,
    /// Only HEAD is indexed; another ref is refused.
    #[serde(default, rename = "ref")]
    pub git_ref: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ImpactArgs {
    #[serde(flatten)]
    pub change: ChangeArgs,
    /// Reverse call-graph depth, 1-3 (default 2).
    #[serde(default)]
    pub hops: Option<u8>,
    /// Token budget of the report (default 1500, at most 6000).
    #[serde(default)]
    pub budget: Option<usize>,
}

fn ok(text: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(bounded(text))])
}

fn refuse(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

fn result(r: Result<String, String>) -> CallToolResult {
    r.map_or_else(refuse, ok)
}

#[tool_router]
impl QuorumMcp {
    pub fn new(repo: Repo) -> Self {
        QuorumMcp {
            repo: Arc::new(repo),
            memory: None,
            search: Search::off("start `quorum mcp` with `--search on` (needs the embedding model: `make deps`)"),
            reviewer: None,
            tool_router: Self::tool_router(),
            prompt_router: Self::prompt_router(),
        }
    }

    /// Answers `past_reviews` from this review memory.
    pub fn with_memory(mut self, memory: Arc<dyn MemorySource>) -> Self {
        self.memory = Some(memory);
        self
    }

    /// Answers `search_code` / `search_docs` from this index.
    pub fn with_search(mut self, search: Arc<Search>) -> Self {
        self.search = search;
        self
    }

    /// Answers `review_diff` with this pipeline.
    pub fn with_reviewer(mut self, reviewer: Arc<dyn Reviewer>) -> Self {
        self.reviewer = Some(reviewer);
        self
    }

    /// Files of the loaded checkout.
    pub fn file_count(&self) -> usize {
        self.repo.file_count()
    }

    pub(crate) fn repo_name(&self) -> String {
        self.repo.name.clone()
    }

    #[tool(
        description = "Past human review threads that bear on a change: as a person, a group (OWNER, MEMBER, ...) or a panel of a file's top reviewers."
    )]
    async fn past_reviews(&self, Parameters(a): Parameters<PastReviewsArgs>) -> Result<CallToolResult, ErrorData> {
        Ok(result(self.past(a).await))
    }

    #[tool(
        description = "Who calls a symbol (reverse call graph, 1-3 hops) and what it calls. Use before changing a signature or behaviour."
    )]
    async fn get_callers(&self, Parameters(a): Parameters<SymbolArgs>) -> Result<CallToolResult, ErrorData> {
        Ok(result(self.callers(a).await))
    }

    #[tool(description = "The tests that reach a symbol through the call graph (up to 3 hops).")]
    async fn find_tests(&self, Parameters(a): Parameters<SymbolArgs>) -> Result<CallToolResult, ErrorData> {
        Ok(result(self.tests(a).await))
    }

    #[tool(description = "Lines start..end of a file in the repository, numbered (at most 400 lines).")]
    async fn read_snippet(&self, Parameters(a): Parameters<SnippetArgs>) -> Result<CallToolResult, ErrorData> {
        Ok(result(self.snippet(a).await))
    }

    #[tool(description = "Code chunks by meaning and by name (hybrid dense + BM25 search).")]
    async fn search_code(&self, Parameters(a): Parameters<SearchArgs>) -> Result<CallToolResult, ErrorData> {
        Ok(result(self.search(quorum_search::Kind::Code, a).await))
    }

    #[tool(description = "Documentation chunks (README, docs/, markdown) by meaning and by name.")]
    async fn search_docs(&self, Parameters(a): Parameters<SearchArgs>) -> Result<CallToolResult, ErrorData> {
        Ok(result(self.search(quorum_search::Kind::Docs, a).await))
    }

    #[tool(
        description = "What a change touches: changed symbols, their callers and tests, broken call sites. `changes`: worktree (default), staged or BASE..HEAD; or `diff`."
    )]
    async fn impact(&self, Parameters(a): Parameters<ImpactArgs>) -> Result<CallToolResult, ErrorData> {
        Ok(result(self.impact_of(a).await))
    }

    #[tool(
        description = "Quorum's review of a change (the findings `quorum review` prints, and what the critic rejected). Same change arguments as `impact`."
    )]
    async fn review_diff(
        &self,
        Parameters(a): Parameters<ChangeArgs>,
        cancel: CancellationToken,
    ) -> Result<CallToolResult, ErrorData> {
        // A review takes seconds; a client that gives up cancels it here.
        Ok(tokio::select! {
            r = self.review(a) => result(r),
            () = cancel.cancelled() => refuse("cancelled by the client".into()),
        })
    }
}

impl QuorumMcp {
    fn check_repo(&self, repo: &str) -> Result<(), String> {
        if repo == self.repo.name {
            Ok(())
        } else {
            Err(format!(
                "unknown repo `{repo}`: this server answers about `{}` only",
                self.repo.name
            ))
        }
    }

    pub(crate) async fn past(&self, a: PastReviewsArgs) -> Result<String, String> {
        self.check_repo(&a.repo)?;
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
                    .map(|g| quorum_memory::Association::parse(g.trim()).map_err(|e| quorum_core::error::chain(&e)))
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
        let threads: Vec<_> = state.threads.into_values().collect();
        // Ranked by the reviews collection when the memory's threads are
        // embedded there, else by words.
        let hybrid = match (self.search.index(), memory.repo()) {
            (Some(index), Some(repo)) => {
                quorum_search::reviews::ask(&index, repo, &threads, &asker, &query, a.file.as_deref(), limit)
                    .await
                    .map_err(|e| quorum_core::error::chain(&e))?
            }
            _ => None,
        };
        let hits = hybrid.unwrap_or_else(|| quorum_memory::search(&threads, &asker, &query, a.file.as_deref(), limit));
        if hits.is_empty() {
            return Ok(format!(
                "no past review thread answers that ({} threads in memory)",
                threads.len()
            ));
        }
        serde_json::to_string_pretty(&hits).map_err(|e| quorum_core::error::chain(&e))
    }

    /// The commit `git_ref` names, or `None` for the loaded HEAD.
    async fn at(&self, git_ref: Option<&str>) -> Result<Option<String>, String> {
        let Some(r) = git_ref.map(str::trim).filter(|r| !r.is_empty()) else {
            return Ok(None);
        };
        let commit = self
            .repo
            .git()?
            .resolve(r)
            .await
            .map_err(|e| quorum_core::error::chain(&e))?;
        Ok((self.repo.commit.as_deref() != Some(commit.as_str())).then_some(commit))
    }

    async fn graph_for(&self, repo: &str, git_ref: Option<&str>) -> Result<Arc<quorum_graph::Graph>, String> {
        self.check_repo(repo)?;
        match self.at(git_ref).await? {
            None => Ok(self.repo.graph.clone()),
            Some(commit) => self.repo.graph_at(&commit).await,
        }
    }

    async fn callers(&self, a: SymbolArgs) -> Result<String, String> {
        let symbol = nonempty(&a.symbol)?;
        let graph = self.graph_for(&a.repo, a.git_ref.as_deref()).await?;
        let found = quorum_graph::tools::get_callers(&graph, symbol, a.hops.unwrap_or(2))
            .map_err(|e| quorum_core::error::chain(&e))?;
        serde_json::to_string_pretty(&found).map_err(|e| quorum_core::error::chain(&e))
    }

    async fn tests(&self, a: SymbolArgs) -> Result<String, String> {
        let symbol = nonempty(&a.symbol)?;
        let graph = self.graph_for(&a.repo, a.git_ref.as_deref()).await?;
        let tests = quorum_graph::tools::find_tests(&graph, symbol).map_err(|e| quorum_core::error::chain(&e))?;
        serde_json::to_string_pretty(&tests).map_err(|e| quorum_core::error::chain(&e))
    }

    async fn snippet(&self, a: SnippetArgs) -> Result<String, String> {
        self.check_repo(&a.repo)?;
        match self.at(a.git_ref.as_deref()).await? {
            None => quorum_graph::tools::read_snippet(self.repo.as_ref(), &a.path, a.start, a.end)
                .map_err(|e| quorum_core::error::chain(&e)),
            Some(commit) => {
                quorum_graph::tools::check_snippet_request(&a.path, a.start, a.end)
                    .map_err(|e| quorum_core::error::chain(&e))?;
                use quorum_scm::TreeSource;
                let text = self
                    .repo
                    .git()?
                    .read_file("local", &commit, &a.path)
                    .await
                    .map_err(|e| quorum_core::error::chain(&e))?
                    .ok_or_else(|| format!("no file {} at {}", a.path, &commit[..12]))?;
                Ok(quorum_graph::tools::number_lines(&text, a.start, a.end))
            }
        }
    }

    async fn search(&self, kind: quorum_search::Kind, a: SearchArgs) -> Result<String, String> {
        self.check_repo(&a.repo)?;
        if self.at(a.git_ref.as_deref()).await?.is_some() {
            return Err(format!(
                "search answers about the indexed HEAD ({}) only; use get_callers or read_snippet with `ref`",
                self.repo
                    .commit
                    .as_deref()
                    .map(|c| &c[..12])
                    .unwrap_or("the working directory")
            ));
        }
        let limit = usize::from(a.limit.unwrap_or(5)).clamp(1, MAX_HITS);
        self.search.query(kind, &a.query, a.path.as_deref(), limit).await
    }

    async fn impact_of(&self, a: ImpactArgs) -> Result<String, String> {
        self.check_repo(&a.change.repo)?;
        let hops = a.hops.unwrap_or(2);
        if !(1..=3).contains(&hops) {
            return Err(format!("hops must be 1-3, not {hops}"));
        }
        let budget = a.budget.unwrap_or(IMPACT_BUDGET).clamp(200, MAX_IMPACT_BUDGET);
        let range = changes::resolve(self.repo.dir(), &a.change).await?;
        let git = self.repo.git()?;
        let change = git
            .diff(&range.base, &range.head)
            .await
            .map_err(|e| quorum_core::error::chain(&e))?;
        let base = self.repo.graph_at(&range.base).await?;
        let report = crate::impact::change_impact(&git, &base, &change, hops)
            .await
            .map_err(|e| quorum_core::error::chain(&e))?;
        Ok(format!(
            "impact of {} ({} files changed)\n{}",
            range.label,
            change.files.len(),
            report.render(budget)
        ))
    }

    async fn review(&self, a: ChangeArgs) -> Result<String, String> {
        self.check_repo(&a.repo)?;
        let Some(reviewer) = &self.reviewer else {
            return Err("review_diff is not available on this server (it runs inside `quorum mcp` only)".into());
        };
        let range = changes::resolve(self.repo.dir(), &a).await?;
        let dir = self.repo.dir().expect("a resolved change has a git directory");
        let review = reviewer.review(dir, &self.repo.name, &range.base, &range.head).await?;
        Ok(crate::review::render(&range.label, &review))
    }
}

pub(crate) fn nonempty(symbol: &str) -> Result<&str, String> {
    let s = symbol.trim();
    if s.is_empty() {
        return Err("`symbol` is empty: give a qualified name such as `pkg.module.func`".into());
    }
    Ok(s)
}

#[tool_handler(router = self.tool_router)]
#[prompt_handler(router = self.prompt_router)]
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
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_prompts().build()).with_instructions(
            format!(
                "Quorum's code graph of `{}` ({} files{}). Pass repo=\"{}\" to every tool. Read-only.{memory}",
                self.repo.name,
                self.repo.file_count(),
                commit.unwrap_or_default(),
                self.repo.name,
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemorySource;

    struct Fixed(quorum_memory::MemoryState, Option<String>);

    #[async_trait::async_trait]
    impl MemorySource for Fixed {
        async fn state(&self) -> Result<quorum_memory::MemoryState, String> {
            Ok(self.0.clone())
        }

        fn repo(&self) -> Option<&str> {
            self.1.as_deref()
        }
    }

    fn two_threads() -> quorum_memory::MemoryState {
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
        state
    }

    #[tokio::test]
    async fn past_reviews_answer_as_a_person_and_refuse_what_they_cannot() {
        let repo = Repo::from_files("acme/shop", None, vec![("shop/a.py".into(), "x = 1\n".into())])
            .await
            .unwrap();
        let bare = QuorumMcp::new(repo);
        let server = bare.clone().with_memory(Arc::new(Fixed(two_threads(), None)));
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

    /// With a search index whose `reviews` collection holds the memory's
    /// threads, that collection ranks them: a thread memory holds but the
    /// collection does not (not embedded yet) does not answer, though its
    /// words match.
    #[tokio::test]
    async fn past_reviews_are_ranked_by_the_reviews_collection_when_there_is_one() {
        let repo = Repo::from_files("acme/shop", None, vec![("shop/a.py".into(), "x = 1\n".into())])
            .await
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let index = quorum_search::testing::hashing_index(dir.path()).await.unwrap();
        let state = two_threads();
        let docs = vec![quorum_search::reviews::ReviewDoc::from(&state.threads[&1])];
        index.index_reviews("acme/shop", &docs, &|_, _| {}).await.unwrap();
        let server = QuorumMcp::new(repo)
            .with_memory(Arc::new(Fixed(state, Some("acme/shop".into()))))
            .with_search(crate::search::Search::start(index, "acme/shop", "c0", vec![]));
        let answer = server
            .past(PastReviewsArgs {
                repo: "acme/shop".into(),
                query: "cents".into(),
                file: None,
                as_person: None,
                group: vec![],
                panel: None,
                limit: None,
            })
            .await
            .unwrap();
        assert!(answer.contains("never float"), "{answer}");
        assert!(!answer.contains("bob: cents"), "{answer}");
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
        let args = |repo: &str, git_ref: Option<&str>| SymbolArgs {
            repo: repo.into(),
            symbol: "rate".into(),
            hops: Some(1),
            git_ref: git_ref.map(str::to_string),
        };
        let answer = server.callers(args("acme/shop", None)).await.unwrap();
        assert!(answer.contains("shop.tax.total"), "the one caller: {answer}");
        let other = result(server.callers(args("acme/other", None)).await);
        assert_eq!(other.is_error, Some(true));
        let text = serde_json::to_string(&other.content).unwrap();
        assert!(text.contains("answers about `acme/shop` only"), "{text}");
        // A ref needs history: this repository is files only.
        let at = server.callers(args("acme/shop", Some("main"))).await.unwrap_err();
        assert!(at.contains("not a git repository"), "{at}");
        assert!(nonempty("  ").unwrap_err().contains("`symbol` is empty"));
    }
}

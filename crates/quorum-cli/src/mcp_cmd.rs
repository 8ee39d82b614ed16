//! `quorum mcp --repo DIR`: serves a local checkout over MCP, on stdio (an
//! editor starts it) or on streamable HTTP (`--http ADDR`, mounted at
//! `/mcp`). The graph is built before the first answer; the hybrid index is
//! brought up to date in the background (search tools say how far it is);
//! `review_diff` runs the embedded fleet `quorum review` runs.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use quorum_core::Review;
use quorum_store::MemoryStore;

#[derive(Debug, Clone, clap::Args)]
pub struct McpArgs {
    /// A local checkout (a git repository is read at HEAD; a plain directory as it is).
    #[arg(long)]
    pub repo: PathBuf,
    /// The name tools take as `repo` (default: the directory's name).
    #[arg(long)]
    pub name: Option<String>,
    /// Serve streamable HTTP at `http://ADDR/mcp` instead of stdio.
    #[arg(long)]
    pub http: Option<SocketAddr>,
    /// The bearer token HTTP clients must send (required off loopback).
    #[arg(long, env = "QUORUM_MCP_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// `Host` values HTTP accepts besides loopback (a service name, a public host).
    #[arg(long = "allowed-host", env = "QUORUM_MCP_ALLOWED_HOSTS", value_delimiter = ',')]
    pub allowed_hosts: Vec<String>,
    /// Where graphs are kept between starts (shared with `quorum index`).
    #[arg(long, env = "QUORUM_GRAPH_CACHE", default_value_os_t = crate::graph_cmd::default_cache())]
    pub graph_cache: PathBuf,
    /// Answer `past_reviews` from this repository's review memory
    /// (`owner/name`, as `quorum memory ingest --repo` stored it).
    #[arg(long)]
    pub memory: Option<String>,
    /// Where that memory is: the fleet's Redis…
    #[arg(long, env = "REDIS_URL")]
    pub redis_url: Option<String>,
    #[arg(long, env = "QUORUM_REDIS_PREFIX", default_value = "quorum:")]
    pub redis_prefix: String,
    /// …or the state directory of `quorum memory`.
    #[arg(long, env = "QUORUM_MEMORY_DIR")]
    pub memory_dir: Option<PathBuf>,
    #[command(flatten)]
    pub search: quorum_search::SearchArgs,
    #[command(flatten)]
    pub llm: quorum_llm::LlmArgs,
}

/// `review_diff` through an embedded fleet, as `quorum review` does.
struct FleetReviewer {
    llm: Option<quorum_llm::LlmConfig>,
}

#[async_trait::async_trait]
impl quorum_mcp::Reviewer for FleetReviewer {
    async fn review(&self, dir: &Path, _name: &str, base: &str, head: &str) -> Result<Review, String> {
        let store: Arc<dyn quorum_store::StateStore> = Arc::new(MemoryStore::new());
        // The fleet names local repositories `local/<dir>` (a valid SCM name).
        let name = crate::review::local_name(dir);
        crate::review::review_range(dir, &name, base, head, "Local change".into(), store, self.llm.clone())
            .await
            .map_err(|e| format!("the review failed: {e:#}"))
    }
}

/// A server over the checkout at `dir`: its graph now, its search index
/// in the background (when a model is there), `review_diff` through an
/// embedded fleet, `past_reviews` from `memory` when given. Returns the
/// server and the name tools take as `repo`.
pub async fn server(
    dir: &Path,
    name: Option<&str>,
    graph_cache: &Path,
    search: &quorum_search::SearchArgs,
    llm: Option<quorum_llm::LlmConfig>,
    memory: Option<crate::memory_cmd::StateArgs>,
) -> anyhow::Result<(quorum_mcp::QuorumMcp, String)> {
    let name = match name {
        Some(n) => n.to_string(),
        None => dir
            .canonicalize()
            .with_context(|| format!("{}", dir.display()))?
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "repo".into()),
    };
    // The graph `quorum index` keeps per directory: only changed files are
    // parsed again, and the new graph is kept for the next start.
    let cached = graph_cache.join(crate::graph_cmd::slug(dir)).join("latest.qgr");
    let repo = quorum_mcp::Repo::load_reusing(&name, dir, crate::graph_cmd::load(&cached)).await?;
    if let Err(e) = crate::graph_cmd::save(&cached, &repo.graph) {
        tracing::warn!(path = %cached.display(), error = %e, "the graph cache could not be written");
    }
    let commit = repo.commit.clone().unwrap_or_else(|| "worktree".into());
    let search = match quorum_search::open_index(search).await {
        Ok(Some(index)) => {
            let abs = std::fs::canonicalize(dir)?;
            // The key `quorum search` uses, so both share one index.
            let key = format!("local{}", abs.display());
            let sources = quorum_search::source_files(&repo.graph, repo.files());
            quorum_mcp::Search::start(index, &key, &commit, sources)
        }
        Ok(None) => quorum_mcp::Search::off(
            "no embedding model is installed (`make deps`) or configured (QUORUM_EMBED_URL), or --search off",
        ),
        Err(e) => quorum_mcp::Search::off(format!("the index could not be opened: {e}")),
    };
    let mut server = quorum_mcp::QuorumMcp::new(repo)
        .with_search(search)
        .with_reviewer(Arc::new(FleetReviewer { llm }));
    if let Some(state) = memory {
        server = server.with_memory(crate::memory_cmd::memory_source(&state).await?);
    }
    Ok((server, name))
}

pub async fn run(args: McpArgs) -> anyhow::Result<()> {
    if let Some(addr) = args.http {
        anyhow::ensure!(
            addr.ip().is_loopback() || args.token.is_some(),
            "--http {addr} is reachable from other machines: set QUORUM_MCP_TOKEN (or --token) so clients must authenticate"
        );
    }
    let memory = args.memory.clone().map(|repo| crate::memory_cmd::StateArgs {
        repo,
        redis_url: args.redis_url.clone(),
        redis_prefix: args.redis_prefix.clone(),
        state_dir: args.memory_dir.clone(),
    });
    let (server, name) = server(
        &args.repo,
        args.name.as_deref(),
        &args.graph_cache,
        &args.search,
        args.llm.config()?,
        memory,
    )
    .await?;
    let files = server.file_count();
    match args.http {
        None => {
            eprintln!("quorum mcp: serving `{name}` ({files} files) on stdio");
            quorum_mcp::serve_stdio(server).await?;
        }
        Some(addr) => {
            // SIGINT or SIGTERM ends every session and then the server.
            let shutdown = quorum_runtime::shutdown::on_signal();
            let opts = quorum_mcp::HttpOptions {
                token: args.token.clone(),
                allowed_hosts: args.allowed_hosts.clone(),
            };
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("binding {addr}"))?;
            // The bound address on a line of its own, so a test or a script
            // that asked for port 0 can read it.
            eprintln!(
                "quorum mcp: serving `{name}` ({files} files) at http://{}/mcp",
                listener.local_addr()?
            );
            quorum_mcp::serve_http(server, listener, opts, shutdown).await?;
        }
    }
    Ok(())
}

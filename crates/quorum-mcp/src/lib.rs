//! Quorum over MCP (F-UI-2): the code graph, hybrid search, impact
//! reports, reviews and the team's past reviews of a local checkout, for any
//! editor's agent (Claude Code, Cursor, VS Code, the MCP inspector), on the
//! official Rust SDK (`rmcp`), over stdio or streamable HTTP.
//!
//! Every tool answers about the one repository the server was started on
//! and only reads it: the one write is the snapshot commit object that
//! makes uncommitted work reviewable (`quorum_scm::snapshot`: no ref, index
//! or file changes). Every result is bounded; every refusal (an unknown
//! repository or symbol, a path outside the repository, a bad range or
//! glob) is a *tool* error with a message the agent can act on.

mod changes;
mod http;
mod impact;
mod prompts;
mod repo;
mod review;
mod search;
mod server;

pub use changes::{ChangeArgs, Range};
pub use http::{HttpOptions, router as http_router, serve_http};
pub use impact::change_impact;
pub use repo::{LoadError, Repo};
pub use review::Reviewer;
pub use search::Search;
pub use server::QuorumMcp;

use rmcp::ServiceExt;

/// Most bytes of one tool answer; a longer one is cut and says so.
pub const MAX_ANSWER_BYTES: usize = 32 * 1024;

/// Where the server reads review memory (the CLI's Redis or state file).
#[async_trait::async_trait]
pub trait MemorySource: Send + Sync {
    async fn state(&self) -> Result<quorum_memory::MemoryState, String>;

    /// The repository (`owner/name`) the memory is of: the key its threads
    /// have in the search index's `reviews` collection, when embedded there.
    fn repo(&self) -> Option<&str> {
        None
    }
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

/// Why the server stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("the MCP session could not start: {0}")]
    Start(String),
    #[error("the MCP session ended with an error: {0}")]
    Session(String),
    #[error("the MCP HTTP server failed: {0}")]
    Http(#[from] std::io::Error),
}

/// Serves one session over a byte stream pair (stdin/stdout, a socket, an
/// in-process pipe) until the client disconnects.
pub async fn serve_io<R, W>(server: QuorumMcp, read: R, write: W) -> Result<(), ServeError>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let running = server
        .serve((read, write))
        .await
        .map_err(|e| ServeError::Start(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| ServeError::Session(e.to_string()))?;
    Ok(())
}

/// Serves on stdin/stdout until the client disconnects. Logs must go to
/// stderr: stdout is the protocol.
pub async fn serve_stdio(server: QuorumMcp) -> Result<(), ServeError> {
    serve_io(server, tokio::io::stdin(), tokio::io::stdout()).await
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
}

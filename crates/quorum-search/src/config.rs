//! How a process finds its hybrid index: which engine (a Qdrant server
//! when `QDRANT_URL` is set, else Qdrant in-process under a directory)
//! and which embedding model (an endpoint when `QUORUM_EMBED_URL` is set,
//! else all-MiniLM-L6-v2 in-process, installed by `make deps`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::edge::EdgeStore;
use crate::embed::{Embedder, OnnxEmbedder, OnnxFiles, OpenAiEmbedConfig, OpenAiEmbedder};
use crate::server::ServerStore;
use crate::store::VectorStore;
use crate::{HybridIndex, SearchError};

/// Whether a process uses the hybrid index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SearchMode {
    /// On when an embedding model is installed or configured.
    Auto,
    /// On; a missing model is an error.
    On,
    Off,
}

#[derive(Debug, Clone, clap::Args)]
pub struct SearchArgs {
    /// Hybrid search (search_code / search_docs, `quorum search`).
    #[arg(long = "search", env = "QUORUM_SEARCH", value_enum, default_value = "auto")]
    pub mode: SearchMode,
    /// A Qdrant server's gRPC address (e.g. http://qdrant:6334); unset:
    /// Qdrant in-process under --index-dir.
    #[arg(long, env = "QDRANT_URL")]
    pub qdrant_url: Option<String>,
    #[arg(long, env = "QDRANT_API_KEY", hide_env_values = true)]
    pub qdrant_api_key: Option<String>,
    /// Collection name prefix on a server.
    #[arg(long, env = "QUORUM_QDRANT_PREFIX", default_value = "quorum")]
    pub qdrant_prefix: String,
    /// Where the in-process index lives (default ~/.cache/quorum/index).
    #[arg(long, env = "QUORUM_INDEX_DIR")]
    pub index_dir: Option<PathBuf>,
    /// An OpenAI-compatible embeddings endpoint (…/v1); unset: the
    /// in-process model.
    #[arg(long, env = "QUORUM_EMBED_URL")]
    pub embed_url: Option<String>,
    #[arg(long, env = "QUORUM_EMBED_MODEL", default_value = "text-embedding-3-small")]
    pub embed_model: String,
    /// The endpoint model's vector size.
    #[arg(long, env = "QUORUM_EMBED_DIM", default_value_t = 1536)]
    pub embed_dim: usize,
    /// Send `dimensions` with each request (models that can shorten
    /// their vectors).
    #[arg(long, env = "QUORUM_EMBED_SEND_DIM", default_value_t = false)]
    pub embed_send_dim: bool,
    #[arg(long, env = "QUORUM_EMBED_API_KEY", hide_env_values = true)]
    pub embed_api_key: Option<String>,
    #[arg(long, env = "QUORUM_EMBED_BATCH", default_value_t = 64)]
    pub embed_batch: usize,
    /// The in-process model's directory (the model, tokenizer.json,
    /// libonnxruntime.so; default ~/.cache/quorum/models/all-MiniLM-L6-v2).
    #[arg(long, env = "QUORUM_EMBED_MODEL_DIR")]
    pub embed_model_dir: Option<PathBuf>,
    /// The model file in that directory: the dynamically quantized model
    /// by default, `model.onnx` for the float32-computing original. Part of
    /// the index's model id.
    #[arg(long, env = "QUORUM_EMBED_MODEL_FILE", default_value = crate::embed::MODEL_FILE)]
    pub embed_model_file: String,
    /// Threads the in-process model uses (one session of one thread each).
    #[arg(long, env = "QUORUM_EMBED_THREADS", default_value_t = 2)]
    pub embed_threads: usize,
    /// Tokens of each chunk the in-process model reads (the rest is cut;
    /// the sparse vector still covers the whole chunk). Part of the index's
    /// model id: changing it rebuilds the index.
    #[arg(long, env = "QUORUM_EMBED_MAX_TOKENS", default_value_t = crate::embed::MAX_TOKENS)]
    pub embed_max_tokens: usize,
}

fn cache_dir() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp"))
        .join(".cache/quorum")
}

impl SearchArgs {
    /// Defaults as if no flag or variable were given.
    pub fn defaults() -> Self {
        <Self as clap::FromArgMatches>::from_arg_matches(
            &<Self as clap::Args>::augment_args(clap::Command::new("x")).get_matches_from(["x"]),
        )
        .expect("defaults parse")
    }

    pub fn model_dir(&self) -> PathBuf {
        self.embed_model_dir
            .clone()
            .unwrap_or_else(|| cache_dir().join("models/all-MiniLM-L6-v2"))
    }

    pub fn index_dir(&self) -> PathBuf {
        self.index_dir.clone().unwrap_or_else(|| cache_dir().join("index"))
    }

    pub fn embedder(&self) -> Result<Arc<dyn Embedder>, SearchError> {
        match &self.embed_url {
            Some(url) => Ok(Arc::new(OpenAiEmbedder::new(&OpenAiEmbedConfig {
                base_url: url.clone(),
                api_key: self.embed_api_key.clone(),
                model: self.embed_model.clone(),
                dim: self.embed_dim,
                send_dimensions: self.embed_send_dim,
                batch: self.embed_batch,
                timeout: Duration::from_secs(120),
            })?)),
            None => Ok(Arc::new(OnnxEmbedder::load_with_budget(
                &OnnxFiles::in_dir_with_model(&self.model_dir(), &self.embed_model_file),
                self.embed_threads,
                self.embed_max_tokens,
            )?)),
        }
    }

    pub fn store(&self) -> Result<Arc<dyn VectorStore>, SearchError> {
        match &self.qdrant_url {
            Some(url) => Ok(Arc::new(ServerStore::connect(
                url,
                self.qdrant_api_key.clone(),
                &self.qdrant_prefix,
            )?)),
            None => Ok(Arc::new(EdgeStore::new(&self.index_dir())?)),
        }
    }
}

/// The index these arguments describe, or `None` when search is off (or
/// `auto` and no model is installed: the reason is logged).
pub async fn open_index(args: &SearchArgs) -> Result<Option<Arc<HybridIndex>>, SearchError> {
    if args.mode == SearchMode::Off {
        return Ok(None);
    }
    let embedder = match args.embedder() {
        Ok(e) => e,
        Err(e) if args.mode == SearchMode::Auto => {
            tracing::warn!(error = %e, "hybrid search off");
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let index = HybridIndex::open(args.store()?, embedder).await?;
    tracing::info!(engine = index.engine(), model = index.model(), "hybrid search on");
    Ok(Some(Arc::new(index)))
}

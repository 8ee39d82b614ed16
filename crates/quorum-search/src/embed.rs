//! Dense embeddings: a real model in-process (all-MiniLM-L6-v2 as int8
//! ONNX, run by ONNX Runtime through `ort`) by default, an
//! OpenAI-compatible `/v1/embeddings` endpoint in production, and a
//! hashing embedder that only tests use.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use async_trait::async_trait;

use crate::SearchError;

/// Turns texts into unit vectors of a fixed dimension.
#[async_trait]
pub trait Embedder: Send + Sync {
    /// Identifies the model: an index built with another id is rebuilt.
    fn id(&self) -> &str;
    fn dim(&self) -> usize;
    /// One vector per text, in order.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, SearchError>;
}

fn normalize(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

/// Hashed bag of code tokens: deterministic and instant, with no notion of
/// meaning. For unit tests of the plumbing only; never a configured
/// default.
pub struct HashingEmbedder {
    dim: usize,
    id: String,
}

impl HashingEmbedder {
    pub fn new(dim: usize) -> Self {
        HashingEmbedder {
            dim,
            id: format!("test-hashing-{dim}"),
        }
    }
}

#[async_trait]
impl Embedder for HashingEmbedder {
    fn id(&self) -> &str {
        &self.id
    }
    fn dim(&self) -> usize {
        self.dim
    }
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, SearchError> {
        use sha2::{Digest, Sha256};
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; self.dim];
                for w in t.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 1) {
                    let h = Sha256::digest(w.to_lowercase().as_bytes());
                    let i = u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize % self.dim;
                    v[i] += if h[4] & 1 == 0 { 1.0 } else { -1.0 };
                }
                normalize(&mut v);
                v
            })
            .collect())
    }
}

/// Where the in-process model's files are: the model, `tokenizer.json`,
/// and ONNX Runtime's shared library.
#[derive(Debug, Clone)]
pub struct OnnxFiles {
    pub model: PathBuf,
    pub tokenizer: PathBuf,
    pub runtime: PathBuf,
}

/// The model file loaded by default: all-MiniLM-L6-v2 quantized
/// dynamically (int8 weights per channel, activations quantized per run),
/// so ONNX Runtime multiplies in int8. `make deps` writes it from
/// `model.onnx`, which stores int8 weights but computes in float32
/// (deploy/models/quantize.py says why): 2.0× faster on 2 cores than that
/// model in the same session layout, with what ships within 0.01 MRR@10
/// (docs/search.md, "Int8 that computes in int8").
pub const MODEL_FILE: &str = "model-dynint8.onnx";

impl OnnxFiles {
    /// The layout `make deps` installs under `dir` (by default
    /// `~/.cache/quorum/models/all-MiniLM-L6-v2`), with [`MODEL_FILE`].
    pub fn in_dir(dir: &Path) -> Self {
        Self::in_dir_with_model(dir, MODEL_FILE)
    }

    /// The same layout with another model file of that directory
    /// (`model.onnx`: the float32-computing original).
    pub fn in_dir_with_model(dir: &Path, model_file: &str) -> Self {
        OnnxFiles {
            model: dir.join(model_file),
            tokenizer: dir.join("tokenizer.json"),
            runtime: dir.join("libonnxruntime.so"),
        }
    }

    /// What is missing, said so a user knows what to run.
    pub fn check(&self) -> Result<(), SearchError> {
        for p in [&self.model, &self.tokenizer, &self.runtime] {
            if !p.is_file() {
                return Err(SearchError::Config(format!(
                    "embedding model file {} is missing (run `make deps`, or set QUORUM_EMBED_URL for an embeddings endpoint)",
                    p.display()
                )));
            }
        }
        Ok(())
    }

    /// The model's name in the index's model id: `int8` for `model.onnx`
    /// (the id indexes were built with before the dynamic model), else the
    /// file's stem after `model-`.
    fn variant(&self) -> String {
        let stem = self.model.file_stem().and_then(|s| s.to_str()).unwrap_or("model");
        match stem {
            "model" => "int8".into(),
            other => other.strip_prefix("model-").unwrap_or(other).to_string(),
        }
    }
}

/// Tokens per text the model sees by default; longer chunks are truncated
/// (the sparse vector still covers all of them). 192 rather than 256: on
/// Django it embeds 1.35× faster with every retrieval figure within 0.01;
/// 128 is 1.95× faster but loses 0.011 on Django's docstring queries and
/// fails the storefront gate (docs/search.md, "A token budget per chunk").
pub const MAX_TOKENS: usize = 192;
/// The budget the model id without a suffix stands for (the default until
/// 2026-12-07): an index built then is rebuilt, not mixed, at another.
const UNSUFFIXED_TOKENS: usize = 256;

/// ONNX Runtime allows one environment per process.
static ORT_ENV: OnceLock<Result<ort::environment::Environment, String>> = OnceLock::new();

/// all-MiniLM-L6-v2 (384 dimensions, mean pooling, normalised) run
/// in-process on the CPU.
///
/// One session per thread, each on one thread, each text run alone: on 2
/// cores that is faster than one session on two threads with batches of 16
/// (ONNX Runtime's threads synchronise at every operator of a model this
/// small), no padding is computed, and a text's vector does not depend on
/// the texts it is embedded with — with dynamic quantization it would, as
/// activations are scaled per run (docs/search.md).
pub struct OnnxEmbedder {
    inner: Arc<OnnxInner>,
}

struct OnnxInner {
    sessions: Vec<Mutex<ort::session::Session>>,
    tokenizer: tokenizers::Tokenizer,
    id: String,
    dim: usize,
    token_types: bool,
}

impl OnnxEmbedder {
    pub const DIM: usize = 384;

    pub fn load(files: &OnnxFiles, threads: usize) -> Result<Self, SearchError> {
        Self::load_with_budget(files, threads, MAX_TOKENS)
    }

    /// [`Self::load`] reading at most `max_tokens` tokens of each text. The
    /// model id names the model file and a budget other than the default,
    /// so an index built with one is rebuilt, not mixed, with another.
    pub fn load_with_budget(files: &OnnxFiles, threads: usize, max_tokens: usize) -> Result<Self, SearchError> {
        if !(16..=512).contains(&max_tokens) {
            return Err(SearchError::Config(format!(
                "embedding token budget {max_tokens}: must be 16..=512 (the model reads at most 512)"
            )));
        }
        files.check()?;
        let err = |what: &str, e: &dyn std::fmt::Display| SearchError::Config(format!("{what}: {e}"));
        let env = ORT_ENV.get_or_init(|| {
            ort::init_from(&files.runtime)
                .map_err(|e| quorum_core::error::chain(&e))?
                .with_name("quorum")
                .build()
                .map_err(|e| quorum_core::error::chain(&e))
        });
        let env = env
            .as_ref()
            .map_err(|e| err(&format!("loading ONNX Runtime from {}", files.runtime.display()), e))?;
        let mut sessions = Vec::new();
        for _ in 0..threads.max(1) {
            let session = ort::session::Session::builder(env)
                .map_err(|e| err("ONNX session", &e))?
                .with_intra_threads(1)
                .map_err(|e| err("ONNX session threads", &e))?
                .commit_from_file(&files.model)
                .map_err(|e| err(&format!("loading {}", files.model.display()), &e))?;
            sessions.push(Mutex::new(session));
        }
        let token_types = sessions[0]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .inputs()
            .iter()
            .any(|i| i.name() == "token_type_ids");
        let mut tokenizer = tokenizers::Tokenizer::from_file(&files.tokenizer)
            .map_err(|e| err(&format!("loading {}", files.tokenizer.display()), &e))?;
        tokenizer
            .with_truncation(Some(tokenizers::TruncationParams {
                max_length: max_tokens,
                ..Default::default()
            }))
            .map_err(|e| err("tokenizer truncation", &e))?;
        // tokenizer.json pads to 128 tokens; a text run alone needs none,
        // and padding would only cost compute.
        tokenizer.with_padding(None);
        let budget = if max_tokens == UNSUFFIXED_TOKENS {
            String::new()
        } else {
            format!("-{max_tokens}tok")
        };
        Ok(OnnxEmbedder {
            inner: Arc::new(OnnxInner {
                sessions,
                tokenizer,
                id: format!("all-MiniLM-L6-v2-{}-onnx{budget}", files.variant()),
                dim: Self::DIM,
                token_types,
            }),
        })
    }
}

impl OnnxInner {
    /// One text through session `s`: the mean of its token vectors,
    /// normalised.
    fn embed_one(&self, s: usize, text: &str) -> Result<Vec<f32>, SearchError> {
        let run_err = |e: &dyn std::fmt::Display| SearchError::Embed(format!("in-process model: {e}"));
        let enc = self.tokenizer.encode(text, true).map_err(|e| run_err(&e))?;
        let cols = enc.len();
        let as_i64 = |v: &[u32]| -> Vec<i64> { v.iter().map(|&x| x as i64).collect() };
        let shape = [1, cols];
        let tensor =
            |v: Vec<i64>| ort::value::Tensor::from_array((shape, v.into_boxed_slice())).map_err(|e| run_err(&e));
        let mut inputs: Vec<(String, ort::value::DynValue)> = vec![
            ("input_ids".into(), tensor(as_i64(enc.get_ids()))?.into_dyn()),
            (
                "attention_mask".into(),
                tensor(as_i64(enc.get_attention_mask()))?.into_dyn(),
            ),
        ];
        if self.token_types {
            inputs.push(("token_type_ids".into(), tensor(as_i64(enc.get_type_ids()))?.into_dyn()));
        }
        let mut session = self.sessions[s].lock().unwrap_or_else(|p| p.into_inner());
        let out = session.run(inputs).map_err(|e| run_err(&e))?;
        let (shape, data) = out[0].try_extract_tensor::<f32>().map_err(|e| run_err(&e))?;
        let hidden = *shape.last().unwrap_or(&0) as usize;
        if hidden != self.dim || shape.len() != 3 || data.len() != cols * hidden {
            return Err(SearchError::Embed(format!(
                "in-process model returned shape {shape:?}, expected [1, {cols}, {}]",
                self.dim
            )));
        }
        // The mean of the tokens the attention mask keeps (all of them, as
        // nothing is padded; the mask says so rather than trusting it).
        let mut v = vec![0f32; hidden];
        let mut n = 0f32;
        for (token, &keep) in data.chunks_exact(hidden).zip(enc.get_attention_mask()) {
            if keep != 0 {
                v.iter_mut().zip(token).for_each(|(a, b)| *a += b);
                n += 1.0;
            }
        }
        if n > 0.0 {
            v.iter_mut().for_each(|x| *x /= n);
        }
        normalize(&mut v);
        Ok(v)
    }
}

#[async_trait]
impl Embedder for OnnxEmbedder {
    fn id(&self) -> &str {
        &self.inner.id
    }
    fn dim(&self) -> usize {
        self.inner.dim
    }
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, SearchError> {
        // Texts dealt longest first, in turn, to one worker per session, so
        // the workers finish close together. Answers go back in order.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(texts[i].len()));
        let workers = self.inner.sessions.len().min(texts.len());
        let mut tasks = Vec::with_capacity(workers);
        for w in 0..workers {
            let share: Vec<(usize, String)> = order
                .iter()
                .skip(w)
                .step_by(workers)
                .map(|&i| (i, texts[i].clone()))
                .collect();
            let inner = self.inner.clone();
            // Inference is CPU-bound: off the async workers.
            tasks.push(tokio::task::spawn_blocking(move || {
                share
                    .into_iter()
                    .map(|(i, text)| inner.embed_one(w, &text).map(|v| (i, v)))
                    .collect::<Result<Vec<_>, SearchError>>()
            }));
        }
        let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for task in tasks {
            let done = task
                .await
                .map_err(|e| SearchError::Embed(format!("in-process model task: {e}")))??;
            for (i, v) in done {
                out[i] = Some(v);
            }
        }
        out.into_iter()
            .map(|v| v.ok_or_else(|| SearchError::Embed("in-process model returned too few vectors".into())))
            .collect()
    }
}

/// An OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, vLLM,
/// llama-server `--embeddings`, TEI), with the fleet's retry policy on
/// 429 and 5xx.
pub struct OpenAiEmbedder {
    client: async_openai::Client<async_openai::config::OpenAIConfig>,
    model: String,
    dim: usize,
    /// Whether to send `dimensions` (only models that can shorten their
    /// vectors accept it).
    send_dimensions: bool,
    batch: usize,
    id: String,
}

/// How to reach an embeddings endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiEmbedConfig {
    pub base_url: String,
    pub api_key: Option<String>,
    pub model: String,
    pub dim: usize,
    pub send_dimensions: bool,
    pub batch: usize,
    pub timeout: Duration,
}

impl OpenAiEmbedder {
    pub fn new(cfg: &OpenAiEmbedConfig) -> Result<Self, SearchError> {
        Self::with_policy(cfg, quorum_openai::RetryPolicy::default())
    }

    pub fn with_policy(cfg: &OpenAiEmbedConfig, policy: quorum_openai::RetryPolicy) -> Result<Self, SearchError> {
        if cfg.model.trim().is_empty() || cfg.dim == 0 || cfg.batch == 0 {
            return Err(SearchError::Config(
                "embeddings endpoint: model must be named, dimension and batch size must be > 0".into(),
            ));
        }
        let http = reqwest13::Client::builder()
            .timeout(cfg.timeout)
            .build()
            .map_err(|e| SearchError::Config(format!("embeddings HTTP client: {e}")))?;
        let oc = async_openai::config::OpenAIConfig::new()
            .with_api_base(cfg.base_url.trim_end_matches('/'))
            .with_api_key(cfg.api_key.clone().unwrap_or_default());
        let client = async_openai::Client::with_config(oc).with_http_service(quorum_openai::RetryingHttp::new(
            http,
            policy,
            quorum_openai::RetryLog::default(),
        ));
        Ok(OpenAiEmbedder {
            client,
            model: cfg.model.clone(),
            dim: cfg.dim,
            send_dimensions: cfg.send_dimensions,
            batch: cfg.batch,
            id: format!("openai:{}:{}", cfg.model, cfg.dim),
        })
    }
}

#[async_trait]
impl Embedder for OpenAiEmbedder {
    fn id(&self) -> &str {
        &self.id
    }
    fn dim(&self) -> usize {
        self.dim
    }
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, SearchError> {
        use async_openai::types::embeddings::{CreateEmbeddingRequestArgs, EmbeddingInput};
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.batch) {
            // An empty input is refused by the API; a space embeds as "nothing".
            let input: Vec<String> = batch
                .iter()
                .map(|t| {
                    if t.trim().is_empty() {
                        " ".to_string()
                    } else {
                        t.clone()
                    }
                })
                .collect();
            let mut req = CreateEmbeddingRequestArgs::default();
            req.model(self.model.clone()).input(EmbeddingInput::StringArray(input));
            if self.send_dimensions {
                req.dimensions(self.dim as u32);
            }
            let req = req.build().map_err(|e| SearchError::Embed(e.to_string()))?;
            let resp = self
                .client
                .embeddings()
                .create(req)
                .await
                .map_err(|e| SearchError::Embed(format!("embeddings endpoint: {e}")))?;
            let mut data = resp.data;
            if data.len() != batch.len() {
                return Err(SearchError::Embed(format!(
                    "embeddings endpoint returned {} vectors for {} inputs",
                    data.len(),
                    batch.len()
                )));
            }
            data.sort_by_key(|e| e.index);
            for e in data {
                if e.embedding.len() != self.dim {
                    return Err(SearchError::Embed(format!(
                        "embeddings endpoint returned a {}-dimensional vector; the index is configured for {}",
                        e.embedding.len(),
                        self.dim
                    )));
                }
                let mut v = e.embedding;
                normalize(&mut v);
                out.push(v);
            }
        }
        Ok(out)
    }
}

//! Shared by the search tests: the storefront as indexed files, the real
//! in-process model, and an embedder that counts what it embeds.

#![allow(dead_code)]

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};

use async_trait::async_trait;
use quorum_search::embed::{Embedder, OnnxEmbedder, OnnxFiles};
use quorum_search::{Hit, SearchError, SourceFile};

pub const REPO: &str = "acme/storefront";

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            if !p.ends_with("cases") && !p.file_name().unwrap().to_string_lossy().starts_with('.') {
                walk(root, &p, out);
            }
        } else if let Ok(text) = std::fs::read_to_string(&p) {
            out.push((p.strip_prefix(root).unwrap().to_string_lossy().into_owned(), text));
        }
    }
}

/// The storefront fixture's files with the code graph's symbols.
pub fn storefront_files() -> Vec<SourceFile> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../storefront-fixture");
    let mut tree = vec![];
    walk(&root, &root, &mut tree);
    tree.sort();
    let (graph, _) = quorum_graph::build(tree.clone(), None);
    quorum_search::source_files(&graph, tree)
}

static MODEL: LazyLock<Arc<OnnxEmbedder>> = LazyLock::new(|| {
    let dir = quorum_search::SearchArgs::defaults().model_dir();
    Arc::new(OnnxEmbedder::load(&OnnxFiles::in_dir(&dir), 2).expect("the embedding model is installed (make deps)"))
});

pub fn real_model() -> Arc<dyn Embedder> {
    MODEL.clone()
}

/// Counts the texts it embeds.
pub struct Counting {
    inner: Arc<dyn Embedder>,
    n: AtomicUsize,
}

impl Counting {
    pub fn new(inner: Arc<dyn Embedder>) -> Self {
        Counting {
            inner,
            n: AtomicUsize::new(0),
        }
    }
    pub fn count(&self) -> usize {
        self.n.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl Embedder for Counting {
    fn id(&self) -> &str {
        self.inner.id()
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, SearchError> {
        self.n.fetch_add(texts.len(), Ordering::SeqCst);
        self.inner.embed(texts).await
    }
}

/// Hits without their text, for failure messages.
pub fn brief(hits: &[Hit]) -> Vec<String> {
    hits.iter()
        .map(|h| {
            format!(
                "{}:{}-{} {:?} fused={:.3} dense={:?} sparse={:?}",
                h.path, h.start_line, h.end_line, h.symbol, h.fused, h.dense, h.sparse
            )
        })
        .collect()
}

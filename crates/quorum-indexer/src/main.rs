//! The `indexer` binary.

use std::sync::Arc;

use clap::Parser;

#[derive(Parser)]
#[command(about = "Consumes repo.index.requested and builds code graphs")]
struct Args {
    #[command(flatten)]
    common: quorum_runtime::CommonArgs,
    /// Repositories the indexer may read, `owner/name=/path,…`.
    #[arg(long, env = "QUORUM_LOCAL_REPOS", default_value = "")]
    local_repos: String,
    /// Clone repositories that are not local from `<URL>/<owner>/<name>.git`
    /// (e.g. `https://github.com`); unset: local repositories only.
    #[arg(long, env = "QUORUM_CLONE_BASE_URL")]
    clone_base_url: Option<String>,
    /// Where clones are kept.
    #[arg(long, env = "QUORUM_CLONE_DIR", default_value = "/tmp/quorum-clones")]
    clone_dir: std::path::PathBuf,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    quorum_runtime::telemetry::init_logging(!args.common.text_logs);
    let ctx = quorum_runtime::ServiceContext::from_args(&args.common)?;
    let store = quorum_store::connect(args.common.redis_url.as_deref(), &args.common.redis_prefix).await?;
    let trees = Arc::new(quorum_scm::Trees::configure(
        &args.local_repos,
        args.clone_base_url.as_deref(),
        &args.clone_dir,
    )?);
    let index = Arc::new(quorum_context::GraphIndex::new(store.clone(), trees));
    quorum_indexer::start(
        args.common.http_addr,
        &ctx,
        store,
        index,
        quorum_runtime::shutdown::on_signal(),
    )
    .await?
    .wait()
    .await?;
    Ok(())
}

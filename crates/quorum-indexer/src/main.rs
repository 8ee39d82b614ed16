//! The `indexer` binary.

use std::sync::Arc;

use clap::Parser;

#[derive(Parser)]
#[command(about = "Consumes repo.index.requested and builds code graphs")]
struct Args {
    #[command(flatten)]
    common: quorum_runtime::CommonArgs,
    #[command(flatten)]
    repos: quorum_scm::TreeArgs,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    quorum_runtime::telemetry::init_logging(!args.common.text_logs);
    let ctx = quorum_runtime::ServiceContext::from_args(&args.common)?;
    let store = quorum_store::connect(args.common.redis_url.as_deref(), &args.common.redis_prefix).await?;
    let trees = Arc::new(args.repos.trees()?);
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

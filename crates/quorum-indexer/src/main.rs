//! The `indexer` binary.

use std::sync::Arc;

use clap::Parser;

#[derive(Parser)]
#[command(about = "Consumes repo.index.requested and builds code graphs and the hybrid search index")]
struct Args {
    #[command(flatten)]
    common: quorum_runtime::CommonArgs,
    #[command(flatten)]
    repos: quorum_scm::TreeArgs,
    #[command(flatten)]
    search: quorum_search::SearchArgs,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    quorum_runtime::serve(&args.common, |boot| async move {
        let trees = Arc::new(args.repos.trees()?);
        let index = Arc::new(quorum_context::GraphIndex::new(boot.store.clone(), trees));
        let search = quorum_search::open_index(&args.search).await?;
        anyhow::Ok(
            quorum_indexer::start(
                args.common.http_addr,
                &boot.ctx,
                boot.store,
                index,
                search,
                boot.shutdown,
            )
            .await?,
        )
    })
    .await
}

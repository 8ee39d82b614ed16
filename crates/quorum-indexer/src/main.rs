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
    /// Pull requests of review history read per default-branch index
    /// request (0: do not refresh review memory here).
    #[arg(long, env = "QUORUM_MEMORY_PRS_PER_INDEX", default_value_t = 100)]
    memory_prs_per_index: usize,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    quorum_runtime::serve(&args.common, |boot| async move {
        let trees = Arc::new(args.repos.trees()?);
        let memory = (args.memory_prs_per_index > 0)
            .then(|| quorum_indexer::MemoryRefresh::from_api(trees.api.as_ref(), args.memory_prs_per_index))
            .flatten();
        let index = Arc::new(quorum_context::GraphIndex::new(boot.store.clone(), trees));
        let search = quorum_search::open_index(&args.search).await?;
        anyhow::Ok(
            quorum_indexer::start(
                args.common.http_addr,
                &boot.ctx,
                boot.store,
                index,
                search,
                memory,
                boot.shutdown,
            )
            .await?,
        )
    })
    .await
}

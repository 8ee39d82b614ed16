//! The `publisher` binary: posts to GitHub or GitLab when one is configured, to the run store otherwise.

use std::sync::Arc;

use clap::Parser;

#[derive(Parser)]
#[command(about = "Publishes one review per job")]
struct Args {
    #[command(flatten)]
    common: quorum_runtime::CommonArgs,
    /// Also print each review as Markdown on stdout.
    #[arg(long, env = "QUORUM_PRINT_REVIEWS")]
    print: bool,
    /// Where reviews are posted; unset: the run store (and stdout with --print).
    #[command(flatten)]
    scm: quorum_scm::ScmArgs,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    quorum_runtime::serve(&args.common, |boot| async move {
        let sink: Arc<dyn quorum_scm::ReviewSink> = match args.scm.api()? {
            Some(api) => api.sink(),
            None => Arc::new(quorum_publisher::LocalSink::new(boot.store.clone(), args.print)),
        };
        anyhow::Ok(quorum_publisher::start(args.common.http_addr, &boot.ctx, boot.store, sink, boot.shutdown).await?)
    })
    .await
}

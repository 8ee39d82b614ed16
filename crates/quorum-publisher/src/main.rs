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
    quorum_runtime::telemetry::init_logging(!args.common.text_logs);
    let ctx = quorum_runtime::ServiceContext::from_args(&args.common)?;
    let store = quorum_store::connect(args.common.redis_url.as_deref(), &args.common.redis_prefix).await?;
    let sink: Arc<dyn quorum_scm::ReviewSink> = match args.scm.api()? {
        Some(api) => api.sink(),
        None => Arc::new(quorum_scm::LocalSink::new(store.clone(), args.print)),
    };
    quorum_publisher::start(
        args.common.http_addr,
        &ctx,
        store,
        sink,
        quorum_runtime::shutdown::on_signal(),
    )
    .await?
    .wait()
    .await?;
    Ok(())
}

//! The `indexer` binary.

use clap::Parser;

#[derive(Parser)]
#[command(about = "Consumes repo.index.requested")]
struct Args {
    #[command(flatten)]
    common: quorum_runtime::CommonArgs,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    quorum_runtime::telemetry::init_logging(!args.common.text_logs);
    let ctx = quorum_runtime::ServiceContext::from_args(&args.common)?;
    let store = quorum_store::connect(args.common.redis_url.as_deref(), &args.common.redis_prefix).await?;
    quorum_indexer::start(
        args.common.http_addr,
        &ctx,
        store,
        quorum_runtime::shutdown::on_signal(),
    )
    .await?
    .wait()
    .await?;
    Ok(())
}

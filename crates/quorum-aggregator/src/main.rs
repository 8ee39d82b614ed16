//! The `aggregator` binary.

use clap::Parser;
use quorum_aggregator::{AggregatorConfig, start};

#[derive(Parser)]
#[command(about = "Joins agent results per job and flushes each job once")]
struct Args {
    #[command(flatten)]
    common: quorum_runtime::CommonArgs,
    /// Seconds after intake before a job is flushed with missing agents as `timeout`.
    #[arg(long, env = "QUORUM_AGGREGATOR_DEADLINE_SECS", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    deadline_secs: u64,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    quorum_runtime::telemetry::init_logging(!args.common.text_logs);
    let ctx = quorum_runtime::ServiceContext::from_args(&args.common)?;
    let store = quorum_store::connect(args.common.redis_url.as_deref(), &args.common.redis_prefix).await?;
    let mut config = AggregatorConfig::new(args.common.http_addr);
    config.deadline = std::time::Duration::from_secs(args.deadline_secs);
    start(config, &ctx, store, quorum_runtime::shutdown::on_signal())
        .await?
        .wait()
        .await?;
    Ok(())
}

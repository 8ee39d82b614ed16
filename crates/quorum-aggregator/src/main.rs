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
    let mut config = AggregatorConfig::new(args.common.http_addr);
    config.deadline = std::time::Duration::from_secs(args.deadline_secs);
    quorum_runtime::serve(&args.common, |boot| async move {
        start(config, &boot.ctx, boot.store, boot.shutdown).await
    })
    .await
}

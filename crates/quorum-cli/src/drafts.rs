//! `quorum approve|discard JOB`: a draft decision goes on
//! `review.draft.decided`, exactly as the operator API sends it, and the
//! publisher applies it. The CLI never holds a `ReviewSink`: only the
//! publisher writes to the SCM.

use std::time::{Duration, Instant};

use anyhow::bail;
use quorum_core::RunState;
use quorum_events::{DraftDecided, DraftDecision, SCHEMA_VERSION};
use quorum_runtime::BusProducer;
use quorum_store::StateStore;

/// What became of a decision.
#[derive(Debug, PartialEq, Eq)]
pub enum Decided {
    /// The publisher applied it: the run is now in this state.
    Applied(RunState),
    /// On the topic, not applied yet (`wait` was zero or ran out).
    Queued,
}

/// Sends `decision` for `job` after checking that the job has a draft (so a
/// typo or a run already decided is an error here, not a DLQ entry), then
/// waits up to `wait` for the publisher to apply it.
pub async fn decide(
    store: &dyn StateStore,
    producer: &BusProducer,
    job: &str,
    decision: DraftDecision,
    operator: &str,
    wait: Duration,
) -> anyhow::Result<Decided> {
    if store.get_draft(job).await?.is_none() {
        match store.get_run(job).await? {
            Some(run) => bail!("run {job} has no draft to decide (state: {})", run.state.as_str()),
            None => bail!("no run {job} in the store (is REDIS_URL the fleet's?)"),
        }
    }
    producer
        .publish(&DraftDecided {
            schema_version: SCHEMA_VERSION,
            job_id: job.into(),
            decision,
            operator: operator.into(),
        })
        .await?;
    let start = Instant::now();
    while start.elapsed() < wait {
        match store.get_run(job).await? {
            Some(run) if run.state != RunState::Draft => return Ok(Decided::Applied(run.state)),
            _ => {}
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(Decided::Queued)
}

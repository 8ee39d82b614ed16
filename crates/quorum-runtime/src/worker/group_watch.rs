//! Beside each worker's loop: its group's lag for `quorum_consumer_lag`,
//! and a watch for a member the group coordinator left without partitions
//! while the group's work stands still.
//!
//! That is not supposed to happen: when a member dies, the coordinator
//! re-balances its partitions to the others. tansu 0.6.0 did not, once, in
//! `make chaos`: after a kill, the new agent-tests member sat in a "formed"
//! group of one with an empty assignment (generation 7, read from tansu's
//! own tables) for minutes while 68 reviews waited on it. A member that has
//! nothing while the group has lag and nobody commits leaves and re-joins
//! the group, which makes the coordinator assign again. Where another
//! member is making progress, or there is no lag, it waits: more members
//! than partitions is a normal idle, not a fault.

use std::time::Duration;

use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::{Offset, TopicPartitionList};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::warn;

use quorum_events::Topic;

use super::WorkerSpec;
use crate::error::RuntimeError;
use crate::metrics::Metrics;

/// A partition's committed position (the low watermark when the group has
/// not committed there) and high watermark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub partition: i32,
    pub committed: i64,
    pub high: i64,
}

impl Position {
    pub fn lag(&self) -> i64 {
        (self.high - self.committed).max(0)
    }
}

/// The group's position on every partition of `topic`.
pub fn partition_positions<C: Consumer>(consumer: &C, topic: Topic) -> Result<Vec<Position>, RuntimeError> {
    let timeout = Duration::from_secs(2);
    let mut tpl = TopicPartitionList::new();
    for p in 0..topic.partitions() {
        tpl.add_partition(topic.name(), p);
    }
    let committed = consumer.committed_offsets(tpl, timeout)?;
    let mut out = Vec::new();
    for p in 0..topic.partitions() {
        let (low, high) = consumer.fetch_watermarks(topic.name(), p, timeout)?;
        let committed = match committed.find_partition(topic.name(), p).map(|e| e.offset()) {
            Some(Offset::Offset(o)) => o,
            _ => low,
        };
        out.push(Position {
            partition: p,
            committed,
            high,
        });
    }
    Ok(out)
}

/// Lag per partition: high watermark minus the group's committed offset
/// (minus the low watermark when nothing was committed yet).
pub fn partition_lags<C: Consumer>(consumer: &C, topic: Topic) -> Result<Vec<(i32, i64)>, RuntimeError> {
    Ok(partition_positions(consumer, topic)?
        .iter()
        .map(|p| (p.partition, p.lag()))
        .collect())
}

/// Decides when a member is starved: no partitions, lag waiting, and the
/// group's committed positions unmoved, all for `after`.
#[derive(Debug)]
pub struct Starvation {
    after: Duration,
    /// Since when, and the committed total then.
    since: Option<(Instant, i64)>,
}

impl Starvation {
    pub fn new(after: Duration) -> Self {
        Starvation { after, since: None }
    }

    /// One look at the member and its group; `true` when it should re-join
    /// (and the watch starts over).
    pub fn observe(&mut self, now: Instant, assigned: bool, positions: &[Position]) -> bool {
        let lag: i64 = positions.iter().map(Position::lag).sum();
        let committed: i64 = positions.iter().map(|p| p.committed).sum();
        if assigned || lag == 0 {
            self.since = None;
            return false;
        }
        match self.since {
            Some((t, c)) if c == committed => {
                if now.duration_since(t) >= self.after {
                    self.since = None;
                    return true;
                }
                false
            }
            // First look, or someone committed: the clock starts now.
            _ => {
                self.since = Some((now, committed));
                false
            }
        }
    }
}

/// How long a member may starve before it re-joins: well past a normal
/// join (a session timeout or two), and never sooner than 30 s so a slow
/// rebalance is not interrupted.
pub fn starved_after(session_timeout: Duration) -> Duration {
    (session_timeout * 3).max(Duration::from_secs(30))
}

/// Publishes `quorum_consumer_lag{group, partition}` from committed offsets
/// and high watermarks (group-listing APIs are not available on the mock),
/// and re-joins the group when this member starves ([`Starvation`]),
/// counting it in `quorum_consumer_rejoins_total{group}`.
pub(super) async fn watch_group(
    consumer: std::sync::Weak<StreamConsumer>,
    spec: WorkerSpec,
    metrics: Metrics,
    every: Duration,
    starved_after: Duration,
    shutdown: CancellationToken,
) {
    let topic = spec.topic;
    let mut starvation = Starvation::new(starved_after);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(every) => {}
        }
        let Some(c) = consumer.upgrade() else { return };
        let looked = tokio::task::spawn_blocking(move || {
            let assigned = c.assignment().map(|a| a.count() > 0).unwrap_or(true);
            partition_positions(c.as_ref(), topic).map(|p| (assigned, p))
        })
        .await;
        let Ok(Ok((assigned, positions))) = looked else {
            continue;
        };
        for p in &positions {
            metrics
                .consumer_lag
                .with_label_values(&[&spec.group, &p.partition.to_string()])
                .set(p.lag());
        }
        if starvation.observe(Instant::now(), assigned, &positions) {
            let Some(c) = consumer.upgrade() else { return };
            let lag: i64 = positions.iter().map(Position::lag).sum();
            warn!(group = %spec.group, lag, waited_s = starved_after.as_secs(), "no partitions while the group's lag stands still; leaving and re-joining the group");
            metrics.consumer_rejoins.with_label_values(&[&spec.group]).inc();
            let rejoined = tokio::task::spawn_blocking(move || {
                c.unsubscribe();
                c.subscribe(&[topic.name()])
            })
            .await;
            if let Ok(Err(e)) = rejoined {
                warn!(group = %spec.group, error = %e, "could not re-subscribe; the next look tries again");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(committed: i64, high: i64) -> Vec<Position> {
        vec![
            Position {
                partition: 0,
                committed,
                high,
            },
            Position {
                partition: 1,
                committed: 5,
                high: 5,
            },
        ]
    }

    #[test]
    fn a_member_without_partitions_while_nobody_commits_rejoins_after_the_wait() {
        let t0 = Instant::now();
        let mut s = Starvation::new(Duration::from_secs(30));
        assert!(
            !s.observe(t0, false, &at(3, 10)),
            "the first look only starts the clock"
        );
        assert!(!s.observe(t0 + Duration::from_secs(29), false, &at(3, 12)));
        assert!(s.observe(t0 + Duration::from_secs(30), false, &at(3, 12)));
        // It starts over: the next rejoin needs another full wait.
        assert!(!s.observe(t0 + Duration::from_secs(31), false, &at(3, 12)));
        assert!(!s.observe(t0 + Duration::from_secs(60), false, &at(3, 12)));
        assert!(s.observe(t0 + Duration::from_secs(61), false, &at(3, 12)));
    }

    #[test]
    fn progress_by_another_member_or_no_lag_or_partitions_of_its_own_is_not_starving() {
        let t0 = Instant::now();
        let later = t0 + Duration::from_secs(600);
        // Another member commits: an idle spare (more members than partitions).
        let mut s = Starvation::new(Duration::from_secs(30));
        let mut committed = 0;
        for i in 0..60 {
            committed += 1;
            assert!(!s.observe(t0 + Duration::from_secs(i * 10), false, &at(committed, 100)));
        }
        // Nothing to do.
        let mut s = Starvation::new(Duration::from_secs(30));
        assert!(!s.observe(t0, false, &at(10, 10)));
        assert!(!s.observe(later, false, &at(10, 10)));
        // Its own partitions, however slow the work.
        let mut s = Starvation::new(Duration::from_secs(30));
        assert!(!s.observe(t0, true, &at(3, 10)));
        assert!(!s.observe(later, true, &at(3, 10)));
        // Assigned in between resets the clock.
        let mut s = Starvation::new(Duration::from_secs(30));
        assert!(!s.observe(t0, false, &at(3, 10)));
        assert!(!s.observe(t0 + Duration::from_secs(20), true, &at(3, 10)));
        assert!(!s.observe(t0 + Duration::from_secs(40), false, &at(3, 10)));
        assert!(!s.observe(t0 + Duration::from_secs(69), false, &at(3, 10)));
        assert!(s.observe(t0 + Duration::from_secs(70), false, &at(3, 10)));
    }

    #[test]
    fn the_wait_is_a_few_sessions_and_at_least_half_a_minute() {
        assert_eq!(starved_after(Duration::from_secs(6)), Duration::from_secs(30));
        assert_eq!(starved_after(Duration::from_secs(45)), Duration::from_secs(135));
    }
}

//! Which offset each partition may commit when messages finish out of order.
//!
//! The parallel-consumer rule: a partition commits only up to its lowest
//! message that is not finished yet (Kafka's committed offset is "the next one
//! to read"), so a crash never skips an unfinished message, whatever finished
//! after it. Messages are counted from the moment they are received — queued
//! behind a busy key or running — until they are finished.

use std::collections::BTreeMap;

/// Per-partition bookkeeping of received and finished offsets.
#[derive(Debug, Default)]
pub struct OffsetTracker {
    partitions: BTreeMap<i32, PartitionOffsets>,
}

#[derive(Debug, Default)]
struct PartitionOffsets {
    /// Received and not finished, with a count: after a rebalance hands a
    /// partition back, the same offset can be received again while its first
    /// copy still runs.
    outstanding: BTreeMap<i64, u32>,
    /// One past the highest offset received.
    next: i64,
    /// The last position committed (or being committed) by this member.
    committed: Option<i64>,
}

impl PartitionOffsets {
    /// The offset to commit: the lowest unfinished one, or one past the
    /// highest received when everything is finished.
    fn position(&self) -> i64 {
        self.outstanding.keys().next().copied().unwrap_or(self.next)
    }
}

impl OffsetTracker {
    /// A message was received from `partition`.
    pub fn received(&mut self, partition: i32, offset: i64) {
        let p = self.partitions.entry(partition).or_default();
        *p.outstanding.entry(offset).or_insert(0) += 1;
        p.next = p.next.max(offset + 1);
    }

    /// The message at `offset` is done with: its outputs, or its retry or
    /// dead-letter copy, are acknowledged. Unknown partitions (revoked since)
    /// are ignored.
    pub fn finished(&mut self, partition: i32, offset: i64) {
        let Some(p) = self.partitions.get_mut(&partition) else {
            return;
        };
        if let Some(n) = p.outstanding.get_mut(&offset) {
            *n -= 1;
            if *n == 0 {
                p.outstanding.remove(&offset);
            }
        }
    }

    /// Drops what is known about partitions this member no longer owns: their
    /// new owner reads them from the committed offset.
    pub fn retain(&mut self, mut owned: impl FnMut(i32) -> bool) {
        self.partitions.retain(|p, _| owned(*p));
    }

    /// Positions that moved past what was committed, per partition.
    pub fn due(&self) -> Vec<(i32, i64)> {
        self.partitions
            .iter()
            .filter_map(|(&partition, p)| {
                let position = p.position();
                let moved = p.committed.is_none_or(|c| position > c);
                moved.then_some((partition, position))
            })
            .collect()
    }

    /// Records that `position` was committed for `partition`.
    pub fn committed(&mut self, partition: i32, position: i64) {
        if let Some(p) = self.partitions.get_mut(&partition) {
            p.committed = Some(p.committed.map_or(position, |c| c.max(position)));
        }
    }

    /// Messages received and not finished, over every partition.
    #[cfg(test)]
    pub fn outstanding(&self) -> usize {
        self.partitions
            .values()
            .map(|p| p.outstanding.values().map(|&n| n as usize).sum::<usize>())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_order_completions_commit_only_the_contiguous_prefix() {
        let mut t = OffsetTracker::default();
        for o in 10..15 {
            t.received(0, o);
        }
        t.finished(0, 12);
        t.finished(0, 13);
        // 10 is still running: nothing may be committed past it.
        assert_eq!(t.due(), vec![(0, 10)]);
        t.committed(0, 10);
        assert_eq!(t.due(), vec![]);
        t.finished(0, 10);
        assert_eq!(t.due(), vec![(0, 11)]);
        t.finished(0, 11);
        assert_eq!(t.due(), vec![(0, 14)]);
        t.finished(0, 14);
        assert_eq!(t.due(), vec![(0, 15)]);
        t.committed(0, 15);
        assert_eq!(t.due(), vec![]);
        assert_eq!(t.outstanding(), 0);
    }

    #[test]
    fn partitions_are_independent() {
        let mut t = OffsetTracker::default();
        t.received(0, 5);
        t.received(1, 7);
        t.received(1, 8);
        t.finished(1, 8);
        assert_eq!(t.due(), vec![(0, 5), (1, 7)]);
        t.finished(0, 5);
        assert_eq!(t.due(), vec![(0, 6), (1, 7)]);
    }

    #[test]
    fn a_commit_never_moves_backwards() {
        let mut t = OffsetTracker::default();
        t.received(0, 3);
        t.finished(0, 3);
        t.committed(0, 4);
        // The partition came back after a rebalance and 3 is read again.
        t.received(0, 3);
        assert_eq!(t.due(), vec![], "position 3 is behind the committed 4");
        t.committed(0, 3);
        t.finished(0, 3);
        assert_eq!(t.due(), vec![]);
    }

    #[test]
    fn a_duplicate_offset_counts_until_both_copies_finish_or_one_does() {
        let mut t = OffsetTracker::default();
        t.received(0, 1);
        t.received(0, 1);
        t.received(0, 2);
        t.finished(0, 1);
        assert_eq!(t.outstanding(), 2);
        t.finished(0, 2);
        assert_eq!(t.due(), vec![(0, 1)]);
        t.finished(0, 1);
        assert_eq!(t.due(), vec![(0, 3)]);
    }

    #[test]
    fn revoked_partitions_are_forgotten_and_their_late_completions_ignored() {
        let mut t = OffsetTracker::default();
        t.received(0, 1);
        t.received(1, 1);
        t.retain(|p| p == 1);
        t.finished(0, 1);
        assert_eq!(t.due(), vec![(1, 1)]);
        assert_eq!(t.outstanding(), 1);
    }

    #[test]
    fn an_unfinished_message_holds_its_partition_forever() {
        // A message whose retry copy could not be written before shutdown is
        // never finished: nothing at or after it is committed.
        let mut t = OffsetTracker::default();
        for o in 0..4 {
            t.received(2, o);
        }
        for o in [0, 2, 3] {
            t.finished(2, o);
        }
        assert_eq!(t.due(), vec![(2, 1)]);
    }
}

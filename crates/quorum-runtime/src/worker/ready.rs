//! Messages received and not started yet, in arrival order, handed out so
//! that messages of one key run one at a time and in order (the aggregator's
//! joins of one job, a job's retry copy behind its first attempt) while
//! messages of different keys run in parallel.

use std::collections::{HashSet, VecDeque};

/// The queue of messages waiting for a handler slot or for their key.
#[derive(Debug)]
pub struct ReadyQueue<T> {
    waiting: VecDeque<(Option<String>, T)>,
    /// Keys with a message running.
    running: HashSet<String>,
}

impl<T> Default for ReadyQueue<T> {
    fn default() -> Self {
        ReadyQueue {
            waiting: VecDeque::new(),
            running: HashSet::new(),
        }
    }
}

impl<T> ReadyQueue<T> {
    pub fn push(&mut self, key: Option<String>, item: T) {
        self.waiting.push_back((key, item));
    }

    /// The oldest message whose key has nothing running, marking its key
    /// running. A message behind an earlier one of the same key is never
    /// handed out first: the earlier one is older, so it is found first.
    pub fn next(&mut self) -> Option<(Option<String>, T)> {
        let at = self
            .waiting
            .iter()
            .position(|(key, _)| key.as_ref().is_none_or(|k| !self.running.contains(k)))?;
        let (key, item) = self.waiting.remove(at)?;
        if let Some(k) = &key {
            self.running.insert(k.clone());
        }
        Some((key, item))
    }

    /// The message of `key` handed out by [`next`](Self::next) is done.
    pub fn done(&mut self, key: Option<&str>) {
        if let Some(k) = key {
            self.running.remove(k);
        }
    }

    /// Drops waiting messages that `keep` rejects (their partition moved to
    /// another member); returns how many were dropped.
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) -> usize {
        let before = self.waiting.len();
        self.waiting.retain(|(_, item)| keep(item));
        before - self.waiting.len()
    }

    /// Drops every waiting message (shutdown: they were not started, so
    /// their offsets stay uncommitted and they are read again).
    pub fn clear(&mut self) {
        self.waiting.clear();
    }

    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(s: &str) -> Option<String> {
        Some(s.to_string())
    }

    #[test]
    fn different_keys_run_together_and_one_key_waits_for_its_turn() {
        let mut q = ReadyQueue::default();
        q.push(k("job-1"), 1);
        q.push(k("job-1"), 2);
        q.push(k("job-2"), 3);
        q.push(None, 4);
        assert_eq!(q.next(), Some((k("job-1"), 1)));
        // job-1 is busy: its second message waits, job-2 and the keyless one go.
        assert_eq!(q.next(), Some((k("job-2"), 3)));
        assert_eq!(q.next(), Some((None, 4)));
        assert_eq!(q.next(), None);
        q.done(Some("job-1"));
        assert_eq!(q.next(), Some((k("job-1"), 2)));
        assert!(q.is_empty());
    }

    #[test]
    fn messages_of_one_key_come_out_in_arrival_order() {
        let mut q = ReadyQueue::default();
        for i in 0..5 {
            q.push(k("same"), i);
        }
        let mut order = vec![];
        while let Some((key, i)) = q.next() {
            order.push(i);
            q.done(key.as_deref());
        }
        assert_eq!(order, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn keyless_messages_never_block_each_other() {
        let mut q = ReadyQueue::default();
        q.push(None, 1);
        q.push(None, 2);
        assert_eq!(q.next(), Some((None, 1)));
        assert_eq!(q.next(), Some((None, 2)));
    }

    #[test]
    fn retain_drops_messages_of_revoked_partitions() {
        let mut q = ReadyQueue::default();
        q.push(k("a"), (0, 1));
        q.push(k("b"), (1, 1));
        q.push(k("c"), (0, 2));
        assert_eq!(q.retain(|(partition, _)| *partition == 1), 2);
        assert_eq!(q.next(), Some((k("b"), (1, 1))));
        assert_eq!(q.len(), 0);
    }
}

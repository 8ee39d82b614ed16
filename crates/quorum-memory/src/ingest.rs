//! Harvesting an SCM's review history into memory, crash-safely
//! (F-MEM-1): a repo-wide sweep of review comments updated since the
//! checkpointed cursor finds the pull requests that changed; each is read
//! whole (comments, thread state, who reacted) and what it says replaces
//! what was known about it — so a rerun after a crash resumes from the
//! cursor and counts nothing twice.
//!
//! Why the cursor is safe: PRs are processed in order of the newest
//! comment the sweep saw for them, and the cursor only moves to a PR's
//! newest time once it and every PR before it are done. Any PR not yet
//! done has a comment at or after the cursor, and the sweep's `since`
//! includes that time, so the next run finds it again.

use std::collections::{BTreeMap, BTreeSet};

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};

use crate::feedback::{Observation, Person, Reaction, Verdict, observe};
use crate::item::{ItemKey, Kind};
use crate::learn::{MemoryState, parse_time};
use crate::past::PastThread;
use crate::thread::{PastComment, assemble};

/// One page of the sweep: the PR and `updated_at` of each comment.
#[derive(Debug, Clone, Default)]
pub struct SweepPage {
    pub items: Vec<(u64, String)>,
    /// Comments on the page that could not be read, with why.
    pub malformed: Vec<String>,
    pub has_next: bool,
}

/// A thread's state where the SCM reports it (GitHub GraphQL, GitLab
/// discussions).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThreadInfo {
    /// Every comment id of the thread (its first comment among them).
    pub comment_ids: Vec<u64>,
    pub resolved: bool,
    pub outdated: bool,
    pub resolved_by: Option<Person>,
}

/// Everything one pull request says.
#[derive(Debug, Clone, Default)]
pub struct PrHistory {
    pub merged: bool,
    pub comments: Vec<PastComment>,
    /// Comments that could not be read, with why.
    pub malformed: Vec<String>,
    pub threads: Vec<ThreadInfo>,
    /// Who reacted to Quorum's comments, by comment id (only fetched where
    /// the roll-up shows reactions).
    pub reactions: BTreeMap<u64, Vec<Reaction>>,
}

/// Why a fetch failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum HistoryError {
    /// Rate-limited past what can be waited out, a server error, the
    /// network: the run stops and a rerun resumes from the checkpoint.
    #[error("{0}")]
    Unavailable(String),
    /// An answer that is not what the API describes, or refused access.
    #[error("{0}")]
    Invalid(String),
}

/// Where review history comes from (GitHub, GitLab).
#[async_trait]
pub trait HistorySource: Send + Sync {
    /// Comments updated at or after `since`, oldest first (1-based `page`).
    async fn sweep_page(&self, repo: &str, since: Option<&str>, page: u32) -> Result<SweepPage, HistoryError>;
    /// One pull request, whole.
    async fn pull_request(&self, repo: &str, pr: u64) -> Result<PrHistory, HistoryError>;
}

/// Saves state at each checkpoint.
#[async_trait]
pub trait Checkpoint: Send + Sync {
    async fn save(&self, state: &MemoryState) -> Result<(), String>;
}

/// No checkpoint: the caller keeps the state it passed in (an eval, a test).
#[async_trait]
impl Checkpoint for () {
    async fn save(&self, _: &MemoryState) -> Result<(), String> {
        Ok(())
    }
}

/// The lease every writer of a repository's memory state takes
/// (`quorum memory`, the indexer's refresh, the operator API).
pub fn lease_name(repo: &str) -> String {
    format!("memory:{repo}")
}

/// What to do.
#[derive(Debug, Clone)]
pub struct IngestOptions {
    /// At most this many pull requests this run (the cursor moves only
    /// as far as they go; the next run goes on).
    pub max_prs: Option<usize>,
    /// Sweep from here instead of the checkpoint (RFC 3339).
    pub since: Option<String>,
    /// Pull requests read at once.
    pub concurrency: usize,
    /// PRs with Quorum comments or not yet merged are re-read for this
    /// long after their last activity: reactions have no webhook and do not
    /// move a comment's `updated_at`, and a merge moves no comment.
    pub watch_days: i64,
    pub now: DateTime<Utc>,
    /// Pull requests to read this run whatever the sweep finds (a thread
    /// resolved or reopened moves no comment, so the sweep misses it); they
    /// do not move the cursor.
    pub also: Vec<u64>,
}

impl Default for IngestOptions {
    fn default() -> Self {
        IngestOptions {
            max_prs: None,
            since: None,
            concurrency: 4,
            watch_days: 14,
            now: Utc::now(),
            also: vec![],
        }
    }
}

/// What a run did: "indexed X threads / skipped Y / failed Z".
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IngestSummary {
    pub prs_read: usize,
    /// Humans' threads on merged PRs, kept as past reviews.
    pub threads_indexed: usize,
    /// Pieces of evidence about Quorum's own comments.
    pub feedback: usize,
    /// Things reviewers asked changes not to do (in merged PRs).
    pub asks: usize,
    /// What was left out, each with why.
    pub skipped: Vec<String>,
    /// What could not be read; a rerun tries again.
    pub failed: Vec<String>,
    /// The cursor after the run.
    pub cursor: Option<String>,
}

impl IngestSummary {
    pub fn line(&self) -> String {
        format!(
            "indexed {} threads / skipped {} / failed {} ({} pull requests read, {} pieces of feedback on Quorum's comments, {} asks to avoid something)",
            self.threads_indexed,
            self.skipped.len(),
            self.failed.len(),
            self.prs_read,
            self.feedback,
            self.asks
        )
    }
}

/// Progress, for a bar: `(done, total)` pull requests.
pub type Progress<'a> = &'a (dyn Fn(usize, usize) + Send + Sync);

/// One run. `state` is updated in place and saved at every checkpoint
/// (after each batch of `concurrency` PRs); an error from `checkpoint`
/// stops the run (what was saved stands).
pub async fn ingest(
    source: &dyn HistorySource,
    checkpoint: &dyn Checkpoint,
    repo: &str,
    state: &mut MemoryState,
    opts: &IngestOptions,
    progress: Progress<'_>,
) -> Result<IngestSummary, HistoryError> {
    let mut summary = IngestSummary::default();
    let since = opts.since.clone().or_else(|| state.cursor.clone());
    // 1. The sweep: which PRs changed, and the newest time seen for each.
    let mut newest: BTreeMap<u64, String> = BTreeMap::new();
    let mut page = 1;
    loop {
        let p = source.sweep_page(repo, since.as_deref(), page).await?;
        summary.skipped.extend(p.malformed);
        for (pr, at) in p.items {
            let e = newest.entry(pr).or_default();
            if at > *e {
                *e = at;
            }
        }
        let enough = opts.max_prs.is_some_and(|m| newest.len() > m);
        if !p.has_next || enough {
            break;
        }
        page += 1;
    }
    let mut order: Vec<(String, u64)> = newest.into_iter().map(|(pr, at)| (at, pr)).collect();
    order.sort();
    if let Some(m) = opts.max_prs {
        order.truncate(m);
    }
    // 2. Watched PRs come along, without moving the cursor.
    let swept: BTreeSet<u64> = order.iter().map(|(_, pr)| *pr).collect();
    let horizon = opts.now - Duration::days(opts.watch_days);
    let mut watched: Vec<u64> = state
        .watched_prs
        .iter()
        .filter(|(pr, at)| !swept.contains(pr) && parse_time(at).is_some_and(|t| t >= horizon))
        .map(|(pr, _)| *pr)
        .collect();
    for pr in &opts.also {
        if !swept.contains(pr) && !watched.contains(pr) {
            watched.push(*pr);
        }
    }
    let work: Vec<(Option<String>, u64)> = order
        .into_iter()
        .map(|(at, pr)| (Some(at), pr))
        .chain(watched.into_iter().map(|pr| (None, pr)))
        .collect();
    let total = work.len();
    progress(0, total);
    // 3. Read in batches; checkpoint after each.
    let mut cursor_blocked = false;
    let mut done = 0;
    for batch in work.chunks(opts.concurrency.max(1)) {
        let reads = futures::future::join_all(batch.iter().map(|(_, pr)| source.pull_request(repo, *pr))).await;
        for ((at, pr), read) in batch.iter().zip(reads) {
            match read {
                Ok(h) => apply(state, &mut summary, *pr, h, opts.now),
                Err(HistoryError::Unavailable(e)) => {
                    // Stop here: later PRs would move the cursor past this one.
                    summary.failed.push(format!("pull request #{pr}: {e}"));
                    checkpoint.save(state).await.map_err(HistoryError::Unavailable)?;
                    summary.cursor = state.cursor.clone();
                    progress(done, total);
                    return Ok(summary);
                }
                Err(HistoryError::Invalid(e)) => {
                    summary.failed.push(format!("pull request #{pr}: {e}"));
                    cursor_blocked = true;
                }
            }
            done += 1;
            if let Some(at) = at
                && !cursor_blocked
            {
                state.cursor = Some(at.clone());
            }
        }
        checkpoint.save(state).await.map_err(HistoryError::Unavailable)?;
        progress(done, total);
    }
    summary.cursor = state.cursor.clone();
    Ok(summary)
}

/// What one PR says, replacing what was known about it.
fn apply(state: &mut MemoryState, summary: &mut IngestSummary, pr: u64, h: PrHistory, now: DateTime<Utc>) {
    summary.prs_read += 1;
    let last_activity = h.comments.iter().map(|c| c.updated_at.clone()).max();
    summary
        .skipped
        .extend(h.malformed.into_iter().map(|m| format!("pull request #{pr}: {m}")));
    let (mut threads, orphans) = assemble(h.comments);
    for o in orphans {
        summary.skipped.push(format!("pull request #{pr}: {}", o.reason));
    }
    let mut feedback = vec![];
    let mut has_quorum = false;
    state.threads.retain(|_, t| t.pr != pr);
    for t in &mut threads {
        if let Some(info) = h.threads.iter().find(|i| i.comment_ids.contains(&t.root.id)) {
            t.resolved = Some(info.resolved);
            t.outdated = Some(info.outdated);
        }
        if crate::feedback::quorum_markers(&t.root.body).is_some() {
            has_quorum = true;
            let resolved_by = h
                .threads
                .iter()
                .find(|i| i.comment_ids.contains(&t.root.id))
                .and_then(|i| i.resolved_by.as_ref());
            let reactions = h.reactions.get(&t.root.id).map(Vec::as_slice).unwrap_or(&[]);
            feedback.extend(observe(t, reactions, resolved_by));
        } else if t.root.is_bot {
            summary.skipped.push(format!(
                "pull request #{pr}: thread {} was started by a bot ({})",
                t.root.id, t.root.author
            ));
        } else if !h.merged {
            // Counted when the PR merges (it is watched until then).
        } else {
            state.threads.insert(t.root.id, PastThread::from_thread(t, true));
            summary.threads_indexed += 1;
            let asks = crate::asks::avoid_asks(&t.root.body, &t.root.diff_hunk);
            summary.asks += asks.len();
            for name in asks {
                feedback.push(Observation {
                    key: ItemKey {
                        kind: Kind::Avoid,
                        scope: crate::asks::scope_for(&t.root.path),
                        rule: None,
                        title: None,
                        pattern: Some(crate::asks::pattern_for(&name)),
                    },
                    verdict: Verdict::Asked,
                    how: format!("asked: {}", crate::feedback::excerpt(&t.root.body)),
                    who: Person {
                        login: t.root.author.clone(),
                        association: t.root.association,
                    },
                    pr,
                    url: t.root.url.clone(),
                    at: t.root.created_at.clone(),
                    inferred: false,
                    source: crate::sources::Source::of_comment(&t.root.path, &t.root.diff_hunk),
                });
            }
        }
    }
    summary.feedback += feedback.iter().filter(|o| o.verdict != Verdict::Asked).count();
    for o in &feedback {
        state.first_seen.entry(o.key.id()).or_insert_with(|| now.to_rfc3339());
    }
    if !h.merged {
        // The line a comment sits on reaches the default branch only when
        // its pull request merges: until then it is missing there without
        // being gone, and checking it would make a rule learned on open
        // pull requests stale at once. The PR is re-read after it merges
        // (it is watched), and its evidence gets its sources then.
        for o in &mut feedback {
            o.source = None;
        }
    }
    state.set_pr_evidence(pr, feedback);
    if let Some(at) = last_activity.filter(|_| has_quorum || !h.merged) {
        state.watched_prs.insert(pr, at);
    } else {
        state.watched_prs.remove(&pr);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::association::Association;
    use crate::thread::tests::comment;

    /// A scripted history: comments per PR; the sweep pages them by
    /// `updated_at`, two per page. Faults: a PR that is unavailable once.
    struct Script {
        prs: BTreeMap<u64, Vec<PastComment>>,
        merged: BTreeSet<u64>,
        unavailable_once: Mutex<BTreeSet<u64>>,
        reads: AtomicUsize,
    }

    #[async_trait]
    impl HistorySource for Script {
        async fn sweep_page(&self, _repo: &str, since: Option<&str>, page: u32) -> Result<SweepPage, HistoryError> {
            let mut all: Vec<(String, u64)> = self
                .prs
                .values()
                .flatten()
                .filter(|c| since.is_none_or(|s| c.updated_at.as_str() >= s))
                .map(|c| (c.updated_at.clone(), c.pr))
                .collect();
            all.sort();
            let start = (page as usize - 1) * 2;
            Ok(SweepPage {
                items: all
                    .iter()
                    .skip(start)
                    .take(2)
                    .map(|(at, pr)| (*pr, at.clone()))
                    .collect(),
                malformed: vec![],
                has_next: start + 2 < all.len(),
            })
        }

        async fn pull_request(&self, _repo: &str, pr: u64) -> Result<PrHistory, HistoryError> {
            self.reads.fetch_add(1, Ordering::SeqCst);
            if self.unavailable_once.lock().unwrap().remove(&pr) {
                return Err(HistoryError::Unavailable(
                    "403 secondary rate limit, retry after 60 s".into(),
                ));
            }
            Ok(PrHistory {
                merged: self.merged.contains(&pr),
                comments: self.prs.get(&pr).cloned().unwrap_or_default(),
                ..Default::default()
            })
        }
    }

    struct Saves {
        saved: Mutex<Vec<MemoryState>>,
        /// Fail (as a killed process would stop) after this many saves.
        die_after: Option<usize>,
    }

    #[async_trait]
    impl Checkpoint for Saves {
        async fn save(&self, state: &MemoryState) -> Result<(), String> {
            let mut s = self.saved.lock().unwrap();
            if self.die_after.is_some_and(|n| s.len() >= n) {
                return Err("killed".into());
            }
            s.push(state.clone());
            Ok(())
        }
    }

    fn at(pr: u64, id: u64, minute: u32) -> PastComment {
        let mut c = comment(id, None, "alice", "please use a parameter");
        c.pr = pr;
        c.created_at = format!("2026-01-01T00:{minute:02}:00Z");
        c.updated_at = c.created_at.clone();
        c
    }

    fn quorum_comment(pr: u64, id: u64, minute: u32) -> PastComment {
        let mut c = at(pr, id, minute);
        c.author = "quorum[bot]".into();
        c.is_bot = true;
        c.path = "scripts/migrate.py".into();
        c.body =
            "**SQL** (critical)\n<!-- quorum:fp:0011223344556677 --><!-- quorum:rule:sql-string-building -->".into();
        c
    }

    fn dismissal(pr: u64, id: u64, parent: u64, minute: u32) -> PastComment {
        let mut c = at(pr, id, minute);
        c.in_reply_to = Some(parent);
        c.association = Association::Owner;
        c.body = "not a bug here, the table name is a constant".into();
        c
    }

    fn script() -> Script {
        let mut prs = BTreeMap::new();
        prs.insert(1, vec![at(1, 10, 1), at(1, 11, 2)]);
        prs.insert(2, vec![quorum_comment(2, 20, 3), dismissal(2, 21, 20, 4)]);
        prs.insert(3, vec![quorum_comment(3, 30, 5), dismissal(3, 31, 30, 6)]);
        // A reply whose parent is gone, and a root on an unmerged PR.
        prs.insert(4, vec![dismissal(4, 41, 40, 7), at(4, 42, 8)]);
        prs.insert(5, vec![at(5, 50, 9)]);
        Script {
            prs,
            merged: BTreeSet::from([1, 2, 3, 4]),
            unavailable_once: Mutex::new(BTreeSet::new()),
            reads: AtomicUsize::new(0),
        }
    }

    fn opts() -> IngestOptions {
        IngestOptions {
            concurrency: 2,
            now: parse_time("2026-01-02T00:00:00Z").unwrap(),
            ..Default::default()
        }
    }

    async fn run(
        source: &Script,
        saves: &Saves,
        state: &mut MemoryState,
        o: &IngestOptions,
    ) -> Result<IngestSummary, HistoryError> {
        ingest(source, saves, "o/r", state, o, &|_, _| {}).await
    }

    #[tokio::test]
    async fn a_full_run_indexes_threads_learns_feedback_and_reports_what_it_skipped() {
        let source = script();
        let saves = Saves {
            saved: Mutex::new(vec![]),
            die_after: None,
        };
        let mut state = MemoryState::default();
        let s = run(&source, &saves, &mut state, &opts()).await.unwrap();
        assert_eq!(s.prs_read, 5);
        // PR 1: two human threads; PR 4: one (its orphan skipped); PR 5 is not merged.
        assert_eq!(s.threads_indexed, 3, "{s:?}");
        assert_eq!(s.feedback, 2);
        assert_eq!(s.skipped.len(), 1);
        assert!(
            s.skipped[0].contains("#4") && s.skipped[0].contains("never arrived"),
            "{:?}",
            s.skipped
        );
        assert!(s.failed.is_empty());
        assert_eq!(s.cursor.as_deref(), Some("2026-01-01T00:09:00Z"));
        assert_eq!(state.threads.len(), 3);
        // Two PRs of trusted dismissals: an active item.
        let items = crate::derive_items(&state, &crate::Policy::default(), opts().now);
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].status, crate::Status::Active);
        // Quorum's PRs and the unmerged one are watched for late answers.
        assert_eq!(state.watched_prs.keys().copied().collect::<Vec<_>>(), [2, 3, 5]);
        assert!(s.line().starts_with("indexed 3 threads / skipped 1 / failed 0"));
    }

    #[tokio::test]
    async fn only_merged_pull_requests_give_their_evidence_a_source() {
        let hunk = |mut c: PastComment| {
            c.diff_hunk = "@@ -1 +1,2 @@\n+cur.execute(f\"DROP TABLE {name}\")".into();
            c
        };
        let mut source = script();
        source
            .prs
            .insert(2, vec![hunk(quorum_comment(2, 20, 3)), dismissal(2, 21, 20, 4)]);
        source
            .prs
            .insert(6, vec![hunk(quorum_comment(6, 60, 10)), dismissal(6, 61, 60, 11)]);
        let saves = Saves {
            saved: Mutex::new(vec![]),
            die_after: None,
        };
        let mut state = MemoryState::default();
        run(&source, &saves, &mut state, &opts()).await.unwrap();
        let merged = &state.evidence[&2][0];
        assert_eq!(
            merged.source.as_ref().map(|s| s.line.as_str()),
            Some("cur.execute(f\"DROP TABLE {name}\")")
        );
        // PR 6 is open: its line is not on the default branch yet, which
        // must not read as gone.
        assert!(
            state.evidence[&6].iter().all(|o| o.source.is_none()),
            "{:?}",
            state.evidence[&6]
        );
    }

    #[tokio::test]
    async fn a_killed_run_resumes_from_its_checkpoint_and_counts_nothing_twice() {
        let clean = {
            let saves = Saves {
                saved: Mutex::new(vec![]),
                die_after: None,
            };
            let mut st = MemoryState::default();
            run(&script(), &saves, &mut st, &opts()).await.unwrap();
            st
        };
        let source = script();
        let dying = Saves {
            saved: Mutex::new(vec![]),
            die_after: Some(1),
        };
        let mut st = MemoryState::default();
        assert!(run(&source, &dying, &mut st, &opts()).await.is_err());
        // What a restarted process has: the last saved state.
        let mut resumed = dying.saved.lock().unwrap().last().cloned().unwrap();
        assert_eq!(resumed.cursor.as_deref(), Some("2026-01-01T00:04:00Z"));
        let saves = Saves {
            saved: Mutex::new(vec![]),
            die_after: None,
        };
        run(&source, &saves, &mut resumed, &opts()).await.unwrap();
        assert_eq!(resumed.threads, clean.threads);
        assert_eq!(resumed.evidence, clean.evidence);
        assert_eq!(resumed.cursor, clean.cursor);
        // A third run reads only what is at or after the cursor and the
        // watched PRs, and changes nothing.
        let before = resumed.clone();
        run(&source, &saves, &mut resumed, &opts()).await.unwrap();
        assert_eq!(resumed.threads, before.threads);
        assert_eq!(resumed.evidence, before.evidence);
    }

    #[tokio::test]
    async fn a_rate_limit_mid_run_stops_without_moving_the_cursor_past_it() {
        let source = script();
        source.unavailable_once.lock().unwrap().insert(3);
        let saves = Saves {
            saved: Mutex::new(vec![]),
            die_after: None,
        };
        let mut st = MemoryState::default();
        let s = run(&source, &saves, &mut st, &opts()).await.unwrap();
        assert_eq!(s.failed.len(), 1);
        assert!(s.failed[0].contains("#3") && s.failed[0].contains("secondary rate limit"));
        assert_eq!(st.cursor.as_deref(), Some("2026-01-01T00:04:00Z"));
        let s = run(&source, &saves, &mut st, &opts()).await.unwrap();
        assert!(s.failed.is_empty());
        assert_eq!(st.cursor.as_deref(), Some("2026-01-01T00:09:00Z"));
        assert_eq!(st.threads.len(), 3);
    }

    #[tokio::test]
    async fn max_prs_moves_the_cursor_only_as_far_as_it_read() {
        let source = script();
        let saves = Saves {
            saved: Mutex::new(vec![]),
            die_after: None,
        };
        let mut st = MemoryState::default();
        let o = IngestOptions {
            max_prs: Some(2),
            ..opts()
        };
        let s = run(&source, &saves, &mut st, &o).await.unwrap();
        assert_eq!(s.prs_read, 2);
        assert_eq!(st.cursor.as_deref(), Some("2026-01-01T00:04:00Z"));
        let s = run(&source, &saves, &mut st, &opts()).await.unwrap();
        assert_eq!(st.threads.len(), 3);
        assert!(s.prs_read >= 3);
    }

    #[tokio::test]
    async fn a_pull_request_named_by_a_thread_webhook_is_read_though_the_sweep_is_past_it() {
        let source = script();
        let saves = Saves {
            saved: Mutex::new(vec![]),
            die_after: None,
        };
        let mut st = MemoryState::default();
        run(&source, &saves, &mut st, &opts()).await.unwrap();
        let cursor = st.cursor.clone();
        // Nothing new: a second run reads only what it watches.
        let before = source.reads.load(Ordering::SeqCst);
        let quiet = run(&source, &saves, &mut st, &opts()).await.unwrap();
        let quiet_reads = source.reads.load(Ordering::SeqCst) - before;
        // A thread on #1 was resolved: #1 is read too, the cursor stays.
        let before = source.reads.load(Ordering::SeqCst);
        let o = IngestOptions {
            also: vec![1],
            ..opts()
        };
        let nudged = run(&source, &saves, &mut st, &o).await.unwrap();
        let nudged_reads = source.reads.load(Ordering::SeqCst) - before;
        assert_eq!(nudged_reads, quiet_reads + 1, "{quiet:?} / {nudged:?}");
        assert_eq!(st.cursor, cursor);
    }
}

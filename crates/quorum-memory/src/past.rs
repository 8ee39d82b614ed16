//! The team's past reviews, asked as a person, a group or a panel would
//! answer (F-MEM-2): "what would @alice say about this diff?".
//!
//! Relevance comes from the hybrid index's `reviews` collection (dense +
//! BM25, [`search_with`]) when the caller has one, else from BM25 over
//! code-aware tokens of the thread and its path ([`search`]). Either is
//! boosted when the thread sat on the same file or directory, then
//! re-ranked by how the team received it: `score × (1 + ln(1 + 👍) − ln(1 + 👎))`.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use crate::association::Association;
use crate::thread::Thread;

/// Stored text per thread.
const MAX_TEXT: usize = 4096;

/// One human review thread of a merged pull request, kept compact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PastThread {
    pub id: u64,
    pub pr: u64,
    pub path: String,
    /// Who started the thread (the reviewer).
    pub reviewer: String,
    pub association: Association,
    /// "author: body" per comment, oldest first, capped.
    pub text: String,
    pub plus_one: u32,
    pub minus_one: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<bool>,
    pub merged: bool,
    pub created_at: String,
    pub url: String,
}

impl PastThread {
    pub fn from_thread(t: &Thread, merged: bool) -> PastThread {
        let mut text = String::new();
        for c in t.comments() {
            let body = quorum_core::strip_markers(&c.body);
            text.push_str(&format!("{}: {}\n", c.author, body.trim()));
            if text.len() > MAX_TEXT {
                let mut cut = MAX_TEXT;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.truncate(cut);
                text.push('…');
                break;
            }
        }
        PastThread {
            id: t.root.id,
            pr: t.root.pr,
            path: t.root.path.clone(),
            reviewer: t.root.author.clone(),
            association: t.root.association,
            text,
            plus_one: t.comments().map(|c| c.reactions.plus_one).sum(),
            minus_one: t.comments().map(|c| c.reactions.minus_one).sum(),
            resolved: t.resolved,
            merged,
            created_at: t.root.created_at.clone(),
            url: t.root.url.clone(),
        }
    }
}

/// Whose past reviews answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Asker {
    /// One reviewer's threads (`review_as_person`).
    Person(String),
    /// Threads by people of these associations (`review_as_group`).
    Group(Vec<Association>),
    /// The `n` reviewers with the most threads on the touched paths, each
    /// answering with their best threads.
    Panel(usize),
    /// Everyone.
    Anyone,
}

/// A ranked thread.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchHit {
    pub score: f64,
    pub thread: PastThread,
}

/// Ranks past threads for a query (a diff, a question) about `path`, by
/// BM25 over their words.
pub fn search<'a>(
    threads: impl IntoIterator<Item = &'a PastThread>,
    asker: &Asker,
    query: &str,
    path: Option<&str>,
    limit: usize,
) -> Vec<SearchHit> {
    answer(threads, asker, Relevance::Lexical(query), path, limit)
}

/// [`search`] with each thread's relevance already known (thread id →
/// score; threads without one do not answer): the hybrid index's ranking.
pub fn search_with<'a>(
    threads: impl IntoIterator<Item = &'a PastThread>,
    asker: &Asker,
    relevance: &HashMap<u64, f64>,
    path: Option<&str>,
    limit: usize,
) -> Vec<SearchHit> {
    answer(threads, asker, Relevance::Given(relevance), path, limit)
}

enum Relevance<'q> {
    Lexical(&'q str),
    Given(&'q HashMap<u64, f64>),
}

fn answer<'a>(
    threads: impl IntoIterator<Item = &'a PastThread>,
    asker: &Asker,
    relevance: Relevance<'_>,
    path: Option<&str>,
    limit: usize,
) -> Vec<SearchHit> {
    let all: Vec<&PastThread> = threads.into_iter().collect();
    let pool: Vec<&PastThread> = match asker {
        Asker::Person(login) => all
            .iter()
            .copied()
            .filter(|t| t.reviewer.eq_ignore_ascii_case(login))
            .collect(),
        Asker::Group(groups) => all
            .iter()
            .copied()
            .filter(|t| groups.contains(&t.association))
            .collect(),
        Asker::Anyone | Asker::Panel(_) => all.clone(),
    };
    // What sitting on the asked file (or its directory) multiplies. BM25
    // scores spread widely, so place re-orders only close matches; a hybrid
    // ranking's fused scores are reciprocal ranks, packed close together
    // (1/3, 1/4, 1/5 …), where the same factor would put any thread of the
    // directory above the one the meaning found first. There place only
    // breaks near-ties.
    let (base, place) = match relevance {
        Relevance::Lexical(query) => (bm25(&pool, query), PlaceBoost { file: 2.0, dir: 1.5 }),
        Relevance::Given(r) => (
            pool.iter().map(|t| r.get(&t.id).copied().unwrap_or(0.0)).collect(),
            PlaceBoost { file: 1.2, dir: 1.1 },
        ),
    };
    let mut hits = rerank(&pool, base, path, place);
    if let Asker::Panel(n) = asker {
        // The panel: the reviewers with most threads near the path, each
        // with their best answers, interleaved by rank.
        let near = |t: &PastThread| path.is_none_or(|p| dir(&t.path) == dir(p));
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for t in pool.iter().filter(|t| near(t)) {
            *counts.entry(t.reviewer.as_str()).or_default() += 1;
        }
        let mut top: Vec<(&str, usize)> = counts.into_iter().collect();
        top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let panel: BTreeSet<String> = top.iter().take(*n).map(|(r, _)| r.to_string()).collect();
        hits.retain(|h| panel.contains(&h.thread.reviewer));
        let per = limit.div_ceil(panel.len().max(1));
        let mut taken: HashMap<String, usize> = HashMap::new();
        hits.retain(|h| {
            let k = taken.entry(h.thread.reviewer.clone()).or_default();
            *k += 1;
            *k <= per
        });
    }
    hits.truncate(limit);
    hits
}

fn dir(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// Lower-cased words of text and code: identifiers split at `_`, `.` and
/// camelCase humps; very common English words dropped.
pub fn tokens(text: &str) -> Vec<String> {
    const STOP: &[&str] = &[
        "the", "a", "an", "and", "or", "to", "of", "in", "on", "for", "is", "it", "this", "that", "be", "we", "you",
        "with", "as", "at", "by", "if", "not", "are", "was", "can", "should", "here", "there", "i",
    ];
    let mut out = vec![];
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        let mut cur = String::new();
        let mut prev_lower = false;
        for ch in word.chars() {
            if ch.is_uppercase() && prev_lower && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = ch.is_lowercase() || ch.is_ascii_digit();
            cur.extend(ch.to_lowercase());
        }
        if !cur.is_empty() {
            out.push(cur);
        }
    }
    out.retain(|w| w.len() > 1 && !STOP.contains(&w.as_str()));
    out
}

/// BM25 of each thread of `pool` for `query`.
fn bm25(pool: &[&PastThread], query: &str) -> Vec<f64> {
    let q: BTreeSet<String> = tokens(query).into_iter().collect();
    let docs: Vec<Vec<String>> = pool.iter().map(|t| tokens(&format!("{} {}", t.path, t.text))).collect();
    let n = docs.len().max(1) as f64;
    let avg = docs.iter().map(Vec::len).sum::<usize>() as f64 / n;
    let mut df: HashMap<&str, usize> = HashMap::new();
    for d in &docs {
        for w in d.iter().map(String::as_str).collect::<BTreeSet<_>>() {
            *df.entry(w).or_default() += 1;
        }
    }
    let (k1, b) = (1.2, 0.75);
    docs.iter()
        .map(|d| {
            let mut tf: HashMap<&str, usize> = HashMap::new();
            for w in d {
                *tf.entry(w.as_str()).or_default() += 1;
            }
            let mut score = 0.0;
            for w in &q {
                let Some(&f) = tf.get(w.as_str()) else { continue };
                let df = df[w.as_str()] as f64;
                let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                let f = f as f64;
                score += idf * f * (k1 + 1.0) / (f + k1 * (1.0 - b + b * d.len() as f64 / avg.max(1.0)));
            }
            score
        })
        .collect()
}

/// Relevance boosted by place and re-ranked by reception; threads with no
/// relevance drop out.
/// Factors for a thread on the asked file, or in its directory.
struct PlaceBoost {
    file: f64,
    dir: f64,
}

fn rerank(pool: &[&PastThread], base: Vec<f64>, path: Option<&str>, place: PlaceBoost) -> Vec<SearchHit> {
    let mut hits: Vec<SearchHit> = pool
        .iter()
        .zip(base)
        .filter_map(|(t, mut score)| {
            if let Some(p) = path {
                if t.path == p {
                    score *= place.file;
                } else if dir(&t.path) == dir(p) {
                    score *= place.dir;
                }
            }
            let received = 1.0 + (1.0 + t.plus_one as f64).ln() - (1.0 + t.minus_one as f64).ln();
            score *= received.max(0.1);
            (score > 0.0).then(|| SearchHit {
                score,
                thread: (*t).clone(),
            })
        })
        .collect();
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.thread.id.cmp(&b.thread.id)));
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    fn past(
        id: u64,
        reviewer: &str,
        association: Association,
        path: &str,
        text: &str,
        plus: u32,
        minus: u32,
    ) -> PastThread {
        PastThread {
            id,
            pr: id,
            path: path.into(),
            reviewer: reviewer.into(),
            association,
            text: text.into(),
            plus_one: plus,
            minus_one: minus,
            resolved: Some(true),
            merged: true,
            created_at: "2026-01-01T00:00:00Z".into(),
            url: format!("u{id}"),
        }
    }

    fn corpus() -> Vec<PastThread> {
        vec![
            past(
                1,
                "alice",
                Association::Member,
                "shop/payments.py",
                "alice: amounts are integer cents, never float",
                3,
                0,
            ),
            past(
                2,
                "bob",
                Association::Contributor,
                "shop/payments.py",
                "bob: use Decimal for the refund amount",
                0,
                0,
            ),
            past(
                3,
                "alice",
                Association::Member,
                "docs/index.md",
                "alice: typo in the heading",
                0,
                0,
            ),
            past(
                4,
                "carol",
                Association::Owner,
                "shop/refunds.py",
                "carol: refundAmount must be cents",
                0,
                2,
            ),
            past(
                5,
                "dave",
                Association::Owner,
                "shop/refunds.py",
                "dave: log refunds with the logger",
                0,
                0,
            ),
        ]
    }

    #[test]
    fn tokens_split_code_and_drop_stop_words() {
        assert_eq!(
            tokens("The refundAmount is a float_value"),
            ["refund", "amount", "float", "value"]
        );
    }

    #[test]
    fn as_a_person_only_their_threads_answer() {
        let c = corpus();
        let hits = search(
            &c,
            &Asker::Person("Alice".into()),
            "float amount in cents",
            Some("shop/orders.py"),
            5,
        );
        let ids: Vec<u64> = hits.iter().map(|h| h.thread.id).collect();
        assert_eq!(ids, [1]);
    }

    #[test]
    fn as_a_group_and_reactions_rerank() {
        let c = corpus();
        let hits = search(
            &c,
            &Asker::Group(vec![Association::Member, Association::Owner]),
            "refund amount cents",
            Some("shop/refunds.py"),
            5,
        );
        let ids: Vec<u64> = hits.iter().map(|h| h.thread.id).collect();
        // Bob is a contributor: not in the group. Carol's thread sits on the
        // same file but the team thumbed it down twice; alice's got 3 👍.
        assert!(!ids.contains(&2));
        assert_eq!(ids[0], 1, "{hits:?}");
        assert!(ids.contains(&4));
    }

    #[test]
    fn given_relevance_replaces_word_matches_and_keeps_the_asker_and_reactions() {
        let c = corpus();
        // As if dense retrieval found threads 2 and 4 for a question that
        // shares no word with them; 1 is not among its candidates.
        let rel = HashMap::from([(2, 0.5), (4, 0.6), (3, 0.1)]);
        let ids = |hits: Vec<SearchHit>| hits.iter().map(|h| h.thread.id).collect::<Vec<_>>();
        let anyone = search_with(&c, &Asker::Anyone, &rel, Some("shop/payments.py"), 5);
        // 2 sits on the asked file (×1.2); 4 was the most relevant but was
        // thumbed down twice (×0.1 floor): it falls below 3's weak match.
        assert_eq!(ids(anyone), [2, 3, 4]);
        let group = search_with(&c, &Asker::Group(vec![Association::Owner]), &rel, None, 5);
        assert_eq!(ids(group), [4]);
        assert!(search_with(&c, &Asker::Person("alice".into()), &HashMap::new(), None, 5).is_empty());
    }

    #[test]
    fn a_panel_is_the_top_reviewers_of_the_touched_directory() {
        let c = corpus();
        let hits = search(
            &c,
            &Asker::Panel(2),
            "refund amount cents float logger",
            Some("shop/x.py"),
            4,
        );
        let who: BTreeSet<&str> = hits.iter().map(|h| h.thread.reviewer.as_str()).collect();
        // shop/: alice 1, bob 1, carol 1, dave 1 → ties broken by name.
        assert_eq!(who, BTreeSet::from(["alice", "bob"]));
    }
}

//! Learned state and the trust gates that turn evidence into items.
//!
//! The state is evidence, not items: observations per pull request
//! (replaced whole each time a PR is re-read, so reading it twice counts
//! nothing twice), operator decisions, and when items last matched. Items
//! are derived from it by [`derive_items`], a pure function of the state,
//! the policy and the time — so a gate changed in config applies to old
//! evidence too, and nobody who merely replies can change a rule directly.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use crate::feedback::{Observation, Verdict};
use crate::item::{EvidenceLink, ItemKey, Kind, MemoryItem, Origin, Status};
use crate::sources::{Gone, Source, SourceCheck};

/// The gates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Policy {
    /// Distinct pull requests with evidence before an item is suggested
    /// automatically ("one-offs don't").
    pub min_prs: usize,
    /// Days a learned item waits as `suggested` after its gates are met
    /// before it becomes active by itself (0: at once).
    pub approval_delay_days: i64,
    /// An active item that has not matched a review for this many days
    /// goes back to `suggested` for re-validation.
    pub stale_after_days: i64,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            min_prs: 2,
            approval_delay_days: 0,
            stale_after_days: 180,
        }
    }
}

/// The trust gates of learned memory, as flags every service that applies
/// memory (the agents, the critic) flattens in, so both apply the same.
#[derive(Debug, Clone, clap::Args)]
pub struct MemoryArgs {
    /// Distinct pull requests with evidence before a learned item is
    /// suggested or made active.
    #[arg(long, env = "QUORUM_MEMORY_MIN_PRS", default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..))]
    pub memory_min_prs: u64,
    /// Days a learned item waits as suggested before it applies by itself.
    #[arg(long, env = "QUORUM_MEMORY_APPROVAL_DELAY_DAYS", default_value_t = 0)]
    pub memory_approval_delay_days: u32,
    /// Days without a match after which an active item is re-validated.
    #[arg(long, env = "QUORUM_MEMORY_STALE_AFTER_DAYS", default_value_t = 180)]
    pub memory_stale_after_days: u32,
}

impl MemoryArgs {
    pub fn policy(&self) -> Policy {
        Policy {
            min_prs: self.memory_min_prs as usize,
            approval_delay_days: self.memory_approval_delay_days.into(),
            stale_after_days: self.memory_stale_after_days.into(),
        }
    }
}

/// An operator's decision on an item (`quorum memory approve|retire`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    pub status: Status,
    pub by: String,
    /// RFC 3339.
    pub at: String,
}

/// Everything learned about one repository.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryState {
    /// The incremental sweep's cursor: the `updated_at` of the last
    /// comment fully processed.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Evidence per pull request.
    #[serde(default)]
    pub evidence: BTreeMap<u64, Vec<Observation>>,
    #[serde(default)]
    pub decisions: BTreeMap<String, Decision>,
    /// Item id → RFC 3339 of the last review it matched.
    #[serde(default)]
    pub last_matched: BTreeMap<String, String>,
    /// Item id → when Quorum first learned evidence for it (RFC 3339):
    /// staleness counts from here, not from when the evidence was said —
    /// history harvested today is new to Quorum today.
    #[serde(default)]
    pub first_seen: BTreeMap<String, String>,
    /// Pull requests with Quorum comments → when they were last active,
    /// so reactions (which have no webhook and do not bump a comment's
    /// `updated_at`) are polled while they can still arrive.
    #[serde(default)]
    pub watched_prs: BTreeMap<u64, String>,
    /// Humans' review threads on merged pull requests, by first comment:
    /// what `quorum memory search` asks ("review as @alice would").
    #[serde(default)]
    pub threads: BTreeMap<u64, crate::past::PastThread>,
    /// Items from `quorum memory import`: they win over learned items of
    /// the same id, as a committed file does (which wins over both).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub imported: Vec<MemoryItem>,
    /// Sources of evidence ([`Source::key`]) the default branch no longer
    /// holds, from the last check (the indexer's, on each new commit of it).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub gone: BTreeMap<String, Gone>,
}

impl MemoryState {
    /// Replaces what one pull request says (idempotent by construction).
    pub fn set_pr_evidence(&mut self, pr: u64, observations: Vec<Observation>) {
        if observations.is_empty() {
            self.evidence.remove(&pr);
        } else {
            self.evidence.insert(pr, observations);
        }
    }

    /// Every distinct source the evidence was given on.
    pub fn sources(&self) -> BTreeSet<&Source> {
        self.evidence
            .values()
            .flatten()
            .filter_map(|o| o.source.as_ref())
            .collect()
    }

    /// Checks every source against `files` (path → content, all of
    /// `commit`'s text files) and records what the commit no longer holds.
    pub fn check_sources(&mut self, files: &BTreeMap<&str, &str>, commit: &str, now: DateTime<Utc>) -> SourceCheck {
        let sources: Vec<Source> = self.sources().into_iter().cloned().collect();
        crate::sources::check(&mut self.gone, sources, files, commit, &now.to_rfc3339())
    }

    pub fn decide(&mut self, id: &str, status: Status, by: &str, now: DateTime<Utc>) {
        self.decisions.insert(
            id.to_string(),
            Decision {
                status,
                by: by.to_string(),
                at: now.to_rfc3339(),
            },
        );
    }
}

/// Parses an RFC 3339 time; `None` for anything else.
pub fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s).ok().map(|t| t.with_timezone(&Utc))
}

/// What each pull request said, once: the strongest voices decide —
/// trusted people's explicit words (replies, reactions) first, then their
/// inferred signals (a resolve with or without a change), then everyone
/// else's in the same order. Within a tier the majority wins; a tie says
/// nothing. `(verdict, whether trusted people gave it)`.
pub fn pr_verdicts(obs: &[&Observation]) -> BTreeMap<u64, (Verdict, bool)> {
    let mut by_pr: BTreeMap<u64, Vec<&Observation>> = BTreeMap::new();
    for o in obs {
        by_pr.entry(o.pr).or_default().push(o);
    }
    let mut out = BTreeMap::new();
    for (pr, list) in by_pr {
        for (trusted, inferred) in [(true, false), (true, true), (false, false), (false, true)] {
            let tier: Vec<&Observation> = list
                .iter()
                .copied()
                .filter(|o| o.who.association.is_trusted() == trusted && o.inferred == inferred)
                .collect();
            if tier.is_empty() {
                continue;
            }
            if let Some(v) = majority(&tier) {
                out.insert(pr, (v, trusted));
            }
            break;
        }
    }
    out
}

fn majority(tier: &[&Observation]) -> Option<Verdict> {
    let mut counts: BTreeMap<Verdict, usize> = BTreeMap::new();
    for o in tier {
        *counts.entry(o.verdict).or_default() += 1;
    }
    let mut ranked: Vec<(Verdict, usize)> = counts.into_iter().collect();
    ranked.sort_by_key(|r| std::cmp::Reverse(r.1));
    match ranked.as_slice() {
        [(v, _)] => Some(*v),
        [(v, a), (_, b), ..] if a > b => Some(*v),
        _ => None,
    }
}

/// Where a kind of finding was dismissed, as the scopes items get: the
/// deepest directory whose evidence reaches the gates, taken greedily, so
/// dismissals in `tools/` and `tools/sync/` make one item for `tools/**`
/// while two in `app/cleanup/` stay `app/cleanup/**`. Never wider than a
/// top-level directory: a repository-wide suppression is for an operator
/// or a committed file to make. A file at the root is its own scope.
fn suppress_scopes<'a>(
    obs: &[&'a Observation],
    state: &MemoryState,
    policy: &Policy,
) -> Vec<(String, Vec<&'a Observation>)> {
    let dir_of = |o: &Observation| o.key.scope.strip_suffix("/**").map(str::to_string);
    let inside = |dir: &str, o: &Observation| dir_of(o).is_some_and(|d| d == dir || d.starts_with(&format!("{dir}/")));
    let mut out = vec![];
    // Root files: as they are.
    let mut roots: BTreeMap<&str, Vec<&Observation>> = BTreeMap::new();
    for o in obs.iter().filter(|o| dir_of(o).is_none()) {
        roots.entry(o.key.scope.as_str()).or_default().push(o);
    }
    out.extend(roots.into_iter().map(|(s, v)| (s.to_string(), v)));
    let mut left: Vec<&Observation> = obs.iter().copied().filter(|o| dir_of(o).is_some()).collect();
    loop {
        let mut candidates: BTreeSet<String> = BTreeSet::new();
        for o in &left {
            let d = dir_of(o).expect("filtered");
            let parts: Vec<&str> = d.split('/').collect();
            for n in 1..=parts.len() {
                candidates.insert(parts[..n].join("/"));
            }
        }
        let mut by_depth: Vec<String> = candidates.into_iter().collect();
        by_depth.sort_by_key(|d| std::cmp::Reverse(d.matches('/').count()));
        let chosen = by_depth.into_iter().find(|dir| {
            let within: Vec<&Observation> = left.iter().copied().filter(|o| inside(dir, o)).collect();
            let verdicts = pr_verdicts(&within);
            let prs = |v: Verdict| verdicts.values().filter(|(x, _)| *x == v).count();
            let (rejected, accepted) = (prs(Verdict::Rejected), prs(Verdict::Accepted));
            let decided = state.decisions.contains_key(
                &ItemKey {
                    scope: format!("{dir}/**"),
                    ..within[0].key.clone()
                }
                .id(),
            );
            decided || (rejected >= policy.min_prs.max(1) && accepted < rejected)
        });
        let Some(dir) = chosen else { break };
        let (within, rest): (Vec<&Observation>, Vec<&Observation>) = left.into_iter().partition(|o| inside(&dir, o));
        out.push((format!("{dir}/**"), within));
        left = rest;
    }
    out
}

/// The items the evidence supports, with operator decisions applied.
///
/// A kind of finding becomes a `suppress` item when it was rejected in at
/// least `min_prs` pull requests and taken in fewer PRs than it was
/// rejected in (a team that fixes it as often as it dismisses it has not
/// decided). It is `active` only when trusted people (owner, member,
/// collaborator) rejected it in `min_prs` PRs and the approval delay has
/// passed since; otherwise `suggested`. An operator's approve or retire
/// wins over the gates; an active item that has not matched for
/// `stale_after_days` returns to `suggested`.
pub fn derive_items(state: &MemoryState, policy: &Policy, now: DateTime<Utc>) -> Vec<MemoryItem> {
    let mut by_key: BTreeMap<ItemKey, Vec<&Observation>> = BTreeMap::new();
    let mut suppress: BTreeMap<ItemKey, Vec<&Observation>> = BTreeMap::new();
    for obs in state.evidence.values().flatten() {
        if obs.key.kind == Kind::Suppress {
            let identity = ItemKey {
                scope: String::new(),
                ..obs.key.clone()
            };
            suppress.entry(identity).or_default().push(obs);
        } else {
            by_key.entry(obs.key.clone()).or_default().push(obs);
        }
    }
    for (identity, obs) in suppress {
        for (scope, within) in suppress_scopes(&obs, state, policy) {
            by_key.insert(
                ItemKey {
                    scope,
                    ..identity.clone()
                },
                within,
            );
        }
    }
    let mut items = vec![];
    for (key, obs) in &by_key {
        let key = key.clone();
        // What speaks for the item: dismissals of a finding (suppress), or
        // reviewers' asks (avoid); only findings can also be taken.
        let support = match key.kind {
            Kind::Suppress => Verdict::Rejected,
            Kind::Avoid | Kind::Prefer => Verdict::Asked,
        };
        let verdicts = pr_verdicts(obs);
        let prs = |verdict: Verdict, trusted_only: bool| -> BTreeSet<u64> {
            verdicts
                .iter()
                .filter(|(_, (v, trusted))| *v == verdict && (!trusted_only || *trusted))
                .map(|(pr, _)| *pr)
                .collect()
        };
        let rejected = prs(support, false);
        let accepted = prs(Verdict::Accepted, false);
        let id = key.id();
        let decision = state.decisions.get(&id);
        if decision.is_none() && (rejected.len() < policy.min_prs.max(1) || accepted.len() >= rejected.len()) {
            continue;
        }
        let trusted = prs(support, true);
        // When the gates were met: the time of the trusted rejection that
        // made up the `min_prs`-th PR.
        let mut trusted_times: Vec<DateTime<Utc>> = trusted
            .iter()
            .filter_map(|pr| {
                obs.iter()
                    .filter(|o| o.pr == *pr && o.verdict == support && o.who.association.is_trusted())
                    .filter_map(|o| parse_time(&o.at))
                    .min()
            })
            .collect();
        trusted_times.sort();
        let gates_met_at = trusted_times.get(policy.min_prs.max(1) - 1).copied();
        let (mut status, mut note) = match gates_met_at {
            Some(at) if now - at >= Duration::days(policy.approval_delay_days) => (Status::Active, None),
            Some(at) => (
                Status::Suggested,
                Some(format!(
                    "active after the approval delay, on {}",
                    (at + Duration::days(policy.approval_delay_days)).format("%Y-%m-%d")
                )),
            ),
            None => (
                Status::Suggested,
                Some(format!(
                    "needs evidence from an owner, member or collaborator in {} pull requests ({} so far)",
                    policy.min_prs,
                    trusted.len()
                )),
            ),
        };
        if let Some(d) = decision {
            status = d.status;
            note = Some(format!(
                "{} by {} on {}",
                d.status,
                d.by,
                d.at.get(..10).unwrap_or(&d.at)
            ));
        }
        let last_matched = state.last_matched.get(&id).cloned();
        if status == Status::Active {
            let since = last_matched
                .as_deref()
                .and_then(parse_time)
                .into_iter()
                .chain(decision.and_then(|d| parse_time(&d.at)))
                .chain(state.first_seen.get(&id).and_then(|s| parse_time(s)))
                .chain(gates_met_at)
                .max();
            if let Some(since) = since
                && now - since > Duration::days(policy.stale_after_days)
            {
                status = Status::Suggested;
                note = Some(format!(
                    "stale: not matched for {} days; approve again to re-activate",
                    (now - since).num_days()
                ));
            }
        }
        if status == Status::Active
            && let Some(stale) = gone_from_under(obs, support, &state.gone, decision)
        {
            status = Status::Suggested;
            note = Some(stale);
        }
        let evidence: Vec<EvidenceLink> = obs
            .iter()
            .filter(|o| o.verdict == support)
            .map(|o| EvidenceLink {
                pr: o.pr,
                url: o.url.clone(),
                who: o.who.login.clone(),
                association: o.who.association,
                how: o.how.clone(),
                at: o.at.clone(),
            })
            .collect();
        let text = match key.kind {
            Kind::Suppress => {
                let what = match (&key.rule, &key.title) {
                    (Some(rule), _) => format!("`{rule}` findings"),
                    (None, Some(title)) => format!("findings titled \"{title}\""),
                    (None, None) => "these findings".to_string(),
                };
                format!(
                    "{what} are not wanted in `{}`: rejected in {} pull requests",
                    key.scope,
                    rejected.len()
                )
            }
            Kind::Avoid | Kind::Prefer => {
                let mut asked: Vec<String> = obs
                    .iter()
                    .filter(|o| o.verdict == support)
                    .map(|o| format!("@{} in #{}", o.who.login, o.pr))
                    .collect();
                asked.dedup();
                let name = key
                    .pattern
                    .as_deref()
                    .map(crate::asks::identifier_of)
                    .unwrap_or_default();
                format!("Avoid `{name}` in `{}`, as {} asked", key.scope, asked.join(", "))
            }
        };
        items.push(MemoryItem {
            id,
            key: key.clone(),
            status,
            text,
            evidence,
            origin: Origin::Learned,
            note,
            last_matched,
        });
    }
    items
}

/// Why an item is stale by source, when it is: every line of code its
/// supporting evidence was given on is gone from the default branch (a
/// source the SCM did not name cannot be checked and keeps it), and no
/// operator approved it since the last of them went.
fn gone_from_under(
    obs: &[&Observation],
    support: Verdict,
    gone: &BTreeMap<String, Gone>,
    decision: Option<&Decision>,
) -> Option<String> {
    let sources: BTreeSet<&Source> = obs
        .iter()
        .filter(|o| o.verdict == support)
        .filter_map(|o| o.source.as_ref())
        .collect();
    if sources.is_empty() || obs.iter().any(|o| o.verdict == support && o.source.is_none()) {
        return None;
    }
    let mut went = vec![];
    for s in &sources {
        went.push(gone.get(&s.key())?);
    }
    let last = went.iter().filter_map(|g| parse_time(&g.at)).max()?;
    if decision.and_then(|d| parse_time(&d.at)).is_some_and(|d| d >= last) {
        return None;
    }
    let mut paths: Vec<&str> = went.iter().map(|g| g.path.as_str()).collect();
    paths.dedup();
    let how = if went.iter().all(|g| g.file_deleted) {
        "deleted"
    } else {
        "changed"
    };
    let commit = went
        .iter()
        .max_by_key(|g| g.at.as_str())
        .map(|g| g.commit.as_str())
        .unwrap_or("");
    Some(format!(
        "stale: the code it was learned on is gone ({} {how}, at {}); approve again to re-activate",
        paths.join(", "),
        commit.get(..12).unwrap_or(commit)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::association::Association;
    use crate::feedback::Person;

    fn obs(pr: u64, who: &str, association: Association, verdict: Verdict, at: &str) -> Observation {
        Observation {
            key: ItemKey::suppress_for(Some("sql-string-building"), "", "scripts/migrate.py"),
            verdict,
            how: "👎".into(),
            who: Person {
                login: who.into(),
                association,
            },
            pr,
            url: format!("https://github.com/o/r/pull/{pr}#discussion_r1"),
            at: at.into(),
            inferred: false,
            source: None,
        }
    }

    fn now() -> DateTime<Utc> {
        parse_time("2026-03-01T00:00:00Z").unwrap()
    }

    fn state(observations: Vec<Observation>) -> MemoryState {
        let mut s = MemoryState::default();
        for o in observations {
            s.evidence.entry(o.pr).or_default().push(o);
        }
        s
    }

    const JAN: &str = "2026-01-10T00:00:00Z";
    const FEB: &str = "2026-02-20T00:00:00Z";

    #[test]
    fn one_pull_request_is_a_one_off_and_teaches_nothing() {
        let s = state(vec![
            obs(1, "alice", Association::Member, Verdict::Rejected, JAN),
            obs(1, "bob", Association::Owner, Verdict::Rejected, JAN),
        ]);
        assert!(derive_items(&s, &Policy::default(), now()).is_empty());
    }

    #[test]
    fn trusted_rejections_in_two_prs_make_an_active_item_with_its_evidence() {
        let s = state(vec![
            obs(1, "alice", Association::Member, Verdict::Rejected, JAN),
            obs(2, "bob", Association::Owner, Verdict::Rejected, FEB),
        ]);
        let items = derive_items(&s, &Policy::default(), now());
        assert_eq!(items.len(), 1);
        let it = &items[0];
        assert_eq!(it.status, Status::Active, "{:?}", it.note);
        assert_eq!(it.key.scope, "scripts/**");
        assert_eq!(it.rejections_summary(), "rejected ×2 by @alice, @bob");
        assert_eq!(it.origin, Origin::Learned);
    }

    #[test]
    fn untrusted_voices_only_suggest() {
        let s = state(vec![
            obs(1, "carol", Association::Contributor, Verdict::Rejected, JAN),
            obs(2, "dan", Association::FirstTimeContributor, Verdict::Rejected, FEB),
            obs(2, "alice", Association::Member, Verdict::Rejected, FEB),
        ]);
        let items = derive_items(&s, &Policy::default(), now());
        assert_eq!(items[0].status, Status::Suggested);
        assert!(
            items[0].note.as_deref().unwrap().contains("(1 so far)"),
            "{:?}",
            items[0].note
        );
    }

    #[test]
    fn a_team_that_also_fixes_it_has_not_decided() {
        let s = state(vec![
            obs(1, "alice", Association::Member, Verdict::Rejected, JAN),
            obs(2, "bob", Association::Owner, Verdict::Rejected, FEB),
            obs(3, "bob", Association::Owner, Verdict::Accepted, FEB),
            obs(4, "alice", Association::Member, Verdict::Accepted, FEB),
        ]);
        assert!(derive_items(&s, &Policy::default(), now()).is_empty());
    }

    #[test]
    fn the_approval_delay_holds_an_item_as_suggested_until_it_passes() {
        let s = state(vec![
            obs(1, "alice", Association::Member, Verdict::Rejected, JAN),
            obs(2, "bob", Association::Owner, Verdict::Rejected, FEB),
        ]);
        let policy = Policy {
            approval_delay_days: 14,
            ..Policy::default()
        };
        let items = derive_items(&s, &policy, now());
        assert_eq!(items[0].status, Status::Suggested);
        assert!(
            items[0].note.as_deref().unwrap().contains("2026-03-06"),
            "{:?}",
            items[0].note
        );
        let later = parse_time("2026-03-07T00:00:00Z").unwrap();
        assert_eq!(derive_items(&s, &policy, later)[0].status, Status::Active);
    }

    #[test]
    fn an_item_whose_code_is_gone_from_the_default_branch_is_stale_until_approved_again() {
        let on = |o: Observation, path: &str, line: &str| Observation {
            source: Some(Source {
                path: path.into(),
                line: line.into(),
            }),
            ..o
        };
        let mut s = state(vec![
            on(
                obs(1, "alice", Association::Member, Verdict::Rejected, JAN),
                "scripts/migrate.py",
                "cur.execute(f\"DROP TABLE {name}\")",
            ),
            on(
                obs(2, "bob", Association::Owner, Verdict::Rejected, FEB),
                "scripts/seed.py",
                "cur.execute(\"INSERT \" + row)",
            ),
        ]);
        assert_eq!(s.sources().len(), 2);
        let status = |s: &MemoryState, at| {
            let it = &derive_items(s, &Policy::default(), at)[0];
            (it.status, it.note.clone().unwrap_or_default())
        };
        // Both lines still there (moved, re-indented): active.
        let both = BTreeMap::from([
            (
                "scripts/migrate.py",
                "def up(cur, name):\n    cur.execute(f\"DROP TABLE {name}\")\n",
            ),
            ("scripts/seed.py", "cur.execute(\"INSERT \" + row)\n"),
        ]);
        assert_eq!(s.check_sources(&both, "c1", now()).newly_gone, 0);
        assert_eq!(status(&s, now()).0, Status::Active);
        // One rewritten: the other still holds it up.
        let one = BTreeMap::from([
            (
                "scripts/migrate.py",
                "def up(cur, name):\n    cur.execute(sql.drop(name))\n",
            ),
            ("scripts/seed.py", "cur.execute(\"INSERT \" + row)\n"),
        ]);
        assert_eq!(s.check_sources(&one, "c2", now()).newly_gone, 1);
        assert_eq!(status(&s, now()).0, Status::Active);
        // Both gone (one rewritten, one file deleted): suggested, saying why.
        let none = BTreeMap::from([(
            "scripts/migrate.py",
            "def up(cur, name):\n    cur.execute(sql.drop(name))\n",
        )]);
        let c = s.check_sources(&none, "c3c3c3c3c3c3c3c3", now());
        assert_eq!((c.checked, c.newly_gone), (2, 1));
        let (st, note) = status(&s, now());
        assert_eq!(st, Status::Suggested);
        assert!(
            note.starts_with("stale: the code it was learned on is gone (scripts/migrate.py, scripts/seed.py changed, at c3c3c3c3c3c3)"),
            "{note}"
        );
        // An operator approving it after that re-activates it.
        let id = derive_items(&s, &Policy::default(), now())[0].id.clone();
        let later = now() + Duration::hours(1);
        s.decide(&id, Status::Active, "ops", later);
        assert_eq!(status(&s, later).0, Status::Active);
        // A source with no line (GitLab) cannot be checked: it keeps an item.
        let mut unknown = s.clone();
        unknown.decisions.clear();
        unknown.evidence.get_mut(&2).unwrap()[0].source = None;
        assert_eq!(status(&unknown, now()).0, Status::Active);
        // Reverted: the lines are back, nothing is gone.
        s.decisions.clear();
        assert_eq!(s.check_sources(&both, "c4", now()).back, 2);
        assert!(s.gone.is_empty());
        assert_eq!(status(&s, now()).0, Status::Active);
    }

    #[test]
    fn operators_decide_and_stale_items_return_to_suggested() {
        let mut s = state(vec![
            obs(1, "alice", Association::Member, Verdict::Rejected, JAN),
            obs(2, "bob", Association::Owner, Verdict::Rejected, FEB),
        ]);
        let id = derive_items(&s, &Policy::default(), now())[0].id.clone();
        s.decide(&id, Status::Retired, "ops", now());
        let items = derive_items(&s, &Policy::default(), now());
        assert_eq!(items[0].status, Status::Retired);
        assert!(items[0].note.as_deref().unwrap().starts_with("retired by ops"));

        // Approved, then not matched for longer than the policy allows.
        s.decide(&id, Status::Active, "ops", now());
        let policy = Policy {
            stale_after_days: 30,
            ..Policy::default()
        };
        let in_april = parse_time("2026-04-15T00:00:00Z").unwrap();
        let items = derive_items(&s, &policy, in_april);
        assert_eq!(items[0].status, Status::Suggested);
        assert!(items[0].note.as_deref().unwrap().starts_with("stale"));
        // A recent match keeps it active.
        s.last_matched.insert(id, "2026-04-10T00:00:00Z".into());
        assert_eq!(derive_items(&s, &policy, in_april)[0].status, Status::Active);
    }

    #[test]
    fn in_one_pull_request_trusted_words_outweigh_inferred_signals_and_outsiders() {
        let mut resolved = obs(1, "alice", Association::Member, Verdict::Accepted, JAN);
        resolved.inferred = true;
        let said = obs(1, "alice", Association::Member, Verdict::Rejected, JAN);
        let outsider = obs(2, "guest", Association::None, Verdict::Accepted, JAN);
        let owner = obs(2, "bob", Association::Owner, Verdict::Rejected, JAN);
        let tie_a = obs(3, "bob", Association::Owner, Verdict::Rejected, JAN);
        let tie_b = obs(3, "alice", Association::Member, Verdict::Accepted, JAN);
        let all = [&resolved, &said, &outsider, &owner, &tie_a, &tie_b];
        let v = pr_verdicts(&all);
        assert_eq!(v[&1], (Verdict::Rejected, true));
        assert_eq!(v[&2], (Verdict::Rejected, true));
        assert!(!v.contains_key(&3), "a tie says nothing");
        let only_outsiders = [&outsider];
        assert_eq!(pr_verdicts(&only_outsiders)[&2], (Verdict::Accepted, false));
    }

    fn at_path(pr: u64, who: &str, path: &str) -> Observation {
        Observation {
            key: ItemKey::suppress_for(Some("missing-timeout"), "", path),
            ..obs(pr, who, Association::Member, Verdict::Rejected, JAN)
        }
    }

    #[test]
    fn scopes_are_the_deepest_directory_holding_enough_evidence() {
        let scopes = |o: Vec<Observation>| -> Vec<String> {
            derive_items(&state(o), &Policy::default(), now())
                .into_iter()
                .map(|m| m.key.scope)
                .collect()
        };
        // Siblings under tools/: one item for tools/.
        assert_eq!(
            scopes(vec![
                at_path(1, "a", "tools/fetch.py"),
                at_path(2, "b", "tools/sync/mirror.py")
            ]),
            ["tools/**"]
        );
        // Two in one directory stay there, even with a third elsewhere in app/.
        assert_eq!(
            scopes(vec![
                at_path(1, "a", "app/cleanup/tmp.py"),
                at_path(2, "b", "app/cleanup/cache.py"),
                at_path(3, "c", "app/api/views.py"),
            ]),
            ["app/cleanup/**"]
        );
        // Never the whole repository by itself.
        assert!(scopes(vec![at_path(1, "a", "scripts/x.py"), at_path(2, "b", "tools/y.py")]).is_empty());
    }

    #[test]
    fn old_evidence_learned_today_is_not_stale() {
        let mut s = state(vec![
            obs(1, "alice", Association::Member, Verdict::Rejected, JAN),
            obs(2, "bob", Association::Owner, Verdict::Rejected, FEB),
        ]);
        let policy = Policy {
            stale_after_days: 30,
            ..Policy::default()
        };
        let december = parse_time("2026-12-01T00:00:00Z").unwrap();
        assert_eq!(derive_items(&s, &policy, december)[0].status, Status::Suggested);
        let id = derive_items(&s, &policy, december)[0].id.clone();
        s.first_seen.insert(id, "2026-11-20T00:00:00Z".into());
        assert_eq!(derive_items(&s, &policy, december)[0].status, Status::Active);
    }

    #[test]
    fn reading_a_pull_request_again_replaces_its_evidence() {
        let mut s = MemoryState::default();
        let o = obs(1, "alice", Association::Member, Verdict::Rejected, JAN);
        s.set_pr_evidence(1, vec![o.clone()]);
        s.set_pr_evidence(1, vec![o]);
        assert_eq!(s.evidence[&1].len(), 1);
        s.set_pr_evidence(1, vec![]);
        assert!(s.evidence.is_empty());
    }
}

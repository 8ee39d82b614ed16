//! The Redis store. Keys are namespaced under a prefix so several fleets (or
//! parallel tests) can share one server.
//!
//! | key | type | what |
//! |---|---|---|
//! | `{p}dedupe:{key}` | string | job id holding a dedupe claim (`SET NX`) |
//! | `{p}job:{id}` | string | the job record, JSON |
//! | `{p}jobs` | zset | job ids scored by creation time |
//! | `{p}jobs:repo:{repo}`, `{p}jobs:state:{state}`, `{p}jobs:repo-state:{repo}:{state}` | zset | the same, per filter of the run list |
//! | `{p}run:{id}` | hash | `state`, `repo`, `reason`, `agent:{role}`, `at:{state}` |
//! | `{p}results:{id}` | hash | agent → result JSON (`HSETNX`) |
//! | `{p}guard:{name}` | string | once-only guard (`SET NX`) |
//! | `{p}lease:{name}` | string | the holder of a lease that lapses (`SET PX` in a script: free or the same holder) |
//! | `{p}deadlines` | zset | job ids scored by flush deadline |
//! | `{p}review:{id}`, `{p}draft:{id}` | string | rendered review JSON |
//! | `{p}fps:{pr}` | set | fingerprints posted on a PR |
//! | `{p}index:{repo}` | hash | `ref`, `at` of the last index request |
//! | `{p}indexed` | zset | repositories scored by their last index request |

use std::collections::BTreeMap;

use async_trait::async_trait;
use quorum_core::{AgentRole, AgentStatus, RunState};
use quorum_events::AgentResult;
use redis::AsyncCommands;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use crate::{Claim, JobRecord, Result, RunFilter, RunRecord, StateStore, StoreError};

/// Moves a run to a state and its job id between the per-state indexes of
/// the run list, in one step: the old state is read here, so two services
/// setting states concurrently cannot leave the id in two state indexes.
/// With a state (`ARGV[3]`), also records when the run first entered it
/// (`ARGV[4]`, Unix ms; a retry re-entering it keeps the first) and, when
/// `ARGV[5]` is `1`, the reason `ARGV[6]`. `ARGV[3]` empty re-indexes the
/// current state (a job just stored). Keys are built in the script from the
/// prefix: one server, not a cluster.
const SET_STATE: &str = r#"
local p, id, new = ARGV[1], ARGV[2], ARGV[3]
local run = p .. 'run:' .. id
if new ~= '' then
  redis.call('HSETNX', run, 'at:' .. new, ARGV[4])
  if ARGV[5] == '1' then redis.call('HSET', run, 'reason', ARGV[6]) end
end
local old = redis.call('HGET', run, 'state')
local repo = redis.call('HGET', run, 'repo')
if new == '' then new = old end
if not new then return 0 end
if old and old ~= new then
  redis.call('ZREM', p .. 'jobs:state:' .. old, id)
  if repo then redis.call('ZREM', p .. 'jobs:repo-state:' .. repo .. ':' .. old, id) end
end
redis.call('HSET', run, 'state', new)
local score = redis.call('ZSCORE', p .. 'jobs', id)
if score then
  redis.call('ZADD', p .. 'jobs:state:' .. new, score, id)
  if repo then redis.call('ZADD', p .. 'jobs:repo-state:' .. repo .. ':' .. new, score, id) end
end
return 1
"#;

/// How long one command may wait for its reply. The client's default (500 ms)
/// failed the gateway's dedupe claims with "timed out" under a burst of 200
/// webhooks on a busy 2-core machine (`make bench-burst`): the reply was there,
/// the process had not polled it yet. A timed-out claim answers 503, so a
/// slower reply is the better failure.
const RESPONSE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);
/// How long a (re)connection attempt may take.
const CONNECTION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// A store on a Redis server, through a reconnecting connection manager.
#[derive(Clone)]
pub struct RedisStore {
    conn: ConnectionManager,
    prefix: String,
}

impl RedisStore {
    /// Connects to `url` (e.g. `redis://127.0.0.1:6379`); `prefix` namespaces every key.
    pub async fn connect(url: &str, prefix: &str) -> Result<Self> {
        let client = redis::Client::open(url)?;
        let config = ConnectionManagerConfig::new()
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_connection_timeout(Some(CONNECTION_TIMEOUT));
        let conn = ConnectionManager::new_with_config(client, config).await?;
        Ok(RedisStore {
            conn,
            prefix: prefix.to_string(),
        })
    }

    fn k(&self, parts: &[&str]) -> String {
        let mut s = self.prefix.clone();
        s.push_str(&parts.join(":"));
        s
    }

    fn c(&self) -> ConnectionManager {
        self.conn.clone()
    }

    /// The zset of job ids a filter of the run list reads.
    fn index(&self, filter: &RunFilter) -> String {
        match (&filter.repo, filter.state) {
            (None, None) => self.k(&["jobs"]),
            (Some(r), None) => self.k(&["jobs", "repo", r]),
            (None, Some(s)) => self.k(&["jobs", "state", s.as_str()]),
            (Some(r), Some(s)) => self.k(&["jobs", "repo-state", r, s.as_str()]),
        }
    }

    /// [`SET_STATE`]: `None` re-indexes the state the run is in.
    async fn set_state(&self, job_id: &str, state: Option<RunState>, reason: Option<&str>) -> Result<()> {
        static SCRIPT: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| redis::Script::new(SET_STATE));
        let _: i64 = SCRIPT
            .arg(&self.prefix)
            .arg(job_id)
            .arg(state.map(|s| s.as_str()).unwrap_or(""))
            .arg(crate::model::now_ms())
            .arg(if reason.is_some() { "1" } else { "0" })
            .arg(reason.unwrap_or(""))
            .invoke_async(&mut self.c())
            .await?;
        Ok(())
    }
}

fn parse<T: serde::de::DeserializeOwned>(key: &str, s: &str) -> Result<T> {
    serde_json::from_str(s).map_err(|e| StoreError::Corrupt {
        key: key.to_string(),
        reason: e.to_string(),
    })
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("store records always serialise")
}

#[async_trait]
impl StateStore for RedisStore {
    async fn claim_dedupe(&self, key: &str, job_id: &str) -> Result<Claim> {
        let k = self.k(&["dedupe", key]);
        let set: bool = redis::cmd("SET")
            .arg(&k)
            .arg(job_id)
            .arg("NX")
            .query_async::<Option<String>>(&mut self.c())
            .await?
            .is_some();
        if set {
            return Ok(Claim::Claimed);
        }
        let existing: Option<String> = self.c().get(&k).await?;
        match existing {
            Some(id) => Ok(Claim::Existing(id)),
            // Released between our SET and GET: try once more.
            None => self.claim_dedupe(key, job_id).await,
        }
    }

    async fn release_dedupe(&self, key: &str) -> Result<()> {
        let _: () = self.c().del(self.k(&["dedupe", key])).await?;
        Ok(())
    }

    async fn put_job(&self, job: &JobRecord) -> Result<()> {
        let id = &job.request.job_id;
        let run = self.k(&["run", id]);
        let mut pipe = redis::pipe();
        pipe.atomic()
            .set(self.k(&["job", id]), json(job))
            .zadd(self.k(&["jobs"]), id, job.created_ms)
            .zadd(
                self.k(&["jobs", "repo", &job.request.repo.full_name]),
                id,
                job.created_ms,
            )
            .hset(&run, "repo", &job.request.repo.full_name)
            .hset_nx(&run, "state", RunState::Queued.as_str())
            .hset_nx(&run, "at:queued", job.created_ms);
        for a in &job.request.policy.agents {
            pipe.hset_nx(&run, format!("agent:{a}"), AgentStatus::Pending.as_str());
        }
        let _: () = pipe.query_async(&mut self.c()).await?;
        // Into the state index of whatever state the run is in (a job stored
        // again after it moved on stays where it is).
        self.set_state(id, None, None).await
    }

    async fn get_job(&self, job_id: &str) -> Result<Option<JobRecord>> {
        let k = self.k(&["job", job_id]);
        let v: Option<String> = self.c().get(&k).await?;
        v.map(|s| parse(&k, &s)).transpose()
    }

    async fn list_jobs(&self, filter: &RunFilter, offset: usize, limit: usize) -> Result<Vec<String>> {
        if limit == 0 {
            return Ok(vec![]);
        }
        // ZREVRANGE is O(log N + limit): a deep page costs what the first does.
        let (start, stop) = (offset as isize, (offset + limit) as isize - 1);
        Ok(self.c().zrevrange(self.index(filter), start, stop).await?)
    }

    async fn count_jobs(&self, filter: &RunFilter) -> Result<usize> {
        Ok(self.c().zcard(self.index(filter)).await?)
    }

    async fn set_run_state(&self, job_id: &str, state: RunState, reason: Option<&str>) -> Result<()> {
        self.set_state(job_id, Some(state), reason).await
    }

    async fn set_agent_status(&self, job_id: &str, agent: AgentRole, status: AgentStatus) -> Result<()> {
        let k = self.k(&["run", job_id]);
        let mut c = self.c();
        let _: () = c.hset(&k, format!("agent:{agent}"), status.as_str()).await?;
        let _: () = c.hset_nx(&k, "state", RunState::Running.as_str()).await?;
        Ok(())
    }

    async fn get_run(&self, job_id: &str) -> Result<Option<RunRecord>> {
        let k = self.k(&["run", job_id]);
        let h: BTreeMap<String, String> = self.c().hgetall(&k).await?;
        if h.is_empty() {
            return Ok(None);
        }
        let corrupt = |reason: String| StoreError::Corrupt { key: k.clone(), reason };
        let state = h
            .get("state")
            .ok_or_else(|| corrupt("no state".into()))?
            .parse::<RunState>()
            .map_err(corrupt)?;
        let mut agents = BTreeMap::new();
        let mut timeline = BTreeMap::new();
        for (field, v) in &h {
            if let Some(state) = field.strip_prefix("at:") {
                let ms = v.parse::<u64>().map_err(|e| corrupt(format!("{field}: {e}")))?;
                timeline.insert(state.to_string(), ms);
            }
            if let Some(role) = field.strip_prefix("agent:") {
                let role: AgentRole = role.parse().map_err(corrupt)?;
                let status: AgentStatus = parse(&k, &format!("\"{v}\""))?;
                agents.insert(role, status);
            }
        }
        Ok(Some(RunRecord {
            job_id: job_id.to_string(),
            state,
            agents,
            reason: h.get("reason").cloned(),
            timeline,
        }))
    }

    async fn put_result(&self, result: &AgentResult) -> Result<bool> {
        let k = self.k(&["results", &result.job_id]);
        Ok(self.c().hset_nx(&k, result.agent.as_str(), json(result)).await?)
    }

    async fn get_results(&self, job_id: &str) -> Result<BTreeMap<AgentRole, AgentResult>> {
        let k = self.k(&["results", job_id]);
        let h: BTreeMap<String, String> = self.c().hgetall(&k).await?;
        let mut out = BTreeMap::new();
        for (agent, v) in h {
            let role: AgentRole = agent
                .parse()
                .map_err(|reason| StoreError::Corrupt { key: k.clone(), reason })?;
            out.insert(role, parse(&k, &v)?);
        }
        Ok(out)
    }

    async fn acquire_guard(&self, name: &str) -> Result<bool> {
        let set: Option<String> = redis::cmd("SET")
            .arg(self.k(&["guard", name]))
            .arg("1")
            .arg("NX")
            .query_async(&mut self.c())
            .await?;
        Ok(set.is_some())
    }

    async fn release_guard(&self, name: &str) -> Result<()> {
        let _: () = self.c().del(self.k(&["guard", name])).await?;
        Ok(())
    }

    async fn acquire_lease(&self, name: &str, holder: &str, ttl_ms: u64) -> Result<bool> {
        // One script, so "free or mine" and the renewal cannot interleave
        // with another holder's take.
        let taken: i64 = redis::Script::new(
            r"
            local who = redis.call('GET', KEYS[1])
            if who == false then
                redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
                return 1
            elseif who == ARGV[1] then
                redis.call('PEXPIRE', KEYS[1], ARGV[2])
                return 1
            end
            return 0
            ",
        )
        .key(self.k(&["lease", name]))
        .arg(holder)
        .arg(ttl_ms.max(1))
        .invoke_async(&mut self.c())
        .await?;
        Ok(taken == 1)
    }

    async fn release_lease(&self, name: &str, holder: &str) -> Result<()> {
        let _: i64 = redis::Script::new(
            r"
            if redis.call('GET', KEYS[1]) == ARGV[1] then
                return redis.call('DEL', KEYS[1])
            end
            return 0
            ",
        )
        .key(self.k(&["lease", name]))
        .arg(holder)
        .invoke_async(&mut self.c())
        .await?;
        Ok(())
    }

    async fn mark_pending(&self, job_id: &str, at_ms: u64) -> Result<()> {
        let _: () = self.c().zadd(self.k(&["deadlines"]), job_id, at_ms).await?;
        Ok(())
    }

    async fn pending_before(&self, now_ms: u64) -> Result<Vec<String>> {
        Ok(self.c().zrangebyscore(self.k(&["deadlines"]), 0u64, now_ms).await?)
    }

    async fn clear_pending(&self, job_id: &str) -> Result<()> {
        let _: () = self.c().zrem(self.k(&["deadlines"]), job_id).await?;
        Ok(())
    }

    async fn put_review(&self, job_id: &str, review: &str) -> Result<()> {
        let _: () = self.c().set(self.k(&["review", job_id]), review).await?;
        Ok(())
    }

    async fn get_review(&self, job_id: &str) -> Result<Option<String>> {
        Ok(self.c().get(self.k(&["review", job_id])).await?)
    }

    async fn put_draft(&self, job_id: &str, review: &str) -> Result<()> {
        let _: () = self.c().set(self.k(&["draft", job_id]), review).await?;
        Ok(())
    }

    async fn get_draft(&self, job_id: &str) -> Result<Option<String>> {
        Ok(self.c().get(self.k(&["draft", job_id])).await?)
    }

    async fn delete_draft(&self, job_id: &str) -> Result<()> {
        let _: () = self.c().del(self.k(&["draft", job_id])).await?;
        Ok(())
    }

    async fn add_fingerprints(&self, pr_key: &str, fps: &[String]) -> Result<()> {
        if fps.is_empty() {
            return Ok(());
        }
        let _: () = self.c().sadd(self.k(&["fps", pr_key]), fps).await?;
        Ok(())
    }

    async fn fingerprints(&self, pr_key: &str) -> Result<Vec<String>> {
        let mut v: Vec<String> = self.c().smembers(self.k(&["fps", pr_key])).await?;
        v.sort();
        Ok(v)
    }

    async fn record_index_request(&self, repo: &str, git_ref: &str, at_ms: u64) -> Result<()> {
        let k = self.k(&["index", repo]);
        let _: () = redis::pipe()
            .hset(&k, "ref", git_ref)
            .hset(&k, "at", at_ms)
            .zadd(self.k(&["indexed"]), repo, at_ms)
            .query_async(&mut self.c())
            .await?;
        Ok(())
    }

    async fn indexed_repos(&self, limit: usize) -> Result<Vec<String>> {
        if limit == 0 {
            return Ok(vec![]);
        }
        Ok(self.c().zrevrange(self.k(&["indexed"]), 0, limit as isize - 1).await?)
    }

    async fn last_index_request(&self, repo: &str) -> Result<Option<(String, u64)>> {
        let k = self.k(&["index", repo]);
        let h: BTreeMap<String, String> = self.c().hgetall(&k).await?;
        match (h.get("ref"), h.get("at").and_then(|a| a.parse().ok())) {
            (Some(r), Some(at)) => Ok(Some((r.clone(), at))),
            _ => Ok(None),
        }
    }

    async fn put_graph(&self, repo: &str, commit: &str, blob: &[u8]) -> Result<()> {
        let _: () = self.c().set(self.k(&["graph", repo, commit]), blob).await?;
        Ok(())
    }

    async fn get_graph(&self, repo: &str, commit: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.c().get(self.k(&["graph", repo, commit])).await?)
    }

    async fn set_branch_graph(&self, repo: &str, branch: &str, commit: &str) -> Result<()> {
        let _: () = self.c().hset(self.k(&["graph-branches", repo]), branch, commit).await?;
        Ok(())
    }

    async fn put_memory(&self, repo: &str, state_json: &str) -> Result<()> {
        let _: () = self.c().set(self.k(&["memory", repo]), state_json).await?;
        Ok(())
    }

    async fn get_memory(&self, repo: &str) -> Result<Option<String>> {
        Ok(self.c().get(self.k(&["memory", repo])).await?)
    }

    async fn touch_memory_item(&self, repo: &str, item_id: &str, at: &str) -> Result<()> {
        let _: () = self.c().hset(self.k(&["memory-matched", repo]), item_id, at).await?;
        Ok(())
    }

    async fn memory_matches(&self, repo: &str) -> Result<BTreeMap<String, String>> {
        Ok(self.c().hgetall(self.k(&["memory-matched", repo])).await?)
    }

    async fn branch_graph(&self, repo: &str, branch: &str) -> Result<Option<String>> {
        Ok(self.c().hget(self.k(&["graph-branches", repo]), branch).await?)
    }
}

//! `quorum memory`: harvest, list, decide, export/import and ask review
//! memory (F-MEM-1..3). State lives in the fleet's Redis when `REDIS_URL`
//! is set (where the critic reads it), else in a JSON file per repository
//! under `--state-dir` (for trying it out, or a team without Redis).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use async_trait::async_trait;
use quorum_memory::ingest::{Checkpoint, IngestOptions, ingest};
use quorum_memory::{
    Asker, Association, Learned, MemoryFile, MemoryItem, MemoryState, Policy, Status, items_for, search,
};
use quorum_store::StateStore;

/// Where state is kept.
#[derive(clap::Args, Clone)]
pub struct StateArgs {
    /// The repository, `owner/name`.
    #[arg(long)]
    pub repo: String,
    /// The fleet's Redis: memory the critic applies lives there.
    #[arg(long, env = "REDIS_URL")]
    pub redis_url: Option<String>,
    #[arg(long, env = "QUORUM_REDIS_PREFIX", default_value = "quorum:")]
    pub redis_prefix: String,
    /// Without Redis: a directory of JSON state files, one per repository.
    #[arg(long, env = "QUORUM_MEMORY_DIR")]
    pub state_dir: Option<PathBuf>,
}

#[derive(clap::Subcommand)]
pub enum MemoryCommand {
    /// Harvest review threads and answers to Quorum's comments from GitHub
    /// (GITHUB_TOKEN or an App; GITHUB_API_URL for Enterprise) or GitLab
    /// (GITLAB_TOKEN, GITLAB_URL; `--repo` is the project path).
    Ingest {
        #[command(flatten)]
        state: StateArgs,
        #[command(flatten)]
        github: quorum_scm::github::GitHubArgs,
        #[command(flatten)]
        gitlab: quorum_scm::gitlab::GitLabArgs,
        /// Sweep from this time (RFC 3339, or a date `2026-01-31`) instead of the checkpoint.
        #[arg(long)]
        since: Option<String>,
        /// Read at most this many pull requests (the next run goes on).
        #[arg(long)]
        max_prs: Option<usize>,
        /// Pull requests read at once.
        #[arg(long, default_value_t = 4)]
        concurrency: usize,
        /// Answers that cannot change are kept here between runs.
        #[arg(long, env = "QUORUM_HTTP_CACHE")]
        cache_dir: Option<PathBuf>,
        /// A checkout of the default branch: every line of code evidence was
        /// given on is looked up in it, and an item whose lines are all gone
        /// turns stale (as the indexer does on each push).
        #[arg(long)]
        checkout: Option<PathBuf>,
        /// The commit `--checkout` holds (default: its `HEAD`, read with git).
        #[arg(long, requires = "checkout")]
        commit: Option<String>,
        /// The hybrid index whose `reviews` collection the threads are
        /// embedded into (`--search off`: memory state only).
        #[command(flatten)]
        search: quorum_search::SearchArgs,
    },
    /// List memory items: status, scope, evidence.
    List {
        #[command(flatten)]
        state: StateArgs,
        #[arg(long)]
        json: bool,
    },
    /// Make a suggested (or retired) item active.
    Approve {
        #[command(flatten)]
        state: StateArgs,
        id: String,
    },
    /// Retire an item: never applied, never re-learned.
    Retire {
        #[command(flatten)]
        state: StateArgs,
        id: String,
    },
    /// Write the items as `.quorum/memory.yaml` (to review and commit).
    Export {
        #[command(flatten)]
        state: StateArgs,
        /// The file to write (default: stdout).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Read a memory file: its items win over learned ones.
    Import {
        #[command(flatten)]
        state: StateArgs,
        file: PathBuf,
    },
    /// Ask past reviews: as a person, a group, or a panel of the top reviewers.
    Search {
        #[command(flatten)]
        state: StateArgs,
        /// Review as this person would.
        #[arg(long = "as", conflicts_with_all = ["group", "panel"])]
        person: Option<String>,
        /// Review as people of these associations would (MEMBER,OWNER,…).
        #[arg(long, value_delimiter = ',')]
        group: Vec<String>,
        /// A panel of the N reviewers with most threads near `--file`.
        #[arg(long, num_args = 0..=1, default_missing_value = "3")]
        panel: Option<usize>,
        /// The file the question is about.
        #[arg(long)]
        file: Option<String>,
        /// A diff to ask about (its text joins the query).
        #[arg(long)]
        diff: Option<PathBuf>,
        #[arg(long, default_value_t = 5)]
        limit: usize,
        #[arg(long)]
        json: bool,
        /// The hybrid index whose `reviews` collection ranks the threads
        /// (`--search off`, or no thread embedded yet: word matches).
        #[command(flatten)]
        search: quorum_search::SearchArgs,
        /// What to ask.
        query: Vec<String>,
    },
}

/// Memory state on Redis (under a lease) or in a file.
enum StateHome {
    Store(Arc<dyn StateStore>),
    File(PathBuf),
}

/// A lease long enough for one batch; a crashed holder frees it by itself.
const LEASE_MS: u64 = 120_000;
/// This process, in the memory lease.
static LEASE_HOLDER: std::sync::LazyLock<String> = std::sync::LazyLock::new(quorum_store::new_lease_holder);

impl StateHome {
    async fn open(a: &StateArgs) -> anyhow::Result<StateHome> {
        // `owner/name` on GitHub; GitLab projects nest (`group/sub/name`).
        quorum_core::job::validate_project_path(&a.repo).map_err(anyhow::Error::msg)?;
        match (a.redis_url.as_deref().filter(|u| !u.trim().is_empty()), &a.state_dir) {
            (Some(url), _) => Ok(StateHome::Store(
                quorum_store::connect(Some(url), &a.redis_prefix).await?,
            )),
            (None, dir) => {
                let dir = match dir {
                    Some(d) => d.clone(),
                    None => default_dir()?,
                };
                std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
                Ok(StateHome::File(dir.join(format!("{}.json", a.repo.replace('/', "__")))))
            }
        }
    }

    /// Takes the repository's memory lease (Redis), so two writers never
    /// interleave read-modify-write.
    async fn lock(&self, repo: &str) -> anyhow::Result<()> {
        if let StateHome::Store(s) = self
            && !s
                .acquire_lease(&quorum_memory::lease_name(repo), &LEASE_HOLDER, LEASE_MS)
                .await?
        {
            bail!("another `quorum memory` run holds the memory of {repo}; try again when it ends");
        }
        Ok(())
    }

    async fn unlock(&self, repo: &str) {
        if let StateHome::Store(s) = self
            && let Err(e) = s.release_lease(&quorum_memory::lease_name(repo), &LEASE_HOLDER).await
        {
            tracing::warn!(error = %e, "memory lease not released; it lapses by itself");
        }
    }

    async fn load(&self, repo: &str) -> anyhow::Result<MemoryState> {
        let json = match self {
            StateHome::Store(s) => s.get_memory(repo).await?,
            StateHome::File(p) => match std::fs::read_to_string(p) {
                Ok(t) => Some(t),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(e).with_context(|| format!("reading {}", p.display())),
            },
        };
        let mut state: MemoryState = match json {
            Some(j) => serde_json::from_str(&j).context("the stored memory state is not readable")?,
            None => MemoryState::default(),
        };
        if let StateHome::Store(s) = self {
            state.last_matched = s.memory_matches(repo).await?;
        }
        Ok(state)
    }

    async fn save(&self, repo: &str, state: &MemoryState) -> Result<(), String> {
        let json = serde_json::to_string(state).map_err(|e| quorum_core::error::chain(&e))?;
        match self {
            StateHome::Store(s) => s
                .put_memory(repo, &json)
                .await
                .map_err(|e| quorum_core::error::chain(&e)),
            StateHome::File(p) => {
                let tmp = p.with_extension("json.tmp");
                std::fs::write(&tmp, json)
                    .and_then(|()| std::fs::rename(&tmp, p))
                    .map_err(|e| format!("{}: {e}", p.display()))
            }
        }
    }
}

/// The memory `quorum mcp --memory` answers `past_reviews` from, read
/// afresh on each call (an ingest meanwhile is seen).
pub async fn memory_source(a: &StateArgs) -> anyhow::Result<Arc<dyn quorum_mcp::MemorySource>> {
    struct Source {
        home: StateHome,
        repo: String,
    }
    #[async_trait]
    impl quorum_mcp::MemorySource for Source {
        async fn state(&self) -> Result<MemoryState, String> {
            self.home.load(&self.repo).await.map_err(|e| format!("{e:#}"))
        }

        fn repo(&self) -> Option<&str> {
            Some(&self.repo)
        }
    }
    Ok(Arc::new(Source {
        home: StateHome::open(a).await?,
        repo: a.repo.clone(),
    }))
}

fn default_dir() -> anyhow::Result<PathBuf> {
    let base = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .context("set --state-dir (or HOME)")?;
    Ok(base.join("quorum/memory"))
}

struct Saver<'a> {
    home: &'a StateHome,
    repo: &'a str,
}

#[async_trait]
impl Checkpoint for Saver<'_> {
    async fn save(&self, state: &MemoryState) -> Result<(), String> {
        self.home.save(self.repo, state).await
    }
}

/// Checks every line evidence was given on against the files of a local
/// checkout: only the files those lines name are read; a path that is not
/// there (or could not be: `../x`) counts as deleted.
fn check_sources_in(
    dir: &std::path::Path,
    commit: &str,
    st: &mut quorum_memory::MemoryState,
    now: chrono::DateTime<chrono::Utc>,
) -> anyhow::Result<quorum_memory::SourceCheck> {
    let paths: std::collections::BTreeSet<String> = st.sources().into_iter().map(|s| s.path.clone()).collect();
    let mut read = Vec::new();
    for p in paths {
        if quorum_scm::validate_path(&p).is_err() {
            continue;
        }
        match std::fs::read_to_string(dir.join(&p)) {
            Ok(text) => read.push((p, text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(anyhow::anyhow!("--checkout: reading {p}: {e}")),
        }
    }
    let files: std::collections::BTreeMap<&str, &str> = read.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    Ok(st.check_sources(&files, commit, now))
}

/// Runs one `quorum memory` command; `Ok(false)` when it did its work but
/// some of it failed (the exit code says so).
pub async fn run(cmd: MemoryCommand) -> anyhow::Result<bool> {
    let now = chrono::Utc::now();
    let policy = Policy::default();
    match cmd {
        MemoryCommand::Ingest {
            state,
            github,
            gitlab,
            since,
            max_prs,
            concurrency,
            cache_dir,
            checkout,
            commit,
            search: search_args,
        } => {
            // The checkout's commit first: a wrong directory fails before any request.
            let checkout_commit = match (&checkout, commit) {
                (Some(_), Some(c)) => Some(c),
                (Some(dir), None) => Some(
                    quorum_scm::LocalGit::open(dir)
                        .with_context(|| {
                            format!(
                                "--checkout {}: pass --commit if it is not a git checkout",
                                dir.display()
                            )
                        })?
                        .resolve("HEAD")
                        .await
                        .with_context(|| format!("--checkout {}: reading HEAD", dir.display()))?,
                ),
                (None, _) => None,
            };
            let since = since.map(|s| normalise_since(&s)).transpose()?;
            let cache = match cache_dir {
                Some(d) => quorum_scm::HttpCache::on_disk(&d).with_context(|| format!("cache {}", d.display()))?,
                None => quorum_scm::HttpCache::in_memory(),
            };
            let source: Box<dyn quorum_memory::HistorySource> = match (github.config()?, gitlab.config()?) {
                (Some(_), Some(_)) => {
                    bail!("both GitHub and GitLab are configured: ingest reads one; unset the other's token")
                }
                (Some(c), None) => Box::new(quorum_scm::github::GitHubHistory::new(
                    Arc::new(quorum_scm::github::GitHub::new(c)?),
                    cache,
                )),
                (None, Some(c)) => Box::new(quorum_scm::gitlab::GitLabHistory::new(
                    Arc::new(quorum_scm::gitlab::GitLab::new(c)?),
                    cache,
                )),
                (None, None) => {
                    bail!("no SCM is configured: set GITHUB_TOKEN (or GITHUB_APP_ID with its key), or GITLAB_TOKEN")
                }
            };
            let home = StateHome::open(&state).await?;
            home.lock(&state.repo).await?;
            let result = async {
                let mut st = home.load(&state.repo).await?;
                let opts = IngestOptions {
                    max_prs,
                    since,
                    concurrency,
                    now,
                    ..Default::default()
                };
                let bar = crate::progress::LazyBar::new("harvest", "pull requests");
                let saver = Saver {
                    home: &home,
                    repo: &state.repo,
                };
                let summary = ingest(source.as_ref(), &saver, &state.repo, &mut st, &opts, &|d, t| {
                    bar.update(d, t)
                })
                .await?;
                if let (Some(dir), Some(commit)) = (&checkout, &checkout_commit) {
                    let checked = check_sources_in(dir, commit, &mut st, now)?;
                    saver.save(&st).await.map_err(anyhow::Error::msg)?;
                    println!(
                        "sources checked against {} at {}: {} lines, {} newly gone, {} back",
                        dir.display(),
                        &commit[..commit.len().min(12)],
                        checked.checked,
                        checked.newly_gone,
                        checked.back
                    );
                }
                anyhow::Ok((summary, st))
            }
            .await;
            home.unlock(&state.repo).await;
            let (summary, st) = result?;
            for s in &summary.skipped {
                eprintln!("skipped: {s}");
            }
            for f in &summary.failed {
                eprintln!("failed: {f}");
            }
            println!("{}", summary.line());
            let items = items_for(&st, &policy, now, None);
            let active = items.iter().filter(|m| m.status == Status::Active).count();
            println!(
                "{} memory items ({active} active); cursor {}",
                items.len(),
                summary.cursor.as_deref().unwrap_or("none")
            );
            if let Some(index) = quorum_search::open_index(&search_args).await? {
                let docs: Vec<quorum_search::reviews::ReviewDoc> = st.threads.values().map(Into::into).collect();
                let bar = crate::progress::LazyBar::new("embed", "threads");
                let s = index
                    .index_reviews(&state.repo, &docs, &|d, t| bar.update(d, t))
                    .await?;
                println!(
                    "reviews collection ({}): {} threads, {} embedded, {} unchanged, {} removed",
                    index.engine(),
                    s.threads,
                    s.embedded,
                    s.unchanged,
                    s.removed
                );
            }
            Ok(summary.failed.is_empty())
        }
        MemoryCommand::List { state, json } => {
            let home = StateHome::open(&state).await?;
            let items = items_for(&home.load(&state.repo).await?, &policy, now, None);
            if json {
                println!("{}", serde_json::to_string_pretty(&items)?);
            } else if items.is_empty() {
                eprintln!(
                    "no memory items for {} yet (`quorum memory ingest --repo {}`)",
                    state.repo, state.repo
                );
            } else {
                for m in &items {
                    print!("{}", render_item(m));
                }
            }
            Ok(true)
        }
        MemoryCommand::Approve { state, id } => decide(&state, &id, Status::Active).await,
        MemoryCommand::Retire { state, id } => decide(&state, &id, Status::Retired).await,
        MemoryCommand::Export { state, out } => {
            let home = StateHome::open(&state).await?;
            let items = items_for(&home.load(&state.repo).await?, &policy, now, None);
            let text = MemoryFile::render(&items, Learned::Apply);
            match out {
                Some(p) => {
                    std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
                    eprintln!("{} items written to {}", items.len(), p.display());
                }
                None => print!("{text}"),
            }
            Ok(true)
        }
        MemoryCommand::Import { state, file } => {
            let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
            let parsed = MemoryFile::parse(&text)?;
            let home = StateHome::open(&state).await?;
            home.lock(&state.repo).await?;
            let result = async {
                let mut st = home.load(&state.repo).await?;
                let n = parsed.items.len();
                // The file is the newer word on its items: earlier operator
                // decisions on them give way to it.
                for it in &parsed.items {
                    st.decisions.remove(&it.id);
                }
                st.imported = parsed.items;
                home.save(&state.repo, &st).await.map_err(anyhow::Error::msg)?;
                anyhow::Ok(n)
            }
            .await;
            home.unlock(&state.repo).await;
            eprintln!(
                "{} items imported from {}; they win over learned items",
                result?,
                file.display()
            );
            Ok(true)
        }
        MemoryCommand::Search {
            state,
            person,
            group,
            panel,
            file,
            diff,
            limit,
            json,
            search: search_args,
            query,
        } => {
            let asker = match (person, group.is_empty(), panel) {
                (Some(p), _, _) => Asker::Person(p),
                (None, false, _) => Asker::Group(
                    group
                        .iter()
                        .map(|g| Association::parse(g.trim()))
                        .collect::<Result<_, _>>()?,
                ),
                (None, true, Some(n)) => Asker::Panel(n.max(1)),
                (None, true, None) => Asker::Anyone,
            };
            let mut text = query.join(" ");
            if let Some(d) = diff {
                text.push(' ');
                text.push_str(&std::fs::read_to_string(&d).with_context(|| format!("reading {}", d.display()))?);
            }
            if text.trim().is_empty() && file.is_none() {
                bail!("say what to ask: a query, --diff FILE or --file PATH");
            }
            if let Some(f) = &file {
                text.push(' ');
                text.push_str(f);
            }
            let home = StateHome::open(&state).await?;
            let st = home.load(&state.repo).await?;
            let threads: Vec<_> = st.threads.values().cloned().collect();
            let hybrid = match quorum_search::open_index(&search_args).await? {
                Some(index) => {
                    quorum_search::reviews::ask(&index, &state.repo, &threads, &asker, &text, file.as_deref(), limit)
                        .await?
                }
                None => None,
            };
            eprintln!(
                "ranked by {} over {} past threads",
                if hybrid.is_some() {
                    "meaning and words (the reviews collection)"
                } else {
                    "words (no thread embedded yet)"
                },
                threads.len()
            );
            let hits = hybrid.unwrap_or_else(|| search(&threads, &asker, &text, file.as_deref(), limit));
            if json {
                println!("{}", serde_json::to_string_pretty(&hits)?);
            } else if hits.is_empty() {
                eprintln!("no past review answers that ({} threads harvested)", st.threads.len());
            } else {
                for h in &hits {
                    let t = &h.thread;
                    println!(
                        "{:.2}  @{} ({}) on {} in #{}  👍{} 👎{}  {}",
                        h.score, t.reviewer, t.association, t.path, t.pr, t.plus_one, t.minus_one, t.url
                    );
                    for line in t.text.lines().take(4) {
                        println!("      {line}");
                    }
                }
            }
            Ok(true)
        }
    }
}

async fn decide(state: &StateArgs, id: &str, status: Status) -> anyhow::Result<bool> {
    let home = StateHome::open(state).await?;
    home.lock(&state.repo).await?;
    let result = async {
        let mut st = home.load(&state.repo).await?;
        let known = items_for(&st, &Policy::default(), chrono::Utc::now(), None);
        if !known.iter().any(|m| m.id == id) {
            let ids: Vec<&str> = known.iter().map(|m| m.id.as_str()).collect();
            bail!(
                "no memory item `{id}` in {} (items: {})",
                state.repo,
                if ids.is_empty() {
                    "none".to_string()
                } else {
                    ids.join(", ")
                }
            );
        }
        let who = format!("cli:{}", std::env::var("USER").unwrap_or_else(|_| "unknown".into()));
        st.decide(id, status, &who, chrono::Utc::now());
        home.save(&state.repo, &st).await.map_err(anyhow::Error::msg)?;
        anyhow::Ok(())
    }
    .await;
    home.unlock(&state.repo).await;
    result?;
    eprintln!("{id}: {status}");
    Ok(true)
}

/// `--since 2026-01-31` or a full RFC 3339 time.
fn normalise_since(s: &str) -> anyhow::Result<String> {
    if quorum_memory::learn::parse_time(s).is_some() {
        return Ok(s.to_string());
    }
    let with_time = format!("{s}T00:00:00Z");
    if quorum_memory::learn::parse_time(&with_time).is_some() {
        return Ok(with_time);
    }
    bail!("--since `{s}` is neither a date (2026-01-31) nor an RFC 3339 time")
}

/// One item for people.
pub fn render_item(m: &MemoryItem) -> String {
    let what = match (&m.key.rule, &m.key.title, &m.key.pattern) {
        (Some(r), _, _) => format!("rule {r}"),
        (None, Some(t), _) => format!("title \"{t}\""),
        (None, None, Some(p)) => format!("pattern /{p}/"),
        _ => String::new(),
    };
    let mut s = format!(
        "{}  {:<9} {:<8} {}  in {}  ({:?})\n    {}\n",
        m.id, m.status, m.key.kind, what, m.key.scope, m.origin, m.text
    );
    if let Some(n) = &m.note {
        s.push_str(&format!("    note: {n}\n"));
    }
    for e in &m.evidence {
        s.push_str(&format!(
            "    - #{} @{} ({}) {}  {}\n",
            e.pr, e.who, e.association, e.how, e.url
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_a_date_or_a_time() {
        assert_eq!(normalise_since("2026-01-31").unwrap(), "2026-01-31T00:00:00Z");
        assert_eq!(
            normalise_since("2026-01-31T10:00:00+02:00").unwrap(),
            "2026-01-31T10:00:00+02:00"
        );
        assert!(
            normalise_since("last week")
                .unwrap_err()
                .to_string()
                .contains("`last week`")
        );
    }
}

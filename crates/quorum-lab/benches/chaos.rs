//! `make chaos`: faults while reviews flow, counted. Every service is its own
//! process on a real Kafka-protocol broker (tansu on sqlite, so a restart
//! keeps topics, messages and committed offsets; `quorum broker` when no
//! such tansu is given, and then the broker is never restarted), a
//! `redis-server` with AOF (fsync on every write), an emulated GitHub the
//! publisher posts to, and a stand-in model. While N pull requests arrive:
//!
//! - services are `kill -9`ed at random and restarted;
//! - the broker and Redis are `kill -9`ed and restarted on their data;
//! - a second replica of an agent role joins mid-burst (scale-out);
//! - GitHub answers 502 storms, 403 secondary rate limits with
//!   `Retry-After`, a truncated body, writes that it carries out but answers
//!   after the publisher's timeout, and 422 for an inline comment on a
//!   line it will not take.
//!
//! At the end it counts, per pull request, the reviews GitHub holds (exactly
//! one each: no run lost, none posted twice), runs not published, the DLQ,
//! and the time to drain; it exits non-zero when any count is wrong.
//!
//! Settings (environment): `CHAOS_PRS` (100), `CHAOS_KILLS` (30),
//! `CHAOS_BROKER_RESTARTS` (2), `CHAOS_REDIS_RESTARTS` (2),
//! `CHAOS_MODEL_LATENCY_MS` (300), `CHAOS_GAP_MS` between deliveries (300),
//! `CHAOS_SCALE_OUT` (1: a second agent-reviewer), `CHAOS_SCM_FAULTS` (1),
//! `CHAOS_WAIT_S` (900), `CHAOS_STALL_S` (180: no run published for this
//! long ends the wait), `CHAOS_FETCH_WAIT_MS` (100), `CHAOS_SEED`, `CHAOS_OUT` (a JSON file to write),
//! `QUORUM_CHAOS_TANSU` (a tansu built with sqlite: `make tansu-sqlite`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use quorum_cli::webhook::{open_pull_request, pull_request_payload};
use quorum_core::RunState;
use quorum_eval::{build_case_repo, case::load_case};
use quorum_store::{RedisStore, StateStore};
use quorum_testkit::github::{EmulatedFile, EmulatedPr, Fault, GitHubEmulator};
use quorum_testkit::{RedisServer, bin_dir, free_port, wait_for_port};
use serde_json::{Value, json};
use support::{CASE, REPO, SERVICES, anchor_line, env_or, stand_in};

mod support;

const SECRET: &[u8] = b"chaos-secret";
const TOKEN: &str = "ghp_chaos";

/// A tiny deterministic generator (the schedule repeats with the seed).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn millis(&mut self, lo: u64, hi: u64) -> Duration {
        Duration::from_millis(lo + self.next() % (hi - lo + 1))
    }
}

/// One service process, restartable with the same settings.
struct Service {
    name: String,
    binary: String,
    args: Vec<String>,
    port: u16,
    env: Vec<(&'static str, String)>,
    log: PathBuf,
    child: Option<Child>,
}

impl Service {
    fn spawn(&mut self) -> anyhow::Result<()> {
        let path = bin_dir().join(&self.binary);
        anyhow::ensure!(path.exists(), "{} is not built (make chaos builds it)", path.display());
        let log = std::fs::OpenOptions::new().create(true).append(true).open(&self.log)?;
        let mut cmd = Command::new(path);
        cmd.args(&self.args).stdout(Stdio::null()).stderr(log);
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd.env("HTTP_ADDR", format!("127.0.0.1:{}", self.port));
        self.child = Some(cmd.spawn()?);
        Ok(())
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The broker: tansu on sqlite (restartable with its data) or the mock.
enum Broker {
    Tansu(quorum_testkit::tansu::Tansu),
    Mock(Service),
}

impl Broker {
    fn bootstrap(&self) -> String {
        match self {
            Broker::Tansu(t) => t.bootstrap.clone(),
            Broker::Mock(s) => format!("127.0.0.1:{}", s.port),
        }
    }
    fn name(&self) -> &'static str {
        match self {
            Broker::Tansu(_) => "tansu 0.6.0 (sqlite storage)",
            Broker::Mock(_) => "quorum broker (librdkafka's mock cluster; not restarted)",
        }
    }
}

fn git(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output()?;
    anyhow::ensure!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8(out.stdout)?)
}

/// GitHub as the case's repository: the changed files with their patches
/// and both versions, `main` at the base.
fn publish_case(emu: &GitHubEmulator, dir: &Path, base: &str, head: &str, title: &str) -> anyhow::Result<EmulatedPr> {
    let mut files = vec![];
    for line in git(dir, &["diff", "--name-status", base, head])?.lines() {
        let (status, path) = line.split_once('\t').context("name-status line")?;
        let diff = git(dir, &["diff", "-U3", base, head, "--", path])?;
        let patch = diff.find("\n@@").map(|i| diff[i + 1..].to_string());
        files.push(EmulatedFile {
            filename: path.to_string(),
            status: if status == "A" { "added" } else { "modified" }.into(),
            patch,
        });
        for sha in [base, head] {
            if let Ok(text) = git(dir, &["show", &format!("{sha}:{path}")]) {
                emu.add_file(REPO, sha, path, &text);
            }
        }
    }
    emu.set_ref(REPO, "main", base);
    Ok(EmulatedPr {
        number: 0,
        title: title.into(),
        body: String::new(),
        author: "octocat".into(),
        base_sha: base.into(),
        head_sha: head.into(),
        draft: false,
        labels: vec![],
        files,
    })
}

fn main() -> anyhow::Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?
        .block_on(run())
}

async fn run() -> anyhow::Result<()> {
    let prs: u64 = env_or("CHAOS_PRS", 100);
    let kills: usize = env_or("CHAOS_KILLS", 30);
    let mut broker_restarts: usize = env_or("CHAOS_BROKER_RESTARTS", 2);
    let redis_restarts: usize = env_or("CHAOS_REDIS_RESTARTS", 2);
    let latency = Duration::from_millis(env_or("CHAOS_MODEL_LATENCY_MS", 300));
    let gap = Duration::from_millis(env_or("CHAOS_GAP_MS", 300));
    let scale_out = env_or("CHAOS_SCALE_OUT", 1u8) == 1;
    let scm_faults = env_or("CHAOS_SCM_FAULTS", 1u8) == 1;
    let wait = Duration::from_secs(env_or("CHAOS_WAIT_S", 900));
    let mut rng = Rng(env_or("CHAOS_SEED", 0x5eed_u64).max(1));

    let work = tempfile::Builder::new().prefix("quorum-chaos-").tempdir()?.keep();
    let logs = work.join("logs");
    std::fs::create_dir_all(&logs)?;
    eprintln!("work and logs: {}", work.display());
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../storefront-fixture");
    let case = load_case(&fixture.join(format!("cases/{CASE}.json")))?;
    let repo = build_case_repo(&fixture, &case)?;
    let (file, line) = anchor_line(&fixture)?;
    let model = stand_in(latency, file.clone(), line).await;

    let emu = GitHubEmulator::with_token(TOKEN).await;
    let template = publish_case(&emu, &repo.path, &repo.base, &repo.head, &case.title)?;
    for n in 1..=prs + 1 {
        emu.set_pr(
            REPO,
            EmulatedPr {
                number: n,
                ..template.clone()
            },
        );
    }
    if scm_faults {
        // GitHub refuses an inline comment on the defect's line (a stale
        // position): the publisher must still post one review per run.
        emu.refuse_line(&file, line as u64);
    }

    let redis_dir = work.join("redis");
    std::fs::create_dir_all(&redis_dir)?;
    let mut redis = RedisServer::start_durable(&redis_dir);
    let mut broker = match std::env::var("QUORUM_CHAOS_TANSU").ok().filter(|s| !s.is_empty()) {
        Some(bin) => Broker::Tansu(
            quorum_testkit::tansu::Tansu::start_with(&bin, &format!("sqlite://{}", work.join("tansu.db").display()))
                .await,
        ),
        None => {
            broker_restarts = 0;
            let port = free_port();
            let mut s = Service {
                name: "broker".into(),
                binary: "quorum".into(),
                args: vec!["broker".into(), "--port".into(), port.to_string()],
                port,
                env: vec![],
                log: logs.join("broker.log"),
                child: None,
            };
            s.spawn()?;
            anyhow::ensure!(wait_for_port(s.port, Duration::from_secs(20)), "broker did not start");
            Broker::Mock(s)
        }
    };
    let bootstrap = broker.bootstrap();
    let prefix = "chaos:".to_string();
    let common: Vec<(&'static str, String)> = vec![
        ("KAFKA_BROKERS", bootstrap.clone()),
        ("REDIS_URL", redis.url()),
        ("QUORUM_REDIS_PREFIX", prefix.clone()),
        ("KAFKA_SESSION_TIMEOUT_MS", "6000".into()),
        (
            "KAFKA_FETCH_WAIT_MAX_MS",
            env_or("CHAOS_FETCH_WAIT_MS", 100u64).to_string(),
        ),
        ("QUORUM_LOCAL_REPOS", format!("{REPO}={}", repo.path.display())),
        ("QUORUM_MODEL_URL", model.url.clone()),
        ("QUORUM_MODEL", "stand-in".into()),
        ("QUORUM_MODEL_TIMEOUT_SECS", "120".into()),
        ("GITHUB_API_URL", emu.url()),
        ("GITHUB_TOKEN", TOKEN.into()),
        // Short, so a stalled write times out and is retried.
        ("GITHUB_TIMEOUT_SECS", "5".into()),
        ("GITHUB_WEBHOOK_SECRET", String::from_utf8_lossy(SECRET).into_owned()),
        // The run's own index, not the user's (~/.cache/quorum/index).
        ("QUORUM_INDEX_DIR", work.join("index").display().to_string()),
    ];
    let service = |name: &str, binary: &str| Service {
        name: name.into(),
        binary: binary.into(),
        args: vec![],
        port: free_port(),
        env: common.clone(),
        log: logs.join(format!("{name}.log")),
        child: None,
    };
    let mut fleet: Vec<Service> = std::iter::once(service("gateway", "gateway"))
        .chain(SERVICES.iter().map(|s| service(s, s)))
        .collect();
    for s in &mut fleet {
        s.spawn()?;
    }
    for s in &fleet {
        anyhow::ensure!(
            wait_for_port(s.port, Duration::from_secs(60)),
            "{} did not start",
            s.name
        );
    }
    let gateway_port = fleet[0].port;
    let gateway = format!("127.0.0.1:{gateway_port}").parse()?;
    let client = reqwest::Client::builder().timeout(Duration::from_secs(10)).build()?;
    let store = RedisStore::connect(&redis.url(), &prefix).await?;

    eprintln!("broker: {}; warming up (group joins)…", broker.name());
    let warm = open_pull_request(
        &client,
        gateway,
        SECRET,
        pull_request_payload(REPO, 1, &repo.base, &repo.head, &case.title, ""),
    )
    .await?;
    quorum_cli::fleet::wait_for_review(&store, &warm.job_id, Duration::from_secs(300)).await?;

    // The schedule over the delivery window: kills spread evenly (with
    // jitter), broker and Redis restarts at fixed fractions, the scale-out
    // at a quarter, SCM faults every few seconds.
    let window = gap * prs as u32 + Duration::from_secs(5);
    let mut events: Vec<(Duration, &str)> = vec![];
    for i in 0..kills {
        let at = window.mul_f64((i as f64 + 0.5) / kills as f64);
        events.push((at, "kill"));
    }
    for i in 0..broker_restarts {
        events.push((
            window.mul_f64((i as f64 + 1.0) / (broker_restarts as f64 + 1.0)),
            "broker",
        ));
    }
    for i in 0..redis_restarts {
        events.push((
            window.mul_f64((i as f64 + 1.5) / (redis_restarts as f64 + 1.5)),
            "redis",
        ));
    }
    if scale_out {
        events.push((window / 4, "scale-out"));
    }
    if scm_faults {
        let mut t = Duration::from_secs(2);
        while t < window {
            events.push((t, "scm"));
            t += Duration::from_secs(4);
        }
    }
    events.sort();

    let mut jobs: BTreeMap<u64, String> = BTreeMap::new();
    let mut refused = 0usize;
    let mut victims: BTreeMap<String, usize> = BTreeMap::new();
    let mut faults: BTreeMap<&str, usize> = BTreeMap::new();
    let (mut done_kills, mut done_broker, mut done_redis) = (0, 0, 0);
    let start = Instant::now();
    let mut next_pr = 2u64;
    let mut next_send = start;
    let mut ev = events.into_iter().peekable();
    eprintln!(
        "delivering {prs} pull requests over {:.0} s with faults…",
        window.as_secs_f64()
    );
    while next_pr <= prs + 1 || ev.peek().is_some() {
        let now = Instant::now();
        if next_pr <= prs + 1 && now >= next_send {
            let body = pull_request_payload(REPO, next_pr, &repo.base, &repo.head, &case.title, "");
            match open_pull_request(&client, gateway, SECRET, body).await {
                Ok(a) => {
                    jobs.insert(next_pr, a.job_id);
                    next_pr += 1;
                    next_send = Instant::now() + gap;
                }
                // Like GitHub: delivered again later.
                Err(_) => {
                    refused += 1;
                    next_send = Instant::now() + Duration::from_millis(300);
                }
            }
        }
        if let Some((at, _)) = ev.peek()
            && start.elapsed() >= *at
        {
            let (_, what) = ev.next().expect("peeked");
            eprintln!("  {:>6.1} s  {what}", start.elapsed().as_secs_f64());
            match what {
                "kill" => {
                    let i = rng.below(fleet.len());
                    let s = &mut fleet[i];
                    s.kill();
                    *victims.entry(s.name.clone()).or_default() += 1;
                    tokio::time::sleep(rng.millis(200, 1500)).await;
                    s.spawn()?;
                    done_kills += 1;
                }
                "broker" => {
                    if let Broker::Tansu(t) = &mut broker {
                        let down = rng.millis(500, 3000);
                        tokio::task::block_in_place(|| t.restart(down));
                        done_broker += 1;
                    }
                }
                "redis" => {
                    let down = rng.millis(500, 3000);
                    tokio::task::block_in_place(|| redis.restart(down));
                    done_redis += 1;
                }
                "scale-out" => {
                    let mut s = service("agent-reviewer-2", "agent-reviewer");
                    s.spawn()?;
                    fleet.push(s);
                }
                "scm" => {
                    let (name, method, path, fault) = match rng.below(5) {
                        0 => ("502 storm on POST reviews", "POST", "/reviews", Fault::Status(502)),
                        1 => (
                            "403 secondary rate limit",
                            "POST",
                            "/reviews",
                            Fault::SecondaryRateLimit { retry_after: 2 },
                        ),
                        2 => (
                            "write done, answered after the timeout",
                            "POST",
                            "/reviews",
                            Fault::Stall { secs: 8 },
                        ),
                        3 => ("500 on GET files", "GET", "/files", Fault::Status(500)),
                        _ => ("truncated body on GET pulls", "GET", "/pulls/", Fault::Truncated),
                    };
                    let n = if name.starts_with("502") { 3 } else { 1 };
                    for _ in 0..n {
                        emu.fail_next(method, path, fault.clone());
                    }
                    *faults.entry(name).or_default() += 1;
                }
                _ => unreachable!(),
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let chaos_end = Instant::now();

    eprintln!("waiting for every review…");
    let deadline = Instant::now() + wait;
    let stall_after = Duration::from_secs(env_or("CHAOS_STALL_S", 180));
    let mut states: BTreeMap<u64, RunState> = BTreeMap::new();
    let (mut last_count, mut last_progress, mut last_print) = (0, Instant::now(), Instant::now());
    let mut stalled = false;
    loop {
        states.clear();
        for (pr, id) in &jobs {
            if let Ok(Some(run)) = store.get_run(id).await {
                states.insert(*pr, run.state);
            }
        }
        let published = states.values().filter(|s| **s == RunState::Published).count();
        if published == jobs.len() || Instant::now() > deadline {
            break;
        }
        if published != last_count {
            (last_count, last_progress) = (published, Instant::now());
        } else if last_progress.elapsed() > stall_after {
            eprintln!("no run published for {} s: the fleet is stalled", stall_after.as_secs());
            stalled = true;
            break;
        }
        if last_print.elapsed() > Duration::from_secs(10) {
            eprintln!(
                "  {:>6.1} s  {published}/{} published",
                start.elapsed().as_secs_f64(),
                jobs.len()
            );
            last_print = Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let drained_in = chaos_end.elapsed();
    // Where the work sits when the wait ends: lag per consumer group.
    let lag: Value = {
        let bus = quorum_runtime::BusConfig::new(bootstrap.clone());
        match tokio::task::spawn_blocking(move || quorum_runtime::fleet::measure(&bus)).await? {
            Ok(h) => json!(h.groups.iter().map(|g| (g.group, g.lag)).collect::<BTreeMap<_, _>>()),
            Err(e) => json!({ "not measured": e.to_string() }),
        }
    };
    // A late duplicate would come within a few seconds of the last run.
    tokio::time::sleep(Duration::from_secs(5)).await;

    let mut per_pr: BTreeMap<u64, usize> = BTreeMap::new();
    for r in emu.reviews().iter().filter(|r| r.repo == REPO) {
        *per_pr.entry(r.number).or_default() += 1;
    }
    let lost: Vec<u64> = jobs.keys().filter(|pr| !per_pr.contains_key(pr)).copied().collect();
    let twice: Vec<(u64, usize)> = per_pr.iter().filter(|(_, n)| **n > 1).map(|(p, n)| (*p, *n)).collect();
    let not_published: Vec<(u64, String)> = jobs
        .keys()
        .filter(|pr| states.get(pr) != Some(&RunState::Published))
        .map(|pr| (*pr, states.get(pr).map_or("no run".into(), |s| format!("{s:?}"))))
        .collect();
    let dlq = quorum_runtime::dlq::read_all(
        &quorum_runtime::BusConfig::new(bootstrap.clone()),
        Duration::from_secs(2),
    )
    .await
    .context("reading the DLQ")?;
    let dlq_empty = dlq.is_empty();
    let dlq_errors: Vec<String> = dlq
        .iter()
        .map(|e| {
            e.header(quorum_events::headers::DLQ_ERROR)
                .unwrap_or_default()
                .to_string()
        })
        .take(5)
        .collect();
    let violations = emu.violations();
    let report = json!({
        "broker": broker.name(),
        "prs": prs,
        "accepted": jobs.len(),
        "webhook_deliveries_refused_and_retried": refused,
        "service_kills": done_kills,
        "kills_by_service": victims,
        "broker_restarts": done_broker,
        "redis_restarts": done_redis,
        "scale_out": scale_out,
        "scm_faults": faults,
        "model_latency_ms": latency.as_millis() as u64,
        "reviews_on_github": per_pr.values().sum::<usize>(),
        "prs_with_exactly_one_review": per_pr.values().filter(|n| **n == 1).count(),
        "lost": lost,
        "posted_twice": twice,
        "runs_not_published": not_published,
        "stalled": stalled,
        "lag_by_group_at_the_end": lag,
        "dlq_empty": dlq_empty,
        "dlq_messages": dlq.len(),
        "dlq_first_errors": dlq_errors,
        "github_contract_violations": violations.len(),
        "window_s": (window.as_secs_f64() * 10.0).round() / 10.0,
        "drained_after_chaos_s": (drained_in.as_secs_f64() * 10.0).round() / 10.0,
        "build": if cfg!(debug_assertions) { "debug" } else { "release" },
        "logs": work.display().to_string(),
    });
    println!("{}", serde_json::to_string_pretty(&report)?);
    if let Ok(out) = std::env::var("CHAOS_OUT") {
        std::fs::write(&out, serde_json::to_string_pretty(&report)? + "\n")?;
        eprintln!("wrote {out}");
    }
    if !violations.is_empty() {
        eprintln!(
            "GitHub contract violations: {:?}",
            &violations[..violations.len().min(5)]
        );
    }
    if !lost.is_empty() || !twice.is_empty() || !not_published.is_empty() || !dlq_empty {
        bail!(
            "lost {}, posted twice {}, not published {}, DLQ empty: {dlq_empty}",
            lost.len(),
            twice.len(),
            not_published.len()
        );
    }
    Ok(())
}

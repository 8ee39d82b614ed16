//! Helpers for tests that need real servers. Nothing here is used at run time.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A free loopback TCP port (bound and released; good enough for tests).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("can bind a loopback port")
}

/// A real `redis-server` on a free loopback port, killed on drop.
pub struct RedisServer {
    child: Child,
    pub port: u16,
    /// Where its files are: a throwaway directory, or the caller's for a
    /// durable server.
    dir: std::path::PathBuf,
    _tmp: Option<tempfile::TempDir>,
}

impl RedisServer {
    /// Starts `redis-server` (from `$REDIS_SERVER` or `PATH`). Panics with a
    /// clear message when it is not installed: `make test` installs it.
    pub fn start() -> RedisServer {
        for _ in 0..5 {
            let dir = tempfile::tempdir().expect("temp dir");
            let port = free_port();
            let child = Self::spawn(port, dir.path(), &["--save", "", "--appendonly", "no"]);
            let server = RedisServer {
                child,
                port,
                dir: dir.path().to_path_buf(),
                _tmp: Some(dir),
            };
            if wait_for_port(port, Duration::from_secs(10)) {
                return server;
            }
            drop(server);
        }
        panic!("redis-server did not start on any of 5 ports");
    }

    /// `redis-server` on `port` with its files in `dir` and these settings.
    fn spawn(port: u16, dir: &std::path::Path, settings: &[&str]) -> Child {
        let bin = std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".into());
        Command::new(&bin)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--dir"])
            .arg(dir)
            .args(settings)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start `{bin}` ({e}); install it with `apt-get install redis-server` (make test does)")
            })
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// A Redis that keeps every write (AOF, fsync on each) in `dir`, so a
    /// `kill -9` and [`Self::restart`] lose nothing acknowledged.
    pub fn start_durable(dir: &std::path::Path) -> RedisServer {
        let port = free_port();
        let child = Self::spawn(port, dir, &Self::DURABLE);
        let server = RedisServer {
            child,
            port,
            dir: dir.to_path_buf(),
            _tmp: None,
        };
        assert!(
            wait_for_port(port, Duration::from_secs(10)),
            "redis-server did not start"
        );
        server
    }

    /// Every write appended and fsynced before it is acknowledged.
    const DURABLE: [&str; 6] = ["--save", "", "--appendonly", "yes", "--appendfsync", "always"];

    /// `kill -9`, then the same server on the same port and data
    /// ([`Self::start_durable`] only). Returns once it accepts connections.
    pub fn restart(&mut self, down_for: Duration) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::thread::sleep(down_for);
        self.child = Self::spawn(self.port, &self.dir, &Self::DURABLE);
        assert!(
            wait_for_port(self.port, Duration::from_secs(30)),
            "redis-server did not come back"
        );
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until something accepts connections on the loopback port.
pub fn wait_for_port(port: u16, timeout: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// The directory holding the workspace's built binaries (`target/debug`),
/// found from the running test executable (`target/debug/deps/...`).
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let deps = exe.parent().expect("deps dir");
    deps.parent().expect("profile dir").to_path_buf()
}

/// Runs `git -C dir …` with a throwaway identity; panics with git's stderr on
/// failure; returns trimmed stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=quorum-test", "-c", "user.email=test@quorum.invalid"])
        .args(args)
        .output()
        .expect("git on PATH");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

pub mod faulty_store;
pub mod github;
mod github_history;
pub mod gitlab;
mod gitlab_history;
pub mod openapi;
pub mod scripted_model;
pub mod store_contract;
pub mod tansu;

/// A finding for tests that need one: `title` at `file:line`, a major bug
/// from the reviewer at confidence 0.94; change fields as the test needs.
pub fn finding(file: &str, line: u32, title: &str) -> quorum_core::Finding {
    quorum_core::Finding {
        file: file.into(),
        line,
        start_line: None,
        category: quorum_core::Category::Bug,
        severity: quorum_core::Severity::Major,
        confidence: 0.94,
        title: title.into(),
        explanation: "Because.".into(),
        suggestion: None,
        rule: None,
        agent: quorum_core::AgentRole::Reviewer,
        evidence: vec![],
        agreed_by: vec![],
    }
}

//! Per-repository policy (F-GW-5): the `review:` section of `.quorum.yml`
//! on the default branch, merged over the server's defaults. It decides
//! whether an event is reviewed at all, which files are, and what travels
//! with the job (agents, publish mode, context).
//!
//! ```yaml
//! review:
//!   mode: auto            # auto | manual (slash commands only) | off
//!   drafts: false         # review draft PRs
//!   bots: false           # review PRs opened by bots
//!   paths: ["src/**"]     # only these files (default: all)
//!   exclude: ["**/*.lock", "vendor/**"]
//!   labels:
//!     force: ["quorum:review"]   # review whatever the rest says
//!     skip: ["quorum:skip"]
//!   max_files: 300
//!   max_changed_lines: 5000
//!   agents: [static, reviewer, security, tests]
//!   publish: direct       # direct | draft
//!   context: graph_rag    # diff_only | full_files | graph_rag
//!   inline_min_severity: minor   # nitpick | minor | major | critical
//!   low_severity: grouped # grouped | inline | off
//! ```
//!
//! Low-severity notes are findings under `inline_min_severity` and `testing`
//! findings at minor or below; by default they are one "Also noted" line in
//! the review body rather than inline comments (`quorum_core::review`).
//!
//! The file's schema, with its `conventions:` section (the engine's), is
//! `quorum_core::repo_config`.
//! An invalid file never stops a review: the server's defaults apply and
//! the review says what is wrong with the file.

use globset::{Glob, GlobSet, GlobSetBuilder};
use quorum_core::repo_config::RepoConfig;
use quorum_core::{FileChange, JobPolicy};

pub use quorum_core::repo_config::{CONFIG_PATH, ReviewMode};

/// How a review was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// A pull-request event.
    Event,
    /// A slash command from someone with write access: it overrides the
    /// draft, bot and skip-label rules and manual mode, never `off`.
    Command,
}

/// The facts about a PR the policy looks at.
#[derive(Debug, Clone, Default)]
pub struct PrFacts {
    pub draft: bool,
    pub author_is_bot: bool,
    pub labels: Vec<String>,
}

/// The effective policy of one repository.
#[derive(Debug, Clone)]
pub struct Policy {
    pub mode: ReviewMode,
    pub review_drafts: bool,
    pub review_bots: bool,
    include: Option<GlobSet>,
    exclude: Option<GlobSet>,
    force_labels: Vec<String>,
    skip_labels: Vec<String>,
    pub max_files: Option<usize>,
    pub max_changed_lines: Option<usize>,
    pub job: JobPolicy,
}

/// The server's defaults (flags of the gateway).
#[derive(Debug, Clone)]
pub struct ServerDefaults {
    pub review_drafts: bool,
    pub review_bots: bool,
    pub job: JobPolicy,
}

fn globs(patterns: &[String], key: &str) -> Result<Option<GlobSet>, String> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        b.add(Glob::new(p).map_err(|e| format!("review.{key}: `{p}` is not a glob: {e}"))?);
    }
    b.build().map(Some).map_err(|e| format!("review.{key}: {e}"))
}

impl Policy {
    pub fn defaults(server: &ServerDefaults) -> Policy {
        Policy {
            mode: ReviewMode::Auto,
            review_drafts: server.review_drafts,
            review_bots: server.review_bots,
            include: None,
            exclude: None,
            force_labels: vec![],
            skip_labels: vec![],
            max_files: None,
            max_changed_lines: None,
            job: server.job.clone(),
        }
    }

    /// The policy from a `.quorum.yml` (`None`: no file), or the defaults and
    /// what is wrong with the file.
    pub fn from_file(server: &ServerDefaults, text: Option<&str>) -> (Policy, Option<String>) {
        let Some(text) = text else {
            return (Policy::defaults(server), None);
        };
        match Self::parse(server, text) {
            Ok(p) => (p, None),
            Err(e) => (
                Policy::defaults(server),
                Some(format!(
                    "{CONFIG_PATH} is invalid, so the server's defaults were used: {e}"
                )),
            ),
        }
    }

    fn parse(server: &ServerDefaults, text: &str) -> Result<Policy, String> {
        let file = RepoConfig::parse(text)?;
        let mut p = Policy::defaults(server);
        let Some(r) = file.review else {
            return Ok(p);
        };
        if let Some(m) = r.mode {
            p.mode = m;
        }
        if let Some(d) = r.drafts {
            p.review_drafts = d;
        }
        if let Some(b) = r.bots {
            p.review_bots = b;
        }
        p.include = globs(r.paths.as_deref().unwrap_or_default(), "paths")?;
        p.exclude = globs(r.exclude.as_deref().unwrap_or_default(), "exclude")?;
        if let Some(l) = r.labels {
            p.force_labels = l.force;
            p.skip_labels = l.skip;
        }
        for (key, v) in [("max_files", r.max_files), ("max_changed_lines", r.max_changed_lines)] {
            if v == Some(0) {
                return Err(format!("review.{key} must be at least 1"));
            }
        }
        p.max_files = r.max_files;
        p.max_changed_lines = r.max_changed_lines;
        if let Some(mut agents) = r.agents {
            agents.sort();
            agents.dedup();
            if agents.is_empty() {
                return Err("review.agents lists no agent (use `mode: off` to stop reviews)".into());
            }
            p.job.agents = agents;
        }
        if let Some(m) = r.publish {
            p.job.publish_mode = m;
        }
        if let Some(c) = r.context {
            p.job.context_mode = c;
        }
        if let Some(s) = r.inline_min_severity {
            p.job.inline.min_severity = s;
        }
        if let Some(l) = r.low_severity {
            p.job.inline.low_severity = l;
        }
        Ok(p)
    }

    /// `Err(reason)` when this PR is not reviewed.
    pub fn admit(&self, pr: &PrFacts, trigger: Trigger) -> Result<(), String> {
        let has = |labels: &[String]| pr.labels.iter().find(|l| labels.contains(l)).cloned();
        if self.mode == ReviewMode::Off {
            return Err(format!("reviews are off for this repository ({CONFIG_PATH})"));
        }
        if trigger == Trigger::Command {
            return Ok(());
        }
        if let Some(l) = has(&self.force_labels) {
            tracing::debug!(label = %l, "review forced by label");
            return Ok(());
        }
        if let Some(l) = has(&self.skip_labels) {
            return Err(format!("label `{l}` skips reviews"));
        }
        if self.mode == ReviewMode::Manual {
            return Err("reviews are manual for this repository: comment `/review`".into());
        }
        if pr.draft && !self.review_drafts {
            return Err("draft".into());
        }
        if pr.author_is_bot && !self.review_bots {
            return Err("bot author".into());
        }
        Ok(())
    }

    /// Drops the files the policy leaves out; `Err(reason)` when what is
    /// left is over the size limits.
    pub fn select_files(&self, files: &mut Vec<FileChange>) -> Result<(), String> {
        files.retain(|f| {
            self.include.as_ref().is_none_or(|g| g.is_match(&f.path))
                && !self.exclude.as_ref().is_some_and(|g| g.is_match(&f.path))
        });
        if let Some(max) = self.max_files.filter(|max| files.len() > *max) {
            return Err(format!(
                "{} files changed; {CONFIG_PATH} reviews at most {max}",
                files.len()
            ));
        }
        if let Some(max) = self.max_changed_lines {
            let changed: usize = files
                .iter()
                .filter_map(|f| f.patch.as_deref())
                .flat_map(str::lines)
                .filter(|l| {
                    (l.starts_with('+') && !l.starts_with("+++")) || (l.starts_with('-') && !l.starts_with("---"))
                })
                .count();
            if changed > max {
                return Err(format!("{changed} lines changed; {CONFIG_PATH} reviews at most {max}"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quorum_core::FileStatus;
    use quorum_core::{AgentRole, ContextMode, LowSeverity, PublishMode, Severity};

    fn server() -> ServerDefaults {
        ServerDefaults {
            review_drafts: false,
            review_bots: false,
            job: JobPolicy::default(),
        }
    }

    fn file(path: &str, lines: usize) -> FileChange {
        FileChange {
            path: path.into(),
            old_path: None,
            status: FileStatus::Modified,
            patch: Some(format!("@@ -1 +1,{lines} @@\n{}", "+x\n".repeat(lines))),
            omitted: None,
        }
    }

    #[test]
    fn the_file_overrides_the_defaults() {
        let yaml = r#"
review:
  mode: auto
  drafts: true
  paths: ["shop/**"]
  exclude: ["shop/vendor/**"]
  labels: {force: ["quorum:review"], skip: ["quorum:skip"]}
  max_files: 2
  max_changed_lines: 10
  agents: [security, static, security]
  publish: draft
  context: full_files
  inline_min_severity: major
  low_severity: off
conventions:
  - id: x
    message: y
    pattern: z
"#;
        let (p, err) = Policy::from_file(&server(), Some(yaml));
        assert_eq!(err, None);
        assert!(p.review_drafts && !p.review_bots);
        assert_eq!(p.job.agents, vec![AgentRole::Static, AgentRole::Security]);
        assert_eq!(p.job.publish_mode, PublishMode::Draft);
        assert_eq!(p.job.context_mode, ContextMode::FullFiles);
        assert_eq!(p.job.inline.min_severity, Severity::Major);
        assert_eq!(p.job.inline.low_severity, LowSeverity::Off);

        let mut files = vec![file("shop/a.py", 2), file("shop/vendor/b.py", 2), file("README.md", 1)];
        p.select_files(&mut files).unwrap();
        let kept: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(kept, vec!["shop/a.py"]);
        let mut big = vec![file("shop/a.py", 11)];
        assert!(p.select_files(&mut big).unwrap_err().contains("11 lines changed"));
        let mut many = vec![file("shop/a.py", 1), file("shop/b.py", 1), file("shop/c.py", 1)];
        assert!(p.select_files(&mut many).unwrap_err().contains("3 files changed"));
    }

    #[test]
    fn events_are_admitted_by_mode_labels_drafts_and_bots() {
        let (p, _) = Policy::from_file(&server(), Some("review:\n  labels: {force: [go], skip: [nope]}\n"));
        let pr = |draft, bot, labels: &[&str]| PrFacts {
            draft,
            author_is_bot: bot,
            labels: labels.iter().map(|s| s.to_string()).collect(),
        };
        assert!(p.admit(&pr(false, false, &[]), Trigger::Event).is_ok());
        assert_eq!(p.admit(&pr(true, false, &[]), Trigger::Event).unwrap_err(), "draft");
        assert_eq!(
            p.admit(&pr(false, true, &[]), Trigger::Event).unwrap_err(),
            "bot author"
        );
        assert!(p.admit(&pr(true, true, &["go"]), Trigger::Event).is_ok(), "force label");
        assert!(
            p.admit(&pr(false, false, &["nope"]), Trigger::Event)
                .unwrap_err()
                .contains("nope")
        );
        assert!(
            p.admit(&pr(true, false, &["nope"]), Trigger::Command).is_ok(),
            "a command overrides"
        );

        let (manual, _) = Policy::from_file(&server(), Some("review:\n  mode: manual\n"));
        assert!(
            manual
                .admit(&pr(false, false, &[]), Trigger::Event)
                .unwrap_err()
                .contains("/review")
        );
        assert!(manual.admit(&pr(false, false, &[]), Trigger::Command).is_ok());
        let (off, _) = Policy::from_file(&server(), Some("review:\n  mode: off\n"));
        assert!(
            off.admit(&pr(false, false, &[]), Trigger::Command).is_err(),
            "off is off"
        );
    }

    #[test]
    fn an_invalid_file_falls_back_to_the_defaults_and_says_why() {
        for (yaml, says) in [
            ("review:\n  mode: sometimes\n", "mode"),
            ("review:\n  moed: auto\n", "moed"),
            ("review:\n  paths: ['[']\n", "not a glob"),
            ("review:\n  agents: []\n", "no agent"),
            ("review:\n  agents: [linter]\n", "linter"),
            ("review:\n  max_files: 0\n", "at least 1"),
            (
                "review:\n  low_severity: hidden\n",
                "review.low_severity: unknown variant `hidden`",
            ),
            (
                "review:\n  inline_min_severity: low\n",
                "review.inline_min_severity: unknown variant `low`",
            ),
            ("review:\n  low_severity: [off]\n", "review.low_severity"),
            ("review: [\n", ".quorum.yml is invalid"),
        ] {
            let (p, err) = Policy::from_file(&server(), Some(yaml));
            let err = err.unwrap_or_else(|| panic!("{yaml} should be refused"));
            assert!(err.contains(says), "{err} should mention {says}");
            assert_eq!(p.mode, ReviewMode::Auto);
            assert_eq!(p.job, JobPolicy::default());
        }
        let (p, err) = Policy::from_file(&server(), None);
        assert!(err.is_none() && p.mode == ReviewMode::Auto);
        assert_eq!(
            p.job.inline.low_severity,
            LowSeverity::Grouped,
            "notes are grouped by default"
        );
        assert_eq!(p.job.inline.min_severity, Severity::Minor);
        assert!(Policy::from_file(&server(), Some("")).1.is_none());
        assert!(Policy::from_file(&server(), Some("conventions: []\n")).1.is_none());
    }
}

//! The explained-judge's settings and its measured agreement with human
//! labels (`quorum-lab judge-agreement`, and beside every judged eval).
//!
//! The labelled sample (`eval/judge/labels.json`) is embedded, so the
//! command and the eval work from any directory; `--judge-labels FILE`
//! measures on another sample.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use quorum_llm::LlmConfig;
use quorum_llm::explain::{Agreement, ExplainJudge, FindingText, agreement};
use serde::{Deserialize, Serialize};

/// The labelled (finding, description) pairs kept in the repository.
const EMBEDDED_LABELS: &str = include_str!("../../../eval/judge/labels.json");

#[derive(Debug, Clone, clap::Args)]
pub struct JudgeArgs {
    /// OpenAI-compatible endpoint of the explained-judge; unset: only
    /// "located" scores are reported, labelled so.
    #[arg(long, env = "QUORUM_JUDGE_URL")]
    pub judge_url: Option<String>,
    #[arg(long, env = "QUORUM_JUDGE_MODEL")]
    pub judge_model: Option<String>,
    #[arg(long, env = "QUORUM_JUDGE_API_KEY", hide_env_values = true)]
    pub judge_api_key: Option<String>,
    /// Seconds one judge call may take.
    #[arg(long, env = "QUORUM_JUDGE_TIMEOUT_SECS", default_value_t = 120)]
    pub judge_timeout_secs: u64,
    /// Labelled pairs to measure the judge on (default: the embedded
    /// `eval/judge/labels.json`).
    #[arg(long)]
    pub judge_labels: Option<PathBuf>,
    /// Record the judge's answers in DIR and replay them for identical
    /// requests (the model's response cache by default), so a re-scoring
    /// does not judge the same pair twice.
    #[arg(long, env = "QUORUM_LLM_CACHE")]
    pub judge_cache: Option<PathBuf>,
}

impl JudgeArgs {
    /// The judge, or `None` when no judge URL is set.
    pub fn judge(&self) -> anyhow::Result<Option<ExplainJudge>> {
        let Some(url) = self.judge_url.as_deref().filter(|u| !u.trim().is_empty()) else {
            return Ok(None);
        };
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            bail!("--judge-url `{url}` must start with http:// or https://");
        }
        let Some(model) = self.judge_model.as_deref().filter(|m| !m.trim().is_empty()) else {
            bail!("--judge-url is set but --judge-model (QUORUM_JUDGE_MODEL) is not");
        };
        if self.judge_timeout_secs == 0 {
            bail!("--judge-timeout-secs must be at least 1");
        }
        let mut cfg = LlmConfig::new(url, model);
        cfg.api_key = self.judge_api_key.as_deref().map(|k| quorum_llm::Secret::new(k.trim()));
        cfg.timeout = Duration::from_secs(self.judge_timeout_secs);
        cfg.max_tokens = 256;
        cfg.cache_dir = self.judge_cache.clone().filter(|d| !d.as_os_str().is_empty());
        Ok(Some(ExplainJudge::new(cfg)?))
    }

    pub fn labels(&self) -> anyhow::Result<Labels> {
        match &self.judge_labels {
            Some(p) => {
                let text = std::fs::read_to_string(p).with_context(|| format!("--judge-labels {}", p.display()))?;
                Labels::parse(&text).with_context(|| format!("--judge-labels {}", p.display()))
            }
            None => Labels::parse(EMBEDDED_LABELS).context("the embedded eval/judge/labels.json"),
        }
    }
}

/// A human-labelled sample.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Labels {
    /// Who labelled, how, and where the findings came from.
    pub about: String,
    pub pairs: Vec<LabelledPair>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelledPair {
    pub id: String,
    /// Where the finding came from (engine rule and case, or a model run).
    pub source: String,
    pub finding: FindingText,
    pub description: String,
    /// The human's answer: does the finding describe the defect?
    pub explains: bool,
    /// Why, in a few words.
    pub why: String,
}

impl Labels {
    pub fn parse(text: &str) -> anyhow::Result<Labels> {
        let l: Labels = serde_json::from_str(text).context("labels do not match the format")?;
        let mut ids = std::collections::BTreeSet::new();
        for p in &l.pairs {
            if !ids.insert(p.id.as_str()) {
                bail!("label id `{}` appears twice", p.id);
            }
            if p.description.trim().is_empty() || p.finding.title.trim().is_empty() {
                bail!("label `{}` has an empty description or finding title", p.id);
            }
        }
        if l.pairs.is_empty() {
            bail!("no labelled pairs");
        }
        Ok(l)
    }
}

/// The judge's agreement with the labels, and the pairs it got wrong.
#[derive(Debug, Clone, Serialize)]
pub struct MeasuredAgreement {
    pub judge_model: String,
    pub labels: usize,
    #[serde(flatten)]
    pub agreement: Agreement,
    /// Ids where the judge and the human disagree, with the judge's reason.
    pub disagreements: Vec<(String, String)>,
}

/// Runs the judge on every labelled pair.
pub async fn measure(judge: &ExplainJudge, labels: &Labels, progress: &indicatif::ProgressBar) -> MeasuredAgreement {
    let mut pairs = vec![];
    let mut errors = 0;
    let mut disagreements = vec![];
    for p in &labels.pairs {
        match judge.judge(&p.finding, &p.description).await {
            Ok((v, _)) => {
                if v.explains != p.explains {
                    disagreements.push((p.id.clone(), v.reason.clone()));
                }
                pairs.push((v.explains, p.explains));
            }
            Err((e, _)) => {
                tracing::warn!(label = %p.id, error = %e, "judge call failed");
                errors += 1;
            }
        }
        progress.inc(1);
    }
    progress.finish_and_clear();
    MeasuredAgreement {
        judge_model: judge.model().to_string(),
        labels: labels.pairs.len(),
        agreement: agreement(&pairs, errors),
        disagreements,
    }
}

/// `quorum-lab judge-agreement`: the judge on the labelled sample, printed.
pub async fn run(args: JudgeArgs, json: bool) -> anyhow::Result<()> {
    let Some(judge) = args.judge()? else {
        bail!("set --judge-url and --judge-model (the judge to measure)");
    };
    let labels = args.labels()?;
    let bar = quorum_cli::progress::bar("judge agreement", labels.pairs.len() as u64, "pairs");
    let m = measure(&judge, &labels, &bar).await;
    if json {
        println!("{}", serde_json::to_string_pretty(&m)?);
        return Ok(());
    }
    let a = &m.agreement;
    println!(
        "judge {} on {} labelled pairs: agreement {:.2}, Cohen's kappa {:.2} ({} judged, {} errors)",
        m.judge_model, m.labels, a.accuracy, a.kappa, a.judged, a.errors
    );
    println!(
        "  judge yes / human yes {}  judge yes / human no {}  judge no / human no {}  judge no / human yes {}",
        a.true_yes, a.false_yes, a.true_no, a.false_no
    );
    for (id, reason) in &m.disagreements {
        println!("  disagrees on {id}: {reason}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_labels_are_a_usable_sample() {
        let l = Labels::parse(EMBEDDED_LABELS).unwrap();
        assert!(
            l.pairs.len() >= 40,
            "{} labelled pairs; the issue asks for 40",
            l.pairs.len()
        );
        let yes = l.pairs.iter().filter(|p| p.explains).count();
        // Both answers must be well represented, or agreement says little.
        assert!(
            yes * 4 >= l.pairs.len() && (l.pairs.len() - yes) * 4 >= l.pairs.len(),
            "{yes} yes of {}",
            l.pairs.len()
        );
    }

    #[test]
    fn bad_label_files_are_refused_with_a_reason() {
        let e = Labels::parse(r#"{"about":"a","pairs":[]}"#).unwrap_err();
        assert!(format!("{e:#}").contains("no labelled pairs"));
        let pair = r#"{"id":"x","source":"s","finding":{"title":"t","explanation":"e"},"description":"d","explains":true,"why":"w"}"#;
        let e = Labels::parse(&format!(r#"{{"about":"a","pairs":[{pair},{pair}]}}"#)).unwrap_err();
        assert!(format!("{e:#}").contains("appears twice"));
        let e = Labels::parse(r#"{"about":"a","pairs":[{"id":"x"}]}"#).unwrap_err();
        assert!(format!("{e:#}").contains("format"));
    }

    #[test]
    fn judge_settings_are_validated() {
        let args = |url: Option<&str>, model: Option<&str>| JudgeArgs {
            judge_url: url.map(str::to_string),
            judge_model: model.map(str::to_string),
            judge_api_key: None,
            judge_timeout_secs: 10,
            judge_labels: None,
            judge_cache: None,
        };
        assert!(args(None, None).judge().unwrap().is_none());
        assert!(args(Some("ftp://x"), Some("m")).judge().is_err());
        let e = args(Some("http://127.0.0.1:1/v1"), None).judge().err().unwrap();
        assert!(e.to_string().contains("--judge-model"));
        assert_eq!(
            args(Some("http://127.0.0.1:1/v1"), Some("m"))
                .judge()
                .unwrap()
                .unwrap()
                .model(),
            "m"
        );
    }
}

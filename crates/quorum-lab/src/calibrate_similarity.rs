//! `quorum-lab calibrate-similarity`: is there a threshold above which a
//! model's finding is, by the embedding of its title, the same complaint as
//! one the team dismissed before (issue 25, F-MEM-3: "or embedding
//! similarity above a calibrated threshold")?
//!
//! Hand-labelled title pairs (`eval/memory/similarity/pairs.yaml`) are
//! embedded with the configured model (the in-process MiniLM by default);
//! the threshold is the lowest with no false match on the dev half (a false
//! match hides a finding the team did not dismiss, which is worse than
//! repeating one it did), and the test half is read at it. The critic uses
//! similarity only if this finds a threshold worth shipping; with MiniLM it
//! does not (`docs/memory.md`), so titles match exactly, after normalising.

use std::path::PathBuf;

use anyhow::{Context, bail};
use quorum_search::SearchArgs;
use serde::{Deserialize, Serialize};

#[derive(Debug, clap::Args)]
pub struct CalibrateSimilarityArgs {
    #[arg(long, default_value = "eval/memory/similarity/pairs.yaml")]
    pub pairs: PathBuf,
    /// Where the results go (JSON); unset: printed only.
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub search: SearchArgs,
}

#[derive(Debug, Deserialize)]
struct PairsFile {
    pairs: Vec<Pair>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Pair {
    pub a: String,
    pub b: String,
    pub same: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Scored {
    #[serde(flatten)]
    pub pair: Pair,
    pub score: f32,
    pub dev: bool,
}

/// Precision and recall of "same" at one threshold.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct AtThreshold {
    pub threshold: f32,
    pub true_matches: usize,
    pub false_matches: usize,
    pub same_pairs: usize,
}

impl AtThreshold {
    pub fn recall(&self) -> f64 {
        self.true_matches as f64 / self.same_pairs.max(1) as f64
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Calibration {
    pub model: String,
    /// The lowest threshold (in steps of 0.01) with no false match on dev.
    pub chosen: f32,
    pub dev_at_chosen: AtThreshold,
    pub test_at_chosen: AtThreshold,
    pub pairs: Vec<Scored>,
}

/// Entries come two by two; the first two are dev, the next two test.
fn is_dev(index: usize) -> bool {
    (index / 2).is_multiple_of(2)
}

pub fn at(scored: &[Scored], dev: bool, threshold: f32) -> AtThreshold {
    let half = scored.iter().filter(|s| s.dev == dev);
    let mut r = AtThreshold {
        threshold,
        true_matches: 0,
        false_matches: 0,
        same_pairs: 0,
    };
    for s in half {
        r.same_pairs += usize::from(s.pair.same);
        if s.score >= threshold {
            if s.pair.same {
                r.true_matches += 1;
            } else {
                r.false_matches += 1;
            }
        }
    }
    r
}

/// The lowest threshold in 0.01 steps from 0.50 with no false match on dev.
pub fn choose(scored: &[Scored]) -> f32 {
    (50..=100)
        .map(|t| t as f32 / 100.0)
        .find(|&t| at(scored, true, t).false_matches == 0)
        .unwrap_or(1.0)
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    // The embedders return unit vectors.
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

pub async fn run(args: &CalibrateSimilarityArgs) -> anyhow::Result<Calibration> {
    let text = std::fs::read_to_string(&args.pairs).with_context(|| format!("reading {}", args.pairs.display()))?;
    let file: PairsFile =
        serde_norway::from_str(&text).with_context(|| format!("{}: not a pairs file", args.pairs.display()))?;
    if file.pairs.len() < 8 {
        bail!(
            "{}: {} pairs; at least 8 are needed",
            args.pairs.display(),
            file.pairs.len()
        );
    }
    let embedder = args
        .search
        .embedder()
        .context("loading the embedding model (make deps installs the in-process one)")?;
    let texts: Vec<String> = file.pairs.iter().flat_map(|p| [p.a.clone(), p.b.clone()]).collect();
    let vectors = embedder.embed(&texts).await?;
    let scored: Vec<Scored> = file
        .pairs
        .iter()
        .enumerate()
        .map(|(i, p)| Scored {
            pair: p.clone(),
            score: cosine(&vectors[2 * i], &vectors[2 * i + 1]),
            dev: is_dev(i),
        })
        .collect();
    let chosen = choose(&scored);
    let c = Calibration {
        model: embedder.id().to_string(),
        chosen,
        dev_at_chosen: at(&scored, true, chosen),
        test_at_chosen: at(&scored, false, chosen),
        pairs: scored,
    };
    if let Some(out) = &args.out {
        std::fs::write(out, serde_json::to_string_pretty(&c)? + "\n")
            .with_context(|| format!("writing {}", out.display()))?;
    }
    Ok(c)
}

impl Calibration {
    pub fn summary(&self) -> String {
        let line = |name: &str, a: &AtThreshold| {
            format!(
                "  {name:<4} at {:.2}: {} of {} same pairs matched (recall {:.2}), {} false matches",
                a.threshold,
                a.true_matches,
                a.same_pairs,
                a.recall(),
                a.false_matches
            )
        };
        format!(
            "model {}: the lowest threshold with no false match on dev is {:.2}\n{}\n{}",
            self.model,
            self.chosen,
            line("dev", &self.dev_at_chosen),
            line("test", &self.test_at_chosen)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(same: bool, score: f32, dev: bool) -> Scored {
        Scored {
            pair: Pair {
                a: "a".into(),
                b: "b".into(),
                same,
            },
            score,
            dev,
        }
    }

    #[test]
    fn the_threshold_is_the_lowest_with_no_false_match_on_dev_and_test_is_only_read() {
        let scored = [
            s(true, 0.9, true),
            s(false, 0.71, true),
            s(true, 0.65, true),
            s(false, 0.95, false),
        ];
        assert_eq!(choose(&scored), 0.72);
        let dev = at(&scored, true, 0.72);
        assert_eq!((dev.true_matches, dev.false_matches, dev.same_pairs), (1, 0, 2));
        assert_eq!(
            at(&scored, false, 0.72).false_matches,
            1,
            "the test half's false match is reported"
        );
    }

    #[test]
    fn pairs_are_split_two_by_two() {
        let dev: Vec<bool> = (0..6).map(is_dev).collect();
        assert_eq!(dev, [true, true, false, false, true, true]);
    }
}

//! The eval's price table: USD per million tokens, by model and token kind,
//! so the $ column follows whatever the configured models cost. The default
//! table (`eval/prices.json`) is built into the binary, so `quorum-lab eval`
//! works from any directory; `--prices FILE` replaces it. The offline engine
//! is priced at zero.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use serde::Deserialize;

/// `eval/prices.json` as it was when the binary was built.
const DEFAULT_TABLE: &str = include_str!("../../../eval/prices.json");

#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// USD per million prompt tokens.
    pub prompt: f64,
    /// USD per million cached prompt tokens.
    pub cached_prompt: f64,
    /// USD per million completion tokens.
    pub completion: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceTable {
    /// USD per million tokens, by model name.
    pub models: BTreeMap<String, Price>,
}

/// Tokens of one review, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Tokens {
    pub prompt: u64,
    pub cached_prompt: u64,
    pub completion: u64,
}

impl Tokens {
    pub fn total(&self) -> u64 {
        self.prompt + self.cached_prompt + self.completion
    }
}

impl PriceTable {
    /// The table built into the binary.
    pub fn embedded() -> PriceTable {
        // Checked by a unit test, so a bad `eval/prices.json` fails the
        // build's tests rather than a user's run.
        PriceTable::parse(DEFAULT_TABLE, "the built-in price table (eval/prices.json)")
            .expect("the built-in price table is valid")
    }

    /// `--prices FILE` when given, else the built-in table.
    pub fn load_or_embedded(path: Option<&Path>) -> anyhow::Result<PriceTable> {
        match path {
            Some(p) => PriceTable::load(p),
            None => Ok(PriceTable::embedded()),
        }
    }

    pub fn load(path: &Path) -> anyhow::Result<PriceTable> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading the price table {}", path.display()))?;
        PriceTable::parse(&text, &path.display().to_string())
    }

    /// Parses and validates a table; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> anyhow::Result<PriceTable> {
        let t: PriceTable = serde_json::from_str(text).with_context(|| {
            format!("{origin} is not a valid price table (expected {{\"models\": {{NAME: {{\"prompt\", \"cached_prompt\", \"completion\"}}}}}} in USD per million tokens)")
        })?;
        anyhow::ensure!(!t.models.is_empty(), "{origin}: the price table names no model");
        for (m, p) in &t.models {
            for (kind, v) in [
                ("prompt", p.prompt),
                ("cached_prompt", p.cached_prompt),
                ("completion", p.completion),
            ] {
                anyhow::ensure!(
                    v.is_finite() && v >= 0.0,
                    "{origin}: model `{m}`: {kind} price {v} must be a non-negative number"
                );
            }
        }
        Ok(t)
    }

    /// What `tokens` cost on `model`; an error names the table's models when it has no price.
    pub fn cost(&self, model: &str, tokens: Tokens) -> anyhow::Result<f64> {
        let p = self.models.get(model).with_context(|| {
            format!(
                "no price for model `{model}` (the table has: {})",
                self.models.keys().cloned().collect::<Vec<_>>().join(", ")
            )
        })?;
        Ok((tokens.prompt as f64 * p.prompt
            + tokens.cached_prompt as f64 * p.cached_prompt
            + tokens.completion as f64 * p.completion)
            / 1_000_000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MILLIONS: Tokens = Tokens {
        prompt: 1_000_000,
        cached_prompt: 2_000_000,
        completion: 500_000,
    };

    #[test]
    fn the_built_in_table_parses_and_prices_the_offline_engine() {
        let t = PriceTable::embedded();
        let offline = quorum_runtime::metrics::OFFLINE_MODEL;
        assert_eq!(t.cost(offline, MILLIONS).unwrap(), 0.0);
        // The same table as the file in the repository, not a stale copy.
        let on_disk = PriceTable::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../eval/prices.json")).unwrap();
        assert_eq!(t.models, on_disk.models);
        // No path: the built-in table, whatever the working directory.
        assert_eq!(PriceTable::load_or_embedded(None).unwrap().models, t.models);
    }

    #[test]
    fn costs_per_kind_and_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("p.json");
        std::fs::write(
            &f,
            r#"{"models": {"m": {"prompt": 2.0, "cached_prompt": 0.5, "completion": 8.0}, "offline": {"prompt": 0, "cached_prompt": 0, "completion": 0}}}"#,
        )
        .unwrap();
        let t = PriceTable::load_or_embedded(Some(&f)).unwrap();
        assert!((t.cost("m", MILLIONS).unwrap() - (2.0 + 1.0 + 4.0)).abs() < 1e-9);
        assert_eq!(t.cost("offline", MILLIONS).unwrap(), 0.0);
        let e = t.cost("gpt-x", MILLIONS).unwrap_err().to_string();
        assert!(e.contains("gpt-x") && e.contains("m, offline"), "{e}");
        std::fs::write(
            &f,
            r#"{"models": {"m": {"prompt": -1, "cached_prompt": 0, "completion": 0}}}"#,
        )
        .unwrap();
        let e = format!("{:#}", PriceTable::load(&f).unwrap_err());
        assert!(e.contains("non-negative") && e.contains("p.json"), "{e}");
        std::fs::write(&f, r#"{"models": {"m": {"prompt": 1}}}"#).unwrap();
        let e = format!("{:#}", PriceTable::load(&f).unwrap_err());
        assert!(
            e.contains("not a valid price table") && e.contains("cached_prompt"),
            "{e}"
        );
        std::fs::write(&f, r#"{"models": {}}"#).unwrap();
        assert!(PriceTable::load(&f).unwrap_err().to_string().contains("names no model"));
        let missing = dir.path().join("nope.json");
        let e = format!("{:#}", PriceTable::load_or_embedded(Some(&missing)).unwrap_err());
        assert!(e.contains("reading the price table") && e.contains("nope.json"), "{e}");
    }
}

//! The eval's price table: USD per million tokens, by model and token kind,
//! from a JSON file (`eval/prices.json`), so the $ column follows whatever
//! the configured models cost. The offline engine is priced at zero.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use serde::Deserialize;

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
    pub fn load(path: &Path) -> anyhow::Result<PriceTable> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let t: PriceTable =
            serde_json::from_str(&text).with_context(|| format!("{} is not a valid price table", path.display()))?;
        for (m, p) in &t.models {
            for (kind, v) in [
                ("prompt", p.prompt),
                ("cached_prompt", p.cached_prompt),
                ("completion", p.completion),
            ] {
                anyhow::ensure!(
                    v.is_finite() && v >= 0.0,
                    "{}: model `{m}`: {kind} price {v} must be a non-negative number",
                    path.display()
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

    #[test]
    fn costs_per_kind_and_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("p.json");
        std::fs::write(
            &f,
            r#"{"models": {"m": {"prompt": 2.0, "cached_prompt": 0.5, "completion": 8.0}, "offline": {"prompt": 0, "cached_prompt": 0, "completion": 0}}}"#,
        )
        .unwrap();
        let t = PriceTable::load(&f).unwrap();
        let tokens = Tokens {
            prompt: 1_000_000,
            cached_prompt: 2_000_000,
            completion: 500_000,
        };
        assert!((t.cost("m", tokens).unwrap() - (2.0 + 1.0 + 4.0)).abs() < 1e-9);
        assert_eq!(t.cost("offline", tokens).unwrap(), 0.0);
        let e = t.cost("gpt-x", tokens).unwrap_err().to_string();
        assert!(e.contains("gpt-x") && e.contains("m, offline"), "{e}");
        std::fs::write(
            &f,
            r#"{"models": {"m": {"prompt": -1, "cached_prompt": 0, "completion": 0}}}"#,
        )
        .unwrap();
        assert!(PriceTable::load(&f).unwrap_err().to_string().contains("non-negative"));
        std::fs::write(&f, r#"{"models": {"m": {"prompt": 1}}}"#).unwrap();
        assert!(PriceTable::load(&f).is_err());
    }
}

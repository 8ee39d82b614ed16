//! The static agent: deterministic pattern rules on added lines, no model.

use quorum_core::{AgentRole, Finding};

use crate::rules::{self, Rule, arith, crypto, defaults, errors, injection, network};
use crate::{Engine, ReviewInput};

/// Every rule the static agent runs, in report order.
pub fn rules() -> Vec<&'static dyn Rule> {
    vec![
        &injection::SqlStringBuilding,
        &injection::ShellInjection,
        &injection::DynamicEval,
        &crypto::WeakPasswordHash,
        &crypto::TlsVerifyDisabled,
        &crypto::HardcodedSecret,
        &network::MissingTimeout,
        &errors::SwallowedException,
        &arith::DivisionByLength,
        &defaults::MutableDefault,
    ]
}

pub struct StaticEngine;

impl Engine for StaticEngine {
    fn role(&self) -> AgentRole {
        AgentRole::Static
    }
    fn needs(&self) -> crate::ContextNeeds {
        // Conventions' tree-sitter queries parse the head files.
        crate::ContextNeeds {
            conventions: true,
            head_files: true,
            impact: false,
            past_reviews: false,
        }
    }
    fn review(&self, input: &ReviewInput<'_>) -> Vec<Finding> {
        let mut findings = rules::run_rules(&rules(), input.diffs, &input.context.head_files, AgentRole::Static);
        findings.extend(
            input
                .context
                .conventions
                .check(input.diffs, &input.context.head_files, AgentRole::Static),
        );
        findings
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn rule_ids_are_unique_and_documented() {
        let mut ids = HashSet::new();
        for r in rules() {
            let m = r.meta();
            assert!(ids.insert(m.id), "duplicate rule id {}", m.id);
            assert!(m.rationale.len() > 80, "{} needs a real rationale", m.id);
            assert!((0.0..=1.0).contains(&m.confidence));
        }
    }
}

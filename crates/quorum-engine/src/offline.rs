//! The offline engine of the reviewer, security and tests roles (F-AG-6):
//! deterministic analysis that reads what changed rather than single added
//! lines. With a model configured, these rules still run and the model's
//! findings are added to theirs.

use quorum_core::{AgentRole, Finding};

use crate::rules::{
    self, Rule, authz, await_removed, condition_changed, finally_removed, fluent, index_past_end, offset_shift,
    overflow_wraps, untested,
};
use crate::{Engine, ReviewInput};

pub struct OfflineEngine {
    role: AgentRole,
}

impl OfflineEngine {
    pub fn new(role: AgentRole) -> Self {
        OfflineEngine { role }
    }

    /// The rules this role runs offline.
    pub fn rules(&self) -> Vec<&'static dyn Rule> {
        match self.role {
            AgentRole::Reviewer => vec![
                &condition_changed::ConditionChanged,
                &offset_shift::OffsetShift,
                &overflow_wraps::OverflowNowWraps,
                &index_past_end::IndexPastEnd,
                &fluent::ReceiverReturnRemoved,
                &await_removed::AwaitRemoved,
                &finally_removed::FinallyRemoved,
            ],
            AgentRole::Security => vec![&authz::AuthorizationRemoved],
            AgentRole::Tests | AgentRole::Static => vec![],
        }
    }
}

impl Engine for OfflineEngine {
    fn role(&self) -> AgentRole {
        self.role
    }

    /// Only the reviewer's graph checks read context offline; the others
    /// work on the diff alone.
    fn needs(&self) -> crate::ContextNeeds {
        match self.role {
            AgentRole::Reviewer => crate::ContextNeeds {
                conventions: false,
                head_files: true,
                impact: true,
                past_reviews: false,
            },
            _ => crate::ContextNeeds::NONE,
        }
    }

    fn review(&self, input: &ReviewInput<'_>) -> Vec<Finding> {
        let mut findings = rules::run_rules(&self.rules(), input.diffs, &input.context.head_files, self.role);
        if self.role == AgentRole::Reviewer
            && let Some(report) = &input.context.impact
        {
            findings.extend(crate::graph_checks::check(report, input.diffs, self.role));
        }
        if self.role == AgentRole::Tests {
            for (path, hit) in untested::check_change(input.diffs) {
                findings.push(rules::to_finding(untested::meta(), &path, hit, self.role));
            }
        }
        findings
    }
}

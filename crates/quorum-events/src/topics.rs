//! Topics, their partition counts and keys, and the consumer groups (SPEC §1).

use quorum_core::AgentRole;

/// Partitions of every topic; autoscaling caps at this many replicas per group.
pub const PARTITIONS: i32 = 6;

/// Every topic of the fleet. The topology list [`Topic::ALL`] is what brokers
/// are provisioned from (embedded mock, Strimzi `KafkaTopic`s, compose).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Topic {
    /// gateway → every agent group. Key: job_id.
    ReviewRequested,
    /// agents → aggregator. Key: job_id, so all results of a job share a partition.
    AgentResults,
    /// aggregator → critic. Key: job_id.
    Aggregated,
    /// critic → publisher. Key: job_id.
    Completed,
    /// gateway / CLI → indexer. Key: repo full name.
    IndexRequested,
    /// any worker after 3 failed attempts. Key: the original key.
    Dlq,
    /// operator API → publisher: approve or discard a draft review (F-PUB-4).
    /// Key: job_id. Not in SPEC §1's table: the gateway must not write to
    /// the SCM itself, so the decision travels to the publisher.
    DraftDecided,
}

impl Topic {
    pub const ALL: [Topic; 7] = [
        Topic::ReviewRequested,
        Topic::AgentResults,
        Topic::Aggregated,
        Topic::Completed,
        Topic::IndexRequested,
        Topic::Dlq,
        Topic::DraftDecided,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Topic::ReviewRequested => "pr.review.requested",
            Topic::AgentResults => "review.agent.results",
            Topic::Aggregated => "review.aggregated",
            Topic::Completed => "review.completed",
            Topic::IndexRequested => "repo.index.requested",
            Topic::Dlq => "review.dlq",
            Topic::DraftDecided => "review.draft.decided",
        }
    }

    pub fn from_name(name: &str) -> Option<Topic> {
        Topic::ALL.into_iter().find(|t| t.name() == name)
    }

    pub fn partitions(self) -> i32 {
        PARTITIONS
    }
}

/// Every consumer group of the fleet (one per role or service).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConsumerGroup {
    Agent(AgentRole),
    Aggregator,
    Critic,
    Publisher,
    /// The publisher's second consumer: draft decisions.
    PublisherDrafts,
    /// The publisher's third consumer: review requests, to mark the change's
    /// check "in progress" on the SCM (only the publisher writes there).
    PublisherChecks,
    Indexer,
}

impl ConsumerGroup {
    pub const ALL: [ConsumerGroup; 10] = [
        ConsumerGroup::Agent(AgentRole::Static),
        ConsumerGroup::Agent(AgentRole::Reviewer),
        ConsumerGroup::Agent(AgentRole::Security),
        ConsumerGroup::Agent(AgentRole::Tests),
        ConsumerGroup::Aggregator,
        ConsumerGroup::Critic,
        ConsumerGroup::Publisher,
        ConsumerGroup::PublisherDrafts,
        ConsumerGroup::PublisherChecks,
        ConsumerGroup::Indexer,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ConsumerGroup::Agent(AgentRole::Static) => "agent-static",
            ConsumerGroup::Agent(AgentRole::Reviewer) => "agent-reviewer",
            ConsumerGroup::Agent(AgentRole::Security) => "agent-security",
            ConsumerGroup::Agent(AgentRole::Tests) => "agent-tests",
            ConsumerGroup::Aggregator => "aggregator",
            ConsumerGroup::Critic => "critic",
            ConsumerGroup::Publisher => "publisher",
            ConsumerGroup::PublisherDrafts => "publisher-drafts",
            ConsumerGroup::PublisherChecks => "publisher-checks",
            ConsumerGroup::Indexer => "indexer",
        }
    }

    /// The topic the group consumes.
    pub fn topic(self) -> Topic {
        match self {
            ConsumerGroup::Agent(_) => Topic::ReviewRequested,
            ConsumerGroup::Aggregator => Topic::AgentResults,
            ConsumerGroup::Critic => Topic::Aggregated,
            ConsumerGroup::Publisher => Topic::Completed,
            ConsumerGroup::PublisherDrafts => Topic::DraftDecided,
            ConsumerGroup::PublisherChecks => Topic::ReviewRequested,
            ConsumerGroup::Indexer => Topic::IndexRequested,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_and_round_trip() {
        let names: HashSet<_> = Topic::ALL.iter().map(|t| t.name()).collect();
        assert_eq!(names.len(), Topic::ALL.len());
        for t in Topic::ALL {
            assert_eq!(Topic::from_name(t.name()), Some(t));
        }
        let groups: HashSet<_> = ConsumerGroup::ALL.iter().map(|g| g.name()).collect();
        assert_eq!(groups.len(), ConsumerGroup::ALL.len());
    }

    #[test]
    fn every_agent_group_reads_review_requests() {
        for r in AgentRole::ALL {
            assert_eq!(ConsumerGroup::Agent(r).topic(), Topic::ReviewRequested);
        }
    }
}

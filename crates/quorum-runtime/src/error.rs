//! How a handler failure is classified, which decides what the loop does next.

/// A handler's failure. The class decides the message's fate:
/// - `Retryable`: transient (a store or network hiccup); the message is tried
///   again, up to the attempt limit, then dead-lettered.
/// - `Invalid`: the message itself is bad; retrying cannot help, so it goes to
///   `review.dlq` at once and the partition moves on.
/// - `Fatal`: the worker cannot go on (lost its configuration, store gone for
///   good); the offset is not committed and the worker stops so a supervisor
///   restarts it.
#[derive(Debug, thiserror::Error)]
pub enum HandlerError {
    #[error("retryable: {0}")]
    Retryable(String),
    #[error("invalid message: {0}")]
    Invalid(String),
    #[error("fatal: {0}")]
    Fatal(String),
}

impl HandlerError {
    pub fn retryable(e: impl std::fmt::Display) -> Self {
        HandlerError::Retryable(e.to_string())
    }
    pub fn invalid(e: impl std::fmt::Display) -> Self {
        HandlerError::Invalid(e.to_string())
    }
    pub fn fatal(e: impl std::fmt::Display) -> Self {
        HandlerError::Fatal(e.to_string())
    }
    /// A failed publish: a message the broker refuses as too large is
    /// invalid (sending it again fails the same way); anything else may pass
    /// on a retry.
    pub fn from_send(e: RuntimeError) -> Self {
        if e.is_message_too_large() {
            HandlerError::invalid(e)
        } else {
            HandlerError::retryable(e)
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            HandlerError::Retryable(_) => "retryable",
            HandlerError::Invalid(_) => "invalid",
            HandlerError::Fatal(_) => "fatal",
        }
    }
}

impl From<quorum_events::DecodeError> for HandlerError {
    fn from(e: quorum_events::DecodeError) -> Self {
        HandlerError::Invalid(e.to_string())
    }
}

/// Errors of the runtime itself (not of a handler).
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("kafka: {0}")]
    Kafka(#[from] rdkafka::error::KafkaError),
    #[error("embedded broker: {0}")]
    Broker(String),
    #[error("configuration: {0}")]
    Config(String),
    #[error("handler for {group} failed fatally: {message}")]
    Fatal { group: String, message: String },
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
}

impl RuntimeError {
    /// The broker (or the producer's own limit) refused a message as too
    /// large: sending the same message again fails the same way.
    pub fn is_message_too_large(&self) -> bool {
        matches!(
            self,
            RuntimeError::Kafka(rdkafka::error::KafkaError::MessageProduction(
                rdkafka::types::RDKafkaErrorCode::MessageSizeTooLarge
            ))
        )
    }
}

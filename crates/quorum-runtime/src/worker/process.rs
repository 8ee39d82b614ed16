//! One message, start to finish except the commit: run the handler, publish
//! its outputs, or write the retry or dead-letter copy. Runs on its own task,
//! many at once; the loop in `worker.rs` owns offsets and commits.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use tracing::{Instrument, info_span, warn};

use quorum_core::backoff::Backoff;
use quorum_events::{Topic, headers};

use super::{Delivery, Handler, WorkerSpec};
use crate::config::BusConfig;
use crate::error::{HandlerError, RuntimeError};
use crate::metrics::Metrics;
use crate::producer::{BusProducer, OutMessage};
use crate::trace;

/// How one message ended.
#[derive(Debug)]
pub enum Outcome {
    /// Done with: outputs, or the retry/DLQ copy, are acknowledged; the
    /// label is the `outcome` of `quorum_bus_messages_total`.
    Finished(&'static str),
    /// Shutdown came before a retry or DLQ copy could be written: the offset
    /// stays uncommitted so the message is read again.
    Unsent,
    /// The handler says the service cannot go on.
    Fatal(String),
}

/// What every message's task needs, shared.
pub struct Processor {
    pub spec: WorkerSpec,
    pub config: BusConfig,
    pub producer: BusProducer,
    pub metrics: Metrics,
    pub handler: Arc<dyn Handler>,
}

impl Processor {
    pub async fn process(&self, delivery: &Delivery, shutdown: &CancellationToken) -> Outcome {
        if delivery
            .header(headers::RETRY_FOR)
            .is_some_and(|owner| owner != self.spec.group)
        {
            // Another group's retry copy: nothing to do, nothing to count.
            return Outcome::Finished("");
        }
        let span = info_span!(
            "handle",
            service = %self.spec.service,
            topic = %delivery.topic,
            job_id = delivery.key.as_deref().unwrap_or(""),
            attempt = delivery.attempt,
            trace_id = delivery.header(headers::TRACEPARENT).and_then(trace::trace_id).unwrap_or(""),
            repo = tracing::field::Empty,
            pr = tracing::field::Empty,
            agent = tracing::field::Empty,
        );
        trace::continue_from(&span, delivery.header(headers::TRACEPARENT));
        let started = Instant::now();
        let result = self.run_handler(delivery).instrument(span.clone()).await;
        self.metrics
            .handler_duration
            .with_label_values(&[&self.spec.service])
            .observe(started.elapsed().as_secs_f64());
        let outcome = match result {
            Ok(outs) => match self.produce_all(delivery, &outs).instrument(span.clone()).await {
                Ok(()) => Outcome::Finished("ok"),
                // An output the broker refuses as too large is invalid: the
                // same input makes the same output, so it is dead-lettered at once.
                Err(e) => {
                    self.retry_or_dlq(delivery, HandlerError::from_send(e), shutdown)
                        .instrument(span.clone())
                        .await
                }
            },
            Err(HandlerError::Fatal(message)) => {
                self.count(delivery, "fatal");
                return Outcome::Fatal(message);
            }
            Err(e) => self.retry_or_dlq(delivery, e, shutdown).instrument(span.clone()).await,
        };
        if let Outcome::Finished(label) = outcome
            && !label.is_empty()
        {
            self.count(delivery, label);
        }
        outcome
    }

    /// Runs the handler on a task of its own, so a panic becomes a retryable
    /// failure of this message instead of losing track of it.
    async fn run_handler(&self, delivery: &Delivery) -> Result<Vec<OutMessage>, HandlerError> {
        let handler = self.handler.clone();
        let d = delivery.clone();
        match tokio::spawn(async move { handler.handle(&d).await }.in_current_span()).await {
            Ok(r) => r,
            Err(e) if e.is_panic() => Err(HandlerError::Retryable(format!("handler panicked: {e}"))),
            Err(e) => Err(HandlerError::Retryable(format!("handler task failed: {e}"))),
        }
    }

    async fn produce_all(&self, delivery: &Delivery, outs: &[OutMessage]) -> Result<(), RuntimeError> {
        let parent = delivery.header(headers::TRACEPARENT).map(str::to_string);
        for out in outs {
            let mut out = out.clone();
            if out.header(headers::TRACEPARENT).is_none() {
                let tp = trace::outgoing(&tracing::Span::current(), parent.as_deref());
                out = out.with_header(headers::TRACEPARENT, tp);
            }
            self.producer.send(&out).await?;
            self.metrics
                .produced
                .with_label_values(&[&self.spec.service, &out.topic])
                .inc();
        }
        Ok(())
    }

    /// Re-publishes for another attempt, or dead-letters.
    async fn retry_or_dlq(&self, delivery: &Delivery, error: HandlerError, shutdown: &CancellationToken) -> Outcome {
        let retryable = matches!(error, HandlerError::Retryable(_));
        let key = delivery.key.clone().unwrap_or_default();
        let base = delivery
            .headers
            .iter()
            .filter(|(k, _)| k != headers::ATTEMPT && k != headers::RETRY_FOR)
            .cloned();
        let (msg, label) = if retryable && delivery.attempt < self.config.max_attempts {
            warn!(error = %error, attempt = delivery.attempt, "handler failed; will retry");
            // `attempt` counts from 1: the first retry waits up to one base.
            let backoff = Backoff::new(self.config.retry_backoff, MAX_RETRY_BACKOFF)
                .delay(delivery.attempt.saturating_sub(1), fastrand::f64());
            tokio::time::sleep(backoff).await;
            let mut h: Vec<(String, Vec<u8>)> = base.collect();
            h.push((headers::ATTEMPT.into(), (delivery.attempt + 1).to_string().into_bytes()));
            h.push((headers::RETRY_FOR.into(), self.spec.group.clone().into_bytes()));
            let msg = OutMessage {
                topic: delivery.topic.clone(),
                key,
                payload: delivery.payload.clone(),
                headers: h,
            };
            (msg, "retry")
        } else {
            warn!(error = %error, attempt = delivery.attempt, "giving up on message; sending it to the DLQ");
            let mut h: Vec<(String, Vec<u8>)> = base.collect();
            h.extend([
                (headers::ATTEMPT.into(), delivery.attempt.to_string().into_bytes()),
                (headers::DLQ_ERROR.into(), error.to_string().into_bytes()),
                (headers::DLQ_ERROR_KIND.into(), error.kind().as_bytes().to_vec()),
                (headers::DLQ_TOPIC.into(), delivery.topic.clone().into_bytes()),
                (
                    headers::DLQ_PARTITION.into(),
                    delivery.partition.to_string().into_bytes(),
                ),
                (headers::DLQ_OFFSET.into(), delivery.offset.to_string().into_bytes()),
                (headers::DLQ_GROUP.into(), self.spec.group.clone().into_bytes()),
            ]);
            let msg = OutMessage {
                topic: Topic::Dlq.name().into(),
                key,
                payload: delivery.payload.clone(),
                headers: h,
            };
            (msg, if retryable { "dlq" } else { "invalid" })
        };
        // Losing the message is not an option: keep trying to write the copy
        // until it is acknowledged or we are asked to stop.
        let mut wait = Duration::from_millis(100);
        loop {
            match self.producer.send(&msg).await {
                Ok(()) => return Outcome::Finished(label),
                Err(e) => {
                    warn!(error = %e, "cannot write retry/DLQ copy; trying again");
                    if shutdown.is_cancelled() {
                        return Outcome::Unsent;
                    }
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(5));
                }
            }
        }
    }

    pub fn count(&self, delivery: &Delivery, outcome: &str) {
        self.metrics
            .bus_messages
            .with_label_values(&[&self.spec.service, &delivery.topic, outcome])
            .inc();
    }
}

/// A retried message holds its partition: never wait longer than this.
const MAX_RETRY_BACKOFF: Duration = Duration::from_secs(30);

//! Errors as text without losing their causes.
//!
//! Where an error crosses into a `String` (a tool result a model or an MCP
//! client reads, a validation message), `e.to_string()` keeps only the
//! outermost message: "reading the graph" without the "permission denied"
//! under it. [`chain`] keeps the whole `source()` chain.

use std::error::Error;

/// `error: cause: cause…`, each cause once: a source whose message the
/// outer message already contains (thiserror's `#[error("…: {0}")]` over a
/// `#[source]`) is not repeated.
pub fn chain(error: &(dyn Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let msg = cause.to_string();
        if !msg.is_empty() && !text.contains(&msg) {
            text.push_str(": ");
            text.push_str(&msg);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct E(&'static str, Option<Box<E>>);
    impl std::fmt::Display for E {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }
    impl Error for E {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            self.1.as_deref().map(|e| e as &(dyn Error + 'static))
        }
    }

    #[test]
    fn every_cause_is_kept_in_order() {
        let e = E(
            "reading the graph",
            Some(Box::new(E(
                "opening blob",
                Some(Box::new(E("permission denied", None))),
            ))),
        );
        assert_eq!(e.to_string(), "reading the graph");
        assert_eq!(chain(&e), "reading the graph: opening blob: permission denied");
    }

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let e = E("git failed: bad ref", Some(Box::new(E("bad ref", None))));
        assert_eq!(chain(&e), "git failed: bad ref");
        let io = std::io::Error::other("disk full");
        assert_eq!(chain(&io), "disk full");
    }
}

//! Graceful shutdown: SIGTERM or Ctrl-C cancels a token every task watches.

use tokio_util::sync::CancellationToken;

/// A token cancelled on SIGTERM or SIGINT.
pub fn on_signal() -> CancellationToken {
    let token = CancellationToken::new();
    let t = token.clone();
    tokio::spawn(async move {
        let ctrl_c = tokio::signal::ctrl_c();
        #[cfg(unix)]
        {
            let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                .expect("can install a SIGTERM handler");
            tokio::select! {
                _ = ctrl_c => {},
                _ = term.recv() => {},
            }
        }
        #[cfg(not(unix))]
        let _ = ctrl_c.await;
        tracing::info!("shutdown requested; finishing the message in hand");
        t.cancel();
    });
    token
}

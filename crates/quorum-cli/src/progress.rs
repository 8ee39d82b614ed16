//! Progress of the long commands (`eval`, `bench`, `bench-index`,
//! `bench-search`, `index`, `impact`, `search`) as indicatif bars on
//! stderr. indicatif's stderr target draws only when stderr is a terminal,
//! so piped output, CI logs and tests get no bar and no carriage returns;
//! lines a command prints while a bar is up go through
//! [`ProgressBar::suspend`], which prints them whether or not the bar is
//! drawn (`println` on a hidden bar would drop them).

use std::sync::OnceLock;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// `  {prefix} [####>----] 12/40 {unit} (3.1/s, eta 9s) {message}` on stderr.
pub fn bar(prefix: &str, total: u64, unit: &str) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    let template = format!("  {{prefix}} [{{bar:30}}] {{pos}}/{{len}} {unit} ({{per_sec}}, eta {{eta}}) {{msg}}");
    pb.set_style(
        ProgressStyle::with_template(&template)
            .expect("a valid progress template")
            .progress_chars("#>-"),
    );
    pb.set_prefix(prefix.to_string());
    pb
}

/// A bar for the `(done, total)` callbacks of the graph build and the
/// search index, created on the first report (only then is the total
/// known) and cleared when `done` reaches it.
pub struct LazyBar {
    prefix: &'static str,
    unit: &'static str,
    bar: OnceLock<ProgressBar>,
}

impl LazyBar {
    pub fn new(prefix: &'static str, unit: &'static str) -> LazyBar {
        LazyBar {
            prefix,
            unit,
            bar: OnceLock::new(),
        }
    }

    /// Takes `&self` so one bar serves both `Fn` and `FnMut` callbacks.
    pub fn update(&self, done: usize, total: usize) {
        if total == 0 {
            return;
        }
        let b = self.bar.get_or_init(|| bar(self.prefix, total as u64, self.unit));
        b.set_length(total as u64);
        b.set_position(done as u64);
        if done >= total {
            b.finish_and_clear();
        }
    }
}

impl Drop for LazyBar {
    /// A command that fails half-way leaves no half-drawn bar behind.
    fn drop(&mut self) {
        if let Some(b) = self.bar.get() {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::IsTerminal;

    use super::*;

    /// Test output is captured, so stderr is not a terminal and nothing
    /// may be drawn; were it a terminal, the bar would draw.
    #[test]
    fn bars_draw_only_on_a_terminal() {
        let on_terminal = std::io::stderr().is_terminal();
        let pb = bar("eval", 3, "reviews");
        assert_eq!(pb.is_hidden(), !on_terminal);
        pb.inc(2);
        assert_eq!(pb.position(), 2);
        pb.finish_and_clear();

        let lazy = LazyBar::new("parsing", "files");
        lazy.update(0, 0);
        assert!(lazy.bar.get().is_none(), "no total, no bar");
        lazy.update(4, 10);
        let b = lazy.bar.get().unwrap();
        assert_eq!((b.position(), b.length()), (4, Some(10)));
        assert_eq!(b.is_hidden(), !on_terminal);
        lazy.update(10, 10);
        assert!(b.is_finished());
    }
}

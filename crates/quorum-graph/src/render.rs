//! The impact report as the compact text block every agent gets at the top
//! of its prompt. A token budget (≈ 4 characters a token) keeps it bounded:
//! what each changed symbol is and which calls it breaks are always kept;
//! callers and tests fill what is left, and what did not fit is counted.

use crate::impact::{ChangeKind, ImpactReport};

/// Characters per token, the usual estimate for code and English.
const CHARS_PER_TOKEN: usize = 4;

impl ImpactReport {
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty()
    }

    /// Renders the report within `budget_tokens`.
    pub fn render(&self, budget_tokens: usize) -> String {
        // (priority, order, line): lower priority numbers are kept first.
        let mut lines: Vec<(u8, usize, String)> = vec![];
        let mut push = |prio: u8, line: String| {
            let order = lines.len();
            lines.push((prio, order, line));
        };
        push(0, format!("## Impact report (reverse call graph, {} hops)", self.hops));
        if self.changed.is_empty() {
            push(0, "No indexed symbol encloses the changed lines.".into());
        }
        for c in &self.changed {
            let change = match c.change {
                ChangeKind::Added => "added",
                ChangeKind::Modified => "modified",
                ChangeKind::Removed => "removed",
            };
            push(
                0,
                format!(
                    "- {} `{}` ({change}) {}:{}-{}",
                    c.kind, c.qname, c.path, c.start_line, c.end_line
                ),
            );
            if let Some((old, new)) = &c.signature {
                push(0, format!("  signature: {old} -> {new}"));
            }
            for b in &c.broken_calls {
                push(
                    0,
                    format!(
                        "  BREAKS {}:{} in `{}`: `{}` {}",
                        b.path, b.line, b.caller, b.text, b.problem
                    ),
                );
            }
            if c.callers.is_empty() {
                push(1, "  callers: none found".into());
            }
            for k in &c.callers {
                let by_name = if k.confidence < 0.99 {
                    format!(", by name {:.1}", k.confidence)
                } else {
                    String::new()
                };
                push(
                    1 + k.hops,
                    format!(
                        "  {} {}:{} `{}` ({} hop{}{by_name})",
                        k.via,
                        k.path,
                        k.line,
                        k.qname,
                        k.hops,
                        if k.hops == 1 { "" } else { "s" }
                    ),
                );
            }
            if c.tests.is_empty() {
                push(2, "  tests reaching it: none".into());
            } else {
                push(2, format!("  tests reaching it: {}", c.tests.join(", ")));
            }
        }
        // The essentials (priority 0) are always kept; the rest fill the
        // budget in priority order, stopping at the first line that does not
        // fit so a short low-priority line never jumps a longer, more useful one.
        let budget = budget_tokens * CHARS_PER_TOKEN;
        let mut sorted: Vec<&(u8, usize, String)> = lines.iter().collect();
        sorted.sort_by_key(|(p, o, _)| (*p, *o));
        let mut keep: Vec<&(u8, usize, String)> = vec![];
        let mut used = 0;
        let mut full = false;
        let mut dropped = 0;
        for l in sorted {
            if l.0 == 0 || (!full && used + l.2.len() < budget) {
                used += l.2.len() + 1;
                keep.push(l);
            } else {
                full = true;
                dropped += 1;
            }
        }
        keep.sort_by_key(|(_, o, _)| *o);
        let mut out: String = keep.iter().map(|(_, _, l)| format!("{l}\n")).collect();
        if dropped > 0 {
            out.push_str(&format!(
                "  … {dropped} more lines omitted (token budget {budget_tokens})\n"
            ));
        }
        out
    }
}

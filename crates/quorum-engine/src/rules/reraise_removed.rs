//! A re-raise the change removed from inside a handler, judged on the head
//! file rather than the hunk: the handler's opening line may be above the
//! hunk, and the re-raise may have sat in a branch of the handler
//! (`except OSError as e: if e.errno != EPIPE: raise`), where the hunk
//! shows neither the handler nor the branch whole.
//!
//! The evidence is the same as for a handler whose whole block the hunk
//! shows: the change removed a propagation, and the block it sat in no
//! longer propagates. A propagation the change added elsewhere in the same
//! handler means it moved (a branch restructured), not that it went.

use quorum_core::{FileDiff, Hunk, LineKind};

use super::Hit;
use super::errors::{CATCH, EXCEPT, RETHROW, propagates, propagates_braced};
use super::scope::{Block, enclosing_braces, lines_of};
use crate::lang::indent;

/// How many blocks out from the removed `throw` the `catch` may be
/// (`catch (e) { if (…) { for (…) { throw e; } } }` is three).
const MAX_NESTING: usize = 3;

/// Each removed line of `h` with the number of the last head line above it
/// (0 when it was the first line of the file).
fn removed_below(h: &Hunk) -> Vec<(u32, &str)> {
    let mut above = h.new_start.saturating_sub(1);
    let mut out = Vec::new();
    for l in &h.lines {
        match (l.kind, l.new_line) {
            (LineKind::Removed, _) => out.push((above, l.text.as_str())),
            (_, Some(n)) => above = n,
            _ => {}
        }
    }
    out
}

/// New-side numbers of the lines the change added that propagate.
fn added_propagations(file: &FileDiff, propagates: fn(&[&str]) -> bool) -> Vec<u32> {
    file.hunks
        .iter()
        .flat_map(|h| &h.lines)
        .filter(|l| l.kind == LineKind::Added && propagates(&[l.text.trim()]))
        .filter_map(|l| l.new_line)
        .collect()
}

/// Python: whether a line is code (not blank, not a comment).
fn is_code(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && !t.starts_with('#')
}

/// Python: the nearest code line at or above 0-based `from` indented
/// less than `level` — the header of the block a line at `level` is in.
fn shallower_above(lines: &[&str], from: usize, level: usize) -> Option<usize> {
    (0..=from)
        .rev()
        .find(|&k| is_code(lines[k]) && indent(lines[k]) < level)
}

/// The statements directly in a block's body (at its shallowest indent):
/// the path every run of the block takes. A propagation nested in a
/// branch (`if isinstance(e, X): raise Y from e`) covers only that branch,
/// so it does not make the block propagate.
fn direct_statements<'a>(body: &[&'a str]) -> Vec<&'a str> {
    let code: Vec<&str> = body
        .iter()
        .copied()
        .filter(|t| !t.trim().is_empty() && !t.trim_start().starts_with(['#', '/']))
        .collect();
    let Some(level) = code.iter().map(|t| indent(t)).min() else {
        return vec![];
    };
    code.into_iter().filter(|t| indent(t) == level).map(str::trim).collect()
}

/// Python: the block (0-based header index, last body index) that a line
/// at `level`, placed below 0-based line `above`, sits in.
fn python_block(lines: &[&str], above: usize, level: usize) -> Option<(usize, usize)> {
    let header = shallower_above(lines, above.min(lines.len().checked_sub(1)?), level)?;
    Some((header, python_block_end(lines, header)))
}

/// The last non-blank line of the block `header` opens.
fn python_block_end(lines: &[&str], header: usize) -> usize {
    let level = indent(lines[header]);
    (header + 1..lines.len())
        .take_while(|&k| lines[k].trim().is_empty() || indent(lines[k]) > level)
        .filter(|&k| !lines[k].trim().is_empty())
        .last()
        .unwrap_or(header)
}

/// The `except` line `header` is, or is nested in, within its function.
fn python_handler(lines: &[&str], header: usize) -> Option<usize> {
    let mut at = header;
    loop {
        let t = lines[at].trim_start();
        if EXCEPT.is_match(lines[at]) {
            return Some(at);
        }
        if t.starts_with("def ") || t.starts_with("async def ") || t.starts_with("class ") {
            return None;
        }
        at = shallower_above(lines, at.checked_sub(1)?, indent(lines[at]))?;
    }
}

/// Python: a removed `raise` whose block, in the head, no longer raises,
/// inside an `except` handler.
pub(super) fn python(file: &FileDiff, head: &str) -> Vec<Hit> {
    let lines: Vec<&str> = head.lines().collect();
    let added = added_propagations(file, propagates);
    let mut hits = Vec::new();
    for h in &file.hunks {
        for (above, text) in removed_below(h) {
            let t = text.trim();
            if !(t == "raise" || t.starts_with("raise ")) || above == 0 {
                continue;
            }
            let Some((header, end)) = python_block(&lines, above as usize - 1, indent(text)) else {
                continue;
            };
            let body = direct_statements(&lines[header + 1..=end]);
            if body.is_empty() || propagates(&body) {
                continue;
            }
            let Some(handler) = python_handler(&lines, header) else {
                continue;
            };
            let handler_end = python_block_end(&lines, handler);
            if added
                .iter()
                .any(|&n| n as usize > handler + 1 && n as usize <= handler_end + 1)
            {
                continue;
            }
            let block = if header == handler {
                "the handler".to_string()
            } else {
                format!("`{}`", lines[header].trim())
            };
            let mut hit = Hit::at(
                (above + 1).min(end as u32 + 1),
                format!(
                    "{} … the change removed `{t}`, and {block} no longer passes the error on",
                    lines[handler].trim()
                ),
            );
            hit.confidence = Some(0.85);
            hits.push(hit);
        }
    }
    hits
}

/// The `catch` block enclosing `block` (it or one of its parents, at most
/// [`MAX_NESTING`] out) and the name it binds.
fn enclosing_catch(head: &str, mut block: Block) -> Option<(Block, String)> {
    for _ in 0..=MAX_NESTING {
        let first = lines_of(head, block).first().copied()?;
        if let Some(c) = CATCH.captures(first) {
            let binding = c
                .get(1)
                .map_or("", |m| m.as_str())
                .split_whitespace()
                .last()
                .unwrap_or("");
            return Some((block, binding.to_string()));
        }
        block = enclosing_braces(head, block.open)?;
    }
    None
}

/// Brace languages: a removed `throw err;` whose `catch (err)` opens above
/// the hunk, or whose branch inside the catch no longer throws.
pub(super) fn braced(file: &FileDiff, head: &str) -> Vec<Hit> {
    let added = added_propagations(file, propagates_braced);
    let mut hits = Vec::new();
    for h in &file.hunks {
        for (above, text) in removed_below(h) {
            let Some(thrown) = RETHROW.captures(text) else { continue };
            // The innermost block still open just below the line above.
            let Some(inner) = enclosing_braces(head, above + 1) else {
                continue;
            };
            let body = lines_of(head, inner);
            let stmts = direct_statements(&body[1..body.len().saturating_sub(1).max(1)]);
            if propagates_braced(&stmts) {
                continue;
            }
            let Some((catch, binding)) = enclosing_catch(head, inner) else {
                continue;
            };
            // Only a rethrow of the caught error itself: `throw other` was
            // a different decision.
            if binding != thrown[1] || added.iter().any(|&n| n > catch.open && n < catch.close) {
                continue;
            }
            let catch_line = lines_of(head, catch)[0].trim();
            let block = if inner == catch {
                "the block".to_string()
            } else {
                format!("`{}`", body[0].trim())
            };
            let mut hit = Hit::at(
                (above + 1).min(inner.close),
                format!(
                    "{catch_line} … the change removed `{}`, and {block} no longer passes the error on",
                    text.trim()
                ),
            );
            hit.confidence = Some(0.85);
            hits.push(hit);
        }
    }
    hits
}

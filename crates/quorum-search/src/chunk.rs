//! Cutting files into the units the index stores.
//!
//! Code: chunks follow the code graph's top-level symbols and tile the file
//! completely — every line is in exactly one chunk, so a search can land on
//! module-level code as well as on functions. Small neighbours are merged
//! (a three-line constant is not worth a vector of its own) and long
//! symbols are split where a statement of the body starts, never inside one.
//!
//! Docs: Markdown headings are the boundaries; each chunk carries its
//! heading path ("Contributing > Money") as its symbol.

use serde::{Deserialize, Serialize};

/// Which collection a chunk lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Code,
    Docs,
    /// The team's past review threads (review memory), one point per
    /// thread: not files of a commit, so not in [`Kind::ALL`].
    Reviews,
}

impl Kind {
    /// The kinds a commit's files are indexed into.
    pub const ALL: [Kind; 2] = [Kind::Code, Kind::Docs];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Code => "code",
            Kind::Docs => "docs",
            Kind::Reviews => "reviews",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        match s {
            "code" => Some(Kind::Code),
            "docs" => Some(Kind::Docs),
            _ => None,
        }
    }
}

/// A span of a symbol the graph found (1-based, inclusive lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolSpan {
    pub name: String,
    pub start_line: u32,
    pub end_line: u32,
}

/// One piece of a file, as indexed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub kind: Kind,
    pub path: String,
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    /// The symbol (code) or heading path (docs) the chunk belongs to;
    /// `None` for module-level code.
    pub symbol: Option<String>,
    pub text: String,
}

/// Chunks smaller than this (in lines) are merged into a neighbour.
pub const MIN_LINES: u32 = 6;
/// Chunks longer than this are split on statement boundaries.
pub const MAX_LINES: u32 = 60;
/// And longer than this (in bytes), whatever their line count.
pub const MAX_BYTES: usize = 3_000;

/// Whether `path` is documentation the docs index should hold: Markdown,
/// reStructuredText or AsciiDoc anywhere, and README / CONTRIBUTING files
/// whatever their extension.
pub fn is_doc(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let (stem, ext) = name.split_once('.').unwrap_or((&name, ""));
    matches!(ext, "md" | "markdown" | "mdx" | "rst" | "adoc")
        || (matches!(stem, "readme" | "contributing") && matches!(ext, "" | "txt"))
}

/// A working range of lines before it becomes a [`Chunk`].
#[derive(Debug, Clone)]
struct Piece {
    start: u32,
    end: u32,
    symbol: Option<String>,
}

/// Tiles a source file into code chunks aligned to `symbols` (any order,
/// nested ones ignored: only outermost spans cut the file).
pub fn chunk_code(path: &str, text: &str, symbols: &[SymbolSpan]) -> Vec<Chunk> {
    let lines: Vec<&str> = text.lines().collect();
    let n = lines.len() as u32;
    if n == 0 {
        return vec![];
    }
    let mut spans: Vec<&SymbolSpan> = symbols
        .iter()
        .filter(|s| s.start_line >= 1 && s.start_line <= s.end_line && s.start_line <= n)
        .collect();
    spans.sort_by_key(|s| (s.start_line, std::cmp::Reverse(s.end_line)));
    // Outermost spans, in order, without overlaps.
    let mut pieces: Vec<Piece> = vec![];
    let mut next = 1u32;
    for s in spans {
        if s.start_line < next {
            continue;
        }
        if s.start_line > next {
            pieces.push(Piece {
                start: next,
                end: s.start_line - 1,
                symbol: None,
            });
        }
        let end = s.end_line.min(n);
        pieces.push(Piece {
            start: s.start_line,
            end,
            symbol: Some(s.name.clone()),
        });
        next = end + 1;
    }
    if next <= n {
        pieces.push(Piece {
            start: next,
            end: n,
            symbol: None,
        });
    }
    let pieces = drop_blank(pieces, &lines);
    let pieces = merge_small(pieces);
    let pieces: Vec<Piece> = pieces.into_iter().flat_map(|p| split_long(p, &lines)).collect();
    to_chunks(Kind::Code, path, &lines, pieces)
}

/// Blank-only gaps are folded into their neighbour so no chunk is empty.
fn drop_blank(pieces: Vec<Piece>, lines: &[&str]) -> Vec<Piece> {
    let blank = |p: &Piece| (p.start..=p.end).all(|l| lines[(l - 1) as usize].trim().is_empty());
    let mut out: Vec<Piece> = vec![];
    let mut carry: Option<u32> = None;
    for mut p in pieces {
        if blank(&p) {
            match out.last_mut() {
                Some(last) => last.end = p.end,
                None => carry = Some(carry.unwrap_or(p.start)),
            }
            continue;
        }
        if let Some(start) = carry.take() {
            p.start = start;
        }
        out.push(p);
    }
    if out.is_empty()
        && let Some(start) = carry
    {
        // A file of blank lines: one chunk, so the file still tiles.
        out.push(Piece {
            start,
            end: lines.len() as u32,
            symbol: None,
        });
    }
    out
}

fn len(p: &Piece) -> u32 {
    p.end - p.start + 1
}

/// Merges pieces under [`MIN_LINES`] into a neighbour: module-level glue
/// goes with the symbol after it (its imports or decorators' context), a
/// small symbol with other small symbols around it.
fn merge_small(pieces: Vec<Piece>) -> Vec<Piece> {
    let mut out: Vec<Piece> = vec![];
    for p in pieces {
        if let Some(last) = out.last_mut() {
            let last_small = len(last) < MIN_LINES;
            let this_small = len(&p) < MIN_LINES;
            if (last_small || this_small) && len(last) + len(&p) <= MAX_LINES {
                last.end = p.end;
                last.symbol = match (last.symbol.take(), p.symbol) {
                    // The chunk is named after its biggest symbol.
                    (Some(a), Some(b)) => Some(if this_small || !last_small { a } else { b }),
                    (a, b) => a.or(b),
                };
                continue;
            }
        }
        out.push(p);
    }
    out
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// Splits a piece longer than [`MAX_LINES`] / [`MAX_BYTES`] at lines that
/// start a statement of its body: non-blank lines at the body's shallowest
/// indentation, preferring one right after a blank line.
fn split_long(p: Piece, lines: &[&str]) -> Vec<Piece> {
    let bytes = |a: u32, b: u32| -> usize { (a..=b).map(|l| lines[(l - 1) as usize].len() + 1).sum() };
    if len(&p) <= MAX_LINES && bytes(p.start, p.end) <= MAX_BYTES {
        return vec![p];
    }
    // The body: every line after the first; its shallowest indentation
    // marks statement starts (for module-level code that is column 0).
    let body: Vec<u32> = (p.start + 1..=p.end)
        .filter(|&l| !lines[(l - 1) as usize].trim().is_empty())
        .collect();
    let Some(base) = body.iter().map(|&l| indent(lines[(l - 1) as usize])).min() else {
        return vec![p];
    };
    let is_boundary = |l: u32| {
        let s = lines[(l - 1) as usize];
        !s.trim().is_empty() && indent(s) == base && !is_continuation(s.trim_start())
    };
    let mut out = vec![];
    let mut start = p.start;
    let mut l = p.start + MIN_LINES;
    // The latest boundary seen, and whether a blank line precedes it
    // (a paragraph break is the better place to cut).
    let mut best: Option<(u32, bool)> = None;
    while l <= p.end {
        if is_boundary(l) {
            let after_blank = lines[(l - 2) as usize].trim().is_empty();
            if after_blank || !best.is_some_and(|(_, b)| b) {
                best = Some((l, after_blank));
            }
        }
        let too_long = l - start + 1 >= MAX_LINES || bytes(start, l) >= MAX_BYTES;
        if too_long && let Some((b, _)) = best.take() {
            out.push(Piece {
                start,
                end: b - 1,
                symbol: p.symbol.clone(),
            });
            start = b;
            l = b + MIN_LINES;
            continue;
        }
        l += 1;
    }
    out.push(Piece {
        start,
        end: p.end,
        symbol: p.symbol.clone(),
    });
    // A tail too small to stand alone goes back to its predecessor.
    if out.len() > 1 && len(out.last().expect("non-empty")) < MIN_LINES {
        let tail = out.pop().expect("non-empty");
        out.last_mut().expect("non-empty").end = tail.end;
    }
    out
}

/// Lines that continue the statement above rather than start one: closing
/// brackets, `else`/`elif`/`except`/`catch`/`finally`, chained calls.
fn is_continuation(line: &str) -> bool {
    line.starts_with([')', ']', '}', '.'])
        || ["else", "elif", "except", "catch", "finally", "&&", "||"]
            .iter()
            .any(|k| line.starts_with(k))
}

fn to_chunks(kind: Kind, path: &str, lines: &[&str], pieces: Vec<Piece>) -> Vec<Chunk> {
    pieces
        .into_iter()
        .map(|p| Chunk {
            kind,
            path: path.to_string(),
            start_line: p.start,
            end_line: p.end,
            symbol: p.symbol,
            text: lines[(p.start - 1) as usize..p.end as usize].join("\n"),
        })
        .collect()
}

/// Chunks a Markdown (or other text) document at its headings. Headings in
/// fenced code blocks are not headings.
pub fn chunk_docs(path: &str, text: &str) -> Vec<Chunk> {
    let lines: Vec<&str> = text.lines().collect();
    if lines.is_empty() {
        return vec![];
    }
    let mut pieces: Vec<Piece> = vec![];
    let mut trail: Vec<(usize, String)> = vec![];
    let mut fence = false;
    let mut start = 1u32;
    let mut symbol: Option<String> = None;
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = !fence;
            continue;
        }
        let level = t.chars().take_while(|&c| c == '#').count();
        if fence || level == 0 || level > 6 || !t[level..].starts_with(' ') {
            continue;
        }
        let no = i as u32 + 1;
        if no > start {
            pieces.push(Piece {
                start,
                end: no - 1,
                symbol: symbol.clone(),
            });
        }
        trail.retain(|(l, _)| *l < level);
        trail.push((level, t[level..].trim().trim_end_matches('#').trim().to_string()));
        symbol = Some(trail.iter().map(|(_, h)| h.as_str()).collect::<Vec<_>>().join(" > "));
        start = no;
    }
    pieces.push(Piece {
        start,
        end: lines.len() as u32,
        symbol,
    });
    let pieces = drop_blank(pieces, &lines);
    // Sections are split on paragraph boundaries when long.
    let pieces: Vec<Piece> = pieces.into_iter().flat_map(|p| split_long(p, &lines)).collect();
    to_chunks(Kind::Docs, path, &lines, pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(name: &str, a: u32, b: u32) -> SymbolSpan {
        SymbolSpan {
            name: name.into(),
            start_line: a,
            end_line: b,
        }
    }

    /// Every line of the file is in exactly one chunk, in order.
    fn assert_tiles(chunks: &[Chunk], n: u32) {
        let mut next = 1;
        for c in chunks {
            assert_eq!(c.start_line, next, "gap or overlap before {c:?}");
            assert!(c.end_line >= c.start_line);
            next = c.end_line + 1;
        }
        assert_eq!(next, n + 1, "file not covered to its end");
    }

    #[test]
    fn code_chunks_tile_the_file_and_follow_symbols() {
        let mut src = String::from("import os\nimport sys\n\n");
        for i in 0..3 {
            src.push_str(&format!("def f{i}(x):\n"));
            for j in 0..10 {
                src.push_str(&format!("    y{j} = x + {j}\n"));
            }
            src.push_str("    return x\n\n");
        }
        src.push_str("X = 1\n");
        let n = src.lines().count() as u32;
        let syms = [span("f0", 4, 15), span("f1", 17, 28), span("f2", 30, 41)];
        let chunks = chunk_code("m.py", &src, &syms);
        assert_tiles(&chunks, n);
        // Imports merged into f0; the trailing constant into f2.
        assert_eq!(chunks.len(), 3, "{chunks:#?}");
        assert_eq!(chunks[0].symbol.as_deref(), Some("f0"));
        assert!(chunks[0].text.starts_with("import os"));
        assert!(chunks[2].text.ends_with("X = 1"));
    }

    #[test]
    fn nested_spans_do_not_cut_their_parent() {
        let src = (1..=30).map(|i| format!("line {i}")).collect::<Vec<_>>().join("\n");
        let chunks = chunk_code("a.py", &src, &[span("Outer", 1, 30), span("inner", 5, 10)]);
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].symbol.as_deref(), Some("Outer"));
    }

    #[test]
    fn long_symbols_split_on_statement_starts_only() {
        let mut src = String::from("def big():\n");
        for i in 0..100 {
            src.push_str(&format!("    if x{i}:\n        y = ({i},\n            {i})\n"));
        }
        let n = src.lines().count() as u32;
        let chunks = chunk_code("b.py", &src, &[span("big", 1, n)]);
        assert_tiles(&chunks, n);
        assert!(chunks.len() >= 5, "{} chunks", chunks.len());
        for c in &chunks {
            assert!(
                c.end_line - c.start_line < MAX_LINES,
                "{}..{}",
                c.start_line,
                c.end_line
            );
            assert_eq!(c.symbol.as_deref(), Some("big"));
            if c.start_line > 1 {
                assert!(
                    c.text.starts_with("    if x"),
                    "split inside a statement: {:?}",
                    &c.text[..20]
                );
            }
        }
    }

    #[test]
    fn a_long_file_without_symbols_still_tiles() {
        let src = (1..=500).map(|i| format!("x{i} = {i}")).collect::<Vec<_>>().join("\n");
        let chunks = chunk_code("c.py", &src, &[]);
        assert_tiles(&chunks, 500);
        assert!(chunks.iter().all(|c| c.end_line - c.start_line < MAX_LINES));
    }

    #[test]
    fn docs_chunk_at_headings_with_their_path() {
        let md = "# Guide\nintro\n\n## Money\nUse Decimal for money, never float.\n\n```\n# not a heading\n```\n## Style\nfour spaces\n";
        let chunks = chunk_docs("CONTRIBUTING.md", md);
        assert_tiles(&chunks, md.lines().count() as u32);
        let names: Vec<_> = chunks.iter().map(|c| c.symbol.clone().unwrap_or_default()).collect();
        assert_eq!(names, ["Guide", "Guide > Money", "Guide > Style"]);
        assert!(chunks[1].text.contains("# not a heading"));
    }

    #[test]
    fn doc_paths() {
        assert!(is_doc("README"));
        assert!(is_doc("docs/adr/0001-money.md"));
        assert!(is_doc("CONTRIBUTING.rst"));
        assert!(is_doc("pkg/README.txt"));
        assert!(!is_doc("src/readme_parser.py"));
        assert!(!is_doc("CONTRIBUTING.py"));
        assert!(!is_doc("shop/pricing.py"));
    }
}

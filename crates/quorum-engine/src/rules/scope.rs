//! The block a line sits in, read from a head file: brace languages by
//! counting braces (string and comment contents skipped), Python by
//! indentation. Rules use it when the evidence spans more than a hunk
//! shows (the `catch` a removed `throw` belonged to, the method a removed
//! `return this` ended). Approximate by design: a caller that cannot find
//! the block gets `None` and reports nothing.

/// A block: its opening line (1-based) and closing line, inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    pub open: u32,
    pub close: u32,
}

/// Every brace of `src` in order, as (0-based line, is it an opening
/// one), ignoring braces in strings, template literals' text and `//` /
/// `/* */` comments.
fn braces(src: &str) -> Vec<(usize, bool)> {
    let mut out = Vec::new();
    let mut in_block_comment = false;
    let mut quote: Option<char> = None;
    for (n, line) in src.lines().enumerate() {
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            let next = chars.get(i + 1).copied();
            if in_block_comment {
                if c == '*' && next == Some('/') {
                    in_block_comment = false;
                    i += 1;
                }
            } else if let Some(q) = quote {
                if c == '\\' {
                    i += 1;
                } else if c == q {
                    quote = None;
                }
            } else if c == '/' && next == Some('/') {
                break;
            } else if c == '/' && next == Some('*') {
                in_block_comment = true;
                i += 1;
            } else if c == '"' || c == '\'' || c == '`' {
                quote = Some(c);
            } else if c == '{' || c == '}' {
                out.push((n, c == '{'));
            }
            i += 1;
        }
        // A plain string never spans lines; a template literal may.
        if quote.is_some_and(|q| q != '`') {
            quote = None;
        }
    }
    out
}

/// The innermost block still open just before `line` (1-based) of `src`:
/// the nearest `{` above it that is not closed before it, and where it
/// closes. `None` at top level or when the braces do not balance.
pub fn enclosing_braces(src: &str, line: u32) -> Option<Block> {
    let at = (line as usize).checked_sub(1)?;
    let braces = braces(src);
    let mut stack: Vec<usize> = Vec::new();
    let mut k = 0;
    while k < braces.len() && braces[k].0 < at {
        if braces[k].1 {
            stack.push(k);
        } else {
            stack.pop()?;
        }
        k += 1;
    }
    let open = *stack.last()?;
    let mut depth = 0i64;
    for &(i, opening) in &braces[open..] {
        depth += if opening { 1 } else { -1 };
        if depth == 0 {
            return Some(Block {
                open: braces[open].0 as u32 + 1,
                close: i as u32 + 1,
            });
        }
    }
    None
}

/// The lines of `src` from `b.open` to `b.close`, 1-based, inclusive.
pub fn lines_of(src: &str, b: Block) -> Vec<&str> {
    src.lines()
        .skip(b.open as usize - 1)
        .take((b.close - b.open + 1) as usize)
        .collect()
}

fn indent(s: &str) -> usize {
    s.len() - s.trim_start().len()
}

/// Python: the nearest `def` above `line` (1-based) that `line` is inside
/// (indented deeper, or a blank line), and its last body line.
pub fn enclosing_def(src: &str, line: u32) -> Option<Block> {
    let lines: Vec<&str> = src.lines().collect();
    let at = (line as usize).checked_sub(1)?.min(lines.len());
    // The indentation the line at `at` (or the first non-blank line after
    // it) has: the def must be shallower.
    let mut want = lines[at..]
        .iter()
        .find(|l| !l.trim().is_empty())
        .map(|l| indent(l))
        .unwrap_or(usize::MAX);
    for i in (0..at).rev() {
        let l = lines[i];
        if l.trim().is_empty() {
            continue;
        }
        let ind = indent(l);
        if ind >= want {
            continue;
        }
        let t = l.trim_start();
        if t.starts_with("def ") || t.starts_with("async def ") {
            let close = (i + 1..lines.len())
                .take_while(|&k| lines[k].trim().is_empty() || indent(lines[k]) > ind)
                .last()
                .unwrap_or(i);
            // Trailing blank lines belong to no one.
            let close = (i..=close).rev().find(|&k| !lines[k].trim().is_empty()).unwrap_or(i);
            return Some(Block {
                open: i as u32 + 1,
                close: close as u32 + 1,
            });
        }
        want = ind;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const JS: &str = "class A {\n  m(x) {\n    try {\n      go(x);\n    } catch (err) {\n      if (err.code) {\n        log('{');\n      }\n      return x;\n    }\n  }\n}\n";

    #[test]
    fn the_innermost_open_brace_and_where_it_closes() {
        // Line 9 (`return x;`) sits in the catch block opened on line 5.
        assert_eq!(enclosing_braces(JS, 9), Some(Block { open: 5, close: 10 }));
        // Line 7 sits in the `if`, whose `'{'` string does not count.
        assert_eq!(enclosing_braces(JS, 7), Some(Block { open: 6, close: 8 }));
        // Line 3 sits in the method body.
        assert_eq!(enclosing_braces(JS, 3), Some(Block { open: 2, close: 11 }));
        assert_eq!(enclosing_braces(JS, 1), None, "top level");
        assert_eq!(lines_of(JS, Block { open: 6, close: 8 }).len(), 3);
    }

    #[test]
    fn unbalanced_source_gives_nothing() {
        assert_eq!(enclosing_braces("}\n{\nx\n", 3), None);
    }

    #[test]
    fn python_defs_by_indentation() {
        let py = "class C:\n    def m(self):\n        x = 1\n\n        return self\n\n    def n(self):\n        pass\n";
        assert_eq!(enclosing_def(py, 5), Some(Block { open: 2, close: 5 }));
        assert_eq!(enclosing_def(py, 8), Some(Block { open: 7, close: 8 }));
        assert_eq!(enclosing_def(py, 1), None);
    }
}

//! Queries mined from a codebase for the retrieval benchmark, CodeSearchNet
//! style: each documented function's first docstring sentence is a query
//! whose answer is that function, and the docstring is blanked out of the
//! indexed copy (lines kept, so line numbers still point at the function);
//! names that occur once are identifier queries. Python docstrings and
//! JSDoc blocks (`/** … */` right above a JavaScript/TypeScript function).

use std::collections::HashMap;

use quorum_graph::Graph;
use quorum_graph::extract::SymbolKind;

use crate::bench_retrieval::{Answer, Query};

pub struct Mined {
    pub docstring_queries: Vec<Query>,
    pub identifier_queries: Vec<Query>,
    /// The tree with every mined docstring blanked.
    pub tree: Vec<(String, String)>,
    pub removed: usize,
}

/// A docstring: its lines (0-based, inclusive) and its first sentence.
struct Doc {
    first: usize,
    last: usize,
    sentence: String,
}

pub fn mine(graph: &Graph, tree: &[(String, String)]) -> Mined {
    let mut docs = vec![];
    let mut names: HashMap<String, Vec<Answer>> = HashMap::new();
    let mut out_tree = vec![];
    let mut removed = 0;
    for (path, text) in tree {
        let Some(facts) = graph.file(path) else {
            out_tree.push((path.clone(), text.clone()));
            continue;
        };
        if quorum_core::lang::is_test_path(path) {
            out_tree.push((path.clone(), text.clone()));
            continue;
        }
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let python = path.ends_with(".py");
        for s in &facts.symbols {
            if !matches!(s.kind, SymbolKind::Function | SymbolKind::Method) {
                continue;
            }
            let answer = Answer {
                path: path.clone(),
                line: s.start_line,
            };
            names.entry(s.name.clone()).or_default().push(answer.clone());
            let start = s.start_line.saturating_sub(1) as usize;
            let doc = if python {
                python_doc(&lines, start)
            } else {
                jsdoc(&lines, start)
            };
            let Some(doc) = doc else { continue };
            for l in &mut lines[doc.first..=doc.last] {
                l.clear();
            }
            removed += 1;
            docs.push(Query {
                kind: "docstring".into(),
                query: doc.sentence,
                answers: vec![answer],
            });
        }
        let mut blanked = lines.join("\n");
        if text.ends_with('\n') {
            blanked.push('\n');
        }
        out_tree.push((path.clone(), blanked));
    }
    // A sentence shared by several functions has no single answer.
    let mut seen: HashMap<String, usize> = HashMap::new();
    for d in &docs {
        *seen.entry(d.query.to_lowercase()).or_default() += 1;
    }
    docs.retain(|d| seen[&d.query.to_lowercase()] == 1);
    let mut identifiers: Vec<Query> = names
        .into_iter()
        .filter(|(name, at)| at.len() == 1 && is_distinctive(name))
        .map(|(name, at)| Query {
            kind: "identifier".into(),
            query: name,
            answers: at,
        })
        .collect();
    identifiers.sort_by(|a, b| (&a.answers[0].path, a.answers[0].line).cmp(&(&b.answers[0].path, b.answers[0].line)));
    Mined {
        docstring_queries: docs,
        identifier_queries: identifiers,
        tree: out_tree,
        removed,
    }
}

/// Long enough and made of more than one word (`get_user`, `mergeMap`),
/// not a dunder.
fn is_distinctive(name: &str) -> bool {
    let multi = name.trim_matches('_').contains('_') || name.chars().skip(1).any(|c| c.is_ascii_uppercase());
    name.len() >= 8 && multi && !name.starts_with("__")
}

/// The docstring of the Python function starting at line `start`: the
/// first statement after the signature, when it is a string literal.
fn python_doc(lines: &[String], start: usize) -> Option<Doc> {
    // Skip decorators, then the signature up to the `:` that ends it.
    let mut depth = 0i32;
    let mut i = start;
    let mut in_def = false;
    let sig_end = loop {
        let l = lines.get(i)?;
        let t = l.trim();
        if !in_def {
            if t.starts_with("def ") || t.starts_with("async def ") {
                in_def = true;
            } else if !(t.starts_with('@') || t.is_empty()) && depth == 0 {
                return None;
            }
        }
        let code = t.split(" #").next().unwrap_or(t);
        depth += code.matches(['(', '[', '{']).count() as i32 - code.matches([')', ']', '}']).count() as i32;
        if in_def && depth <= 0 && code.ends_with(':') {
            break i;
        }
        if i > start + 30 {
            return None;
        }
        i += 1;
    };
    let first = (sig_end + 1..lines.len()).find(|&j| !lines[j].trim().is_empty())?;
    let t = lines[first].trim_start();
    let t = t.trim_start_matches(['r', 'u', 'R', 'U']);
    let quote = ["\"\"\"", "'''"].into_iter().find(|q| t.starts_with(q))?;
    let body_start = &t[3..];
    let (last, text) = if let Some(end) = body_start.find(quote) {
        (first, body_start[..end].to_string())
    } else {
        let mut text = vec![body_start.to_string()];
        let mut j = first + 1;
        loop {
            let l = lines.get(j)?;
            if let Some(end) = l.find(quote) {
                text.push(l[..end].to_string());
                break (j, text.join("\n"));
            }
            text.push(l.clone());
            j += 1;
        }
    };
    Some(Doc {
        first,
        last,
        sentence: first_sentence(&text)?,
    })
}

/// The JSDoc block right above line `start` (decorators or blank lines may
/// not sit between).
fn jsdoc(lines: &[String], start: usize) -> Option<Doc> {
    let last = start.checked_sub(1)?;
    if !lines.get(last)?.trim_end().ends_with("*/") {
        return None;
    }
    let first = (0..=last).rev().find(|&j| lines[j].trim_start().starts_with("/**"))?;
    let mut text = vec![];
    for l in &lines[first..=last] {
        let t = l
            .trim()
            .trim_start_matches("/**")
            .trim_end_matches("*/")
            .trim_start_matches('*')
            .trim();
        if t.starts_with('@') {
            break;
        }
        text.push(t.to_string());
    }
    Some(Doc {
        first,
        last,
        sentence: first_sentence(&text.join("\n"))?,
    })
}

/// The first sentence of a docstring's first paragraph, when it has 4 to
/// 40 words (shorter ones say little; longer ones are not a query).
fn first_sentence(text: &str) -> Option<String> {
    let para: Vec<&str> = text
        .trim()
        .lines()
        .map(str::trim)
        .take_while(|l| !l.is_empty())
        .collect();
    let para = para.join(" ");
    let sentence = match para.find(". ") {
        Some(i) => &para[..i],
        None => para.trim_end_matches('.'),
    };
    let words = sentence.split_whitespace().count();
    (4..=40).contains(&words).then(|| sentence.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(str::to_string).collect()
    }

    #[test]
    fn a_python_docstring_after_a_multi_line_signature() {
        let src = lines(
            "@cached\ndef total(\n    a: int,\n    b: int,\n) -> int:\n    \"\"\"Add two numbers together safely. More text.\n\n    Details.\n    \"\"\"\n    return a + b\n",
        );
        let d = python_doc(&src, 0).unwrap();
        assert_eq!((d.first, d.last), (5, 8));
        assert_eq!(d.sentence, "Add two numbers together safely");
    }

    #[test]
    fn a_one_line_python_docstring_and_none_when_the_body_starts_with_code() {
        let src = lines("def f(x):\n    '''Return the square of x.'''\n    return x * x\n");
        let d = python_doc(&src, 0).unwrap();
        assert_eq!((d.first, d.last, d.sentence.as_str()), (1, 1, "Return the square of x"));
        assert!(python_doc(&lines("def f(x):\n    return '''a b c d'''\n"), 0).is_none());
        assert!(python_doc(&lines("def f(x):\n    y = 1\n    '''Not a docstring at all.'''\n"), 0).is_none());
    }

    #[test]
    fn a_jsdoc_block_stops_at_its_tags() {
        let src = lines(
            "/**\n * Emits values from the source until a notifier emits.\n *\n * @param notifier The thing.\n */\nexport function takeUntil(notifier) {\n}\n",
        );
        let d = jsdoc(&src, 5).unwrap();
        assert_eq!((d.first, d.last), (0, 4));
        assert_eq!(d.sentence, "Emits values from the source until a notifier emits");
        assert!(jsdoc(&lines("// a comment\nfunction f() {}\n"), 1).is_none());
    }

    #[test]
    fn short_or_long_sentences_are_not_queries() {
        assert_eq!(first_sentence("Return it."), None);
        assert_eq!(
            first_sentence("Split the list into chunks.\nMore."),
            Some("Split the list into chunks".into())
        );
        assert!(is_distinctive("get_user_name") && is_distinctive("mergeMap_x") && !is_distinctive("get"));
        assert!(!is_distinctive("__init__") && !is_distinctive("normalize"));
    }
}

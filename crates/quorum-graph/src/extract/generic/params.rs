//! Function parameters, for the languages whose calls can be checked
//! against them (Rust, Go, JavaScript/TypeScript), and when a plain
//! JavaScript parameter is optional (tested for absence, or `[name]` in its
//! JSDoc).

use tree_sitter::Node;

use super::is_ident_char;
use super::jsdoc::preceding_comment;
use crate::extract::{Param, ParamKind, text};
use crate::lang::Lang;

/// A function's parameters, where the language makes them checkable:
/// Rust (no defaults; `self` first for methods), Go (variadic last),
/// JavaScript/TypeScript (defaults, `?`, rest). Java is left out: overloads
/// share a name, so a call cannot be matched to one signature by name.
/// A plain-JavaScript function reading `arguments` has no fixed signature.
pub(super) fn parameters(lang: Lang, func: Node<'_>, src: &[u8]) -> Option<Vec<Param>> {
    let list = func.child_by_field_name("parameters").or_else(|| {
        // `x => …`: one bare parameter.
        func.child_by_field_name("parameter")
    })?;
    let p = |name: &str, kind: ParamKind, has_default: bool| Param {
        name: name.to_string(),
        kind,
        has_default,
        object_type: false,
    };
    let mut out = vec![];
    if list.kind() == "identifier" {
        out.push(p(text(list, src), ParamKind::Normal, false));
    } else {
        let mut c = list.walk();
        for n in list.named_children(&mut c) {
            match (lang, n.kind()) {
                (Lang::Rust, "self_parameter") => out.push(p("self", ParamKind::Normal, false)),
                (Lang::Rust, "parameter") => {
                    let name = n.child_by_field_name("pattern").map(|x| text(x, src)).unwrap_or("_");
                    out.push(p(name, ParamKind::Normal, false));
                }
                (Lang::Rust, "variadic_parameter") => out.push(p("...", ParamKind::VarArgs, false)),
                (Lang::Go, "parameter_declaration") => {
                    let mut c2 = n.walk();
                    let names: Vec<&str> = n
                        .children_by_field_name("name", &mut c2)
                        .map(|x| text(x, src))
                        .collect();
                    if names.is_empty() {
                        out.push(p("_", ParamKind::Normal, false));
                    }
                    for name in names {
                        out.push(p(name, ParamKind::Normal, false));
                    }
                }
                (Lang::Go, "variadic_parameter_declaration") => {
                    let name = n.child_by_field_name("name").map(|x| text(x, src)).unwrap_or("_");
                    out.push(p(name, ParamKind::VarArgs, false));
                }
                (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, kind) => {
                    let (pattern, default) = match kind {
                        "identifier" | "object_pattern" | "array_pattern" | "rest_pattern" => (n, false),
                        "assignment_pattern" => match n.child_by_field_name("left") {
                            Some(l) => (l, true),
                            None => continue,
                        },
                        "required_parameter" | "optional_parameter" => {
                            let Some(pat) = n.child_by_field_name("pattern") else {
                                continue;
                            };
                            if pat.kind() == "this" {
                                continue;
                            }
                            (
                                pat,
                                kind == "optional_parameter" || n.child_by_field_name("value").is_some(),
                            )
                        }
                        _ => continue,
                    };
                    if pattern.kind() == "rest_pattern" {
                        out.push(p(
                            text(pattern, src).trim_start_matches("..."),
                            ParamKind::VarArgs,
                            false,
                        ));
                    } else {
                        let mut param = p(&compact(text(pattern, src)), ParamKind::Normal, default);
                        // `options: { deep?: boolean }`: the annotation's type is an object literal type.
                        param.object_type = n
                            .child_by_field_name("type")
                            .and_then(|t| t.named_child(0))
                            .is_some_and(|t| t.kind() == "object_type");
                        out.push(param);
                    }
                }
                _ => {}
            }
        }
    }
    if lang == Lang::JavaScript {
        let body = func.child_by_field_name("body").map(|b| text(b, src)).unwrap_or("");
        if has_word(body, "arguments") {
            return None;
        }
        let doc = preceding_comment(func, src);
        for prm in out.iter_mut().filter(|p| p.kind == ParamKind::Normal && !p.has_default) {
            prm.has_default = js_optional(&prm.name, body, &doc);
        }
    }
    Some(out)
}

/// Whitespace runs collapsed (a destructured parameter's text, for signatures).
fn compact(t: &str) -> String {
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `word` occurs in `hay` as a whole identifier.
fn has_word(hay: &str, word: &str) -> bool {
    word_positions(hay, word).next().is_some()
}

fn word_positions<'a>(hay: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    hay.match_indices(word).map(|(i, _)| i).filter(move |&i| {
        let before = hay[..i].chars().next_back();
        let after = hay[i + word.len()..].chars().next();
        !before.is_some_and(|c| is_ident_char(c) || c == '.') && !after.is_some_and(is_ident_char)
    })
}

/// A plain-JavaScript parameter without a default is optional when the
/// function tests it for absence or its JSDoc marks it `[name]`.
fn js_optional(name: &str, body: &str, doc: &str) -> bool {
    if !name.chars().all(is_ident_char) {
        return false;
    }
    if doc.contains(&format!("[{name}")) || doc.contains(&format!("{name}?")) {
        return true;
    }
    word_positions(body, name).any(|i| {
        let before = body[..i].trim_end();
        let after = body[i + name.len()..].trim_start();
        before.ends_with('!')
            || before.ends_with("typeof")
            || before.ends_with("if (")
            || before.ends_with("if(")
            || ["===", "!==", "==", "!=", "||", "??", "&&", "?"]
                .iter()
                .any(|op| after.starts_with(op))
    })
}

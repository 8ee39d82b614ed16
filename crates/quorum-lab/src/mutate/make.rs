//! One mutation class at one site: the mutant and its inverse control (the
//! same edit with every caller the graph knows updated), or why the pair
//! cannot be made on one line.

use std::collections::BTreeMap;

use quorum_core::lang::Lang;

use super::edit::{
    append_arg, arg_count, body_indent, call_starts, drop_last_arg, drop_last_param, find_call, guard_call,
    last_param_to_options, opens_call, optional_or_variadic, param_count, passes_keywords, passes_positionally,
    rename_on, reorder_call_args, replace_line, swap_first_args, swap_first_params, uses_result, wrap_arg,
};
use super::{Site, caller_calls};

/// The definition line of `site` (0-based index into the file's lines):
/// the first line from its start that names it and opens its parameters —
/// after a keyword (`def`, `function`, `fn`, `func`), or as a class
/// method (`async name(`, `static name(`, `name(` opening the line).
pub(super) fn def_line(lines: &[&str], site: &Site) -> Option<usize> {
    let from = site.start_line.saturating_sub(1) as usize;
    const MODIFIERS: [&str; 8] = [
        "async ",
        "static ",
        "public ",
        "private ",
        "protected ",
        "get ",
        "set ",
        "*",
    ];
    (from..lines.len().min(from + 6)).find(|&i| {
        let l = lines[i];
        let Some(at) = opens_call(l, &site.name) else {
            return false;
        };
        let keyword = ["def ", "function ", "fn ", "func "].iter().any(|k| l.contains(k));
        let mut bare = l.trim_start();
        while let Some(m) = MODIFIERS.iter().find(|m| bare.starts_with(**m)) {
            bare = bare[m.len()..].trim_start();
        }
        keyword || (bare.starts_with(site.name.as_str()) && at == l.len() - bare.len())
    })
}

/// How a control updates one call line.
/// How a control updates one call line: the line and the name called (the
/// site's, or its class's for a constructor's instantiations).
type CallEdit<'a> = dyn Fn(&str, &str) -> Option<String> + 'a;

pub(super) struct Mutant {
    /// The files it changes, with their new text.
    pub files: Vec<(String, String)>,
    /// The site's callers `(path, line)` in this mutant's text (a line
    /// inserted above a caller in the definition's file moves it down).
    pub callers: Vec<(String, u32)>,
}

/// The classes the harness makes, in report order.
pub(super) const CLASSES: [&str; 8] = [
    "rename",
    "add-param",
    "remove-param",
    "reorder",
    "options-object",
    "return-none",
    "return-shape",
    "swap-args",
];

/// Whether a Go signature groups parameters under one type (`a, b int`),
/// where dropping the last would leave the others untyped.
fn go_shared_type(line: &str, name: &str) -> bool {
    find_call(line, name).is_some_and(|(_, open, close)| {
        line[open + 1..close]
            .split(',')
            .any(|p| !p.trim().is_empty() && !p.trim().contains(' '))
    })
}

/// `swap-args`: the first two arguments swapped at one call in another
/// file (the first that passes both positionally) — the definition is left
/// alone. Its control rewrites the same call line unchanged but for a
/// trailing comment, so the call is as new to the review as the mutant's.
fn swap_at_a_call(site: &Site, files: &BTreeMap<String, String>) -> Result<(Mutant, Mutant), String> {
    let (path, line, text, idx) = site
        .callers
        .iter()
        .filter(|(p, _)| *p != site.path)
        .find_map(|(p, l)| {
            let text = files.get(p)?;
            let idx = (*l as usize).checked_sub(1)?;
            let call = text.split('\n').nth(idx)?;
            passes_positionally(call, &site.name, 2).then_some((p, *l, text, idx))
        })
        .ok_or("no call in another file passes two arguments positionally")?;
    let lines: Vec<&str> = text.split('\n').collect();
    let swapped = swap_first_args(lines[idx], &site.name).ok_or("a call not on one line")?;
    if swapped == lines[idx] {
        return Err("the two arguments are the same text".into());
    }
    let comment = if path.ends_with(".py") {
        "  # checked"
    } else {
        " // checked"
    };
    let callers = vec![(path.clone(), line)];
    Ok((
        Mutant {
            files: vec![(path.clone(), replace_line(text, idx, &swapped))],
            callers: callers.clone(),
        },
        Mutant {
            files: vec![(
                path.clone(),
                replace_line(text, idx, &format!("{}{comment}", lines[idx])),
            )],
            callers,
        },
    ))
}

/// `edit` (which changes the first call of `name` in what it is given)
/// applied to every call of `name` on the line, the last first, each on
/// the text from its name on.
fn edit_every_call(line: &str, name: &str, edit: &CallEdit) -> Option<String> {
    let starts = call_starts(line, name);
    if starts.len() <= 1 {
        return edit(line, name);
    }
    let mut out = line.to_string();
    for &at in starts.iter().rev() {
        let edited = edit(&out[at..], name)?;
        out = format!("{}{edited}", &out[..at]);
    }
    Some(out)
}

/// `return-shape`: every `return { … }` in lines `from..to` of a
/// function becomes `return { value: { … } }` — the same data one level
/// down, so a caller reading `f().key` gets undefined. `None` when a
/// returned object does not close within the function.
fn wrap_returned_objects(lines: &[&str], from: usize, to: usize) -> Option<String> {
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let mut wrapped = 0;
    let mut i = from;
    while i < to {
        let Some(at) = out[i].find("return {") else {
            i += 1;
            continue;
        };
        let open = at + "return ".len();
        // The matching `}`, across lines (braces in strings are rare in
        // returned literals; a miscount fails to close and is not made).
        let (mut depth, mut close) = (0i32, None);
        'scan: for (k, line) in out.iter().enumerate().take(to).skip(i) {
            let start = if k == i { open } else { 0 };
            for (j, c) in line[start..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            close = Some((k, start + j));
                            break 'scan;
                        }
                    }
                    _ => {}
                }
            }
        }
        let (k, j) = close?;
        out[k].insert_str(j + 1, " }");
        out[i].insert_str(open, "{ value: ");
        wrapped += 1;
        i = k + 1;
    }
    (wrapped > 0).then(|| out.join("\n"))
}

/// The classes whose mutation changes the parameters: for a constructor,
/// the calls that instantiate its class break the same way. (`swap-args`
/// edits one call by the site's own name and is left as it was.)
const ARGUMENT_CLASSES: [&str; 4] = ["add-param", "remove-param", "reorder", "options-object"];

/// `site` as `class` sees it: for the argument classes its callers include
/// its class's instantiations; for the others they do not (and a site only
/// instantiations reach is not one).
pub(super) fn with_callers_for(class: &str, site: &Site) -> Option<Site> {
    let mut s = site.clone();
    if ARGUMENT_CLASSES.contains(&class) {
        s.callers.extend(s.class_callers.iter().cloned());
        s.callers.sort();
        s.callers.dedup();
    } else {
        s.class_callers.clear();
    }
    s.callers.iter().any(|(p, _)| *p != s.path).then_some(s)
}

/// The mutation and its inverse control for one site, or why not.
pub(super) fn make(class: &str, site: &Site, files: &BTreeMap<String, String>) -> Result<(Mutant, Mutant), String> {
    if class == "swap-args" {
        return swap_at_a_call(site, files);
    }
    let text = files
        .get(&site.path)
        .ok_or("the definition's file is not in the tree")?;
    let lines: Vec<&str> = text.split('\n').collect();
    let at = def_line(&lines, site).ok_or("no one-line definition found")?;
    let new_name = format!("{}_renamed", site.name);
    let lang = Lang::detect(&site.path);
    let python = site.path.ends_with(".py") || site.path.ends_with(".pyi");
    let js = Lang::detect(&site.path).is_some_and(|l| matches!(l, Lang::JavaScript | Lang::TypeScript | Lang::Tsx));
    // The definition's file after the mutation, and the index of a line
    // inserted into it (callers below it move down one).
    let (mutated, inserted, call_edit): (String, Option<usize>, Box<CallEdit>) = match class {
        "rename" => (
            replace_line(
                text,
                at,
                &rename_on(lines[at], &site.name, &new_name).ok_or("the name is not on the definition line")?,
            ),
            None,
            Box::new(|l: &str, name: &str| rename_on(l, name, &new_name)),
        ),
        "add-param" => {
            let (_, open, close) = find_call(lines[at], &site.name).ok_or("a signature over several lines")?;
            let params = &lines[at][open + 1..close];
            if optional_or_variadic(params, lang) {
                return Err("defaults or varargs: a required parameter cannot be appended".into());
            }
            let sep = if params.trim().is_empty() { "" } else { ", " };
            let declared = param_count(lines[at], &site.name).unwrap_or(0);
            // A parameter the language parses: Rust and Go need its type.
            let (param, arg) = match lang {
                Some(Lang::Rust) => ("quorum_extra: u8", "0"),
                Some(Lang::Go) => ("quorumExtra int", "0"),
                _ => ("quorum_extra", "None"),
            };
            (
                replace_line(
                    text,
                    at,
                    &format!("{}{sep}{param}{}", &lines[at][..close], &lines[at][close..]),
                ),
                None,
                Box::new(move |l: &str, name: &str| {
                    // JavaScript lets a call omit trailing parameters: the
                    // new argument goes in the new parameter's place.
                    let missing = if js {
                        declared.saturating_sub(arg_count(l, name)?)
                    } else {
                        0
                    };
                    // Python takes no positional argument after a keyword
                    // or an unpacking: the new one goes by its name.
                    if python && passes_keywords(l, name)? {
                        return append_arg(l, name, &format!("quorum_extra={arg}"));
                    }
                    let pad = "undefined, ".repeat(missing);
                    append_arg(l, name, &format!("{pad}{arg}"))
                }),
            )
        }
        "remove-param" => {
            let declared = param_count(lines[at], &site.name).unwrap_or(0);
            if js
                && !caller_calls(site, files)
                    .iter()
                    .any(|(l, name)| arg_count(l, name).is_some_and(|k| k >= declared))
            {
                return Err("no caller passes the last argument (nothing its removal would break)".into());
            }
            (
                replace_line(
                    text,
                    at,
                    &if lang == Some(Lang::Go) && go_shared_type(lines[at], &site.name) {
                        return Err("Go parameters sharing one type (`a, b int`)".into());
                    } else {
                        drop_last_param(lines[at], &site.name, lang)?
                    },
                ),
                None,
                Box::new(move |l: &str, name: &str| {
                    // A JavaScript call that omits the last parameter passes
                    // nothing to remove.
                    if js && arg_count(l, name)? < declared {
                        return Some(l.to_string());
                    }
                    drop_last_arg(l, name)
                }),
            )
        }
        "reorder" => {
            if lang == Some(Lang::Go) && go_shared_type(lines[at], &site.name) {
                return Err("Go parameters sharing one type (`a, b int`)".into());
            }
            let mutated = swap_first_params(lines[at], &site.name, lang)?;
            if !caller_calls(site, files)
                .iter()
                .any(|(l, name)| passes_positionally(l, name, 2))
            {
                return Err(
                    "no caller passes the first two arguments positionally (nothing a reorder would break)".into(),
                );
            }
            (
                replace_line(text, at, &mutated),
                None,
                Box::new(move |l: &str, name: &str| reorder_call_args(l, name, js)),
            )
        }
        "options-object" => {
            if !js {
                return Err("options objects are a JavaScript/TypeScript idiom (not claimed elsewhere)".into());
            }
            let (mutated, key) = last_param_to_options(lines[at], &site.name)?;
            // The last parameter's place among the arguments a call passes.
            let index = param_count(lines[at], &site.name).unwrap_or(0).saturating_sub(1);
            if !caller_calls(site, files)
                .iter()
                .any(|(l, name)| passes_positionally(l, name, index + 1))
            {
                return Err("no caller passes the last argument (nothing the options object would break)".into());
            }
            (
                replace_line(text, at, &mutated),
                None,
                Box::new(move |l: &str, name: &str| wrap_arg(l, name, index, &key)),
            )
        }
        "return-none" => {
            if !python && !js {
                return Err(
                    "a language whose types reject a missing value (only Python and JavaScript/TypeScript are claimed)"
                        .into(),
                );
            }
            if site.returns_none {
                return Err("it can already return None/null".into());
            }
            let uses = site.callers.iter().any(|(p, l)| {
                files.get(p).is_some_and(|t| {
                    let cl: Vec<&str> = t.split('\n').collect();
                    (*l as usize)
                        .checked_sub(1)
                        .is_some_and(|i| i < cl.len() && uses_result(&cl, i, &site.name))
                })
            });
            if !uses {
                return Err("no caller uses the result (nothing a None would break)".into());
            }
            let opens_body = if python { ':' } else { '{' };
            if !lines[at].trim_end().ends_with(opens_body) {
                return Err("a signature over several lines, or a one-line body".into());
            }
            let indent = body_indent(&lines, at).ok_or("no body")?;
            let early = if python {
                format!("{indent}if quorum_missing: return None")
            } else {
                format!("{indent}if (quorumMissing) return null;")
            };
            let mut ls: Vec<&str> = lines.clone();
            ls.insert(at + 1, &early);
            (
                ls.join("\n"),
                Some(at + 1),
                Box::new(move |l: &str, name: &str| guard_call(l, name, python)),
            )
        }
        "return-shape" => {
            if !js {
                return Err("the graph reads result keys in JavaScript/TypeScript only (not claimed elsewhere)".into());
            }
            if site.return_keys.is_empty() {
                return Err("not every return is an object literal with plain keys".into());
            }
            if !site.keys_read {
                return Err("no caller in another file reads a key of the result".into());
            }
            let end = (site.end_line as usize).min(lines.len());
            (
                wrap_returned_objects(&lines, at, end).ok_or("no `return {` whose object closes in the function")?,
                None,
                Box::new(|l: &str, name: &str| {
                    let (_, _, close) = find_call(l, name)?;
                    Some(format!("{}.value{}", &l[..=close], &l[close + 1..]))
                }),
            )
        }
        other => return Err(format!("unknown class {other}")),
    };
    let moved = |path: &str, line: u32| -> u32 {
        match inserted {
            Some(i) if path == site.path && line as usize > i => line + 1,
            _ => line,
        }
    };
    let callers: Vec<(String, u32)> = site.callers.iter().map(|(p, l)| (p.clone(), moved(p, *l))).collect();
    let mutant = Mutant {
        files: vec![(site.path.clone(), mutated.clone())],
        callers: callers.clone(),
    };
    // The control: every caller updated too.
    let mut edited: BTreeMap<String, String> = BTreeMap::new();
    edited.insert(site.path.clone(), mutated);
    for ((path, line), original) in callers.iter().zip(&site.callers) {
        // A rename's control leaves alone a call the graph matched only by
        // a name other definitions share: renaming it would rename a call
        // of another class's method, and make the new name unique, which
        // the graph then resolves to this definition.
        if class == "rename" && site.shared_name_callers.contains(original) {
            continue;
        }
        let current = edited
            .get(path)
            .cloned()
            .or_else(|| files.get(path).cloned())
            .ok_or("a caller's file is not in the tree")?;
        let idx = (*line as usize).checked_sub(1).ok_or("a caller on line 0")?;
        let cl: Vec<&str> = current.split('\n').collect();
        let l = cl.get(idx).ok_or("a caller line past the end")?;
        // Every call on the line (`f(a) && !f(b)`), not only the first; a
        // `None` guard wraps the call with its receiver, so it edits one.
        // A constructor's instantiations call its class's name.
        let name = match &site.class_name {
            Some(c) if site.class_callers.contains(original) => c.as_str(),
            _ => site.name.as_str(),
        };
        let updated = if class == "return-none" || class == "rename" {
            call_edit(l, name)
        } else {
            edit_every_call(l, name, &*call_edit)
        }
        .ok_or("a call not on one line, or through another name")?;
        edited.insert(path.clone(), replace_line(&current, idx, &updated));
    }
    Ok((
        mutant,
        Mutant {
            files: edited.into_iter().collect(),
            callers,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_control_edits_every_call_on_the_line() {
        let drop: &CallEdit = &|l: &str, name: &str| drop_last_arg(l, name);
        assert_eq!(
            edit_every_call("if (isHttps(a, x) && !isHttps(b, y)) {", "isHttps", drop).unwrap(),
            "if (isHttps(a) && !isHttps(b)) {"
        );
        assert_eq!(
            edit_every_call("ok = isHttps(a, x)", "isHttps", drop).unwrap(),
            "ok = isHttps(a)"
        );
    }

    #[test]
    fn returned_objects_are_wrapped_one_level_down() {
        let f = [
            "function parse(s) {",
            "  if (!s) return { ok: false };",
            "  return {",
            "    ok: true,",
            "    value: { s },",
            "  };",
            "}",
        ];
        assert_eq!(
            wrap_returned_objects(&f, 0, 7).unwrap(),
            "function parse(s) {\n  if (!s) return { value: { ok: false } };\n  return { value: {\n    ok: true,\n    value: { s },\n  } };\n}"
        );
        // An object that does not close inside the function is not made.
        assert_eq!(wrap_returned_objects(&f, 0, 4), None);
        assert_eq!(
            wrap_returned_objects(&["function f() {", "  return 1;", "}"], 0, 3),
            None
        );
    }
}

//! Text edits on one line that make a mutant and its control: a call or a
//! definition found as a whole word, its parentheses matched, its
//! top-level arguments split (brackets and quotes respected). An edit that
//! cannot be made on one line returns `None`, and the site is counted as
//! not made rather than guessed at.

use quorum_core::lang::Lang;

/// Replaces every whole-word `name` that opens a call or signature
/// (`name(`, or `name<T>(` with type parameters) with `new`.
pub(super) fn rename_on(line: &str, name: &str, new: &str) -> Option<String> {
    let mut out = String::new();
    let mut last = 0;
    for i in word_starts(line, name) {
        if paren_after(line, i + name.len()).is_some() {
            out.push_str(&line[last..i]);
            out.push_str(new);
            last = i + name.len();
        }
    }
    (last > 0).then(|| out + &line[last..])
}

/// Where `name` starts as a whole word in `line`.
fn word_starts<'a>(line: &'a str, name: &'a str) -> impl Iterator<Item = usize> + 'a {
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    line.match_indices(name).map(|(i, _)| i).filter(move |&i| {
        !line[..i].chars().last().is_some_and(ident) && !line[i + name.len()..].chars().next().is_some_and(ident)
    })
}

/// The `(` right after `at`, past type parameters (`<T, U>`) if any.
fn paren_after(line: &str, at: usize) -> Option<usize> {
    let rest = &line[at..];
    if rest.starts_with('(') {
        return Some(at);
    }
    // `function name (a, b) {`: standard style's space before the parameters.
    let spaced = rest.trim_start_matches(' ');
    if spaced.len() < rest.len() && spaced.starts_with('(') {
        return Some(at + rest.len() - spaced.len());
    }
    if !rest.starts_with('<') {
        return None;
    }
    let mut depth = 0;
    for (i, c) in rest.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => {
                depth -= 1;
                if depth == 0 {
                    return rest[i + 1..].starts_with('(').then_some(at + i + 1);
                }
            }
            '(' | ')' | ';' | '{' => return None,
            _ => {}
        }
    }
    None
}

/// The index of the `)` that closes the `(` at `open`, on this line.
pub(super) fn closing(line: &str, open: usize) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in line[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Inserts `arg` as the last argument of the first call of `name` on the line.
pub(super) fn append_arg(line: &str, name: &str, arg: &str) -> Option<String> {
    let (_, open, close) = find_call(line, name)?;
    let inside = line[open + 1..close].trim();
    let sep = if inside.is_empty() { "" } else { ", " };
    Some(format!("{}{sep}{arg}{}", &line[..close], &line[close..]))
}

/// Whether the first call of `name` on `line` passes a keyword argument
/// (`key=v`) or unpacks (`*args`, `**kwargs`): a positional argument
/// cannot follow those in Python, so a new one goes by keyword.
pub(super) fn passes_keywords(line: &str, name: &str) -> Option<bool> {
    let (_, open, close) = find_call(line, name)?;
    let args = &line[open + 1..close];
    Some(split_items(args, false).into_iter().any(|(a, b)| {
        let t = args[a..b].trim();
        let keyword = t.split_once('=').is_some_and(|(k, v)| {
            !v.starts_with('=') && !k.is_empty() && k.trim().chars().all(|c| c.is_alphanumeric() || c == '_')
        });
        t.starts_with('*') || keyword
    }))
}

pub(super) fn replace_line(text: &str, index: usize, new: &str) -> String {
    let mut lines: Vec<&str> = text.split('\n').collect();
    lines[index] = new;
    lines.join("\n")
}

/// Where every whole-word `name` that opens a call starts, in order.
pub(super) fn call_starts(line: &str, name: &str) -> Vec<usize> {
    word_starts(line, name)
        .filter(|&i| paren_after(line, i + name.len()).is_some())
        .collect()
}

/// Where the first whole-word `name` that opens a call or signature starts
/// (its parentheses may close on a later line).
pub(super) fn opens_call(line: &str, name: &str) -> Option<usize> {
    word_starts(line, name).find(|&i| paren_after(line, i + name.len()).is_some())
}

/// The first whole-word call or signature of `name` on the line (type
/// parameters allowed: `name<T>(`): the byte offsets of the name, of its
/// `(` and of the matching `)`.
pub(super) fn find_call(line: &str, name: &str) -> Option<(usize, usize, usize)> {
    word_starts(line, name).find_map(|i| {
        let open = paren_after(line, i + name.len())?;
        Some((i, open, closing(line, open)?))
    })
}

/// How many arguments the first call of `name` on the line passes.
pub(super) fn arg_count(line: &str, name: &str) -> Option<usize> {
    let (_, open, close) = find_call(line, name)?;
    Some(split_items(&line[open + 1..close], false).len())
}

/// How many parameters a signature line declares, receivers left out.
pub(super) fn param_count(line: &str, name: &str) -> Option<usize> {
    let (_, open, close) = find_call(line, name)?;
    let params = &line[open + 1..close];
    Some(
        split_items(params, true)
            .iter()
            .filter(|&&(a, b)| !is_receiver(&params[a..b]))
            .count(),
    )
}

/// The byte spans of the top-level, comma-separated items of `s` (an
/// argument or parameter list without its parentheses); a trailing comma
/// makes no empty item.
pub(super) fn split_items(s: &str, angle: bool) -> Vec<(usize, usize)> {
    let mut out = vec![];
    let (mut depth, mut quote, mut start) = (0i32, None::<char>, 0);
    let mut prev = ' ';
    for (i, c) in s.char_indices() {
        match quote {
            Some(q) if c == q && prev != '\\' => quote = None,
            Some(_) => {}
            None => match c {
                '\'' if angle && is_lifetime(&s[i + 1..]) => {}
                '"' | '\'' | '`' => quote = Some(c),
                '(' | '[' | '{' => depth += 1,
                '<' if angle => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                '>' if angle && prev != '=' && prev != '-' => depth -= 1,
                ',' if depth == 0 => {
                    out.push((start, i));
                    start = i + 1;
                }
                _ => {}
            },
        }
        prev = if prev == '\\' && c == '\\' { ' ' } else { c };
    }
    if !s[start..].trim().is_empty() {
        out.push((start, s.len()));
    }
    out
}

/// Whether the text after a `'` in a signature is a Rust lifetime (`'a`,
/// `'static`) rather than a quoted literal (`'x'`).
fn is_lifetime(after: &str) -> bool {
    let ident = after.len()
        - after
            .trim_start_matches(|c: char| c.is_alphanumeric() || c == '_')
            .len();
    ident > 0 && !after[ident..].starts_with('\'')
}

/// `s` without its last item (and the comma before it).
fn drop_last_item(s: &str, angle: bool) -> Option<String> {
    let items = split_items(s, angle);
    let &(start, end) = items.last()?;
    let cut = match items.len() {
        1 => start,
        _ => items[items.len() - 2].1,
    };
    Some(format!("{}{}", &s[..cut], &s[end..]).trim_end_matches(' ').to_string())
}

/// Parameters a caller need not pass, or may pass any number of: defaults
/// and varargs as each language writes them (in Go and Rust a `*` is a
/// pointer; Rust has neither).
pub(super) fn optional_or_variadic(params: &str, lang: Option<Lang>) -> bool {
    match lang {
        Some(Lang::Rust) => false,
        Some(Lang::Go | Lang::Java) => params.contains("..."),
        _ => params.contains('=') || params.contains('*') || params.contains("..."),
    }
}

/// The receiver parameters a caller never passes.
fn is_receiver(param: &str) -> bool {
    let p = param.trim();
    matches!(p, "self" | "cls" | "&self" | "&mut self" | "mut self") || p.starts_with("this:")
}

/// The definition line with its last parameter removed, or why not.
pub(super) fn drop_last_param(line: &str, name: &str, lang: Option<Lang>) -> Result<String, String> {
    let (_, open, close) = find_call(line, name).ok_or("a signature over several lines")?;
    let params = &line[open + 1..close];
    if optional_or_variadic(params, lang) || (lang != Some(Lang::Rust) && params.contains('?')) {
        return Err("defaults, varargs or optional parameters: callers need not pass the last one".into());
    }
    let items = split_items(params, true);
    if items.iter().filter(|&&(a, b)| !is_receiver(&params[a..b])).count() == 0 {
        return Err("no parameter besides the receiver".into());
    }
    let kept = drop_last_item(params, true).ok_or("no parameter to remove")?;
    Ok(format!("{}{kept}{}", &line[..open + 1], &line[close..]))
}

/// The first call of `name` on the line with its last argument removed;
/// `None` when the call passes none or spreads its arguments.
pub(super) fn drop_last_arg(line: &str, name: &str) -> Option<String> {
    let (_, open, close) = find_call(line, name)?;
    let args = &line[open + 1..close];
    if args.contains('*') || args.contains("...") {
        return None;
    }
    let kept = drop_last_item(args, false)?;
    Some(format!("{}{kept}{}", &line[..open + 1], &line[close..]))
}

/// Where the expression that calls `name` at byte `at` starts: back over
/// its receiver chain (`self.x.`, `ctx().`, `a[0].`).
fn receiver_start(line: &str, at: usize) -> usize {
    let b = line.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    let mut pos = at;
    while pos > 0 && b[pos - 1] == b'.' {
        pos -= 1;
        while pos > 0 && matches!(b[pos - 1], b')' | b']') {
            let (open, close) = if b[pos - 1] == b')' { (b'(', b')') } else { (b'[', b']') };
            let mut depth = 0;
            let mut i = pos;
            while i > 0 {
                i -= 1;
                if b[i] == close {
                    depth += 1;
                } else if b[i] == open {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
            }
            pos = i;
        }
        while pos > 0 && ident(b[pos - 1]) {
            pos -= 1;
        }
    }
    pos
}

/// Every call of `name` on the line, each with its receiver, wrapped so a
/// `None`/`null` result is replaced before anything uses it:
/// `(ctx.f(a) or quorum_default)` in Python, `(ctx.f(a) ?? quorumDefault)`
/// in JavaScript/TypeScript. Every call, not the first: a line that calls
/// twice (`!f(s).has(k) || f(s).get(k)`) is broken by the second too.
/// Calls are wrapped from the last, so earlier offsets hold.
pub(super) fn guard_call(line: &str, name: &str, python: bool) -> Option<String> {
    let fallback = if python {
        " or quorum_default"
    } else {
        " ?? quorumDefault"
    };
    let starts = call_starts(line, name);
    if starts.is_empty() {
        return None;
    }
    let mut out = line.to_string();
    for &at in starts.iter().rev() {
        let open = paren_after(&out, at + name.len())?;
        let close = closing(&out, open)?;
        let start = receiver_start(&out, at);
        out = format!(
            "{}({}{fallback}){}",
            &out[..start],
            &out[start..=close],
            &out[close + 1..]
        );
    }
    Some(out)
}

/// Whether the caller at `lines[idx]` uses the result of its call of
/// `name` so that a `None`/`null` breaks it, read from the text alone:
/// dereferenced at once (`f(x).a`, `f(x)[0]`), iterated (`for … in f(x)`,
/// `for (… of f(x))`), or assigned to a name whose first later mention
/// (within a dozen lines) dereferences it unguarded.
pub(super) fn uses_result(lines: &[&str], idx: usize, name: &str) -> bool {
    let line = lines[idx];
    let Some((at, _, close)) = find_call(line, name) else {
        return false;
    };
    if matches!(line[close + 1..].chars().next(), Some('.' | '[')) {
        return true;
    }
    let before = line[..receiver_start(line, at)].trim_end();
    let before = before.strip_suffix("await").unwrap_or(before).trim_end();
    if before.ends_with(" in") || before.ends_with(" of") {
        return true;
    }
    let Some(lhs) = before.strip_suffix('=') else {
        return false;
    };
    if lhs.ends_with(['=', '!', '<', '>']) {
        return false;
    }
    let lhs = lhs.trim();
    let var = ["const ", "let ", "var "]
        .iter()
        .find_map(|k| lhs.strip_prefix(k))
        .unwrap_or(lhs)
        .split(':')
        .next()
        .unwrap_or("")
        .trim();
    if var.is_empty() || !var.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$') {
        return false;
    }
    for l in lines.iter().skip(idx + 1).take(12) {
        let Some(i) = word_starts(l, var).next() else { continue };
        let next = l[i + var.len()..].chars().next();
        let guarded = [
            "if ",
            "if(",
            " is None",
            " is not None",
            "== null",
            "!= null",
            " or ",
            "&&",
            "||",
            "?.",
        ]
        .iter()
        .any(|g| l.contains(g));
        return matches!(next, Some('.' | '[')) && !guarded;
    }
    false
}

/// The definition line with its first two parameters (after a receiver)
/// swapped, or why not.
pub(super) fn swap_first_params(line: &str, name: &str, lang: Option<Lang>) -> Result<String, String> {
    let (_, open, close) = find_call(line, name).ok_or("a signature over several lines")?;
    let params = &line[open + 1..close];
    if optional_or_variadic(params, lang) {
        return Err("defaults or varargs".into());
    }
    let items: Vec<(usize, usize)> = split_items(params, true)
        .into_iter()
        .filter(|&(a, b)| !is_receiver(&params[a..b]))
        .collect();
    if items.len() < 2 {
        return Err("fewer than two parameters besides the receiver".into());
    }
    Ok(format!("{}{}", &line[..open + 1], swap(params, items[0], items[1])) + &line[close..])
}

/// `s` with the items at spans `a` and `b` (in order) swapped, each keeping
/// the whitespace around it.
fn swap(s: &str, a: (usize, usize), b: (usize, usize)) -> String {
    let core = |(x, y): (usize, usize)| {
        let t = &s[x..y];
        let lead = t.len() - t.trim_start().len();
        (x + lead, x + lead + t.trim().len())
    };
    let (a, b) = (core(a), core(b));
    format!(
        "{}{}{}{}{}",
        &s[..a.0],
        &s[b.0..b.1],
        &s[a.1..b.0],
        &s[a.0..a.1],
        &s[b.1..]
    )
}

/// A byte range `[start, end)` of a line.
type Span = (usize, usize);

/// How many leading arguments of the first call of `name` are positional
/// (not `key=value`, not spread), and the call's argument spans.
fn positional_args(line: &str, name: &str) -> Option<(usize, usize, Vec<Span>)> {
    let (_, open, close) = find_call(line, name)?;
    let args = &line[open + 1..close];
    let items = split_items(args, false);
    let positional = items
        .iter()
        .take_while(|&&(a, b)| {
            let t = args[a..b].trim();
            !t.starts_with('*') && !t.starts_with("...") && !keyword_arg(t)
        })
        .count();
    Some((open, positional, items))
}

/// `name=value` (a Python keyword argument), not `a == b`.
fn keyword_arg(arg: &str) -> bool {
    arg.split_once('=').is_some_and(|(k, v)| {
        let k = k.trim();
        !v.starts_with('=') && !k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || c == '_')
    })
}

/// Whether the first call of `name` passes at least `n` arguments positionally.
pub(super) fn passes_positionally(line: &str, name: &str, n: usize) -> bool {
    positional_args(line, name).is_some_and(|(_, p, _)| p >= n)
}

/// The first call of `name` with its first two arguments swapped when it
/// passes both positionally, unchanged when it does not (a keyword call
/// is not broken by a reorder); `None` when there is no call on the line.
pub(super) fn swap_first_args(line: &str, name: &str) -> Option<String> {
    let (open, positional, items) = positional_args(line, name)?;
    if positional < 2 {
        return Some(line.to_string());
    }
    let close = closing(line, open)?;
    let args = &line[open + 1..close];
    Some(format!(
        "{}{}{}",
        &line[..open + 1],
        swap(args, items[0], items[1]),
        &line[close..]
    ))
}

/// A caller's line updated for a reorder of the first two parameters: the
/// first two positional arguments swapped; in JavaScript a call that passed
/// one argument passes `undefined` first, so the argument keeps reaching
/// the parameter it reached before (now the second).
pub(super) fn reorder_call_args(line: &str, name: &str, js: bool) -> Option<String> {
    let (open, positional, items) = positional_args(line, name)?;
    if js && positional == 1 && items.len() == 1 {
        let (a, _) = items[0];
        let at = open + 1 + a;
        return Some(format!("{}undefined, {}", &line[..at], &line[at..]));
    }
    swap_first_args(line, name)
}

/// The definition line with its last parameter `p` turned into an options
/// object (`p` → `{ p }`), and the parameter's name; or why not.
pub(super) fn last_param_to_options(line: &str, name: &str) -> Result<(String, String), String> {
    let (_, open, close) = find_call(line, name).ok_or("a signature over several lines")?;
    let params = &line[open + 1..close];
    if params.contains('=') || params.contains("...") || params.contains('?') || params.contains('{') {
        return Err("defaults, rest, optional or destructured parameters".into());
    }
    let &(a, b) = split_items(params, true).last().ok_or("no parameter")?;
    let p = params[a..b].trim();
    let pname = p.split(':').next().unwrap_or("").trim();
    if pname.is_empty() || !pname.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$') {
        return Err("a parameter that is not a plain name".into());
    }
    let typed = p
        .split_once(':')
        .map(|(_, t)| format!(": {{ {pname}: {} }}", t.trim()))
        .unwrap_or_default();
    let lead = params[a..b].len() - params[a..b].trim_start().len();
    let new = format!("{}{{ {pname} }}{typed}{}", &params[..a + lead], &params[b..]);
    Ok((
        format!("{}{new}{}", &line[..open + 1], &line[close..]),
        pname.to_string(),
    ))
}

/// The first call of `name` with its argument at `index` wrapped as
/// `{ key: arg }`; unchanged when the call passes fewer arguments.
pub(super) fn wrap_arg(line: &str, name: &str, index: usize, key: &str) -> Option<String> {
    let (open, _, items) = positional_args(line, name)?;
    let close = closing(line, open)?;
    let Some(&(a, b)) = items.get(index) else {
        // The call omits the parameter (JavaScript passes `undefined`): the
        // object still has to be there to be destructured, with the key
        // as undefined as the argument was.
        let before = &line[open + 1..close];
        let pad = "undefined, ".repeat(index - items.len());
        let sep = if before.trim().is_empty() { "" } else { ", " };
        return Some(format!(
            "{}{}{sep}{pad}{{ {key}: undefined }}{}",
            &line[..open + 1],
            before.trim_end(),
            &line[close..]
        ));
    };
    let args = &line[open + 1..close];
    let t = &args[a..b];
    let lead = t.len() - t.trim_start().len();
    let wrapped = format!(
        "{}{{ {key}: {} }}{}",
        &args[..a + lead],
        t.trim(),
        &args[a + lead + t.trim().len()..]
    );
    Some(format!("{}{wrapped}{}", &line[..open + 1], &line[close..]))
}

/// The indentation of the first non-blank line after `idx`.
pub(super) fn body_indent<'a>(lines: &[&'a str], idx: usize) -> Option<&'a str> {
    let l = lines.iter().skip(idx + 1).find(|l| !l.trim().is_empty())?;
    Some(&l[..l.len() - l.trim_start().len()])
}

#[cfg(test)]
mod tests {
    use super::*;

    const PY: Option<Lang> = Some(Lang::Python);
    const RS: Option<Lang> = Some(Lang::Rust);

    #[test]
    fn pointers_and_lifetimes_are_not_varargs_or_quotes() {
        assert_eq!(
            drop_last_param("func (c *Command) Add(a *Command, n int) {", "Add", Some(Lang::Go)).unwrap(),
            "func (c *Command) Add(a *Command) {"
        );
        assert_eq!(
            swap_first_params("fn f<'a>(x: &'a str, y: &'a [u8]) {", "f", RS).unwrap(),
            "fn f<'a>(y: &'a [u8], x: &'a str) {"
        );
        assert!(drop_last_param("func Add(xs ...int) {", "Add", Some(Lang::Go)).is_err());
    }

    #[test]
    fn edits_are_whole_words_on_one_line() {
        assert_eq!(
            rename_on("    x = total(a) + subtotal(b)", "total", "total_renamed").unwrap(),
            "    x = total_renamed(a) + subtotal(b)"
        );
        assert_eq!(rename_on("subtotal(b)", "total", "t2"), None);
        assert_eq!(
            append_arg("y = f(a, g(b))", "f", "None").unwrap(),
            "y = f(a, g(b), None)"
        );
        assert_eq!(append_arg("y = f()", "f", "None").unwrap(), "y = f(None)");
        assert_eq!(append_arg("y = f(a,", "f", "None"), None);
        assert_eq!(find_call("x = subtotal(1) + total(2)", "total"), Some((18, 23, 25)));
        assert_eq!(
            rename_on("export function pipe<T, R>(a: T): R {", "pipe", "pipe_renamed").unwrap(),
            "export function pipe_renamed<T, R>(a: T): R {"
        );
        assert_eq!(rename_on("if (a < pipe) x(pipe)", "pipe", "p2"), None);
        assert_eq!(append_arg("y = f<T>(a)", "f", "None").unwrap(), "y = f<T>(a, None)");
        assert_eq!(arg_count("x.f(a, g(b, c))", "f"), Some(2));
        assert_eq!(param_count("def f(self, a, b):", "f"), Some(2));
    }

    #[test]
    fn items_split_at_top_level_commas_only() {
        let s = "a, f(b, c), \"x,y\", {k: 1, j: 2}, m: Map<K, V>";
        let items: Vec<&str> = split_items(s, true).iter().map(|&(a, b)| s[a..b].trim()).collect();
        assert_eq!(items, ["a", "f(b, c)", "\"x,y\"", "{k: 1, j: 2}", "m: Map<K, V>"]);
        assert_eq!(split_items("(x) => x, y", true).len(), 2);
        assert_eq!(split_items("a < b, c > d", false).len(), 2);
        assert!(split_items("  ", false).is_empty());
    }

    #[test]
    fn the_last_parameter_and_argument_go() {
        assert_eq!(
            drop_last_param("def f(self, a, b):", "f", PY).unwrap(),
            "def f(self, a):"
        );
        assert_eq!(
            drop_last_param("    fn f(&self, n: u32) -> u32 {", "f", RS).unwrap(),
            "    fn f(&self) -> u32 {"
        );
        assert!(drop_last_param("def f(self):", "f", PY).is_err());
        assert!(drop_last_param("def f(a, b=1):", "f", PY).is_err());
        assert!(drop_last_param("function f(a, b?: number) {", "f", Some(Lang::TypeScript)).is_err());
        assert_eq!(drop_last_arg("x = o.f(a, g(b, c))", "f").unwrap(), "x = o.f(a)");
        assert_eq!(drop_last_arg("f(a)", "f").unwrap(), "f()");
        assert_eq!(drop_last_arg("f()", "f"), None);
        assert_eq!(drop_last_arg("f(*args)", "f"), None);
    }

    #[test]
    fn a_reorder_swaps_parameters_and_positional_arguments() {
        assert_eq!(
            swap_first_params("def f(self, a, b, c):", "f", PY).unwrap(),
            "def f(self, b, a, c):"
        );
        assert_eq!(
            swap_first_params("  fn f(&self, a: u8, b: Vec<u8>) {", "f", RS).unwrap(),
            "  fn f(&self, b: Vec<u8>, a: u8) {"
        );
        assert!(swap_first_params("def f(self, a):", "f", PY).is_err());
        assert_eq!(swap_first_args("x = f(g(1, 2), y)", "f").unwrap(), "x = f(y, g(1, 2))");
        assert_eq!(swap_first_args("f(a, b=2)", "f").unwrap(), "f(a, b=2)");
        assert_eq!(
            reorder_call_args("return new S<T>(url);", "S", true).unwrap(),
            "return new S<T>(undefined, url);"
        );
        assert_eq!(reorder_call_args("f(a, b)", "f", true).unwrap(), "f(b, a)");
        assert_eq!(
            reorder_call_args("f(a)", "f", false).unwrap(),
            "f(a)",
            "Python has no `undefined`"
        );
        assert_eq!(reorder_call_args("f(...xs)", "f", true).unwrap(), "f(...xs)");
        assert!(passes_positionally("f(a == b, c)", "f", 2));
        assert!(!passes_positionally("f(a, key=c)", "f", 2));
    }

    #[test]
    fn the_last_parameter_becomes_an_options_object() {
        assert_eq!(
            last_param_to_options("export function f(a, b) {", "f").unwrap(),
            ("export function f(a, { b }) {".to_string(), "b".to_string())
        );
        assert_eq!(
            last_param_to_options("  f(a: string, flag: boolean): void {", "f")
                .unwrap()
                .0,
            "  f(a: string, { flag }: { flag: boolean }): void {"
        );
        assert!(last_param_to_options("function f(a, b = 1) {", "f").is_err());
        assert_eq!(wrap_arg("f(x, true);", "f", 1, "b").unwrap(), "f(x, { b: true });");
        assert_eq!(passes_keywords("g(a, key=b)", "g"), Some(true));
        assert_eq!(passes_keywords("g(*args, **kw)", "g"), Some(true));
        assert_eq!(passes_keywords("g(a == b, c)", "g"), Some(false));
        assert_eq!(passes_keywords("g(a, h(k=1))", "g"), Some(false));
        // A call that omits the parameter passes an object with the key
        // undefined, as the argument was.
        assert_eq!(wrap_arg("f(x);", "f", 1, "b").unwrap(), "f(x, { b: undefined });");
        assert_eq!(wrap_arg("new E()", "E", 0, "m").unwrap(), "new E({ m: undefined })");
        assert_eq!(
            wrap_arg("f()", "f", 2, "c").unwrap(),
            "f(undefined, undefined, { c: undefined })"
        );
    }

    #[test]
    fn a_guard_wraps_the_whole_call_with_its_receiver() {
        assert_eq!(
            guard_call("    n = self.ctx().get(a)[0].f(x).y", "f", true).unwrap(),
            "    n = (self.ctx().get(a)[0].f(x) or quorum_default).y"
        );
        assert_eq!(
            guard_call("const v = f(a);", "f", false).unwrap(),
            "const v = (f(a) ?? quorumDefault);"
        );
        assert_eq!(
            guard_call("if (!f(s).has(k) || o.f(s).get(k) !== v) {", "f", false).unwrap(),
            "if (!(f(s) ?? quorumDefault).has(k) || (o.f(s) ?? quorumDefault).get(k) !== v) {"
        );
        assert_eq!(
            guard_call("x = f(f(a)).b", "f", true).unwrap(),
            "x = (f((f(a) or quorum_default)) or quorum_default).b"
        );
    }

    #[test]
    fn result_use_is_read_from_the_text() {
        let uses = |src: &str| {
            let lines: Vec<&str> = src.split('\n').collect();
            uses_result(&lines, 0, "f")
        };
        assert!(uses("x = f(a).name"));
        assert!(uses("for k in self.f(a):"));
        assert!(uses("for (const k of f(a)) {"));
        assert!(uses("r = f(a)\nlog(1)\nreturn r.value"));
        assert!(uses("const r: T = await f(a);\nr[0]"));
        assert!(!uses("r = f(a)\nif r is None:\n    return\nr.value"));
        assert!(!uses("r = f(a)\nreturn r"));
        assert!(!uses("f(a)"));
        assert!(!uses("if x == f(a):"));
        assert!(!uses("r = f(a)\nreturn r and r.value"));
    }
}

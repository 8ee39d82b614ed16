//! Python: symbols with parameters, decorators and bases; calls with their
//! argument shape; every import form. Resolution happens later, across files.

use tree_sitter::Node;

use super::{
    CallFact, FileFacts, ImportFact, Param, ParamKind, ResultUse, SymbolFact, SymbolKind, end_line_of, line_of,
    snippet, text,
};

pub(super) fn extract(root: Node<'_>, src: &[u8], facts: &mut FileFacts) {
    let test_file = crate::lang::is_test_path(&facts.path);
    let mut w = Walker {
        src,
        facts,
        test_file,
        types: vec![],
        attrs: vec![],
    };
    w.visit_children(root, None);
}

struct Walker<'s, 'f> {
    src: &'s [u8],
    facts: &'f mut FileFacts,
    test_file: bool,
    /// The typed locals of each enclosing definition, innermost last (a
    /// class body's entry is empty: methods do not see a function's locals).
    types: Vec<super::python_types::Locals>,
    /// The typed instance attributes of each enclosing class, innermost last.
    attrs: Vec<super::python_types::Locals>,
}

impl Walker<'_, '_> {
    fn visit_children(&mut self, node: Node<'_>, scope: Option<u32>) {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            self.visit(child, scope);
        }
    }

    fn visit(&mut self, node: Node<'_>, scope: Option<u32>) {
        match node.kind() {
            "decorated_definition" => {
                let decorators: Vec<Node<'_>> = {
                    let mut c = node.walk();
                    node.named_children(&mut c)
                        .filter(|n| n.kind() == "decorator")
                        .collect()
                };
                if let Some(def) = node.child_by_field_name("definition") {
                    self.definition(def, scope, node, &decorators);
                }
            }
            "function_definition" | "class_definition" => self.definition(node, scope, node, &[]),
            "call" => {
                self.call(node, scope);
                self.visit_children(node, scope);
            }
            "import_statement" => self.import(node),
            "import_from_statement" => self.import_from(node),
            _ => self.visit_children(node, scope),
        }
    }

    /// A `def` or `class`; `outer` is the decorated wrapper when there is one,
    /// so the symbol's range includes its decorators.
    fn definition(&mut self, def: Node<'_>, scope: Option<u32>, outer: Node<'_>, decorators: &[Node<'_>]) {
        let Some(name_node) = def.child_by_field_name("name") else {
            return;
        };
        let name = text(name_node, self.src).to_string();
        let parent_kind = scope.map(|p| self.facts.symbols[p as usize].kind);
        let is_class = def.kind() == "class_definition";
        let kind = match (is_class, parent_kind) {
            (true, _) => SymbolKind::Class,
            (false, Some(SymbolKind::Class)) => SymbolKind::Method,
            (false, Some(SymbolKind::Function | SymbolKind::Method | SymbolKind::NestedFunction)) => {
                SymbolKind::NestedFunction
            }
            (false, _) => SymbolKind::Function,
        };
        let qname = match scope {
            Some(p) => format!("{}.{}", self.facts.symbols[p as usize].qname, name),
            None => name.clone(),
        };
        let decorator_names: Vec<String> = decorators
            .iter()
            .filter_map(|d| d.named_child(0))
            .map(|e| {
                dotted(
                    if e.kind() == "call" {
                        e.child_by_field_name("function").unwrap_or(e)
                    } else {
                        e
                    },
                    self.src,
                )
            })
            .collect();
        let bases = if is_class {
            def.child_by_field_name("superclasses")
                .map(|args| {
                    let mut c = args.walk();
                    args.named_children(&mut c)
                        .filter(|a| matches!(a.kind(), "identifier" | "attribute"))
                        .map(|a| dotted(a, self.src))
                        .collect()
                })
                .unwrap_or_default()
        } else {
            vec![]
        };
        let params = (!is_class)
            .then(|| def.child_by_field_name("parameters").map(|p| parameters(p, self.src)))
            .flatten();
        let is_test = !is_class && name.starts_with("test") && (self.test_file || self.in_test_case(scope));
        let returns_none = !is_class && returns_none(def, self.src);
        let idx = self.facts.symbols.len() as u32;
        self.facts.symbols.push(SymbolFact {
            name,
            qname,
            kind,
            start_line: line_of(outer),
            end_line: end_line_of(outer),
            parent: scope,
            params,
            decorators: decorator_names,
            bases,
            is_test,
            returns_none,
            return_keys: None,
        });
        // Applying a decorator calls it with the function: an edge from the
        // decorated symbol to the decorator, so changing a decorator reaches
        // every function it wraps. Decorator arguments are ordinary calls.
        for &d in decorators {
            if let Some(expr) = d.named_child(0) {
                if expr.kind() == "call" {
                    self.call(expr, Some(idx));
                    if let Some(args) = expr.child_by_field_name("arguments") {
                        self.visit_children(args, scope);
                    }
                } else {
                    self.facts.calls.push(CallFact {
                        caller: Some(idx),
                        callee: dotted(expr, self.src),
                        line: line_of(d),
                        positional: 1,
                        keywords: vec![],
                        spread: true,
                        text: snippet(d, self.src),
                        result_use: ResultUse::Other,
                        result_keys: vec![],
                        object_args: vec![],
                        literal_args: vec![],
                        args: vec![],
                        end_line: line_of(d),
                    });
                }
            }
        }
        if let Some(sup) = def.child_by_field_name("superclasses") {
            self.visit_children(sup, scope);
        }
        if let Some(params) = def.child_by_field_name("parameters") {
            // Default values run in the enclosing scope.
            self.visit_children(params, scope);
        }
        if let Some(body) = def.child_by_field_name("body") {
            let locals = if is_class {
                Default::default()
            } else {
                super::python_types::locals(def, self.src)
            };
            self.types.push(locals);
            if is_class {
                self.attrs.push(super::python_types::attributes(def, self.src));
            }
            self.visit_children(body, Some(idx));
            if is_class {
                self.attrs.pop();
            }
            self.types.pop();
        }
    }

    /// `x.m` with `x` a local of known class `C` reads as `C().m`: a call on
    /// an instance, which resolution follows through the class and its bases.
    fn typed_callee(&self, callee: String) -> String {
        let Some((first, rest)) = callee.split_once('.') else {
            return callee;
        };
        // `self.x.m` with `x` an attribute of known class (in a method).
        if first == "self"
            && let Some((attr, tail)) = rest.split_once('.')
            && let Some(Some(ty)) = self.attrs.last().and_then(|a| a.get(attr))
        {
            return format!("{ty}().{tail}");
        }
        match self.types.last().and_then(|t| t.get(first)) {
            Some(Some(ty)) => format!("{ty}().{rest}"),
            _ => callee,
        }
    }

    fn in_test_case(&self, scope: Option<u32>) -> bool {
        scope.is_some_and(|p| {
            let s = &self.facts.symbols[p as usize];
            s.kind == SymbolKind::Class
                && (s.name.starts_with("Test") || s.bases.iter().any(|b| b.ends_with("TestCase")))
        })
    }

    fn call(&mut self, node: Node<'_>, scope: Option<u32>) {
        let Some(func) = node.child_by_field_name("function") else {
            return;
        };
        let (mut positional, mut keywords, mut spread) = (0, vec![], false);
        let mut arg_texts = vec![];
        if let Some(args) = node.child_by_field_name("arguments") {
            if args.kind() == "generator_expression" {
                positional = 1;
                arg_texts.push(String::new());
            } else {
                let mut c = args.walk();
                for a in args.named_children(&mut c) {
                    match a.kind() {
                        "keyword_argument" => {
                            if let Some(n) = a.child_by_field_name("name") {
                                keywords.push(text(n, self.src).to_string());
                            }
                        }
                        "list_splat" | "dictionary_splat" => spread = true,
                        "comment" => {}
                        _ => {
                            positional += 1;
                            arg_texts.push(super::simple_arg(a, self.src));
                        }
                    }
                }
            }
        }
        let callee = self.typed_callee(dotted(func, self.src));
        self.facts.calls.push(CallFact {
            caller: scope,
            callee,
            line: line_of(node),
            positional,
            keywords,
            spread,
            text: snippet(node, self.src),
            result_use: result_use(node, self.src),
            result_keys: vec![],
            object_args: vec![],
            literal_args: vec![],
            args: arg_texts,
            end_line: end_line_of(node),
        });
    }

    fn import(&mut self, node: Node<'_>) {
        let mut c = node.walk();
        for n in node.children_by_field_name("name", &mut c) {
            let (module, local) = match n.kind() {
                "aliased_import" => aliased(n, self.src),
                // `import a.b` binds `a` (to module `a`); the import edge goes to `a.b`.
                _ => {
                    let m = text(n, self.src).to_string();
                    let first = m.split('.').next().unwrap_or(&m).to_string();
                    (m, first)
                }
            };
            self.facts.imports.push(ImportFact {
                module,
                name: None,
                local,
                line: line_of(node),
            });
        }
    }

    fn import_from(&mut self, node: Node<'_>) {
        let Some(module_node) = node.child_by_field_name("module_name") else {
            return;
        };
        let module = text(module_node, self.src)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>();
        let mut c = node.walk();
        let names: Vec<Node<'_>> = node.children_by_field_name("name", &mut c).collect();
        if names.is_empty() {
            // `from x import *`: recorded with the wildcard as the name.
            let mut c = node.walk();
            if node.named_children(&mut c).any(|n| n.kind() == "wildcard_import") {
                self.facts.imports.push(ImportFact {
                    module,
                    name: Some("*".into()),
                    local: "*".into(),
                    line: line_of(node),
                });
            }
            return;
        }
        for n in names {
            let (name, local) = match n.kind() {
                "aliased_import" => aliased(n, self.src),
                _ => {
                    let m = text(n, self.src).to_string();
                    (m.clone(), m)
                }
            };
            self.facts.imports.push(ImportFact {
                module: module.clone(),
                name: Some(name),
                local,
                line: line_of(node),
            });
        }
    }
}

/// How the value of `call` is used by its parent.
fn result_use(call: Node<'_>, src: &[u8]) -> ResultUse {
    let Some(parent) = call.parent() else {
        return ResultUse::Other;
    };
    let is = |field: &str| parent.child_by_field_name(field).is_some_and(|c| c.id() == call.id());
    match parent.kind() {
        "expression_statement" => ResultUse::Discarded,
        "attribute" if is("object") => ResultUse::Direct,
        "subscript" if is("value") => ResultUse::Direct,
        "binary_operator" | "unary_operator" | "augmented_assignment" => ResultUse::Direct,
        "for_statement" | "for_in_clause" if is("right") => ResultUse::Direct,
        "assignment" if is("right") => assigned_use(parent, src).unwrap_or(ResultUse::Other),
        _ => ResultUse::Other,
    }
}

/// What the statements after `name = call()` do first with `name`: a
/// dereference (`AssignedThenUsed`), or anything else — a test (`if x`,
/// `x is None`, `x or …`), a reassignment, passing it on — which ends the
/// search (`None`). The rest of the block is read, then the statements
/// after each enclosing `if`/`with`/`try`/loop of the same function: a name
/// assigned in one branch and dereferenced after the branch is used on the
/// path where the branch ran (the other branches are not on that path, so
/// they are skipped).
fn assigned_use(assignment: Node<'_>, src: &[u8]) -> Option<ResultUse> {
    let left = assignment.child_by_field_name("left")?;
    if left.kind() != "identifier" {
        return None;
    }
    let name = text(left, src);
    let mut statement = assignment.parent().filter(|p| p.kind() == "expression_statement")?;
    loop {
        let mut next = statement.next_named_sibling();
        while let Some(stmt) = next {
            if let Some(first) = first_use(stmt, name, src) {
                return first;
            }
            next = stmt.next_named_sibling();
        }
        statement = enclosing_statement(statement)?;
    }
}

/// The compound statement whose body holds `statement` (an `if` for its
/// branches, a `try` for its handlers), or `None` at a function, class or
/// module boundary.
fn enclosing_statement(statement: Node<'_>) -> Option<Node<'_>> {
    let mut n = statement.parent()?;
    loop {
        match n.kind() {
            "block" | "elif_clause" | "else_clause" | "except_clause" | "except_group_clause" | "finally_clause" => {
                n = n.parent()?
            }
            "if_statement" | "with_statement" | "try_statement" | "for_statement" | "while_statement" => {
                return Some(n);
            }
            _ => return None,
        }
    }
}

/// The first use of `name` in `node` (document order), classified; `None`
/// when `name` does not occur. Nested definitions are not entered.
fn first_use(node: Node<'_>, name: &str, src: &[u8]) -> Option<Option<ResultUse>> {
    if matches!(node.kind(), "function_definition" | "class_definition" | "lambda") {
        return None;
    }
    if node.kind() == "identifier" && text(node, src) == name {
        return Some(classify_use(node));
    }
    let mut c = node.walk();
    let children: Vec<Node<'_>> = node.named_children(&mut c).collect();
    children.into_iter().find_map(|child| first_use(child, name, src))
}

fn classify_use(ident: Node<'_>) -> Option<ResultUse> {
    let parent = ident.parent()?;
    let is = |field: &str| parent.child_by_field_name(field).is_some_and(|c| c.id() == ident.id());
    let deref = match parent.kind() {
        "attribute" => is("object"),
        "subscript" => is("value"),
        "binary_operator" => true,
        "for_statement" | "for_in_clause" => is("right"),
        _ => false,
    };
    deref.then(|| ResultUse::AssignedThenUsed(line_of(ident)))
}

/// Whether a function may return `None`: its annotation admits it, or its
/// own body (not nested definitions) has a bare `return` or `return None`.
fn returns_none(def: Node<'_>, src: &[u8]) -> bool {
    if let Some(rt) = def.child_by_field_name("return_type") {
        let t = text(rt, src);
        if t.contains("None") || t.contains("Optional") {
            return true;
        }
    }
    fn walk(n: Node<'_>) -> bool {
        if matches!(n.kind(), "function_definition" | "class_definition" | "lambda") {
            return false;
        }
        if n.kind() == "return_statement" {
            return match n.named_child(0) {
                None => true,
                Some(v) => v.kind() == "none",
            };
        }
        let mut c = n.walk();
        n.named_children(&mut c).any(walk)
    }
    def.child_by_field_name("body").is_some_and(|b| {
        let mut c = b.walk();
        b.named_children(&mut c).any(walk)
    })
}

/// `x as y` → (`x`, `y`).
fn aliased(n: Node<'_>, src: &[u8]) -> (String, String) {
    let m = n.child_by_field_name("name").map(|x| text(x, src)).unwrap_or("");
    let a = n.child_by_field_name("alias").map(|x| text(x, src)).unwrap_or(m);
    (m.to_string(), a.to_string())
}

/// A called or referenced expression as a dotted path. A call result keeps
/// its callee with `()` (`Engine("x").run` is `Engine().run`, so a method
/// called on a fresh instance resolves); other non-names (a subscript, a
/// literal) become `?`.
pub(super) fn dotted(node: Node<'_>, src: &[u8]) -> String {
    match node.kind() {
        "identifier" => text(node, src).to_string(),
        "attribute" => {
            let obj = node
                .child_by_field_name("object")
                .map(|o| dotted(o, src))
                .unwrap_or_else(|| "?".into());
            let attr = node
                .child_by_field_name("attribute")
                .map(|a| text(a, src))
                .unwrap_or("?");
            format!("{obj}.{attr}")
        }
        "parenthesized_expression" => node
            .named_child(0)
            .map(|n| dotted(n, src))
            .unwrap_or_else(|| "?".into()),
        "call" => match node.child_by_field_name("function").map(|f| dotted(f, src)) {
            Some(f) if !f.ends_with("()") && f != "?" => format!("{f}()"),
            _ => "?".into(),
        },
        _ => "?".into(),
    }
}

fn parameters(node: Node<'_>, src: &[u8]) -> Vec<Param> {
    let mut out = vec![];
    let mut keyword_only = false;
    let mut c = node.walk();
    for p in node.named_children(&mut c) {
        let (name, mut kind, has_default) = match p.kind() {
            "identifier" => (text(p, src).to_string(), ParamKind::Normal, false),
            "typed_parameter" => {
                let inner = p.named_child(0);
                match inner.map(|i| i.kind()) {
                    Some("list_splat_pattern") => (splat_name(inner.unwrap(), src), ParamKind::VarArgs, false),
                    Some("dictionary_splat_pattern") => {
                        (splat_name(inner.unwrap(), src), ParamKind::VarKeywords, false)
                    }
                    _ => (
                        inner.map(|i| text(i, src)).unwrap_or("").to_string(),
                        ParamKind::Normal,
                        false,
                    ),
                }
            }
            "default_parameter" | "typed_default_parameter" => (
                p.child_by_field_name("name")
                    .map(|n| text(n, src))
                    .unwrap_or("")
                    .to_string(),
                ParamKind::Normal,
                true,
            ),
            "list_splat_pattern" => (splat_name(p, src), ParamKind::VarArgs, false),
            "dictionary_splat_pattern" => (splat_name(p, src), ParamKind::VarKeywords, false),
            "keyword_separator" => {
                keyword_only = true;
                continue;
            }
            "positional_separator" => {
                for q in out.iter_mut() {
                    let q: &mut Param = q;
                    if q.kind == ParamKind::Normal {
                        q.kind = ParamKind::PositionalOnly;
                    }
                }
                continue;
            }
            _ => continue,
        };
        if kind == ParamKind::VarArgs {
            keyword_only = true;
        } else if kind == ParamKind::Normal && keyword_only {
            kind = ParamKind::KeywordOnly;
        }
        out.push(Param {
            name,
            kind,
            has_default,
            object_type: false,
        });
    }
    out
}

fn splat_name(node: Node<'_>, src: &[u8]) -> String {
    node.named_child(0).map(|n| text(n, src)).unwrap_or("").to_string()
}

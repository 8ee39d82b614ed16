//! Rust, JavaScript/TypeScript (TSX), Go and Java: symbols with line ranges,
//! calls by name, imports, inheritance where the syntax states it, and test
//! functions. Resolution for these languages is by name (lower confidence).

use tree_sitter::Node;

use super::{
    CallFact, ExportFact, FileFacts, ImportFact, Param, ParamKind, ResultUse, SymbolFact, SymbolKind, end_line_of,
    line_of, snippet, text,
};
use crate::lang::Lang;

pub(super) fn extract(lang: Lang, root: Node<'_>, src: &[u8], facts: &mut FileFacts) {
    // Only Go's walker reads it: a Go `TestX` is a test only in a test file.
    let test_file = crate::lang::is_test_path(&facts.path);
    let mut w = Walker {
        lang,
        src,
        facts,
        test_file,
        typed: Default::default(),
    };
    w.visit_children(root, None, None);
}

struct Walker<'s, 'f> {
    lang: Lang,
    src: &'s [u8],
    facts: &'f mut FileFacts,
    test_file: bool,
    /// JavaScript/TypeScript names whose class is known in a scope: `const
    /// x = new C(…)`, a parameter annotated `x: C`. Value: `C()`.
    typed: std::collections::HashMap<(Option<u32>, String), String>,
}

/// What a node defines, if anything.
struct Def<'t> {
    name: String,
    kind: SymbolKind,
    body: Option<Node<'t>>,
    bases: Vec<String>,
    decorators: Vec<String>,
    is_test: bool,
    /// Qualifier that is not the lexical parent (a Rust impl's type, a Go receiver).
    owner: Option<String>,
    /// The function node (parameters, returns), for functions.
    func: Option<Node<'t>>,
}

impl Walker<'_, '_> {
    fn visit_children(&mut self, node: Node<'_>, scope: Option<u32>, owner: Option<&str>) {
        let mut c = node.walk();
        for child in node.named_children(&mut c) {
            self.visit(child, scope, owner);
        }
    }

    fn visit(&mut self, node: Node<'_>, scope: Option<u32>, owner: Option<&str>) {
        if let Some(def) = self.definition(node, owner) {
            let idx = self.push(node, scope, &def);
            if is_js(self.lang)
                && let Some(f) = def.func
            {
                self.param_types(f, idx);
            }
            let body = def.body.unwrap_or(node);
            self.visit_children(body, Some(idx), None);
            return;
        }
        match (self.lang, node.kind()) {
            (Lang::Rust, "impl_item") => {
                let ty = node.child_by_field_name("type").map(|t| base_type(t, self.src));
                if let Some(body) = node.child_by_field_name("body") {
                    self.visit_children(body, scope, ty.as_deref());
                }
                return;
            }
            (Lang::Rust, "use_declaration") => {
                if let Some(arg) = node.child_by_field_name("argument") {
                    self.rust_use(arg, "", line_of(node));
                }
                return;
            }
            (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "import_statement") => {
                self.js_import(node);
                return;
            }
            (Lang::TypeScript | Lang::Tsx, "public_field_definition") => {
                // `private repo: Repo;` — `this.repo` is a `Repo` in the class.
                if let (Some(name), Some(t)) = (
                    node.child_by_field_name("name"),
                    node.child_by_field_name("type").and_then(|t| t.named_child(0)),
                ) && t.kind() == "type_identifier"
                    && scope.is_some()
                {
                    self.typed.insert(
                        (scope, format!("this.{}", text(name, self.src))),
                        format!("{}()", text(t, self.src)),
                    );
                }
            }
            (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "export_statement") => self.js_export(node),
            (Lang::JavaScript, "comment") => {
                // JSDoc type imports: `@typedef {import("./m.js").X} Y`.
                for (module, name, local) in jsdoc_type_imports(text(node, self.src)) {
                    self.facts.imports.push(ImportFact {
                        module,
                        name: Some(name),
                        local,
                        line: line_of(node),
                    });
                }
            }
            (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "variable_declarator") => {
                self.js_require(node);
                self.const_instance(node, scope);
            }
            (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "assignment_expression") => self.cjs_export(node),
            (Lang::Go, "import_spec") => {
                if let Some(path) = node.child_by_field_name("path") {
                    let module = text(path, self.src).trim_matches('"').to_string();
                    let local = node
                        .child_by_field_name("name")
                        .map(|n| text(n, self.src).to_string())
                        .unwrap_or_else(|| module.rsplit('/').next().unwrap_or(&module).to_string());
                    self.facts.imports.push(ImportFact {
                        module,
                        name: None,
                        local,
                        line: line_of(node),
                    });
                }
                return;
            }
            (Lang::Java, "import_declaration") => {
                let t = text(node, self.src);
                let path = t.trim_start_matches("import").trim().trim_end_matches(';').trim();
                let path = path.trim_start_matches("static ").trim();
                let local = path.rsplit('.').next().unwrap_or(path).to_string();
                self.facts.imports.push(ImportFact {
                    module: path.to_string(),
                    name: None,
                    local,
                    line: line_of(node),
                });
                return;
            }
            _ => {}
        }
        if let Some(callee) = self.callee(node).map(|c| self.typed_callee(c, scope)) {
            let args = node.child_by_field_name("arguments");
            let (mut positional, mut spread) = (0, false);
            let (mut object_args, mut literal_args) = (vec![], vec![]);
            let mut arg_texts = vec![];
            if let Some(args) = args {
                let mut c = args.walk();
                for a in args.named_children(&mut c) {
                    match a.kind() {
                        "comment" | "line_comment" | "block_comment" => {}
                        "spread_element" => spread = true,
                        kind => {
                            if is_js(self.lang) {
                                match kind {
                                    "object" => object_args.push(positional),
                                    "number" | "string" | "template_string" | "true" | "false" => {
                                        literal_args.push(positional)
                                    }
                                    _ => {}
                                }
                            }
                            arg_texts.push(super::simple_arg(a, self.src));
                            positional += 1
                        }
                    }
                }
            }
            let (result_use, result_keys) = if is_js(self.lang) {
                js_result_use(node, self.src)
            } else {
                (ResultUse::Other, vec![])
            };
            self.facts.calls.push(CallFact {
                caller: scope,
                callee,
                line: line_of(node),
                positional,
                keywords: vec![],
                spread,
                text: snippet(node, self.src),
                result_use,
                result_keys,
                object_args,
                literal_args,
                args: arg_texts,
                end_line: super::end_line_of(node),
            });
        }
        self.visit_children(node, scope, owner);
    }

    fn push(&mut self, node: Node<'_>, scope: Option<u32>, def: &Def<'_>) -> u32 {
        let prefix = match (&def.owner, scope) {
            (Some(o), _) => Some(o.clone()),
            (None, Some(p)) => Some(self.facts.symbols[p as usize].qname.clone()),
            (None, None) => None,
        };
        let qname = match prefix {
            Some(p) => format!("{p}.{}", def.name),
            None => def.name.clone(),
        };
        let parent_kind = scope.map(|p| self.facts.symbols[p as usize].kind);
        let kind = match (def.kind, parent_kind, &def.owner) {
            (SymbolKind::Function, _, Some(_)) | (SymbolKind::Function, Some(SymbolKind::Class), _) => {
                SymbolKind::Method
            }
            (SymbolKind::Function, Some(SymbolKind::Function | SymbolKind::Method | SymbolKind::NestedFunction), _) => {
                SymbolKind::NestedFunction
            }
            (k, _, _) => k,
        };
        let (params, returns_none, return_keys) = match def.func {
            Some(f) => (
                parameters(self.lang, f, self.src),
                is_js(self.lang) && js_returns_none(f, self.src),
                if is_js(self.lang) {
                    js_return_keys(f, self.src)
                } else {
                    None
                },
            ),
            None => (None, false, None),
        };
        let idx = self.facts.symbols.len() as u32;
        self.facts.symbols.push(SymbolFact {
            name: def.name.clone(),
            qname,
            kind,
            start_line: line_of(node),
            end_line: end_line_of(node),
            parent: scope,
            params,
            decorators: def.decorators.clone(),
            bases: def.bases.clone(),
            is_test: def.is_test,
            returns_none,
            return_keys,
        });
        idx
    }

    fn definition<'t>(&self, node: Node<'t>, owner: Option<&str>) -> Option<Def<'t>> {
        let name_of = |n: Node<'t>| n.child_by_field_name("name").map(|x| text(x, self.src).to_string());
        let def = |name: String, kind: SymbolKind, body: Option<Node<'t>>| Def {
            name,
            kind,
            body,
            bases: vec![],
            decorators: vec![],
            is_test: false,
            owner: None,
            func: None,
        };
        let body = node.child_by_field_name("body");
        let d = match (self.lang, node.kind()) {
            (Lang::Rust, "function_item") => {
                let attrs = preceding_attributes(node, self.src);
                let is_test = attrs.iter().any(|a| a == "test" || a.ends_with("::test"));
                let mut d = def(name_of(node)?, SymbolKind::Function, body);
                d.is_test = is_test;
                d.decorators = attrs;
                d.owner = owner.map(str::to_string);
                d.func = Some(node);
                d
            }
            (Lang::Rust, "struct_item" | "enum_item" | "trait_item" | "union_item") => {
                def(name_of(node)?, SymbolKind::Class, body)
            }
            // An inline `mod` is a namespace: a class-like container.
            (Lang::Rust, "mod_item") if body.is_some() => def(name_of(node)?, SymbolKind::Class, body),
            (
                Lang::JavaScript | Lang::TypeScript | Lang::Tsx,
                "function_declaration" | "generator_function_declaration",
            ) => {
                let mut d = def(name_of(node)?, SymbolKind::Function, body);
                d.func = Some(node);
                d
            }
            (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "method_definition") => {
                let mut d = def(name_of(node)?, SymbolKind::Method, body);
                d.func = Some(node);
                d
            }
            (
                Lang::JavaScript | Lang::TypeScript | Lang::Tsx,
                "class_declaration" | "abstract_class_declaration" | "interface_declaration" | "class",
            ) => {
                let mut d = def(name_of(node)?, SymbolKind::Class, body);
                d.bases = heritage(node, self.src);
                d
            }
            (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "field_definition" | "public_field_definition") => {
                // `handle = (e) => { … }`: a method bound per instance.
                let value = node.child_by_field_name("value")?;
                if !matches!(value.kind(), "arrow_function" | "function_expression" | "function") {
                    return None;
                }
                let name = node
                    .child_by_field_name("name")
                    .or_else(|| node.child_by_field_name("property"))
                    .map(|x| text(x, self.src).to_string())?;
                let mut d = def(name, SymbolKind::Method, value.child_by_field_name("body"));
                d.func = Some(value);
                d
            }
            (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "variable_declarator") => {
                let value = node.child_by_field_name("value")?;
                if !matches!(value.kind(), "arrow_function" | "function_expression" | "function") {
                    return None;
                }
                let mut d = def(name_of(node)?, SymbolKind::Function, value.child_by_field_name("body"));
                d.func = Some(value);
                d
            }
            (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "call_expression") => {
                // `it("…", () => …)`, `test(...)`, `describe(...)`: a test block.
                let f = node.child_by_field_name("function")?;
                let callee = text(f, self.src);
                let base = callee.split('.').next().unwrap_or(callee);
                if !matches!(base, "it" | "test" | "describe") {
                    return None;
                }
                let args = node.child_by_field_name("arguments")?;
                let title = args
                    .named_child(0)
                    .map(|t| text(t, self.src).trim_matches(['"', '\'', '`']).to_string())?;
                let mut d = def(format!("{base}({title})"), SymbolKind::Function, Some(args));
                d.is_test = base != "describe";
                d
            }
            (Lang::Go, "function_declaration") => {
                let name = name_of(node)?;
                let mut d = def(name.clone(), SymbolKind::Function, body);
                d.is_test = self.test_file && (name.starts_with("Test") || name.starts_with("Benchmark"));
                d.func = Some(node);
                d
            }
            (Lang::Go, "method_declaration") => {
                let recv = node.child_by_field_name("receiver").map(|r| go_receiver(r, self.src));
                let mut d = def(name_of(node)?, SymbolKind::Method, body);
                d.owner = recv;
                d.func = Some(node);
                d
            }
            (Lang::Go, "type_spec") => def(name_of(node)?, SymbolKind::Class, None),
            (Lang::Java, "class_declaration" | "interface_declaration" | "enum_declaration" | "record_declaration") => {
                let mut d = def(name_of(node)?, SymbolKind::Class, body);
                d.bases = java_supers(node, self.src);
                d
            }
            (Lang::Java, "method_declaration" | "constructor_declaration") => {
                let annotations = java_annotations(node, self.src);
                let mut d = def(name_of(node)?, SymbolKind::Method, body);
                d.is_test = annotations.iter().any(|a| a == "Test" || a.ends_with(".Test"));
                d.decorators = annotations;
                d
            }
            _ => return None,
        };
        Some(d)
    }

    fn callee(&self, node: Node<'_>) -> Option<String> {
        let f = match (self.lang, node.kind()) {
            (Lang::Java, "method_invocation") => {
                let name = node.child_by_field_name("name").map(|n| text(n, self.src))?;
                return Some(match node.child_by_field_name("object") {
                    Some(o) => format!("{}.{name}", path_of(o, self.src)),
                    None => name.to_string(),
                });
            }
            (Lang::Java, "object_creation_expression") => node.child_by_field_name("type")?,
            (_, "call_expression") => node.child_by_field_name("function")?,
            (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "new_expression") => {
                node.child_by_field_name("constructor")?
            }
            _ => return None,
        };
        Some(path_of(f, self.src))
    }

    /// `x.m` where `x`'s class is known in scope → `C().m`.
    fn typed_callee(&self, callee: String, scope: Option<u32>) -> String {
        // `this.repo.find`: a class field (or parameter property) of known class.
        let parts: Vec<&str> = callee.splitn(3, '.').collect();
        if let [this @ "this", field, rest] = parts.as_slice() {
            let key = format!("{this}.{field}");
            let mut s = scope;
            while let Some(sc) = s {
                if let Some(t) = self.typed.get(&(Some(sc), key.clone())) {
                    return format!("{t}.{rest}");
                }
                s = self.facts.symbols[sc as usize].parent;
            }
            return callee;
        }
        let Some((first, rest)) = callee.split_once('.') else {
            return callee;
        };
        let mut s = scope;
        loop {
            if let Some(t) = self.typed.get(&(s, first.to_string())) {
                return if t.is_empty() { callee } else { format!("{t}.{rest}") };
            }
            // A nested function or class shares its parents' names, unless
            // it declares its own (looked up first).
            match s {
                Some(sc) => s = self.facts.symbols[sc as usize].parent,
                None => return callee,
            }
        }
    }

    /// `const x = new C(…)`: `x` is a `C` for the rest of the scope.
    fn const_instance(&mut self, node: Node<'_>, scope: Option<u32>) {
        let is_const = node
            .parent()
            .filter(|p| p.kind() == "lexical_declaration")
            .and_then(|p| p.child(0))
            .is_some_and(|k| k.kind() == "const");
        let (Some(name), Some(value)) = (node.child_by_field_name("name"), node.child_by_field_name("value")) else {
            return;
        };
        if !is_const || name.kind() != "identifier" || value.kind() != "new_expression" {
            return;
        }
        let Some(class) = value
            .child_by_field_name("constructor")
            .filter(|c| c.kind() == "identifier")
        else {
            return;
        };
        self.typed.insert(
            (scope, text(name, self.src).to_string()),
            format!("{}()", text(class, self.src)),
        );
    }

    /// TypeScript parameters annotated with a plain class name: `x: C`.
    fn param_types(&mut self, func: Node<'_>, idx: u32) {
        let Some(list) = func.child_by_field_name("parameters") else {
            return;
        };
        let doc = preceding_comment(func, self.src);
        let mut c = list.walk();
        for p in list.named_children(&mut c) {
            // Every parameter shadows an outer name; only `x: C` gives a class.
            let (pat, ty) = match p.kind() {
                "identifier" => (p, None),
                "assignment_pattern" => match p.child_by_field_name("left") {
                    Some(l) => (l, None),
                    None => continue,
                },
                "required_parameter" | "optional_parameter" => match p.child_by_field_name("pattern") {
                    Some(pat) => (pat, p.child_by_field_name("type").and_then(|t| t.named_child(0))),
                    None => continue,
                },
                _ => continue,
            };
            if pat.kind() != "identifier" {
                continue;
            }
            let name = text(pat, self.src);
            let class = match ty {
                Some(t) if t.kind() == "type_identifier" => format!("{}()", text(t, self.src)),
                Some(_) => String::new(),
                None if self.lang == Lang::JavaScript => jsdoc_param_type(&doc, name)
                    .map(|t| format!("{t}()"))
                    .unwrap_or_default(),
                None => String::new(),
            };
            // `constructor(private repo: Repo)`: also `this.repo` in the class.
            let property = has_child(p, &["accessibility_modifier", "readonly"]);
            if property
                && !class.is_empty()
                && let Some(class_idx) = self.facts.symbols[idx as usize].parent
            {
                self.typed
                    .insert((Some(class_idx), format!("this.{name}")), class.clone());
            }
            self.typed.insert((Some(idx), name.to_string()), class);
        }
    }

    fn rust_use(&mut self, node: Node<'_>, prefix: &str, line: u32) {
        let join = |a: &str, b: &str| {
            if a.is_empty() {
                b.to_string()
            } else {
                format!("{a}::{b}")
            }
        };
        match node.kind() {
            "scoped_use_list" => {
                let p = node
                    .child_by_field_name("path")
                    .map(|p| text(p, self.src))
                    .unwrap_or("");
                let p = join(prefix, p);
                if let Some(list) = node.child_by_field_name("list") {
                    self.rust_use(list, &p, line);
                }
            }
            "use_list" => {
                let mut c = node.walk();
                for child in node.named_children(&mut c) {
                    self.rust_use(child, prefix, line);
                }
            }
            "use_as_clause" => {
                let p = node
                    .child_by_field_name("path")
                    .map(|p| text(p, self.src))
                    .unwrap_or("");
                let alias = node
                    .child_by_field_name("alias")
                    .map(|a| text(a, self.src))
                    .unwrap_or(p);
                self.facts.imports.push(ImportFact {
                    module: join(prefix, p),
                    name: None,
                    local: alias.to_string(),
                    line,
                });
            }
            _ => {
                let full = join(prefix, text(node, self.src));
                let local = full.rsplit("::").next().unwrap_or(&full).to_string();
                self.facts.imports.push(ImportFact {
                    module: full,
                    name: None,
                    local,
                    line,
                });
            }
        }
    }

    fn js_import(&mut self, node: Node<'_>) {
        let Some(source) = node.child_by_field_name("source") else {
            return;
        };
        let module = text(source, self.src).trim_matches(['"', '\'']).to_string();
        let line = line_of(node);
        let mut pushed = false;
        let mut c = node.walk();
        for clause in node.named_children(&mut c).filter(|n| n.kind() == "import_clause") {
            let mut c2 = clause.walk();
            for part in clause.named_children(&mut c2) {
                match part.kind() {
                    "identifier" => {
                        self.facts.imports.push(ImportFact {
                            module: module.clone(),
                            name: Some("default".into()),
                            local: text(part, self.src).to_string(),
                            line,
                        });
                        pushed = true;
                    }
                    "namespace_import" => {
                        let local = part.named_child(0).map(|n| text(n, self.src)).unwrap_or("*");
                        self.facts.imports.push(ImportFact {
                            module: module.clone(),
                            name: None,
                            local: local.to_string(),
                            line,
                        });
                        pushed = true;
                    }
                    "named_imports" => {
                        let mut c3 = part.walk();
                        for spec in part.named_children(&mut c3).filter(|n| n.kind() == "import_specifier") {
                            let name = spec
                                .child_by_field_name("name")
                                .map(|n| text(n, self.src))
                                .unwrap_or("");
                            let alias = spec
                                .child_by_field_name("alias")
                                .map(|n| text(n, self.src))
                                .unwrap_or(name);
                            self.facts.imports.push(ImportFact {
                                module: module.clone(),
                                name: Some(name.to_string()),
                                local: alias.to_string(),
                                line,
                            });
                            pushed = true;
                        }
                    }
                    _ => {}
                }
            }
        }
        if !pushed {
            // `import "./side-effect"`.
            self.facts.imports.push(ImportFact {
                module,
                name: None,
                local: String::new(),
                line,
            });
        }
    }
    /// `export …` in all its ES-module forms.
    fn js_export(&mut self, node: Node<'_>) {
        let line = line_of(node);
        let from = node
            .child_by_field_name("source")
            .map(|s| text(s, self.src).trim_matches(['"', '\'', '`']).to_string());
        let is_default = {
            let mut c = node.walk();
            node.children(&mut c).any(|ch| ch.kind() == "default")
        };
        let mut push = |name: String, local: Option<String>, from: Option<String>| {
            self.facts.exports.push(ExportFact {
                name,
                local,
                from,
                line,
            });
        };
        if let Some(decl) = node.child_by_field_name("declaration") {
            let mut names = vec![];
            match decl.kind() {
                "lexical_declaration" | "variable_declaration" => {
                    let mut c = decl.walk();
                    for d in decl
                        .named_children(&mut c)
                        .filter(|d| d.kind() == "variable_declarator")
                    {
                        if let Some(n) = d.child_by_field_name("name").filter(|n| n.kind() == "identifier") {
                            names.push(text(n, self.src).to_string());
                        }
                    }
                }
                _ => {
                    if let Some(n) = decl.child_by_field_name("name") {
                        names.push(text(n, self.src).to_string());
                    }
                }
            }
            for n in names {
                let exported = if is_default { "default".to_string() } else { n.clone() };
                push(exported, Some(n), None);
            }
            return;
        }
        if let Some(value) = node.child_by_field_name("value") {
            // `export default <expression>`.
            let local = match value.kind() {
                "identifier" => Some(text(value, self.src).to_string()),
                _ => value.child_by_field_name("name").map(|n| text(n, self.src).to_string()),
            };
            push("default".into(), local, None);
            return;
        }
        let mut c = node.walk();
        let mut any = false;
        for child in node.named_children(&mut c) {
            match child.kind() {
                "export_clause" => {
                    let mut c2 = child.walk();
                    for spec in child.named_children(&mut c2).filter(|n| n.kind() == "export_specifier") {
                        let name = spec
                            .child_by_field_name("name")
                            .map(|n| text(n, self.src).trim_matches(['"', '\'']).to_string())
                            .unwrap_or_default();
                        let alias = spec
                            .child_by_field_name("alias")
                            .map(|n| text(n, self.src).trim_matches(['"', '\'']).to_string())
                            .unwrap_or_else(|| name.clone());
                        push(alias, Some(name), from.clone());
                        any = true;
                    }
                }
                "namespace_export" => {
                    let ns = child
                        .named_child(0)
                        .map(|n| text(n, self.src).to_string())
                        .unwrap_or_default();
                    push(ns, Some("*".into()), from.clone());
                    any = true;
                }
                _ => {}
            }
        }
        if !any && from.is_some() {
            push("*".into(), None, from);
        }
    }

    /// `const x = require('m')`, `const { a, b: c } = require('m')`,
    /// `const y = require('m').y`.
    fn js_require(&mut self, node: Node<'_>) {
        let (Some(name), Some(value)) = (node.child_by_field_name("name"), node.child_by_field_name("value")) else {
            return;
        };
        let (call, member) = match value.kind() {
            "member_expression" => match (
                value.child_by_field_name("object"),
                value.child_by_field_name("property"),
            ) {
                (Some(o), Some(p)) => (o, Some(text(p, self.src).to_string())),
                _ => return,
            },
            _ => (value, None),
        };
        let Some(module) = require_source(call, self.src) else {
            return;
        };
        let line = line_of(node);
        match name.kind() {
            "identifier" => self.facts.imports.push(ImportFact {
                module,
                name: member,
                local: text(name, self.src).to_string(),
                line,
            }),
            "object_pattern" if member.is_none() => {
                let mut c = name.walk();
                for p in name.named_children(&mut c) {
                    let (imported, local) = match p.kind() {
                        "shorthand_property_identifier_pattern" => {
                            let t = text(p, self.src).to_string();
                            (t.clone(), t)
                        }
                        "pair_pattern" => match (p.child_by_field_name("key"), p.child_by_field_name("value")) {
                            (Some(k), Some(v)) if v.kind() == "identifier" => {
                                (text(k, self.src).to_string(), text(v, self.src).to_string())
                            }
                            _ => continue,
                        },
                        _ => continue,
                    };
                    self.facts.imports.push(ImportFact {
                        module: module.clone(),
                        name: Some(imported),
                        local,
                        line,
                    });
                }
            }
            _ => {}
        }
    }

    /// CommonJS: `exports.A = A`, `module.exports.A = …`, `module.exports = { A, B: C }`,
    /// `module.exports = X`.
    fn cjs_export(&mut self, node: Node<'_>) {
        let (Some(left), Some(right)) = (node.child_by_field_name("left"), node.child_by_field_name("right")) else {
            return;
        };
        let target = text(left, self.src);
        let line = line_of(node);
        let local = |n: Node<'_>| match n.kind() {
            "identifier" => Some(text(n, self.src).to_string()),
            "class" | "function_expression" | "function" => {
                n.child_by_field_name("name").map(|x| text(x, self.src).to_string())
            }
            _ => None,
        };
        if target == "module.exports" {
            if right.kind() == "object" {
                let mut c = right.walk();
                for p in right.named_children(&mut c) {
                    match p.kind() {
                        "shorthand_property_identifier" => {
                            let t = text(p, self.src).to_string();
                            self.facts.exports.push(ExportFact {
                                name: t.clone(),
                                local: Some(t),
                                from: None,
                                line,
                            });
                        }
                        "pair" => {
                            if let (Some(k), Some(v)) = (p.child_by_field_name("key"), p.child_by_field_name("value")) {
                                self.facts.exports.push(ExportFact {
                                    name: text(k, self.src).trim_matches(['"', '\'']).to_string(),
                                    local: local(v),
                                    from: None,
                                    line,
                                });
                            }
                        }
                        _ => {}
                    }
                }
            } else {
                self.facts.exports.push(ExportFact {
                    name: "default".into(),
                    local: local(right),
                    from: None,
                    line,
                });
            }
            return;
        }
        let name = target
            .strip_prefix("module.exports.")
            .or_else(|| target.strip_prefix("exports."));
        if let Some(name) = name.filter(|n| !n.contains(['.', '['])) {
            self.facts.exports.push(ExportFact {
                name: name.to_string(),
                local: local(right),
                from: None,
                line,
            });
        }
    }
}

/// `n` has a child (named or not) of one of `kinds`.
fn has_child(n: Node<'_>, kinds: &[&str]) -> bool {
    (0..n.child_count())
        .filter_map(|i| n.child(i))
        .any(|ch| kinds.contains(&ch.kind()))
}

fn is_js(lang: Lang) -> bool {
    matches!(lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx)
}

/// `require('m')` → `m`.
fn require_source(call: Node<'_>, src: &[u8]) -> Option<String> {
    if call.kind() != "call_expression" {
        return None;
    }
    let f = call.child_by_field_name("function")?;
    if text(f, src) != "require" {
        return None;
    }
    let arg = call.child_by_field_name("arguments")?.named_child(0)?;
    (arg.kind() == "string").then(|| text(arg, src).trim_matches(['"', '\'', '`']).to_string())
}

/// A function's parameters, where the language makes them checkable:
/// Rust (no defaults; `self` first for methods), Go (variadic last),
/// JavaScript/TypeScript (defaults, `?`, rest). Java is left out: overloads
/// share a name, so a call cannot be matched to one signature by name.
/// A plain-JavaScript function reading `arguments` has no fixed signature.
fn parameters(lang: Lang, func: Node<'_>, src: &[u8]) -> Option<Vec<Param>> {
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

/// `@typedef {import("m").X} Y` → `(m, X, Y)`.
fn jsdoc_type_imports(comment: &str) -> Vec<(String, String, String)> {
    let mut out = vec![];
    for tag in comment.split("@typedef").skip(1) {
        let Some(body) = tag.trim_start().strip_prefix('{') else {
            continue;
        };
        let Some((ty, after)) = body.split_once('}') else {
            continue;
        };
        let ty = ty.trim();
        let Some(rest) = ty.strip_prefix("import(") else {
            continue;
        };
        let Some((module, member)) = rest.split_once(')') else {
            continue;
        };
        let module = module.trim().trim_matches(['"', '\'']).to_string();
        let name = member.trim().trim_start_matches('.').to_string();
        let local = after.split_whitespace().next().unwrap_or("").to_string();
        if !name.is_empty() && name.chars().all(is_ident_char) && !local.is_empty() && local.chars().all(is_ident_char)
        {
            out.push((module, name, local));
        }
    }
    out
}

/// `@param {Type} name` in a JSDoc comment, for a plain class name.
fn jsdoc_param_type<'d>(doc: &'d str, name: &str) -> Option<&'d str> {
    doc.split("@param").skip(1).find_map(|tag| {
        let tag = tag.trim_start();
        let rest = tag.strip_prefix('{')?;
        let (ty, after) = rest.split_once('}')?;
        let param = after.split_whitespace().next()?;
        let ok = param == name && capitalized(ty) && ty.chars().all(is_ident_char);
        ok.then_some(ty)
    })
}

fn capitalized(s: &str) -> bool {
    s.chars().next().is_some_and(char::is_uppercase)
}

/// Whitespace runs collapsed (a destructured parameter's text, for signatures).
fn compact(t: &str) -> String {
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
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

/// The comment just above a node (JSDoc), or the one above its declaration.
fn preceding_comment(node: Node<'_>, src: &[u8]) -> String {
    let mut n = node;
    for _ in 0..4 {
        if let Some(prev) = n.prev_named_sibling()
            && prev.kind() == "comment"
        {
            return text(prev, src).to_string();
        }
        match n.parent() {
            Some(p) if !matches!(p.kind(), "program" | "class_body" | "statement_block") => n = p,
            _ => break,
        }
    }
    String::new()
}

/// The `return` statements of a function body, nested functions excluded.
fn returns<'t>(func: Node<'t>) -> Vec<Node<'t>> {
    fn walk<'t>(n: Node<'t>, out: &mut Vec<Node<'t>>) {
        let mut c = n.walk();
        for ch in n.named_children(&mut c) {
            match ch.kind() {
                "return_statement" => out.push(ch),
                "function_declaration"
                | "function_expression"
                | "function"
                | "arrow_function"
                | "generator_function_declaration"
                | "method_definition"
                | "class"
                | "class_declaration" => {}
                _ => walk(ch, out),
            }
        }
    }
    let mut out = vec![];
    if let Some(body) = func.child_by_field_name("body") {
        walk(body, &mut out);
    }
    out
}

fn is_async_or_generator(func: Node<'_>) -> bool {
    has_child(func, &["async", "*"]) || func.kind().contains("generator")
}

/// A JavaScript/TypeScript function can return `null`/`undefined`: a bare
/// `return;`, `return null`, `return undefined`, or no value-returning
/// `return` at all (a block body). Async and generator functions never do.
fn js_returns_none(func: Node<'_>, src: &[u8]) -> bool {
    if is_async_or_generator(func) {
        return false;
    }
    // TypeScript says so: `): T | undefined`, `): T | null`.
    if let Some(rt) = func.child_by_field_name("return_type") {
        let t = text(rt, src);
        if t.split(['|', ':', ' ', '<', '>', '(', ')'])
            .any(|w| matches!(w, "null" | "undefined"))
        {
            return true;
        }
    }
    let Some(body) = func.child_by_field_name("body") else {
        return false;
    };
    if body.kind() != "statement_block" {
        return matches!(text(body, src).trim(), "null" | "undefined" | "void 0");
    }
    if func.kind() == "method_definition"
        && func
            .child_by_field_name("name")
            .is_some_and(|n| matches!(text(n, src), "constructor" | "set"))
    {
        return false;
    }
    let rs = returns(func);
    fn value(r: Node<'_>) -> Option<Node<'_>> {
        r.named_child(0).filter(|v| v.kind() != "comment")
    }
    if !rs.iter().any(|r| value(*r).is_some()) {
        // Returns nothing at all: only a change *to* this is reported
        // (a function that returned a value and no longer does).
        return true;
    }
    rs.iter().any(|r| match value(*r) {
        None => true,
        Some(v) => matches!(text(v, src).trim(), "null" | "undefined" | "void 0"),
    })
}

/// The keys of the object literal every `return` gives, when they all do.
fn js_return_keys(func: Node<'_>, src: &[u8]) -> Option<Vec<String>> {
    let body = func.child_by_field_name("body")?;
    let values: Vec<Node<'_>> = if body.kind() == "statement_block" {
        returns(func)
            .into_iter()
            .map(|r| r.named_child(0))
            .collect::<Option<_>>()?
    } else {
        vec![body]
    };
    if values.is_empty() {
        return None;
    }
    let mut keys = std::collections::BTreeSet::new();
    for v in values {
        let mut v = v;
        while v.kind() == "parenthesized_expression" {
            v = v.named_child(0)?;
        }
        if v.kind() != "object" {
            return None;
        }
        let mut c = v.walk();
        for p in v.named_children(&mut c) {
            match p.kind() {
                "shorthand_property_identifier" => {
                    keys.insert(text(p, src).to_string());
                }
                "pair" | "method_definition" => {
                    let k = p.child_by_field_name("key").or_else(|| p.child_by_field_name("name"))?;
                    if !matches!(k.kind(), "property_identifier" | "string") {
                        return None;
                    }
                    keys.insert(text(k, src).trim_matches(['"', '\'']).to_string());
                }
                "comment" => {}
                _ => return None,
            }
        }
    }
    Some(keys.into_iter().collect())
}

/// How a JavaScript/TypeScript call's result is used, and the keys read
/// from it.
fn js_result_use(call: Node<'_>, src: &[u8]) -> (ResultUse, Vec<String>) {
    let Some(parent) = call.parent() else {
        return (ResultUse::Other, vec![]);
    };
    let optional = |n: Node<'_>| has_child(n, &["optional_chain"]);
    let is = |field: &str| parent.child_by_field_name(field).is_some_and(|n| n.id() == call.id());
    match parent.kind() {
        "member_expression" if is("object") && !optional(parent) => {
            let key = parent
                .child_by_field_name("property")
                .map(|p| text(p, src).to_string())
                .into_iter()
                .collect();
            (ResultUse::Direct, key)
        }
        "subscript_expression" if is("object") && !optional(parent) => (ResultUse::Direct, vec![]),
        "call_expression" if is("function") && !optional(parent) => (ResultUse::Direct, vec![]),
        "spread_element" => (ResultUse::Direct, vec![]),
        "for_in_statement" if is("right") => (ResultUse::Direct, vec![]),
        "variable_declarator" if is("value") => {
            let Some(name) = parent.child_by_field_name("name") else {
                return (ResultUse::Other, vec![]);
            };
            match name.kind() {
                "object_pattern" => (ResultUse::Direct, pattern_keys(name, src)),
                "array_pattern" => (ResultUse::Direct, vec![]),
                "identifier" => assigned_use(parent, text(name, src), src),
                _ => (ResultUse::Other, vec![]),
            }
        }
        _ => (ResultUse::Other, vec![]),
    }
}

fn pattern_keys(pattern: Node<'_>, src: &[u8]) -> Vec<String> {
    let mut out = vec![];
    let mut c = pattern.walk();
    for p in pattern.named_children(&mut c) {
        match p.kind() {
            "shorthand_property_identifier_pattern" => out.push(text(p, src).to_string()),
            "pair_pattern" => {
                if let Some(k) = p.child_by_field_name("key") {
                    out.push(text(k, src).trim_matches(['"', '\'']).to_string());
                }
            }
            "object_assignment_pattern" => {
                if let Some(l) = p.child_by_field_name("left") {
                    out.push(text(l, src).to_string());
                }
            }
            _ => {}
        }
    }
    out
}

/// `const x = f();` then the following statements of the block: the first
/// mention of `x` decides (a member read or destructuring before any test
/// is a dereference); every `x.key` read is collected.
fn assigned_use(declarator: Node<'_>, name: &str, src: &[u8]) -> (ResultUse, Vec<String>) {
    let Some(decl) = declarator.parent() else {
        return (ResultUse::Other, vec![]);
    };
    let mut first: Option<ResultUse> = None;
    let mut keys = vec![];
    let mut next = decl.next_named_sibling();
    while let Some(stmt) = next {
        let mut stop = false;
        visit_idents(stmt, &mut |id| {
            if stop || text(id, src) != name {
                return;
            }
            let Some(p) = id.parent() else { return };
            let is_obj = p.child_by_field_name("object").is_some_and(|o| o.id() == id.id());
            let member = p.kind() == "member_expression" && is_obj && !has_child(p, &["optional_chain"]);
            if p.kind() == "assignment_expression" && p.child_by_field_name("left").is_some_and(|l| l.id() == id.id()) {
                stop = true;
                first.get_or_insert(ResultUse::Other);
                return;
            }
            if member {
                if let Some(k) = p.child_by_field_name("property") {
                    keys.push(text(k, src).to_string());
                }
                first.get_or_insert(ResultUse::AssignedThenUsed(line_of(id)));
            } else {
                first.get_or_insert(ResultUse::Other);
            }
        });
        if stop {
            break;
        }
        next = stmt.next_named_sibling();
    }
    (first.unwrap_or(ResultUse::Other), keys)
}

fn visit_idents<'t>(n: Node<'t>, f: &mut dyn FnMut(Node<'t>)) {
    if n.kind() == "identifier" || n.kind() == "shorthand_property_identifier" {
        f(n);
        return;
    }
    if matches!(
        n.kind(),
        "function_declaration" | "function_expression" | "arrow_function" | "class"
    ) {
        return;
    }
    let mut c = n.walk();
    for ch in n.named_children(&mut c) {
        visit_idents(ch, f);
    }
}

/// A called expression as a dotted path (`::` and `.` both become `.`).
fn path_of(node: Node<'_>, src: &[u8]) -> String {
    match node.kind() {
        "identifier"
        | "field_identifier"
        | "property_identifier"
        | "type_identifier"
        | "this"
        | "self"
        | "super"
        | "crate" => text(node, src).to_string(),
        // An instance of a class (`new Cart().add`) or a call's result (`f().x`).
        "new_expression" => {
            let c = node
                .child_by_field_name("constructor")
                .map(|c| path_of(c, src))
                .unwrap_or_else(|| "?".into());
            format!("{c}()")
        }
        "call_expression" => {
            let f = node
                .child_by_field_name("function")
                .map(|f| path_of(f, src))
                .unwrap_or_else(|| "?".into());
            format!("{f}()")
        }
        "scoped_identifier" | "scoped_type_identifier" => {
            let path = node.child_by_field_name("path").map(|p| path_of(p, src));
            let name = node.child_by_field_name("name").map(|n| text(n, src)).unwrap_or("?");
            match path {
                Some(p) => format!("{p}.{name}"),
                None => name.to_string(),
            }
        }
        "field_expression" => {
            // Rust `Unit.method()`: a method call on a value of the unit
            // struct (an instance, written `Unit()`), unlike `Unit::f()`.
            let value = node
                .child_by_field_name("value")
                .map(|v| {
                    let p = path_of(v, src);
                    if v.kind() == "identifier" && p.chars().next().is_some_and(char::is_uppercase) {
                        format!("{p}()")
                    } else {
                        p
                    }
                })
                .unwrap_or_else(|| "?".into());
            let field = node.child_by_field_name("field").map(|f| text(f, src)).unwrap_or("?");
            format!("{value}.{field}")
        }
        "member_expression" => {
            let obj = node
                .child_by_field_name("object")
                .map(|v| path_of(v, src))
                .unwrap_or_else(|| "?".into());
            let prop = node
                .child_by_field_name("property")
                .map(|f| text(f, src))
                .unwrap_or("?");
            format!("{obj}.{prop}")
        }
        "selector_expression" => {
            let obj = node
                .child_by_field_name("operand")
                .map(|v| path_of(v, src))
                .unwrap_or_else(|| "?".into());
            let field = node.child_by_field_name("field").map(|f| text(f, src)).unwrap_or("?");
            format!("{obj}.{field}")
        }
        "field_access" => {
            let obj = node
                .child_by_field_name("object")
                .map(|v| path_of(v, src))
                .unwrap_or_else(|| "?".into());
            let field = node.child_by_field_name("field").map(|f| text(f, src)).unwrap_or("?");
            format!("{obj}.{field}")
        }
        "generic_function" | "generic_type" => node
            .named_child(0)
            .map(|n| path_of(n, src))
            .unwrap_or_else(|| "?".into()),
        _ => "?".into(),
    }
}

fn base_type(node: Node<'_>, src: &[u8]) -> String {
    match node.kind() {
        "generic_type" => node
            .child_by_field_name("type")
            .map(|t| base_type(t, src))
            .unwrap_or_default(),
        _ => text(node, src).to_string(),
    }
}

/// `#[test]`, `#[tokio::test]`, … on the lines just above a Rust item.
fn preceding_attributes(node: Node<'_>, src: &[u8]) -> Vec<String> {
    let mut out = vec![];
    let mut prev = node.prev_named_sibling();
    while let Some(p) = prev {
        if p.kind() != "attribute_item" {
            break;
        }
        let t = text(p, src).trim_start_matches("#[").trim_end_matches(']');
        let name = t.split(['(', ' ', '=']).next().unwrap_or(t).to_string();
        out.push(name);
        prev = p.prev_named_sibling();
    }
    out
}

fn heritage(node: Node<'_>, src: &[u8]) -> Vec<String> {
    let mut out = vec![];
    let mut c = node.walk();
    for child in node.named_children(&mut c) {
        if matches!(
            child.kind(),
            "class_heritage" | "extends_clause" | "implements_clause" | "extends_type_clause"
        ) {
            collect_names(child, src, &mut out);
        }
    }
    out
}

fn collect_names(node: Node<'_>, src: &[u8], out: &mut Vec<String>) {
    match node.kind() {
        "identifier" | "type_identifier" | "member_expression" | "nested_type_identifier" => {
            out.push(text(node, src).to_string());
        }
        _ => {
            let mut c = node.walk();
            for child in node.named_children(&mut c) {
                collect_names(child, src, out);
            }
        }
    }
}

fn go_receiver(node: Node<'_>, src: &[u8]) -> String {
    // `(s *Server)` → `Server`
    let t = text(node, src);
    t.trim_matches(['(', ')'])
        .split_whitespace()
        .last()
        .unwrap_or("")
        .trim_start_matches('*')
        .split('[')
        .next()
        .unwrap_or("")
        .to_string()
}

fn java_supers(node: Node<'_>, src: &[u8]) -> Vec<String> {
    let mut out = vec![];
    for field in ["superclass", "interfaces"] {
        if let Some(n) = node.child_by_field_name(field) {
            collect_names(n, src, &mut out);
        }
    }
    out
}

fn java_annotations(node: Node<'_>, src: &[u8]) -> Vec<String> {
    let mut out = vec![];
    let mut c = node.walk();
    for child in node.named_children(&mut c).filter(|n| n.kind() == "modifiers") {
        let mut c2 = child.walk();
        for m in child.named_children(&mut c2) {
            if matches!(m.kind(), "marker_annotation" | "annotation")
                && let Some(n) = m.child_by_field_name("name")
            {
                out.push(text(n, src).to_string());
            }
        }
    }
    out
}

//! Rust, JavaScript/TypeScript (TSX), Go and Java: symbols with line ranges,
//! calls by name, imports, inheritance where the syntax states it, and test
//! functions. Resolution for these languages is by name (lower confidence).

use tree_sitter::Node;

use super::{CallFact, FileFacts, ImportFact, SymbolFact, SymbolKind, end_line_of, line_of, snippet, text};
use crate::lang::Lang;

pub(super) fn extract(lang: Lang, root: Node<'_>, src: &[u8], facts: &mut FileFacts) {
    let test_file = match lang {
        Lang::Go => facts.path.ends_with("_test.go"),
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => {
            let p = &facts.path;
            p.contains(".test.") || p.contains(".spec.") || p.contains("__tests__/")
        }
        _ => false,
    };
    let mut w = Walker {
        lang,
        src,
        facts,
        test_file,
    };
    w.visit_children(root, None, None);
}

struct Walker<'s, 'f> {
    lang: Lang,
    src: &'s [u8],
    facts: &'f mut FileFacts,
    test_file: bool,
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
        if let Some(callee) = self.callee(node) {
            let args = node.child_by_field_name("arguments");
            let (mut positional, mut spread) = (0, false);
            if let Some(args) = args {
                let mut c = args.walk();
                for a in args.named_children(&mut c) {
                    match a.kind() {
                        "comment" | "line_comment" | "block_comment" => {}
                        "spread_element" => spread = true,
                        _ => positional += 1,
                    }
                }
            }
            self.facts.calls.push(CallFact {
                caller: scope,
                callee,
                line: line_of(node),
                positional,
                keywords: vec![],
                spread,
                text: snippet(node, self.src),
                result_use: Default::default(),
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
        let idx = self.facts.symbols.len() as u32;
        self.facts.symbols.push(SymbolFact {
            name: def.name.clone(),
            qname,
            kind,
            start_line: line_of(node),
            end_line: end_line_of(node),
            parent: scope,
            params: None,
            decorators: def.decorators.clone(),
            bases: def.bases.clone(),
            is_test: def.is_test,
            returns_none: false,
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
            ) => def(name_of(node)?, SymbolKind::Function, body),
            (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "method_definition") => {
                def(name_of(node)?, SymbolKind::Method, body)
            }
            (
                Lang::JavaScript | Lang::TypeScript | Lang::Tsx,
                "class_declaration" | "abstract_class_declaration" | "interface_declaration" | "class",
            ) => {
                let mut d = def(name_of(node)?, SymbolKind::Class, body);
                d.bases = heritage(node, self.src);
                d
            }
            (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "variable_declarator") => {
                let value = node.child_by_field_name("value")?;
                if !matches!(value.kind(), "arrow_function" | "function_expression" | "function") {
                    return None;
                }
                def(name_of(node)?, SymbolKind::Function, value.child_by_field_name("body"))
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
                d
            }
            (Lang::Go, "method_declaration") => {
                let recv = node.child_by_field_name("receiver").map(|r| go_receiver(r, self.src));
                let mut d = def(name_of(node)?, SymbolKind::Method, body);
                d.owner = recv;
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
}

/// A called expression as a dotted path (`::` and `.` both become `.`).
fn path_of(node: Node<'_>, src: &[u8]) -> String {
    match node.kind() {
        "identifier" | "field_identifier" | "property_identifier" | "type_identifier" | "this" | "self" => {
            text(node, src).to_string()
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
            let value = node
                .child_by_field_name("value")
                .map(|v| path_of(v, src))
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

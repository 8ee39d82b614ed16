//! Rust, JavaScript/TypeScript (TSX), Go and Java: symbols with line ranges,
//! calls by name, imports, inheritance where the syntax states it, and test
//! functions. Resolution for these languages is by name (lower confidence).
//!
//! One tree-sitter walker serves the four languages. This file is its
//! skeleton: the walk, what each node defines (`Walker::definition`), the
//! dispatch of language-specific nodes, calls, and the helpers every language
//! uses. What belongs to one language or family is in its own file:
//! - `rust`: `use` trees, impl types, `#[test]` attributes;
//! - `go`: import specs and method receivers;
//! - `java`: imports, superclasses and annotations;
//! - `js_modules`: JavaScript/TypeScript imports and exports (ES modules and
//!   CommonJS);
//! - `js_types`: JavaScript/TypeScript names whose class is known, and class
//!   heritage;
//! - `js_results`: what a JavaScript/TypeScript function returns and how a
//!   call's result is used;
//! - `jsdoc`: the comment above a node and what its tags say;
//! - `params`: function parameters, for the languages that make them
//!   checkable.

mod go;
mod java;
mod js_modules;
mod js_results;
mod js_types;
mod jsdoc;
mod params;
mod rust;

use tree_sitter::Node;

use super::{CallFact, FileFacts, ImportFact, ResultUse, SymbolFact, SymbolKind, end_line_of, line_of, snippet, text};
use crate::lang::Lang;
use go::go_receiver;
use java::{java_annotations, java_supers};
use js_results::{js_result_use, js_return_keys, js_returns_none};
use js_types::heritage;
use jsdoc::jsdoc_type_imports;
use params::parameters;
use rust::{base_type, preceding_attributes};

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
            if let Some(f) = def.func {
                match self.lang {
                    l if is_js(l) => self.param_types(f, idx),
                    Lang::Go => self.go_param_types(f, idx),
                    _ => {}
                }
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
            (Lang::TypeScript | Lang::Tsx, "public_field_definition") => self.ts_field_type(node, scope),
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
                self.go_import(node);
                return;
            }
            (Lang::Java, "import_declaration") => {
                self.java_import(node);
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

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
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

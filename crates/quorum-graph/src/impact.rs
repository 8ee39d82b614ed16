//! The impact report (F-IDX-3): for each changed hunk the innermost
//! enclosing symbol; a reverse BFS (callee → caller over calls, imports and
//! inherits, 1–3 hops) to what can break; the tests that reach the change;
//! and, for a signature change, the call sites that no longer fit.
//!
//! Added and modified lines are looked up in the head graph (the base graph
//! with the PR's changed files overlaid), removed lines in the base graph,
//! so symbols the PR adds are resolved rather than dropped.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use quorum_core::{FileDiff, LineKind};
use serde::Serialize;

use crate::extract::{CallFact, Param, ResultUse, SymbolKind};
use crate::lang::Lang;
use crate::model::{EdgeKind, Graph, Target};
use crate::resolve::RESOLVED;
use crate::signature;

/// Report options.
#[derive(Debug, Clone, Copy)]
pub struct ImpactOptions {
    /// Reverse-BFS depth, 1–3.
    pub hops: u8,
    /// How far tests are searched for (hops from the changed symbol).
    pub test_hops: u8,
}

impl Default for ImpactOptions {
    fn default() -> Self {
        ImpactOptions { hops: 2, test_hops: 3 }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Added,
    Modified,
    Removed,
}

/// A symbol that can break because of the change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Caller {
    pub qname: String,
    pub path: String,
    /// The call (or import / class) line.
    pub line: u32,
    pub hops: u8,
    pub via: &'static str,
    /// Product of the edge confidences along the path.
    pub confidence: f32,
}

/// Why a call site breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BreakKind {
    /// Its arguments no longer fit the signature.
    Arity,
    /// It calls a symbol the change removes.
    Removed,
    /// It dereferences the result, which can now be `None`.
    NoneResult,
    /// It reads a key of the result that the function no longer returns.
    ReturnShape,
}

/// A call site the change breaks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BrokenCall {
    pub path: String,
    pub line: u32,
    pub caller: String,
    pub text: String,
    pub problem: String,
    pub kind: BreakKind,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChangedSymbol {
    pub qname: String,
    pub kind: &'static str,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub change: ChangeKind,
    /// `(old, new)` rendered signatures when they differ.
    pub signature: Option<(String, String)>,
    pub callers: Vec<Caller>,
    pub tests: Vec<String>,
    pub broken_calls: Vec<BrokenCall>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ImpactReport {
    pub changed: Vec<ChangedSymbol>,
    pub hops: u8,
    /// Calls the change wrote with two arguments in each other's places.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub swapped_arguments: Vec<crate::arg_swap::SwappedArguments>,
}

/// Computes the report of `diffs` between `base` and `head`.
pub fn impact(base: &Graph, head: &Graph, diffs: &[FileDiff], opts: ImpactOptions) -> ImpactReport {
    let hops = opts.hops.clamp(1, 3);
    // (qname) → which graph it lives in; BTreeMap keeps the report stable.
    let mut touched: BTreeMap<String, (ChangeKind, bool)> = BTreeMap::new();
    for d in diffs {
        let old_path = d.old_path.as_deref().unwrap_or(&d.path);
        for h in &d.hunks {
            for l in &h.lines {
                match (l.kind, l.new_line, l.old_line) {
                    (LineKind::Added, Some(n), _) => {
                        if let Some(id) = head.enclosing(&d.path, n) {
                            let q = head.qname(id);
                            let kind = if base.find(&q).is_some() {
                                ChangeKind::Modified
                            } else {
                                ChangeKind::Added
                            };
                            touched.entry(q).or_insert((kind, true));
                        }
                    }
                    (LineKind::Removed, _, Some(o)) => {
                        if let Some(id) = base.enclosing(old_path, o) {
                            let q = base.qname(id);
                            let in_head = head.find(&q).is_some();
                            let kind = if in_head {
                                ChangeKind::Modified
                            } else {
                                ChangeKind::Removed
                            };
                            touched.entry(q).or_insert((kind, in_head));
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    let mut changed = vec![];
    for (qname, (kind, in_head)) in touched {
        let g = if in_head { head } else { base };
        let Some(id) = g.find(&qname) else { continue };
        let info = g.symbol(id);
        let old_sig = base
            .find(&qname)
            .and_then(|b| base.symbol(b).params.map(signature::render));
        let new_sig = head
            .find(&qname)
            .and_then(|h| head.symbol(h).params.map(signature::render));
        let signature = match (&old_sig, &new_sig, kind) {
            (Some(o), Some(n), ChangeKind::Modified) if o != n => Some((o.clone(), n.clone())),
            _ => None,
        };
        let old_params = base.find(&qname).and_then(|b| base.symbol(b).params);
        let mut broken_calls = match kind {
            ChangeKind::Removed => removed_callers(base, head, id),
            _ if signature.is_some() => misfits(base, head, id, old_params),
            _ => vec![],
        };
        if kind == ChangeKind::Modified
            && let (Some(b), Some(h)) = (base.find(&qname), head.find(&qname))
        {
            if !base.symbol(b).returns_none && head.symbol(h).returns_none {
                broken_calls.extend(none_users(head, h));
            }
            broken_calls.extend(key_users(base, b, head, h));
        }
        changed.push(ChangedSymbol {
            qname,
            kind: info.kind.as_str(),
            path: info.path.to_string(),
            start_line: info.start_line,
            end_line: info.end_line,
            change: kind,
            signature,
            callers: callers(g, id, hops),
            tests: tests_reaching(g, id, opts.test_hops),
            broken_calls,
        });
    }
    ImpactReport {
        changed,
        hops,
        swapped_arguments: crate::arg_swap::swapped_arguments(head, diffs),
    }
}

/// Whether a name-only edge is worth following: the name must pick out one
/// symbol, or every `get` in the repo would be a caller of every other.
fn followable(g: &Graph, e: &crate::model::Edge) -> bool {
    match &e.to {
        Target::Symbol(_) => true,
        Target::Name(n) => g.named(n).len() == 1,
    }
}

/// Reverse BFS from `id`. Modules (importers) are leaves: following imports
/// onward would reach the whole repo.
pub fn callers(g: &Graph, id: u32, hops: u8) -> Vec<Caller> {
    let mut seen: HashSet<u32> = HashSet::from([id]);
    let mut frontier = vec![(id, 1.0f32)];
    let mut out = vec![];
    for hop in 1..=hops {
        let mut next = vec![];
        for (cur, conf) in frontier {
            for e in g.incoming(cur) {
                if e.kind == EdgeKind::Tests || !followable(g, e) || !seen.insert(e.from) {
                    continue;
                }
                let from = g.symbol(e.from);
                let confidence = conf * e.confidence;
                out.push(Caller {
                    qname: from.qname.clone(),
                    path: from.path.to_string(),
                    line: e.line,
                    hops: hop,
                    via: e.kind.as_str(),
                    confidence,
                });
                if from.kind != SymbolKind::Module {
                    next.push((e.from, confidence));
                }
            }
        }
        frontier = next;
    }
    out.sort_by(|a, b| {
        (a.hops, b.confidence.total_cmp(&a.confidence), &a.path, a.line).cmp(&(
            b.hops,
            std::cmp::Ordering::Equal,
            &b.path,
            b.line,
        ))
    });
    out
}

/// Test functions whose calls reach `id` within `hops`.
pub fn tests_reaching(g: &Graph, id: u32, hops: u8) -> Vec<String> {
    let mut seen: HashSet<u32> = HashSet::from([id]);
    let mut frontier = vec![id];
    let mut tests = BTreeSet::new();
    for _ in 0..hops {
        let mut next = vec![];
        for cur in frontier {
            for e in g.incoming(cur) {
                if !matches!(e.kind, EdgeKind::Calls | EdgeKind::Tests) || !followable(g, e) {
                    continue;
                }
                if !seen.insert(e.from) {
                    continue;
                }
                let s = g.symbol(e.from);
                if s.is_test {
                    tests.insert(format!("{}::{}", s.path, s.name));
                } else if s.kind != SymbolKind::Module {
                    next.push(e.from);
                }
            }
        }
        frontier = next;
    }
    tests.into_iter().collect()
}

/// Resolved call sites of `id` (in the head graph) that do not fit its
/// signature. A class's `__init__` is checked at the class's call sites.
/// Outside Python, a call that did not fit the old signature either is left
/// alone (an optional parameter the language does not mark), and a call
/// still passing its arguments in an order the change permuted, or a
/// positional value where an options object is now destructured, breaks —
/// unless the change rewrote that call too (a reordered call fits the
/// arity either way, so only a call the base already had, word for word,
/// is known to still pass the old order).
fn misfits(base: &Graph, head: &Graph, id: u32, old: Option<&[Param]>) -> Vec<BrokenCall> {
    let info = head.symbol(id);
    let Some(params) = info.params else { return vec![] };
    let python = head.file_of(id).lang == Lang::Python;
    let is_static = info.decorators.iter().any(|d| d == "staticmethod");
    // Rust's `self` parameter is the receiver; in JavaScript a parameter
    // named `self` is an ordinary one (undici's `addSignal(self, signal)`).
    let method_like = if python {
        info.kind == SymbolKind::Method && !is_static
    } else {
        head.file_of(id).lang == Lang::Rust && params.first().is_some_and(|p| p.name == "self")
    };
    let mut targets = vec![(id, method_like)];
    // A constructor is checked where its class is called (`Cls(…)`, `new Cls(…)`).
    let constructor = if python { "__init__" } else { "constructor" };
    if info.name == constructor
        && let Some(class) = head.find(info.qname.rsplit_once('.').map(|(c, _)| c).unwrap_or(""))
    {
        targets.push((class, python));
    }
    let local_qname = if python {
        info.qname.as_str()
    } else {
        info.qname.split_once("::").map(|(_, q)| q).unwrap_or(&info.qname)
    };
    let class_name = local_qname.rsplit('.').nth(1).unwrap_or("").to_string();
    let permuted = old.and_then(|o| permutation(o, params));
    let mut out = vec![];
    for (target, method_like) in targets {
        for e in head.incoming(target) {
            if e.kind != EdgeKind::Calls || e.to != Target::Symbol(target) || e.confidence < RESOLVED {
                continue;
            }
            let Some(call) = head.call_of(e) else { continue };
            // `Class.method(obj, …)` passes self explicitly; `obj.method(…)` does not.
            let qualifier = call.callee.rsplit('.').nth(1);
            let via_class = qualifier == Some(class_name.as_str()) || (!python && qualifier == Some("Self"));
            let classmethod = info.decorators.iter().any(|d| d == "classmethod");
            let bound = if target == id {
                method_like && (!via_class || classmethod)
            } else {
                method_like
            };
            let skip = if bound && method_like { 1 } else { 0 };
            let misfit = signature::check(params, call, bound);
            let fitted_before = old.is_none_or(|o| signature::check(o, call, bound).is_none());
            let problem = match misfit {
                Some(m) if python || fitted_before => Some(m.to_string()),
                Some(_) => None,
                None if call.spread => None,
                None if !in_base(base, head, e.from, call) => None,
                None => match &permuted {
                    Some((at, old_order)) if (call.positional as usize) + skip > *at => Some(format!(
                        "passes its arguments positionally in the old order {old_order}; the parameters are now {}",
                        signature::render(&params[skip.min(params.len())..])
                    )),
                    _ => options_object(old, params, skip, call),
                },
            };
            if let Some(problem) = problem {
                let s = head.symbol(e.from);
                out.push(BrokenCall {
                    path: s.path.to_string(),
                    line: call.line,
                    caller: s.qname.clone(),
                    text: call.text.clone(),
                    problem,
                    kind: BreakKind::Arity,
                });
            }
        }
    }
    out.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    out
}

/// Whether the base graph has this call, same caller, same text: a call
/// the change did not rewrite.
fn in_base(base: &Graph, head: &Graph, caller: u32, call: &CallFact) -> bool {
    base.find(&head.qname(caller)).is_some_and(|b| {
        base.outgoing(b)
            .filter(|e| e.kind == EdgeKind::Calls)
            .filter_map(|e| base.call_of(e))
            .any(|c| c.text == call.text)
    })
}

/// The same parameters in another order: the first moved position and the
/// old order, rendered.
fn permutation(old: &[Param], new: &[Param]) -> Option<(usize, String)> {
    if old.len() != new.len() || old.len() < 2 {
        return None;
    }
    fn names(ps: &[Param]) -> Vec<&str> {
        let mut v: Vec<&str> = ps.iter().map(|p| p.name.as_str()).collect();
        v.sort_unstable();
        v
    }
    if names(old) != names(new) || old.iter().zip(new).any(|(a, b)| a.name == b.name && a.kind != b.kind) {
        return None;
    }
    let at = old.iter().zip(new).position(|(a, b)| a.name != b.name)?;
    Some((at, signature::render(old)))
}

/// A positional parameter turned into an options object, destructured or
/// declared with an object type (`f(a, b)` → `f({ a, b })` or
/// `f(a, opts: { b?: T })`), while a call still passes a plain literal
/// there, or the reverse (`f({ a, b })` → `f(a, b)`) while a call still
/// passes an object literal.
fn options_object(old: Option<&[Param]>, new: &[Param], skip: usize, call: &CallFact) -> Option<String> {
    let old = old?;
    let destructured = |p: &Param| p.name.starts_with('{') || p.object_type;
    for (at, (was, now)) in old.iter().zip(new).enumerate().skip(skip) {
        let arg = (at - skip) as u32;
        if arg >= call.positional {
            break;
        }
        if destructured(now) && !destructured(was) && call.literal_args.contains(&arg) {
            return Some(format!(
                "passes a plain value where `{}` was, but the function now takes an options object {}",
                was.name, now.name
            ));
        }
        // `f(a, deep)` → `f(a, { deep })`: a caller still passing a name
        // that is the old parameter's own name passes the value, not an
        // object holding it.
        if now.name.starts_with('{')
            && !destructured(was)
            && now
                .name
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                .any(|k| k == was.name)
            && let Some(passed) = call.args.get(arg as usize)
            && passed.rsplit('.').next() == Some(was.name.as_str())
        {
            return Some(format!(
                "passes `{passed}` where `{}` was, but the function now destructures it from an options object {}",
                was.name, now.name
            ));
        }
        if destructured(was) && !destructured(now) && call.object_args.contains(&arg) {
            return Some(format!(
                "passes an options object, but the function now takes positional parameters {}",
                signature::render(&new[skip..])
            ));
        }
    }
    None
}

/// Resolved call sites that dereference the result of `id`, which can now be `None`.
fn none_users(head: &Graph, id: u32) -> Vec<BrokenCall> {
    let name = head.symbol(id).name.to_string();
    let none = if head.file_of(id).lang == Lang::Python {
        "None"
    } else {
        "null/undefined"
    };
    let mut out: Vec<BrokenCall> = head
        .incoming(id)
        .filter(|e| e.kind == EdgeKind::Calls && e.to == Target::Symbol(id) && e.confidence >= RESOLVED)
        .filter_map(|e| head.call_of(e).map(|c| (e, c)))
        .filter_map(|(e, c)| {
            let problem = match c.result_use {
                ResultUse::Direct => format!("uses the result directly, but `{name}` can now return {none}"),
                ResultUse::AssignedThenUsed(at) => format!(
                    "assigns the result and dereferences it at line {at} without a {none} check, but `{name}` can now return {none}"
                ),
                _ => return None,
            };
            let s = head.symbol(e.from);
            Some(BrokenCall {
                path: s.path.to_string(),
                line: c.line,
                caller: s.qname.clone(),
                text: c.text.clone(),
                problem,
                kind: BreakKind::NoneResult,
            })
        })
        .collect();
    out.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    out
}

/// Resolved call sites that read a key of the result (`f().a`,
/// `const { a } = f()`, `x = f(); x.a`) which every old `return` gave and
/// no new `return` does.
fn key_users(base: &Graph, b: u32, head: &Graph, h: u32) -> Vec<BrokenCall> {
    let (Some(old), Some(new)) = (
        base.fact(b).and_then(|s| s.return_keys.as_ref()),
        head.fact(h).and_then(|s| s.return_keys.as_ref()),
    ) else {
        return vec![];
    };
    let gone: Vec<&String> = old.iter().filter(|k| !new.contains(k)).collect();
    if gone.is_empty() {
        return vec![];
    }
    let name = head.symbol(h).name.to_string();
    let mut out: Vec<BrokenCall> = head
        .incoming(h)
        .filter(|e| e.kind == EdgeKind::Calls && e.to == Target::Symbol(h) && e.confidence >= RESOLVED)
        .filter_map(|e| head.call_of(e).map(|c| (e, c)))
        .filter_map(|(e, c)| {
            let read: Vec<String> = c
                .result_keys
                .iter()
                .filter(|k| gone.contains(k))
                .map(|k| format!("`{k}`"))
                .collect();
            if read.is_empty() {
                return None;
            }
            let s = head.symbol(e.from);
            Some(BrokenCall {
                path: s.path.to_string(),
                line: c.line,
                caller: s.qname.clone(),
                text: c.text.clone(),
                problem: format!(
                    "reads {} of the result, which `{name}` no longer returns (it now returns {{ {} }})",
                    read.join(", "),
                    new.join(", ")
                ),
                kind: BreakKind::ReturnShape,
            })
        })
        .collect();
    out.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    out
}

/// Call sites of a removed symbol in files the PR leaves in place.
fn removed_callers(base: &Graph, head: &Graph, id: u32) -> Vec<BrokenCall> {
    let name = base.symbol(id).name.to_string();
    let mut out = vec![];
    for e in base.incoming(id) {
        if e.kind != EdgeKind::Calls || e.to != Target::Symbol(id) {
            continue;
        }
        let caller = base.symbol(e.from);
        // Still there, unchanged, still calling it, and no longer resolved
        // to any symbol (moved and re-exported under that name is fine)?
        let still = head.file(caller.path).is_some_and(|f| {
            f.calls
                .iter()
                .any(|c| c.line == e.line && c.callee.rsplit('.').next() == Some(name.as_str()))
        });
        let resolved_in_head = head.enclosing(caller.path, e.line).is_some_and(|from| {
            head.outgoing(from).any(|he| {
                he.kind == EdgeKind::Calls
                    && he.line == e.line
                    && matches!(he.to, Target::Symbol(_))
                    && head
                        .call_of(he)
                        .is_some_and(|c| c.callee.rsplit('.').next() == Some(name.as_str()))
            })
        });
        let still = still && !resolved_in_head;
        if let (true, Some(call)) = (still, base.call_of(e)) {
            out.push(BrokenCall {
                path: caller.path.to_string(),
                line: e.line,
                caller: caller.qname.clone(),
                text: call.text.clone(),
                problem: format!("calls `{name}`, which this change removes"),
                kind: BreakKind::Removed,
            });
        }
    }
    out
}

//! `quorum-lab mutate --dir DIR`: generality measured the way mutation testing
//! does (issue 29, first part). For every function of a real codebase that
//! has callers in other files, a mutation is made mechanically — the kind
//! of change the code graph claims to catch — and reviewed through the
//! graph checks the offline engine runs in `graph_rag`, on one warm base
//! graph; then its **inverse control**, the same edit with every caller
//! updated, which must produce no finding.
//!
//! Classes so far: `rename` (the definition renamed, callers left calling
//! the old name), `add-param` (a required parameter appended, callers
//! passing what they passed), `remove-param` (the last parameter removed,
//! callers still passing it), `reorder` (the first two parameters swapped),
//! `options-object` (the last parameter destructured from an object),
//! `return-none` (an early `return None` / `return null`, where a caller
//! uses the result), `return-shape` (an object result wrapped in another,
//! where a caller reads its keys) and `swap-args` (two arguments swapped
//! at one call);
//! and the statement classes the rules claim (`statements`):
//! `invert-condition`, `drop-reraise`, `drop-await`, `remove-finally`.
//! docs/generality.md describes each and its control. A site is sampled
//! uniformly (seeded). A
//! mutation that cannot be made textually on one line (a multi-line
//! signature, defaults or varargs before the new parameter) is counted as
//! not constructed, with why — never silently dropped.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Context;
use quorum_core::{AgentRole, FileDiff, FileStatus};
use quorum_graph::{Graph, ImpactOptions, SymbolKind, impact, overlay};
use serde::Serialize;

mod edit;
mod make;
mod statements;

use make::{CLASSES, Mutant, make};

#[derive(Debug, clap::Args)]
pub struct MutateArgs {
    /// The codebase (a directory of source; e.g. an sdist's package).
    #[arg(long)]
    pub dir: PathBuf,
    /// Sites sampled per class.
    #[arg(long, default_value_t = 100)]
    pub sample: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// A function with callers in other files.
#[derive(Debug, Clone)]
struct Site {
    qname: String,
    name: String,
    path: String,
    start_line: u32,
    /// `(path, line)` of every call the graph resolved to it (a site is
    /// chosen for having at least one in another file; the control
    /// updates them all).
    callers: Vec<(String, u32)>,
    /// The callers the graph matched by a name other symbols also have
    /// (its receiver's type unknown): maybe calls of another definition.
    shared_name_callers: Vec<(String, u32)>,
    /// Whether it can already return `None`/`null` (the graph's fact).
    returns_none: bool,
    /// Its last line (1-based).
    end_line: u32,
    /// The keys every `return` gives, when each returns an object literal
    /// with plain keys (the graph's fact; JavaScript/TypeScript).
    return_keys: Vec<String>,
    /// Whether a caller in another file reads one of those keys from the result.
    keys_read: bool,
    /// For a constructor (`__init__`, `constructor`): its class's name, and
    /// the calls that instantiate the class, which call the constructor
    /// under the class's name (the argument classes update them too).
    class_name: Option<String>,
    class_callers: Vec<(String, u32)>,
}

/// One class's outcome.
#[derive(Debug, Default, Serialize)]
pub struct ClassReport {
    pub class: String,
    pub sites: usize,
    pub sampled: usize,
    pub constructed: usize,
    pub hits: usize,
    pub recall: f64,
    pub controls: usize,
    pub control_findings: usize,
    /// Why mutations could not be made, with counts.
    pub not_constructed: BTreeMap<String, usize>,
    /// Up to ten rename sites left out as overrides, with the method they override.
    pub overrides: Vec<String>,
    /// Why mutations were missed, with counts (see `miss_reason`).
    pub miss_reasons: BTreeMap<String, usize>,
    /// Up to ten missed sites (qualified names), to read.
    pub missed: Vec<String>,
    /// Up to ten controls that drew a finding, with the finding's title.
    pub false_positives: Vec<String>,
}

/// Examples a report keeps of each kind (misses, false positives, overrides).
const EXAMPLES: usize = 10;

impl ClassReport {
    /// A mutation no check found: counted under `reason`, kept as an example.
    fn miss(&mut self, reason: String, example: String) {
        *self.miss_reasons.entry(reason).or_default() += 1;
        if self.missed.len() < EXAMPLES {
            self.missed.push(example);
        }
    }

    /// A control that drew a finding, kept as an example.
    fn control_finding(&mut self, example: impl FnOnce() -> String) {
        self.control_findings += 1;
        if self.false_positives.len() < EXAMPLES {
            self.false_positives.push(example());
        }
    }

    /// Hits over mutations made (0 when none could be made).
    fn finish(mut self) -> Self {
        self.recall = if self.constructed == 0 {
            0.0
        } else {
            self.hits as f64 / self.constructed as f64
        };
        self
    }
}

#[derive(Debug, Serialize)]
pub struct MutateReport {
    pub dir: String,
    pub files: usize,
    pub seed: u64,
    pub classes: Vec<ClassReport>,
}

fn sites(g: &Graph) -> Vec<Site> {
    let mut out = vec![];
    for id in 0..g.symbol_count() as u32 {
        let s = g.symbol(id);
        if !matches!(s.kind, SymbolKind::Function | SymbolKind::Method) || s.is_test {
            continue;
        }
        // Every call edge, not one per calling function: a control must
        // update each call site, or what it leaves broken is a true finding.
        let calls: Vec<(String, u32, &quorum_graph::Edge)> = g
            .incoming(id)
            .filter(|e| e.kind == quorum_graph::EdgeKind::Calls)
            .map(|e| (g.symbol(e.from).path.to_string(), e.line, e))
            .collect();
        let mut callers: Vec<(String, u32)> = calls.iter().map(|(p, l, _)| (p.clone(), *l)).collect();
        // A constructor is called through its class: `Session(…)`,
        // `new Client(…)` are edges to the class, and a control that left
        // them alone would leave true findings.
        let (class_name, class_callers) = match constructor_class(g, &s) {
            Some((name, class)) => {
                let mut at: Vec<(String, u32)> = g
                    .incoming(class)
                    .filter(|e| e.kind == quorum_graph::EdgeKind::Calls)
                    .map(|e| (g.symbol(e.from).path.to_string(), e.line))
                    .filter(|c| !callers.contains(c))
                    .collect();
                at.sort();
                at.dedup();
                (Some(name), at)
            }
            None => (None, vec![]),
        };
        callers.sort();
        callers.dedup();
        let elsewhere = |c: &[(String, u32)]| c.iter().any(|(p, _)| p != s.path);
        if !(elsewhere(&callers) || elsewhere(&class_callers)) || s.name.len() < 3 {
            continue;
        }
        // Lines with a resolved call too (`self.f() == other.f()`) are
        // this definition's: the control renames every call on them.
        let resolved: Vec<(&str, u32)> = calls
            .iter()
            .filter(|(_, _, e)| e.confidence >= quorum_graph::RESOLVED)
            .map(|(p, l, _)| (p.as_str(), *l))
            .collect();
        let shared_name_callers: Vec<(String, u32)> = if g.named(s.name).len() > 1 {
            calls
                .iter()
                .filter(|(p, l, e)| e.confidence < quorum_graph::RESOLVED && !resolved.contains(&(p.as_str(), *l)))
                .map(|(p, l, _)| (p.clone(), *l))
                .collect()
        } else {
            vec![]
        };
        let return_keys = g.fact(id).and_then(|f| f.return_keys.clone()).unwrap_or_default();
        let keys_read = calls
            .iter()
            .filter(|(p, _, _)| p != s.path)
            .filter_map(|(_, _, e)| g.call_of(e))
            .any(|c| c.result_keys.iter().any(|k| return_keys.contains(k)));
        out.push(Site {
            qname: s.qname.clone(),
            name: s.name.to_string(),
            path: s.path.to_string(),
            start_line: s.start_line,
            callers,
            shared_name_callers,
            returns_none: s.returns_none,
            end_line: s.end_line,
            return_keys,
            keys_read,
            class_name,
            class_callers,
        });
    }
    out
}

/// The class a constructor (`__init__`, a JavaScript `constructor`)
/// builds: its name and id.
fn constructor_class(g: &Graph, s: &quorum_graph::SymbolInfo<'_>) -> Option<(String, u32)> {
    if s.kind != SymbolKind::Method || !matches!(s.name, "__init__" | "constructor") {
        return None;
    }
    let (class_qname, _) = s.qname.rsplit_once('.')?;
    let class = g.find(class_qname)?;
    (g.symbol(class).kind == SymbolKind::Class).then(|| (g.symbol(class).name.to_string(), class))
}

/// The method of an ancestor class that `site` overrides, if the graph
/// resolves one: renaming an override is not a break, since calls through
/// the object still reach the ancestor's method.
fn overridden(g: &Graph, site: &Site) -> Option<String> {
    let (class_qname, name) = site.qname.rsplit_once('.')?;
    let class = g.find(class_qname)?;
    if g.symbol(class).kind != SymbolKind::Class {
        return None;
    }
    let mut todo = vec![class];
    let mut seen = std::collections::HashSet::new();
    while let Some(c) = todo.pop() {
        if !seen.insert(c) {
            continue;
        }
        for e in g.outgoing(c).filter(|e| e.kind == quorum_graph::EdgeKind::Inherits) {
            if let quorum_graph::Target::Symbol(base) = e.to {
                let inherited = format!("{}.{name}", g.qname(base));
                if g.find(&inherited).is_some() {
                    return Some(inherited);
                }
                todo.push(base);
            }
        }
    }
    None
}

/// Every caller's line with the name it calls the site by (its class's
/// name at an instantiation of a constructor's class).
fn caller_calls<'a>(site: &'a Site, files: &'a BTreeMap<String, String>) -> Vec<(&'a str, &'a str)> {
    site.callers
        .iter()
        .filter_map(|c| {
            let line = files.get(&c.0)?.split('\n').nth((c.1 as usize).checked_sub(1)?)?;
            let name = match &site.class_name {
                Some(class) if site.class_callers.contains(c) => class.as_str(),
                _ => site.name.as_str(),
            };
            Some((line, name))
        })
        .collect()
}

/// The text of every caller's line.
fn caller_lines<'a>(site: &'a Site, files: &'a BTreeMap<String, String>) -> Vec<&'a str> {
    caller_calls(site, files).into_iter().map(|(line, _)| line).collect()
}

/// Why a mutation drew no finding naming a caller, as a bucket the graph
/// work can act on: how its callers reach it, and whether its class has a
/// base the graph does not resolve (its methods may be reached through it).
fn miss_reason(g: &Graph, site: &Site, files: &BTreeMap<String, String>) -> String {
    let call_lines = caller_lines(site, files);
    let dotted = format!(".{}(", site.name);
    let through_receiver = !call_lines.is_empty() && call_lines.iter().all(|l| l.contains(&dotted));
    let unresolved_base = site
        .qname
        .rsplit_once('.')
        .and_then(|(c, _)| g.find(c))
        .filter(|&c| g.symbol(c).kind == SymbolKind::Class)
        .is_some_and(|c| {
            g.outgoing(c)
                .any(|e| e.kind == quorum_graph::EdgeKind::Inherits && matches!(e.to, quorum_graph::Target::Name(_)))
        });
    match (through_receiver, unresolved_base) {
        (true, true) => "method called through a receiver; its class has a base outside the graph".into(),
        (true, false) => "method called through a receiver (`obj.name(…)`)".into(),
        (false, _) if site.callers.len() > 1 => "called by name from several places".into(),
        (false, _) => "called by name".into(),
    }
}

/// Whether a finding is about a broken caller of `site`: on a caller's
/// line, or naming one (`path:line`) in its explanation or evidence — the
/// signature check reports at the definition and lists the calls.
fn names_a_caller(found: &[quorum_core::Finding], m: &Mutant) -> bool {
    found.iter().any(|f| {
        m.callers.iter().any(|(p, l)| {
            let at = format!("{p}:{l}");
            (f.file == *p && f.line == *l)
                || f.explanation.contains(&at)
                || f.evidence.iter().any(|e| e.detail.contains(&at))
        })
    })
}

/// The graph checks' findings on a mutant.
fn review(base: &Graph, originals: &BTreeMap<String, String>, m: &Mutant) -> Vec<quorum_core::Finding> {
    let changes: Vec<(String, Option<String>)> = m.files.iter().map(|(p, t)| (p.clone(), Some(t.clone()))).collect();
    let diffs: Vec<FileDiff> = m
        .files
        .iter()
        .map(|(p, t)| {
            let old = originals.get(p).map(String::as_str).unwrap_or("");
            let patch = quorum_scm::unified_patch(old.as_bytes(), t.as_bytes());
            quorum_core::diff::parse_file_patch(p, None, FileStatus::Modified, &patch).0
        })
        .collect();
    let (head, _) = overlay(base, &changes);
    let report = impact(base, &head, &diffs, ImpactOptions::default());
    quorum_engine::graph_checks::check(&report, &diffs, AgentRole::Reviewer)
}

pub fn run(args: &MutateArgs) -> anyhow::Result<MutateReport> {
    let tree = quorum_scm::read_dir_tree(&args.dir).with_context(|| format!("reading {}", args.dir.display()))?;
    let files: BTreeMap<String, String> = tree.iter().cloned().collect();
    let (base, _) = quorum_graph::build(tree, None);
    let all = sites(&base);
    let mut classes = vec![];
    for class in CLASSES {
        // A stable sample: a graph change that adds or drops other sites
        // leaves these in it, so the gate compares like with like.
        // A constructor's instantiations are its calls for the classes that
        // change arguments; the others see only its direct callers, as
        // before instantiations counted.
        let candidates: Vec<Site> = all.iter().filter_map(|s| make::with_callers_for(class, s)).collect();
        let sites_in_class = candidates.len();
        let pool = crate::sampling::stable_sample(candidates, args.sample, args.seed, |s: &Site| s.qname.as_str());
        let mut r = ClassReport {
            class: class.into(),
            sites: sites_in_class,
            sampled: pool.len(),
            ..Default::default()
        };
        for site in &pool {
            if class == "rename"
                && let Some(base_method) = overridden(&base, site)
            {
                // Not a defect: the calls fall through to the ancestor.
                *r.not_constructed
                    .entry("overrides an inherited method (calls reach the base's): not a break".into())
                    .or_default() += 1;
                if r.overrides.len() < EXAMPLES {
                    r.overrides.push(format!("{} overrides {base_method}", site.qname));
                }
                continue;
            }
            let (mutant, control) = match make(class, site, &files) {
                Ok(pair) => pair,
                Err(why) => {
                    *r.not_constructed.entry(why).or_default() += 1;
                    continue;
                }
            };
            r.constructed += 1;
            let found = review(&base, &files, &mutant);
            if names_a_caller(&found, &mutant) {
                r.hits += 1;
            } else {
                r.miss(miss_reason(&base, site, &files), site.qname.clone());
            }
            r.controls += 1;
            let noise = review(&base, &files, &control);
            if let Some(f) = noise.first() {
                r.control_finding(|| {
                    let why = f.evidence.first().map(|e| e.detail.as_str()).unwrap_or("");
                    format!("{}: {} ({}:{}) {why}", site.qname, f.title, f.file, f.line)
                });
            }
        }
        classes.push(r.finish());
    }
    for class in statements::STATEMENT_CLASSES {
        classes.push(statement_class(class, &files, args));
    }
    Ok(MutateReport {
        dir: args.dir.display().to_string(),
        files: files.len(),
        seed: args.seed,
        classes,
    })
}

/// A statement class: every line where it applies, sampled; a hit is a
/// rule's finding near the mutated line, a control finding any finding on
/// the meaning-preserving rewrite of that line.
fn statement_class(class: &str, files: &BTreeMap<String, String>, args: &MutateArgs) -> ClassReport {
    let all = statements::line_sites(class, files);
    let sites = all.len();
    let pool = crate::sampling::stable_sample(all, args.sample, args.seed, |s: &statements::LineSite| s.key.as_str());
    let mut r = ClassReport {
        class: class.into(),
        sites,
        sampled: pool.len(),
        ..Default::default()
    };
    for site in &pool {
        r.constructed += 1;
        if statements::about(&statements::review_mutant(files, site), site) {
            r.hits += 1;
        } else {
            let ext = site.path.rsplit('.').next().unwrap_or("");
            r.miss(
                format!("no rule fired (.{ext})"),
                format!("{}: {}", site.key, site.mutant.trim()),
            );
        }
        r.controls += 1;
        if let Some(f) = statements::review_control(files, site).first() {
            r.control_finding(|| format!("{}: {} ({}:{})", site.key, f.title, f.file, f.line));
        }
    }
    r.finish()
}

impl MutateReport {
    pub fn render(&self) -> String {
        let mut s = format!("{} ({} files, seed {})\n", self.dir, self.files, self.seed);
        for c in &self.classes {
            s.push_str(&format!(
                "  {:<10} {} sites, {} sampled, {} made: recall {:.2} ({} hits); controls {} with a finding of {}\n",
                c.class, c.sites, c.sampled, c.constructed, c.recall, c.hits, c.control_findings, c.controls
            ));
            for (why, n) in &c.not_constructed {
                s.push_str(&format!("      not made ×{n}: {why}\n"));
            }
            for (why, n) in &c.miss_reasons {
                s.push_str(&format!("      missed ×{n}: {why}\n"));
            }
            for m in &c.missed {
                s.push_str(&format!("      missed: {m}\n"));
            }
            for f in &c.false_positives {
                s.push_str(&format!("      control finding: {f}\n"));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_hits_and_its_control_is_silent_in_python_and_javascript() {
        let packages = [
            [
                ("pkg/tax.py", "def rate(region, day):\n    return Rate(2)\n"),
                (
                    "pkg/cart.py",
                    "from pkg.tax import rate\n\n\ndef total(items, region, day):\n    return sum(items) * rate(region, day).percent\n",
                ),
            ],
            [
                (
                    "lib/tax.js",
                    "export function rate(region, day) {\n  return { percent: 2 };\n}\n",
                ),
                (
                    "lib/cart.js",
                    "import { rate } from './tax.js';\n\nexport function total(items, region, day) {\n  return items.length * rate(region, day).percent;\n}\n",
                ),
            ],
        ];
        for package in packages {
            let files: BTreeMap<String, String> = package.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect();
            let (base, _) = quorum_graph::build(files.clone(), None);
            let found = sites(&base);
            let site = found
                .iter()
                .find(|s| s.name == "rate")
                .expect("rate has a caller in the cart");
            for class in CLASSES {
                if matches!(class, "options-object" | "return-shape") && site.path.ends_with(".py") {
                    assert!(make(class, site, &files).is_err(), "not claimed for Python");
                    continue;
                }
                let (mutant, control) = make(class, site, &files).unwrap_or_else(|e| panic!("{class}: {e}"));
                let hits = review(&base, &files, &mutant);
                assert!(names_a_caller(&hits, &mutant), "{class} in {}: {hits:?}", site.path);
                let noise = review(&base, &files, &control);
                assert!(
                    noise.is_empty(),
                    "{class} in {}: the control draws {noise:?}",
                    site.path
                );
            }
        }
    }

    #[test]
    fn a_constructors_instantiations_are_its_callers_for_the_argument_classes() {
        let files: BTreeMap<String, String> = [
            (
                "pkg/session.py",
                "class Session:\n    def __init__(self, url, timeout):\n        self.url = url\n",
            ),
            (
                "pkg/api.py",
                "from pkg.session import Session\n\n\ndef get(url):\n    return Session(url, 5)\n",
            ),
        ]
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect();
        let (base, _) = quorum_graph::build(files.clone(), None);
        let site = sites(&base)
            .into_iter()
            .find(|s| s.name == "__init__")
            .expect("a constructor instantiated in another file is a site");
        assert_eq!(site.class_name.as_deref(), Some("Session"));
        assert_eq!(site.class_callers, vec![("pkg/api.py".to_string(), 5)]);
        // Only instantiations reach it: not a site for a rename.
        assert!(make::with_callers_for("rename", &site).is_none());
        for class in ["add-param", "remove-param", "reorder"] {
            let site = make::with_callers_for(class, &site).expect("an argument class sees the instantiation");
            let (mutant, control) = make(class, &site, &files).unwrap_or_else(|e| panic!("{class}: {e}"));
            let hits = review(&base, &files, &mutant);
            assert!(names_a_caller(&hits, &mutant), "{class}: {hits:?}");
            let api = &control
                .files
                .iter()
                .find(|(p, _)| p == "pkg/api.py")
                .expect("the control updates the call")
                .1;
            assert!(!api.contains("Session(url, 5)\n"), "{class}: {api}");
            let noise = review(&base, &files, &control);
            assert!(noise.is_empty(), "{class}: the control draws {noise:?}");
        }
    }
}

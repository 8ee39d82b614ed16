//! Injection: SQL built from strings, shell commands with interpolation,
//! `eval`/`exec` on dynamic input.

use std::sync::LazyLock;

use quorum_core::{Category, FileDiff, Severity};
use regex::Regex;

use super::{Hit, Rule, RuleMeta, added_lines};
use crate::lang::{Family, strip_comment};

/// SQL text assembled with f-strings, `%`, `.format()` or `+` instead of bound
/// parameters.
pub struct SqlStringBuilding;

static SQL_META: RuleMeta = RuleMeta {
    id: "sql-string-building",
    category: Category::Security,
    severity: Severity::Critical,
    confidence: 0.9,
    title: "SQL built by string interpolation",
    rationale: "The query text is assembled from values instead of passing them as bound parameters, \
so a crafted value can change the query (SQL injection). Use placeholders (`?`, `%s`, `:name`) and pass \
the values separately to `execute`.",
};

static SQL_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(select\s.+\sfrom|insert\s+into|update\s+\w+\s+set|delete\s+from|where\s+[\w.]+\s*(=|<|>|\blike\b|\bin\b)|order\s+by)").unwrap()
});
static INTERPOLATED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"(\b[fF][rR]?"[^"]*\{[^}]+\})|(\b[fF][rR]?'[^']*\{[^}]+\})"#, // f"... {x}"
        r#"|(["']\s*%\s*[\w(])"#,                                       // "..." % x
        r#"|(["']\s*\.\s*format\s*\()"#,                                // "...".format(
        r#"|(["']\s*\+\s*\w)|(\w\s*\+\s*["'])"#,                        // "..." + x / x + "..."
        r#"|(`[^`]*\$\{[^}]+\}[^`]*`)"#,                                // JS template literal
        r#"|(fmt\.Sprintf\()"#                                          // Go
    ))
    .unwrap()
});

impl Rule for SqlStringBuilding {
    fn meta(&self) -> &'static RuleMeta {
        &SQL_META
    }
    fn check(&self, file: &FileDiff, lang: Family) -> Vec<Hit> {
        // A test builds its queries from its own constants; no outside
        // input reaches them.
        if crate::lang::is_test_path(&file.path) {
            return vec![];
        }
        added_lines(file)
            .filter(|(_, t)| {
                let t = strip_comment(t, lang);
                SQL_WORDS.is_match(t) && INTERPOLATED.is_match(t)
            })
            .map(|(n, t)| Hit::at(n, t))
            .collect()
    }
}

/// Shell commands run through a shell with interpolated input.
pub struct ShellInjection;

static SHELL_META: RuleMeta = RuleMeta {
    id: "shell-injection",
    category: Category::Security,
    severity: Severity::Critical,
    confidence: 0.85,
    title: "Command run through a shell with interpolated input",
    rationale: "Passing a formatted string to a shell lets metacharacters in the value run other \
commands. Pass an argument list without `shell=True` (or `exec.Command` with separate args).",
};

static SHELL_TRUE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\bshell\s*=\s*True\b").unwrap());
/// Node: `exec(`…${x}…`)` / `execSync("…" + x)` called bare (destructured from
/// `child_process`; `re.exec(…)` is a method and never matches), and
/// `spawn`/`execFile` with `shell: true` and an interpolated command.
static JS_EXEC: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"(^|[^.\w$])(exec|execSync)\s*\(\s*(`[^`]*\$\{|["'][^"']*["']\s*\+)"#).unwrap());
static JS_SHELL_TRUE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\bshell\s*:\s*true\b").unwrap());
static JS_INTERPOLATED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"`[^`]*\$\{|["'][^"']*["']\s*\+\s*\w"#).unwrap());
static OS_SYSTEM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"\b(os\.system|os\.popen|child_process\.exec|execSync)\s*\(\s*([fF]["']|.*(\+|%|\.format\(|\$\{))"#)
        .unwrap()
});

impl Rule for ShellInjection {
    fn meta(&self) -> &'static RuleMeta {
        &SHELL_META
    }
    fn check(&self, file: &FileDiff, lang: Family) -> Vec<Hit> {
        added_lines(file)
            .filter(|(_, t)| {
                let t = strip_comment(t, lang);
                (SHELL_TRUE.is_match(t) && INTERPOLATED.is_match(t))
                    || OS_SYSTEM.is_match(t)
                    || (lang == Family::JavaScript
                        && (JS_EXEC.is_match(t) || (JS_SHELL_TRUE.is_match(t) && JS_INTERPOLATED.is_match(t))))
            })
            .map(|(n, t)| Hit::at(n, t))
            .collect()
    }
}

/// `eval` / `exec` of dynamic text.
pub struct DynamicEval;

static EVAL_META: RuleMeta = RuleMeta {
    id: "dynamic-eval",
    category: Category::Security,
    severity: Severity::Major,
    confidence: 0.75,
    title: "eval/exec of dynamic input",
    rationale: "`eval`/`exec` run whatever text they are given; if any part of it comes from a request, \
a file or the network it is code execution. Parse the data instead (`json.loads`, `ast.literal_eval`).",
};

static EVAL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(^|[^.\w])(eval|exec)\s*\(\s*[^)\s]").unwrap());
static EVAL_LITERAL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"(eval|exec)\s*\(\s*["'][^"'{}]*["']\s*\)"#).unwrap());

impl Rule for DynamicEval {
    fn meta(&self) -> &'static RuleMeta {
        &EVAL_META
    }
    fn check(&self, file: &FileDiff, lang: Family) -> Vec<Hit> {
        if !matches!(lang, Family::Python | Family::JavaScript) {
            return vec![];
        }
        added_lines(file)
            .filter(|(_, t)| {
                let t = strip_comment(t, lang);
                EVAL.is_match(t) && !EVAL_LITERAL.is_match(t) && !t.trim_start().starts_with("def ")
            })
            .map(|(n, t)| Hit::at(n, t))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testutil::diff;

    fn hits(rule: &dyn Rule, path: &str, lines: &[&str]) -> Vec<u32> {
        rule.check(&diff(path, lines), Family::of(path))
            .into_iter()
            .map(|h| h.line)
            .collect()
    }

    #[test]
    fn sql_building_in_tests_is_not_flagged() {
        let line = ["+\tdbt.mustExec(\"INSERT INTO test VALUES (\" + values + \")\")"];
        assert_eq!(hits(&SqlStringBuilding, "mysql/driver.go", &line), vec![1]);
        assert!(hits(&SqlStringBuilding, "mysql/driver_test.go", &line).is_empty());
    }

    #[test]
    fn sql_positive() {
        assert_eq!(
            hits(
                &SqlStringBuilding,
                "db.py",
                &[
                    " def f(name):",
                    "+    cur.execute(f\"SELECT * FROM t WHERE name = '{name}'\")"
                ]
            ),
            vec![2]
        );
        assert_eq!(
            hits(
                &SqlStringBuilding,
                "db.py",
                &["+q = \"DELETE FROM users WHERE id = %s\" % uid"]
            ),
            vec![1]
        );
        assert_eq!(
            hits(
                &SqlStringBuilding,
                "db.py",
                &["+q = \"UPDATE t SET a = 1 WHERE id = \" + str(i)"]
            ),
            vec![1]
        );
        assert_eq!(
            hits(
                &SqlStringBuilding,
                "db.js",
                &["+db.query(`SELECT id FROM t WHERE a = ${a}`)"]
            ),
            vec![1]
        );
        // Implicit concatenation over lines: the interpolated part is flagged.
        assert_eq!(
            hits(
                &SqlStringBuilding,
                "db.py",
                &[
                    "+    q = (",
                    "+        \"SELECT id FROM accounts \"",
                    "+        f\"WHERE name = '{name}'\"",
                    "+    )"
                ]
            ),
            vec![3]
        );
    }

    #[test]
    fn sql_negative() {
        assert!(
            hits(
                &SqlStringBuilding,
                "db.py",
                &["+cur.execute(\"SELECT * FROM t WHERE name = ?\", (name,))"]
            )
            .is_empty()
        );
        assert!(
            hits(
                &SqlStringBuilding,
                "db.py",
                &["+msg = f\"selected {n} items from the list\""]
            )
            .is_empty()
        );
        assert!(
            hits(
                &SqlStringBuilding,
                "db.py",
                &["+# q = f\"SELECT * FROM t WHERE a = {a}\""]
            )
            .is_empty()
        );
        // Context lines (not added by the change) are not the change's fault.
        assert!(
            hits(
                &SqlStringBuilding,
                "db.py",
                &[" q = f\"SELECT * FROM t WHERE a = {a}\"", "+x = 1"]
            )
            .is_empty()
        );
    }

    #[test]
    fn shell() {
        assert_eq!(
            hits(
                &ShellInjection,
                "a.py",
                &["+subprocess.run(f\"tar xf {path}\", shell=True)"]
            ),
            vec![1]
        );
        assert_eq!(hits(&ShellInjection, "a.py", &["+os.system(\"rm -rf \" + d)"]), vec![1]);
        assert!(hits(&ShellInjection, "a.py", &["+subprocess.run([\"tar\", \"xf\", path])"]).is_empty());
        assert!(hits(&ShellInjection, "a.py", &["+subprocess.run(\"make\", shell=True)"]).is_empty());
        // Node.
        assert_eq!(
            hits(&ShellInjection, "a.js", &["+  exec(`git log ${ref}`, cb);"]),
            vec![1]
        );
        assert_eq!(
            hits(&ShellInjection, "a.js", &["+  execSync('rm -rf ' + dir);"]),
            vec![1]
        );
        assert_eq!(
            hits(
                &ShellInjection,
                "a.js",
                &["+  spawn(`open ${file}`, [], { shell: true });"]
            ),
            vec![1]
        );
        assert!(hits(&ShellInjection, "a.js", &["+  const m = re.exec(`${x}`);"]).is_empty());
        assert!(hits(&ShellInjection, "a.js", &["+  execFile('git', ['log', ref]);"]).is_empty());
        assert!(hits(&ShellInjection, "a.js", &["+  spawn('make', args, { shell: true });"]).is_empty());
        assert!(hits(&ShellInjection, "a.js", &["+  exec('make build', cb);"]).is_empty());
    }

    #[test]
    fn eval() {
        assert_eq!(
            hits(&DynamicEval, "a.py", &["+value = eval(request.args['x'])"]),
            vec![1]
        );
        assert!(hits(&DynamicEval, "a.py", &["+value = ast.literal_eval(text)"]).is_empty());
        assert!(hits(&DynamicEval, "a.py", &["+model.eval()"]).is_empty());
        assert!(hits(&DynamicEval, "a.go", &["+eval(x)"]).is_empty());
    }
}

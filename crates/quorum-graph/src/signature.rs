//! Does a call still fit a signature? Python binding rules, statically:
//! positional arguments fill positional parameters in order, keywords fill
//! the rest by name, and every parameter without a default must be filled.
//! Calls with `*xs` / `**kw` in their arguments are never judged.

use crate::extract::{CallFact, Param, ParamKind};

/// Why a call does not fit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Misfit {
    TooManyPositional {
        given: u32,
        max: u32,
    },
    Missing(Vec<String>),
    UnexpectedKeyword(Vec<String>),
    /// A keyword names a parameter already filled positionally.
    Duplicate(Vec<String>),
}

impl std::fmt::Display for Misfit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list = |xs: &[String]| xs.iter().map(|x| format!("`{x}`")).collect::<Vec<_>>().join(", ");
        match self {
            Misfit::TooManyPositional { given, max } => {
                write!(
                    f,
                    "passes {given} positional arguments, the signature takes at most {max}"
                )
            }
            Misfit::Missing(xs) => write!(f, "does not pass required argument {}", list(xs)),
            Misfit::UnexpectedKeyword(xs) => write!(f, "passes unknown keyword {}", list(xs)),
            Misfit::Duplicate(xs) => write!(f, "passes {} both positionally and by keyword", list(xs)),
        }
    }
}

/// Checks `call` against `params`; `bound` drops the first parameter (the
/// call goes through an instance or class, which supplies `self`/`cls`).
pub fn check(params: &[Param], call: &CallFact, bound: bool) -> Option<Misfit> {
    if call.spread {
        return None;
    }
    let params = if bound && !params.is_empty() && params[0].kind != ParamKind::VarArgs {
        &params[1..]
    } else {
        params
    };
    let positional: Vec<&Param> = params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::PositionalOnly | ParamKind::Normal))
        .collect();
    let has_varargs = params.iter().any(|p| p.kind == ParamKind::VarArgs);
    let has_varkw = params.iter().any(|p| p.kind == ParamKind::VarKeywords);
    let given = call.positional;
    if given as usize > positional.len() && !has_varargs {
        return Some(Misfit::TooManyPositional {
            given,
            max: positional.len() as u32,
        });
    }
    let filled = &positional[..(given as usize).min(positional.len())];
    let dup: Vec<String> = call
        .keywords
        .iter()
        .filter(|k| filled.iter().any(|p| &p.name == *k && p.kind == ParamKind::Normal))
        .cloned()
        .collect();
    if !dup.is_empty() {
        return Some(Misfit::Duplicate(dup));
    }
    let by_keyword = |p: &Param| matches!(p.kind, ParamKind::Normal | ParamKind::KeywordOnly);
    let unexpected: Vec<String> = call
        .keywords
        .iter()
        .filter(|k| !params.iter().any(|p| &p.name == *k && by_keyword(p)))
        .cloned()
        .collect();
    if !unexpected.is_empty() && !has_varkw {
        return Some(Misfit::UnexpectedKeyword(unexpected));
    }
    let missing: Vec<String> = params
        .iter()
        .filter(|p| {
            matches!(
                p.kind,
                ParamKind::PositionalOnly | ParamKind::Normal | ParamKind::KeywordOnly
            )
        })
        .filter(|p| !p.has_default)
        .filter(|p| !filled.iter().any(|f| f.name == p.name))
        .filter(|p| !(by_keyword(p) && call.keywords.contains(&p.name)))
        .map(|p| p.name.clone())
        .collect();
    (!missing.is_empty()).then_some(Misfit::Missing(missing))
}

/// `(a, b=…, *args, c, **kw)`.
pub fn render(params: &[Param]) -> String {
    let mut parts = vec![];
    let mut star_written = false;
    let mut slash_pending = false;
    for p in params {
        if p.kind != ParamKind::PositionalOnly && slash_pending {
            parts.push("/".to_string());
            slash_pending = false;
        }
        let s = match p.kind {
            ParamKind::PositionalOnly => {
                slash_pending = true;
                p.name.clone()
            }
            ParamKind::Normal => p.name.clone(),
            ParamKind::VarArgs => {
                star_written = true;
                format!("*{}", p.name)
            }
            ParamKind::KeywordOnly => {
                if !star_written {
                    parts.push("*".into());
                    star_written = true;
                }
                p.name.clone()
            }
            ParamKind::VarKeywords => format!("**{}", p.name),
        };
        parts.push(if p.has_default { format!("{s}=…") } else { s });
    }
    if slash_pending {
        parts.push("/".into());
    }
    format!("({})", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(name: &str, kind: ParamKind, has_default: bool) -> Param {
        Param {
            name: name.into(),
            kind,
            has_default,
            object_type: false,
        }
    }

    fn call(positional: u32, keywords: &[&str]) -> CallFact {
        CallFact {
            caller: None,
            callee: "f".into(),
            line: 1,
            positional,
            keywords: keywords.iter().map(|k| k.to_string()).collect(),
            spread: false,
            text: String::new(),
            result_use: Default::default(),
            result_keys: vec![],
            object_args: vec![],
            literal_args: vec![],
            args: vec![],
            end_line: 0,
        }
    }

    #[test]
    fn a_new_required_parameter_breaks_old_calls() {
        let sig = [
            p("amount", ParamKind::Normal, false),
            p("region", ParamKind::Normal, false),
            p("rates", ParamKind::Normal, false),
        ];
        assert_eq!(
            check(&sig, &call(2, &[]), false),
            Some(Misfit::Missing(vec!["rates".into()]))
        );
        assert_eq!(check(&sig, &call(3, &[]), false), None);
        assert_eq!(check(&sig, &call(2, &["rates"]), false), None);
    }

    #[test]
    fn defaults_varargs_and_keyword_only() {
        let sig = [
            p("a", ParamKind::Normal, false),
            p("b", ParamKind::Normal, true),
            p("rest", ParamKind::VarArgs, false),
            p("k", ParamKind::KeywordOnly, false),
            p("opts", ParamKind::VarKeywords, false),
        ];
        assert_eq!(check(&sig, &call(5, &["k", "anything"]), false), None);
        assert_eq!(
            check(&sig, &call(1, &[]), false),
            Some(Misfit::Missing(vec!["k".into()]))
        );
        assert_eq!(render(&sig), "(a, b=…, *rest, k, **opts)");
    }

    #[test]
    fn too_many_unknown_and_duplicate() {
        let sig = [p("a", ParamKind::Normal, false), p("b", ParamKind::Normal, true)];
        assert_eq!(
            check(&sig, &call(3, &[]), false),
            Some(Misfit::TooManyPositional { given: 3, max: 2 })
        );
        assert_eq!(
            check(&sig, &call(1, &["c"]), false),
            Some(Misfit::UnexpectedKeyword(vec!["c".into()]))
        );
        assert_eq!(
            check(&sig, &call(1, &["a"]), false),
            Some(Misfit::Duplicate(vec!["a".into()]))
        );
    }

    #[test]
    fn positional_only_cannot_be_passed_by_keyword() {
        let sig = [
            p("x", ParamKind::PositionalOnly, false),
            p("y", ParamKind::Normal, true),
        ];
        assert!(matches!(
            check(&sig, &call(0, &["x"]), false),
            Some(Misfit::UnexpectedKeyword(_))
        ));
        assert_eq!(render(&sig), "(x, /, y=…)");
    }

    #[test]
    fn bound_calls_skip_self_and_spreads_are_not_judged() {
        let sig = [p("self", ParamKind::Normal, false), p("item", ParamKind::Normal, false)];
        assert_eq!(check(&sig, &call(1, &[]), true), None);
        assert!(check(&sig, &call(0, &[]), true).is_some());
        let mut c = call(0, &[]);
        c.spread = true;
        assert_eq!(check(&sig, &c, true), None);
    }
}

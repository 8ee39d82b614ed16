//! Unified diffs: parsing a whole `git diff` or a single file's hunks (GitHub's
//! `patch` field) into files, hunks and lines with old/new line numbers.
//!
//! Parsing never panics and never gives up on the whole input because of one
//! bad hunk: it returns what it understood plus a list of problems, in the
//! rust-analyzer style `(T, Vec<Error>)`.

use serde::{Deserialize, Serialize};

/// What happened to a file in a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileStatus {
    Added,
    Modified,
    Removed,
    Renamed,
}

/// The kind of one line inside a hunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineKind {
    Context,
    Added,
    Removed,
}

/// One line of a hunk, with its number on each side where it exists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffLine {
    pub kind: LineKind,
    pub old_line: Option<u32>,
    pub new_line: Option<u32>,
    pub text: String,
}

/// One `@@ -a,b +c,d @@` block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hunk {
    pub old_start: u32,
    pub old_len: u32,
    pub new_start: u32,
    pub new_len: u32,
    pub lines: Vec<DiffLine>,
}

/// The parsed diff of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDiff {
    pub path: String,
    pub old_path: Option<String>,
    pub status: FileStatus,
    pub binary: bool,
    pub hunks: Vec<Hunk>,
}

impl FileDiff {
    /// Every line of the new side that the diff shows (added or context).
    pub fn new_side_lines(&self) -> impl Iterator<Item = (u32, &DiffLine)> {
        self.hunks
            .iter()
            .flat_map(|h| h.lines.iter())
            .filter_map(|l| l.new_line.map(|n| (n, l)))
    }

    /// Whether `line` (new side) is visible in this diff, i.e. can carry an
    /// inline review comment.
    pub fn contains_new_line(&self, line: u32) -> bool {
        self.new_side_lines().any(|(n, _)| n == line)
    }

    /// Whether `line` (new side) was added by this change.
    pub fn is_added_line(&self, line: u32) -> bool {
        self.new_side_lines()
            .any(|(n, l)| n == line && l.kind == LineKind::Added)
    }

    /// The text of a new-side line, if the diff shows it.
    pub fn new_line_text(&self, line: u32) -> Option<&str> {
        self.new_side_lines()
            .find(|(n, _)| *n == line)
            .map(|(_, l)| l.text.as_str())
    }
}

/// A problem found while parsing; the parser skips the offending part.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("diff line {line}: {message}")]
pub struct DiffError {
    pub line: usize,
    pub message: String,
}

/// Parses the hunks of a single file (GitHub's per-file `patch` text, which has
/// no `diff --git` header).
pub fn parse_file_patch(
    path: &str,
    old_path: Option<&str>,
    status: FileStatus,
    patch: &str,
) -> (FileDiff, Vec<DiffError>) {
    let mut errors = Vec::new();
    let lines: Vec<&str> = split_lines(patch);
    let mut idx = 0;
    let hunks = parse_hunks(&lines, &mut idx, 0, &mut errors);
    let file = FileDiff {
        path: path.to_string(),
        old_path: old_path.map(str::to_string),
        status,
        binary: false,
        hunks,
    };
    (file, errors)
}

/// Parses a multi-file unified diff as produced by `git diff`.
pub fn parse_unified(text: &str) -> (Vec<FileDiff>, Vec<DiffError>) {
    let lines = split_lines(text);
    let mut errors = Vec::new();
    let mut files = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let (old, new) = split_git_header(rest);
            let mut file = FileDiff {
                path: new.clone().unwrap_or_default(),
                old_path: None,
                status: FileStatus::Modified,
                binary: false,
                hunks: Vec::new(),
            };
            let mut old_name = old;
            i += 1;
            while i < lines.len() && !lines[i].starts_with("diff --git ") {
                let l = lines[i];
                if l.starts_with("@@") {
                    let hunks = parse_hunks(&lines, &mut i, 0, &mut errors);
                    file.hunks.extend(hunks);
                    continue;
                }
                if l.starts_with("new file mode") {
                    file.status = FileStatus::Added;
                } else if l.starts_with("deleted file mode") {
                    file.status = FileStatus::Removed;
                } else if let Some(from) = l.strip_prefix("rename from ") {
                    file.status = FileStatus::Renamed;
                    old_name = Some(unquote(from));
                } else if let Some(to) = l.strip_prefix("rename to ") {
                    file.path = unquote(to);
                } else if l.starts_with("Binary files ") || l.starts_with("GIT binary patch") {
                    file.binary = true;
                } else if let Some(p) = l.strip_prefix("--- ") {
                    if p.trim() == "/dev/null" {
                        file.status = FileStatus::Added;
                    } else if let Some(n) = strip_side_prefix(p, "a/") {
                        old_name = Some(n);
                    }
                } else if let Some(p) = l.strip_prefix("+++ ") {
                    if p.trim() == "/dev/null" {
                        file.status = FileStatus::Removed;
                    } else if let Some(n) = strip_side_prefix(p, "b/") {
                        file.path = n;
                    }
                }
                i += 1;
            }
            if let (FileStatus::Removed, Some(old)) = (file.status, &old_name) {
                file.path = old.clone();
            }
            if file.status == FileStatus::Renamed || old_name.as_deref() != Some(&file.path) {
                file.old_path = old_name.filter(|o| *o != file.path);
            }
            if file.path.is_empty() {
                errors.push(DiffError {
                    line: i,
                    message: "file header without a path".into(),
                });
            } else {
                files.push(file);
            }
        } else {
            i += 1;
        }
    }
    (files, errors)
}

fn split_lines(text: &str) -> Vec<&str> {
    text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect()
}

/// Parses consecutive hunks starting at `lines[*idx]`; stops at the first line
/// that is neither a hunk header nor hunk content.
fn parse_hunks(lines: &[&str], idx: &mut usize, offset: usize, errors: &mut Vec<DiffError>) -> Vec<Hunk> {
    let mut hunks = Vec::new();
    while *idx < lines.len() {
        let header = lines[*idx];
        if !header.starts_with("@@") {
            if header.is_empty() && *idx + 1 == lines.len() {
                *idx += 1;
                break;
            }
            if header.starts_with("diff --git ") || hunks.is_empty() {
                break;
            }
            errors.push(DiffError {
                line: offset + *idx + 1,
                message: format!("unexpected line outside a hunk: {:.60}", header),
            });
            *idx += 1;
            continue;
        }
        let Some((old_start, old_len, new_start, new_len)) = parse_hunk_header(header) else {
            errors.push(DiffError {
                line: offset + *idx + 1,
                message: format!("malformed hunk header: {:.60}", header),
            });
            *idx += 1;
            continue;
        };
        *idx += 1;
        let mut hunk = Hunk {
            old_start,
            old_len,
            new_start,
            new_len,
            lines: Vec::new(),
        };
        let (mut old_no, mut new_no) = (old_start, new_start);
        let (mut old_left, mut new_left) = (old_len, new_len);
        while *idx < lines.len() && (old_left > 0 || new_left > 0) {
            let l = lines[*idx];
            let (kind, text) = match l.chars().next() {
                Some('+') => (LineKind::Added, &l[1..]),
                Some('-') => (LineKind::Removed, &l[1..]),
                Some(' ') => (LineKind::Context, &l[1..]),
                // Some tools strip the space of empty context lines.
                None => (LineKind::Context, ""),
                Some('\\') => {
                    *idx += 1;
                    continue;
                }
                Some(_) => break,
            };
            let line = match kind {
                LineKind::Added => {
                    new_left = new_left.saturating_sub(1);
                    new_no += 1;
                    DiffLine {
                        kind,
                        old_line: None,
                        new_line: Some(new_no - 1),
                        text: text.to_string(),
                    }
                }
                LineKind::Removed => {
                    old_left = old_left.saturating_sub(1);
                    old_no += 1;
                    DiffLine {
                        kind,
                        old_line: Some(old_no - 1),
                        new_line: None,
                        text: text.to_string(),
                    }
                }
                LineKind::Context => {
                    old_left = old_left.saturating_sub(1);
                    new_left = new_left.saturating_sub(1);
                    old_no += 1;
                    new_no += 1;
                    DiffLine {
                        kind,
                        old_line: Some(old_no - 1),
                        new_line: Some(new_no - 1),
                        text: text.to_string(),
                    }
                }
            };
            hunk.lines.push(line);
            *idx += 1;
        }
        // A trailing "\ No newline at end of file" belongs to the hunk.
        while *idx < lines.len() && lines[*idx].starts_with('\\') {
            *idx += 1;
        }
        if old_left > 0 || new_left > 0 {
            errors.push(DiffError {
                line: offset + *idx,
                message: format!("hunk at +{new_start} is truncated: {old_left} old and {new_left} new lines missing"),
            });
        }
        hunks.push(hunk);
    }
    hunks
}

/// `@@ -a[,b] +c[,d] @@ ...` → (a, b, c, d); a missing length means 1.
fn parse_hunk_header(header: &str) -> Option<(u32, u32, u32, u32)> {
    let rest = header.strip_prefix("@@ ")?;
    let end = rest.find(" @@")?;
    let mut parts = rest[..end].split_whitespace();
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let range = |s: &str| -> Option<(u32, u32)> {
        match s.split_once(',') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => Some((s.parse().ok()?, 1)),
        }
    };
    let (a, b) = range(old)?;
    let (c, d) = range(new)?;
    Some((a, b, c, d))
}

fn split_git_header(rest: &str) -> (Option<String>, Option<String>) {
    // `a/x b/x`; names with spaces are ambiguous here, the ---/+++ lines win.
    if let Some(pos) = rest.find(" b/") {
        let old = strip_side_prefix(&rest[..pos], "a/");
        let new = strip_side_prefix(&rest[pos + 1..], "b/");
        return (old, new);
    }
    (None, None)
}

fn strip_side_prefix(p: &str, prefix: &str) -> Option<String> {
    let p = p.split('\t').next().unwrap_or(p).trim_end();
    let unq = unquote(p);
    unq.strip_prefix(prefix).map(str::to_string)
}

/// Removes git's C-style quoting (`"a/caf\303\251"`).
fn unquote(s: &str) -> String {
    let s = s.trim();
    let Some(inner) = s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) else {
        return s.to_string();
    };
    let mut bytes = Vec::new();
    let mut chars = inner.bytes().peekable();
    while let Some(b) = chars.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match chars.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(b'"') => bytes.push(b'"'),
            Some(b'\\') => bytes.push(b'\\'),
            Some(d @ b'0'..=b'7') => {
                let mut v = (d - b'0') as u32;
                for _ in 0..2 {
                    if let Some(&n @ b'0'..=b'7') = chars.peek() {
                        v = v * 8 + (n - b'0') as u32;
                        chars.next();
                    }
                }
                bytes.push(v as u8);
            }
            Some(o) => bytes.push(o),
            None => bytes.push(b'\\'),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_FILES: &str = "diff --git a/shop/a.py b/shop/a.py\nindex 1..2 100644\n--- a/shop/a.py\n+++ b/shop/a.py\n@@ -1,3 +1,4 @@\n import os\n-x = 1\n+x = 2\n+y = 3\n z = 4\ndiff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+a\n+b\n";

    #[test]
    fn parses_two_files_with_line_numbers() {
        let (files, errors) = parse_unified(TWO_FILES);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(files.len(), 2);
        let a = &files[0];
        assert_eq!(a.path, "shop/a.py");
        assert_eq!(a.status, FileStatus::Modified);
        assert!(a.is_added_line(2) && a.is_added_line(3));
        assert!(!a.is_added_line(1));
        assert!(a.contains_new_line(4));
        assert_eq!(a.new_line_text(4), Some("z = 4"));
        assert_eq!(files[1].status, FileStatus::Added);
        assert_eq!(files[1].new_line_text(2), Some("b"));
    }

    #[test]
    fn hunk_header_without_lengths_means_one() {
        assert_eq!(parse_hunk_header("@@ -3 +3 @@ fn x"), Some((3, 1, 3, 1)));
        assert_eq!(parse_hunk_header("@@ -3,0 +4,2 @@"), Some((3, 0, 4, 2)));
        assert_eq!(parse_hunk_header("@@ nonsense"), None);
    }

    #[test]
    fn malformed_header_is_reported_not_fatal() {
        let (f, errors) = parse_file_patch(
            "x.py",
            None,
            FileStatus::Modified,
            "@@ -1,1 +1,1 @@\n-a\n+b\n@@ bad @@\n",
        );
        assert_eq!(f.hunks.len(), 1);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].message.contains("malformed hunk header"));
    }

    #[test]
    fn truncated_hunk_is_reported() {
        let (_, errors) = parse_file_patch("x", None, FileStatus::Modified, "@@ -1,3 +1,3 @@\n a\n");
        assert!(errors[0].message.contains("truncated"), "{errors:?}");
    }

    #[test]
    fn no_newline_marker_and_crlf() {
        let p = "@@ -1 +1 @@\r\n-a\r\n\\ No newline at end of file\r\n+b\r\n\\ No newline at end of file\r\n";
        let (f, errors) = parse_file_patch("x", None, FileStatus::Modified, p);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(f.new_line_text(1), Some("b"));
    }

    #[test]
    fn unquotes_octal_utf8_names() {
        assert_eq!(unquote("\"a/caf\\303\\251.txt\""), "a/café.txt");
    }

    #[test]
    fn rename_and_binary() {
        let d = "diff --git a/old.py b/new.py\nsimilarity index 90%\nrename from old.py\nrename to new.py\ndiff --git a/img.png b/img.png\nBinary files a/img.png and b/img.png differ\n";
        let (files, errors) = parse_unified(d);
        assert!(errors.is_empty());
        assert_eq!(files[0].status, FileStatus::Renamed);
        assert_eq!(files[0].old_path.as_deref(), Some("old.py"));
        assert_eq!(files[0].path, "new.py");
        assert!(files[1].binary);
    }
}

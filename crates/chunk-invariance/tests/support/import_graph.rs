//! The import graph between one crate's modules, for the tests that keep
//! it free of cycles.
//!
//! The crates' `tests/imports.rs` include this file with `#[path]`, so one
//! reading of the source serves them all. It reads the code, not the
//! compiler's view: the modules are found from the `mod` declarations
//! under the crate root, and a path naming another module's items is an
//! edge (`crate::split::Chunks`, `super::tape::Tape`, a child named from
//! its parent as `lines::Mode`, a name the root re-exports as
//! `crate::Rules`, or an item the root itself defines as `crate::Stop`).
//! Comments, string literals and test modules (`mod tests`) are skipped.
//! An import from a module into its own descendants or ancestors counts
//! like any other: a child that names an item of its parent closes a
//! cycle as surely as two siblings do.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The node of the crate root.
const ROOT: &str = "crate";

/// One crate's modules and the modules each one names.
pub struct ImportGraph {
    /// Module path (`engine::tape`, `crate` for the root) to the modules
    /// it names.
    pub edges: BTreeMap<String, BTreeSet<String>>,
}

impl ImportGraph {
    /// Reads the crate whose root is `crate_dir/src/<root_file>`
    /// (`lib.rs` or `main.rs`).
    pub fn read(crate_dir: &str, root_file: &str) -> ImportGraph {
        let src = Path::new(crate_dir).join("src");
        let mut modules = BTreeMap::new();
        collect(&src.join(root_file), Vec::new(), &mut modules);
        let known: BTreeSet<Vec<String>> = modules.keys().cloned().collect();
        let reexports = reexports(&modules[&Vec::new()]);
        let mut edges = BTreeMap::new();
        for (module, code) in &modules {
            let mut deps = BTreeSet::new();
            for (base, segs) in paths(code, module, &known) {
                if let Some(target) =
                    resolve(base, &segs, &known, &reexports).filter(|t| t != module)
                {
                    deps.insert(name(&target));
                }
            }
            edges.insert(name(module), deps);
        }
        ImportGraph { edges }
    }

    /// The groups of modules that import each other, directly or not (the
    /// strongly connected components of more than one module).
    pub fn cycles(&self) -> Vec<BTreeSet<String>> {
        let reach = |from: &str| {
            let mut seen = BTreeSet::new();
            let mut todo = vec![from.to_string()];
            while let Some(n) = todo.pop() {
                for m in self.edges.get(&n).into_iter().flatten() {
                    if seen.insert(m.clone()) {
                        todo.push(m.clone());
                    }
                }
            }
            seen
        };
        let reaches: BTreeMap<&String, BTreeSet<String>> =
            self.edges.keys().map(|n| (n, reach(n))).collect();
        let mut groups: Vec<BTreeSet<String>> = Vec::new();
        for (n, r) in &reaches {
            if groups.iter().any(|g| g.contains(*n)) {
                continue;
            }
            let group: BTreeSet<String> = r
                .iter()
                .filter(|m| reaches.get(m).is_some_and(|back| back.contains(*n)))
                .cloned()
                .collect();
            if group.len() > 1 {
                groups.push(group);
            }
        }
        groups
    }

    /// Panics, naming the edges of each cycle, unless the graph is acyclic;
    /// and unless it holds every edge of `expected`, so that a reading that
    /// sees no imports at all cannot pass.
    pub fn assert_acyclic(&self, expected: &[(&str, &str)]) {
        for (m, deps) in &self.edges {
            let deps: Vec<&str> = deps.iter().map(String::as_str).collect();
            println!("{m} -> {}", deps.join(", "));
        }
        for (from, to) in expected {
            assert!(
                self.edges.get(*from).is_some_and(|d| d.contains(*to)),
                "the graph misses the import {from} -> {to}: {:?}",
                self.edges
            );
        }
        let mut report = String::new();
        for group in self.cycles() {
            writeln!(report, "these modules import each other:").unwrap();
            for m in &group {
                for d in self.edges[m].intersection(&group) {
                    writeln!(report, "  {m} -> {d}").unwrap();
                }
            }
        }
        assert!(report.is_empty(), "{report}");
    }
}

fn name(module: &[String]) -> String {
    if module.is_empty() {
        ROOT.to_string()
    } else {
        module.join("::")
    }
}

/// Reads `file`, the module at `path`, and the modules it declares.
fn collect(file: &Path, path: Vec<String>, out: &mut BTreeMap<Vec<String>, String>) {
    let text =
        std::fs::read_to_string(file).unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
    let code = strip(&text);
    // A root or `mod.rs` keeps its children beside it; `a.rs` keeps them
    // in `a/`.
    let stem = file.file_stem().unwrap().to_string_lossy();
    let dir: PathBuf = if path.is_empty() || stem == "mod" {
        file.parent().unwrap().to_path_buf()
    } else {
        file.parent().unwrap().join(&*stem)
    };
    let mut children = Vec::new();
    for line in code.lines() {
        let decl = line
            .trim()
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub(super) ")
            .trim_start_matches("pub ");
        let Some(child) = decl.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) else {
            continue;
        };
        let child = child.trim();
        if child == "tests" {
            continue;
        }
        let flat = dir.join(format!("{child}.rs"));
        let nested = dir.join(child).join("mod.rs");
        let file = if flat.exists() { flat } else { nested };
        let mut p = path.clone();
        p.push(child.to_string());
        children.push((file, p));
    }
    // Test modules are skipped from `mod tests {` on: they close a file.
    let code = match code.find("mod tests {") {
        Some(i) => code[..i].to_string(),
        None => code,
    };
    out.insert(path, code);
    for (file, p) in children {
        collect(&file, p, out);
    }
}

/// `text` without comments, and with every string and character literal
/// emptied, so that neither can make an edge.
fn strip(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i..].starts_with(b"/*") {
                        depth += 1;
                        i += 2;
                    } else if b[i..].starts_with(b"*/") {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if b[i] == b'\n' {
                            out.push('\n');
                        }
                        i += 1;
                    }
                }
            }
            b'r' if (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
                && (i == 0 || !is_ident(b[i - 1])) =>
            {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    out.push('r');
                    i += 1;
                    continue;
                }
                let mut close = vec![b'"'];
                close.extend(std::iter::repeat_n(b'#', hashes));
                i += 2 + hashes;
                while i < b.len() && !b[i..].starts_with(&close) {
                    i += 1;
                }
                i += close.len();
                out.push_str("\"\"");
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                out.push_str("\"\"");
            }
            b'\'' => {
                // A character literal is closed within a few bytes; a
                // lifetime is not.
                let end = if b.get(i + 1) == Some(&b'\\') {
                    b[i + 2..]
                        .iter()
                        .position(|&c| c == b'\'')
                        .map(|p| i + 2 + p)
                } else {
                    let len = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                    (b.get(i + 1 + len) == Some(&b'\'')).then_some(i + 1 + len)
                };
                match end {
                    Some(end) => {
                        out.push_str("' '");
                        i = end + 1;
                    }
                    None => {
                        out.push('\'');
                        i += 1;
                    }
                }
            }
            _ => {
                let len = text[i..].chars().next().map_or(1, char::len_utf8);
                out.push_str(&text[i..i + len]);
                i += len;
            }
        }
    }
    out
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The names the root re-exports: `Some(module)` for an item of this
/// crate, `None` for one from outside it.
fn reexports(root: &str) -> BTreeMap<String, Option<Vec<String>>> {
    let mut map = BTreeMap::new();
    for stmt in root.split(';') {
        let Some(i) = stmt.find("pub use ") else {
            continue;
        };
        for segs in tree(&stmt[i + 8..]) {
            let Some((last, module)) = segs.split_last() else {
                continue;
            };
            let module = match module.split_first() {
                Some((first, rest)) if first == "crate" => Some(rest.to_vec()),
                _ => None,
            };
            map.insert(last.clone(), module);
        }
    }
    map
}

/// The paths of a `use` tree or an expression path, `a::{b, c::{d, e}}`
/// giving `[a, b]`, `[a, c, d]` and `[a, c, e]`.
fn tree(s: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    parse_tree(s.as_bytes(), &mut 0, Vec::new(), &mut out);
    out
}

fn parse_tree(b: &[u8], i: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let skip_ws = |i: &mut usize| {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    let mut segs = prefix;
    loop {
        skip_ws(i);
        if b.get(*i) == Some(&b'{') {
            *i += 1;
            loop {
                parse_tree(b, i, segs.clone(), out);
                skip_ws(i);
                match b.get(*i) {
                    Some(b',') => *i += 1,
                    Some(b'}') => {
                        *i += 1;
                        return;
                    }
                    _ => return,
                }
                skip_ws(i);
                if b.get(*i) == Some(&b'}') {
                    *i += 1;
                    return;
                }
            }
        }
        let start = *i;
        while *i < b.len() && is_ident(b[*i]) {
            *i += 1;
        }
        if *i == start {
            break;
        }
        let seg = String::from_utf8_lossy(&b[start..*i]).into_owned();
        if seg != "self" || segs.is_empty() {
            segs.push(seg);
        }
        skip_ws(i);
        if b[*i..].starts_with(b"::") {
            *i += 2;
        } else {
            break;
        }
    }
    // `x as y`: the rest names nothing.
    skip_ws(i);
    if b[*i..].starts_with(b"as ") {
        *i += 3;
        skip_ws(i);
        while *i < b.len() && is_ident(b[*i]) {
            *i += 1;
        }
    }
    if !segs.is_empty() {
        out.push(segs);
    }
}

/// Every path in `code` that can name a module of this crate, with the
/// module it starts from.
fn paths<'a>(
    code: &'a str,
    module: &'a [String],
    known: &BTreeSet<Vec<String>>,
) -> Vec<(Vec<String>, Vec<String>)> {
    let children: Vec<&String> = known
        .iter()
        .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
        .map(|m| m.last().unwrap())
        .collect();
    let b = code.as_bytes();
    let mut out = Vec::new();
    for (i, _) in code.match_indices("::") {
        let start = b[..i]
            .iter()
            .rposition(|&c| !is_ident(c))
            .map_or(0, |p| p + 1);
        if start == i {
            continue;
        }
        // Only a path's first segment starts one: not `a::b` inside
        // `x::a::b`, nor a field or method `.a::<T>`.
        let before = &b[..start];
        let before = before
            .iter()
            .rposition(|c| !c.is_ascii_whitespace())
            .map(|p| &before[..=p])
            .unwrap_or(&[]);
        if before.ends_with(b"::") || before.ends_with(b".") {
            continue;
        }
        let first = &code[start..i];
        let base = match first {
            "crate" => Vec::new(),
            "self" | "super" => module.to_vec(),
            _ if children.iter().any(|c| *c == first) => module.to_vec(),
            _ => continue,
        };
        for segs in tree(&code[start..]) {
            out.push((base.clone(), segs));
        }
    }
    out
}

/// The module a path names, from `base`: the longest prefix that is a
/// module, or for a name at the root, the module it is re-exported from,
/// or the root when the root defines it.
fn resolve(
    base: Vec<String>,
    segs: &[String],
    known: &BTreeSet<Vec<String>>,
    reexports: &BTreeMap<String, Option<Vec<String>>>,
) -> Option<Vec<String>> {
    let mut target = base;
    let mut rest = segs;
    if rest.first().is_some_and(|s| s == "crate") {
        target.clear();
        rest = &rest[1..];
    }
    while let Some((s, tail)) = rest.split_first() {
        match s.as_str() {
            "self" => {}
            "super" => {
                target.pop();
            }
            _ => break,
        }
        rest = tail;
    }
    for s in rest {
        let mut next = target.clone();
        next.push(s.clone());
        if known.contains(&next) {
            target = next;
        } else {
            if target.is_empty() {
                return match reexports.get(s) {
                    Some(module) => module.clone(),
                    None => Some(target),
                };
            }
            break;
        }
    }
    Some(target)
}

//! The crate's modules import each other without cycles.
//!
//! Each source file under `src/` is a node; a path naming another file's
//! items (`crate::rules::Rule`, `super::tape::Tape`, a flat re-export such
//! as `crate::Replacer`, or a child module named from `mod.rs`) is an
//! edge. Test modules (`mod tests`) and comments are skipped. Run
//! `cargo test -p stream-replace --test suite imports -- --nocapture` to
//! print the graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every source file's module path (`engine::tape`, `engine` for
/// `engine/mod.rs`, `` for `lib.rs`) and its code without comments and
/// test modules.
fn sources() -> BTreeMap<String, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(&src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
                parts.pop();
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let mut code = String::new();
            for line in text.lines() {
                let t = line.trim_start();
                if t.starts_with("mod tests") {
                    break;
                }
                if t.starts_with("//") {
                    continue;
                }
                code.push_str(line.split(" // ").next().unwrap());
                code.push('\n');
            }
            out.insert(parts.join("::"), code);
        }
    }
    out
}

/// The names `lib.rs` re-exports, and the module each comes from.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for stmt in lib.split(';') {
        let Some(path) = stmt.trim().strip_prefix("pub use crate::") else {
            continue;
        };
        let (module, names) = match path.split_once("::{") {
            Some((m, names)) => (m, names.trim_end_matches('}').to_string()),
            None => {
                let (m, name) = path.rsplit_once("::").unwrap();
                (m, name.to_string())
            }
        };
        for name in names.split(',') {
            let name = name.trim();
            if !name.is_empty() {
                map.insert(name.to_string(), module.to_string());
            }
        }
    }
    map
}

/// Splits `s` at the identifiers of a path, `a::b::{c, d::e}` giving
/// `[a::b::c, a::b::d::e]` (one level of braces).
fn paths_after(s: &str) -> Vec<Vec<String>> {
    let ident = |s: &str| -> usize {
        s.find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(s.len())
    };
    let mut segs = Vec::new();
    let mut rest = s;
    loop {
        if let Some(r) = rest.strip_prefix('{') {
            let inner = &r[..r.find('}').unwrap_or(r.len())];
            return inner
                .split(',')
                .map(|p| {
                    let mut v = segs.clone();
                    v.extend(
                        p.trim()
                            .split("::")
                            .map(|x| x.trim().to_string())
                            .filter(|x| !x.is_empty()),
                    );
                    v
                })
                .collect();
        }
        let n = ident(rest);
        if n == 0 {
            break;
        }
        segs.push(rest[..n].to_string());
        rest = &rest[n..];
        match rest.strip_prefix("::") {
            Some(r) => rest = r,
            None => return vec![segs],
        }
    }
    vec![segs]
}

/// The import graph: for each module, the modules it names.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let sources = sources();
    let modules: BTreeSet<String> = sources.keys().cloned().collect();
    let flat = reexports(&sources[""]);
    let mut graph = BTreeMap::new();
    for (module, code) in &sources {
        if module.is_empty() {
            // `lib.rs` declares and re-exports every module.
            continue;
        }
        let parent = module.rsplit_once("::").map_or("", |p| p.0).to_string();
        let mut deps = BTreeSet::new();
        let mut add = |base: &str, segs: &[String]| {
            // The longest prefix of `base::segs` that is a module.
            let mut target = base.to_string();
            for s in segs {
                let next = if target.is_empty() {
                    s.clone()
                } else {
                    format!("{target}::{s}")
                };
                if modules.contains(&next) {
                    target = next;
                } else {
                    break;
                }
            }
            if target.is_empty() {
                if let Some(m) = segs.first().and_then(|s| flat.get(s)) {
                    target = m.clone();
                }
            }
            if !target.is_empty() && target != *module {
                deps.insert(target);
            }
        };
        let children: Vec<&String> = modules
            .iter()
            .filter(|m| m.rsplit_once("::").map_or("", |p| p.0) == module && !m.is_empty())
            .collect();
        for (i, _) in code.match_indices("crate::") {
            for p in paths_after(&code[i + 7..]) {
                add("", &p);
            }
        }
        for (i, _) in code.match_indices("super::") {
            for p in paths_after(&code[i + 7..]) {
                add(&parent, &p);
            }
        }
        // A module names its children without a prefix.
        for child in children {
            let name = child.rsplit("::").next().unwrap();
            let bounded = |i: usize| {
                i == 0
                    || !code[..i]
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
            };
            let named = code
                .match_indices(&format!("{name}::"))
                .any(|(i, _)| bounded(i));
            if named {
                deps.insert(child.clone());
            }
        }
        graph.insert(module.clone(), deps);
    }
    graph
}

/// The groups of modules that import each other, directly or not (the
/// strongly connected components with more than one module).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(n) = todo.pop() {
            for m in graph.get(&n).into_iter().flatten() {
                if seen.insert(m.clone()) {
                    todo.push(m.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|n| (n, reach(n))).collect();
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

#[test]
fn the_modules_import_each_other_without_cycles() {
    let graph = graph();
    for (m, deps) in &graph {
        let deps: Vec<&str> = deps.iter().map(String::as_str).collect();
        println!("{m} -> {}", deps.join(", "));
    }
    // The graph sees the imports it should (so an empty graph cannot pass).
    assert!(graph["replacer"].contains("engine"), "{graph:?}");
    assert!(
        graph["engine::threads"].contains("engine::tape"),
        "{graph:?}"
    );
    let cycles = cycles(&graph);
    assert!(
        cycles.is_empty(),
        "modules that import each other: {cycles:?}"
    );
}

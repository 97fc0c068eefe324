//! The house as the code draws it: the files of src/ (and of crates/stats/src/, the statistics
//! crate, on its own) and the imports between them (every path
//! that names an item of another file: `crate::`, `super::`, `self::` and child-module paths,
//! outside `#[cfg(test)]` code). A module naming its own submodules' items is containment, not
//! a dependency: a parent's `mod.rs` that re-exports its children is no edge, a child that uses
//! its parent's types is one. No cycle between files, and ARCHITECTURE.md names only files that
//! exist.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path (`["gate", "verdict"]`; empty for the crate root).
type ModulePath = Vec<String>;

/// Every module file under src/ (lib.rs as the root; main.rs and test-only files left out), by
/// module path.
fn module_files(src: &Path) -> BTreeMap<ModulePath, PathBuf> {
    let mut files = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).unwrap().with_extension("");
            let mut module: ModulePath = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if module == ["main"] {
                continue;
            }
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            files.insert(module, path);
        }
    }
    let test_only: Vec<ModulePath> = files
        .iter()
        .flat_map(|(module, path)| {
            test_only_children(&std::fs::read_to_string(path).unwrap())
                .into_iter()
                .map(|child| [module.clone(), vec![child]].concat())
                .collect::<Vec<_>>()
        })
        .collect();
    for module in test_only {
        files.remove(&module);
    }
    files
}

/// The children declared `#[cfg(test)] mod name;` (files holding only tests).
fn test_only_children(source: &str) -> Vec<String> {
    let mut children = Vec::new();
    let mut rest = source;
    while let Some(at) = rest.find("#[cfg(test)]") {
        rest = &rest[at + "#[cfg(test)]".len()..];
        let mut after = rest.trim_start();
        while after.starts_with("#[") {
            after = after[after.find(']').unwrap() + 1..].trim_start();
        }
        if let Some(declaration) = after.strip_prefix("mod ")
            && let Some(end) = declaration.find(';')
            && !declaration[..end].contains('{')
        {
            children.push(declaration[..end].trim().to_string());
        }
    }
    children
}

/// `source` without comments, string and character literals (replaced by a space), so that
/// only code is left to read paths from.
fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == 'r'
            && (next == Some('#') || next == Some('"'))
            && !is_ident(chars.get(i.wrapping_sub(1)))
        {
            let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
            if chars.get(i + 1 + hashes) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            i += 2 + hashes;
            while i < chars.len() {
                if chars[i] == '"'
                    && chars[i + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&h| h == '#')
                        .count()
                        == hashes
                {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
            out.push(' ');
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(' ');
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{1b}'), else a lifetime or label.
            if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
                out.push(' ');
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
                out.push(' ');
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn is_ident(c: Option<&char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || *c == '_')
}

/// `code` without the bodies of `#[cfg(test)]` items (`mod tests { ... }`, test helpers).
fn without_test_items(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        // Skip to the end of the item: its `;` or its balanced braces, whichever comes first.
        let semicolon = rest.find(';').unwrap_or(rest.len());
        let Some(open) = rest.find('{').filter(|&open| open < semicolon) else {
            rest = &rest[(semicolon + 1).min(rest.len())..];
            continue;
        };
        let mut depth = 0;
        let mut end = rest.len();
        for (offset, c) in rest[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + offset + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The paths written in `code`, with `use` groups expanded (`a::{b, c::d}` gives `a::b` and
/// `a::c::d`), each as its segments.
fn paths(code: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = code.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if is_ident(Some(&chars[i]))
            && !is_ident(chars.get(i.wrapping_sub(1)))
            && (i == 0 || chars[i - 1] != ':')
        {
            let (path_list, end) = path_at(&chars, i);
            found.extend(path_list.into_iter().filter(|p| p.len() > 1));
            i = end.max(i + 1);
        } else {
            i += 1;
        }
    }
    found
}

/// The path (or, with a group, the paths) starting at `start`, and where it ends.
fn path_at(chars: &[char], start: usize) -> (Vec<Vec<String>>, usize) {
    let mut segments = Vec::new();
    let mut i = start;
    loop {
        let begin = i;
        while i < chars.len() && is_ident(Some(&chars[i])) {
            i += 1;
        }
        if i == begin {
            return (vec![segments], i);
        }
        segments.push(chars[begin..i].iter().collect::<String>());
        let mut j = i;
        while j < chars.len() && chars[j].is_whitespace() {
            j += 1;
        }
        if chars.get(j) == Some(&':') && chars.get(j + 1) == Some(&':') {
            j += 2;
            while j < chars.len() && chars[j].is_whitespace() {
                j += 1;
            }
            if chars.get(j) == Some(&'{') {
                let (inner, end) = group_at(chars, j + 1);
                let expanded = inner
                    .into_iter()
                    .map(|tail| [segments.clone(), tail].concat())
                    .collect();
                return (expanded, end);
            }
            i = j;
        } else {
            return (vec![segments], i);
        }
    }
}

/// The comma-separated paths of a group starting after its `{`, and where the group ends.
fn group_at(chars: &[char], start: usize) -> (Vec<Vec<String>>, usize) {
    let mut paths = Vec::new();
    let mut i = start;
    while i < chars.len() {
        match chars[i] {
            '}' => return (paths, i + 1),
            c if is_ident(Some(&c)) => {
                let (found, end) = path_at(chars, i);
                paths.extend(found);
                i = end;
            }
            _ => i += 1,
        }
    }
    (paths, i)
}

/// The module file a path written in `module` names, if it names one other than `module`'s own.
fn target(
    files: &BTreeMap<ModulePath, PathBuf>,
    module: &ModulePath,
    path: &[String],
) -> Option<ModulePath> {
    let mut absolute: ModulePath = match path[0].as_str() {
        "crate" => path[1..].to_vec(),
        "self" => [module.clone(), path[1..].to_vec()].concat(),
        "super" => {
            let mut base = module.clone();
            let mut rest = path;
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
            [base, rest.to_vec()].concat()
        }
        // A child module's items, by the child's name.
        first => {
            let child = [module.clone(), vec![first.to_string()]].concat();
            if !files.contains_key(&child) {
                return None;
            }
            [module.clone(), path.to_vec()].concat()
        }
    };
    while !absolute.is_empty() && !files.contains_key(&absolute) {
        absolute.pop();
    }
    // A module's use of its own submodules is containment (it declares them), not a dependency.
    (files.contains_key(&absolute) && !absolute.starts_with(module)).then_some(absolute)
}

/// Module file -> the module files it imports from.
fn imports(src: &Path) -> BTreeMap<ModulePath, BTreeSet<ModulePath>> {
    let files = module_files(src);
    let mut graph = BTreeMap::new();
    for (module, path) in &files {
        let source = std::fs::read_to_string(path).unwrap();
        let code = without_test_items(&code_only(&source));
        let edges: BTreeSet<ModulePath> = paths(&code)
            .iter()
            .filter_map(|p| target(&files, module, p))
            .collect();
        graph.insert(module.clone(), edges);
    }
    graph
}

/// The strongly connected components with more than one file (Tarjan).
fn cycles(graph: &BTreeMap<ModulePath, BTreeSet<ModulePath>>) -> Vec<Vec<ModulePath>> {
    struct State<'a> {
        graph: &'a BTreeMap<ModulePath, BTreeSet<ModulePath>>,
        index: BTreeMap<&'a ModulePath, usize>,
        low: BTreeMap<&'a ModulePath, usize>,
        stack: Vec<&'a ModulePath>,
        on_stack: BTreeSet<&'a ModulePath>,
        found: Vec<Vec<ModulePath>>,
    }
    fn visit<'a>(state: &mut State<'a>, node: &'a ModulePath) {
        let number = state.index.len();
        state.index.insert(node, number);
        state.low.insert(node, number);
        state.stack.push(node);
        state.on_stack.insert(node);
        for next in &state.graph[node] {
            if !state.index.contains_key(next) {
                visit(state, next);
                let low = state.low[node].min(state.low[next]);
                state.low.insert(node, low);
            } else if state.on_stack.contains(next) {
                let low = state.low[node].min(state.index[next]);
                state.low.insert(node, low);
            }
        }
        if state.low[node] == state.index[node] {
            let mut component = Vec::new();
            while let Some(top) = state.stack.pop() {
                state.on_stack.remove(top);
                component.push(top.clone());
                if top == node {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                state.found.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !state.index.contains_key(node) {
            visit(&mut state, node);
        }
    }
    state.found
}

fn name(module: &ModulePath) -> String {
    if module.is_empty() {
        "crate".to_string()
    } else {
        module.join("::")
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The source of the workspace's statistics crate (ragate re-exports it as `crate::stats`, an
/// outside crate to ragate's graph: an import of it points at no file of src/).
fn stats_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/stats/src")
}

#[test]
fn no_file_of_src_imports_from_a_file_that_imports_from_it() {
    let graph = imports(&src());
    assert!(graph.len() > 100, "only {} module files found", graph.len());
    let stats = imports(&stats_src());
    assert!(stats.len() > 8, "only {} module files found", stats.len());
    let mut report = String::new();
    for (graph, component) in cycles(&graph)
        .into_iter()
        .map(|c| (&graph, c))
        .chain(cycles(&stats).into_iter().map(|c| (&stats, c)))
    {
        report.push_str(&format!(
            "cycle of {}: {}\n",
            component.len(),
            component.iter().map(name).collect::<Vec<_>>().join(", ")
        ));
        for from in &component {
            for to in graph[from].intersection(&component.iter().cloned().collect()) {
                report.push_str(&format!("    {} -> {}\n", name(from), name(to)));
            }
        }
    }
    assert!(report.is_empty(), "{report}");
}

/// The layers below the renderers (DESIGN's and ARCHITECTURE.md's order): what they compute is
/// rendered by `report`, never the other way round.
const BELOW_REPORT: [&str; 15] = [
    "error",
    "env",
    "digest",
    "secrets",
    "json_text",
    "format",
    "columns",
    "escape",
    "input",
    "metrics",
    "judge",
    "config",
    "evaluate",
    "baseline",
    "gate",
];

#[test]
fn no_layer_below_the_renderers_imports_from_them() {
    let graph = imports(&src());
    let mut found = Vec::new();
    for (from, to) in graph
        .iter()
        .flat_map(|(from, to)| to.iter().map(move |t| (from, t)))
    {
        let below = from
            .first()
            .is_some_and(|top| BELOW_REPORT.contains(&top.as_str()) || top == "history");
        if below && to.first().is_some_and(|top| top == "report") {
            found.push(format!("{} -> {}", name(from), name(to)));
        }
    }
    assert!(found.is_empty(), "{found:#?}");
    // The check sees an edge into report where there is one.
    assert!(
        graph
            .iter()
            .any(|(from, to)| from.first().is_some_and(|t| t == "outputs")
                && to.iter().any(|t| t.first().is_some_and(|t| t == "report"))),
        "the app's imports of report are found"
    );
}

#[test]
fn the_reader_finds_paths_and_skips_text_and_tests() {
    let source = r#"
use crate::gate::{GateReport, verdict::{CheckOutcome, numbers}};
use super::sibling::Thing;
// use crate::commented::Out;
const TEXT: &str = "crate::in_a_string::X";
fn f<'a>(c: char) -> bool { c == '"' && crate::direct::call() }
#[cfg(test)]
mod tests {
    use crate::only_in_tests::Y;
}
"#;
    let code = without_test_items(&code_only(source));
    let found: BTreeSet<String> = paths(&code).iter().map(|p| p.join("::")).collect();
    for wanted in [
        "crate::gate::GateReport",
        "crate::gate::verdict::CheckOutcome",
        "crate::gate::verdict::numbers",
        "super::sibling::Thing",
        "crate::direct::call",
    ] {
        assert!(found.contains(wanted), "{wanted} not in {found:?}");
    }
    for unwanted in ["commented", "in_a_string", "only_in_tests"] {
        assert!(
            !found.iter().any(|p| p.contains(unwanted)),
            "{unwanted} in {found:?}"
        );
    }
    // A cycle is found, and a chain is not one.
    let module = |name: &str| vec![name.to_string()];
    let graph: BTreeMap<ModulePath, BTreeSet<ModulePath>> = [
        (module("a"), BTreeSet::from([module("b")])),
        (module("b"), BTreeSet::from([module("a"), module("c")])),
        (module("c"), BTreeSet::new()),
    ]
    .into();
    assert_eq!(cycles(&graph), vec![vec![module("a"), module("b")]]);
}

#[test]
fn architecture_md_names_only_files_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let named: Vec<&str> = text
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|quoted| {
            ["src/", "tests/", "crates/"]
                .iter()
                .any(|p| quoted.starts_with(p))
        })
        .collect();
    assert!(named.len() >= 20, "only {} paths named", named.len());
    let missing: Vec<&&str> = named
        .iter()
        .filter(|path| !root.join(path.trim_end_matches('/')).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names what does not exist: {missing:?}"
    );
}

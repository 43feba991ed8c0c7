//! The promise → test table at the end of CONTRIBUTING.md names only tests
//! that exist: a test renamed or removed leaves no promise pointing at
//! nothing.

use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const HEADING: &str = "## Promises and the tests that guard them";

/// The `module::test` names in the table (`module::prefix_*` for a family),
/// from the backticked cells of its rows.
fn named_tests(contributing: &str) -> Vec<String> {
    let table = contributing
        .split_once(HEADING)
        .unwrap_or_else(|| panic!("CONTRIBUTING.md has no section {HEADING:?}"))
        .1;
    table
        .lines()
        .filter(|line| line.starts_with('|'))
        .flat_map(|line| line.split('`').skip(1).step_by(2))
        .filter(|cell| cell.contains("::") && !cell.contains(' '))
        .map(str::to_owned)
        .collect()
}

/// The source file a name's module lives in: `src/a/b::t` is `src/a/b.rs`,
/// `m::t` is the suite's `m.rs`.
fn source_of(module: &str) -> String {
    let path = if module.starts_with("src/") {
        Path::new(ROOT).join(format!("{module}.rs"))
    } else {
        Path::new(ROOT).join(format!("tests/zklock/{module}.rs"))
    };
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// True when `source` has a `#[test]` function named `test`, or, for
/// `prefix*`, one whose name begins with `prefix` (any, for `*` alone).
fn has_test(source: &str, test: &str) -> bool {
    let mut tests = source
        .split("#[test]")
        .skip(1)
        .filter_map(|after| after.trim_start().strip_prefix("fn "))
        .map(|rest| rest.split('(').next().unwrap_or_default());
    match test.strip_suffix('*') {
        Some(prefix) => tests.any(|name| name.starts_with(prefix)),
        None => tests.any(|name| name == test),
    }
}

#[test]
fn every_test_the_promise_table_names_exists() {
    let contributing =
        std::fs::read_to_string(Path::new(ROOT).join("CONTRIBUTING.md")).expect("CONTRIBUTING.md");
    let named = named_tests(&contributing);
    assert!(named.len() > 100, "the table names {} tests", named.len());
    let missing: Vec<&String> = named
        .iter()
        .filter(|name| {
            let (module, test) = name.rsplit_once("::").expect("module::test");
            !has_test(&source_of(module), test)
        })
        .collect();
    assert!(
        missing.is_empty(),
        "CONTRIBUTING.md's promise table names tests that do not exist: {missing:?}"
    );
}

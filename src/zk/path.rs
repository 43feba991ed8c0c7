//! ZooKeeper paths: validation, and the rule that turns a LOCK name into a
//! path under the lock root.
//!
//! Every path a user types passes through [`validate`] before a connection is
//! made, so a typo exits 2 instead of touching the wrong node.

use crate::usage::UsageError;

/// Checks that `path` is a well-formed absolute ZooKeeper path: it starts with
/// `/`, has no empty, `.` or `..` component, no trailing slash (except the root
/// itself) and no NUL. The error says which rule the path breaks.
pub(crate) fn validate(path: &str) -> Result<(), UsageError> {
    let bad = |why: &str| Err(UsageError::new(format!("bad path {path:?}: {why}")));
    if !path.starts_with('/') {
        return bad("a path must start with '/'");
    }
    if path == "/" {
        return Ok(());
    }
    if path.ends_with('/') {
        return bad("a path must not end with '/'");
    }
    if path.contains('\0') {
        return bad("a path must not contain NUL");
    }
    if let Some(refused) = path.chars().find(|&c| server_refuses(c)) {
        return bad(&format!(
            "ZooKeeper refuses the character {:?} (U+{:04X}) in names",
            refused, refused as u32
        ));
    }
    for component in path[1..].split('/') {
        match component {
            "" => return bad("empty component ('//')"),
            "." | ".." => return bad("'.' and '..' are not allowed"),
            _ => {}
        }
    }
    Ok(())
}

/// True for a character the server refuses in a path: control characters,
/// and what Java sees as surrogates, private-use or special code units
/// (every character outside the Basic Multilingual Plane, an emoji say, is
/// a surrogate pair there).
fn server_refuses(c: char) -> bool {
    matches!(c as u32, 0x01..=0x1F | 0x7F..=0x9F | 0xD800..=0xF8FF | 0xFFF0..)
}

/// Resolves a LOCK argument: a name beginning with `/` is used as it is,
/// anything else is taken relative to `root`. The result is validated.
pub(crate) fn resolve(root: &str, name: &str) -> Result<String, UsageError> {
    if name.is_empty() {
        return Err(UsageError::new("empty lock name"));
    }
    let path = if name.starts_with('/') {
        name.to_owned()
    } else if root == "/" {
        format!("/{name}")
    } else {
        format!("{root}/{name}")
    };
    validate(&path)?;
    Ok(path)
}

/// The parent of an absolute path (`/a/b` → `/a`, `/a` → `/`), or `None` for `/`.
pub(crate) fn parent(path: &str) -> Option<&str> {
    match path.rfind('/') {
        Some(0) if path.len() > 1 => Some("/"),
        Some(0) | None => None,
        Some(i) => Some(&path[..i]),
    }
}

/// The last component of an absolute path (`/a/b` → `b`).
pub(crate) fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Joins a parent path and a child name.
pub(crate) fn join(parent: &str, child: &str) -> String {
    if parent == "/" {
        format!("/{child}")
    } else {
        format!("{parent}/{child}")
    }
}

/// True when `path` is `top` or lies below it (`/a/b` is below `/a`, `/ab`
/// is not; everything is below `/`).
pub(crate) fn is_at_or_below(path: &str, top: &str) -> bool {
    top == "/"
        || path == top
        || path
            .strip_prefix(top)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// True for `/` and for ZooKeeper's own namespace, `/zookeeper` and below
/// (quotas, configuration): no lock lives there, and nothing of zklock's
/// may be made or deleted there.
pub(crate) fn is_reserved(path: &str) -> bool {
    path == "/" || is_at_or_below(path, "/zookeeper")
}

/// Refuses a lock directory in a reserved place ([`is_reserved`]).
pub(crate) fn check_lock_directory(path: &str) -> Result<(), UsageError> {
    if is_reserved(path) {
        return Err(UsageError::new(format!(
            "{path} cannot be a lock: / and /zookeeper (ZooKeeper's own namespace) are \
             reserved; name a lock below --root or another path of your own"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_absolute_paths() {
        for path in [
            "/",
            "/a",
            "/locks/deploy",
            "/a-b/c_d/_c_x-lock-0000000001",
            "/déploiement/日本",
        ] {
            assert!(validate(path).is_ok(), "{path}");
        }
    }

    #[test]
    fn rejects_malformed_paths_with_reason() {
        let cases = [
            ("a/b", "start with '/'"),
            ("/a/", "end with '/'"),
            ("/a//b", "'//'"),
            ("/a/../b", "'..'"),
            ("/a/./b", "'.'"),
            ("/a\0b", "NUL"),
            ("/a\nb", "U+000A"),
            ("/deploy\u{1F512}", "U+1F512"),
            ("/a\u{9B}b", "U+009B"),
            ("/a\u{E000}", "U+E000"),
            ("/a\u{FFFE}", "U+FFFE"),
        ];
        for (path, why) in cases {
            let err = validate(path).unwrap_err().to_string();
            assert!(err.contains(why), "{path:?}: {err}");
        }
    }

    #[test]
    fn resolves_names_under_the_root() {
        assert_eq!(resolve("/locks", "deploy").unwrap(), "/locks/deploy");
        assert_eq!(resolve("/locks", "a/b").unwrap(), "/locks/a/b");
        assert_eq!(resolve("/locks", "/x/y").unwrap(), "/x/y");
        assert_eq!(resolve("/", "x").unwrap(), "/x");
        assert!(resolve("/locks", "a/").is_err());
        assert!(resolve("/locks", "").is_err());
        assert!(resolve("/locks", "../x").is_err());
    }

    #[test]
    fn splits_paths() {
        assert_eq!(parent("/a/b"), Some("/a"));
        assert_eq!(parent("/a"), Some("/"));
        assert_eq!(parent("/"), None);
        assert_eq!(basename("/a/b"), "b");
        assert_eq!(join("/", "a"), "/a");
        assert_eq!(join("/a", "b"), "/a/b");
        assert!(is_at_or_below("/a/b", "/a"));
        assert!(is_at_or_below("/a", "/a"));
        assert!(!is_at_or_below("/ab", "/a"));
        assert!(is_at_or_below("/x", "/"));
    }

    #[test]
    fn the_root_and_zookeepers_namespace_are_reserved() {
        for path in ["/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config"] {
            assert!(is_reserved(path), "{path}");
            assert!(check_lock_directory(path).is_err(), "{path}");
        }
        for path in ["/zookeeper-locks", "/locks", "/a/zookeeper"] {
            assert!(!is_reserved(path), "{path}");
            assert!(check_lock_directory(path).is_ok(), "{path}");
        }
    }
}

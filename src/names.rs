//! Lock names that look like another: a name with white space at either
//! end of a component, or with a default-ignorable code point (a zero-width
//! space, a joiner, a variation selector, a soft hyphen) anywhere, prints
//! the same as the plain name but is a different node, so a person who
//! reads `deploy` may join a lock nobody else takes.
//!
//! zklock never creates such a name unless asked to (`--allow-odd-name`, to
//! join a lock another library already uses under it), and every table
//! shows one quoted and escaped, which sets it apart from its look-alike.

use std::borrow::Cow;

/// True for the code points Unicode declares default-ignorable: drawn as
/// nothing at all by most fonts and terminals.
fn is_default_ignorable(c: char) -> bool {
    matches!(c,
        '\u{00ad}' | '\u{034f}' | '\u{061c}' | '\u{115f}'..='\u{1160}' | '\u{17b4}'..='\u{17b5}'
        | '\u{180b}'..='\u{180f}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{206f}' | '\u{3164}' | '\u{fe00}'..='\u{fe0f}' | '\u{feff}'
        | '\u{ffa0}' | '\u{fff0}'..='\u{fff8}' | '\u{1bca0}'..='\u{1bca3}'
        | '\u{1d173}'..='\u{1d17a}' | '\u{e0000}'..='\u{e0fff}')
}

/// What makes `path` look like another name, or `None` when nothing does.
pub(crate) fn oddity(path: &str) -> Option<&'static str> {
    if path.chars().any(is_default_ignorable) {
        return Some("an invisible (default-ignorable) character");
    }
    let padded = path
        .split('/')
        .any(|part| part.starts_with(char::is_whitespace) || part.ends_with(char::is_whitespace));
    padded.then_some("white space at the start or end of a name")
}

/// `path` as tables show it: as it is, or, when it looks like another name,
/// in quotes with every invisible character escaped (`"/locks/deploy "`,
/// `"/locks/de\u{200b}ploy"`).
pub(crate) fn shown(path: &str) -> Cow<'_, str> {
    match oddity(path) {
        None => Cow::Borrowed(path),
        Some(_) => Cow::Owned(format!("{path:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_alikes_are_found_and_shown_apart() {
        for plain in ["/locks/deploy", "/locks/a b/c", "/locks/é"] {
            assert_eq!(oddity(plain), None, "{plain}");
            assert_eq!(shown(plain), plain);
        }
        for odd in [
            "/locks/deploy ",
            "/locks/ deploy",
            "/locks/deploy\t/x",
            "/locks/de\u{200b}ploy",
            "/locks/deploy\u{feff}",
            "/locks/deploy\u{fe0f}",
        ] {
            assert!(oddity(odd).is_some(), "{odd:?}");
            assert!(shown(odd).starts_with('"'), "{odd:?}");
        }
        assert_eq!(shown("/locks/de\u{200b}ploy"), "\"/locks/de\\u{200b}ploy\"");
    }
}

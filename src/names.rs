//! Lock names that look like another: a name with white space at either
//! end of a component, or with an invisible character (a default-ignorable
//! code point such as a zero-width space, a joiner, a variation selector or
//! a soft hyphen; or a line or paragraph separator) anywhere, prints the
//! same as the plain name but is a different node, so a person who reads
//! `deploy` may join a lock nobody else takes. [`is_invisible`] is also
//! what `output::inert` escapes besides the control characters, so the
//! class has one definition.
//!
//! zklock never creates such a name unless asked to (`--allow-odd-name`, to
//! join a lock another library already uses under it), and every table
//! shows one quoted and escaped, which sets it apart from its look-alike.

use std::borrow::Cow;

/// The code points Unicode declares default-ignorable, as inclusive ranges
/// in order: the `Default_Ignorable_Code_Point` lines of the Unicode
/// Character Database's DerivedCoreProperties.txt, adjacent ranges joined.
/// Most fonts and terminals draw them as nothing at all: zero-width spaces
/// and joiners, bidirectional marks and overrides, variation selectors,
/// the soft hyphen, Hangul fillers, tags.
const DEFAULT_IGNORABLE: &[(char, char)] = &[
    ('\u{00ad}', '\u{00ad}'),
    ('\u{034f}', '\u{034f}'),
    ('\u{061c}', '\u{061c}'),
    ('\u{115f}', '\u{1160}'),
    ('\u{17b4}', '\u{17b5}'),
    ('\u{180b}', '\u{180f}'),
    ('\u{200b}', '\u{200f}'),
    ('\u{202a}', '\u{202e}'),
    ('\u{2060}', '\u{206f}'),
    ('\u{3164}', '\u{3164}'),
    ('\u{fe00}', '\u{fe0f}'),
    ('\u{feff}', '\u{feff}'),
    ('\u{ffa0}', '\u{ffa0}'),
    ('\u{fff0}', '\u{fff8}'),
    ('\u{1bca0}', '\u{1bca3}'),
    ('\u{1d173}', '\u{1d17a}'),
    ('\u{e0000}', '\u{e0fff}'),
];

/// True for a character a person cannot see in a line of text: a
/// default-ignorable code point ([`DEFAULT_IGNORABLE`]), or the line or
/// paragraph separator (U+2028, U+2029), which a terminal draws as a blank
/// or a line break that the text does not show. Both lead a reader to take
/// one name for another, or to read a line as something else.
pub(crate) fn is_invisible(c: char) -> bool {
    use std::cmp::Ordering;
    // Everything below the first range (ASCII among it) is answered at once.
    c >= '\u{00ad}'
        && (matches!(c, '\u{2028}' | '\u{2029}')
            || DEFAULT_IGNORABLE
                .binary_search_by(|&(first, last)| {
                    if last < c {
                        Ordering::Less
                    } else if first > c {
                        Ordering::Greater
                    } else {
                        Ordering::Equal
                    }
                })
                .is_ok())
}

/// What makes `path` look like another name, or `None` when nothing does.
pub(crate) fn oddity(path: &str) -> Option<&'static str> {
    if path.chars().any(is_invisible) {
        return Some(
            "an invisible character (default-ignorable, or a line or paragraph separator)",
        );
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

    /// Where Debian's `unicode-data` package puts the Unicode Character
    /// Database.
    const DERIVED_CORE_PROPERTIES: &str = "/usr/share/unicode/DerivedCoreProperties.txt";

    /// The `Default_Ignorable_Code_Point` ranges of the Unicode data, as
    /// given there (first and last code point of each line).
    fn default_ignorable_in_unicode_data() -> Vec<(u32, u32)> {
        let text = std::fs::read_to_string(DERIVED_CORE_PROPERTIES).unwrap_or_else(|err| {
            panic!(
                "{DERIVED_CORE_PROPERTIES}: {err}; install Debian's unicode-data package \
                 (scripts/setup does)"
            )
        });
        let hex = |digits: &str| u32::from_str_radix(digits.trim(), 16).unwrap();
        text.lines()
            .filter_map(|line| line.split('#').next())
            .filter_map(|line| line.split_once(';'))
            .filter(|(_, property)| property.trim() == "Default_Ignorable_Code_Point")
            .map(|(points, _)| match points.split_once("..") {
                Some((first, last)) => (hex(first), hex(last)),
                None => (hex(points), hex(points)),
            })
            .collect()
    }

    #[test]
    fn the_default_ignorable_class_is_unicodes() {
        let mut joined: Vec<(u32, u32)> = Vec::new();
        for (first, last) in default_ignorable_in_unicode_data() {
            match joined.last_mut() {
                Some(previous) if previous.1 + 1 == first => previous.1 = last,
                _ => joined.push((first, last)),
            }
        }
        let ours: Vec<(u32, u32)> = DEFAULT_IGNORABLE
            .iter()
            .map(|&(first, last)| (first as u32, last as u32))
            .collect();
        assert_eq!(ours, joined);
    }

    /// Every code point: invisible exactly when Unicode calls it
    /// default-ignorable or it is a line or paragraph separator; and a
    /// name holding any such character is odd, wherever it stands.
    #[test]
    fn every_invisible_character_makes_a_name_odd_and_no_other_does() {
        let mut class = vec![false; 0x110000];
        for (first, last) in default_ignorable_in_unicode_data() {
            class[first as usize..=last as usize].fill(true);
        }
        class[0x2028] = true;
        class[0x2029] = true;
        let in_class = |c: char| class[c as usize];
        let mut visible = String::from("/locks/");
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            assert_eq!(is_invisible(c), in_class(c), "U+{:04X}", c as u32);
            if in_class(c) {
                let name = format!("/locks/de{c}ploy");
                assert!(oddity(&name).is_some(), "U+{:04X}", c as u32);
            } else if !(c.is_whitespace() || c.is_control() || c == '/') {
                visible.push(c);
            }
        }
        assert_eq!(oddity(&visible), None);
    }
}

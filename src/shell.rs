//! Command lines zklock suggests for a person to paste into a shell (the
//! `release` that breaks a wait-for cycle): each word must be safe to show
//! and, pasted, must name exactly the node it was made from.
//!
//! A path may hold characters a terminal hides or rearranges (bidi
//! overrides, zero-width spaces, separators). Shown raw they would mislead
//! the reader; shown escaped the way tables show them (`\u{202e}`), a
//! pasted word would name that literal text, another node. So a word that
//! is not printable ASCII is written in ANSI-C quoting, `$'…'`, with every
//! other byte as a `\xHH` escape: bash, zsh and the POSIX.1-2024 `sh` read
//! it back byte for byte, whatever the locale, and the text on the screen
//! is plain ASCII. (dash 0.5.12, Debian 12's `/bin/sh`, predates `$'…'`.)
//! Printable ASCII is plain single quotes, read the same by every shell.

/// `text` as one shell word: as it is when no shell would read anything
/// into it, in single quotes when it is printable ASCII, else in `$'…'`
/// with byte escapes. `text` holds no NUL (no path can), which bash would
/// end the word at.
pub(crate) fn word(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/_-.:@+,%".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_owned()
    } else if text.chars().all(|c| c.is_ascii_graphic() || c == ' ') {
        format!("'{}'", text.replace('\'', r"'\''"))
    } else {
        ansi_c_quoted(text)
    }
}

/// `text` in `$'…'`: printable ASCII as it is but for the backslash, the
/// quote and `!` (which an interactive bash may take for history), every
/// other byte as `\xHH`. Hex digits right after an escape are escaped too,
/// one by one: POSIX leaves `\x` followed by more than two hex digits
/// unspecified.
fn ansi_c_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2 + 3);
    out.push_str("$'");
    let mut after_escape = false;
    for byte in text.bytes() {
        let escape = !(byte.is_ascii_graphic() || byte == b' ')
            || matches!(byte, b'\\' | b'\'' | b'!')
            || (after_escape && byte.is_ascii_hexdigit());
        if escape {
            out.push_str(&format!("\\x{byte:02x}"));
        } else {
            out.push(char::from(byte));
        }
        after_escape = escape;
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_as_much_as_the_word_needs() {
        assert_eq!(
            word("/locks/a/_c_x-lock-0000000001"),
            "/locks/a/_c_x-lock-0000000001"
        );
        assert_eq!(word("/locks/a b/it's"), r"'/locks/a b/it'\''s'");
        assert_eq!(word(""), "''");
        assert_eq!(
            word("/locks/evil\u{202e}abc/x"),
            r"$'/locks/evil\xe2\x80\xae\x61\x62\x63/x'"
        );
        assert_eq!(word("/é\\'!"), r"$'/\xc3\xa9\x5c\x27\x21'");
    }

    /// Hostile words, and every character from U+0001 to U+00FF alone
    /// and between hex digits.
    fn hostile_words() -> Vec<String> {
        let mut words: Vec<String> = [
            "/x/evil\u{202e}abc/y",
            "/x/de\u{200b}ploy",
            "/x/\u{feff}\u{2060}\u{200d}",
            "/x/a\u{2028}b\u{2029}c",
            "/x/line\nbreak\r\n",
            "/x/it's \"quoted\"",
            "/x/back\\slash\\",
            "/x/\\xe2\\x80\\xae",
            "/x/$'x'$(id)`id`${HOME}",
            "/x/!!/!$/!-1",
            "/x/*?[a]{b,c}~=%",
            "/x/\u{7f}\u{80}\u{9b}\u{ff}",
            "/x/日本語/déploiement",
            "\u{e0001}",
        ]
        .iter()
        .map(|&word| word.to_owned())
        .collect();
        words.extend(
            (1..=0xffu32)
                .filter_map(char::from_u32)
                .map(|c| format!("a{c}f")),
        );
        words
    }

    /// `shell` reads each word back as the bytes it was made from: a real
    /// bash or zsh prints each quoted word it is given.
    fn read_back_by(shell: &str, words: &[String]) {
        let script: String = words
            .iter()
            .map(|w| format!("printf '%s\\0' {}\n", word(w)))
            .collect();
        let out = std::process::Command::new(shell)
            .args(["-c", &script])
            .env("LC_ALL", "C")
            .output()
            .unwrap_or_else(|err| panic!("{shell}: {err} (scripts/setup installs it)"));
        assert!(out.status.success(), "{shell}: {out:?}");
        let read: Vec<&[u8]> = out.stdout.split(|&b| b == 0).collect();
        assert_eq!(read.len(), words.len() + 1, "{shell}");
        for (read, word) in read.iter().zip(words) {
            assert_eq!(*read, word.as_bytes(), "{shell} read {word:?} as {read:?}");
        }
    }

    #[test]
    fn bash_and_zsh_read_every_word_back_exactly() {
        let words = hostile_words();
        for shell in ["bash", "zsh"] {
            read_back_by(shell, &words);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// Any text without NUL is read back exactly, and shows as
        /// printable ASCII.
        #[test]
        fn any_text_is_read_back_exactly(
            texts in proptest::collection::vec("[^\\x00]{0,12}", 1..16),
        ) {
            for text in &texts {
                let quoted = word(text);
                proptest::prop_assert!(quoted.chars().all(|c| c.is_ascii_graphic() || c == ' '));
            }
            read_back_by("bash", &texts);
            read_back_by("zsh", &texts);
        }
    }
}

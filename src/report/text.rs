//! Plain-text layout for help pages and terminal reports: paragraphs
//! wrapped to 80 columns, two-column option lists with a hanging indent,
//! and the message for a value that is not one of its choices. It knows
//! nothing about what it lays out, so every command's help and every
//! wrapped note looks the same.

/// The widest line any help page may have.
pub const WIDTH: usize = 80;

/// The width of the option column in option lists (after two spaces).
pub const OPTION_COLUMN: usize = 24;

/// Columns taken on a terminal (one per character).
fn width_of(s: &str) -> usize {
    s.chars().count()
}

/// The width a line is held to: its length in bytes, so that a line
/// within the limit is within it for any tool that counts (a byte-counting
/// `awk 'length > 80'` included), whatever the locale.
fn length_of(s: &str) -> usize {
    s.len()
}

/// `text` (words separated by spaces; newlines are kept as breaks)
/// wrapped so that no line is wider than `width`, each line indented by
/// `indent` spaces. A word longer than a line stays whole on its own line.
pub fn wrap(text: &str, indent: usize, width: usize) -> String {
    let mut out = String::new();
    for para in text.split('\n') {
        let mut line = String::new();
        for word in para.split(' ').filter(|w| !w.is_empty()) {
            if !line.is_empty() && indent + length_of(&line) + 1 + length_of(word) > width {
                push_line(&mut out, indent, &line);
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        push_line(&mut out, indent, &line);
    }
    out
}

fn push_line(out: &mut String, indent: usize, line: &str) {
    if !line.is_empty() {
        out.extend(std::iter::repeat_n(' ', indent));
        out.push_str(line);
    }
    out.push('\n');
}

/// Option lists: `  LEFT  help…` with the help wrapped beside a column of
/// `column` characters; a left part wider than that puts its help on the
/// next line. Every line, the first included, starts with two spaces.
pub fn options<S: AsRef<str>, H: AsRef<str>>(rows: &[(S, H)], column: usize) -> String {
    let mut out = String::new();
    let help_at = 2 + column + 2;
    for (left, help) in rows {
        let (left, help) = (left.as_ref(), help.as_ref());
        // A left part with multi-byte characters is longer in bytes than
        // on screen: keep its line within the limit too.
        let extra = length_of(left) - width_of(left);
        let body = wrap(help, help_at, WIDTH - extra);
        out.push_str("  ");
        out.push_str(left);
        if width_of(left) <= column && !body.trim().is_empty() {
            out.extend(std::iter::repeat_n(' ', help_at - 2 - width_of(left)));
            out.push_str(body.trim_start());
        } else {
            out.push('\n');
            if !help.trim().is_empty() {
                out.push_str(&body);
            }
        }
    }
    out
}

/// `'V' is not one of: A, B (did you mean 'B'?)`.
pub fn not_one_of(flag: &str, v: &str, choices: &[&str]) -> String {
    let shown = crate::job::value::excerpt(v);
    let mut msg = format!("--{flag}: '{shown}' is not one of: {}", choices.join(", "));
    if let Some(s) = crate::job::value::near_choice(v, choices.iter().copied()) {
        msg.push_str(&format!(" (did you mean '{s}'?)"));
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_keeps_lines_within_the_width() {
        let t = "one two three four five six seven eight nine ten eleven twelve";
        let w = wrap(t, 4, 20);
        assert!(w.lines().all(|l| l.len() <= 20), "{w}");
        assert!(w.lines().all(|l| l.starts_with("    ")), "{w}");
        let words: Vec<&str> = w.split_whitespace().collect();
        assert_eq!(words.join(" "), t);
    }

    #[test]
    fn option_lists_indent_the_first_line_like_the_rest() {
        let rows = [
            ("--size SIZE", "test file size"),
            ("--a-very-long-option-name=VALUE", "its help goes on the next line"),
            ("--x", "a long help text that must be wrapped because it is far too long for one line of eighty"),
        ];
        let s = options(&rows, 20);
        assert!(s.starts_with("  --size SIZE"), "{s}");
        assert!(s.lines().all(|l| l.starts_with("  ")), "{s}");
        assert!(s.lines().all(|l| l.len() <= WIDTH), "{s}");
        assert!(s.contains("VALUE\n                        its help"), "{s}");
    }
}

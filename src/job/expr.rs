//! `( )` arithmetic in numeric option values: `+ - * / % ^` with the usual
//! precedence, parentheses, and numbers that may carry the option's unit
//! suffix (`(2*4k)`, `(1500ms+1s)`).

/// Evaluates `text`; `unit` maps a suffix ("" for none) to a multiplier.
pub fn eval(text: &str, unit: &dyn Fn(&str) -> Option<f64>) -> Result<f64, String> {
    let mut p = Parser {
        s: text.as_bytes(),
        pos: 0,
        unit,
        text,
        depth: 0,
    };
    let v = p.expr()?;
    p.skip_ws();
    if p.pos != p.s.len() {
        return Err(p.err("unexpected text after the expression"));
    }
    if !v.is_finite() {
        return Err(format!("'{text}' does not evaluate to a finite number"));
    }
    Ok(v)
}

/// How deeply parentheses, signs and powers may nest; deeper input is an
/// error rather than a stack overflow.
const MAX_DEPTH: usize = 64;

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    unit: &'a dyn Fn(&str) -> Option<f64>,
    text: &'a str,
    depth: usize,
}

impl Parser<'_> {
    fn err(&self, what: &str) -> String {
        format!(
            "'{}' is not a valid expression: {what} at position {}",
            self.text,
            self.pos + 1
        )
    }

    /// Runs `f` one nesting level deeper.
    fn nested(&mut self, f: fn(&mut Self) -> Result<f64, String>) -> Result<f64, String> {
        if self.depth >= MAX_DEPTH {
            return Err(self.err("nested too deeply"));
        }
        self.depth += 1;
        let v = f(self);
        self.depth -= 1;
        v
    }

    fn skip_ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.pos).copied()
    }

    fn expr(&mut self) -> Result<f64, String> {
        let mut v = self.term()?;
        while let Some(c @ (b'+' | b'-')) = self.peek() {
            self.pos += 1;
            let r = self.term()?;
            v = if c == b'+' { v + r } else { v - r };
        }
        Ok(v)
    }

    fn term(&mut self) -> Result<f64, String> {
        let mut v = self.power()?;
        while let Some(c @ (b'*' | b'/' | b'%')) = self.peek() {
            self.pos += 1;
            let r = self.power()?;
            v = match c {
                b'*' => v * r,
                _ if r == 0.0 => return Err(self.err("division by zero")),
                b'/' => v / r,
                _ => v % r,
            };
        }
        Ok(v)
    }

    fn power(&mut self) -> Result<f64, String> {
        let base = self.unary()?;
        if self.peek() == Some(b'^') {
            self.pos += 1;
            let exp = self.nested(Self::power)?;
            return Ok(base.powf(exp));
        }
        Ok(base)
    }

    fn unary(&mut self) -> Result<f64, String> {
        match self.peek() {
            Some(b'-') => {
                self.pos += 1;
                Ok(-self.nested(Self::unary)?)
            }
            Some(b'+') => {
                self.pos += 1;
                self.nested(Self::unary)
            }
            _ => self.primary(),
        }
    }

    fn primary(&mut self) -> Result<f64, String> {
        match self.peek() {
            Some(b'(') => {
                self.pos += 1;
                let v = self.nested(Self::expr)?;
                if self.peek() != Some(b')') {
                    return Err(self.err("missing ')'"));
                }
                self.pos += 1;
                Ok(v)
            }
            Some(c) if c.is_ascii_digit() || c == b'.' => self.number(),
            Some(_) => Err(self.err("expected a number or '('")),
            None => Err(self.err("unexpected end")),
        }
    }

    fn number(&mut self) -> Result<f64, String> {
        let start = self.pos;
        let v = if self.s[self.pos..].starts_with(b"0x") || self.s[self.pos..].starts_with(b"0X") {
            self.pos += 2;
            let h = self.pos;
            while self.pos < self.s.len() && self.s[self.pos].is_ascii_hexdigit() {
                self.pos += 1;
            }
            let digits = std::str::from_utf8(&self.s[h..self.pos]).unwrap_or("");
            u64::from_str_radix(digits, 16).map_err(|_| self.err("bad hex number"))? as f64
        } else {
            while self.pos < self.s.len()
                && (self.s[self.pos].is_ascii_digit() || self.s[self.pos] == b'.')
            {
                self.pos += 1;
            }
            let digits = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("");
            digits.parse::<f64>().map_err(|_| self.err("bad number"))?
        };
        let us = self.pos;
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_alphabetic() {
            self.pos += 1;
        }
        let suffix = std::str::from_utf8(&self.s[us..self.pos]).unwrap_or("");
        let mult = (self.unit)(suffix).ok_or_else(|| {
            format!(
                "'{}' has an unknown unit '{suffix}' in its expression",
                self.text
            )
        })?;
        Ok(v * mult)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(s: &str) -> Result<f64, String> {
        eval(s, &|u| if u.is_empty() { Some(1.0) } else { None })
    }

    #[test]
    fn precedence_and_operators() {
        assert_eq!(plain("(1+2*3)"), Ok(7.0));
        assert_eq!(plain("((1+2)*3)"), Ok(9.0));
        assert_eq!(plain("(2^3^2)"), Ok(512.0));
        assert_eq!(plain("(10%4)"), Ok(2.0));
        assert_eq!(plain("(-3+5)"), Ok(2.0));
        assert_eq!(plain("(7/2)"), Ok(3.5));
        assert!(plain("(1/0)").is_err());
        assert!(plain("(1+)").is_err());
        assert!(plain("(1))").is_err());
        assert!(plain("(2k)").is_err());
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
        assert!(plain(&deep).unwrap_err().contains("nested too deeply"));
        assert!(plain(&format!("({}1)", "-".repeat(100_000))).is_err());
        assert!(plain(&format!("({}2)", "2^".repeat(100_000))).is_err());
        let ok = format!("{}1{}", "(".repeat(20), ")".repeat(20));
        assert_eq!(plain(&ok), Ok(1.0));
    }
}

//! `( )` arithmetic in numeric option values: `+ - * / % ^` with the usual
//! precedence, parentheses, and numbers that may carry the option's unit
//! suffix (`(2*4k)`, `(1500ms+1s)`).
//!
//! Whole numbers are computed exactly (128-bit, overflow is an error, never
//! a wrap or a saturation); a decimal point or an inexact division makes
//! the value a decimal (`f64`) from there on.

/// A computed value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    /// A whole number, exact.
    Int(i128),
    /// A decimal number, always finite.
    Float(f64),
}

impl Num {
    pub fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

/// What `eval` reports when a value does not fit.
pub const TOO_LARGE: &str = "is too large";

/// Why an expression cannot be evaluated (one line, quoting it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExprError {
    /// Not an expression: what is wrong, and where (from 1).
    #[error("'{text}' is not a valid expression: {what} at position {pos}")]
    Invalid {
        text: String,
        what: &'static str,
        pos: usize,
    },
    #[error("'{0}' {TOO_LARGE}")]
    TooLarge(String),
    #[error("'{0}' does not evaluate to a finite number")]
    NotFinite(String),
    #[error("'{text}' has an unknown unit '{unit}' in its expression")]
    UnknownUnit { text: String, unit: String },
}

/// Option values' parsers report their errors as text.
impl From<ExprError> for String {
    fn from(e: ExprError) -> String {
        e.to_string()
    }
}

/// Evaluates `text`; `unit` maps a suffix ("" for none) to a multiplier.
pub fn eval(text: &str, unit: &dyn Fn(&str) -> Option<Num>) -> Result<Num, ExprError> {
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
    Ok(v)
}

/// How deeply parentheses, signs and powers may nest; deeper input is an
/// error rather than a stack overflow.
const MAX_DEPTH: usize = 64;

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    unit: &'a dyn Fn(&str) -> Option<Num>,
    text: &'a str,
    depth: usize,
}

#[derive(Clone, Copy)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
}

impl Parser<'_> {
    fn err(&self, what: &'static str) -> ExprError {
        ExprError::Invalid {
            text: self.text.to_string(),
            what,
            pos: self.pos + 1,
        }
    }

    fn too_large(&self) -> ExprError {
        ExprError::TooLarge(self.text.to_string())
    }

    /// Runs `f` one nesting level deeper.
    fn nested(&mut self, f: fn(&mut Self) -> Result<Num, ExprError>) -> Result<Num, ExprError> {
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

    /// `a op b`, exact for whole numbers; overflow and non-finite
    /// results are errors.
    fn apply(&self, op: Op, a: Num, b: Num) -> Result<Num, ExprError> {
        if let (Num::Int(x), Num::Int(y)) = (a, b) {
            if y == 0 && matches!(op, Op::Div | Op::Rem) {
                return Err(self.err("division by zero"));
            }
            // An inexact division or a negative power gives a decimal.
            let whole = match op {
                Op::Div => x.checked_rem(y) == Some(0),
                Op::Pow => y >= 0,
                _ => true,
            };
            if whole {
                let v = match op {
                    Op::Add => x.checked_add(y),
                    Op::Sub => x.checked_sub(y),
                    Op::Mul => x.checked_mul(y),
                    Op::Div => x.checked_div(y),
                    Op::Rem => x.checked_rem(y),
                    Op::Pow => match (u32::try_from(y), x) {
                        (Ok(e), _) => x.checked_pow(e),
                        (Err(_), 0 | 1) => Some(x),
                        (Err(_), -1) => Some(if y % 2 == 0 { 1 } else { -1 }),
                        (Err(_), _) => None,
                    },
                };
                return v.map(Num::Int).ok_or_else(|| self.too_large());
            }
        }
        let (x, y) = (a.as_f64(), b.as_f64());
        let v = match op {
            Op::Add => x + y,
            Op::Sub => x - y,
            Op::Mul => x * y,
            Op::Div | Op::Rem if y == 0.0 => return Err(self.err("division by zero")),
            Op::Div => x / y,
            Op::Rem => x % y,
            Op::Pow => x.powf(y),
        };
        if v.is_nan() {
            return Err(ExprError::NotFinite(self.text.to_string()));
        }
        if v.is_infinite() {
            return Err(self.too_large());
        }
        Ok(Num::Float(v))
    }

    fn expr(&mut self) -> Result<Num, ExprError> {
        let mut v = self.term()?;
        while let Some(c @ (b'+' | b'-')) = self.peek() {
            self.pos += 1;
            let r = self.term()?;
            v = self.apply(if c == b'+' { Op::Add } else { Op::Sub }, v, r)?;
        }
        Ok(v)
    }

    fn term(&mut self) -> Result<Num, ExprError> {
        let mut v = self.power()?;
        while let Some(c @ (b'*' | b'/' | b'%')) = self.peek() {
            self.pos += 1;
            let r = self.power()?;
            let op = match c {
                b'*' => Op::Mul,
                b'/' => Op::Div,
                _ => Op::Rem,
            };
            v = self.apply(op, v, r)?;
        }
        Ok(v)
    }

    fn power(&mut self) -> Result<Num, ExprError> {
        let base = self.unary()?;
        if self.peek() == Some(b'^') {
            self.pos += 1;
            let exp = self.nested(Self::power)?;
            return self.apply(Op::Pow, base, exp);
        }
        Ok(base)
    }

    fn unary(&mut self) -> Result<Num, ExprError> {
        match self.peek() {
            Some(b'-') => {
                self.pos += 1;
                let v = self.nested(Self::unary)?;
                self.apply(Op::Sub, Num::Int(0), v)
            }
            Some(b'+') => {
                self.pos += 1;
                self.nested(Self::unary)
            }
            _ => self.primary(),
        }
    }

    fn primary(&mut self) -> Result<Num, ExprError> {
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

    fn number(&mut self) -> Result<Num, ExprError> {
        let start = self.pos;
        let rest = &self.s[self.pos..];
        let v = if rest.starts_with(b"0x") || rest.starts_with(b"0X") {
            self.pos += 2;
            let h = self.pos;
            while self.pos < self.s.len() && self.s[self.pos].is_ascii_hexdigit() {
                self.pos += 1;
            }
            let digits = std::str::from_utf8(&self.s[h..self.pos]).unwrap_or("");
            if digits.is_empty() {
                return Err(self.err("bad hex number"));
            }
            Num::Int(i128::from_str_radix(digits, 16).map_err(|_| self.too_large())?)
        } else {
            while self.pos < self.s.len()
                && (self.s[self.pos].is_ascii_digit() || self.s[self.pos] == b'.')
            {
                self.pos += 1;
            }
            let digits = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("");
            if digits.contains('.') {
                let f = digits.parse::<f64>().map_err(|_| self.err("bad number"))?;
                if !f.is_finite() {
                    return Err(self.too_large());
                }
                Num::Float(f)
            } else {
                Num::Int(digits.parse::<i128>().map_err(|_| self.too_large())?)
            }
        };
        let us = self.pos;
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_alphabetic() {
            self.pos += 1;
        }
        let suffix = std::str::from_utf8(&self.s[us..self.pos]).unwrap_or("");
        let mult = (self.unit)(suffix).ok_or_else(|| ExprError::UnknownUnit {
            text: self.text.to_string(),
            unit: suffix.to_string(),
        })?;
        self.apply(Op::Mul, v, mult)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(s: &str) -> Result<Num, String> {
        eval(s, &|u| {
            if u.is_empty() {
                Some(Num::Int(1))
            } else {
                None
            }
        })
        .map_err(String::from)
    }

    fn f(s: &str) -> Result<f64, String> {
        plain(s).map(Num::as_f64)
    }

    #[test]
    fn precedence_and_operators() {
        assert_eq!(f("(1+2*3)"), Ok(7.0));
        assert_eq!(f("((1+2)*3)"), Ok(9.0));
        assert_eq!(f("(2^3^2)"), Ok(512.0));
        assert_eq!(f("(10%4)"), Ok(2.0));
        assert_eq!(f("(-3+5)"), Ok(2.0));
        assert_eq!(f("(7/2)"), Ok(3.5));
        assert_eq!(f("(2^-1)"), Ok(0.5));
        assert_eq!(f("(1.5*2)"), Ok(3.0));
        assert!(plain("(1/0)").is_err());
        assert!(plain("(1%0)").is_err());
        assert!(plain("(1+)").is_err());
        assert!(plain("(1))").is_err());
        assert!(plain("(2k)").is_err());
        assert!(plain("(0x)").is_err());
    }

    #[test]
    fn whole_numbers_are_exact() {
        assert_eq!(plain("(2^53+1)"), Ok(Num::Int(9_007_199_254_740_993)));
        assert_eq!(plain("(2^64-1)"), Ok(Num::Int(u64::MAX as i128)));
        assert_eq!(plain("(8/2)"), Ok(Num::Int(4)));
        assert_eq!(
            plain("(0xffffffffffffffff)"),
            Ok(Num::Int(u64::MAX as i128))
        );
        assert_eq!(plain("(1^100000000000)"), Ok(Num::Int(1)));
    }

    #[test]
    fn overflow_is_an_error_not_a_wrap() {
        for s in [
            "(2^127)",
            "(2^200)",
            "(2^99999999999)",
            "(99999999999999999999999999999999999999999)",
            "(0x1ffffffffffffffffffffffffffffffff)",
            "(170141183460469231731687303715884105727+1)",
            "(2^126*4)",
            "(1.5^1000*1.5^1000)",
            "(1.5^100000)",
        ] {
            assert_eq!(plain(s), Err(format!("'{s}' is too large")), "{s}");
        }
        assert!(plain("(0.0/0.5-0.0)").is_ok());
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
        assert!(plain(&deep).unwrap_err().contains("nested too deeply"));
        assert!(plain(&format!("({}1)", "-".repeat(100_000))).is_err());
        assert!(plain(&format!("({}2)", "2^".repeat(100_000))).is_err());
        let ok = format!("{}1{}", "(".repeat(20), ")".repeat(20));
        assert_eq!(f(&ok), Ok(1.0));
    }
}

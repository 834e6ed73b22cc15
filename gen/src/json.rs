//! A minimal JSON object writer (the output is flat numbers, strings, arrays of objects).

pub struct Obj {
    buf: String,
    first: bool,
}

pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl Default for Obj {
    fn default() -> Self {
        Self::new()
    }
}

impl Obj {
    pub fn new() -> Self {
        Obj { buf: String::from("{"), first: true }
    }

    pub fn raw(&mut self, key: &str, json: &str) -> &mut Self {
        if !self.first {
            self.buf.push_str(", ");
        }
        self.first = false;
        self.buf.push_str(&escape(key));
        self.buf.push_str(": ");
        self.buf.push_str(json);
        self
    }

    pub fn num(&mut self, key: &str, v: f64) -> &mut Self {
        let s = if v.is_finite() { format!("{v}") } else { "null".into() };
        self.raw(key, &s)
    }

    pub fn opt(&mut self, key: &str, v: Option<f64>) -> &mut Self {
        self.num(key, v.unwrap_or(f64::NAN))
    }

    pub fn int(&mut self, key: &str, v: i64) -> &mut Self {
        self.raw(key, &v.to_string())
    }

    pub fn str(&mut self, key: &str, v: &str) -> &mut Self {
        self.raw(key, &escape(v))
    }

    pub fn bool(&mut self, key: &str, v: bool) -> &mut Self {
        self.raw(key, if v { "true" } else { "false" })
    }

    pub fn list(&mut self, key: &str, items: &[String]) -> &mut Self {
        self.raw(key, &format!("[{}]", items.join(", ")))
    }

    pub fn done(&mut self) -> String {
        let mut s = std::mem::take(&mut self.buf);
        s.push('}');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_valid_json() {
        let inner = Obj::new().int("a", 1).done();
        let s = Obj::new().num("x", 1.5).num("n", f64::NAN).str("s", "q\"\n").bool("b", true).list("l", &[inner]).done();
        assert_eq!(s, r#"{"x": 1.5, "n": null, "s": "q\"\u000a", "b": true, "l": [{"a": 1}]}"#);
    }
}

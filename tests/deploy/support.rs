//! Test support for the deployment files: a reader for the instructions of the
//! `Dockerfile` (stages, `ENV`, exec-form `ENTRYPOINT`/`CMD`/`HEALTHCHECK`) and a small
//! JSON reader for exec-form arrays and for vodpack's JSON log lines. Included by
//! `tests/deploy_files.rs` and `tests/container_defaults.rs` with
//! `#[path = "deploy/support.rs"] mod support;`.
//!
//! Both readers are written here rather than taken from a crate: the Dockerfile has no
//! Rust parser worth a dependency, and JSON is read in only two places.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The text of a file of the repository, by its path relative to the root.
pub fn read(relative: &str) -> String {
    let path = repo().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// The files under `dir` (relative to the root), recursively, whose names end in one of
/// `extensions`, sorted.
pub fn files_under(dir: &str, extensions: &[&str]) -> Vec<PathBuf> {
    fn walk(dir: &Path, extensions: &[&str], out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, extensions, out);
            } else if path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| extensions.iter().any(|e| n.ends_with(e)))
            {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&repo().join(dir), extensions, &mut out);
    out.sort();
    out
}

/// The default drain deadline (`drain-timeout-ms` in `vodpack::config::ServerOptions`):
/// how long vodpack drains on SIGTERM, in whole seconds, rounded up.
pub fn drain_deadline_secs() -> u64 {
    vodpack::config::ServerOptions::default()
        .drain_timeout_ms
        .div_ceil(1000)
}

/// One instruction of a Dockerfile, continuation lines joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    /// The keyword, upper case (`FROM`, `ENV`, ...).
    pub keyword: String,
    /// Everything after the keyword, trimmed.
    pub args: String,
}

/// The instructions of a Dockerfile, by build stage.
#[derive(Debug, Clone)]
pub struct Dockerfile {
    /// The instructions before the first `FROM` (global `ARG`s).
    pub global: Vec<Instruction>,
    /// Each stage's instructions, its `FROM` first, in file order.
    pub stages: Vec<Vec<Instruction>>,
}

impl Dockerfile {
    /// The repository's `Dockerfile`.
    pub fn load() -> Dockerfile {
        Dockerfile::parse(&read("Dockerfile"))
    }

    /// Read instructions: comment lines are skipped (also inside a continued instruction,
    /// as Docker does) and lines ending in `\` continue on the next.
    pub fn parse(text: &str) -> Dockerfile {
        let mut instructions = Vec::new();
        let mut pending = String::new();
        for line in text.lines() {
            let trimmed = line.trim();
            if trimmed.starts_with('#') || (trimmed.is_empty() && pending.is_empty()) {
                continue;
            }
            match trimmed.strip_suffix('\\') {
                Some(head) => {
                    pending.push_str(head);
                    pending.push(' ');
                }
                None => {
                    pending.push_str(trimmed);
                    let (keyword, args) = pending
                        .split_once(char::is_whitespace)
                        .unwrap_or((&pending, ""));
                    instructions.push(Instruction {
                        keyword: keyword.to_ascii_uppercase(),
                        args: args.trim().to_owned(),
                    });
                    pending.clear();
                }
            }
        }
        let mut global = Vec::new();
        let mut stages: Vec<Vec<Instruction>> = Vec::new();
        for instruction in instructions {
            if instruction.keyword == "FROM" {
                stages.push(Vec::new());
            }
            match stages.last_mut() {
                Some(stage) => stage.push(instruction),
                None => global.push(instruction),
            }
        }
        Dockerfile { global, stages }
    }

    /// The instructions of the stage the image is made of (the last one).
    pub fn runtime(&self) -> &[Instruction] {
        self.stages.last().map(Vec::as_slice).unwrap_or_default()
    }

    /// The arguments of every instruction named `keyword` in the runtime stage.
    pub fn runtime_args(&self, keyword: &str) -> Vec<&str> {
        self.runtime()
            .iter()
            .filter(|i| i.keyword == keyword)
            .map(|i| i.args.as_str())
            .collect()
    }

    /// The runtime stage's `ENV` variables, in order (`KEY=VALUE` pairs, values optionally
    /// double-quoted).
    pub fn env(&self) -> Vec<(String, String)> {
        let mut vars = Vec::new();
        for args in self.runtime_args("ENV") {
            for word in split_words(args) {
                if let Some((key, value)) = word.split_once('=') {
                    vars.push((key.to_owned(), value.to_owned()));
                }
            }
        }
        vars
    }

    /// The value of one runtime `ENV` variable.
    pub fn env_value(&self, key: &str) -> Option<String> {
        self.env()
            .into_iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// The command the image runs: its `ENTRYPOINT` then its `CMD`, both in exec form
    /// (the last of each in the runtime stage).
    pub fn command(&self) -> Vec<String> {
        let last = |keyword: &str| {
            self.runtime_args(keyword)
                .last()
                .map(|args| exec_form(args).unwrap_or_else(|e| panic!("{keyword} {args}: {e}")))
                .unwrap_or_default()
        };
        let mut command = last("ENTRYPOINT");
        command.extend(last("CMD"));
        command
    }

    /// The `HEALTHCHECK` command, in exec form (after its `--option`s and `CMD`).
    pub fn healthcheck(&self) -> Option<Vec<String>> {
        let args = self.runtime_args("HEALTHCHECK").last().copied()?;
        let (_, command) = args.split_once("CMD")?;
        Some(exec_form(command.trim()).unwrap_or_else(|e| panic!("HEALTHCHECK {args}: {e}")))
    }

    /// The ports the runtime stage exposes.
    pub fn exposed_ports(&self) -> Vec<u16> {
        self.runtime_args("EXPOSE")
            .iter()
            .flat_map(|args| args.split_whitespace())
            .filter_map(|p| p.split('/').next()?.parse().ok())
            .collect()
    }

    /// The value of an `ARG NAME=DEFAULT` before the first stage, or in any stage.
    pub fn arg_default(&self, name: &str) -> Option<String> {
        self.global
            .iter()
            .chain(self.stages.iter().flatten())
            .find_map(|i| {
                (i.keyword == "ARG")
                    .then(|| i.args.split_once('='))
                    .flatten()
                    .filter(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_owned())
            })
    }
}

/// Split on whitespace outside double quotes, removing the quotes.
fn split_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    for c in text.chars() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// An exec-form argument list: a JSON array of strings.
///
/// # Errors
/// When `text` is not a JSON array of strings.
pub fn exec_form(text: &str) -> Result<Vec<String>, String> {
    match json::parse(text)? {
        json::Value::Array(items) => items
            .into_iter()
            .map(|item| match item {
                json::Value::String(s) => Ok(s),
                other => Err(format!("not a string: {other:?}")),
            })
            .collect(),
        other => Err(format!("not an array (shell form?): {other:?}")),
    }
}

/// A strict reader of one JSON value (RFC 8259), enough to check log lines and read
/// exec-form arrays.
pub mod json {
    /// A JSON value. Object members keep their order.
    #[derive(Debug, Clone, PartialEq)]
    pub enum Value {
        Null,
        Bool(bool),
        Number(f64),
        String(String),
        Array(Vec<Value>),
        Object(Vec<(String, Value)>),
    }

    impl Value {
        /// The member `name` of an object.
        pub fn get(&self, name: &str) -> Option<&Value> {
            match self {
                Value::Object(members) => members.iter().find(|(k, _)| k == name).map(|(_, v)| v),
                _ => None,
            }
        }

        /// The string, if this is one.
        pub fn as_str(&self) -> Option<&str> {
            match self {
                Value::String(s) => Some(s),
                _ => None,
            }
        }

        /// The number, if this is one.
        pub fn as_f64(&self) -> Option<f64> {
            match self {
                Value::Number(n) => Some(*n),
                _ => None,
            }
        }
    }

    /// Parse `text`, which must hold exactly one value (whitespace around it allowed).
    ///
    /// # Errors
    /// A message naming the byte offset where the text stops being JSON.
    pub fn parse(text: &str) -> Result<Value, String> {
        let mut reader = Reader {
            bytes: text.as_bytes(),
            at: 0,
        };
        let value = reader.value(0)?;
        reader.space();
        if reader.at != reader.bytes.len() {
            return Err(reader.error("trailing characters"));
        }
        Ok(value)
    }

    struct Reader<'a> {
        bytes: &'a [u8],
        at: usize,
    }

    impl Reader<'_> {
        fn error(&self, what: &str) -> String {
            format!("{what} at byte {}", self.at)
        }

        fn peek(&self) -> Option<u8> {
            self.bytes.get(self.at).copied()
        }

        fn space(&mut self) {
            while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
                self.at += 1;
            }
        }

        fn expect(&mut self, literal: &str) -> Result<(), String> {
            if self.bytes[self.at..].starts_with(literal.as_bytes()) {
                self.at += literal.len();
                Ok(())
            } else {
                Err(self.error(&format!("expected {literal}")))
            }
        }

        fn value(&mut self, depth: usize) -> Result<Value, String> {
            if depth > 64 {
                return Err(self.error("nested too deep"));
            }
            self.space();
            match self.peek() {
                Some(b'n') => self.expect("null").map(|()| Value::Null),
                Some(b't') => self.expect("true").map(|()| Value::Bool(true)),
                Some(b'f') => self.expect("false").map(|()| Value::Bool(false)),
                Some(b'"') => self.string().map(Value::String),
                Some(b'[') => {
                    self.at += 1;
                    let mut items = Vec::new();
                    self.space();
                    if self.peek() == Some(b']') {
                        self.at += 1;
                        return Ok(Value::Array(items));
                    }
                    loop {
                        items.push(self.value(depth + 1)?);
                        self.space();
                        match self.peek() {
                            Some(b',') => self.at += 1,
                            Some(b']') => {
                                self.at += 1;
                                return Ok(Value::Array(items));
                            }
                            _ => return Err(self.error("expected , or ]")),
                        }
                    }
                }
                Some(b'{') => {
                    self.at += 1;
                    let mut members = Vec::new();
                    self.space();
                    if self.peek() == Some(b'}') {
                        self.at += 1;
                        return Ok(Value::Object(members));
                    }
                    loop {
                        self.space();
                        if self.peek() != Some(b'"') {
                            return Err(self.error("expected a member name"));
                        }
                        let name = self.string()?;
                        self.space();
                        self.expect(":")?;
                        members.push((name, self.value(depth + 1)?));
                        self.space();
                        match self.peek() {
                            Some(b',') => self.at += 1,
                            Some(b'}') => {
                                self.at += 1;
                                return Ok(Value::Object(members));
                            }
                            _ => return Err(self.error("expected , or }")),
                        }
                    }
                }
                Some(b'-' | b'0'..=b'9') => self.number(),
                _ => Err(self.error("expected a value")),
            }
        }

        fn number(&mut self) -> Result<Value, String> {
            let start = self.at;
            if self.peek() == Some(b'-') {
                self.at += 1;
            }
            let digits = |r: &mut Self| {
                let from = r.at;
                while matches!(r.peek(), Some(b'0'..=b'9')) {
                    r.at += 1;
                }
                r.at > from
            };
            if self.peek() == Some(b'0') {
                self.at += 1;
            } else if !digits(self) {
                return Err(self.error("expected digits"));
            }
            if self.peek() == Some(b'.') {
                self.at += 1;
                if !digits(self) {
                    return Err(self.error("expected fraction digits"));
                }
            }
            if matches!(self.peek(), Some(b'e' | b'E')) {
                self.at += 1;
                if matches!(self.peek(), Some(b'+' | b'-')) {
                    self.at += 1;
                }
                if !digits(self) {
                    return Err(self.error("expected exponent digits"));
                }
            }
            let text =
                std::str::from_utf8(&self.bytes[start..self.at]).map_err(|e| e.to_string())?;
            text.parse()
                .map(Value::Number)
                .map_err(|_| self.error("bad number"))
        }

        fn hex4(&mut self) -> Result<u32, String> {
            let text = self
                .bytes
                .get(self.at..self.at + 4)
                .and_then(|b| std::str::from_utf8(b).ok())
                .ok_or_else(|| self.error("short \\u escape"))?;
            let code = u32::from_str_radix(text, 16).map_err(|_| self.error("bad \\u escape"))?;
            self.at += 4;
            Ok(code)
        }

        fn string(&mut self) -> Result<String, String> {
            self.at += 1; // the opening quote
            let mut out = String::new();
            loop {
                let start = self.at;
                while !matches!(self.peek(), Some(b'"' | b'\\') | None) {
                    if self.bytes[self.at] < 0x20 {
                        return Err(self.error("control character in a string"));
                    }
                    self.at += 1;
                }
                out.push_str(
                    std::str::from_utf8(&self.bytes[start..self.at]).map_err(|e| e.to_string())?,
                );
                match self.peek() {
                    None => return Err(self.error("unterminated string")),
                    Some(b'"') => {
                        self.at += 1;
                        return Ok(out);
                    }
                    Some(_) => {
                        self.at += 1;
                        let escape = self
                            .peek()
                            .ok_or_else(|| self.error("unterminated escape"))?;
                        self.at += 1;
                        match escape {
                            b'"' => out.push('"'),
                            b'\\' => out.push('\\'),
                            b'/' => out.push('/'),
                            b'b' => out.push('\u{8}'),
                            b'f' => out.push('\u{c}'),
                            b'n' => out.push('\n'),
                            b'r' => out.push('\r'),
                            b't' => out.push('\t'),
                            b'u' => {
                                let mut code = self.hex4()?;
                                if (0xD800..0xDC00).contains(&code) {
                                    self.expect("\\u")?;
                                    let low = self.hex4()?;
                                    if !(0xDC00..0xE000).contains(&low) {
                                        return Err(self.error("bad surrogate pair"));
                                    }
                                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                                }
                                out.push(
                                    char::from_u32(code)
                                        .ok_or_else(|| self.error("bad code point"))?,
                                );
                            }
                            _ => return Err(self.error("bad escape")),
                        }
                    }
                }
            }
        }
    }

    /// Given a vodpack JSON log line (escapes, numbers, null, nested objects) and a Docker
    /// exec array, then the reader gives their values; malformed JSON is an error.
    #[test]
    fn reads_what_vodpack_and_docker_write() {
        let line = r#"{"timestamp":"2026-11-29T21:24:41.53Z","level":"WARN","status":422,"ok":true,"n":null,"x":-1.5e3,"span":{"vod.key":"a b\"c\u00e9.mp4"},"list":[]}"#;
        let value = parse(line).expect("a log line");
        assert_eq!(value.get("level").and_then(Value::as_str), Some("WARN"));
        assert_eq!(value.get("status").and_then(Value::as_f64), Some(422.0));
        assert_eq!(
            value
                .get("span")
                .and_then(|s| s.get("vod.key"))
                .and_then(Value::as_str),
            Some("a b\"cé.mp4")
        );
        assert_eq!(
            parse(r#"["/bin/bash", "-c", "printf 'a\\r\\n' \"$x\""]"#),
            Ok(Value::Array(vec![
                Value::String("/bin/bash".into()),
                Value::String("-c".into()),
                Value::String("printf 'a\\r\\n' \"$x\"".into()),
            ]))
        );
        for bad in [
            "",
            "{",
            "[1,]",
            "{\"a\" 1}",
            "01",
            "\"\u{1}\"",
            "[] x",
            "tru",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}

//! Git's config syntax read as git's own parser (`config.c`) reads it, for the one config
//! fsck parses from a blob, `.gitmodules`: sections `[name]`, `[name "sub"]` and the old
//! `[name.sub]`, keys with values (quotes, `\t \b \n \\ \"` escapes, continued lines,
//! `#`/`;` comments, blanks trimmed) or without (`true`). Text git would refuse is refused;
//! `[include]` means nothing here (it is only read, never followed).

/// One `section.subsection.key` and its value (`None`: a key without `=`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigEntry {
    /// Lower case.
    pub section: Vec<u8>,
    /// As written for `[s "sub"]`; lower case for `[s.sub]`.
    pub subsection: Option<Vec<u8>>,
    /// Lower case.
    pub key: Vec<u8>,
    pub value: Option<Vec<u8>>,
}

/// Where a parse stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    pub line: usize,
}

struct Source<'a> {
    data: &'a [u8],
    at: usize,
    line: usize,
    eof: bool,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

fn is_key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-'
}

impl Source<'_> {
    /// The next byte, `\r\n` as `\n`, and `\n` at the end (setting `eof`).
    fn next(&mut self) -> u8 {
        let Some(&c) = self.data.get(self.at) else {
            self.eof = true;
            return b'\n';
        };
        self.at += 1;
        if c == b'\r' && self.data.get(self.at) == Some(&b'\n') {
            self.at += 1;
            self.line += 1;
            return b'\n';
        }
        if c == b'\n' {
            self.line += 1;
        }
        c
    }

    fn malformed(&self) -> Malformed {
        Malformed { line: self.line }
    }

    /// After `[`: the section (and subsection) up to `]`, as git's `get_base_var`.
    fn base(&mut self) -> Result<Vec<u8>, Malformed> {
        let mut name = Vec::new();
        loop {
            let c = self.next();
            if self.eof {
                return Err(self.malformed());
            }
            match c {
                b']' => return Ok(name),
                c if is_space(c) => return self.extended_base(name, c),
                c if is_key_char(c) || c == b'.' => name.push(c.to_ascii_lowercase()),
                _ => return Err(self.malformed()),
            }
        }
    }

    /// `[section "subsection"]`, the subsection kept as written.
    fn extended_base(&mut self, mut name: Vec<u8>, mut c: u8) -> Result<Vec<u8>, Malformed> {
        loop {
            if c == b'\n' {
                return Err(self.malformed());
            }
            c = self.next();
            if !is_space(c) {
                break;
            }
        }
        if c != b'"' {
            return Err(self.malformed());
        }
        name.push(b'.');
        loop {
            let mut c = self.next();
            if c == b'\n' {
                return Err(self.malformed());
            }
            if c == b'"' {
                break;
            }
            if c == b'\\' {
                c = self.next();
                if c == b'\n' {
                    return Err(self.malformed());
                }
            }
            name.push(c);
        }
        match self.next() {
            b']' => Ok(name),
            _ => Err(self.malformed()),
        }
    }

    /// After `=`: the value to the end of its line, as git's `parse_value`.
    fn value(&mut self) -> Result<Vec<u8>, Malformed> {
        let (mut value, mut quote, mut comment, mut trim) = (Vec::new(), false, false, 0);
        loop {
            let mut c = self.next();
            if c == b'\n' {
                if quote {
                    return Err(self.malformed());
                }
                if trim > 0 {
                    value.truncate(trim);
                }
                return Ok(value);
            }
            if comment {
                continue;
            }
            if is_space(c) && !quote {
                if trim == 0 {
                    trim = value.len();
                }
                if !value.is_empty() {
                    value.push(c);
                }
                continue;
            }
            if !quote && (c == b';' || c == b'#') {
                comment = true;
                continue;
            }
            trim = 0;
            if c == b'\\' {
                c = match self.next() {
                    b'\n' => continue,
                    b't' => b'\t',
                    b'b' => 0x08,
                    b'n' => b'\n',
                    b'\\' => b'\\',
                    b'"' => b'"',
                    _ => return Err(self.malformed()),
                };
                value.push(c);
                continue;
            }
            if c == b'"' {
                quote = !quote;
                continue;
            }
            value.push(c);
        }
    }

    /// A key (its first letter read already) and its value, as git's `get_value`.
    fn entry(&mut self, base: &[u8], first: u8) -> Result<ConfigEntry, Malformed> {
        let mut key = vec![first.to_ascii_lowercase()];
        let mut c;
        loop {
            c = self.next();
            if self.eof || !is_key_char(c) {
                break;
            }
            key.push(c.to_ascii_lowercase());
        }
        while c == b' ' || c == b'\t' {
            c = self.next();
        }
        let value = match c {
            b'\n' => None,
            b'=' => Some(self.value()?),
            _ => return Err(self.malformed()),
        };
        let (section, subsection) = match base.iter().position(|&b| b == b'.') {
            Some(dot) => (base[..dot].to_vec(), Some(base[dot + 1..].to_vec())),
            None => (base.to_vec(), None),
        };
        Ok(ConfigEntry {
            section,
            subsection,
            key,
            value,
        })
    }
}

/// Every entry of `data`, in order.
pub fn parse_config(data: &[u8]) -> Result<Vec<ConfigEntry>, Malformed> {
    let data = data.strip_prefix(b"\xef\xbb\xbf").unwrap_or(data);
    let mut source = Source {
        data,
        at: 0,
        line: 1,
        eof: false,
    };
    let (mut entries, mut base, mut comment) = (Vec::new(), None::<Vec<u8>>, false);
    loop {
        let c = source.next();
        if c == b'\n' {
            if source.eof {
                return Ok(entries);
            }
            comment = false;
            continue;
        }
        if comment || is_space(c) {
            continue;
        }
        match c {
            b'#' | b';' => comment = true,
            b'[' => match source.base()? {
                name if name.is_empty() => return Err(source.malformed()),
                name => base = Some(name),
            },
            c if c.is_ascii_alphabetic() => {
                let Some(section) = base.as_deref() else {
                    return Err(source.malformed());
                };
                entries.push(source.entry(section, c)?);
            }
            _ => return Err(source.malformed()),
        }
    }
}

#[cfg(test)]
#[path = "config_text_tests.rs"]
mod tests;

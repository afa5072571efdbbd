//! The checkpoint's own tokenizer: byte-level BPE (GPT-2 style) built from the vocabulary and the
//! merges a GGUF file carries (`tokenizer.ggml.tokens`, `tokenizer.ggml.merges`), or
//! SentencePiece-style merging by score (`tokenizer.ggml.model` = `llama`, Gemma; [`crate::spm`]).
//! A tokenizer whose file says `tokenizer.ggml.add_bos_token` starts every encoded text with its
//! BOS token, as llama.cpp does.
//!
//! Contract: [`Tokenizer::encode`] gives the ids Hugging Face `tokenizers` gives for the
//! checkpoint's tokenizer.json (SmolLM2: pre-tokenizers Digits(individual) then ByteLevel with
//! GPT-2's regex, no prefix space, no BOS), and [`Tokenizer::decode`] inverts it byte for byte.
//! Checked against the `tokenizers` crate itself on every text of the corpus (828 texts, 25,529
//! tokens: `compiler/tests/real_model.rs`).
//! Control tokens (`<|im_start|>` and the like, token type 3) found literally in the text are
//! emitted as themselves, as `tokenizers` does for added tokens.
//!
//! The pre-tokenizer is GPT-2's regex
//! `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+` written out by
//! hand (the `regex` crate has no look-ahead): letters are `char::is_alphabetic`, numbers
//! `char::is_numeric`, spaces `char::is_whitespace`.

use crate::gguf::{GgufError, GgufFile, MetaValue};
use crate::spm::Spm;
use std::collections::HashMap;

/// llama.cpp's name (`tokenizer.ggml.pre`) for the pre-tokenizer [`pre_tokenize`] implements.
pub const SUPPORTED_PRE_TOKENIZER: &str = "smollm";

/// A token id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct TokenId(pub u32);

/// A byte-level BPE tokenizer.
#[derive(Clone, Debug)]
pub struct Tokenizer {
    tokens: Vec<String>,
    ids: HashMap<String, u32>,
    ranks: HashMap<(String, String), u32>,
    /// Control tokens, longest first, matched literally before pre-tokenization.
    specials: Vec<(String, u32)>,
    /// Indexes into `specials` by their first character (longest first).
    specials_by_first: HashMap<char, Vec<usize>>,
    byte_to_char: [char; 256],
    char_to_byte: HashMap<char, u8>,
    /// SentencePiece-style merging in place of byte-level BPE.
    spm: Option<Spm>,
    /// End-of-sequence token.
    pub eos: Option<TokenId>,
    /// The token every encoded text starts with, if any.
    pub bos: Option<TokenId>,
}

/// `tokenizer.ggml.token_type`, one per token (1, normal, where the file has none); an array of
/// another length or holding a non-integer is refused.
fn token_types(file: &GgufFile, tokens: usize) -> Result<Vec<u64>, GgufError> {
    let bad = |message: String| GgufError::Missing { path: file.path.clone(), message };
    match file.metadata.get("tokenizer.ggml.token_type") {
        None => Ok(vec![1; tokens]),
        Some(MetaValue::Array(t)) if t.len() == tokens => t
            .iter()
            .map(|v| v.as_u64())
            .collect::<Option<Vec<u64>>>()
            .ok_or_else(|| bad("tokenizer.ggml.token_type holds a value that is not an integer".into())),
        Some(_) => Err(bad(format!("tokenizer.ggml.token_type is not an array of {tokens} integers"))),
    }
}

/// GPT-2's reversible map from bytes to printable characters.
fn byte_chars() -> [char; 256] {
    let mut out = ['\0'; 256];
    let mut next = 256u32;
    for b in 0..=255u8 {
        let printable = (b'!'..=b'~').contains(&b) || (0xa1..=0xac).contains(&b) || b >= 0xae;
        out[b as usize] = if printable {
            char::from(b)
        } else {
            let c = char::from_u32(next).unwrap_or('\0');
            next += 1;
            c
        };
    }
    out
}

impl Tokenizer {
    /// Builds the tokenizer of a GGUF checkpoint (`tokenizer.ggml.model` `gpt2` or `llama`).
    pub fn from_gguf(file: &GgufFile) -> Result<Self, GgufError> {
        let missing = |message: String| GgufError::Missing { path: file.path.clone(), message };
        let model = file.require_str("tokenizer.ggml.model")?;
        let mut t = match model {
            "gpt2" => Self::bpe_from_gguf(file)?,
            "llama" => Self::spm_from_gguf(file)?,
            _ => {
                return Err(missing(format!(
                "tokenizer.ggml.model is {model:?}; only byte-level BPE (gpt2) and SentencePiece (llama) are supported"
            )))
            }
        };
        let id = |key: &str| -> Result<Option<TokenId>, GgufError> {
            match file.metadata.get(key) {
                None => Ok(None),
                Some(v) => match v.as_u64() {
                    Some(i) if (i as usize) < t.tokens.len() => Ok(Some(TokenId(i as u32))),
                    _ => Err(missing(format!("{key} is {v:?}, not a token id of the vocabulary"))),
                },
            }
        };
        t.eos = id("tokenizer.ggml.eos_token_id")?;
        // llama.cpp adds BOS to SentencePiece text unless the file says not to.
        let add_bos = match file.metadata.get("tokenizer.ggml.add_bos_token") {
            Some(MetaValue::Bool(b)) => *b,
            _ => model == "llama",
        };
        if add_bos {
            t.bos = Some(id("tokenizer.ggml.bos_token_id")?.ok_or_else(|| {
                missing("tokenizer.ggml.add_bos_token is true but tokenizer.ggml.bos_token_id is missing".into())
            })?);
        }
        Ok(t)
    }

    /// A SentencePiece-style vocabulary: tokens, scores, types (control and user-defined tokens
    /// are matched literally in the text, as llama.cpp does with special tokens parsed).
    fn spm_from_gguf(file: &GgufFile) -> Result<Self, GgufError> {
        let missing = |message: String| GgufError::Missing { path: file.path.clone(), message };
        if let Some(pre) = file.metadata.get("tokenizer.ggml.pre") {
            if pre.as_str() != Some("default") {
                return Err(missing(format!(
                    "tokenizer.ggml.pre is {pre:?}; a SentencePiece vocabulary is supported with \"default\" only"
                )));
            }
        }
        let tokens: Vec<String> =
            file.require_strings("tokenizer.ggml.tokens")?.into_iter().map(String::from).collect();
        let scores: Vec<f32> = match file.metadata.get("tokenizer.ggml.scores") {
            Some(MetaValue::Array(s)) if s.len() == tokens.len() => s
                .iter()
                .map(|v| v.as_f64().map(|x| x as f32))
                .collect::<Option<_>>()
                .ok_or_else(|| missing("tokenizer.ggml.scores holds a value that is not a number".into()))?,
            _ => return Err(missing("tokenizer.ggml.scores is missing or not one number per token".into())),
        };
        let types = token_types(file, tokens.len())?;
        // Unknown, control and user-defined tokens, as llama.cpp's special-token cache holds them.
        let special = (0..tokens.len() as u32).filter(|&i| matches!(types[i as usize], 2..=4)).collect();
        let spm = Spm::new(&tokens, scores);
        if let Some(b) = spm.bytes.iter().position(Option::is_none) {
            return Err(missing(format!("the vocabulary has no byte token <0x{b:02X}> (every byte needs one)")));
        }
        // llama.cpp adds a space prefix to SentencePiece text unless the file says not to.
        if !matches!(file.metadata.get("tokenizer.ggml.add_space_prefix"), Some(MetaValue::Bool(false))) {
            return Err(missing(
                "tokenizer.ggml.add_space_prefix is not false: a space prefix is not supported".into(),
            ));
        }
        let mut t = Self::from_parts(tokens, Vec::new(), special, None);
        t.spm = Some(spm);
        Ok(t)
    }

    fn bpe_from_gguf(file: &GgufFile) -> Result<Self, GgufError> {
        let missing = |message: String| GgufError::Missing { path: file.path.clone(), message };
        // The pre-tokenizer is ours (single digits, then GPT-2's regex): llama.cpp calls it
        // `smollm`. Another named one (llama3, qwen2, plain gpt2 without digit splitting, ...)
        // would split text differently, so it is refused rather than tokenized wrongly.
        if file.metadata.contains_key("tokenizer.ggml.pre") {
            let pre = file.require_str("tokenizer.ggml.pre")?;
            if pre != SUPPORTED_PRE_TOKENIZER {
                return Err(missing(format!(
                    "tokenizer.ggml.pre is {pre:?}; only {SUPPORTED_PRE_TOKENIZER:?} (single digits, then GPT-2's regex) is supported"
                )));
            }
        }
        let tokens: Vec<String> =
            file.require_strings("tokenizer.ggml.tokens")?.into_iter().map(String::from).collect();
        let mut merges = Vec::new();
        for (rank, m) in file.require_strings("tokenizer.ggml.merges")?.into_iter().enumerate() {
            let (a, b) = m.split_once(' ').ok_or_else(|| missing(format!("merge #{rank} {m:?} is not two symbols")))?;
            merges.push((a.to_string(), b.to_string()));
        }
        let types = token_types(file, tokens.len())?;
        let control = (0..tokens.len() as u32).filter(|&i| types[i as usize] == 3).collect();
        Ok(Self::from_parts(tokens, merges, control, None))
    }

    /// Builds a tokenizer from its vocabulary (token strings by id, in GPT-2's byte-to-character
    /// alphabet), its merges by rank, the ids of its control tokens and its end-of-sequence token.
    pub fn from_parts(
        tokens: Vec<String>,
        merges: Vec<(String, String)>,
        control: Vec<u32>,
        eos: Option<TokenId>,
    ) -> Self {
        let ranks = merges.into_iter().enumerate().map(|(rank, m)| (m, rank as u32)).collect();
        let ids: HashMap<String, u32> = tokens.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect();
        let mut specials: Vec<(String, u32)> = control
            .into_iter()
            .filter_map(|i| tokens.get(i as usize).filter(|t| !t.is_empty()).map(|t| (t.clone(), i)))
            .collect();
        specials.sort_by_key(|s| std::cmp::Reverse(s.0.len()));
        let mut specials_by_first: HashMap<char, Vec<usize>> = HashMap::new();
        for (k, (s, _)) in specials.iter().enumerate() {
            specials_by_first.entry(s.chars().next().unwrap_or_default()).or_default().push(k);
        }
        let byte_to_char = byte_chars();
        let char_to_byte = byte_to_char.iter().enumerate().map(|(b, &c)| (c, b as u8)).collect();
        Tokenizer {
            tokens,
            ids,
            ranks,
            specials,
            specials_by_first,
            byte_to_char,
            char_to_byte,
            spm: None,
            eos,
            bos: None,
        }
    }

    /// Whether it is byte-level BPE (else SentencePiece-style, merged by score).
    pub fn is_byte_level(&self) -> bool {
        self.spm.is_none()
    }

    /// The merges, lowest rank (applied first) first.
    pub fn merges(&self) -> Vec<(&str, &str)> {
        let mut m: Vec<(&(String, String), &u32)> = self.ranks.iter().collect();
        m.sort_by_key(|&(_, &rank)| rank);
        m.into_iter().map(|((a, b), _)| (a.as_str(), b.as_str())).collect()
    }

    /// The control tokens' ids, ascending.
    pub fn control_tokens(&self) -> Vec<TokenId> {
        let mut ids: Vec<TokenId> = self.specials.iter().map(|&(_, i)| TokenId(i)).collect();
        ids.sort();
        ids
    }

    /// Vocabulary size.
    pub fn vocab_size(&self) -> usize {
        self.tokens.len()
    }

    /// The token's string as the vocabulary stores it (byte-level characters).
    pub fn token(&self, id: TokenId) -> Option<&str> {
        self.tokens.get(id.0 as usize).map(String::as_str)
    }

    /// Encodes text into token ids (after the BOS token where the tokenizer adds one).
    pub fn encode(&self, text: &str) -> Vec<TokenId> {
        let mut out: Vec<TokenId> = self.bos.into_iter().collect();
        let mut cache: HashMap<String, Vec<u32>> = HashMap::new();
        let mut plain = |piece: &str, out: &mut Vec<TokenId>| match &self.spm {
            Some(spm) => {
                let mut ids = Vec::new();
                spm.encode(piece, &self.ids, &mut ids);
                out.extend(ids.into_iter().map(TokenId));
            }
            None => {
                for piece in pre_tokenize(piece) {
                    let ids = cache.entry(piece.to_string()).or_insert_with(|| self.bpe(piece));
                    out.extend(ids.iter().map(|&i| TokenId(i)));
                }
            }
        };
        // Special tokens found literally (the longest at the leftmost place); the text between
        // them is ordinary. One pass over the text, trying only the specials that start with the
        // character at hand.
        let mut start = 0;
        let mut at = 0;
        while at < text.len() {
            let rest = &text[at..];
            let c = rest.chars().next().unwrap_or_default();
            let found = self
                .specials_by_first
                .get(&c)
                .and_then(|list| list.iter().map(|&k| &self.specials[k]).find(|(s, _)| rest.starts_with(s.as_str())));
            match found {
                Some((s, id)) => {
                    plain(&text[start..at], &mut out);
                    out.push(TokenId(*id));
                    at += s.len();
                    start = at;
                }
                None => at += c.len_utf8(),
            }
        }
        plain(&text[start..], &mut out);
        out
    }

    /// Byte-level BPE of one pre-token: merge the lowest-ranked adjacent pair until none is left.
    fn bpe(&self, piece: &str) -> Vec<u32> {
        let mut symbols: Vec<String> = piece.bytes().map(|b| self.byte_to_char[b as usize].to_string()).collect();
        loop {
            let best = symbols
                .windows(2)
                .enumerate()
                .filter_map(|(i, w)| self.ranks.get(&(w[0].clone(), w[1].clone())).map(|&r| (r, i)))
                .min();
            let Some((_, i)) = best else { break };
            let merged = format!("{}{}", symbols[i], symbols[i + 1]);
            symbols[i] = merged;
            symbols.remove(i + 1);
        }
        symbols
            .iter()
            .flat_map(|s| match self.ids.get(s) {
                Some(&id) => vec![id],
                // A symbol with no id (a vocabulary without every byte): fall back to its bytes.
                None => s.chars().filter_map(|c| self.ids.get(&c.to_string()).copied()).collect(),
            })
            .collect()
    }

    /// Decodes token ids into text (invalid UTF-8 becomes U+FFFD); control tokens are kept as text.
    pub fn decode(&self, ids: &[TokenId]) -> String {
        let mut bytes = Vec::new();
        for id in ids {
            let Some(t) = self.token(*id) else { continue };
            if self.specials.iter().any(|(_, s)| *s == id.0) {
                bytes.extend(t.as_bytes());
                continue;
            }
            if let Some(spm) = &self.spm {
                spm.decode_token(id.0, t, &mut bytes);
                continue;
            }
            for c in t.chars() {
                match self.char_to_byte.get(&c) {
                    Some(&b) => bytes.push(b),
                    None => bytes.extend(c.to_string().as_bytes()),
                }
            }
        }
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// Splits text the way the checkpoint's pre-tokenizers do: every number character alone, then
/// GPT-2's regex on the text between them.
pub fn pre_tokenize(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if c.is_numeric() {
            gpt2_split(&text[start..i], &mut out);
            out.push(&text[i..i + c.len_utf8()]);
            start = i + c.len_utf8();
        }
    }
    gpt2_split(&text[start..], &mut out);
    out
}

/// GPT-2's pre-tokenizer regex, alternative by alternative, leftmost first.
fn gpt2_split<'a>(text: &'a str, out: &mut Vec<&'a str>) {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let at = |i: usize| chars.get(i).map(|&(_, c)| c);
    let byte = |i: usize| chars.get(i).map_or(text.len(), |&(b, _)| b);
    let is_other = |c: char| !c.is_whitespace() && !c.is_alphabetic() && !c.is_numeric();
    let run = |from: usize, f: &dyn Fn(char) -> bool| {
        let mut j = from;
        while at(j).is_some_and(f) {
            j += 1;
        }
        j
    };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i].1;
        let mut end = None;
        // 's|'t|'re|'ve|'m|'ll|'d
        if c == '\'' {
            for suffix in ["s", "t", "re", "ve", "m", "ll", "d"] {
                if text[chars[i].0 + 1..].starts_with(suffix) {
                    end = Some(i + 1 + suffix.len());
                    break;
                }
            }
        }
        //  ?\p{L}+ |  ?\p{N}+ |  ?[^\s\p{L}\p{N}]+
        if end.is_none() {
            let j = if c == ' ' { i + 1 } else { i };
            for class in [&(|c: char| c.is_alphabetic()) as &dyn Fn(char) -> bool, &|c: char| c.is_numeric(), &is_other]
            {
                let k = run(j, class);
                if k > j {
                    end = Some(k);
                    break;
                }
            }
        }
        // \s+(?!\S) | \s+
        if end.is_none() && c.is_whitespace() {
            let k = run(i, &|c: char| c.is_whitespace());
            // Not followed by a non-space: the whole run; else leave the last space to the next
            // word, unless the run is a single space (then `\s+` takes it).
            end = Some(if k == chars.len() || k - i == 1 { k } else { k - 1 });
        }
        let k = end.unwrap_or(i + 1);
        out.push(&text[byte(i)..byte(k)]);
        i = k;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pre_tokenization_follows_gpt2_with_single_digits() {
        assert_eq!(pre_tokenize("The capital of France is"), ["The", " capital", " of", " France", " is"]);
        assert_eq!(pre_tokenize("it's 2024!\n\n  ok"), ["it", "'s", " ", "2", "0", "2", "4", "!", "\n\n ", " ok"]);
        assert_eq!(pre_tokenize("a  b "), ["a", " ", " b", " "]);
        assert_eq!(pre_tokenize("x\ny"), ["x", "\n", "y"]);
    }

    #[test]
    fn the_byte_map_is_a_bijection() {
        let m = byte_chars();
        let set: std::collections::HashSet<char> = m.iter().copied().collect();
        assert_eq!(set.len(), 256);
        assert_eq!(m[b' ' as usize], 'Ġ');
        assert_eq!(m[b'\n' as usize], 'Ċ');
    }
}

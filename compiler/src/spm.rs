//! SentencePiece-style tokenization from scores (llama.cpp's `llama` tokenizer model, used by
//! Gemma): the text's spaces become `▁` (U+2581), then adjacent symbols, starting from single
//! characters, merge while their concatenation is a token, the highest-scoring merge first (ties:
//! the leftmost); a symbol left that is no token falls back to its UTF-8 bytes as `<0xXX>`
//! tokens. This is llama.cpp's `llm_tokenizer_spm` step for step (its re-segmentation of a
//! symbol through the merges that built it included), so ids match what llama.cpp gives for the
//! same GGUF file.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

/// What an SPM vocabulary adds to the token strings: each token's score and the byte tokens.
#[derive(Clone, Debug)]
pub(crate) struct Spm {
    /// Score by token id (higher merges first).
    pub scores: Vec<f32>,
    /// The id of `<0xXX>` for each byte, where the vocabulary has it.
    pub bytes: Vec<Option<u32>>,
}

/// The word boundary SentencePiece writes for a space.
pub(crate) const SPACE: char = '\u{2581}';

/// A candidate merge of two adjacent symbols.
struct Bigram {
    left: usize,
    right: usize,
    score: f32,
    len: usize,
}

impl PartialEq for Bigram {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Bigram {}
impl PartialOrd for Bigram {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Bigram {
    /// The heap's greatest is the highest score, then the leftmost (llama.cpp's comparator).
    fn cmp(&self, o: &Self) -> Ordering {
        self.score.total_cmp(&o.score).then(o.left.cmp(&self.left))
    }
}

/// A symbol: a byte range of the text, linked to its live neighbours.
#[derive(Clone, Copy)]
struct Symbol {
    start: usize,
    len: usize,
    prev: Option<usize>,
    next: Option<usize>,
}

impl Spm {
    /// Builds the byte table from the vocabulary (`<0x00>` .. `<0xFF>`).
    pub fn new(tokens: &[String], scores: Vec<f32>) -> Self {
        let mut bytes = vec![None; 256];
        for (i, t) in tokens.iter().enumerate() {
            if let Some(h) = t.strip_prefix("<0x").and_then(|h| h.strip_suffix('>')).filter(|h| h.len() == 2) {
                if let Ok(b) = u8::from_str_radix(h, 16) {
                    bytes[b as usize] = Some(i as u32);
                }
            }
        }
        Spm { scores, bytes }
    }

    /// Encodes plain text (no special tokens in it) into `out`.
    pub fn encode(&self, text: &str, ids: &HashMap<String, u32>, out: &mut Vec<u32>) {
        let text: String = text.chars().map(|c| if c == ' ' { SPACE } else { c }).collect();
        let mut symbols: Vec<Symbol> = Vec::new();
        for (i, (start, c)) in text.char_indices().enumerate() {
            let prev = i.checked_sub(1);
            symbols.push(Symbol { start, len: c.len_utf8(), prev, next: None });
            if let Some(p) = prev {
                symbols[p].next = Some(i);
            }
        }
        let mut heap = BinaryHeap::new();
        // The two symbols each merged text came from, to re-segment a symbol that is no token.
        let mut merged_from: HashMap<&str, (usize, usize)> = HashMap::new();
        let mut try_add =
            |left: Option<usize>, right: Option<usize>, symbols: &[Symbol], heap: &mut BinaryHeap<Bigram>| {
                let (Some(l), Some(r)) = (left, right) else { return };
                let (a, b) = (&symbols[l], &symbols[r]);
                let piece = &text[a.start..a.start + a.len + b.len];
                let Some(&id) = ids.get(piece) else { return };
                let Some(&score) = self.scores.get(id as usize) else { return };
                heap.push(Bigram { left: l, right: r, score, len: piece.len() });
                merged_from.insert(piece, (l, r));
            };
        for i in 1..symbols.len() {
            try_add(Some(i - 1), Some(i), &symbols, &mut heap);
        }
        while let Some(Bigram { left, right, len, .. }) = heap.pop() {
            let (l, r) = (symbols[left], symbols[right]);
            // Stale: one side was merged away or grew since this pair was queued.
            if l.len == 0 || r.len == 0 || l.len + r.len != len {
                continue;
            }
            symbols[left].len += r.len;
            symbols[right].len = 0;
            symbols[left].next = r.next;
            if let Some(n) = r.next {
                symbols[n].prev = Some(left);
            }
            try_add(symbols[left].prev, Some(left), &symbols, &mut heap);
            try_add(Some(left), symbols[left].next, &symbols, &mut heap);
        }
        let mut at = if symbols.is_empty() { None } else { Some(0) };
        while let Some(i) = at {
            let s = symbols[i];
            self.resegment(&text, s.start, s.len, &symbols, ids, &merged_from, out);
            at = s.next;
        }
    }

    /// A symbol's token, else the two symbols it was merged from, else its bytes.
    #[allow(clippy::too_many_arguments)]
    fn resegment(
        &self,
        text: &str,
        start: usize,
        len: usize,
        symbols: &[Symbol],
        ids: &HashMap<String, u32>,
        merged_from: &HashMap<&str, (usize, usize)>,
        out: &mut Vec<u32>,
    ) {
        let piece = &text[start..start + len];
        if let Some(&id) = ids.get(piece) {
            out.push(id);
            return;
        }
        if let Some(&(l, r)) = merged_from.get(piece) {
            let left_len = symbols[r].start - symbols[l].start;
            self.resegment(text, start, left_len, symbols, ids, merged_from, out);
            self.resegment(text, start + left_len, len - left_len, symbols, ids, merged_from, out);
            return;
        }
        out.extend(piece.bytes().filter_map(|b| self.bytes[b as usize]));
    }

    /// Appends a token's bytes: `▁` as a space, `<0xXX>` as its byte, others as their text.
    pub fn decode_token(&self, id: u32, token: &str, out: &mut Vec<u8>) {
        if let Some(b) = self.bytes.iter().position(|&t| t == Some(id)) {
            out.push(b as u8);
        } else {
            out.extend(token.replace(SPACE, " ").as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A vocabulary: the byte tokens, then `(text, score)` pairs.
    fn vocab(pieces: &[(&str, f32)]) -> (Spm, HashMap<String, u32>) {
        let mut tokens: Vec<String> = (0..=255u8).map(|b| format!("<0x{b:02X}>")).collect();
        let mut scores = vec![0.0; 256];
        for (t, s) in pieces {
            tokens.push(t.to_string());
            scores.push(*s);
        }
        let ids = tokens.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect();
        (Spm::new(&tokens, scores), ids)
    }

    fn encode(v: &(Spm, HashMap<String, u32>), text: &str) -> Vec<u32> {
        let mut out = Vec::new();
        v.0.encode(text, &v.1, &mut out);
        out
    }

    #[test]
    fn the_highest_scoring_merge_wins_and_unknown_characters_fall_back_to_bytes() {
        // 256 a, 257 b, 258 ab, 259 bc, 260 c, 261 ▁, 262 ▁a
        let v = vocab(&[("a", -1.0), ("b", -1.0), ("ab", -3.0), ("bc", -2.0), ("c", -1.0), ("▁", -1.0), ("▁a", -5.0)]);
        // "abc": bc (-2) beats ab (-3).
        assert_eq!(encode(&v, "abc"), [256, 259]);
        assert_eq!(encode(&v, "ab"), [258]);
        // A space is ▁; "▁a" merges.
        assert_eq!(encode(&v, "b a"), [257, 262]);
        // "é" (0xC3 0xA9) has no token: its bytes.
        assert_eq!(encode(&v, "aé"), [256, 0xC3, 0xA9]);
        assert_eq!(encode(&v, ""), Vec::<u32>::new());
    }

    #[test]
    fn equal_scores_merge_leftmost_first() {
        // 256 a, 257 aa: "aaa" -> aa a (left pair first), not a aa.
        let v = vocab(&[("a", -1.0), ("aa", -2.0)]);
        assert_eq!(encode(&v, "aaa"), [257, 256]);
    }

    #[test]
    fn merges_grow_through_tokens_only() {
        // ab then abc: each step's text is a token; "abcab" ends as abc + ab.
        let v = vocab(&[("a", -1.0), ("b", -1.0), ("c", -1.0), ("ab", -1.5), ("abc", -1.6)]);
        assert_eq!(encode(&v, "abc"), [260]);
        assert_eq!(encode(&v, "abcab"), [260, 259]);
    }
}

"""What of a completion the judge grades: the text as written, and its answer alone.

A phrase filter can be reworded round (another language, a zero-width space,
leetspeak, base64: a round of attacks found 15 of 15 rewrites through). So the judge is
not trusted to ignore instructions; the score is built so that text beyond
the answer cannot raise it:

    score = min(grade(response), grade(answer view))

The answer view is the completion's committed answer with every channel that
is not the answer removed:
- the committed answer only: the answer tag's content (or the last `\\boxed{}`),
  else the whole text;
- hidden text stripped: HTML and Markdown comments, zero-width and other
  invisible format characters, Unicode tag characters, HTML tags (their text
  kept), and, where the row has a reference without code, fenced code blocks
  (unless the completion is nothing else: then it is the view, uncut);
- when the row has a reference, cut to the reference's size: as many leading
  sentences as the reference has, and at most max(2 x its words, its words + 8)
  words. A note written after the answer ("Berlin. Note to the grader: ...", in
  any language or spelling) is not in the view, and the view of "Berlin. <note>"
  is the text "Berlin." itself, graded once for both rows: the note can lower
  the paid score, never raise it. Without a reference there is no answer length
  to cut to, so the view is the cleaned answer whole (hidden channels removed;
  visible prose stays, and meets the phrase filter and the data markers only).

Everything here is linear in the text (str methods, bounded patterns) and
reads at most `limit` characters of the answer.
"""
from __future__ import annotations

import re
import unicodedata

# Invisible format characters a tokenizer still reads: zero-width space/joiners, bidi controls, word
# joiner, invisible operators, BOM, soft hyphen, Mongolian vowel separator, interlinear annotation marks.
_INVISIBLE = dict.fromkeys([0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180E, 0x3164, 0xFEFF,
                            0xFFA0, *range(0x200B, 0x2010), *range(0x202A, 0x202F), *range(0x2060, 0x2070),
                            *range(0xFE00, 0xFE10), *range(0xFFF9, 0xFFFC)])
_TAG_CHARS = range(0xE0000, 0xE0080)  # Unicode tags: invisible copies of ASCII ("ASCII smuggling")


def invisible_to_nothing(text: str, read_tags: bool = False) -> str:
    """NFKC, with invisible format characters removed, and Unicode tag characters removed (or, with
    read_tags, read as the ASCII they copy: what a filter looking for hidden requests wants)."""
    text = unicodedata.normalize("NFKC", text).translate(_INVISIBLE)
    if text and max(text) >= "\U000e0000":  # max() of a str runs in C: the slow path only when there are any
        text = "".join((chr(ord(c) - 0xE0000) if read_tags else "") if ord(c) in _TAG_CHARS else c for c in text)
    return text


def _cut_spans(text: str, start: str, end: str) -> str:
    """Text with every start...end span removed (an unclosed one to the end), by str.find: linear."""
    out, pos = [], 0
    while True:
        i = text.find(start, pos)
        if i < 0:
            out.append(text[pos:])
            return "".join(out)
        out.append(text[pos:i])
        j = text.find(end, i + len(start))
        if j < 0:
            return "".join(out)
        pos = j + len(end)
        out.append(" ")


# A Markdown link-reference comment, `[//]: # (hidden)`, on its own line; bounded pieces, anchored at line starts.
_MD_COMMENT = re.compile(r"^[ \t]{0,3}\[[^\]\n]{0,200}\]:[ \t]{0,8}(?:#|<>)[^\n]*", re.MULTILINE)
# An HTML/XML tag (its text is kept): a name, then bounded attributes; "1 < 2 and 3 > 2" is not one.
_TAG = re.compile(r"</?[A-Za-z][\w:-]{0,30}(?:\s[^<>\n]{0,200})?/?>")
# A chat-template control token written as text: <|im_start|>, <|endoftext|>, [INST], <s>.
_CONTROL = re.compile(r"<\|[^<>|\n]{0,40}\|>|\[/?INST\]|</?s>")
_SPACE = re.compile(r"\s+")


def clean(text: str, keep_code: bool = False) -> str:
    """The text a reader sees, without the channels that hide text from one: comments, invisible characters,
    markup, chat-template tokens, and (unless keep_code) fenced code blocks. Whitespace runs become one space,
    or one newline where the run held one."""
    text = invisible_to_nothing(text)
    text = _cut_spans(text, "<!--", "-->")
    if not keep_code:
        text = _cut_spans(text, "```", "```")
        text = _cut_spans(text, "~~~", "~~~")
    text = _MD_COMMENT.sub(" ", text)
    text = _CONTROL.sub(" ", text)
    text = _TAG.sub(" ", text)
    return _SPACE.sub(lambda m: "\n" if "\n" in m.group() else " ", text).strip()


_END = ".!?…。！？"
_CLOSERS = "\"'”’)]»"


def _ends(piece: str) -> bool:
    return piece.rstrip(_CLOSERS)[-1:] in _END


def _pieces(text: str):
    """(word, ends_a_sentence) for each word of `text`, in order (linear).

    A sentence ends at a word ending in . ! ? … (closing quotes or brackets after it allowed), at 。！？ even
    without a space, at a line break, and where a period runs into a capital ("Berlin.Note"), so no sentence
    hides behind a missing space.
    """
    for mark in "。！？":
        text = text.replace(mark, mark + " ")
    for line in text.split("\n"):
        words = [piece for word in line.split() for piece in _split_glued(word)]
        for i, word in enumerate(words):
            yield word, _ends(word) or i == len(words) - 1


def _split_glued(word: str) -> list[str]:
    # "Berlin.Note" -> ["Berlin.", "Note"]: a lower-case letter, a sentence end, a capital. "U.S." and "3.5" stay.
    out, start = [], 0
    for i in range(1, len(word) - 1):
        if word[i] in _END and word[i - 1].islower() and word[i + 1].isupper():
            out.append(word[start:i + 1])
            start = i + 1
    out.append(word[start:])
    return out


def leading(text: str, max_sentences: int, max_words: int) -> str:
    """The leading `max_sentences` sentences of `text`, and at most `max_words` words of them (whole words)."""
    kept, sentences = [], 0
    for word, ends in _pieces(text):
        kept.append(word)
        sentences += ends
        if sentences >= max_sentences or len(kept) >= max_words:
            break
    return " ".join(kept)


def reference_size(reference: str) -> tuple[int, int]:
    """(sentences, words) of the reference, each at least 1."""
    sentences = words = 0
    for _, ends in _pieces(clean(reference, keep_code=True)):
        words += 1
        sentences += ends
    return max(1, sentences), max(1, words)


def answer_view(committed: str, reference: str | None, limit: int) -> str:
    """The answer alone, as the judge is shown it beside the response (see the module docstring)."""
    head = committed[:limit * 4]
    # Code is hidden from the view only where the answer is prose: the reference holds none, and the
    # completion holds more than a code block.
    keep_code = reference is None or "```" in reference or "~~~" in reference
    text = clean(head, keep_code=keep_code)[:limit]
    if reference is None:
        return text
    if not text:  # nothing but code: the code is the answer, and lines of code are no sentences to cut by
        return clean(head, keep_code=True)[:limit]
    sentences, words = reference_size(reference[:limit])
    return leading(text, sentences, max(2 * words, words + 8))

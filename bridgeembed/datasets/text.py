"""The text preprocessing of SentEval's `get_transfer_data.bash`, in Python.

- `moses(line, lower)`: Moses `tokenizer.perl -l en -no-escape` (through sacremoses), then
  `lowercase.perl` where the script lowercases;
- `cat_v(data)`: `cat -v` (non-ASCII bytes shown as `M-x`, control characters as `^X`);
- `ptb(line)`: the rules of SentEval's `tokenizer.sed` (R. MacIntyre's Penn Treebank sed script).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for annotations only
    from sacremoses import MosesTokenizer


@lru_cache(maxsize=None)
def _moses_en() -> MosesTokenizer:
    from sacremoses import MosesTokenizer

    return MosesTokenizer(lang="en")


def moses(line: str, lower: bool = False) -> str:
    out = _moses_en().tokenize(line, escape=False, return_str=True) if line.strip() else ""
    return out.lower() if lower else out


def cat_v(data: bytes) -> str:
    """What `cat -v` prints for `data` (tabs and newlines pass through)."""
    out = []
    for b in data:
        prefix = ""
        if b >= 128:
            prefix, b = "M-", b - 128
        elif b in (9, 10):
            out.append(chr(b))
            continue
        out.append(prefix + ("^" + chr(b + 64) if b < 32 else "^?" if b == 127 else chr(b)))
    return "".join(out)


_PTB_RULES = [(re.compile(p), r) for p, r in [
    (r'^"', "`` "),
    (r'([ (\[{<])"', r"\1 `` "),
    (r"\.\.\.", " ... "),
    (r"([,;:@#$%&])", r" \1 "),
    (r"([^.])([.])([\])}>\"']*)[ \t]*$", r"\1 \2\3 "),
    (r"([?!])", r" \1 "),
    (r"([\]\[(){}<>])", r" \1 "),
    (r"--", " -- "),
    (r"$", " "),
    (r"^", " "),
    (r'"', " '' "),
    (r"([^'])' ", r"\1 ' "),
    (r"'([sSmMdD]) ", r" '\1 "),
    (r"'ll ", " 'll "), (r"'re ", " 're "), (r"'ve ", " 've "), (r"n't ", " n't "),
    (r"'LL ", " 'LL "), (r"'RE ", " 'RE "), (r"'VE ", " 'VE "), (r"N'T ", " N'T "),
    (r" ([Cc])annot ", r" \1an not "), (r" ([Dd])'ye ", r" \1' ye "), (r" ([Gg])imme ", r" \1im me "),
    (r" ([Gg])onna ", r" \1on na "), (r" ([Gg])otta ", r" \1ot ta "), (r" ([Ll])emme ", r" \1em me "),
    (r" ([Mm])ore'n ", r" \1ore 'n "), (r" '([Tt])is ", r" '\1 is "), (r" '([Tt])was ", r" '\1 was "),
    (r" ([Ww])anna ", r" \1an na "),
    (r"  *", " "),
    (r"^ *", ""),
]]


def ptb(line: str) -> str:
    """One line through SentEval's tokenizer.sed (sed applies each rule to the whole line in turn)."""
    for pattern, repl in _PTB_RULES:
        line = pattern.sub(repl, line, count=1 if pattern.pattern in ("$", "^", "^ *", '^"') else 0)
    return line

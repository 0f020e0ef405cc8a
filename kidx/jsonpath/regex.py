"""Regular expressions in RE2 syntax, matched in time linear in the text (``=~`` filters).

Python's ``re`` backtracks: ``^([a-z0-9]+-?)+!$`` against a 40-character name takes
longer than anyone waits, and a match cannot be interrupted. kubectl's Go regexp (RE2)
cannot be made to backtrack, so kidx follows its syntax and its guarantee: a pattern
compiles to a Thompson NFA, and matching walks the NFA's state sets one character at a
time (each set computed once and cached, as a lazy DFA), so work grows with
``len(text) × len(pattern)`` at worst, never exponentially.

Syntax (RE2's, minus what needs Unicode tables): literals and ``\\`` escapes of
punctuation; ``.``; ``[…]`` and ``[^…]`` classes with ranges, ``\\d \\w \\s`` (and
their negations) and ``[:alpha:]``-style POSIX classes; ``^ $ \\A \\z \\b \\B``;
groups ``(…)``, ``(?:…)``, ``(?P<name>…)``, ``(?<name>…)``; flags ``(?i)``, ``(?m)``,
``(?s)``, ``(?U)`` and ``(?flags:…)``; ``| * + ? {n} {n,} {n,m}`` and their lazy forms
(``*?``). ``\\d``, ``\\w``, ``\\s`` and ``\\b`` are ASCII, as in RE2; ``$`` is the end of
the text (``(?m)`` for lines). Backreferences and look-around do not exist in RE2 and
are refused, as are ``\\p{…}`` classes.
"""

from __future__ import annotations

from enum import Enum

MAX_NESTING = 100  # groups inside groups: parsing and compiling recurse per level
MAX_REPEAT = 1000  # RE2's limit on {n,m}
MAX_PROGRAM = 10_000  # NFA instructions after expanding repetitions
_MAX_CACHED_STATES = 10_000  # then the lazy DFA starts afresh: memory stays bounded

__all__ = ["Regex", "RegexError", "compile_regex"]


class RegexError(ValueError):
    """A pattern outside the supported syntax; the message says what and where."""


# ------------------------------------------------------------------------ characters

_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_DIGITS = ((48, 57),)
_WORD_RANGES = ((48, 57), (65, 90), (95, 95), (97, 122))
_SPACE_RANGES = ((9, 10), (12, 13), (32, 32))  # RE2's \s: \t \n \f \r and space
_POSIX = {
    "alnum": ((48, 57), (65, 90), (97, 122)),
    "alpha": ((65, 90), (97, 122)),
    "ascii": ((0, 127),),
    "blank": ((9, 9), (32, 32)),
    "cntrl": ((0, 31), (127, 127)),
    "digit": _DIGITS,
    "graph": ((33, 126),),
    "lower": ((97, 122),),
    "print": ((32, 126),),
    "punct": ((33, 47), (58, 64), (91, 96), (123, 126)),
    "space": ((9, 13), (32, 32)),
    "upper": ((65, 90),),
    "word": _WORD_RANGES,
    "xdigit": ((48, 57), (65, 70), (97, 102)),
}
_CLASS_ESCAPES = {"d": (_DIGITS, False), "D": (_DIGITS, True), "w": (_WORD_RANGES, False),
                  "W": (_WORD_RANGES, True), "s": (_SPACE_RANGES, False), "S": (_SPACE_RANGES, True)}
_CHAR_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}


class _CharSet:
    """A set of code points: ranges, possibly negated, possibly case-insensitive."""

    __slots__ = ("ranges", "negated", "fold")

    def __init__(self, ranges, negated=False, fold=False):
        self.ranges = tuple(ranges)
        self.negated = negated
        self.fold = fold

    def _has(self, point: int) -> bool:
        return any(low <= point <= high for low, high in self.ranges)

    def __contains__(self, char: str) -> bool:
        found = self._has(ord(char))
        if not found and self.fold:
            found = self._has(ord(char.lower()[0])) or self._has(ord(char.upper()[0]))
        return found != self.negated


class _Any:
    __slots__ = ("newline",)

    def __init__(self, newline: bool):
        self.newline = newline

    def __contains__(self, char: str) -> bool:
        return self.newline or char != "\n"


# ---------------------------------------------------------------------------- parser
# AST: ("set", charset) ("cat", [nodes]) ("alt", [nodes]) ("rep", node, min, max|None)
# ("assert", kind)


class _Parser:
    def __init__(self, pattern: str):
        self.pattern = pattern
        self.pos = 0
        self.depth = 0

    def fail(self, message: str, at: int | None = None) -> RegexError:
        return RegexError(f"{message} at offset {self.pos if at is None else at}")

    def peek(self) -> str | None:
        return self.pattern[self.pos] if self.pos < len(self.pattern) else None

    def take(self) -> str:
        char = self.pattern[self.pos]
        self.pos += 1
        return char

    def parse(self):
        flags = {"i": False, "m": False, "s": False}
        node = self.alternation(flags)
        if self.pos < len(self.pattern):  # only a ")" stops an alternation early
            raise self.fail("unexpected )")
        return node

    def alternation(self, flags):
        branches = [self.concatenation(flags)]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.concatenation(flags))
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def concatenation(self, flags) -> tuple:
        items: list = []
        while True:
            char = self.peek()
            if char is None or char in "|)":
                return ("cat", items)
            if char == "(" and self._flag_group(flags):
                continue
            start = self.pos
            atom = self.atom(flags)
            items.append(self.repetitions(atom, start))

    def _flag_group(self, flags) -> bool:
        """``(?flags)`` alone: changes the flags for the rest of the current group."""
        end = self._flags_end()
        if end is None or self.pattern[end] != ")":
            return False
        self._apply_flags(self.pattern[self.pos + 2 : end], flags)
        self.pos = end + 1
        return True

    def _flags_end(self, allow_empty: bool = False) -> int | None:
        """After ``(?`` and flag letters, the position of what follows them."""
        if not self.pattern.startswith("(?", self.pos):
            return None
        end = self.pos + 2
        while end < len(self.pattern) and self.pattern[end] in "imsU-":
            end += 1
        return end if end < len(self.pattern) and (allow_empty or end > self.pos + 2) else None

    def _apply_flags(self, text: str, flags) -> None:
        value = True
        for char in text:
            if char == "-" and value:
                value = False
            elif char in "ims":
                flags[char] = value
            elif char != "U":  # ungreedy changes which match, never whether one exists
                raise self.fail(f"invalid or unsupported flag {char!r} in group")

    def repetitions(self, atom, start):
        quantified = False
        while True:
            char = self.peek()
            if char in ("*", "+", "?"):
                self.pos += 1
                low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[char]
            elif char == "{" and (bounds := self._braces()) is not None:
                low, high = bounds
            else:
                return atom
            if quantified:  # ``a**``: RE2 refuses it too
                raise self.fail(f"invalid nested repetition operator {self.pattern[start:self.pos]!r}", start)
            quantified = True
            if self.peek() == "?":  # lazy: changes which match is found, never whether one is
                self.pos += 1
            atom = ("rep", atom, low, high)
    def _braces(self):
        """``{n}``, ``{n,}`` or ``{n,m}`` at the cursor, else None (then ``{`` is literal)."""
        end = self.pattern.find("}", self.pos)
        if end < 0:
            return None
        body = self.pattern[self.pos + 1 : end]
        low_text, comma, high_text = body.partition(",")
        if not low_text.isdigit() or not (high_text == "" or high_text.isdigit()) \
                or not low_text.isascii() or not high_text.isascii():
            return None
        low = int(low_text)
        high = int(high_text) if high_text else (None if comma else low)
        if low > MAX_REPEAT or (high is not None and (high > MAX_REPEAT or high < low)):
            raise self.fail(f"invalid repeat count {{{body}}} (at most {MAX_REPEAT})")
        self.pos = end + 1
        return low, high

    def atom(self, flags):
        char = self.take()
        if char == "(":
            return self.group(flags)
        if char == "[":
            return ("set", self.char_class(flags))
        if char == ".":
            return ("set", _Any(flags["s"]))
        if char == "^":
            return ("assert", "bol_m" if flags["m"] else "bol")
        if char == "$":
            return ("assert", "eol_m" if flags["m"] else "eol")
        if char in "*+?":
            raise self.fail(f"missing argument to repetition operator {char!r}", self.pos - 1)
        if char == "\\":
            return self.escape(flags)
        return self.literal(char, flags)

    @staticmethod
    def literal(char: str, flags):
        point = ord(char)
        return ("set", _CharSet(((point, point),), fold=flags["i"]))

    def group(self, flags):
        start = self.pos - 1
        inner = dict(flags)
        if self.pattern.startswith("?", self.pos):
            rest = self.pattern[self.pos + 1 :]
            if rest.startswith(("=", "!", "<=", "<!")):
                raise self.fail("look-around is not supported (RE2 syntax has none)", start)
            if rest.startswith(("P<", "<")):
                close = self.pattern.find(">", self.pos)
                name = self.pattern[self.pattern.find("<", self.pos) + 1 : close]
                if close < 0 or not name or not all(c in _WORD for c in name):
                    raise self.fail("invalid named group", start)
                self.pos = close + 1
            else:
                colon = self._flags_end_from(start)
                if colon is None:
                    raise self.fail("invalid or unsupported group syntax", start)
                self._apply_flags(self.pattern[self.pos + 1 : colon], inner)
                self.pos = colon + 1
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.fail(f"groups nested more than {MAX_NESTING} levels deep", start)
        node = self.alternation(inner)
        self.depth -= 1
        if self.peek() != ")":
            raise self.fail("missing )", start)
        self.pos += 1
        return node

    def _flags_end_from(self, start: int) -> int | None:
        saved, self.pos = self.pos, start
        end = self._flags_end(allow_empty=True)
        self.pos = saved
        return end if end is not None and self.pattern[end] == ":" else None

    def escape(self, flags):
        if self.pos >= len(self.pattern):
            raise self.fail("trailing \\")
        char = self.take()
        if char in _CLASS_ESCAPES:
            ranges, negated = _CLASS_ESCAPES[char]
            return ("set", _CharSet(ranges, negated))
        kinds = {"b": "word", "B": "not_word", "A": "begin", "z": "end"}
        if char in kinds:
            return ("assert", kinds[char])
        return self.literal(self._escaped_char(char), flags)

    def _escaped_char(self, char: str) -> str:
        """The character a non-class escape stands for (inside or outside brackets)."""
        if char in _CHAR_ESCAPES:
            return _CHAR_ESCAPES[char]
        if char == "x":
            return self._hex()
        if char.isdigit():
            if char == "0":
                return "\0"
            raise self.fail("backreferences are not supported (RE2 syntax has none)", self.pos - 2)
        if char.isascii() and not char.isalnum():
            return char  # any escaped punctuation is itself
        raise self.fail(f"invalid or unsupported escape sequence \\{char}", self.pos - 2)

    def _hex(self) -> str:
        if self.peek() == "{":
            end = self.pattern.find("}", self.pos)
            digits = self.pattern[self.pos + 1 : end] if end > 0 else ""
            self.pos = end + 1 if end > 0 else self.pos
        else:
            digits = self.pattern[self.pos : self.pos + 2]
            self.pos += 2
        try:
            point = int(digits, 16)
            if not digits.isascii() or not digits.isalnum():
                raise ValueError
            return chr(point)
        except (ValueError, OverflowError):
            raise self.fail(f"invalid escape sequence \\x{digits}") from None

    def char_class(self, flags) -> _CharSet:
        start = self.pos - 1
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        ranges: list[tuple[int, int]] = []
        first = True
        while True:
            char = self.peek()
            if char is None:
                raise self.fail("missing closing ]", start)
            if char == "]" and not first:
                self.pos += 1
                break
            first = False
            if self.pattern.startswith("[:", self.pos):
                end = self.pattern.find(":]", self.pos)
                name = self.pattern[self.pos + 2 : end] if end > 0 else ""
                negate_posix = name.startswith("^")
                if name.lstrip("^") in _POSIX:
                    posix = _POSIX[name.lstrip("^")]
                    ranges.extend(_complement(posix) if negate_posix else posix)
                    self.pos = end + 2
                    continue
            low = self._class_char(ranges)
            if low is None:
                continue
            if self.peek() == "-" and self.pattern[self.pos + 1 : self.pos + 2] not in ("]", ""):
                self.pos += 1
                high = self._class_char(ranges)
                if high is None:
                    raise self.fail("invalid character class range", start)
                if high < low:
                    raise self.fail(f"invalid character class range {chr(low)}-{chr(high)}", start)
                ranges.append((low, high))
            else:
                ranges.append((low, low))
        return _CharSet(ranges, negated, fold=flags["i"])

    def _class_char(self, ranges) -> int | None:
        """One member's code point, or None when it was a class escape (added to ranges)."""
        char = self.take()
        if char != "\\":
            return ord(char)
        if self.pos >= len(self.pattern):
            raise self.fail("trailing \\")
        escaped = self.take()
        if escaped in _CLASS_ESCAPES:
            class_ranges, negated = _CLASS_ESCAPES[escaped]
            ranges.extend(_complement(class_ranges) if negated else class_ranges)
            return None
        return ord(self._escaped_char(escaped))


def _complement(ranges) -> list[tuple[int, int]]:
    result, low = [], 0
    for start, end in sorted(ranges):
        if start > low:
            result.append((low, start - 1))
        low = max(low, end + 1)
    result.append((low, 0x10FFFF))
    return result


# -------------------------------------------------------------------------- compiler
# Instructions: ("set", matcher) ("split", a, b) ("jmp", a) ("assert", kind) ("match",)


class _Compiler:
    def __init__(self, pattern: str):
        self.pattern = pattern
        self.program: list[list] = []

    def emit(self, instruction: list) -> int:
        if len(self.program) >= MAX_PROGRAM:
            raise RegexError(
                f"regular expression is too large (more than {MAX_PROGRAM} steps once repetitions are expanded)"
            )
        self.program.append(instruction)
        return len(self.program) - 1

    def node(self, node) -> None:
        kind = node[0]
        if kind == "set":
            self.emit(["set", node[1]])
        elif kind == "assert":
            self.emit(["assert", node[1]])
        elif kind == "cat":
            for item in node[1]:
                self.node(item)
        elif kind == "alt":
            jumps = []
            for branch in node[1][:-1]:
                split = self.emit(["split", len(self.program) + 1, None])
                self.node(branch)
                jumps.append(self.emit(["jmp", None]))
                self.program[split][2] = len(self.program)
            self.node(node[1][-1])
            for jump in jumps:
                self.program[jump][1] = len(self.program)
        else:
            _, body, low, high = node
            for _ in range(low):
                self.node(body)
            if high is None:
                loop = self.emit(["split", len(self.program) + 1, None])
                self.node(body)
                self.emit(["jmp", loop])
                self.program[loop][2] = len(self.program)
            else:
                splits = []
                for _ in range(high - low):
                    splits.append(self.emit(["split", len(self.program) + 1, None]))
                    self.node(body)
                for split in splits:
                    self.program[split][2] = len(self.program)


# --------------------------------------------------------------------------- matcher

_START, _END, _NEWLINE, _WORDCHAR, _OTHER = range(5)


def _category(char: str) -> int:
    if char == "\n":
        return _NEWLINE
    return _WORDCHAR if char in _WORD else _OTHER


def _holds(kind: str, before: int, after: int) -> bool:
    if kind == "bol" or kind == "begin":
        return before == _START
    if kind == "eol" or kind == "end":
        return after == _END
    if kind == "bol_m":
        return before in (_START, _NEWLINE)
    if kind == "eol_m":
        return after in (_END, _NEWLINE)
    boundary = (before == _WORDCHAR) != (after == _WORDCHAR)
    return boundary if kind == "word" else not boundary


class _Unknown(Enum):
    """A transition not computed yet (None is a known one: the match ends)."""

    UNKNOWN = 0


_UNKNOWN = _Unknown.UNKNOWN


class _State:
    """A set of NFA positions before their empty moves, and what the last character was."""

    __slots__ = ("positions", "before", "next")

    def __init__(self, positions: frozenset[int], before: int):
        self.positions = positions
        self.before = before
        self.next: dict[str, _State | None] = {}  # None: a match ends before that character


class Regex:
    """A compiled pattern; ``search(text)`` says whether it matches anywhere in ``text``."""

    def __init__(self, pattern: str, program: list):
        self.pattern = pattern
        self._program = [tuple(instruction) for instruction in program]
        self._states: dict[tuple[frozenset[int], int], _State] = {}
        self._start = self._state(frozenset({0}), _START)

    def _state(self, positions: frozenset[int], before: int) -> _State:
        key = (positions, before)
        state = self._states.get(key)
        if state is None:
            if len(self._states) >= _MAX_CACHED_STATES:
                self._states.clear()
            state = self._states[key] = _State(positions, before)
        return state

    def _closure(self, positions, before: int, after: int) -> tuple[list[int], bool]:
        """Positions reachable without reading a character; whether MATCH is among them."""
        program = self._program
        seen: set[int] = set()
        consuming: list[int] = []
        stack = sorted(positions, reverse=True)
        while stack:
            pc = stack.pop()
            if pc in seen:
                continue
            seen.add(pc)
            instruction = program[pc]
            op = instruction[0]
            if op == "set":
                consuming.append(pc)
            elif op == "match":
                return consuming, True
            elif op == "jmp":
                stack.append(instruction[1])
            elif op == "split":
                stack.extend((instruction[2], instruction[1]))
            elif _holds(instruction[1], before, after):
                stack.append(pc + 1)
        return consuming, False

    def _step(self, state: _State, char: str) -> _State | None:
        after = _category(char)
        consuming, matched = self._closure(state.positions, state.before, after)
        if matched:
            return None
        program = self._program
        positions = {pc + 1 for pc in consuming if char in program[pc][1]}
        positions.add(0)  # a search: a match may also start at the next position
        return self._state(frozenset(positions), after)

    def search(self, text: str) -> bool:
        state = self._start
        for char in text:
            following = state.next.get(char, _UNKNOWN)
            if following is _UNKNOWN:
                following = self._step(state, char)
                if len(state.next) < 256:
                    state.next[char] = following
            if following is None:
                return True
            state = following
        return self._closure(state.positions, state.before, _END)[1]

    def __repr__(self) -> str:
        return f"Regex({self.pattern!r})"


def compile_regex(pattern: str) -> Regex:
    """Parse and compile ``pattern``; RegexError says what is wrong and where."""
    compiler = _Compiler(pattern)
    compiler.node(_Parser(pattern).parse())
    compiler.emit(["match"])
    return Regex(pattern, compiler.program)

"""Which characters show nothing: the one rule that code, chunk names and paths (where such a character is refused
wherever it stands) and prose numbers (where it is refused between digits) share.

A character shows nothing if it is a format character (Unicode category Cf: zero-width space and joiners, soft
hyphen, bidi controls, the tag characters U+E0000-E007F), a line or paragraph separator (U+2028, U+2029: an editor
breaks the line there, Python does not), or default-ignorable (Unicode's Default_Ignorable_Code_Point: the Hangul
fillers U+115F, U+1160, U+3164 and U+FFA0, variation selectors, the combining grapheme joiner)."""

from __future__ import annotations

import unicodedata

SHOWS_NOTHING_CATEGORIES = {"Cf", "Zl", "Zp"}
# Default_Ignorable_Code_Point outside category Cf (DerivedCoreProperties.txt); stable since Unicode 6
IGNORABLE_RANGES = ((0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F), (0x3164, 0x3164),
                    (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0xE0000, 0xE0FFF))


# the bidi controls that reorder the text after them: embeddings, overrides, isolates and the pops that end them
REORDERING = ((0x202A, 0x202E), (0x2066, 0x2069))


def reorders(character: str) -> bool:
    return any(low <= ord(character) <= high for low, high in REORDERING)


def shows_nothing(character: str) -> bool:
    code = ord(character)
    if code < 0xAD:  # ASCII and Latin-1 up to the soft hyphen: all visible or controls (refused elsewhere)
        return False
    return (unicodedata.category(character) in SHOWS_NOTHING_CATEGORIES
            or any(low <= code <= high for low, high in IGNORABLE_RANGES))


def unseen(text: str) -> list[tuple[int, str]]:
    """(offset, character) of each character of text that shows nothing, in order; one look at each character
    (none at all for ASCII text)."""
    if text.isascii():
        return []
    return [(offset, character) for offset, character in enumerate(text) if shows_nothing(character)]


def first_unseen(text: str) -> str | None:
    if text.isascii():
        return None
    return next((character for character in text if shows_nothing(character)), None)


def without_unseen(text: str) -> str:
    """The text as a reader sees it: without the characters that show nothing."""
    return text if text.isascii() else "".join(character for character in text if not shows_nothing(character))


def escaped(text: str) -> str:
    """The text with each character that shows nothing written as its escape (\\u202e), so that a message shows it."""
    if text.isascii():
        return text
    return "".join((f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}") if shows_nothing(c) else c
                   for c in text)


def code_point(character: str) -> str:
    """U+202E (RIGHT-TO-LEFT OVERRIDE): a character named as a message names it."""
    return f"U+{ord(character):04X} ({unicodedata.name(character, 'unnamed')})"

package notify

import (
	"strings"
	"unicode"
)

// ASCII transliterates s to printable ASCII for an email subject, which
// SNS takes only as ASCII with no line breaks or control characters (see
// MaxSubjectLen). Latin letters lose their accents ("Zoë" -> "Zoe",
// "für" -> "fur"), ligatures and special letters are spelt out
// ("ß" -> "ss", "æ" -> "ae", "ø" -> "o", "ł" -> "l"), typographic quotes,
// dashes, spaces and ellipses become their ASCII forms, and full-width
// forms their ASCII letters. Line breaks and tabs become spaces; other
// control characters, combining marks and every other character (CJK,
// Cyrillic, emoji...) are dropped. Runs of spaces become one, and the
// result is trimmed.
//
// It is a table, not Unicode normalization: golang.org/x/text is no
// dependency of this module, and the table covers Latin-1, Latin
// Extended-A and the letters of Romanian that are outside both.
func ASCII(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false // a space is owed before the next character
	put := func(t string) {
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteString(t)
	}
	for _, r := range s {
		switch {
		case r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f' || isSpace(r):
			space = true
		case r > 0x20 && r < 0x7f:
			put(string(r))
		case r < 0x20 || r == 0x7f || unicode.Is(unicode.Mn, r):
			// control character or combining mark: dropped
		case r >= 0xff01 && r <= 0xff5e: // full-width ASCII
			put(string(r - 0xfee0))
		default:
			if t := latin(r); t != "" {
				put(t)
			}
		}
	}
	return b.String()
}

// isSpace reports the Unicode spaces that are written as one ASCII space.
func isSpace(r rune) bool {
	return r == 0xa0 || r >= 0x2000 && r <= 0x200a || r == 0x202f || r == 0x205f || r == 0x3000 ||
		r == 0x2028 || r == 0x2029 || r == 0x85
}

// latin1 maps U+00C0..U+00FF, one entry per code point.
var latin1 = [...]string{
	"A", "A", "A", "A", "A", "A", "AE", "C", "E", "E", "E", "E", "I", "I", "I", "I", // C0
	"D", "N", "O", "O", "O", "O", "O", "x", "O", "U", "U", "U", "U", "Y", "Th", "ss", // D0
	"a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i", // E0
	"d", "n", "o", "o", "o", "o", "o", "/", "o", "u", "u", "u", "u", "y", "th", "y", // F0
}

// latinExtA maps U+0100..U+017F, one entry per code point.
var latinExtA = [...]string{
	"A", "a", "A", "a", "A", "a", "C", "c", "C", "c", "C", "c", "C", "c", "D", "d", // 100
	"D", "d", "E", "e", "E", "e", "E", "e", "E", "e", "E", "e", "G", "g", "G", "g", // 110
	"G", "g", "G", "g", "H", "h", "H", "h", "I", "i", "I", "i", "I", "i", "I", "i", // 120
	"I", "i", "IJ", "ij", "J", "j", "K", "k", "k", "L", "l", "L", "l", "L", "l", "L", // 130
	"l", "L", "l", "N", "n", "N", "n", "N", "n", "n", "N", "n", "O", "o", "O", "o", // 140
	"O", "o", "OE", "oe", "R", "r", "R", "r", "R", "r", "S", "s", "S", "s", "S", "s", // 150
	"S", "s", "T", "t", "T", "t", "T", "t", "U", "u", "U", "u", "U", "u", "U", "u", // 160
	"U", "u", "U", "u", "W", "w", "Y", "y", "Y", "Z", "z", "Z", "z", "Z", "z", "s", // 170
}

// other maps the rest that has an ASCII form: Latin-1 symbols,
// Romanian letters, typographic punctuation.
var other = map[rune]string{
	0xa1: "!", 0xa9: "(C)", 0xab: "<<", 0xae: "(R)", 0xb4: "'", 0xb7: ".",
	0xb2: "2", 0xb3: "3", 0xb9: "1", 0xbb: ">>", 0xbc: "1/4", 0xbd: "1/2", 0xbe: "3/4", 0xbf: "?",
	0x0192: "f", 0x0218: "S", 0x0219: "s", 0x021a: "T", 0x021b: "t",
	0x2010: "-", 0x2011: "-", 0x2012: "-", 0x2013: "-", 0x2014: "-", 0x2015: "-", 0x2212: "-",
	0x2018: "'", 0x2019: "'", 0x201a: "'", 0x201b: "'", 0x2032: "'",
	0x201c: `"`, 0x201d: `"`, 0x201e: `"`, 0x201f: `"`, 0x2033: `"`,
	0x2039: "<", 0x203a: ">", 0x2022: "*", 0x2026: "...", 0x2044: "/",
	0x20ac: "EUR", 0x2122: "(TM)",
}

// latin is the ASCII form of a non-ASCII rune, "" when it has none.
func latin(r rune) string {
	switch {
	case r >= 0xc0 && r <= 0xff:
		return latin1[r-0xc0]
	case r >= 0x100 && r <= 0x17f:
		return latinExtA[r-0x100]
	}
	return other[r]
}

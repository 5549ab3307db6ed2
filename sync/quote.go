package sync

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// QuotePath is a path as git names it in a diff or in `git status`: as it
// is, unless it holds a byte that would break a line or steer a terminal,
// and then C-quoted the way git's quote_c_style quotes it ("a\nb", with
// \a \b \t \n \v \f \r \" \\ and octal for the other control bytes), which
// `git apply` reads back. Other bytes of 0x80 and above stay as they are,
// as with core.quotePath=false, so that non-ASCII names stay readable;
// except the bytes that are not UTF-8, the C1 controls (U+0080 to
// U+009F, which some terminals obey) and the bidirectional overrides
// (U+202A to U+202E, U+2066 to U+2069, which reorder what a reviewer
// sees), which are octal too, as core.quotePath=true has them.
func QuotePath(p string) string {
	if !needsQuote(p) {
		return p
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		switch {
		case r < utf8.RuneSelf:
			if esc := cEscape(byte(r)); esc != "" {
				b.WriteString(esc)
			} else {
				b.WriteByte(byte(r))
			}
		case HiddenRune(r, size):
			for _, c := range []byte(p[i : i+size]) {
				fmt.Fprintf(&b, `\%03o`, c)
			}
		default:
			b.WriteString(p[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
	return b.String()
}

// needsQuote reports whether QuotePath quotes p.
func needsQuote(p string) bool {
	for i := 0; i < len(p); {
		c := p[i]
		if c < utf8.RuneSelf {
			if cEscape(c) != "" {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(p[i:])
		if HiddenRune(r, size) {
			return true
		}
		i += size
	}
	return false
}

// cEscape is an ASCII byte as quote_c_style writes it inside quotes, or
// "" for a byte that needs no escape.
func cEscape(c byte) string {
	switch c {
	case '\a':
		return `\a`
	case '\b':
		return `\b`
	case '\t':
		return `\t`
	case '\n':
		return `\n`
	case '\v':
		return `\v`
	case '\f':
		return `\f`
	case '\r':
		return `\r`
	case '"':
		return `\"`
	case '\\':
		return `\\`
	}
	if c < 0x20 || c == 0x7f {
		return fmt.Sprintf(`\%03o`, c)
	}
	return ""
}

// HiddenRune reports whether the rune r outside ASCII, of size bytes (a
// utf8.RuneError of 1 byte is a byte that is not UTF-8), must not reach a
// terminal as it is: a byte that is not UTF-8, a C1 control, or a
// bidirectional override or isolate. QuotePath quotes them, and the CLI
// shows them escaped in a file's lines.
func HiddenRune(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Visible is text as prsm shows it to a person or an agent's model:
// control bytes in caret notation (^[ for ESC, ^M for CR, ^J for a
// newline) but those in keep, the runes HiddenRune names as <U+202E>,
// and \xff for a byte that is not UTF-8.
func Visible(s, keep string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r < 0x20 || r == 0x7f:
			if strings.ContainsRune(keep, r) {
				b.WriteRune(r)
			} else {
				b.WriteByte('^')
				b.WriteByte(byte(r) ^ 0x40)
			}
		case r < utf8.RuneSelf || !HiddenRune(r, size):
			b.WriteString(s[i : i+size])
		case r == utf8.RuneError:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		default:
			fmt.Fprintf(&b, "<U+%04X>", r)
		}
		i += size
	}
	return b.String()
}

package sync

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/prsm-dev/prsm/sync/linediff"
)

// FuzzLineRanges checks record computation on any pair of contents: the
// ranges of a record (LineRanges), its binary flag (IsBinary) and its diff
// (UnifiedDiff).
//
//   - Ranges are 1-based, inclusive, in bounds, sorted and separated by at
//     least one unchanged line; the lines outside the removed ranges of old
//     equal, in order, the lines outside the added ranges of new (so the
//     counts add up: len(old) - removed == len(new) - added).
//   - Equal contents give no range, different contents at least one.
//   - On small inputs the change is minimal (as many changed lines as the
//     textbook LCS says) or else exactly what `git diff` shows, since git's
//     diff, which prsm's follows, is not always minimal.
//   - The hunks, applied to old, give new; so does the unified diff, parsed
//     and applied strictly here (every context and removed line must match).
//   - Content that is not binary survives a JSON round trip byte for byte
//     (text is served inline as a JSON string), and IsBinary is git's NUL
//     rule plus UTF-8 validity.
func FuzzLineRanges(f *testing.F) {
	f.Add([]byte(""), []byte(""), uint8(3), "f.txt")
	f.Add([]byte("a\nb\nc\n"), []byte("a\nB\nc\n"), uint8(3), "f.txt")
	f.Add([]byte("a\nb"), []byte("a\nb\n"), uint8(0), "f.txt")
	f.Add([]byte("a\nb\n"), []byte("a\nb"), uint8(1), "my file.txt")
	f.Add([]byte("1\n2\n3\n4\n5\n6\n7\n8\n9\n"), []byte("1\nX\n3\n4\n5\n6\n7\nY\n9\n"), uint8(2), "q\"x\n.txt")
	f.Add([]byte("}\n}\n\n}\n"), []byte("\n}\n}\n}\n\n"), uint8(3), "\x01name")
	f.Add([]byte("a\r\nb\r\n"), []byte("a\nb\r\n"), uint8(3), "日本.txt")
	f.Add([]byte("x\x00y\n"), []byte("x\n"), uint8(3), "bin")
	f.Add([]byte("\xff\xfe"), []byte("ok\n"), uint8(3), "bad utf8 \xff")
	f.Add([]byte("a\nb\nc\nd\n"), []byte("d\nc\nb\na\n"), uint8(5), "rev")

	f.Fuzz(func(t *testing.T, old, new []byte, ctx uint8, name string) {
		if len(old)+len(new) > 64<<10 {
			t.Skip()
		}
		a, b := splitLines(old), splitLines(new)

		added, removed := LineRanges(old, new)
		if added == nil || removed == nil {
			t.Fatalf("nil ranges: %v %v", added, removed)
		}
		checkRanges(t, a, b, added, removed)
		if len(a)-rangeLines(removed) != len(b)-rangeLines(added) {
			t.Fatalf("counts do not add up: %d-%d != %d-%d", len(a), rangeLines(removed), len(b), rangeLines(added))
		}
		if bytes.Equal(old, new) != (len(added) == 0 && len(removed) == 0) {
			t.Fatalf("equal=%v but ranges %v %v", bytes.Equal(old, new), added, removed)
		}
		if len(a) <= 200 && len(b) <= 200 {
			checkMinimalOrGit(t, old, new, added, removed)
		}

		// The hunks themselves rebuild new from old.
		var rebuilt []string
		pos := 0
		for _, h := range linediff.Diff(linediff.Split(old), linediff.Split(new)) {
			if h.OldStart < pos || h.OldCount < 0 || h.NewCount < 0 {
				t.Fatalf("bad hunk %+v after %d", h, pos)
			}
			rebuilt = append(rebuilt, a[pos:h.OldStart]...)
			rebuilt = append(rebuilt, b[h.NewStart:h.NewStart+h.NewCount]...)
			pos = h.OldStart + h.OldCount
		}
		rebuilt = append(rebuilt, a[pos:]...)
		if got := strings.Join(rebuilt, ""); got != string(new) {
			t.Fatalf("hunks rebuild %q, want %q", got, new)
		}

		context := int(ctx % 8)
		diff := UnifiedDiff("a/"+name, "b/"+name, old, new, context)
		if bytes.Equal(old, new) {
			if diff != "" {
				t.Fatalf("diff of equal contents: %q", diff)
			}
		} else {
			got, err := applyUnified(diff, old)
			if err != nil {
				t.Fatalf("diff does not apply: %v\n%s", err, diff)
			}
			if !bytes.Equal(got, new) {
				t.Fatalf("diff applied gives %q, want %q\n%s", got, new, diff)
			}
			checkDiffName(t, diff, name)
		}

		for _, c := range [][]byte{old, new} {
			want := bytes.IndexByte(c[:min(len(c), 8000)], 0) >= 0 || !utf8.Valid(c)
			if IsBinary(c) != want {
				t.Fatalf("IsBinary(%q) = %v, want %v", c, !want, want)
			}
			if !want {
				j, err := json.Marshal(string(c))
				if err != nil {
					t.Fatal(err)
				}
				var back string
				if err := json.Unmarshal(j, &back); err != nil || back != string(c) {
					t.Fatalf("text %q does not survive JSON: %q %v", c, back, err)
				}
			}
		}
	})
}

// checkDiffName checks the --- and +++ header lines: one line each, the
// name as is when it is plain, else quoted the way git quotes (which
// strconv.Unquote reads back, for valid UTF-8).
func checkDiffName(t *testing.T, diff, name string) {
	t.Helper()
	lines := strings.SplitAfterN(diff, "\n", 3)
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") || !strings.HasPrefix(lines[2], "@@ -") {
		t.Fatalf("bad header: %q", diff)
	}
	for i, prefix := range []string{"a/", "b/"} {
		got := strings.TrimSuffix(lines[i][4:], "\n")
		switch {
		case strings.HasPrefix(got, `"`):
			if !utf8.ValidString(name) {
				continue
			}
			u, err := strconv.Unquote(got)
			if err != nil || u != prefix+name {
				t.Fatalf("quoted name %q reads back as %q (%v), want %q", got, u, err, prefix+name)
			}
		case strings.HasSuffix(got, "\t"):
			if strings.TrimSuffix(got, "\t") != prefix+name || !strings.Contains(name, " ") {
				t.Fatalf("name %q printed as %q", name, got)
			}
		default:
			if got != prefix+name {
				t.Fatalf("name %q printed as %q", name, got)
			}
		}
	}
}

// applyUnified applies a unified diff (as UnifiedDiff writes it) to old,
// strictly: hunks in order, header counts exact, every context and removed
// line equal to old's.
func applyUnified(diff string, old []byte) ([]byte, error) {
	a := splitLines(old)
	lines := strings.SplitAfter(diff, "\n")
	if lines[len(lines)-1] != "" {
		return nil, fmt.Errorf("diff does not end with a newline")
	}
	lines = lines[:len(lines)-1]
	if len(lines) < 3 {
		return nil, fmt.Errorf("short diff")
	}
	lines = lines[2:] // --- and +++
	var out []string
	pos := 0 // next line of a to copy
	for i := 0; i < len(lines); {
		var ost, oc, nst, nc int
		if err := parseHunkHeader(lines[i], &ost, &oc, &nst, &nc); err != nil {
			return nil, err
		}
		i++
		start := ost - 1 // 0-based first line of the hunk in a
		if oc == 0 {
			start = ost // an empty side names the line before
		}
		if start < pos || start > len(a) {
			return nil, fmt.Errorf("hunk at %d overlaps or is out of bounds (pos %d, %d lines)", start, pos, len(a))
		}
		if want := nst - 1; nc > 0 && want != len(out)+(start-pos) {
			return nil, fmt.Errorf("new start %d, at %d", nst, len(out)+(start-pos)+1)
		}
		out = append(out, a[pos:start]...)
		pos = start
		gotOld, gotNew := 0, 0
		for i < len(lines) && !strings.HasPrefix(lines[i], "@@ ") {
			l := lines[i]
			i++
			if len(l) < 2 {
				return nil, fmt.Errorf("bad line %q", l)
			}
			text := l[1:]
			if i < len(lines) && lines[i] == "\\ No newline at end of file\n" {
				text = strings.TrimSuffix(text, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if pos >= len(a) || a[pos] != text {
					return nil, fmt.Errorf("line %d is not %q", pos+1, text)
				}
				pos++
				gotOld++
				if l[0] == ' ' {
					out = append(out, text)
					gotNew++
				}
			case '+':
				out = append(out, text)
				gotNew++
			default:
				return nil, fmt.Errorf("bad line %q", l)
			}
		}
		if gotOld != oc || gotNew != nc {
			return nil, fmt.Errorf("hunk counts -%d +%d, header says -%d +%d", gotOld, gotNew, oc, nc)
		}
	}
	out = append(out, a[pos:]...)
	return []byte(strings.Join(out, "")), nil
}

// parseHunkHeader reads "@@ -s[,c] +s[,c] @@\n"; a missing count is 1.
func parseHunkHeader(l string, ost, oc, nst, nc *int) error {
	rest, ok := strings.CutPrefix(l, "@@ -")
	if !ok {
		return fmt.Errorf("not a hunk header: %q", l)
	}
	rest, ok = strings.CutSuffix(rest, " @@\n")
	if !ok {
		return fmt.Errorf("not a hunk header: %q", l)
	}
	oldPart, newPart, ok := strings.Cut(rest, " +")
	if !ok {
		return fmt.Errorf("not a hunk header: %q", l)
	}
	side := func(s string, start, count *int) error {
		a, b, has := strings.Cut(s, ",")
		var err error
		if *start, err = strconv.Atoi(a); err != nil {
			return err
		}
		*count = 1
		if has {
			if *count, err = strconv.Atoi(b); err != nil {
				return err
			}
		}
		return nil
	}
	if err := side(oldPart, ost, oc); err != nil {
		return fmt.Errorf("hunk header %q: %v", l, err)
	}
	if err := side(newPart, nst, nc); err != nil {
		return fmt.Errorf("hunk header %q: %v", l, err)
	}
	return nil
}

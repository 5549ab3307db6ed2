package feedback

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/sync"
)

// Bounds of one message: the user's words of one item (the rest is in
// `prsm changes show`), an excerpt's lines and their width, the groups of
// files a decision of many names.
const (
	maxWords        = 4 << 10
	maxExcerptLines = 8
	maxLineWidth    = 160
	maxPathGroups   = 6
)

// Message is the one message a hook's answer carries to the agent's
// model for items: for each, the file and the lines, what was decided,
// a short excerpt of the hunk and the user's words. Control bytes of
// the words and the excerpt are escaped (sync.Visible), names quoted as
// git quotes them.
func Message(items []*prsm.Feedback) string {
	if len(items) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "prsm: the user reviewed your changes (%s). Take this into account before you go on:\n", plural(len(items), "item"))
	for i, f := range items {
		fmt.Fprintf(&b, "%d. %s\n", i+1, headline(f))
		if f.Excerpt != "" {
			b.WriteString("   The hunk:\n")
			for _, l := range strings.Split(strings.TrimRight(f.Excerpt, "\n"), "\n") {
				b.WriteString("     " + l + "\n")
			}
		}
		if words := strings.TrimSpace(f.Text); words != "" {
			if len(words) > maxWords {
				words = words[:maxWords] + fmt.Sprintf(" [... %d more bytes]", len(words)-maxWords)
			}
			b.WriteString("   The user says: " + indent(sync.Visible(words, "\n\t")) + "\n")
		}
	}
	return b.String()
}

// headline is an item's first line: where, and what was decided.
func headline(f *prsm.Feedback) string {
	where := "The session"
	if f.Path != "" {
		where = f.Path
		if f.RecordID != "" {
			where = sync.QuotePath(f.Path)
		}
		if f.Lines != "" {
			where += ", lines " + f.Lines
		}
	}
	if f.RecordID != "" {
		where += " (change " + f.RecordID + ")"
	}
	switch {
	case f.Kind == prsm.FeedbackComment:
		return where + ": the user commented (no decision; the change stays as it is)."
	case strings.HasPrefix(f.Decision, "rewound"):
		return where + ": the user " + f.Decision + ". What you wrote since is gone from the files; read them again before you edit them."
	case strings.HasPrefix(f.Decision, DecidedReject) && f.RecordID == "":
		return where + ": the user " + f.Decision + ". prsm took them out of the files; read them again before you edit them."
	case strings.HasPrefix(f.Decision, DecidedReject):
		return where + ": the user " + f.Decision + ". prsm took it out of the file; read the file again before you edit it."
	}
	return where + ": the user " + f.Decision + "."
}

// indent indents the lines after the first of s under "   The user says: ".
func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n   ") }

// SummarizePaths names the files of a decision of many, in a few groups:
// a directory that holds several of them is one entry with its count
// ("node_modules/… (1,980 files)"), the rest by name, the largest first,
// at most maxPathGroups and then how many more. total counts them all,
// records may list fewer.
func SummarizePaths(records []*prsm.Record, total int) string {
	groups := map[string]int{}
	single := map[string]string{}
	for _, r := range records {
		top, _, nested := strings.Cut(r.RelPath, "/")
		key := top
		if !nested {
			key = r.RelPath
		}
		groups[key]++
		single[key] = r.RelPath
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if groups[keys[i]] != groups[keys[j]] {
			return groups[keys[i]] > groups[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var parts []string
	shown := 0
	for _, k := range keys {
		if len(parts) == maxPathGroups {
			break
		}
		if groups[k] == 1 {
			parts = append(parts, sync.QuotePath(single[k]))
		} else {
			parts = append(parts, fmt.Sprintf("%s/… (%s)", sync.QuotePath(k), plural(groups[k], "file")))
		}
		shown += groups[k]
	}
	if rest := total - shown; rest > 0 {
		parts = append(parts, "and "+thousands(rest)+" more "+pluralWord(rest, "file"))
	}
	return strings.Join(parts, ", ")
}

// hunkLines are the lines of r's hunks hunks (all of them when none
// named), on the side the agent wrote: "12-18", several joined by ", ".
func hunkLines(r *prsm.Record, hunks []int) string {
	var out []string
	for _, h := range r.Hunks {
		if len(hunks) > 0 && !contains(hunks, h.Index) {
			continue
		}
		lo, n := h.NewStart, h.NewLines
		if n == 0 {
			lo, n = h.OldStart, max(h.OldLines, 1)
		}
		if n <= 1 {
			out = append(out, fmt.Sprint(lo))
		} else {
			out = append(out, fmt.Sprintf("%d-%d", lo, lo+n-1))
		}
		if len(out) == 4 {
			out = append(out, "…")
			break
		}
	}
	return strings.Join(out, ", ")
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// excerpt is a short excerpt of r's hunks hunks (all when none named):
// their removed lines, then their added ones, from the record's two
// sides (which stay as they were whatever was decided).
func (q *Queue) excerpt(ctx context.Context, r *prsm.Record, hunks []int) string {
	var out []string
	for _, h := range r.Hunks {
		if len(hunks) > 0 && !contains(hunks, h.Index) {
			continue
		}
		out = append(out, q.sideLines(ctx, r, "before", "-", h.OldStart, h.OldStart+h.OldLines-1)...)
		out = append(out, q.sideLines(ctx, r, "after", "+", h.NewStart, h.NewStart+h.NewLines-1)...)
	}
	return bounded(out)
}

// linesExcerpt is the lines lo..hi of r's new side.
func (q *Queue) linesExcerpt(ctx context.Context, r *prsm.Record, lo, hi int) string {
	return bounded(q.sideLines(ctx, r, "after", " ", lo, hi))
}

// sideLines are lines lo..hi (from 1) of r's side, each after mark and
// shown as prsm shows text (control bytes escaped, tabs kept), cut to
// maxLineWidth; none for a binary record or an empty span.
func (q *Queue) sideLines(ctx context.Context, r *prsm.Record, side, mark string, lo, hi int) []string {
	if q.Content == nil || r.Binary || hi < lo || lo < 1 {
		return nil
	}
	b, err := q.Content(ctx, r.SessionID, r.ID, side)
	if err != nil {
		return nil
	}
	lines := strings.SplitAfter(string(b), "\n")
	var out []string
	for n := lo; n <= hi && n <= len(lines) && len(out) <= maxExcerptLines; n++ {
		line := sync.Visible(strings.TrimSuffix(lines[n-1], "\n"), "\t")
		if len(line) > maxLineWidth {
			line = line[:maxLineWidth] + "…"
		}
		out = append(out, mark+line)
	}
	return out
}

// bounded joins lines, at most maxExcerptLines and how many more.
func bounded(lines []string) string {
	if more := len(lines) - maxExcerptLines; more > 0 {
		lines = append(lines[:maxExcerptLines:maxExcerptLines], fmt.Sprintf("(… %s more)", plural(more, "line")))
	}
	return strings.Join(lines, "\n")
}

// plural is "1 file", "2,000 files".
func plural(n int, word string) string { return thousands(n) + " " + pluralWord(n, word) }

func pluralWord(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// thousands writes n with commas: 2,000.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

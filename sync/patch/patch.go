// Package patch applies the hunks of a change that a user keeps, through
// go-gitdiff: a package of its own so that sync, which the lean hook
// binary links for its atomic writer, does not bring go-gitdiff (and
// with it package net) along.
package patch

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/prsm-dev/prsm/sync"
)

// A record's hunks as a patch. The patch of a change is its unified diff
// without context (`git diff -U0`), so each of its fragments is one hunk
// of the record (RangesAndHunks numbers them alike); go-gitdiff parses it
// and applies the fragments a user keeps to the old content with its
// strict apply, which checks every line it removes. bluekeyes/go-gitdiff
// rather than a splice of our own: its parser and strict apply are tested
// against git's, and a patch prsm shows is one it can apply.

// HunkFragments parses the -U0 patch of old → new into its fragments, one
// per hunk, in file order; none when old and new are equal.
func HunkFragments(old, new []byte) ([]*gitdiff.TextFragment, error) {
	patch := sync.UnifiedDiff("a/f", "b/f", old, new, 0)
	if patch == "" {
		return nil, nil
	}
	files, _, err := gitdiff.Parse(strings.NewReader("diff --git a/f b/f\n" + patch))
	if err != nil {
		return nil, fmt.Errorf("parse hunks: %w", err)
	}
	if len(files) != 1 || files[0].IsBinary {
		return nil, fmt.Errorf("parse hunks: %d files in one change's patch", len(files))
	}
	return files[0].TextFragments, nil
}

// ApplyHunks applies to old the hunks of old → new that keep selects (by
// index), and only those: keeping all gives new, none gives old. A
// conflict (the patch does not fit old) is an error; it cannot happen for
// the old and new the patch came from.
func ApplyHunks(old, new []byte, keep func(index int) bool) ([]byte, error) {
	frags, err := HunkFragments(old, new)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	a := gitdiff.NewTextApplier(&out, bytes.NewReader(old))
	for i, f := range frags {
		if !keep(i) {
			continue
		}
		g := *f
		if g.OldLines == 0 && len(old) > 0 {
			// A pure insertion's header names the line before it (0 at
			// the top), as git writes -U0 headers; go-gitdiff's applier
			// takes the position as the line to insert before (and 0 as
			// "create the file"), so it is moved one down.
			g.OldPosition++
		}
		if g.NewLines == 0 && g.NewPosition == 0 {
			// A deletion at the top is "+0,0", which go-gitdiff reads as
			// the whole file deleted and checks nothing follows; whether
			// it does is the other fragments' business.
			g.NewPosition = 1
		}
		if err := a.ApplyFragment(&g); err != nil {
			return nil, fmt.Errorf("apply hunk %d: %w", i, err)
		}
	}
	if err := a.Close(); err != nil {
		return nil, fmt.Errorf("apply hunks: %w", err)
	}
	return out.Bytes(), nil
}

package workspace

import (
	"path"
	"sort"
	"strings"
)

// PathOrder orders n operations on workspace or worktree paths when some
// of those paths lie inside others: a directory replaced by a file of its
// name, or a file by a directory, in one tool call (or the undoing of
// one). The paths whose operations leave them absent (gone, asked of a
// path's last operation) come first, the deepest first; then the others,
// the shallowest first. So a directory is emptied (and pruned) before a
// file takes its name, and a file is gone before a directory takes it. The
// operations of one path keep their order. It returns nil when no path
// lies inside another: then any order, or all at once, works.
func PathOrder(n int, rel func(i int) string, gone func(i int) bool) []int {
	paths := make(map[string][]int, n)
	var names []string
	for i := 0; i < n; i++ {
		r := rel(i)
		if paths[r] == nil {
			names = append(names, r)
		}
		paths[r] = append(paths[r], i)
	}
	nested := false
	for _, p := range names {
		for d := path.Dir(p); d != "." && d != "/" && !nested; d = path.Dir(d) {
			nested = paths[d] != nil
		}
	}
	if !nested {
		return nil
	}
	depth := func(p string) int { return strings.Count(p, "/") }
	removes := func(p string) bool { is := paths[p]; return gone(is[len(is)-1]) }
	sort.SliceStable(names, func(a, b int) bool {
		ra, rb := removes(names[a]), removes(names[b])
		switch {
		case ra != rb:
			return ra
		case ra:
			return depth(names[a]) > depth(names[b])
		}
		return depth(names[a]) < depth(names[b])
	})
	order := make([]int, 0, n)
	for _, p := range names {
		order = append(order, paths[p]...)
	}
	return order
}

// InPathOrder runs fn for 0..n-1: one after the other in PathOrder when
// paths nest, else all at once (parallel). It returns each one's error.
func InPathOrder(n int, rel func(i int) string, gone func(i int) bool, fn func(i int) error) []error {
	return RunInOrder(PathOrder(n, rel, gone), n, fn)
}

// RunInOrder runs fn for 0..n-1 one after the other in order, or all at
// once (parallel) when order is nil. It returns each one's error.
func RunInOrder(order []int, n int, fn func(i int) error) []error {
	if order == nil {
		return Parallel(n, fn)
	}
	errs := make([]error, n)
	for _, i := range order {
		errs[i] = fn(i)
	}
	return errs
}

// PathOrdered is items in PathOrder where their paths (rel) nest, and as
// they are otherwise; gone says whether an item leaves its path absent.
func PathOrdered[T any](items []T, rel func(T) string, gone func(T) bool) []T {
	order := PathOrder(len(items), func(i int) string { return rel(items[i]) }, func(i int) bool { return gone(items[i]) })
	if order == nil {
		return items
	}
	out := make([]T, len(items))
	for k, i := range order {
		out[k] = items[i]
	}
	return out
}

package worktree

import (
	"context"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	stdsync "sync"

	"github.com/prsm-dev/prsm/internal/bigfile"
)

// Checkout conversions. git stores some files other than it checks them
// out: `.gitattributes` (or core.autocrlf) can ask for CRLF line ends in
// the working tree (`text eol=crlf`, common for .bat files), and ident or
// working-tree-encoding rewrite content on checkout (filter drivers,
// git-lfs's included, never run in prsm's git: filters.go). A session's
// worktree is checked out by git, so its files hold the converted
// content; a blob read from the object store holds the stored one.
// CheckoutContent gives a
// blob's content as the checkout wrote it, so that prsm compares like with
// like. Most repositories ask for no conversion at all, and then nothing
// runs: no git process, only a look for .gitattributes files on the path.

// convState is what a repository says, once, about conversions that do
// not depend on a path.
type convState struct {
	once stdsync.Once
	// global: core.autocrlf, core.eol, info/attributes or a global
	// attributes file may convert any path (globalConversions).
	global bool
	mu     stdsync.Mutex
	// attrDirs caches, per commit and directory, whether the directory
	// holds a .gitattributes file that converts (hasAttributes).
	attrDirs map[string]bool
}

// maxAttrDirs bounds the attrDirs cache.
const maxAttrDirs = 4096

// CheckoutContent returns content, the blob at rel in commit, as git's
// checkout writes it in dir (a working tree of the repository, whose
// attributes and filters apply; a session worktree's git directory is
// named by prsm, RunIn, so the filters are the user's own). When no
// attributes or settings can apply to rel, it is content itself.
func (r *Repo) CheckoutContent(ctx context.Context, dir, commit, rel string, content []byte) ([]byte, error) {
	if bigfile.IsStub(content) {
		// Over the size limit: git's output would be read whole. The
		// file is taken as git stores it.
		return content, nil
	}
	may, err := r.MayConvert(ctx, commit, rel)
	if err != nil || !may {
		return content, err
	}
	out, err := r.RunIn(ctx, dir, NewCmd("cat-file", "--filters").Rev(commit+":"+rel))
	if err != nil {
		return nil, err
	}
	return out, nil
}

// MayConvert reports whether a checkout conversion can apply to rel: a
// repository-wide setting, or a .gitattributes file that converts
// (convertsOn) in commit in rel's directory or one above it.
func (r *Repo) MayConvert(ctx context.Context, commit, rel string) (bool, error) {
	r.conv.once.Do(func() { r.conv.global = r.globalConversions(ctx) })
	if r.conv.global {
		return true, nil
	}
	objs, err := r.Objects()
	if err != nil {
		return false, err
	}
	for d := path.Dir(rel); ; d = path.Dir(d) {
		has, err := r.hasAttributes(objs, commit, d)
		if err != nil || has {
			return has, err
		}
		if d == "." {
			return false, nil
		}
	}
}

// hasAttributes reports whether directory d ("." for the top) of commit
// holds a .gitattributes file that can ask for a conversion (convertsOn).
func (r *Repo) hasAttributes(objs *Objects, commit, d string) (bool, error) {
	key := commit + ":" + d
	r.conv.mu.Lock()
	has, ok := r.conv.attrDirs[key]
	r.conv.mu.Unlock()
	if ok {
		return has, nil
	}
	p := ".gitattributes"
	if d != "." {
		p = d + "/.gitattributes"
	}
	f, err := objs.ReadFile(commit, p)
	switch {
	case errors.Is(err, ErrNoFile):
		has = false
	case err != nil:
		return false, err
	default:
		has = convertsOn(f.Content)
	}
	r.conv.mu.Lock()
	if r.conv.attrDirs == nil || len(r.conv.attrDirs) >= maxAttrDirs {
		r.conv.attrDirs = map[string]bool{}
	}
	r.conv.attrDirs[key] = has
	r.conv.mu.Unlock()
	return has, nil
}

// convertsOn reports whether attributes (a .gitattributes file) set one
// that changes content on checkout: eol, crlf, ident or
// working-tree-encoding. Others (text=auto, binary, diff, merge, export,
// linguist-*) change nothing on a checkout here unless core.autocrlf or
// core.eol asks for CRLF, which globalConversions looks at; nor does
// filter, whose drivers prsm never runs (filters.go).
func convertsOn(attrs []byte) bool {
	for _, line := range strings.Split(string(attrs), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || strings.HasPrefix(f[0], "#") {
			continue
		}
		for _, a := range f[1:] {
			if strings.HasPrefix(a, "-") || strings.HasPrefix(a, "!") {
				continue // unset
			}
			name, _, _ := strings.Cut(a, "=")
			switch name {
			case "eol", "crlf", "ident", "working-tree-encoding":
				return true
			}
		}
	}
	return false
}

// globalConversions reports whether a conversion may apply to any path of
// the repository: core.autocrlf set to true or core.eol to crlf, or
// attributes from outside the tree (info/attributes, core.attributesFile
// or git's default global attributes file) that convert (convertsOn).
// When git cannot be asked, it says yes: a needless `git cat-file
// --filters` costs time, a missed conversion a wrong diff.
func (r *Repo) globalConversions(ctx context.Context) bool {
	if fileConverts(filepath.Join(r.CommonDir, "info", "attributes")) {
		return true
	}
	out, err := r.git.Output(ctx, NewCmd("config", "--get-regexp", `^core\.(autocrlf|eol|attributesfile)$`).Dir(r.Root))
	if err != nil && ExitCode(err) != 1 { // 1: none set
		return true
	}
	attrFile := ""
	for _, line := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(line, " ")
		switch strings.ToLower(k) {
		case "core.autocrlf":
			if strings.EqualFold(v, "true") {
				return true
			}
		case "core.eol":
			if strings.EqualFold(v, "crlf") {
				return true
			}
		case "core.attributesfile":
			attrFile = v
		}
	}
	if attrFile == "" {
		if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
			attrFile = filepath.Join(x, "git", "attributes")
		} else if h, err := os.UserHomeDir(); err == nil {
			attrFile = filepath.Join(h, ".config", "git", "attributes")
		}
	} else if strings.HasPrefix(attrFile, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			attrFile = filepath.Join(h, attrFile[2:])
		}
	}
	return attrFile != "" && fileConverts(attrFile)
}

// fileConverts reports whether the attributes file p exists and sets an
// attribute that converts (convertsOn).
func fileConverts(p string) bool {
	b, err := os.ReadFile(p)
	return err == nil && convertsOn(b)
}

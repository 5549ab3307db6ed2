package tracker

import (
	"fmt"
	"testing"

	"github.com/prsm-dev/prsm/store"
	"github.com/prsm-dev/prsm/sync"
)

// The versions kept for the next look are bounded in bytes, not only in
// number: an agent that edits many large files does not leave them all
// held in memory.
func TestKnownReadBoundedInBytes(t *testing.T) {
	var s Session
	big := make([]byte, 20<<20)
	for i := range 20 {
		rel := fmt.Sprintf("f%d", i)
		s.keepRead(rel, knownVersion{known: true, st: store.FileState{Present: true}, v: sync.Version{Present: true, Content: big}})
		var held int64
		for _, kv := range s.knownRead {
			held += int64(len(kv.v.Content))
		}
		if held != s.knownBytes || held > maxKnownBytes {
			t.Fatalf("after %d versions of 20 MiB: %d bytes held (counted %d)", i+1, held, s.knownBytes)
		}
		if _, ok := s.knownRead[rel]; !ok {
			t.Fatalf("the newest version %s is not kept", rel)
		}
	}
	// One version larger than the bound is still kept, alone.
	huge := make([]byte, maxKnownBytes+1)
	s.keepRead("huge", knownVersion{known: true, v: sync.Version{Present: true, Content: huge}})
	if len(s.knownRead) != 1 || s.knownBytes != int64(len(huge)) {
		t.Errorf("%d versions, %d bytes after a huge one", len(s.knownRead), s.knownBytes)
	}
}

// A record's Learn of a file too large to keep drops the version kept
// for the file's state before: stale now, it held a 99 MiB file's old
// content while the server sat idle.
func TestLearnDropsStaleKnownRead(t *testing.T) {
	var s Session
	old := sync.Version{Present: true, Mode: 0o100644, Content: make([]byte, 2*maxLearnedContent)}
	s.Known = map[string]store.FileState{"big": StateOf(old)}
	s.keepRead("small", knownVersion{known: true, v: sync.Version{Present: true, Content: []byte("x")}})
	if v, err := s.KnownVersion("big", func(string) ([]byte, error) { return old.Content, nil }); err != nil || len(v.Content) != len(old.Content) {
		t.Fatalf("KnownVersion: %d bytes, %v", len(v.Content), err)
	}
	if _, ok := s.knownRead["big"]; !ok {
		t.Fatal("the version read is not kept for the next look")
	}
	s.Learn("big", sync.Version{Present: true, Mode: 0o100644, Content: make([]byte, 2*maxLearnedContent+1)})
	if _, ok := s.knownRead["big"]; ok || s.knownBytes != 1 || len(s.knownRead) != 1 {
		t.Errorf("after Learn: %d versions, %d bytes kept; want only the small one", len(s.knownRead), s.knownBytes)
	}
}

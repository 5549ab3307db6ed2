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

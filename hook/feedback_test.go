package hook

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/agents/agenttest"
	"github.com/prsm-dev/prsm/api"
)

// A command hook asks for the review's feedback only when the call's
// answer says some waits (api.FeedbackHeader), or does not say; what it
// takes goes into Claude's answer, and is confirmed after.
func TestHookAsksForFeedbackWhenItWaits(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	say := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/feedback/take"):
			fmt.Fprint(w, `{"ids":[4],"text":"prsm: heard"}`)
			return
		case say != "":
			w.Header().Set(api.FeedbackHeader, say)
		}
		fmt.Fprint(w, `{}`)
	}))
	defer srv.Close()
	wt := fakeSession(t, srv.URL, prsm.Version)
	payload, err := agenttest.Payload("post-bash", wt)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		header, paths, out string
	}{
		{api.FeedbackNone, "complete", ""},
		{api.FeedbackWaiting, "complete take confirm", "prsm: heard"},
		{"", "complete take confirm", "prsm: heard"}, // an older server: ask
	} {
		say, paths = tc.header, nil
		code, out, errs := runHook(t, string(payload), "claude")
		var got []string
		for _, p := range paths {
			got = append(got, p[strings.LastIndex(p, "/")+1:])
		}
		if code != 0 || strings.Join(got, " ") != tc.paths || !strings.Contains(out, tc.out) || (tc.out == "") != (out == "") {
			t.Errorf("header %q: exit %d, requests %v (want %s), stdout %q, stderr %q", tc.header, code, got, tc.paths, out, errs)
		}
	}
}

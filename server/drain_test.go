//go:build unix

package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prsm-dev/prsm"
	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/client"
	"github.com/prsm-dev/prsm/internal/testgit"
	"github.com/prsm-dev/prsm/server"
)

// closeClient sends requests the way Python's urllib does: one request per
// connection, with Connection: close, and a body (which the handler may
// ignore) that arrives after the request's head. Its receive buffer is
// small, as a client that reads slowly has, so the end of a large answer
// is still in the server's send queue when the server closes: a close
// with unread request bytes is a TCP reset, which throws that queue away.
type closeClient struct {
	addr, token string
	raw         bool // write the request on a bare socket, else net/http
}

// rcvBuf is the receive buffer of closeClient's sockets.
const rcvBuf = 64 << 10

func smallRcvBuf(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvBuf)
	})
	if err != nil {
		return err
	}
	return serr
}

// do sends one request and returns the status and whole body of its
// answer, or an error when the answer did not arrive whole.
func (cc closeClient) do(method, path string, body []byte) (int, []byte, error) {
	if cc.raw {
		return cc.doRaw(method, path, body)
	}
	tr := &http.Transport{DialContext: (&net.Dialer{Control: smallRcvBuf}).DialContext, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequest(method, "http://"+cc.addr+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Close = true
	req.Header.Set("Authorization", "Bearer "+cc.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Transport: tr, Timeout: time.Minute}).Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// doRaw writes the request's head, then its body in a second write, as
// Python's http.client does, and reads the answer to EOF.
func (cc closeClient) doRaw(method, path string, body []byte) (int, []byte, error) {
	conn, err := (&net.Dialer{Control: smallRcvBuf, Timeout: 10 * time.Second}).Dial("tcp", cc.addr)
	if err != nil {
		return 0, nil, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Minute))
	head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Content-Length: %d\r\nConnection: close\r\n\r\n", method, path, cc.addr, cc.token, len(body))
	if _, err := io.WriteString(conn, head); err != nil {
		return 0, nil, err
	}
	time.Sleep(time.Millisecond) // the head is read before the body arrives
	if _, err := conn.Write(body); err != nil {
		return 0, nil, err
	}
	all, err := io.ReadAll(conn)
	if err != nil {
		return 0, nil, fmt.Errorf("read answer to EOF after %d bytes: %w", len(all), err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(all)), nil)
	if err != nil {
		return 0, nil, fmt.Errorf("parse answer (%d bytes): %w", len(all), err)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("answer body (%d bytes in all): %w", len(all), err)
	}
	return resp.StatusCode, data, nil
}

// bigFixture is a server with two sessions whose records are large:
// every answer that carries records, diffs or patches is hundreds of KB.
type bigFixture struct {
	*testServer
	cl *client.Client
	// sess holds one shell call, b1, that rewrote two files, accepted;
	// churn gets new changes for the requests that act on pending
	// records.
	sess, churn *prsm.Session
	cp          string // the checkpoint before b1
	files       []string
}

// bigLines makes a file of some 100 KB.
const bigLines = 4000

func newBigFixture(t *testing.T, cfg server.Config, nFiles int) *bigFixture {
	ts := start(t, cfg)
	f := &bigFixture{testServer: ts}
	files := map[string]string{}
	for i := 0; i < nFiles; i++ {
		rel := fmt.Sprintf("d/f%03d.txt", i)
		f.files = append(f.files, rel)
		files[rel] = testgit.Lines(bigLines, "base")
	}
	testgit.Commit(t, ts.ws, "big", files)
	info, err := server.ReadInfo(ts.dir)
	if err != nil {
		t.Fatal(err)
	}
	f.cl = client.New(info)
	ctx := context.Background()
	if f.sess, err = f.cl.StartSession(ctx, api.StartRequest{Name: "big"}); err != nil {
		t.Fatal(err)
	}
	// One shell call that rewrites two files: its records are b1:0, b1:1.
	if _, err := f.cl.StartToolCall(ctx, f.sess.ID, api.ToolCallRequest{ToolCallID: "b1", ToolName: "Bash",
		Args: json.RawMessage(`{"command":"rewrite"}`)}); err != nil {
		t.Fatal(err)
	}
	f.rewrite(t, f.sess, "b1", f.files[:2]...)
	recs, err := f.cl.CompleteToolCall(ctx, f.sess.ID, "b1", api.CompleteRequest{})
	if err != nil || len(recs.Records) != 2 || recs.Records[0].ID != "b1:0" {
		t.Fatalf("complete b1: %v, %+v", err, recs)
	}
	cps, err := f.cl.Checkpoints(ctx, f.sess.ID, "")
	if err != nil || len(cps) == 0 {
		t.Fatalf("checkpoints: %v %v", cps, err)
	}
	f.cp = cps[len(cps)-1].ID
	if _, err := f.cl.Accept(ctx, f.sess.ID, "b1"); err != nil {
		t.Fatal(err)
	}
	if f.churn, err = f.cl.StartSession(ctx, api.StartRequest{Name: "churn"}); err != nil {
		t.Fatal(err)
	}
	return f
}

// rewrite changes every line of the files rels in the session's worktree.
func (f *bigFixture) rewrite(t *testing.T, s *prsm.Session, tag string, rels ...string) {
	t.Helper()
	for _, rel := range rels {
		testgit.Write(t, s.WorktreePath, rel, testgit.Lines(bigLines, tag), 0o644)
	}
}

// TestConnectionCloseAnswersWhole: a client that asks to close the
// connection and sends a body the handler ignores gets every answer
// whole, 200 times in a row on every family of routes, through net/http
// and through a bare socket in turn. Before the server drained request
// bodies, nearly every answer here ended in a reset (on the families
// that answer hundreds of KB, 20 of 20 through either client). The 200
// tries take a minute; under the race detector, which makes them take
// six, and with -short, each family is tried 20 times.
func TestConnectionCloseAnswersWhole(t *testing.T) {
	tries := 200
	if testing.Short() || raceEnabled {
		tries = 20
	}
	f := newBigFixture(t, server.Config{}, tries)
	ctx := context.Background()
	clients := []closeClient{{addr: f.srv.Addr(), token: f.token}, {addr: f.srv.Addr(), token: f.token, raw: true}}
	// net/http writes a request's head and body at once, so its body
	// must be longer than what the server reads with the head; the bare
	// socket sends a small body after the head, as urllib does.
	ignored := func(cc closeClient) string {
		if cc.raw {
			return `{"ignored":true,"pad":"` + strings.Repeat("x", 30) + `"}`
		}
		return `{"ignored":"` + strings.Repeat("x", 64<<10) + `"}`
	}
	lost, sent := map[string]int{}, map[string]int{}
	first := map[string]error{}
	// send makes one request, its body ignored when body is "", and
	// counts the answers that did not arrive whole.
	send := func(cc closeClient, name, method, path, body string, status, minSize int) []byte {
		t.Helper()
		if body == "" {
			body = ignored(cc)
		}
		sent[name]++
		got, data, err := cc.do(method, path, []byte(body))
		if err == nil && (got != status || len(data) < minSize || !json.Valid(data)) {
			err = fmt.Errorf("status %d, %d bytes: %.200s", got, len(data), data)
		}
		if err != nil {
			lost[name]++
			if first[name] == nil {
				first[name] = fmt.Errorf("raw %v: %w", cc.raw, err)
			}
		}
		return data
	}
	// A record of one rewritten file, with its contents before and
	// after, is some 185 KB.
	const big = 150 << 10

	// Routes whose answer stays the same, asked again and again.
	sp, cp := "/sessions/"+f.sess.ID, "/sessions/"+f.churn.ID
	for i := 0; i < tries; i++ {
		cc := clients[i%2]
		send(cc, "list", "GET", sp+"/file-changes", "", 200, 2*big)
		send(cc, "records of a call", "GET", sp+"/file-changes/b1", "", 200, 2*big)
		send(cc, "accept again", "POST", sp+"/file-changes/b1/accept", "", 200, 2*big)
		send(cc, "checkpoint diff", "GET", sp+"/checkpoints/"+f.cp+"/diff", "", 200, big)
		send(cc, "rewind preview", "GET", sp+"/checkpoints/"+f.cp+"/rewind/preview", "", 200, 100)
		send(cc, "turns", "POST", cp+"/turns", `{"prompt":"go on"}`, 201, 100)
		var c prsm.Checkpoint
		json.Unmarshal(send(cc, "create checkpoint", "POST", cp+"/checkpoints", fmt.Sprintf(`{"name":"c%d"}`, i), 201, 100), &c)
		send(cc, "delete checkpoint", "DELETE", cp+"/checkpoints/"+c.ID, "", 200, 100)
		send(cc, "unknown record", "POST", sp+"/file-changes/nosuch/accept", "", 404, 20)
		send(cc, "no route", "POST", "/nosuch", "", 404, 20)
	}

	// Routes that act on one pending record, or on the records of one
	// file: every file of the churn session is rewritten and recorded
	// at once, then each record is asked for in turn.
	round := 0
	pending := func() []*prsm.Record {
		round++
		f.rewrite(t, f.churn, fmt.Sprintf("round %d", round), f.files...)
		recs, err := f.cl.Flush(ctx, f.churn.ID)
		if err != nil || len(recs.Records) != len(f.files) {
			t.Fatalf("flush: %v %v", recs, err)
		}
		return recs.Records
	}
	for _, r := range []struct{ name, path string }{
		{"reject one", cp + "/file-changes/{id}/reject"},
		{"accept one", cp + "/file-changes/{id}/accept"},
		{"accept-all of a file", cp + "/file-changes/accept-all?file={file}"},
		{"reject-all of a file", cp + "/file-changes/reject-all?file={file}"},
	} {
		for i, rec := range pending() {
			path := strings.NewReplacer("{id}", rec.ID, "{file}", rec.RelPath).Replace(r.path)
			send(clients[i%2], r.name, "POST", path, "", 200, big)
		}
	}

	// Routes that record what changed, and those that act on every
	// pending record: one rewritten file at a time.
	for i := 0; i < tries; i++ {
		cc := clients[i%2]
		round++
		f.rewrite(t, f.churn, fmt.Sprintf("round %d", round), f.files[i])
		send(cc, "flush", "POST", cp+"/flush", "", 200, big)
		send(cc, "reject-all", "POST", cp+"/file-changes/reject-all", "", 200, big)
		round++
		f.rewrite(t, f.churn, fmt.Sprintf("round %d", round), f.files[i])
		send(cc, "turn-end", "POST", cp+"/turn-end", "", 200, big)
		send(cc, "accept everywhere", "POST", "/file-changes/accept-all", "", 200, big)
	}
	for name, n := range sent {
		if n < tries {
			t.Errorf("%s: %d requests, want %d", name, n, tries)
		}
		if lost[name] > 0 {
			t.Errorf("%s: %d of %d answers lost; first: %v", name, lost[name], n, first[name])
		}
	}
}

// TestConnectionCloseLongBody: a body longer than the server reads after
// its handler (past maxDrain, and past the body limit) does not cost the
// answer either: the server closes the connection gracefully.
func TestConnectionCloseLongBody(t *testing.T) {
	const limit = 3 << 20
	f := newBigFixture(t, server.Config{BodyLimit: limit}, 2)
	cc := closeClient{addr: f.srv.Addr(), token: f.token}
	for _, c := range []struct {
		size, status, minSize int
	}{
		{2 << 20, 200, 300 << 10}, // read up to maxDrain, the rest left
		{limit + 1, 413, 20},      // refused before any of it is read
	} {
		body := []byte(`{"pad":"` + strings.Repeat("x", c.size) + `"}`)
		for i := 0; i < 20; i++ {
			status, data, err := cc.do("GET", "/sessions/"+f.sess.ID+"/file-changes", body)
			if err != nil || status != c.status || len(data) < c.minSize || !json.Valid(data) {
				t.Fatalf("body of %d bytes, try %d: %d, %d bytes, %v: %.200s", len(body), i, status, len(data), err, data)
			}
		}
	}
}

// Package wire is a tiny HTTP/1.0 JSON client of prsm's own server, for
// the lean hook binary (cmd/prsm-hook), which an agent starts before and
// after every tool call. It exists because of what net/http, and package
// net itself (which links libc for its resolver), cost at every start of
// a process (docs/performance.md has the figures). It speaks only to a
// prsm server on loopback, as server.json describes it: one request per
// connection, HTTP/1.0 so that the server neither chunks its answer nor
// keeps the connection.
//
// What both clients share is here too, so that there is one of each:
// reading server.json and checking that its server runs and answers
// (KnownServer, LiveServer), the error answer (Error, which the client
// package names APIError) and the retry of a busy store's answer
// (RetryBusy).
package wire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/prsm-dev/prsm/api"
	"github.com/prsm-dev/prsm/internal/osproc"
)

// Client sends requests to one prsm server.
type Client struct {
	// Addr is the server's host:port (api.Info.Addr), Token the bearer
	// token its clients send.
	Addr, Token string
}

// New returns a client for the server described by info.
func New(info *api.Info) *Client {
	return &Client{Addr: info.Addr, Token: info.Token}
}

// Error is an error answer of the server (an api.ErrorBody), with its
// status.
type Error struct {
	Status int
	Code   string
	Msg    string
	Hint   string
	// RetryAfter is what the answer's Retry-After header said (in
	// seconds); zero without one.
	RetryAfter time.Duration
}

func (e *Error) Error() string { return e.Msg }

// Busy reports whether the answer is a busy store's: its database stayed
// locked past the server's wait, nothing was done, and the same request
// may be sent again (RetryBusy does).
func (e *Error) Busy() bool {
	return e.Status == 503 && e.Code == "busy"
}

// Header is an extra header of a request, such as Prefer.
type Header struct{ Name, Value string }

// maxAnswer bounds what is read of an answer.
const maxAnswer = api.DefaultBodyLimit

// Do sends method path with body as JSON (none when nil) and the headers
// extra, sent again while a busy store answers it (RetryBusy); a 2xx
// answer's body is decoded into out (when non-nil), any other is an
// *Error. ctx's deadline is the connection's.
func (c *Client) Do(ctx context.Context, method, path string, body, out any, extra ...Header) error {
	_, err := c.DoFields(ctx, method, path, body, out, extra...)
	return err
}

// DoFields is Do that also returns the answer's header fields (of the
// last try; nil when none was read).
func (c *Client) DoFields(ctx context.Context, method, path string, body, out any, extra ...Header) (Fields, error) {
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return nil, err
		}
	}
	req := c.request(method, path, b, extra)
	var fields Fields
	err := RetryBusy(ctx, func() error {
		status, header, data, err := c.roundTrip(ctx, req)
		if err != nil {
			return fmt.Errorf("reach prsm server at %s: %w", c.Addr, err)
		}
		fields = header
		return Decode(method, path, status, header, data, out)
	})
	return fields, err
}

// request is the whole request, head and body.
func (c *Client) request(method, path string, body []byte, extra []Header) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.0\r\nHost: %s\r\nAuthorization: Bearer %s\r\n", method, path, c.Addr, c.Token)
	if body != nil {
		b.WriteString("Content-Type: application/json\r\n")
	}
	if body != nil || method == "POST" {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(body))
	}
	for _, h := range extra {
		fmt.Fprintf(&b, "%s: %s\r\n", h.Name, h.Value)
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

// roundTrip writes req on a new connection and reads the whole answer.
// An ended context (its deadline passed, or cancelled) stops a blocked
// dial, write or read at once, and is the error then. The connection's
// deadline is set only once the context has ended, not to the context's
// deadline ahead: a read could pass that before ctx.Err says so.
func (c *Client) roundTrip(ctx context.Context, req []byte) (status int, header Fields, body []byte, err error) {
	conn, err := dial(ctx, c.Addr)
	if err != nil {
		return 0, nil, nil, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	fail := func(err error) (int, Fields, []byte, error) {
		if cerr := ctx.Err(); cerr != nil {
			return 0, nil, nil, cerr
		}
		return 0, nil, nil, err
	}
	if _, err := conn.Write(req); err != nil {
		return fail(err)
	}
	br := bufio.NewReader(conn)
	line, err := readLine(br)
	if err != nil {
		return fail(fmt.Errorf("read the answer: %w", err))
	}
	// "HTTP/1.0 200 OK": the version, the code, the reason.
	proto, rest, _ := strings.Cut(line, " ")
	code, _, _ := strings.Cut(rest, " ")
	status, err = strconv.Atoi(code)
	if !strings.HasPrefix(proto, "HTTP/1.") || err != nil || len(code) != 3 {
		return fail(fmt.Errorf("not an HTTP answer: %q", line))
	}
	if header, err = readFields(br); err != nil {
		return fail(fmt.Errorf("read the answer's header: %w", err))
	}
	// Without Content-Length, the body is what comes until the server
	// closes the connection, as it does after an HTTP/1.0 answer.
	limit := int64(maxAnswer) + 1
	if cl := header.Get("Content-Length"); cl != "" {
		n, err := strconv.ParseInt(cl, 10, 64)
		if err != nil || n < 0 || n > maxAnswer {
			return fail(fmt.Errorf("answer's Content-Length %q", cl))
		}
		limit = n
	}
	body, err = io.ReadAll(io.LimitReader(br, limit))
	if err != nil {
		return fail(fmt.Errorf("read the answer's body: %w", err))
	}
	if header.Get("Content-Length") != "" && int64(len(body)) != limit {
		return fail(fmt.Errorf("answer cut short: %d of %d bytes", len(body), limit))
	}
	if len(body) > maxAnswer {
		return fail(fmt.Errorf("answer is larger than %d MiB", maxAnswer>>20))
	}
	return status, header, body, nil
}

// Decode turns an answer into an *Error, or decodes a 2xx answer's body
// into out (when non-nil). The client package decodes its answers with it
// too.
func Decode(method, path string, status int, header interface{ Get(string) string }, data []byte, out any) error {
	if status < 200 || status > 299 {
		e := &Error{Status: status}
		var body api.ErrorBody
		if json.Unmarshal(data, &body) == nil {
			e.Code, e.Msg, e.Hint = string(body.Code), body.Error, body.Hint
		}
		if e.Msg == "" {
			e.Msg = fmt.Sprintf("%s %s: status %d", method, path, status)
		}
		if secs, err := strconv.Atoi(header.Get("Retry-After")); err == nil && secs > 0 {
			e.RetryAfter = time.Duration(secs) * time.Second
		}
		return e
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("decode answer of %s %s: %w", method, path, err)
		}
	}
	return nil
}

// KnownServer reads the server.json of the project dir dir, if the
// process it names still runs; whether the server answers is not asked.
func KnownServer(dir string) (*api.Info, bool) {
	info, err := api.ReadInfo(dir)
	if err != nil {
		return nil, false
	}
	if info.PID > 0 {
		if !osproc.Alive(info.PID) {
			return nil, false
		}
	}
	return info, true
}

// liveTimeout bounds LiveServer's question.
const liveTimeout = 3 * time.Second

// LiveServer reads the server.json of the project dir dir, if its server
// answers with the token it wrote there (GET /status: /healthz takes no
// token, and another workspace's server may have taken a dead one's
// port).
func LiveServer(ctx context.Context, dir string) (*api.Info, bool) {
	info, ok := KnownServer(dir)
	if !ok {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(ctx, liveTimeout)
	defer cancel()
	if err := New(info).Do(ctx, api.RouteStatus.Method(), api.RouteStatus.Path(), nil, nil); err != nil {
		return nil, false
	}
	return info, true
}

// Fields are an answer's header fields, by their lower-case names.
type Fields map[string]string

// Get is the field name's value ("" without one), whatever its case.
func (f Fields) Get(name string) string { return f[strings.ToLower(name)] }

// maxHead bounds an answer's status line and header fields.
const maxHead = 64 << 10

// readLine reads one line of an answer's head, without its CRLF.
func readLine(br *bufio.Reader) (string, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return "", errors.New("header line too long")
	}
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(line), "\r\n"), nil
}

// readFields reads the header fields up to the blank line that ends them.
// The server sends no continuation lines; one would be an error.
func readFields(br *bufio.Reader) (Fields, error) {
	f := Fields{}
	for n := 0; ; {
		line, err := readLine(br)
		if err != nil {
			return nil, err
		}
		if line == "" {
			return f, nil
		}
		if n += len(line); n > maxHead {
			return nil, errors.New("header too long")
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("malformed header line %q", line)
		}
		f[strings.ToLower(name)] = strings.TrimSpace(value)
	}
}

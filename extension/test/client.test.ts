import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { PrsmEvent } from '../src/api.gen';
import { decodeEvent, PrsmApiError, PrsmClient, seg, SseParser, type SseMessage } from '../src/client';
import { FakeServer, json } from './fakeserver';
import { checkpoint, rec, session, until } from './helpers';

describe('PrsmClient', () => {
  let srv: FakeServer;
  let client: PrsmClient;

  beforeEach(async () => {
    srv = await new FakeServer().listen();
    client = new PrsmClient({ addr: srv.addr, token: srv.token });
  });
  afterEach(async () => {
    client.dispose();
    await srv.close();
  });

  it('sends the bearer token and decodes JSON answers', async () => {
    srv.routes.set('GET /sessions', (_q, res) => json(res, 200, [session()]));
    const list = await client.listSessions();
    expect(list[0].id).toBe('s1');
    expect(srv.seen.at(-1)).toMatchObject({ method: 'GET', url: '/sessions', auth: `Bearer ${srv.token}` });
    await client.listSessions('active').catch(() => undefined);
    expect(srv.seen.at(-1)?.url).toBe('/sessions?status=active');
  });

  it('checks health without the token', async () => {
    expect(await client.healthz()).toEqual({ ok: true, version: 'test' });
    expect(srv.seen.at(-1)?.auth).toBeUndefined();
  });

  it('builds every record route with escaped ids and query parameters', async () => {
    const answer = { records: [rec()] };
    srv.routes.set('POST *', (_q, res) => json(res, 200, answer));
    srv.routes.set('GET *', (_q, res) => json(res, 200, answer));
    await client.accept('s1', 'tc:1');
    await client.reject('s1', 'tc/2');
    await client.acceptAll('s1', 'dir/a b.txt');
    await client.rejectAll('s1');
    await client.acceptEverything();
    await client.rejectEverything();
    await client.getChange('s1', 'tc1');
    srv.routes.set('GET /sessions/s1/file-changes', (_q, res) => json(res, 200, [rec()]));
    await client.listChanges('s1', { status: 'pending', file: 'a.txt' });
    expect(srv.seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'POST /sessions/s1/file-changes/tc:1/accept',
      'POST /sessions/s1/file-changes/tc%2F2/reject',
      'POST /sessions/s1/file-changes/accept-all?file=dir%2Fa%20b.txt',
      'POST /sessions/s1/file-changes/reject-all',
      'POST /file-changes/accept-all',
      'POST /file-changes/reject-all',
      'GET /sessions/s1/file-changes/tc1',
      'GET /sessions/s1/file-changes?status=pending&file=a.txt',
    ]);
  });

  it('sends JSON bodies for the agent side and sessions', async () => {
    srv.routes.set('POST /sessions/s1/tool-calls', (_q, res) => json(res, 200, { tool_call_id: 't', tool_name: 'Edit', candidates: 1 }));
    srv.routes.set('POST /sessions/s1/tool-calls/t/complete', (_q, res) => json(res, 200, { records: [] }));
    srv.routes.set('POST /sessions', (_q, res) => json(res, 201, session()));
    await client.startToolCall('s1', { tool_call_id: 't', tool_name: 'Edit', args: { file_path: 'a.txt' } });
    await client.completeToolCall('s1', 't');
    await client.startSession({ name: 'n', mode: 'review' });
    expect(JSON.parse(srv.seen[0].body)).toEqual({ tool_call_id: 't', tool_name: 'Edit', args: { file_path: 'a.txt' } });
    expect(srv.seen[0].contentType).toBe('application/json');
    expect(JSON.parse(srv.seen[1].body)).toEqual({});
    expect(JSON.parse(srv.seen[2].body)).toEqual({ name: 'n', mode: 'review' });
  });

  it('builds the checkpoint routes', async () => {
    srv.routes.set('GET *', (_q, res) => json(res, 200, [checkpoint()]));
    srv.routes.set('POST *', (_q, res) => json(res, 200, checkpoint()));
    srv.routes.set('PUT *', (_q, res) => json(res, 200, checkpoint({ annotation: 'x' })));
    srv.routes.set('DELETE *', (_q, res) => json(res, 200, {}));
    await client.listCheckpoints('s1');
    await client.createCheckpoint('s1', { name: 'n', annotation: 'a' });
    await client.annotateCheckpoint('s1', 'cp1', 'x');
    await client.deleteCheckpoint('s1', 'cp1');
    await client.rewindPreview('s1', 'cp1');
    await client.rewind('s1', 'cp1');
    await client.startTurn('s1', { message_index: 3, prompt: 'p' });
    await client.rollbackBy('s1', { last: 2, dry_run: true });
    expect(srv.seen.map((s) => `${s.method} ${s.url} ${s.body}`)).toEqual([
      'GET /sessions/s1/checkpoints ',
      'POST /sessions/s1/checkpoints {"name":"n","annotation":"a"}',
      'PUT /sessions/s1/checkpoints/cp1 {"annotation":"x"}',
      'DELETE /sessions/s1/checkpoints/cp1 ',
      'GET /sessions/s1/checkpoints/cp1/rewind/preview ',
      'POST /sessions/s1/checkpoints/cp1/rewind ',
      'POST /sessions/s1/turns {"message_index":3,"prompt":"p"}',
      'POST /sessions/s1/rollback {"last":2,"dry_run":true}',
    ]);
  });

  it('turns error answers into PrsmApiError with code and hint', async () => {
    srv.routes.set('POST /sessions/s1/file-changes/x/accept', (_q, res) =>
      json(res, 409, { error: 'change x was rejected; it cannot be accepted', code: 'already_rejected', hint: 'try again' }),
    );
    const err = await client.accept('s1', 'x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PrsmApiError);
    expect(err).toMatchObject({ status: 409, code: 'already_rejected', hint: 'try again' });
    expect((err as PrsmApiError).describe()).toBe('change x was rejected; it cannot be accepted (try again)');
    const nf = await client.getSession('nope').catch((e: unknown) => e);
    expect(nf).toMatchObject({ status: 404, code: 'not_found', unreachable: false });
  });

  it('reports a non-JSON error and a wrong token', async () => {
    srv.routes.set('GET /status', (_q, res) => {
      res.writeHead(502);
      res.end('bad gateway');
    });
    await expect(client.status()).rejects.toMatchObject({ status: 502, code: 'http_error' });
    const bad = new PrsmClient({ addr: srv.addr, token: 'wrong' });
    await expect(bad.listSessions()).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    bad.dispose();
  });

  it('asks a busy store again, after the wait its Retry-After says', async () => {
    let calls = 0;
    srv.routes.set('POST /sessions/s1/file-changes/b1%3A0/reject', (_q, res) => {
      calls++;
      if (calls <= 2) {
        // The first busy answer says wait a second; the second says nothing.
        res.setHeader('Retry-After', calls === 1 ? '1' : '');
        return json(res, 503, { error: 'database is locked', code: 'busy' });
      }
      json(res, 200, { records: [rec({ id: 'b1:0', status: 'rejected' })] });
    });
    srv.routes.set('POST /sessions/s1/file-changes/b1:0/reject', srv.routes.get('POST /sessions/s1/file-changes/b1%3A0/reject')!);
    const t0 = Date.now();
    const ans = await client.reject('s1', 'b1:0');
    const took = Date.now() - t0;
    expect(ans.records[0]).toMatchObject({ id: 'b1:0', status: 'rejected' });
    expect(calls).toBe(3);
    // 1 s, as the first Retry-After said, then 500 ms: the 250 ms of an
    // answer without one, twice as long for the second wait.
    expect(took).toBeGreaterThanOrEqual(1500);
    expect(took).toBeLessThan(4000);
  }, 15_000);

  it('gives a busy store up within its time budget, and retries nothing else', async () => {
    const quick = new PrsmClient({ addr: srv.addr, token: srv.token }, { timeoutMs: 1000 });
    let calls = 0;
    srv.routes.set('POST /sessions/s1/file-changes/accept-all', (_q, res) => {
      calls++;
      json(res, 503, { error: 'database is locked', code: 'busy' });
    });
    const t0 = Date.now();
    const err = await quick.acceptAll('s1').catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 503, code: 'busy', busy: true });
    // 0, 250 and 750 ms; the next try, at 1750 ms, is past the budget.
    expect(calls).toBe(3);
    expect(Date.now() - t0).toBeLessThan(1000);
    calls = 0;
    srv.routes.set('POST /sessions/s1/file-changes/reject-all', (_q, res) => {
      calls++;
      json(res, 503, { error: 'shutting down', code: 'unavailable' });
    });
    await expect(quick.rejectAll('s1')).rejects.toMatchObject({ status: 503, code: 'unavailable', busy: false });
    expect(calls).toBe(1);
    quick.dispose();
  });

  it('reads raw content and treats a missing side as undefined', async () => {
    srv.routes.set('GET /sessions/s1/file-changes/t/content', (q, res) => {
      if (q.url.endsWith('side=before')) {
        return json(res, 404, { error: 'the file does not exist on the before side of t', code: 'no_content' });
      }
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      res.end(Buffer.from([0, 1, 2, 255]));
    });
    expect(await client.changeContent('s1', 't', 'before')).toBeUndefined();
    expect([...(await client.changeContent('s1', 't', 'after'))!]).toEqual([0, 1, 2, 255]);
    srv.routes.set('GET /sessions/s1/file-changes/t/diff', (_q, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end('diff --git a/a b/a\n');
    });
    expect(await client.changeDiff('s1', 't')).toBe('diff --git a/a b/a\n');
  });

  it('says unreachable when nothing listens', async () => {
    const port = srv.port;
    await srv.close();
    const dead = new PrsmClient({ addr: `127.0.0.1:${port}`, token: 't' });
    const err = await dead.healthz().catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 0, unreachable: true, code: 'ECONNREFUSED' });
    dead.dispose();
    srv = await new FakeServer().listen(); // for afterEach
  });

  it('leaves the characters a path segment may hold unescaped', () => {
    expect(seg('tc-gone:0')).toBe('tc-gone:0');
    expect(seg('a/b c?d#e%')).toBe('a%2Fb%20c%3Fd%23e%25');
  });

  it('rejects a malformed address', () => {
    expect(() => new PrsmClient({ addr: 'nonsense', token: 't' })).toThrow(PrsmApiError);
    expect(new PrsmClient({ addr: '[::1]:8080', token: 't' }).baseUrl).toBe('http://[::1]:8080');
  });

  it('streams typed events and ends with an error when the server goes', async () => {
    const got: PrsmEvent[] = [];
    let opened = false;
    let closed: PrsmApiError | undefined | 'none' = 'none';
    const stream = client.events({
      onOpen: () => (opened = true),
      onEvent: (e) => got.push(e),
      onClose: (e) => (closed = e),
    });
    await until(() => opened && srv.streams === 1, 3000, 'stream open');
    srv.send('file_changed', rec({ id: 'tc9' }));
    srv.send('file_change_status', { session_id: 's1', id: 'tc9', tool_call_id: 'tc9', rel_path: 'a.txt', file_path: '/ws/a.txt', status: 'rejected', sync_state: 'synced' });
    srv.send('something_new', { x: 1 });
    await until(() => got.length === 2, 3000, 'two events');
    expect(got.map((e) => e.type)).toEqual(['file_changed', 'file_change_status']);
    expect(got[0].type === 'file_changed' && got[0].data.id).toBe('tc9');
    await srv.close();
    await until(() => closed !== 'none', 3000, 'close');
    expect(closed).toBeInstanceOf(PrsmApiError);
    stream.close();
    srv = await new FakeServer().listen();
  });

  it('sends the token of the event stream in its Authorization header, not in its address', async () => {
    let opened = false;
    const stream = client.events({ onOpen: () => (opened = true), onEvent: () => undefined });
    await until(() => opened, 3000, 'stream open');
    const req = srv.seen.filter((r) => r.url.startsWith('/events'));
    expect(req).toHaveLength(1);
    expect(req[0]).toMatchObject({ method: 'GET', url: '/events', auth: `Bearer ${srv.token}` });
    expect(req[0].url).not.toContain(srv.token);
    stream.close();
  });

  it('ends a stream that goes silent', async () => {
    let closed: PrsmApiError | undefined | 'none' = 'none';
    client.events({ idleTimeoutMs: 150, onEvent: () => undefined, onClose: (e) => (closed = e) });
    await until(() => closed !== 'none', 3000, 'idle close');
    expect(closed).toMatchObject({ code: 'stream_stalled', unreachable: true });
  });

  it('reports a refused token on the event stream as 401', async () => {
    const bad = new PrsmClient({ addr: srv.addr, token: 'stale' });
    const err = await new Promise<PrsmApiError | undefined>((resolve) => bad.events({ onEvent: () => undefined, onClose: resolve }));
    expect(err?.status).toBe(401);
    bad.dispose();
  });
});

describe('SseParser', () => {
  function parse(chunks: string[]): SseMessage[] {
    const out: SseMessage[] = [];
    const p = new SseParser((m) => out.push(m));
    for (const c of chunks) {
      p.push(c);
    }
    return out;
  }

  it('parses events split anywhere, with CRLF, comments and multi-line data', () => {
    const text = ': connected\r\n\r\nid: 5\r\nevent: session_updated\r\ndata: {"a":\r\ndata: 1}\r\n\r\n: ping\n\nevent: x\ndata:no-space\n\n';
    const whole = parse([text]);
    expect(whole).toEqual([
      { event: 'session_updated', data: '{"a":\n1}', id: '5' },
      { event: 'x', data: 'no-space', id: '5' },
    ]);
    for (let cut = 1; cut < text.length; cut += 3) {
      expect(parse([text.slice(0, cut), text.slice(cut)])).toEqual(whole);
    }
    expect(parse(text.split(''))).toEqual(whole);
  });

  it('holds an incomplete event back', () => {
    expect(parse(['event: a\ndata: 1\n'])).toEqual([]);
  });

  it('decodes only known event types with valid JSON', () => {
    expect(decodeEvent({ event: 'checkpoint_created', data: '{"id":"c"}' })).toEqual({ type: 'checkpoint_created', data: { id: 'c' } });
    expect(decodeEvent({ event: 'checkpoint_created', data: '{' })).toBeUndefined();
    expect(decodeEvent({ event: 'message', data: '{}' })).toBeUndefined();
  });
});

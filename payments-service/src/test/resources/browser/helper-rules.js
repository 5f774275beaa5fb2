// Runs inside Chromium on the service's origin (ExactlyClientRulesTest): the browser helper's retry
// rules against a scripted fetch, with a clock that the helper's sleeps advance. Returns what happened;
// the Java test asserts on it. The last argument is Selenium's async callback.
const done = arguments[arguments.length - 1];
(async () => {
  const m = await import('/js/exactly-client.js');
  const out = {};
  let scenario = 0;

  // a server that answers from a script; 'network' means the request never got an answer
  function scripted(answers, clock) {
    const calls = [];
    const fetch = async (url, init) => {
      calls.push({ url, method: init.method, key: init.headers['Idempotency-Key'], body: init.body,
                   auth: init.headers.Authorization || null });
      const a = answers.length > 1 ? answers.shift() : answers[0];
      if (a === 'network') throw new TypeError('Failed to fetch');
      return new Response(a.body ?? '', { status: a.status, headers: a.headers ?? {} });
    };
    return { fetch, calls };
  }

  function client(answers, extra = {}) {
    const clock = { now: extra.start ?? 1_000_000 };
    const server = scripted(answers, clock);
    const delays = [];
    const c = new m.ExactlyClient({
      namespace: extra.namespace ?? 'rules' + (++scenario),
      fetch: server.fetch,
      random: extra.random ?? (() => 1),
      now: () => clock.now,
      sleep: async (ms) => { delays.push(ms); clock.now += ms; },
      headers: extra.headers ?? (() => ({ Authorization: 'Bearer sk_test' })),
      retry: extra.retry,
      ...(extra.storage ? { storage: extra.storage } : {}),
    });
    return { c, calls: server.calls, delays, clock };
  }

  async function outcome(promise) {
    try {
      const r = await promise;
      return { status: r.status, replayed: r.replayed, attempts: r.attempts, totalAttempts: r.totalAttempts,
               key: r.key, joined: r.joined, json: r.json };
    } catch (e) {
      return { error: e.name, message: e.message, key: e.key, attempts: e.attempts };
    }
  }

  const charge = { path: '/v1/charges', body: { amount: 1999, currency: 'usd', customer: 'cus_1' } };
  const created = { status: 201, body: '{"id":"ch_1","object":"charge"}', headers: { 'Content-Type': 'application/json' } };

  // 1. every retryable answer is retried with the same key and bytes; Retry-After wins over backoff
  {
    const t = client([
      { status: 409, headers: { 'Retry-After': '1' } },
      { status: 429, headers: { 'Retry-After': '7' } },
      { status: 502 }, { status: 503 }, { status: 504 }, 'network',
      { ...created, headers: { 'Idempotent-Replayed': 'true' } }], { retry: { maxAttempts: 7 } });
    const r = await outcome(t.c.submit('order-1', charge));
    out.retried = { result: r, delays: t.delays, keys: [...new Set(t.calls.map((c) => c.key))],
                    bodies: [...new Set(t.calls.map((c) => c.body))], calls: t.calls.length,
                    auth: [...new Set(t.calls.map((c) => c.auth))], stored: t.c.intent('order-1') };
  }

  // 2. final answers are not retried
  out.finals = {};
  for (const status of [200, 201, 400, 401, 403, 404, 402, 413, 422, 500, 501]) {
    const body = status === 422 ? '{"type":"https://exactly.dev/problems/validation-failed"}' : '{}';
    const t = client([{ status, body }]);
    const r = await outcome(t.c.submit('final-' + status, charge));
    out.finals[status] = { result: r, calls: t.calls.length, state: t.c.intent('final-' + status).state };
  }

  // 2b. a replayed answer is final whatever its status: a recorded 409 conflict, a recorded 502
  out.replayedFinals = {};
  for (const status of [409, 502]) {
    const t = client([{ status, body: '{"type":"https://exactly.dev/problems/charge-voided"}',
                        headers: { 'Idempotent-Replayed': 'true' } }]);
    const r = await outcome(t.c.submit('replayed-' + status, charge));
    out.replayedFinals[status] = { result: r, calls: t.calls.length, state: t.c.intent('replayed-' + status).state };
  }

  // 2c. a refusal after an attempt that got no answer says nothing of that attempt: the intent stays pending
  out.refusedAfterLoss = {};
  for (const status of [401, 403, 500]) {
    const t = client(['network', { status, body: '{}' }], { retry: { maxAttempts: 3 } });
    const r = await outcome(t.c.submit('lost-then-' + status, charge));
    out.refusedAfterLoss[status] = { result: r, calls: t.calls.length, state: t.c.intent('lost-then-' + status).state };
  }
  {
    const t = client([{ status: 500, body: JSON.stringify({ type: m.INTERNAL_ERROR_TYPE }) }]);
    const r = await outcome(t.c.submit('internal-error', charge));
    out.internalError = { result: r, state: t.c.intent('internal-error').state };
  }

  // 2d. an intent is only sent under the account it was first sent under
  {
    const a = client(['network'], { retry: { maxAttempts: 2 }, namespace: 'rules-accounts',
                                    headers: () => ({ Authorization: 'Bearer sk_account_a' }) });
    const first = await outcome(a.c.submit('order-a', charge));
    const b = client([created], { namespace: 'rules-accounts', headers: () => ({ Authorization: 'Bearer sk_account_b' }) });
    const resumed = await outcome(b.c.resume('order-a'));
    const again = await outcome(b.c.submit('order-a', charge));
    const a2 = client([created], { namespace: 'rules-accounts', headers: () => ({ Authorization: 'Bearer sk_account_a' }) });
    out.accounts = { first, resumed, again, callsUnderB: b.calls.length,
                     pendingOfB: b.c.pending().length, otherOfB: b.c.otherAccountsPending().map((e) => e.intentId),
                     pendingOfA: a2.c.pending().map((e) => e.intentId),
                     storedWho: JSON.stringify(a.c.intent('order-a')).includes('sk_account_a') };
  }

  // 2e. a full storage makes room from expired finished intents only, never from a recent one's key
  {
    const items = new Map();
    const full = {
      get length() { return items.size; },
      key: (i) => [...items.keys()][i] ?? null,
      getItem: (k) => (items.has(k) ? items.get(k) : null),
      setItem: (k, v) => {
        if (!items.has(k) && items.size >= 1) throw new DOMException('full', 'QuotaExceededError');
        items.set(k, String(v));
      },
      removeItem: (k) => { items.delete(k); },
    };
    const t = client([created], { storage: full, namespace: 'rules-full' });
    const paid = await outcome(t.c.submit('paid', charge));
    const next = await outcome(t.c.submit('next', { ...charge, body: { ...charge.body, amount: 2999 } }));
    out.fullStorage = { paid, next, paidKept: t.c.intent('paid') != null, calls: t.calls.length };
  }

  // 3. a reused key is its own error, never retried
  {
    const t = client([{ status: 422, body: JSON.stringify({ type: m.KEY_REUSED_TYPE, code: 'idempotency_key_reused' }) }]);
    out.reused = { result: await outcome(t.c.submit('reused', charge)), calls: t.calls.length };
  }

  // 4. Retry-After as an HTTP date
  {
    const start = Date.parse('Tue, 01 Dec 2026 10:00:00 GMT');
    const t = client([{ status: 503, headers: { 'Retry-After': 'Tue, 01 Dec 2026 10:00:05 GMT' } }, created], { start });
    out.httpDate = { result: await outcome(t.c.submit('date', charge)), delays: t.delays };
  }

  // 5. attempts run out: the intent stays pending; a new page (new client, same storage) resumes it
  {
    const t = client([{ status: 503 }], { retry: { maxAttempts: 3 }, namespace: 'rules-reload' });
    const first = await outcome(t.c.submit('unknown', charge));
    const pendingBefore = t.c.pending().map((p) => ({ intentId: p.intentId, key: p.key }));
    const t2 = client([created], { namespace: 'rules-reload' });
    const pendingAfterReload = t2.c.pending().map((p) => ({ intentId: p.intentId, key: p.key, body: p.request.body }));
    const resumed = await outcome(t2.c.resume('unknown'));
    out.exhausted = { first, calls: t.calls.length, delays: t.delays, pendingBefore, pendingAfterReload, resumed,
                      resumedKey: t2.calls[0].key, resumedBody: t2.calls[0].body, sentBody: t.calls[0].body,
                      stateAfter: t2.c.intent('unknown').state };
  }

  // 6. the deadline: a Retry-After beyond it ends the loop at once
  {
    const t = client([{ status: 503, headers: { 'Retry-After': '30' } }], { retry: { deadlineMs: 10000 } });
    out.deadline = { result: await outcome(t.c.submit('deadline', charge)), calls: t.calls.length, delays: t.delays };
  }

  // 6b. a pause that leaves the next attempt less than a tenth of a whole attempt (here 950 ms) ends the loop;
  //     one that leaves it that much is taken
  {
    const retry = { deadlineMs: 9500, attemptTimeoutMs: 9500 };
    const tooLate = client([{ status: 503, headers: { 'Retry-After': '9' } }, created], { retry });
    const inTime = client([{ status: 503, headers: { 'Retry-After': '8' } }, created], { retry });
    out.shortest = {
      tooLate: { result: await outcome(tooLate.c.submit('late', charge)), calls: tooLate.calls.length },
      inTime: { result: await outcome(inTime.c.submit('in-time', charge)), calls: inTime.calls.length },
      shortest: m.shortestRetry(retry),
    };
  }

  // 7. a second submit while the first is in flight joins it
  {
    let release;
    const gate = new Promise((r) => { release = r; });
    const calls = [];
    const c = new m.ExactlyClient({ namespace: 'rules-join', fetch: async (url, init) => {
      calls.push(init.headers['Idempotency-Key']);
      await gate;
      return new Response(created.body, { status: 201 });
    } });
    const a = c.submit('join', charge);
    const b = c.submit('join', charge);
    const inFlight = c.isInFlight('join');
    release();
    out.join = { a: await outcome(a), b: await outcome(b), calls, inFlight };
  }

  // 8. the same intent with another request is refused before anything is sent
  {
    const t = client([created]);
    await t.c.submit('mismatch', charge);
    const other = await outcome(t.c.submit('mismatch', { path: '/v1/charges', body: { amount: 2999, currency: 'usd', customer: 'cus_1' } }));
    out.mismatch = { other, calls: t.calls.length };
  }

  // 9. a finished intent submitted again keeps its key (the server replays), a new intent gets a new key
  {
    const t = client([created, { ...created, headers: { 'Idempotent-Replayed': 'true' } }, created]);
    const one = await outcome(t.c.submit('again', charge));
    const two = await outcome(t.c.submit('again', charge));
    const three = await outcome(t.c.submit('another', charge));
    out.again = { one, two, three };
  }

  // 10. the schedule: full jitter under an exponential ceiling, capped
  {
    const retry = m.DEFAULT_RETRY;
    const top = [];
    for (let n = 1; n <= 10; n++) top.push(m.backoffDelay(n, retry, () => 0.999999));
    const samples = [];
    for (let i = 0; i < 2000; i++) samples.push(m.backoffDelay(1 + (i % 12), retry));
    out.backoff = { top, zero: m.backoffDelay(5, retry, () => 0), min: Math.min(...samples), max: Math.max(...samples),
                    retry };
  }

  // 11. Retry-After parsing
  {
    const now = Date.parse('Tue, 01 Dec 2026 10:00:00 GMT');
    const p = (v) => m.parseRetryAfter(v, now);
    out.retryAfter = { three: p('3'), zero: p('0'), empty: p(''), absent: p(null), words: p('soon'), negative: p('-1'),
                       fraction: p('1.5'), past: p('Tue, 01 Dec 2026 09:00:00 GMT'), date: p('Tue, 01 Dec 2026 10:01:00 GMT'),
                       asctime: p('Tue Dec  1 10:00:09 2026') };
  }

  // 12. an unreadable stored intent is never replaced by a new key, and a pending one cannot be forgotten
  {
    const t = client([created], { namespace: 'rules-corrupt' });
    localStorage.setItem('rules-corrupt.intent.broken', '{not json');
    const result = await outcome(t.c.submit('broken', charge));
    const u = client([{ status: 503 }], { namespace: 'rules-forget', retry: { maxAttempts: 1 } });
    await outcome(u.c.submit('pending', charge));
    let forget = 'forgotten';
    try { u.c.forget('pending'); } catch (e) { forget = e.name; }
    out.corrupt = { result, calls: t.calls.length, stored: localStorage.getItem('rules-corrupt.intent.broken'),
                    forget, stillPending: u.c.pending().length };
  }

  // 12b. a pending intent older than the server keeps keys is not sent again (it may have run and its key be
  // forgotten); within the time, and with keepPendingMs raised by a server that answers late retries, it is
  {
    const day = 24 * 60 * 60 * 1000;
    const t = client([{ status: 503 }, created], { namespace: 'rules-expiry', retry: { maxAttempts: 1 } });
    await outcome(t.c.submit('old', charge));
    const sentFirst = t.calls.length;
    t.clock.now += day + 1;
    const resumed = await outcome(t.c.resume('old'));
    const submitted = await outcome(t.c.submit('old', charge));
    const afterExpiry = t.calls.length;
    const stillPending = t.c.pending().length;
    const late = new m.ExactlyClient({ namespace: 'rules-expiry', fetch: async () => new Response(created.body, { status: 201 }),
      now: () => t.clock.now, headers: () => ({ Authorization: 'Bearer sk_test' }), keepPendingMs: Infinity });
    const lateResult = await outcome(late.resume('old'));
    out.expiry = { sentFirst, resumed, submitted, afterExpiry, stillPending,
                   late: lateResult, lateState: late.intent('old').state };
  }

  // 13. keys: 128 random bits, one per intent
  out.keys = { a: m.newKey(), b: m.newKey() };

  return out;
})().then((out) => done(JSON.stringify(out)), (e) => done(JSON.stringify({ failure: String(e && e.stack || e) })));

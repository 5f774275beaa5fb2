// Exactly's browser helper: one Idempotency-Key per logical intent, kept in localStorage until the
// intent has a final answer, and the same retry rules as the Java client. A plain ES module with no
// dependencies: import it from the service (`/js/exactly-client.js`) or copy it.
//
//   import { ExactlyClient } from '/js/exactly-client.js';
//   const client = new ExactlyClient({ headers: () => ({ Authorization: 'Bearer ' + apiKey }) });
//   const result = await client.submit('order-42', { path: '/v1/charges', body: { amount: 1999, currency: 'usd', customer: 'cus_42' } });
//   // result: { status, ok, body, json, headers, replayed, attempts, totalAttempts, key, intentId, joined }
//   for (const intent of client.pending()) client.resume(intent.intentId);   // after a reload
//
// Rules (README, "The browser helper"):
// - The key is minted (crypto.getRandomValues) and written to storage with the exact request body
//   before the first byte is sent; every attempt, and every resume after a reload, sends that key and
//   those bytes. The key is never regenerated for a pending intent.
// - Retried: network errors and per-attempt timeouts, 409 (in flight), 429, 502, 503, 504. The pause is
//   Retry-After (seconds or an HTTP date) when the answer has one, else exponential backoff with full
//   jitter: random in [0, min(maxDelayMs, baseDelayMs * 2^(n-1))] after the n-th failed attempt.
//   maxAttempts and deadlineMs both bound the loop (a pause must leave the attempt after it a tenth of a
//   whole attempt, min(attemptTimeoutMs, deadlineMs) / 10, before the deadline: one cut shorter is bound
//   to time out); when either runs out the intent stays pending and
//   OutcomeUnknownError is thrown: retry later with the same key (resume), never with a new one.
// - Final: every other answer (2xx, 402 declined, other 4xx, other 5xx) is returned as a result; the
//   intent is finished but its key is kept for keepFinishedMs, so submitting the same intent again is
//   answered by the server as a replay rather than paid twice.
// - 422 with type https://exactly.dev/problems/idempotency-key-reused is KeyReusedError, never retried.
// - A second submit of an intent whose request is in flight joins it (same promise, no new request).
// - `Idempotent-Replayed: true` (or `X-Idempotent-Replay: true`) sets result.replayed; a replayed answer is
//   final whatever its status (the recorded outcome: a retry would get it again).

export const KEY_REUSED_TYPE = 'https://exactly.dev/problems/idempotency-key-reused';
/** The server's own failure: the request may have taken effect (it says so). */
export const INTERNAL_ERROR_TYPE = 'https://exactly.dev/problems/internal-error';

/** The retry schedule's defaults (the Java client's, written out in the README). */
export const DEFAULT_RETRY = Object.freeze({
  maxAttempts: 6,
  baseDelayMs: 500,
  maxDelayMs: 5000,
  deadlineMs: 30000,
  attemptTimeoutMs: 10000,
});

/** Statuses that say "not decided yet, try again with the same key". */
export const RETRYABLE_STATUSES = Object.freeze([409, 429, 502, 503, 504]);

const ENTRY_VERSION = 1;
const DAY_MS = 24 * 60 * 60 * 1000;
const MAX_INTENT_ID = 200;
const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/** Base class of the helper's errors. */
export class ExactlyError extends Error {
  constructor(message, details = {}) {
    super(message);
    this.name = new.target.name;
    Object.assign(this, details);
  }
}

/** The server says this key was used for a different request: a bug in the caller. Never retried. */
export class KeyReusedError extends ExactlyError {}

/**
 * Attempts or the deadline ran out before a final answer. The payment may or may not have happened:
 * the intent stays pending with its key; resume it later (it is resumed with the same key and body).
 */
export class OutcomeUnknownError extends ExactlyError {}

/** The intent already holds a different request (a different body, path or method). */
export class IntentMismatchError extends ExactlyError {}

/** The key could not be stored before sending: nothing was sent. */
export class StorageError extends ExactlyError {}

/**
 * The intent was sent under another account (another Authorization): it is not sent under this one, where
 * its key would name a new request and pay again.
 */
export class AccountMismatchError extends ExactlyError {}

/**
 * The intent has been pending for longer than keepPendingMs (by default the server's retention): it is not
 * sent again, since a server may have run it and forgotten its key since, and the same key would then run
 * it a second time. Find out what became of it another way (the resource it would have made).
 */
export class IntentExpiredError extends ExactlyError {}

/** Whether an answer with this status is retried with the same key. */
export function isRetryable(status) {
  return RETRYABLE_STATUSES.includes(status);
}

/**
 * The least time a retry must have before the deadline once its pause is over: a tenth of a whole attempt
 * (the smaller of attemptTimeoutMs and deadlineMs), at least 1 ms, as the Java client's
 * RetrySequence.shortestRetry(). An attempt cut shorter is bound to time out.
 */
export function shortestRetry(retry = DEFAULT_RETRY) {
  return Math.max(1, Math.min(retry.attemptTimeoutMs, retry.deadlineMs) / 10);
}

/**
 * The pause after the n-th failed attempt (n >= 1): full jitter over an exponential ceiling,
 * random() * min(maxDelayMs, baseDelayMs * 2^(n-1)), so always within [0, maxDelayMs].
 */
export function backoffDelay(failedAttempts, retry = DEFAULT_RETRY, random = Math.random) {
  const n = Math.max(1, Math.floor(failedAttempts));
  const ceiling = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** Math.min(n - 1, 30));
  const r = random();
  const unit = Number.isFinite(r) ? Math.min(Math.max(r, 0), 1) : 1;
  return Math.floor(unit * ceiling);
}

/**
 * Retry-After in milliseconds from now: delta-seconds ("3") or an HTTP date; null when absent or not
 * understood. A date in the past is 0.
 */
export function parseRetryAfter(value, nowMs = Date.now()) {
  if (value == null) return null;
  const text = String(value).trim();
  if (text === '') return null;
  if (/^\d+$/.test(text)) {
    return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  }
  // an HTTP date: IMF-fixdate and RFC 850 end in GMT; asctime has no zone and means GMT
  let date = null;
  if (/^[A-Za-z]{3,9}, [0-9A-Za-z -]+ \d{2}:\d{2}:\d{2} GMT$/.test(text)) date = text;
  else if (/^[A-Za-z]{3} [A-Za-z]{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/.test(text)) date = text + ' GMT';
  if (date == null) return null;
  const at = Date.parse(date);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, at - nowMs), MAX_RETRY_AFTER_MS);
}

/** A fresh key: 128 random bits from the platform's CSPRNG (also in non-secure contexts). */
export function newKey() {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return 'bk_' + Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

function sleepUnlessOnline(ms, wakeWhenOnline) {
  return new Promise((resolve) => {
    const target = globalThis.window;
    const done = () => {
      clearTimeout(timer);
      if (wakeWhenOnline && target) target.removeEventListener('online', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    if (wakeWhenOnline && target) target.addEventListener('online', done, { once: true });
  });
}

function validateRetry(retry) {
  for (const name of ['maxAttempts', 'baseDelayMs', 'maxDelayMs', 'deadlineMs', 'attemptTimeoutMs']) {
    if (!Number.isFinite(retry[name]) || retry[name] < (name === 'maxAttempts' ? 1 : 0)) {
      throw new RangeError(`retry.${name} must be a finite number${name === 'maxAttempts' ? ' >= 1' : ' >= 0'}`);
    }
  }
  if (retry.maxDelayMs < retry.baseDelayMs) throw new RangeError('retry.maxDelayMs must be >= retry.baseDelayMs');
  return Object.freeze({ ...retry });
}

function headerValue(headers, name) {
  const v = headers && headers.get ? headers.get(name) : null;
  return v == null ? null : v;
}

function isReplay(headers) {
  return ['Idempotent-Replayed', 'X-Idempotent-Replay'].some(
    (h) => (headerValue(headers, h) || '').trim().toLowerCase() === 'true');
}

function parseJson(text) {
  try {
    return text === '' ? null : JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * The helper. Options (all optional):
 *   baseUrl         prefix of request paths ('' = same origin)
 *   headers         () => ({...}) extra headers per attempt (e.g. Authorization); never stored
 *   storage         a Storage (default localStorage): where pending intents live
 *   namespace       storage key prefix (default 'exactly')
 *   retry           overrides of DEFAULT_RETRY
 *   keepFinishedMs  how long a finished intent keeps its key (default 24 h, the server's retention)
 *   keepPendingMs   how long after its first send a pending intent may still be sent again (default
 *                   keepFinishedMs: past the server's retention its key may name nothing any more)
 *   onEvent         (event) => void: {type: 'attempt'|'answer'|'error'|'retry'|'give-up'|'join'|'finish', ...}
 *   fetch, random, now, sleep   the platform's, replaceable
 */
export class ExactlyClient {
  constructor(options = {}) {
    this.baseUrl = options.baseUrl ?? '';
    this.headers = options.headers ?? (() => ({}));
    this.storage = options.storage ?? globalThis.localStorage;
    this.prefix = (options.namespace ?? 'exactly') + '.intent.';
    this.retry = validateRetry({ ...DEFAULT_RETRY, ...(options.retry ?? {}) });
    this.keepFinishedMs = options.keepFinishedMs ?? DAY_MS;
    this.keepPendingMs = options.keepPendingMs ?? this.keepFinishedMs;
    this.onEvent = options.onEvent ?? (() => {});
    this.fetch = options.fetch ?? ((...args) => globalThis.fetch(...args));
    this.random = options.random ?? Math.random;
    this.now = options.now ?? (() => Date.now());
    this.sleep = options.sleep ?? sleepUnlessOnline;
    this.inFlight = new Map();
    this.pruneFinished();
  }

  /**
   * Sends one logical intent: request = {method = 'POST', path, body (a string, sent as is, or a value
   * serialised once with JSON.stringify), contentType = 'application/json'}. Resolves with the final
   * answer; rejects with KeyReusedError, OutcomeUnknownError, IntentMismatchError or StorageError.
   */
  submit(intentId, request) {
    checkIntentId(intentId);
    const wanted = normaliseRequest(request);
    const running = this.inFlight.get(intentId);
    if (running) {
      if (!sameRequest(running.request, wanted)) {
        return Promise.reject(new IntentMismatchError(`intent ${intentId} is in flight with a different request`, { intentId }));
      }
      this.emit({ type: 'join', intentId, key: running.entry.key });
      return running.promise.then((result) => ({ ...result, joined: true }));
    }
    let entry;
    try {
      entry = this.readStrict(intentId);
    } catch (e) {
      return Promise.reject(e);
    }
    if (entry && !sameRequest(entry.request, wanted)) {
      return Promise.reject(new IntentMismatchError(
        `intent ${intentId} already holds a different request (key ${entry.key}); use a new intent id for a new payment`,
        { intentId, key: entry.key }));
    }
    if (!entry) {
      const at = this.now();
      entry = { v: ENTRY_VERSION, intentId, key: newKey(), request: wanted, state: 'pending', attempts: 0, created: at, updated: at,
                who: this.who() };
    } else if (!this.mine(entry)) {
      return Promise.reject(this.notMine(entry));
    } else if (this.expired(entry)) {
      return Promise.reject(this.expiredError(entry));
    } else {
      entry = { ...entry, state: 'pending', updated: this.now() };
    }
    return this.start(entry, false);
  }

  /** Sends a stored intent again with its key and its exact body (after a reload, or after OutcomeUnknownError). */
  resume(intentId) {
    checkIntentId(intentId);
    const running = this.inFlight.get(intentId);
    if (running) {
      this.emit({ type: 'join', intentId, key: running.entry.key });
      return running.promise.then((result) => ({ ...result, joined: true }));
    }
    const entry = this.read(intentId);
    if (!entry) {
      return Promise.reject(new ExactlyError(`no stored intent ${intentId}`, { intentId }));
    }
    if (!this.mine(entry)) {
      return Promise.reject(this.notMine(entry));
    }
    if (this.expired(entry)) {
      return Promise.reject(this.expiredError(entry));
    }
    return this.start({ ...entry, state: 'pending', updated: this.now() }, true);
  }

  /**
   * Stored intents of the current account (the Authorization of headers()) still waiting for a final answer:
   * resume them after a reload. Another account's are left out (see otherAccountsPending).
   */
  pending() {
    return this.entries().filter((e) => e.state === 'pending' && this.mine(e));
  }

  /** Pending intents sent under another account: never resumed here, shown so that nobody pays them again. */
  otherAccountsPending() {
    return this.entries().filter((e) => e.state === 'pending' && !this.mine(e));
  }

  /** Every stored intent, newest first. */
  entries() {
    const list = [];
    for (let i = 0; i < this.storage.length; i++) {
      const name = this.storage.key(i);
      if (name && name.startsWith(this.prefix)) {
        const entry = this.parse(this.storage.getItem(name));
        if (entry) list.push(entry);
      }
    }
    return list.sort((a, b) => b.updated - a.updated);
  }

  /** The stored intent, or null. */
  intent(intentId) {
    return this.read(intentId);
  }

  /** Whether a request of this intent is in flight in this page. */
  isInFlight(intentId) {
    return this.inFlight.has(intentId);
  }

  /** Drops a stored intent (only a finished one: a pending intent's key must survive). */
  forget(intentId) {
    const entry = this.read(intentId);
    if (entry && entry.state === 'pending') {
      throw new ExactlyError(`intent ${intentId} is pending: its outcome is unknown and its key must be kept`, { intentId });
    }
    this.storage.removeItem(this.prefix + intentId);
  }

  // ------------------------------------------------------------------ internals

  start(entry, resumed) {
    try {
      this.write(entry);
    } catch (e) {
      return Promise.reject(new StorageError(`the key could not be stored, nothing was sent: ${e.message}`, { intentId: entry.intentId, cause: e }));
    }
    const running = { entry, request: entry.request, promise: null };
    running.promise = this.run(running, resumed).finally(() => this.inFlight.delete(entry.intentId));
    this.inFlight.set(entry.intentId, running);
    return running.promise;
  }

  async run(running, resumed) {
    const { intentId, key, request } = running.entry;
    const deadline = this.now() + this.retry.deadlineMs;
    let attempts = 0;
    for (;;) {
      attempts += 1;
      running.entry = { ...running.entry, attempts: running.entry.attempts + 1, updated: this.now() };
      this.writeQuietly(running.entry);
      const totalAttempts = running.entry.attempts;
      this.emit({ type: 'attempt', intentId, key, attempt: attempts, totalAttempts, resumed });
      let response = null;
      let text = '';
      let failure = null;
      try {
        ({ response, text } = await this.send(key, request, deadline));
      } catch (e) {
        failure = e;
      }
      let wait;
      if (response) {
        const status = response.status;
        const json = parseJson(text);
        const result = {
          intentId, key, status, ok: status >= 200 && status < 300, body: text, json,
          headers: response.headers, replayed: isReplay(response.headers),
          attempts, totalAttempts, joined: false, resumed,
        };
        this.emit({ type: 'answer', intentId, key, attempt: attempts, status, replayed: result.replayed, problem: json && json.type });
        if (status === 422 && json && json.type === KEY_REUSED_TYPE) {
          this.finish(running.entry, status);
          throw new KeyReusedError(`key ${key} of intent ${intentId} was already used for a different request`, { intentId, key, result });
        }
        // a refusal of this attempt (its credentials, the server's own failure) says nothing of an earlier one
        // that got no answer and may have paid: the intent stays pending, never finished as "refused"
        const saysNothingOfEarlier = !result.replayed && !isRetryable(status)
          && (status === 401 || status === 403 || status >= 500)
          && (totalAttempts > 1 || (status === 500 && json && json.type === INTERNAL_ERROR_TYPE));
        if (saysNothingOfEarlier) {
          this.emit({ type: 'give-up', intentId, key, attempts, totalAttempts, last: { status, problem: json && json.type } });
          throw new OutcomeUnknownError(
            `answer ${status} to attempt ${totalAttempts}; an earlier attempt may have taken effect, so the intent stays `
            + 'pending: retry later with the same key', { intentId, key, attempts, totalAttempts, last: { status } });
        }
        // a replay is the server's recorded outcome (a 409 business conflict, a recorded 502): every
        // retry would get it again, so it is final whatever its status
        if (result.replayed || !isRetryable(status)) {
          this.finish(running.entry, status);
          return result;
        }
        const hinted = parseRetryAfter(headerValue(response.headers, 'Retry-After'), this.now());
        wait = hinted ?? backoffDelay(attempts, this.retry, this.random);
        failure = { status, retryAfter: hinted != null, problem: json && json.type };
      } else {
        this.emit({ type: 'error', intentId, key, attempt: attempts, message: String(failure && failure.message || failure) });
        wait = backoffDelay(attempts, this.retry, this.random);
        failure = { status: 0, network: true, message: String(failure && failure.message || failure) };
      }
      if (attempts >= this.retry.maxAttempts || this.now() + wait + shortestRetry(this.retry) > deadline) {
        this.emit({ type: 'give-up', intentId, key, attempts, totalAttempts, last: failure });
        throw new OutcomeUnknownError(
          `no final answer after ${attempts} attempt(s); the intent stays pending: retry later with the same key`,
          { intentId, key, attempts, totalAttempts, last: failure });
      }
      this.emit({ type: 'retry', intentId, key, attempt: attempts, delayMs: wait, last: failure });
      await this.sleep(wait, Boolean(failure.network));
    }
  }

  async send(key, request, deadline) {
    const controller = new AbortController();
    const budget = Math.max(1, Math.min(this.retry.attemptTimeoutMs, deadline - this.now()));
    const timer = setTimeout(() => controller.abort(new Error(`no answer within ${budget} ms`)), budget);
    try {
      const response = await this.fetch(this.baseUrl + request.path, {
        method: request.method,
        headers: { ...this.headers(), 'Content-Type': request.contentType, 'Idempotency-Key': key },
        body: request.body,
        signal: controller.signal,
        credentials: 'same-origin',
        cache: 'no-store',
      });
      const text = await response.text();
      return { response, text };
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Who sends: a short hash of the Authorization header (never the credential itself), stored with each
   * intent, so that an intent is only ever sent under the account it was first sent under: the server scopes
   * keys per account, and another account's retry of it would be a new payment.
   */
  who() {
    const headers = this.headers() ?? {};
    const credential = Object.entries(headers).find(([name]) => name.toLowerCase() === 'authorization');
    return fnv1a(credential ? String(credential[1]) : '');
  }

  mine(entry) {
    return entry.who === undefined || entry.who === this.who();
  }

  notMine(entry) {
    return new AccountMismatchError(`intent ${entry.intentId} was sent under another account (key ${entry.key}); `
      + 'it is not sent under this one, where its key would name a new payment', { intentId: entry.intentId, key: entry.key });
  }

  // a pending intent first sent longer ago than keepPendingMs
  expired(entry) {
    return entry.state === 'pending' && this.now() - entry.created > this.keepPendingMs;
  }

  expiredError(entry) {
    return new IntentExpiredError(`intent ${entry.intentId} has been pending since ${new Date(entry.created).toISOString()}, `
      + 'longer than the server keeps keys: it is not sent again (it may have run, and its key may name nothing '
      + 'now); find out what became of it another way', { intentId: entry.intentId, key: entry.key });
  }

  finish(entry, status) {
    this.writeQuietly({ ...entry, state: 'finished', status, updated: this.now() });
    this.emit({ type: 'finish', intentId: entry.intentId, key: entry.key, status });
  }

  emit(event) {
    try {
      this.onEvent(event);
    } catch {
      // a listener's failure must not change the outcome
    }
  }

  read(intentId) {
    return this.parse(this.storage.getItem(this.prefix + intentId));
  }

  // an entry that is there but unreadable must not be replaced by a new key: the payment may have run
  readStrict(intentId) {
    const text = this.storage.getItem(this.prefix + intentId);
    const entry = this.parse(text);
    if (text != null && entry == null) {
      throw new StorageError(`the stored key of intent ${intentId} is unreadable; nothing was sent (a new key could pay twice)`, { intentId });
    }
    return entry;
  }

  parse(text) {
    if (!text) return null;
    const entry = parseJson(text);
    return entry && entry.v === ENTRY_VERSION && typeof entry.key === 'string' && entry.request ? entry : null;
  }

  write(entry) {
    const text = JSON.stringify(entry);
    try {
      this.storage.setItem(this.prefix + entry.intentId, text);
    } catch (e) {
      // room is made from finished intents past their keep time only: a recent one's key is what answers a
      // second payment of the same order with the recorded result (dropping it minted a new key and paid again)
      this.pruneFinished();
      this.storage.setItem(this.prefix + entry.intentId, text);
    }
  }

  writeQuietly(entry) {
    try {
      this.write(entry);
    } catch {
      // the key was stored before the first send; a lost attempt counter is only cosmetic
    }
  }

  pruneFinished(olderThanMs = this.keepFinishedMs) {
    const limit = this.now() - olderThanMs;
    for (const entry of this.entries()) {
      if (entry.state !== 'pending' && entry.updated <= limit && !this.inFlight.has(entry.intentId)) {
        this.storage.removeItem(this.prefix + entry.intentId);
      }
    }
  }
}

function checkIntentId(intentId) {
  if (typeof intentId !== 'string' || intentId.length === 0 || intentId.length > MAX_INTENT_ID) {
    throw new TypeError(`an intent id is a non-empty string of at most ${MAX_INTENT_ID} characters`);
  }
}

function normaliseRequest(request) {
  if (!request || typeof request.path !== 'string' || !request.path.startsWith('/')) {
    throw new TypeError('request.path must be an absolute path such as /v1/charges');
  }
  const method = (request.method ?? 'POST').toUpperCase();
  const body = request.body == null ? '' : typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
  return { method, path: request.path, body, contentType: request.contentType ?? 'application/json' };
}

function sameRequest(a, b) {
  return a.method === b.method && a.path === b.path && a.body === b.body && a.contentType === b.contentType;
}

/** FNV-1a, 32 bits, as 8 hex digits: tells accounts apart without storing their credentials. */
function fnv1a(text) {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

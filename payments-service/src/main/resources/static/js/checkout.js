// The checkout page: an "Upgrade subscription" form that pays (or only authorizes) through the browser
// helper, capture / void / refund buttons that each send one intent of their own through the helper, the
// demo switches, the customer's balance and trial balance, and an operations view (keys, stuck requests,
// dead letters, reconciliation, events). Plain DOM, no framework; every value from the server is written
// with textContent.
import { ExactlyClient, IntentMismatchError, KeyReusedError, OutcomeUnknownError, StorageError } from './exactly-client.js';

const PLANS = {
  pro: { name: 'Pro', amount: 1999 },
  team: { name: 'Team', amount: 4900 },
  enterprise: { name: 'Enterprise', amount: 19900 },
};
const CURRENCY = 'usd';
const ORDER_ITEM = 'exactly.checkout.order';
const DOUBLE_ITEM = 'exactly.checkout.double-click';
const API_KEY_ITEM = 'exactly.checkout.api-key';
const OPERATOR_KEY_ITEM = 'exactly.checkout.operator-key';
const CUSTOMER = /^[A-Za-z0-9_-]{1,64}$/;

const $ = (id) => document.getElementById(id);
const page = { settings: { demo: false }, apiKey: '', operatorKey: '', client: null, clicks: 0, shown: null, reconRuns: 0 };

// what each action button sends: one intent per action and charge, so a second click (or a reload)
// sends the same key and body again and gets the recorded answer
const ACTIONS = {
  capture: { busy: 'Capturing…', request: (c) => ({ path: `/v1/charges/${encodeURIComponent(c.id)}/capture`, body: {} }) },
  void: { busy: 'Voiding…', request: (c) => ({ path: `/v1/charges/${encodeURIComponent(c.id)}/void`, body: {} }) },
  refund: { busy: 'Refunding…', request: (c) => ({ path: '/v1/refunds', body: { charge: c.id, amount: capturedOf(c) } }) },
};

// ------------------------------------------------------------------ formatting

function money(minor, currency) {
  const code = String(currency || CURRENCY).toUpperCase();
  try {
    const format = new Intl.NumberFormat('en-US', { style: 'currency', currency: code });
    const digits = format.resolvedOptions().maximumFractionDigits;
    return format.format(minor / 10 ** digits);
  } catch {
    return `${minor} ${code} (minor units)`;
  }
}

function cell(row, text, className) {
  const td = document.createElement('td');
  td.textContent = text == null ? '–' : String(text);
  if (className) td.className = className;
  row.appendChild(td);
  return td;
}

function fillTable(id, rows, columns, empty) {
  const body = $(id).querySelector('tbody');
  body.replaceChildren();
  if (rows.length === 0) {
    const tr = document.createElement('tr');
    const td = cell(tr, empty);
    td.colSpan = $(id).querySelectorAll('th').length;
    td.className = 'muted';
    body.appendChild(tr);
    return;
  }
  for (const r of rows) {
    const tr = document.createElement('tr');
    for (const c of columns) c(tr, r);
    body.appendChild(tr);
  }
}

function log(text, kind = 'info') {
  const li = document.createElement('li');
  li.className = kind;
  const time = new Date().toLocaleTimeString([], { hour12: false });
  li.textContent = `${time}  ${text}`;
  $('log').appendChild(li);
  while ($('log').children.length > 60) $('log').firstElementChild.remove();
}

function setStatus(state, text) {
  const el = $('status');
  el.dataset.state = state;
  el.textContent = text;
}

function problemName(json) {
  if (!json || typeof json.type !== 'string') return '';
  return json.type.substring(json.type.lastIndexOf('/') + 1);
}

// ------------------------------------------------------------------ API calls (reads, not payments)

async function api(path, { key = page.apiKey, method = 'GET', body } = {}) {
  const headers = { Authorization: `Bearer ${key}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' });
  const text = await response.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch { json = null; }
  return { status: response.status, ok: response.ok, json };
}

// ------------------------------------------------------------------ the order being paid

function readForm() {
  return { customer: $('customer').value.trim(), plan: $('plan').value, card: $('card').value, authorizeOnly: $('authorize-only').checked };
}

function currentOrder() {
  try {
    const order = JSON.parse(localStorage.getItem(ORDER_ITEM) || 'null');
    return order && typeof order.id === 'string' && PLANS[order.plan] ? order : null;
  } catch {
    return null;
  }
}

// throws StorageError when the browser refuses to store it: then nothing is sent
function newOrder(form) {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  const order = { id: 'ord_' + Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join(''), ...form };
  try {
    localStorage.setItem(ORDER_ITEM, JSON.stringify(order));
  } catch (e) {
    throw new StorageError(`the order could not be stored (${e && e.message || e})`, { cause: e });
  }
  return order;
}

function intentOf(order) {
  return 'upgrade:' + order.id;
}

// an order whose charge went through is kept as paid, apart from the helper's entry (which goes after a day,
// as the server forgets its key): paying it again sends nothing, however long after and whatever the clock
function markPaid(intentId, charge) {
  const order = currentOrder();
  if (!order || intentOf(order) !== intentId || order.paid) return;
  try {
    localStorage.setItem(ORDER_ITEM, JSON.stringify({ ...order, paid: { charge: charge.id, status: charge.status } }));
  } catch {
    // the helper's entry still answers a second payment with the recorded result for a day
  }
}

// orders sent without a final answer (under any API key): one of them may have paid, so no other order
// starts until each has its answer
function unsettledOrders() {
  if (!page.client) return [];
  try {
    return page.client.entries().filter((e) => e.state === 'pending' && e.intentId.startsWith('upgrade:'));
  } catch {
    return [];
  }
}

function unsettledText(entries) {
  const e = entries[0];
  const order = e.intentId.substring('upgrade:'.length);
  const elsewhere = page.client.pending().some((p) => p.intentId === e.intentId)
    ? 'Retry it with its key (below, or reload the page)'
    : 'It was sent under another API key: use that key again to resume it';
  return `Order ${order} has no final answer yet and may have been paid. ${elsewhere}; `
    + 'a new order can start once it has its answer.';
}

function chargeBody(order) {
  const plan = PLANS[order.plan];
  return {
    amount: plan.amount,
    currency: CURRENCY,
    customer: order.customer,
    source: order.card,
    description: `Upgrade to ${plan.name}`,
    metadata: { order: order.id, plan: order.plan },
    ...(order.authorizeOnly ? { capture: false } : {}),
  };
}

function showOrder(order) {
  $('order-id').textContent = order ? order.id : 'new';
  if (order) {
    $('customer').value = order.customer;
    $('plan').value = order.plan;
    $('card').value = order.card;
    $('authorize-only').checked = order.authorizeOnly === true;
  }
  const plan = PLANS[$('plan').value];
  $('pay').textContent = `${$('authorize-only').checked ? 'Authorize' : 'Pay'} ${money(plan.amount, CURRENCY)}`;
}

function lockForm() {
  const busy = page.client != null && page.client.pending().some((e) => page.client.isInFlight(e.intentId));
  const unsettled = unsettledOrders().length > 0;
  $('order-fields').disabled = busy || unsettled;
  $('new-order').disabled = busy || unsettled;
  $('checkout-card').classList.toggle('busy', busy);
}

// ------------------------------------------------------------------ paying

function onPayClick(event) {
  event.preventDefault();
  page.clicks += 1;
  const submits = $('switch-double').checked ? 2 : 1;
  for (let i = 0; i < submits; i++) payOnce();
}

function payOnce() {
  if (!page.client) return;
  if (!page.apiKey) {
    setStatus('error', 'Enter an API key first.');
    $('api-key').focus();
    return;
  }
  const form = readForm();
  if (!CUSTOMER.test(form.customer)) {
    setStatus('error', 'The customer id is 1–64 letters, digits, _ or -.');
    return;
  }
  let order = currentOrder();
  const sameOrder = order && order.customer === form.customer && order.plan === form.plan && order.card === form.card
    && (order.authorizeOnly === true) === form.authorizeOnly;
  if (sameOrder && order.paid && typeof order.paid.charge === 'string') {
    setStatus(order.paid.status === 'authorized' ? 'authorized' : 'paid', `Order ${order.id} is already `
      + `${order.paid.status === 'authorized' ? 'authorized' : 'paid'} (charge ${order.paid.charge}): nothing was sent. `
      + 'Start a new order to pay again.');
    log(`order ${order.id} is paid by ${order.paid.charge}: not sent again`, 'ok');
    showPaidCharge(order.paid.charge);
    return;
  }
  if (!sameOrder) {
    if (order && page.client.isInFlight(intentOf(order))) {
      log('the order in flight must finish before another one starts', 'warn');
      return;
    }
    const unsettled = unsettledOrders();
    if (unsettled.length > 0) {
      setStatus('unknown', unsettledText(unsettled));
      $('resume').hidden = page.client.pending().length === 0;
      log(`no new order while ${unsettled[0].intentId} has no final answer`, 'warn');
      if (order && unsettled.some((e) => e.intentId === intentOf(order))) showOrder(order);
      lockForm();
      return;
    }
    try {
      order = newOrder(form);
    } catch (e) {
      showError(e);
      return;
    }
    showOrder(order);
  }
  const intentId = intentOf(order);
  follow(page.client.submit(intentId, { path: '/v1/charges', body: chargeBody(order) }), false, 'pay');
}

function actionOf(intentId) {
  const kind = intentId.substring(0, intentId.indexOf(':'));
  return ACTIONS[kind] ? kind : 'pay';
}

function capturedOf(charge) {
  return charge.amount_captured ?? charge.amount;
}

function onActionClick(kind) {
  const charge = page.shown;
  if (!charge) return;
  if (!page.apiKey) {
    setStatus('error', 'Enter an API key first.');
    return;
  }
  follow(page.client.submit(`${kind}:${charge.id}`, ACTIONS[kind].request(charge)), false, kind);
}

function resumeIntent(entry) {
  const order = currentOrder();
  if (order && intentOf(order) === entry.intentId) showOrder(order);
  log(`resuming ${entry.intentId} with its stored key ${entry.key} and body`, 'info');
  follow(page.client.resume(entry.intentId), true, actionOf(entry.intentId));
}

function follow(promise, resumed, kind) {
  const busy = kind === 'pay' ? 'Paying…' : ACTIONS[kind].busy;
  setStatus('paying', resumed ? `Resuming after a reload: ${busy}` : busy);
  $('resume').hidden = true;
  lockForm();
  promise.then(
    (result) => showResult(result, kind),
    (error) => showError(error),
  ).finally(() => {
    lockForm();
    refreshMoney();
    refreshOps();
  });
}

function showFacts(result) {
  $('idem-key').textContent = result.key;
  $('attempts').textContent = String(result.attempts);
  $('total-attempts').textContent = String(result.totalAttempts);
  $('replayed').textContent = result.replayed ? 'yes (Idempotent-Replayed: true)' : 'no';
  $('replayed').title = result.replayed ? 'the recorded answer of an earlier request with this key' : 'this request made the charge';
  $('replayed').dataset.replayed = String(result.replayed);
}

function showCharge(charge) {
  page.shown = charge;
  $('charge-id').textContent = charge.id;
  $('charge-amount').textContent = money(charge.amount, charge.currency);
  const captured = charge.amount_captured;
  $('charge-status').textContent = charge.status === 'succeeded' && captured != null && captured !== charge.amount
    ? `${charge.status} (captured ${money(captured, charge.currency)})`
    : charge.status === 'authorized' ? `authorized (${money(charge.amount, charge.currency)} held, not captured)` : charge.status;
  $('charge-refunded').textContent = charge.amount_refunded ? money(charge.amount_refunded, charge.currency) : '–';
  showActions(charge);
}

function showActions(charge) {
  const authorized = charge != null && charge.status === 'authorized';
  const refundable = charge != null && charge.status === 'succeeded' && capturedOf(charge) > 0;
  $('capture').hidden = !authorized;
  $('void').hidden = !authorized;
  $('refund').hidden = !refundable;
  if (refundable) $('refund').textContent = `Refund ${money(capturedOf(charge), charge.currency)}`;
  if (authorized) $('capture').textContent = `Capture ${money(charge.amount, charge.currency)}`;
  $('charge-actions').hidden = !(authorized || refundable);
  $('actions-hint').hidden = $('charge-actions').hidden;
}

const CHARGE_STATES = {
  authorized: ['authorized', 'Authorized: the amount is held, not captured.'],
  voided: ['voided', 'Voided: the hold is released, nothing was captured.'],
};

async function showResult(result, kind = 'pay') {
  if (result.joined) {
    log(`click joined the ${kind === 'pay' ? 'payment' : kind} in flight: no second request (key ${result.key})`, 'ok');
    return;
  }
  showFacts(result);
  const json = result.json;
  const replayNote = result.replayed ? ' (answer replayed: it happened once)' : '';
  if (result.ok && json && json.object === 'charge') {
    if (kind === 'pay' && (json.status === 'succeeded' || json.status === 'authorized')) markPaid(result.intentId, json);
    showCharge(json);
    const [state, text] = CHARGE_STATES[json.status]
      || (kind === 'capture' ? ['captured', `Captured ${money(capturedOf(json), json.currency)}.`] : ['paid', 'Paid.']);
    setStatus(state, result.replayed ? text.replace(/\.$/, replayNote + '.') : text);
    if (kind === 'pay' && json.status === 'succeeded') {
      await showCaptures(json.id);
    } else {
      $('captures').textContent = json.status === 'authorized' ? '0 (held, not captured)' : '–';
    }
  } else if (result.ok && json && json.object === 'refund') {
    $('charge-refunded').textContent = `${money(json.amount, json.currency)} (${json.id})`;
    setStatus('refunded', `Refunded ${money(json.amount, json.currency)} through the processor${replayNote}.`);
  } else if (kind === 'pay' && result.status === 402 && json) {
    $('charge-id').textContent = json.charge || '–';
    $('charge-amount').textContent = '–';
    $('charge-status').textContent = `failed (${json.decline_code || json.code || 'declined'})`;
    setStatus('declined', 'Declined: ' + (json.detail || 'the card was declined') + '.');
  } else {
    $('charge-status').textContent = '–';
    setStatus('error', `Refused (${result.status} ${problemName(json) || ''}): ${(json && json.detail) || 'see the log'}`);
  }
}

function showError(error) {
  if (error instanceof OutcomeUnknownError) {
    $('idem-key').textContent = error.key;
    $('attempts').textContent = String(error.attempts);
    $('total-attempts').textContent = String(error.totalAttempts);
    setStatus('unknown', 'No final answer yet: the payment may have gone through. It stays pending with its key, and is '
      + 'asked again with that key when the browser is back online, on a reload, or with the button below; '
      + 'a new order can start once it has its answer.');
    $('resume').hidden = false;
  } else if (error instanceof KeyReusedError) {
    setStatus('error', `The server holds key ${error.key} for a different request (a bug in the caller); nothing was retried.`);
  } else if (error instanceof IntentMismatchError) {
    setStatus('error', error.message);
  } else if (error instanceof StorageError) {
    setStatus('error', 'The browser could not store the payment, so nothing was sent: ' + error.message
      + '. Free some site storage (or leave private browsing) and try again.');
  } else {
    setStatus('error', String(error && error.message || error));
  }
  log(`${error && error.name}: ${error && error.message}`, 'error');
}

// the charge that paid an order, as the service has it now (read, not sent again)
async function showPaidCharge(chargeId) {
  const r = await api(`/v1/charges/${encodeURIComponent(chargeId)}`).catch(() => null);
  if (!r || !r.ok || !r.json || r.json.object !== 'charge') {
    $('charge-id').textContent = chargeId;
    return;
  }
  showCharge(r.json);
  if (r.json.status === 'succeeded') await showCaptures(r.json.id);
}

async function showCaptures(chargeId) {
  if (!page.settings.processor_switches) {
    $('captures').textContent = 'not shown (a real processor)';
    return;
  }
  const r = await api(`/v1/demo/processor/captures/${encodeURIComponent(chargeId)}`).catch(() => null);
  $('captures').textContent = r && r.ok ? String(r.json.captures) : '–';
}

function onClientEvent(e) {
  switch (e.type) {
    case 'attempt':
      $('attempts').textContent = String(e.attempt);
      $('total-attempts').textContent = String(e.totalAttempts);
      $('idem-key').textContent = e.key;
      setStatus('paying', `Attempt ${e.attempt}${e.resumed ? ' (resumed after reload)' : ''} in flight…`);
      log(`attempt ${e.attempt} (${e.totalAttempts} for this ${actionOf(e.intentId) === 'pay' ? 'order' : actionOf(e.intentId)}) sent with Idempotency-Key ${e.key}${e.resumed ? ', resumed after reload' : ''}`);
      break;
    case 'answer':
      log(`attempt ${e.attempt} answered ${e.status}${e.problem ? ' ' + e.problem.substring(e.problem.lastIndexOf('/') + 1) : ''}${e.replayed ? ' (replayed)' : ''}`,
        e.status < 300 ? 'ok' : e.status === 402 ? 'warn' : 'error');
      break;
    case 'error':
      log(`attempt ${e.attempt} failed: network error (${e.message})`, 'error');
      break;
    case 'retry': {
      const why = e.last && e.last.retryAfter ? 'Retry-After' : 'backoff with jitter';
      setStatus('waiting', `Waiting ${(e.delayMs / 1000).toFixed(1)} s (${why}), then retrying with the same key…`);
      log(`retrying in ${(e.delayMs / 1000).toFixed(1)} s (${why}), same key`);
      break;
    }
    case 'give-up':
      log(`no final answer after ${e.attempts} attempts: the intent stays pending`, 'warn');
      break;
    case 'join':
      log(`click while the ${actionOf(e.intentId) === 'pay' ? 'payment' : actionOf(e.intentId)} is in flight: joined it (key ${e.key})`);
      break;
    default:
      break;
  }
}

// ------------------------------------------------------------------ money and operations

async function refreshMoney() {
  if (!page.apiKey) return;
  const customer = readForm().customer;
  if (CUSTOMER.test(customer)) {
    const b = await api(`/v1/customers/${encodeURIComponent(customer)}/balance`).catch(() => null);
    const amounts = (lines) => (!lines || lines.length === 0 ? money(0, CURRENCY) : lines.map((l) => money(l.amount, l.currency)).join(', '));
    if (b && b.ok) {
      $('balance').textContent = amounts(b.json.available);
      $('balance-pending').textContent = amounts(b.json.pending);
    } else {
      $('balance').textContent = b ? `unavailable (${b.status})` : 'unavailable';
      $('balance-pending').textContent = '–';
    }
  }
  const t = await api('/v1/ledger/trial-balance').catch(() => null);
  if (!t || !t.ok) {
    $('trial-balanced').textContent = t ? `unavailable (${t.status})` : 'unavailable';
    return;
  }
  $('trial-balanced').textContent = t.json.balanced ? 'balanced' : 'NOT balanced';
  $('trial-balanced').dataset.balanced = String(t.json.balanced);
  const rows = [...t.json.lines];
  for (const total of t.json.totals || []) {
    rows.push({ account: `total ${total.currency}`, type: total.balanced ? 'balanced' : 'UNBALANCED', currency: total.currency, debit: total.debits, credit: total.credits, total: true });
  }
  fillTable('trial-balance', rows, [
    (tr, r) => { cell(tr, r.account); if (r.total) tr.className = 'total'; },
    (tr, r) => cell(tr, r.type),
    (tr, r) => cell(tr, money(r.debit, r.currency), 'num'),
    (tr, r) => cell(tr, money(r.credit, r.currency), 'num'),
  ], 'no entries yet');
}

async function refreshOps() {
  if (!page.client) return;
  const entries = page.client.entries().slice(0, 10);
  const server = await Promise.all(entries.map((e) => page.apiKey
    ? api(`/v1/idempotency-keys/${encodeURIComponent(e.key)}`).catch(() => null)
    : Promise.resolve(null)));
  fillTable('ops-keys', entries.map((e, i) => ({ e, s: server[i] })), [
    (tr, r) => cell(tr, r.e.intentId),
    (tr, r) => cell(tr, r.e.key, 'mono'),
    (tr, r) => cell(tr, page.client.isInFlight(r.e.intentId) ? 'in flight' : r.e.state),
    (tr, r) => cell(tr, r.e.attempts),
    (tr, r) => cell(tr, r.s && r.s.ok ? `${r.s.json.status} (${r.s.json.response_status ?? '–'})` : r.s && r.s.status === 404 ? 'not seen' : '–'),
    (tr, r) => cell(tr, r.s && r.s.ok ? r.s.json.replay_count : '–'),
    (tr, r) => cell(tr, r.s && r.s.ok && r.s.json.resource ? `${r.s.json.resource.id} ${r.s.json.resource.status}` : '–'),
  ], 'no payments from this browser yet');

  await refreshEvents();
  if (!page.operatorKey) {
    $('ops-note').textContent = 'Enter the operator key to list stuck requests, dead letters and the reconciliation.';
    fillTable('ops-stuck', [], [], 'operator key needed');
    fillTable('ops-dead', [], [], 'operator key needed');
    fillTable('ops-recon', [], [], 'operator key needed');
    $('recon-summary').textContent = '–';
    delete $('recon-summary').dataset.mismatches;
    return;
  }
  await refreshReconciliation();
  const [stuck, dead] = await Promise.all(['stuck', 'dead_lettered'].map((state) =>
    api(`/v1/operator/requests?state=${state}&limit=20`, { key: page.operatorKey }).catch(() => null)));
  $('ops-note').textContent = stuck && stuck.ok ? '' : `operator endpoints answered ${stuck ? stuck.status : 'nothing'}`;
  fillTable('ops-stuck', stuck && stuck.ok ? stuck.json.data : [], [
    (tr, r) => cell(tr, r.charge, 'mono'),
    (tr, r) => cell(tr, r.customer),
    (tr, r) => cell(tr, money(r.amount, r.currency), 'num'),
    (tr, r) => cell(tr, r.recovery_point),
    (tr, r) => cell(tr, r.attempts),
    (tr, r) => cell(tr, r.last_error),
    (tr, r) => cell(tr, r.lease_expires),
  ], 'none');
  fillTable('ops-dead', dead && dead.ok ? dead.json.data : [], [
    (tr, r) => cell(tr, r.charge, 'mono'),
    (tr, r) => cell(tr, r.customer),
    (tr, r) => cell(tr, money(r.amount, r.currency), 'num'),
    (tr, r) => cell(tr, r.attempts),
    (tr, r) => cell(tr, r.dead_letter_reason),
    (tr, r) => {
      const td = cell(tr, '');
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = 'Retry now';
      button.addEventListener('click', async () => {
        button.disabled = true;
        const answer = await api(`/v1/operator/requests/${encodeURIComponent(r.charge)}/retry`, { key: page.operatorKey, method: 'POST' }).catch(() => null);
        log(`operator retry of ${r.charge}: ${answer ? answer.status : 'no answer'}`, answer && answer.ok ? 'ok' : 'error');
        refreshOps();
        refreshMoney();
      });
      td.appendChild(button);
    },
  ], 'none');
}

const EVENT_PAGES = 20;
const EVENTS_SHOWN = 15;

async function refreshEvents() {
  if (!page.apiKey) {
    fillTable('ops-events', [], [], 'API key needed');
    return;
  }
  // the list is oldest first in keyset pages: walk to its end (bounded) and show the newest
  let events = [];
  let after = null;
  for (let i = 0; i < EVENT_PAGES; i++) {
    const r = await api(`/v1/events?limit=500${after ? '&after=' + encodeURIComponent(after) : ''}`).catch(() => null);
    if (!r || !r.ok) {
      fillTable('ops-events', [], [], `events unavailable (${r ? r.status : 'no answer'})`);
      return;
    }
    events = events.concat(r.json.data).slice(-EVENTS_SHOWN);
    if (!r.json.has_more || !r.json.next_after) break;
    after = r.json.next_after;
  }
  fillTable('ops-events', events.reverse(), [
    (tr, r) => cell(tr, r.type),
    (tr, r) => cell(tr, r.subject, 'mono'),
    (tr, r) => cell(tr, new Date(r.created * 1000).toISOString().replace('.000Z', 'Z')),
    (tr, r) => cell(tr, r.id, 'mono'),
  ], 'no events yet');
}

async function refreshReconciliation() {
  const r = await api('/v1/operator/reconciliation', { key: page.operatorKey }).catch(() => null);
  const summary = $('recon-summary');
  if (!r || !r.ok) {
    summary.textContent = `reconciliation unavailable (${r ? r.status : 'no answer'})`;
    delete summary.dataset.mismatches;
    fillTable('ops-recon', [], [], '–');
    return;
  }
  const counts = r.json.mismatch_counts || {};
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  page.reconRuns += 1;
  summary.dataset.mismatches = String(total);
  summary.dataset.run = String(page.reconRuns);
  summary.textContent = `${total === 0 ? 'no mismatches' : total + ' mismatch(es)'}: `
    + Object.entries(counts).map(([kind, n]) => `${kind} ${n}`).join(', ')
    + ` (${r.json.captures_compared} captures, ${r.json.refunds_compared} refunds compared since ${r.json.from})`;
  fillTable('ops-recon', r.json.mismatches || [], [
    (tr, m) => cell(tr, m.kind),
    (tr, m) => cell(tr, m.subject),
    (tr, m) => cell(tr, m.charge, 'mono'),
    (tr, m) => cell(tr, m.processor_charge, 'mono'),
    (tr, m) => cell(tr, money(m.processor_amount, m.currency), 'num'),
    (tr, m) => cell(tr, money(m.ledger_amount, m.currency), 'num'),
    (tr, m) => cell(tr, m.detail),
  ], 'none: the processor and the ledger agree');
}

// ------------------------------------------------------------------ demo switches

async function loadSwitches() {
  if (!page.settings.processor_switches || !page.apiKey) return;
  const r = await api('/v1/demo/processor').catch(() => null);
  if (r && r.ok) {
    $('switch-slow').checked = r.json.slow;
    $('switch-drop').checked = r.json.drop_response;
    $('slow-seconds').textContent = String(r.json.slow_ms / 1000);
  }
}

async function saveSwitches() {
  const wanted = { slow: $('switch-slow').checked, drop_response: $('switch-drop').checked };
  const r = await api('/v1/demo/processor', { method: 'PUT', body: wanted }).catch(() => null);
  const note = $('switches-note');
  if (r && r.ok) {
    $('switch-slow').checked = r.json.slow;
    $('switch-drop').checked = r.json.drop_response;
    note.textContent = `processor: ${r.json.slow ? 'slow' : 'fast'}, ${r.json.drop_response ? 'drops every response after capturing' : 'answers normally'}`;
    note.dataset.saved = JSON.stringify(r.json);
  } else {
    note.textContent = `the switches could not be set (${r ? r.status : 'no answer'})`;
  }
}

// ------------------------------------------------------------------ start

async function loadSettings() {
  try {
    const r = await fetch('/demo/settings', { cache: 'no-store' });
    return r.ok ? await r.json() : { demo: false };
  } catch {
    return { demo: false };
  }
}

// the API key and the operator key are kept for the tab's session when the browser lets the page
function remember(item, value) {
  try {
    sessionStorage.setItem(item, value);
  } catch {
    // kept in the page only: a reload asks for it again
  }
}

function recalled(storage, item) {
  try {
    return globalThis[storage].getItem(item);
  } catch {
    return null;
  }
}

function useApiKey(key) {
  page.apiKey = key.trim();
  if (page.apiKey) remember(API_KEY_ITEM, page.apiKey);
  $('api-key').value = page.apiKey;
}

// without storage a key would not survive a reload, and a payment could not be resumed with it: no paying
function storageRefused(error) {
  $('pay').disabled = true;
  $('new-order').disabled = true;
  $('order-fields').disabled = true;
  setStatus('error', 'This browser does not let the page store payment keys '
    + `(${error && error.message || error}), so a payment interrupted by a reload could not be resumed with its key: `
    + 'paying is disabled here. Allow site storage (or leave private browsing) and reload.');
  log(`storage refused: ${error && error.message || error}`, 'error');
}

async function start() {
  page.settings = await loadSettings();
  const demo = page.settings.demo === true;
  $('mode').textContent = demo ? 'demo mode: demo key preselected' : 'enter your API key';
  $('mode').dataset.demo = String(demo);
  useApiKey(recalled('sessionStorage', API_KEY_ITEM) || (demo && page.settings.api_keys ? page.settings.api_keys.acme || '' : ''));
  page.operatorKey = recalled('sessionStorage', OPERATOR_KEY_ITEM) || (demo ? page.settings.operator_key || '' : '');
  $('operator-key').value = page.operatorKey;
  $('switches').hidden = !(demo && page.settings.processor_switches);
  $('switch-double').checked = recalled('localStorage', DOUBLE_ITEM) === 'true';

  try {
    page.client = new ExactlyClient({
      namespace: 'exactly.checkout',
      // this service answers a late retry from the charge, action or refund row, which it keeps beyond the
      // key's retention: an order left pending is asked again however old, never paid again
      keepPendingMs: Infinity,
      headers: () => ({ Authorization: `Bearer ${page.apiKey}` }),
      onEvent: onClientEvent,
    });
    page.client.entries();
  } catch (e) {
    page.client = null;
    storageRefused(e);
    document.body.dataset.ready = 'true';
    return;
  }

  showOrder(currentOrder());
  $('checkout').addEventListener('submit', onPayClick);
  $('plan').addEventListener('change', () => showOrder(null));
  $('authorize-only').addEventListener('change', () => showOrder(null));
  for (const kind of Object.keys(ACTIONS)) $(kind).addEventListener('click', () => onActionClick(kind));
  $('new-order').addEventListener('click', () => {
    const unsettled = unsettledOrders();
    if (unsettled.length > 0) {
      setStatus('unknown', unsettledText(unsettled));
      lockForm();
      return;
    }
    try {
      localStorage.removeItem(ORDER_ITEM);
    } catch (e) {
      showError(new StorageError(`the order could not be cleared (${e && e.message || e})`, { cause: e }));
      return;
    }
    showOrder(null);
    setStatus('idle', 'New order: the next payment gets a new key.');
  });
  $('resume').addEventListener('click', () => page.client.pending().forEach(resumeIntent));
  $('key-form').addEventListener('submit', (e) => {
    e.preventDefault();
    useApiKey($('api-key').value);
    loadSwitches();
    refreshMoney();
    refreshOps();
    page.client.pending().filter((p) => !page.client.isInFlight(p.intentId)).forEach(resumeIntent);
  });
  $('ops-form').addEventListener('submit', (e) => {
    e.preventDefault();
    page.operatorKey = $('operator-key').value.trim();
    if (page.operatorKey) remember(OPERATOR_KEY_ITEM, page.operatorKey);
    refreshOps();
  });
  $('switch-double').addEventListener('change', () => {
    try {
      localStorage.setItem(DOUBLE_ITEM, String($('switch-double').checked));
    } catch {
      // the switch holds for this page only
    }
  });
  $('switch-slow').addEventListener('change', saveSwitches);
  $('switch-drop').addEventListener('change', saveSwitches);
  window.addEventListener('online', () => {
    log('the browser is online again');
    // intents left without a final answer while offline are asked again, with their keys
    if (page.apiKey) page.client.pending().filter((p) => !page.client.isInFlight(p.intentId)).forEach(resumeIntent);
  });
  window.addEventListener('offline', () => log('the browser went offline', 'warn'));

  const pending = page.client.pending();
  if (pending.length > 0 && page.apiKey) {
    pending.forEach(resumeIntent);
  } else if (pending.length > 0) {
    setStatus('unknown', `${pending.length} payment(s) pending from before: enter the API key to resume them with their keys.`);
  } else if (unsettledOrders().length > 0) {
    setStatus('unknown', unsettledText(unsettledOrders()));
  }
  lockForm();
  await loadSwitches();
  await Promise.all([refreshMoney(), refreshOps()]);
  document.body.dataset.ready = 'true';
}

start();

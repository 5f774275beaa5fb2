/**
 * Webhooks from a transactional outbox. Business code records an event with {@link
 * dev.exactly.payments.webhooks.Outbox#record} on the connection of the transaction that changes the charge
 * or refund, so the event commits (or rolls back) with the change; the same statement plans one delivery
 * per endpoint of the tenant that listens to the event's type. {@link
 * dev.exactly.payments.webhooks.DeliveryWorker} sends the deliveries at least once, signed by {@link
 * dev.exactly.payments.webhooks.WebhookSignature}, with backoff and a dead letter; {@link
 * dev.exactly.payments.webhooks.WebhookEndpoints} and {@link dev.exactly.payments.webhooks.Events} serve the
 * API's endpoints and event lists. Nothing here speaks the service's HTTP API: the web layer renders the
 * results.
 */
@NullMarked
package dev.exactly.payments.webhooks;

import org.jspecify.annotations.NullMarked;

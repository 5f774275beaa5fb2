-- The delivery worker claims due deliveries endpoint by endpoint, at most a few of each endpoint per claim
-- (DeliveryWorker.CLAIM): it finds the endpoints with pending deliveries by skipping through this index
-- one endpoint at a time, and each endpoint's oldest due deliveries in its order. V4's index of pending
-- deliveries by endpoint alone (used to cancel an endpoint's pending deliveries when it is disabled, which
-- this one serves as well) is replaced. Applied on top of V10; runs once (Flyway).

CREATE INDEX payments_webhook_delivery_endpoint_due_idx
    ON payments_webhook_delivery (endpoint_id, next_attempt_at, id) WHERE status = 'pending';
DROP INDEX payments_webhook_delivery_endpoint_idx;

-- The recorded answer of a charge or refund keeps its Location with it, so that a row replays its answer
-- exactly as it was recorded, without knowing the API's paths.
ALTER TABLE payments_charge ADD COLUMN response_location text NULL;
ALTER TABLE payments_refund ADD COLUMN response_location text NULL;

UPDATE payments_charge SET response_location = '/v1/charges/' || id WHERE response_status = 201;
UPDATE payments_refund SET response_location = '/v1/refunds/' || id WHERE response_status = 201;

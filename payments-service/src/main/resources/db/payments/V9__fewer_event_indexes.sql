-- A charge's webhook event wrote four index entries: its primary key (seq), its id, (tenant, seq) and
-- (tenant, subject_id). The service reads events by tenant in seq order (the event list, keyset pages) and by
-- id (one event, the delivery worker's join, the deliveries' foreign key); nothing reads them by seq alone or
-- by subject. The primary key becomes (tenant, seq), which serves the event list as (tenant, seq) did, and
-- the two indexes no reader needs are dropped: two index entries per event, and their WAL, fewer. The rows
-- stay as they are; building the new key reads the table once (writes of events wait meanwhile).
-- Applied on top of V8; runs once (Flyway).

DROP INDEX payments_event_subject_idx;

CREATE UNIQUE INDEX payments_event_tenant_seq_key ON payments_event (tenant, seq);
ALTER TABLE payments_event DROP CONSTRAINT payments_event_pkey;
-- renames the index to payments_event_pkey
ALTER TABLE payments_event ADD CONSTRAINT payments_event_pkey PRIMARY KEY USING INDEX payments_event_tenant_seq_key;
DROP INDEX payments_event_tenant_idx;

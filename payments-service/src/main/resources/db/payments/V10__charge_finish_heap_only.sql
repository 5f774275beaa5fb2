-- A charge's final UPDATE in phase 3 becomes a heap-only (HOT) update: no new index entries, the new row
-- version on the same page. PostgreSQL (15) updates in place of the indexes only when no column that an
-- index names, in its key or its predicate, changes; phase 3 changes status and updated_at, which the
-- partial indexes of open (V1) and authorized (V5) charges named, so every finish wrote a new entry into each
-- of the charge's four other indexes, and every new charge one into the open index. The two sets are found
-- where they are kept anyway:
--   * open charges through their durable records: since V3 every pending or dead-lettered charge has a
--     record that never expires while it is open (the recovery worker finds them so). The operator's list of
--     stuck charges reads the records that recovery has not given up on (idempotency_records.recovery_due,
--     indexed by the store) and their charges; its list of dead-lettered charges reads the index below,
--     whose column only a dead letter sets (phase 3 never changes it);
--   * authorized charges through the ledger's open holds (ledger_open_hold, kept by the ledger's write in the
--     transaction that posts or resolves a hold) and the charge's hold entry (indexed below: set once, when
--     the authorization is finished; a charge that is no authorization has none and no entry).
-- The charge's pages keep room for the finished version of the rows they hold (fillfactor 50): a charge is
-- inserted and, milliseconds later, updated once with its answer, so the update finds room on its page.
-- Existing pages keep their rows; new pages are filled to half. Applied on top of V9; runs once (Flyway).

-- a dead-lettered charge from before V3 may lack the time of its dead letter
UPDATE payments_charge SET dead_lettered_at = updated_at WHERE status = 'dead_lettered' AND dead_lettered_at IS NULL;

CREATE INDEX payments_charge_dead_lettered_idx ON payments_charge (dead_lettered_at) WHERE dead_lettered_at IS NOT NULL;
CREATE INDEX payments_charge_hold_idx ON payments_charge (hold_entry_id) WHERE hold_entry_id IS NOT NULL;

DROP INDEX payments_charge_open_idx;
DROP INDEX payments_charge_authorized_idx;

ALTER TABLE payments_charge SET (fillfactor = 50);

-- A completion that is a HOT update (dev.exactly:idempotency-postgres): the row's new version goes on the
-- same page and no index gets an entry, as it changes no indexed column. Before, the completion set
-- expires_at (indexed for the purge) and status and lease_expires_at (the key and predicate of the phases
-- index), so every completion wrote a new entry into every index of the table. Now:
-- * the purge reads purge_after, a generated column that the completion of an ordinary record leaves as it
--   is: the earliest the record can expire, its claim plus its retention (or its expiry, if that is
--   earlier; 'infinity' for a phase in progress, which never expires). Computed in UTC, where adding an
--   interval does not depend on the session's time zone, as a generated column must not. The purge still
--   deletes only what has expired (expires_at);
-- * recovery reads recovery_due, a generated column that is the lease end of a phase in progress that
--   recovery has not given up on, and null for everything else (so for every ordinary record, before and
--   after its completion);
-- * pages are filled to 60 % by inserts, so that the completion's wider version fits on the same page.
-- Generated columns are computed by the server on every insert and update, whichever version of the store
-- writes the row; adding them rewrites the table once (under an exclusive lock). Applied on top of V5;
-- may run again.

-- before the columns, whose addition rewrites the table: the rewritten pages get the room too
ALTER TABLE idempotency_records SET (fillfactor = 60);

ALTER TABLE idempotency_records
    ADD COLUMN IF NOT EXISTS purge_after timestamptz
        GENERATED ALWAYS AS (CASE WHEN expires_at = 'infinity' THEN expires_at
                                  ELSE least(expires_at,
                                             ((created_at AT TIME ZONE 'UTC') + retention) AT TIME ZONE 'UTC')
                                  END) STORED,
    ADD COLUMN IF NOT EXISTS recovery_due timestamptz
        GENERATED ALWAYS AS (CASE WHEN status = 'PROCESSING' AND expires_at = 'infinity'
                                       AND dead_lettered_at IS NULL
                                  THEN lease_expires_at END) STORED;

-- purge: DELETE ... WHERE purge_after <= now() AND expires_at <= now() ORDER BY purge_after LIMIT n
CREATE INDEX IF NOT EXISTS idempotency_records_purge_idx
    ON idempotency_records (purge_after);

-- recovery: phases in progress whose lease ran out
CREATE INDEX IF NOT EXISTS idempotency_records_recovery_idx
    ON idempotency_records (recovery_due) WHERE recovery_due IS NOT NULL;

DROP INDEX IF EXISTS idempotency_records_expires_at_idx;
DROP INDEX IF EXISTS idempotency_records_phases_idx;

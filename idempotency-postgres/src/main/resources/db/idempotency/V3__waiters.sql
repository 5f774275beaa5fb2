-- Waiters (dev.exactly:idempotency-postgres): a process sets the flag on a record in flight before it waits
-- for it, and a completion or release sends its NOTIFY only when the flag is set. A transaction that
-- notifies takes a database-wide lock from its pre-commit to the end of its commit, so notifying on every
-- completion would serialise all of them. Applied on top of V2; may run again.
ALTER TABLE idempotency_records ADD COLUMN IF NOT EXISTS waiters boolean NOT NULL DEFAULT false;

package dev.exactly.payments.charge;

import dev.exactly.idempotency.postgres.AtomicPhases;
import dev.exactly.payments.db.Jdbc;
import dev.exactly.payments.keys.ReplayCounter;
import java.time.InstantSource;

/**
 * What every stage of a charge, a charge action and a refund reads and writes through: the database's
 * connections and its charges, the durable idempotency records' phases and the replays counted on them, and
 * the clock that stamps them. Built once by the service's configuration and handed to each stage, in place of
 * the same five arguments at the head of every constructor.
 *
 * @param jdbc    the pooled connections, and the transactions the stages run in
 * @param charges the charges table's statements
 * @param phases  the durable records' atomic phases (claim, checkpoint, finish) in the stages' transactions
 * @param replays counts the replays of each scope, for the key status endpoint
 * @param clock   stamps the rows the stages write
 */
public record Storage(
        Jdbc jdbc, ChargeRepository charges, AtomicPhases phases, ReplayCounter replays, InstantSource clock) {}

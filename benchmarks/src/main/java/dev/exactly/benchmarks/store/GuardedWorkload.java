package dev.exactly.benchmarks.store;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.Fingerprinter;
import dev.exactly.idempotency.GuardedAction;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.IdempotentResult;
import dev.exactly.idempotency.Outcome;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.LongAdder;

/**
 * The bodies of the store benchmark, usable with or without JMH: a guarded operation runs
 * {@link IdempotencyEngine#execute} on a fresh key with an action that returns a small response (a claim
 * and a completion), and a replay runs it on a key completed beforehand (one claim that finds the
 * record). Each checks its own outcome and throws when it is not the expected one, so a benchmark that
 * finishes had no errors. Thread-safe.
 */
public final class GuardedWorkload {
    /** The small JSON response every guarded operation records. */
    public static final String RESPONSE_JSON = "{\"id\":\"ch_bench\",\"status\":\"succeeded\",\"amount\":1999}";

    private static final String TENANT = "bench";
    private static final String METHOD = "POST";
    private static final String ROUTE = "/v1/charges";
    private static final Fingerprint FINGERPRINT = new Fingerprint(Fingerprinter.JCS_SHA256, "5e".repeat(32));
    private static final StoredResponse RESPONSE = new StoredResponse(
            201, Map.of("content-type", List.of("application/json")), RESPONSE_JSON.getBytes(StandardCharsets.UTF_8));
    /** Replayed keys must outlive the whole run. */
    private static final IdempotencyPolicy REPLAY_POLICY = IdempotencyPolicy.custom()
            .lease(Duration.ofSeconds(30))
            .retention(Duration.ofHours(1))
            .build();

    private final IdempotencyEngine engine;
    private final IdempotencyPolicy freshPolicy;
    private final LongAdder executions = new LongAdder();
    private final GuardedAction action = lease -> {
        executions.increment();
        return Outcome.complete(RESPONSE);
    };
    private volatile List<IdempotencyKey> replayKeys = List.of();

    public GuardedWorkload(IdempotencyEngine engine, IdempotencyPolicy freshPolicy) {
        this.engine = engine;
        this.freshPolicy = freshPolicy;
    }

    /** Executes a key never used before; throws unless the action ran and its outcome was recorded. */
    public IdempotentResult guarded(String key) throws Exception {
        IdempotentResult result = execute(key, freshPolicy);
        if (result.kind() != IdempotentResult.Kind.EXECUTED) {
            throw new IllegalStateException("fresh key " + key + " was not executed: " + result.kind());
        }
        return result;
    }

    /** Executes the {@code index}-th prepared key again; throws unless its outcome was replayed. */
    public IdempotentResult replay(int index) throws Exception {
        IdempotencyKey key = replayKeys.get(index);
        IdempotentResult result = engine.execute(request(key, REPLAY_POLICY), action);
        if (result.kind() != IdempotentResult.Kind.REPLAYED || result.response().status() != 201) {
            throw new IllegalStateException("completed key " + key + " was not replayed: " + result.kind());
        }
        return result;
    }

    /** Executes {@code key} with the fresh-key policy, whatever the outcome (for checks). */
    public IdempotentResult execute(String key) throws Exception {
        return execute(key, freshPolicy);
    }

    private IdempotentResult execute(String key, IdempotencyPolicy policy) throws Exception {
        return engine.execute(request(IdempotencyKey.parse(key), policy), action);
    }

    private static IdempotencyRequest request(IdempotencyKey key, IdempotencyPolicy policy) {
        return IdempotencyRequest.of(new Scope(TENANT, METHOD, ROUTE, key), FINGERPRINT, policy);
    }

    /** Completes {@code count} keys named {@code prefix + i} for {@link #replay}, on {@code threads} threads. */
    public void prepareReplayKeys(String prefix, int count, int threads) throws Exception {
        List<IdempotencyKey> keys = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            keys.add(IdempotencyKey.parse(prefix + i));
        }
        try (ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, threads))) {
            List<Future<IdempotentResult>> results = new ArrayList<>(count);
            for (IdempotencyKey key : keys) {
                results.add(pool.submit(() -> engine.execute(request(key, REPLAY_POLICY), action)));
            }
            for (Future<IdempotentResult> result : results) {
                if (result.get().kind() != IdempotentResult.Kind.EXECUTED) {
                    throw new IllegalStateException(
                            "a replay key was already taken: " + result.get().kind());
                }
            }
        }
        replayKeys = List.copyOf(keys);
    }

    /** How many keys {@link #prepareReplayKeys} completed. */
    public int replayKeyCount() {
        return replayKeys.size();
    }

    /** How often the guarded action ran. */
    public long executions() {
        return executions.sum();
    }
}

package dev.exactly.idempotency.spring;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.Fingerprinter;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.IdempotentResult;
import dev.exactly.idempotency.Outcome;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.StoredResponse;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.ObjectMapper;

/**
 * Runs work that is not an HTTP request at most once per key: a message listener facing redeliveries, a
 * scheduled job, a service method called again after a timeout. The result is stored as JSON through the
 * application's Jackson mapper and every later call with the same key gets it back, read into the same
 * type, without running the work again; the rules are those of the HTTP routes:
 *
 * <ul>
 *   <li>a finished key returns the stored result (a replay);</li>
 *   <li>the same key with a different {@code input} is {@link dev.exactly.idempotency.IdempotencyKeyReusedException}
 *       (the input is fingerprinted as canonical JSON, so field order does not matter);</li>
 *   <li>a key in flight is {@link dev.exactly.idempotency.RequestInFlightException} at once, or after a bounded
 *       wait for the other call's result under a wait policy;</li>
 *   <li>work that throws releases the key (the next call runs it again) and the exception goes to the
 *       caller: return a value to record a business failure (a declined payment, say) instead;</li>
 *   <li>a store that cannot be reached before the work is {@link dev.exactly.idempotency.StoreUnavailableException}:
 *       the work did not run;</li>
 *   <li>a lease lost while the work ran is {@link dev.exactly.idempotency.LeaseLostException}: it may have
 *       taken effect, call again with the same key.</li>
 * </ul>
 *
 * <pre>{@code
 * Receipt receipt = idempotency.execute("payment-events", message.id(), Receipt.class, () -> ledger.book(message));
 * }</pre>
 *
 * A key lives in its scope ({@code "payment-events"}) and tenant ({@link #forTenant}; the default tenant is
 * {@value #DEFAULT_TENANT}); the engine's listeners, meters and observation see each call as method
 * {@value #METHOD} on route {@code scope}. Immutable and thread-safe.
 */
public final class IdempotencyTemplate {
    /** The method of every scope a template guards, next to the HTTP methods of the routes. */
    public static final String METHOD = "EXECUTE";
    /** The tenant of a template not bound to one with {@link #forTenant}. */
    public static final String DEFAULT_TENANT = "default";

    private static final String JSON = "application/json";
    private static final Map<String, List<String>> JSON_HEADERS = Map.of("content-type", List.of(JSON));

    private final IdempotencyEngine engine;
    private final ObjectMapper mapper;
    private final IdempotencyPolicy policy;
    private final Fingerprinter fingerprinter;
    private final String tenant;

    /**
     * @param engine the engine (its store keeps the results)
     * @param mapper writes and reads the results and the inputs
     * @param policy lease, retention, in-flight behaviour and keep-alive of every call
     */
    public IdempotencyTemplate(IdempotencyEngine engine, ObjectMapper mapper, IdempotencyPolicy policy) {
        this(engine, mapper, policy, Fingerprinter.ofDefaults(), DEFAULT_TENANT);
    }

    private IdempotencyTemplate(
            IdempotencyEngine engine,
            ObjectMapper mapper,
            IdempotencyPolicy policy,
            Fingerprinter fingerprinter,
            String tenant) {
        this.engine = Objects.requireNonNull(engine, "engine");
        this.mapper = Objects.requireNonNull(mapper, "mapper");
        this.policy = Objects.requireNonNull(policy, "policy");
        this.fingerprinter = Objects.requireNonNull(fingerprinter, "fingerprinter");
        if (tenant.isBlank()) {
            throw new IllegalArgumentException("tenant must not be blank");
        }
        this.tenant = tenant;
    }

    /** This template for another tenant: the same key in two tenants names two records. */
    public IdempotencyTemplate forTenant(String tenant) {
        return new IdempotencyTemplate(engine, mapper, policy, fingerprinter, tenant);
    }

    /** This template with another policy (a longer lease for a slow job, a wait for redeliveries, ...). */
    public IdempotencyTemplate withPolicy(IdempotencyPolicy policy) {
        return new IdempotencyTemplate(engine, mapper, policy, fingerprinter, tenant);
    }

    /** The policy of every call. */
    public IdempotencyPolicy policy() {
        return policy;
    }

    /**
     * Runs {@code work} once for {@code key} in {@code scope}, or returns the result it stored.
     *
     * @param scope a name for the kind of work (a queue, a job): keys are unique within it
     * @param key   1-255 printable ASCII characters, e.g. a message id
     * @param type  the result's type, to read a stored result back
     * @return the result of the work, or the stored one
     */
    public <T> @Nullable T execute(String scope, String key, Class<T> type, Supplier<? extends @Nullable T> work) {
        return execute(scope, key, null, type, work);
    }

    /**
     * As {@link #execute(String, String, Class, Supplier)}, and checks that a key is not used again for
     * another {@code input}: the input's canonical JSON is the call's fingerprint.
     */
    public <T> @Nullable T execute(
            String scope, String key, @Nullable Object input, Class<T> type, Supplier<? extends @Nullable T> work) {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(work, "work");
        Scope guarded = new Scope(tenant, METHOD, scope, new IdempotencyKey(key));
        byte[] inputJson = input == null ? new byte[0] : mapper.writeValueAsBytes(input);
        Fingerprint fingerprint = fingerprinter.fingerprint(METHOD, scope, inputJson, JSON);
        AtomicReference<@Nullable T> produced = new AtomicReference<>();
        IdempotentResult result;
        try {
            result = engine.execute(IdempotencyRequest.of(guarded, fingerprint, policy), lease -> {
                T value = work.get();
                produced.set(value);
                return Outcome.complete(new StoredResponse(200, JSON_HEADERS, mapper.writeValueAsBytes(value)));
            });
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("the engine threw a checked exception", e);
        }
        if (result.replayed()) {
            return mapper.readValue(result.response().body(), type);
        }
        return produced.get();
    }

    @Override
    public String toString() {
        return "IdempotencyTemplate[tenant=" + tenant + ", " + policy + "]";
    }
}

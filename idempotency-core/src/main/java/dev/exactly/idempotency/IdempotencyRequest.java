package dev.exactly.idempotency;

import java.util.Objects;

/**
 * One guarded call: its scope, its fingerprint and the policy of its route. Immutable; equal when all four
 * parts are.
 */
public final class IdempotencyRequest {
    private final Scope scope;
    private final ScopeKey key;
    private final Fingerprint fingerprint;
    private final IdempotencyPolicy policy;

    /**
     * @param scope       tenant, method, route and key
     * @param key         the hashed scope ({@link Scope#toScopeKey()})
     * @param fingerprint what the request looked like
     * @param policy      lease, retention, in-flight behaviour
     * @throws IllegalArgumentException {@code key} is not the scope's hash
     */
    public IdempotencyRequest(Scope scope, ScopeKey key, Fingerprint fingerprint, IdempotencyPolicy policy) {
        this(scope, key, fingerprint, policy, true);
    }

    private IdempotencyRequest(
            Scope scope, ScopeKey key, Fingerprint fingerprint, IdempotencyPolicy policy, boolean check) {
        this.scope = Objects.requireNonNull(scope, "scope");
        this.key = Objects.requireNonNull(key, "key");
        this.fingerprint = Objects.requireNonNull(fingerprint, "fingerprint");
        this.policy = Objects.requireNonNull(policy, "policy");
        if (check && !scope.toScopeKey().equals(key)) {
            throw new IllegalArgumentException("key must be the scope's hash");
        }
    }

    /** The request of a scope: its key is hashed once, here. */
    public static IdempotencyRequest of(Scope scope, Fingerprint fingerprint, IdempotencyPolicy policy) {
        return new IdempotencyRequest(scope, scope.toScopeKey(), fingerprint, policy, false);
    }

    /** Tenant, method, route and key. */
    public Scope scope() {
        return scope;
    }

    /** The hashed scope: what stores index records by. */
    public ScopeKey key() {
        return key;
    }

    /** What the request looked like. */
    public Fingerprint fingerprint() {
        return fingerprint;
    }

    /** Lease, retention, in-flight behaviour. */
    public IdempotencyPolicy policy() {
        return policy;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof IdempotencyRequest that
                && scope.equals(that.scope)
                && key.equals(that.key)
                && fingerprint.equals(that.fingerprint)
                && policy.equals(that.policy);
    }

    @Override
    public int hashCode() {
        return Objects.hash(scope, key, fingerprint, policy);
    }

    @Override
    public String toString() {
        return "IdempotencyRequest[scope=" + scope + ", key=" + key + ", fingerprint=" + fingerprint + ", policy="
                + policy + "]";
    }
}

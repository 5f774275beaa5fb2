package dev.exactly.idempotency.spring.boot;

import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.Fingerprinter;
import dev.exactly.idempotency.IdempotencyEngine;
import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.IdempotencyPolicy;
import dev.exactly.idempotency.IdempotencyRequest;
import dev.exactly.idempotency.Outcome;
import dev.exactly.idempotency.Scope;
import dev.exactly.idempotency.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;

/** Drives an engine directly, without HTTP. */
public final class EngineCalls {
    private EngineCalls() {}

    /** A POST of a JSON {@code body} on {@code route}. */
    public static IdempotencyRequest request(
            String tenant, String route, String key, String body, IdempotencyPolicy policy) {
        Scope scope = new Scope(tenant, "POST", route, new IdempotencyKey(key));
        Fingerprint fingerprint = Fingerprinter.ofDefaults()
                .fingerprint("POST", route, body.getBytes(StandardCharsets.UTF_8), "application/json");
        return IdempotencyRequest.of(scope, fingerprint, policy);
    }

    /** A response with an empty JSON object. */
    public static StoredResponse response(int status) {
        return new StoredResponse(status, Map.of(), "{}".getBytes(StandardCharsets.UTF_8));
    }

    /** One fresh key through {@code engine}, completed with 201. */
    static void runOnce(IdempotencyEngine engine, String route) throws Exception {
        engine.execute(
                request("tenant-a", route, UUID.randomUUID().toString(), "{}", IdempotencyPolicy.ofDefaults()),
                lease -> Outcome.complete(response(201)));
    }
}

package dev.exactly.payments.api;

import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.payments.json.Json;
import dev.exactly.payments.keys.KeyState;
import dev.exactly.payments.keys.KeyStatus;
import dev.exactly.payments.security.Caller;
import dev.exactly.payments.web.ApiProblems;
import dev.exactly.payments.web.ApiResponse;
import jakarta.servlet.http.HttpServletRequest;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /v1/idempotency-keys/{key}} and {@code GET /v1/idempotency-keys?key=}: the caller's own key only
 * (the tenant is part of the scope).
 */
@RestController
public class KeyController {
    private final KeyStatus keys;

    public KeyController(KeyStatus keys) {
        this.keys = keys;
    }

    /** The key in the path, written as in the header (a quoted key unquoted, a list of one key's copies). */
    @GetMapping("/v1/idempotency-keys/{key}")
    public ResponseEntity<byte[]> get(@PathVariable String key, HttpServletRequest request) {
        return describe(IdempotencyKey.parse(key), request);
    }

    /**
     * The key in {@code ?key=}, as the answer's {@code key} shows it (no header syntax): for a key that no
     * path can carry, such as one with '/' (an encoded slash in a path is refused before any route).
     */
    @GetMapping("/v1/idempotency-keys")
    public ResponseEntity<byte[]> byQuery(HttpServletRequest request) {
        String[] given = request.getParameterValues("key");
        if (given == null || given.length != 1) {
            throw Http.invalidParam(
                    "key", given == null ? "is required: the idempotency key to describe" : "was given more than once");
        }
        return describe(new IdempotencyKey(given[0]), request);
    }

    private ResponseEntity<byte[]> describe(IdempotencyKey key, HttpServletRequest request) {
        String tenant = Caller.of(request).requireTenant();
        List<Map<String, Object>> found =
                keys.describe(tenant, key).stream().map(KeyController::json).toList();
        if (found.isEmpty()) {
            return Http.entity(ApiProblems.notFound("idempotency key"), request);
        }
        Map<String, Object> json = new LinkedHashMap<>(found.getFirst());
        if (found.size() > 1) {
            json.put("other_routes", found.subList(1, found.size()));
        }
        return Http.entity(ApiResponse.json(200, Json.write(json)), request);
    }

    private static Map<String, Object> json(KeyState state) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("object", "idempotency_key");
        json.put("key", state.key());
        json.put("route", "POST " + state.route());
        json.put("status", state.status());
        json.put("recovery_point", state.checkpoint());
        json.put("created", text(state.created()));
        json.put("expires", text(state.expires()));
        json.put("lease_expires", text(state.leaseExpires()));
        json.put("replay_count", state.replays());
        json.put("fingerprint_algorithm", state.fingerprintAlgorithm());
        json.put("response_status", state.responseStatus());
        KeyState.Resource resource = state.resource();
        Map<String, Object> created = null;
        if (resource != null) {
            created = new LinkedHashMap<>();
            created.put("object", resource.type());
            created.put("id", resource.id());
            created.put("status", resource.status());
        }
        json.put("resource", created);
        return json;
    }

    private static @Nullable String text(@Nullable Instant instant) {
        return instant == null ? null : instant.toString();
    }
}

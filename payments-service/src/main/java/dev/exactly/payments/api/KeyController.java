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

/** {@code GET /v1/idempotency-keys/{key}}: the caller's own key only (the tenant is part of the scope). */
@RestController
public class KeyController {
    private final KeyStatus keys;

    public KeyController(KeyStatus keys) {
        this.keys = keys;
    }

    @GetMapping("/v1/idempotency-keys/{key}")
    public ResponseEntity<byte[]> get(@PathVariable String key, HttpServletRequest request) {
        String tenant = Caller.of(request).requireTenant();
        List<Map<String, Object>> found = keys.describe(tenant, IdempotencyKey.parse(key)).stream()
                .map(KeyController::json).toList();
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

package dev.exactly.payments.api;

import dev.exactly.payments.json.Json;
import dev.exactly.payments.webhooks.Delivery;
import dev.exactly.payments.webhooks.Endpoint;
import dev.exactly.payments.webhooks.Event;
import dev.exactly.payments.webhooks.Events;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** Webhook endpoints and events as the API shows them; an event is the document its deliveries send. */
final class WebhookJson {
    private WebhookJson() {}

    static Map<String, Object> endpoint(Endpoint endpoint) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("id", endpoint.id());
        json.put("object", "webhook_endpoint");
        json.put("url", endpoint.url());
        json.put("enabled_events", endpoint.enabledEvents());
        json.put("description", endpoint.description());
        json.put("status", endpoint.enabled() ? "enabled" : "disabled");
        json.put("created", endpoint.createdAt().getEpochSecond());
        json.put("disabled", seconds(endpoint.disabledAt()));
        return json;
    }

    /** The created endpoint with its secret: the only answer that shows it. */
    static Map<String, Object> created(Endpoint endpoint, String secret) {
        Map<String, Object> json = endpoint(endpoint);
        json.put("secret", secret);
        return json;
    }

    static Map<String, Object> endpoints(List<Endpoint> endpoints) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("object", "list");
        json.put("data", endpoints.stream().map(WebhookJson::endpoint).toList());
        json.put("has_more", false);
        return json;
    }

    static Map<String, Object> events(Events.EventPage page) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("object", "list");
        json.put("data", page.events().stream().map(WebhookJson::event).toList());
        json.put("has_more", page.nextAfter() != null);
        json.put("next_after", page.nextAfter());
        return json;
    }

    static Map<String, Object> event(Event event) {
        return Json.readMap(event.body());
    }

    static Map<String, Object> eventWithDeliveries(Events.EventDetail detail) {
        Map<String, Object> json = event(detail.event());
        List<Map<String, Object>> deliveries = new ArrayList<>();
        for (Delivery d : detail.deliveries()) {
            Map<String, Object> line = new LinkedHashMap<>();
            line.put("endpoint", d.endpointId());
            line.put("status", d.status());
            line.put("attempts", d.attempts());
            line.put("last_status", d.lastStatus());
            line.put("last_error", d.lastError());
            line.put("last_attempt", seconds(d.lastAttemptAt()));
            line.put("next_attempt", seconds(d.nextAttemptAt()));
            line.put("delivered", seconds(d.deliveredAt()));
            deliveries.add(line);
        }
        json.put("deliveries", deliveries);
        return json;
    }

    private static @Nullable Long seconds(@Nullable Instant instant) {
        return instant == null ? null : instant.getEpochSecond();
    }
}

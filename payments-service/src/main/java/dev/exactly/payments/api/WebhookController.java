package dev.exactly.payments.api;

import dev.exactly.payments.json.Json;
import dev.exactly.payments.security.Caller;
import dev.exactly.payments.web.ApiProblems;
import dev.exactly.payments.web.ApiResponse;
import dev.exactly.payments.webhooks.EndpointResult;
import dev.exactly.payments.webhooks.EventType;
import dev.exactly.payments.webhooks.Events;
import dev.exactly.payments.webhooks.WebhookEndpoints;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The tenant's webhook endpoints ({@code POST}, {@code GET}, {@code DELETE /v1/webhook-endpoints}) and
 * events ({@code GET /v1/events}, keyset pages, {@code GET /v1/events/{id}} with its deliveries, and
 * {@code POST /v1/events/{id}/redeliver} for its dead-lettered deliveries).
 */
@RestController
public class WebhookController {
    private static final Pattern ENDPOINT_ID = Pattern.compile("we_[A-Za-z0-9]{1,64}");
    private static final Pattern EVENT_ID = Pattern.compile("evt_[A-Za-z0-9]{1,64}");
    private static final String EVENT_CURSOR = "must be an event id (evt_...)";
    private final WebhookEndpoints endpoints;
    private final Events events;

    public WebhookController(WebhookEndpoints endpoints, Events events) {
        this.endpoints = endpoints;
        this.events = events;
    }

    /** Creates an endpoint: 201 with its signing secret, shown only here; 422 for a bad URL or event type. */
    @PostMapping("/v1/webhook-endpoints")
    public ResponseEntity<byte[]> create(HttpServletRequest request) {
        String tenant = Caller.of(request).requireTenant();
        ApiResponse answer = switch (endpoints.create(tenant, Http.jsonBody(request))) {
            case EndpointResult.Created created ->
                ApiResponse.created(
                        "/v1/webhook-endpoints/" + created.endpoint().id(),
                        Json.write(WebhookJson.created(created.endpoint(), created.secret())));
            case EndpointResult.Invalid invalid ->
                ApiProblems.validationFailed("the webhook endpoint is invalid", invalid.errors());
            case EndpointResult.LimitReached limit -> ApiProblems.webhookEndpointLimit(limit.limit());
        };
        return Http.entity(answer, request);
    }

    @GetMapping("/v1/webhook-endpoints")
    public ResponseEntity<byte[]> list(HttpServletRequest request) {
        String tenant = Caller.of(request).requireTenant();
        return Http.entity(ApiResponse.json(200, Json.write(WebhookJson.endpoints(endpoints.list(tenant)))), request);
    }

    @GetMapping("/v1/webhook-endpoints/{id}")
    public ResponseEntity<byte[]> get(@PathVariable String id, HttpServletRequest request) {
        String tenant = Caller.of(request).requireTenant();
        return found(
                ifValid(ENDPOINT_ID, id, () -> endpoints.find(tenant, id)),
                WebhookJson::endpoint,
                "webhook endpoint",
                request);
    }

    /** Disables an endpoint (no new deliveries, pending ones canceled); 200 with the endpoint, again on a repeat. */
    @DeleteMapping("/v1/webhook-endpoints/{id}")
    public ResponseEntity<byte[]> disable(@PathVariable String id, HttpServletRequest request) {
        String tenant = Caller.of(request).requireTenant();
        return found(
                ifValid(ENDPOINT_ID, id, () -> endpoints.disable(tenant, id)),
                WebhookJson::endpoint,
                "webhook endpoint",
                request);
    }

    @GetMapping("/v1/events")
    public ResponseEntity<byte[]> events(
            @RequestParam(required = false) @Nullable String after,
            @RequestParam(required = false) @Nullable String limit,
            @RequestParam(required = false) @Nullable String type,
            HttpServletRequest request) {
        String tenant = Caller.of(request).requireTenant();
        int pageSize = Http.intParam(limit, "limit", 50, 1, 500);
        EventType eventType = null;
        String types = "must be one of " + String.join(", ", EventType.wireNames());
        String givenType = Http.given(type, "type", types);
        if (givenType != null) {
            eventType = EventType.of(givenType).orElseThrow(() -> Http.invalidParam("type", types));
        }
        String cursor = Http.given(after, "after", EVENT_CURSOR);
        if (cursor != null && !EVENT_ID.matcher(cursor).matches()) {
            throw Http.invalidParam("after", EVENT_CURSOR);
        }
        Events.EventPage page = events.page(tenant, cursor, pageSize, eventType)
                .orElseThrow(() -> Http.invalidParam("after", "must name one of your events"));
        return Http.entity(ApiResponse.json(200, Json.write(WebhookJson.events(page))), request);
    }

    @GetMapping("/v1/events/{id}")
    public ResponseEntity<byte[]> event(@PathVariable String id, HttpServletRequest request) {
        String tenant = Caller.of(request).requireTenant();
        return found(
                ifValid(EVENT_ID, id, () -> events.find(tenant, id)),
                WebhookJson::eventWithDeliveries,
                "event",
                request);
    }

    /**
     * Sends the event again to every enabled endpoint whose delivery was dead-lettered (attempts start
     * over); 200 with the event and its deliveries, again on a repeat.
     */
    @PostMapping("/v1/events/{id}/redeliver")
    public ResponseEntity<byte[]> redeliver(@PathVariable String id, HttpServletRequest request) {
        String tenant = Caller.of(request).requireTenant();
        return found(
                ifValid(EVENT_ID, id, () -> events.redeliver(tenant, id)),
                WebhookJson::eventWithDeliveries,
                "event",
                request);
    }

    /** 200 with the JSON of what was found, or 404 naming {@code what}. */
    private static <T> ResponseEntity<byte[]> found(
            Optional<T> value, Function<T, Map<String, Object>> json, String what, HttpServletRequest request) {
        ApiResponse answer = value.map(v -> ApiResponse.json(200, Json.write(json.apply(v))))
                .orElseGet(() -> ApiProblems.notFound(what));
        return Http.entity(answer, request);
    }

    /** What {@code find} finds, when the id has the shape of one (anything else names nothing: 404). */
    private static <T> Optional<T> ifValid(Pattern shape, String id, Supplier<Optional<T>> find) {
        return shape.matcher(id).matches() ? find.get() : Optional.empty();
    }
}

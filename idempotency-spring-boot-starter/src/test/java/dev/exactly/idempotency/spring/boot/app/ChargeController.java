package dev.exactly.idempotency.spring.boot.app;

import jakarta.servlet.http.HttpServletResponse;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * Guarded routes (see the test properties): {@code /v1/charges} rejects in-flight duplicates,
 * {@code /v1/transfers} coalesces them, {@code /v1/notes} takes an optional key. Every response
 * carries a fresh sequence number, so a replay is told apart from a second execution by its body.
 */
@RestController
class ChargeController {
    private static final Pattern REF = Pattern.compile("\"ref\"\\s*:\\s*\"([^\"]+)\"");

    private final Handlers handlers;

    ChargeController(Handlers handlers) {
        this.handlers = handlers;
    }

    @PostMapping({"/v1/charges", "/v1/transfers", "/v1/notes"})
    ResponseEntity<String> create(@RequestBody String body, HttpServletResponse response) throws InterruptedException {
        Matcher ref = REF.matcher(body);
        if (!ref.find()) {
            return ResponseEntity.badRequest().body("{\"error\":\"ref missing\"}");
        }
        String id = ref.group(1);
        int run = handlers.run(id);
        if (body.contains("\"explode\":true") && run == 1) {
            throw new IllegalStateException("the first run of " + id + " fails before any side effect");
        }
        long seq = handlers.next();
        response.addHeader(HttpHeaders.SET_COOKIE, "session=s" + seq + "; HttpOnly");
        return ResponseEntity.status(201)
                .contentType(MediaType.APPLICATION_JSON)
                .header("X-Charge-Trace", "trace-" + seq)
                .header("X-Other", "other-" + seq)
                .body("{\"id\":\"ch_" + seq + "\",\"ref\":\"" + id + "\",\"run\":" + run + "}");
    }
}

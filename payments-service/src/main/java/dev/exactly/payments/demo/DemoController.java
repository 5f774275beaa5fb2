package dev.exactly.payments.demo;

import dev.exactly.idempotency.servlet.Problems;
import dev.exactly.payments.charge.ChargeRequest;
import dev.exactly.payments.charge.ChargeRow;
import dev.exactly.payments.config.PaymentsProperties;
import dev.exactly.payments.config.ProcessorConfiguration.InProcessProcessor;
import dev.exactly.payments.json.Json;
import dev.exactly.payments.json.JsonFields;
import dev.exactly.payments.web.ApiProblems;
import dev.exactly.payments.web.ApiResponse;
import dev.exactly.psp.PspSimulator;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.springframework.http.CacheControl;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;

/**
 * The checkout page's endpoints besides the API.
 *
 * <ul>
 *   <li>{@code GET /demo/settings} (public): {@code {"demo":false}} outside demo mode; in demo mode the demo
 *       keys (which the service prints at start anyway) and whether the processor switches are there.</li>
 *   <li>{@code GET|PUT /v1/demo/processor} (a tenant's API key): the switches of the in-process processor
 *       stand-in, {@code {"slow":true,"drop_response":false}}; 404 outside demo mode or when the processor
 *       is a real one ({@code PSP_URL}).</li>
 *   <li>{@code GET /v1/demo/processor/captures/{charge}}: how many times the stand-in moved money for one
 *       charge (its downstream key), so the page can show that a retried payment was captured once.</li>
 * </ul>
 */
@RestController
public class DemoController {
    /** The switches are a few bytes; anything longer is refused unread. */
    private static final int MAX_BODY_BYTES = 1024;

    private final PaymentsProperties properties;
    private final InProcessProcessor processor;

    public DemoController(PaymentsProperties properties, InProcessProcessor processor) {
        this.properties = properties;
        this.processor = processor;
    }

    @GetMapping("/demo/settings")
    public ResponseEntity<byte[]> settings() {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("demo", properties.demoMode());
        if (properties.demoMode()) {
            Map<String, String> keys = new TreeMap<>();
            PaymentsProperties.DEMO_KEYS.forEach((key, tenant) -> keys.put(tenant, key));
            json.put("api_keys", keys);
            json.put("operator_key", properties.effectiveOperatorKey());
            json.put("processor_switches", simulator().isPresent());
        }
        return answer(ApiResponse.json(200, Json.write(json)));
    }

    @GetMapping("/v1/demo/processor")
    public ResponseEntity<byte[]> switches() {
        return simulator()
                .map(psp -> answer(ApiResponse.json(200, write(ProcessorSwitches.of(psp.faults())))))
                .orElseGet(DemoController::absent);
    }

    @PutMapping("/v1/demo/processor")
    public ResponseEntity<byte[]> setSwitches(HttpServletRequest request) throws IOException {
        Optional<PspSimulator> found = simulator();
        if (found.isEmpty()) {
            return absent();
        }
        byte[] bytes;
        try (InputStream in = request.getInputStream()) {
            bytes = in.readNBytes(MAX_BODY_BYTES + 1);
        }
        if (bytes.length > MAX_BODY_BYTES) {
            return answer(ApiProblems.idempotency(Problems.payloadTooLarge(MAX_BODY_BYTES), null));
        }
        JsonFields fields = JsonFields.of(bytes);
        fields.onlyKnown(List.of("slow", "drop_response"));
        if (!fields.valid()) {
            return answer(ApiProblems.validationFailed("the switches are invalid", fields.errors()));
        }
        JsonNode root = Json.read(bytes);
        for (String name : List.of("slow", "drop_response")) {
            if (!root.has(name) || !root.get(name).isBoolean()) {
                fields.error(
                        name,
                        root.has(name) ? "parameter_invalid" : "parameter_missing",
                        name + " must be true or false");
            }
        }
        if (!fields.valid()) {
            return answer(ApiProblems.validationFailed("the switches are invalid", fields.errors()));
        }
        PspSimulator psp = found.get();
        ProcessorSwitches wanted = new ProcessorSwitches(
                root.get("slow").booleanValue(), root.get("drop_response").booleanValue());
        synchronized (this) {
            psp.setFaults(wanted.applyTo(psp.faults()));
        }
        return answer(ApiResponse.json(200, write(ProcessorSwitches.of(psp.faults()))));
    }

    @GetMapping("/v1/demo/processor/captures/{chargeId}")
    public ResponseEntity<byte[]> captures(@PathVariable String chargeId) {
        Optional<PspSimulator> found = simulator();
        if (found.isEmpty()) {
            return absent();
        }
        if (!ChargeRequest.ID.matcher(chargeId).matches()) {
            return answer(ApiProblems.notFound("charge"));
        }
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("charge", chargeId);
        json.put("captures", found.get().captureCount(ChargeRow.downstreamKeyOf(chargeId)));
        return answer(ApiResponse.json(200, Json.write(json)));
    }

    private Optional<PspSimulator> simulator() {
        return properties.demoMode() ? processor.simulator() : Optional.empty();
    }

    private static byte[] write(ProcessorSwitches switches) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("slow", switches.slow());
        json.put("slow_ms", ProcessorSwitches.SLOW.toMillis());
        json.put("drop_response", switches.dropResponse());
        return Json.write(json);
    }

    private static ResponseEntity<byte[]> absent() {
        return answer(ApiProblems.notFound("demo processor (demo mode with the in-process processor only)"));
    }

    private static ResponseEntity<byte[]> answer(ApiResponse answer) {
        return ResponseEntity.status(answer.status())
                .contentType(MediaType.parseMediaType(answer.contentType()))
                .cacheControl(CacheControl.noStore())
                .body(answer.body());
    }
}

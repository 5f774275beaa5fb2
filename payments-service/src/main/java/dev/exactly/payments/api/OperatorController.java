package dev.exactly.payments.api;

import dev.exactly.payments.charge.ChargeOperations;
import dev.exactly.payments.charge.ChargeRepository;
import dev.exactly.payments.charge.ChargeRequest;
import dev.exactly.payments.charge.OperatorResult;
import dev.exactly.payments.json.Json;
import dev.exactly.payments.json.JsonFields;
import dev.exactly.payments.security.Caller;
import dev.exactly.payments.web.ApiProblems;
import dev.exactly.payments.web.ApiResponse;
import jakarta.servlet.http.HttpServletRequest;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The operator's view of requests recovery is working on ({@code stuck}) or gave up on
 * ({@code dead_lettered}), and the two actions: retry now, or resolve by hand. Only the operator key gets
 * here (Spring Security decides on the routed path), and each endpoint checks it again.
 */
@RestController
public class OperatorController {
    private static final Pattern OUTCOME = Pattern.compile("succeeded|failed");
    private static final Pattern REASON = Pattern.compile("(?s).{1,500}");
    private static final String STATES = "must be stuck or dead_lettered";

    private final ChargeOperations operations;

    public OperatorController(ChargeOperations operations) {
        this.operations = operations;
    }

    @GetMapping("/v1/operator/requests")
    public ResponseEntity<byte[]> list(
            @RequestParam(required = false) @Nullable String state,
            @RequestParam(required = false) @Nullable String limit,
            HttpServletRequest request) {
        Caller.of(request).requireOperator();
        String given = Http.given(state, "state", STATES);
        String s = given == null ? "dead_lettered" : given;
        ChargeOperations.Queue queue = switch (s) {
            case "stuck" -> ChargeOperations.Queue.STUCK;
            case "dead_lettered" -> ChargeOperations.Queue.DEAD_LETTERED;
            default -> throw Http.invalidParam("state", STATES);
        };
        List<ChargeRepository.WithLease> rows = operations.list(queue, Http.intParam(limit, "limit", 50, 1, 500));
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("object", "list");
        json.put("state", s);
        json.put("data", ChargeJson.operatorViews(rows));
        return Http.entity(ApiResponse.json(200, Json.write(json)), request);
    }

    @PostMapping("/v1/operator/requests/{chargeId}/retry")
    public ResponseEntity<byte[]> retry(@PathVariable String chargeId, HttpServletRequest request) {
        Caller.of(request).requireOperator();
        if (!ChargeRequest.ID.matcher(chargeId).matches()) {
            return Http.entity(ApiProblems.notFound("charge"), request);
        }
        return Http.entity(actionAnswer("retry", operations.retry(chargeId)), request);
    }

    @PostMapping("/v1/operator/requests/{chargeId}/resolve")
    public ResponseEntity<byte[]> resolve(@PathVariable String chargeId, HttpServletRequest request) {
        Caller.of(request).requireOperator();
        JsonFields f = JsonFields.of(Http.jsonBody(request));
        f.onlyKnown(List.of("outcome", "reason"));
        String outcome = f.requiredString("outcome", OUTCOME, "succeeded or failed");
        String reason = f.requiredString("reason", REASON, "1-500 characters");
        if (!f.valid()) {
            return Http.entity(ApiProblems.validationFailed("the resolution is invalid", f.errors()), request);
        }
        if (!ChargeRequest.ID.matcher(chargeId).matches()) {
            return Http.entity(ApiProblems.notFound("charge"), request);
        }
        return Http.entity(
                actionAnswer("resolve", operations.resolve(chargeId, outcome.equals("succeeded"), reason)), request);
    }

    /**
     * An action that ran: the answer a client with the charge's key now gets (its status) and the charge
     * afterwards; a refused action: 404, or 409 {@code operator-conflict} saying why.
     */
    private static ApiResponse actionAnswer(String action, OperatorResult result) {
        return switch (result) {
            case OperatorResult.Done done -> {
                Map<String, Object> json = new LinkedHashMap<>();
                json.put("action", action);
                json.put("answer_status", Answers.of(done.answer()).status());
                json.put("request", ChargeJson.operatorView(done.charge(), null));
                yield ApiResponse.json(200, Json.write(json));
            }
            case OperatorResult.NotFound missing -> ApiProblems.notFound("charge");
            case OperatorResult.AlreadyFinished finished ->
                ApiProblems.operatorConflict(
                        "the charge is already " + finished.status().db());
            case OperatorResult.Busy busy ->
                ApiProblems.operatorConflict("the charge is being processed right now; list it again in a moment");
            case OperatorResult.ProcessorDisagrees disagrees ->
                ApiProblems.operatorConflict("the processor reports the charge as " + disagrees.processorStatus()
                        + "; resolve it as " + (disagrees.captured() ? "succeeded" : "failed") + " or retry it");
        };
    }
}

package dev.exactly.payments.api;

import dev.exactly.payments.charge.ChargeOperations;
import dev.exactly.payments.charge.ChargePipeline;
import dev.exactly.payments.charge.ChargeRepository;
import dev.exactly.payments.charge.ChargeRequest;
import dev.exactly.payments.charge.ChargeRow;
import dev.exactly.payments.json.Json;
import dev.exactly.payments.security.Caller;
import dev.exactly.payments.web.ApiProblems;
import dev.exactly.payments.web.ApiResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** {@code /v1/charges}: create (idempotent, behind both tiers), read, list by customer. */
@RestController
public class ChargeController {
    private static final String CURSOR = "must be a charge id";

    private final ChargePipeline pipeline;
    private final ChargeOperations operations;

    public ChargeController(ChargePipeline pipeline, ChargeOperations operations) {
        this.pipeline = pipeline;
        this.operations = operations;
    }

    @PostMapping("/v1/charges")
    public void create(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String tenant = Caller.of(request).requireTenant();
        Http.send(
                Answers.of(
                        pipeline.create(tenant, Http.key(request), Http.jsonBody(request), request.getContentType())),
                request,
                response);
    }

    @GetMapping("/v1/charges/{id}")
    public ResponseEntity<byte[]> get(@PathVariable String id, HttpServletRequest request) {
        String tenant = Caller.of(request).requireTenant();
        ApiResponse answer = operations
                .find(tenant, id)
                .map(row -> ApiResponse.json(200, Json.write(ChargeJson.charge(row))))
                .orElseGet(() -> ApiProblems.notFound("charge"));
        return Http.entity(answer, request);
    }

    @GetMapping("/v1/charges")
    public ResponseEntity<byte[]> list(
            @RequestParam(required = false) @Nullable String customer,
            @RequestParam(required = false) @Nullable String limit,
            @RequestParam(name = "starting_after", required = false) @Nullable String startingAfter,
            HttpServletRequest request) {
        String tenant = Caller.of(request).requireTenant();
        if (customer == null || !ChargeRequest.ID.matcher(customer).matches()) {
            throw Http.invalidParam("customer", "is required: 1-64 letters, digits, '_' or '-'");
        }
        if (Http.given(startingAfter, "starting_after", CURSOR) != null
                && !ChargeRequest.ID.matcher(startingAfter).matches()) {
            throw Http.invalidParam("starting_after", CURSOR);
        }
        int pageSize = Http.intParam(limit, "limit", 10, 1, 100);
        List<ChargeRow> rows;
        try {
            rows = operations.byCustomer(tenant, customer, startingAfter, pageSize + 1);
        } catch (ChargeRepository.CursorUnknown unknown) {
            throw Http.invalidParam("starting_after", "names no charge of this customer");
        }
        boolean more = rows.size() > pageSize;
        byte[] body = ChargeJson.list(more ? rows.subList(0, pageSize) : rows, more, "/v1/charges");
        return Http.entity(ApiResponse.json(200, body), request);
    }
}

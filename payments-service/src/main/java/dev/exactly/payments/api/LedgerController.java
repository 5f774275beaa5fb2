package dev.exactly.payments.api;

import dev.exactly.ledger.Currency;
import dev.exactly.payments.charge.ChargeOperations;
import dev.exactly.payments.charge.ChargeRequest;
import dev.exactly.payments.json.Json;
import dev.exactly.payments.ledger.CustomerBalance;
import dev.exactly.payments.ledger.LedgerQueries;
import dev.exactly.payments.security.Caller;
import dev.exactly.payments.web.ApiProblems;
import dev.exactly.payments.web.ApiResponse;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Locale;
import org.jspecify.annotations.Nullable;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** The tenant's balances, journal entries (paged) and trial balance. */
@RestController
public class LedgerController {
    private static final String CURRENCY = "must be an ISO 4217 code";
    private static final String ACCOUNT = "must be clearing:<currency> or customer:<id>:<currency>";

    private final LedgerQueries ledger;
    private final ChargeOperations charges;

    public LedgerController(LedgerQueries ledger, ChargeOperations charges) {
        this.ledger = ledger;
        this.charges = charges;
    }

    @GetMapping("/v1/customers/{id}/balance")
    public ResponseEntity<byte[]> balance(@PathVariable String id, HttpServletRequest request) {
        String tenant = Caller.of(request).requireTenant();
        if (!ChargeRequest.ID.matcher(id).matches()) {
            return Http.entity(ApiProblems.notFound("customer"), request);
        }
        CustomerBalance balance = ledger.customerBalance(tenant, id, charges.customerCurrencies(tenant, id));
        byte[] body = Json.write(LedgerJson.balance(balance));
        return Http.entity(ApiResponse.json(200, body), request);
    }

    @GetMapping("/v1/ledger/entries")
    public ResponseEntity<byte[]> entries(
            @RequestParam(required = false) @Nullable String account,
            @RequestParam(required = false) @Nullable String currency,
            @RequestParam(required = false) @Nullable String after,
            @RequestParam(required = false) @Nullable String limit,
            HttpServletRequest request) {
        String tenant = Caller.of(request).requireTenant();
        String givenCurrency = Http.given(currency, "currency", CURRENCY);
        String code = givenCurrency == null ? "usd" : givenCurrency.toLowerCase(Locale.ROOT);
        if (!Currency.isKnown(code)) {
            throw Http.invalidParam("currency", CURRENCY);
        }
        String givenAccount = Http.given(account, "account", ACCOUNT);
        String name = givenAccount == null ? "clearing:" + code : givenAccount;
        long afterId = Http.longParam(after, "after");
        int pageSize = Http.intParam(limit, "limit", 50, 1, 500);
        ApiResponse answer = ledger.entries(tenant, name, afterId, pageSize)
                .map(page -> ApiResponse.json(200, Json.write(LedgerJson.entries(page))))
                .orElseGet(() -> ApiProblems.notFound("account (use clearing:<currency> or customer:<id>:<currency>)"));
        return Http.entity(answer, request);
    }

    @GetMapping("/v1/ledger/trial-balance")
    public ResponseEntity<byte[]> trialBalance(HttpServletRequest request) {
        String tenant = Caller.of(request).requireTenant();
        return Http.entity(
                ApiResponse.json(200, Json.write(LedgerJson.trialBalance(ledger.trialBalance(tenant), tenant))),
                request);
    }
}

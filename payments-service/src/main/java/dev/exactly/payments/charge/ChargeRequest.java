package dev.exactly.payments.charge;

import dev.exactly.ledger.Currency;
import dev.exactly.payments.json.Json;
import dev.exactly.payments.json.JsonFields;
import dev.exactly.payments.json.Parsed;
import dev.exactly.psp.PspChargeRequest;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A validated {@code POST /v1/charges} body:
 * {@code {"amount":1999,"currency":"usd","customer":"cus_123","source":"tok_visa","description":"…","metadata":{…},"capture":false}}.
 *
 * @param amount      minor units of the currency, positive
 * @param currency    an ISO 4217 currency
 * @param customer    the tenant's customer id
 * @param source      the card token given to the processor ({@value #DEFAULT_SOURCE} when absent)
 * @param description free text, or {@code null}
 * @param metadata    the caller's string pairs
 * @param capture     true (the default): capture at once; false: authorize only (a hold at the processor and in
 *                    the ledger, captured or voided later)
 */
public record ChargeRequest(
        long amount,
        Currency currency,
        String customer,
        String source,
        @Nullable String description,
        Map<String, String> metadata,
        boolean capture) {

    /** The card token used when a request names none (the processor's test card). */
    public static final String DEFAULT_SOURCE = "tok_visa";
    /** Ids of customers and charges: safe inside ledger account codes and URLs. */
    public static final Pattern ID = Pattern.compile("[A-Za-z0-9_-]{1,64}");

    private static final Pattern CURRENCY = Pattern.compile("[A-Za-z]{3}");
    private static final Pattern SOURCE = Pattern.compile("[\\x21-\\x7e]{1,255}");
    /** The longest description, in UTF-16 code units as the processor counts it (an emoji is two). */
    static final int MAX_DESCRIPTION = 1000;

    private static final Pattern ANY_TEXT = Pattern.compile("(?s).*");
    private static final List<String> MEMBERS =
            List.of("amount", "currency", "customer", "source", "description", "metadata", "capture");

    public ChargeRequest {
        metadata = Map.copyOf(metadata);
    }

    /** Validates a body: the request, or one error per member that breaks its rule. */
    public static Parsed<ChargeRequest> parse(byte[] body) {
        JsonFields f = JsonFields.of(body);
        f.onlyKnown(MEMBERS);
        long amount = f.requiredLong("amount", 1, PspChargeRequest.MAX_AMOUNT);
        String currencyCode = f.requiredString("currency", CURRENCY, "a three-letter ISO 4217 code");
        Currency currency = null;
        if (!currencyCode.isEmpty()) {
            if (Currency.isKnown(currencyCode)) {
                currency = Currency.of(currencyCode);
            } else {
                f.error("currency", "parameter_invalid", "unknown currency '" + currencyCode + "'");
            }
        }
        String customer = f.requiredString("customer", ID, "1-64 letters, digits, '_' or '-'");
        String source = f.optionalString("source", SOURCE, "1-255 printable ASCII characters without spaces");
        String description = f.optionalString("description", ANY_TEXT, "a string");
        if (description != null && description.length() > MAX_DESCRIPTION) {
            // counted as the processor counts it: a regular expression's '.' takes a surrogate pair as one
            f.error(
                    "description",
                    "parameter_invalid",
                    "description must be at most " + MAX_DESCRIPTION
                            + " characters (UTF-16 code units, as the processor counts them: an emoji takes two)");
        }
        Map<String, String> metadata = f.optionalStringMap("metadata", 40, 40, 500);
        boolean capture = f.optionalBoolean("capture", true);
        if (currency == null) {
            return new Parsed.Invalid<>(f.errors());
        }
        Currency known = currency;
        return f.result(() -> new ChargeRequest(
                amount, known, customer, source == null ? DEFAULT_SOURCE : source, description, metadata, capture));
    }

    /** The lower-case currency code, as the API and the processor spell it. */
    public String currencyCode() {
        return currency.code().toLowerCase(Locale.ROOT);
    }

    /** The metadata as JSON, keys sorted (how the charge row keeps it). */
    public String metadataJson() {
        return new String(Json.write(new TreeMap<>(metadata)), StandardCharsets.UTF_8);
    }

    /** The request for the processor, naming our charge in its metadata. */
    public PspChargeRequest toProcessorRequest(String tenant, String chargeId) {
        return new PspChargeRequest(
                amount,
                currencyCode(),
                source,
                description,
                Map.of("exactly_charge", chargeId, "exactly_tenant", tenant),
                capture);
    }

    /** The JSON persisted as the exact processor request, before it is sent. */
    public static String processorRequestJson(PspChargeRequest request) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("amount", request.amount());
        json.put("currency", request.currency());
        json.put("source", request.source());
        json.put("description", request.description());
        json.put("metadata", new TreeMap<>(request.metadata()));
        if (!request.capture()) {
            json.put("capture", false); // absent for a charge captured at once: earlier rows stay as they were
        }
        return new String(Json.write(json), StandardCharsets.UTF_8);
    }

    /** Reads a persisted processor request back, to send it again unchanged. */
    public static PspChargeRequest processorRequest(String json) {
        Map<String, Object> m = Json.readMap(json);
        @SuppressWarnings("unchecked")
        Map<String, String> metadata = (Map<String, String>) m.get("metadata");
        Object description = m.get("description");
        return new PspChargeRequest(
                ((Number) persisted(m, "amount")).longValue(),
                (String) persisted(m, "currency"),
                (String) persisted(m, "source"),
                description == null ? null : description.toString(),
                Objects.requireNonNull(metadata, "a persisted processor request's metadata"),
                !Boolean.FALSE.equals(m.get("capture")));
    }

    /** A member every persisted processor request holds ({@link #processorRequestJson}, the refund's likewise). */
    public static Object persisted(Map<String, Object> request, String member) {
        return Objects.requireNonNull(request.get(member), () -> "a persisted processor request's " + member);
    }
}

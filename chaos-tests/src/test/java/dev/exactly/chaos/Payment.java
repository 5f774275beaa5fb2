package dev.exactly.chaos;

import dev.exactly.idempotency.IdempotencyKey;
import dev.exactly.idempotency.Scope;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * One logical payment of the load: a fixed {@code Idempotency-Key} and a fixed body, sent by several
 * duplicate requests. About one in eight uses a card the processor declines, so that recorded failures
 * (402) are replayed too.
 *
 * @param key      the client's idempotency key
 * @param amount   minor units
 * @param customer the customer id
 * @param declines whether the processor declines the card
 * @param body     the exact request body
 */
record Payment(String key, long amount, String customer, boolean declines, byte[] body) {

    /** The charge route, part of the scope. */
    static final String ROUTE = "/v1/charges";

    /** {@code count} payments named {@code prefix-0 ... prefix-(count-1)}, drawn from {@code seed}. */
    static List<Payment> batch(String prefix, int count, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        List<Payment> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            long amount = 100 + random.nextLong(99_900);
            String customer = "cus_" + random.nextInt(20);
            boolean declines = random.nextInt(8) == 0;
            String source = declines ? "tok_chargeDeclined" : "tok_visa";
            String json = """
                    {"amount":%d,"currency":"usd","customer":"%s","source":"%s","description":"chaos %s-%d"}""".formatted(amount, customer, source, prefix, i);
            out.add(new Payment(prefix + "-" + i, amount, customer, declines, json.getBytes(StandardCharsets.UTF_8)));
        }
        return List.copyOf(out);
    }

    /** The scope key the service stores for this payment of {@code tenant} (SHA-256, hex). */
    String scopeHash(String tenant) {
        return new Scope(tenant, "POST", ROUTE, IdempotencyKey.parse(key))
                .toScopeKey()
                .hash();
    }

    @Override
    public String toString() {
        return key + "(" + amount + (declines ? ", declines" : "") + ")";
    }
}

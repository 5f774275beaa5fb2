package dev.exactly.benchmarks.fingerprint;

import dev.exactly.benchmarks.Machine;
import dev.exactly.benchmarks.TextTable;
import dev.exactly.idempotency.Fingerprint;
import dev.exactly.idempotency.Fingerprinter;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.erdtman.jcs.JsonCanonicalizer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.results.RunResult;

/**
 * A request's fingerprint against its floor, one thread, on a charge's JSON body of about 400 bytes in four
 * spellings: {@link #floor} is the SHA-256 of the body's bytes as they are, which every fingerprint pays;
 * {@link #fingerprint} is the guard's (RFC 8785 canonical form, then SHA-256); {@link #referenceCanonicaliser}
 * is the same digest through an independent RFC 8785 implementation that builds a tree (the one the core used
 * for every number that is not a short integer, until it wrote its own), for scale.
 * {@code benchmarks/store-benchmark.sh FingerprintBenchmark}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 10, time = 1)
@Fork(1)
public class FingerprintBenchmark {
    /**
     * The body's spelling: {@code canonical} (compact, members sorted, integers: what a client that sorts its
     * members sends, recognised in one scan), {@code spaced} (the same, pretty-printed and unsorted),
     * {@code decimals} (amounts and rates with fractions) and {@code exponents} (numbers in exponent notation).
     */
    @Param({"canonical", "spaced", "decimals", "exponents"})
    public String body = "canonical";

    private final Fingerprinter fingerprinter = Fingerprinter.ofDefaults();
    private byte[] bytes = new byte[0];
    private MessageDigest sha256 = newSha256();

    @Setup
    public void prepare() {
        String json = switch (body) {
            case "canonical" -> """
                    {"amount":1999,"capture":true,"currency":"usd","customer":"cus_4QFOF3xrvBT2nU","description":\
                    "Upgrade to the annual plan","items":[{"price":1499,"quantity":1,"sku":"plan_annual"},\
                    {"price":500,"quantity":1,"sku":"seat_extra"}],"metadata":{"order_id":"6735","source":\
                    "checkout"},"payment_method":"pm_card_visa","receipt_email":"jenny.rosen@example.com",\
                    "statement_descriptor":"EXACTLY ANNUAL"}""";
            case "spaced" -> """
                    {
                      "customer": "cus_4QFOF3xrvBT2nU",
                      "amount": 1999,
                      "currency": "usd",
                      "description": "Upgrade to the annual plan",
                      "capture": true,
                      "items": [
                        {"sku": "plan_annual", "price": 1499, "quantity": 1},
                        {"sku": "seat_extra", "price": 500, "quantity": 1}
                      ],
                      "metadata": {"source": "checkout", "order_id": "6735"},
                      "payment_method": "pm_card_visa",
                      "receipt_email": "jenny.rosen@example.com",
                      "statement_descriptor": "EXACTLY ANNUAL"
                    }
                    """;
            case "decimals" -> """
                    {"customer":"cus_4QFOF3xrvBT2nU","amount":19.99,"currency":"usd","tax_rate":0.0825,\
                    "description":"Upgrade to the annual plan","capture":true,"items":[{"sku":"plan_annual",\
                    "price":14.99,"quantity":1},{"sku":"seat_extra","price":5.00,"quantity":1}],\
                    "metadata":{"source":"checkout","order_id":"6735"},"payment_method":"pm_card_visa",\
                    "receipt_email":"jenny.rosen@example.com","statement_descriptor":"EXACTLY ANNUAL"}""";
            case "exponents" -> """
                    {"customer":"cus_4QFOF3xrvBT2nU","amount":1.999E3,"currency":"usd","tax_rate":8.25e-2,\
                    "description":"Upgrade to the annual plan","capture":true,"items":[{"sku":"plan_annual",\
                    "price":1.499e3,"quantity":1E0},{"sku":"seat_extra","price":5e2,"quantity":1e0}],\
                    "metadata":{"source":"checkout","order_id":"6735"},"payment_method":"pm_card_visa",\
                    "receipt_email":"jenny.rosen@example.com","statement_descriptor":"EXACTLY ANNUAL"}""";
            default -> throw new IllegalArgumentException("canonical, spaced, decimals or exponents: " + body);
        };
        bytes = json.getBytes(StandardCharsets.UTF_8);
        sha256 = newSha256();
        Fingerprint ours = fingerprint();
        if (!ours.algorithm().equals(Fingerprinter.JCS_SHA256)) {
            throw new IllegalStateException("the " + body + " body was not canonicalised: " + ours);
        }
    }

    /** SHA-256 of the body's bytes: no fingerprint costs less. */
    @Benchmark
    public String floor() {
        return HexFormat.of().formatHex(sha256.digest(bytes));
    }

    @Benchmark
    public Fingerprint fingerprint() {
        return fingerprinter.fingerprint("POST", "/v1/charges", bytes, "application/json");
    }

    /** The canonical text by the independent implementation, then SHA-256 of it. */
    @Benchmark
    public String referenceCanonicaliser() throws IOException {
        String canonical = new JsonCanonicalizer(new String(bytes, StandardCharsets.UTF_8)).getEncodedString();
        return HexFormat.of().formatHex(sha256.digest(canonical.getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * Prints the run's figures as ratios to the floor, body by body, if the results are this benchmark's: true
     * then, false (and nothing printed) for any other benchmark's.
     */
    public static boolean report(List<RunResult> results, Machine before, Machine after, PrintStream out) {
        Map<String, Map<String, Double>> nanos = new TreeMap<>();
        for (RunResult result : results) {
            String benchmark = result.getParams().getBenchmark();
            if (!benchmark.startsWith(FingerprintBenchmark.class.getName() + ".")) {
                return false;
            }
            nanos.computeIfAbsent(
                            Objects.requireNonNull(result.getParams().getParam("body"), "body"), b -> new TreeMap<>())
                    .put(
                            benchmark.substring(benchmark.lastIndexOf('.') + 1),
                            result.getPrimaryResult().getScore());
        }
        if (nanos.isEmpty()) {
            return false;
        }
        TextTable table = new TextTable("body", "floor ns", "fingerprint ns", "÷ floor", "reference ns", "÷ floor");
        nanos.forEach((body, by) -> {
            double floor = by.getOrDefault("floor", Double.NaN);
            double ours = by.getOrDefault("fingerprint", Double.NaN);
            double reference = by.getOrDefault("referenceCanonicaliser", Double.NaN);
            table.row(
                    body,
                    String.format(Locale.ROOT, "%.0f", floor),
                    String.format(Locale.ROOT, "%.0f", ours),
                    String.format(Locale.ROOT, "%.2f", ours / floor),
                    String.format(Locale.ROOT, "%.0f", reference),
                    String.format(Locale.ROOT, "%.2f", reference / floor));
        });
        out.println();
        out.println("Fingerprint benchmark: ns per fingerprint of a charge's JSON body, one thread; floor = SHA-256 of"
                + " the body's bytes as they are");
        out.println("before: " + before.describe());
        out.println("after:  " + after.describe());
        out.println();
        table.print(out);
        out.println();
        out.print(table.markdown());
        return true;
    }

    private static MessageDigest newSha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}

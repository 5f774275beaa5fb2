package dev.exactly.idempotency.spring.boot.app;

import jakarta.servlet.http.HttpServletResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;

/** What the test controller did, per request reference (the {@code ref} of the JSON body). */
public final class Handlers {
    /** A test header naming the reference, read before the body, by the arrival counter. */
    public static final String REF_HEADER = "X-Test-Ref";

    private static final Duration MAX_HOLD = Duration.ofSeconds(30);
    private static final Pattern REF = Pattern.compile("\"ref\"\\s*:\\s*\"([^\"]+)\"");

    private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> arrivals = new ConcurrentHashMap<>();
    private final Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();
    private final Map<String, Boolean> virtualThreads = new ConcurrentHashMap<>();
    private final AtomicLong sequence = new AtomicLong();

    /** Holds the handler of {@code ref} (once it runs) until {@link #release}. */
    public void hold(String ref) {
        gates.put(ref, new CountDownLatch(1));
    }

    public void release(String ref) {
        CountDownLatch gate = gates.get(ref);
        if (gate != null) {
            gate.countDown();
        }
    }

    public int runs(String ref) {
        AtomicInteger count = runs.get(ref);
        return count == null ? 0 : count.get();
    }

    public int arrivals(String ref) {
        AtomicInteger count = arrivals.get(ref);
        return count == null ? 0 : count.get();
    }

    /** Whether the last run for {@code ref} was on a virtual thread. */
    public boolean ranOnVirtualThread(String ref) {
        return virtualThreads.getOrDefault(ref, false);
    }

    public void arrived(String ref) {
        arrivals.computeIfAbsent(ref, r -> new AtomicInteger()).incrementAndGet();
    }

    /** Records a run and returns its number for {@code ref} (1 for the first), after any hold. */
    public int run(String ref) throws InterruptedException {
        int run = runs.computeIfAbsent(ref, r -> new AtomicInteger()).incrementAndGet();
        virtualThreads.put(ref, Thread.currentThread().isVirtual());
        CountDownLatch gate = gates.get(ref);
        if (gate != null && !gate.await(MAX_HOLD.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("the test never released " + ref);
        }
        return run;
    }

    public long next() {
        return sequence.incrementAndGet();
    }

    /**
     * What the test routes answer: 201 with a fresh sequence number (so a replay is told from a second run by
     * its body), a replayed header, one that is not, and a cookie; 400 without a {@code ref}; a failure before
     * any side effect on the first run of a body with {@code "explode":true}.
     */
    public ResponseEntity<String> respond(String body, HttpServletResponse response) throws InterruptedException {
        Matcher ref = REF.matcher(body);
        if (!ref.find()) {
            return ResponseEntity.badRequest().body("{\"error\":\"ref missing\"}");
        }
        String id = ref.group(1);
        int run = run(id);
        if (body.contains("\"explode\":true") && run == 1) {
            throw new IllegalStateException("the first run of " + id + " fails before any side effect");
        }
        long seq = next();
        response.addHeader(HttpHeaders.SET_COOKIE, "session=s" + seq + "; HttpOnly");
        return ResponseEntity.status(201)
                .contentType(MediaType.APPLICATION_JSON)
                .header("X-Charge-Trace", "trace-" + seq)
                .header("X-Other", "other-" + seq)
                .body("{\"id\":\"ch_" + seq + "\",\"ref\":\"" + id + "\",\"run\":" + run + "}");
    }
}

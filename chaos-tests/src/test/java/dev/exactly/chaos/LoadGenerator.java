package dev.exactly.chaos;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The clients: each logical payment is sent by several concurrent duplicate requests (a double click, a
 * proxy's replay), spread over the service instances, each retried as the design's client retries
 * (BRIEF §6): 409 and 5xx and connection errors are retried with capped exponential backoff and full
 * jitter, honouring {@code Retry-After}, on the next instance; every acknowledged answer (2xx, 402) is
 * recorded. Every loop is bounded in attempts and in time. It also counts, per instance, the requests in
 * flight, so that a fault can be timed to land while requests are in flight.
 */
final class LoadGenerator implements AutoCloseable {
    private static final Pattern PROBLEM_CODE = Pattern.compile("\"code\"\\s*:\\s*\"([a-z0-9_]+)\"");

    /**
     * How the clients behave.
     *
     * @param duplicates     concurrent requests per payment
     * @param pacing         pause between the starts of two payments
     * @param requestTimeout how long one request may take
     * @param maxAttempts    attempts per duplicate request
     * @param deadline       how long one duplicate request may keep retrying
     * @param backoffBase    first backoff
     * @param backoffCap     longest backoff (and longest {@code Retry-After} honoured)
     */
    record Settings(int duplicates, Duration pacing, Duration requestTimeout, int maxAttempts, Duration deadline,
            Duration backoffBase, Duration backoffCap) {
        static Settings defaults() {
            return new Settings(3, Duration.ofMillis(40), Duration.ofSeconds(15), 60, Duration.ofSeconds(120),
                    Duration.ofMillis(100), Duration.ofSeconds(2));
        }

        Settings withDuplicates(int n) {
            return new Settings(n, pacing, requestTimeout, maxAttempts, deadline, backoffBase, backoffCap);
        }

        Settings withPacing(Duration d) {
            return new Settings(duplicates, d, requestTimeout, maxAttempts, deadline, backoffBase, backoffCap);
        }
    }

    /** One answer: a status with its bytes, or a transport failure ({@code status} 0). */
    record Answer(int status, byte[] body, boolean replayed, @Nullable Duration retryAfter, String kind) {
        boolean acknowledged() {
            return (status >= 200 && status < 300) || status == 402;
        }

        boolean retryable() {
            return status == 0 || status == 409 || status >= 500;
        }
    }

    private final List<ServiceInstance> instances;
    private final String apiKey;
    private final Settings settings;
    private final HttpClient http;
    private final Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();
    private final Map<String, Map<String, AtomicInteger>> inFlightKeys = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> answers = new ConcurrentHashMap<>();

    LoadGenerator(List<ServiceInstance> instances, String apiKey, Settings settings) {
        this.instances = List.copyOf(instances);
        this.apiKey = apiKey;
        this.settings = settings;
        this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2))
                .version(HttpClient.Version.HTTP_1_1).build();
        for (ServiceInstance i : instances) {
            inFlight.put(i.name(), new AtomicInteger());
            inFlightKeys.put(i.name(), new ConcurrentHashMap<>());
        }
    }

    Settings settings() {
        return settings;
    }

    /** Requests sent to {@code instance} and not answered yet. */
    int inFlight(ServiceInstance instance) {
        return inFlight.get(instance.name()).get();
    }

    /** The payment keys with a request in flight at {@code instance} and at no other instance right now. */
    Set<String> inFlightOnlyAt(ServiceInstance instance) {
        Set<String> keys = inFlightKeys(instance);
        for (ServiceInstance other : instances) {
            if (!other.name().equals(instance.name())) {
                keys.removeAll(inFlightKeys(other));
            }
        }
        return keys;
    }

    /** The payment keys with a request in flight at {@code instance} right now. */
    Set<String> inFlightKeys(ServiceInstance instance) {
        Map<String, AtomicInteger> keys = inFlightKeys.get(instance.name());
        Set<String> out = new java.util.HashSet<>();
        keys.forEach((k, n) -> {
            if (n.get() > 0) {
                out.add(k);
            }
        });
        return out;
    }

    /** Answers by kind ({@code 201}, {@code 409 idempotency_key_in_use}, {@code io}, ...), since the start. */
    Map<String, Long> answers() {
        Map<String, Long> out = new TreeMap<>();
        answers.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }

    /** Starts sending {@code payments}, each by the configured number of duplicates, paced. */
    Run start(List<Payment> payments) {
        return new Run(payments);
    }

    /** A load in progress. */
    final class Run {
        private final List<PaymentLog> logs;
        private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
        private final AtomicInteger sendersDone = new AtomicInteger();
        private final int senders;

        private Run(List<Payment> payments) {
            List<PaymentLog> l = new ArrayList<>();
            for (Payment p : payments) {
                l.add(new PaymentLog(p));
            }
            this.logs = List.copyOf(l);
            this.senders = logs.size() * settings.duplicates();
            long start = System.nanoTime();
            for (int i = 0; i < logs.size(); i++) {
                PaymentLog log = logs.get(i);
                long at = start + settings.pacing().toNanos() * i;
                for (int d = 0; d < settings.duplicates(); d++) {
                    int first = firstInstance(i, d);
                    executor.submit(() -> {
                        try {
                            pauseUntil(at + TimeUnit.MILLISECONDS.toNanos(ThreadLocalRandom.current().nextInt(20)));
                            sender(log, first);
                        } finally {
                            sendersDone.incrementAndGet();
                        }
                    });
                }
            }
            executor.shutdown();
        }

        List<PaymentLog> logs() {
            return logs;
        }

        /** Duplicate requests that are finished (acknowledged or out of attempts). */
        int sendersDone() {
            return sendersDone.get();
        }

        int senders() {
            return senders;
        }

        /** Waits (bounded) until every duplicate request is done; false on timeout. */
        boolean await(Duration timeout) {
            try {
                return executor.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }

        /** Stops whatever is still sending. */
        void abort() {
            executor.shutdownNow();
        }
    }

    /**
     * Where a duplicate request goes first: every third payment is a sticky client whose duplicates all go
     * to one instance (so that one instance alone owns its work), the others are spread over the instances.
     */
    private int firstInstance(int payment, int duplicate) {
        int n = instances.size();
        return payment % 3 == 0 ? (payment / 3) % n : (payment + duplicate) % n;
    }

    /** One duplicate request: retried until acknowledged, out of attempts or past the deadline. */
    private void sender(PaymentLog log, int firstInstance) {
        long deadline = System.nanoTime() + settings.deadline().toNanos();
        int target = firstInstance;
        for (int attempt = 1; attempt <= settings.maxAttempts() && System.nanoTime() < deadline; attempt++) {
            if (Thread.currentThread().isInterrupted()) {
                return;
            }
            ServiceInstance instance = instances.get(target);
            Answer answer = send(instance, log.payment(), true);
            if (answer.acknowledged()) {
                log.acknowledged(new PaymentLog.Ack(answer.status(), answer.body(), instance.name(), answer.replayed(),
                        System.nanoTime()));
                return;
            }
            if (!answer.retryable() || answer.status() == 500) {
                log.unexpected(instance.name() + ": " + answer.kind() + " "
                        + new String(answer.body(), StandardCharsets.UTF_8));
                if (!answer.retryable()) {
                    return;
                }
            }
            backoff(attempt, answer.retryAfter());
            target = (target + 1) % instances.size();
        }
    }

    /** Sends the payment once to {@code instance} and classifies the answer. */
    Answer send(ServiceInstance instance, Payment payment, boolean track) {
        HttpRequest request = HttpRequest.newBuilder(instance.baseUri().resolve(Payment.ROUTE))
                .timeout(settings.requestTimeout())
                .header("Authorization", "Bearer " + apiKey)
                .header("Idempotency-Key", payment.key())
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(payment.body()))
                .build();
        AtomicInteger counter = inFlight.get(instance.name());
        AtomicInteger perKey = inFlightKeys.get(instance.name()).computeIfAbsent(payment.key(), k -> new AtomicInteger());
        if (track) {
            counter.incrementAndGet();
            perKey.incrementAndGet();
        }
        Answer answer;
        try {
            HttpResponse<byte[]> response = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
            answer = classify(response);
        } catch (HttpTimeoutException e) {
            answer = new Answer(0, new byte[0], false, null, "timeout");
        } catch (IOException e) {
            answer = new Answer(0, new byte[0], false, null, "io");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            answer = new Answer(0, new byte[0], false, null, "interrupted");
        } finally {
            if (track) {
                counter.decrementAndGet();
                perKey.decrementAndGet();
            }
        }
        answers.computeIfAbsent(answer.kind(), k -> new LongAdder()).increment();
        return answer;
    }

    private static Answer classify(HttpResponse<byte[]> response) {
        int status = response.statusCode();
        byte[] body = response.body();
        boolean replayed = response.headers().firstValue("Idempotent-Replayed").map("true"::equalsIgnoreCase).orElse(false);
        Duration retryAfter = response.headers().firstValue("Retry-After").flatMap(LoadGenerator::seconds).orElse(null);
        String kind = Integer.toString(status);
        if (status >= 400) {
            Matcher m = PROBLEM_CODE.matcher(new String(body, StandardCharsets.UTF_8));
            if (m.find()) {
                kind = kind + " " + m.group(1);
            }
        }
        return new Answer(status, body, replayed, retryAfter, kind);
    }

    private static java.util.Optional<Duration> seconds(String value) {
        try {
            return java.util.Optional.of(Duration.ofSeconds(Long.parseLong(value.strip())));
        } catch (NumberFormatException e) {
            return java.util.Optional.empty();
        }
    }

    /** Full jitter over a capped exponential, at least {@code Retry-After} (capped too). */
    private void backoff(int attempt, @Nullable Duration retryAfter) {
        long cap = settings.backoffCap().toMillis();
        long exp = Math.min(cap, settings.backoffBase().toMillis() << Math.min(attempt - 1, 16));
        long delay = ThreadLocalRandom.current().nextLong(exp + 1);
        if (retryAfter != null) {
            delay = Math.max(delay, Math.min(cap, retryAfter.toMillis()));
        }
        pauseFor(delay);
    }

    /** A client's pacing or backoff pause (not a wait for a condition). */
    private static void pauseFor(long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void pauseUntil(long nanoTime) {
        long left = nanoTime - System.nanoTime();
        if (left > 0) {
            pauseFor(TimeUnit.NANOSECONDS.toMillis(left));
        }
    }

    @Override
    public void close() {
        http.shutdownNow();
    }
}

package dev.exactly.chaos;

import dev.exactly.idempotency.client.IdempotencyKeyReusedException;
import dev.exactly.idempotency.client.IdempotentClientListener;
import dev.exactly.idempotency.client.IdempotentHttpClient;
import dev.exactly.idempotency.client.IdempotentRequest;
import dev.exactly.idempotency.client.IdempotentResponse;
import dev.exactly.idempotency.client.RetriesExhaustedException;
import dev.exactly.idempotency.client.RetryPolicy;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
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

/**
 * The clients: each logical payment is sent by several concurrent duplicate requests (a double click, a
 * proxy's replay), spread over the service instances, each sent by the project's Java client
 * ({@link IdempotentHttpClient}): the payment's key and bytes on every attempt, connection errors,
 * timeouts, 409, 429 and 502-504 retried with capped exponential backoff and full jitter, {@code Retry-After}
 * honoured, each retry on the next instance, bounded in attempts and in time; every acknowledged answer
 * (2xx, 402) is recorded. It also counts, per instance, the attempts in flight (through the client's
 * listener), so that a fault can be timed to land while requests are in flight.
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
     * @param backoffCap     longest computed backoff (a {@code Retry-After} within the deadline wins)
     */
    record Settings(
            int duplicates,
            Duration pacing,
            Duration requestTimeout,
            int maxAttempts,
            Duration deadline,
            Duration backoffBase,
            Duration backoffCap) {
        static Settings defaults() {
            return new Settings(
                    3,
                    Duration.ofMillis(40),
                    Duration.ofSeconds(15),
                    60,
                    Duration.ofSeconds(120),
                    Duration.ofMillis(100),
                    Duration.ofSeconds(2));
        }

        Settings withDuplicates(int n) {
            return new Settings(n, pacing, requestTimeout, maxAttempts, deadline, backoffBase, backoffCap);
        }

        Settings withPacing(Duration d) {
            return new Settings(duplicates, d, requestTimeout, maxAttempts, deadline, backoffBase, backoffCap);
        }

        /** The client's retry policy for one duplicate request. */
        RetryPolicy policy() {
            return RetryPolicy.custom()
                    .maxAttempts(maxAttempts)
                    .initialDelay(backoffBase)
                    .maxDelay(backoffCap)
                    .deadline(deadline)
                    .attemptTimeout(requestTimeout)
                    .build();
        }
    }

    /** One answer: a status with its bytes, or no answer ({@code status} 0). */
    record Answer(int status, byte[] body, boolean replayed, String kind) {
        boolean acknowledged() {
            return LoadGenerator.acknowledged(status);
        }

        static Answer of(IdempotentResponse r) {
            return new Answer(r.status(), r.body(), r.replayed(), LoadGenerator.kind(r.status(), r.body()));
        }

        static Answer of(RetriesExhaustedException e) {
            return e.lastAnswer()
                    .map(Answer::of)
                    .orElseGet(() -> new Answer(
                            0,
                            new byte[0],
                            false,
                            e.lastFailure().map(LoadGenerator::kind).orElse("io")));
        }
    }

    private final List<ServiceInstance> instances;
    private final Map<Integer, String> instanceByPort = new HashMap<>();
    private final String apiKey;
    private final Settings settings;
    private final HttpClient http;
    /** The load's client: retries by the settings, counts attempts in flight and answers. */
    private final IdempotentHttpClient client;
    /** One attempt, counted among the answers but not in flight: for checks after the load. */
    private final IdempotentHttpClient once;
    /** For checks after the load: retries by the settings to one instance, counted among the answers. */
    private final IdempotentHttpClient patient;

    private final Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();
    private final Map<String, Map<String, AtomicInteger>> inFlightKeys = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> answers = new ConcurrentHashMap<>();

    LoadGenerator(List<ServiceInstance> instances, String apiKey, Settings settings) {
        this.instances = List.copyOf(instances);
        this.apiKey = apiKey;
        this.settings = settings;
        this.http = HttpClient.newBuilder()
                .connectTimeout(Duration.ofSeconds(2))
                .version(HttpClient.Version.HTTP_1_1)
                .build();
        for (ServiceInstance i : instances) {
            inFlight.put(i.name(), new AtomicInteger());
            inFlightKeys.put(i.name(), new ConcurrentHashMap<>());
            instanceByPort.put(i.port(), i.name());
        }
        this.client = IdempotentHttpClient.builder(http)
                .policy(settings.policy())
                .listener(new Counting(true))
                .build();
        this.once = IdempotentHttpClient.builder(http)
                .policy(RetryPolicy.from(settings.policy()).maxAttempts(1).build())
                .listener(new Counting(false))
                .build();
        this.patient = IdempotentHttpClient.builder(http)
                .policy(settings.policy())
                .listener(new Counting(false))
                .build();
    }

    /** Counts every attempt's answer by kind, and (for the load) the attempts in flight per instance and key. */
    private final class Counting implements IdempotentClientListener {
        private final boolean inFlightToo;

        Counting(boolean inFlightToo) {
            this.inFlightToo = inFlightToo;
        }

        @Override
        public void attemptStarted(Attempt attempt) {
            if (inFlightToo) {
                String instance = instanceOf(attempt.target());
                inFlight.get(instance).incrementAndGet();
                inFlightKeys
                        .get(instance)
                        .computeIfAbsent(attempt.key(), k -> new AtomicInteger())
                        .incrementAndGet();
            }
        }

        @Override
        public void attemptAnswered(Attempt attempt, int status, HttpHeaders headers, byte[] body) {
            ended(attempt, kind(status, body));
        }

        @Override
        public void attemptFailed(Attempt attempt, IOException error) {
            ended(attempt, kind(error));
        }

        private void ended(Attempt attempt, String kind) {
            answers.computeIfAbsent(kind, k -> new LongAdder()).increment();
            if (inFlightToo) {
                String instance = instanceOf(attempt.target());
                inFlight.get(instance).decrementAndGet();
                inFlightKeys.get(instance).get(attempt.key()).decrementAndGet();
            }
        }
    }

    private String instanceOf(URI target) {
        String name = instanceByPort.get(target.getPort());
        if (name == null) {
            throw new IllegalStateException("not an instance of the load: " + target);
        }
        return name;
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
                    executor.execute(() -> {
                        try {
                            pauseUntil(at
                                    + TimeUnit.MILLISECONDS.toNanos(
                                            ThreadLocalRandom.current().nextInt(20)));
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

    /**
     * One duplicate request, sent by the client: the payment's key and bytes, first to {@code firstInstance},
     * each retry to the next instance, until a final answer or out of attempts or time.
     */
    private void sender(PaymentLog log, int firstInstance) {
        IdempotentRequest.Builder request = IdempotentRequest.builder(
                "POST", instances.get(firstInstance).baseUri().resolve(Payment.ROUTE));
        for (int i = 1; i < instances.size(); i++) {
            request.alsoTo(instances
                    .get((firstInstance + i) % instances.size())
                    .baseUri()
                    .resolve(Payment.ROUTE));
        }
        try {
            IdempotentResponse answer = client.send(
                    authorized(request, log.payment()), log.payment().key());
            String instance = instanceOf(answer.uri());
            if (acknowledged(answer.status())) {
                log.acknowledged(new PaymentLog.Ack(
                        answer.status(), answer.body(), instance, answer.replayed(), System.nanoTime()));
            } else {
                log.unexpected(instance + ": " + kind(answer.status(), answer.body()) + " " + answer.bodyText());
            }
        } catch (IdempotencyKeyReusedException e) {
            log.unexpected(
                    instanceOf(e.answer().uri()) + ": 422 reused " + e.answer().bodyText());
        } catch (RetriesExhaustedException e) {
            // no final answer within the attempts and the deadline: the payment stays unacknowledged, and the
            // checker reports it
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Sends the payment to {@code instance} once (no retry) and classifies the answer. */
    Answer send(ServiceInstance instance, Payment payment) {
        return sendWith(once, instance, payment);
    }

    /** Sends the payment to {@code instance}, retried by the settings, and classifies the final answer. */
    Answer sendRetrying(ServiceInstance instance, Payment payment) {
        return sendWith(patient, instance, payment);
    }

    private Answer sendWith(IdempotentHttpClient sender, ServiceInstance instance, Payment payment) {
        try {
            return Answer.of(sender.send(
                    authorized(
                            IdempotentRequest.builder("POST", instance.baseUri().resolve(Payment.ROUTE)), payment),
                    payment.key()));
        } catch (RetriesExhaustedException e) {
            return Answer.of(e);
        } catch (IdempotencyKeyReusedException e) {
            return Answer.of(e.answer());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Answer(0, new byte[0], false, "interrupted");
        }
    }

    private IdempotentRequest authorized(IdempotentRequest.Builder request, Payment payment) {
        return request.header("Authorization", "Bearer " + apiKey)
                .header("Content-Type", "application/json")
                .body(payment.body())
                .build();
    }

    static boolean acknowledged(int status) {
        return (status >= 200 && status < 300) || status == 402;
    }

    /** {@code 201}, {@code 409 idempotency_key_in_use}, ...: the status and the problem's code. */
    static String kind(int status, byte[] body) {
        String kind = Integer.toString(status);
        if (status >= 400) {
            Matcher m = PROBLEM_CODE.matcher(new String(body, StandardCharsets.UTF_8));
            if (m.find()) {
                kind = kind + " " + m.group(1);
            }
        }
        return kind;
    }

    static String kind(IOException error) {
        return error instanceof HttpTimeoutException ? "timeout" : "io";
    }

    /** A client's pacing pause (not a wait for a condition). */
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

package dev.exactly.benchmarks.http;

import dev.exactly.idempotency.servlet.IdempotencyFilter;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.HdrHistogram.Histogram;

/**
 * A closed-loop load generator: a fixed number of clients, each a virtual thread sending one request at
 * a time through a shared {@link HttpClient} (HTTP/1.1 keep-alive, loopback), until the phase's deadline.
 * Every answer is checked: 201 with a body, and the replay marker exactly on replays of a guarded
 * endpoint.
 */
final class LoadGenerator implements AutoCloseable {
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    /** The request body for {@code key}: the same key always sends the same body. */
    static String body(String key) {
        return "{\"amount\":1999,\"currency\":\"EUR\",\"reference\":\"" + key + "\"}";
    }

    /**
     * Runs one phase.
     *
     * @param uri         the endpoint
     * @param guarded     whether replays must come back marked as replays
     * @param clients     concurrent clients
     * @param duration    how long clients start new requests
     * @param replayShare share of requests that repeat one of {@code replayKeys}
     * @param replayKeys  keys completed beforehand
     * @param freshPrefix prefix of fresh keys, unique to this phase
     */
    PhaseResult run(URI uri, boolean guarded, int clients, Duration duration, double replayShare,
            List<String> replayKeys, String freshPrefix) throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + duration.toNanos();
        List<PhaseResult> parts = onClients(clients, client -> {
            ThreadLocalRandom random = ThreadLocalRandom.current();
            Tally tally = new Tally();
            long n = 0;
            while (System.nanoTime() < deadline) {
                boolean replay = replayShare > 0 && random.nextDouble() < replayShare;
                String key = replay
                        ? replayKeys.get(random.nextInt(replayKeys.size()))
                        : freshPrefix + client + "-" + n++;
                send(uri, key, guarded && replay, replay, tally);
            }
            return tally.result(0);
        });
        long elapsed = System.nanoTime() - start;
        PhaseResult total = PhaseResult.empty();
        for (PhaseResult part : parts) {
            total = total.plus(part);
        }
        return new PhaseResult(total.fresh(), total.replayed(), total.errors(), total.latency(), elapsed,
                total.errorSamples());
    }

    /** Sends each key once (to be replayed later), {@code clients} at a time. */
    PhaseResult prepare(URI uri, List<String> keys, int clients) throws InterruptedException {
        AtomicInteger next = new AtomicInteger();
        long start = System.nanoTime();
        List<PhaseResult> parts = onClients(clients, client -> {
            Tally tally = new Tally();
            for (int i = next.getAndIncrement(); i < keys.size(); i = next.getAndIncrement()) {
                send(uri, keys.get(i), false, false, tally);
            }
            return tally.result(0);
        });
        PhaseResult total = PhaseResult.empty();
        for (PhaseResult part : parts) {
            total = total.plus(part);
        }
        return new PhaseResult(total.fresh(), total.replayed(), total.errors(), total.latency(),
                System.nanoTime() - start, total.errorSamples());
    }

    private void send(URI uri, String key, boolean expectReplayMarker, boolean replay, Tally tally) {
        HttpRequest request = HttpRequest.newBuilder(uri)
                .timeout(REQUEST_TIMEOUT)
                .header("Content-Type", "application/json")
                .header(IdempotencyFilter.KEY_HEADER, key)
                .POST(HttpRequest.BodyPublishers.ofString(body(key), StandardCharsets.UTF_8))
                .build();
        long sent = System.nanoTime();
        try {
            HttpResponse<byte[]> response = client.send(request, HttpResponse.BodyHandlers.ofByteArray());
            tally.latency.recordValue(Math.min((System.nanoTime() - sent) / 1000, PhaseResult.HIGHEST_MICROS));
            boolean marked = response.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER).isPresent();
            if (response.statusCode() != 201 || response.body().length == 0 || marked != expectReplayMarker) {
                tally.error(key + ": status " + response.statusCode() + ", replay marker " + marked
                        + " (expected " + expectReplayMarker + "): "
                        + new String(response.body(), StandardCharsets.UTF_8));
            } else if (replay) {
                tally.replayed++;
            } else {
                tally.fresh++;
            }
        } catch (IOException e) {
            tally.latency.recordValue(Math.min((System.nanoTime() - sent) / 1000, PhaseResult.HIGHEST_MICROS));
            tally.error(key + ": " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            tally.error(key + ": interrupted");
        }
    }

    @FunctionalInterface
    private interface ClientLoop {
        PhaseResult run(int client) throws Exception;
    }

    private static List<PhaseResult> onClients(int clients, ClientLoop loop) throws InterruptedException {
        List<PhaseResult> results = new ArrayList<>(clients);
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<PhaseResult>> futures = new ArrayList<>(clients);
            for (int i = 0; i < clients; i++) {
                int client = i;
                futures.add(threads.submit(() -> loop.run(client)));
            }
            for (Future<PhaseResult> future : futures) {
                try {
                    results.add(future.get());
                } catch (java.util.concurrent.ExecutionException e) {
                    throw new IllegalStateException("a load generator client failed", e.getCause());
                }
            }
        }
        return results;
    }

    /** One client's counts; confined to its thread. */
    private static final class Tally {
        final Histogram latency = new Histogram(PhaseResult.HIGHEST_MICROS, 3);
        final List<String> samples = new ArrayList<>();
        long fresh;
        long replayed;
        long errors;

        void error(String description) {
            errors++;
            if (samples.size() < PhaseResult.maxSamples()) {
                samples.add(description);
            }
        }

        PhaseResult result(long elapsedNanos) {
            return new PhaseResult(fresh, replayed, errors, latency, elapsedNanos, samples);
        }
    }

    @Override
    public void close() {
        client.close();
    }
}

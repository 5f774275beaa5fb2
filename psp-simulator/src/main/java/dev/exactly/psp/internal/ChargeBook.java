package dev.exactly.psp.internal;

import dev.exactly.psp.Capture;
import dev.exactly.psp.PspCharge;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The processor's books: charges by idempotency key and by id, and the capture log. A key's charge is
 * decided inside {@link ConcurrentHashMap#compute}, so concurrent requests with one key are serialised
 * on that key: exactly one creates the charge (and, if captured, appends to the capture log in the
 * same step); the others see it and replay it.
 */
public final class ChargeBook {

    /**
     * What a key holds: the request fingerprint and the exact answer to replay.
     *
     * @param fingerprint SHA-256 of the canonical request
     * @param charge      the charge
     * @param status      the HTTP status of the answer (200 captured, 402 declined)
     * @param body        the answer's bytes, replayed verbatim
     */
    public record Entry(String fingerprint, PspCharge charge, int status, byte[] body) {}

    /** The result of {@link #chargeOnce}. */
    public sealed interface Outcome {
        Entry entry();
    }

    /** This request created the charge. */
    public record Created(Entry entry) implements Outcome {}

    /** An earlier request with the same key and payload created it; replay. */
    public record Replayed(Entry entry) implements Outcome {}

    /** An earlier request used the key with a different payload. */
    public record KeyReused(Entry entry) implements Outcome {}

    private final ConcurrentHashMap<String, Entry> byKey = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, PspCharge> byId = new ConcurrentHashMap<>();
    private final List<Capture> captures = new ArrayList<>();
    private final InstantSource clock;
    private final boolean honourKeys;

    /**
     * @param clock      capture times
     * @param honourKeys false for the deliberately broken processor that creates a charge on every call
     */
    public ChargeBook(InstantSource clock, boolean honourKeys) {
        this.clock = clock;
        this.honourKeys = honourKeys;
    }

    /**
     * Atomically: if the key holds nothing, create the entry (and log its capture); otherwise replay it
     * or report the reuse. {@code create} runs at most once per key and must be quick.
     */
    public Outcome chargeOnce(String key, String fingerprint, Supplier<Entry> create) {
        Outcome[] outcome = new Outcome[1];
        byKey.compute(key, (k, existing) -> {
            if (existing != null && honourKeys) {
                outcome[0] = existing.fingerprint().equals(fingerprint)
                        ? new Replayed(existing)
                        : new KeyReused(existing);
                return existing;
            }
            Entry created = create.get();
            byId.put(created.charge().id(), created.charge());
            if (created.charge().captured()) {
                logCapture(key, created.charge());
            }
            outcome[0] = new Created(created);
            return created;
        });
        return outcome[0];
    }

    private void logCapture(String key, PspCharge charge) {
        synchronized (captures) {
            captures.add(new Capture(captures.size() + 1L, key, charge.id(), charge.amount(), charge.currency(),
                    clock.instant(), charge.metadata()));
        }
    }

    public Optional<PspCharge> byKey(String key) {
        return Optional.ofNullable(byKey.get(key)).map(Entry::charge);
    }

    public Optional<PspCharge> byId(String id) {
        return Optional.ofNullable(byId.get(id));
    }

    /** The capture log, oldest first. */
    public List<Capture> captures() {
        synchronized (captures) {
            return List.copyOf(captures);
        }
    }

    /** Captures per idempotency key, in order of first capture. */
    public Map<String, Long> captureCounts() {
        Map<String, Long> counts = new LinkedHashMap<>();
        for (Capture c : captures()) {
            counts.merge(c.idempotencyKey(), 1L, Long::sum);
        }
        return counts;
    }

    /** Forgets every charge and capture. */
    public void clear() {
        synchronized (captures) {
            byKey.clear();
            byId.clear();
            captures.clear();
        }
    }
}

package dev.exactly.psp.internal;

import dev.exactly.psp.Capture;
import dev.exactly.psp.ChargeStatus;
import dev.exactly.psp.PspCharge;
import dev.exactly.psp.PspChargeRequest;
import dev.exactly.psp.PspOperation;
import dev.exactly.psp.PspRefund;
import dev.exactly.psp.PspRefundRequest;
import dev.exactly.psp.Refund;
import dev.exactly.psp.RefundStatus;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The processor's books: the answers recorded under each operation's idempotency keys, charges (with
 * the state of their holds) by key and by id, refunds by key and by id, and the capture and refund logs.
 *
 * <p>Locks, always taken in this order: a key's outcome is decided holding the lock of the key's stripe
 * (one of {@value #STRIPES}, by the key's hash), so concurrent requests with one key are serialised on that
 * key (exactly one decides, the others replay); every read and change of the book itself (its indexes,
 * the charges' state, the logs) then holds the book's lock, briefly: a hold is captured or voided, never
 * both, captured at most once, and refunds never add up to more than was captured. Log entries are
 * appended in the same step as the change they record.
 *
 * <p>The book keeps every charge for the life of the process without an object per charge: what never
 * changes (a charge's request, an answer's bytes, a log entry) is written once to a {@link Slab} and read
 * back when asked for; the indexes by key and by id ({@link KeyIndex}) and the charges' changing state
 * ({@link ChargeTable}) are arrays of primitives. As object graphs (about twenty objects a charge), what a
 * busy book added between two young collections was copied at every collection until it was promoted, and
 * the pauses of the process that runs the book grew with its rate of charges.
 */
public final class ChargeBook {
    private static final int STRIPES = 256;

    /**
     * What a key holds: the request fingerprint and the exact answer to replay.
     *
     * @param fingerprint SHA-256 of the canonical request (with the path's charge id, if any)
     * @param status      the HTTP status of the answer
     * @param body        the answer's bytes, replayed verbatim
     */
    public record Entry(String fingerprint, int status, byte[] body) {}

    /** The result of {@link #once}. */
    public sealed interface Outcome {
        Entry entry();
    }

    /** This request decided the outcome. */
    public record Created(Entry entry) implements Outcome {}

    /** An earlier request with the same key and payload decided it; replay. */
    public record Replayed(Entry entry) implements Outcome {}

    /** An earlier request used the key with a different payload. */
    public record KeyReused(Entry entry) implements Outcome {}

    /** What a capture or a void did. */
    public sealed interface HoldResult {}

    /** It went through (or, for a void of a hold already gone, there was nothing to release): the charge now. */
    public record Done(PspCharge charge) implements HoldResult {}

    /** The processor refused it; nothing changed. */
    public record Refused(String code, String message) implements HoldResult {}

    /** What never changes about a charge, as it is written to and read from the slab (its id and key first). */
    private record Frozen(
            String id,
            String key,
            PspChargeRequest request,
            @Nullable String declineCode,
            Instant created,
            @Nullable Instant expiresAt) {

        byte[] bytes() {
            return Records.write(out -> {
                out.writeUTF(id);
                out.writeUTF(key);
                out.writeLong(request.amount());
                out.writeUTF(request.currency());
                out.writeUTF(request.source());
                Records.writeNullable(out, request.description());
                Records.writeMap(out, request.metadata());
                out.writeBoolean(request.capture());
                Records.writeNullable(out, declineCode);
                out.writeLong(created.getEpochSecond());
                out.writeInt(created.getNano());
                out.writeBoolean(expiresAt != null);
                if (expiresAt != null) {
                    out.writeLong(expiresAt.getEpochSecond());
                    out.writeInt(expiresAt.getNano());
                }
            });
        }

        static Frozen of(byte[] bytes) {
            return Records.read(bytes, in -> {
                String id = in.readUTF();
                String key = in.readUTF();
                long amount = in.readLong();
                String currency = in.readUTF();
                String source = in.readUTF();
                String description = Records.readNullable(in);
                Map<String, String> metadata = Records.readMap(in);
                boolean capture = in.readBoolean();
                String declineCode = Records.readNullable(in);
                Instant created = Instant.ofEpochSecond(in.readLong(), in.readInt());
                Instant expiresAt = in.readBoolean() ? Instant.ofEpochSecond(in.readLong(), in.readInt()) : null;
                return new Frozen(
                        id,
                        key,
                        new PspChargeRequest(amount, currency, source, description, metadata, capture),
                        declineCode,
                        created,
                        expiresAt);
            });
        }

        /** The charge as it is now, given its changing state. */
        PspCharge charge(ChargeStatus status, long captured, long refunded) {
            return new PspCharge(
                    id,
                    request.amount(),
                    request.currency(),
                    status,
                    key,
                    declineCode,
                    created,
                    request.source(),
                    request.description(),
                    request.metadata(),
                    captured,
                    refunded,
                    expiresAt);
        }
    }

    /** An answer's record: the key it is recorded under first, then the {@link Entry}. */
    private static byte[] entryBytes(String key, Entry entry) {
        return Records.write(out -> {
            out.writeUTF(key);
            out.writeUTF(entry.fingerprint());
            out.writeInt(entry.status());
            out.writeInt(entry.body().length);
            out.write(entry.body());
        });
    }

    private static Entry entryOf(byte[] bytes) {
        return Records.read(bytes, in -> {
            in.readUTF();
            String fingerprint = in.readUTF();
            int status = in.readInt();
            byte[] body = new byte[in.readInt()];
            in.readFully(body);
            return new Entry(fingerprint, status, body);
        });
    }

    private static byte[] captureBytes(Capture capture) {
        return Records.write(out -> {
            out.writeLong(capture.sequence());
            out.writeUTF(capture.idempotencyKey());
            out.writeUTF(capture.chargeId());
            out.writeLong(capture.amount());
            out.writeUTF(capture.currency());
            Instant capturedAt = capture.capturedAt();
            out.writeLong(capturedAt.getEpochSecond());
            out.writeInt(capturedAt.getNano());
            Records.writeMap(out, capture.metadata());
        });
    }

    private static Capture captureOf(byte[] bytes) {
        return Records.read(
                bytes,
                in -> new Capture(
                        in.readLong(),
                        in.readUTF(),
                        in.readUTF(),
                        in.readLong(),
                        in.readUTF(),
                        Instant.ofEpochSecond(in.readLong(), in.readInt()),
                        Records.readMap(in)));
    }

    private final Slab slab = new Slab();
    private final Object[] deciding = new Object[STRIPES];
    /** Guards everything below but the refunds' maps. */
    private final Object lock = new Object();
    /** Each operation's keys, to the slab handle of the answer recorded under the key. */
    private final Map<PspOperation, KeyIndex> answers = new EnumMap<>(PspOperation.class);

    private final ChargeTable charges = new ChargeTable();
    /** Charge keys and ids, to charge numbers. */
    private final KeyIndex chargesByKey;

    private final KeyIndex chargesById;
    /** The capture log: slab handles of {@link Capture} records, oldest first. */
    private final Handles captures = new Handles();

    private long lastCaptureSequence;
    private final List<Refund> refunds = new ArrayList<>();
    private final ConcurrentHashMap<String, PspRefund> refundsByKey = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, PspRefund> refundsById = new ConcurrentHashMap<>();
    private final InstantSource clock;
    private final boolean honourKeys;
    private final Duration authorizationTtl;

    /**
     * @param clock            times of charges, holds, captures and refunds
     * @param honourKeys       false for the deliberately broken processor that decides anew on every call
     * @param authorizationTtl how long a hold stands before it expires
     */
    public ChargeBook(InstantSource clock, boolean honourKeys, Duration authorizationTtl) {
        this.clock = clock;
        this.honourKeys = honourKeys;
        this.authorizationTtl = authorizationTtl;
        for (int i = 0; i < STRIPES; i++) {
            deciding[i] = new Object();
        }
        for (PspOperation o : PspOperation.values()) {
            answers.put(
                    o,
                    new KeyIndex(
                            (handle, key) -> Records.first(slab.read(handle)).equals(key)));
        }
        chargesById = new KeyIndex(
                (n, id) -> Records.first(slab.read(charges.frozen((int) n))).equals(id));
        chargesByKey = new KeyIndex(
                (n, key) -> Records.second(slab.read(charges.frozen((int) n))).equals(key));
    }

    /**
     * Atomically for this operation and key: if the key holds nothing, decide (run {@code decide}, which
     * calls one of the decisions below and renders the answer); otherwise replay it or report the reuse.
     * {@code decide} runs at most once per key and must be quick.
     */
    public Outcome once(PspOperation operation, String key, String fingerprint, Supplier<Entry> decide) {
        synchronized (deciding[Math.floorMod(KeyIndex.hash(key), STRIPES)]) {
            long existing;
            synchronized (lock) {
                existing = Objects.requireNonNull(answers.get(operation), "every operation")
                        .get(key);
            }
            if (existing != KeyIndex.NONE && honourKeys) {
                Entry recorded = entryOf(slab.read(existing));
                return recorded.fingerprint().equals(fingerprint) ? new Replayed(recorded) : new KeyReused(recorded);
            }
            Entry created = decide.get();
            long handle = slab.append(entryBytes(key, created));
            synchronized (lock) {
                answers.get(operation).put(key, handle);
            }
            return new Created(created);
        }
    }

    /** The current time. */
    public Instant now() {
        return clock.instant();
    }

    // ---------------------------------------------------------------- decisions (inside once)

    /**
     * Records a new charge: declined when {@code declineCode} is set, else captured (logged) or, when the
     * request does not capture, a hold that expires after the authorization TTL.
     */
    public PspCharge openCharge(String id, String key, PspChargeRequest request, @Nullable String declineCode) {
        Instant now = clock.instant();
        Instant created = now.truncatedTo(ChronoUnit.SECONDS);
        ChargeStatus status = declineCode != null
                ? ChargeStatus.DECLINED
                : request.capture() ? ChargeStatus.CAPTURED : ChargeStatus.AUTHORIZED;
        Instant expiresAt = status == ChargeStatus.AUTHORIZED ? created.plus(authorizationTtl) : null;
        Frozen frozen = new Frozen(id, key, request, declineCode, created, expiresAt);
        long captured = status == ChargeStatus.CAPTURED ? request.amount() : 0;
        long handle = slab.append(frozen.bytes());
        synchronized (lock) {
            int n = charges.add(handle, expiresAt, status, captured);
            chargesById.put(id, n);
            chargesByKey.put(key, n);
            if (status == ChargeStatus.CAPTURED) {
                logCapture(key, id, request, request.amount(), now);
            }
        }
        return frozen.charge(status, captured, 0);
    }

    /**
     * Captures a hold: all of it when {@code amount} is empty, else that much (at most the authorized
     * amount); a charge captures at most once.
     *
     * @param refusal an injected refusal code, or null (it refuses before anything is looked at)
     */
    public HoldResult capture(String chargeId, OptionalLong amount, String key, @Nullable String refusal) {
        if (refusal != null) {
            return new Refused(refusal, "injected fault: capture refused");
        }
        synchronized (lock) {
            int n = number(chargesById, chargeId);
            if (n < 0) {
                return new Refused("resource_missing", "no charge with id " + chargeId);
            }
            Instant now = clock.instant();
            charges.expireIfDue(n, now);
            Frozen frozen = frozen(n);
            Optional<Refused> unusable = notAHold(n, frozen);
            if (unusable.isPresent()) {
                return unusable.get();
            }
            long authorized = frozen.request().amount();
            long capture = amount.orElse(authorized);
            if (capture > authorized) {
                return new Refused(
                        "amount_too_large", "cannot capture " + capture + ": only " + authorized + " is authorized");
            }
            charges.status(n, ChargeStatus.CAPTURED);
            charges.captured(n, capture);
            logCapture(key, frozen.id(), frozen.request(), capture, now);
            return new Done(charge(n, frozen));
        }
    }

    /**
     * Voids a hold; a hold already voided or expired is answered as it is (nothing to release), a
     * captured or declined charge is refused.
     *
     * @param refusal an injected refusal code, or null
     */
    public HoldResult voidHold(String chargeId, @Nullable String refusal) {
        if (refusal != null) {
            return new Refused(refusal, "injected fault: void refused");
        }
        synchronized (lock) {
            int n = number(chargesById, chargeId);
            if (n < 0) {
                return new Refused("resource_missing", "no charge with id " + chargeId);
            }
            charges.expireIfDue(n, clock.instant());
            Frozen frozen = frozen(n);
            switch (charges.status(n)) {
                case AUTHORIZED -> charges.status(n, ChargeStatus.VOIDED);
                case VOIDED, EXPIRED -> {}
                case CAPTURED, DECLINED -> {
                    return notAHold(n, frozen).orElseThrow();
                }
            }
            return new Done(charge(n, frozen));
        }
    }

    /** Caller holds the lock. */
    private Optional<Refused> notAHold(int n, Frozen frozen) {
        return switch (charges.status(n)) {
            case AUTHORIZED -> Optional.empty();
            case CAPTURED ->
                Optional.of(new Refused(
                        "charge_already_captured",
                        "charge " + frozen.id() + " is already captured (" + charges.captured(n) + ")"));
            case DECLINED -> Optional.of(new Refused("charge_declined", "charge " + frozen.id() + " was declined"));
            case VOIDED -> Optional.of(new Refused("charge_voided", "charge " + frozen.id() + " was voided"));
            case EXPIRED ->
                Optional.of(new Refused(
                        "authorization_expired",
                        "the hold of charge " + frozen.id() + " expired at " + frozen.expiresAt()));
        };
    }

    /** Caller holds the lock. */
    private Frozen frozen(int n) {
        return Frozen.of(slab.read(charges.frozen(n)));
    }

    /** Caller holds the lock. */
    private PspCharge charge(int n, Frozen frozen) {
        return frozen.charge(charges.status(n), charges.captured(n), charges.refunded(n));
    }

    /**
     * Refunds part of a captured charge when the refunds so far plus this one stay within the captured
     * amount (logged); otherwise a failed refund. Either is recorded under the key.
     *
     * @param refusal an injected failure code, or null
     */
    public PspRefund refund(String id, String key, PspRefundRequest request, @Nullable String refusal) {
        Instant now = clock.instant();
        Instant created = now.truncatedTo(ChronoUnit.SECONDS);
        String failure;
        synchronized (lock) {
            int n = number(chargesById, request.charge());
            if (refusal != null) {
                failure = refusal;
            } else if (n < 0) {
                failure = "resource_missing";
            } else {
                charges.expireIfDue(n, now);
                Frozen frozen = frozen(n);
                failure = !frozen.request().currency().equals(request.currency())
                        ? "currency_mismatch"
                        : charges.status(n) != ChargeStatus.CAPTURED
                                ? "charge_not_captured"
                                : request.amount() > charges.captured(n) - charges.refunded(n)
                                        ? "amount_too_large"
                                        : null;
                if (failure == null) {
                    charges.refunded(n, charges.refunded(n) + request.amount());
                    refunds.add(new Refund(
                            refunds.size() + 1L,
                            id,
                            key,
                            frozen.id(),
                            request.amount(),
                            request.currency(),
                            now,
                            request.metadata()));
                }
            }
        }
        PspRefund refund = new PspRefund(
                id,
                request.charge(),
                request.amount(),
                request.currency(),
                failure == null ? RefundStatus.SUCCEEDED : RefundStatus.FAILED,
                key,
                failure,
                created,
                request.reason(),
                request.metadata());
        refundsById.put(id, refund);
        refundsByKey.put(key, refund);
        return refund;
    }

    /**
     * Records a captured charge under {@code key} without a client request (a test plants a mismatch):
     * it is in the capture log and the lookups; a later charge request with that key gets 422.
     *
     * @throws IllegalStateException when the key already holds a charge
     */
    public PspCharge plantCapture(String id, String key, PspChargeRequest request) {
        Outcome outcome = once(PspOperation.CHARGE, key, "planted", () -> {
            if (chargeByKey(key).isPresent()) {
                throw new IllegalStateException("idempotency key " + key + " already holds a charge");
            }
            PspCharge charge = openCharge(id, key, request, null);
            return new Entry("planted", 200, Json.write(Wire.charge(charge)).getBytes(StandardCharsets.UTF_8));
        });
        if (!(outcome instanceof Created)) {
            throw new IllegalStateException("idempotency key " + key + " already holds a charge");
        }
        return chargeById(id).orElseThrow();
    }

    /**
     * Records a refund under {@code key} without a client request (a test plants a mismatch), with the
     * usual limits (a refused one is a failed refund, not logged).
     *
     * @throws IllegalStateException when the key already holds a refund
     */
    public PspRefund plantRefund(String id, String key, PspRefundRequest request) {
        PspRefund[] planted = new PspRefund[1];
        Outcome outcome = once(PspOperation.REFUND, key, "planted", () -> {
            planted[0] = refund(id, key, request, null);
            return new Entry(
                    "planted",
                    planted[0].succeeded() ? 200 : 402,
                    Json.write(Wire.refund(planted[0])).getBytes(StandardCharsets.UTF_8));
        });
        if (!(outcome instanceof Created) || planted[0] == null) {
            throw new IllegalStateException("idempotency key " + key + " already holds a refund");
        }
        return planted[0];
    }

    /**
     * Changes the amount of a charge's entry in the capture log, and only there (a test plants an
     * "amount differs" mismatch: the charge's lookups keep what really happened).
     *
     * @return the changed entry, or empty when the charge has no capture
     */
    public Optional<Capture> amendCapture(String chargeId, long amount) {
        synchronized (lock) {
            for (int i = captures.size() - 1; i >= 0; i--) {
                Capture c = captureOf(slab.read(captures.get(i)));
                if (c.chargeId().equals(chargeId)) {
                    Capture amended = new Capture(
                            c.sequence(),
                            c.idempotencyKey(),
                            c.chargeId(),
                            amount,
                            c.currency(),
                            c.capturedAt(),
                            c.metadata());
                    captures.set(i, slab.append(captureBytes(amended)));
                    return Optional.of(amended);
                }
            }
            return Optional.empty();
        }
    }

    /**
     * Removes a charge's entry from the capture log, and only there (a test plants an "in the ledger,
     * not at the processor" mismatch); the other entries keep their sequence numbers.
     *
     * @return the removed entry, or empty when the charge has no capture
     */
    public Optional<Capture> removeCapture(String chargeId) {
        synchronized (lock) {
            for (int i = captures.size() - 1; i >= 0; i--) {
                Capture c = captureOf(slab.read(captures.get(i)));
                if (c.chargeId().equals(chargeId)) {
                    captures.remove(i);
                    if (i == captures.size()) {
                        // the next capture takes the number after the last one left, as it always has
                        lastCaptureSequence = i == 0
                                ? 0
                                : captureOf(slab.read(captures.get(i - 1))).sequence();
                    }
                    return Optional.of(c);
                }
            }
            return Optional.empty();
        }
    }

    /** Caller holds the lock. */
    private void logCapture(String key, String chargeId, PspChargeRequest request, long amount, Instant at) {
        lastCaptureSequence++;
        Capture capture =
                new Capture(lastCaptureSequence, key, chargeId, amount, request.currency(), at, request.metadata());
        captures.add(slab.append(captureBytes(capture)));
    }

    // ---------------------------------------------------------------- lookups

    /** The charge recorded under a charge request's key, as it is now. */
    public Optional<PspCharge> chargeByKey(String key) {
        synchronized (lock) {
            return now(number(chargesByKey, key));
        }
    }

    /** The charge with this id, as it is now. */
    public Optional<PspCharge> chargeById(String id) {
        synchronized (lock) {
            return now(number(chargesById, id));
        }
    }

    /** Caller holds the lock. The number of the charge {@code index} finds under {@code key}, or -1. */
    private static int number(KeyIndex index, String key) {
        long n = index.get(key);
        return n == KeyIndex.NONE ? -1 : (int) n;
    }

    /** Caller holds the lock; {@code n} is negative for no charge. */
    private Optional<PspCharge> now(int n) {
        if (n < 0) {
            return Optional.empty();
        }
        charges.expireIfDue(n, clock.instant());
        return Optional.of(charge(n, frozen(n)));
    }

    /** The refund recorded under a refund request's key. */
    public Optional<PspRefund> refundByKey(String key) {
        return Optional.ofNullable(refundsByKey.get(key));
    }

    /** The refund with this id. */
    public Optional<PspRefund> refundById(String id) {
        return Optional.ofNullable(refundsById.get(id));
    }

    /** The capture log, oldest first, limited to {@code [from, to)} (null: unbounded). */
    public List<Capture> captures(@Nullable Instant from, @Nullable Instant to) {
        synchronized (lock) {
            List<Capture> within = new ArrayList<>();
            for (int i = 0; i < captures.size(); i++) {
                Capture c = captureOf(slab.read(captures.get(i)));
                if (within(c.capturedAt(), from, to)) {
                    within.add(c);
                }
            }
            return List.copyOf(within);
        }
    }

    /** The refund log, oldest first, limited to {@code [from, to)} (null: unbounded). */
    public List<Refund> refunds(@Nullable Instant from, @Nullable Instant to) {
        synchronized (lock) {
            return refunds.stream()
                    .filter(r -> within(r.refundedAt(), from, to))
                    .toList();
        }
    }

    private static boolean within(Instant at, @Nullable Instant from, @Nullable Instant to) {
        return (from == null || !at.isBefore(from)) && (to == null || at.isBefore(to));
    }

    /** Captures per idempotency key, in order of first capture. */
    public Map<String, Long> captureCounts() {
        Map<String, Long> counts = new LinkedHashMap<>();
        for (Capture c : captures(null, null)) {
            counts.merge(c.idempotencyKey(), 1L, Long::sum);
        }
        return counts;
    }

    /** Forgets every answer, charge, refund and log entry (what the slab holds stays, unreachable). */
    public void clear() {
        synchronized (lock) {
            answers.values().forEach(KeyIndex::clear);
            charges.clear();
            chargesByKey.clear();
            chargesById.clear();
            refundsByKey.clear();
            refundsById.clear();
            captures.clear();
            lastCaptureSequence = 0;
            refunds.clear();
        }
    }
}

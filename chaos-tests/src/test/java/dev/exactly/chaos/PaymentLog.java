package dev.exactly.chaos;

import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;

/** What the clients saw for one payment: every acknowledged answer (2xx or 402), in arrival order. */
final class PaymentLog {
    private final Payment payment;
    private final ConcurrentLinkedQueue<Ack> acks = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<String> unexpected = new ConcurrentLinkedQueue<>();

    /**
     * An acknowledged answer.
     *
     * @param status   201 or 402 (or another 2xx)
     * @param body     the exact bytes
     * @param instance which service instance answered
     * @param replayed whether it carried {@code Idempotent-Replayed: true}
     * @param nanos    {@link System#nanoTime()} on arrival
     */
    record Ack(int status, byte[] body, String instance, boolean replayed, long nanos) {}

    PaymentLog(Payment payment) {
        this.payment = payment;
    }

    Payment payment() {
        return payment;
    }

    void acknowledged(Ack ack) {
        acks.add(ack);
    }

    /** An answer no client should ever get (e.g. a 500, or a 4xx for a valid request). */
    void unexpected(String what) {
        unexpected.add(what);
    }

    List<Ack> acks() {
        return List.copyOf(acks);
    }

    List<String> unexpectedAnswers() {
        return List.copyOf(unexpected);
    }

    /** The first acknowledgement the clients received. */
    Optional<Ack> first() {
        return acks.stream().min(Comparator.comparingLong(Ack::nanos));
    }

    @Override
    public String toString() {
        return payment + ": " + acks.size() + " acks";
    }
}

package dev.exactly.examples.messaging;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.stereotype.Component;

/** The side effect that must happen once per event: here a stand-in that numbers its bookings. */
@Component
public class Ledger {
    private final AtomicLong sequence = new AtomicLong();
    private final Map<String, AtomicInteger> bookingsPerEvent = new ConcurrentHashMap<>();

    public Booking book(PaymentEvent event) {
        bookingsPerEvent.computeIfAbsent(event.id(), id -> new AtomicInteger()).incrementAndGet();
        return new Booking("bk_" + sequence.incrementAndGet(), event.account(), event.amountMinor());
    }

    /** How many times {@code eventId} was booked. */
    public int bookings(String eventId) {
        AtomicInteger count = bookingsPerEvent.get(eventId);
        return count == null ? 0 : count.get();
    }
}

package dev.exactly.examples.messaging;

/** What booking an event produced: stored as JSON and handed back to every redelivery. */
public record Booking(String bookingId, String account, long amountMinor) {}

package dev.exactly.examples.messaging;

/**
 * A payment event as its producer sends it. Its {@code id} is chosen once by the producer and kept when the
 * event is sent again, so it names the event across redeliveries and resends alike.
 */
public record PaymentEvent(String id, String account, long amountMinor) {}

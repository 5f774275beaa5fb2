package dev.exactly.examples.messaging;

import dev.exactly.idempotency.spring.IdempotencyTemplate;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.stereotype.Component;
import tools.jackson.databind.json.JsonMapper;

/**
 * Books each payment event once. The broker delivers at least once: a listener that fails after booking
 * (here when the notification fails) has its message requeued and gets it again. The booking is guarded by
 * the event's id, so the redelivery gets the first booking back instead of booking twice.
 */
@Component
public class PaymentEventsListener {
    private final IdempotencyTemplate idempotency;
    private final Ledger ledger;
    private final Notifier notifier;
    private final JsonMapper json;

    public PaymentEventsListener(IdempotencyTemplate idempotency, Ledger ledger, Notifier notifier, JsonMapper json) {
        this.idempotency = idempotency;
        this.ledger = ledger;
        this.notifier = notifier;
        this.json = json;
    }

    @RabbitListener(queues = "${payments.queue}")
    public void onPaymentEvent(String message) {
        PaymentEvent event = json.readValue(message, PaymentEvent.class);
        // booked at most once per event id; a redelivery (or a resend of the event) gets the first booking back
        Booking booking =
                idempotency.execute("payment-events", event.id(), event, Booking.class, () -> ledger.book(event));
        // if this throws, the broker redelivers the message: the booking above is replayed, not made again
        notifier.bookingConfirmed(booking);
    }
}

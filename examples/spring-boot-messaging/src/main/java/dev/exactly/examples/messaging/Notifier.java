package dev.exactly.examples.messaging;

import org.springframework.stereotype.Component;

/** Tells the account holder about a booking; a call that may fail after the booking was made. */
@Component
public class Notifier {
    public void bookingConfirmed(Booking booking) {
        // an e-mail, a push message, another queue...
    }
}

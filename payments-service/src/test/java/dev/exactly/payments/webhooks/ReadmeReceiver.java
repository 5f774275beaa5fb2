package dev.exactly.payments.webhooks;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The webhook receiver of the service's README, its block verbatim: verify the raw body's signature, then
 * deduplicate on the event id ({@link ReadmeReceiverTest} runs it).
 */
final class ReadmeReceiver extends HttpServlet {
    private final String secret;
    private final Set<String> processedEvents = ConcurrentHashMap.newKeySet();
    final List<String> handled = new CopyOnWriteArrayList<>();

    ReadmeReceiver(String secret) {
        this.secret = secret;
    }

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {
        byte[] body = request.getInputStream().readAllBytes();
        try {
            WebhookSignature.verify(secret, request.getHeader("Exactly-Signature"), body, Duration.ofMinutes(5));
        } catch (WebhookSignature.InvalidSignatureException e) {
            response.setStatus(400); // not ours, altered, or too old: a replay
            return;
        }
        String eventId = request.getHeader("Exactly-Event-Id");
        if (!processedEvents.add(eventId)) { // a unique constraint in the receiver's own transaction
            response.setStatus(200); // a redelivery: already handled
            return;
        }
        handled.add(eventId);
        response.setStatus(204);
    }
}

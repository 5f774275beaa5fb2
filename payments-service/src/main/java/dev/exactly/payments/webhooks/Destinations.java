package dev.exactly.payments.webhooks;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Optional;

/**
 * Which addresses a delivery may go to. A tenant chooses the URL, and the service calls it from its own
 * network, so unless private networks are allowed (demo mode, or {@code allow-private-networks}) a
 * delivery is refused when its host resolves to an address that is not public: unspecified, loopback,
 * link-local (cloud metadata services live at 169.254.169.254), private (10/8, 172.16/12, 192.168/16,
 * fc00::/7), shared (100.64/10), {@code 0.0.0.0/8} or multicast. The check runs before each attempt, on
 * every address the name resolves to; the HTTP client resolves the name again, so a DNS answer that changes
 * between the two (rebinding) is not caught here: put an egress proxy in front of the service where that
 * matters.
 */
public final class Destinations {
    private Destinations() {}

    /** Why deliveries to {@code host} are refused, or empty when every address it resolves to is public. */
    public static Optional<String> refusal(String host) {
        InetAddress[] addresses;
        try {
            addresses = InetAddress.getAllByName(host);
        } catch (UnknownHostException e) {
            return Optional.of("the host " + host + " does not resolve");
        }
        for (InetAddress address : addresses) {
            Optional<String> kind = notPublic(address);
            if (kind.isPresent()) {
                return Optional.of("the host " + host + " resolves to " + address.getHostAddress() + ", a " + kind.get()
                        + " address (set exactly.payments.webhooks.allow-private-networks to allow it)");
            }
        }
        return Optional.empty();
    }

    /** What kind of non-public address {@code address} is, or empty when it is public. */
    public static Optional<String> notPublic(InetAddress address) {
        if (address.isAnyLocalAddress()) {
            return Optional.of("unspecified");
        }
        if (address.isLoopbackAddress()) {
            return Optional.of("loopback");
        }
        if (address.isLinkLocalAddress()) {
            return Optional.of("link-local");
        }
        if (address.isSiteLocalAddress()) {
            return Optional.of("private");
        }
        if (address.isMulticastAddress()) {
            return Optional.of("multicast");
        }
        byte[] b = address.getAddress();
        if (address instanceof Inet4Address) {
            if (b[0] == 0) {
                return Optional.of("'this network'");
            }
            if ((b[0] & 0xff) == 100 && (b[1] & 0xc0) == 64) {
                return Optional.of("shared (carrier-grade NAT)");
            }
        }
        if (address instanceof Inet6Address && (b[0] & 0xfe) == 0xfc) {
            return Optional.of("private (unique local)");
        }
        return Optional.empty();
    }
}

package dev.exactly.payments.webhooks;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Which addresses a delivery may go to. A tenant chooses the URL, and the service calls it from its own
 * network, so unless private networks are allowed (demo mode, or {@code allow-private-networks}) a
 * delivery is refused when its host resolves to an address that is not public: unspecified, loopback,
 * link-local (cloud metadata services live at 169.254.169.254), private (10/8, 172.16/12, 192.168/16,
 * fc00::/7), shared (100.64/10), {@code 0.0.0.0/8}, benchmarking (198.18/15), 192.0.0/24, reserved (240/4,
 * the broadcast address), discard-only (100::/64), multicast, or an IPv6 address carrying any of those IPv4
 * ones (IPv4-compatible, NAT64, 6to4). The check runs before each attempt, on every address the name
 * resolves to, and the attempt connects to those very addresses ({@link #resolve}, then {@link WebhookPost}):
 * the name is resolved once per attempt, so a DNS answer that changes between the check and the connection
 * (rebinding) cannot steer the delivery elsewhere.
 */
public final class Destinations {
    private Destinations() {}

    /** Resolves a host name to its addresses: the system's resolver in the service, another in tests. */
    @FunctionalInterface
    public interface Resolver {
        Resolver SYSTEM = InetAddress::getAllByName;

        InetAddress[] resolve(String host) throws UnknownHostException;
    }

    /** Where an attempt may go: the addresses its host resolved to, or why it may not go anywhere. */
    public sealed interface Resolution {
        /** Every address the host resolved to, each public (or private networks are allowed). */
        record Allowed(List<InetAddress> addresses) implements Resolution {
            public Allowed {
                addresses = List.copyOf(addresses);
                if (addresses.isEmpty()) {
                    throw new IllegalArgumentException("no address");
                }
            }
        }

        /** Refused: {@value #DOES_NOT_RESOLVE_MARK}, or the first address that is not public and its kind. */
        record Refused(String refusal) implements Resolution {}
    }

    /** What a {@link Resolution.Refused} says of a host that does not resolve. */
    public static final String DOES_NOT_RESOLVE_MARK = "does not resolve";

    /**
     * Resolves {@code host} once with {@code resolver} and judges every address it gave: an attempt connects to
     * the addresses of an {@link Resolution.Allowed}, never resolving the name again. With
     * {@code allowPrivateNetworks} any address is allowed; a host that does not resolve is refused either way.
     */
    public static Resolution resolve(@Nullable String host, Resolver resolver, boolean allowPrivateNetworks) {
        if (host == null || host.isEmpty()) {
            // getAllByName(null) is the loopback address
            return new Resolution.Refused(DOES_NOT_RESOLVE_MARK);
        }
        InetAddress[] addresses;
        try {
            addresses = resolver.resolve(host);
        } catch (UnknownHostException e) {
            return new Resolution.Refused(DOES_NOT_RESOLVE_MARK);
        }
        if (addresses == null || addresses.length == 0) {
            return new Resolution.Refused(DOES_NOT_RESOLVE_MARK);
        }
        if (!allowPrivateNetworks) {
            for (InetAddress address : addresses) {
                Optional<String> refusal = describeNotPublic(address);
                if (refusal.isPresent()) {
                    return new Resolution.Refused(refusal.get());
                }
            }
        }
        return new Resolution.Allowed(List.of(addresses));
    }

    /** The operator's sentence for a {@link Resolution.Refused} of {@code host}. */
    public static String detail(@Nullable String host, String refusal) {
        return DOES_NOT_RESOLVE_MARK.equals(refusal)
                ? "refused: the host " + host + " does not resolve"
                : "refused: the host " + host + " resolves to " + refusal
                        + " (set exactly.payments.webhooks.allow-private-networks to allow it)";
    }

    /**
     * {@code address} and what kind of non-public address it is ({@code "10.0.0.5, a private address"}), or
     * empty when it is public.
     */
    public static Optional<String> describeNotPublic(InetAddress address) {
        return notPublic(address)
                .map(kind -> address.getHostAddress() + ("aeiou".indexOf(kind.charAt(0)) >= 0 ? ", an " : ", a ") + kind
                        + " address");
    }

    /**
     * What kind of non-public address {@code address} is, or empty when it is public. An IPv6 address that
     * carries an IPv4 one (IPv4-compatible {@code ::a.b.c.d}, IPv4-translated {@code ::ffff:0:a.b.c.d}, NAT64 {@code 64:ff9b::/96} and {@code
     * 64:ff9b:1::/48}, 6to4 {@code 2002::/16}) is judged by the IPv4 address it reaches: {@code 64:ff9b::a9fe:a9fe}
     * is the metadata service behind a NAT64 gateway.
     */
    public static Optional<String> notPublic(InetAddress address) {
        if (address instanceof Inet6Address) {
            Optional<InetAddress> embedded = embeddedIpv4(address.getAddress());
            if (embedded.isPresent()) {
                return notPublic(embedded.get()).map(kind -> kind + " (inside an IPv6 address)");
            }
        }
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
            int first = b[0] & 0xff;
            int second = b[1] & 0xff;
            if (first == 0) {
                return Optional.of("'this network'");
            }
            if (first == 100 && (second & 0xc0) == 64) {
                return Optional.of("shared (carrier-grade NAT)");
            }
            if (first == 198 && (second & 0xfe) == 18) {
                return Optional.of("benchmarking (198.18/15)");
            }
            if (first == 192 && second == 0 && b[2] == 0) {
                return Optional.of("protocol assignment (192.0.0/24)");
            }
            if (first >= 240) {
                return Optional.of("reserved (240/4) or broadcast");
            }
        }
        if (address instanceof Inet6Address && (b[0] & 0xfe) == 0xfc) {
            return Optional.of("private (unique local)");
        }
        if (address instanceof Inet6Address && b[0] == 0x01 && b[1] == 0x00 && allZero(b, 2, 8)) {
            return Optional.of("discard-only (100::/64)");
        }
        return Optional.empty();
    }

    /** The IPv4 address inside an IPv4-compatible, NAT64 or 6to4 IPv6 address. */
    private static Optional<InetAddress> embeddedIpv4(byte[] v6) {
        byte[] v4 = null;
        if (allZero(v6, 0, 12) && !allZero(v6, 12, 16)) { // ::a.b.c.d (not :: or ::1, judged as they are)
            v4 = java.util.Arrays.copyOfRange(v6, 12, 16);
            if (v4[0] == 0 && v4[1] == 0 && v4[2] == 0) {
                return Optional.empty(); // ::1 and the like: IPv6 loopback, not an IPv4 address
            }
        } else if (v6[0] == 0x00
                && v6[1] == 0x64
                && (v6[2] & 0xff) == 0xff
                && (v6[3] & 0xff) == 0x9b
                && (allZero(v6, 4, 12) || (v6[4] == 0x00 && v6[5] == 0x01))) { // 64:ff9b::/96, 64:ff9b:1::/48
            v4 = java.util.Arrays.copyOfRange(v6, 12, 16);
        } else if (allZero(v6, 0, 8) && (v6[8] & 0xff) == 0xff && (v6[9] & 0xff) == 0xff && allZero(v6, 10, 12)) {
            v4 = java.util.Arrays.copyOfRange(v6, 12, 16); // ::ffff:0:a.b.c.d, IPv4-translated
        } else if (v6[0] == 0x20 && v6[1] == 0x02) { // 2002:a.b.c.d::/48
            v4 = java.util.Arrays.copyOfRange(v6, 2, 6);
        }
        if (v4 == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(InetAddress.getByAddress(v4));
        } catch (UnknownHostException impossible) {
            return Optional.empty();
        }
    }

    private static boolean allZero(byte[] b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return true;
    }
}

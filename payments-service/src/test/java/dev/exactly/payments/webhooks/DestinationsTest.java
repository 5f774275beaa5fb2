package dev.exactly.payments.webhooks;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.UnknownHostException;
import org.junit.jupiter.api.Test;

/** Which addresses deliveries may reach when private networks are not allowed (literal addresses: no DNS). */
class DestinationsTest {

    /** Why the system's resolver's answer for {@code host} is refused when private networks are not allowed. */
    private static String refusal(String host) {
        return ((Destinations.Resolution.Refused) Destinations.resolve(host, Destinations.Resolver.SYSTEM, false))
                .refusal();
    }

    private static InetAddress at(String literal) throws UnknownHostException {
        return InetAddress.getByName(literal);
    }

    @Test
    void everyNonPublicRangeIsNamedAndPublicAddressesPass() throws UnknownHostException {
        String[][] refused = {
            {"127.0.0.1", "loopback"},
            {"::1", "loopback"},
            {"0.0.0.0", "unspecified"},
            {"::", "unspecified"},
            {"10.1.2.3", "private"},
            {"172.16.0.1", "private"},
            {"172.31.255.255", "private"},
            {"192.168.1.1", "private"},
            {"169.254.169.254", "link-local"},
            {"fe80::1", "link-local"},
            {"fd00::1", "private (unique local)"},
            {"100.64.0.1", "shared (carrier-grade NAT)"},
            {"100.127.255.255", "shared (carrier-grade NAT)"},
            {"0.1.2.3", "'this network'"},
            {"224.0.0.1", "multicast"},
            {"ff02::1", "multicast"},
            {"::ffff:127.0.0.1", "loopback"},
            {"::ffff:10.0.0.1", "private"},
        };
        for (String[] r : refused) {
            assertThat(Destinations.notPublic(at(r[0]))).as(r[0]).contains(r[1]);
        }
        for (String ok : new String[] {"8.8.8.8", "172.32.0.1", "100.128.0.1", "11.0.0.1", "2001:4860:4860::8888"}) {
            assertThat(Destinations.notPublic(at(ok))).as(ok).isEmpty();
        }
        assertThat(refusal("127.0.0.1")).contains("127.0.0.1", "loopback");
        assertThat(Destinations.detail("127.0.0.1", refusal("127.0.0.1")))
                .contains("127.0.0.1", "loopback", "exactly.payments.webhooks.allow-private-networks");
        assertThat(refusal(null)).isEqualTo(Destinations.DOES_NOT_RESOLVE_MARK);
        assertThat(refusal("no-such-host.invalid")).isEqualTo(Destinations.DOES_NOT_RESOLVE_MARK);
        assertThat(refusal("[::1]")).contains("loopback");
        assertThat(refusal("localhost")).contains("loopback");
        assertThat(Destinations.resolve("8.8.8.8", Destinations.Resolver.SYSTEM, false))
                .isInstanceOf(Destinations.Resolution.Allowed.class);
    }

    @Test
    void anIpv6AddressCarryingAnIpv4OneIsJudgedByIt() throws UnknownHostException {
        String[][] refused = {
            {"::127.0.0.1", "loopback (inside an IPv6 address)"},
            {"::a9fe:a9fe", "link-local (inside an IPv6 address)"},
            {"64:ff9b::7f00:1", "loopback (inside an IPv6 address)"},
            {"64:ff9b::a9fe:a9fe", "link-local (inside an IPv6 address)"},
            {"64:ff9b:1::a00:1", "private (inside an IPv6 address)"},
            {"2002:7f00:1::1", "loopback (inside an IPv6 address)"},
            {"2002:c0a8:101::1", "private (inside an IPv6 address)"},
            {"::ffff:0:7f00:1", "loopback (inside an IPv6 address)"},
            {"100::1", "discard-only (100::/64)"},
            {"198.18.0.1", "benchmarking (198.18/15)"},
            {"192.0.0.1", "protocol assignment (192.0.0/24)"},
            {"240.0.0.1", "reserved (240/4) or broadcast"},
            {"255.255.255.255", "reserved (240/4) or broadcast"},
        };
        for (String[] r : refused) {
            assertThat(Destinations.notPublic(at(r[0]))).as(r[0]).contains(r[1]);
        }
        // public IPv4 behind NAT64 and 6to4 stays reachable
        for (String ok : new String[] {"64:ff9b::808:808", "2002:808:808::1", "198.20.0.1", "192.0.2.1"}) {
            assertThat(Destinations.notPublic(at(ok))).as(ok).isEmpty();
        }
    }
}
